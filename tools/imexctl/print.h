/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One call prints a value for people or for machines: in text mode
 * print_*() writes @fmt with the value, in JSON mode it adds @key to the
 * object or array being built (json-c), and closing the outermost one
 * prints the document.  PRINT_TEXT / PRINT_JSON limit a call to one mode.
 */
#ifndef IMEXCTL_PRINT_H
#define IMEXCTL_PRINT_H

#include <stdbool.h>

struct json_object;

enum print_type {
	PRINT_TEXT = 1,
	PRINT_JSON = 2,
	PRINT_ANY = PRINT_TEXT | PRINT_JSON,
};

/* The mode of what follows: cli_start() sets it from the verb's --json. */
void print_mode(bool json);
bool print_is_json(void);

/* @key: NULL at the top and in arrays.  Text mode: nothing printed. */
void print_open_object(const char *key);
void print_close_object(void);
void print_open_array(const char *key);
void print_close_array(void);

/* @val NULL is JSON null (and "(null)" never reaches text: @fmt NULL). */
void print_string(enum print_type t, const char *key, const char *fmt, const char *val);
void print_uint(enum print_type t, const char *key, const char *fmt, unsigned int val);
void print_int(enum print_type t, const char *key, const char *fmt, int val);
void print_bool(enum print_type t, const char *key, const char *fmt, bool val);
void print_null(const char *key);
/* JSON only: @val, or null when not @has. */
void print_opt_uint(const char *key, bool has, unsigned int val);
/* A value built with json-c (owned from here on): JSON mode only. */
void print_json(const char *key, struct json_object *val);
/* A verb done with @val: {"@key": @val, "@flag": true}, or @fmt with @val. */
void print_done(const char *key, const char *val, const char *flag, const char *fmt);
/* Text mode: end the line. */
void print_nl(void);

#endif /* IMEXCTL_PRINT_H */
