/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels imex builds against lives here, so the
 * rest of the module reads as if written for one kernel.
 */
#ifndef _IMEX_COMPAT_H
#define _IMEX_COMPAT_H

#include <linux/version.h>
#include <linux/device.h>
#include <net/netlink.h>
#include <net/genetlink.h>

/* 6.2 made devnode callbacks take a const device. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define IMEX_DEVNODE_CONST const
#else
#define IMEX_DEVNODE_CONST
#endif

/* 6.4 dropped the owner argument of class_create(). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define imex_class_create(name) class_create(name)
#else
#define imex_class_create(name) class_create(THIS_MODULE, name)
#endif

/*
 * Formatted extended-ack messages (79 characters at most) arrived in 6.2.  Before that the message
 * must outlive the handler, so format into a small static ring: a slot is
 * reused only after IMEX_EXTACK_SLOTS later errors, long after the ack that
 * points at it has been sent.
 */
#ifdef NL_SET_ERR_MSG_FMT
#define imex_extack_fmt(extack, fmt, ...) \
	NL_SET_ERR_MSG_FMT(extack, fmt, ##__VA_ARGS__)
#else
#define IMEX_EXTACK_SLOTS 64
#define IMEX_EXTACK_LEN 80	/* as NETLINK_MAX_FMTMSG_LEN */
const char *imex_extack_slot(const char *fmt, ...) __printf(1, 2);
#define imex_extack_fmt(extack, fmt, ...) do {				\
	struct netlink_ext_ack *__ea = (extack);			\
	if (__ea)							\
		__ea->_msg = imex_extack_slot(fmt, ##__VA_ARGS__);	\
} while (0)
#endif

/* 6.2 split the ops a pre_doit hook sees into struct genl_split_ops. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define imex_genl_ops_t struct genl_split_ops
#else
#define imex_genl_ops_t struct genl_ops
#endif

/* Request attributes of a dump: moved into a genl_info in 6.5. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define imex_dump_attrs(cb) (genl_dumpit_info(cb)->info.attrs)
#else
#define imex_dump_attrs(cb) (genl_dumpit_info(cb)->attrs)
#endif

/* 6.12 hid struct fd's members behind fd_file(). */
#ifndef fd_file
#define fd_file(f) ((f).file)
#endif

/*
 * 6.12 removed no_llseek: a NULL llseek on a stream_open()ed file says the
 * same thing there.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define imex_no_llseek NULL
#else
#define imex_no_llseek no_llseek
#endif

#endif /* _IMEX_COMPAT_H */
