// SPDX-License-Identifier: LGPL-2.1-or-later
/* Small readers for /proc/devices and /sys/module files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Strict decimal u32: digits only, no sign, no trailing garbage. */
int imexctl_parse_u32(const char *s, uint32_t *val)
{
	unsigned long long v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long long)(*s - '0');
		if (v > UINT32_MAX)
			return -ERANGE;
	}
	*val = (uint32_t)v;
	return 0;
}

/* The first line of @path without its newline. */
int imexctl_read_line(const char *path, char *buf, size_t size)
{
	FILE *f;
	size_t len;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)size, f)) {
		int r = ferror(f) ? -EIO : -ENODATA;

		fclose(f);
		return r;
	}
	fclose(f);
	len = strlen(buf);
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	return 0;
}

int imexctl_read_u32(const char *path, uint32_t *val)
{
	char buf[32];
	int r;

	r = imexctl_read_line(path, buf, sizeof(buf));
	return r < 0 ? r : imexctl_parse_u32(buf, val);
}

/*
 * The major of char device region @name in a /proc/devices style file:
 * "Character devices:" lines of "<major> <name>" until "Block devices:".
 */
int imexctl_proc_devices_major(const char *path, const char *name,
			       uint32_t *major)
{
	char line[256], num[16], dev[128];
	bool chr = false;
	int r = -ENOENT;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Character devices:", 18)) {
			chr = true;
			continue;
		}
		if (!strncmp(line, "Block devices:", 14))
			chr = false;
		if (!chr || sscanf(line, " %15[0-9] %127s", num, dev) != 2)
			continue;
		if (!strcmp(dev, name) && imexctl_parse_u32(num, major) == 0) {
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}
