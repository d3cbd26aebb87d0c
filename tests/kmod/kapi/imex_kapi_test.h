/* SPDX-License-Identifier: GPL-2.0 */
/* ioctls of /dev/imex-kapi-test (tests only). */
#ifndef IMEX_KAPI_TEST_H
#define IMEX_KAPI_TEST_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/imex.h>

struct imex_kapi_resolve {
	__s32	fd;		/* in: a file descriptor of the caller */
	__s32	error;		/* out: 0 or a negative errno */
	__u8	domain_uuid[16];
	__u32	channel_id;
	__u32	fabric_partition;
};

struct imex_kapi_bench {
	__s32	fd;		/* in: an open channel */
	__u32	iterations;	/* in */
	__u64	resolve_ns;	/* out: imex_channel_fget + ident + fput */
	__u64	fget_ns;	/* out: fget + fput, per loop (the baseline) */
};

/* imex_export() / imex_unexport() / imex_import() on a channel fd. */
enum { IMEX_KAPI_EXPORT = 1, IMEX_KAPI_UNEXPORT, IMEX_KAPI_IMPORT };

struct imex_kapi_xfer {
	__s32	fd;		/* in: a file descriptor of the caller */
	__u32	op;		/* in: IMEX_KAPI_EXPORT.. */
	__s32	error;		/* out: 0 or a negative errno */
	__u32	len;		/* in: desc bytes (export) or room (import); out */
	__u32	timeout_ms;	/* in: import */
	__u32	pad;
	struct imex_handle handle;	/* out: export; in: the others */
	__u8	desc[256];
};

/*
 * Revocation callbacks, one per slot: WATCH_ADD resolves @fd and registers
 * on the channel (holding a channel reference until WATCH_DEL or unload);
 * WATCH_REARM registers the same callback on it again; WATCH_GET reports;
 * WATCH_DEL unregisters.  All fill in the out fields.
 */
#define IMEX_KAPI_WATCH_SLOTS	64

/* flags */
#define IMEX_KAPI_CB_NOT_TASK	0x1	/* a callback ran outside process context */
#define IMEX_KAPI_STOPPED	0x2	/* WATCH_DEL stopped a pending callback */

struct imex_kapi_watch {
	__s32	fd;		/* in: WATCH_ADD: the channel */
	__u32	slot;		/* in: 0..IMEX_KAPI_WATCH_SLOTS-1 */
	__s32	error;		/* out: register's (ADD, REARM) */
	__u32	calls;		/* out: times the callback ran */
	__s32	ident;		/* out: imex_channel_ident() now */
	__s32	cb_ident;	/* out: imex_channel_ident() in the callback */
	__s32	cb_register;	/* out: a registration tried in the callback */
	__u32	flags;		/* out: IMEX_KAPI_* */
};

#define IMEX_KAPI_RESOLVE _IOWR(0xE7, 1, struct imex_kapi_resolve)
#define IMEX_KAPI_BENCH   _IOWR(0xE7, 2, struct imex_kapi_bench)
#define IMEX_KAPI_XFER    _IOWR(0xE7, 3, struct imex_kapi_xfer)
#define IMEX_KAPI_WATCH_ADD   _IOWR(0xE7, 4, struct imex_kapi_watch)
#define IMEX_KAPI_WATCH_REARM _IOWR(0xE7, 5, struct imex_kapi_watch)
#define IMEX_KAPI_WATCH_GET   _IOWR(0xE7, 6, struct imex_kapi_watch)
#define IMEX_KAPI_WATCH_DEL   _IOWR(0xE7, 7, struct imex_kapi_watch)

#endif
