// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit test of hostlist_expand(): Slurm's host list forms, and refusals. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hostlist.h"

static int failed;

static void expect(const char *list, size_t max, int want_rc, const char *want)
{
	char **h, got[1024] = "";
	size_t n, i;
	int rc = hostlist_expand(list, max, &h, &n);

	for (i = 0; !rc && i < n; i++) {
		strcat(got, i ? " " : "");
		strncat(got, h[i], sizeof(got) - strlen(got) - 1);
	}
	if (rc != want_rc || (!rc && (!want || strcmp(got, want)))) {
		printf("not ok - '%s': rc %d '%s', want %d '%s'\n", list, rc, got,
		       want_rc, want ? want : "");
		failed++;
	} else {
		printf("ok - '%s'\n", list);
	}
	if (!rc)
		hostlist_free(h, n);
}

int main(void)
{
	expect("node1", 8, 0, "node1");
	expect("node[1-3]", 8, 0, "node1 node2 node3");
	expect("n[1-2,5],login", 8, 0, "n1 n2 n5 login");
	expect("gpu[08-10]x", 8, 0, "gpu08x gpu09x gpu10x");
	expect("r[1-2]-g[1-2]", 8, 0, "r1-g1 r1-g2 r2-g1 r2-g2");
	expect("a,b,a", 8, 0, "a b");
	expect("node[1-9]", 8, -E2BIG, NULL);
	expect("node[3-1]", 8, -EINVAL, NULL);
	expect("node[1-3", 8, -EINVAL, NULL);
	expect("node1]", 8, -EINVAL, NULL);
	expect("node[]", 8, -EINVAL, NULL);
	expect("node[1,]", 8, -EINVAL, NULL);
	expect("node[a]", 8, -EINVAL, NULL);
	expect("a,,b", 8, -EINVAL, NULL);
	expect("a,", 8, -EINVAL, NULL);
	expect("", 8, -EINVAL, NULL);
	expect("n[0-4294967295]", 8, -E2BIG, NULL);
	expect("n[99999999999]", 8, -EINVAL, NULL);
	printf("%s\n", failed ? "FAILED" : "all passed");
	return !!failed;
}
