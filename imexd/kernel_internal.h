/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by kernel.c, kernel_read.c, kernel_change.c and kernel_set.c. */
#ifndef IMEXD_KERNEL_INTERNAL_H
#define IMEXD_KERNEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include "kernel.h"
#include "wire.h"

struct imexd_kernel {
	struct nl_sock *sk;	/* commands: the manager attachment */
	struct nl_sock *ntf;	/* the manager group */
	int family;
	int grp_manager;
	/* IMPORT_DONEs queued for one write (kernel_batch.c), and their ids. */
	struct nl_msg *done[IMEXD_KERNEL_BATCH];
	uint64_t done_id[IMEXD_KERNEL_BATCH];
	unsigned int ndone;
};

extern const uint8_t kernel_zero16[16];

/* A new message for @cmd with room for @size bytes; NULL without memory. */
struct nl_msg *kernel_msg_new(struct imexd_kernel *k, uint8_t cmd, int flags,
			      size_t size);
/*
 * Send @m (consumed; NULL means "out of memory") and read the answers
 * through @valid until the ack, the end of a dump or an error.  0 or
 * -errno with the kernel's message in @msg; *@intr says a dump raced a
 * change.
 */
int kernel_transact(struct imexd_kernel *k, struct nl_msg *m,
		    nl_recvmsg_msg_cb_t valid, void *arg, bool *intr,
		    char *msg, size_t msglen);
/*
 * The same for a command whose success is one answer (IMPORT_ACCEPT,
 * IMPORT_CHECK, EXPORT_DEL_ACCEPT): no ack is asked for, so the answer (or
 * the error) is the one message read.  0 also when @valid skipped the
 * answer.
 */
int kernel_transact_reply(struct imexd_kernel *k, struct nl_msg *m,
			  nl_recvmsg_msg_cb_t valid, void *arg,
			  char *msg, size_t msglen);
/* IMEX_A_MEMBERS with @n entries (names, addresses); -EMSGSIZE. */
int kernel_put_members(struct nl_msg *m, const struct imexd_member *mb,
		       uint16_t n);
void kernel_set_msg(char *msg, size_t msglen, const char *fmt,
		    const char *detail);
size_t kernel_nest_count(const struct nlattr *attr);
int kernel_parse(struct nl_msg *m, struct nlattr **tb);
void kernel_get_str(char *dst, size_t len, const struct nlattr *a);
bool kernel_get_uuid(uint8_t dst[16], const struct nlattr *a);

#endif /* IMEXD_KERNEL_INTERNAL_H */
