// SPDX-License-Identifier: GPL-2.0
/*
 * Revocation callbacks of the in-kernel API (contract in imex_api.h): a
 * driver that set something up for a channel learns when the grant ends or
 * the domain goes DOWN.
 *
 * A registration sits on its channel's list, and a channel with
 * registrations on its domain's list, so that neither a revocation nor a
 * domain going DOWN has to scan.  Both happen under imex_lock, where the
 * callbacks must not run (they may sleep and call back into the API, which
 * takes imex_lock): they move to imex_kapi_pending, and one work item calls
 * them, one at a time, holding no lock of ours.
 *
 * Locking: ch->kapi_node and d->kapi_channels are under imex_lock.
 * imex_kapi_lock (a spinlock taken inside imex_lock) guards each
 * registration's list and state and which one is being called, so that
 * unregistering needs no imex_lock and can wait for its callback.
 */
#include <linux/lockdep.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include "imex.h"

enum {
	IMEX_CB_IDLE,		/* not registered, unregistered or called */
	IMEX_CB_ARMED,		/* on its channel's revoke_cbs */
	IMEX_CB_PENDING,	/* on imex_kapi_pending */
};

static DEFINE_SPINLOCK(imex_kapi_lock);
static LIST_HEAD(imex_kapi_pending);
static struct imex_revoke_cb *imex_kapi_running;
static struct task_struct *imex_kapi_runner;	/* the worker calling it */
static DECLARE_WAIT_QUEUE_HEAD(imex_kapi_done);

static void imex_kapi_call(struct work_struct *work);
static DECLARE_WORK(imex_kapi_work, imex_kapi_call);

#ifdef CONFIG_LOCKDEP
/* As for flush_work(): unregistering under a lock the callback takes. */
static struct lock_class_key imex_kapi_key;
static struct lockdep_map imex_kapi_map =
	STATIC_LOCKDEP_MAP_INIT("imex_revoke_cb", &imex_kapi_key);

static void imex_kapi_map_acquire(void)
{
	lock_map_acquire(&imex_kapi_map);
}

static void imex_kapi_map_release(void)
{
	lock_map_release(&imex_kapi_map);
}
#else
static void imex_kapi_map_acquire(void) { }
static void imex_kapi_map_release(void) { }
#endif

static void imex_kapi_call(struct work_struct *work)
{
	void (*fn)(struct imex_revoke_cb *cb);
	struct imex_revoke_cb *cb;

	spin_lock(&imex_kapi_lock);
	while ((cb = list_first_entry_or_null(&imex_kapi_pending,
					      struct imex_revoke_cb, node))) {
		list_del_init(&cb->node);
		cb->state = IMEX_CB_IDLE;
		fn = cb->fn;
		imex_kapi_running = cb;
		imex_kapi_runner = current;
		spin_unlock(&imex_kapi_lock);

		imex_kapi_map_acquire();
		fn(cb);		/* may free cb or register it again */
		imex_kapi_map_release();
		cond_resched();

		spin_lock(&imex_kapi_lock);
		imex_kapi_running = NULL;
		imex_kapi_runner = NULL;
		wake_up_all(&imex_kapi_done);
	}
	spin_unlock(&imex_kapi_lock);
}

/* Under imex_lock: @ch's registrations are due; true if it had any. */
static bool imex_kapi_fire(struct imex_channel *ch)
{
	struct imex_revoke_cb *cb;

	list_del_init(&ch->kapi_node);
	if (list_empty(&ch->revoke_cbs))
		return false;
	list_for_each_entry(cb, &ch->revoke_cbs, node)
		cb->state = IMEX_CB_PENDING;
	list_splice_tail_init(&ch->revoke_cbs, &imex_kapi_pending);
	return true;
}

/* Under imex_lock, once @ch is marked revoked. */
void imex_kapi_channel_revoked(struct imex_channel *ch)
{
	bool due;

	if (list_empty(&ch->kapi_node))
		return;
	spin_lock(&imex_kapi_lock);
	due = imex_kapi_fire(ch);
	spin_unlock(&imex_kapi_lock);
	if (due)
		queue_work(system_long_wq, &imex_kapi_work);
}

/*
 * Under imex_lock, after @d's state changed: imex_channel_ident() answers
 * accordingly before any callback is queued, and not usable ends
 * registrations.
 */
void imex_kapi_domain_state(struct imex_domain *d)
{
	bool usable = imex_domain_usable(d), due = false;
	struct imex_channel *ch, *tmp;

	if (usable != d->kapi_usable) {
		d->kapi_usable = usable;
		imex_domain_channels_usable(d, usable);
	}
	if (usable)
		return;
	spin_lock(&imex_kapi_lock);
	list_for_each_entry_safe(ch, tmp, &d->kapi_channels, kapi_node)
		due |= imex_kapi_fire(ch);
	spin_unlock(&imex_kapi_lock);
	if (due)
		queue_work(system_long_wq, &imex_kapi_work);
}

int imex_channel_notify_register(struct imex_channel *ch,
				 struct imex_revoke_cb *cb,
				 void (*fn)(struct imex_revoke_cb *cb))
{
	int err = 0;

	if (!fn)
		return -EINVAL;
	mutex_lock(&imex_lock);
	/* Under imex_lock, as revocation and state changes are. */
	if (!ch->domain) {
		err = -ENODEV;
		goto out;
	}
	if (!imex_domain_usable(ch->domain)) {
		err = -ENOLINK;
		goto out;
	}
	spin_lock(&imex_kapi_lock);
	if (cb->state != IMEX_CB_IDLE) {
		err = -EBUSY;
	} else {
		cb->fn = fn;
		cb->state = IMEX_CB_ARMED;
		list_add_tail(&cb->node, &ch->revoke_cbs);
	}
	spin_unlock(&imex_kapi_lock);
	if (!err && list_empty(&ch->kapi_node))
		list_add_tail(&ch->kapi_node, &ch->domain->kapi_channels);
out:
	mutex_unlock(&imex_lock);
	return err;
}
EXPORT_SYMBOL_GPL(imex_channel_notify_register);

static bool imex_kapi_is_running(const struct imex_revoke_cb *cb)
{
	bool running;

	spin_lock(&imex_kapi_lock);
	running = imex_kapi_running == cb;
	spin_unlock(&imex_kapi_lock);
	return running;
}

bool imex_channel_notify_unregister(struct imex_revoke_cb *cb)
{
	bool stopped = false, worker;

	spin_lock(&imex_kapi_lock);
	/*
	 * An armed registration's channel is not revoked yet (revocation
	 * takes this lock to move it), so its list is still there.
	 */
	if (cb->state != IMEX_CB_IDLE) {
		list_del_init(&cb->node);
		cb->state = IMEX_CB_IDLE;
		stopped = true;
	}
	/* Only one callback runs: the worker never waits for another. */
	worker = imex_kapi_runner == current;
	spin_unlock(&imex_kapi_lock);
	if (!worker) {
		imex_kapi_map_acquire();
		imex_kapi_map_release();
		wait_event(imex_kapi_done, !imex_kapi_is_running(cb));
	}
	return stopped;
}
EXPORT_SYMBOL_GPL(imex_channel_notify_unregister);

/* At unload: no registrant module is left, so nothing can be pending. */
void imex_kapi_exit(void)
{
	cancel_work_sync(&imex_kapi_work);
	WARN_ON(!list_empty(&imex_kapi_pending));
}
