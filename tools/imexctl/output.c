// SPDX-License-Identifier: GPL-2.0-only
/* Output: aligned tables for people, json-c objects for machines. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "cli.h"

struct table {
	size_t cols, rows, cap;
	char **cells;			/* rows * cols strings, row 0 = header */
};

/* A table with @cols columns headed by @hdr[0..cols-1]. */
struct table *table_new_v(size_t cols, const char *const *hdr)
{
	struct table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cols = cols;
	t->cap = 4;
	t->cells = calloc(t->cap * cols, sizeof(char *));
	if (!t->cells) {
		free(t);
		return NULL;
	}
	table_add_v(t, hdr);
	return t;
}

/* One row of t->cols strings (NULL prints as empty), copied. */
void table_add_v(struct table *t, const char *const *cells)
{
	size_t i;
	char **nc;

	if (!t)
		return;
	if (t->rows == t->cap) {
		nc = realloc(t->cells, t->cap * 2 * t->cols * sizeof(char *));
		if (!nc)
			return;
		t->cells = nc;
		t->cap *= 2;
	}
	for (i = 0; i < t->cols; i++)
		t->cells[t->rows * t->cols + i] = strdup(cells[i] ? cells[i] : "");
	t->rows++;
}

#define TABLE_VARARGS_MAX 8

struct table *table_new(size_t cols, ...)
{
	const char *hdr[TABLE_VARARGS_MAX];
	va_list ap;
	size_t i;

	if (cols > TABLE_VARARGS_MAX)
		return NULL;
	va_start(ap, cols);
	for (i = 0; i < cols; i++)
		hdr[i] = va_arg(ap, const char *);
	va_end(ap);
	return table_new_v(cols, hdr);
}

void table_add(struct table *t, ...)
{
	const char *cells[TABLE_VARARGS_MAX];
	va_list ap;
	size_t i;

	if (!t)
		return;
	va_start(ap, t);
	for (i = 0; i < t->cols && i < TABLE_VARARGS_MAX; i++)
		cells[i] = va_arg(ap, const char *);
	va_end(ap);
	table_add_v(t, cells);
}

void table_print(struct table *t)
{
	size_t r, c, *w;

	if (!t)
		return;
	w = calloc(t->cols, sizeof(*w));
	if (!w)
		return;
	for (r = 0; r < t->rows; r++)
		for (c = 0; c < t->cols; c++) {
			const char *s = t->cells[r * t->cols + c];
			size_t len = s ? strlen(s) : 0;

			if (len > w[c])
				w[c] = len;
		}
	for (r = 0; r < t->rows; r++) {
		for (c = 0; c < t->cols; c++) {
			const char *s = t->cells[r * t->cols + c];

			if (c + 1 == t->cols)
				printf("%s\n", s ? s : "");
			else
				printf("%-*s  ", (int)w[c], s ? s : "");
		}
	}
	free(w);
}

void table_free(struct table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->rows * t->cols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

void json_print(struct json_object *obj)
{
	printf("%s\n", json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_SPACED |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* "0-3,7,9-10": channel ids as ranges; @ids ascending.  free() it. */
char *format_ids(const uint32_t *ids, size_t n)
{
	size_t i = 0, len = 0, cap = n * 24 + 1;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	s[0] = '\0';
	while (i < n) {
		size_t j = i;

		while (j + 1 < n && ids[j + 1] == ids[j] + 1)
			j++;
		if (j == i)
			len += (size_t)snprintf(s + len, cap - len, "%s%u", len ? "," : "", ids[i]);
		else
			len += (size_t)snprintf(s + len, cap - len, "%s%u-%u", len ? "," : "",
						ids[i], ids[j]);
		i = j + 1;
	}
	return s;
}

struct json_object *json_uuid(const uint8_t uuid[IMEXCTL_UUID_LEN])
{
	char s[IMEXCTL_UUID_STR_LEN];

	imexctl_uuid_format(uuid, s);
	return json_object_new_string(s);
}

/* {"uuid": ..., "partition": N} or null when unset. */
struct json_object *json_fabric(bool has, const uint8_t uuid[IMEXCTL_UUID_LEN],
				uint32_t partition)
{
	struct json_object *o;

	if (!has)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "uuid", json_uuid(uuid));
	json_object_object_add(o, "partition", json_object_new_int64(partition));
	return o;
}

struct json_object *json_ids(const uint32_t *ids, size_t n)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_int64(ids[i]));
	return a;
}

/* Modes as octal strings ("0600"): unambiguous for people and scripts. */
struct json_object *json_mode(uint32_t mode)
{
	char s[8];

	snprintf(s, sizeof(s), "%04o", mode & 07777);
	return json_object_new_string(s);
}

/*
 * @ms since the epoch as ISO 8601 UTC: "2026-11-24T12:00:05Z", with
 * @millis "2026-11-24T12:00:05.123Z"; "" for 0 (not known) or a time
 * gmtime_r() cannot represent.
 */
void format_iso8601(uint64_t ms, bool millis, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char base[32];

	buf[0] = '\0';
	if (!ms || !gmtime_r(&t, &tm) ||
	    !strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm))
		return;
	if (millis)
		snprintf(buf, len, "%s.%03uZ", base, (unsigned int)(ms % 1000));
	else
		snprintf(buf, len, "%sZ", base);
}

/*
 * Free text from imexd or the kernel (reasons) for a terminal, malloc'd:
 * quotes, backslashes and control bytes escaped (\", \\, \xHH), so a
 * peer's words cannot move the cursor or forge a line.  NULL: no memory.
 */
char *text_escape(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *r = malloc(4 * n + 1);

	if (!r)
		return NULL;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			r[o++] = '\\';
			r[o++] = (char)ch;
		} else if (ch < 0x20 || ch == 0x7f) {
			snprintf(r + o, 5, "\\x%02x", ch);
			o += 4;
		} else {
			r[o++] = (char)ch;
		}
	}
	r[o] = 0;
	return r;
}
