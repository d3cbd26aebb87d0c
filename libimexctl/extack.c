// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's extended-ack message.  libnl hands the error callback only
 * the struct nlmsgerr; the TLVs follow the (possibly capped) copy of the
 * request, which is what this walks over.
 */
#include <string.h>

#include <linux/netlink.h>
#include <netlink/attr.h>

#include "internal.h"

void imexctl_extack_msg(const struct nlmsghdr *nlh, char *buf, size_t size)
{
	const struct nlmsgerr *e;
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off, len;

	if (size)
		buf[0] = '\0';
	if (!size || nlh->nlmsg_len < NLMSG_SPACE(sizeof(*e)))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;

	e = NLMSG_DATA(nlh);
	off = NLMSG_SPACE(sizeof(*e));
	/* Without NLM_F_CAPPED the whole request is echoed before the TLVs. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < sizeof(e->msg))
			return;
		off += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_ALIGN(sizeof(e->msg));
	}
	if (off >= nlh->nlmsg_len)
		return;
	len = nlh->nlmsg_len - off;

	if (nla_parse(tb, NLMSGERR_ATTR_MAX,
		      (struct nlattr *)((char *)nlh + off), (int)len, NULL) < 0)
		return;
	if (!tb[NLMSGERR_ATTR_MSG] || nla_len(tb[NLMSGERR_ATTR_MSG]) < 1)
		return;
	nla_strlcpy(buf, tb[NLMSGERR_ATTR_MSG], size);
}
