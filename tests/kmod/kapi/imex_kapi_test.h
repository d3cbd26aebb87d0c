/* SPDX-License-Identifier: GPL-2.0 */
/* ioctls of /dev/imex-kapi-test (tests only). */
#ifndef IMEX_KAPI_TEST_H
#define IMEX_KAPI_TEST_H

#include <linux/types.h>
#include <linux/ioctl.h>

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
	__u64	resolve_ns;	/* out: get_fd + ident + put, per loop */
	__u64	fget_ns;	/* out: fget + fput, per loop (the baseline) */
};

#define IMEX_KAPI_RESOLVE _IOWR(0xE7, 1, struct imex_kapi_resolve)
#define IMEX_KAPI_BENCH   _IOWR(0xE7, 2, struct imex_kapi_bench)

#endif
