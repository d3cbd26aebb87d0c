// SPDX-License-Identifier: GPL-2.0
/* imex-nl: the commands, each building its request from KEY=VALUE arguments. */
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

/* --- commands ---------------------------------------------------------------- */

int cmd_simple(struct ctx *c, int cmd, const struct kv *kv, int flags)
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

int cmd_accept(struct ctx *c, const struct kv *kv)
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
int cmd_request(struct ctx *c, int cmd, const struct kv *kv)
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
		uint64_t lo, hi;

		parse_range(tok, &lo, &hi);
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

int cmd_domain_set(struct ctx *c, const struct kv *kv)
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

int cmd_status(struct ctx *c, const struct kv *kv)
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

int cmd_node_set(struct ctx *c, const struct kv *kv)
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

int cmd_channel_set(struct ctx *c, const struct kv *kv)
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

int cmd_channel_get(struct ctx *c, const struct kv *kv, bool dump)
{
	struct nl_msg *m = msg_new(c, IMEX_CMD_CHANNEL_GET, dump ? NLM_F_DUMP : 0);
	const char *v;

	if ((v = kv_get(kv, "id")))
		nla_put_u32(m, IMEX_A_CHANNEL_ID, (uint32_t)parse_u64(v));
	put_common(m, kv);
	return transact(c, m, print_msg, c);
}

int cmd_done(struct ctx *c, const struct kv *kv)
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

int cmd_events(struct ctx *c, const struct kv *kv)
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
int cmd_join(struct ctx *c, const struct kv *kv)
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
int cmd_dump_intr(struct ctx *c, const struct kv *kv)
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
