// SPDX-License-Identifier: LGPL-2.1-or-later
/* This node's identity as the module holds it: NODE_GET and NODE_SET. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "internal.h"

int imexctl_node_parse(struct nl_msg *msg, struct imexctl_node *node)
{
	struct nlattr *tb[IMEX_A_MAX + 1];

	memset(node, 0, sizeof(*node));
	if (imexctl_nl_parse(msg, tb) < 0)
		return -EPROTO;
	if (tb[IMEX_A_NODE_NAME])
		nla_strlcpy(node->name, tb[IMEX_A_NODE_NAME], sizeof(node->name));
	if (tb[IMEX_A_NODE_UUID])
		memcpy(node->uuid, nla_data(tb[IMEX_A_NODE_UUID]), IMEX_UUID_LEN);
	if (tb[IMEX_A_FABRIC_UUID] && tb[IMEX_A_FABRIC_PARTITION]) {
		node->has_fabric = true;
		memcpy(node->fabric_uuid, nla_data(tb[IMEX_A_FABRIC_UUID]), IMEX_UUID_LEN);
		node->fabric_partition = nla_get_u32(tb[IMEX_A_FABRIC_PARTITION]);
	}
	if (tb[IMEX_A_MAX_CHANNELS])
		node->max_channels = nla_get_u32(tb[IMEX_A_MAX_CHANNELS]);
	if (tb[IMEX_A_CHRDEV_MAJOR])
		node->major = nla_get_u32(tb[IMEX_A_CHRDEV_MAJOR]);
	if (tb[IMEX_A_MANAGER_PID])
		node->manager_pid = nla_get_u32(tb[IMEX_A_MANAGER_PID]);
	if (tb[IMEX_A_DOMAIN_COUNT])
		node->domain_count = nla_get_u32(tb[IMEX_A_DOMAIN_COUNT]);
	if (tb[IMEX_A_GENERATION])
		node->generation = nla_get_u32(tb[IMEX_A_GENERATION]);
	return 0;
}

static int got_node(struct nl_msg *msg, void *arg)
{
	return imexctl_node_parse(msg, arg);
}

IMEXCTL_API int imexctl_node_get(struct imexctl *ctx, struct imexctl_node *node)
{
	struct nl_msg *msg;
	int r;

	imexctl_err_clear(ctx);
	r = imexctl_nl_connect(ctx);
	if (r < 0)
		return r;
	memset(node, 0, sizeof(*node));
	msg = imexctl_nl_msg(ctx, IMEX_CMD_NODE_GET, 0, 0);
	if (!msg)
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	return imexctl_nl_exchange(ctx, msg, got_node, node, "reading this node's state");
}

static int node_set(struct imexctl *ctx, struct nl_msg *msg, const char *what)
{
	int r = imexctl_nl_exchange(ctx, msg, NULL, NULL, what);

	if (r == -EBUSY && !ctx->extack)
		imexctl_err(ctx, r, "%s: domains exist on this node: delete them first ('imexctl domain list')",
			    what);
	return r;
}

IMEXCTL_API int imexctl_node_set_fabric(struct imexctl *ctx,
					const uint8_t uuid[IMEXCTL_UUID_LEN],
					uint32_t partition)
{
	struct nl_msg *msg;
	int r;

	imexctl_err_clear(ctx);
	if (!uuid)
		return imexctl_err(ctx, -EINVAL, "setting the fabric: no UUID given");
	r = imexctl_nl_connect(ctx);
	if (r < 0)
		return r;
	msg = imexctl_nl_msg(ctx, IMEX_CMD_NODE_SET, 0, 0);
	if (!msg || nla_put(msg, IMEX_A_FABRIC_UUID, IMEX_UUID_LEN, uuid) < 0 ||
	    nla_put_u32(msg, IMEX_A_FABRIC_PARTITION, partition) < 0) {
		nlmsg_free(msg);
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	}
	return node_set(ctx, msg, "setting this node's fabric");
}

IMEXCTL_API int imexctl_node_set_name(struct imexctl *ctx, const char *name)
{
	struct nl_msg *msg;
	int r;

	imexctl_err_clear(ctx);
	if (!imexctl_name_valid(name))
		return imexctl_err(ctx, -EINVAL, "invalid node name '%s'", name ? name : "");
	r = imexctl_nl_connect(ctx);
	if (r < 0)
		return r;
	msg = imexctl_nl_msg(ctx, IMEX_CMD_NODE_SET, 0, 0);
	if (!msg || nla_put_string(msg, IMEX_A_NODE_NAME, name) < 0) {
		nlmsg_free(msg);
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	}
	return node_set(ctx, msg, "setting this node's name");
}

/* Group membership: requests that name a node, not a domain. */
struct node_req {
	const char *name;
	const char *addr;	/* NULL: the name */
};

static int fill_node(struct nl_msg *msg, const void *arg)
{
	const struct node_req *q = arg;

	if (nla_put_string(msg, IMEX_A_MEMBER_NAME, q->name) < 0 ||
	    (q->addr && nla_put_string(msg, IMEX_A_NODE_ADDR, q->addr) < 0))
		return -EMSGSIZE;
	return 0;
}

/* "host[:port]": printable ASCII without spaces, as the module checks. */
static bool addr_valid(const char *addr)
{
	size_t n = strlen(addr);

	if (n >= IMEX_ADDR_MAX)
		return false;
	for (; *addr; addr++)
		if (*addr <= ' ' || *addr > '~')
			return false;
	return true;
}

IMEXCTL_API int imexctl_node_join(struct imexctl *ctx, const char *name,
				  const char *addr, int timeout_ms)
{
	struct node_req q = { name, addr && *addr ? addr : NULL };
	char what[IMEX_NAME_MAX + IMEX_ADDR_MAX + 32];

	imexctl_err_clear(ctx);
	if (!imexctl_name_valid(name))
		return imexctl_err(ctx, -EINVAL,
				   "invalid node name '%s': use letters, digits, '_', '.', '-', starting with a letter or digit",
				   name ? name : "");
	if (q.addr && !addr_valid(q.addr))
		return imexctl_err(ctx, -EINVAL,
				   "invalid address for node %s: give host[:port], printable, without spaces, at most %d characters",
				   name, IMEX_ADDR_MAX - 1);
	snprintf(what, sizeof(what), "adding node %s%s%s", name,
		 q.addr ? " at " : "", q.addr ? q.addr : "");
	return imexctl_request(ctx, IMEX_CMD_NODE_JOIN, fill_node, &q, 0, what,
			       timeout_ms);
}

IMEXCTL_API int imexctl_node_leave(struct imexctl *ctx, const char *name,
				   int timeout_ms)
{
	struct node_req q = { name, NULL };
	char what[IMEX_NAME_MAX + 32];

	imexctl_err_clear(ctx);
	if (!imexctl_name_valid(name))
		return imexctl_err(ctx, -EINVAL,
				   "invalid node name '%s': use letters, digits, '_', '.', '-', starting with a letter or digit",
				   name ? name : "");
	snprintf(what, sizeof(what), "removing node %s", name);
	return imexctl_request(ctx, IMEX_CMD_NODE_LEAVE, fill_node, &q, 0, what,
			       timeout_ms);
}
