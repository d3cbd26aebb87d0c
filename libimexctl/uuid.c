// SPDX-License-Identifier: LGPL-2.1-or-later
/* UUIDs in their canonical 8-4-4-4-12 text form; strict, no libuuid needed. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

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

IMEXCTL_API int imexctl_uuid_parse(const char *s, uint8_t uuid[IMEXCTL_UUID_LEN])
{
	uint8_t out[IMEXCTL_UUID_LEN];
	size_t i, n = 0;

	if (!s || strlen(s) != IMEXCTL_UUID_STR_LEN - 1)
		return -EINVAL;
	for (i = 0; i < IMEXCTL_UUID_STR_LEN - 1; i++) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -EINVAL;
			continue;
		}
		hi = hexval(s[i]);
		lo = hexval(s[i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[n++] = (uint8_t)(hi << 4 | lo);
		i++;
	}
	memcpy(uuid, out, sizeof(out));
	return 0;
}

IMEXCTL_API void imexctl_uuid_format(const uint8_t uuid[IMEXCTL_UUID_LEN],
				     char out[IMEXCTL_UUID_STR_LEN])
{
	snprintf(out, IMEXCTL_UUID_STR_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 uuid[0], uuid[1], uuid[2], uuid[3], uuid[4], uuid[5], uuid[6],
		 uuid[7], uuid[8], uuid[9], uuid[10], uuid[11], uuid[12],
		 uuid[13], uuid[14], uuid[15]);
}

IMEXCTL_API bool imexctl_uuid_is_null(const uint8_t uuid[IMEXCTL_UUID_LEN])
{
	size_t i;

	for (i = 0; i < IMEXCTL_UUID_LEN; i++)
		if (uuid[i])
			return false;
	return true;
}
