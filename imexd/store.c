// SPDX-License-Identifier: GPL-2.0
/*
 * The state directory (store.h).
 *
 * node.json is replaced atomically: the new content goes to a temp file in
 * the same directory (".tmp.*", never a name the loader reads), which is
 * fsync'ed and renamed over the old one, then the directory is fsync'ed so
 * the rename itself is durable.  A crash at any point leaves the old or the
 * new file; temp files a crash leaves behind are removed at the next open.
 * The domains themselves live in the raft log (raftlog.h, STATE_DIRECTORY/raft).
 */
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

#include "imex_uuid.h"
#include "store.h"
#include "store_file.h"

#define NODE_FILE	"node.json"
#define NODE_FILE_MAX	4096

struct imexd_store {
	char *dir;
	int dirfd;
	bool have_uuid;
	uint8_t uuid[16];
};

/* ---- JSON helpers --------------------------------------------------------- */

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

static json_object *uuid_json(const uint8_t u[16])
{
	char s[IMEX_UUID_TEXT_LEN + 1];

	imex_uuid_format(u, s);
	return json_object_new_string(s);
}

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

static int get_uuid(const struct jctx *c, json_object *o, const char *k,
		    uint8_t out[16])
{
	json_object *v = get(o, k);

	if (!json_object_is_type(v, json_type_string) ||
	    imex_uuid_parse(json_object_get_string(v),
			    (size_t)json_object_get_string_len(v), out))
		return jfail(c, "'%s' is not a UUID", k);
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

/* ---- the store ------------------------------------------------------------ */

int imexd_store_open(struct imexd_store **store, const char *dir, char *err,
		     size_t errlen)
{
	struct imexd_store *s;

	if (!store || !dir || !*dir)
		return imexd_errf(err, errlen, -EINVAL, "no state directory");
	s = calloc(1, sizeof(*s));
	if (!s)
		return imexd_errf(err, errlen, -ENOMEM, "out of memory");
	s->dir = strdup(dir);
	s->dirfd = -1;
	if (!s->dir) {
		imexd_store_close(s);
		return imexd_errf(err, errlen, -ENOMEM, "out of memory");
	}
	s->dirfd = imexd_file_open_dir(AT_FDCWD, dir, 0, err, errlen);
	if (s->dirfd < 0) {
		int ret = s->dirfd;

		imexd_store_close(s);
		return ret;
	}
	imexd_file_remove_stale(s->dirfd);
	*store = s;
	return 0;
}

void imexd_store_close(struct imexd_store *s)
{
	if (!s)
		return;
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->dir);
	free(s);
}

static int node_uuid_read(struct imexd_store *s, uint8_t uuid[16], char *err,
			  size_t errlen)
{
	static const char *const keys[] = { "uuid" };
	struct jctx c = { err, errlen };
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

int imexd_store_node_uuid(struct imexd_store *s, uint8_t uuid[16], char *err,
			  size_t errlen)
{
	if (errlen)
		err[0] = '\0';
	if (!s || !uuid)
		return -EINVAL;
	if (!s->have_uuid) {
		uint8_t u[16];
		int ret;

		/* A damaged node.json is an error, never a new identity. */
		ret = node_uuid_read(s, u, err, errlen);
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
