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

#include "store.h"

#define UUID_TEXT_LEN	36

/* ---- UUID text and JSON helpers ------------------------------------------ */

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
	char s[UUID_TEXT_LEN + 1];

	uuid_unparse(u, s);
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
	    uuid_parse(json_object_get_string(v),
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
