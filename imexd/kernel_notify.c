// SPDX-License-Identifier: GPL-2.0
/*
 * What a batch of the imex module's notifications names (see kernel.h):
 * pure, so the counting that decides which queues imexd asks is tested
 * without a kernel.
 */
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/imex.h>
#include "kernel.h"

void imexd_kernel_notify_count(uint16_t family, const void *buf, size_t len,
			       struct imexd_notified *seen)
{
	const struct nlmsghdr *h = buf;
	int left = len > (size_t)INT32_MAX ? INT32_MAX : (int)len;

	for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
		const struct genlmsghdr *g = NLMSG_DATA(h);

		if (h->nlmsg_type != family ||
		    h->nlmsg_len < NLMSG_LENGTH(sizeof(*g)))
			continue;
		if (g->cmd == IMEX_CMD_REQ_NOTIFY)
			seen->requests++;
		else if (g->cmd == IMEX_CMD_IMPORT_NOTIFY)
			seen->imports++;
		else if (g->cmd == IMEX_CMD_EXPORT_DEL)
			seen->export_ends++;
	}
}
