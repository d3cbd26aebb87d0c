/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* UUIDs in their canonical 8-4-4-4-12 text form; strict, no libuuid needed. */
#ifndef IMEX_UUID_H
#define IMEX_UUID_H

#include <stddef.h>
#include <stdint.h>

#define IMEX_UUID_TEXT_LEN	36	/* without the terminating NUL */

/*
 * Parse exactly @n bytes of @s (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, hex
 * digits in either case) into @out.  0, or -EINVAL with @out untouched.
 */
int imex_uuid_parse(const char *s, size_t n, uint8_t out[16]);

/* @u as 36 lower-case characters and a NUL into @out. */
void imex_uuid_format(const uint8_t u[16], char out[IMEX_UUID_TEXT_LEN + 1]);

#endif
