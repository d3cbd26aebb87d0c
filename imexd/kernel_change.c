// SPDX-License-Identifier: GPL-2.0
/*
 * Writing to the imex module as its manager: domain health, request
 * completion, and the member list DOMAIN_SET carries (kernel_set.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <linux/imex.h>
#include "kernel.h"
#include "kernel_internal.h"

int kernel_put_members(struct nl_msg *m, const struct imexd_member *mb,
		       uint16_t n)
{
	struct nlattr *arr = nla_nest_start(m, IMEX_A_MEMBERS);

	if (!arr)
		return -EMSGSIZE;
	for (uint16_t i = 0; i < n; i++) {
		struct nlattr *e = nla_nest_start(m, (i % 0x3fff) + 1);

		if (!e || nla_put_string(m, IMEX_A_MEMBER_ENTRY_NAME, mb[i].name) ||
		    (mb[i].addr[0] &&
		     nla_put_string(m, IMEX_A_MEMBER_ADDR, mb[i].addr)))
			return -EMSGSIZE;
		nla_nest_end(m, e);
	}
	/* libnl drops a nest past 64 KiB instead of sending it cut. */
	return nla_nest_end(m, arr) < 0 ? -EMSGSIZE : 0;
}

int imexd_kernel_set_status(struct imexd_kernel *k,
			    const struct imexd_domain_status *st, char *msg,
			    size_t msglen)
{
	size_t size = 1024 + IMEXD_REASON_MAX +
		      (size_t)st->nmembers * (96 + IMEX_MEMBERS_MAX +
					      IMEXD_REASON_MAX + 16);
	struct nl_msg *m = kernel_msg_new(k, IMEX_CMD_DOMAIN_SET_STATUS, 0, size);
	struct nlattr *arr;
	int r = 0;

	if (!m)
		return kernel_transact(k, NULL, NULL, NULL, NULL, msg, msglen);
	if (nla_put_string(m, IMEX_A_DOMAIN_NAME, st->name) ||
	    nla_put_u32(m, IMEX_A_DOMAIN_STATE, st->state) ||
	    (st->reason[0] &&
	     nla_put_string(m, IMEX_A_DOMAIN_REASON, st->reason)))
		r = -EMSGSIZE;
	if (!r && st->nmembers && st->members) {
		uint16_t n = st->nmembers > IMEX_MEMBERS_MAX ? IMEX_MEMBERS_MAX :
			     st->nmembers;

		arr = nla_nest_start(m, IMEX_A_MEMBERS);
		if (!arr)
			r = -EMSGSIZE;
		for (uint16_t i = 0; !r && i < n; i++) {
			const struct imexd_member_status *ms = &st->members[i];
			struct nlattr *e = nla_nest_start(m, i + 1);

			if (!e || nla_put_string(m, IMEX_A_MEMBER_ENTRY_NAME, ms->name) ||
			    nla_put_u32(m, IMEX_A_MEMBER_STATE, ms->state) ||
			    (ms->has_view &&
			     nla_put(m, IMEX_A_MEMBER_VIEW, n, ms->view)) ||
			    (ms->reason[0] &&
			     nla_put_string(m, IMEX_A_MEMBER_REASON, ms->reason)) ||
			    (ms->since &&
			     nla_put_u64(m, IMEX_A_MEMBER_SINCE, ms->since)))
				r = -EMSGSIZE;
			else
				nla_nest_end(m, e);
		}
		if (!r)
			nla_nest_end(m, arr);
	}
	if (r) {
		nlmsg_free(m);
		snprintf(msg, msglen, "the status of domain '%s' does not fit one netlink message",
			 st->name);
		return r;
	}
	return kernel_transact(k, m, NULL, NULL, NULL, msg, msglen);
}

int imexd_kernel_req_done(struct imexd_kernel *k, uint64_t req_id, int error,
			  const char *text, const uint8_t *uuid,
			  const struct imexd_channel *chans, uint32_t nchans,
			  char *msg, size_t msglen)
{
	size_t size = 1024 + (size_t)(nchans < IMEX_CHANNEL_IDS_MAX ? nchans :
				      IMEX_CHANNEL_IDS_MAX) * 4;
	struct nl_msg *m = kernel_msg_new(k, IMEX_CMD_REQ_DONE, 0, size);
	char t[IMEX_MESSAGE_MAX];
	int r = 0;

	if (!m)
		return kernel_transact(k, NULL, NULL, NULL, NULL, msg, msglen);
	/* The kernel takes at most IMEX_MESSAGE_MAX - 1 bytes. */
	snprintf(t, sizeof(t), "%s", text ? text : "");
	if (nla_put_u64(m, IMEX_A_REQ_ID, req_id) ||
	    nla_put_u32(m, IMEX_A_REQ_STATUS, (uint32_t)(error < 0 ? -error : error)) ||
	    (t[0] && nla_put_string(m, IMEX_A_REQ_MESSAGE, t)))
		r = -EMSGSIZE;
	if (!r && !error && uuid && memcmp(uuid, kernel_zero16, 16) &&
	    nla_put(m, IMEX_A_DOMAIN_UUID, 16, uuid))
		r = -EMSGSIZE;
	if (!r && !error && nchans && chans) {
		uint32_t n = nchans < IMEX_CHANNEL_IDS_MAX ? nchans :
			     IMEX_CHANNEL_IDS_MAX;
		struct nlattr *a = nla_reserve(m, IMEX_A_CHANNEL_IDS, (int)(n * 4));

		if (!a) {
			r = -EMSGSIZE;
		} else {
			uint32_t *ids = nla_data(a);

			for (uint32_t i = 0; i < n; i++)
				memcpy(&ids[i], &chans[i].id, sizeof(ids[i]));
		}
	}
	if (r) {
		nlmsg_free(m);
		snprintf(msg, msglen, "the outcome of request %" PRIu64 " does not fit one netlink message",
			 req_id);
		return r;
	}
	return kernel_transact(k, m, NULL, NULL, NULL, msg, msglen);
}
