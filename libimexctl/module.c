// SPDX-License-Identifier: LGPL-2.1-or-later
/* Loading, unloading and describing the imex kernel module (libkmod). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <libkmod.h>

#include "internal.h"

#define MODULE_NAME "imex"

struct kmod_handle {
	struct kmod_ctx *kctx;
	struct kmod_module *mod;
	char log[256];			/* libkmod's last complaint */
};

/* A library must not print: keep libkmod's last message for our errors. */
static void kmod_log(void *data, int priority, const char *file, int line,
		     const char *fn, const char *format, va_list args)
{
	struct kmod_handle *h = data;
	size_t len;

	(void)priority;
	(void)file;
	(void)line;
	(void)fn;
	vsnprintf(h->log, sizeof(h->log), format, args);
	len = strlen(h->log);
	if (len && h->log[len - 1] == '\n')
		h->log[len - 1] = '\0';
}

static int kmod_open(struct imexctl *ctx, struct kmod_handle *h, const char *path)
{
	int r;

	memset(h, 0, sizeof(*h));
	h->kctx = kmod_new(NULL, NULL);
	if (!h->kctx)
		return imexctl_err(ctx, -ENOMEM, "cannot start libkmod: out of memory");
	kmod_set_log_fn(h->kctx, kmod_log, h);
	if (path)
		r = kmod_module_new_from_path(h->kctx, path, &h->mod);
	else
		r = kmod_module_new_from_name(h->kctx, MODULE_NAME, &h->mod);
	if (r < 0) {
		kmod_unref(h->kctx);
		h->kctx = NULL;
		if (path)
			return imexctl_err(ctx, r, "cannot use module file %s: %s", path,
					   strerror(-r));
		return imexctl_err(ctx, r, "cannot look up module %s: %s", MODULE_NAME,
				   strerror(-r));
	}
	return 0;
}

static void kmod_close(struct kmod_handle *h)
{
	if (h->mod)
		kmod_module_unref(h->mod);
	if (h->kctx)
		kmod_unref(h->kctx);
}

static const char *kernel_release(struct utsname *u)
{
	return uname(u) == 0 ? u->release : "(unknown)";
}

/* Already loaded: succeed unless the caller asked for something else. */
static int check_loaded(struct imexctl *ctx,
			const struct imexctl_module_params *p)
{
	struct imexctl_node node;
	char want[IMEXCTL_UUID_STR_LEN], have[IMEXCTL_UUID_STR_LEN];

	if (!p || imexctl_node_get(ctx, &node) < 0) {
		imexctl_err_clear(ctx);
		return 0;
	}
	if (p->max_channels && p->max_channels != node.max_channels)
		return imexctl_err(ctx, -EEXIST,
				   "module imex is already loaded with max_channels=%u: unload it first ('imexctl module unload') to change it",
				   node.max_channels);
	if (p->has_fabric && (!node.has_fabric ||
			      memcmp(p->fabric_uuid, node.fabric_uuid, IMEX_UUID_LEN) ||
			      p->fabric_partition != node.fabric_partition)) {
		imexctl_uuid_format(p->fabric_uuid, want);
		if (!node.has_fabric)
			return imexctl_err(ctx, -EEXIST,
					   "module imex is already loaded without a fabric: set it with 'imexctl node set-fabric %s %u'",
					   want, p->fabric_partition);
		imexctl_uuid_format(node.fabric_uuid, have);
		return imexctl_err(ctx, -EEXIST,
				   "module imex is already loaded with fabric %s:%u: unload it first ('imexctl module unload') to change it",
				   have, node.fabric_partition);
	}
	if (p->node_name && !node.name[0])
		return imexctl_err(ctx, -EEXIST,
				   "module imex is already loaded and the node has no name yet: name it with 'imexctl node set-name %s'",
				   p->node_name);
	if (p->node_name && strcmp(p->node_name, node.name))
		return imexctl_err(ctx, -EEXIST,
				   "module imex is already loaded with node name %s: unload it first ('imexctl module unload') to change it",
				   node.name);
	return 0;
}

static int build_options(struct imexctl *ctx, const struct imexctl_module_params *p,
			 char *buf, size_t size)
{
	char uuid[IMEXCTL_UUID_STR_LEN];
	size_t len = 0;

	buf[0] = '\0';
	if (!p)
		return 0;
	if (p->max_channels > IMEX_CHANNELS_MAX)
		return imexctl_err(ctx, -EINVAL, "max_channels %u is above the limit of %u",
				   p->max_channels, IMEX_CHANNELS_MAX);
	if (p->node_name && !imexctl_name_valid(p->node_name))
		return imexctl_err(ctx, -EINVAL, "invalid node name '%s'", p->node_name);
	if (p->max_channels)
		len += (size_t)snprintf(buf + len, size - len, "max_channels=%u ",
					p->max_channels);
	if (p->has_fabric) {
		imexctl_uuid_format(p->fabric_uuid, uuid);
		len += (size_t)snprintf(buf + len, size - len,
					"fabric_uuid=%s fabric_partition=%u ", uuid,
					p->fabric_partition);
	}
	if (p->node_name)
		len += (size_t)snprintf(buf + len, size - len, "node_name=%s ",
					p->node_name);
	if (len)
		buf[len - 1] = '\0';
	return 0;
}

static int load_failed(struct imexctl *ctx, int r, const struct kmod_handle *h,
		       const char *path, const char *opts)
{
	struct utsname u;
	const char *rel = kernel_release(&u);

	switch (-r) {
	case ENOENT:
		if (path)
			return imexctl_err(ctx, r, "module file %s does not exist", path);
		return imexctl_err(ctx, r,
				   "module imex is not installed for kernel %s: install it ('make install') or give its file with --module-path",
				   rel);
	case ENOSYS:
		return imexctl_err(ctx, r,
				   "the running kernel %s does not support loadable modules", rel);
	case EPERM:
	case EACCES:
		return imexctl_err(ctx, r,
				   "loading module imex is not permitted: it needs root (CAP_SYS_MODULE)");
	case EINVAL:
		return imexctl_err(ctx, r,
				   "the kernel refused module imex with options '%s': see 'dmesg' for the reason",
				   opts);
	case ENOEXEC:
		return imexctl_err(ctx, r,
				   "module imex%s%s was not built for kernel %s: rebuild it against this kernel's headers",
				   path ? " at " : "", path ? path : "", rel);
	default:
		return imexctl_err(ctx, r, "loading module imex failed: %s%s%s: see 'dmesg'",
				   strerror(-r), h->log[0] ? ": " : "", h->log);
	}
}

IMEXCTL_API int imexctl_module_load(struct imexctl *ctx,
				    const struct imexctl_module_params *params)
{
	const char *path = params ? params->path : NULL;
	char opts[256], all[1024];
	struct kmod_handle h;
	const char *conf;
	int r;

	imexctl_err_clear(ctx);
	r = build_options(ctx, params, opts, sizeof(opts));
	if (r < 0)
		return r;
	r = kmod_open(ctx, &h, path);
	if (r < 0)
		return r;

	if (kmod_module_get_initstate(h.mod) >= 0) {
		kmod_close(&h);
		return check_loaded(ctx, params);
	}

	if (path) {
		/* insmod of a file: apply modprobe.d options ourselves. */
		conf = kmod_module_get_options(h.mod);
		snprintf(all, sizeof(all), "%s%s%s", conf ? conf : "",
			 conf && opts[0] ? " " : "", opts);
		r = kmod_module_insert_module(h.mod, 0, all);
	} else {
		/* Flags 0: modprobe.d options and install commands apply, the
		 * blacklist does not (as for an explicit "modprobe imex"). */
		r = kmod_module_probe_insert_module(h.mod, 0, opts[0] ? opts : NULL,
						    NULL, NULL, NULL);
	}
	if (r == -EEXIST)
		r = 0;	/* raced with another loader */
	if (r < 0)
		r = load_failed(ctx, r, &h, path, opts);
	else if (r > 0)
		r = imexctl_err(ctx, -EPERM, "module imex is blacklisted");
	kmod_close(&h);
	return r;
}

/* EBUSY: say which channels keep the module, if the module can tell us. */
static int unload_busy(struct imexctl *ctx, struct kmod_handle *h)
{
	struct imexctl_channel *ch = NULL;
	struct kmod_list *holders, *it;
	char open[512] = "", users[256] = "";
	size_t i, n = 0, len = 0, ulen = 0;
	int refcnt = kmod_module_get_refcnt(h->mod);

	holders = kmod_module_get_holders(h->mod);
	kmod_list_foreach(it, holders) {
		struct kmod_module *m = kmod_module_get_module(it);

		if (ulen < sizeof(users))
			ulen += (size_t)snprintf(users + ulen, sizeof(users) - ulen, "%s%s",
						 ulen ? ", " : "", kmod_module_get_name(m));
		kmod_module_unref(m);
	}
	kmod_module_unref_list(holders);
	if (users[0])
		return imexctl_err(ctx, -EBUSY,
				   "module imex is in use by module(s) %s: unload them first", users);

	if (imexctl_channel_list(ctx, NULL, &ch, &n) == 0) {
		for (i = 0; i < n && len < sizeof(open); i++) {
			if (!ch[i].open_count)
				continue;
			len += (size_t)snprintf(open + len, sizeof(open) - len, "%s%u (domain %s, %u open)",
						len ? ", " : "", ch[i].id, ch[i].domain,
						ch[i].open_count);
		}
		free(ch);
	}
	if (open[0])
		return imexctl_err(ctx, -EBUSY,
				   "module imex is in use: channel(s) %s: close their file descriptors first (see 'fuser -v /dev/%s/*')",
				   open, IMEX_DEVDIR);
	return imexctl_err(ctx, -EBUSY,
			   "module imex is in use (refcount %d): close the channel's file descriptors first",
			   refcnt);
}

IMEXCTL_API int imexctl_module_unload(struct imexctl *ctx)
{
	struct kmod_handle h;
	int r, state;

	imexctl_err_clear(ctx);
	r = kmod_open(ctx, &h, NULL);
	if (r < 0)
		return r;
	state = kmod_module_get_initstate(h.mod);
	if (state < 0) {
		kmod_close(&h);
		return 0;	/* not loaded: nothing to do */
	}
	if (state == KMOD_MODULE_BUILTIN) {
		kmod_close(&h);
		return imexctl_err(ctx, -EOPNOTSUPP,
				   "imex is built into the kernel and cannot be unloaded");
	}
	r = kmod_module_remove_module(h.mod, 0);
	if (r == -ENOENT)
		r = 0;	/* raced with another unloader */
	else if (r == -EBUSY || r == -EAGAIN)
		r = unload_busy(ctx, &h);
	else if (r == -EPERM || r == -EACCES)
		r = imexctl_err(ctx, r,
				"unloading module imex is not permitted: it needs root (CAP_SYS_MODULE)");
	else if (r < 0)
		r = imexctl_err(ctx, r, "unloading module imex failed: %s%s%s", strerror(-r),
				h.log[0] ? ": " : "", h.log);
	kmod_close(&h);
	return r;
}

static void read_param_str(const char *name, bool *has, char *buf, size_t size)
{
	char path[128];

	snprintf(path, sizeof(path), IMEXCTL_SYSFS_MODULE "/parameters/%s", name);
	*has = imexctl_read_line(path, buf, size) == 0;
	/* An unset charp parameter reads as "(null)". */
	if (!*has || !strcmp(buf, "(null)"))
		buf[0] = '\0';
}

static void read_param_u32(const char *name, bool *has, uint32_t *val)
{
	char path[128];

	snprintf(path, sizeof(path), IMEXCTL_SYSFS_MODULE "/parameters/%s", name);
	*has = imexctl_read_u32(path, val) == 0;
}

IMEXCTL_API int imexctl_module_status(struct imexctl *ctx,
				      struct imexctl_module_status *st)
{
	struct kmod_handle h;
	int r, state;

	imexctl_err_clear(ctx);
	memset(st, 0, sizeof(*st));
	st->refcount = -1;
	r = kmod_open(ctx, &h, NULL);
	if (r < 0)
		return r;
	state = kmod_module_get_initstate(h.mod);
	if (state >= 0) {
		st->loaded = true;
		st->builtin = state == KMOD_MODULE_BUILTIN;
		snprintf(st->state, sizeof(st->state), "%s",
			 kmod_module_initstate_str((enum kmod_module_initstate)state));
		if (!st->builtin)
			st->refcount = kmod_module_get_refcnt(h.mod);
	}
	kmod_close(&h);
	if (!st->loaded)
		return 0;

	(void)imexctl_read_line(IMEXCTL_SYSFS_MODULE "/version", st->version,
				sizeof(st->version));
	(void)imexctl_read_line(IMEXCTL_SYSFS_MODULE "/srcversion", st->srcversion,
				sizeof(st->srcversion));
	st->has_major = imexctl_proc_devices_major(IMEXCTL_PROC_DEVICES, IMEX_CHRDEV_NAME,
						   &st->major) == 0;
	read_param_u32("max_channels", &st->has_max_channels, &st->max_channels);
	read_param_str("fabric_uuid", &st->has_fabric_uuid, st->fabric_uuid,
		       sizeof(st->fabric_uuid));
	read_param_u32("fabric_partition", &st->has_fabric_partition,
		       &st->fabric_partition);
	read_param_str("node_name", &st->has_node_name, st->node_name,
		       sizeof(st->node_name));
	return 0;
}
