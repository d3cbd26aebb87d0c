// SPDX-License-Identifier: GPL-2.0-only
/*
 * Strict parsers for command-line values: no sign, no trailing garbage, no
 * overflow, no silent truncation.  Each says why a value was refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *val,
	      const char **why)
{
	unsigned long long v = 0;
	const char *p;

	if (!s || !*s) {
		*why = "empty number";
		return -EINVAL;
	}
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9') {
			*why = *p == '-' && p == s ? "negative numbers are not allowed" :
			       "not a decimal number";
			return -EINVAL;
		}
		v = v * 10 + (unsigned long long)(*p - '0');
		if (v > max) {
			*why = "number too large";
			return -ERANGE;
		}
	}
	if (v < min) {
		*why = "number too small";
		return -ERANGE;
	}
	*val = (uint32_t)v;
	return 0;
}

int parse_uuid(const char *s, uint8_t uuid[IMEXCTL_UUID_LEN], const char **why)
{
	if (imexctl_uuid_parse(s, uuid) < 0) {
		*why = "not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)";
		return -EINVAL;
	}
	return 0;
}

/* UUID:PARTITION; an all-zero cluster UUID means "not multi-node". */
int parse_fabric(const char *s, uint8_t uuid[IMEXCTL_UUID_LEN],
		 uint32_t *partition, const char **why)
{
	char buf[IMEXCTL_UUID_STR_LEN];
	const char *colon = s ? strrchr(s, ':') : NULL;

	if (!colon || (size_t)(colon - s) != IMEXCTL_UUID_STR_LEN - 1) {
		*why = "expected UUID:PARTITION";
		return -EINVAL;
	}
	memcpy(buf, s, IMEXCTL_UUID_STR_LEN - 1);
	buf[IMEXCTL_UUID_STR_LEN - 1] = '\0';
	if (parse_uuid(buf, uuid, why) < 0)
		return -EINVAL;
	if (imexctl_uuid_is_null(uuid)) {
		*why = "the all-zero cluster UUID means no NVLink fabric";
		return -EINVAL;
	}
	return parse_u32(colon + 1, 0, UINT32_MAX, partition, why);
}

/* UID:GID, numeric; (uid_t)-1 is "no change" to the kernel, so refused. */
int parse_owner(const char *s, uint32_t *uid, uint32_t *gid, const char **why)
{
	const char *colon = s ? strchr(s, ':') : NULL;
	char buf[16];
	size_t len;

	if (!colon) {
		*why = "expected UID:GID (numbers)";
		return -EINVAL;
	}
	len = (size_t)(colon - s);
	if (len >= sizeof(buf)) {
		*why = "number too large";
		return -ERANGE;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (parse_u32(buf, 0, UINT32_MAX - 1, uid, why) < 0)
		return -EINVAL;
	return parse_u32(colon + 1, 0, UINT32_MAX - 1, gid, why) < 0 ? -EINVAL : 0;
}

/* Octal permission bits, at most 0777 (no setuid/setgid/sticky). */
int parse_mode(const char *s, uint32_t *mode, const char **why)
{
	uint32_t v = 0;
	const char *p;

	if (!s || !*s) {
		*why = "empty mode";
		return -EINVAL;
	}
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '7') {
			*why = "not an octal mode (e.g. 0660)";
			return -EINVAL;
		}
		v = v * 8 + (uint32_t)(*p - '0');
		if (v > 0777) {
			*why = "mode above 0777";
			return -ERANGE;
		}
	}
	*mode = v;
	return 0;
}

int parse_name(const char *s, const char **why)
{
	size_t len = s ? strlen(s) : 0;

	if (imexctl_name_valid(s))
		return 0;
	if (!len)
		*why = "empty name";
	else if (len >= IMEXCTL_NAME_MAX)
		*why = "name longer than 63 characters";
	else if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", s[0]))
		*why = "a name must start with a letter or a digit";
	else
		*why = "a name may contain only letters, digits, '_', '.' and '-'";
	return -EINVAL;
}

/* DOMAIN/ID */
int parse_channel_ref(const char *s, char *domain, size_t size, uint32_t *id,
		      const char **why)
{
	const char *slash = s ? strchr(s, '/') : NULL;
	size_t len;

	if (!slash) {
		*why = "expected DOMAIN/ID";
		return -EINVAL;
	}
	len = (size_t)(slash - s);
	if (len >= size) {
		*why = "name longer than 63 characters";
		return -EINVAL;
	}
	memcpy(domain, s, len);
	domain[len] = '\0';
	if (parse_name(domain, why) < 0)
		return -EINVAL;
	return parse_u32(slash + 1, 0, IMEXCTL_CHANNELS_MAX - 1, id, why) < 0 ?
	       -EINVAL : 0;
}

/* Seconds, at least @min_s (waits allow 0: look once). */
int parse_timeout(const char *s, uint32_t min_s, int *ms, const char **why)
{
	uint32_t secs;

	if (parse_u32(s, min_s, CLI_TIMEOUT_MAX_S, &secs, why) < 0)
		return -EINVAL;
	*ms = (int)(secs * 1000);
	return 0;
}

int parse_state(const char *s, enum imexctl_domain_state *state,
		const char **why)
{
	if (s && !strcmp(s, "ready")) {
		*state = IMEXCTL_DOMAIN_READY;
		return 0;
	}
	if (s && !strcmp(s, "degraded")) {
		*state = IMEXCTL_DOMAIN_DEGRADED;
		return 0;
	}
	*why = "expected 'ready' or 'degraded'";
	return -EINVAL;
}

/* host[:port], [ipv6][:port] or a bare IPv6 address. */
static int check_addr(const char *a, const char **why)
{
	const char *p, *port = NULL;
	uint32_t v;

	if (!*a) {
		*why = "empty address";
		return -EINVAL;
	}
	if (strlen(a) >= IMEXCTL_ADDR_MAX) {
		*why = "address longer than 255 characters";
		return -EINVAL;
	}
	for (p = a; *p; p++) {
		if (*p <= ' ' || *p >= 0x7f || strchr(",=/@", *p)) {
			*why = "address contains a character not allowed in host[:port]";
			return -EINVAL;
		}
	}
	if (a[0] == '[') {
		p = strchr(a, ']');
		if (!p || p == a + 1) {
			*why = "expected [IPv6] or [IPv6]:PORT";
			return -EINVAL;
		}
		if (p[1] == ':')
			port = p + 2;
		else if (p[1]) {
			*why = "expected [IPv6] or [IPv6]:PORT";
			return -EINVAL;
		}
	} else {
		p = strchr(a, ':');
		if (p && !strchr(p + 1, ':')) {
			if (p == a) {
				*why = "empty host before ':PORT'";
				return -EINVAL;
			}
			port = p + 1;
		}
	}
	if (port && parse_u32(port, 1, 65535, &v, why) < 0) {
		*why = "port must be a number from 1 to 65535";
		return -EINVAL;
	}
	return 0;
}

static int add_node(struct cli_nodes *nodes, char *item, const char **why)
{
	struct imexctl_member_spec *nv;
	char *eq = strchr(item, '=');
	const char *addr = NULL;
	size_t i;

	if (eq) {
		*eq = '\0';
		addr = eq + 1;
	}
	if (parse_name(item, why) < 0 || (addr && check_addr(addr, why) < 0))
		return -EINVAL;
	for (i = 0; i < nodes->n; i++) {
		if (!strcmp(nodes->v[i].name, item)) {
			*why = "a node is listed twice";
			return -EINVAL;
		}
	}
	if (nodes->n >= IMEXCTL_MEMBERS_MAX) {
		*why = "too many nodes for one domain";
		return -ERANGE;
	}
	nv = realloc(nodes->v, (nodes->n + 1) * sizeof(*nv));
	if (!nv) {
		*why = "out of memory";
		return -ENOMEM;
	}
	nodes->v = nv;
	nodes->v[nodes->n].name = item;
	nodes->v[nodes->n].addr = addr;
	nodes->n++;
	return 0;
}

int parse_addr(const char *s, const char **why)
{
	return check_addr(s, why);
}

/* NAME[=ADDR][,NAME[=ADDR]...]: no ADDR leaves the address to NODES_FILE. */
int parse_nodes(const char *s, struct cli_nodes *nodes, const char **why)
{
	char **nb, *buf, *item, *save = NULL;
	int r;

	if (!s || !*s) {
		*why = "empty node list";
		return -EINVAL;
	}
	if (s[strlen(s) - 1] == ',' || s[0] == ',' || strstr(s, ",,")) {
		*why = "empty entry in the node list";
		return -EINVAL;
	}
	buf = strdup(s);
	nb = realloc(nodes->bufs, (nodes->n_bufs + 1) * sizeof(*nb));
	if (!buf || !nb) {
		free(buf);
		if (nb)
			nodes->bufs = nb;
		*why = "out of memory";
		return -ENOMEM;
	}
	nodes->bufs = nb;
	nodes->bufs[nodes->n_bufs++] = buf;
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		r = add_node(nodes, item, why);
		if (r < 0)
			return r;
	}
	return 0;
}

void cli_nodes_free(struct cli_nodes *nodes)
{
	size_t i;

	for (i = 0; i < nodes->n_bufs; i++)
		free(nodes->bufs[i]);
	free(nodes->bufs);
	free(nodes->v);
	memset(nodes, 0, sizeof(*nodes));
}

int cli_ids_add(struct cli_ids *ids, uint32_t id, const char **why)
{
	uint32_t *nv;
	size_t i;

	for (i = 0; i < ids->n; i++) {
		if (ids->v[i] == id) {
			*why = "a channel is listed twice";
			return -EINVAL;
		}
	}
	if (ids->n >= IMEXCTL_CHANNELS_PER_REQUEST) {
		*why = "too many channels for one request";
		return -ERANGE;
	}
	nv = realloc(ids->v, (ids->n + 1) * sizeof(*nv));
	if (!nv) {
		*why = "out of memory";
		return -ENOMEM;
	}
	ids->v = nv;
	ids->v[ids->n++] = id;
	return 0;
}
