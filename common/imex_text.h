/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Text helpers for parsers that quote what they refuse. */
#ifndef IMEX_TEXT_H
#define IMEX_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#define IMEX_SHOW_MAX	64	/* value bytes quoted in a message */

/*
 * @n bytes of @s, fit for a message: at most IMEX_SHOW_MAX of them,
 * unprintables as '?', "..." after a cut.  Written to @buf (@size bytes,
 * at least 1), which is returned.
 */
const char *imex_text_show(char *buf, size_t size, const char *s, size_t n);

/* Space or tab, or \r \v \f: blank, but not a line end. */
bool imex_is_blank(char c);

#endif
