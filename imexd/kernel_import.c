// SPDX-License-Identifier: GPL-2.0
/*
 * Remote imports through the imex module (see kernel.h): take the ends of
 * remotely imported exports the kernel queued, check a peer's import
 * against this node's exports, and revoke imports of another node's
 * exports.  Taking and completing imports, in batches: kernel_batch.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <linux/imex.h>
#include "kernel.h"
#include "kernel_internal.h"

/*
 * Accept the next of the kernel's @cmd (named @what in messages); @valid
 * parses the answer into @arg and sets *@got: an answer without one is
 * -EPROTO.
 */
static int accept_reply(struct imexd_kernel *k, uint8_t cmd, const char *what,
			nl_recvmsg_msg_cb_t valid, void *arg, const bool *got,
			char *msg, size_t msglen)
{
	int r;

	r = kernel_transact_reply(k, kernel_msg_new(k, cmd, 0, 0), valid, arg,
				  msg, msglen);
	if (!r && !*got) {
		kernel_set_msg(msg, msglen,
			       "the kernel's answer to %s lacks an attribute", what);
		r = -EPROTO;
	}
	return r;
}

struct check_ans {
	uint8_t *desc;
	uint16_t len;
	bool got;
};

static int on_check(struct nl_msg *m, void *arg)
{
	struct check_ans *a = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];
	int n;

	if (kernel_parse(m, tb) || !tb[IMEX_A_DESC])
		return NL_SKIP;
	n = nla_len(tb[IMEX_A_DESC]);
	if (n <= 0 || n > IMEX_DESC_MAX)
		return NL_SKIP;
	memcpy(a->desc, nla_data(tb[IMEX_A_DESC]), (size_t)n);
	a->len = (uint16_t)n;
	a->got = true;
	return NL_OK;
}

int imexd_kernel_import_check(struct imexd_kernel *k, uint64_t handle_id,
			      const uint8_t domain_uuid[16],
			      uint32_t channel_id, const char *member,
			      uint8_t desc[IMEX_DESC_MAX], uint16_t *desc_len,
			      char *msg, size_t msglen)
{
	struct nl_msg *m = kernel_msg_new(k, IMEX_CMD_IMPORT_CHECK, 0, 0);
	struct check_ans a = { .desc = desc };
	int r;

	*desc_len = 0;
	if (m && (nla_put_u64(m, IMEX_A_HANDLE_ID, handle_id) ||
		  nla_put(m, IMEX_A_DOMAIN_UUID, 16, domain_uuid) ||
		  nla_put_u32(m, IMEX_A_CHANNEL_ID, channel_id) ||
		  nla_put_string(m, IMEX_A_MEMBER_NAME, member))) {
		nlmsg_free(m);
		m = NULL;
	}
	r = kernel_transact_reply(k, m, on_check, &a, msg, msglen);
	if (!r && !a.got) {
		kernel_set_msg(msg, msglen, "%s",
			       "the kernel's answer to IMPORT_CHECK carries no descriptor");
		r = -EPROTO;
	}
	if (!r)
		*desc_len = a.len;
	return r;
}

struct del_ans {
	uint64_t *handle_id;
	uint8_t *domain_uuid;
	uint32_t *channel_id;
	bool got;
};

static int on_del(struct nl_msg *m, void *arg)
{
	struct del_ans *a = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (kernel_parse(m, tb) || !tb[IMEX_A_HANDLE_ID] ||
	    !tb[IMEX_A_CHANNEL_ID] ||
	    !kernel_get_uuid(a->domain_uuid, tb[IMEX_A_DOMAIN_UUID]))
		return NL_SKIP;
	*a->handle_id = nla_get_u64(tb[IMEX_A_HANDLE_ID]);
	*a->channel_id = nla_get_u32(tb[IMEX_A_CHANNEL_ID]);
	a->got = true;
	return NL_OK;
}

int imexd_kernel_export_del_accept(struct imexd_kernel *k,
				   uint64_t *handle_id,
				   uint8_t domain_uuid[16],
				   uint32_t *channel_id, char *msg,
				   size_t msglen)
{
	struct del_ans a = { handle_id, domain_uuid, channel_id, false };

	return accept_reply(k, IMEX_CMD_EXPORT_DEL_ACCEPT, "EXPORT_DEL_ACCEPT",
			    on_del, &a, &a.got, msg, msglen);
}

static int on_revoked(struct nl_msg *m, void *arg)
{
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (!kernel_parse(m, tb) && tb[IMEX_A_IMPORT_COUNT])
		*(uint32_t *)arg = nla_get_u32(tb[IMEX_A_IMPORT_COUNT]);
	return NL_OK;
}

int imexd_kernel_import_revoke(struct imexd_kernel *k,
			       const uint8_t node_uuid[16],
			       const uint64_t *handle_id,
			       const uint8_t *domain_uuid, uint8_t reason,
			       uint32_t *count, char *msg, size_t msglen)
{
	struct nl_msg *m = kernel_msg_new(k, IMEX_CMD_IMPORT_REVOKE, 0, 0);

	*count = 0;
	if (m && (nla_put(m, IMEX_A_HANDLE_NODE, 16, node_uuid) ||
		  (handle_id && nla_put_u64(m, IMEX_A_HANDLE_ID, *handle_id)) ||
		  (domain_uuid &&
		   nla_put(m, IMEX_A_DOMAIN_UUID, 16, domain_uuid)) ||
		  nla_put_u32(m, IMEX_A_REVOKE_REASON, reason))) {
		nlmsg_free(m);
		m = NULL;
	}
	return kernel_transact(k, m, on_revoked, count, NULL, msg, msglen);
}
