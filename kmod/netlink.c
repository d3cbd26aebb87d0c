// SPDX-License-Identifier: GPL-2.0
/*
 * The "imex" generic netlink family: the operation table.  The handlers live
 * with the objects they act on.  Every attribute is validated by its
 * operation's policy (netlink-policy.c, generated from the spec
 * Documentation/netlink/imex.yaml) before a handler sees it: an attribute
 * the command does not use, reply-only ones included, is refused.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "imex.h"
#include "netlink-policy.h"

/*
 * GENL_ADMIN_PERM makes the core check CAP_NET_ADMIN; imex_pre_doit adds
 * CAP_SYS_ADMIN, since these operations change who may reach GPU memory,
 * not networking.
 */
#define IMEX_ADMIN GENL_ADMIN_PERM

/*
 * Internal op flags, handled here once for every handler that has them:
 * IMEX_OPF_LOCK holds imex_lock from pre_doit to post_doit, around the
 * whole handler; IMEX_OPF_MANAGER (with LOCK) refuses, with EACCES, a
 * request that does not come from the attached manager, checked under the
 * lock so the manager cannot change before the handler runs;
 * IMEX_OPF_DEVICES runs the device queue after unlocking, so the request
 * returns once the device nodes it made or removed are there or gone
 * (device work never runs under imex_lock, see imex.h).
 */
#define IMEX_OPF_LOCK		BIT(0)
#define IMEX_OPF_MANAGER	BIT(1)
#define IMEX_OPF_DEVICES	BIT(2)
#define IMEX_MANAGER_OP		(IMEX_OPF_LOCK | IMEX_OPF_MANAGER)

static int imex_pre_doit(const imex_genl_ops_t *ops, struct sk_buff *skb,
			 struct genl_info *info)
{
	if ((ops->flags & GENL_ADMIN_PERM) &&
	    !netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(info->extack, "this needs CAP_SYS_ADMIN: run it as root");
		return -EPERM;
	}
	info->user_ptr[IMEX_SENDER_SK] = NETLINK_CB(skb).sk;
	if (ops->internal_flags & IMEX_OPF_LOCK)
		mutex_lock(&imex_lock);
	if ((ops->internal_flags & IMEX_OPF_MANAGER) &&
	    !imex_is_manager(info, info->extack)) {
		/* post_doit runs only after a doit: unlock here. */
		mutex_unlock(&imex_lock);
		return -EACCES;
	}
	return 0;
}

static void imex_post_doit(const imex_genl_ops_t *ops, struct sk_buff *skb,
			   struct genl_info *info)
{
	if (ops->internal_flags & IMEX_OPF_LOCK)
		mutex_unlock(&imex_lock);
	if (ops->internal_flags & IMEX_OPF_DEVICES)
		imex_dev_flush();
}

static const struct genl_ops imex_ops[] = {
	{
		.cmd		= IMEX_CMD_NODE_GET,
		.doit		= imex_nl_node_get,
		.policy		= imex_node_get_nl_policy,
		.maxattr	= IMEX_A_MAX,
	},
	{
		.cmd		= IMEX_CMD_NODE_SET,
		.doit		= imex_nl_node_set,
		.policy		= imex_node_set_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
	},
	{
		.cmd		= IMEX_CMD_DOMAIN_CREATE,
		.doit		= imex_nl_request,
		.policy		= imex_domain_create_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
	},
	{
		.cmd		= IMEX_CMD_DOMAIN_DELETE,
		.doit		= imex_nl_request,
		.policy		= imex_domain_delete_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
	},
	{
		.cmd		= IMEX_CMD_CHANNEL_ALLOC,
		.doit		= imex_nl_request,
		.policy		= imex_channel_alloc_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
	},
	{
		.cmd		= IMEX_CMD_CHANNEL_FREE,
		.doit		= imex_nl_request,
		.policy		= imex_channel_free_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
	},
	{
		.cmd		= IMEX_CMD_MEMBER_EVICT,
		.doit		= imex_nl_request,
		.policy		= imex_member_evict_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
	},
	{
		.cmd		= IMEX_CMD_MEMBER_REPLACE,
		.doit		= imex_nl_request,
		.policy		= imex_member_replace_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
	},
	{
		.cmd		= IMEX_CMD_NODE_JOIN,
		.doit		= imex_nl_request,
		.policy		= imex_node_join_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
	},
	{
		.cmd		= IMEX_CMD_NODE_LEAVE,
		.doit		= imex_nl_request,
		.policy		= imex_node_leave_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
	},
	{
		.cmd		= IMEX_CMD_DOMAIN_GET,
		.doit		= imex_nl_domain_get,
		.dumpit		= imex_nl_domain_dump,
		.policy		= imex_domain_get_nl_policy,
		.maxattr	= IMEX_A_MAX,
	},
	{
		.cmd		= IMEX_CMD_DOMAIN_SET_STATUS,
		.doit		= imex_nl_domain_set_status,
		.policy		= imex_domain_set_status_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
		.internal_flags	= IMEX_MANAGER_OP,
	},
	{
		.cmd		= IMEX_CMD_DOMAIN_SET,
		.doit		= imex_nl_domain_set,
		.policy		= imex_domain_set_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
		.internal_flags	= IMEX_MANAGER_OP | IMEX_OPF_DEVICES,
	},
	{
		.cmd		= IMEX_CMD_DOMAIN_REMOVE,
		.doit		= imex_nl_domain_remove,
		.policy		= imex_domain_remove_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
		.internal_flags	= IMEX_MANAGER_OP | IMEX_OPF_DEVICES,
	},
	{
		.cmd		= IMEX_CMD_CHANNEL_GET,
		.doit		= imex_nl_channel_get,
		.dumpit		= imex_nl_channel_dump,
		.policy		= imex_channel_get_nl_policy,
		.maxattr	= IMEX_A_MAX,
	},
	{
		.cmd		= IMEX_CMD_CHANNEL_SET,
		.doit		= imex_nl_channel_set,
		.policy		= imex_channel_set_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
	},
	{
		.cmd		= IMEX_CMD_MANAGER_ATTACH,
		.doit		= imex_nl_manager_attach,
		.policy		= imex_manager_attach_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
	},
	{
		.cmd		= IMEX_CMD_MANAGER_DETACH,
		.doit		= imex_nl_manager_detach,
		.policy		= imex_manager_detach_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
		.internal_flags	= IMEX_MANAGER_OP,
	},
	{
		.cmd		= IMEX_CMD_REQ_ACCEPT,
		.doit		= imex_nl_req_accept,
		.policy		= imex_req_accept_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
		.internal_flags	= IMEX_MANAGER_OP,
	},
	{
		.cmd		= IMEX_CMD_REQ_DONE,
		.doit		= imex_nl_req_done,
		.policy		= imex_req_done_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
		.internal_flags	= IMEX_MANAGER_OP,
	},
	{
		.cmd		= IMEX_CMD_IMPORT_ACCEPT,
		.doit		= imex_nl_import_accept,
		.policy		= imex_import_accept_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
		.internal_flags	= IMEX_MANAGER_OP,
	},
	{
		.cmd		= IMEX_CMD_IMPORT_DONE,
		.doit		= imex_nl_import_done,
		.policy		= imex_import_done_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
		.internal_flags	= IMEX_MANAGER_OP,
	},
	{
		.cmd		= IMEX_CMD_IMPORT_CHECK,
		.doit		= imex_nl_import_check,
		.policy		= imex_import_check_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
		.internal_flags	= IMEX_MANAGER_OP,
	},
	{
		.cmd		= IMEX_CMD_EXPORT_DEL_ACCEPT,
		.doit		= imex_nl_export_del_accept,
		.policy		= imex_export_del_accept_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
		.internal_flags	= IMEX_MANAGER_OP,
	},
	{
		.cmd		= IMEX_CMD_IMPORT_REVOKE,
		.doit		= imex_nl_import_revoke,
		.policy		= imex_import_revoke_nl_policy,
		.maxattr	= IMEX_A_MAX,
		.flags		= IMEX_ADMIN,
		.internal_flags	= IMEX_MANAGER_OP,
	},
};

static const struct genl_multicast_group imex_mcgrps[] = {
	{ .name = IMEX_MCGRP_EVENTS },
	{ .name = IMEX_MCGRP_MANAGER, .flags = GENL_MCAST_CAP_SYS_ADMIN },
};

struct genl_family imex_genl_family __ro_after_init = {
	.name		= IMEX_GENL_NAME,
	.version	= IMEX_GENL_VERSION,
	.netnsok	= false,	/* initial network namespace only */
	.parallel_ops	= true,		/* imex_lock serialises */
	.module		= THIS_MODULE,
	.pre_doit	= imex_pre_doit,
	.post_doit	= imex_post_doit,
	.ops		= imex_ops,
	.n_ops		= ARRAY_SIZE(imex_ops),
	.mcgrps		= imex_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(imex_mcgrps),
};

/* Resolving the family by name (CTRL_CMD_GETFAMILY) loads the module. */
MODULE_ALIAS_GENL_FAMILY(IMEX_GENL_NAME);

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
