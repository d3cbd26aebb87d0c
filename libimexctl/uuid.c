// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * UUIDs in their canonical 8-4-4-4-12 text form: the public entry points
 * over common/imex_uuid.c.
 */
#include <errno.h>
#include <string.h>

#include "imex_uuid.h"
#include "internal.h"

_Static_assert(IMEXCTL_UUID_STR_LEN == IMEX_UUID_TEXT_LEN + 1, "UUID text length differs");

IMEXCTL_API int imexctl_uuid_parse(const char *s, uint8_t uuid[IMEXCTL_UUID_LEN])
{
	if (!s)
		return -EINVAL;
	return imex_uuid_parse(s, strlen(s), uuid);
}

IMEXCTL_API void imexctl_uuid_format(const uint8_t uuid[IMEXCTL_UUID_LEN],
				     char out[IMEXCTL_UUID_STR_LEN])
{
	imex_uuid_format(uuid, out);
}

IMEXCTL_API bool imexctl_uuid_is_null(const uint8_t uuid[IMEXCTL_UUID_LEN])
{
	size_t i;

	for (i = 0; i < IMEXCTL_UUID_LEN; i++)
		if (uuid[i])
			return false;
	return true;
}
