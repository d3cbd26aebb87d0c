// SPDX-License-Identifier: GPL-2.0
/*
 * kapiwatch: drive the revocation callbacks of imex.ko's in-kernel API
 * through the imex_kapi_test module, one registration per slot.
 *
 *   kapiwatch add SLOT PATH   open PATH, register a callback on its channel
 *   kapiwatch rearm SLOT      register the slot's callback again
 *   kapiwatch get SLOT        report the slot
 *   kapiwatch del SLOT        unregister (the slot is gone afterwards)
 *
 * Prints one line, e.g. "slot=0 error=OK calls=1 ident=ENODEV
 * cb_ident=ENODEV cb_register=ENODEV": error is the registration's (add,
 * rearm), ident what imex_channel_ident() says now, cb_* what it and a
 * registration said inside the callback; "not-task" when a callback ran
 * outside process context, "stopped" when del stopped a pending callback.
 * Exits 1 when the module refuses the request itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "kapi/imex_kapi_test.h"

static const char *err_name(int err)
{
	return err ? strerrorname_np(-err) : "OK";
}

int main(int argc, char **argv)
{
	struct imex_kapi_watch w = { .fd = -1 };
	unsigned long cmd;
	int dev, err;

	if (argc < 3 || (!strcmp(argv[1], "add") && argc < 4)) {
		fprintf(stderr, "usage: kapiwatch add SLOT PATH | rearm SLOT | get SLOT | del SLOT\n");
		return 2;
	}
	w.slot = (unsigned int)strtoul(argv[2], NULL, 10);
	if (!strcmp(argv[1], "add"))
		cmd = IMEX_KAPI_WATCH_ADD;
	else if (!strcmp(argv[1], "rearm"))
		cmd = IMEX_KAPI_WATCH_REARM;
	else if (!strcmp(argv[1], "get"))
		cmd = IMEX_KAPI_WATCH_GET;
	else if (!strcmp(argv[1], "del"))
		cmd = IMEX_KAPI_WATCH_DEL;
	else {
		fprintf(stderr, "kapiwatch: unknown command '%s'\n", argv[1]);
		return 2;
	}
	if (cmd == IMEX_KAPI_WATCH_ADD) {
		w.fd = open(argv[3], O_RDWR | O_CLOEXEC);
		if (w.fd < 0) {
			printf("open errno=%s\n", strerrorname_np(errno));
			return 1;
		}
	}
	dev = open("/dev/imex-kapi-test", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		perror("/dev/imex-kapi-test");
		return 1;
	}
	err = ioctl(dev, cmd, &w) ? errno : 0;
	close(dev);
	if (w.fd >= 0)
		close(w.fd);
	if (err) {
		printf("%s errno=%s\n", argv[1], strerrorname_np(err));
		return 1;
	}
	printf("slot=%u error=%s calls=%u ident=%s cb_ident=%s cb_register=%s%s%s\n",
	       w.slot, err_name(w.error), w.calls, err_name(w.ident),
	       err_name(w.cb_ident), err_name(w.cb_register),
	       w.flags & IMEX_KAPI_CB_NOT_TASK ? " not-task" : "",
	       w.flags & IMEX_KAPI_STOPPED ? " stopped" : "");
	return 0;
}
