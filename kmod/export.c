// SPDX-License-Identifier: GPL-2.0
/*
 * Exports: descriptors registered under a channel fd, found by id, and the
 * queue that tells the manager when an export a peer imported has ended.
 * Everything here runs under imex_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/random.h>
#include <linux/slab.h>
#include "imex.h"

static DEFINE_HASHTABLE(imex_export_hash, 10);
/*
 * Never reused while loaded.  The node UUID outlives a reload (imexd sets it
 * again) but this counter does not, so it starts at a random value below
 * 2^63 (on first use, when the RNG is seeded): a handle of an earlier load
 * then names a later export only with odds of about exports / 2^63.  The
 * real-time clock would repeat after a clock step; there is no storage for
 * a load counter.
 */
static u64 imex_export_next_id;
unsigned int imex_nexports;	/* every domain's, for NODE_GET */

/* Ends of exports a peer imported, waiting for IMEX_CMD_EXPORT_DEL_ACCEPT. */
struct imex_export_del {
	struct list_head	list;
	u64			id;
	uuid_t			domain_uuid;
	u32			channel_id;
};

/* Queued by whoever ends the export; bounded by IMEX_EXPORT_ENDS_MAX. */
static LIST_HEAD(imex_export_dels);
static unsigned int imex_nexport_dels;

struct imex_export *imex_export_find(u64 id)
{
	struct imex_export *e;

	hash_for_each_possible(imex_export_hash, e, hnode, id)
		if (e->id == id)
			return e;
	return NULL;
}

int imex_file_export(struct imex_file *f, const void *desc, u32 len,
		     struct imex_handle *h)
{
	struct imex_export *e;
	int err = 0;

	if (!len || len > IMEX_DESC_MAX)
		return -EINVAL;
	/* Charged to the caller's memory cgroup, as the imports and waits. */
	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return -ENOMEM;
	memcpy(e->desc, desc, len);
	e->desc_len = len;
	INIT_LIST_HEAD(&e->importers);

	mutex_lock(&imex_lock);
	/* Not revoked: the channel still has its domain. */
	if (READ_ONCE(f->ch->revoked)) {
		err = -ENODEV;
	} else if (f->nexports >= IMEX_EXPORTS_PER_FD ||
		   f->ch->domain->nexports >= IMEX_EXPORTS_PER_DOMAIN) {
		err = -ENOBUFS;
	} else {
		if (!imex_export_next_id)
			imex_export_next_id = (get_random_u64() >> 1) + 1;
		e->id = imex_export_next_id++;
		e->owner = f;
		e->domain = f->ch->domain;
		uuid_copy(&e->domain_uuid, &f->ch->domain_uuid);
		e->channel_id = f->ch->id;
		hash_add(imex_export_hash, &e->hnode, e->id);
		list_add_tail(&e->fnode, &f->exports);
		f->nexports++;
		e->domain->nexports++;
		imex_nexports++;
		memcpy(h->node_uuid, &imex_node.uuid, IMEX_UUID_LEN);
		h->id = e->id;
		imex_stats_export();
	}
	mutex_unlock(&imex_lock);
	if (err)
		kfree(e);
	return err;
}

/* Queue the end of an export a peer imported, if a manager can hear it. */
static void imex_export_del_queue(const struct imex_export *e)
{
	struct imex_export_del *d;

	if (!e->checked || !imex_manager_attached())
		return;
	if (imex_nexport_dels >= IMEX_EXPORT_ENDS_MAX) {
		pr_warn_ratelimited("export %llu ended but imexd has %u ends unread: its peers keep the import until they lose this node\n",
				    e->id, imex_nexport_dels);
		return;
	}
	d = kzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	if (!d)
		return;
	d->id = e->id;
	uuid_copy(&d->domain_uuid, &e->domain_uuid);
	d->channel_id = e->channel_id;
	list_add_tail(&d->list, &imex_export_dels);
	imex_nexport_dels++;
	imex_notify_mgr(IMEX_CMD_EXPORT_DEL, 0);
}

/* Unlink and free @e; its local importers are told it is gone, and why. */
static void imex_export_end(struct imex_export *e, u32 reason)
{
	struct imex_import *im, *tmp;

	list_for_each_entry_safe(im, tmp, &e->importers, enode)
		imex_import_revoke(im, reason);
	imex_export_del_queue(e);
	hash_del(&e->hnode);
	list_del(&e->fnode);
	e->owner->nexports--;
	e->domain->nexports--;
	imex_nexports--;
	kfree(e);
}

int imex_file_unexport(struct imex_file *f, const struct imex_handle *h)
{
	struct imex_export *e;
	int err = 0;

	mutex_lock(&imex_lock);
	e = imex_export_find(h->id);
	if (READ_ONCE(f->ch->revoked))
		err = -ENODEV;
	else if (!e || e->owner != f ||
		 memcmp(h->node_uuid, &imex_node.uuid, IMEX_UUID_LEN))
		err = -ENOENT;
	else
		imex_export_end(e, IMEX_REVOKE_UNEXPORTED);
	imex_revoked_flush();
	mutex_unlock(&imex_lock);
	return err;
}

/* Close of the fd (UNEXPORTED) or revocation of its channel (CHANNEL_GONE). */
void imex_file_end_exports(struct imex_file *f, u32 reason)
{
	struct imex_export *e, *tmp;

	list_for_each_entry_safe(e, tmp, &f->exports, fnode)
		imex_export_end(e, reason);
}

void imex_export_dels_clear(void)
{
	struct imex_export_del *d, *tmp;

	list_for_each_entry_safe(d, tmp, &imex_export_dels, list) {
		list_del(&d->list);
		kfree(d);
	}
	imex_nexport_dels = 0;
}

/* A new manager instance makes every peer drop its imports of this node. */
void imex_exports_forget_checked(void)
{
	struct imex_export *e;
	unsigned int bkt;

	hash_for_each(imex_export_hash, bkt, e, hnode)
		e->checked = false;
}

static bool imex_domain_has_member(const struct imex_domain *d,
				   const struct nlattr *name)
{
	u32 i;

	for (i = 0; i < d->nmembers; i++)
		if (!nla_strcmp(name, d->members[i].name))
			return true;
	return false;
}

int imex_nl_import_check(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	struct imex_export *e;
	struct sk_buff *msg;
	uuid_t domain;
	u32 chan;
	u64 id;
	void *hdr;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_HANDLE_ID) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_DOMAIN_UUID) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_CHANNEL_ID) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_MEMBER_NAME))
		return -EINVAL;
	id = nla_get_u64(a[IMEX_A_HANDLE_ID]);
	nla_memcpy(&domain, a[IMEX_A_DOMAIN_UUID], sizeof(domain));
	chan = nla_get_u32(a[IMEX_A_CHANNEL_ID]);
	msg = imex_reply_new(info, IMEX_CMD_IMPORT_CHECK, &hdr);
	if (IS_ERR(msg))
		return PTR_ERR(msg);

	e = imex_export_find(id);
	if (!e) {
		imex_extack_fmt(extack, "no export %llu here: it was unexported or never made",
				id);
		err = -ENOENT;
		goto out;
	}
	if (!uuid_equal(&e->domain_uuid, &domain) || e->channel_id != chan) {
		imex_extack_fmt(extack, "export %llu belongs to another domain or channel",
				id);
		err = -EPERM;
		goto out;
	}
	/* A live export's channel is granted, so its domain is committed. */
	if (!imex_domain_usable(e->domain)) {
		imex_extack_fmt(extack, "export %llu: its domain is down, nothing can import it",
				id);
		err = -ENOLINK;
		goto out;
	}
	if (!imex_domain_has_member(e->domain, a[IMEX_A_MEMBER_NAME])) {
		imex_extack_fmt(extack, "export %llu: the importing node is not a member of its domain",
				id);
		err = -EXDEV;
		goto out;
	}
	if (nla_put(msg, IMEX_A_DESC, e->desc_len, e->desc)) {
		err = -EMSGSIZE;
		goto out;
	}
	e->checked = true;
out:
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

int imex_nl_export_del_accept(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct imex_export_del *d;
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = imex_reply_new(info, IMEX_CMD_EXPORT_DEL_ACCEPT, &hdr);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	d = list_first_entry_or_null(&imex_export_dels, struct imex_export_del,
				     list);
	if (!d) {
		NL_SET_ERR_MSG(extack, "no export end is waiting");
		err = -ENOENT;
		goto fail;
	}
	if (nla_put_u64_64bit(msg, IMEX_A_HANDLE_ID, d->id, IMEX_A_PAD) ||
	    nla_put(msg, IMEX_A_DOMAIN_UUID, IMEX_UUID_LEN, &d->domain_uuid) ||
	    nla_put_u32(msg, IMEX_A_CHANNEL_ID, d->channel_id)) {
		err = -EMSGSIZE;
		goto fail;
	}
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
	/* Popped only once the manager has it: a failed reply keeps it. */
	if (!err) {
		list_del(&d->list);
		imex_nexport_dels--;
		kfree(d);
	}
	return err;
fail:
	nlmsg_free(msg);
	return err;
}
