// SPDX-License-Identifier: GPL-2.0
/*
 * imexd.conf parser (config.h).
 *
 * The file is parsed into a copy of the caller's configuration, and the copy
 * is written back only when every line and the cross-key rules pass: a bad
 * file changes nothing, so a SIGHUP with a broken file keeps the daemon on
 * its last good configuration.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "config_internal.h"
#include "imex_text.h"
#include "wire.h"

/* K_OPTPATH: an absolute path, or empty for "off". */
enum kind { K_NAME, K_LISTEN, K_INT, K_PATH, K_OPTPATH, K_BOOL, K_LOG };

struct key {
	const char *name;
	enum kind kind;
	size_t off;		/* of the field in struct imexd_config */
	size_t size;		/* of that field */
	int64_t min, max;	/* K_INT */
};

#define FIELD(f) offsetof(struct imexd_config, f), \
		 sizeof(((struct imexd_config *)NULL)->f)

static const struct key keys[] = {
	{ "NODE_NAME", K_NAME, FIELD(node_name), 0, 0 },
	{ "LISTEN_ADDRESS", K_LISTEN, FIELD(listen_address), 0, 0 },
	{ "LISTEN_PORT", K_INT, FIELD(listen_port), 1, 65535 },
	{ "STATE_DIRECTORY", K_PATH, FIELD(state_directory), 0, 0 },
	{ "HEARTBEAT_INTERVAL_MS", K_INT, FIELD(heartbeat_interval_ms), 50, 60000 },
	{ "HEARTBEAT_MISS_COUNT", K_INT, FIELD(heartbeat_miss_count), 1, 100 },
	/* -1 waits forever, 0 is immediate: one contiguous range. */
	{ "DISCONNECTED_GRACE_SECONDS", K_INT, FIELD(disconnected_grace_s), -1, 86400 },
	{ "ELECTION_TIMEOUT_MS", K_INT, FIELD(election_timeout_ms), 100, 60000 },
	{ "TLS", K_BOOL, FIELD(tls), 0, 0 },
	{ "TLS_CA_FILE", K_PATH, FIELD(tls_ca_file), 0, 0 },
	{ "TLS_CERT_FILE", K_PATH, FIELD(tls_cert_file), 0, 0 },
	{ "TLS_KEY_FILE", K_PATH, FIELD(tls_key_file), 0, 0 },
	{ "NODES_FILE", K_PATH, FIELD(nodes_file), 0, 0 },
	{ "LOG_LEVEL", K_LOG, FIELD(log_level), 0, 0 },
	{ "METRICS_TEXTFILE_DIR", K_OPTPATH, FIELD(metrics_textfile_dir), 0, 0 },
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const struct {
	const char *name;
	int level;
} log_levels[] = {
	{ "err", 3 }, { "warn", 4 }, { "info", 6 }, { "debug", 7 },
};

int imexd_config_fail(const struct pos *p, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (p->err && p->errlen) {
		if (p->line)
			snprintf(p->err, p->errlen, "%s:%u: %s", p->path,
				 p->line, what);
		else
			snprintf(p->err, p->errlen, "%s: %s", p->path, what);
	}
	return -EINVAL;
}

static bool has_control(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < ' ' || s[i] == 0x7f)
			return true;
	return false;
}

/*
 * Decimal integer, optionally negative, nothing else.  Returns 0, or 1 for
 * not a number; anything beyond 18 digits saturates (then out of range).
 */
static int parse_int(const char *s, size_t n, int64_t *out)
{
	bool neg = n && s[0] == '-';
	int64_t v = 0;
	size_t i = neg;

	if (i == n)
		return 1;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 1;
		if (v < 100000000000000000LL)
			v = v * 10 + (s[i] - '0');
	}
	*out = neg ? -v : v;
	return 0;
}

static void set_int(void *field, size_t size, int64_t v)
{
	switch (size) {
	case sizeof(uint16_t):
		*(uint16_t *)field = (uint16_t)v;
		break;
	case sizeof(uint32_t):
		*(uint32_t *)field = (uint32_t)v;
		break;
	default:
		*(int64_t *)field = v;
		break;
	}
}

static int value_int(const struct pos *p, const struct key *k, void *field,
		     const char *v, size_t n)
{
	char b[IMEX_SHOW_MAX + 8];
	int64_t x;

	if (parse_int(v, n, &x))
		return imexd_config_fail(p, "%s: '%s' is not a decimal number", k->name,
					 imex_text_show(b, sizeof(b), v, n));
	if (x < k->min || x > k->max)
		return imexd_config_fail(p, "%s: '%s' is out of range %lld..%lld", k->name,
					 imex_text_show(b, sizeof(b), v, n), (long long)k->min,
					 (long long)k->max);
	set_int(field, k->size, x);
	return 0;
}

static int value_string(const struct pos *p, const struct key *k, char *field,
			const char *v, size_t n)
{
	char b[IMEX_SHOW_MAX + 8];
	unsigned char addr[16];
	char tmp[64];
	int af;

	if (n >= k->size)
		return imexd_config_fail(p, "%s: value longer than %zu bytes", k->name,
					 k->size - 1);
	switch (k->kind) {
	case K_NAME:
		memcpy(tmp, v, n);
		tmp[n] = '\0';
		if (!imexd_name_valid(tmp))
			return imexd_config_fail(p, "%s: '%s' is not a valid node name: use letters, digits, '_', '.', '-' (at most %d)",
						 k->name, imex_text_show(b, sizeof(b), v, n),
						 IMEX_NAME_MAX - 1);
		break;
	case K_LISTEN:
		memcpy(tmp, v, n);
		tmp[n] = '\0';
		af = strchr(tmp, ':') ? AF_INET6 : AF_INET;
		if (strcmp(tmp, "*") && inet_pton(af, tmp, addr) != 1)
			return imexd_config_fail(p, "%s: '%s' is not an IPv4 or IPv6 address, or '*' for any",
						 k->name, imex_text_show(b, sizeof(b), v, n));
		break;
	default:	/* K_PATH, K_OPTPATH */
		if (v[0] != '/')
			return imexd_config_fail(p, "%s: '%s' is not an absolute path",
						 k->name, imex_text_show(b, sizeof(b), v, n));
		if (has_control(v, n))
			return imexd_config_fail(p, "%s: '%s' has control characters",
						 k->name, imex_text_show(b, sizeof(b), v, n));
		break;
	}
	memcpy(field, v, n);
	field[n] = '\0';
	return 0;
}

static int value_word(const struct pos *p, const struct key *k, void *field,
		      const char *v, size_t n)
{
	char b[IMEX_SHOW_MAX + 8];
	size_t i;

	if (k->kind == K_BOOL) {
		if ((n == 3 && !memcmp(v, "yes", 3)) ||
		    (n == 2 && !memcmp(v, "no", 2))) {
			*(bool *)field = n == 3;
			return 0;
		}
		return imexd_config_fail(p, "%s: '%s' is not yes or no", k->name,
					 imex_text_show(b, sizeof(b), v, n));
	}
	for (i = 0; i < sizeof(log_levels) / sizeof(log_levels[0]); i++) {
		if (strlen(log_levels[i].name) == n &&
		    !memcmp(log_levels[i].name, v, n)) {
			*(int *)field = log_levels[i].level;
			return 0;
		}
	}
	return imexd_config_fail(p, "%s: '%s' is not one of err, warn, info, debug",
				 k->name, imex_text_show(b, sizeof(b), v, n));
}

static int set_value(const struct pos *p, struct imexd_config *cfg,
		     const struct key *k, const char *v, size_t n)
{
	void *field = (char *)cfg + k->off;

	if (k->kind == K_OPTPATH)
		cfg->metrics_textfile_set = true;	/* the only such key */
	if (!n && k->kind == K_OPTPATH) {
		*(char *)field = '\0';
		return 0;
	}
	if (!n)
		return imexd_config_fail(p, "%s: empty value (leave the key out for the default)",
					 k->name);
	switch (k->kind) {
	case K_INT:
		return value_int(p, k, field, v, n);
	case K_BOOL:
	case K_LOG:
		return value_word(p, k, field, v, n);
	default:
		return value_string(p, k, field, v, n);
	}
}

static const struct key *find_key(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (strlen(keys[i].name) == n && !memcmp(keys[i].name, s, n))
			return &keys[i];
	return NULL;
}

/* The key name only: a misplaced line may carry something secret. */
static int unknown_key(const struct pos *p, const char *s, size_t n)
{
	char b[IMEX_SHOW_MAX + 8];
	size_t i;

	if ((n == 22 && !memcmp(s, "CHANGE_STEP_TIMEOUT_MS", n)) ||
	    (n == 15 && !memcmp(s, "CHANGE_LEASE_MS", n)))
		return imexd_config_fail(p, "%s is no longer used (domains are agreed through a raft log, see ELECTION_TIMEOUT_MS): remove the line",
					 imex_text_show(b, sizeof(b), s, n));
	for (i = 0; i < NKEYS; i++)
		if (strlen(keys[i].name) == n &&
		    !strncasecmp(keys[i].name, s, n))
			return imexd_config_fail(p, "unknown key '%s' (keys are upper case: %s)",
						 imex_text_show(b, sizeof(b), s, n), keys[i].name);
	return imexd_config_fail(p, "unknown key '%s' (see imexd.conf(5) for the keys)",
				 imex_text_show(b, sizeof(b), s, n));
}

/* One line, without its newline. */
static int parse_line(const struct pos *p, struct imexd_config *cfg,
		      unsigned int *seen, const char *s, size_t n)
{
	const struct key *k;
	const char *eq;
	size_t kn;

	while (n && imex_is_blank(*s)) {
		s++;
		n--;
	}
	while (n && imex_is_blank(s[n - 1]))
		n--;
	if (!n || *s == '#')
		return 0;
	eq = memchr(s, '=', n);
	if (!eq)
		return imexd_config_fail(p, "expected KEY=VALUE or a '#' comment");
	for (kn = eq - s; kn && imex_is_blank(s[kn - 1]); kn--)
		;
	if (!kn)
		return imexd_config_fail(p, "expected KEY=VALUE: the key is missing");
	k = find_key(s, kn);
	if (!k)
		return unknown_key(p, s, kn);
	if (seen[k - keys])
		return imexd_config_fail(p, "%s: repeated (already set on line %u)",
					 k->name, seen[k - keys]);
	seen[k - keys] = p->line;
	n -= eq + 1 - s;
	s = eq + 1;
	while (n && imex_is_blank(*s)) {
		s++;
		n--;
	}
	return set_value(p, cfg, k, s, n);
}

static int check_node_name(const struct pos *p, const struct imexd_config *c)
{
	char host[256] = "";
	char b[IMEX_SHOW_MAX + 8];

	if (c->node_name[0])
		return 0;
	if (gethostname(host, sizeof(host) - 1) < 0)
		return imexd_config_fail(p, "NODE_NAME: not set and the host name is unknown: set NODE_NAME");
	return imexd_config_fail(p, "NODE_NAME: the host name '%s' is not a valid node name: set NODE_NAME",
				 imex_text_show(b, sizeof(b), host, strlen(host)));
}

static int check_tls(const struct pos *p, const struct imexd_config *c)
{
	if (!c->tls || (c->tls_ca_file[0] && c->tls_cert_file[0] &&
			c->tls_key_file[0]))
		return 0;
	return imexd_config_fail(p, "TLS=yes needs TLS_CA_FILE, TLS_CERT_FILE and TLS_KEY_FILE (missing:%s%s%s)",
				 c->tls_ca_file[0] ? "" : " TLS_CA_FILE",
				 c->tls_cert_file[0] ? "" : " TLS_CERT_FILE",
				 c->tls_key_file[0] ? "" : " TLS_KEY_FILE");
}

int imexd_config_parse(struct imexd_config *cfg, const char *path,
		       const char *text, size_t len, char *err, size_t errlen)
{
	struct pos p = { path ? path : "imexd.conf", 0, err, errlen };
	unsigned int seen[NKEYS] = { 0 };
	struct imexd_config tmp;
	const char *s, *end, *nl;
	int ret;

	if (!cfg || (!text && len))
		return imexd_config_fail(&p, "nothing to parse");
	/* No arithmetic on NULL: an empty text may come as (NULL, 0). */
	s = text ? text : "";
	end = s + len;
	tmp = *cfg;
	while (s < end) {
		p.line++;
		nl = memchr(s, '\n', end - s);
		if (!nl)
			nl = end;
		if (memchr(s, '\0', nl - s))
			return imexd_config_fail(&p, "NUL byte: not a text file");
		ret = parse_line(&p, &tmp, seen, s, nl - s);
		if (ret)
			return ret;
		s = nl + 1;
	}
	p.line = 0;
	ret = check_node_name(&p, &tmp);
	if (!ret)
		ret = check_tls(&p, &tmp);
	if (ret)
		return ret;
	*cfg = tmp;
	if (err && errlen)
		err[0] = '\0';
	return 0;
}

void imexd_config_defaults(struct imexd_config *cfg)
{
	char host[256] = "";

	memset(cfg, 0, sizeof(*cfg));
	/* An invalid host name leaves it empty: parse then asks for one. */
	if (!gethostname(host, sizeof(host) - 1) && imexd_name_valid(host))
		memcpy(cfg->node_name, host, strlen(host) + 1);
	strcpy(cfg->listen_address, "*");
	cfg->listen_port = IMEXD_DEFAULT_PORT;
	strcpy(cfg->state_directory, "/var/lib/imexd");
	cfg->heartbeat_interval_ms = 1000;
	cfg->heartbeat_miss_count = 3;
	cfg->disconnected_grace_s = 30;
	cfg->election_timeout_ms = 1000;
	cfg->tls = false;
	cfg->log_level = 6;
	/* Debian's prometheus-node-exporter textfile collector; used only
	 * where that directory exists unless the key is given. */
	strcpy(cfg->metrics_textfile_dir, IMEXD_METRICS_TEXTFILE_DIR);
}

void imexd_config_apply_reloadable(struct imexd_config *dst,
				   const struct imexd_config *src)
{
	dst->heartbeat_interval_ms = src->heartbeat_interval_ms;
	dst->heartbeat_miss_count = src->heartbeat_miss_count;
	dst->disconnected_grace_s = src->disconnected_grace_s;
	dst->log_level = src->log_level;
}
