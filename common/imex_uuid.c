// SPDX-License-Identifier: LGPL-2.1-or-later
/* UUID text (imex_uuid.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "imex_uuid.h"

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

int imex_uuid_parse(const char *s, size_t n, uint8_t out[16])
{
	uint8_t u[16];
	size_t i, k = 0;
	int hi, lo;

	if (n != IMEX_UUID_TEXT_LEN)
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

void imex_uuid_format(const uint8_t u[16], char out[IMEX_UUID_TEXT_LEN + 1])
{
	snprintf(out, IMEX_UUID_TEXT_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}
