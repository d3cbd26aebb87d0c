// SPDX-License-Identifier: LGPL-2.1-or-later
/* Slurm host list expansion: see hostlist.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

#define HOST_MAX 256	/* longer names are refused */

struct hl {
	char **v;
	size_t n, max;
};

static int hl_add(struct hl *hl, const char *name)
{
	size_t i;

	if (!*name || strlen(name) >= HOST_MAX)
		return -EINVAL;
	for (i = 0; i < hl->n; i++)
		if (!strcmp(hl->v[i], name))
			return 0;
	if (hl->n == hl->max)
		return -E2BIG;
	hl->v[hl->n] = strdup(name);
	if (!hl->v[hl->n])
		return -ENOMEM;
	hl->n++;
	return 0;
}

/*
 * Expand one host expression @expr (no top-level comma): @prefix is what the
 * earlier brackets already produced.  Each bracket group multiplies.
 */
static int expand_expr(struct hl *hl, const char *prefix, const char *expr)
{
	const char *open, *close, *p;
	char buf[HOST_MAX * 2];
	int rc;

	open = strchr(expr, '[');
	if (!open) {
		if (strchr(expr, ']'))
			return -EINVAL;
		if ((size_t)snprintf(buf, sizeof(buf), "%s%s", prefix, expr) >= HOST_MAX)
			return -EINVAL;
		return hl_add(hl, buf);
	}
	close = strchr(open, ']');
	if (!close || memchr(expr, ']', open - expr) ||
	    memchr(open + 1, '[', close - open - 1) || close == open + 1)
		return -EINVAL;

	/* Each comma-separated range inside the brackets: N or N-M, where
	 * the width of N (leading zeros) is kept. */
	for (p = open + 1; p < close;) {
		const char *end = memchr(p, ',', close - p);
		unsigned long lo, hi, v;
		char *q;
		int width;

		if (!end)
			end = close;
		if (p == end || *p < '0' || *p > '9')
			return -EINVAL;
		lo = strtoul(p, &q, 10);
		width = (int)(q - p);
		hi = lo;
		if (q < end && *q == '-') {
			if (q[1] < '0' || q[1] > '9')
				return -EINVAL;
			hi = strtoul(q + 1, &q, 10);
		}
		if (q != end || hi < lo || width > 9)
			return -EINVAL;
		if (hi - lo >= hl->max)
			return -E2BIG;
		for (v = lo; v <= hi; v++) {
			char head[HOST_MAX * 2];

			if ((size_t)snprintf(head, sizeof(head), "%s%.*s%0*lu", prefix,
					     (int)(open - expr), expr, width, v) >= HOST_MAX)
				return -EINVAL;
			rc = expand_expr(hl, head, close + 1);
			if (rc)
				return rc;
		}
		p = end < close ? end + 1 : close;
		if (end < close && p == close)
			return -EINVAL;	/* trailing comma */
	}
	return 0;
}

int hostlist_expand(const char *list, size_t max, char ***hosts, size_t *n)
{
	struct hl hl = { .max = max };
	const char *p = list;
	char expr[HOST_MAX * 4];
	int rc = -EINVAL;

	*hosts = NULL;
	*n = 0;
	if (!list || !max)
		return -EINVAL;
	hl.v = calloc(max, sizeof(*hl.v));
	if (!hl.v)
		return -ENOMEM;
	while (*p) {
		size_t len = 0;
		int depth = 0;

		/* One expression: up to a comma outside brackets. */
		for (; p[len] && (depth || p[len] != ','); len++) {
			if (p[len] == '[')
				depth++;
			else if (p[len] == ']' && --depth < 0)
				goto fail;
		}
		if (depth || !len || len >= sizeof(expr))
			goto fail;
		memcpy(expr, p, len);
		expr[len] = '\0';
		rc = expand_expr(&hl, "", expr);
		if (rc)
			goto fail;
		p += len;
		if (*p == ',' && !*++p) {
			rc = -EINVAL;
			goto fail;
		}
	}
	if (!hl.n) {
		rc = -EINVAL;
		goto fail;
	}
	*hosts = hl.v;
	*n = hl.n;
	return 0;
fail:
	hostlist_free(hl.v, hl.n);
	return rc ? rc : -EINVAL;
}

void hostlist_free(char **hosts, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(hosts[i]);
	free(hosts);
}
