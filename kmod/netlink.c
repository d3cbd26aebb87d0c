// SPDX-License-Identifier: GPL-2.0
/*
 * The "imex" generic netlink family: attribute policies and the operation
 * table.  The handlers live with the objects they act on.  Every attribute
 * is validated here by policy before a handler sees it; attributes that only
 * appear in replies are rejected in requests.
 */
#include "imex.h"

#define IMEX_NUL_STRING(max) { .type = NLA_NUL_STRING, .len = (max) - 1 }

/* Not const: 6.1 declares the policy pointer without it. */
static struct netlink_range_validation imex_lease_range = {
	.min = 1,
	.max = IMEX_LEASE_MAX_MS,
};

static const struct nla_policy imex_member_policy[IMEX_A_MEMBER_MAX + 1] = {
	[IMEX_A_MEMBER_ENTRY_NAME]	= IMEX_NUL_STRING(IMEX_NAME_MAX),
	[IMEX_A_MEMBER_ADDR]		= IMEX_NUL_STRING(IMEX_ADDR_MAX),
	[IMEX_A_MEMBER_STATE]		= NLA_POLICY_MAX(NLA_U32, __IMEX_MEMBER_STATE_MAX - 1),
	[IMEX_A_MEMBER_VIEW]		= { .type = NLA_BINARY, .len = IMEX_MEMBERS_MAX },
};

static const struct nla_policy imex_channel_policy[IMEX_A_CHANNEL_ENTRY_MAX + 1] = {
	[IMEX_A_CHANNEL_ENTRY_ID]	= { .type = NLA_U32 },
	[IMEX_A_CHANNEL_ENTRY_UID]	= { .type = NLA_U32 },
	[IMEX_A_CHANNEL_ENTRY_GID]	= { .type = NLA_U32 },
	[IMEX_A_CHANNEL_ENTRY_MODE]	= NLA_POLICY_MAX(NLA_U32, 0777),
};

static const struct nla_policy imex_policy[IMEX_A_MAX + 1] = {
	[IMEX_A_NODE_NAME]		= IMEX_NUL_STRING(IMEX_NAME_MAX),
	[IMEX_A_NODE_UUID]		= NLA_POLICY_EXACT_LEN(IMEX_UUID_LEN),
	[IMEX_A_FABRIC_UUID]		= NLA_POLICY_EXACT_LEN(IMEX_UUID_LEN),
	[IMEX_A_FABRIC_PARTITION]	= { .type = NLA_U32 },
	[IMEX_A_MAX_CHANNELS]		= { .type = NLA_REJECT },
	[IMEX_A_CHRDEV_MAJOR]		= { .type = NLA_REJECT },
	[IMEX_A_MANAGER_PID]		= { .type = NLA_REJECT },
	[IMEX_A_DOMAIN_COUNT]		= { .type = NLA_REJECT },
	[IMEX_A_GENERATION]		= { .type = NLA_REJECT },
	[IMEX_A_DOMAIN_NAME]		= IMEX_NUL_STRING(IMEX_NAME_MAX),
	[IMEX_A_DOMAIN_UUID]		= NLA_POLICY_EXACT_LEN(IMEX_UUID_LEN),
	[IMEX_A_DOMAIN_STATE]		= NLA_POLICY_RANGE(NLA_U32, IMEX_DOMAIN_READY,
							   IMEX_DOMAIN_DEGRADED),
	[IMEX_A_MEMBER_COUNT]		= { .type = NLA_REJECT },
	[IMEX_A_MEMBER_SELF]		= { .type = NLA_REJECT },
	[IMEX_A_MEMBERS]		= NLA_POLICY_NESTED_ARRAY(imex_member_policy),
	[IMEX_A_MEMBER_NAME]		= IMEX_NUL_STRING(IMEX_NAME_MAX),
	[IMEX_A_CHANNEL_COUNT]		= { .type = NLA_U32 },
	[IMEX_A_CHANNELS]		= NLA_POLICY_NESTED_ARRAY(imex_channel_policy),
	[IMEX_A_CHANNEL_ID]		= { .type = NLA_U32 },
	[IMEX_A_CHANNEL_UID]		= { .type = NLA_U32 },
	[IMEX_A_CHANNEL_GID]		= { .type = NLA_U32 },
	[IMEX_A_CHANNEL_MODE]		= NLA_POLICY_MAX(NLA_U32, 0777),
	[IMEX_A_CHANNEL_STATE]		= { .type = NLA_REJECT },
	[IMEX_A_CHANNEL_OPEN_COUNT]	= { .type = NLA_REJECT },
	[IMEX_A_REQ_ID]			= { .type = NLA_U64 },
	[IMEX_A_REQ_CMD]		= { .type = NLA_REJECT },
	[IMEX_A_REQ_STATUS]		= NLA_POLICY_MAX(NLA_U32, MAX_ERRNO),
	[IMEX_A_REQ_MESSAGE]		= IMEX_NUL_STRING(IMEX_MESSAGE_MAX),
	[IMEX_A_REQ_ATTRS]		= { .type = NLA_REJECT },
	[IMEX_A_CHANGE_ID]		= { .type = NLA_U64 },
	[IMEX_A_CHANGE_OP]		= NLA_POLICY_MAX(NLA_U32, __IMEX_CHANGE_OP_MAX - 1),
	[IMEX_A_CHANGE_LEASE_MS]	= NLA_POLICY_FULL_RANGE(NLA_U32, &imex_lease_range),
	[IMEX_A_CHANNEL_IDS]		= { .type = NLA_BINARY,
					    .len = IMEX_CHANNEL_IDS_MAX * sizeof(u32) },
	[IMEX_A_PAD]			= { .type = NLA_REJECT },
	[IMEX_A_IMPORT_ID]		= { .type = NLA_U64 },
	[IMEX_A_HANDLE_NODE]		= NLA_POLICY_EXACT_LEN(IMEX_UUID_LEN),
	[IMEX_A_HANDLE_ID]		= { .type = NLA_U64 },
	[IMEX_A_DESC]			= NLA_POLICY_RANGE(NLA_BINARY, 1, IMEX_DESC_MAX),
	[IMEX_A_REVOKE_REASON]		= NLA_POLICY_MAX(NLA_U32, __IMEX_REVOKE_REASON_MAX - 1),
	[IMEX_A_IMPORT_COUNT]		= { .type = NLA_REJECT },
	[IMEX_A_EXPORT_COUNT]		= { .type = NLA_REJECT },
	[IMEX_A_CHANNEL_MINOR]		= { .type = NLA_REJECT },
};

/*
 * GENL_ADMIN_PERM makes the core check CAP_NET_ADMIN; imex_pre_doit adds
 * CAP_SYS_ADMIN, since these operations change who may reach GPU memory,
 * not networking.
 */
#define IMEX_ADMIN GENL_ADMIN_PERM

static int imex_pre_doit(const imex_genl_ops_t *ops, struct sk_buff *skb,
			 struct genl_info *info)
{
	if ((ops->flags & GENL_ADMIN_PERM) &&
	    !netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(info->extack, "this needs CAP_SYS_ADMIN: run it as root");
		return -EPERM;
	}
	info->user_ptr[IMEX_SENDER_SK] = NETLINK_CB(skb).sk;
	return 0;
}

static const struct genl_ops imex_ops[] = {
	{ .cmd = IMEX_CMD_NODE_GET, .doit = imex_nl_node_get },
	{ .cmd = IMEX_CMD_NODE_SET, .doit = imex_nl_node_set, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_DOMAIN_CREATE, .doit = imex_nl_request, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_DOMAIN_DELETE, .doit = imex_nl_request, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_CHANNEL_ALLOC, .doit = imex_nl_request, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_CHANNEL_FREE, .doit = imex_nl_request, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_MEMBER_EVICT, .doit = imex_nl_request, .flags = IMEX_ADMIN },
	{
		.cmd = IMEX_CMD_DOMAIN_GET,
		.doit = imex_nl_domain_get,
		.dumpit = imex_nl_domain_dump,
	},
	{
		.cmd = IMEX_CMD_DOMAIN_SET_STATUS,
		.doit = imex_nl_domain_set_status,
		.flags = IMEX_ADMIN,
	},
	{
		.cmd = IMEX_CMD_CHANNEL_GET,
		.doit = imex_nl_channel_get,
		.dumpit = imex_nl_channel_dump,
	},
	{ .cmd = IMEX_CMD_CHANNEL_SET, .doit = imex_nl_channel_set, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_MANAGER_ATTACH, .doit = imex_nl_manager_attach, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_MANAGER_DETACH, .doit = imex_nl_manager_detach, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_REQ_ACCEPT, .doit = imex_nl_req_accept, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_REQ_DONE, .doit = imex_nl_req_done, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_CHANGE_PREPARE, .doit = imex_nl_change_prepare, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_CHANGE_COMMIT, .doit = imex_nl_change_commit, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_CHANGE_ABORT, .doit = imex_nl_change_abort, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_CHANGE_GET, .dumpit = imex_nl_change_dump },
	{ .cmd = IMEX_CMD_IMPORT_ACCEPT, .doit = imex_nl_import_accept, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_IMPORT_DONE, .doit = imex_nl_import_done, .flags = IMEX_ADMIN },
	{ .cmd = IMEX_CMD_IMPORT_CHECK, .doit = imex_nl_import_check, .flags = IMEX_ADMIN },
	{
		.cmd = IMEX_CMD_EXPORT_DEL_ACCEPT,
		.doit = imex_nl_export_del_accept,
		.flags = IMEX_ADMIN,
	},
	{ .cmd = IMEX_CMD_IMPORT_REVOKE, .doit = imex_nl_import_revoke, .flags = IMEX_ADMIN },
};

static const struct genl_multicast_group imex_mcgrps[] = {
	{ .name = IMEX_MCGRP_EVENTS },
	{ .name = IMEX_MCGRP_MANAGER, .flags = GENL_MCAST_CAP_SYS_ADMIN },
};

struct genl_family imex_genl_family __ro_after_init = {
	.name		= IMEX_GENL_NAME,
	.version	= IMEX_GENL_VERSION,
	.maxattr	= IMEX_A_MAX,
	.policy		= imex_policy,
	.netnsok	= false,	/* initial network namespace only */
	.parallel_ops	= true,		/* imex_lock serialises */
	.module		= THIS_MODULE,
	.pre_doit	= imex_pre_doit,
	.ops		= imex_ops,
	.n_ops		= ARRAY_SIZE(imex_ops),
	.mcgrps		= imex_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(imex_mcgrps),
};

/* A reply to @info's request, its header for @cmd in place at *@hdr. */
struct sk_buff *imex_reply_new(struct genl_info *info, u8 cmd, void **hdr)
{
	struct sk_buff *msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);

	if (!msg)
		return ERR_PTR(-ENOMEM);
	*hdr = genlmsg_put_reply(msg, info, &imex_genl_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return ERR_PTR(-EMSGSIZE);
	}
	return msg;
}

int __init imex_genl_init(void)
{
	return genl_register_family(&imex_genl_family);
}

void imex_genl_exit(void)
{
	genl_unregister_family(&imex_genl_family);
}
