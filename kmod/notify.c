// SPDX-License-Identifier: GPL-2.0
/*
 * Notifications: every state change on the public "events" group, and new
 * requests on the privileged "manager" group.  Built only when someone
 * listens; a lost notification is never an error for the change itself.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "imex.h"

enum { IMEX_GRP_EVENTS, IMEX_GRP_MANAGER };

bool imex_unloading;

static struct sk_buff *imex_notify_new(u8 cmd, void **hdr, size_t size)
{
	struct sk_buff *skb = genlmsg_new(size, GFP_KERNEL);

	if (!skb)
		return NULL;
	*hdr = genlmsg_put(skb, 0, 0, &imex_genl_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

static void imex_notify_send(struct sk_buff *skb, void *hdr, int err,
			     unsigned int group)
{
	if (err) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&imex_genl_family, skb, 0, group, GFP_KERNEL);
}

bool imex_events_listened(void)
{
	if (imex_unloading)
		return false;
	return genl_has_listeners(&imex_genl_family, &init_net,
				  IMEX_GRP_EVENTS);
}

/* A new event @cmd, or NULL when nobody listens (or no memory). */
static struct sk_buff *imex_event_new(u8 cmd, void **hdr, size_t size)
{
	if (!imex_events_listened())
		return NULL;
	return imex_notify_new(cmd, hdr, size);
}

void imex_notify_domain(u8 cmd, const struct imex_domain *d)
{
	struct sk_buff *skb;
	void *hdr;

	skb = imex_event_new(cmd, &hdr, NLMSG_DEFAULT_SIZE);
	if (skb)
		imex_notify_send(skb, hdr, imex_put_domain(skb, d, false),
				 IMEX_GRP_EVENTS);
}

void imex_notify_domain_status(const struct imex_domain *d,
			       const unsigned long *changed)
{
	struct sk_buff *skb;
	void *hdr;

	if (!imex_events_listened())
		return;
	skb = imex_notify_new(IMEX_CMD_DOMAIN_SET_STATUS, &hdr,
			      imex_domain_status_size(d, changed));
	if (skb)
		imex_notify_send(skb, hdr, imex_put_domain_status(skb, d, changed),
				 IMEX_GRP_EVENTS);
}

void imex_notify_imports_revoked(const char *domain, const uuid_t *duuid,
				 const uuid_t *node, u32 reason, u32 count)
{
	struct sk_buff *skb;
	void *hdr;
	int err;

	skb = imex_event_new(IMEX_CMD_IMPORTS_REVOKED, &hdr, NLMSG_GOODSIZE);
	if (!skb)
		return;
	err = nla_put_string(skb, IMEX_A_DOMAIN_NAME, domain) ||
	      nla_put(skb, IMEX_A_DOMAIN_UUID, IMEX_UUID_LEN, duuid) ||
	      nla_put(skb, IMEX_A_HANDLE_NODE, IMEX_UUID_LEN, node) ||
	      nla_put_u32(skb, IMEX_A_REVOKE_REASON, reason) ||
	      nla_put_u32(skb, IMEX_A_IMPORT_COUNT, count);
	imex_notify_send(skb, hdr, err, IMEX_GRP_EVENTS);
}

void imex_notify_channel(u8 cmd, const struct imex_channel *ch)
{
	struct sk_buff *skb;
	void *hdr;

	skb = imex_event_new(cmd, &hdr, NLMSG_DEFAULT_SIZE);
	if (skb)
		imex_notify_send(skb, hdr, imex_put_channel(skb, ch),
				 IMEX_GRP_EVENTS);
}

void imex_notify_node(void)
{
	struct sk_buff *skb;
	void *hdr;

	skb = imex_event_new(IMEX_CMD_NODE_SET, &hdr, NLMSG_DEFAULT_SIZE);
	if (skb)
		imex_notify_send(skb, hdr, imex_put_node(skb, false), IMEX_GRP_EVENTS);
}

void imex_notify_manager(u8 cmd, u32 pid)
{
	struct sk_buff *skb;
	void *hdr;

	skb = imex_event_new(cmd, &hdr, NLMSG_GOODSIZE);
	if (skb)
		imex_notify_send(skb, hdr,
				 nla_put_u32(skb, IMEX_A_MANAGER_PID, pid),
				 IMEX_GRP_EVENTS);
}

void imex_notify_req_done(u64 id, u32 cmd, u32 status, const char *domain,
			  const struct imex_req_result *res)
{
	struct sk_buff *skb;
	void *hdr;
	int err;

	skb = imex_event_new(IMEX_CMD_REQ_DONE, &hdr,
			     NLMSG_GOODSIZE + nla_total_size(res->ids_len));
	if (!skb)
		return;
	err = nla_put_u64_64bit(skb, IMEX_A_REQ_ID, id, IMEX_A_PAD) ||
	      nla_put_u32(skb, IMEX_A_REQ_CMD, cmd) ||
	      nla_put_u32(skb, IMEX_A_REQ_STATUS, status) ||
	      (*domain && nla_put_string(skb, IMEX_A_DOMAIN_NAME, domain)) ||
	      (res->msg && nla_put_string(skb, IMEX_A_REQ_MESSAGE, res->msg)) ||
	      (res->uuid && nla_put(skb, IMEX_A_DOMAIN_UUID, IMEX_UUID_LEN,
				    res->uuid)) ||
	      (res->ids && nla_put(skb, IMEX_A_CHANNEL_IDS, res->ids_len,
				   res->ids));
	imex_notify_send(skb, hdr, err, IMEX_GRP_EVENTS);
}

/*
 * Upcalls to the manager.  Unlike an event, an upcall that cannot be built
 * is an error for its caller: nothing else would wake the manager, and the
 * request or import would wait out its timeout for nothing.  This one
 * carries @val as @attr, or no attribute when @attr is 0.
 */
static int imex_notify_mgr_u64(u8 cmd, int attr, u64 val)
{
	struct sk_buff *skb;
	void *hdr;

	if (imex_unloading ||
	    !genl_has_listeners(&imex_genl_family, &init_net,
				IMEX_GRP_MANAGER))
		return 0;
	skb = imex_notify_new(cmd, &hdr, NLMSG_GOODSIZE);
	if (!skb)
		return -ENOMEM;
	imex_notify_send(skb, hdr,
			 attr ? nla_put_u64_64bit(skb, attr, val, IMEX_A_PAD) : 0,
			 IMEX_GRP_MANAGER);
	return 0;
}

int imex_notify_mgr(u8 cmd, u64 import_id)
{
	return imex_notify_mgr_u64(cmd, import_id ? IMEX_A_IMPORT_ID : 0,
				   import_id);
}

int imex_notify_req_queued(u64 id)
{
	return imex_notify_mgr_u64(IMEX_CMD_REQ_NOTIFY, IMEX_A_REQ_ID, id);
}
