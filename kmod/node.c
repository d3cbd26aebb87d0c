// SPDX-License-Identifier: GPL-2.0
/* The node's own identity: name, UUID and fabric (invariant 1). */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/string.h>
#include <linux/utsname.h>
#include "imex.h"

/* An empty name: not set yet (no domain can be created or joined). */
struct imex_node imex_node;

/*
 * Only a node_name given explicitly may fail the load.  The host name is a
 * default: at early boot it may still be "(none)", or it may be 64
 * characters long; the node then stays unnamed until imexd (NODE_SET) names
 * it.
 */
static void imex_node_default_name(void)
{
	char host[sizeof(init_utsname()->nodename)];

	/* A copy first: the host name may change under us; check the copy. */
	memcpy(host, init_utsname()->nodename, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	if (imex_name_valid(host)) {
		strscpy(imex_node.name, host, sizeof(imex_node.name));
		return;
	}
	pr_info("host name '%s' is not a valid node name: the node stays unnamed until imexd or 'imexctl node set-name' names it\n",
		host);
}

int imex_node_init(const char *name, const char *fabric_uuid, u32 partition,
		   bool partition_given)
{
	if (!name) {
		imex_node_default_name();
	} else if (imex_name_valid(name)) {
		strscpy(imex_node.name, name, sizeof(imex_node.name));
	} else {
		pr_err("node_name '%s' is not a valid name: use letters, digits, '_', '.', '-' (at most %d)\n",
		       name, IMEX_NAME_MAX - 1);
		return -EINVAL;
	}
	if (fabric_uuid && *fabric_uuid) {
		if (uuid_parse(fabric_uuid, &imex_node.fabric_uuid)) {
			pr_err("fabric_uuid '%s' is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)\n",
			       fabric_uuid);
			return -EINVAL;
		}
		imex_node.fabric_partition = partition;
		imex_node.fabric_set = true;
	} else if (partition_given) {
		pr_err("fabric_partition needs fabric_uuid too\n");
		return -EINVAL;
	}
	return 0;
}

/* Under imex_lock.  Member lists name nodes: an unnamed node is in none. */
bool imex_node_named(struct netlink_ext_ack *extack)
{
	if (imex_node.name[0])
		return true;
	NL_SET_ERR_MSG(extack, "this node has no name yet: start imexd, or 'imexctl node set-name NAME'");
	return false;
}

bool imex_node_fabric_matches(const uuid_t *uuid, u32 partition)
{
	return imex_node.fabric_set &&
	       uuid_equal(uuid, &imex_node.fabric_uuid) &&
	       partition == imex_node.fabric_partition;
}

/*
 * @stats: the node's counters too.  They tell one tenant about another's
 * imports, so only a CAP_SYS_ADMIN caller gets them, never the events group.
 */
int imex_put_node(struct sk_buff *skb, bool stats)
{
	u32 pid = imex_manager_pid();

	if ((imex_node.name[0] &&
	     nla_put_string(skb, IMEX_A_NODE_NAME, imex_node.name)) ||
	    nla_put(skb, IMEX_A_NODE_UUID, IMEX_UUID_LEN, &imex_node.uuid) ||
	    nla_put_u32(skb, IMEX_A_MAX_CHANNELS, imex_max_channels) ||
	    nla_put_u32(skb, IMEX_A_CHRDEV_MAJOR, imex_chrdev_major()) ||
	    nla_put_u32(skb, IMEX_A_DOMAIN_COUNT, imex_ndomains) ||
	    nla_put_u32(skb, IMEX_A_GENERATION, imex_generation) ||
	    nla_put_u32(skb, IMEX_A_EXPORT_COUNT, imex_nexports) ||
	    nla_put_u32(skb, IMEX_A_IMPORT_COUNT, imex_nimports) ||
	    (stats && imex_put_stats(skb)))
		return -EMSGSIZE;
	if (imex_node.fabric_set &&
	    (nla_put(skb, IMEX_A_FABRIC_UUID, IMEX_UUID_LEN,
		     &imex_node.fabric_uuid) ||
	     nla_put_u32(skb, IMEX_A_FABRIC_PARTITION,
			 imex_node.fabric_partition)))
		return -EMSGSIZE;
	if (pid && nla_put_u32(skb, IMEX_A_MANAGER_PID, pid))
		return -EMSGSIZE;
	return 0;
}

int imex_nl_node_get(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = imex_reply_new(info, IMEX_CMD_NODE_GET, &hdr);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	mutex_lock(&imex_lock);
	err = imex_put_node(msg, netlink_capable(skb, CAP_SYS_ADMIN));
	mutex_unlock(&imex_lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * Name, UUID and fabric identify the node to its domains, so none may change
 * while a domain exists; setting the value it already has is fine (a daemon
 * re-attaching after a restart does exactly that).
 */
int imex_nl_node_set(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	const char *name = NULL;
	uuid_t uuid, fuuid;
	u32 part = 0;
	bool set_uuid = false, set_fabric = false, changes = false;
	int err = 0;

	if (!!a[IMEX_A_FABRIC_UUID] != !!a[IMEX_A_FABRIC_PARTITION]) {
		NL_SET_ERR_MSG(extack, "give the fabric UUID and partition together");
		return -EINVAL;
	}
	if (!a[IMEX_A_NODE_NAME] && !a[IMEX_A_NODE_UUID] &&
	    !a[IMEX_A_FABRIC_UUID]) {
		NL_SET_ERR_MSG(extack, "nothing to set: give a node name, node UUID or fabric");
		return -EINVAL;
	}
	if (a[IMEX_A_NODE_NAME]) {
		name = nla_data(a[IMEX_A_NODE_NAME]);
		if (!imex_name_valid(name)) {
			NL_SET_ERR_MSG_ATTR(extack, a[IMEX_A_NODE_NAME],
					    "node name: use letters, digits, '_', '.', '-', starting with a letter or digit");
			return -EINVAL;
		}
	}
	if (a[IMEX_A_NODE_UUID]) {
		nla_memcpy(&uuid, a[IMEX_A_NODE_UUID], sizeof(uuid));
		set_uuid = true;
	}
	if (a[IMEX_A_FABRIC_UUID]) {
		nla_memcpy(&fuuid, a[IMEX_A_FABRIC_UUID], sizeof(fuuid));
		part = nla_get_u32(a[IMEX_A_FABRIC_PARTITION]);
		set_fabric = true;
	}

	mutex_lock(&imex_lock);
	if (name && strcmp(name, imex_node.name))
		changes = true;
	if (set_uuid && !uuid_equal(&uuid, &imex_node.uuid))
		changes = true;
	if (set_fabric && !imex_node_fabric_matches(&fuuid, part))
		changes = true;
	if (!changes)
		goto out;
	if (imex_ndomains) {
		imex_extack_fmt(extack,
				"%u domain(s) exist: delete them before changing the node's identity",
				imex_ndomains);
		err = -EBUSY;
		goto out;
	}
	if (name)
		strscpy(imex_node.name, name, sizeof(imex_node.name));
	if (set_uuid)
		uuid_copy(&imex_node.uuid, &uuid);
	if (set_fabric) {
		uuid_copy(&imex_node.fabric_uuid, &fuuid);
		imex_node.fabric_partition = part;
		imex_node.fabric_set = true;
	}
	imex_bump();
	imex_notify_node();
out:
	mutex_unlock(&imex_lock);
	return err;
}
