// SPDX-License-Identifier: GPL-2.0
/*
 * The state directory (store.h).
 *
 * Every file is replaced atomically: the new content goes to a temp file in
 * the same directory (".tmp.*", never a name the loader reads), which is
 * fsync'ed and renamed over the old one, then the directory is fsync'ed so
 * the rename itself is durable.  A crash at any point leaves the old or the
 * new file; temp files a crash leaves behind are removed at the next open.
 *
 * Definitions are JSON, strictly checked on the way in (unknown or missing
 * keys, wrong types and everything imexd_def_check() refuses), since the
 * daemon re-creates kernel state from them after a reboot.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "store.h"
#include "store_file.h"

#define NODE_FILE	"node.json"
#define DOMAINS_DIR	"domains"
#define JSON_SUFFIX	".json"
#define UUID_TEXT_LEN	36
#define DEF_FILE_MAX	(64 << 20)	/* 2^20 channels fit in ~60 MiB */
#define NODE_FILE_MAX	4096
#define DEF_FORMAT	1		/* "version" in a definition file */

struct imexd_store {
	char *dir;
	char *domdir;
	int dirfd;
	int domfd;
	bool have_uuid;
	uint8_t uuid[16];
};


/* Add "; what" (or "what" first) to @err, cutting at @errlen. */
static void __attribute__((format(printf, 3, 4)))
append(char *err, size_t errlen, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (!err || !errlen)
		return;
	used = strnlen(err, errlen);
	if (used + 3 >= errlen)
		return;
	if (used) {
		memcpy(err + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(err + used, errlen - used, fmt, ap);
	va_end(ap);
}

/* ---- UUID text ------------------------------------------------------------ */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, exactly @n bytes of @s. */
static int uuid_parse(const char *s, size_t n, uint8_t out[16])
{
	uint8_t u[16];
	size_t i, k = 0;
	int hi, lo;

	if (n != UUID_TEXT_LEN)
		return -EINVAL;
	for (i = 0; i < n;) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i++] != '-')
				return -EINVAL;
			continue;
		}
		hi = hexval(s[i]);
		lo = hexval(s[i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		u[k++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	memcpy(out, u, sizeof(u));
	return 0;
}

static void uuid_unparse(const uint8_t u[16], char out[UUID_TEXT_LEN + 1])
{
	snprintf(out, UUID_TEXT_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* ---- definition -> JSON --------------------------------------------------- */

/* Add @v under @k, dropping @v if that fails; false on any failure. */
static bool put(json_object *o, const char *k, json_object *v)
{
	if (!v)
		return false;
	if (json_object_object_add(o, k, v)) {
		json_object_put(v);
		return false;
	}
	return true;
}

static bool push(json_object *a, json_object *v)
{
	if (!v)
		return false;
	if (json_object_array_add(a, v)) {
		json_object_put(v);
		return false;
	}
	return true;
}

static json_object *uuid_json(const uint8_t u[16])
{
	char s[UUID_TEXT_LEN + 1];

	uuid_unparse(u, s);
	return json_object_new_string(s);
}

static json_object *member_json(const struct imexd_member *m)
{
	json_object *o = json_object_new_object();
	bool ok;

	if (!o)
		return NULL;
	ok = put(o, "name", json_object_new_string(m->name));
	ok = put(o, "addr", json_object_new_string(m->addr)) && ok;
	if (!ok) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static json_object *channel_json(const struct imexd_channel *c)
{
	json_object *o = json_object_new_object();
	char mode[8];
	bool ok;

	if (!o)
		return NULL;
	/* Octal text: how people read and write modes. */
	snprintf(mode, sizeof(mode), "%04o", c->mode & 07777u);
	ok = put(o, "id", json_object_new_int64(c->id));
	ok = put(o, "uid", json_object_new_int64(c->uid)) && ok;
	ok = put(o, "gid", json_object_new_int64(c->gid)) && ok;
	ok = put(o, "mode", json_object_new_string(mode)) && ok;
	if (!ok) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static bool lists_json(json_object *o, const struct imexd_def *d)
{
	json_object *ms = json_object_new_array(), *cs = json_object_new_array();
	bool ok = ms && cs;
	uint32_t i;

	for (i = 0; ok && i < d->nmembers; i++)
		ok = push(ms, member_json(&d->members[i]));
	for (i = 0; ok && i < d->nchannels; i++)
		ok = push(cs, channel_json(&d->channels[i]));
	if (!ok) {
		json_object_put(ms);
		json_object_put(cs);
		return false;
	}
	ok = put(o, "members", ms);
	return put(o, "channels", cs) && ok;
}

char *imexd_def_to_json(const struct imexd_def *def)
{
	json_object *o;
	char *s = NULL;
	bool ok;

	if (imexd_def_check(def, NULL))
		return NULL;
	o = json_object_new_object();
	if (!o)
		return NULL;
	ok = put(o, "version", json_object_new_int(DEF_FORMAT));
	ok = put(o, "name", json_object_new_string(def->name)) && ok;
	ok = put(o, "uuid", uuid_json(def->uuid)) && ok;
	ok = put(o, "generation", json_object_new_uint64(def->generation)) && ok;
	ok = put(o, "deleted", json_object_new_boolean(
			def->flags & IMEXD_DEF_DELETED)) && ok;
	ok = put(o, "fabric_uuid", uuid_json(def->fabric_uuid)) && ok;
	ok = put(o, "partition", json_object_new_int64(def->partition)) && ok;
	ok = ok && lists_json(o, def);
	if (ok)
		s = strdup(json_object_to_json_string_ext(o,
				JSON_C_TO_STRING_PRETTY |
				JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

/* ---- JSON -> definition --------------------------------------------------- */

struct jctx {
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 2, 3)))
jfail(const struct jctx *c, const char *fmt, ...)
{
	if (c->err && c->errlen) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* @o has exactly the @n keys of @keys (where @o is an object). */
static int check_keys(const struct jctx *c, json_object *o, const char *where,
		      const char *const *keys, size_t n)
{
	size_t i, found = 0;

	if (!json_object_is_type(o, json_type_object))
		return jfail(c, "%s: not an object", where);
	json_object_object_foreach(o, k, v) {
		(void)v;
		for (i = 0; i < n && strcmp(k, keys[i]); i++)
			;
		if (i == n)
			return jfail(c, "%s: unknown key '%.64s'", where, k);
		found++;
	}
	if (found != n)
		return jfail(c, "%s: a key is missing (needs %zu)", where, n);
	return 0;
}

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;

	json_object_object_get_ex(o, k, &v);
	return v;
}

static int get_str(const struct jctx *c, json_object *o, const char *k,
		   char *dst, size_t cap)
{
	json_object *v = get(o, k);
	size_t n;

	if (!json_object_is_type(v, json_type_string))
		return jfail(c, "'%s' is not a string", k);
	n = (size_t)json_object_get_string_len(v);
	if (n >= cap || strlen(json_object_get_string(v)) != n)
		return jfail(c, "'%s' is too long or has a NUL byte", k);
	memcpy(dst, json_object_get_string(v), n + 1);
	return 0;
}

static int get_uint(const struct jctx *c, json_object *o, const char *k,
		    uint64_t max, uint64_t *out)
{
	json_object *v = get(o, k);
	uint64_t x;

	if (!json_object_is_type(v, json_type_int))
		return jfail(c, "'%s' is not an integer", k);
	if (json_object_get_int64(v) < 0)
		return jfail(c, "'%s' is negative", k);
	x = json_object_get_uint64(v);
	if (x > max)
		return jfail(c, "'%s' is above %llu", k, (unsigned long long)max);
	*out = x;
	return 0;
}

static int get_uuid(const struct jctx *c, json_object *o, const char *k,
		    uint8_t out[16])
{
	json_object *v = get(o, k);

	if (!json_object_is_type(v, json_type_string) ||
	    uuid_parse(json_object_get_string(v),
		       (size_t)json_object_get_string_len(v), out))
		return jfail(c, "'%s' is not a UUID", k);
	return 0;
}

static int get_mode(const struct jctx *c, json_object *o, uint16_t *mode)
{
	json_object *v = get(o, "mode");
	const char *s;
	unsigned int m = 0;
	int i, n;

	if (!json_object_is_type(v, json_type_string))
		return jfail(c, "'mode' is not a string");
	s = json_object_get_string(v);
	n = json_object_get_string_len(v);
	if (n < 1 || n > 4)
		return jfail(c, "'mode' is not 1 to 4 octal digits");
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '7')
			return jfail(c, "'mode' is not octal");
		m = m * 8 + (unsigned int)(s[i] - '0');
	}
	*mode = (uint16_t)m;
	return 0;
}

static int members_from(const struct jctx *c, json_object *a,
			struct imexd_def *d)
{
	static const char *const keys[] = { "name", "addr" };
	size_t i, n;

	if (!json_object_is_type(a, json_type_array))
		return jfail(c, "'members' is not an array");
	n = json_object_array_length(a);
	if (n > IMEX_MEMBERS_MAX)
		return jfail(c, "more than %d members", IMEX_MEMBERS_MAX);
	if (!n)
		return 0;
	d->members = calloc(n, sizeof(*d->members));
	if (!d->members)
		return -ENOMEM;
	d->nmembers = (uint16_t)n;
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		struct imexd_member *m = &d->members[i];

		if (check_keys(c, e, "members[]", keys, 2) ||
		    get_str(c, e, "name", m->name, sizeof(m->name)) ||
		    get_str(c, e, "addr", m->addr, sizeof(m->addr)))
			return -EINVAL;
	}
	return 0;
}

static int channel_from(const struct jctx *c, json_object *e,
			struct imexd_channel *ch)
{
	static const char *const keys[] = { "id", "uid", "gid", "mode" };
	uint64_t id = 0, uid = 0, gid = 0;

	if (check_keys(c, e, "channels[]", keys, 4) ||
	    get_uint(c, e, "id", IMEX_CHANNELS_MAX - 1, &id) ||
	    get_uint(c, e, "uid", UINT32_MAX, &uid) ||
	    get_uint(c, e, "gid", UINT32_MAX, &gid) ||
	    get_mode(c, e, &ch->mode))
		return -EINVAL;
	ch->id = (uint32_t)id;
	ch->uid = (uint32_t)uid;
	ch->gid = (uint32_t)gid;
	return 0;
}

static int channels_from(const struct jctx *c, json_object *a,
			 struct imexd_def *d)
{
	size_t i, n;

	if (!json_object_is_type(a, json_type_array))
		return jfail(c, "'channels' is not an array");
	n = json_object_array_length(a);
	if (n > IMEX_CHANNELS_MAX)
		return jfail(c, "more than %u channels", IMEX_CHANNELS_MAX);
	if (!n)
		return 0;
	d->channels = calloc(n, sizeof(*d->channels));
	if (!d->channels)
		return -ENOMEM;
	d->nchannels = (uint32_t)n;
	for (i = 0; i < n; i++)
		if (channel_from(c, json_object_array_get_idx(a, i),
				 &d->channels[i]))
			return -EINVAL;
	return 0;
}

static int def_from(const struct jctx *c, json_object *o, struct imexd_def *d)
{
	static const char *const keys[] = {
		"version", "name", "uuid", "generation", "deleted",
		"fabric_uuid", "partition", "members", "channels",
	};
	uint64_t version = 0, part = 0;
	json_object *del;
	const char *why;
	int ret;

	if (check_keys(c, o, "definition", keys, sizeof(keys) / sizeof(keys[0])))
		return -EINVAL;
	if (get_uint(c, o, "version", UINT32_MAX, &version))
		return -EINVAL;
	if (version != DEF_FORMAT)
		return jfail(c, "format version %llu is not %d",
			     (unsigned long long)version, DEF_FORMAT);
	del = get(o, "deleted");
	if (!json_object_is_type(del, json_type_boolean))
		return jfail(c, "'deleted' is not true or false");
	d->flags = json_object_get_boolean(del) ? IMEXD_DEF_DELETED : 0;
	if (get_str(c, o, "name", d->name, sizeof(d->name)) ||
	    get_uuid(c, o, "uuid", d->uuid) ||
	    get_uint(c, o, "generation", UINT64_MAX, &d->generation) ||
	    get_uuid(c, o, "fabric_uuid", d->fabric_uuid) ||
	    get_uint(c, o, "partition", UINT32_MAX, &part))
		return -EINVAL;
	d->partition = (uint32_t)part;
	ret = members_from(c, get(o, "members"), d);
	if (!ret)
		ret = channels_from(c, get(o, "channels"), d);
	if (ret == -ENOMEM)
		jfail(c, "out of memory");
	if (ret)
		return ret;
	if (imexd_def_check(d, &why))
		return jfail(c, "%s", why);
	return 0;
}

static json_object *parse_json(const struct jctx *c, const char *s, size_t n)
{
	struct json_tokener *tok;
	json_object *o;
	size_t end;

	if (memchr(s, '\0', n)) {
		jfail(c, "NUL byte in JSON");
		return NULL;
	}
	tok = json_tokener_new();
	if (!tok) {
		jfail(c, "out of memory");
		return NULL;
	}
	o = json_tokener_parse_ex(tok, s, (int)n);
	if (!o) {
		jfail(c, "not JSON: %s",
		      json_tokener_error_desc(json_tokener_get_error(tok)));
		json_tokener_free(tok);
		return NULL;
	}
	/* One document; only white space may follow. */
	for (end = json_tokener_get_parse_end(tok); end < n; end++)
		if (!strchr(" \t\r\n", s[end]))
			break;
	json_tokener_free(tok);
	if (end < n) {
		json_object_put(o);
		jfail(c, "text after the JSON document");
		return NULL;
	}
	return o;
}

static int def_from_text(const char *s, size_t n, struct imexd_def *def,
			 char *err, size_t errlen)
{
	struct jctx c = { err, errlen };
	struct imexd_def d;
	json_object *o;
	int ret;

	if (!s || !def)
		return jfail(&c, "nothing to parse");
	if (n > DEF_FILE_MAX)
		return jfail(&c, "larger than %d bytes", DEF_FILE_MAX);
	o = parse_json(&c, s, n);
	if (!o)
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	ret = def_from(&c, o, &d);
	json_object_put(o);
	if (ret) {
		imexd_def_free(&d);
		return ret;
	}
	*def = d;
	return 0;
}

int imexd_def_from_json(const char *json, struct imexd_def *def, char *err,
			size_t errlen)
{
	return def_from_text(json, json ? strlen(json) : 0, def, err, errlen);
}

/* ---- the store ------------------------------------------------------------ */

int imexd_store_open(struct imexd_store **store, const char *dir, char *err,
		     size_t errlen)
{
	struct imexd_store *s;

	if (!store || !dir || !*dir)
		return imexd_errf(err, errlen, -EINVAL, "no state directory");
	s = calloc(1, sizeof(*s));
	if (!s || asprintf(&s->domdir, "%s/%s", dir, DOMAINS_DIR) < 0) {
		free(s);
		return imexd_errf(err, errlen, -ENOMEM, "out of memory");
	}
	s->dir = strdup(dir);
	s->dirfd = -1;
	s->domfd = -1;
	if (!s->dir) {
		imexd_store_close(s);
		return imexd_errf(err, errlen, -ENOMEM, "out of memory");
	}
	s->dirfd = imexd_file_open_dir(AT_FDCWD, dir, 0, err, errlen);
	if (s->dirfd >= 0)
		s->domfd = imexd_file_open_dir(AT_FDCWD, s->domdir, O_NOFOLLOW, err,
				    errlen);
	if (s->domfd < 0) {
		int ret = s->dirfd < 0 ? s->dirfd : s->domfd;

		imexd_store_close(s);
		return ret;
	}
	imexd_file_remove_stale(s->dirfd);
	imexd_file_remove_stale(s->domfd);
	*store = s;
	return 0;
}

void imexd_store_close(struct imexd_store *s)
{
	if (!s)
		return;
	if (s->dirfd >= 0)
		close(s->dirfd);
	if (s->domfd >= 0)
		close(s->domfd);
	free(s->dir);
	free(s->domdir);
	free(s);
}

static int node_uuid_read(struct imexd_store *s, uint8_t uuid[16])
{
	static const char *const keys[] = { "uuid" };
	struct jctx c = { NULL, 0 };
	char *buf = NULL;
	json_object *o;
	size_t len;
	int ret;

	ret = imexd_file_read_at(s->dirfd, NODE_FILE, NODE_FILE_MAX, &buf, &len);
	if (ret)
		return ret;
	o = parse_json(&c, buf, len);
	free(buf);
	if (!o)
		return -EBADMSG;
	ret = (check_keys(&c, o, NODE_FILE, keys, 1) ||
	       get_uuid(&c, o, "uuid", uuid)) ? -EBADMSG : 0;
	json_object_put(o);
	return ret;
}

static int node_uuid_create(struct imexd_store *s, uint8_t uuid[16])
{
	const char *text;
	json_object *o;
	size_t got = 0;
	int ret;

	while (got < 16) {
		ssize_t r = getrandom(uuid + got, 16 - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		got += (size_t)r;
	}
	uuid[6] = (uuid[6] & 0x0f) | 0x40;	/* version 4: random */
	uuid[8] = (uuid[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
	o = json_object_new_object();
	if (!o || !put(o, "uuid", uuid_json(uuid))) {
		json_object_put(o);
		return -ENOMEM;
	}
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	ret = text ? imexd_file_replace(s->dirfd, s->dir, NODE_FILE, text,
				  strlen(text)) : -ENOMEM;
	json_object_put(o);
	return ret;
}

int imexd_store_node_uuid(struct imexd_store *s, uint8_t uuid[16])
{
	if (!s || !uuid)
		return -EINVAL;
	if (!s->have_uuid) {
		uint8_t u[16];
		int ret;

		/* A damaged node.json is an error, never a new identity. */
		ret = node_uuid_read(s, u);
		if (ret == -ENOENT)
			ret = node_uuid_create(s, u);
		if (ret)
			return ret;
		memcpy(s->uuid, u, sizeof(u));
		s->have_uuid = true;
	}
	memcpy(uuid, s->uuid, sizeof(s->uuid));
	return 0;
}

static void def_file_name(const uint8_t uuid[16], char *name, size_t size)
{
	char u[UUID_TEXT_LEN + 1];

	uuid_unparse(uuid, u);
	snprintf(name, size, "%s" JSON_SUFFIX, u);
}

int imexd_store_put_def(struct imexd_store *s, const struct imexd_def *def)
{
	char name[UUID_TEXT_LEN + sizeof(JSON_SUFFIX)];
	char *json;
	int ret;

	if (!s || imexd_def_check(def, NULL))
		return -EINVAL;
	json = imexd_def_to_json(def);
	if (!json)
		return -ENOMEM;
	def_file_name(def->uuid, name, sizeof(name));
	ret = imexd_file_replace(s->domfd, s->domdir, name, json, strlen(json));
	free(json);
	return ret;
}

int imexd_store_remove_def(struct imexd_store *s, const uint8_t uuid[16])
{
	char name[UUID_TEXT_LEN + sizeof(JSON_SUFFIX)];

	if (!s || !uuid)
		return -EINVAL;
	def_file_name(uuid, name, sizeof(name));
	if (unlinkat(s->domfd, name, 0) < 0)
		return errno == ENOENT ? 0 : -errno;
	return fsync(s->domfd) < 0 ? -errno : 0;
}

/* ---- loading -------------------------------------------------------------- */

#define LIST_MAX	4096	/* names looked at; more is a broken directory */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_def_candidate(const char *name)
{
	size_t n = strlen(name), sn = strlen(JSON_SUFFIX);

	return name[0] != '.' && n > sn && !strcmp(name + n - sn, JSON_SUFFIX);
}

/* The names of candidate definition files in @dfd, sorted. */
static int list_defs(int dfd, char ***out, size_t *n, char *err,
		     size_t errlen)
{
	char **v = calloc(LIST_MAX, sizeof(*v));
	struct dirent *de;
	size_t k = 0;
	int fd, ret = 0;
	DIR *d;

	if (!v)
		return -ENOMEM;
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		free(v);
		return ret;
	}
	while ((de = readdir(d))) {
		if (!is_def_candidate(de->d_name))
			continue;
		if (k == LIST_MAX) {
			append(err, errlen, DOMAINS_DIR ": more than %d files, the rest skipped",
			       LIST_MAX);
			break;
		}
		v[k] = strdup(de->d_name);
		if (!v[k]) {
			ret = -ENOMEM;
			break;
		}
		k++;
	}
	closedir(d);
	if (ret) {
		while (k)
			free(v[--k]);
		free(v);
		return ret;
	}
	qsort(v, k, sizeof(*v), cmp_name);
	*out = v;
	*n = k;
	return 0;
}

/* One file; the name must be the UUID inside, as put_def writes it. */
static int load_one(struct imexd_store *s, const char *name,
		    struct imexd_def *def, char *why, size_t whylen)
{
	char expect[UUID_TEXT_LEN + sizeof(JSON_SUFFIX)];
	uint8_t u[16];
	char *buf = NULL;
	size_t len = 0;
	int ret;

	if (uuid_parse(name, strlen(name) - strlen(JSON_SUFFIX), u))
		return imexd_errf(why, whylen, -EINVAL, "not named <uuid>.json");
	def_file_name(u, expect, sizeof(expect));
	if (strcmp(expect, name))
		return imexd_errf(why, whylen, -EINVAL, "not named as %s", expect);
	ret = imexd_file_read_at(s->domfd, name, DEF_FILE_MAX, &buf, &len);
	if (ret)
		return imexd_errf(why, whylen, ret, "cannot read: %s", strerror(-ret));
	ret = def_from_text(buf, len, def, why, whylen);
	free(buf);
	if (ret)
		return ret;
	if (memcmp(def->uuid, u, sizeof(u))) {
		imexd_def_free(def);
		return imexd_errf(why, whylen, -EINVAL,
			    "holds another domain than its name says");
	}
	return 0;
}

int imexd_store_load_defs(struct imexd_store *s, struct imexd_def **defs,
			  size_t *n, char *err, size_t errlen)
{
	struct imexd_def *out;
	char **names = NULL;
	size_t i, k = 0, count = 0;
	char why[256];
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!s || !defs || !n)
		return -EINVAL;
	ret = list_defs(s->domfd, &names, &count, err, errlen);
	if (ret)
		return imexd_errf(err, errlen, ret, "%s: cannot list: %s", s->domdir,
			    strerror(-ret));
	out = calloc(count ? count : 1, sizeof(*out));
	for (i = 0; out && i < count; i++) {
		if (k == IMEX_DOMAINS_MAX)
			append(err, errlen, DOMAINS_DIR "/%s: skipped: more than %d domains",
			       names[i], IMEX_DOMAINS_MAX);
		else if (load_one(s, names[i], &out[k], why, sizeof(why)))
			append(err, errlen, DOMAINS_DIR "/%s: skipped: %s",
			       names[i], why);
		else
			k++;
	}
	for (i = 0; i < count; i++)
		free(names[i]);
	free(names);
	if (!out)
		return -ENOMEM;
	if (!k) {
		free(out);
		out = NULL;
	}
	*defs = out;
	*n = k;
	return (int)k;
}
