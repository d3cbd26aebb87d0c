// SPDX-License-Identifier: GPL-2.0
/*
 * imex-nl: drive the imex generic netlink family directly, for the kernel
 * tests.  It speaks every command, including malformed ones, can stand in
 * for the manager (a single-node "serve" loop), and checks expected
 * outcomes, so test scripts read as lists of operations and refusals.
 *
 *   imex-nl [--as-uid UID] [-f SCRIPT | COMMAND [KEY=VALUE...]]
 *
 * A script holds one command per line, all on one netlink socket (so an
 * "attach" lasts until the script ends).  A line may start with !ERRNO to
 * expect that refusal; a following "msg TEXT" line checks that the last
 * extended-ack message contains TEXT.  See usage() for the commands.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <uuid/uuid.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>
#include <linux/netlink.h>
#include <linux/imex.h>

#include "imex_extack.h"
#include "imex-nl.h"
#include "failnth.h"

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("imex-nl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

const char *kv_get(const struct kv *kv, const char *key)
{
	for (int i = 0; i < kv->n; i++)
		if (!strcmp(kv->key[i], key))
			return kv->val[i];
	return NULL;
}

uint64_t parse_u64(const char *s)
{
	char *end;
	unsigned long long v;

	if (!s)
		die("a value is missing");
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || !*s || *end)
		die("'%s' is not a number", s);
	return v;
}

static int errno_from_name(const char *name)
{
	for (int e = 1; e < 200; e++) {
		const char *n = strerrorname_np(e);

		if (n && !strcmp(n, name))
			return e;
	}
	die("unknown errno name '%s'", name);
	return 0;
}

static const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : "OK";

	return n ? n : "E?";
}

static int run_line(struct ctx *c, char *line, int lineno);
static void ctx_init(struct ctx *c);

/* --- netlink plumbing ---------------------------------------------------- */

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct ctx *c = arg;
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

	(void)nla;
	c->err = -e->error;
	imex_extack_msg(nlh, c->msg, sizeof(c->msg));
	if (!c->msg[0] && !imex_extack_parse(nlh, tb) &&
	    tb[NLMSGERR_ATTR_MISS_TYPE])
		snprintf(c->msg, sizeof(c->msg), "missing attribute %u",
			 nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]));
	return NL_STOP;
}

static int on_ack(struct nl_msg *m, void *arg)
{
	(void)m;
	((struct ctx *)arg)->err = 0;
	return NL_STOP;
}

static int on_finish(struct nl_msg *m, void *arg)
{
	(void)m;
	((struct ctx *)arg)->err = 0;
	return NL_STOP;
}

static int on_intr(struct nl_msg *m, void *arg)
{
	(void)m;
	((struct ctx *)arg)->dump_intr = true;
	return NL_OK;
}

static struct nl_sock *open_sock(struct ctx *c)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk || genl_connect(sk))
		die("cannot open a generic netlink socket");
	{
		int one = 1;

		/* libnl 3.7 has no helper for extended acks. */
		setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK,
			   &one, sizeof(one));
	}
	nl_socket_set_msg_buf_size(sk, 1 << 20);
	nl_socket_set_buffer_size(sk, 1 << 20, 1 << 20);
	nl_cb_err(nl_socket_get_cb(sk), NL_CB_CUSTOM, on_error, c);
	nl_socket_modify_cb(sk, NL_CB_ACK, NL_CB_CUSTOM, on_ack, c);
	nl_socket_modify_cb(sk, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, c);
	nl_socket_modify_cb(sk, NL_CB_DUMP_INTR, NL_CB_CUSTOM, on_intr, c);
	return sk;
}

static void ctx_init(struct ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->sk = open_sock(c);
	c->family = genl_ctrl_resolve(c->sk, IMEX_GENL_NAME);
	if (c->family < 0)
		die("the imex family is not registered: is imex.ko loaded?");
	c->grp_events = genl_ctrl_resolve_grp(c->sk, IMEX_GENL_NAME,
					      IMEX_MCGRP_EVENTS);
	c->grp_manager = genl_ctrl_resolve_grp(c->sk, IMEX_GENL_NAME,
					       IMEX_MCGRP_MANAGER);
}

static void events_open(struct ctx *c)
{
	if (c->ev)
		return;
	c->ev = open_sock(c);
	nl_socket_disable_seq_check(c->ev);
	if (nl_socket_add_membership(c->ev, c->grp_events))
		die("cannot join the events group");
}

struct nl_msg *msg_new(struct ctx *c, int cmd, int flags)
{
	struct nl_msg *m = nlmsg_alloc_size(1 << 20);

	if (!m || !genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0,
			       flags, (uint8_t)cmd, IMEX_GENL_VERSION))
		die("out of memory");
	return m;
}

/* Send, then receive replies through @valid until the ack or an error. */
int transact(struct ctx *c, struct nl_msg *m, nl_recvmsg_msg_cb_t valid,
		    void *arg)
{
	bool armed = false;
	int r;

	c->err = -1;
	c->msg[0] = 0;
	c->dump_intr = false;
	nl_socket_modify_cb(c->sk, NL_CB_VALID, valid ? NL_CB_CUSTOM :
			    NL_CB_DEFAULT, valid, arg);
	nlmsg_hdr(m)->nlmsg_flags |= NLM_F_ACK;
	/*
	 * Armed (fail-nth), a failed send or receive is an outcome: the
	 * kernel may have acted without the caller learning it.  Nothing is
	 * freed while armed: munmap() allocates too.
	 */
	if (c->fail_nth) {
		if (failnth_arm(c->fail_nth))
			die("cannot arm fail-nth: %s", strerror(errno));
		c->fail_nth = 0;
		c->armed = armed = true;
	}
	r = nl_send_auto(c->sk, m);
	if (r < 0 && armed) {
		c->lost = errno ? errno : EIO;
		c->lost_send = true;
	} else if (r < 0) {
		die("send: %s", nl_geterror(r));
	}
	while (!c->lost && c->err == -1) {
		errno = 0;
		r = nl_recvmsgs_default(c->sk);
		if (r < 0 && c->err == -1) {
			if (!armed)
				die("receive: %s", nl_geterror(r));
			c->lost = errno ? errno : EIO;
		}
	}
	if (armed)
		c->injected = failnth_disarm();
	/*
	 * What a lost reply left behind would answer the next request; and
	 * libnl, which never saw this request's ack, expects its sequence
	 * number from now on: requests are one at a time, so drop the check.
	 */
	if (c->lost) {
		char junk[8192];

		while (recv(nl_socket_get_fd(c->sk), junk, sizeof(junk),
			    MSG_DONTWAIT) >= 0)
			;
		nl_socket_disable_seq_check(c->sk);
	}
	nlmsg_free(m);
	if (c->lost)
		c->err = c->lost;
	return c->err;
}

/* --- attribute builders ---------------------------------------------------- */

static void put_uuid(struct nl_msg *m, int type, const char *s)
{
	uuid_t u;

	if (uuid_parse(s, u))
		die("'%s' is not a UUID", s);
	nla_put(m, type, 16, u);
}

/* members=name[@addr],name... */
static void put_members(struct nl_msg *m, const char *list, const char *states)
{
	struct nlattr *arr = nla_nest_start(m, IMEX_A_MEMBERS);
	char *dup = strdup(list), *save = NULL, *tok;
	int i = 1;

	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save), i++) {
		struct nlattr *e = nla_nest_start(m, i);
		char *at = strchr(tok, '@');

		if (at)
			*at++ = 0;
		nla_put_string(m, IMEX_A_MEMBER_ENTRY_NAME, tok);
		if (at)
			nla_put_string(m, IMEX_A_MEMBER_ADDR, at);
		if (states)
			nla_put_u32(m, IMEX_A_MEMBER_STATE, (uint32_t)parse_u64(states));
		nla_nest_end(m, e);
	}
	nla_nest_end(m, arr);
	free(dup);
}

/* channels=1,2,5-9 */
static void put_channels(struct nl_msg *m, const struct kv *kv)
{
	const char *list = kv_get(kv, "channels");
	const char *uid = kv_get(kv, "uid"), *gid = kv_get(kv, "gid");
	const char *mode = kv_get(kv, "mode");
	struct nlattr *arr;
	char *dup, *save = NULL, *tok;
	int i = 1;

	if (!list)
		return;
	arr = nla_nest_start(m, IMEX_A_CHANNELS);
	dup = strdup(list);
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t lo, hi;

		if (dash)
			*dash = 0;
		lo = parse_u64(tok);
		hi = dash ? parse_u64(dash + 1) : lo;
		for (uint64_t id = lo; id <= hi; id++, i++) {
			struct nlattr *e = nla_nest_start(m, i);

			nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_ID, (uint32_t)id);
			if (uid)
				nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_UID,
					    (uint32_t)parse_u64(uid));
			if (gid)
				nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_GID,
					    (uint32_t)parse_u64(gid));
			if (mode)
				nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_MODE,
					    (uint32_t)strtoul(mode, NULL, 8));
			nla_nest_end(m, e);
		}
	}
	nla_nest_end(m, arr);
	free(dup);
}

static void put_fabric(struct nl_msg *m, const char *spec)
{
	char *dup = strdup(spec), *colon = strrchr(dup, ':');

	if (!colon)
		die("fabric wants UUID:PARTITION, not '%s'", spec);
	*colon = 0;
	put_uuid(m, IMEX_A_FABRIC_UUID, dup);
	nla_put_u32(m, IMEX_A_FABRIC_PARTITION, (uint32_t)parse_u64(colon + 1));
	free(dup);
}

static uint32_t state_from_name(const char *s)
{
	static const char *const names[] = { "down", "ready", "degraded" };

	for (uint32_t i = 0; i < 3; i++)
		if (!strcmp(s, names[i]))
			return IMEX_DOMAIN_DOWN + i;
	return (uint32_t)parse_u64(s);
}

/* a=TYPE:KIND:VALUE with KIND u8/u16/u32/u64/str/bin(hex)/flag/empty */
static void put_raw(struct nl_msg *m, const char *spec)
{
	char *dup = strdup(spec), *kind, *val;
	int type;

	kind = strchr(dup, ':');
	if (!kind)
		die("raw attribute wants TYPE:KIND[:VALUE]");
	*kind++ = 0;
	type = (int)parse_u64(dup);
	val = strchr(kind, ':');
	if (val)
		*val++ = 0;
	if (!strcmp(kind, "u8"))
		nla_put_u8(m, type, (uint8_t)parse_u64(val));
	else if (!strcmp(kind, "u16"))
		nla_put_u16(m, type, (uint16_t)parse_u64(val));
	else if (!strcmp(kind, "u32"))
		nla_put_u32(m, type, (uint32_t)parse_u64(val));
	else if (!strcmp(kind, "u64"))
		nla_put_u64(m, type, parse_u64(val));
	else if (!strcmp(kind, "str"))
		nla_put_string(m, type, val ? val : "");
	else if (!strcmp(kind, "strn"))	/* no NUL terminator */
		nla_put(m, type, val ? (int)strlen(val) : 0, val ? val : "");
	else if (!strcmp(kind, "long"))	/* a string of N 'x' */
		{
			size_t n = parse_u64(val);
			char *s = malloc(n + 1);

			memset(s, 'x', n);
			s[n] = 0;
			nla_put_string(m, type, s);
			free(s);
		}
	else if (!strcmp(kind, "ids")) {	/* N u32 values 0..N-1 */
		size_t n = parse_u64(val);
		uint32_t *ids = malloc(n * 4 + 4);

		for (size_t i = 0; i < n; i++)
			ids[i] = (uint32_t)i;
		if (nla_put(m, type, (int)(n * 4), ids))
			die("attribute %d: %zu ids do not fit one attribute", type, n);
		free(ids);
	} else if (!strcmp(kind, "bin")) {
		size_t n = val ? strlen(val) / 2 : 0;
		unsigned char *b = calloc(1, n + 1);

		for (size_t i = 0; i < n; i++)
			sscanf(val + 2 * i, "%2hhx", &b[i]);
		nla_put(m, type, (int)n, b);
		free(b);
	} else if (!strcmp(kind, "flag"))
		nla_put_flag(m, type);
	else if (!strcmp(kind, "nest"))
		nla_nest_end(m, nla_nest_start(m, type));
	else
		die("unknown raw kind '%s'", kind);
	free(dup);
}

/* Attributes common to most commands, by key. */
static void put_common(struct nl_msg *m, const struct kv *kv)
{
	const char *v;

	if ((v = kv_get(kv, "name")))
		nla_put_string(m, IMEX_A_DOMAIN_NAME, v);
	if ((v = kv_get(kv, "uuid")))
		put_uuid(m, IMEX_A_DOMAIN_UUID, v);
	if ((v = kv_get(kv, "fabric")))
		put_fabric(m, v);
	if ((v = kv_get(kv, "members")))
		put_members(m, v, NULL);
	if ((v = kv_get(kv, "count")))
		nla_put_u32(m, IMEX_A_CHANNEL_COUNT, (uint32_t)parse_u64(v));
	/*
	 * Requests carry the owner at the top; DOMAIN_SET per channel entry
	 * or, for ids=, as ids_uid= ids_gid= ids_mode=.
	 */
	if (genlmsg_hdr(nlmsg_hdr(m))->cmd != IMEX_CMD_DOMAIN_SET) {
		if ((v = kv_get(kv, "uid")))
			nla_put_u32(m, IMEX_A_CHANNEL_UID, (uint32_t)parse_u64(v));
		if ((v = kv_get(kv, "gid")))
			nla_put_u32(m, IMEX_A_CHANNEL_GID, (uint32_t)parse_u64(v));
		if ((v = kv_get(kv, "mode")))
			nla_put_u32(m, IMEX_A_CHANNEL_MODE,
				    (uint32_t)strtoul(v, NULL, 8));
	}
	put_channels(m, kv);
	if ((v = kv_get(kv, "member")))
		nla_put_string(m, IMEX_A_MEMBER_NAME, v);
	if ((v = kv_get(kv, "new")))
		nla_put_string(m, IMEX_A_MEMBER_NEW_NAME, v);
	if ((v = kv_get(kv, "addr")))
		nla_put_string(m, IMEX_A_NODE_ADDR, v);
	/* Export and import. */
	if ((v = kv_get(kv, "chan")))
		nla_put_u32(m, IMEX_A_CHANNEL_ID, (uint32_t)parse_u64(v));
	if ((v = kv_get(kv, "import_id")))
		nla_put_u64(m, IMEX_A_IMPORT_ID, parse_u64(v));
	if ((v = kv_get(kv, "handle_node")))
		put_uuid(m, IMEX_A_HANDLE_NODE, v);
	if ((v = kv_get(kv, "handle_id")))
		nla_put_u64(m, IMEX_A_HANDLE_ID, parse_u64(v));
	if ((v = kv_get(kv, "desc")))
		nla_put(m, IMEX_A_DESC, (int)strlen(v), v);
	if ((v = kv_get(kv, "istatus")))
		nla_put_u32(m, IMEX_A_REQ_STATUS, (uint32_t)parse_u64(v));
	if ((v = kv_get(kv, "reason")))
		nla_put_u32(m, IMEX_A_REVOKE_REASON, (uint32_t)parse_u64(v));
	for (int i = 0; i < kv->n; i++)
		if (!strcmp(kv->key[i], "a"))
			put_raw(m, kv->val[i]);
}

/* --- printing ---------------------------------------------------------------- */

static void print_uuid(const char *key, struct nlattr *a)
{
	char s[37];

	if (!a || nla_len(a) != 16)
		return;
	uuid_unparse_lower(nla_data(a), s);
	printf(" %s=%s", key, s);
}

static void print_u32(const char *key, struct nlattr *a)
{
	if (a)
		printf(" %s=%u", key, nla_get_u32(a));
}

static void print_str(const char *key, struct nlattr *a)
{
	if (a)
		printf(" %s=%s", key, (char *)nla_data(a));
}

static int print_msg(struct nl_msg *m, void *arg)
{
	struct genlmsghdr *g = nlmsg_data(nlmsg_hdr(m));
	struct nlattr *tb[IMEX_A_MAX + 1];
	struct ctx *c = arg;

	if (genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL))
		return NL_SKIP;
	if (tb[IMEX_A_REQ_ID])
		c->req_id = nla_get_u64(tb[IMEX_A_REQ_ID]);
	if (c->quiet)
		return NL_OK;
	printf("cmd=%u", g->cmd);
	print_str("node", tb[IMEX_A_NODE_NAME]);
	print_uuid("node_uuid", tb[IMEX_A_NODE_UUID]);
	print_u32("max_channels", tb[IMEX_A_MAX_CHANNELS]);
	if (!tb[IMEX_A_CHANNEL_ID])	/* channels say devnum= instead */
		print_u32("major", tb[IMEX_A_CHRDEV_MAJOR]);
	print_u32("manager_pid", tb[IMEX_A_MANAGER_PID]);
	print_u32("domains", tb[IMEX_A_DOMAIN_COUNT]);
	print_str("name", tb[IMEX_A_DOMAIN_NAME]);
	print_uuid("uuid", tb[IMEX_A_DOMAIN_UUID]);
	print_uuid("fabric", tb[IMEX_A_FABRIC_UUID]);
	print_u32("partition", tb[IMEX_A_FABRIC_PARTITION]);
	print_u32("state", tb[IMEX_A_DOMAIN_STATE]);
	print_u32("members", tb[IMEX_A_MEMBER_COUNT]);
	print_u32("self", tb[IMEX_A_MEMBER_SELF]);
	print_u32("nchannels", tb[IMEX_A_CHANNEL_COUNT]);
	/* Only when set: a domain made by hand has 0. */
	if (tb[IMEX_A_DOMAIN_GENERATION] &&
	    nla_get_u64(tb[IMEX_A_DOMAIN_GENERATION]))
		printf(" setgen=%" PRIu64,
		       nla_get_u64(tb[IMEX_A_DOMAIN_GENERATION]));
	print_u32("channel", tb[IMEX_A_CHANNEL_ID]);
	print_u32("chstate", tb[IMEX_A_CHANNEL_STATE]);
	print_u32("uid", tb[IMEX_A_CHANNEL_UID]);
	print_u32("gid", tb[IMEX_A_CHANNEL_GID]);
	if (tb[IMEX_A_CHANNEL_MODE])
		printf(" mode=%04o", nla_get_u32(tb[IMEX_A_CHANNEL_MODE]));
	print_u32("open", tb[IMEX_A_CHANNEL_OPEN_COUNT]);
	if (tb[IMEX_A_CHANNEL_MINOR] && tb[IMEX_A_CHRDEV_MAJOR])
		printf(" devnum=%u:%u", nla_get_u32(tb[IMEX_A_CHRDEV_MAJOR]),
		       nla_get_u32(tb[IMEX_A_CHANNEL_MINOR]));
	if (tb[IMEX_A_REQ_ID])
		printf(" req=%" PRIu64, nla_get_u64(tb[IMEX_A_REQ_ID]));
	print_u32("reqcmd", tb[IMEX_A_REQ_CMD]);
	print_u32("status", tb[IMEX_A_REQ_STATUS]);
	print_str("message", tb[IMEX_A_REQ_MESSAGE]);
	print_u32("exports", tb[IMEX_A_EXPORT_COUNT]);
	print_u32("imports", tb[IMEX_A_IMPORT_COUNT]);
	if (tb[IMEX_A_STATS]) {	/* the node's counters: whether they came */
		struct nlattr *st[IMEX_A_STATS_MAX + 1];

		if (!nla_parse_nested(st, IMEX_A_STATS_MAX, tb[IMEX_A_STATS], NULL) &&
		    st[IMEX_A_STATS_IMPORTS])
			printf(" stats_imports=%" PRIu64,
			       nla_get_u64(st[IMEX_A_STATS_IMPORTS]));
	}
	if (g->cmd == IMEX_CMD_IMPORTS_REVOKED)
		print_u32("revoke_reason", tb[IMEX_A_REVOKE_REASON]);
	if (tb[IMEX_A_IMPORT_ID])
		printf(" import_id=%" PRIu64, nla_get_u64(tb[IMEX_A_IMPORT_ID]));
	print_uuid("handle_node", tb[IMEX_A_HANDLE_NODE]);
	if (tb[IMEX_A_HANDLE_ID])
		printf(" handle_id=%" PRIu64, nla_get_u64(tb[IMEX_A_HANDLE_ID]));
	if (tb[IMEX_A_DESC])
		printf(" desc=%.*s", nla_len(tb[IMEX_A_DESC]),
		       (char *)nla_data(tb[IMEX_A_DESC]));
	if (tb[IMEX_A_CHANNEL_IDS]) {
		uint32_t *ids = nla_data(tb[IMEX_A_CHANNEL_IDS]);
		int n = nla_len(tb[IMEX_A_CHANNEL_IDS]) / 4;

		printf(" ids=");
		for (int i = 0; i < n; i++)
			printf("%s%u", i ? "," : "", ids[i]);
	}
	if (tb[IMEX_A_MEMBERS]) {
		struct nlattr *e, *mt[IMEX_A_MEMBER_MAX + 1];
		int rem;

		nla_for_each_nested(e, tb[IMEX_A_MEMBERS], rem) {
			if (nla_parse_nested(mt, IMEX_A_MEMBER_MAX, e, NULL))
				continue;
			printf(" member=%s", mt[IMEX_A_MEMBER_ENTRY_NAME] ?
			       (char *)nla_data(mt[IMEX_A_MEMBER_ENTRY_NAME]) : "?");
			if (mt[IMEX_A_MEMBER_ADDR])
				printf("@%s", (char *)nla_data(mt[IMEX_A_MEMBER_ADDR]));
			if (mt[IMEX_A_MEMBER_STATE])
				printf(":%u", nla_get_u32(mt[IMEX_A_MEMBER_STATE]));
			if (mt[IMEX_A_MEMBER_VIEW]) {
				unsigned char *v = nla_data(mt[IMEX_A_MEMBER_VIEW]);

				printf(":");
				for (int i = 0; i < nla_len(mt[IMEX_A_MEMBER_VIEW]); i++)
					printf("%u", v[i]);
			}
			/* Own tokens: member= stays as tests match it. */
			if (mt[IMEX_A_MEMBER_REASON] && mt[IMEX_A_MEMBER_ENTRY_NAME])
				printf(" why[%s]=\"%s\"",
				       (char *)nla_data(mt[IMEX_A_MEMBER_ENTRY_NAME]),
				       (char *)nla_data(mt[IMEX_A_MEMBER_REASON]));
			if (mt[IMEX_A_MEMBER_SINCE] && mt[IMEX_A_MEMBER_ENTRY_NAME])
				printf(" since[%s]=%" PRIu64,
				       (char *)nla_data(mt[IMEX_A_MEMBER_ENTRY_NAME]),
				       nla_get_u64(mt[IMEX_A_MEMBER_SINCE]));
		}
	}
	if (tb[IMEX_A_DOMAIN_REASON])
		printf(" reason=\"%s\"", (char *)nla_data(tb[IMEX_A_DOMAIN_REASON]));
	printf("\n");
	return NL_OK;
}

/* --- commands ---------------------------------------------------------------- */

static int cmd_simple(struct ctx *c, int cmd, const struct kv *kv, int flags)
{
	struct nl_msg *m = msg_new(c, cmd, flags);

	put_common(m, kv);
	return transact(c, m, print_msg, c);
}

static int cmd_simple_cb(struct ctx *c, int cmd, const struct kv *kv,
			 nl_recvmsg_msg_cb_t cb, void *arg)
{
	struct nl_msg *m = msg_new(c, cmd, 0);

	put_common(m, kv);
	return transact(c, m, cb, arg);
}

/*
 * REQ_ACCEPT, as a manager must be able to read it: req-id, req-cmd and
 * req-attrs, nothing else, every attribute (nested ones too) exactly within
 * its parent.  Anything else is a malformed upcall: EBADMSG, and what was
 * wrong in the message text.
 */
static int check_attrs(const struct nlattr *a, int len, int depth, char *why,
		       size_t size)
{
	const struct nlattr *nla;
	int rem, n = 0;

	nla_for_each_attr(nla, a, len, rem) {
		n++;
		if (depth == 0 && nla_type(nla) != IMEX_A_REQ_ID &&
		    nla_type(nla) != IMEX_A_REQ_CMD &&
		    nla_type(nla) != IMEX_A_REQ_ATTRS) {
			snprintf(why, size, "malformed upcall: attribute %d (%d bytes) outside req-attrs",
				 nla_type(nla), nla_len(nla));
			return -1;
		}
		if (depth == 0 && nla_type(nla) == IMEX_A_REQ_ATTRS &&
		    check_attrs(nla_data(nla), nla_len(nla), 1, why, size))
			return -1;
	}
	if (rem) {
		snprintf(why, size, "malformed upcall: %d bytes left over at depth %d after %d attributes",
			 rem, depth, n);
		return -1;
	}
	return 0;
}

struct accept_check {
	struct ctx *c;
	char why[256];
	int attrs_len;
};

static int on_accept_check(struct nl_msg *m, void *arg)
{
	struct accept_check *ac = arg;
	struct nlmsghdr *h = nlmsg_hdr(m);
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (check_attrs(genlmsg_attrdata(nlmsg_data(h), 0),
			genlmsg_attrlen(nlmsg_data(h), 0), 0, ac->why,
			sizeof(ac->why)))
		return NL_SKIP;
	if (!genlmsg_parse(h, 0, tb, IMEX_A_MAX, NULL) && tb[IMEX_A_REQ_ATTRS])
		ac->attrs_len = nla_len(tb[IMEX_A_REQ_ATTRS]);
	return print_msg(m, ac->c);
}

static int cmd_accept(struct ctx *c, const struct kv *kv)
{
	struct accept_check ac = { .c = c };
	int err;

	err = cmd_simple_cb(c, IMEX_CMD_REQ_ACCEPT, kv, on_accept_check, &ac);
	if (err)
		return err;
	if (ac.why[0]) {
		snprintf(c->msg, sizeof(c->msg), "%s", ac.why);
		return c->err = EBADMSG;
	}
	if (!c->quiet)
		printf("req-attrs %d bytes\n", ac.attrs_len);
	return 0;
}

struct req_wait {
	uint64_t id;
	bool done;
	uint32_t status;
	char message[IMEX_MESSAGE_MAX];
};

static int on_event_req(struct nl_msg *m, void *arg)
{
	struct req_wait *w = arg;
	struct genlmsghdr *g = nlmsg_data(nlmsg_hdr(m));
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (g->cmd != IMEX_CMD_REQ_DONE ||
	    genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL) ||
	    !tb[IMEX_A_REQ_ID] || nla_get_u64(tb[IMEX_A_REQ_ID]) != w->id)
		return NL_OK;
	w->done = true;
	w->status = tb[IMEX_A_REQ_STATUS] ? nla_get_u32(tb[IMEX_A_REQ_STATUS]) : 0;
	w->message[0] = 0;
	if (tb[IMEX_A_REQ_MESSAGE])
		snprintf(w->message, sizeof(w->message), "%s",
			 (char *)nla_data(tb[IMEX_A_REQ_MESSAGE]));
	return NL_STOP;
}

int wait_fd(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do {
		r = poll(&p, 1, timeout_ms);
	} while (r < 0 && errno == EINTR);
	return r;
}

/* A request: refused at once, or completed later on the events group. */
static int cmd_request(struct ctx *c, int cmd, const struct kv *kv)
{
	struct req_wait w = { 0 };
	const char *t = kv_get(kv, "timeout");
	int timeout_ms = t ? (int)parse_u64(t) : 20000;
	struct timespec start, now;
	int err;

	events_open(c);
	err = cmd_simple(c, cmd, kv, 0);
	if (err || kv_get(kv, "nowait"))
		return err;
	w.id = c->req_id;
	nl_socket_modify_cb(c->ev, NL_CB_VALID, NL_CB_CUSTOM, on_event_req, &w);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!w.done) {
		long left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = timeout_ms - ((now.tv_sec - start.tv_sec) * 1000 +
				     (now.tv_nsec - start.tv_nsec) / 1000000);
		if (left <= 0 || wait_fd(nl_socket_get_fd(c->ev), (int)left) <= 0) {
			snprintf(c->msg, sizeof(c->msg), "no REQ_DONE for request %" PRIu64, w.id);
			return c->err = ETIME;
		}
		nl_recvmsgs_default(c->ev);
	}
	snprintf(c->msg, sizeof(c->msg), "%s", w.message);
	if (!c->quiet)
		printf("done req=%" PRIu64 " status=%u message=%s\n", w.id,
		       w.status, w.message);
	return c->err = (int)w.status;
}

/* ids=LIST (as channels=) as one IMEX_A_CHANNEL_IDS array. */
static void put_id_array(struct nl_msg *m, const char *list)
{
	char *dup = strdup(list), *save = NULL, *tok;
	uint32_t *ids = NULL;
	size_t n = 0;

	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t lo, hi;

		if (dash)
			*dash = 0;
		lo = parse_u64(tok);
		hi = dash ? parse_u64(dash + 1) : lo;
		for (uint64_t id = lo; id <= hi; id++) {
			ids = realloc(ids, (n + 1) * sizeof(*ids));
			if (!ids)
				die("out of memory");
			ids[n++] = (uint32_t)id;
		}
	}
	if (nla_put(m, IMEX_A_CHANNEL_IDS, (int)(n * sizeof(*ids)), ids))
		die("%zu ids do not fit one attribute", n);
	free(ids);
	free(dup);
}

static int cmd_domain_set(struct ctx *c, const struct kv *kv)
{
	struct nl_msg *m = msg_new(c, IMEX_CMD_DOMAIN_SET, 0);
	const char *v;

	if ((v = kv_get(kv, "gen")))
		nla_put_u64(m, IMEX_A_DOMAIN_GENERATION, parse_u64(v));
	if ((v = kv_get(kv, "ids")))
		put_id_array(m, v);
	if ((v = kv_get(kv, "ids_uid")))
		nla_put_u32(m, IMEX_A_CHANNEL_UID, (uint32_t)parse_u64(v));
	if ((v = kv_get(kv, "ids_gid")))
		nla_put_u32(m, IMEX_A_CHANNEL_GID, (uint32_t)parse_u64(v));
	if ((v = kv_get(kv, "ids_mode")))
		nla_put_u32(m, IMEX_A_CHANNEL_MODE, (uint32_t)strtoul(v, NULL, 8));
	put_common(m, kv);
	return transact(c, m, print_msg, c);
}

/*
 * mreason=NAME:TEXT and msince=NAME:MS (repeatable) for the member NAME of
 * view=; mreason_len=NAME:N sends a reason of N 'x's (a bound test).
 */
static void put_member_extra(struct nl_msg *m, const struct kv *kv,
			     const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < kv->n; i++) {
		const char *v = kv->val[i];

		if (strncmp(v, name, len) || v[len] != ':')
			continue;
		v += len + 1;
		if (!strcmp(kv->key[i], "mreason")) {
			nla_put_string(m, IMEX_A_MEMBER_REASON, v);
		} else if (!strcmp(kv->key[i], "msince")) {
			nla_put_u64(m, IMEX_A_MEMBER_SINCE, parse_u64(v));
		} else if (!strcmp(kv->key[i], "mreason_len")) {
			size_t n = (size_t)parse_u64(v);
			char *b = malloc(n + 1);

			if (!b)
				die("out of memory");
			memset(b, 'x', n);
			b[n] = 0;
			nla_put_string(m, IMEX_A_MEMBER_REASON, b);
			free(b);
		}
	}
}

static int cmd_status(struct ctx *c, const struct kv *kv)
{
	struct nl_msg *m = msg_new(c, IMEX_CMD_DOMAIN_SET_STATUS, 0);
	const char *v;

	if ((v = kv_get(kv, "state")))
		nla_put_u32(m, IMEX_A_DOMAIN_STATE, state_from_name(v));
	if ((v = kv_get(kv, "dreason")))
		nla_put_string(m, IMEX_A_DOMAIN_REASON, v);
	if ((v = kv_get(kv, "name")))
		nla_put_string(m, IMEX_A_DOMAIN_NAME, v);
	/* view=NAME:STATE:DIGITS,... */
	if ((v = kv_get(kv, "view"))) {
		struct nlattr *arr = nla_nest_start(m, IMEX_A_MEMBERS);
		char *dup = strdup(v), *save = NULL, *tok;
		int i = 1;

		for (tok = strtok_r(dup, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save), i++) {
			struct nlattr *e = nla_nest_start(m, i);
			char *st = strchr(tok, ':'), *vw = NULL;

			if (st) {
				*st++ = 0;
				vw = strchr(st, ':');
				if (vw)
					*vw++ = 0;
			}
			nla_put_string(m, IMEX_A_MEMBER_ENTRY_NAME, tok);
			if (st && *st)
				nla_put_u32(m, IMEX_A_MEMBER_STATE, (uint32_t)parse_u64(st));
			put_member_extra(m, kv, tok);
			if (vw) {
				unsigned char b[IMEX_MEMBERS_MAX];
				size_t n = strlen(vw);

				for (size_t j = 0; j < n && j < sizeof(b); j++)
					b[j] = (unsigned char)(vw[j] - '0');
				nla_put(m, IMEX_A_MEMBER_VIEW, (int)n, b);
			}
			nla_nest_end(m, e);
		}
		nla_nest_end(m, arr);
		free(dup);
	}
	return transact(c, m, print_msg, c);
}

static int cmd_node_set(struct ctx *c, const struct kv *kv)
{
	struct nl_msg *m = msg_new(c, IMEX_CMD_NODE_SET, 0);
	const char *v;

	if ((v = kv_get(kv, "node")))
		nla_put_string(m, IMEX_A_NODE_NAME, v);
	if ((v = kv_get(kv, "node_uuid")))
		put_uuid(m, IMEX_A_NODE_UUID, v);
	if ((v = kv_get(kv, "fabric")))
		put_fabric(m, v);
	for (int i = 0; i < kv->n; i++)
		if (!strcmp(kv->key[i], "a"))
			put_raw(m, kv->val[i]);
	return transact(c, m, print_msg, c);
}

static int cmd_channel_set(struct ctx *c, const struct kv *kv)
{
	struct nl_msg *m = msg_new(c, IMEX_CMD_CHANNEL_SET, 0);
	const char *v;

	if ((v = kv_get(kv, "id")))
		nla_put_u32(m, IMEX_A_CHANNEL_ID, (uint32_t)parse_u64(v));
	if ((v = kv_get(kv, "uid")))
		nla_put_u32(m, IMEX_A_CHANNEL_UID, (uint32_t)parse_u64(v));
	if ((v = kv_get(kv, "gid")))
		nla_put_u32(m, IMEX_A_CHANNEL_GID, (uint32_t)parse_u64(v));
	if ((v = kv_get(kv, "mode")))
		nla_put_u32(m, IMEX_A_CHANNEL_MODE, (uint32_t)strtoul(v, NULL, 8));
	return transact(c, m, print_msg, c);
}

static int cmd_channel_get(struct ctx *c, const struct kv *kv, bool dump)
{
	struct nl_msg *m = msg_new(c, IMEX_CMD_CHANNEL_GET, dump ? NLM_F_DUMP : 0);
	const char *v;

	if ((v = kv_get(kv, "id")))
		nla_put_u32(m, IMEX_A_CHANNEL_ID, (uint32_t)parse_u64(v));
	put_common(m, kv);
	return transact(c, m, print_msg, c);
}

static int cmd_done(struct ctx *c, const struct kv *kv)
{
	struct nl_msg *m = msg_new(c, IMEX_CMD_REQ_DONE, 0);
	const char *v;

	if ((v = kv_get(kv, "req")))
		nla_put_u64(m, IMEX_A_REQ_ID, strcmp(v, "last") ?
			    parse_u64(v) : c->req_id);
	if ((v = kv_get(kv, "status")))
		nla_put_u32(m, IMEX_A_REQ_STATUS, (uint32_t)parse_u64(v));
	if ((v = kv_get(kv, "msg")))
		nla_put_string(m, IMEX_A_REQ_MESSAGE, v);
	if ((v = kv_get(kv, "uuid")))
		put_uuid(m, IMEX_A_DOMAIN_UUID, v);
	if ((v = kv_get(kv, "ids"))) {
		uint32_t ids[64];
		int n = 0;
		char *dup = strdup(v), *save = NULL, *tok;

		for (tok = strtok_r(dup, ",", &save); tok && n < 64;
		     tok = strtok_r(NULL, ",", &save))
			ids[n++] = (uint32_t)parse_u64(tok);
		nla_put(m, IMEX_A_CHANNEL_IDS, n * 4, ids);
		free(dup);
	}
	for (int i = 0; i < kv->n; i++)
		if (!strcmp(kv->key[i], "a"))
			put_raw(m, kv->val[i]);
	return transact(c, m, print_msg, c);
}

/* Print the next N events (or fail after timeout ms). */
static int on_event_print(struct nl_msg *m, void *arg)
{
	int *left = arg;
	struct ctx dummy = { 0 };

	print_msg(m, &dummy);
	(*left)--;
	return NL_OK;
}

static int cmd_events(struct ctx *c, const struct kv *kv)
{
	const char *v = kv_get(kv, "count"), *t = kv_get(kv, "timeout");
	int left = v ? (int)parse_u64(v) : 1;
	int timeout_ms = t ? (int)parse_u64(t) : 10000;

	events_open(c);
	nl_socket_modify_cb(c->ev, NL_CB_VALID, NL_CB_CUSTOM, on_event_print, &left);
	while (left > 0) {
		if (wait_fd(nl_socket_get_fd(c->ev), timeout_ms) <= 0)
			return c->err = ETIME;
		nl_recvmsgs_default(c->ev);
		fflush(stdout);
	}
	return c->err = 0;
}

/*
 * Join a multicast group (group=events|manager) on a fresh socket and
 * return the kernel's errno: setsockopt rather than
 * nl_socket_add_membership, whose libnl error code loses it.
 */
static int cmd_join(struct ctx *c, const struct kv *kv)
{
	const char *g = kv_get(kv, "group");
	struct nl_sock *sk;
	int grp, err = 0;

	if (!g || (strcmp(g, "events") && strcmp(g, "manager")))
		die("join needs group=events|manager");
	grp = strcmp(g, "events") ? c->grp_manager : c->grp_events;
	if (grp < 0)
		die("the %s group is not registered", g);
	sk = open_sock(c);
	if (setsockopt(nl_socket_get_fd(sk), SOL_NETLINK,
		       NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp)))
		err = errno;
	nl_socket_free(sk);
	c->msg[0] = 0;
	return err;
}

/*
 * Start a channel dump, read its first batch, change something through a
 * second socket, then read the rest: the kernel must flag the dump as
 * interrupted (NLM_F_DUMP_INTR).  change=ID names a granted channel whose
 * mode is toggled.
 */
static int cmd_dump_intr(struct ctx *c, const struct kv *kv)
{
	const char *v = kv_get(kv, "change");
	struct nl_msg *m = msg_new(c, IMEX_CMD_CHANNEL_GET, NLM_F_DUMP);
	struct ctx other;
	bool intr = false, done = false;
	int batches = 0, msgs = 0;
	char cmdline[64];

	if (!v)
		die("dump-intr needs change=CHANNEL");
	if (nl_send_auto(c->sk, m) < 0)
		die("send failed");
	nlmsg_free(m);
	while (!done) {
		struct sockaddr_nl peer;
		unsigned char *buf = NULL;
		int n = nl_recv(c->sk, &peer, &buf, NULL);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (n <= 0)
			die("receive failed");
		for (; nlmsg_ok(h, n); h = nlmsg_next(h, &n)) {
			if (h->nlmsg_flags & NLM_F_DUMP_INTR)
				intr = true;
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				done = true;
			else
				msgs++;
		}
		free(buf);
		if (++batches == 1 && !done) {
			ctx_init(&other);
			other.quiet = true;
			snprintf(cmdline, sizeof(cmdline), "channel-set id=%s mode=0604", v);
			if (run_line(&other, cmdline, 0))
				die("the concurrent change failed");
		}
	}
	printf("dump batches=%d messages=%d interrupted=%d\n", batches, msgs, intr);
	if (batches < 2) {
		snprintf(c->msg, sizeof(c->msg), "the dump fit in one batch");
		return c->err = EMSGSIZE;
	}
	snprintf(c->msg, sizeof(c->msg), "interrupted=%d", intr);
	return c->err = intr ? 0 : EPROTO;
}

/* --- fault-injection sweep (tests/kmod/t-faultinj.sh) ---------------------- */

/* Run one script line on @c, quietly unless the output is captured. */
static int run_text(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int run_text(struct ctx *c, const char *fmt, ...)
{
	char line[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return run_line(c, line, 0);
}

/* Drop " KEY=DIGITS[:DIGITS]" from @s: values that differ from run to run. */
static void strip_key(char *s, const char *key)
{
	size_t kl = strlen(key);
	char *p = s;

	while ((p = strstr(p, key))) {
		char *e = p + kl;

		if (p == s || p[-1] != ' ' || *e < '0' || *e > '9') {
			p++;
			continue;
		}
		while ((*e >= '0' && *e <= '9') || *e == ':')	/* devnum=M:N */
			e++;
		memmove(p - 1, e, strlen(e) + 1);
	}
}

/*
 * The node's state: every domain and channel, the node's counts, and the
 * device nodes by name, mode and owner; what changes by itself or per run
 * (open counts, the manager's pid, device numbers) left out.
 */
static char *snapshot(struct ctx *c, bool with_nodes)
{
	static const char *const dumps[] = { "domains", "channels", "node-get" };
	FILE *saved = stdout, *m;
	struct dirent **ents;
	bool quiet = c->quiet;
	char *buf = NULL;
	size_t len = 0;
	int n;

	m = open_memstream(&buf, &len);
	if (!m)
		die("out of memory");
	fflush(stdout);
	stdout = m;
	c->quiet = false;
	for (size_t i = 0; i < sizeof(dumps) / sizeof(dumps[0]); i++)
		if (run_text(c, "%s", dumps[i]))
			die("snapshot: %s failed", dumps[i]);
	c->quiet = quiet;
	n = with_nodes ? scandir("/dev/imex-channels", &ents, NULL, alphasort) : -1;
	for (int i = 0; i < n; i++) {
		char path[300];
		struct stat st;

		snprintf(path, sizeof(path), "/dev/imex-channels/%s", ents[i]->d_name);
		if (ents[i]->d_name[0] != '.' && !stat(path, &st))
			fprintf(m, "node %s %o %u %u\n", ents[i]->d_name,
				st.st_mode & 07777, st.st_uid, st.st_gid);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	fclose(m);
	stdout = saved;
	strip_key(buf, "open=");
	strip_key(buf, "manager_pid=");
	strip_key(buf, "devnum=");	/* every grant gets a fresh minor */
	return buf;
}

/* The node lines of @s, or the rest. */
static char *part(const char *s, bool nodes)
{
	char *out = calloc(1, strlen(s) + 1), *o = out;

	if (!out)
		die("out of memory");
	while (*s) {
		const char *e = strchrnul(s, '\n');

		if (!strncmp(s, "node ", 5) == nodes) {
			memcpy(o, s, (size_t)(e - s));
			o += e - s;
			*o++ = '\n';
		}
		s = *e ? e + 1 : e;
	}
	return out;
}

/* @after is @ref but for device nodes a grant could not add. */
static bool nodes_missing_only(const char *after, const char *ref)
{
	char *a = part(after, false), *r = part(ref, false);
	char *an = part(after, true), *rn = part(ref, true);
	bool ok = !strcmp(a, r);

	for (char *l = an, *e; ok && *l; l = e + 1) {
		e = strchr(l, '\n');
		*e = 0;
		ok = strstr(rn, l) != NULL;
	}
	free(a);
	free(r);
	free(an);
	free(rn);
	return ok;
}

/* The output of dump command @cmd, raw. */
static char *capture(struct ctx *c, const char *cmd)
{
	FILE *saved = stdout, *m;
	bool quiet = c->quiet;
	char *raw = NULL;
	size_t len = 0;

	m = open_memstream(&raw, &len);
	if (!m)
		die("out of memory");
	fflush(stdout);
	stdout = m;
	c->quiet = false;
	if (run_text(c, "%s", cmd))
		die("%s failed: %s", cmd, c->msg);
	c->quiet = quiet;
	fclose(m);
	stdout = saved;
	return raw;
}

/*
 * Delete every domain, so each run starts from the same node: by request
 * as a client of the manager, or with DOMAIN_REMOVE as the manager.
 */
static void purge(struct ctx *c, bool client)
{
	char *raw, *l, *save = NULL;
	bool quiet = c->quiet;

	c->quiet = true;
	raw = capture(c, "domains");
	for (l = strtok_r(raw, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *nm = strstr(l, " name="), name[IMEX_NAME_MAX + 1];

		if (nm && sscanf(nm + 6, "%64s", name) == 1 &&
		    run_text(c, client ? "delete name=%s" : "remove name=%s", name))
			die("purge: deleting '%s' failed: %s", name, c->msg);
	}
	free(raw);
	c->quiet = quiet;
}

/*
 * sweep NAME: the script's lines are SETUP, its last line the OP.  Run
 * 0 is plain and gives the reference state; run N arms the Nth fault site
 * of OP's request.  Every run must end in success with the reference
 * state, or ENOMEM/EFAULT (or a request the kernel never got) with the
 * state before OP, or a lost reply with the reference state.  Ends when a
 * run no longer reaches its armed fault.
 */
#define SWEEP_MAX 1000u
static int sweep(struct ctx *c, const char *name, char **lines, int nlines,
		 bool client)
{
	char *base, *ref = NULL, line[8192];
	unsigned int n, hits = 0, nodeless = 0;
	int bad = 0;

	c->quiet = true;
	if (!client && run_text(c, "attach"))
		die("sweep %s: attach: %s", name, c->msg);
	purge(c, client);
	base = snapshot(c, true);
	for (n = 0; n <= SWEEP_MAX && !bad; n++) {
		char *before, *after, *now, msg[sizeof(c->msg)];
		bool injected, lost, lost_send;
		const char *res;
		int err;

		purge(c, client);
		now = snapshot(c, true);
		if (strcmp(now, base)) {
			printf("sweep %s nth=%u: the node did not return to its state:\n%s---\n%s",
			       name, n, base, now);
			bad = 1;
		}
		free(now);
		for (int i = 0; i < nlines - 1 && !bad; i++) {
			snprintf(line, sizeof(line), "%s", lines[i]);
			if (run_line(c, line, i + 1)) {
				printf("sweep %s nth=%u: setup '%s' failed\n", name, n, line);
				bad = 1;
			}
		}
		if (bad)
			break;
		before = snapshot(c, true);
		c->fail_nth = n;
		snprintf(line, sizeof(line), "%s", lines[nlines - 1]);
		{
			FILE *saved = stdout, *m;
			char *out = NULL;
			size_t len = 0;

			/* The outcome line goes to a buffer, not the log. */
			m = open_memstream(&out, &len);
			fflush(stdout);
			stdout = m;
			bad = run_line(c, line, nlines);
			fclose(m);
			stdout = saved;
			free(out);
		}
		/* The snapshot runs commands too: keep the outcome first. */
		err = c->err;
		injected = c->injected;
		lost = c->lost && !c->lost_send;
		lost_send = c->lost_send;
		snprintf(msg, sizeof(msg), "%s", c->msg);
		res = lost_send ? "lost-send" : lost ? "lost" : errname(err);
		after = snapshot(c, true);
		if (n == 0) {
			if (bad || err)
				printf("sweep %s: '%s' failed without a fault: %s %s\n",
				       name, line, errname(err), msg);
			ref = after;
			free(before);
			continue;
		}
		if (!injected) {
			if (err || strcmp(after, ref)) {
				printf("sweep %s nth=%u: a run past the last fault site did not succeed: %s\n",
				       name, n, res);
				bad = 1;
			}
			free(before);
			free(after);
			break;
		}
		hits++;
		/* A client's request lost its reply: the manager carries it out. */
		for (int i = 0; client && lost && i < 200 &&
		     strcmp(after, ref); i++) {
			usleep(100000);
			free(after);
			after = snapshot(c, true);
		}
		if (lost) {
			bad = strcmp(after, ref) != 0;
		} else if (!err) {
			if (strcmp(after, ref) && nodes_missing_only(after, ref))
				nodeless++;
			else
				bad = strcmp(after, ref) != 0;
		} else if (lost_send || err == ENOMEM || err == EFAULT) {
			bad = strcmp(after, before) != 0;
		} else {
			printf("sweep %s nth=%u: failed with %s (%s), not ENOMEM\n",
			       name, n, res, msg);
			bad = 1;
		}
		if (bad)
			printf("sweep %s nth=%u: %s, and the state is wrong:\nbefore:\n%s"
			       "after:\n%sexpected (success):\n%s",
			       name, n, res, before, after, ref);
		free(before);
		free(after);
	}
	c->fail_nth = 0;
	if (!bad && n > SWEEP_MAX) {
		printf("sweep %s: still reaching faults after %u runs\n", name, SWEEP_MAX);
		bad = 1;
	}
	purge(c, client);
	if (!bad) {
		printf("sweep %s: %u fault sites, each failed cleanly", name, hits);
		if (nodeless)
			printf(" (%u left a channel without its device node)", nodeless);
		printf("\n");
	}
	free(base);
	free(ref);
	return bad;
}

static void usage(void)
{
	fputs("usage: imex-nl [--as-uid UID] [-q] [--fail-nth N] [--sweep NAME] (-f SCRIPT | COMMAND [KEY=VALUE...])\n"
	      "  --sweep NAME -f SCRIPT: as the manager, run SCRIPT's last line with each of its\n"
	      "  fault sites failed in turn after the other lines (t-faultinj.sh);\n"
	      "  --sweep-client NAME -f SCRIPT: the same as a client of a running manager\n"
	      "  --fail-nth N (or a script line 'fail-nth N' before a command): fail the\n"
	      "  Nth fault site of the command's request; print 'faultinj injected=0|1\n"
	      "  result=ERRNO' and accept any outcome\n"
	      "commands:\n"
	      "  node-get | node-set [node=] [node_uuid=] [fabric=UUID:PART]\n"
	      "  create name= members=N[@ADDR],... [count=] [channels=1,2-5] [uid= gid= mode=] [nowait=1]\n"
	      "  delete name= | alloc name= count=|channels= | free name= channels= | evict name= member=\n"
	      "  replace name= member= new=\n"
	      "  node-join member= [addr=] | node-leave member=\n"
	      "  domain name=|uuid= | domains | channel id= | channels [name=] | channel-set id= [uid= gid= mode=]\n"
	      "  attach | detach | accept (EBADMSG if the upcall is malformed) | done req= status= [msg=]\n"
	      "  set name= uuid= fabric= members= gen= [channels=LIST [uid= gid= mode=]] [ids=LIST [ids_uid= ids_gid= ids_mode=]]\n"
	      "  remove name= [uuid=]\n"
	      "  status name= state=ready|degraded [view=N:S:VIEW,...]\n"
	      "  serve [count=N] [crash=set] | events [count=N] [timeout=MS] | hold | raw cmd=N [flags=dump] [a=TYPE:KIND:VAL...]\n"
	      "  join group=events|manager: join a multicast group, report the errno\n"
	      "  dump-intr change=CHANNEL (a dump raced by a change must be flagged)\n"
	      "  sh COMMAND (in scripts: a shell step, which must succeed)\n"
	      "  serve import=answer|never|die|hold: how the stand-in treats remote imports\n"
	      "  import-accept [wait=MS] | import-done import_id= istatus= [desc=] | export-del-accept\n"
	      "  import-check handle_id= uuid= chan= member= | import-revoke handle_node= [handle_id=] [uuid=] reason=\n"
	      "  every command accepts a=TYPE:KIND:VALUE raw attributes (KIND u8 u16 u32 u64 str strn long bin flag nest,\n"
	      "  ids:N for N u32 values 0..N-1)\n",
	      stderr);
	exit(2);
}

static int run(struct ctx *c, const char *cmd, const struct kv *kv)
{
	if (!strcmp(cmd, "node-get"))
		return cmd_simple(c, IMEX_CMD_NODE_GET, kv, 0);
	if (!strcmp(cmd, "node-set"))
		return cmd_node_set(c, kv);
	if (!strcmp(cmd, "create"))
		return cmd_request(c, IMEX_CMD_DOMAIN_CREATE, kv);
	if (!strcmp(cmd, "delete"))
		return cmd_request(c, IMEX_CMD_DOMAIN_DELETE, kv);
	if (!strcmp(cmd, "alloc"))
		return cmd_request(c, IMEX_CMD_CHANNEL_ALLOC, kv);
	if (!strcmp(cmd, "free"))
		return cmd_request(c, IMEX_CMD_CHANNEL_FREE, kv);
	if (!strcmp(cmd, "evict"))
		return cmd_request(c, IMEX_CMD_MEMBER_EVICT, kv);
	if (!strcmp(cmd, "replace"))
		return cmd_request(c, IMEX_CMD_MEMBER_REPLACE, kv);
	if (!strcmp(cmd, "node-join"))
		return cmd_request(c, IMEX_CMD_NODE_JOIN, kv);
	if (!strcmp(cmd, "node-leave"))
		return cmd_request(c, IMEX_CMD_NODE_LEAVE, kv);
	if (!strcmp(cmd, "domain"))
		return cmd_simple(c, IMEX_CMD_DOMAIN_GET, kv, 0);
	if (!strcmp(cmd, "domains"))
		return cmd_simple(c, IMEX_CMD_DOMAIN_GET, kv, NLM_F_DUMP);
	if (!strcmp(cmd, "channel"))
		return cmd_channel_get(c, kv, false);
	if (!strcmp(cmd, "channels"))
		return cmd_channel_get(c, kv, true);
	if (!strcmp(cmd, "channel-set"))
		return cmd_channel_set(c, kv);
	if (!strcmp(cmd, "attach"))
		return cmd_simple(c, IMEX_CMD_MANAGER_ATTACH, kv, 0);
	if (!strcmp(cmd, "detach"))
		return cmd_simple(c, IMEX_CMD_MANAGER_DETACH, kv, 0);
	if (!strcmp(cmd, "accept"))
		return cmd_accept(c, kv);
	if (!strcmp(cmd, "done"))
		return cmd_done(c, kv);
	if (!strcmp(cmd, "set"))
		return cmd_domain_set(c, kv);
	if (!strcmp(cmd, "remove"))
		return cmd_simple(c, IMEX_CMD_DOMAIN_REMOVE, kv, 0);
	if (!strcmp(cmd, "status"))
		return cmd_status(c, kv);
	if (!strcmp(cmd, "events"))
		return cmd_events(c, kv);
	if (!strcmp(cmd, "import-accept")) {
		/* wait=MS: retry while none is waiting, for at most MS. */
		long left = kv_get(kv, "wait") ? (long)parse_u64(kv_get(kv, "wait")) : 0;
		int err;

		while ((err = cmd_simple(c, IMEX_CMD_IMPORT_ACCEPT, kv, 0)) == ENOENT &&
		       left > 0) {
			usleep(20000);
			left -= 20;
		}
		return err;
	}
	if (!strcmp(cmd, "import-done"))
		return cmd_simple(c, IMEX_CMD_IMPORT_DONE, kv, 0);
	if (!strcmp(cmd, "import-check"))
		return cmd_simple(c, IMEX_CMD_IMPORT_CHECK, kv, 0);
	if (!strcmp(cmd, "export-del-accept"))
		return cmd_simple(c, IMEX_CMD_EXPORT_DEL_ACCEPT, kv, 0);
	if (!strcmp(cmd, "import-revoke"))
		return cmd_simple(c, IMEX_CMD_IMPORT_REVOKE, kv, 0);
	if (!strcmp(cmd, "serve"))
		return cmd_serve(c, kv);
	if (!strcmp(cmd, "dump-intr"))
		return cmd_dump_intr(c, kv);
	if (!strcmp(cmd, "join"))
		return cmd_join(c, kv);
	if (!strcmp(cmd, "hold")) {
		fflush(stdout);
		for (;;)
			pause();
	}
	if (!strcmp(cmd, "raw")) {
		const char *v = kv_get(kv, "cmd"), *f = kv_get(kv, "flags");

		if (!v)
			die("raw needs cmd=N");
		return cmd_simple(c, (int)parse_u64(v), kv,
				  f && !strcmp(f, "dump") ? NLM_F_DUMP : 0);
	}
	die("unknown command '%s'", cmd);
	return 0;
}

/* One line: [!ERRNO] COMMAND KEY=VALUE...  or  msg TEXT */
static int run_line(struct ctx *c, char *line, int lineno)
{
	char *argv[MAX_ARGS + 2] = { NULL };
	int argc = 0, expect = 0;
	struct kv kv = { .n = 0 };
	char *save = NULL, *tok;
	int err;

	line[strcspn(line, "\n")] = 0;
	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line || *line == '#')
		return 0;
	if (!strncmp(line, "fail-nth ", 9)) {
		c->fail_nth = (unsigned int)parse_u64(line + 9);
		return 0;
	}
	if (!strncmp(line, "msg ", 4)) {
		if (!strstr(c->msg, line + 4)) {
			fprintf(stderr, "line %d: message '%s' does not contain '%s'\n",
				lineno, c->msg, line + 4);
			return 1;
		}
		return 0;
	}
	/* A shell step between commands on the same (manager) socket. */
	if (!strncmp(line, "sh ", 3)) {
		if (system(line + 3)) {
			fprintf(stderr, "line %d: '%s' failed\n", lineno, line + 3);
			return 1;
		}
		return 0;
	}
	for (tok = strtok_r(line, " \t", &save); tok && argc < MAX_ARGS + 1;
	     tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	if (argc && argv[0][0] == '!') {
		expect = errno_from_name(argv[0] + 1);
		memmove(argv, argv + 1, --argc * sizeof(*argv));
	}
	if (!argc)
		die("line %d: no command", lineno);
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq)
			die("line %d: '%s' is not KEY=VALUE", lineno, argv[i]);
		*eq = 0;
		kv.key[kv.n] = argv[i];
		kv.val[kv.n++] = eq + 1;
	}
	c->armed = c->injected = c->lost_send = false;
	c->lost = 0;
	err = run(c, argv[0], &kv);
	c->fail_nth = 0;
	/* Under fault injection any outcome is reported, for the test to judge. */
	if (c->armed) {
		printf("faultinj injected=%d result=%s%s\n", c->injected,
		       c->lost_send ? "lost-send-" : c->lost ? "lost-" : "",
		       errname(err));
		fflush(stdout);
		return 0;
	}
	if (err != expect) {
		fprintf(stderr, "line %d: %s: expected %s, got %s (%s)\n", lineno,
			argv[0], errname(expect), errname(err), c->msg);
		return 1;
	}
	if (err && !c->quiet)
		printf("refused %s: %s\n", errname(err), c->msg);
	fflush(stdout);
	return 0;
}

static void drop_to_uid(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		die("cannot become uid %u: %s", uid, strerror(errno));
}

int main(int argc, char **argv)
{
	const char *script = NULL;
	struct ctx c;
	int i = 1, failed = 0;
	unsigned int fail_nth = 0;
	const char *sweep_name = NULL;
	bool quiet = false, sweep_client = false;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--as-uid") && i + 1 < argc)
			drop_to_uid((uid_t)parse_u64(argv[++i]));
		else if (!strcmp(argv[i], "-f") && i + 1 < argc)
			script = argv[++i];
		else if (!strcmp(argv[i], "-q"))
			quiet = true;
		else if (!strcmp(argv[i], "--fail-nth") && i + 1 < argc)
			fail_nth = (unsigned int)parse_u64(argv[++i]);
		else if (!strcmp(argv[i], "--sweep") && i + 1 < argc)
			sweep_name = argv[++i];
		else if (!strcmp(argv[i], "--sweep-client") && i + 1 < argc)
			sweep_name = argv[++i], sweep_client = true;
		else
			usage();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ctx_init(&c);
	c.quiet = quiet;
	if (fail_nth && failnth_open() < 0)
		die("no /proc/thread-self/fail-nth: %s", strerror(errno));
	if (sweep_name) {
		FILE *f = script ? fopen(script, "r") : NULL;
		char *lines[MAX_ARGS], line[8192];
		int n = 0;

		if (!f)
			die("--sweep needs -f SCRIPT");
		if (failnth_open() < 0)
			die("no /proc/thread-self/fail-nth: %s", strerror(errno));
		while (n < MAX_ARGS && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (line[0] && line[0] != '#')
				lines[n++] = strdup(line);
		}
		fclose(f);
		if (!n)
			die("--sweep: the script has no operation");
		failed = sweep(&c, sweep_name, lines, n, sweep_client);
		while (n > 0)
			free(lines[--n]);
		return failed;
	}
	if (script) {
		FILE *f = strcmp(script, "-") ? fopen(script, "r") : stdin;
		static char line[1 << 20];	/* member lists of long names */
		int lineno = 0;

		if (!f)
			die("cannot open %s: %s", script, strerror(errno));
		while (fgets(line, sizeof(line), f) && !failed)
			failed = run_line(&c, line, ++lineno);
		return failed;
	}
	if (i >= argc)
		usage();
	{
		char buf[8192] = "";

		for (int j = i; j < argc; j++) {
			strncat(buf, argv[j], sizeof(buf) - strlen(buf) - 2);
			strcat(buf, " ");
		}
		c.fail_nth = fail_nth;
		return run_line(&c, buf, 0);
	}
}
