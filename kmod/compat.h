/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels imex builds against lives here, so the
 * rest of the module reads as if written for one kernel.
 *
 * Each is told apart by the interface itself, not by the version number: a
 * distribution kernel may carry a backport.  Where the new (or old) interface
 * is a macro it is tested with #ifdef; where it is only a type or a
 * prototype, kmod/Kbuild probes the kernel's headers for it and defines
 * IMEX_HAVE_<feature>.
 */
#ifndef _IMEX_COMPAT_H
#define _IMEX_COMPAT_H

#include <linux/device.h>
#include <linux/file.h>
#include <net/netlink.h>
#include <net/genetlink.h>

/*
 * The manager group must not be readable by users.  GENL_MCAST_CAP_SYS_ADMIN
 * (6.7, in 6.1.64 and other stable kernels) is how the core enforces that;
 * without it anyone could join the group, so refuse to build.
 */
#ifndef GENL_MCAST_CAP_SYS_ADMIN
#error "no GENL_MCAST_CAP_SYS_ADMIN (6.7, 6.1.64): the manager group would be public"
#endif

/* 6.2 made devnode callbacks take a const device (probed: a prototype). */
#ifdef IMEX_HAVE_CONST_DEVNODE
#define IMEX_DEVNODE_CONST const
#else
#define IMEX_DEVNODE_CONST
#endif

/*
 * 6.4 dropped the owner argument of class_create(), and with it the macro
 * that passed a lock class key: a class_create macro is the old form.
 */
#ifdef class_create
#define imex_class_create(name) class_create(THIS_MODULE, name)
#else
#define imex_class_create(name) class_create(name)
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

/*
 * 6.2 split the ops a pre_doit hook sees into struct genl_split_ops
 * (probed: a type).
 */
#ifdef IMEX_HAVE_GENL_SPLIT_OPS
#define imex_genl_ops_t struct genl_split_ops
#else
#define imex_genl_ops_t struct genl_ops
#endif

/*
 * Request attributes of a dump: moved into a struct genl_info inside
 * struct genl_dumpit_info in 6.5 (probed: a member).
 */
#ifdef IMEX_HAVE_GENL_DUMPIT_INFO_INFO
#define imex_dump_attrs(cb) (genl_dumpit_info(cb)->info.attrs)
#else
#define imex_dump_attrs(cb) (genl_dumpit_info(cb)->attrs)
#endif

/* 6.12 hid struct fd's members behind fd_file(). */
#ifndef fd_file
#define fd_file(f) ((f).file)
#endif

#endif /* _IMEX_COMPAT_H */
