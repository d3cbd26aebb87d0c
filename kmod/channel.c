// SPDX-License-Identifier: GPL-2.0
/* Channels: reservation, grant, revocation (invariants 4 and 5). */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/poll.h>
#include <linux/bsearch.h>
#include <linux/sort.h>
#include <linux/uidgid.h>
#include "imex.h"

DEFINE_XARRAY(imex_channels);

struct imex_channel *imex_channel_lookup(u32 id)
{
	return xa_load(&imex_channels, id);
}

/* Free here, or (@d not NULL) granted to @d already. */
int imex_channel_check_for(u32 id, const struct imex_domain *d,
			   struct netlink_ext_ack *extack)
{
	struct imex_channel *ch;

	if (id >= imex_max_channels) {
		imex_extack_fmt(extack,
				"channel %u is out of range: this node has max_channels=%u",
				id, imex_max_channels);
		return -ERANGE;
	}
	ch = xa_load(&imex_channels, id);
	if (!ch || (d && ch->domain == d && ch->state == IMEX_CHANNEL_GRANTED))
		return 0;
	imex_extack_fmt(extack, "channel %u is in use: 'imexctl channel list' names its domain",
			id);
	return -EADDRINUSE;
}

static int imex_spec_cmp(const void *a, const void *b)
{
	const struct imex_chan_spec *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The spec of channel @id in @spec (sorted by id), or NULL. */
const struct imex_chan_spec *imex_chan_spec_find(const struct imex_chan_spec *spec,
						 u32 n, u32 id)
{
	struct imex_chan_spec key = { .id = id };

	return bsearch(&key, spec, n, sizeof(*spec), imex_spec_cmp);
}

static u32 imex_attr_u32(const struct nlattr *a, u32 def)
{
	return a ? nla_get_u32(a) : def;
}

/* How many attributes @list (NULL: none) nests. */
u32 imex_nla_count(const struct nlattr *list)
{
	const struct nlattr *e;
	u32 count = 0;
	int rem;

	if (list)
		nla_for_each_nested(e, list, rem)
			count++;
	return count;
}

/* IMEX_A_CHANNELS entry @e parsed into @tb; it must have an id. */
int imex_channel_entry_parse(struct nlattr **tb, struct nlattr *e,
			     struct netlink_ext_ack *extack)
{
	int err = nla_parse_nested(tb, IMEX_A_CHANNEL_ENTRY_MAX, e, NULL,
				   extack);

	if (err)
		return err;
	if (!tb[IMEX_A_CHANNEL_ENTRY_ID]) {
		NL_SET_ERR_MSG_ATTR(extack, e, "channel entry has no id");
		return -EINVAL;
	}
	return 0;
}

/*
 * Parse a channel set into specs sorted by id, refusing duplicates:
 * @entries, IMEX_A_CHANNELS entries, each with its own owner and mode;
 * @ids, an IMEX_A_CHANNEL_IDS array, owned as @owner (the top-level
 * attributes) gives.  Either may be NULL; none at all is an empty set.
 */
int imex_channels_parse(struct nlattr *entries, struct nlattr *ids,
			struct nlattr **owner, struct imex_chan_spec **out,
			u32 *n, struct netlink_ext_ack *extack)
{
	struct nlattr *tb[IMEX_A_CHANNEL_ENTRY_MAX + 1];
	struct imex_chan_spec *s;
	u32 count = 0, nids = 0, i = 0;
	struct nlattr *e;
	int rem, err;

	*out = NULL;
	*n = 0;
	count = imex_nla_count(entries);
	if (count > IMEX_CHANNELS_PER_MSG) {
		imex_extack_fmt(extack, "%u channels in one message; at most %u",
				count, IMEX_CHANNELS_PER_MSG);
		return -E2BIG;
	}
	if (ids) {
		if (nla_len(ids) % sizeof(u32)) {
			NL_SET_ERR_MSG_ATTR(extack, ids, "channel ids: the length is not a multiple of 4");
			return -EINVAL;
		}
		nids = nla_len(ids) / sizeof(u32);	/* policy: <= IDS_MAX */
	}
	if (!count && !nids)
		return 0;
	s = kvcalloc(count + nids, sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	if (entries) {
		nla_for_each_nested(e, entries, rem) {
			err = imex_channel_entry_parse(tb, e, extack);
			if (err)
				goto fail;
			s[i].id = nla_get_u32(tb[IMEX_A_CHANNEL_ENTRY_ID]);
			s[i].uid = make_kuid(&init_user_ns,
					     imex_attr_u32(tb[IMEX_A_CHANNEL_ENTRY_UID], 0));
			s[i].gid = make_kgid(&init_user_ns,
					     imex_attr_u32(tb[IMEX_A_CHANNEL_ENTRY_GID], 0));
			s[i].mode = imex_attr_u32(tb[IMEX_A_CHANNEL_ENTRY_MODE], 0600);
			if (!uid_valid(s[i].uid) || !gid_valid(s[i].gid)) {
				imex_extack_fmt(extack, "channel %u: owner uid or gid is not valid",
						s[i].id);
				err = -EINVAL;
				goto fail;
			}
			i++;
		}
	}
	if (nids) {
		kuid_t uid = make_kuid(&init_user_ns,
				       imex_attr_u32(owner[IMEX_A_CHANNEL_UID], 0));
		kgid_t gid = make_kgid(&init_user_ns,
				       imex_attr_u32(owner[IMEX_A_CHANNEL_GID], 0));
		const u8 *p = nla_data(ids);

		if (!uid_valid(uid) || !gid_valid(gid)) {
			NL_SET_ERR_MSG(extack, "owner uid or gid is not valid");
			err = -EINVAL;
			goto fail;
		}
		for (; i < count + nids; i++, p += sizeof(u32)) {
			memcpy(&s[i].id, p, sizeof(u32));
			s[i].uid = uid;
			s[i].gid = gid;
			s[i].mode = imex_attr_u32(owner[IMEX_A_CHANNEL_MODE], 0600);
		}
	}
	count += nids;
	sort(s, count, sizeof(*s), imex_spec_cmp, NULL);
	for (i = 1; i < count; i++) {
		if (s[i].id == s[i - 1].id) {
			imex_extack_fmt(extack, "channel %u is listed twice", s[i].id);
			err = -EINVAL;
			goto fail;
		}
	}
	*out = s;
	*n = count;
	return 0;
fail:
	kvfree(s);
	return err;
}

struct imex_channel *imex_channel_reserve(u32 id, struct imex_domain *d,
					  kuid_t uid, kgid_t gid, umode_t mode)
{
	struct imex_channel *ch = kzalloc(sizeof(*ch), GFP_KERNEL);
	int err;

	if (!ch)
		return ERR_PTR(-ENOMEM);
	kref_init(&ch->ref);	/* held by imex_channels */
	ch->id = id;
	uuid_copy(&ch->domain_uuid, &d->uuid);
	uuid_copy(&ch->fabric_uuid, &d->fabric_uuid);
	ch->fabric_partition = d->fabric_partition;
	ch->domain = d;
	ch->state = IMEX_CHANNEL_RESERVED;
	ch->uid = uid;
	ch->gid = gid;
	ch->mode = mode;
	ch->kapi_err = -ENODEV;	/* not granted yet */
	ch->bare.ch = ch;
	atomic_set(&ch->open_count, 0);
	init_waitqueue_head(&ch->wait);
	INIT_LIST_HEAD(&ch->files);
	INIT_LIST_HEAD(&ch->revoke_cbs);
	INIT_LIST_HEAD(&ch->kapi_node);
	err = xa_insert(&imex_channels, id, ch, GFP_KERNEL);
	if (err) {
		kfree(ch);
		return ERR_PTR(err);
	}
	/* Cannot run out: live minors <= max_channels <= IMEX_CHANNELS_MAX. */
	err = imex_minor_alloc(ch);
	if (err) {
		xa_erase(&imex_channels, id);
		kfree(ch);
		return ERR_PTR(err);
	}
	d->nchannels++;
	imex_bump();
	return ch;
}

/*
 * Make a reserved channel usable and queue its device node; it opens once
 * the node exists (imex.h).  A node that cannot be made (out of memory)
 * leaves the grant in place but unopenable: the grant itself must not fail
 * half-way through a commit.
 */
int imex_channel_grant(struct imex_channel *ch)
{
	ch->state = IMEX_CHANNEL_GRANTED;
	WRITE_ONCE(ch->kapi_err, imex_domain_usable(ch->domain) ? 0 : -ENOLINK);
	imex_bump();
	ch->chdev = imex_chdev_new(ch, ch->uid, ch->gid, ch->mode);
	if (ch->chdev)
		imex_chdev_queue_add(ch->chdev);
	else
		pr_warn_ratelimited("channel %u of domain '%s': no device node: %d\n",
				    ch->id, ch->domain->name, -ENOMEM);
	imex_notify_channel(IMEX_CMD_CHANNEL_NEW, ch);
	return 0;
}

/*
 * Drops the table's reference; open fds keep the object, marked revoked.
 * The grant's device number opens nothing from here on; its device goes
 * with the next flush, before any later grant's device is added.
 */
void imex_channel_revoke(struct imex_channel *ch)
{
	bool granted = ch->state == IMEX_CHANNEL_GRANTED;

	xa_erase(&imex_channels, ch->id);
	imex_minor_free(ch);
	if (ch->chdev) {
		imex_chdev_queue_del(ch->chdev);
		ch->chdev = NULL;
	}
	if (granted)
		imex_notify_channel(IMEX_CMD_CHANNEL_DEL, ch);
	ch->domain->nchannels--;
	WRITE_ONCE(ch->domain, NULL);
	/* Never cleared again: a regrant of the id is another channel. */
	WRITE_ONCE(ch->kapi_err, -ENODEV);
	imex_channel_files_revoke(ch);
	WRITE_ONCE(ch->revoked, true);
	imex_kapi_channel_revoked(ch);
	wake_up_poll(&ch->wait, EPOLLERR | EPOLLHUP | EPOLLPRI);
	imex_bump();
	imex_channel_put(ch);
}

/*
 * Under imex_lock, when @d's usability flips (the manager going away or
 * coming back, not every status push): what imex_channel_ident() answers
 * for its granted channels.  A walk of the table, as revoking a domain's
 * channels is, ending at the domain's last channel; a channel granted
 * later reads the state at its grant.
 */
void imex_domain_channels_usable(struct imex_domain *d, bool usable)
{
	u32 left = d->nchannels;
	struct imex_channel *ch;
	unsigned long id;

	if (!left)
		return;
	xa_for_each(&imex_channels, id, ch) {
		/* Under a mutex: a table of 2^20 channels may take a while. */
		cond_resched();
		if (ch->domain != d)
			continue;
		if (ch->state == IMEX_CHANNEL_GRANTED)
			WRITE_ONCE(ch->kapi_err, usable ? 0 : -ENOLINK);
		if (!--left)
			break;
	}
}

void imex_domain_revoke_channels(struct imex_domain *d)
{
	struct imex_channel *ch;
	unsigned long id;

	xa_for_each(&imex_channels, id, ch)
		if (ch->domain == d)
			imex_channel_revoke(ch);
	imex_revoked_flush();
}

/*
 * devtmpfs sets owner and mode only on creation, so re-create the node (same
 * grant, same device number); the old one is deleted first (imex.h).  @cd
 * is the new node, from imex_chdev_new() with @uid, @gid and @mode.
 */
void imex_channel_install_owner(struct imex_channel *ch, struct imex_chdev *cd,
				kuid_t uid, kgid_t gid, umode_t mode)
{
	if (ch->chdev)
		imex_chdev_queue_del(ch->chdev);
	imex_chdev_queue_add(cd);
	ch->chdev = cd;
	ch->uid = uid;
	ch->gid = gid;
	ch->mode = mode;
	imex_bump();
	imex_notify_channel(IMEX_CMD_CHANNEL_SET, ch);
}

int imex_channel_set_owner(struct imex_channel *ch, kuid_t uid, kgid_t gid,
			   umode_t mode)
{
	struct imex_chdev *cd = imex_chdev_new(ch, uid, gid, mode);

	if (!cd)
		return -ENOMEM;
	imex_channel_install_owner(ch, cd, uid, gid, mode);
	return 0;
}

int imex_put_channel(struct sk_buff *skb, const struct imex_channel *ch)
{
	if (nla_put_u32(skb, IMEX_A_CHANNEL_ID, ch->id) ||
	    nla_put_u32(skb, IMEX_A_CHRDEV_MAJOR, imex_chrdev_major()) ||
	    nla_put_u32(skb, IMEX_A_CHANNEL_MINOR, ch->minor) ||
	    nla_put(skb, IMEX_A_DOMAIN_UUID, IMEX_UUID_LEN, &ch->domain_uuid) ||
	    nla_put_u32(skb, IMEX_A_CHANNEL_STATE, ch->state) ||
	    nla_put_u32(skb, IMEX_A_CHANNEL_UID,
			from_kuid_munged(&init_user_ns, ch->uid)) ||
	    nla_put_u32(skb, IMEX_A_CHANNEL_GID,
			from_kgid_munged(&init_user_ns, ch->gid)) ||
	    nla_put_u32(skb, IMEX_A_CHANNEL_MODE, ch->mode) ||
	    nla_put_u32(skb, IMEX_A_CHANNEL_OPEN_COUNT,
			atomic_read(&ch->open_count)))
		return -EMSGSIZE;
	if (ch->domain &&
	    nla_put_string(skb, IMEX_A_DOMAIN_NAME, ch->domain->name))
		return -EMSGSIZE;
	return 0;
}

int imex_nl_channel_get(struct sk_buff *skb, struct genl_info *info)
{
	struct imex_channel *ch;
	struct sk_buff *msg;
	void *hdr;
	u32 id;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_CHANNEL_ID))
		return -EINVAL;
	id = nla_get_u32(info->attrs[IMEX_A_CHANNEL_ID]);
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &imex_genl_family, 0,
				IMEX_CMD_CHANNEL_GET);
	if (!hdr) {
		err = -EMSGSIZE;
		goto fail;
	}
	mutex_lock(&imex_lock);
	ch = xa_load(&imex_channels, id);
	if (!ch) {
		imex_extack_fmt(info->extack, "channel %u is not granted on this node", id);
		err = -ENOENT;
	} else {
		err = imex_put_channel(msg, ch);
	}
	mutex_unlock(&imex_lock);
	if (err)
		goto fail;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
fail:
	nlmsg_free(msg);
	return err;
}

/* cb->args[0]: next channel id; an optional domain name filters. */
int imex_nl_channel_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr **attrs = imex_dump_attrs(cb);
	const char *filter = NULL;
	struct imex_channel *ch;
	unsigned long id;
	void *hdr;

	if (attrs && attrs[IMEX_A_DOMAIN_NAME])
		filter = nla_data(attrs[IMEX_A_DOMAIN_NAME]);

	mutex_lock(&imex_lock);
	cb->seq = imex_generation;
	xa_for_each_start(&imex_channels, id, ch, cb->args[0]) {
		if (filter && strcmp(ch->domain->name, filter))
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &imex_genl_family,
				  NLM_F_MULTI, IMEX_CMD_CHANNEL_GET);
		if (!hdr)
			break;
		genl_dump_check_consistent(cb, hdr);
		if (imex_put_channel(skb, ch)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = id + 1;
	}
	mutex_unlock(&imex_lock);
	return skb->len;
}

int imex_nl_channel_set(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	struct imex_channel *ch;
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	u32 id;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_CHANNEL_ID))
		return -EINVAL;
	if (!a[IMEX_A_CHANNEL_UID] && !a[IMEX_A_CHANNEL_GID] &&
	    !a[IMEX_A_CHANNEL_MODE]) {
		NL_SET_ERR_MSG(extack, "nothing to set: give an owner uid, gid or mode");
		return -EINVAL;
	}
	id = nla_get_u32(a[IMEX_A_CHANNEL_ID]);

	mutex_lock(&imex_lock);
	ch = xa_load(&imex_channels, id);
	if (!ch || ch->state != IMEX_CHANNEL_GRANTED) {
		imex_extack_fmt(extack, "channel %u is not granted on this node", id);
		err = -ENOENT;
		goto out;
	}
	uid = a[IMEX_A_CHANNEL_UID] ?
	      make_kuid(&init_user_ns, nla_get_u32(a[IMEX_A_CHANNEL_UID])) :
	      ch->uid;
	gid = a[IMEX_A_CHANNEL_GID] ?
	      make_kgid(&init_user_ns, nla_get_u32(a[IMEX_A_CHANNEL_GID])) :
	      ch->gid;
	mode = a[IMEX_A_CHANNEL_MODE] ? nla_get_u32(a[IMEX_A_CHANNEL_MODE]) :
	       ch->mode;
	if (!uid_valid(uid) || !gid_valid(gid)) {
		NL_SET_ERR_MSG(extack, "owner uid or gid is not valid");
		err = -EINVAL;
		goto out;
	}
	err = imex_channel_set_owner(ch, uid, gid, mode);
	if (err)
		NL_SET_ERR_MSG(extack, "could not re-create the device node: owner and mode unchanged");
out:
	mutex_unlock(&imex_lock);
	if (!err)
		imex_dev_flush();	/* the node has its new owner on return */
	return err;
}
