// SPDX-License-Identifier: GPL-2.0
/*
 * first-use NODE: an fd gets its per-fd state on first need, not at open
 * (tests/kmod/t-first-use.sh).  Checks, on the channel device NODE:
 *  - UNEXPORT and UNIMPORT on a fresh fd answer ENOENT;
 *  - an epoll registered on a fresh fd, before any ioctl, still hears
 *    EPOLLPRI when imports made later on that fd are revoked;
 *  - THREADS threads' first ioctls on one fresh fd, at once, each import
 *    its own export (an fd holds one import per handle): no import is lost
 *    (IMEX_IOC_REVOKED reports every one).
 * Prints "first-use: ok" or why not; exit status 1 on a failed check.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/imex.h>

#define THREADS 8

static struct imex_handle handles[THREADS];
static pthread_barrier_t start;
static int importer, failures;

static void fail(const char *what)
{
	fprintf(stderr, "first-use: %s: %s\n", what, strerror(errno));
	failures++;
}

static void *import_one(void *arg)
{
	struct imex_import_arg ia = { .handle = *(struct imex_handle *)arg };

	pthread_barrier_wait(&start);
	if (ioctl(importer, IMEX_IOC_IMPORT, &ia))
		fail("import");
	return NULL;
}

int main(int argc, char **argv)
{
	struct imex_export_arg ea = { .desc_len = 5 };
	struct imex_revoked_entry ents[2 * THREADS];
	struct imex_revoked_arg ra = { 0 };
	struct epoll_event ev = { .events = EPOLLPRI };
	struct imex_handle none = { 0 };
	pthread_t t[THREADS];
	int exporter, fresh, ep, i, n;

	if (argc != 2) {
		fprintf(stderr, "usage: first-use NODE\n");
		return 2;
	}
	exporter = open(argv[1], O_RDWR | O_CLOEXEC);
	importer = open(argv[1], O_RDWR | O_CLOEXEC);
	fresh = open(argv[1], O_RDWR | O_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (exporter < 0 || importer < 0 || fresh < 0 || ep < 0) {
		fail("open");
		return 1;
	}
	if (ioctl(fresh, IMEX_IOC_UNEXPORT, &none) == 0 || errno != ENOENT)
		fail("UNEXPORT on a fresh fd (want ENOENT)");
	if (ioctl(fresh, IMEX_IOC_UNIMPORT, &none) == 0 || errno != ENOENT)
		fail("UNIMPORT on a fresh fd (want ENOENT)");

	/* Registered before the importer's first ioctl. */
	if (epoll_ctl(ep, EPOLL_CTL_ADD, importer, &ev))
		fail("epoll_ctl");
	if (epoll_wait(ep, &ev, 1, 0) != 0)
		fail("an event before anything was revoked");

	memcpy(ea.desc, "first", 5);
	for (i = 0; i < THREADS; i++) {
		if (ioctl(exporter, IMEX_IOC_EXPORT, &ea)) {
			fail("export");
			return 1;
		}
		handles[i] = ea.handle;
	}
	pthread_barrier_init(&start, NULL, THREADS);
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, import_one, &handles[i]);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < THREADS; i++)
		if (ioctl(exporter, IMEX_IOC_UNEXPORT, &handles[i]))
			fail("unexport");

	/* The wake comes through the channel: bounded wait, 10 s. */
	n = epoll_wait(ep, &ev, 1, 10000);
	if (n != 1 || !(ev.events & EPOLLPRI))
		fail("no EPOLLPRI within 10 s for revoked imports");
	ra.entries = (uintptr_t)ents;
	ra.count = 2 * THREADS;
	if (ioctl(importer, IMEX_IOC_REVOKED, &ra))
		fail("revoked");
	else if (ra.count != THREADS) {
		fprintf(stderr, "first-use: %u revoked imports reported, want %d\n",
			ra.count, THREADS);
		failures++;
	}
	close(ep);
	close(fresh);
	close(importer);
	close(exporter);
	if (failures)
		return 1;
	printf("first-use: ok\n");
	return 0;
}
