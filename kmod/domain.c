// SPDX-License-Identifier: GPL-2.0
/* IMEX domains: their member lists, state and netlink view. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/string.h>
#include <linux/mm.h>
#include "imex.h"

LIST_HEAD(imex_domains);
unsigned int imex_ndomains;

struct imex_domain *imex_domain_find(const char *name)
{
	struct imex_domain *d;

	list_for_each_entry(d, &imex_domains, list)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

struct imex_domain *imex_domain_find_uuid(const uuid_t *uuid)
{
	struct imex_domain *d;

	list_for_each_entry(d, &imex_domains, list)
		if (uuid_equal(&d->uuid, uuid))
			return d;
	return NULL;
}

void imex_members_free(struct imex_member *members, u32 n)
{
	u32 i;

	if (!members)
		return;
	for (i = 0; i < n; i++) {
		kfree(members[i].view);
		kfree_const(members[i].reason);
	}
	kvfree(members);
}

/*
 * Parse an IMEX_A_MEMBERS array (already validated by policy) into a member
 * list, refusing empty, oversized or duplicate lists, and find this node in
 * it (*self = U32_MAX when absent; the caller decides if that is an error).
 */
int imex_members_parse(struct nlattr *attr, struct imex_member **out, u32 *n,
		       u32 *self, struct netlink_ext_ack *extack)
{
	struct nlattr *tb[IMEX_A_MEMBER_MAX + 1];
	struct imex_member *m;
	struct nlattr *e;
	u32 count = 0, i, j;
	int rem, err;

	nla_for_each_nested(e, attr, rem)
		count++;
	if (!count) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "the member list is empty: name at least this node");
		return -EINVAL;
	}
	if (count > IMEX_MEMBERS_MAX) {
		imex_extack_fmt(extack, "%u members is more than the %u a domain may have",
				count, IMEX_MEMBERS_MAX);
		return -E2BIG;
	}
	m = kvcalloc(count, sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;

	i = 0;
	*self = U32_MAX;
	nla_for_each_nested(e, attr, rem) {
		err = nla_parse_nested(tb, IMEX_A_MEMBER_MAX, e, NULL, extack);
		if (err)
			goto fail;
		if (!tb[IMEX_A_MEMBER_ENTRY_NAME]) {
			NL_SET_ERR_MSG_ATTR(extack, e, "member has no name");
			err = -EINVAL;
			goto fail;
		}
		nla_strscpy(m[i].name, tb[IMEX_A_MEMBER_ENTRY_NAME],
			    sizeof(m[i].name));
		if (!imex_name_valid(m[i].name)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[IMEX_A_MEMBER_ENTRY_NAME],
					    "member name: use letters, digits, '_', '.', '-', starting with a letter or digit");
			err = -EINVAL;
			goto fail;
		}
		if (tb[IMEX_A_MEMBER_ADDR])
			nla_strscpy(m[i].addr, tb[IMEX_A_MEMBER_ADDR],
				    sizeof(m[i].addr));
		for (j = 0; j < i; j++) {
			if (!strcmp(m[j].name, m[i].name)) {
				imex_extack_fmt(extack, "listed twice: '%s'",
						m[i].name);
				err = -EINVAL;
				goto fail;
			}
		}
		m[i].state = IMEX_MEMBER_UNKNOWN;
		if (!strcmp(m[i].name, imex_node.name)) {
			*self = i;
			m[i].state = IMEX_MEMBER_SELF;
		}
		i++;
	}
	*out = m;
	*n = count;
	return 0;
fail:
	imex_members_free(m, count);
	return err;
}

/* Not linked yet: invisible until imex_domain_link(). */
struct imex_domain *imex_domain_new(const char *name, const uuid_t *uuid,
				    const uuid_t *fabric, u32 partition)
{
	struct imex_domain *d = kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return NULL;
	strscpy(d->name, name, sizeof(d->name));
	uuid_copy(&d->uuid, uuid);
	uuid_copy(&d->fabric_uuid, fabric);
	d->fabric_partition = partition;
	d->state = IMEX_DOMAIN_DOWN;
	INIT_LIST_HEAD(&d->kapi_channels);
	return d;
}

void imex_domain_link(struct imex_domain *d)
{
	/* Its channels are granted after this, each reading its state. */
	d->kapi_usable = imex_domain_usable(d);
	list_add_tail(&d->list, &imex_domains);
	imex_ndomains++;
	imex_bump();
}

/* The caller has revoked the domain's channels. */
void imex_domain_destroy(struct imex_domain *d)
{
	WARN_ON(d->nchannels);
	/* Revoking the channels ended their fds' records and waits. */
	WARN_ON(d->nexports || d->nimports || d->npendings);
	list_del(&d->list);
	imex_ndomains--;
	imex_bump();
	imex_members_free(d->members, d->nmembers);
	kfree_const(d->reason);
	/* No lockless reader: imex_channel_ident() reads ch->kapi_err. */
	kfree(d);
}

void imex_domain_set_state(struct imex_domain *d, u32 state)
{
	if (d->state == state)
		return;
	WRITE_ONCE(d->state, state);
	imex_kapi_domain_state(d);
	d->generation++;
	imex_bump();
	imex_notify_domain(IMEX_CMD_DOMAIN_SET_STATUS, d);
}

/* @reason: a copy is kept (none for a string literal), or NULL. */
void imex_domain_set_reason(struct imex_domain *d, const char *reason)
{
	kfree_const(d->reason);
	d->reason = reason ? kstrdup_const(reason, GFP_KERNEL) : NULL;
}

/* The module's own DOWN, saying why (@why: a string literal). */
void imex_domain_set_down(struct imex_domain *d, const char *why)
{
	if (d->state == IMEX_DOMAIN_DOWN)
		return;
	imex_domain_set_reason(d, why);
	imex_domain_set_state(d, IMEX_DOMAIN_DOWN);
}

/* True if any of the @n bytes at @p is >= @limit. */
static bool imex_view_invalid(const u8 *p, u32 n, u8 limit)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (p[i] >= limit)
			return true;
	return false;
}

/*
 * How much of each member goes in: what a full MEMBERS leaves out when it
 * would not fit one attribute.  Without views and reasons, 160 members fit.
 */
enum imex_member_detail {
	IMEX_MEMBER_BARE,	/* no view, no reason */
	IMEX_MEMBER_REASONS,	/* no view */
	IMEX_MEMBER_VIEWS,	/* all */
};

/* Member @i's entry (attribute type: its position + 1). */
static int imex_put_member(struct sk_buff *skb, const struct imex_domain *d,
			   u32 i, enum imex_member_detail detail)
{
	const struct imex_member *m = &d->members[i];
	struct nlattr *e;

	e = nla_nest_start(skb, i + 1);
	if (!e)
		return -EMSGSIZE;
	if (nla_put_string(skb, IMEX_A_MEMBER_ENTRY_NAME, m->name) ||
	    nla_put_string(skb, IMEX_A_MEMBER_ADDR, m->addr) ||
	    nla_put_u32(skb, IMEX_A_MEMBER_STATE, m->state) ||
	    (detail >= IMEX_MEMBER_REASONS && m->reason &&
	     nla_put_string(skb, IMEX_A_MEMBER_REASON, m->reason)) ||
	    (m->since &&
	     nla_put_u64_64bit(skb, IMEX_A_MEMBER_SINCE, m->since,
			       IMEX_A_MEMBER_PAD)) ||
	    (detail >= IMEX_MEMBER_VIEWS && m->view &&
	     nla_put(skb, IMEX_A_MEMBER_VIEW, d->nmembers, m->view))) {
		nla_nest_cancel(skb, e);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, e);
	return 0;
}

static int imex_put_members(struct sk_buff *skb, const struct imex_domain *d,
			    enum imex_member_detail detail)
{
	struct nlattr *arr;
	u32 i;

	arr = nla_nest_start(skb, IMEX_A_MEMBERS);
	if (!arr)
		return -EMSGSIZE;
	for (i = 0; i < d->nmembers; i++)
		if (imex_put_member(skb, d, i, detail))
			return -EMSGSIZE;
	if (skb_tail_pointer(skb) - (unsigned char *)arr > U16_MAX) {
		nla_nest_cancel(skb, arr);
		return detail == IMEX_MEMBER_BARE ? -EMSGSIZE :
		       imex_put_members(skb, d, detail - 1);
	}
	nla_nest_end(skb, arr);
	return 0;
}

static int imex_put_channel_ids(struct sk_buff *skb,
				const struct imex_domain *d)
{
	struct imex_channel *ch;
	unsigned long id;
	struct nlattr *a;
	u32 *ids, n = 0;

	if (d->nchannels > IMEX_CHANNEL_IDS_MAX)
		return 0;
	a = nla_reserve(skb, IMEX_A_CHANNEL_IDS, d->nchannels * sizeof(u32));
	if (!a)
		return -EMSGSIZE;
	ids = nla_data(a);
	xa_for_each(&imex_channels, id, ch) {
		if (ch->domain == d && n < d->nchannels)
			ids[n++] = ch->id;
	}
	WARN_ON(n != d->nchannels);
	return 0;
}

int imex_put_domain(struct sk_buff *skb, const struct imex_domain *d,
		    bool full)
{
	if (nla_put_string(skb, IMEX_A_DOMAIN_NAME, d->name) ||
	    nla_put(skb, IMEX_A_DOMAIN_UUID, IMEX_UUID_LEN, &d->uuid) ||
	    nla_put(skb, IMEX_A_FABRIC_UUID, IMEX_UUID_LEN, &d->fabric_uuid) ||
	    nla_put_u32(skb, IMEX_A_FABRIC_PARTITION, d->fabric_partition) ||
	    nla_put_u32(skb, IMEX_A_DOMAIN_STATE, d->state) ||
	    nla_put_u32(skb, IMEX_A_MEMBER_COUNT, d->nmembers) ||
	    nla_put_u32(skb, IMEX_A_MEMBER_SELF, d->self) ||
	    nla_put_u32(skb, IMEX_A_CHANNEL_COUNT, d->nchannels) ||
	    nla_put_u32(skb, IMEX_A_GENERATION, d->generation) ||
	    nla_put_u64_64bit(skb, IMEX_A_DOMAIN_GENERATION, d->set_generation,
			      IMEX_A_PAD) ||
	    (d->reason && nla_put_string(skb, IMEX_A_DOMAIN_REASON, d->reason)))
		return -EMSGSIZE;
	if (!full)
		return 0;
	if (imex_put_members(skb, d, IMEX_MEMBER_VIEWS) ||
	    imex_put_channel_ids(skb, d))
		return -EMSGSIZE;
	return 0;
}

/* The most one member's entry takes, without its view. */
static size_t imex_member_size(void)
{
	return nla_total_size(0) + nla_total_size(IMEX_NAME_MAX) +
	       nla_total_size(IMEX_ADDR_MAX) + nla_total_size(sizeof(u32)) +
	       nla_total_size(IMEX_MESSAGE_MAX) +
	       nla_total_size_64bit(sizeof(u64));
}

static size_t imex_domain_msg_size(const struct imex_domain *d)
{
	size_t per_member = imex_member_size() + nla_total_size(d->nmembers);
	size_t ids = d->nchannels <= IMEX_CHANNEL_IDS_MAX ? d->nchannels : 0;

	return NLMSG_DEFAULT_SIZE + nla_total_size(IMEX_MESSAGE_MAX) +
	       (size_t)d->nmembers * per_member +
	       nla_total_size(ids * sizeof(u32));
}

/*
 * The status notification: the summary and the changed members, as many
 * as fit in IMEX_STATUS_MEMBERS_BYTES (a listener that needs them all reads
 * the domain).  A bound, so one status cannot ask for a 100 KiB skb.
 */
#define IMEX_STATUS_MEMBERS_BYTES	(32 * 1024)

size_t imex_domain_status_size(const struct imex_domain *d,
			       const unsigned long *changed)
{
	size_t n = changed ? bitmap_weight(changed, d->nmembers) : 0;

	return NLMSG_DEFAULT_SIZE + nla_total_size(IMEX_MESSAGE_MAX) +
	       min_t(size_t, n * imex_member_size(),
		     IMEX_STATUS_MEMBERS_BYTES);
}

int imex_put_domain_status(struct sk_buff *skb, const struct imex_domain *d,
			   const unsigned long *changed)
{
	struct nlattr *arr;
	unsigned int i;
	int err;

	err = imex_put_domain(skb, d, false);
	if (err || !changed || bitmap_empty(changed, d->nmembers))
		return err;
	arr = nla_nest_start(skb, IMEX_A_MEMBERS);
	if (!arr)
		return 0;	/* the summary alone still says something */
	for_each_set_bit(i, changed, d->nmembers) {
		if (skb_tail_pointer(skb) - (unsigned char *)arr >
		    IMEX_STATUS_MEMBERS_BYTES - imex_member_size() ||
		    imex_put_member(skb, d, i, IMEX_MEMBER_REASONS)) {
			pr_debug("domain %s: %u changed members, not all in the event\n",
				 d->name, bitmap_weight(changed, d->nmembers));
			break;
		}
	}
	nla_nest_end(skb, arr);
	return 0;
}

static struct imex_domain *imex_domain_select(struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	struct imex_domain *d;
	uuid_t uuid;

	if (a[IMEX_A_DOMAIN_NAME]) {
		d = imex_domain_find(nla_data(a[IMEX_A_DOMAIN_NAME]));
		if (!d)
			NL_SET_ERR_MSG_ATTR(extack, a[IMEX_A_DOMAIN_NAME],
					    "no domain of that name on this node: see 'imexctl domain list'");
		return d;
	}
	if (a[IMEX_A_DOMAIN_UUID]) {
		nla_memcpy(&uuid, a[IMEX_A_DOMAIN_UUID], sizeof(uuid));
		d = imex_domain_find_uuid(&uuid);
		if (!d)
			imex_extack_fmt(extack, "no domain with UUID %pUb on this node",
					&uuid);
		return d;
	}
	NL_SET_ERR_MSG(extack, "name the domain (by name or UUID), or ask for a dump");
	return ERR_PTR(-EINVAL);
}

int imex_nl_domain_get(struct sk_buff *skb, struct genl_info *info)
{
	struct imex_domain *d;
	struct sk_buff *msg;
	void *hdr;
	int err;

	mutex_lock(&imex_lock);
	d = imex_domain_select(info);
	if (IS_ERR_OR_NULL(d)) {
		err = d ? PTR_ERR(d) : -ENOENT;
		goto out;
	}
	msg = genlmsg_new(imex_domain_msg_size(d), GFP_KERNEL);
	if (!msg) {
		err = -ENOMEM;
		goto out;
	}
	hdr = genlmsg_put_reply(msg, info, &imex_genl_family, 0,
				IMEX_CMD_DOMAIN_GET);
	if (!hdr || imex_put_domain(msg, d, true)) {
		nlmsg_free(msg);
		err = -EMSGSIZE;
		goto out;
	}
	genlmsg_end(msg, hdr);
	mutex_unlock(&imex_lock);
	return genlmsg_reply(msg, info);
out:
	mutex_unlock(&imex_lock);
	return err;
}

/* cb->args[0]: index of the next domain to emit. */
int imex_nl_domain_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct imex_domain *d;
	long idx = 0, start = cb->args[0];
	void *hdr;

	mutex_lock(&imex_lock);
	cb->seq = imex_generation;
	list_for_each_entry(d, &imex_domains, list) {
		if (idx++ < start)
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &imex_genl_family,
				  NLM_F_MULTI, IMEX_CMD_DOMAIN_GET);
		if (!hdr)
			break;
		genl_dump_check_consistent(cb, hdr);
		if (imex_put_domain(skb, d, false)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = idx;
	}
	mutex_unlock(&imex_lock);
	return skb->len;
}

/* One member's part of a status, checked and allocated before it applies. */
struct imex_member_update {
	bool		given;
	bool		has_state;
	u32		state;
	u64		since;
	const char	*reason;	/* allocated, or NULL */
	const struct nlattr *view;
};

static void imex_updates_free(struct imex_member_update *upd, u32 n)
{
	u32 i;

	if (!upd)
		return;
	for (i = 0; i < n; i++)
		kfree(upd[i].reason);
	kvfree(upd);
}

static u32 imex_member_index(const struct imex_domain *d,
			     const struct nlattr *name)
{
	u32 i;

	for (i = 0; i < d->nmembers; i++)
		if (!nla_strcmp(name, d->members[i].name))
			break;
	return i;
}

/* Check every entry and copy its reason; nothing changes here. */
static int imex_status_parse(const struct imex_domain *d, struct nlattr *attr,
			     struct imex_member_update *upd,
			     struct netlink_ext_ack *extack)
{
	struct nlattr *tb[IMEX_A_MEMBER_MAX + 1];
	struct imex_member_update *u;
	struct nlattr *e;
	int rem, err;
	u32 i;

	nla_for_each_nested(e, attr, rem) {
		err = nla_parse_nested(tb, IMEX_A_MEMBER_MAX, e, NULL, extack);
		if (err)
			return err;
		if (!tb[IMEX_A_MEMBER_ENTRY_NAME]) {
			NL_SET_ERR_MSG_ATTR(extack, e, "member has no name");
			return -EINVAL;
		}
		i = imex_member_index(d, tb[IMEX_A_MEMBER_ENTRY_NAME]);
		if (i == d->nmembers) {
			imex_extack_fmt(extack, "not a member: '%s'",
					(char *)nla_data(tb[IMEX_A_MEMBER_ENTRY_NAME]));
			return -ENOENT;
		}
		if (tb[IMEX_A_MEMBER_VIEW] &&
		    nla_len(tb[IMEX_A_MEMBER_VIEW]) != d->nmembers) {
			imex_extack_fmt(extack, "a member view needs one entry per member (%u)",
					d->nmembers);
			return -EINVAL;
		}
		if (tb[IMEX_A_MEMBER_VIEW] &&
		    imex_view_invalid(nla_data(tb[IMEX_A_MEMBER_VIEW]),
				      d->nmembers, __IMEX_MEMBER_STATE_MAX)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[IMEX_A_MEMBER_VIEW],
					    "a member view holds an unknown member state");
			return -EINVAL;
		}
		u = &upd[i];
		/* Listed twice: the last entry counts. */
		kfree(u->reason);
		memset(u, 0, sizeof(*u));
		u->given = true;
		u->has_state = tb[IMEX_A_MEMBER_STATE];
		if (u->has_state)
			u->state = nla_get_u32(tb[IMEX_A_MEMBER_STATE]);
		if (tb[IMEX_A_MEMBER_SINCE])
			u->since = nla_get_u64(tb[IMEX_A_MEMBER_SINCE]);
		u->view = tb[IMEX_A_MEMBER_VIEW];
		if (tb[IMEX_A_MEMBER_REASON]) {
			u->reason = nla_strdup(tb[IMEX_A_MEMBER_REASON],
					       GFP_KERNEL);
			if (!u->reason)
				return -ENOMEM;
		}
	}
	return 0;
}

static bool imex_reason_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Cannot fail (a view that cannot be allocated stays unknown). */
static void imex_status_apply(struct imex_domain *d,
			      struct imex_member_update *upd,
			      unsigned long *changed)
{
	struct imex_member_update *u;
	struct imex_member *m;
	u32 i;

	for (i = 0; i < d->nmembers; i++) {
		u = &upd[i];
		m = &d->members[i];
		if (!u->given)
			continue;
		/* This node is SELF by definition. */
		if (u->has_state && i != d->self && m->state != u->state) {
			m->state = u->state;
			__set_bit(i, changed);
		}
		/* The entry replaces both: absent means none. */
		if (!imex_reason_same(m->reason, u->reason) ||
		    m->since != u->since)
			__set_bit(i, changed);
		kfree_const(m->reason);
		m->reason = u->reason;
		u->reason = NULL;
		m->since = u->since;
		if (u->view) {
			if (!m->view)
				m->view = kzalloc(d->nmembers, GFP_KERNEL);
			if (m->view)
				nla_memcpy(m->view, u->view, d->nmembers);
		}
	}
}

/*
 * Health as the manager sees it; DOWN is the kernel's own.  Everything is
 * checked and every reason copied first: a refused status changes nothing.
 */
int imex_nl_domain_set_status(struct sk_buff *skb, struct genl_info *info)
{
	DECLARE_BITMAP(changed, IMEX_MEMBERS_MAX) = {};
	struct nlattr **a = info->attrs;
	struct imex_member_update *upd = NULL;
	const char *reason = NULL;
	struct imex_domain *d;
	u32 state;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_DOMAIN_NAME) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_DOMAIN_STATE))
		return -EINVAL;

	d = imex_domain_select(info);
	if (IS_ERR_OR_NULL(d))
		return d ? PTR_ERR(d) : -ENOENT;
	state = nla_get_u32(a[IMEX_A_DOMAIN_STATE]);
	if (a[IMEX_A_MEMBERS]) {
		upd = kvcalloc(d->nmembers, sizeof(*upd), GFP_KERNEL);
		if (!upd)
			return -ENOMEM;
		err = imex_status_parse(d, a[IMEX_A_MEMBERS], upd, info->extack);
		if (err)
			goto out;
	}
	/* A ready domain needs no reason. */
	if (a[IMEX_A_DOMAIN_REASON] && state != IMEX_DOMAIN_READY) {
		reason = nla_strdup(a[IMEX_A_DOMAIN_REASON], GFP_KERNEL);
		if (!reason) {
			err = -ENOMEM;
			goto out;
		}
	}

	if (upd)
		imex_status_apply(d, upd, changed);
	kfree_const(d->reason);
	d->reason = reason;
	WRITE_ONCE(d->state, state);
	imex_kapi_domain_state(d);	/* usable states only, by policy */
	d->generation++;
	imex_bump();
	imex_notify_domain_status(d, changed);
out:
	imex_updates_free(upd, d->nmembers);
	return err;
}
