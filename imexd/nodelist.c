// SPDX-License-Identifier: GPL-2.0
/*
 * Node list files and --nodes entries (nodelist.h).
 *
 * An entry gives a node name and the address its daemon listens on.  The
 * address is kept as written, except that a bare IPv6 address gets its
 * brackets ("fd00::1" -> "[fd00::1]") so that whoever splits host from port
 * later never has to guess.  Duplicates are found on a canonical form of the
 * address (IP text as inet_ntop writes it, host names in lower case, the
 * default port filled in), so "10.0.0.1" and "10.0.0.1:50100" collide.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imex_text.h"
#include "nodelist.h"

#define HOST_MAX	253	/* DNS name, without the trailing dot */
#define LABEL_MAX	63
#define KEY_MAX		(INET6_ADDRSTRLEN + HOST_MAX + 8)

/* An address, split. */
struct addr {
	char host[HOST_MAX + 1];	/* without brackets */
	unsigned char ip[16];
	int af;				/* AF_INET, AF_INET6, or 0: a name */
	unsigned int port;		/* 0: none given */
};

static int __attribute__((format(printf, 3, 4)))
fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static void trim(const char **s, size_t *n)
{
	while (*n && imex_is_blank(**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && imex_is_blank((*s)[*n - 1]))
		(*n)--;
}

/*
 * RFC 1123 labels (plus '_', which /etc/hosts tolerates), no trailing dot.
 * All digits and dots is refused: that is a broken IPv4 address.
 */
static bool host_ok(const char *s, size_t n)
{
	bool digits_only = true;
	size_t i, label = 0;

	if (!n || n > HOST_MAX)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (!label || s[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_')
			return false;
		if (!label && s[i] == '-')
			return false;
		if (!is_digit(s[i]))
			digits_only = false;
		if (++label > LABEL_MAX)
			return false;
	}
	return label && s[n - 1] != '-' && !digits_only;
}

static int parse_port(const char *s, size_t n, unsigned int *port)
{
	unsigned int v = 0;
	size_t i;

	if (!n || n > 5)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return -EINVAL;
		v = v * 10 + (unsigned int)(s[i] - '0');
	}
	if (!v || v > 65535)
		return -EINVAL;
	*port = v;
	return 0;
}

/* Split "[v6]:port", "[v6]", "v6", "v4:port", "host:port", "v4", "host". */
static int split_addr(const char *s, size_t n, const char **host,
		      size_t *hn, const char **port, size_t *pn, bool *v6)
{
	const char *c;

	*port = NULL;
	*pn = 0;
	*v6 = false;
	if (n && s[0] == '[') {
		c = memchr(s, ']', n);
		if (!c)
			return -EINVAL;
		*host = s + 1;
		*hn = (size_t)(c - s) - 1;
		*v6 = true;
		if (c + 1 == s + n)
			return 0;
		if (c[1] != ':')
			return -EINVAL;
		*port = c + 2;
		*pn = n - (size_t)(c + 2 - s);
		return 0;
	}
	*host = s;
	*hn = n;
	c = memchr(s, ':', n);
	if (!c)
		return 0;
	if (memchr(c + 1, ':', n - (size_t)(c + 1 - s))) {
		*v6 = true;	/* bare IPv6: no port possible */
		return 0;
	}
	*hn = (size_t)(c - s);
	*port = c + 1;
	*pn = n - (size_t)(c + 1 - s);
	return 0;
}

static int parse_addr(const char *s, size_t n, struct addr *a, char *err,
		      size_t errlen)
{
	const char *host, *port;
	size_t hn, pn;
	char b[IMEX_SHOW_MAX + 8];
	bool v6;

	memset(a, 0, sizeof(*a));
	if (split_addr(s, n, &host, &hn, &port, &pn, &v6) || hn > HOST_MAX)
		return fail(err, errlen, "'%s' is not HOST, HOST:PORT, IP, IP:PORT or [IPv6]:PORT",
			    imex_text_show(b, sizeof(b), s, n));
	if (port && parse_port(port, pn, &a->port))
		return fail(err, errlen, "'%s': the port is not 1..65535",
			    imex_text_show(b, sizeof(b), s, n));
	memcpy(a->host, host, hn);
	a->host[hn] = '\0';
	if (v6) {
		if (inet_pton(AF_INET6, a->host, a->ip) != 1)
			return fail(err, errlen, "'%s' is not a valid IPv6 address",
				    imex_text_show(b, sizeof(b), s, n));
		a->af = AF_INET6;
	} else if (inet_pton(AF_INET, a->host, a->ip) == 1) {
		a->af = AF_INET;
	} else if (!host_ok(host, hn)) {
		return fail(err, errlen, "'%s' is neither an IP address nor a host name",
			    imex_text_show(b, sizeof(b), a->host, hn));
	}
	return 0;
}

/* The address as stored: as written, brackets added to a bare IPv6. */
static int format_addr(const struct addr *a, char *out, size_t size)
{
	int r;

	if (a->af == AF_INET6)
		r = a->port ? snprintf(out, size, "[%s]:%u", a->host, a->port) :
			      snprintf(out, size, "[%s]", a->host);
	else
		r = a->port ? snprintf(out, size, "%s:%u", a->host, a->port) :
			      snprintf(out, size, "%s", a->host);
	return r < 0 || (size_t)r >= size ? -E2BIG : 0;
}

/* The form duplicates are found on. */
static void canon_addr(const struct addr *a, char *key, size_t size)
{
	unsigned int port = a->port ? a->port : IMEXD_DEFAULT_PORT;
	size_t i;

	if (a->af) {
		char ip[INET6_ADDRSTRLEN] = "";

		if (!inet_ntop(a->af, a->ip, ip, sizeof(ip)))
			ip[0] = '\0';
		snprintf(key, size, "%s|%u", ip, port);
		return;
	}
	snprintf(key, size, "%s|%u", a->host, port);
	for (i = 0; key[i] && key[i] != '|'; i++)
		if (key[i] >= 'A' && key[i] <= 'Z')
			key[i] = (char)(key[i] - 'A' + 'a');
}

static bool has_blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (imex_is_blank(s[i]))
			return true;
	return false;
}

static int entry(const char *s, size_t n, struct imexd_member *m, char *key,
		 size_t keylen, char *err, size_t errlen)
{
	const char *eq, *name = NULL, *as = s;
	size_t an = n, nn = 0;
	char b[IMEX_SHOW_MAX + 8];
	struct imexd_member t;
	struct addr a;
	int ret;

	trim(&as, &an);
	if (!an)
		return fail(err, errlen, "empty entry");
	eq = memchr(as, '=', an);
	if (eq) {
		name = as;
		nn = (size_t)(eq - as);
		an -= nn + 1;
		as = eq + 1;
		trim(&name, &nn);
		trim(&as, &an);
	}
	if (has_blank(as, an) || has_blank(name, nn))
		return fail(err, errlen, "'%s': one node per entry, without spaces inside",
			    imex_text_show(b, sizeof(b), s, n));
	ret = parse_addr(as, an, &a, err, errlen);
	if (ret)
		return ret;
	if (!eq && a.af)
		return fail(err, errlen, "'%s' is an IP address, which gives the node no name: write NAME=%s",
			    imex_text_show(b, sizeof(b), as, an), b);
	if (!eq) {
		name = a.host;
		nn = strlen(a.host);
	}
	memset(&t, 0, sizeof(t));
	if (nn >= sizeof(t.name))
		return fail(err, errlen, "node name '%s' is longer than %d characters%s",
			    imex_text_show(b, sizeof(b), name, nn), IMEX_NAME_MAX - 1,
			    eq ? "" : ": write NAME=ADDR");
	memcpy(t.name, name, nn);
	if (!imexd_name_valid(t.name))
		return fail(err, errlen, "node name '%s' is not valid: use letters, digits, '_', '.', '-'",
			    imex_text_show(b, sizeof(b), name, nn));
	if (format_addr(&a, t.addr, sizeof(t.addr)))
		return fail(err, errlen, "address '%s' is longer than %d characters",
			    imex_text_show(b, sizeof(b), as, an), IMEXD_ADDR_MAX);
	if (key)
		canon_addr(&a, key, keylen);
	*m = t;
	return 0;
}

int imexd_nodelist_entry(const char *e, struct imexd_member *m, char *err,
			 size_t errlen)
{
	if (!e || !m)
		return fail(err, errlen, "no entry");
	return entry(e, strlen(e), m, NULL, 0, err, errlen);
}

/* What the file parser remembers of each entry. */
struct seen {
	char key[KEY_MAX];
	unsigned int line;
};

static int check_dup(const struct imexd_member *ms, const struct seen *seen,
		     size_t n, char *err, size_t errlen, const char *path,
		     unsigned int line)
{
	const struct imexd_member *m = &ms[n];
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcmp(ms[i].name, m->name))
			return fail(err, errlen, "%s:%u: node '%s' is already listed on line %u",
				    path, line, m->name, seen[i].line);
		if (!strcmp(seen[i].key, seen[n].key))
			return fail(err, errlen, "%s:%u: address '%s' of '%s' is already the address of '%s' (line %u)",
				    path, line, m->addr, m->name, ms[i].name,
				    seen[i].line);
	}
	return 0;
}

/* One line without its newline; adds at most one entry. */
static int parse_line(const char *path, unsigned int line, const char *s,
		      size_t n, struct imexd_member *ms, struct seen *seen,
		      size_t *count, char *err, size_t errlen)
{
	const char *hash = memchr(s, '#', n);
	char why[256];

	if (memchr(s, '\0', n))
		return fail(err, errlen, "%s:%u: NUL byte: not a text file",
			    path, line);
	if (hash)
		n = (size_t)(hash - s);
	trim(&s, &n);
	if (!n)
		return 0;
	if (*count == IMEX_MEMBERS_MAX)
		return fail(err, errlen, "%s:%u: more than %d nodes", path,
			    line, IMEX_MEMBERS_MAX);
	if (entry(s, n, &ms[*count], seen[*count].key, sizeof(seen->key), why,
		  sizeof(why)))
		return fail(err, errlen, "%s:%u: %s", path, line, why);
	seen[*count].line = line;
	if (check_dup(ms, seen, *count, err, errlen, path, line))
		return -EINVAL;
	(*count)++;
	return 0;
}

int imexd_nodelist_parse(const char *path, const char *text, size_t len,
			 struct imexd_member **out, size_t *n, char *err,
			 size_t errlen)
{
	const char *s, *end, *nl;
	struct imexd_member *ms, *shrunk;
	struct seen *seen;
	unsigned int line = 0;
	size_t count = 0;
	int ret = 0;

	if (!path)
		path = "nodes";
	if ((!text && len) || !out || !n)
		return fail(err, errlen, "%s: nothing to parse", path);
	/* No arithmetic on NULL: an empty text may come as (NULL, 0). */
	s = text ? text : "";
	end = s + len;
	ms = calloc(IMEX_MEMBERS_MAX, sizeof(*ms));
	seen = calloc(IMEX_MEMBERS_MAX, sizeof(*seen));
	if (!ms || !seen) {
		free(ms);
		free(seen);
		fail(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	while (!ret && s < end) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			nl = end;
		ret = parse_line(path, ++line, s, (size_t)(nl - s), ms, seen,
				 &count, err, errlen);
		s = nl + 1;
	}
	free(seen);
	if (!ret && !count)
		ret = fail(err, errlen, "%s: lists no nodes", path);
	if (ret) {
		free(ms);
		return ret;
	}
	/* Give back the unused tail; keeping it all is fine if that fails. */
	shrunk = realloc(ms, count * sizeof(*ms));
	*out = shrunk ? shrunk : ms;
	*n = count;
	if (err && errlen)
		err[0] = '\0';
	return 0;
}
