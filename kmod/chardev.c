// SPDX-License-Identifier: GPL-2.0
/*
 * The imex-channels character devices: the region, the device nodes under
 * /dev/imex-channels/ with the grant's owner and mode, the file operations,
 * and the in-kernel API that resolves a channel fd for other drivers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "imex.h"

/*
 * Device numbers.  Every grant gets its own minor, not its channel id: a
 * node made for a grant (a container runtime's mknod from a CDI spec, which
 * outlives the grant) must not reach the next grant of the same id.  Minors
 * are allocated cyclically over the region's whole 20-bit range, so a
 * number comes back only after every other free one was handed out, about
 * a million reservations later (a number is taken when DOMAIN_SET reserves
 * the channel, so sets that fail count too); the wrap is logged.
 * Generation bits above the id would leave no room at max_channels=2^20;
 * this works for any max_channels, which still bounds the ids and so the
 * live minors (one per reserved or granted channel).  A minor is freed
 * when its grant ends: open files never resolve through it, and the device
 * FIFO (imex.h) deletes the old device before a later grant's device_add()
 * could reuse the number.
 */
static_assert(MINORMASK + 1 == IMEX_MINORS);

/* minor -> reserved or granted channel; changed under imex_lock. */
static DEFINE_XARRAY_ALLOC(imex_minors);
static u32 imex_minor_next;

/* Under imex_lock. */
int imex_minor_alloc(struct imex_channel *ch)
{
	int err;

	err = xa_alloc_cyclic(&imex_minors, &ch->minor, ch,
			      XA_LIMIT(0, IMEX_MINORS - 1), &imex_minor_next,
			      GFP_KERNEL);
	if (err == 1)
		pr_info_ratelimited("device minors wrapped: a node kept from before could reach a current grant; recreate stale nodes from current CDI specs\n");
	return err < 0 ? err : 0;
}

/* Under imex_lock: from now on the number opens nothing. */
void imex_minor_free(struct imex_channel *ch)
{
	xa_erase(&imex_minors, ch->minor);
}

/*
 * One device of one grant.  A grant has one at a time; an owner change
 * replaces it.  Each is queued for adding once and for deleting once, in
 * that order, and freed after the delete.
 */
struct imex_devop {
	struct list_head	node;		/* imex_dev_queue */
	bool			del;
};

struct imex_chdev {
	struct device		dev;
	struct imex_channel	*ch;		/* a reference, for dev_added */
	struct imex_devop	add, del;
	bool			added;		/* under imex_dev_lock */
	u32			id;
	umode_t			mode;
	kuid_t			uid;
	kgid_t			gid;
};

static dev_t imex_devt;
static struct cdev imex_cdev;
static struct class *imex_class;

/* See the locking comment in imex.h. */
static DEFINE_MUTEX(imex_dev_lock);
static LIST_HEAD(imex_dev_queue);		/* under imex_lock */
static void imex_dev_work_fn(struct work_struct *work);
static DECLARE_WORK(imex_dev_work, imex_dev_work_fn);

unsigned int imex_chrdev_major(void)
{
	return MAJOR(imex_devt);
}

/* devtmpfs asks this for the node's path and, on creation, its owner/mode. */
static char *imex_chdev_devnode(IMEX_DEVNODE_CONST struct device *dev,
				umode_t *mode, kuid_t *uid, kgid_t *gid)
{
	const struct imex_chdev *cd = container_of(dev, struct imex_chdev, dev);

	if (mode)
		*mode = cd->mode;
	if (uid)
		*uid = cd->uid;
	if (gid)
		*gid = cd->gid;
	/*
	 * Must not fail: without it devtmpfs falls back to the device's name,
	 * creating the node at the wrong path or, on removal, leaving the
	 * old node (and its owner and mode) for the next grant of the id.
	 */
	return kasprintf(GFP_KERNEL | __GFP_NOFAIL, IMEX_DEVDIR "/channel%u",
			 cd->id);
}

static const struct device_type imex_chdev_type = {
	.name = "imex_channel",
	.devnode = imex_chdev_devnode,
};

static void imex_chdev_release(struct device *dev)
{
	struct imex_chdev *cd = container_of(dev, struct imex_chdev, dev);

	imex_channel_put(cd->ch);
	kfree(cd);
}

/* Under imex_lock: a device for @ch's grant, to be queued for adding. */
struct imex_chdev *imex_chdev_new(struct imex_channel *ch, kuid_t uid,
				  kgid_t gid, umode_t mode)
{
	struct imex_chdev *cd = kzalloc(sizeof(*cd), GFP_KERNEL);

	if (!cd)
		return NULL;
	cd->del.del = true;
	cd->id = ch->id;
	cd->mode = mode;
	cd->uid = uid;
	cd->gid = gid;
	device_initialize(&cd->dev);
	/*
	 * No power management: skips the power/ sysfs group, a third of a
	 * channel's kernel memory.
	 */
	device_set_pm_not_required(&cd->dev);
	cd->dev.class = imex_class;
	cd->dev.type = &imex_chdev_type;
	cd->dev.devt = MKDEV(MAJOR(imex_devt), ch->minor);
	cd->dev.release = imex_chdev_release;
	kref_get(&ch->ref);	/* dropped in imex_chdev_release() */
	cd->ch = ch;
	if (dev_set_name(&cd->dev, "imex-channel%u", ch->id)) {
		put_device(&cd->dev);
		return NULL;
	}
	return cd;
}

/* A device from imex_chdev_new() that was never queued. */
void imex_chdev_discard(struct imex_chdev *cd)
{
	put_device(&cd->dev);
}

/* Under imex_lock, as the changes happen: the FIFO keeps their order. */
void imex_chdev_queue_add(struct imex_chdev *cd)
{
	list_add_tail(&cd->add.node, &imex_dev_queue);
	schedule_work(&imex_dev_work);
}

void imex_chdev_queue_del(struct imex_chdev *cd)
{
	list_add_tail(&cd->del.node, &imex_dev_queue);
	schedule_work(&imex_dev_work);
}

/* Under imex_dev_lock. */
static void imex_devop_run(struct imex_devop *op)
{
	struct imex_chdev *cd;
	int err;

	if (op->del) {
		cd = container_of(op, struct imex_chdev, del);
		if (cd->added)
			device_del(&cd->dev);	/* returns once the node is gone */
		put_device(&cd->dev);
		return;
	}
	cd = container_of(op, struct imex_chdev, add);
	err = device_add(&cd->dev);
	if (err) {
		pr_warn_ratelimited("channel %u: no device node: %d\n", cd->id,
				    err);
		return;
	}
	cd->added = true;
	WRITE_ONCE(cd->ch->dev_added, true);
}

/*
 * Run the device FIFO until it is empty.  Whoever holds imex_dev_lock runs
 * every batch it splices off, in order, so when this returns every device
 * change queued before the call is done, by this caller or another.
 */
void imex_dev_flush(void)
{
	struct imex_devop *op, *tmp;
	LIST_HEAD(batch);

	mutex_lock(&imex_dev_lock);
	for (;;) {
		mutex_lock(&imex_lock);
		list_splice_init(&imex_dev_queue, &batch);
		mutex_unlock(&imex_lock);
		if (list_empty(&batch))
			break;
		list_for_each_entry_safe(op, tmp, &batch, node) {
			list_del(&op->node);
			imex_devop_run(op);
			cond_resched();
		}
	}
	mutex_unlock(&imex_dev_lock);
}

static void imex_dev_work_fn(struct work_struct *work)
{
	imex_dev_flush();
}

static void imex_channel_release(struct kref *ref)
{
	kfree(container_of(ref, struct imex_channel, ref));
}

void imex_channel_put(struct imex_channel *ch)
{
	kref_put(&ch->ref, imex_channel_release);
}
EXPORT_SYMBOL_GPL(imex_channel_put);

/*
 * Open allocates nothing: an fd gets its imex_file (exports, imports and
 * revoked imports) from imex_file_get(), on its first ioctl that needs
 * one.  Until then it holds no record, so revocation has nothing of it to
 * end, and its revocation is ch->revoked.
 */
static int imex_chan_open(struct inode *inode, struct file *file)
{
	struct imex_channel *ch;
	int err = 0;

	mutex_lock(&imex_lock);
	/* A number of an ended grant finds nothing, whatever holds its id. */
	ch = xa_load(&imex_minors, iminor(inode));
	if (!ch || ch->state != IMEX_CHANNEL_GRANTED ||
	    !READ_ONCE(ch->dev_added)) {
		err = -ENXIO;
	} else if (!imex_domain_usable(ch->domain)) {
		err = -ENOLINK;
	} else {
		/*
		 * Dropped in release: revocation drops the table's reference
		 * while fds stay open, and the channel must outlive it.
		 */
		kref_get(&ch->ref);
		atomic_inc(&ch->open_count);
		file->private_data = &ch->bare;
	}
	mutex_unlock(&imex_lock);
	if (err)
		return err;
	return stream_open(inode, file);
}

/*
 * The channel of @file, a channel file: private_data points to the channel
 * pointer, whichever it is.  READ_ONCE: imex_file_get() may change it.
 */
static struct imex_channel *imex_fd_channel(struct file *file)
{
	return ((struct imex_fd *)READ_ONCE(file->private_data))->ch;
}

/* file->private_data of a channel file, for a reader of its imex_file. */
static struct imex_fd *imex_fd_of(struct file *file)
{
	/* Pairs with imex_file_get()'s release: an imex_file seen is set up. */
	return smp_load_acquire((struct imex_fd **)&file->private_data);
}

/* @fd is file->private_data: the fd's imex_file, or NULL if it has none. */
static struct imex_file *imex_file_peek(struct imex_fd *fd)
{
	return fd == &fd->ch->bare ? NULL : container_of(fd, struct imex_file, fd);
}

/*
 * The imex_file of @file, a channel file, made on first need; NULL when
 * out of memory.  Two threads may race here: imex_lock picks one, and the
 * other frees its copy.  The imex_file goes on ch->files under imex_lock
 * before any record can be added to it (those are added under imex_lock
 * too, and refused once ch->revoked is set, also under imex_lock), so
 * revocation finds every fd that holds a record.
 */
static struct imex_file *imex_file_get(struct file *file)
{
	struct imex_fd *fd = imex_fd_of(file);
	struct imex_channel *ch = fd->ch;
	struct imex_file *f = imex_file_peek(fd);

	if (f)
		return f;
	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return NULL;
	f->ch = ch;
	INIT_LIST_HEAD(&f->exports);
	INIT_LIST_HEAD(&f->imports);
	INIT_LIST_HEAD(&f->revoked);
	mutex_init(&f->revoked_lock);

	mutex_lock(&imex_lock);
	fd = file->private_data;
	if (fd == &ch->bare) {
		list_add_tail(&f->node, &ch->files);
		/* Published set up: pairs with imex_fd_of()'s acquire. */
		smp_store_release((struct imex_fd **)&file->private_data, &f->fd);
		mutex_unlock(&imex_lock);
		return f;
	}
	mutex_unlock(&imex_lock);
	mutex_destroy(&f->revoked_lock);
	kfree(f);
	return container_of(fd, struct imex_file, fd);
}

/* Under imex_lock: the fd's exports end, its imports go. */
static void imex_file_teardown(struct imex_file *f)
{
	/*
	 * Most fds never export or import: nothing to end, and the tally
	 * is empty (whoever fills it flushes it under the same lock hold).
	 * Exactly the lists and count the calls below walk.
	 */
	if (list_empty(&f->exports) && list_empty(&f->imports) &&
	    list_empty(&f->revoked) && !f->npendings)
		return;
	imex_file_end_exports(f, IMEX_REVOKE_UNEXPORTED);
	imex_revoked_flush();	/* its exports' local importers */
	imex_file_drop_imports(f);
}

/*
 * Under imex_lock, from imex_channel_revoke().  Exports first: ending them
 * revokes local imports (the channel gone, not an unexport), which can only
 * be on fds of this same channel, and those are dropped in the second pass;
 * they and the live imports count as revoked (IMPORTS_REVOKED).
 */
void imex_channel_files_revoke(struct imex_channel *ch)
{
	struct imex_import *im;
	struct imex_file *f;

	list_for_each_entry(f, &ch->files, node)
		imex_file_end_exports(f, IMEX_REVOKE_CHANNEL_GONE);
	list_for_each_entry(f, &ch->files, node) {
		list_for_each_entry(im, &f->imports, fnode)
			imex_revoked_tally(im, IMEX_REVOKE_CHANNEL_GONE);
		imex_file_drop_imports(f);
	}
	/* Pollers wait on ch->wait, woken when the caller sets ch->revoked. */
	/* The caller flushes the tally: one event for all its channels. */
}

/* After the last fput(): no ioctl or poll of @file runs any more. */
static int imex_chan_release(struct inode *inode, struct file *file)
{
	struct imex_fd *fd = file->private_data;
	struct imex_channel *ch = fd->ch;
	struct imex_file *f = imex_file_peek(fd);

	/* An fd that never needed an imex_file has nothing to take apart. */
	if (f) {
		mutex_lock(&imex_lock);
		imex_file_teardown(f);
		list_del(&f->node);
		mutex_unlock(&imex_lock);
		mutex_destroy(&f->revoked_lock);
		kfree(f);
	}
	atomic_dec(&ch->open_count);
	imex_channel_put(ch);
	return 0;
}

/*
 * Allocates nothing and takes no lock: every poller of a channel waits on
 * ch->wait, woken by the channel's revocation and by any revoked import on
 * it (the other fds of the channel poll again and find nothing of theirs;
 * revoked imports are rare).  An fd that gets its imex_file after its
 * poller registered is still heard: the wake comes through the channel.
 */
static __poll_t imex_chan_poll(struct file *file, poll_table *wait)
{
	struct imex_fd *fd = imex_fd_of(file);
	struct imex_channel *ch = fd->ch;
	struct imex_file *f = imex_file_peek(fd);

	poll_wait(file, &ch->wait, wait);
	if (READ_ONCE(ch->revoked))
		return EPOLLERR | EPOLLHUP | EPOLLPRI;
	return f && READ_ONCE(f->nrevoked) ? EPOLLPRI : 0;
}

static long imex_chan_info(struct imex_channel *ch, void __user *arg)
{
	struct imex_channel_info info;
	int err = 0;

	memset(&info, 0, sizeof(info));
	mutex_lock(&imex_lock);
	if (ch->revoked) {
		err = -ENODEV;
	} else {
		memcpy(info.domain_uuid, &ch->domain_uuid, IMEX_UUID_LEN);
		strscpy(info.domain_name, ch->domain->name,
			sizeof(info.domain_name));
		memcpy(info.fabric_uuid, &ch->fabric_uuid, IMEX_UUID_LEN);
		info.fabric_partition = ch->fabric_partition;
		info.channel_id = ch->id;
		info.domain_state = ch->domain->state;
	}
	mutex_unlock(&imex_lock);
	if (err)
		return err;
	if (copy_to_user(arg, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

static long imex_chan_export(struct imex_file *f, void __user *arg)
{
	struct imex_export_arg ea;
	int err;

	if (copy_from_user(&ea, arg, sizeof(ea)))
		return -EFAULT;
	if (ea.flags || !ea.desc_len || ea.desc_len > IMEX_DESC_MAX)
		return -EINVAL;
	err = imex_file_export(f, ea.desc, ea.desc_len, &ea.handle);
	if (err)
		return err;
	/* A handle the caller cannot learn would be an export nobody ends. */
	if (copy_to_user(arg, &ea.handle, sizeof(ea.handle))) {
		imex_file_unexport(f, &ea.handle);
		return -EFAULT;
	}
	return 0;
}

static long imex_chan_unexport(struct imex_file *f, void __user *arg)
{
	struct imex_handle h;

	if (copy_from_user(&h, arg, sizeof(h)))
		return -EFAULT;
	return imex_file_unexport(f, &h);
}

static long imex_chan_import(struct imex_file *f, void __user *arg)
{
	struct imex_import_arg *ia;
	bool held;
	int err;

	ia = kmalloc(sizeof(*ia), GFP_KERNEL);
	if (!ia)
		return -ENOMEM;
	if (copy_from_user(ia, arg, sizeof(*ia))) {
		err = -EFAULT;
		goto out;
	}
	if (ia->flags || ia->reserved ||
	    ia->timeout_ms > IMEX_IMPORT_TIMEOUT_MAX_MS) {
		err = -EINVAL;
		goto out;
	}
	memset(ia->desc, 0, sizeof(ia->desc));
	err = imex_file_import(f, &ia->handle, ia->timeout_ms, ia->desc,
			       &ia->desc_len, &held);
	if (err)
		goto out;
	if (copy_to_user(arg, ia, sizeof(*ia))) {
		/* Undo only what this call added. */
		if (held)
			imex_file_unimport(f, &ia->handle);
		err = -EFAULT;
	}
out:
	kfree(ia);
	return err;
}

static long imex_chan_unimport(struct imex_file *f, void __user *arg)
{
	struct imex_handle h;

	if (copy_from_user(&h, arg, sizeof(h)))
		return -EFAULT;
	return imex_file_unimport(f, &h);
}

static long imex_chan_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct imex_file *f;

	switch (cmd) {
	case IMEX_IOC_CHANNEL_INFO:
		return imex_chan_info(imex_fd_channel(file), uarg);
	case IMEX_IOC_EXPORT:
	case IMEX_IOC_UNEXPORT:
	case IMEX_IOC_IMPORT:
	case IMEX_IOC_UNIMPORT:
	case IMEX_IOC_REVOKED:
		break;
	default:
		return -ENOTTY;
	}
	if (cmd == IMEX_IOC_UNEXPORT || cmd == IMEX_IOC_UNIMPORT) {
		struct imex_fd *fd = imex_fd_of(file);

		/* No imex_file, no record: answered as the record calls would. */
		if (!imex_file_peek(fd)) {
			struct imex_handle h;

			if (copy_from_user(&h, uarg, sizeof(h)))
				return -EFAULT;
			return READ_ONCE(fd->ch->revoked) ? -ENODEV : -ENOENT;
		}
	}
	f = imex_file_get(file);
	if (!f)
		return -ENOMEM;
	switch (cmd) {
	case IMEX_IOC_EXPORT:
		return imex_chan_export(f, uarg);
	case IMEX_IOC_UNEXPORT:
		return imex_chan_unexport(f, uarg);
	case IMEX_IOC_IMPORT:
		return imex_chan_import(f, uarg);
	case IMEX_IOC_UNIMPORT:
		return imex_chan_unimport(f, uarg);
	default:	/* IMEX_IOC_REVOKED */
		return imex_file_revoked(f, uarg);
	}
}

static const struct file_operations imex_chan_fops = {
	.owner		= THIS_MODULE,
	.open		= imex_chan_open,
	.release	= imex_chan_release,
	.poll		= imex_chan_poll,
	.unlocked_ioctl	= imex_chan_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	/* No llseek: stream_open() makes lseek() fail with ESPIPE. */
};

/* The in-kernel API's imex_file of @file: ERR_PTR when not a channel. */
static struct imex_file *imex_file_of(struct file *file)
{
	struct imex_file *f;

	if (!file || file->f_op != &imex_chan_fops)
		return ERR_PTR(-EINVAL);
	f = imex_file_get(file);
	return f ? f : ERR_PTR(-ENOMEM);
}

struct imex_channel *imex_channel_get_file(struct file *file)
{
	struct imex_channel *ch;

	if (!file || file->f_op != &imex_chan_fops)
		return ERR_PTR(-EINVAL);
	ch = imex_fd_channel(file);
	kref_get(&ch->ref);
	return ch;
}
EXPORT_SYMBOL_GPL(imex_channel_get_file);

struct imex_channel *imex_channel_get_fd(int fd)
{
	struct imex_channel *ch;
	struct fd f = fdget(fd);

	if (!fd_file(f))
		return ERR_PTR(-EBADF);
	ch = imex_channel_get_file(fd_file(f));
	fdput(f);
	return ch;
}
EXPORT_SYMBOL_GPL(imex_channel_get_fd);

/*
 * The resolve path a driver takes on every call that names a channel fd:
 * it must cost what fget()/fput() cost, so each step is accounted for.
 * Lifetime: the open file holds a channel reference from open to release,
 * release runs only after the last fput(), and f->ch never changes, so the
 * caller's file reference pins the channel and no kref is taken here.
 * Isolation does not need one either: the channel object is the grant's
 * (a regrant of the id is a new object, reached through a new node and
 * minor), and whether that grant still holds is ch->kapi_err, which
 * imex_channel_ident() reads; a revoked or DOWN channel resolves, and is
 * refused there.
 */
struct imex_channel *imex_channel_fget(int fd, struct file **filep)
{
	/* The caller's one reference, the one fget()/fput() cost. */
	struct file *file = fget(fd);

	/* *filep is stored once per path: NULL on failure, as documented. */
	if (unlikely(!file)) {
		*filep = NULL;
		return ERR_PTR(-EBADF);
	}
	/* The f_op test is the only proof that @fd is an IMEX channel. */
	if (unlikely(file->f_op != &imex_chan_fops)) {
		*filep = NULL;
		fput(file);
		return ERR_PTR(-EINVAL);
	}
	*filep = file;
	/*
	 * Two dependent loads: private_data, then the channel pointer it
	 * points to (ch->bare or the imex_file's, the same channel).
	 */
	return imex_fd_channel(file);
}
EXPORT_SYMBOL_GPL(imex_channel_fget);

/*
 * Identity fields are fixed at grant time; whether the grant holds is one
 * word of the channel itself (kapi_err in imex.h), so this takes no lock,
 * enters no RCU section and never touches the domain, which may be freed
 * under it once the channel is revoked.
 */
int imex_channel_ident(struct imex_channel *ch, struct imex_channel_ident *id)
{
	/*
	 * Written under imex_lock at grant, revocation and each flip of
	 * the domain's usability; the answer holds at the instant of the
	 * call only, as documented, so an unlocked read is all it needs.
	 */
	int err = READ_ONCE(ch->kapi_err);

	if (unlikely(err))
		return err;
	/* What the caller asked for; fixed at grant, so read unlocked. */
	uuid_copy(&id->domain_uuid, &ch->domain_uuid);
	uuid_copy(&id->fabric_uuid, &ch->fabric_uuid);
	id->fabric_partition = ch->fabric_partition;
	id->channel_id = ch->id;
	return 0;
}
EXPORT_SYMBOL_GPL(imex_channel_ident);

/*
 * The in-kernel export/import API: the same operations as the ioctls, on a
 * file the caller holds a reference to (so the release cannot run under it).
 */
int imex_export(struct file *file, const void *desc, u32 len,
		struct imex_handle *h)
{
	struct imex_file *f = imex_file_of(file);

	if (IS_ERR(f))
		return PTR_ERR(f);
	return imex_file_export(f, desc, len, h);
}
EXPORT_SYMBOL_GPL(imex_export);

int imex_unexport(struct file *file, const struct imex_handle *h)
{
	struct imex_file *f = imex_file_of(file);

	if (IS_ERR(f))
		return PTR_ERR(f);
	return imex_file_unexport(f, h);
}
EXPORT_SYMBOL_GPL(imex_unexport);

int imex_import(struct file *file, const struct imex_handle *h, void *desc,
		u32 *len, unsigned int timeout_ms)
{
	u8 buf[IMEX_DESC_MAX];
	struct imex_file *f;
	u32 n = 0;
	bool held;
	int err;

	if (!len)
		return -EINVAL;
	f = imex_file_of(file);
	if (IS_ERR(f))
		return PTR_ERR(f);
	err = imex_file_import(f, h, timeout_ms, buf, &n, &held);
	if (err)
		return err;
	if (n > *len) {
		if (held)
			imex_file_unimport(f, h);
		*len = n;
		return -EMSGSIZE;
	}
	memcpy(desc, buf, n);
	*len = n;
	return 0;
}
EXPORT_SYMBOL_GPL(imex_import);

int imex_chrdev_init(void)
{
	int err;

	imex_class = imex_class_create("imex");
	if (IS_ERR(imex_class))
		return PTR_ERR(imex_class);
	err = alloc_chrdev_region(&imex_devt, 0, IMEX_MINORS, IMEX_CHRDEV_NAME);
	if (err)
		goto err_class;
	cdev_init(&imex_cdev, &imex_chan_fops);
	imex_cdev.owner = THIS_MODULE;
	err = cdev_add(&imex_cdev, imex_devt, IMEX_MINORS);
	if (err)
		goto err_region;
	return 0;

err_region:
	unregister_chrdev_region(imex_devt, IMEX_MINORS);
err_class:
	class_destroy(imex_class);
	return err;
}

/* After every channel was revoked: their devices go before the class. */
void imex_chrdev_exit(void)
{
	cancel_work_sync(&imex_dev_work);
	imex_dev_flush();
	WARN_ON(!xa_empty(&imex_minors));
	cdev_del(&imex_cdev);
	unregister_chrdev_region(imex_devt, IMEX_MINORS);
	class_destroy(imex_class);
}
