// SPDX-License-Identifier: GPL-2.0
/*
 * imex_kapi_test: resolves channel fds through imex.ko's exported API, as a
 * GPU driver enforcing the channel boundary would, for the tests and the
 * benchmark of the resolve path; and exports and imports through it.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "imex_api.h"
#include "imex_kapi_test.h"

static long kapi_resolve(void __user *arg)
{
	struct imex_kapi_resolve r;
	struct imex_channel_ident id;
	struct imex_channel *ch;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	ch = imex_channel_get_fd(r.fd);
	if (IS_ERR(ch)) {
		r.error = PTR_ERR(ch);
	} else {
		r.error = imex_channel_ident(ch, &id);
		if (!r.error) {
			memcpy(r.domain_uuid, &id.domain_uuid, 16);
			r.channel_id = id.channel_id;
			r.fabric_partition = id.fabric_partition;
		}
		imex_channel_put(ch);
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
		ch = imex_channel_get_fd(b.fd);
		if (IS_ERR(ch))
			return PTR_ERR(ch);
		imex_channel_ident(ch, &id);
		imex_channel_put(ch);
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

module_misc_device(kapi_dev);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Test client of imex.ko's in-kernel channel API");
