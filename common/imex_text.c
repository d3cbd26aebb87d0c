// SPDX-License-Identifier: LGPL-2.1-or-later
/* Text helpers for parsers (imex_text.h). */
#include <string.h>

#include "imex_text.h"

const char *imex_text_show(char *buf, size_t size, const char *s, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n && k + 4 < size && i < IMEX_SHOW_MAX; i++)
		buf[k++] = (s[i] >= ' ' && s[i] <= '~') ? s[i] : '?';
	if (i < n && k + 4 <= size) {
		memcpy(buf + k, "...", 3);
		k += 3;
	}
	buf[k] = '\0';
	return buf;
}

bool imex_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
