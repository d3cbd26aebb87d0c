// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Building a CDI spec for channels.  imexctl_cdi_spec_build() is pure (a
 * list of channels in, JSON text out) so it can be tested and fuzzed;
 * imexctl_cdi_spec() (cdi_collect.c) fills that list from the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <yajl/yajl_gen.h>

#include "internal.h"

/*
 * The spec is written as it is generated (yajl's generator), not built as
 * a tree first: 2048 channels are 0.56 MB of JSON, and a json-c tree of
 * them some 41,000 objects.  json-c still reads JSON everywhere else.
 */

/* The text so far; @nomem once growing it failed (yajl cannot be told). */
struct spec_text {
	char	*s;
	size_t	len, cap;
	bool	nomem;
};

static bool text_grow(struct spec_text *t, size_t n)
{
	size_t cap = t->cap;
	char *p;

	while (n + 2 > cap - t->len)
		cap = cap ? cap * 2 : 4096;
	p = t->nomem ? NULL : realloc(t->s, cap);
	if (!p) {
		t->nomem = true;
		return false;
	}
	t->s = p;
	t->cap = cap;
	return true;
}

/* yajl's print callback: append, keeping room for the final "\n\0". */
static void text_put(void *ctx, const char *s, size_t n)
{
	struct spec_text *t = ctx;

	if (n + 2 > t->cap - t->len && !text_grow(t, n))
		return;
	/* Most calls are one quote, comma, colon or brace: no memcpy call. */
	if (n == 1) {
		t->s[t->len++] = *s;
		return;
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
}

/* What every node and device of one spec shares. */
struct spec_args {
	const char				*version, *kind, *all;
	uint32_t				major;
	const struct imexctl_cdi_channel	*ch;
	size_t					n;
};

/* 0, or -1 when yajl refused: only misuse (nesting) makes it. */
static int ok(yajl_gen_status st)
{
	return st == yajl_gen_status_ok ? 0 : -1;
}

static int put_mem(yajl_gen g, const char *s, size_t len)
{
	return ok(yajl_gen_string(g, (const unsigned char *)s, len));
}

static int put_str(yajl_gen g, const char *s)
{
	return put_mem(g, s, strlen(s));
}

/* A string literal, its length known at compile time. */
#define PUT_LIT(g, lit) put_mem(g, lit, sizeof(lit) - 1)

/*
 * @v in decimal at @end, backwards; returns where it starts.  sprintf (in
 * yajl_gen_integer() too) was a fifth of the time of a large spec.
 */
static char *decimal(char *end, uint32_t v)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

/* "KEY": V, V written by yajl as the number text decimal() made. */
static int put_uint(yajl_gen g, const char *key, size_t klen, uint32_t v)
{
	char buf[10], *p = decimal(buf + sizeof(buf), v);

	return put_mem(g, key, klen) ||
	       ok(yajl_gen_number(g, p, (size_t)(buf + sizeof(buf) - p))) ? -1 : 0;
}

#define PUT_UINT(g, lit, v) put_uint(g, lit, sizeof(lit) - 1, v)

/* PREFIX<id> into @buf (room for the prefix and 10 digits): its length. */
static size_t id_name(char *buf, const char *prefix, size_t plen, uint32_t id)
{
	char num[10], *p = decimal(num + sizeof(num), id);
	size_t len = (size_t)(num + sizeof(num) - p);

	memcpy(buf, prefix, plen);
	memcpy(buf + plen, p, len);
	return plen + len;
}

#define DEV_PREFIX IMEXCTL_DEV_DIR "/channel"

/* Keys in the order the json-c writer gave them: readers see no change. */
static int device_node(yajl_gen g, const struct spec_args *a,
		       const struct imexctl_cdi_channel *c)
{
	char path[sizeof(DEV_PREFIX) + 10];
	size_t len = id_name(path, DEV_PREFIX, sizeof(DEV_PREFIX) - 1, c->id);

	return ok(yajl_gen_map_open(g)) ||
	       PUT_LIT(g, "path") || put_mem(g, path, len) ||
	       PUT_LIT(g, "type") || PUT_LIT(g, "c") ||
	       PUT_UINT(g, "major", a->major) || PUT_UINT(g, "minor", c->minor) ||
	       PUT_UINT(g, "fileMode", c->mode) || PUT_UINT(g, "uid", c->uid) ||
	       PUT_UINT(g, "gid", c->gid) ||
	       ok(yajl_gen_map_close(g)) ? -1 : 0;
}

/* {"name": NAME, "containerEdits": {"deviceNodes": [NODES]}} */
static int device(yajl_gen g, const struct spec_args *a, const char *name,
		  size_t nlen, const struct imexctl_cdi_channel *c, size_t n)
{
	size_t i;

	if (ok(yajl_gen_map_open(g)) || PUT_LIT(g, "name") || put_mem(g, name, nlen) ||
	    PUT_LIT(g, "containerEdits") || ok(yajl_gen_map_open(g)) ||
	    PUT_LIT(g, "deviceNodes") || ok(yajl_gen_array_open(g)))
		return -1;
	for (i = 0; i < n; i++)
		if (device_node(g, a, &c[i]))
			return -1;
	return ok(yajl_gen_array_close(g)) || ok(yajl_gen_map_close(g)) ||
	       ok(yajl_gen_map_close(g)) ? -1 : 0;
}

static int spec_body(yajl_gen g, const struct spec_args *a)
{
	char name[sizeof("channel") + 10];
	size_t i, len;

	/* cdiVersion first, as people expect to read it. */
	if (ok(yajl_gen_map_open(g)) ||
	    PUT_LIT(g, "cdiVersion") || put_str(g, a->version) ||
	    PUT_LIT(g, "kind") || put_str(g, a->kind) ||
	    PUT_LIT(g, "devices") || ok(yajl_gen_array_open(g)))
		return -1;
	for (i = 0; i < a->n; i++) {
		len = id_name(name, "channel", sizeof("channel") - 1, a->ch[i].id);
		if (device(g, a, name, len, &a->ch[i], 1))
			return -1;
	}
	if (a->all[0] && device(g, a, a->all, strlen(a->all), a->ch, a->n))
		return -1;
	return ok(yajl_gen_array_close(g)) || ok(yajl_gen_map_close(g)) ? -1 : 0;
}

/*
 * The spec of @a as text in @t, ending in a newline: 0, -ENOMEM, or -EPROTO
 * should yajl refuse a call (a bug here).
 */
static int write_spec(const struct spec_args *a, struct spec_text *t)
{
	yajl_gen g;
	int r;

	g = yajl_gen_alloc(NULL);
	if (!g)
		return -ENOMEM;
	/*
	 * Compact, one line: indenting doubled the text of a large spec (the
	 * nodes sit five levels deep) and cost yajl a call per level per
	 * line.  Runtimes do not care; people read it with `jq .`.
	 */
	r = !yajl_gen_config(g, yajl_gen_print_callback, text_put, t) ||
	    spec_body(g, a) ? -EPROTO : 0;
	yajl_gen_free(g);
	if (t->nomem)
		return -ENOMEM;
	if (r)
		return r;
	/* A text file ends in a newline; text_put() kept room for it. */
	if (!t->len || t->s[t->len - 1] != '\n')
		t->s[t->len++] = '\n';
	t->s[t->len] = '\0';
	return 0;
}

/*
 * The lowest cdiVersion of the spec of @a, decided by the generic gates on
 * the spec of its first channel alone: every channel's device and node has
 * the same keys and kinds of value, and "channelN" never starts with a
 * digit, so the one-channel spec uses every feature the whole one does.
 */
static int spec_version(const struct spec_args *a, const char **version)
{
	struct spec_args one = *a;
	struct spec_text t = { 0 };
	struct json_object *spec;
	int r;

	one.version = "";
	one.n = 1;
	r = write_spec(&one, &t);
	if (r == 0) {
		/* Our own text: only memory can make reading it fail. */
		spec = json_tokener_parse(t.s);
		if (spec)
			*version = imexctl_cdi_required_version(spec);
		else
			r = -ENOMEM;
		json_object_put(spec);
	}
	free(t.s);
	return r;
}

static int by_id(const void *a, const void *b)
{
	const struct imexctl_cdi_channel *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int check_channels(struct imexctl *ctx, const struct imexctl_cdi_channel *c,
			  size_t n, const char *all)
{
	char name[sizeof("channel") + 10];
	size_t i, len;

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
		len = id_name(name, "channel", sizeof("channel") - 1, c[i].id);
		name[len] = '\0';
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
	struct spec_text t = { 0 };
	struct spec_args a;
	char kind[2 * 64 + 2];
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
	/* The kernel's list comes sorted: qsort was a tenth of the time. */
	for (size_t i = 1; i < n; i++)
		if (sorted[i - 1].id > sorted[i].id) {
			qsort(sorted, n, sizeof(*sorted), by_id);
			break;
		}
	a = (struct spec_args){ .kind = kind, .all = imexctl_cdi_all_name(opts),
				.major = major, .ch = sorted, .n = n };
	r = check_channels(ctx, sorted, n, a.all);
	if (r < 0)
		goto out;

	snprintf(kind, sizeof(kind), "%s/%s", imexctl_cdi_vendor(opts),
		 imexctl_cdi_class(opts));
	r = spec_version(&a, &a.version);
	/*
	 * 260 bytes a channel with small numbers (its device and its node in
	 * the all-channels device): room for larger ones, so not regrown.
	 */
	t.cap = 4096 + n * 320;
	t.s = r ? NULL : malloc(t.cap);
	if (!r && !t.s)
		r = -ENOMEM;
	if (!r)
		r = write_spec(&a, &t);
	if (r == -ENOMEM) {
		r = imexctl_err(ctx, r, "out of memory building the CDI spec");
		free(t.s);
	} else if (r) {
		r = imexctl_err(ctx, r, "internal error building the CDI spec");
		free(t.s);
	} else {
		*json = t.s;
	}
out:
	free(sorted);
	return r;
}
