// SPDX-License-Identifier: GPL-2.0
/*
 * chanopen: open a channel device and report what the kernel says of it.
 *
 *   chanopen PATH [info] [kapi] [kapi-badfd] [wait-revoke MS] [hold]
 *
 * Exits with the errno of a failed open(), so a test can expect ENOLINK or
 * EACCES; "info" prints IMEX_IOC_CHANNEL_INFO (exiting with its errno if it
 * fails); "wait-revoke" polls until
 * the channel is revoked (exit 0) or the bound passes (exit 124), then
 * checks that the info ioctl now fails with ENODEV; "hold" keeps the fd open
 * until a signal, printing "open" first so a test can wait for it; "kapi"
 * resolves the fd through imex.ko's in-kernel API (via the imex_kapi_test
 * module) and prints what a driver would see; "kapi-badfd" does so for a
 * descriptor that is not open.
 *
 * Export and import steps: "badargs" sends malformed export/import ioctls
 * and checks each refusal (EINVAL, EFAULT) and that nothing stayed behind;
 * "import-all FILE" imports every UUID:ID line of FILE on this one fd and
 * prints "imported N" and the errno that stopped it; "kapi-xfer" exports,
 * imports and unexports through the in-kernel API; "import UUID:ID" prints
 * "import errno=NAME" (OK on success); "wait-file PATH" waits (at most 60 s)
 * until PATH exists, so a test can change the node under an open fd;
 * "reopen-until FILE" opens and closes PATH again and again (1 ms apart)
 * until FILE exists and prints "reopen n=N max_us=US", the slowest pair;
 * "fd-of PID FD" makes the following steps act on process PID's open
 * descriptor FD (pidfd_getfd: the same open file, not a new open), so a
 * test can check a channel fd another process has held all along.
 *
 * Fault injection (tests/kmod/t-faultinj.sh): "fail-nth N" arms
 * /proc/thread-self/fail-nth for the next step's ioctl and prints
 * "faultinj injected=0|1 result=ERRNO" after it; "export DESC" prints
 * "export handle=UUID:ID" on success; "unexport UUID:ID".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <uuid/uuid.h>
#include <time.h>
#include <unistd.h>
#include <linux/imex.h>
#include "kapi/imex_kapi_test.h"
#include "failnth.h"

static unsigned int arm_next;	/* fail-nth for the next step's ioctl */

/* ioctl(), under fault injection when the step was armed. */
static int chan_ioctl(int fd, unsigned long req, void *arg)
{
	unsigned int n = arm_next;
	bool used;
	int r, err;

	arm_next = 0;
	if (!n)
		return ioctl(fd, req, arg);
	if (failnth_arm(n)) {
		perror("fail-nth");
		exit(2);
	}
	r = ioctl(fd, req, arg);
	err = r ? errno : 0;
	used = failnth_disarm();
	printf("faultinj injected=%d result=%s\n", used,
	       err ? strerrorname_np(err) : "OK");
	errno = err;
	return r;
}

static int parse_handle(const char *s, struct imex_handle *h)
{
	char u[37];

	memset(h, 0, sizeof(*h));
	if (sscanf(s, "%36[0-9a-f-]:%llu", u, (unsigned long long *)&h->id) != 2 ||
	    uuid_parse(u, h->node_uuid)) {
		fprintf(stderr, "chanopen: '%s' is not UUID:ID\n", s);
		return -1;
	}
	return 0;
}

static int export_one(int fd, const char *desc)
{
	struct imex_export_arg ea = { .desc_len = (__u32)strlen(desc) };
	char u[37];

	if (!ea.desc_len || ea.desc_len > sizeof(ea.desc))
		return 1;
	memcpy(ea.desc, desc, ea.desc_len);
	if (chan_ioctl(fd, IMEX_IOC_EXPORT, &ea)) {
		printf("export errno=%s\n", strerrorname_np(errno));
		return 0;
	}
	uuid_unparse_lower(ea.handle.node_uuid, u);
	printf("export handle=%s:%llu\n", u, (unsigned long long)ea.handle.id);
	return 0;
}

static int unexport_one(int fd, const char *handle)
{
	struct imex_handle h;

	if (parse_handle(handle, &h))
		return 1;
	printf("unexport errno=%s\n", chan_ioctl(fd, IMEX_IOC_UNEXPORT, &h) ?
	       strerrorname_np(errno) : "OK");
	return 0;
}

/* PID's descriptor FD, duplicated into this process (same open file). */
static int fd_of(const char *pid, const char *fd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, atoi(pid), 0);
	int dup;

	if (pidfd < 0) {
		printf("fd-of errno=%s\n", strerrorname_np(errno));
		return -1;
	}
	dup = (int)syscall(SYS_pidfd_getfd, pidfd, atoi(fd), 0);
	if (dup < 0)
		printf("fd-of errno=%s\n", strerrorname_np(errno));
	close(pidfd);
	return dup;
}

static int info(int fd)
{
	struct imex_channel_info ci;

	memset(&ci, 0xff, sizeof(ci));
	if (ioctl(fd, IMEX_IOC_CHANNEL_INFO, &ci)) {
		int err = errno;

		printf("info errno=%s\n", strerrorname_np(err));
		return err;
	}
	printf("info domain=%s channel=%u state=%u flags=%u\n", ci.domain_name,
	       ci.channel_id, ci.domain_state, ci.flags);
	return 0;
}

static int kapi(int fd)
{
	struct imex_kapi_resolve r = { .fd = fd };
	int dev = open("/dev/imex-kapi-test", O_RDWR | O_CLOEXEC);

	if (dev < 0 || ioctl(dev, IMEX_KAPI_RESOLVE, &r)) {
		perror("imex-kapi-test");
		return 1;
	}
	close(dev);
	if (r.error) {
		printf("kapi errno=%s\n", strerrorname_np(-r.error));
		return 0;
	}
	printf("kapi channel=%u partition=%u domain=", r.channel_id,
	       r.fabric_partition);
	for (int i = 0; i < 16; i++)
		printf("%02x%s", r.domain_uuid[i],
		       i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
	printf("\n");
	return 0;
}

static int check(const char *what, int r, int want)
{
	int got = r ? errno : 0;

	if (got == want)
		return 0;
	printf("badargs %s: expected %s, got %s\n", what,
	       want ? strerrorname_np(want) : "success",
	       got ? strerrorname_np(got) : "success");
	return 1;
}

/* Every refusal leaves nothing behind: the caller checks the counts too. */
static int badargs(int fd)
{
	struct imex_export_arg ea = { .desc_len = 4, .desc = "good" };
	struct imex_import_arg ia;
	struct imex_revoked_arg ra = { 0 };
	struct imex_handle h;
	void *ro;
	int bad = 0;

	ea.desc_len = 0;
	bad |= check("export desc_len=0", ioctl(fd, IMEX_IOC_EXPORT, &ea), EINVAL);
	ea.desc_len = IMEX_DESC_MAX + 1;
	bad |= check("export desc_len=257", ioctl(fd, IMEX_IOC_EXPORT, &ea), EINVAL);
	ea.desc_len = 4;
	ea.flags = 1;
	bad |= check("export flags=1", ioctl(fd, IMEX_IOC_EXPORT, &ea), EINVAL);
	ea.flags = 0;
	bad |= check("export NULL", ioctl(fd, IMEX_IOC_EXPORT, NULL), EFAULT);
	/* A handle that cannot be written back: the export is undone. */
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED)
		return 1;
	memcpy(ro, &ea, sizeof(ea));
	mprotect(ro, 4096, PROT_READ);
	bad |= check("export read-only arg", ioctl(fd, IMEX_IOC_EXPORT, ro), EFAULT);

	bad |= check("export", ioctl(fd, IMEX_IOC_EXPORT, &ea), 0);
	h = ea.handle;
	memset(&ia, 0, sizeof(ia));
	ia.handle = h;
	ia.flags = 1;
	bad |= check("import flags=1", ioctl(fd, IMEX_IOC_IMPORT, &ia), EINVAL);
	ia.flags = 0;
	ia.reserved = 1;
	bad |= check("import reserved=1", ioctl(fd, IMEX_IOC_IMPORT, &ia), EINVAL);
	ia.reserved = 0;
	ia.timeout_ms = IMEX_IMPORT_TIMEOUT_MAX_MS + 1;
	bad |= check("import timeout too long", ioctl(fd, IMEX_IOC_IMPORT, &ia), EINVAL);
	ia.timeout_ms = 0;
	bad |= check("import NULL", ioctl(fd, IMEX_IOC_IMPORT, NULL), EFAULT);
	mprotect(ro, 4096, PROT_READ | PROT_WRITE);
	memcpy(ro, &ia, sizeof(ia));
	mprotect(ro, 4096, PROT_READ);
	bad |= check("import read-only arg", ioctl(fd, IMEX_IOC_IMPORT, ro), EFAULT);
	bad |= check("unimport after a faulted import", ioctl(fd, IMEX_IOC_UNIMPORT, &h), ENOENT);
	bad |= check("unimport NULL", ioctl(fd, IMEX_IOC_UNIMPORT, NULL), EFAULT);
	bad |= check("unexport NULL", ioctl(fd, IMEX_IOC_UNEXPORT, NULL), EFAULT);
	bad |= check("revoked NULL", ioctl(fd, IMEX_IOC_REVOKED, NULL), EFAULT);
	ra.count = 1;
	ra.entries = 0;
	bad |= check("revoked, none waiting", ioctl(fd, IMEX_IOC_REVOKED, &ra), 0);
	if (ra.count || ra.pending) {
		printf("badargs revoked: count=%u pending=%u\n", ra.count, ra.pending);
		bad = 1;
	}
	/* A revoked import read into a bad buffer stays readable. */
	bad |= check("import", ioctl(fd, IMEX_IOC_IMPORT, &ia), 0);
	bad |= check("unexport", ioctl(fd, IMEX_IOC_UNEXPORT, &h), 0);
	ra.count = 1;
	ra.entries = 16;
	bad |= check("revoked bad entries", ioctl(fd, IMEX_IOC_REVOKED, &ra), EFAULT);
	{
		struct imex_revoked_entry e;

		/* Not a valid reason: the kernel must overwrite it. */
		memset(&e, 0xff, sizeof(e));
		ra.count = 1;
		ra.entries = (uintptr_t)&e;
		bad |= check("revoked", ioctl(fd, IMEX_IOC_REVOKED, &ra), 0);
		if (ra.count != 1 || ra.pending || e.reason != IMEX_REVOKE_UNEXPORTED ||
		    e.handle.id != h.id) {
			printf("badargs revoked: count=%u pending=%u reason=%u\n",
			       ra.count, ra.pending, e.reason);
			bad = 1;
		}
	}
	bad |= check("unexport again", ioctl(fd, IMEX_IOC_UNEXPORT, &h), ENOENT);
	bad |= check("unimport revoked", ioctl(fd, IMEX_IOC_UNIMPORT, &h), ENOENT);
	munmap(ro, 4096);
	printf(bad ? "badargs failed\n" : "badargs ok\n");
	return bad;
}

static int import_all(int fd, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[128], u[37];
	unsigned long n = 0;
	int err = 0;

	if (!f) {
		perror(path);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct imex_import_arg ia;

		memset(&ia, 0, sizeof(ia));
		if (sscanf(line, "%36[0-9a-f-]:%llu", u,
			   (unsigned long long *)&ia.handle.id) != 2 ||
		    uuid_parse(u, ia.handle.node_uuid))
			continue;
		if (ioctl(fd, IMEX_IOC_IMPORT, &ia)) {
			err = errno;
			break;
		}
		n++;
	}
	fclose(f);
	printf("imported %lu %s\n", n, err ? strerrorname_np(err) : "OK");
	return 0;
}

static int import_one(int fd, const char *handle)
{
	struct imex_import_arg ia;

	memset(&ia, 0, sizeof(ia));
	if (parse_handle(handle, &ia.handle))
		return 1;
	printf("import errno=%s\n", chan_ioctl(fd, IMEX_IOC_IMPORT, &ia) ?
	       strerrorname_np(errno) : "OK");
	return 0;
}

static int wait_file(const char *path)
{
	for (int i = 0; i < 600; i++) {
		if (!access(path, F_OK))
			return 0;
		usleep(100000);
	}
	fprintf(stderr, "chanopen: %s did not appear in 60 s\n", path);
	return 1;
}

/* open()+close() PATH until STOP exists; print the slowest pair. */
static int reopen_until(const char *path, const char *stop)
{
	unsigned long n = 0, max_us = 0;
	struct timespec a, b;

	do {
		unsigned long us;
		int fd;

		clock_gettime(CLOCK_MONOTONIC, &a);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			printf("reopen errno=%s\n", strerrorname_np(errno));
			return 1;
		}
		close(fd);
		clock_gettime(CLOCK_MONOTONIC, &b);
		us = (unsigned long)((b.tv_sec - a.tv_sec) * 1000000 +
				     (b.tv_nsec - a.tv_nsec) / 1000);
		if (us > max_us)
			max_us = us;
		n++;
		usleep(1000);
	} while (access(stop, F_OK));
	printf("reopen n=%lu max_us=%lu\n", n, max_us);
	return 0;
}

static int kapi_xfer(int fd)
{
	struct imex_kapi_xfer x = { .fd = fd, .op = IMEX_KAPI_EXPORT, .len = 5,
				    .desc = "kapi!" };
	int dev = open("/dev/imex-kapi-test", O_RDWR | O_CLOEXEC), bad = 0;

	if (dev < 0) {
		perror("imex-kapi-test");
		return 1;
	}
	if (ioctl(dev, IMEX_KAPI_XFER, &x) || x.error) {
		printf("kapi-xfer export errno=%s\n", strerrorname_np(-x.error));
		return 1;
	}
	memset(x.desc, 0, sizeof(x.desc));
	x.op = IMEX_KAPI_IMPORT;
	x.len = 2;
	if (ioctl(dev, IMEX_KAPI_XFER, &x) || x.error != -EMSGSIZE || x.len != 5)
		bad = printf("kapi-xfer small import: %d len=%u\n", x.error, x.len);
	x.len = sizeof(x.desc);
	if (ioctl(dev, IMEX_KAPI_XFER, &x) || x.error || x.len != 5 ||
	    memcmp(x.desc, "kapi!", 5))
		bad = printf("kapi-xfer import: %d len=%u\n", x.error, x.len);
	x.len = sizeof(x.desc);
	if (ioctl(dev, IMEX_KAPI_XFER, &x) || x.error)	/* held: returned again */
		bad = printf("kapi-xfer import held: %d\n", x.error);
	x.op = IMEX_KAPI_UNEXPORT;
	if (ioctl(dev, IMEX_KAPI_XFER, &x) || x.error)
		bad = printf("kapi-xfer unexport: %d\n", x.error);
	x.op = IMEX_KAPI_IMPORT;
	x.len = sizeof(x.desc);
	if (ioctl(dev, IMEX_KAPI_XFER, &x) || x.error != -ENOENT)
		bad = printf("kapi-xfer import after unexport: %d\n", x.error);
	x.op = IMEX_KAPI_UNEXPORT;
	if (ioctl(dev, IMEX_KAPI_XFER, &x) || x.error != -ENOENT)
		bad = printf("kapi-xfer unexport twice: %d\n", x.error);
	x.fd = dev;	/* not a channel */
	x.op = IMEX_KAPI_EXPORT;
	if (ioctl(dev, IMEX_KAPI_XFER, &x) || x.error != -EINVAL)
		bad = printf("kapi-xfer non-channel: %d\n", x.error);
	close(dev);
	printf(bad ? "kapi-xfer failed\n" : "kapi-xfer ok\n");
	return !!bad;
}

int main(int argc, char **argv)
{
	int fd, i;

	if (argc < 2) {
		fprintf(stderr, "usage: chanopen PATH [info] [wait-revoke MS] [hold]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = open(argv[1], O_RDWR | O_CLOEXEC);	/* any file, for kapi */
	if (fd < 0) {
		int err = errno;	/* printf may clobber errno */

		printf("open errno=%s\n", strerrorname_np(err));
		return err;
	}
	printf("open\n");
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "info")) {
			int err = info(fd);

			/* ENODEV: revoked between the open and the ioctl. */
			if (err)
				return err;
		} else if (!strcmp(argv[i], "wait-revoke") && i + 1 < argc) {
			struct pollfd p = { .fd = fd, .events = POLLIN | POLLPRI };
			int r = poll(&p, 1, atoi(argv[++i]));

			if (r == 0) {
				printf("not revoked\n");
				return 124;
			}
			printf("revoked revents=%#x\n", p.revents);
			if ((p.revents & (POLLHUP | POLLERR)) != (POLLHUP | POLLERR))
				return 1;
			if (info(fd) != ENODEV)
				return 1;
		} else if (!strcmp(argv[i], "kapi")) {
			if (kapi(fd))
				return 1;
		} else if (!strcmp(argv[i], "kapi-badfd")) {
			if (kapi(1000))
				return 1;
		} else if (!strcmp(argv[i], "badargs")) {
			if (badargs(fd))
				return 1;
		} else if (!strcmp(argv[i], "import-all") && i + 1 < argc) {
			if (import_all(fd, argv[++i]))
				return 1;
		} else if (!strcmp(argv[i], "import") && i + 1 < argc) {
			if (import_one(fd, argv[++i]))
				return 1;
		} else if (!strcmp(argv[i], "wait-file") && i + 1 < argc) {
			if (wait_file(argv[++i]))
				return 1;
		} else if (!strcmp(argv[i], "reopen-until") && i + 1 < argc) {
			if (reopen_until(argv[1], argv[++i]))
				return 1;
		} else if (!strcmp(argv[i], "kapi-xfer")) {
			if (kapi_xfer(fd))
				return 1;
		} else if (!strcmp(argv[i], "fail-nth") && i + 1 < argc) {
			arm_next = (unsigned int)strtoul(argv[++i], NULL, 10);
			if (failnth_open() < 0) {
				perror("/proc/thread-self/fail-nth");
				return 2;
			}
		} else if (!strcmp(argv[i], "export") && i + 1 < argc) {
			if (export_one(fd, argv[++i]))
				return 1;
		} else if (!strcmp(argv[i], "unexport") && i + 1 < argc) {
			if (unexport_one(fd, argv[++i]))
				return 1;
		} else if (!strcmp(argv[i], "fd-of") && i + 2 < argc) {
			int held = fd_of(argv[i + 1], argv[i + 2]);

			if (held < 0)
				return 1;
			close(fd);
			fd = held;
			i += 2;
		} else if (!strcmp(argv[i], "hold")) {
			pause();
		} else {
			fprintf(stderr, "chanopen: unknown step '%s'\n", argv[i]);
			return 2;
		}
	}
	close(fd);
	return 0;
}
