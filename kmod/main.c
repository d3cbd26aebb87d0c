// SPDX-License-Identifier: GPL-2.0
/*
 * imex.ko: IMEX channels and the NVLink domain → partition → IMEX domain →
 * channel hierarchy, controlled through the "imex" generic netlink family.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/ctype.h>
#include "imex.h"

/* Guards all module state (see the locking note in imex.h). */
DEFINE_MUTEX(imex_lock);
u32 imex_generation;

unsigned int imex_max_channels = 2048;
static char *node_name;
static char *fabric_uuid;
static unsigned int fabric_partition;

static int max_channels_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int err = kstrtouint(val, 0, &n);

	if (err)
		return err;
	if (n < 1 || n > IMEX_CHANNELS_MAX) {
		pr_err("max_channels=%u is out of range: use 1..%u\n", n,
		       IMEX_CHANNELS_MAX);
		return -ERANGE;
	}
	*(unsigned int *)kp->arg = n;
	return 0;
}

static const struct kernel_param_ops max_channels_ops = {
	.set = max_channels_set,
	.get = param_get_uint,
};

module_param_cb(max_channels, &max_channels_ops, &imex_max_channels, 0444);
MODULE_PARM_DESC(max_channels, "Number of channel ids, 1..1048576 (default 2048)");
module_param(node_name, charp, 0444);
MODULE_PARM_DESC(node_name, "Name of this node in domain member lists (default: the host name if valid, else unset until imexd sets it)");
module_param(fabric_uuid, charp, 0444);
MODULE_PARM_DESC(fabric_uuid, "NVLink cluster UUID of this node (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
static bool fabric_partition_set;

static int fabric_partition_param(const char *val,
				  const struct kernel_param *kp)
{
	int err = param_set_uint(val, kp);

	if (!err)
		fabric_partition_set = true;
	return err;
}

static const struct kernel_param_ops fabric_partition_ops = {
	.set = fabric_partition_param,
	.get = param_get_uint,
};

module_param_cb(fabric_partition, &fabric_partition_ops, &fabric_partition, 0444);
MODULE_PARM_DESC(fabric_partition, "NVLink partition (clique) id of this node");

/* Names of domains and nodes: [A-Za-z0-9][A-Za-z0-9_.-]*, NUL-terminated. */
bool imex_name_valid(const char *name)
{
	const char *p = name;

	if (!isalnum(*p))
		return false;
	for (p++; *p; p++)
		if (!isalnum(*p) && *p != '_' && *p != '.' && *p != '-')
			return false;
	return p - name < IMEX_NAME_MAX;
}

#ifndef NL_SET_ERR_MSG_FMT
static char imex_extack_ring[IMEX_EXTACK_SLOTS][IMEX_EXTACK_LEN];
static atomic_t imex_extack_next = ATOMIC_INIT(0);

const char *imex_extack_slot(const char *fmt, ...)
{
	unsigned int i = (unsigned int)atomic_inc_return(&imex_extack_next) %
			 IMEX_EXTACK_SLOTS;
	va_list ap;

	va_start(ap, fmt);
	vscnprintf(imex_extack_ring[i], IMEX_EXTACK_LEN, fmt, ap);
	va_end(ap);
	return imex_extack_ring[i];
}
#endif

static int __init imex_init(void)
{
	int err;

	err = imex_node_init(node_name, fabric_uuid, fabric_partition,
			     fabric_partition_set);
	if (err)
		return err;

	err = imex_chrdev_init();
	if (err) {
		pr_warn("registering the channel devices failed: %d\n", err);
		return err;
	}
	err = imex_manager_init();
	if (err) {
		pr_warn("registering the netlink notifier failed: %d\n", err);
		goto err_chrdev;
	}
	/* Last: the family makes the module reachable. */
	err = imex_genl_init();
	if (err) {
		pr_warn("registering the generic netlink family failed: %d\n",
			err);
		goto err_manager;
	}
	if (imex_node.name[0])
		pr_info("loaded: %u channels, major %u, node '%s'\n",
			imex_max_channels, imex_chrdev_major(), imex_node.name);
	else
		pr_info("loaded: %u channels, major %u, node name not set yet\n",
			imex_max_channels, imex_chrdev_major());
	return 0;

err_manager:
	imex_manager_exit();
err_chrdev:
	imex_chrdev_exit();
	return err;
}

static void __exit imex_exit(void)
{
	struct imex_domain *d, *tmp;

	mutex_lock(&imex_lock);
	imex_unloading = true;
	mutex_unlock(&imex_lock);
	imex_genl_exit();
	imex_manager_exit();

	mutex_lock(&imex_lock);
	imex_requests_free();
	list_for_each_entry_safe(d, tmp, &imex_domains, list) {
		imex_domain_revoke_channels(d);
		imex_domain_destroy(d);
	}
	imex_export_dels_clear();
	imex_revoked_flush();	/* frees what is left; sends nothing now */
	mutex_unlock(&imex_lock);
	imex_kapi_exit();

	imex_chrdev_exit();
}

module_init(imex_init);
module_exit(imex_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("IMEX channels: the trust boundary for multi-node NVLink memory import");
MODULE_AUTHOR("The imex authors");
MODULE_VERSION("0.1");
