// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Building a CDI spec for channels.  imexctl_cdi_spec_build() is pure (a
 * list of channels in, JSON text out) so it can be tested and fuzzed;
 * imexctl_cdi_spec() fills that list from the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "internal.h"

/* Keys are literals and each is added once: no copy, no duplicate lookup. */
#define CDI_KEY_FLAGS (JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_ADD_CONSTANT_KEY)

static int put(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v)
		return -1;
	return json_object_object_add_ex(o, key, v, CDI_KEY_FLAGS);
}

/* Values every device node shares, referenced rather than copied. */
struct node_common {
	struct json_object *type;
	struct json_object *major;
};

static struct json_object *device_node(const struct node_common *nc,
				       const struct imexctl_cdi_channel *c)
{
	struct json_object *n = json_object_new_object();
	char path[64];

	if (!n)
		return NULL;
	snprintf(path, sizeof(path), IMEXCTL_DEV_DIR "/channel%u", c->id);
	if (put(n, "path", json_object_new_string(path)) ||
	    put(n, "type", json_object_get(nc->type)) ||
	    put(n, "major", json_object_get(nc->major)) ||
	    put(n, "minor", json_object_new_int64(c->minor)) ||
	    put(n, "fileMode", json_object_new_int64(c->mode)) ||
	    put(n, "uid", json_object_new_int64(c->uid)) ||
	    put(n, "gid", json_object_new_int64(c->gid))) {
		json_object_put(n);
		return NULL;
	}
	return n;
}

/*
 * {"name": NAME, "containerEdits": {"deviceNodes": [...]}} over the given
 * node objects, which the device references (a channel's node object is
 * shared by its own device and the all-channels device).
 */
static struct json_object *device(const char *name, struct json_object **node,
				  size_t n)
{
	struct json_object *dev, *edits, *nodes;
	size_t i;

	dev = json_object_new_object();
	edits = json_object_new_object();
	nodes = json_object_new_array_ext((int)n);
	if (!dev || !edits || !nodes)
		goto fail;
	for (i = 0; i < n; i++) {
		if (json_object_array_add(nodes, json_object_get(node[i]))) {
			json_object_put(node[i]);
			goto fail;
		}
	}
	if (put(edits, "deviceNodes", nodes)) {
		nodes = NULL;
		goto fail;
	}
	nodes = NULL;
	if (put(dev, "name", json_object_new_string(name)) ||
	    put(dev, "containerEdits", edits)) {
		edits = NULL;
		goto fail;
	}
	return dev;
fail:
	json_object_put(nodes);
	json_object_put(edits);
	json_object_put(dev);
	return NULL;
}

static int by_id(const void *a, const void *b)
{
	const struct imexctl_cdi_channel *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int check_channels(struct imexctl *ctx, const struct imexctl_cdi_channel *c,
			  size_t n, const char *all)
{
	char name[32];
	size_t i;

	for (i = 0; i < n; i++) {
		if (c[i].id >= IMEX_CHANNELS_MAX)
			return imexctl_err(ctx, -EINVAL, "channel %u is out of range (max %u)",
					   c[i].id, IMEX_CHANNELS_MAX - 1);
		if (c[i].minor >= IMEX_MINORS)
			return imexctl_err(ctx, -EINVAL, "channel %u: minor %u is out of range (max %u)",
					   c[i].id, c[i].minor, IMEX_MINORS - 1);
		if (c[i].mode > 0777)
			return imexctl_err(ctx, -EINVAL, "channel %u: mode %o is more than permission bits (0777)",
					   c[i].id, c[i].mode);
		if (i && c[i].id == c[i - 1].id)
			return imexctl_err(ctx, -EINVAL, "channel %u is listed twice", c[i].id);
		snprintf(name, sizeof(name), "channel%u", c[i].id);
		if (!strcmp(name, all))
			return imexctl_err(ctx, -EINVAL,
					   "CDI device name '%s' is taken by channel %u: choose another name for the all-channels device",
					   all, c[i].id);
	}
	return 0;
}

IMEXCTL_API int imexctl_cdi_spec_build(struct imexctl *ctx,
				       const struct imexctl_cdi_opts *opts,
				       uint32_t major,
				       const struct imexctl_cdi_channel *channels,
				       size_t n, char **json)
{
	struct imexctl_cdi_channel *sorted = NULL;
	struct json_object *spec = NULL, *devs, *dev, **nodes = NULL;
	struct node_common nc = { NULL, NULL };
	const char *all = imexctl_cdi_all_name(opts);
	char kind[2 * 64 + 2], name[32];
	const char *text;
	size_t i;
	int r;

	imexctl_err_clear(ctx);
	r = imexctl_cdi_opts_check(ctx, opts);
	if (r < 0)
		return r;
	if (!n || !channels)
		return imexctl_err(ctx, -EINVAL, "a CDI spec needs at least one channel");
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	memcpy(sorted, channels, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), by_id);
	r = check_channels(ctx, sorted, n, all);
	if (r < 0)
		goto out;

	snprintf(kind, sizeof(kind), "%s/%s", imexctl_cdi_vendor(opts),
		 imexctl_cdi_class(opts));
	spec = json_object_new_object();
	/* cdiVersion first for readers; its value is decided at the end. */
	if (!spec ||
	    json_object_object_add(spec, "cdiVersion", json_object_new_string("")) ||
	    json_object_object_add(spec, "kind", json_object_new_string(kind)))
		goto nomem;
	devs = json_object_new_array();
	if (!devs)
		goto nomem;
	if (json_object_object_add(spec, "devices", devs)) {
		json_object_put(devs);
		goto nomem;
	}
	nc.type = json_object_new_string("c");
	nc.major = json_object_new_int64(major);
	nodes = calloc(n, sizeof(struct json_object *));
	if (!nc.type || !nc.major || !nodes)
		goto nomem;
	for (i = 0; i < n; i++) {
		nodes[i] = device_node(&nc, &sorted[i]);
		if (!nodes[i])
			goto nomem;
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "channel%u", sorted[i].id);
		dev = device(name, &nodes[i], 1);
		if (!dev || json_object_array_add(devs, dev)) {
			json_object_put(dev);
			goto nomem;
		}
	}
	if (all[0]) {
		dev = device(all, nodes, n);
		if (!dev || json_object_array_add(devs, dev)) {
			json_object_put(dev);
			goto nomem;
		}
	}
	if (json_object_object_add(spec, "cdiVersion",
				   json_object_new_string(imexctl_cdi_required_version(spec))))
		goto nomem;

	text = json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_SPACED |
						    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text)
		goto nomem;
	*json = malloc(strlen(text) + 2);
	if (!*json)
		goto nomem;
	sprintf(*json, "%s\n", text);
	r = 0;
	goto out;
nomem:
	r = imexctl_err(ctx, -ENOMEM, "out of memory building the CDI spec");
out:
	if (nodes)
		for (i = 0; i < n; i++)
			json_object_put(nodes[i]);
	free(nodes);
	json_object_put(nc.type);
	json_object_put(nc.major);
	json_object_put(spec);
	free(sorted);
	return r;
}

/* Fill channels from the kernel: every granted one, or exactly @ids. */
static int collect(struct imexctl *ctx, const char *domain, const uint32_t *ids,
		   size_t n_ids, struct imexctl_cdi_channel **out, size_t *n)
{
	struct imexctl_channel *ch = NULL;
	size_t i, j, nch = 0;
	int r;

	r = imexctl_channel_list(ctx, domain, &ch, &nch);
	if (r < 0)
		return r;
	*out = calloc(n_ids ? n_ids : (nch ? nch : 1), sizeof(**out));
	if (!*out) {
		free(ch);
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	}
	*n = 0;
	for (i = 0; i < nch; i++) {
		bool wanted = !n_ids;

		for (j = 0; j < n_ids && !wanted; j++)
			wanted = ids[j] == ch[i].id;
		if (!wanted || strcmp(ch[i].domain, domain) ||
		    ch[i].state != IMEX_CHANNEL_GRANTED)
			continue;
		(*out)[(*n)++] = (struct imexctl_cdi_channel){
			.id = ch[i].id, .uid = ch[i].uid, .gid = ch[i].gid,
			.mode = ch[i].mode, .minor = ch[i].minor,
		};
	}
	free(ch);

	for (j = 0; j < n_ids; j++) {
		for (i = 0; i < *n && (*out)[i].id != ids[j]; i++)
			;
		if (i == *n) {
			r = imexctl_err(ctx, -ENOENT,
					"channel %u is not granted to domain %s on this node: see 'imexctl channel list --domain %s'",
					ids[j], domain, domain);
			goto fail;
		}
	}
	if (!*n) {
		r = imexctl_err(ctx, -ENOENT,
				"domain %s has no granted channels on this node: grant some with 'imexctl channel alloc --domain %s'",
				domain, domain);
		goto fail;
	}
	return 0;
fail:
	free(*out);
	*out = NULL;
	return r;
}

static int chrdev_major(struct imexctl *ctx, uint32_t *major)
{
	struct imexctl_node node;
	int r;

	if (imexctl_proc_devices_major(IMEXCTL_PROC_DEVICES, IMEX_CHRDEV_NAME, major) == 0)
		return 0;
	r = imexctl_node_get(ctx, &node);
	if (r < 0)
		return r;
	*major = node.major;
	return 0;
}

IMEXCTL_API int imexctl_cdi_spec(struct imexctl *ctx, const char *domain,
				 const uint32_t *ids, size_t n_ids,
				 const struct imexctl_cdi_opts *opts, char **json)
{
	struct imexctl_cdi_channel *ch = NULL;
	struct imexctl_domain *d = NULL;
	uint32_t major;
	size_t n = 0;
	int r;

	imexctl_err_clear(ctx);
	r = imexctl_cdi_opts_check(ctx, opts);
	if (r < 0)
		return r;
	/* Fails with a clear message if the domain does not exist. */
	r = imexctl_domain_get(ctx, domain, &d);
	if (r < 0)
		return r;
	imexctl_domain_free(d);
	r = collect(ctx, domain, ids, n_ids, &ch, &n);
	if (r < 0)
		return r;
	r = chrdev_major(ctx, &major);
	if (r == 0)
		r = imexctl_cdi_spec_build(ctx, opts, major, ch, n, json);
	free(ch);
	return r;
}
