// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's extended-ack message (imex_extack.h).  libnl hands the error
 * callback only the struct nlmsgerr; the TLVs follow the (possibly capped)
 * copy of the request, which is what this walks over.
 */
#include <string.h>

#include <linux/netlink.h>
#include <netlink/attr.h>

#include "imex_extack.h"

int imex_extack_parse(const struct nlmsghdr *nlh, struct nlattr **tb)
{
	const struct nlmsgerr *e;
	size_t off, len;

	if (nlh->nlmsg_len < NLMSG_SPACE(sizeof(*e)))
		return -1;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return -1;

	e = NLMSG_DATA(nlh);
	off = NLMSG_SPACE(sizeof(*e));
	/* Without NLM_F_CAPPED the whole request is echoed before the TLVs. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < sizeof(e->msg))
			return -1;
		off += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_ALIGN(sizeof(e->msg));
	}
	if (off >= nlh->nlmsg_len)
		return -1;
	len = nlh->nlmsg_len - off;

	if (nla_parse(tb, NLMSGERR_ATTR_MAX,
		      (struct nlattr *)((char *)nlh + off), (int)len, NULL) < 0)
		return -1;
	return 0;
}

void imex_extack_msg(const struct nlmsghdr *nlh, char *buf, size_t size)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

	if (!size)
		return;
	buf[0] = '\0';
	if (imex_extack_parse(nlh, tb))
		return;
	if (!tb[NLMSGERR_ATTR_MSG] || nla_len(tb[NLMSGERR_ATTR_MSG]) < 1)
		return;
	nla_strlcpy(buf, tb[NLMSGERR_ATTR_MSG], size);
}
