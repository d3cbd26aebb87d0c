// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Decoding one "events" notification into struct imexctl_event.  Pure: a
 * message in, a filled struct or -EPROTO with a sentence out.  The message
 * comes from the kernel, but a listener must not trust it blindly: every
 * length is checked and nothing is read past the message.
 */
#include <errno.h>
#include <string.h>

#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "internal.h"

_Static_assert(IMEXCTL_REASON_MAX == IMEX_MESSAGE_MAX, "reason bound differs from the uAPI");

/* Not const: nla_parse() takes a non-const pointer; never written. */
static struct nla_policy event_policy[IMEX_A_MAX + 1] = {
	[IMEX_A_NODE_NAME] = { .type = NLA_STRING, .maxlen = IMEX_NAME_MAX },
	[IMEX_A_NODE_UUID] = { .minlen = IMEX_UUID_LEN },
	[IMEX_A_MANAGER_PID] = { .type = NLA_U32 },
	[IMEX_A_GENERATION] = { .type = NLA_U32 },
	[IMEX_A_DOMAIN_NAME] = { .type = NLA_STRING, .maxlen = IMEX_NAME_MAX },
	[IMEX_A_DOMAIN_UUID] = { .minlen = IMEX_UUID_LEN },
	[IMEX_A_DOMAIN_STATE] = { .type = NLA_U32 },
	[IMEX_A_MEMBER_COUNT] = { .type = NLA_U32 },
	[IMEX_A_MEMBERS] = { .type = NLA_NESTED },
	[IMEX_A_CHANNEL_COUNT] = { .type = NLA_U32 },
	[IMEX_A_CHANNEL_ID] = { .type = NLA_U32 },
	[IMEX_A_CHANNEL_UID] = { .type = NLA_U32 },
	[IMEX_A_CHANNEL_GID] = { .type = NLA_U32 },
	[IMEX_A_CHANNEL_MODE] = { .type = NLA_U32 },
	[IMEX_A_CHANNEL_STATE] = { .type = NLA_U32 },
	[IMEX_A_REQ_ID] = { .type = NLA_U64 },
	[IMEX_A_REQ_CMD] = { .type = NLA_U32 },
	[IMEX_A_REQ_STATUS] = { .type = NLA_U32 },
	[IMEX_A_REQ_MESSAGE] = { .type = NLA_STRING },
	[IMEX_A_HANDLE_NODE] = { .minlen = IMEX_UUID_LEN },
	[IMEX_A_REVOKE_REASON] = { .type = NLA_U32 },
	[IMEX_A_IMPORT_COUNT] = { .type = NLA_U32 },
	[IMEX_A_DOMAIN_REASON] = { .type = NLA_STRING },
};

static struct nla_policy member_policy[IMEX_A_MEMBER_MAX + 1] = {
	[IMEX_A_MEMBER_ENTRY_NAME] = { .type = NLA_STRING, .maxlen = IMEX_NAME_MAX },
	[IMEX_A_MEMBER_STATE] = { .type = NLA_U32 },
	[IMEX_A_MEMBER_REASON] = { .type = NLA_STRING },
	[IMEX_A_MEMBER_SINCE] = { .type = NLA_U64 },
};

static const struct {
	uint8_t cmd;
	uint32_t kind;
	const char *name;
} kinds[] = {
	{ 0, IMEXCTL_EVENT_LOST, "lost" },
	{ IMEX_CMD_NODE_SET, IMEXCTL_EVENT_NODE_SET, "node-set" },
	{ IMEX_CMD_DOMAIN_NEW, IMEXCTL_EVENT_DOMAIN_NEW, "domain-new" },
	{ IMEX_CMD_DOMAIN_DEL, IMEXCTL_EVENT_DOMAIN_DEL, "domain-del" },
	{ IMEX_CMD_DOMAIN_SET_STATUS, IMEXCTL_EVENT_DOMAIN_STATUS, "domain-status" },
	{ IMEX_CMD_CHANNEL_NEW, IMEXCTL_EVENT_CHANNEL_NEW, "channel-new" },
	{ IMEX_CMD_CHANNEL_DEL, IMEXCTL_EVENT_CHANNEL_DEL, "channel-del" },
	{ IMEX_CMD_CHANNEL_SET, IMEXCTL_EVENT_CHANNEL_SET, "channel-set" },
	{ IMEX_CMD_REQ_DONE, IMEXCTL_EVENT_REQ_DONE, "req-done" },
	{ IMEX_CMD_MANAGER_ATTACH, IMEXCTL_EVENT_MANAGER_ATTACH, "manager-attach" },
	{ IMEX_CMD_MANAGER_DETACH, IMEXCTL_EVENT_MANAGER_DETACH, "manager-detach" },
	{ IMEX_CMD_IMPORTS_REVOKED, IMEXCTL_EVENT_IMPORTS_REVOKED, "imports-revoked" },
};

static const char *const revoke_reasons[] = {
	[IMEX_REVOKE_UNEXPORTED] = "unexported",
	[IMEX_REVOKE_NODE_LOST] = "node-lost",
	[IMEX_REVOKE_NODE_RESTARTED] = "node-restarted",
	[IMEX_REVOKE_CHANNEL_GONE] = "channel-gone",
	[IMEX_REVOKE_DAEMON_LOST] = "daemon-lost",
};

IMEXCTL_API const char *imexctl_event_kind_name(unsigned int kind)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i].kind == kind)
			return kinds[i].name;
	return "other";
}

IMEXCTL_API const char *imexctl_revoke_reason_name(unsigned int reason)
{
	return reason < ARRAY_SIZE(revoke_reasons) ? revoke_reasons[reason] :
	       "unknown";
}

static uint32_t kind_of(uint8_t cmd)
{
	size_t i;

	for (i = 1; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i].cmd == cmd)
			return kinds[i].kind;
	return IMEXCTL_EVENT_OTHER;
}

static int bad(struct imexctl *ctx, uint8_t cmd, const char *what)
{
	return imexctl_err(ctx, -EPROTO,
			   "malformed '%s' notification from the imex module (%s): skipped",
			   imexctl_event_kind_name(kind_of(cmd)), what);
}

static int decode_members(struct imexctl *ctx, uint8_t cmd, struct nlattr *arr,
			  struct imexctl_event_member *members, size_t max,
			  size_t *n)
{
	struct nlattr *tb[IMEX_A_MEMBER_MAX + 1];
	struct imexctl_event_member *m;
	struct nlattr *entry;
	int rem;

	*n = 0;
	nla_for_each_nested(entry, arr, rem) {
		if (*n == max)
			return bad(ctx, cmd, "too many members");
		if (nla_parse_nested(tb, IMEX_A_MEMBER_MAX, entry, member_policy) < 0)
			return bad(ctx, cmd, "a member does not parse");
		if (!tb[IMEX_A_MEMBER_ENTRY_NAME] || !tb[IMEX_A_MEMBER_STATE])
			return bad(ctx, cmd, "a member without name or state");
		m = &members[(*n)++];
		memset(m, 0, sizeof(*m));
		nla_strlcpy(m->name, tb[IMEX_A_MEMBER_ENTRY_NAME], sizeof(m->name));
		m->state = nla_get_u32(tb[IMEX_A_MEMBER_STATE]);
		if (tb[IMEX_A_MEMBER_REASON])
			nla_strlcpy(m->reason, tb[IMEX_A_MEMBER_REASON], sizeof(m->reason));
		if (tb[IMEX_A_MEMBER_SINCE])
			m->since_ms = nla_get_u64(tb[IMEX_A_MEMBER_SINCE]);
	}
	return 0;
}

/*
 * Decode @nlh (nlmsg_len already checked against the buffer by the caller)
 * into @ev, whose members go to @members (room for @max).
 */
int imexctl_event_decode(struct imexctl *ctx, const struct nlmsghdr *nlh,
			 struct imexctl_event *ev,
			 struct imexctl_event_member *members, size_t max)
{
	struct nlattr *tb[IMEX_A_MAX + 1];
	const struct genlmsghdr *gh;
	size_t n_members = 0;
	uint8_t cmd;
	int r;

	memset(ev, 0, sizeof(*ev));
	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return imexctl_err(ctx, -EPROTO,
				   "malformed notification from the imex module (%u bytes, shorter than its headers): skipped",
				   nlh->nlmsg_len);
	gh = nlmsg_data(nlh);
	cmd = gh->cmd;
	ev->cmd = cmd;
	ev->kind = kind_of(cmd);
	if (ev->kind == IMEXCTL_EVENT_OTHER)
		return 0;	/* newer than this library: its name is enough */

	/* genlmsg_parse() wants a non-const header; it only reads it. */
	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, IMEX_A_MAX, event_policy) < 0)
		return bad(ctx, cmd, "attributes do not parse");

	if (tb[IMEX_A_DOMAIN_NAME]) {
		ev->has_domain = true;
		nla_strlcpy(ev->domain, tb[IMEX_A_DOMAIN_NAME], sizeof(ev->domain));
	}
	if (tb[IMEX_A_DOMAIN_UUID]) {
		ev->has_domain_uuid = true;
		memcpy(ev->domain_uuid, nla_data(tb[IMEX_A_DOMAIN_UUID]), IMEX_UUID_LEN);
	}

	switch (ev->kind) {
	case IMEXCTL_EVENT_DOMAIN_NEW:
	case IMEXCTL_EVENT_DOMAIN_DEL:
	case IMEXCTL_EVENT_DOMAIN_STATUS:
		if (!ev->has_domain)
			return bad(ctx, cmd, "no domain name");
		if (!tb[IMEX_A_DOMAIN_STATE])
			break;
		ev->has_state = true;
		ev->state = nla_get_u32(tb[IMEX_A_DOMAIN_STATE]);
		if (tb[IMEX_A_DOMAIN_REASON])
			nla_strlcpy(ev->reason, tb[IMEX_A_DOMAIN_REASON], sizeof(ev->reason));
		if (tb[IMEX_A_MEMBER_COUNT])
			ev->member_count = nla_get_u32(tb[IMEX_A_MEMBER_COUNT]);
		if (tb[IMEX_A_CHANNEL_COUNT])
			ev->channel_count = nla_get_u32(tb[IMEX_A_CHANNEL_COUNT]);
		if (tb[IMEX_A_GENERATION])
			ev->generation = nla_get_u32(tb[IMEX_A_GENERATION]);
		if (tb[IMEX_A_MEMBERS]) {
			r = decode_members(ctx, cmd, tb[IMEX_A_MEMBERS], members,
					   max, &n_members);
			if (r < 0)
				return r;
			ev->members = n_members ? members : NULL;
			ev->n_members = n_members;
		}
		break;
	case IMEXCTL_EVENT_CHANNEL_NEW:
	case IMEXCTL_EVENT_CHANNEL_DEL:
	case IMEXCTL_EVENT_CHANNEL_SET:
		if (!tb[IMEX_A_CHANNEL_ID])
			return bad(ctx, cmd, "no channel id");
		ev->has_channel = true;
		ev->channel_id = nla_get_u32(tb[IMEX_A_CHANNEL_ID]);
		if (tb[IMEX_A_CHANNEL_STATE])
			ev->channel_state = nla_get_u32(tb[IMEX_A_CHANNEL_STATE]);
		if (tb[IMEX_A_CHANNEL_UID])
			ev->uid = nla_get_u32(tb[IMEX_A_CHANNEL_UID]);
		if (tb[IMEX_A_CHANNEL_GID])
			ev->gid = nla_get_u32(tb[IMEX_A_CHANNEL_GID]);
		if (tb[IMEX_A_CHANNEL_MODE])
			ev->mode = nla_get_u32(tb[IMEX_A_CHANNEL_MODE]);
		break;
	case IMEXCTL_EVENT_REQ_DONE:
		if (!tb[IMEX_A_REQ_ID] || !tb[IMEX_A_REQ_STATUS])
			return bad(ctx, cmd, "no request id or status");
		ev->has_request = true;
		ev->req_id = nla_get_u64(tb[IMEX_A_REQ_ID]);
		ev->req_status = nla_get_u32(tb[IMEX_A_REQ_STATUS]);
		if (tb[IMEX_A_REQ_CMD])
			ev->req_cmd = nla_get_u32(tb[IMEX_A_REQ_CMD]);
		if (tb[IMEX_A_REQ_MESSAGE])
			nla_strlcpy(ev->req_message, tb[IMEX_A_REQ_MESSAGE],
				    sizeof(ev->req_message));
		break;
	case IMEXCTL_EVENT_MANAGER_ATTACH:
	case IMEXCTL_EVENT_MANAGER_DETACH:
		if (tb[IMEX_A_MANAGER_PID]) {
			ev->has_manager = true;
			ev->manager_pid = nla_get_u32(tb[IMEX_A_MANAGER_PID]);
		}
		break;
	case IMEXCTL_EVENT_NODE_SET:
		if (!tb[IMEX_A_NODE_NAME])
			return bad(ctx, cmd, "no node name");
		ev->has_node = true;
		nla_strlcpy(ev->node_name, tb[IMEX_A_NODE_NAME], sizeof(ev->node_name));
		if (tb[IMEX_A_NODE_UUID])
			memcpy(ev->node_uuid, nla_data(tb[IMEX_A_NODE_UUID]), IMEX_UUID_LEN);
		break;
	case IMEXCTL_EVENT_IMPORTS_REVOKED:
		if (!tb[IMEX_A_REVOKE_REASON] || !tb[IMEX_A_IMPORT_COUNT])
			return bad(ctx, cmd, "no reason or count");
		ev->has_revoke = true;
		ev->revoke_reason = nla_get_u32(tb[IMEX_A_REVOKE_REASON]);
		ev->import_count = nla_get_u32(tb[IMEX_A_IMPORT_COUNT]);
		if (tb[IMEX_A_HANDLE_NODE])
			memcpy(ev->handle_node, nla_data(tb[IMEX_A_HANDLE_NODE]),
			       IMEX_UUID_LEN);
		break;
	default:
		break;
	}
	return 0;
}
