// SPDX-License-Identifier: GPL-2.0-only
/* Text or JSON from one call: see print.h. */
#include <stdio.h>

#include <json-c/json.h>

#include "cli.h"
#include "print.h"

#define PRINT_DEPTH_MAX 8

static struct {
	bool json;
	int depth;
	struct json_object *stack[PRINT_DEPTH_MAX];	/* [0] owns the rest */
} P;

void print_mode(bool json)
{
	P.json = json;
}

bool print_is_json(void)
{
	return P.json;
}

/* @val under @key of the innermost object, or at the end of its array. */
static void attach(const char *key, struct json_object *val)
{
	struct json_object *top;

	if (!P.depth) {			/* a whole document: print it now */
		json_print(val);
		json_object_put(val);
		return;
	}
	top = P.stack[P.depth - 1];
	if (json_object_is_type(top, json_type_array))
		json_object_array_add(top, val);
	else
		json_object_object_add(top, key, val);
}

/* JSON mode: a new container from @make, under @key, innermost from now. */
static void open_container(const char *key, struct json_object *(*make)(void))
{
	struct json_object *c;

	if (!P.json || P.depth == PRINT_DEPTH_MAX)
		return;
	c = make();
	if (P.depth)
		attach(key, c);
	P.stack[P.depth++] = c;
}

static void close_container(void)
{
	if (!P.json || !P.depth)
		return;
	if (--P.depth == 0) {
		json_print(P.stack[0]);
		json_object_put(P.stack[0]);
	}
	P.stack[P.depth] = NULL;
}

void print_open_object(const char *key)
{
	open_container(key, json_object_new_object);
}

void print_open_array(const char *key)
{
	open_container(key, json_object_new_array);
}

void print_close_object(void)
{
	close_container();
}

void print_close_array(void)
{
	close_container();
}

void print_json(const char *key, struct json_object *val)
{
	if (P.json)
		attach(key, val);
	else
		json_object_put(val);
}

/* The text half: true when this call prints text. */
static bool text(enum print_type t, const char *fmt)
{
	return !P.json && (t & PRINT_TEXT) && fmt;
}

static bool json(enum print_type t)
{
	return P.json && (t & PRINT_JSON);
}

void print_string(enum print_type t, const char *key, const char *fmt, const char *val)
{
	if (json(t))
		attach(key, val ? json_object_new_string(val) : NULL);
	else if (text(t, fmt))
		printf(fmt, val);
}

void print_uint(enum print_type t, const char *key, const char *fmt, unsigned int val)
{
	if (json(t))
		attach(key, json_object_new_int64(val));
	else if (text(t, fmt))
		printf(fmt, val);
}

void print_int(enum print_type t, const char *key, const char *fmt, int val)
{
	if (json(t))
		attach(key, json_object_new_int(val));
	else if (text(t, fmt))
		printf(fmt, val);
}

void print_bool(enum print_type t, const char *key, const char *fmt, bool val)
{
	if (json(t))
		attach(key, json_object_new_boolean(val));
	else if (text(t, fmt))
		printf(fmt, val ? "yes" : "no");
}

void print_null(const char *key)
{
	if (P.json)
		attach(key, NULL);
}

void print_opt_uint(const char *key, bool has, unsigned int val)
{
	if (has)
		print_uint(PRINT_JSON, key, NULL, val);
	else
		print_null(key);
}

void print_done(const char *key, const char *val, const char *flag, const char *fmt)
{
	print_open_object(NULL);
	print_string(PRINT_JSON, key, NULL, val);
	print_bool(PRINT_JSON, flag, NULL, true);
	print_string(PRINT_TEXT, NULL, fmt, val);
	print_close_object();
}

void print_nl(void)
{
	if (!P.json)
		putchar('\n');
}
