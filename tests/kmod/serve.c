// SPDX-License-Identifier: GPL-2.0
/*
 * A single-node stand-in for imexd, so the kernel's request path can be
 * tested before and apart from the daemon: attach as manager, wait for
 * request notifications, and carry each request out on this node alone as
 * one DOMAIN_SET (the domain's whole new definition: what the kernel holds,
 * changed as the request asks) or DOMAIN_REMOVE.  crash=set stops after the
 * DOMAIN_SET and blocks forever, as a daemon that died before answering.
 *
 * Remote imports (IMPORT_NOTIFY) are answered as the exporting node would:
 * IMPORT_ACCEPT, IMPORT_CHECK on this same kernel, IMPORT_DONE.  import=
 * never leaves them unaccepted, hold accepts and never answers, die exits
 * once one is accepted (a daemon lost mid-import).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uuid/uuid.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include <linux/imex.h>
#include "imex-nl.h"

struct node_info {
	uint8_t fabric[16];
	uint32_t partition;
	uint32_t max_channels;
	uint8_t *used;		/* max_channels flags */
};

static int on_node(struct nl_msg *m, void *arg)
{
	struct node_info *n = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL))
		return NL_SKIP;
	if (tb[IMEX_A_FABRIC_UUID])
		memcpy(n->fabric, nla_data(tb[IMEX_A_FABRIC_UUID]), 16);
	if (tb[IMEX_A_FABRIC_PARTITION])
		n->partition = nla_get_u32(tb[IMEX_A_FABRIC_PARTITION]);
	if (tb[IMEX_A_MAX_CHANNELS])
		n->max_channels = nla_get_u32(tb[IMEX_A_MAX_CHANNELS]);
	return NL_OK;
}

static int on_channel(struct nl_msg *m, void *arg)
{
	struct node_info *n = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];
	uint32_t id;

	if (genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL) ||
	    !tb[IMEX_A_CHANNEL_ID])
		return NL_SKIP;
	id = nla_get_u32(tb[IMEX_A_CHANNEL_ID]);
	if (id < n->max_channels)
		n->used[id] = 1;
	return NL_OK;
}

static void node_info_load(struct ctx *c, struct node_info *n)
{
	free(n->used);
	memset(n, 0, sizeof(*n));
	transact(c, msg_new(c, IMEX_CMD_NODE_GET, 0), on_node, n);
	n->used = calloc(n->max_channels ? n->max_channels : 1, 1);
	transact(c, msg_new(c, IMEX_CMD_CHANNEL_GET, NLM_F_DUMP), on_channel, n);
}

struct accepted {
	uint64_t id;
	uint32_t cmd;
	struct nlattr *tb[IMEX_A_MAX + 1];
	struct nl_msg *keep;
};

static int on_accept(struct nl_msg *m, void *arg)
{
	struct accepted *a = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL) ||
	    !tb[IMEX_A_REQ_ID] || !tb[IMEX_A_REQ_ATTRS])
		return NL_SKIP;
	a->id = nla_get_u64(tb[IMEX_A_REQ_ID]);
	a->cmd = nla_get_u32(tb[IMEX_A_REQ_CMD]);
	nlmsg_get(m);
	a->keep = m;
	nla_parse_nested(a->tb, IMEX_A_MAX, tb[IMEX_A_REQ_ATTRS], NULL);
	return NL_OK;
}

/* One channel of the new definition. */
struct chan {
	uint32_t id, uid, gid, mode;
};

/* The domain as the kernel holds it, and the definition being built. */
struct def {
	uint8_t uuid[16];
	uint64_t gen;
	bool found;
	const char *evict;	/* a member to leave out, or NULL */
	const char *add;	/* a member to add in its place, or NULL */
	struct nl_msg *m;	/* the DOMAIN_SET: members go here */
	struct chan *ch;	/* max_channels entries */
	uint32_t n;
};

/* DOMAIN_GET reply: UUID, generation, and the members into the set. */
static int on_domain(struct nl_msg *msg, void *arg)
{
	struct def *d = arg;
	struct nlattr *tb[IMEX_A_MAX + 1], *e, *arr;
	int i = 1, rem;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, IMEX_A_MAX, NULL) ||
	    !tb[IMEX_A_MEMBERS] || !tb[IMEX_A_DOMAIN_UUID])
		return NL_SKIP;
	memcpy(d->uuid, nla_data(tb[IMEX_A_DOMAIN_UUID]), 16);
	if (tb[IMEX_A_DOMAIN_GENERATION])
		d->gen = nla_get_u64(tb[IMEX_A_DOMAIN_GENERATION]);
	arr = nla_nest_start(d->m, IMEX_A_MEMBERS);
	nla_for_each_nested(e, tb[IMEX_A_MEMBERS], rem) {
		struct nlattr *mt[IMEX_A_MEMBER_MAX + 1], *ne;

		if (nla_parse_nested(mt, IMEX_A_MEMBER_MAX, e, NULL) ||
		    !mt[IMEX_A_MEMBER_ENTRY_NAME] ||
		    (d->evict && !strcmp(nla_data(mt[IMEX_A_MEMBER_ENTRY_NAME]), d->evict)))
			continue;
		ne = nla_nest_start(d->m, i++);
		nla_put_string(d->m, IMEX_A_MEMBER_ENTRY_NAME,
			       nla_data(mt[IMEX_A_MEMBER_ENTRY_NAME]));
		if (mt[IMEX_A_MEMBER_ADDR])
			nla_put_string(d->m, IMEX_A_MEMBER_ADDR,
				       nla_data(mt[IMEX_A_MEMBER_ADDR]));
		nla_nest_end(d->m, ne);
	}
	if (d->add) {
		struct nlattr *ne = nla_nest_start(d->m, i++);

		nla_put_string(d->m, IMEX_A_MEMBER_ENTRY_NAME, d->add);
		nla_nest_end(d->m, ne);
	}
	nla_nest_end(d->m, arr);
	d->found = true;
	return NL_OK;
}

/* CHANNEL_GET dump of the domain: its channels with their owners. */
static int on_domain_channel(struct nl_msg *msg, void *arg)
{
	struct def *d = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, IMEX_A_MAX, NULL) ||
	    !tb[IMEX_A_CHANNEL_ID])
		return NL_SKIP;
	d->ch[d->n++] = (struct chan){
		.id = nla_get_u32(tb[IMEX_A_CHANNEL_ID]),
		.uid = tb[IMEX_A_CHANNEL_UID] ? nla_get_u32(tb[IMEX_A_CHANNEL_UID]) : 0,
		.gid = tb[IMEX_A_CHANNEL_GID] ? nla_get_u32(tb[IMEX_A_CHANNEL_GID]) : 0,
		.mode = tb[IMEX_A_CHANNEL_MODE] ? nla_get_u32(tb[IMEX_A_CHANNEL_MODE]) : 0600,
	};
	return NL_OK;
}

static bool in_list(struct nlattr *list, uint32_t id)
{
	struct nlattr *e;
	int rem;

	nla_for_each_nested(e, list, rem) {
		struct nlattr *ct[IMEX_A_CHANNEL_ENTRY_MAX + 1];

		if (!nla_parse_nested(ct, IMEX_A_CHANNEL_ENTRY_MAX, e, NULL) &&
		    ct[IMEX_A_CHANNEL_ENTRY_ID] &&
		    nla_get_u32(ct[IMEX_A_CHANNEL_ENTRY_ID]) == id)
			return true;
	}
	return false;
}

/* The request's channels (its list, or the lowest free) with its owner. */
static int add_request_channels(struct def *d, struct nlattr **tb,
				struct node_info *n)
{
	struct chan c = {
		.uid = tb[IMEX_A_CHANNEL_UID] ? nla_get_u32(tb[IMEX_A_CHANNEL_UID]) : 0,
		.gid = tb[IMEX_A_CHANNEL_GID] ? nla_get_u32(tb[IMEX_A_CHANNEL_GID]) : 0,
		.mode = tb[IMEX_A_CHANNEL_MODE] ? nla_get_u32(tb[IMEX_A_CHANNEL_MODE]) : 0600,
	};
	uint32_t want = tb[IMEX_A_CHANNEL_COUNT] ? nla_get_u32(tb[IMEX_A_CHANNEL_COUNT]) : 0;
	struct nlattr *e;
	int rem;

	if (tb[IMEX_A_CHANNELS]) {
		nla_for_each_nested(e, tb[IMEX_A_CHANNELS], rem) {
			struct nlattr *ct[IMEX_A_CHANNEL_ENTRY_MAX + 1];

			if (nla_parse_nested(ct, IMEX_A_CHANNEL_ENTRY_MAX, e, NULL) ||
			    !ct[IMEX_A_CHANNEL_ENTRY_ID] || d->n == n->max_channels)
				continue;
			c.id = nla_get_u32(ct[IMEX_A_CHANNEL_ENTRY_ID]);
			d->ch[d->n++] = c;
		}
		return 0;
	}
	for (uint32_t id = 0; id < n->max_channels && want; id++) {
		if (n->used[id])
			continue;
		c.id = id;
		d->ch[d->n++] = c;
		want--;
	}
	return want ? ENOSPC : 0;
}

/*
 * The channel set: those owned as the first one as one IMEX_A_CHANNEL_IDS
 * array, the others as entries of their own.
 */
static void put_channel_set(struct nl_msg *m, const struct def *d)
{
	const struct chan *o = d->n ? &d->ch[0] : NULL;
	uint32_t *ids = calloc(d->n ? d->n : 1, sizeof(*ids)), nids = 0;
	struct nlattr *arr;
	int i = 1;

	if (!ids)
		die("out of memory");
	arr = nla_nest_start(m, IMEX_A_CHANNELS);
	for (uint32_t k = 0; k < d->n; k++) {
		const struct chan *c = &d->ch[k];
		struct nlattr *ne;

		if (c->uid == o->uid && c->gid == o->gid && c->mode == o->mode) {
			ids[nids++] = c->id;
			continue;
		}
		ne = nla_nest_start(m, i++);
		nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_ID, c->id);
		nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_UID, c->uid);
		nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_GID, c->gid);
		nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_MODE, c->mode);
		nla_nest_end(m, ne);
	}
	nla_nest_end(m, arr);
	if (nids) {
		nla_put(m, IMEX_A_CHANNEL_IDS, (int)(nids * sizeof(*ids)), ids);
		nla_put_u32(m, IMEX_A_CHANNEL_UID, o->uid);
		nla_put_u32(m, IMEX_A_CHANNEL_GID, o->gid);
		nla_put_u32(m, IMEX_A_CHANNEL_MODE, o->mode);
	}
	free(ids);
}

static int serve_one(struct ctx *c, struct accepted *a, const char *crash)
{
	struct nlattr **tb = a->tb;
	/* NODE_JOIN and NODE_LEAVE name no domain. */
	const char *name = tb[IMEX_A_DOMAIN_NAME] ?
			   nla_data(tb[IMEX_A_DOMAIN_NAME]) : "";
	struct node_info n = { 0 };
	struct def d = { 0 };
	struct nl_msg *m, *q;
	int err = 0;

	switch (a->cmd) {
	case IMEX_CMD_DOMAIN_DELETE:
		m = msg_new(c, IMEX_CMD_DOMAIN_REMOVE, 0);
		nla_put_string(m, IMEX_A_DOMAIN_NAME, name);
		return transact(c, m, NULL, NULL);
	case IMEX_CMD_DOMAIN_CREATE:
	case IMEX_CMD_CHANNEL_ALLOC:
	case IMEX_CMD_CHANNEL_FREE:
	case IMEX_CMD_MEMBER_EVICT:
	case IMEX_CMD_MEMBER_REPLACE:
		break;
	case IMEX_CMD_NODE_JOIN:
	case IMEX_CMD_NODE_LEAVE:
		return 0;	/* no group here: nothing to hold */
	default:
		return EOPNOTSUPP;
	}
	node_info_load(c, &n);
	d.ch = calloc(n.max_channels ? n.max_channels : 1, sizeof(*d.ch));
	if (!d.ch)
		die("out of memory");
	m = d.m = msg_new(c, IMEX_CMD_DOMAIN_SET, 0);
	nla_put_string(m, IMEX_A_DOMAIN_NAME, name);
	nla_put(m, IMEX_A_FABRIC_UUID, 16, n.fabric);
	nla_put_u32(m, IMEX_A_FABRIC_PARTITION, n.partition);
	if (a->cmd == IMEX_CMD_DOMAIN_CREATE) {
		if (tb[IMEX_A_DOMAIN_UUID])
			memcpy(d.uuid, nla_data(tb[IMEX_A_DOMAIN_UUID]), 16);
		else
			uuid_generate(d.uuid);
		nla_put(m, IMEX_A_MEMBERS | NLA_F_NESTED, nla_len(tb[IMEX_A_MEMBERS]),
			nla_data(tb[IMEX_A_MEMBERS]));
		err = add_request_channels(&d, tb, &n);
	} else {
		/* The definition the kernel holds, changed as asked. */
		if (a->cmd == IMEX_CMD_MEMBER_EVICT ||
		    a->cmd == IMEX_CMD_MEMBER_REPLACE)
			d.evict = nla_data(tb[IMEX_A_MEMBER_NAME]);
		if (a->cmd == IMEX_CMD_MEMBER_REPLACE)
			d.add = nla_data(tb[IMEX_A_MEMBER_NEW_NAME]);
		q = msg_new(c, IMEX_CMD_DOMAIN_GET, 0);
		nla_put_string(q, IMEX_A_DOMAIN_NAME, name);
		err = transact(c, q, on_domain, &d);
		if (!err && !d.found) {
			snprintf(c->msg, sizeof(c->msg), "no domain '%s' to change", name);
			err = ENOENT;
		}
		if (!err) {
			q = msg_new(c, IMEX_CMD_CHANNEL_GET, NLM_F_DUMP);
			nla_put_string(q, IMEX_A_DOMAIN_NAME, name);
			err = transact(c, q, on_domain_channel, &d);
		}
		if (!err && a->cmd == IMEX_CMD_CHANNEL_FREE) {
			uint32_t kept = 0;

			for (uint32_t k = 0; k < d.n; k++)
				if (!tb[IMEX_A_CHANNELS] ||
				    !in_list(tb[IMEX_A_CHANNELS], d.ch[k].id))
					d.ch[kept++] = d.ch[k];
			d.n = kept;
		}
		if (!err && a->cmd == IMEX_CMD_CHANNEL_ALLOC)
			err = add_request_channels(&d, tb, &n);
	}
	if (err) {
		free(n.used);
		free(d.ch);
		nlmsg_free(m);
		/* Else the kernel's message, from the read that failed. */
		if (err == ENOSPC)
			snprintf(c->msg, sizeof(c->msg), "no free channels");
		return err;
	}
	nla_put(m, IMEX_A_DOMAIN_UUID, 16, d.uuid);
	nla_put_u64(m, IMEX_A_DOMAIN_GENERATION, d.gen + 1);
	put_channel_set(m, &d);
	free(n.used);
	free(d.ch);
	err = transact(c, m, NULL, NULL);
	if (err)
		return err;
	printf("set domain=%s\n", name);
	fflush(stdout);
	if (crash && !strcmp(crash, "set"))
		for (;;)
			pause();
	return 0;
}

static int drain(struct nl_msg *m, void *arg)
{
	(void)m;
	(void)arg;
	return NL_OK;
}

struct names {
	char name[64][IMEX_NAME_MAX];
	int n;
};

static int on_domain_name(struct nl_msg *m, void *arg)
{
	struct names *nm = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL) ||
	    !tb[IMEX_A_DOMAIN_NAME] || nm->n == 64)
		return NL_OK;
	snprintf(nm->name[nm->n++], IMEX_NAME_MAX, "%s",
		 (char *)nla_data(tb[IMEX_A_DOMAIN_NAME]));
	return NL_OK;
}

/* As the daemon does on attach: the domains are usable again. */
static void mark_domains_ready(struct ctx *c)
{
	struct names *nm = calloc(1, sizeof(*nm));

	transact(c, msg_new(c, IMEX_CMD_DOMAIN_GET, NLM_F_DUMP), on_domain_name, nm);
	for (int i = 0; i < nm->n; i++) {
		struct nl_msg *m = msg_new(c, IMEX_CMD_DOMAIN_SET_STATUS, 0);

		nla_put_string(m, IMEX_A_DOMAIN_NAME, nm->name[i]);
		nla_put_u32(m, IMEX_A_DOMAIN_STATE, IMEX_DOMAIN_READY);
		transact(c, m, NULL, NULL);
	}
	free(nm);
}

struct import_req {
	uint64_t id, handle_id;
	uint32_t chan;
	uint8_t domain[16];
	bool got;
	uint32_t desc_len;
	char desc[IMEX_DESC_MAX];
};

static int on_import_accept(struct nl_msg *m, void *arg)
{
	struct import_req *r = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL) ||
	    !tb[IMEX_A_IMPORT_ID] || !tb[IMEX_A_HANDLE_ID] ||
	    !tb[IMEX_A_DOMAIN_UUID] || !tb[IMEX_A_CHANNEL_ID])
		return NL_SKIP;
	r->id = nla_get_u64(tb[IMEX_A_IMPORT_ID]);
	r->handle_id = nla_get_u64(tb[IMEX_A_HANDLE_ID]);
	r->chan = nla_get_u32(tb[IMEX_A_CHANNEL_ID]);
	memcpy(r->domain, nla_data(tb[IMEX_A_DOMAIN_UUID]), 16);
	r->got = true;
	return NL_OK;
}

static int on_import_check(struct nl_msg *m, void *arg)
{
	struct import_req *r = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL) ||
	    !tb[IMEX_A_DESC])
		return NL_SKIP;
	r->desc_len = (uint32_t)nla_len(tb[IMEX_A_DESC]);
	if (r->desc_len > sizeof(r->desc))
		r->desc_len = sizeof(r->desc);
	memcpy(r->desc, nla_data(tb[IMEX_A_DESC]), r->desc_len);
	return NL_OK;
}

/* One remote import, as the exporting node's daemon would check it.  1: served. */
static int serve_import(struct ctx *c, const char *mode)
{
	struct import_req r = { 0 };
	char host[IMEX_NAME_MAX] = "";
	struct nl_msg *m;
	int err;

	err = transact(c, msg_new(c, IMEX_CMD_IMPORT_ACCEPT, 0), on_import_accept, &r);
	if (err == ENOENT)
		return 0;
	if (err || !r.got)
		die("IMPORT_ACCEPT: %s %s", strerror(err), c->msg);
	printf("import accepted id=%" PRIu64 "\n", r.id);
	fflush(stdout);
	if (!strcmp(mode, "die"))
		_exit(0);
	if (!strcmp(mode, "hold"))
		return 1;
	gethostname(host, sizeof(host) - 1);
	m = msg_new(c, IMEX_CMD_IMPORT_CHECK, 0);
	nla_put_u64(m, IMEX_A_HANDLE_ID, r.handle_id);
	nla_put(m, IMEX_A_DOMAIN_UUID, 16, r.domain);
	nla_put_u32(m, IMEX_A_CHANNEL_ID, r.chan);
	nla_put_string(m, IMEX_A_MEMBER_NAME, host);
	err = transact(c, m, on_import_check, &r);
	m = msg_new(c, IMEX_CMD_IMPORT_DONE, 0);
	nla_put_u64(m, IMEX_A_IMPORT_ID, r.id);
	nla_put_u32(m, IMEX_A_REQ_STATUS, (uint32_t)err);
	if (!err)
		nla_put(m, IMEX_A_DESC, (int)r.desc_len, r.desc);
	/* ENOENT: the importer stopped waiting meanwhile. */
	err = transact(c, m, NULL, NULL);
	printf("import done id=%" PRIu64 " done=%d\n", r.id, err);
	fflush(stdout);
	return 1;
}

int cmd_serve(struct ctx *c, const struct kv *kv)
{
	const char *imode = kv_get(kv, "import") ? kv_get(kv, "import") : "answer";
	const char *v = kv_get(kv, "count"), *crash = kv_get(kv, "crash");
	long left = v ? (long)parse_u64(v) : -1;
	struct nl_sock *note;
	int err;

	err = transact(c, msg_new(c, IMEX_CMD_MANAGER_ATTACH, 0), NULL, NULL);
	if (err)
		return err;
	mark_domains_ready(c);
	note = nl_socket_alloc();
	if (!note || genl_connect(note) ||
	    nl_socket_add_membership(note, c->grp_manager))
		die("cannot join the manager group");
	nl_socket_disable_seq_check(note);
	nl_socket_modify_cb(note, NL_CB_VALID, NL_CB_CUSTOM, drain, NULL);
	printf("serving\n");
	fflush(stdout);

	while (left != 0) {
		struct accepted a = { 0 };
		struct nl_msg *m;
		char msg[sizeof(c->msg)];
		uint32_t status;

		if (strcmp(imode, "never") && serve_import(c, imode))
			continue;
		err = transact(c, msg_new(c, IMEX_CMD_REQ_ACCEPT, 0), on_accept, &a);
		if (err == ENOENT) {
			/* Nothing queued: sleep until the kernel announces one. */
			if (wait_fd(nl_socket_get_fd(note), -1) > 0)
				nl_recvmsgs_default(note);
			continue;
		}
		if (err)
			return err;
		status = (uint32_t)serve_one(c, &a, crash);
		/* The kernel takes at most IMEX_MESSAGE_MAX - 1 bytes. */
		strncpy(msg, status ? c->msg : "done", IMEX_MESSAGE_MAX - 1);
		msg[IMEX_MESSAGE_MAX - 1] = 0;
		m = msg_new(c, IMEX_CMD_REQ_DONE, 0);
		nla_put_u64(m, IMEX_A_REQ_ID, a.id);
		nla_put_u32(m, IMEX_A_REQ_STATUS, status);
		nla_put_string(m, IMEX_A_REQ_MESSAGE, msg);
		nlmsg_free(a.keep);
		err = transact(c, m, NULL, NULL);
		if (err)
			return err;
		printf("served req=%" PRIu64 " cmd=%u status=%u\n", a.id, a.cmd, status);
		fflush(stdout);
		if (left > 0)
			left--;
	}
	nl_socket_free(note);
	return 0;
}
