// SPDX-License-Identifier: GPL-2.0
/*
 * Two-phase domain changes, applied by the manager: PREPARE checks every
 * invariant and reserves (names, channels), COMMIT makes the change visible,
 * ABORT (or the lease running out, or the manager going away) returns the
 * node to exactly the state before PREPARE.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/slab.h>
#include "imex.h"

LIST_HEAD(imex_changes);

/* Recently committed ids, so a repeated COMMIT is answered with success. */
static u64 imex_history[IMEX_CHANGE_HISTORY];
static unsigned int imex_history_len, imex_history_pos;

static bool imex_change_committed(u64 id)
{
	unsigned int i;

	for (i = 0; i < imex_history_len; i++)
		if (imex_history[i] == id)
			return true;
	return false;
}

static void imex_change_remember(u64 id)
{
	imex_history[imex_history_pos] = id;
	imex_history_pos = (imex_history_pos + 1) % IMEX_CHANGE_HISTORY;
	if (imex_history_len < IMEX_CHANGE_HISTORY)
		imex_history_len++;
}

struct imex_change *imex_change_find(u64 id)
{
	struct imex_change *c;

	list_for_each_entry(c, &imex_changes, list)
		if (c->id == id)
			return c;
	return NULL;
}

static void imex_change_free(struct imex_change *c)
{
	imex_members_free(c->members, c->nmembers);
	kvfree(c->chan_ids);
	kfree(c);
}

static void imex_change_unlink(struct imex_change *c)
{
	list_del(&c->list);
	if (c->domain)
		c->domain->change = NULL;
	imex_bump();
	imex_change_free(c);
}

/* Undo a prepared change: the node is as it was before PREPARE. */
static void imex_change_rollback(struct imex_change *c)
{
	struct imex_domain *d = c->domain;
	struct imex_channel *ch;
	u32 i;

	for (i = 0; i < c->nchan; i++) {
		ch = imex_channel_lookup(c->chan_ids[i]);
		if (!ch || ch->change != c)
			continue;
		if (ch->state == IMEX_CHANNEL_RESERVED)
			imex_channel_revoke(ch);
		else
			ch->change = NULL;	/* REMOVE_CHANNELS */
	}
	if (c->op == IMEX_CHANGE_CREATE && d) {
		imex_notify_domain(IMEX_CMD_DOMAIN_DEL, d);
		c->domain = NULL;
		imex_domain_destroy(d);
	}
	imex_change_unlink(c);
}

void imex_change_rollback_all(void)
{
	struct imex_change *c, *tmp;

	list_for_each_entry_safe(c, tmp, &imex_changes, list)
		imex_change_rollback(c);
}

/* Roll back expired leases; returns the earliest remaining expiry or 0. */
unsigned long imex_changes_expire(unsigned long now)
{
	struct imex_change *c, *tmp;
	unsigned long next = 0;

	list_for_each_entry_safe(c, tmp, &imex_changes, list) {
		if (time_after_eq(now, c->expires)) {
			pr_info_ratelimited("change %llu on domain '%s' expired uncommitted; rolled back\n",
					    c->id, c->domain ? c->domain->name : "?");
			imex_change_rollback(c);
		} else if (!next || time_before(c->expires, next)) {
			next = c->expires;
		}
	}
	return next;
}

static int imex_reserve_channels(struct imex_change *c, struct imex_domain *d,
				 struct imex_chan_spec *spec, u32 n)
{
	struct imex_channel *ch;
	u32 i;

	c->chan_ids = kvcalloc(n, sizeof(u32), GFP_KERNEL);
	if (n && !c->chan_ids)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ch = imex_channel_reserve(spec[i].id, d, c, spec[i].uid,
					  spec[i].gid, spec[i].mode);
		if (IS_ERR(ch))
			return PTR_ERR(ch);
		c->chan_ids[c->nchan++] = spec[i].id;
	}
	return 0;
}

static int imex_check_channels_free(struct imex_chan_spec *spec, u32 n,
				    struct netlink_ext_ack *extack)
{
	u32 i;
	int err;

	for (i = 0; i < n; i++) {
		err = imex_channel_check_free(spec[i].id, extack);
		if (err)
			return err;
	}
	return 0;
}

static int imex_prepare_create(struct imex_change *c, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	const char *name = nla_data(a[IMEX_A_DOMAIN_NAME]);
	struct imex_member *members = NULL;
	struct imex_chan_spec *spec = NULL;
	struct imex_domain *d;
	uuid_t uuid, fabric;
	u32 nmembers, self, nspec, part;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_DOMAIN_UUID) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_FABRIC_UUID) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_FABRIC_PARTITION) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_MEMBERS))
		return -EINVAL;
	nla_memcpy(&uuid, a[IMEX_A_DOMAIN_UUID], sizeof(uuid));
	nla_memcpy(&fabric, a[IMEX_A_FABRIC_UUID], sizeof(fabric));
	part = nla_get_u32(a[IMEX_A_FABRIC_PARTITION]);

	if (!imex_name_valid(name)) {
		NL_SET_ERR_MSG_ATTR(extack, a[IMEX_A_DOMAIN_NAME],
				    "domain name: use letters, digits, '_', '.', '-', starting with a letter or digit");
		return -EINVAL;
	}
	if (imex_domain_find(name)) {
		NL_SET_ERR_MSG_ATTR(extack, a[IMEX_A_DOMAIN_NAME],
				    "a domain of that name exists on this node already: pick another name");
		return -EEXIST;
	}
	if (imex_domain_find_uuid(&uuid)) {
		imex_extack_fmt(extack, "domain UUID %pUb is already in use here",
				&uuid);
		return -EEXIST;
	}
	if (!imex_node_fabric_matches(&fabric, part)) {
		if (imex_node.fabric_set)
			imex_extack_fmt(extack,
					"fabric %pUb/%u is not this node's",
					&fabric, part);
		else
			NL_SET_ERR_MSG(extack,
				       "this node has no fabric identity: set it with 'imexctl node set-fabric' or the fabric_uuid module parameter");
		return -EXDEV;
	}
	if (imex_ndomains >= IMEX_DOMAINS_MAX) {
		imex_extack_fmt(extack, "this node already holds %u domains, the most it may",
				IMEX_DOMAINS_MAX);
		return -ENOSPC;
	}
	if (!imex_node_named(extack))
		return -EADDRNOTAVAIL;
	err = imex_members_parse(a[IMEX_A_MEMBERS], &members, &nmembers, &self,
				 extack);
	if (err)
		return err;
	if (self == U32_MAX) {
		NL_SET_ERR_MSG(extack, "this node is not in the member list: list it by the name 'imexctl node show' prints");
		err = -EADDRNOTAVAIL;
		goto fail;
	}
	err = imex_channels_parse(a[IMEX_A_CHANNELS], NULL, NULL, &spec, &nspec,
				  extack);
	if (err)
		goto fail;
	err = imex_check_channels_free(spec, nspec, extack);
	if (err)
		goto fail;

	d = imex_domain_alloc(name, &uuid, &fabric, part, members, nmembers,
			      self);
	if (!d) {
		err = -ENOMEM;
		goto fail;
	}
	members = NULL;		/* the domain owns them now */
	d->change = c;
	c->domain = d;
	err = imex_reserve_channels(c, d, spec, nspec);
	kvfree(spec);
	imex_notify_domain(IMEX_CMD_DOMAIN_NEW, d);
	return err;	/* on error the caller rolls c back */
fail:
	kvfree(spec);
	imex_members_free(members, nmembers);
	return err;
}

static struct imex_domain *imex_prepare_target(struct genl_info *info,
					       struct imex_change *c)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	const char *name = nla_data(a[IMEX_A_DOMAIN_NAME]);
	struct imex_domain *d = imex_domain_find(name);
	uuid_t uuid;

	if (!d) {
		NL_SET_ERR_MSG_ATTR(extack, a[IMEX_A_DOMAIN_NAME], "no domain of that name on this node: see 'imexctl domain list'");
		return ERR_PTR(-ENOENT);
	}
	if (a[IMEX_A_DOMAIN_UUID]) {
		nla_memcpy(&uuid, a[IMEX_A_DOMAIN_UUID], sizeof(uuid));
		if (!uuid_equal(&uuid, &d->uuid)) {
			imex_extack_fmt(extack, "a domain of that name here has UUID %pUb",
					&d->uuid);
			return ERR_PTR(-ESTALE);
		}
	}
	if (d->change) {
		imex_extack_fmt(extack, "the domain already has change %llu in progress",
				d->change->id);
		return ERR_PTR(-EBUSY);
	}
	d->change = c;
	c->domain = d;
	return d;
}

static int imex_prepare_channels(struct imex_change *c, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct imex_chan_spec *spec;
	struct imex_domain *d = c->domain;
	struct imex_channel *ch;
	u32 n, i;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_CHANNELS))
		return -EINVAL;
	err = imex_channels_parse(info->attrs[IMEX_A_CHANNELS], NULL, NULL,
				  &spec, &n, extack);
	if (err)
		return err;
	if (!n) {
		NL_SET_ERR_MSG(extack, "the channel list is empty");
		return -EINVAL;
	}
	if (c->op == IMEX_CHANGE_ADD_CHANNELS) {
		err = imex_check_channels_free(spec, n, extack);
		if (!err)
			err = imex_reserve_channels(c, d, spec, n);
		kvfree(spec);
		return err;
	}

	for (i = 0; i < n; i++) {
		ch = imex_channel_lookup(spec[i].id);
		if (!ch || ch->domain != d || ch->state != IMEX_CHANNEL_GRANTED) {
			imex_extack_fmt(extack, "channel %u is not granted to this domain",
					spec[i].id);
			kvfree(spec);
			return -ENOENT;
		}
	}
	c->chan_ids = kvcalloc(n, sizeof(u32), GFP_KERNEL);
	if (!c->chan_ids) {
		kvfree(spec);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		imex_channel_lookup(spec[i].id)->change = c;
		c->chan_ids[c->nchan++] = spec[i].id;
	}
	kvfree(spec);
	return 0;
}

static int imex_prepare_members(struct imex_change *c, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_MEMBERS))
		return -EINVAL;
	err = imex_members_parse(info->attrs[IMEX_A_MEMBERS], &c->members,
				 &c->nmembers, &c->self, extack);
	if (err)
		return err;
	if (c->self == U32_MAX) {
		NL_SET_ERR_MSG(extack, "this node is not in the new member list: to remove it, delete the domain here");
		return -EADDRNOTAVAIL;
	}
	return 0;
}

int imex_nl_change_prepare(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	struct imex_change *c;
	struct imex_domain *d;
	u32 lease;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_CHANGE_ID) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_CHANGE_OP) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_DOMAIN_NAME))
		return -EINVAL;
	lease = a[IMEX_A_CHANGE_LEASE_MS] ?
		nla_get_u32(a[IMEX_A_CHANGE_LEASE_MS]) : IMEX_LEASE_DEFAULT_MS;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->id = nla_get_u64(a[IMEX_A_CHANGE_ID]);
	c->op = nla_get_u32(a[IMEX_A_CHANGE_OP]);
	c->expires = jiffies + msecs_to_jiffies(lease);
	INIT_LIST_HEAD(&c->list);

	if (imex_change_find(c->id) || imex_change_committed(c->id)) {
		imex_extack_fmt(extack, "change %llu was already prepared or committed",
				c->id);
		err = -EEXIST;
		goto free;
	}
	/* Linked first, so a failure below rolls back through one path. */
	list_add_tail(&c->list, &imex_changes);
	if (c->op == IMEX_CHANGE_CREATE) {
		err = imex_prepare_create(c, info);
	} else {
		d = imex_prepare_target(info, c);
		err = IS_ERR(d) ? PTR_ERR(d) : 0;
		if (!err && (c->op == IMEX_CHANGE_ADD_CHANNELS ||
			     c->op == IMEX_CHANGE_REMOVE_CHANNELS))
			err = imex_prepare_channels(c, info);
		else if (!err && c->op == IMEX_CHANGE_SET_MEMBERS)
			err = imex_prepare_members(c, info);
	}
	if (err) {
		imex_change_rollback(c);
	} else {
		imex_bump();
		imex_reaper_kick(c->expires);
	}
	return err;
free:
	imex_change_free(c);
	return err;
}

static void imex_change_apply(struct imex_change *c)
{
	struct imex_domain *d = c->domain;
	struct imex_channel *ch;
	u32 i;

	switch (c->op) {
	case IMEX_CHANGE_CREATE:
	case IMEX_CHANGE_ADD_CHANNELS:
		for (i = 0; i < c->nchan; i++)
			imex_channel_grant(imex_channel_lookup(c->chan_ids[i]));
		if (c->op == IMEX_CHANGE_CREATE)
			imex_domain_set_state(d, IMEX_DOMAIN_READY);
		break;
	case IMEX_CHANGE_REMOVE_CHANNELS:
		for (i = 0; i < c->nchan; i++) {
			ch = imex_channel_lookup(c->chan_ids[i]);
			if (ch && ch->change == c)
				imex_channel_revoke(ch);
		}
		break;
	case IMEX_CHANGE_DELETE:
		imex_domain_revoke_channels(d);
		imex_notify_domain(IMEX_CMD_DOMAIN_DEL, d);
		d->change = NULL;
		c->domain = NULL;
		imex_domain_destroy(d);
		break;
	case IMEX_CHANGE_SET_MEMBERS:
		imex_members_free(d->members, d->nmembers);
		d->members = c->members;
		d->nmembers = c->nmembers;
		d->self = c->self;
		c->members = NULL;
		c->nmembers = 0;
		d->generation++;
		imex_notify_domain(IMEX_CMD_DOMAIN_SET_STATUS, d);
		break;
	}
}

int imex_nl_change_commit(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct imex_change *c;
	u64 id;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_CHANGE_ID))
		return -EINVAL;
	id = nla_get_u64(info->attrs[IMEX_A_CHANGE_ID]);

	c = imex_change_find(id);
	if (!c) {
		if (!imex_change_committed(id)) {
			imex_extack_fmt(extack, "no prepared change %llu: it was aborted or its lease expired",
					id);
			err = -ENOENT;
		}
		goto out;
	}
	imex_change_apply(c);
	imex_change_remember(id);
	imex_change_unlink(c);
out:
	return err;
}

int imex_nl_change_abort(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct imex_change *c;
	u64 id;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_CHANGE_ID))
		return -EINVAL;
	id = nla_get_u64(info->attrs[IMEX_A_CHANGE_ID]);

	c = imex_change_find(id);
	if (c) {
		imex_change_rollback(c);
	} else if (imex_change_committed(id)) {
		imex_extack_fmt(extack, "change %llu is already committed", id);
		err = -EALREADY;
	}
	return err;
}

/* cb->args[0]: index of the next change. */
int imex_nl_change_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct imex_change *c;
	long idx = 0, start = cb->args[0];
	unsigned long now = jiffies;
	void *hdr;

	mutex_lock(&imex_lock);
	cb->seq = imex_generation;
	list_for_each_entry(c, &imex_changes, list) {
		if (idx++ < start)
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &imex_genl_family,
				  NLM_F_MULTI, IMEX_CMD_CHANGE_GET);
		if (!hdr)
			break;
		genl_dump_check_consistent(cb, hdr);
		if (nla_put_u64_64bit(skb, IMEX_A_CHANGE_ID, c->id, IMEX_A_PAD) ||
		    nla_put_u32(skb, IMEX_A_CHANGE_OP, c->op) ||
		    nla_put_string(skb, IMEX_A_DOMAIN_NAME, c->domain->name) ||
		    nla_put_u32(skb, IMEX_A_CHANGE_LEASE_MS,
				time_after(c->expires, now) ?
				jiffies_to_msecs(c->expires - now) : 0)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = idx;
	}
	mutex_unlock(&imex_lock);
	return skb->len;
}
