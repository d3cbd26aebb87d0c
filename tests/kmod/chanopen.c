// SPDX-License-Identifier: GPL-2.0
/*
 * chanopen: open a channel device and report what the kernel says of it.
 *
 *   chanopen PATH [info] [kapi] [kapi-badfd] [wait-revoke MS] [hold]
 *
 * Exits with the errno of a failed open(), so a test can expect ENOLINK or
 * EACCES; "info" prints IMEX_IOC_CHANNEL_INFO; "wait-revoke" polls until
 * the channel is revoked (exit 0) or the bound passes (exit 124), then
 * checks that the info ioctl now fails with ENODEV; "hold" keeps the fd open
 * until a signal, printing "open" first so a test can wait for it; "kapi"
 * resolves the fd through imex.ko's in-kernel API (via the imex_kapi_test
 * module) and prints what a driver would see; "kapi-badfd" does so for a
 * descriptor that is not open.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/imex.h>
#include "kapi/imex_kapi_test.h"

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
			if (info(fd))
				return 1;
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
