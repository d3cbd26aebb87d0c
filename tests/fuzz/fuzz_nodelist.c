// SPDX-License-Identifier: GPL-2.0
/*
 * The node-list parser: an accepted list has valid, unique names and
 * addresses within bounds and at most IMEX_MEMBERS_MAX entries; every entry
 * of it parses alone as NAME=ADDR to the same member.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodelist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_member(const struct imexd_member *m)
{
	size_t i, n;

	if (!memchr(m->name, '\0', sizeof(m->name)) || !imexd_name_valid(m->name))
		abort();
	if (!memchr(m->addr, '\0', sizeof(m->addr)))
		abort();
	n = strlen(m->addr);
	for (i = 0; i < n; i++)
		if (m->addr[i] <= ' ' || m->addr[i] > '~')
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imexd_member *list = (void *)1, one;
	char err[512], entry[IMEX_NAME_MAX + IMEXD_ADDR_MAX + 2];
	size_t n = 12345, i, j;
	char *s;
	int r;

	err[0] = '\0';
	r = imexd_nodelist_parse("fuzz.cfg", (const char *)data, size, &list,
				 &n, err, sizeof(err));
	if (r) {
		if (r != -EINVAL && r != -ENOMEM)
			abort();
		if (!err[0] || !memchr(err, '\0', sizeof(err)))
			abort();
	} else {
		if (n > IMEX_MEMBERS_MAX || (n && !list))
			abort();
		for (i = 0; i < n; i++) {
			check_member(&list[i]);
			for (j = 0; j < i; j++)
				if (!strcmp(list[i].name, list[j].name))
					abort();
			snprintf(entry, sizeof(entry), "%s=%s", list[i].name,
				 list[i].addr);
			memset(&one, 0, sizeof(one));
			if (imexd_nodelist_entry(entry, &one, err, sizeof(err)) ||
			    strcmp(one.name, list[i].name) ||
			    strcmp(one.addr, list[i].addr))
				abort();
		}
		free(list);
	}

	/* The same bytes as one --nodes item. */
	s = strndup((const char *)data, size);
	if (!s)
		return 0;
	memset(&one, 0, sizeof(one));
	err[0] = '\0';
	if (imexd_nodelist_entry(s, &one, err, sizeof(err)) == 0)
		check_member(&one);
	else if (!err[0])
		abort();
	free(s);
	return 0;
}
