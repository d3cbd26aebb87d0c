/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's extended ack: the TLVs after an NLMSG_ERROR's payload. */
#ifndef IMEX_EXTACK_H
#define IMEX_EXTACK_H

#include <stddef.h>
#include <linux/netlink.h>

/*
 * Parse the extended-ack TLVs of @nlh, a whole NLMSG_ERROR message, into
 * @tb (NLMSGERR_ATTR_MAX + 1 entries).  Every length is checked against
 * nlmsg_len first: a message that lies about one yields no TLVs.
 * 0, or -1 when there are none (no NLM_F_ACK_TLVS) or they do not parse.
 */
int imex_extack_parse(const struct nlmsghdr *nlh, struct nlattr **tb);

/*
 * The NLMSGERR_ATTR_MSG text of @nlh into @buf (@size bytes, truncated,
 * always terminated when @size > 0); empty when the message has none.
 */
void imex_extack_msg(const struct nlmsghdr *nlh, char *buf, size_t size);

#endif
