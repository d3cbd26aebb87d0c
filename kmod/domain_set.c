// SPDX-License-Identifier: GPL-2.0
/*
 * The manager's atomic domain operations: DOMAIN_SET ("domain X is now
 * this": create or replace) and DOMAIN_REMOVE.  Each checks everything,
 * then allocates everything it needs, and only then changes the node: a
 * refusal, or an allocation that fails, leaves the node as it was.  Both
 * run under imex_lock (IMEX_OPF_LOCK) and flush the device queue after
 * unlocking (IMEX_OPF_DEVICES).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/string.h>
#include "imex.h"

struct imex_set {
	struct imex_domain	*d;		/* NULL: a new domain */
	struct imex_domain	*fresh_d;	/* the new one, unlinked */
	struct imex_member	*members;
	u32			nmembers, self;
	struct imex_chan_spec	*spec;		/* sorted by id */
	u32			nspec;
	/* Per spec entry: a channel reserved for it, or a device for a
	 * kept channel whose owner or mode changes; else NULL.
	 */
	struct imex_channel	**fresh;
	struct imex_chdev	**owner;
	/* A READY domain a member joins: the reason it turns DEGRADED with. */
	char			*joined_reason;
};

static bool imex_members_same(const struct imex_member *a, u32 na,
			      const struct imex_member *b, u32 nb)
{
	u32 i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (strcmp(a[i].name, b[i].name) || strcmp(a[i].addr, b[i].addr))
			return false;
	return true;
}

static bool imex_owner_differs(const struct imex_channel *ch,
			       const struct imex_chan_spec *s)
{
	return !uid_eq(ch->uid, s->uid) || !gid_eq(ch->gid, s->gid) ||
	       ch->mode != s->mode;
}

/* Everything that can refuse the request, before anything is allocated. */
static int imex_set_check(struct imex_set *st, struct genl_info *info,
			  const char *name, const uuid_t *uuid)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	struct imex_domain *du;
	uuid_t fabric;
	u32 part, i;
	int err;

	if (!imex_name_valid(name)) {
		NL_SET_ERR_MSG_ATTR(extack, a[IMEX_A_DOMAIN_NAME],
				    "domain name: use letters, digits, '_', '.', '-', starting with a letter or digit");
		return -EINVAL;
	}
	if (!a[IMEX_A_CHANNEL_IDS] && (a[IMEX_A_CHANNEL_UID] ||
				       a[IMEX_A_CHANNEL_GID] ||
				       a[IMEX_A_CHANNEL_MODE])) {
		NL_SET_ERR_MSG(extack, "an owner or mode without channel ids: give them per channel entry");
		return -EINVAL;
	}
	st->d = imex_domain_find(name);
	du = imex_domain_find_uuid(uuid);
	if (st->d && !uuid_equal(&st->d->uuid, uuid)) {
		imex_extack_fmt(extack, "the domain here has UUID %pUb: remove it first",
				&st->d->uuid);
		return -EEXIST;
	}
	if (!st->d && du) {
		imex_extack_fmt(extack, "domain UUID %pUb is already in use here",
				uuid);
		return -EEXIST;
	}
	nla_memcpy(&fabric, a[IMEX_A_FABRIC_UUID], sizeof(fabric));
	part = nla_get_u32(a[IMEX_A_FABRIC_PARTITION]);
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
	if (!st->d && imex_ndomains >= IMEX_DOMAINS_MAX) {
		imex_extack_fmt(extack, "this node already holds %u domains, the most it may",
				IMEX_DOMAINS_MAX);
		return -ENOSPC;
	}
	if (!imex_node_named(extack))
		return -EADDRNOTAVAIL;
	err = imex_members_parse(a[IMEX_A_MEMBERS], &st->members,
				 &st->nmembers, &st->self, extack);
	if (err)
		return err;
	if (st->self == U32_MAX) {
		NL_SET_ERR_MSG(extack, "this node is not in the member list: list it by the name 'imexctl node show' prints");
		return -EADDRNOTAVAIL;
	}
	err = imex_channels_parse(a[IMEX_A_CHANNELS], a[IMEX_A_CHANNEL_IDS], a,
				  &st->spec, &st->nspec, extack);
	if (err)
		return err;
	for (i = 0; i < st->nspec; i++) {
		err = imex_channel_check_for(st->spec[i].id, st->d, extack);
		if (err)
			return err;
	}
	return 0;
}

/* A name in the new list that the domain's does not have. */
static bool imex_set_joins(const struct imex_domain *d,
			   const struct imex_set *st)
{
	u32 i, j;

	for (i = 0; i < st->nmembers; i++) {
		if (i == st->self)
			continue;
		for (j = 0; j < d->nmembers; j++)
			if (!strcmp(st->members[i].name, d->members[j].name))
				break;
		if (j == d->nmembers)
			return true;
	}
	return false;
}

/* Give back what imex_set_prepare() took; the node is unchanged. */
static void imex_set_unprepare(struct imex_set *st)
{
	u32 i;

	for (i = 0; i < st->nspec; i++) {
		if (st->fresh && st->fresh[i])
			imex_channel_revoke(st->fresh[i]);	/* reserved only */
		if (st->owner && st->owner[i])
			imex_chdev_discard(st->owner[i]);
	}
	kfree(st->fresh_d);	/* never linked, no channel left on it */
	st->fresh_d = NULL;
}

/*
 * Allocate what applying needs: the new domain, new channels (reserved:
 * no device, unopenable, unreported) and devices for owner changes.
 */
static int imex_set_prepare(struct imex_set *st, const char *name,
			    const uuid_t *uuid)
{
	struct imex_domain *d = st->d;
	struct imex_channel *ch;
	u32 i;

	st->fresh = kvcalloc(st->nspec, sizeof(*st->fresh), GFP_KERNEL);
	st->owner = kvcalloc(st->nspec, sizeof(*st->owner), GFP_KERNEL);
	if (st->nspec && (!st->fresh || !st->owner))
		return -ENOMEM;
	/* Allocated here: applying cannot fail. */
	if (d && d->state == IMEX_DOMAIN_READY && imex_set_joins(d, st)) {
		st->joined_reason = kstrdup("no member status from imexd yet",
					    GFP_KERNEL);
		if (!st->joined_reason)
			return -ENOMEM;
	}
	if (!d) {
		st->fresh_d = imex_domain_new(name, uuid, &imex_node.fabric_uuid,
					      imex_node.fabric_partition);
		if (!st->fresh_d)
			return -ENOMEM;
		d = st->fresh_d;
	}
	for (i = 0; i < st->nspec; i++) {
		const struct imex_chan_spec *s = &st->spec[i];

		ch = imex_channel_lookup(s->id);
		if (!ch) {
			ch = imex_channel_reserve(s->id, d, s->uid, s->gid,
						  s->mode);
			if (IS_ERR(ch))
				return PTR_ERR(ch);
			st->fresh[i] = ch;
		} else if (imex_owner_differs(ch, s)) {
			st->owner[i] = imex_chdev_new(ch, s->uid, s->gid,
						      s->mode);
			if (!st->owner[i])
				return -ENOMEM;
		}
	}
	return 0;
}

/* Members still listed keep the state (and why) this node last saw them in. */
static void imex_set_members(struct imex_domain *d, struct imex_set *st)
{
	u32 i, j;

	for (i = 0; i < st->nmembers; i++) {
		if (i == st->self)
			continue;
		for (j = 0; j < d->nmembers; j++) {
			struct imex_member *old = &d->members[j];

			if (strcmp(st->members[i].name, old->name))
				continue;
			st->members[i].state = old->state;
			st->members[i].since = old->since;
			st->members[i].reason = old->reason;	/* moved */
			old->reason = NULL;
		}
	}
	/* Views are indexed by position: they start over with the list. */
	imex_members_free(d->members, d->nmembers);
	d->members = st->members;
	d->nmembers = st->nmembers;
	d->self = st->self;
	st->members = NULL;
}

/* Cannot fail: everything was checked and allocated. */
static void imex_set_apply(struct imex_set *st, u64 generation)
{
	struct imex_domain *d = st->d;
	struct imex_channel *ch;
	bool changed = false;
	unsigned long id;
	u32 i;

	if (!d) {
		d = st->fresh_d;
		st->fresh_d = NULL;
		d->members = st->members;
		d->nmembers = st->nmembers;
		d->self = st->self;
		st->members = NULL;
		d->set_generation = generation;
		/*
		 * Its manager pushes the health it sees; until then a domain
		 * with other members is not known to be READY there.
		 */
		d->state = d->nmembers > 1 ? IMEX_DOMAIN_DEGRADED :
					     IMEX_DOMAIN_READY;
		if (d->state != IMEX_DOMAIN_READY)
			imex_domain_set_reason(d, "no member status from imexd yet");
		imex_domain_link(d);
		imex_notify_domain(IMEX_CMD_DOMAIN_NEW, d);
	} else {
		/* Revoked first: their devices go before any new one comes. */
		xa_for_each(&imex_channels, id, ch) {
			if (ch->domain == d &&
			    !imex_chan_spec_find(st->spec, st->nspec, ch->id)) {
				imex_channel_revoke(ch);
				changed = true;
			}
		}
		imex_revoked_flush();
	}
	for (i = 0; i < st->nspec; i++) {
		const struct imex_chan_spec *s = &st->spec[i];

		if (st->fresh[i]) {
			imex_channel_grant(st->fresh[i]);
			st->fresh[i] = NULL;
			changed = true;
		} else if (st->owner[i]) {
			imex_channel_install_owner(imex_channel_lookup(s->id),
						   st->owner[i], s->uid,
						   s->gid, s->mode);
			st->owner[i] = NULL;
		}
	}
	if (!st->d)
		return;
	if (!imex_members_same(d->members, d->nmembers, st->members,
			       st->nmembers)) {
		/*
		 * A member that joins (a replace's spare) is not known to be
		 * connected: READY would be a claim nobody made.
		 */
		imex_set_members(d, st);
		if (st->joined_reason && d->state == IMEX_DOMAIN_READY) {
			kfree_const(d->reason);
			d->reason = st->joined_reason;
			st->joined_reason = NULL;
			WRITE_ONCE(d->state, IMEX_DOMAIN_DEGRADED);
			imex_kapi_domain_state(d);
		}
		changed = true;
	}
	if (d->set_generation != generation) {
		d->set_generation = generation;
		changed = true;
	}
	if (changed) {
		d->generation++;
		imex_bump();
		imex_notify_domain(IMEX_CMD_DOMAIN_SET_STATUS, d);
	}
}

int imex_nl_domain_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct imex_set st = {};
	const char *name;
	uuid_t uuid;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_DOMAIN_NAME) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_DOMAIN_UUID) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_FABRIC_UUID) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_FABRIC_PARTITION) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_MEMBERS) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_DOMAIN_GENERATION))
		return -EINVAL;
	name = nla_data(a[IMEX_A_DOMAIN_NAME]);
	nla_memcpy(&uuid, a[IMEX_A_DOMAIN_UUID], sizeof(uuid));

	err = imex_set_check(&st, info, name, &uuid);
	if (!err)
		err = imex_set_prepare(&st, name, &uuid);
	if (err)
		imex_set_unprepare(&st);
	else
		imex_set_apply(&st, nla_get_u64(a[IMEX_A_DOMAIN_GENERATION]));
	imex_members_free(st.members, st.nmembers);
	kfree(st.joined_reason);	/* not taken by the domain */
	kvfree(st.fresh);
	kvfree(st.owner);
	kvfree(st.spec);
	return err;
}

int imex_nl_domain_remove(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	struct imex_domain *d;
	uuid_t uuid;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_DOMAIN_NAME))
		return -EINVAL;
	d = imex_domain_find(nla_data(a[IMEX_A_DOMAIN_NAME]));
	if (!d) {
		NL_SET_ERR_MSG_ATTR(extack, a[IMEX_A_DOMAIN_NAME],
				    "no domain of that name on this node: see 'imexctl domain list'");
		return -ENOENT;
	}
	if (a[IMEX_A_DOMAIN_UUID]) {
		nla_memcpy(&uuid, a[IMEX_A_DOMAIN_UUID], sizeof(uuid));
		if (!uuid_equal(&uuid, &d->uuid)) {
			imex_extack_fmt(extack, "a domain of that name here has UUID %pUb",
					&d->uuid);
			return -ESTALE;
		}
	}
	imex_domain_revoke_channels(d);
	imex_notify_domain(IMEX_CMD_DOMAIN_DEL, d);
	imex_domain_destroy(d);
	return 0;
}
