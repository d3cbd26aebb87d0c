// SPDX-License-Identifier: GPL-2.0-only
/*
 * fake_imexd: a stand-in manager for exercising imexctl against the real
 * imex.ko in a single VM, before imexd exists.  It attaches as manager,
 * accepts each request and applies it to its own kernel only (no peers):
 * one DOMAIN_SET (the domain's whole new definition) or DOMAIN_REMOVE,
 * DOMAIN_SET_STATUS, then REQ_DONE.  Test hooks by domain
 * name: "fail*" is refused (EBUSY), "slow*" is never answered; members named
 * "down*" are reported never connected (the domain is then DEGRADED).
 * MEMBER_EVICT is refused with EOPNOTSUPP.  NODE_JOIN and NODE_LEAVE
 * succeed (there is no group), except a join of a node named "far*", refused
 * with EXDEV as a node of another NVLink domain.  Not a daemon: for tests only.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/socket.h>

#include "imex_extack.h"
#include "internal.h"

static struct nl_sock *mgr;	/* the attached socket: commands */
static int family;

struct reply {
	int err;
	bool done;
	char extack[IMEX_MESSAGE_MAX];
	int (*parse)(struct nl_msg *m, void *arg);
	void *arg;
};

static int on_valid(struct nl_msg *m, void *arg)
{
	struct reply *r = arg;

	if (r->parse)
		r->parse(m, r->arg);
	return NL_OK;
}

static int on_done(struct nl_msg *m, void *arg)
{
	(void)m;
	((struct reply *)arg)->done = true;
	return NL_STOP;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct reply *r = arg;

	(void)nla;
	r->err = e->error;
	r->done = true;
	imex_extack_msg((struct nlmsghdr *)((char *)e - NLMSG_HDRLEN), r->extack,
			sizeof(r->extack));
	return NL_STOP;
}

/* Send @m on the manager socket; 0 or -errno, *extack the kernel's text. */
static int call(struct nl_msg *m, int (*parse)(struct nl_msg *, void *), void *arg,
		char *extack, size_t size)
{
	struct reply r = { .parse = parse, .arg = arg };
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);

	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_done, &r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, &r);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &r);
	if (nl_send_auto(mgr, m) < 0)
		r.err = -EIO;
	nlmsg_free(m);
	while (!r.err && !r.done)
		// cppcheck-suppress knownConditionTrueFalse ; set by the callbacks
		if (nl_recvmsgs(mgr, cb) < 0 && !r.done)
			r.err = -EIO;
	nl_cb_put(cb);
	if (extack)
		snprintf(extack, size, "%s", r.extack);
	return r.err;
}

static struct nl_msg *msg(uint8_t cmd, int flags)
{
	struct nl_msg *m = nlmsg_alloc_size(65536);

	genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd, IMEX_GENL_VERSION);
	return m;
}

struct node_info {
	uint8_t fabric[16];
	uint32_t partition;
	char name[IMEX_NAME_MAX];
};

static int node_parse(struct nl_msg *m, void *arg)
{
	struct node_info *n = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL);
	if (tb[IMEX_A_FABRIC_UUID])
		memcpy(n->fabric, nla_data(tb[IMEX_A_FABRIC_UUID]), 16);
	if (tb[IMEX_A_FABRIC_PARTITION])
		n->partition = nla_get_u32(tb[IMEX_A_FABRIC_PARTITION]);
	if (tb[IMEX_A_NODE_NAME])
		nla_strlcpy(n->name, tb[IMEX_A_NODE_NAME], sizeof(n->name));
	return 0;
}

struct used {
	uint8_t *bitmap;	/* IMEX_CHANNELS_MAX bits */
};

static int used_parse(struct nl_msg *m, void *arg)
{
	struct used *u = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];
	uint32_t id;

	genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL);
	if (tb[IMEX_A_CHANNEL_ID]) {
		id = nla_get_u32(tb[IMEX_A_CHANNEL_ID]);
		if (id < IMEX_CHANNELS_MAX)
			u->bitmap[id / 8] |= (uint8_t)(1 << (id % 8));
	}
	return 0;
}

/* The lowest @count free channel ids. */
static int pick_free(uint32_t count, uint32_t *ids)
{
	struct used u = { calloc(IMEX_CHANNELS_MAX / 8, 1) };
	uint32_t id, n = 0;

	call(msg(IMEX_CMD_CHANNEL_GET, NLM_F_DUMP), used_parse, &u, NULL, 0);
	for (id = 0; id < IMEX_CHANNELS_MAX && n < count; id++)
		if (!(u.bitmap[id / 8] & (1 << (id % 8))))
			ids[n++] = id;
	free(u.bitmap);
	return 0;
}

/* Channel ids of a request: IMEX_A_CHANNELS, or IMEX_A_CHANNEL_COUNT free ones. */
static uint32_t request_ids(struct nlattr **tb, uint32_t **ids)
{
	struct nlattr *e, *etb[IMEX_A_CHANNEL_ENTRY_MAX + 1];
	uint32_t n = 0;
	int rem;

	*ids = calloc(IMEX_CHANNELS_PER_MSG, sizeof(**ids));
	if (tb[IMEX_A_CHANNELS]) {
		nla_for_each_nested(e, tb[IMEX_A_CHANNELS], rem) {
			nla_parse_nested(etb, IMEX_A_CHANNEL_ENTRY_MAX, e, NULL);
			if (etb[IMEX_A_CHANNEL_ENTRY_ID] && n < IMEX_CHANNELS_PER_MSG)
				(*ids)[n++] = nla_get_u32(etb[IMEX_A_CHANNEL_ENTRY_ID]);
		}
	} else if (tb[IMEX_A_CHANNEL_COUNT]) {
		n = nla_get_u32(tb[IMEX_A_CHANNEL_COUNT]);
		if (n > IMEX_CHANNELS_PER_MSG)
			n = IMEX_CHANNELS_PER_MSG;
		pick_free(n, *ids);
	}
	return n;
}

/* Member states as this node sees them, and every member's view. */
static void set_status(const char *name, struct nlattr *members, const char *self)
{
	struct nlattr *e, *mtb[IMEX_A_MEMBER_MAX + 1], *arr, *ne;
	char names[IMEX_MEMBERS_MAX][IMEX_NAME_MAX];
	uint8_t view[IMEX_MEMBERS_MAX];
	int rem, n = 0, i, j, down = 0;
	struct nl_msg *m;

	nla_for_each_nested(e, members, rem) {
		nla_parse_nested(mtb, IMEX_A_MEMBER_MAX, e, NULL);
		if (n < IMEX_MEMBERS_MAX && mtb[IMEX_A_MEMBER_ENTRY_NAME])
			nla_strlcpy(names[n++], mtb[IMEX_A_MEMBER_ENTRY_NAME], IMEX_NAME_MAX);
	}
	for (i = 0; i < n; i++)
		down += !strncmp(names[i], "down", 4);
	m = msg(IMEX_CMD_DOMAIN_SET_STATUS, 0);
	nla_put_string(m, IMEX_A_DOMAIN_NAME, name);
	nla_put_u32(m, IMEX_A_DOMAIN_STATE, down ? IMEX_DOMAIN_DEGRADED : IMEX_DOMAIN_READY);
	arr = nla_nest_start(m, IMEX_A_MEMBERS);
	for (i = 0; i < n; i++) {
		bool is_self = !strcmp(names[i], self), is_down = !strncmp(names[i], "down", 4);

		ne = nla_nest_start(m, i + 1);
		nla_put_string(m, IMEX_A_MEMBER_ENTRY_NAME, names[i]);
		nla_put_u32(m, IMEX_A_MEMBER_STATE, is_self ? IMEX_MEMBER_SELF :
			    is_down ? IMEX_MEMBER_NEVER_CONNECTED : IMEX_MEMBER_CONNECTED);
		if (!is_down) {
			for (j = 0; j < n; j++)
				view[j] = i == j ? IMEX_MEMBER_SELF :
					  !strncmp(names[j], "down", 4) ?
					  IMEX_MEMBER_NEVER_CONNECTED : IMEX_MEMBER_CONNECTED;
			nla_put(m, IMEX_A_MEMBER_VIEW, n, view);
		}
		nla_nest_end(m, ne);
	}
	nla_nest_end(m, arr);
	call(m, NULL, NULL, NULL, 0);
}

/* The outcome; on success with the channels granted or freed (@ids, @n). */
static void done(uint64_t id, int status, const char *text,
		 const uint32_t *ids, uint32_t n)
{
	struct nl_msg *m = msg(IMEX_CMD_REQ_DONE, 0);

	nla_put_u64(m, IMEX_A_REQ_ID, id);
	nla_put_u32(m, IMEX_A_REQ_STATUS, (uint32_t)status);
	if (text && text[0])
		nla_put_string(m, IMEX_A_REQ_MESSAGE, text);
	if (!status && ids)
		nla_put(m, IMEX_A_CHANNEL_IDS, (int)(n * sizeof(*ids)), ids);
	call(m, NULL, NULL, NULL, 0);
	fprintf(stderr, "fake_imexd: request %llu done: %d %s\n", (unsigned long long)id,
		status, text ? text : "");
}

/* A domain's definition: what the kernel holds, then as the request wants it. */
struct def {
	uint8_t uuid[16];
	uint64_t gen;
	struct nl_msg *members;	/* the DOMAIN_GET reply holding them */
	struct nlattr *mlist;
	uint32_t *ids, n;	/* IMEX_CHANNELS_MAX room */
	uint32_t *uid, *gid, *mode;
};

static int domain_parse(struct nl_msg *m, void *arg)
{
	struct def *d = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL);
	if (!tb[IMEX_A_DOMAIN_UUID] || !tb[IMEX_A_MEMBERS])
		return 0;
	memcpy(d->uuid, nla_data(tb[IMEX_A_DOMAIN_UUID]), 16);
	if (tb[IMEX_A_DOMAIN_GENERATION])
		d->gen = nla_get_u64(tb[IMEX_A_DOMAIN_GENERATION]);
	nlmsg_get(m);
	d->members = m;
	d->mlist = tb[IMEX_A_MEMBERS];
	return 0;
}

static int channel_parse(struct nl_msg *m, void *arg)
{
	struct def *d = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL);
	if (!tb[IMEX_A_CHANNEL_ID] || d->n == IMEX_CHANNELS_MAX)
		return 0;
	d->ids[d->n] = nla_get_u32(tb[IMEX_A_CHANNEL_ID]);
	d->uid[d->n] = tb[IMEX_A_CHANNEL_UID] ? nla_get_u32(tb[IMEX_A_CHANNEL_UID]) : 0;
	d->gid[d->n] = tb[IMEX_A_CHANNEL_GID] ? nla_get_u32(tb[IMEX_A_CHANNEL_GID]) : 0;
	d->mode[d->n] = tb[IMEX_A_CHANNEL_MODE] ? nla_get_u32(tb[IMEX_A_CHANNEL_MODE]) : 0600;
	d->n++;
	return 0;
}

static void def_alloc(struct def *d)
{
	d->ids = calloc(IMEX_CHANNELS_MAX, sizeof(*d->ids));
	d->uid = calloc(IMEX_CHANNELS_MAX, sizeof(*d->uid));
	d->gid = calloc(IMEX_CHANNELS_MAX, sizeof(*d->gid));
	d->mode = calloc(IMEX_CHANNELS_MAX, sizeof(*d->mode));
}

static void def_free(struct def *d)
{
	if (d->members)
		nlmsg_free(d->members);
	free(d->ids);
	free(d->uid);
	free(d->gid);
	free(d->mode);
}

/* The domain as the kernel holds it: 0 or -errno, the kernel's text in @why. */
static int def_read(struct def *d, const char *name, char *why, size_t size)
{
	struct nl_msg *m = msg(IMEX_CMD_DOMAIN_GET, 0);
	int err;

	nla_put_string(m, IMEX_A_DOMAIN_NAME, name);
	err = call(m, domain_parse, d, why, size);
	if (!err && !d->members)
		err = -ENOENT;
	if (err)
		return err;
	m = msg(IMEX_CMD_CHANNEL_GET, NLM_F_DUMP);
	nla_put_string(m, IMEX_A_DOMAIN_NAME, name);
	return call(m, channel_parse, d, why, size);
}

static void def_add(struct def *d, const uint32_t *ids, uint32_t n, uint32_t uid,
		    uint32_t gid, uint32_t mode)
{
	for (uint32_t i = 0; i < n && d->n < IMEX_CHANNELS_MAX; i++, d->n++) {
		d->ids[d->n] = ids[i];
		d->uid[d->n] = uid;
		d->gid[d->n] = gid;
		d->mode[d->n] = mode;
	}
}

static void def_drop(struct def *d, const uint32_t *ids, uint32_t n)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < d->n; i++) {
		uint32_t j = 0;

		while (j < n && ids[j] != d->ids[i])
			j++;
		if (j < n)
			continue;
		d->ids[kept] = d->ids[i];
		d->uid[kept] = d->uid[i];
		d->gid[kept] = d->gid[i];
		d->mode[kept] = d->mode[i];
		kept++;
	}
	d->n = kept;
}

/* DOMAIN_SET: domain @name is now @d, with @members; the kernel's refusal on failure. */
static int def_set(const char *name, const struct def *d, struct nlattr *members,
		   const struct node_info *node, char *why, size_t size)
{
	struct nl_msg *m = msg(IMEX_CMD_DOMAIN_SET, 0);
	struct nlattr *arr = NULL, *e, *mt[IMEX_A_MEMBER_MAX + 1];
	int rem, i = 1;

	nla_put_string(m, IMEX_A_DOMAIN_NAME, name);
	nla_put(m, IMEX_A_DOMAIN_UUID, 16, d->uuid);
	nla_put(m, IMEX_A_FABRIC_UUID, 16, node->fabric);
	nla_put_u32(m, IMEX_A_FABRIC_PARTITION, node->partition);
	nla_put_u64(m, IMEX_A_DOMAIN_GENERATION, d->gen + 1);
	/* Names and addresses only: the states are the kernel's. */
	arr = nla_nest_start(m, IMEX_A_MEMBERS);
	nla_for_each_nested(e, members, rem) {
		struct nlattr *ne;

		nla_parse_nested(mt, IMEX_A_MEMBER_MAX, e, NULL);
		if (!mt[IMEX_A_MEMBER_ENTRY_NAME])
			continue;
		ne = nla_nest_start(m, i++);
		nla_put_string(m, IMEX_A_MEMBER_ENTRY_NAME, nla_get_string(mt[IMEX_A_MEMBER_ENTRY_NAME]));
		if (mt[IMEX_A_MEMBER_ADDR])
			nla_put_string(m, IMEX_A_MEMBER_ADDR, nla_get_string(mt[IMEX_A_MEMBER_ADDR]));
		nla_nest_end(m, ne);
	}
	nla_nest_end(m, arr);
	arr = nla_nest_start(m, IMEX_A_CHANNELS);
	for (uint32_t k = 0; k < d->n; k++) {
		e = nla_nest_start(m, (int)k + 1);
		nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_ID, d->ids[k]);
		nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_UID, d->uid[k]);
		nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_GID, d->gid[k]);
		nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_MODE, d->mode[k]);
		nla_nest_end(m, e);
	}
	nla_nest_end(m, arr);
	return call(m, NULL, NULL, why, size);
}

static void handle(uint64_t id, uint32_t cmd, struct nlattr *attrs)
{
	struct nlattr *tb[IMEX_A_MAX + 1];
	struct node_info node = { 0 };
	struct def d = { 0 };
	char why[IMEX_MESSAGE_MAX] = "", text[IMEX_MESSAGE_MAX];
	uint32_t *ids = NULL, n = 0;
	bool with_ids = false;
	const char *name;
	struct nl_msg *m;
	int err = 0;

	nla_parse_nested(tb, IMEX_A_MAX, attrs, NULL);
	name = tb[IMEX_A_DOMAIN_NAME] ? nla_get_string(tb[IMEX_A_DOMAIN_NAME]) : "";
	if (cmd == IMEX_CMD_NODE_JOIN || cmd == IMEX_CMD_NODE_LEAVE) {
		name = tb[IMEX_A_MEMBER_NAME] ? nla_get_string(tb[IMEX_A_MEMBER_NAME]) : "";
		fprintf(stderr, "fake_imexd: request %llu: cmd %u node %s addr %s\n",
			(unsigned long long)id, cmd, name, tb[IMEX_A_NODE_ADDR] ?
			nla_get_string(tb[IMEX_A_NODE_ADDR]) : "(none)");
		if (cmd == IMEX_CMD_NODE_JOIN && !strncmp(name, "far", 3)) {
			snprintf(text, sizeof(text),
				 "node %s is in another NVLink domain: its fabric identity differs",
				 name);
			done(id, EXDEV, text, NULL, 0);
			return;
		}
		done(id, 0, NULL, NULL, 0);
		return;
	}
	fprintf(stderr, "fake_imexd: request %llu: cmd %u domain %s\n",
		(unsigned long long)id, cmd, name);
	if (!strncmp(name, "slow", 4))
		return;
	if (!strncmp(name, "fail", 4)) {
		snprintf(text, sizeof(text), "fake imexd refuses domain %s", name);
		done(id, EBUSY, text, NULL, 0);
		return;
	}
	call(msg(IMEX_CMD_NODE_GET, 0), node_parse, &node, NULL, 0);
	def_alloc(&d);
	switch (cmd) {
	case IMEX_CMD_DOMAIN_CREATE:
		if (tb[IMEX_A_DOMAIN_UUID])
			memcpy(d.uuid, nla_data(tb[IMEX_A_DOMAIN_UUID]), 16);
		else if (getrandom(d.uuid, sizeof(d.uuid), 0) != sizeof(d.uuid))
			memset(d.uuid, 0x5a, sizeof(d.uuid));
		n = request_ids(tb, &ids);
		def_add(&d, ids, n,
			tb[IMEX_A_CHANNEL_UID] ? nla_get_u32(tb[IMEX_A_CHANNEL_UID]) : 0,
			tb[IMEX_A_CHANNEL_GID] ? nla_get_u32(tb[IMEX_A_CHANNEL_GID]) : 0,
			tb[IMEX_A_CHANNEL_MODE] ? nla_get_u32(tb[IMEX_A_CHANNEL_MODE]) : 0600);
		err = def_set(name, &d, tb[IMEX_A_MEMBERS], &node, why, sizeof(why));
		if (!err)
			set_status(name, tb[IMEX_A_MEMBERS], node.name);
		break;
	case IMEX_CMD_DOMAIN_DELETE:
		m = msg(IMEX_CMD_DOMAIN_REMOVE, 0);
		nla_put_string(m, IMEX_A_DOMAIN_NAME, name);
		err = call(m, NULL, NULL, why, sizeof(why));
		break;
	case IMEX_CMD_CHANNEL_ALLOC:
	case IMEX_CMD_CHANNEL_FREE:
		err = def_read(&d, name, why, sizeof(why));
		if (err)
			break;
		n = request_ids(tb, &ids);
		with_ids = true;
		if (cmd == IMEX_CMD_CHANNEL_ALLOC)
			def_add(&d, ids, n, 0, 0, 0600);
		else
			def_drop(&d, ids, n);
		err = def_set(name, &d, d.mlist, &node, why, sizeof(why));
		break;
	default:
		err = -EOPNOTSUPP;
		snprintf(why, sizeof(why), "fake imexd cannot do command %u", cmd);
	}
	def_free(&d);
	done(id, -err, why, with_ids ? ids : NULL, n);
	free(ids);
}

struct accepted {
	uint64_t id;
	uint32_t cmd;
	struct nlattr *attrs;
	struct nl_msg *m;
};

static int accept_parse(struct nl_msg *m, void *arg)
{
	struct accepted *a = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL);
	if (!tb[IMEX_A_REQ_ID] || !tb[IMEX_A_REQ_CMD] || !tb[IMEX_A_REQ_ATTRS])
		return 0;
	a->id = nla_get_u64(tb[IMEX_A_REQ_ID]);
	a->cmd = nla_get_u32(tb[IMEX_A_REQ_CMD]);
	nlmsg_get(m);
	a->m = m;
	a->attrs = tb[IMEX_A_REQ_ATTRS];
	return 0;
}

static void accept_all(void)
{
	for (;;) {
		struct accepted a = { 0 };

		if (call(msg(IMEX_CMD_REQ_ACCEPT, 0), accept_parse, &a, NULL, 0) || !a.m)
			return;
		handle(a.id, a.cmd, a.attrs);
		nlmsg_free(a.m);	/* drops the reference taken in accept_parse() */
	}
}

static int drain(struct nl_msg *m, void *arg)
{
	(void)m;
	(void)arg;
	return NL_OK;
}

int main(void)
{
	struct nl_sock *notif = nl_socket_alloc();
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	struct pollfd pfd;
	int grp;

	mgr = nl_socket_alloc();
	if (genl_connect(mgr) || genl_connect(notif)) {
		fprintf(stderr, "fake_imexd: no generic netlink\n");
		return 1;
	}
	imexctl_nl_enable_ext_ack(mgr);
	nl_socket_enable_msg_peek(mgr);
	family = genl_ctrl_resolve(mgr, IMEX_GENL_NAME);
	grp = genl_ctrl_resolve_grp(notif, IMEX_GENL_NAME, IMEX_MCGRP_MANAGER);
	if (family < 0 || grp < 0) {
		fprintf(stderr, "fake_imexd: imex module not loaded\n");
		return 1;
	}
	nl_socket_disable_seq_check(notif);
	nl_socket_add_membership(notif, grp);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, drain, NULL);
	if (call(msg(IMEX_CMD_MANAGER_ATTACH, 0), NULL, NULL, NULL, 0)) {
		fprintf(stderr, "fake_imexd: cannot attach as manager\n");
		return 1;
	}
	fprintf(stderr, "fake_imexd: attached\n");
	accept_all();
	pfd.fd = nl_socket_get_fd(notif);
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, -1) < 0)
			continue;
		nl_recvmsgs(notif, cb);
		accept_all();
	}
}
