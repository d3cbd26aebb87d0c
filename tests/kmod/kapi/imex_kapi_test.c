// SPDX-License-Identifier: GPL-2.0
/*
 * imex_kapi_test: resolves channel fds through imex.ko's exported API, as a
 * GPU driver enforcing the channel boundary would, for the tests and the
 * benchmark of the resolve path; exports and imports through it; and
 * registers revocation callbacks, checking how and how often they are
 * called, and that none comes after unregistering (or after unload).
 */
/* First: the header must build on its own. */
#include "imex_api.h"

#include <linux/delay.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "imex_kapi_test.h"

static unsigned int cb_delay_ms = 1;
module_param(cb_delay_ms, uint, 0444);
MODULE_PARM_DESC(cb_delay_ms, "sleep in each callback, ms (at most 1000): proves it may sleep, widens races");

/* A registration in a slot; freed at unload only (see kapi_watch_del()). */
struct kapi_watch {
	struct imex_revoke_cb	cb;
	struct imex_channel	*ch;
	struct list_head	gone;		/* kapi_gone, once unregistered */
	bool			unregistered;
	unsigned int		registered;	/* successful registrations */
	unsigned int		stopped;	/* ones unregister stopped */
	/* Written by the callback; calls last (release), read first. */
	int			cb_ident;
	int			cb_register;
	u32			flags;
	unsigned int		calls;
};

static DEFINE_MUTEX(kapi_lock);		/* the slots; never in a callback */
static struct kapi_watch *kapi_slots[IMEX_KAPI_WATCH_SLOTS];
static LIST_HEAD(kapi_gone);
static unsigned int kapi_registered, kapi_called, kapi_stopped;

static void kapi_probe(struct imex_revoke_cb *cb)
{
}

static void kapi_revoked(struct imex_revoke_cb *cb)
{
	struct kapi_watch *w = container_of(cb, struct kapi_watch, cb);
	struct imex_revoke_cb probe = {};
	struct imex_channel_ident id;
	u32 flags = READ_ONCE(w->flags);
	int err;

	WARN(READ_ONCE(w->unregistered), "imex_kapi_test: a callback after unregistering\n");
	if (!in_task() || irqs_disabled() ||
	    (IS_ENABLED(CONFIG_PREEMPT_COUNT) && !preemptible()))
		flags |= IMEX_KAPI_CB_NOT_TASK;
	msleep(min(cb_delay_ms, 1000U));
	WRITE_ONCE(w->cb_ident, imex_channel_ident(w->ch, &id));
	/* Takes imex.ko's lock: this would hang if called under it. */
	err = imex_channel_notify_register(w->ch, &probe, kapi_probe);
	if (!err)
		imex_channel_notify_unregister(&probe);
	WRITE_ONCE(w->cb_register, err);
	WRITE_ONCE(w->flags, flags);
	/* Pairs with kapi_watch_fill(): the fields above before the count. */
	smp_store_release(&w->calls, w->calls + 1);
}

static void kapi_watch_fill(struct kapi_watch *w, struct imex_kapi_watch *r)
{
	struct imex_channel_ident id;

	r->calls = smp_load_acquire(&w->calls);	/* see kapi_revoked() */
	r->cb_ident = READ_ONCE(w->cb_ident);
	r->cb_register = READ_ONCE(w->cb_register);
	r->flags |= READ_ONCE(w->flags);
	r->ident = imex_channel_ident(w->ch, &id);
}

static int kapi_watch_add(struct imex_kapi_watch *r)
{
	struct kapi_watch *w;
	struct imex_channel *ch;

	if (kapi_slots[r->slot])
		return -EBUSY;
	ch = imex_channel_get_fd(r->fd);
	if (IS_ERR(ch)) {
		r->error = PTR_ERR(ch);
		return 0;
	}
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w) {
		imex_channel_put(ch);
		return -ENOMEM;
	}
	w->ch = ch;
	r->error = imex_channel_notify_register(ch, &w->cb, kapi_revoked);
	if (!r->error) {
		w->registered++;
		kapi_registered++;
	}
	kapi_slots[r->slot] = w;
	kapi_watch_fill(w, r);
	return 0;
}

/*
 * After unregistering, the callback must neither run nor be running: the
 * memory stays (poisoned by ->unregistered) until unload so that a late
 * call is caught by a WARN, not only by KASAN.  Each registration ends
 * exactly once: called, or stopped by unregistering.
 */
static void kapi_watch_del(struct kapi_watch *w, struct imex_kapi_watch *r)
{
	if (imex_channel_notify_unregister(&w->cb)) {
		w->stopped++;
		kapi_stopped++;
		if (r)
			r->flags |= IMEX_KAPI_STOPPED;
	}
	kapi_called += w->calls;
	WARN(w->calls + w->stopped != w->registered,
	     "imex_kapi_test: %u registrations, %u calls, %u stopped\n",
	     w->registered, w->calls, w->stopped);
	if (r)
		kapi_watch_fill(w, r);
	WRITE_ONCE(w->unregistered, true);
	imex_channel_put(w->ch);
	w->ch = NULL;
	list_add(&w->gone, &kapi_gone);
}

static long kapi_watch(unsigned int cmd, void __user *arg)
{
	struct imex_kapi_watch r;
	struct kapi_watch *w;
	long err = 0;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	if (r.slot >= IMEX_KAPI_WATCH_SLOTS)
		return -EINVAL;
	r.flags = 0;
	mutex_lock(&kapi_lock);
	w = kapi_slots[r.slot];
	if (cmd == IMEX_KAPI_WATCH_ADD) {
		err = kapi_watch_add(&r);
	} else if (!w) {
		err = -ENOENT;
	} else if (cmd == IMEX_KAPI_WATCH_REARM) {
		r.error = imex_channel_notify_register(w->ch, &w->cb,
						       kapi_revoked);
		if (!r.error) {
			w->registered++;
			kapi_registered++;
		}
		kapi_watch_fill(w, &r);
	} else if (cmd == IMEX_KAPI_WATCH_GET) {
		kapi_watch_fill(w, &r);
	} else {
		kapi_slots[r.slot] = NULL;
		kapi_watch_del(w, &r);
	}
	mutex_unlock(&kapi_lock);
	if (!err && copy_to_user(arg, &r, sizeof(r)))
		err = -EFAULT;
	return err;
}

static long kapi_resolve(void __user *arg)
{
	struct imex_kapi_resolve r;
	struct imex_channel_ident id;
	struct imex_channel *ch;
	struct file *file;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	/* The per-call path; kapi_watch_add() takes the counted one. */
	ch = imex_channel_fget(r.fd, &file);
	if (IS_ERR(ch)) {
		r.error = PTR_ERR(ch);
		WARN_ON(file);
	} else {
		r.error = imex_channel_ident(ch, &id);
		if (!r.error) {
			memcpy(r.domain_uuid, &id.domain_uuid, 16);
			r.channel_id = id.channel_id;
			r.fabric_partition = id.fabric_partition;
		}
		fput(file);
	}
	return copy_to_user(arg, &r, sizeof(r)) ? -EFAULT : 0;
}

static long kapi_bench(void __user *arg)
{
	struct imex_kapi_bench b;
	struct imex_channel_ident id;
	struct imex_channel *ch;
	struct file *f;
	ktime_t t0;
	u32 i;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	if (!b.iterations || b.iterations > 10000000)
		return -EINVAL;
	t0 = ktime_get();
	for (i = 0; i < b.iterations; i++) {
		ch = imex_channel_fget(b.fd, &f);
		if (IS_ERR(ch))
			return PTR_ERR(ch);
		imex_channel_ident(ch, &id);
		fput(f);
	}
	b.resolve_ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	t0 = ktime_get();
	for (i = 0; i < b.iterations; i++) {
		f = fget(b.fd);
		if (!f)
			return -EBADF;
		fput(f);
	}
	b.fget_ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	return copy_to_user(arg, &b, sizeof(b)) ? -EFAULT : 0;
}

static long kapi_xfer(void __user *arg)
{
	struct imex_kapi_xfer *x;
	struct file *f;
	long err = 0;

	x = kmalloc(sizeof(*x), GFP_KERNEL);
	if (!x)
		return -ENOMEM;
	if (copy_from_user(x, arg, sizeof(*x))) {
		err = -EFAULT;
		goto out;
	}
	f = fget(x->fd);
	if (!f) {
		x->error = -EBADF;
	} else {
		switch (x->op) {
		case IMEX_KAPI_EXPORT:
			x->error = imex_export(f, x->desc,
					       min_t(u32, x->len, sizeof(x->desc)),
					       &x->handle);
			break;
		case IMEX_KAPI_UNEXPORT:
			x->error = imex_unexport(f, &x->handle);
			break;
		case IMEX_KAPI_IMPORT:
			x->len = min_t(u32, x->len, sizeof(x->desc));
			x->error = imex_import(f, &x->handle, x->desc, &x->len,
					       x->timeout_ms);
			break;
		default:
			x->error = -EINVAL;
		}
		fput(f);
	}
	if (copy_to_user(arg, x, sizeof(*x)))
		err = -EFAULT;
out:
	kfree(x);
	return err;
}

static long kapi_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case IMEX_KAPI_RESOLVE:
		return kapi_resolve((void __user *)arg);
	case IMEX_KAPI_BENCH:
		return kapi_bench((void __user *)arg);
	case IMEX_KAPI_XFER:
		return kapi_xfer((void __user *)arg);
	case IMEX_KAPI_WATCH_ADD:
	case IMEX_KAPI_WATCH_REARM:
	case IMEX_KAPI_WATCH_GET:
	case IMEX_KAPI_WATCH_DEL:
		return kapi_watch(cmd, (void __user *)arg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations kapi_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= kapi_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice kapi_dev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "imex-kapi-test",
	.fops	= &kapi_fops,
	.mode	= 0600,
};

static int __init kapi_init(void)
{
	return misc_register(&kapi_dev);
}

/* Callbacks may be running or pending right now (revocations under way). */
static void __exit kapi_exit(void)
{
	struct kapi_watch *w, *tmp;
	unsigned int i;

	misc_deregister(&kapi_dev);
	for (i = 0; i < IMEX_KAPI_WATCH_SLOTS; i++) {
		if (kapi_slots[i])
			kapi_watch_del(kapi_slots[i], NULL);
		kapi_slots[i] = NULL;
	}
	pr_info("imex_kapi_test: unloaded: %u registrations, %u called, %u stopped\n",
		kapi_registered, kapi_called, kapi_stopped);
	list_for_each_entry_safe(w, tmp, &kapi_gone, gone)
		kfree(w);
}

module_init(kapi_init);
module_exit(kapi_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Test client of imex.ko's in-kernel channel API");
