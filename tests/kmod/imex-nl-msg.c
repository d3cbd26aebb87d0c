// SPDX-License-Identifier: GPL-2.0
/* imex-nl: the netlink socket, request/reply plumbing and attribute builders. */
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

struct nl_sock *open_sock(struct ctx *c)
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

void ctx_init(struct ctx *c)
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

void events_open(struct ctx *c)
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

void put_uuid(struct nl_msg *m, int type, const char *s)
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
		uint64_t lo, hi;

		parse_range(tok, &lo, &hi);
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

void put_fabric(struct nl_msg *m, const char *spec)
{
	char *dup = strdup(spec), *colon = strrchr(dup, ':');

	if (!colon)
		die("fabric wants UUID:PARTITION, not '%s'", spec);
	*colon = 0;
	put_uuid(m, IMEX_A_FABRIC_UUID, dup);
	nla_put_u32(m, IMEX_A_FABRIC_PARTITION, (uint32_t)parse_u64(colon + 1));
	free(dup);
}

uint32_t state_from_name(const char *s)
{
	static const char *const names[] = { "down", "ready", "degraded" };

	for (uint32_t i = 0; i < 3; i++)
		if (!strcmp(s, names[i]))
			return IMEX_DOMAIN_DOWN + i;
	return (uint32_t)parse_u64(s);
}

/* a=TYPE:KIND:VALUE with KIND u8/u16/u32/u64/str/bin(hex)/flag/empty */
void put_raw(struct nl_msg *m, const char *spec)
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
void put_common(struct nl_msg *m, const struct kv *kv)
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
