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
	for (i = 0; i < n; i++)
		kfree(members[i].view);
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
	kfree_rcu(d, rcu);
}

/* Also without imex_lock, under RCU (imex_channel_ident()). */
bool imex_domain_usable(const struct imex_domain *d)
{
	u32 state = READ_ONCE(d->state);

	return state == IMEX_DOMAIN_READY || state == IMEX_DOMAIN_DEGRADED;
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

/* An attribute's length is 16 bits: drop the views if they would not fit. */
/* True if any of the @n bytes at @p is >= @limit. */
static bool imex_view_invalid(const u8 *p, u32 n, u8 limit)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (p[i] >= limit)
			return true;
	return false;
}

static int imex_put_members(struct sk_buff *skb, const struct imex_domain *d,
			    bool views)
{
	struct nlattr *arr, *e;
	u32 i;

	arr = nla_nest_start(skb, IMEX_A_MEMBERS);
	if (!arr)
		return -EMSGSIZE;
	for (i = 0; i < d->nmembers; i++) {
		const struct imex_member *m = &d->members[i];

		e = nla_nest_start(skb, i + 1);
		if (!e ||
		    nla_put_string(skb, IMEX_A_MEMBER_ENTRY_NAME, m->name) ||
		    nla_put_string(skb, IMEX_A_MEMBER_ADDR, m->addr) ||
		    nla_put_u32(skb, IMEX_A_MEMBER_STATE, m->state) ||
		    (views && m->view &&
		     nla_put(skb, IMEX_A_MEMBER_VIEW, d->nmembers, m->view)))
			return -EMSGSIZE;
		nla_nest_end(skb, e);
	}
	if (skb_tail_pointer(skb) - (unsigned char *)arr > U16_MAX) {
		nla_nest_cancel(skb, arr);
		return views ? imex_put_members(skb, d, false) : -EMSGSIZE;
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
			      IMEX_A_PAD))
		return -EMSGSIZE;
	if (!full)
		return 0;
	if (imex_put_members(skb, d, true) || imex_put_channel_ids(skb, d))
		return -EMSGSIZE;
	return 0;
}

static size_t imex_domain_msg_size(const struct imex_domain *d)
{
	size_t per_member = nla_total_size(0) +
			    nla_total_size(IMEX_NAME_MAX) +
			    nla_total_size(IMEX_ADDR_MAX) +
			    nla_total_size(sizeof(u32)) +
			    nla_total_size(d->nmembers);

	size_t ids = d->nchannels <= IMEX_CHANNEL_IDS_MAX ? d->nchannels : 0;

	return NLMSG_DEFAULT_SIZE + d->nmembers * per_member +
	       nla_total_size(ids * sizeof(u32));
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

/* Health as the manager sees it; DOWN is the kernel's own. */
int imex_nl_domain_set_status(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	struct nlattr *tb[IMEX_A_MEMBER_MAX + 1];
	struct imex_domain *d;
	struct nlattr *e;
	int rem, err = 0;
	u32 i;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_DOMAIN_NAME) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_DOMAIN_STATE))
		return -EINVAL;

	d = imex_domain_select(info);
	if (IS_ERR_OR_NULL(d)) {
		err = d ? PTR_ERR(d) : -ENOENT;
		goto out;
	}

	/* Validate every member entry before changing any. */
	if (a[IMEX_A_MEMBERS]) {
		nla_for_each_nested(e, a[IMEX_A_MEMBERS], rem) {
			err = nla_parse_nested(tb, IMEX_A_MEMBER_MAX, e, NULL,
					       extack);
			if (err)
				goto out;
			if (!tb[IMEX_A_MEMBER_ENTRY_NAME]) {
				NL_SET_ERR_MSG_ATTR(extack, e, "member has no name");
				err = -EINVAL;
				goto out;
			}
			for (i = 0; i < d->nmembers; i++)
				if (!nla_strcmp(tb[IMEX_A_MEMBER_ENTRY_NAME],
						d->members[i].name))
					break;
			if (i == d->nmembers) {
				imex_extack_fmt(extack, "not a member: '%s'",
						(char *)nla_data(tb[IMEX_A_MEMBER_ENTRY_NAME]));
				err = -ENOENT;
				goto out;
			}
			if (tb[IMEX_A_MEMBER_VIEW] &&
			    nla_len(tb[IMEX_A_MEMBER_VIEW]) != d->nmembers) {
				imex_extack_fmt(extack, "a member view needs one entry per member (%u)",
						d->nmembers);
				err = -EINVAL;
				goto out;
			}
			if (tb[IMEX_A_MEMBER_VIEW] &&
			    imex_view_invalid(nla_data(tb[IMEX_A_MEMBER_VIEW]),
					      d->nmembers, __IMEX_MEMBER_STATE_MAX)) {
				NL_SET_ERR_MSG_ATTR(extack, tb[IMEX_A_MEMBER_VIEW],
						    "a member view holds an unknown member state");
				err = -EINVAL;
				goto out;
			}
		}
		nla_for_each_nested(e, a[IMEX_A_MEMBERS], rem) {
			struct imex_member *m;

			nla_parse_nested(tb, IMEX_A_MEMBER_MAX, e, NULL, NULL);
			for (i = 0; i < d->nmembers; i++)
				if (!nla_strcmp(tb[IMEX_A_MEMBER_ENTRY_NAME],
						d->members[i].name))
					break;
			m = &d->members[i];
			/* This node is SELF by definition. */
			if (tb[IMEX_A_MEMBER_STATE] && i != d->self)
				m->state = nla_get_u32(tb[IMEX_A_MEMBER_STATE]);
			if (tb[IMEX_A_MEMBER_VIEW]) {
				if (!m->view)
					m->view = kzalloc(d->nmembers, GFP_KERNEL);
				if (m->view)
					nla_memcpy(m->view,
						   tb[IMEX_A_MEMBER_VIEW],
						   d->nmembers);
			}
		}
	}
	WRITE_ONCE(d->state, nla_get_u32(a[IMEX_A_DOMAIN_STATE]));
	imex_kapi_domain_state(d);	/* usable states only, by policy */
	d->generation++;
	imex_bump();
	imex_notify_domain(IMEX_CMD_DOMAIN_SET_STATUS, d);
out:
	return err;
}
