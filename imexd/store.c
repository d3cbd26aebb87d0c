// SPDX-License-Identifier: GPL-2.0
/*
 * node.json's text (store.h): this node's UUID as JSON, parsed and made.
 * No I/O; the file itself is store_dir.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "imex_uuid.h"
#include "store.h"


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

/* ---- node.json ------------------------------------------------------------ */

int imexd_store_node_parse(const char *text, size_t len, uint8_t uuid[16],
			   char *err, size_t errlen)
{
	static const char *const keys[] = { "uuid" };
	struct jctx c = { err, errlen };
	json_object *o;
	int ret;

	o = parse_json(&c, text, len);
	if (!o)
		return -EBADMSG;
	ret = (check_keys(&c, o, IMEXD_STORE_NODE_FILE, keys, 1) ||
	       get_uuid(&c, o, "uuid", uuid)) ? -EBADMSG : 0;
	json_object_put(o);
	return ret;
}

char *imexd_store_node_text(const uint8_t uuid[16])
{
	const char *text;
	json_object *o;
	char *copy = NULL;

	o = json_object_new_object();
	if (!o || !put(o, "uuid", uuid_json(uuid))) {
		json_object_put(o);
		return NULL;
	}
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	if (text)
		copy = strdup(text);
	json_object_put(o);
	return copy;
}
