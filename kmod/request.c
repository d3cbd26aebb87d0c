// SPDX-License-Identifier: GPL-2.0
/*
 * Requests: domain changes asked for by administrators, checked here against
 * this node's state, queued for the manager (the upcall) and completed
 * exactly once — by the manager, by timeout, or when the manager goes away.
 * The outcome reaches the caller as IMEX_CMD_REQ_DONE on the events group.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include "imex.h"

/*
 * The manager gets a request's attributes as they came, in the one
 * IMEX_A_REQ_ATTRS of its REQ_ACCEPT: nla_len is 16 bits.
 */
#define IMEX_REQ_ATTRS_MAX	(U16_MAX - NLA_HDRLEN)

struct imex_req {
	struct list_head	list;
	u64			id;
	u32			cmd;
	bool			accepted;
	unsigned long		expires;
	char			domain[IMEX_NAME_MAX];	/* "": names none */
	int			len;
	void			*attrs;		/* the request's attributes */
};

static LIST_HEAD(imex_reqs);
static unsigned int imex_nreqs;
static u64 imex_req_next_id = 1;

static void imex_req_complete(struct imex_req *r, u32 status,
			      const struct imex_req_result *res)
{
	imex_notify_req_done(r->id, r->cmd, status, r->domain, res);
	list_del(&r->list);
	imex_nreqs--;
	kfree(r->attrs);
	kfree(r);
}

void imex_request_fail_all(u32 status, const char *msg)
{
	struct imex_req *r, *tmp;

	struct imex_req_result res = { .msg = msg };

	list_for_each_entry_safe(r, tmp, &imex_reqs, list)
		imex_req_complete(r, status, &res);
}

void imex_requests_free(void)
{
	imex_request_fail_all(ESHUTDOWN, "the imex module is being unloaded");
}

unsigned long imex_requests_expire(unsigned long now)
{
	static const struct imex_req_result late = {
		.msg = "imexd did not finish the request in time: see 'journalctl -u imexd'",
	};
	struct imex_req *r, *tmp;
	unsigned long next = 0;

	list_for_each_entry_safe(r, tmp, &imex_reqs, list) {
		if (time_after_eq(now, r->expires))
			imex_req_complete(r, ETIMEDOUT, &late);
		else if (!next || time_before(r->expires, next))
			next = r->expires;
	}
	return next;
}

/* Queue the request carried by @info and tell the manager. */
static int imex_request_queue(struct genl_info *info, const char *domain)
{
	struct netlink_ext_ack *extack = info->extack;
	struct imex_req *r;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (!imex_manager_attached()) {
		NL_SET_ERR_MSG(extack, "imexd is not running on this node: start it with 'systemctl start imexd'");
		return -ESRCH;
	}
	if (imex_nreqs >= IMEX_REQS_MAX) {
		imex_extack_fmt(extack, "%u requests are already waiting for imexd: retry later",
				imex_nreqs);
		return -ENOBUFS;
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->len = genlmsg_len(info->genlhdr);
	r->attrs = kmemdup(genlmsg_data(info->genlhdr), r->len, GFP_KERNEL);
	if (!r->attrs) {
		kfree(r);
		return -ENOMEM;
	}
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg) {
		err = -ENOMEM;
		goto fail;
	}
	hdr = genlmsg_put_reply(msg, info, &imex_genl_family, 0,
				info->genlhdr->cmd);
	if (!hdr) {
		err = -EMSGSIZE;
		goto fail_msg;
	}
	r->id = imex_req_next_id;
	r->cmd = info->genlhdr->cmd;
	r->expires = jiffies + msecs_to_jiffies(IMEX_REQ_TIMEOUT_MS);
	strscpy(r->domain, domain, sizeof(r->domain));
	if (nla_put_u64_64bit(msg, IMEX_A_REQ_ID, r->id, IMEX_A_PAD)) {
		err = -EMSGSIZE;
		goto fail_msg;
	}
	genlmsg_end(msg, hdr);
	/*
	 * The upcall first: a request the manager is never told of must not
	 * be queued.  It reads the queue only after imex_lock is dropped, so
	 * it sees the request, or (the reply failed) finds nothing.
	 */
	err = imex_notify_req_queued(r->id);
	if (err)
		goto fail_msg;
	err = genlmsg_reply(msg, info);
	if (err)
		goto fail;
	imex_req_next_id++;
	list_add_tail(&r->list, &imex_reqs);
	imex_nreqs++;
	imex_reaper_kick(r->expires);
	return 0;

fail_msg:
	nlmsg_free(msg);
fail:
	kfree(r->attrs);
	kfree(r);
	return err;
}

static int imex_check_grant(struct genl_info *info);

/* Local checks for a new domain, so a bad request fails at once. */
static int imex_check_create(struct genl_info *info, const char *name)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	struct imex_member *members;
	u32 n, self;
	int err;

	if (imex_domain_find(name)) {
		NL_SET_ERR_MSG_ATTR(extack, a[IMEX_A_DOMAIN_NAME],
				    "a domain of that name exists on this node already: pick another name");
		return -EEXIST;
	}
	if (!imex_node.fabric_set) {
		NL_SET_ERR_MSG(extack, "this node has no fabric identity: set it with 'imexctl node set-fabric' or the fabric_uuid module parameter");
		return -EXDEV;
	}
	if (imex_ndomains >= IMEX_DOMAINS_MAX) {
		imex_extack_fmt(extack, "this node already holds %u domains, the most it may",
				IMEX_DOMAINS_MAX);
		return -ENOSPC;
	}
	if (!imex_node_named(extack))
		return -EADDRNOTAVAIL;
	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_MEMBERS))
		return -EINVAL;
	err = imex_members_parse(a[IMEX_A_MEMBERS], &members, &n, &self,
				 extack);
	if (err)
		return err;
	imex_members_free(members, n);
	if (self == U32_MAX) {
		NL_SET_ERR_MSG(extack, "this node is not in the member list: list it by the name 'imexctl node show' prints");
		return -EADDRNOTAVAIL;
	}
	return imex_check_grant(info);
}

static int imex_u32_cmp(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The ids of a request's IMEX_A_CHANNELS, each once and at most as many as
 * one IMEX_A_CHANNELS may carry (the manager could not carry out more):
 * a kvmalloc'ed array in *@ids, sorted, or an error with its message.
 */
static int imex_req_channel_ids(struct genl_info *info, u32 **ids, u32 *n)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *tb[IMEX_A_CHANNEL_ENTRY_MAX + 1];
	struct nlattr *list = info->attrs[IMEX_A_CHANNELS];
	struct nlattr *e;
	u32 count, i;
	int rem, err;

	count = imex_nla_count(list);
	if (count > IMEX_CHANNELS_PER_MSG) {
		imex_extack_fmt(extack, "%u channels in one request: at most %u",
				count, IMEX_CHANNELS_PER_MSG);
		return -E2BIG;
	}
	*ids = kvmalloc_array(count ? count : 1, sizeof(**ids), GFP_KERNEL);
	if (!*ids)
		return -ENOMEM;
	i = 0;
	nla_for_each_nested(e, list, rem) {
		err = imex_channel_entry_parse(tb, e, extack);
		if (err)
			goto fail;
		(*ids)[i++] = nla_get_u32(tb[IMEX_A_CHANNEL_ENTRY_ID]);
	}
	sort(*ids, count, sizeof(**ids), imex_u32_cmp, NULL);
	for (i = 1; i < count; i++) {
		if ((*ids)[i] == (*ids)[i - 1]) {
			imex_extack_fmt(extack, "channel %u is listed twice",
					(*ids)[i]);
			err = -EINVAL;
			goto fail;
		}
	}
	*n = count;
	return 0;

fail:
	kvfree(*ids);
	return err;
}

/* The channels a create or alloc asks for: a count or free, valid ids. */
static int imex_check_grant(struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	u32 *ids, n, i;
	int err;

	if (a[IMEX_A_CHANNEL_COUNT] && a[IMEX_A_CHANNELS]) {
		NL_SET_ERR_MSG(extack, "give a channel count or a channel list, not both");
		return -EINVAL;
	}
	if (a[IMEX_A_CHANNEL_COUNT] &&
	    nla_get_u32(a[IMEX_A_CHANNEL_COUNT]) > imex_max_channels) {
		imex_extack_fmt(extack, "%u channels asked for; this node has max_channels=%u",
				nla_get_u32(a[IMEX_A_CHANNEL_COUNT]),
				imex_max_channels);
		return -ERANGE;
	}
	if (!a[IMEX_A_CHANNELS])
		return 0;
	err = imex_req_channel_ids(info, &ids, &n);
	if (err)
		return err;
	for (i = 0; i < n && !err; i++)
		err = imex_channel_check_for(ids[i], NULL, extack);
	kvfree(ids);
	return err;
}

static struct imex_domain *imex_req_domain(struct genl_info *info,
					   const char *name)
{
	struct imex_domain *d = imex_domain_find(name);

	if (!d) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[IMEX_A_DOMAIN_NAME],
				    "no domain of that name on this node: see 'imexctl domain list'");
		return ERR_PTR(-ENOENT);
	}
	return d;
}

static int imex_check_free(struct genl_info *info, struct imex_domain *d)
{
	struct imex_channel *ch;
	u32 *ids, n, i;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_CHANNELS))
		return -EINVAL;
	err = imex_req_channel_ids(info, &ids, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		ch = imex_channel_lookup(ids[i]);
		if (!ch || ch->domain != d) {
			imex_extack_fmt(info->extack, "channel %u is not granted to this domain",
					ids[i]);
			err = -ENOENT;
			break;
		}
	}
	kvfree(ids);
	return err;
}

static int imex_check_evict(struct genl_info *info, struct imex_domain *d)
{
	const char *member;
	u32 i;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_MEMBER_NAME))
		return -EINVAL;
	member = nla_data(info->attrs[IMEX_A_MEMBER_NAME]);
	for (i = 0; i < d->nmembers; i++)
		if (!strcmp(d->members[i].name, member))
			break;
	if (i == d->nmembers) {
		imex_extack_fmt(info->extack, "not a member: '%s'", member);
		return -ENOENT;
	}
	if (i == d->self) {
		NL_SET_ERR_MSG(info->extack, "this node cannot evict itself: delete the domain instead");
		return -EINVAL;
	}
	return 0;
}

/*
 * MEMBER_REPLACE: the leaving member as for an eviction, and a new one that
 * is not a member yet.  Its partition, channels and reachability are for
 * imexd to judge: this node knows only its own.
 */
static int imex_check_replace(struct genl_info *info, struct imex_domain *d)
{
	struct nlattr *nn = info->attrs[IMEX_A_MEMBER_NEW_NAME];
	const char *old, *new;
	u32 i;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_MEMBER_NAME) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_MEMBER_NEW_NAME))
		return -EINVAL;
	old = nla_data(info->attrs[IMEX_A_MEMBER_NAME]);
	new = nla_data(nn);
	if (!imex_name_valid(new)) {
		NL_SET_ERR_MSG_ATTR(info->extack, nn,
				    "new member name: use letters, digits, '_', '.', '-', starting with a letter or digit");
		return -EINVAL;
	}
	if (!strcmp(old, new)) {
		NL_SET_ERR_MSG_ATTR(info->extack, nn,
				    "the new member is the member it replaces");
		return -EINVAL;
	}
	for (i = 0; i < d->nmembers; i++) {
		if (!strcmp(d->members[i].name, new)) {
			NL_SET_ERR_MSG_ATTR(info->extack, nn,
					    "the new member is a member already");
			return -EEXIST;
		}
	}
	for (i = 0; i < d->nmembers; i++)
		if (!strcmp(d->members[i].name, old))
			break;
	if (i == d->nmembers) {
		imex_extack_fmt(info->extack, "not a member: '%s'", old);
		return -ENOENT;
	}
	if (i == d->self) {
		NL_SET_ERR_MSG(info->extack,
			       "this node cannot replace itself: ask another member");
		return -EINVAL;
	}
	return 0;
}

/*
 * NODE_JOIN, NODE_LEAVE: a node of the group, named like any member, and
 * for a join the address the daemons dial (printable, no space; the policy
 * bounds its length).  The group's membership is imexd's: nothing to check
 * against this node's state.
 */
static int imex_check_node(struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *addr = info->attrs[IMEX_A_NODE_ADDR];
	const char *s;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_MEMBER_NAME))
		return -EINVAL;
	if (!imex_name_valid(nla_data(info->attrs[IMEX_A_MEMBER_NAME]))) {
		NL_SET_ERR_MSG_ATTR(extack, info->attrs[IMEX_A_MEMBER_NAME],
				    "node name: use letters, digits, '_', '.', '-', starting with a letter or digit");
		return -EINVAL;
	}
	if (!addr)
		return 0;
	s = nla_data(addr);
	if (!*s) {
		NL_SET_ERR_MSG_ATTR(extack, addr,
				    "empty node address: leave it out to use the name");
		return -EINVAL;
	}
	for (; *s; s++) {
		if (*s <= ' ' || *s > '~') {
			NL_SET_ERR_MSG_ATTR(extack, addr,
					    "node address: host[:port], printable and without spaces");
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * DOMAIN_CREATE, DOMAIN_DELETE, CHANNEL_ALLOC, CHANNEL_FREE, MEMBER_EVICT,
 * MEMBER_REPLACE, and NODE_JOIN, NODE_LEAVE, which name no domain.
 */
int imex_nl_request(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	u8 cmd = info->genlhdr->cmd;
	struct imex_domain *d = NULL;
	const char *name = "";
	bool node = cmd == IMEX_CMD_NODE_JOIN || cmd == IMEX_CMD_NODE_LEAVE;
	int err;

	if (node) {
		err = imex_check_node(info);
		if (err)
			return err;
	} else {
		if (GENL_REQ_ATTR_CHECK(info, IMEX_A_DOMAIN_NAME))
			return -EINVAL;
		name = nla_data(info->attrs[IMEX_A_DOMAIN_NAME]);
		if (!imex_name_valid(name)) {
			NL_SET_ERR_MSG_ATTR(extack, info->attrs[IMEX_A_DOMAIN_NAME],
					    "domain name: use letters, digits, '_', '.', '-', starting with a letter or digit");
			return -EINVAL;
		}
	}
	/* Never queue what REQ_ACCEPT could not hand over whole. */
	if (genlmsg_len(info->genlhdr) > IMEX_REQ_ATTRS_MAX) {
		imex_extack_fmt(extack, "request too large to relay to imexd: %d bytes, at most %d",
				genlmsg_len(info->genlhdr), IMEX_REQ_ATTRS_MAX);
		return -EMSGSIZE;
	}

	mutex_lock(&imex_lock);
	if (node) {
		err = 0;
	} else if (cmd == IMEX_CMD_DOMAIN_CREATE) {
		err = imex_check_create(info, name);
	} else {
		d = imex_req_domain(info, name);
		err = IS_ERR(d) ? PTR_ERR(d) : 0;
		if (!err && cmd == IMEX_CMD_CHANNEL_ALLOC &&
		    !info->attrs[IMEX_A_CHANNEL_COUNT] &&
		    !info->attrs[IMEX_A_CHANNELS]) {
			NL_SET_ERR_MSG(extack, "give a channel count or a channel list");
			err = -EINVAL;
		}
		if (!err && cmd == IMEX_CMD_CHANNEL_ALLOC)
			err = imex_check_grant(info);
		if (!err && cmd == IMEX_CMD_CHANNEL_FREE)
			err = imex_check_free(info, d);
		if (!err && cmd == IMEX_CMD_MEMBER_EVICT)
			err = imex_check_evict(info, d);
		if (!err && cmd == IMEX_CMD_MEMBER_REPLACE)
			err = imex_check_replace(info, d);
	}
	if (!err)
		err = imex_request_queue(info, name);
	mutex_unlock(&imex_lock);
	return err;
}

int imex_nl_req_accept(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct imex_req *r = NULL, *it;
	struct sk_buff *msg;
	struct nlattr *nest;
	void *hdr;
	int err = 0;

	list_for_each_entry(it, &imex_reqs, list) {
		if (!it->accepted) {
			r = it;
			break;
		}
	}
	if (!r) {
		NL_SET_ERR_MSG(extack, "no request is waiting");
		err = -ENOENT;
		goto out;
	}
	msg = genlmsg_new(nla_total_size(r->len) + NLMSG_DEFAULT_SIZE,
			  GFP_KERNEL);
	if (!msg) {
		err = -ENOMEM;
		goto out;
	}
	hdr = genlmsg_put_reply(msg, info, &imex_genl_family, 0,
				IMEX_CMD_REQ_ACCEPT);
	if (!hdr ||
	    nla_put_u64_64bit(msg, IMEX_A_REQ_ID, r->id, IMEX_A_PAD) ||
	    nla_put_u32(msg, IMEX_A_REQ_CMD, r->cmd)) {
		nlmsg_free(msg);
		err = -EMSGSIZE;
		goto out;
	}
	/* r->len <= IMEX_REQ_ATTRS_MAX (imex_nl_request): nla_len holds it. */
	nest = nla_reserve(msg, IMEX_A_REQ_ATTRS, r->len);
	if (!nest) {
		nlmsg_free(msg);
		err = -EMSGSIZE;
		goto out;
	}
	nest->nla_type |= NLA_F_NESTED;
	memcpy(nla_data(nest), r->attrs, r->len);
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
	if (!err)
		r->accepted = true;
out:
	return err;
}

int imex_nl_req_done(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	struct imex_req_result res = { };
	struct imex_req *r;
	uuid_t uuid;
	u64 id;
	int err = -ENOENT;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_REQ_ID) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_REQ_STATUS))
		return -EINVAL;
	id = nla_get_u64(a[IMEX_A_REQ_ID]);

	if (a[IMEX_A_DOMAIN_UUID])
		nla_memcpy(&uuid, a[IMEX_A_DOMAIN_UUID], sizeof(uuid));
	res.msg = a[IMEX_A_REQ_MESSAGE] ? nla_data(a[IMEX_A_REQ_MESSAGE]) : NULL;
	res.uuid = a[IMEX_A_DOMAIN_UUID] ? &uuid : NULL;
	if (a[IMEX_A_CHANNEL_IDS]) {
		res.ids = nla_data(a[IMEX_A_CHANNEL_IDS]);
		res.ids_len = nla_len(a[IMEX_A_CHANNEL_IDS]);
	}

	if (a[IMEX_A_CHANNEL_IDS] &&
	    nla_len(a[IMEX_A_CHANNEL_IDS]) % sizeof(u32)) {
		NL_SET_ERR_MSG_ATTR(extack, a[IMEX_A_CHANNEL_IDS],
				    "channel ids must be whole u32 values");
		err = -EINVAL;
		goto out;
	}
	list_for_each_entry(r, &imex_reqs, list) {
		if (r->id == id) {
			imex_req_complete(r, nla_get_u32(a[IMEX_A_REQ_STATUS]),
					  &res);
			err = 0;
			goto out;
		}
	}
	imex_extack_fmt(extack, "no pending request %llu (it timed out or was completed)",
			id);
out:
	return err;
}
