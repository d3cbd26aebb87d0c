// SPDX-License-Identifier: GPL-2.0
/*
 * Imports: a handle of this node is decided here against the export table;
 * another node's goes to the manager (IMPORT_NOTIFY, ACCEPT, DONE) while the
 * importer sleeps.  Held imports live on their fd; revoked ones wait there
 * until IMEX_IOC_REVOKED reads them.
 *
 * A pending remote import belongs to the importer, which alone frees it.
 * Everyone else (DONE, the manager leaving, IMPORT_REVOKE, revocation of
 * the importer's channel) touches it only under imex_lock while it is on
 * imex_pendings, and the importer takes it off that list under imex_lock
 * before freeing it.
 *
 * Imports and waits are charged to the importing fd's domain (bounded per
 * domain, so one domain at its bound leaves the others alone) and their
 * memory to the caller's memory cgroup.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "imex.h"

unsigned int imex_nimports;	/* every domain's, for NODE_GET */
static LIST_HEAD(imex_remote_imports);	/* imex_import.enode, remote ones */

struct imex_pending {
	struct list_head	list;		/* imex_pendings */
	struct imex_file	*file;		/* the importer's */
	/* Charged for it; NULL once the channel's revocation uncharged it. */
	struct imex_domain	*domain;
	u64			id;
	uuid_t			node_uuid;
	u64			handle_id;
	uuid_t			domain_uuid;	/* the importer's */
	u32			channel_id;
	bool			accepted;
	bool			done;		/* WRITE_ONCE under imex_lock */
	int			status;		/* positive errno, 0: success */
	int			revoke;		/* reason, once done; -1: none */
	u32			desc_len;
	u8			desc[IMEX_DESC_MAX];
	wait_queue_head_t	wq;
};

static LIST_HEAD(imex_pendings);
static u64 imex_pending_next_id = 1;

static bool imex_handle_match(const struct imex_import *im,
			      const struct imex_handle *h)
{
	return im->id == h->id &&
	       !memcmp(&im->node_uuid, h->node_uuid, IMEX_UUID_LEN);
}

static struct imex_import *imex_file_find_import(struct imex_file *f,
						 const struct imex_handle *h)
{
	struct imex_import *im;

	list_for_each_entry(im, &f->imports, fnode)
		if (imex_handle_match(im, h))
			return im;
	return NULL;
}

/*
 * The revocations of the operation under way, for IMPORTS_REVOKED.  Names
 * are copied: a domain may be gone by the flush.  Bounded: past
 * IMEX_TALLY_MAX entries the tally is sent early.
 */
struct imex_revoke_tally {
	struct list_head	list;
	char			domain[IMEX_NAME_MAX];
	uuid_t			domain_uuid;
	uuid_t			node;
	u32			reason;
	u32			count;
};

#define IMEX_TALLY_MAX	64
static LIST_HEAD(imex_tally);
static unsigned int imex_ntally;

void imex_revoked_flush(void)
{
	struct imex_revoke_tally *t, *tmp;

	list_for_each_entry_safe(t, tmp, &imex_tally, list) {
		imex_notify_imports_revoked(t->domain, &t->domain_uuid,
					    &t->node, t->reason, t->count);
		list_del(&t->list);
		kfree(t);
	}
	imex_ntally = 0;
}

void imex_revoked_tally(const struct imex_import *im, u32 reason)
{
	const uuid_t *node = im->remote ? &im->node_uuid : &imex_node.uuid;
	struct imex_revoke_tally *t;

	/*
	 * Only what the system revoked: an exporter's own unexport is its
	 * business (its importers see it through IMEX_IOC_REVOKED), and an
	 * event per unexport would let any tenant flood the public group.
	 */
	if (reason == IMEX_REVOKE_UNEXPORTED || !imex_events_listened())
		return;
	list_for_each_entry(t, &imex_tally, list) {
		if (t->reason == reason && uuid_equal(&t->node, node) &&
		    uuid_equal(&t->domain_uuid, &im->domain->uuid)) {
			t->count++;
			return;
		}
	}
	if (imex_ntally >= IMEX_TALLY_MAX)
		imex_revoked_flush();
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t) {
		pr_warn_ratelimited("imports of domain %s revoked: no memory for the imports-revoked event\n",
				    im->domain->name);
		return;
	}
	strscpy(t->domain, im->domain->name, sizeof(t->domain));
	uuid_copy(&t->domain_uuid, &im->domain->uuid);
	uuid_copy(&t->node, node);
	t->reason = reason;
	t->count = 1;
	list_add_tail(&t->list, &imex_tally);
	imex_ntally++;
}

void imex_import_revoke(struct imex_import *im, u32 reason)
{
	struct imex_file *f = im->file;

	imex_revoked_tally(im, reason);

	list_del_init(&im->enode);
	im->exp = NULL;
	im->reason = reason;
	im->revoked = true;
	list_move_tail(&im->fnode, &f->revoked);
	WRITE_ONCE(f->nrevoked, f->nrevoked + 1);
	/* Pollers of every fd of the channel wait here (chardev.c). */
	wake_up_poll(&f->ch->wait, EPOLLPRI);
}

static void imex_import_free(struct imex_import *im)
{
	struct imex_file *f = im->file;

	list_del(&im->fnode);
	list_del(&im->enode);
	if (im->revoked)
		WRITE_ONCE(f->nrevoked, f->nrevoked - 1);
	f->nimports--;
	im->domain->nimports--;
	imex_nimports--;
	kfree(im);
}

static void imex_pending_finish(struct imex_pending *p, int status)
{
	p->status = status;
	WRITE_ONCE(p->done, true);
	wake_up(&p->wq);
}

static void imex_pending_uncharge(struct imex_pending *p)
{
	p->file->npendings--;
	p->domain->npendings--;
	p->domain = NULL;
}

/*
 * Close of the fd or revocation of its channel.  A close cannot race an
 * ioctl of the same file, so only revocation finds waits here: they fail
 * with ENODEV and leave the domain's count now, before it can be freed.
 */
void imex_file_drop_imports(struct imex_file *f)
{
	struct imex_import *im, *tmp;
	struct imex_pending *p;

	list_for_each_entry_safe(im, tmp, &f->imports, fnode)
		imex_import_free(im);
	list_for_each_entry_safe(im, tmp, &f->revoked, fnode)
		imex_import_free(im);
	if (!f->npendings)
		return;
	list_for_each_entry(p, &imex_pendings, list) {
		if (p->file != f || !p->domain)
			continue;
		if (!p->done)
			imex_pending_finish(p, ENODEV);
		imex_pending_uncharge(p);
	}
}

/* Under imex_lock, on an fd whose channel is not revoked. */
static bool imex_import_room(const struct imex_file *f)
{
	return f->nimports < IMEX_IMPORTS_PER_FD &&
	       f->ch->domain->nimports < IMEX_IMPORTS_PER_DOMAIN;
}

/*
 * Hold the import on @f, unless another thread of the fd got there first.
 * @exp: the local export, or NULL for a remote one.  @revoke >= 0 records
 * it revoked at once (the revocation raced the end of the upcall).
 */
static int imex_import_record(struct imex_file *f, const struct imex_handle *h,
			      struct imex_export *exp, const void *desc,
			      u32 len, int revoke, bool *held)
{
	struct imex_import *im;

	if (imex_file_find_import(f, h))
		return 0;
	if (!imex_import_room(f))
		return -ENOBUFS;
	im = kzalloc(sizeof(*im), GFP_KERNEL_ACCOUNT);
	if (!im)
		return -ENOMEM;
	im->file = f;
	im->domain = f->ch->domain;
	im->exp = exp;
	im->remote = !exp;
	memcpy(&im->node_uuid, h->node_uuid, IMEX_UUID_LEN);
	im->id = h->id;
	uuid_copy(&im->domain_uuid, &f->ch->domain_uuid);
	im->desc_len = len;
	memcpy(im->desc, desc, len);
	INIT_LIST_HEAD(&im->enode);
	list_add_tail(&im->fnode, &f->imports);
	f->nimports++;
	im->domain->nimports++;
	imex_nimports++;
	if (exp)
		list_add_tail(&im->enode, &exp->importers);
	else
		list_add_tail(&im->enode, &imex_remote_imports);
	if (revoke >= 0)
		imex_import_revoke(im, revoke);
	else
		imex_stats_import(0);	/* only a new import, still valid */
	*held = true;
	return 0;
}

static int imex_import_local(struct imex_file *f, const struct imex_handle *h,
			     void *desc, u32 *len, bool *held)
{
	struct imex_export *e = imex_export_find(h->id);
	int err;

	if (!e)
		return -ENOENT;
	if (!uuid_equal(&e->domain_uuid, &f->ch->domain_uuid) ||
	    e->channel_id != f->ch->id)
		return -EPERM;
	err = imex_import_record(f, h, e, e->desc, e->desc_len, -1, held);
	if (!err) {
		memcpy(desc, e->desc, e->desc_len);
		*len = e->desc_len;
	}
	return err;
}

/* Called and returns with imex_lock held; drops it while it sleeps. */
static int imex_import_remote(struct imex_file *f, const struct imex_handle *h,
			      unsigned int timeout_ms, void *desc, u32 *len,
			      bool *held)
{
	struct imex_pending *p;
	long left;
	int err;

	if (!imex_manager_attached())
		return -ESRCH;
	if (f->ch->domain->npendings >= IMEX_IMPORTS_PENDING_PER_DOMAIN)
		return -ENOBUFS;
	p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return -ENOMEM;
	p->file = f;
	p->domain = f->ch->domain;
	p->id = imex_pending_next_id++;
	memcpy(&p->node_uuid, h->node_uuid, IMEX_UUID_LEN);
	p->handle_id = h->id;
	uuid_copy(&p->domain_uuid, &f->ch->domain_uuid);
	p->channel_id = f->ch->id;
	p->revoke = -1;
	init_waitqueue_head(&p->wq);
	err = imex_notify_mgr(IMEX_CMD_IMPORT_NOTIFY, p->id);
	if (err) {
		kfree(p);
		return err;
	}
	list_add_tail(&p->list, &imex_pendings);
	f->npendings++;
	p->domain->npendings++;
	mutex_unlock(&imex_lock);

	left = wait_event_interruptible_timeout(p->wq, READ_ONCE(p->done),
						msecs_to_jiffies(timeout_ms));

	mutex_lock(&imex_lock);
	list_del(&p->list);
	if (p->domain)
		imex_pending_uncharge(p);
	if (!p->done) {
		/*
		 * -EINTR, not -ERESTARTSYS: a restarted call would queue a
		 * second upcall for the same import.
		 */
		err = left < 0 ? -EINTR : -ETIMEDOUT;
	} else if (p->status) {
		err = -p->status;
	} else if (READ_ONCE(f->ch->revoked)) {
		err = -ENODEV;
	} else {
		err = imex_import_record(f, h, NULL, p->desc, p->desc_len,
					 p->revoke, held);
		if (!err) {
			memcpy(desc, p->desc, p->desc_len);
			*len = p->desc_len;
		}
	}
	kfree(p);
	return err;
}

int imex_file_import(struct imex_file *f, const struct imex_handle *h,
		     unsigned int timeout_ms, void *desc, u32 *len, bool *held)
{
	struct imex_import *im;
	int err;

	*held = false;
	if (timeout_ms > IMEX_IMPORT_TIMEOUT_MAX_MS)
		return -EINVAL;
	if (!timeout_ms)
		timeout_ms = IMEX_IMPORT_TIMEOUT_MS;

	mutex_lock(&imex_lock);
	if (READ_ONCE(f->ch->revoked)) {
		err = -ENODEV;
		goto out;
	}
	im = imex_file_find_import(f, h);
	if (im) {
		memcpy(desc, im->desc, im->desc_len);
		*len = im->desc_len;
		err = 0;
		goto out;
	}
	if (!imex_import_room(f)) {
		err = -ENOBUFS;
		goto out;
	}
	if (!memcmp(h->node_uuid, &imex_node.uuid, IMEX_UUID_LEN))
		err = imex_import_local(f, h, desc, len, held);
	else
		err = imex_import_remote(f, h, timeout_ms, desc, len, held);
out:
	imex_revoked_flush();	/* an import revoked as it arrived */
	mutex_unlock(&imex_lock);
	if (err)
		imex_stats_import(err);
	return err;
}

int imex_file_unimport(struct imex_file *f, const struct imex_handle *h)
{
	struct imex_import *im;
	int err = 0;

	mutex_lock(&imex_lock);
	im = imex_file_find_import(f, h);
	if (READ_ONCE(f->ch->revoked))
		err = -ENODEV;
	else if (!im)
		err = -ENOENT;
	else
		imex_import_free(im);
	mutex_unlock(&imex_lock);
	return err;
}

/*
 * Revoked entries are dropped only once the copy to user space succeeded,
 * so a bad pointer changes nothing and concurrent readers of one fd never
 * see an entry twice.
 */
long imex_file_revoked(struct imex_file *f, void __user *arg)
{
	struct imex_revoked_entry *ents = NULL;
	struct imex_revoked_arg ra;
	struct imex_import *im, *tmp;
	u32 n = 0, want;
	long err = 0;

	if (copy_from_user(&ra, arg, sizeof(ra)))
		return -EFAULT;
	want = min_t(u32, ra.count, IMEX_IMPORTS_PER_FD);
	if (want) {
		ents = kvcalloc(want, sizeof(*ents), GFP_KERNEL);
		if (!ents)
			return -ENOMEM;
	}

	/*
	 * The records stay on f->revoked, charged to their domain, while
	 * the copy to user space runs without imex_lock: a revocation of
	 * the channel meanwhile frees them with the rest, so none outlives
	 * its domain.  revoked_lock keeps a second reader of this fd from
	 * reporting the same ones; meanwhile f->revoked only grows at its
	 * tail or is emptied by that revocation.  Nothing is consumed on
	 * EFAULT.
	 */
	mutex_lock(&f->revoked_lock);
	mutex_lock(&imex_lock);
	if (READ_ONCE(f->ch->revoked)) {
		err = -ENODEV;
		goto unlock;
	}
	list_for_each_entry(im, &f->revoked, fnode) {
		if (n == want)
			break;
		memcpy(ents[n].handle.node_uuid, &im->node_uuid, IMEX_UUID_LEN);
		ents[n].handle.id = im->id;
		ents[n].reason = im->reason;
		n++;
	}
	ra.count = n;
	ra.pending = f->nrevoked - n;
	mutex_unlock(&imex_lock);

	if ((n && copy_to_user(u64_to_user_ptr(ra.entries), ents,
			       n * sizeof(*ents))) ||
	    copy_to_user(arg, &ra, sizeof(ra))) {
		err = -EFAULT;
		goto out;
	}

	mutex_lock(&imex_lock);
	if (!READ_ONCE(f->ch->revoked)) {
		list_for_each_entry_safe(im, tmp, &f->revoked, fnode) {
			if (!n--)
				break;
			imex_import_free(im);
		}
	}
unlock:
	mutex_unlock(&imex_lock);
out:
	mutex_unlock(&f->revoked_lock);
	kvfree(ents);
	return err;
}

/* Under imex_lock, when the manager detaches or its socket closes. */
void imex_imports_manager_gone(void)
{
	struct imex_import *im, *tmp;
	struct imex_pending *p;

	list_for_each_entry(p, &imex_pendings, list) {
		if (!p->done)
			imex_pending_finish(p, ENOTCONN);
		else if (!p->status && p->revoke < 0)
			p->revoke = IMEX_REVOKE_DAEMON_LOST;
	}
	list_for_each_entry_safe(im, tmp, &imex_remote_imports, enode)
		imex_import_revoke(im, IMEX_REVOKE_DAEMON_LOST);
	imex_revoked_flush();
	imex_export_dels_clear();
	imex_exports_forget_checked();
}

int imex_nl_import_accept(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct imex_pending *p = NULL, *it;
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = imex_reply_new(info, IMEX_CMD_IMPORT_ACCEPT, &hdr);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	list_for_each_entry(it, &imex_pendings, list) {
		if (!it->accepted && !it->done) {
			p = it;
			break;
		}
	}
	if (!p) {
		NL_SET_ERR_MSG(extack, "no import is waiting");
		err = -ENOENT;
		goto fail;
	}
	if (nla_put_u64_64bit(msg, IMEX_A_IMPORT_ID, p->id, IMEX_A_PAD) ||
	    nla_put(msg, IMEX_A_HANDLE_NODE, IMEX_UUID_LEN, &p->node_uuid) ||
	    nla_put_u64_64bit(msg, IMEX_A_HANDLE_ID, p->handle_id,
			      IMEX_A_PAD) ||
	    nla_put(msg, IMEX_A_DOMAIN_UUID, IMEX_UUID_LEN, &p->domain_uuid) ||
	    nla_put_u32(msg, IMEX_A_CHANNEL_ID, p->channel_id)) {
		err = -EMSGSIZE;
		goto fail;
	}
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
	if (!err)
		p->accepted = true;
	return err;
fail:
	nlmsg_free(msg);
	return err;
}

int imex_nl_import_done(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	struct imex_pending *p;
	u32 status;
	u64 id;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_IMPORT_ID) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_REQ_STATUS))
		return -EINVAL;
	id = nla_get_u64(a[IMEX_A_IMPORT_ID]);
	status = nla_get_u32(a[IMEX_A_REQ_STATUS]);
	/* Kernel-internal codes (ERESTARTSYS and up) must not reach a process. */
	if (status >= ERESTARTSYS) {
		NL_SET_ERR_MSG_ATTR(extack, a[IMEX_A_REQ_STATUS],
				    "import status must be 0 or a user-visible errno (below 512)");
		return -EINVAL;
	}
	if (!status && !a[IMEX_A_DESC]) {
		NL_SET_ERR_MSG(extack, "a successful import needs its descriptor");
		return -EINVAL;
	}

	list_for_each_entry(p, &imex_pendings, list) {
		if (p->id != id || p->done)
			continue;
		if (!status) {
			p->desc_len = nla_len(a[IMEX_A_DESC]);
			memcpy(p->desc, nla_data(a[IMEX_A_DESC]), p->desc_len);
		}
		imex_pending_finish(p, status);
		goto out;
	}
	imex_extack_fmt(extack, "import %llu is not waiting: interrupted or timed out",
			id);
	err = -ENOENT;
out:
	return err;
}

int imex_nl_import_revoke(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct imex_import *im, *tmp;
	struct imex_pending *p;
	bool by_id, by_domain;
	uuid_t node, domain;
	struct sk_buff *msg;
	u32 reason, count = 0;
	u64 id = 0;
	void *hdr;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, IMEX_A_HANDLE_NODE) ||
	    GENL_REQ_ATTR_CHECK(info, IMEX_A_REVOKE_REASON))
		return -EINVAL;
	nla_memcpy(&node, a[IMEX_A_HANDLE_NODE], sizeof(node));
	reason = nla_get_u32(a[IMEX_A_REVOKE_REASON]);
	by_id = a[IMEX_A_HANDLE_ID];
	if (by_id)
		id = nla_get_u64(a[IMEX_A_HANDLE_ID]);
	by_domain = a[IMEX_A_DOMAIN_UUID];
	if (by_domain)
		nla_memcpy(&domain, a[IMEX_A_DOMAIN_UUID], sizeof(domain));
	msg = imex_reply_new(info, IMEX_CMD_IMPORT_REVOKE, &hdr);
	if (IS_ERR(msg))
		return PTR_ERR(msg);

	list_for_each_entry_safe(im, tmp, &imex_remote_imports, enode) {
		if (!uuid_equal(&im->node_uuid, &node) ||
		    (by_id && im->id != id) ||
		    (by_domain && !uuid_equal(&im->domain_uuid, &domain)))
			continue;
		imex_import_revoke(im, reason);
		count++;
	}
	list_for_each_entry(p, &imex_pendings, list) {
		if (!uuid_equal(&p->node_uuid, &node) ||
		    (by_id && p->handle_id != id) ||
		    (by_domain && !uuid_equal(&p->domain_uuid, &domain)))
			continue;
		if (p->done && !p->status && p->revoke < 0) {
			p->revoke = reason;
			count++;
		} else if (!p->done && !by_id) {
			imex_pending_finish(p, EHOSTUNREACH);
		}
	}
	imex_revoked_flush();
	if (nla_put_u32(msg, IMEX_A_IMPORT_COUNT, count))
		err = -EMSGSIZE;
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}
