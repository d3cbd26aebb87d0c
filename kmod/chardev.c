// SPDX-License-Identifier: GPL-2.0
/*
 * The imex-channels character devices: the region, the device nodes under
 * /dev/imex-channels/ with the grant's owner and mode, the file operations,
 * and the in-kernel API that resolves a channel fd for other drivers.
 */
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "imex.h"

struct imex_chdev {
	struct device	dev;
	u32		id;
	umode_t		mode;
	kuid_t		uid;
	kgid_t		gid;
};

static dev_t imex_devt;
static struct cdev imex_cdev;
static struct class *imex_class;

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
	return kasprintf(GFP_KERNEL, IMEX_DEVDIR "/channel%u", cd->id);
}

static const struct device_type imex_chdev_type = {
	.name = "imex_channel",
	.devnode = imex_chdev_devnode,
};

static void imex_chdev_release(struct device *dev)
{
	kfree(container_of(dev, struct imex_chdev, dev));
}

struct imex_chdev *imex_chdev_add(u32 id, kuid_t uid, kgid_t gid,
				  umode_t mode)
{
	struct imex_chdev *cd = kzalloc(sizeof(*cd), GFP_KERNEL);
	int err;

	if (!cd)
		return ERR_PTR(-ENOMEM);
	cd->id = id;
	cd->mode = mode;
	cd->uid = uid;
	cd->gid = gid;
	device_initialize(&cd->dev);
	cd->dev.class = imex_class;
	cd->dev.type = &imex_chdev_type;
	cd->dev.devt = MKDEV(MAJOR(imex_devt), id);
	cd->dev.release = imex_chdev_release;
	err = dev_set_name(&cd->dev, "imex-channel%u", id);
	if (!err)
		err = device_add(&cd->dev);
	if (err) {
		put_device(&cd->dev);
		return ERR_PTR(err);
	}
	return cd;
}

/* Returns once devtmpfs has removed the node. */
void imex_chdev_del(struct imex_chdev *cd)
{
	device_unregister(&cd->dev);
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

static int imex_chan_open(struct inode *inode, struct file *file)
{
	struct imex_channel *ch;
	int err = 0;

	mutex_lock(&imex_lock);
	ch = xa_load(&imex_channels, iminor(inode));
	if (!ch || ch->state != IMEX_CHANNEL_GRANTED) {
		err = -ENXIO;
	} else if (!imex_domain_usable(ch->domain)) {
		err = -ENOLINK;
	} else {
		kref_get(&ch->ref);
		atomic_inc(&ch->open_count);
		file->private_data = ch;
	}
	mutex_unlock(&imex_lock);
	if (err)
		return err;
	return stream_open(inode, file);
}

static int imex_chan_release(struct inode *inode, struct file *file)
{
	struct imex_channel *ch = file->private_data;

	atomic_dec(&ch->open_count);
	imex_channel_put(ch);
	return 0;
}

static __poll_t imex_chan_poll(struct file *file, poll_table *wait)
{
	struct imex_channel *ch = file->private_data;

	poll_wait(file, &ch->wait, wait);
	return READ_ONCE(ch->revoked) ? EPOLLERR | EPOLLHUP | EPOLLPRI : 0;
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

static long imex_chan_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	struct imex_channel *ch = file->private_data;

	switch (cmd) {
	case IMEX_IOC_CHANNEL_INFO:
		return imex_chan_info(ch, (void __user *)arg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations imex_chan_fops = {
	.owner		= THIS_MODULE,
	.open		= imex_chan_open,
	.release	= imex_chan_release,
	.poll		= imex_chan_poll,
	.unlocked_ioctl	= imex_chan_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= no_llseek,
};

struct imex_channel *imex_channel_get_file(struct file *file)
{
	struct imex_channel *ch;

	if (!file || file->f_op != &imex_chan_fops)
		return ERR_PTR(-EINVAL);
	ch = file->private_data;
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

/* Identity fields are fixed at grant time; only revocation can intervene. */
int imex_channel_ident(struct imex_channel *ch, struct imex_channel_ident *id)
{
	if (READ_ONCE(ch->revoked))
		return -ENODEV;
	uuid_copy(&id->domain_uuid, &ch->domain_uuid);
	uuid_copy(&id->fabric_uuid, &ch->fabric_uuid);
	id->fabric_partition = ch->fabric_partition;
	id->channel_id = ch->id;
	return 0;
}
EXPORT_SYMBOL_GPL(imex_channel_ident);

int imex_chrdev_init(void)
{
	int err;

	imex_class = imex_class_create("imex");
	if (IS_ERR(imex_class))
		return PTR_ERR(imex_class);
	err = alloc_chrdev_region(&imex_devt, 0, imex_max_channels,
				  IMEX_CHRDEV_NAME);
	if (err)
		goto err_class;
	cdev_init(&imex_cdev, &imex_chan_fops);
	imex_cdev.owner = THIS_MODULE;
	err = cdev_add(&imex_cdev, imex_devt, imex_max_channels);
	if (err)
		goto err_region;
	return 0;

err_region:
	unregister_chrdev_region(imex_devt, imex_max_channels);
err_class:
	class_destroy(imex_class);
	return err;
}

void imex_chrdev_exit(void)
{
	cdev_del(&imex_cdev);
	unregister_chrdev_region(imex_devt, imex_max_channels);
	class_destroy(imex_class);
}
