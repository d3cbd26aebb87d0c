// SPDX-License-Identifier: GPL-2.0
/*
 * revoked-race NODE READY GO: hold IMEX_IOC_REVOKED inside its copy to
 * user space while the channel is revoked (tests/kmod/t-revoked-race.sh).
 *
 * Opens the channel device NODE twice, exports on one fd, imports on the
 * other and unexports, so the importing fd has one revoked import to read.
 * The ioctl's entry buffer is a userfaultfd page, so the kernel's copy
 * blocks on its first touch.  Once it does, the program creates READY,
 * waits (60 s at most) for GO, the shell having deleted the domain
 * meanwhile, then lets the copy finish and prints "revoked rc=N count=N"
 * or "revoked errno=NAME".  Exit status 77: the kernel has no userfaultfd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/imex.h>

static struct imex_revoked_arg ra;
static long page;
static int importer, rc, err;

static void die(const char *what)
{
	fprintf(stderr, "revoked-race: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void *reader(void *arg)
{
	(void)arg;
	rc = ioctl(importer, IMEX_IOC_REVOKED, &ra);
	err = errno;
	return NULL;
}

/* Wait for PATH to exist, 60 s at most. */
static int wait_file(const char *path)
{
	struct stat st;
	int i;

	for (i = 0; i < 6000; i++) {
		if (!stat(path, &st))
			return 0;
		poll(NULL, 0, 10);
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct uffdio_register reg = { 0 };
	struct uffdio_zeropage zero = { 0 };
	struct uffdio_api api = { .api = UFFD_API };
	struct imex_export_arg ea = { .desc_len = 4 };
	struct imex_import_arg ia = { 0 };
	struct uffd_msg msg;
	struct pollfd pfd;
	pthread_t t;
	int exporter, uffd, fd;
	void *buf;

	if (argc != 4) {
		fprintf(stderr, "usage: revoked-race NODE READY GO\n");
		return 2;
	}
	exporter = open(argv[1], O_RDWR);
	importer = open(argv[1], O_RDWR);
	if (exporter < 0 || importer < 0)
		die("open");
	memcpy(ea.desc, "race", 4);
	if (ioctl(exporter, IMEX_IOC_EXPORT, &ea))
		die("export");
	ia.handle = ea.handle;
	if (ioctl(importer, IMEX_IOC_IMPORT, &ia))
		die("import");
	if (ioctl(exporter, IMEX_IOC_UNEXPORT, &ea.handle))
		die("unexport");

	page = sysconf(_SC_PAGESIZE);
	buf = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 && errno == ENOSYS) {
		printf("skipped: no userfaultfd (CONFIG_USERFAULTFD)\n");
		return 77;
	}
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		die("userfaultfd");
	reg.range.start = (uintptr_t)buf;
	reg.range.len = page;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");

	ra.entries = (uintptr_t)buf;
	ra.count = 1;
	if (pthread_create(&t, NULL, reader, NULL))
		die("pthread_create");

	/* The kernel's copy_to_user() has touched the page: it waits. */
	pfd.fd = uffd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 60000) != 1)
		die("no fault within 60 s");
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		die("read uffd");
	fd = open(argv[2], O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		die("create READY");
	close(fd);
	if (wait_file(argv[3]))
		die("no GO within 60 s");

	zero.range.start = (uintptr_t)buf;
	zero.range.len = page;
	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zero))
		die("UFFDIO_ZEROPAGE");
	pthread_join(t, NULL);
	if (rc)
		printf("revoked errno=%s\n", strerrorname_np(err) ?: "?");
	else
		printf("revoked rc=0 count=%u\n", ra.count);
	close(importer);
	close(exporter);
	return 0;
}
