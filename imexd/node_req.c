// SPDX-License-Identifier: GPL-2.0
/*
 * The node dispatcher's set-up and translations (see node_internal.h):
 * the roster, the parts, an administrator's request into an fsm command,
 * peer messages routed by type, and what health and the kernel are told.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/imex.h>

#include "grow.h"
#include "node_internal.h"

/* ---- set-up ---------------------------------------------------------------- */

int node_roster_init(struct imexd_node *n, const struct imexd_node_config *cfg,
		     char *err, size_t errlen)
{
	size_t i, j, cnt = cfg->n_roster ? cfg->n_roster : 1;

	if (!imexd_name_valid(cfg->name)) {
		snprintf(err, errlen, "node name '%s' is not a valid name",
			 cfg->name);
		return -EINVAL;
	}
	if (cnt > IMEXD_CONS_ROSTER_MAX) {
		snprintf(err, errlen, "NODES_FILE lists %zu nodes; at most %d",
			 cnt, IMEXD_CONS_ROSTER_MAX);
		return -EINVAL;
	}
	n->roster = calloc(cnt, sizeof(*n->roster));
	n->names = calloc(cnt, sizeof(*n->names));
	if (!n->roster || !n->names)
		return -ENOMEM;
	if (!cfg->n_roster) {
		snprintf(n->roster[0].name, sizeof(n->roster[0].name), "%s",
			 cfg->name);
	} else {
		memcpy(n->roster, cfg->roster, cnt * sizeof(*n->roster));
	}
	n->n_roster = cnt;
	for (i = 0; i < cnt; i++) {
		if (!imexd_name_valid(n->roster[i].name)) {
			snprintf(err, errlen,
				 "NODES_FILE: '%s' is not a valid node name",
				 n->roster[i].name);
			return -EINVAL;
		}
		for (j = 0; j < i; j++)
			if (!strcmp(n->roster[i].name, n->roster[j].name)) {
				snprintf(err, errlen,
					 "NODES_FILE lists node '%s' twice",
					 n->roster[i].name);
				return -EINVAL;
			}
		n->names[i] = n->roster[i].name;
	}
	/* Not listed: it waits to be joined (logged at start). */
	n->outside = node_roster_index(n, cfg->name) < 0;
	return 0;
}

int node_parts_new(struct imexd_node *n, char *err, size_t errlen)
{
	const struct imexd_node_config *c = &n->cfg;
	struct imexd_peers_config pc = {
		.self = c->name,
		.epoch = c->epoch,
		.roster = n->roster,
		.n_roster = n->n_roster,
		.default_port = c->default_port,
		.backoff_min_ms = c->backoff_min_ms,
		.backoff_max_ms = c->backoff_max_ms,
		.max_channels = c->max_channels,
		.partition = c->partition,
	};
	struct imexd_agree_config ac = {
		.roster = n->names,
		.n_roster = (unsigned)n->n_roster,
		.self = c->name,
		.log = c->log,
		.election_timeout_ms = c->election_timeout_ms,
		.request_timeout_ms = c->request_timeout_ms,
		.snapshot_threshold = c->snapshot_threshold,
		.snapshot_trailing = c->snapshot_trailing,
		.seed = c->seed,
	};
	struct imexd_health_config hc = {
		.self = c->name,
		.heartbeat_ms = c->heartbeat_ms,
		.miss_count = c->miss_count,
		.grace_ms = c->grace_ms,
	};
	int rv;

	memcpy(pc.self_uuid, c->node_uuid, 16);
	memcpy(pc.fabric_uuid, c->fabric_uuid, 16);
	snprintf(ac.identity.name, sizeof(ac.identity.name), "%s", c->name);
	memcpy(ac.identity.uuid, c->node_uuid, 16);
	memcpy(ac.identity.fabric_uuid, c->fabric_uuid, 16);
	ac.identity.partition = c->partition;
	ac.identity.max_channels = c->max_channels;

	rv = imexd_peers_new(&pc, &n->peers);
	if (!rv)
		rv = imexd_agree_new(&ac, &n->agree);
	if (!rv)
		rv = imexd_health_new(&hc, &n->health);
	if (!rv)
		rv = imexd_broker_new(c->name, &n->broker);
	if (rv == -EINVAL)
		snprintf(err, errlen,
			 "invalid node identity or roster (name '%s', %zu roster nodes)",
			 c->name, n->n_roster);
	return rv;
}

const struct imexd_fsm *node_fsm(const struct imexd_node *n)
{
	return imexd_agree_fsm(n->agree);
}

/* ---- requests --------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* A fresh domain UUID from this node, this instance and a counter. */
static void new_uuid(struct imexd_node *n, uint8_t uuid[16])
{
	uint64_t h = 0xcbf29ce484222325ULL, a, b;
	int i;

	for (i = 0; i < 16; i++)
		h = (h ^ n->cfg.node_uuid[i]) * 0x100000001b3ULL;
	a = mix64(h ^ ++n->counter);
	b = mix64(a ^ n->cfg.epoch);
	for (i = 0; i < 8; i++) {
		uuid[i] = (uint8_t)(a >> (56 - 8 * i));
		uuid[8 + i] = (uint8_t)(b >> (56 - 8 * i));
	}
	uuid[6] = (uuid[6] & 0x0f) | 0x40;	/* version 4 layout */
	uuid[8] = (uuid[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
}

static void req_fail(struct imexd_node *n, uint64_t req_id, int error,
		     const char *text)
{
	struct node_out *o = node_out_push(n, IMEXD_NODE_REQUEST_DONE);

	if (!o)
		return;
	o->a.req_id = req_id;
	o->a.error = error;
	o->text = strdup(text);
}

/* Is @name in the group's raft configuration? */
static bool node_is_member(const struct imexd_node *n, const char *name)
{
	const struct imexd_cons *c = imexd_agree_cons(n->agree);
	raft_id id = c ? imexd_cons_id(c, name) : 0;

	return id && imexd_cons_role(c, id) >= 0;
}

/* Members must be nodes of the group (NODES_FILE, or joined); NAME=ADDR
 * must match the roster's ADDR where the roster gives one. */
static int req_members(struct imexd_node *n, const struct imexd_request *r,
		       char *why, size_t len)
{
	char want[IMEXD_ADDR_MAX + 1], got[IMEXD_ADDR_MAX + 1];
	uint16_t i;
	int k;

	for (i = 0; i < r->nmembers; i++) {
		const struct imexd_member *m = &r->members[i];

		k = node_roster_index(n, m->name);
		if (k < 0 && (node_is_member(n, m->name) ||
			      imexd_fsm_node(node_fsm(n), m->name)))
			continue;	/* joined: the group knows its address */
		if (k < 0) {
			snprintf(why, len,
				 "node '%s' is not a node of this NVLink domain (NODES_FILE, or 'imexctl node join')",
				 m->name);
			return EINVAL;
		}
		/* A roster line without an address (the host name is the
		 * address, or the single-node default) takes any. */
		if (!m->addr[0] || !n->roster[k].addr[0])
			continue;
		node_addr_norm(n, n->roster[k].addr, want, sizeof(want));
		node_addr_norm(n, m->addr, got, sizeof(got));
		if (strcmp(want, got)) {
			snprintf(why, len,
				 "node '%s' is at %.64s in NODES_FILE, not %.64s: name it without an address",
				 m->name, want, got);
			return EINVAL;
		}
	}
	return 0;
}

/* @ms of this node's clock as " (since T)" in UTC; "" when the wall is unknown. */
static void node_since(const struct imexd_node *n, uint64_t ms, char *out,
		       size_t len)
{
	char iso[32];

	imexd_health_iso(n->health, ms, iso);
	out[0] = '\0';
	if (iso[0])
		snprintf(out, len, " (since %s)", iso);
}

/*
 * A replace's new member, checked here before anything is proposed (at
 * the node the request came to, which proposes it or forwards it): a node
 * of the group this node is connected to now, whose heartbeats (when it
 * shares a domain with this node) have not stopped.  0, or a positive
 * errno with the reason, and since when, in @why.
 */
static int req_spare(struct imexd_node *n, const char *name, char *why,
		     size_t len)
{
	const struct node_hello *h = NULL;
	uint8_t st;
	char since[48];
	size_t i;

	if (!strcmp(name, n->cfg.name))
		return 0;
	if (!node_is_member(n, name) && !imexd_fsm_node(node_fsm(n), name)) {
		snprintf(why, len,
			 "node '%s' is not in the group: join it with 'imexctl node join %s' first",
			 name, name);
		return EINVAL;
	}
	for (i = 0; i < n->n_hellos; i++)
		if (!strcmp(n->hellos[i].name, name))
			h = &n->hellos[i];
	if (!imexd_peers_connected(n->peers, name)) {
		if (h && h->down_at) {
			node_since(n, h->down_at, since, sizeof(since));
			snprintf(why, len,
				 "node '%s' is unreachable: connection lost %" PRIu64 " s ago%s; power it on or check imexd there",
				 name, (n->now - h->down_at) / 1000, since);
		} else {
			node_since(n, n->started, since, sizeof(since));
			snprintf(why, len,
				 "node '%s' is unreachable: not connected since imexd started here %" PRIu64 " s ago%s; power it on or check imexd there",
				 name, (n->now - n->started) / 1000, since);
		}
		return EHOSTUNREACH;
	}
	st = imexd_health_peer_state(n->health, name);
	if (st == IMEX_MEMBER_RECOVERING || st == IMEX_MEMBER_DISCONNECTED) {
		snprintf(why, len,
			 "node '%s' is unreachable: its heartbeats stopped (see 'imexctl domain show' of a domain it is in)",
			 name);
		return EHOSTUNREACH;
	}
	return 0;
}

static int req_channels(const struct imexd_request *r,
			struct imexd_cmd_channels *ch)
{
	ch->count = r->count;
	ch->uid = r->uid;
	ch->gid = r->gid;
	ch->mode = (uint16_t)(r->mode & 0777);
	if (!r->nids)
		return 0;
	ch->ids = malloc(r->nids * sizeof(*ch->ids));
	if (!ch->ids)
		return ENOMEM;
	memcpy(ch->ids, r->ids, r->nids * sizeof(*ch->ids));
	ch->nids = r->nids;
	return 0;
}

/* @r into @cmd: 0, or a positive errno with the reason in @why. */
static int req_to_cmd(struct imexd_node *n, const struct imexd_request *r,
		      struct imexd_cmd *cmd, char *why, size_t len)
{
	int e = 0;
	uint16_t i;

	memset(cmd, 0, sizeof(*cmd));
	switch (r->cmd) {
	case IMEX_CMD_DOMAIN_CREATE:
		e = req_members(n, r, why, len);
		if (e)
			return e;
		cmd->type = IMEXD_CMD_DOMAIN_CREATE;
		snprintf(cmd->u.create.name, sizeof(cmd->u.create.name), "%s",
			 r->name);
		if (r->has_uuid)
			memcpy(cmd->u.create.uuid, r->uuid, 16);
		else
			new_uuid(n, cmd->u.create.uuid);
		cmd->u.create.members = calloc(r->nmembers ? r->nmembers : 1,
					       sizeof(*cmd->u.create.members));
		if (!cmd->u.create.members)
			return ENOMEM;
		for (i = 0; i < r->nmembers; i++)
			memcpy(cmd->u.create.members[i].name,
			       r->members[i].name, IMEX_NAME_MAX);
		cmd->u.create.nmembers = r->nmembers;
		e = req_channels(r, &cmd->u.create.ch);
		break;
	case IMEX_CMD_DOMAIN_DELETE:
		cmd->type = IMEXD_CMD_DOMAIN_DELETE;
		snprintf(cmd->u.del.name, sizeof(cmd->u.del.name), "%s",
			 r->name);
		break;
	case IMEX_CMD_CHANNEL_ALLOC:
		cmd->type = IMEXD_CMD_CHANNEL_ALLOC;
		snprintf(cmd->u.alloc.name, sizeof(cmd->u.alloc.name), "%s",
			 r->name);
		e = req_channels(r, &cmd->u.alloc.ch);
		break;
	case IMEX_CMD_CHANNEL_FREE:
		cmd->type = IMEXD_CMD_CHANNEL_FREE;
		snprintf(cmd->u.free.name, sizeof(cmd->u.free.name), "%s",
			 r->name);
		if (r->nids) {
			cmd->u.free.ids = malloc(r->nids * sizeof(uint32_t));
			if (!cmd->u.free.ids)
				return ENOMEM;
			memcpy(cmd->u.free.ids, r->ids,
			       r->nids * sizeof(uint32_t));
			cmd->u.free.nids = r->nids;
		}
		break;
	case IMEX_CMD_MEMBER_EVICT:
		cmd->type = IMEXD_CMD_MEMBER_EVICT;
		snprintf(cmd->u.evict.name, sizeof(cmd->u.evict.name), "%s",
			 r->name);
		snprintf(cmd->u.evict.member, sizeof(cmd->u.evict.member),
			 "%s", r->member);
		break;
	case IMEX_CMD_MEMBER_REPLACE:
		e = req_spare(n, r->with, why, len);
		if (e)
			return e;
		cmd->type = IMEXD_CMD_MEMBER_REPLACE;
		snprintf(cmd->u.replace.name, sizeof(cmd->u.replace.name),
			 "%s", r->name);
		snprintf(cmd->u.replace.member, sizeof(cmd->u.replace.member),
			 "%s", r->member);
		snprintf(cmd->u.replace.with, sizeof(cmd->u.replace.with),
			 "%s", r->with);
		break;
	case IMEX_CMD_NODE_LEAVE:
		cmd->type = IMEXD_CMD_NODE_LEAVE;
		snprintf(cmd->u.node.name, sizeof(cmd->u.node.name), "%s",
			 r->member);
		break;
	default:
		snprintf(why, len, "imexd does not handle request type %u",
			 r->cmd);
		return EOPNOTSUPP;
	}
	if (e == ENOMEM)
		snprintf(why, len, "imexd is out of memory");
	return e;
}

/* ---- membership ------------------------------------------------------------ */

static int join_find(const struct imexd_node *n, const char *name)
{
	unsigned i;

	for (i = 0; i < n->n_joins; i++)
		if (!strcmp(n->joins[i].name, name))
			return (int)i;
	return -1;
}

bool node_log_due(struct imexd_node *n, const char *what, const char *name)
{
	struct node_logkey *k, *old = &n->logkeys[0];
	size_t i;

	for (i = 0; i < NODE_LOGKEYS_MAX; i++) {
		k = &n->logkeys[i];
		if (!strcmp(k->what, what) && !strcmp(k->name, name)) {
			if (k->at && n->now - k->at < 60000)
				return false;
			k->at = n->now ? n->now : 1;
			return true;
		}
		if (k->at < old->at)
			old = k;
	}
	snprintf(old->what, sizeof(old->what), "%s", what);
	snprintf(old->name, sizeof(old->name), "%s", name);
	old->at = n->now ? n->now : 1;
	return true;
}

static int check_find(const struct imexd_node *n, const char *name)
{
	unsigned i;

	for (i = 0; i < n->n_checks; i++)
		if (!strcmp(n->checks[i].name, name))
			return (int)i;
	return -1;
}

static void join_drop(struct imexd_node *n, unsigned i)
{
	n->joins[i] = n->joins[--n->n_joins];
	n->members_seen = 0;	/* sync again: the node may stop being a peer */
}

/* A removed node's HELLO goes with it (the table stays within the
 * peers held at once). */
static void hello_drop(struct imexd_node *n, const char *name)
{
	size_t i;

	for (i = 0; i < n->n_hellos; i++)
		if (!strcmp(n->hellos[i].name, name)) {
			n->hellos[i] = n->hellos[--n->n_hellos];
			return;
		}
}

/* Peers follow the raft configuration: a node it adds is dialled (at the
 * join's address, else NODES_FILE's), a node in none is not a peer (but
 * one a join here waits for). */
void node_members_sync(struct imexd_node *n)
{
	const struct imexd_cons *c = imexd_agree_cons(n->agree);
	const struct raft_configuration *conf;
	uint64_t at;
	size_t i;
	unsigned k;

	if (!c)
		return;
	at = imexd_cons_members_index(c) + 1;
	if (at == n->members_seen)
		return;
	n->members_seen = at;
	conf = imexd_cons_members(c);
	for (k = 0; k < conf->n; k++) {
		const char *name = imexd_cons_name(c, conf->servers[k].id);

		if (!name || !strcmp(name, n->cfg.name))
			continue;
		if (imexd_peers_add(n->peers, n->now, name,
				    imexd_cons_addr(c, conf->servers[k].id)) &&
		    node_log_due(n, "no-peer", name))
			node_log(n, IMEXD_LOG_ERR,
				 "node '%s' of the group cannot be a peer (bad address, or too many nodes)",
				 name);
	}
	/* Not in the group (yet): keep dialling NODES_FILE's nodes. */
	if (imexd_cons_role(c, imexd_cons_self(c)) < 0)
		return;
	for (i = 0; i < imexd_peers_count(n->peers); i++) {
		const char *name = imexd_peers_name(n->peers, i);

		if (!name || node_is_member(n, name) || join_find(n, name) >= 0 ||
		    check_find(n, name) >= 0)
			continue;
		node_log(n, IMEXD_LOG_INFO,
			 "node '%s' is not in the group: no longer a peer", name);
		hello_drop(n, name);
		imexd_peers_remove(n->peers, n->now, name);
	}
}

static void join_submit(struct imexd_node *n, unsigned i,
			const struct node_hello *h)
{
	struct node_join *j = &n->joins[i];
	struct imexd_cmd cmd;
	int e;

	memset(&cmd, 0, sizeof(cmd));
	cmd.type = IMEXD_CMD_NODE_JOIN;
	snprintf(cmd.u.node.name, sizeof(cmd.u.node.name), "%s", j->name);
	snprintf(cmd.u.node.addr, sizeof(cmd.u.node.addr), "%s", j->addr);
	memcpy(cmd.u.node.fabric_uuid, h->fabric_uuid, 16);
	cmd.u.node.partition = h->partition;
	j->submitted = true;
	e = imexd_agree_request(n->agree, n->now, &cmd, j->req_id);
	if (e < 0) {
		req_fail(n, j->req_id, -e, "imexd could not take the request: retry");
		join_drop(n, i);
	}
	node_ag(n, e, "a node join");
}

void node_hello(struct imexd_node *n, const char *name,
		const struct imexd_msg *hello)
{
	struct node_hello *h = NULL;
	size_t i;
	int j;

	if (!hello || (hello->type != IMEXD_MSG_HELLO &&
		       hello->type != IMEXD_MSG_HELLO_ACK))
		return;
	for (i = 0; i < n->n_hellos && !h; i++)
		if (!strcmp(n->hellos[i].name, name))
			h = &n->hellos[i];
	if (!h) {
		/* Bound peers only: at most IMEXD_PEERS_MAX names. */
		if (n->n_hellos >= IMEXD_PEERS_MAX ||
		    imexd_grow((void **)&n->hellos, &n->cap_hellos,
			       n->n_hellos + 1, sizeof(*n->hellos)))
			return;
		h = &n->hellos[n->n_hellos++];
		snprintf(h->name, sizeof(h->name), "%s", name);
	}
	memcpy(h->fabric_uuid, hello->u.hello.fabric_uuid, 16);
	h->partition = hello->u.hello.partition;
	h->down_at = 0;
	j = join_find(n, name);
	if (j >= 0 && !n->joins[j].submitted)
		join_submit(n, (unsigned)j, h);
	j = check_find(n, name);
	if (j >= 0) {
		n->checks[j].ready = true;
		memcpy(n->checks[j].fabric_uuid, h->fabric_uuid, 16);
		n->checks[j].partition = h->partition;
	}
}

/* Since when a peer is unreachable, for a replace that names it. */
void node_peer_down(struct imexd_node *n, const char *name)
{
	size_t i;

	for (i = 0; i < n->n_hellos; i++)
		if (!strcmp(n->hellos[i].name, name))
			n->hellos[i].down_at = n->now ? n->now : 1;
}

static const struct node_hello *hello_of(const struct imexd_node *n,
					 const char *name)
{
	size_t i;

	if (!imexd_peers_connected(n->peers, name))
		return NULL;
	for (i = 0; i < n->n_hellos; i++)
		if (!strcmp(n->hellos[i].name, name))
			return &n->hellos[i];
	return NULL;
}

static uint64_t park_ms(const struct imexd_node *n);

/*
 * The leader checks a joining node itself (agree's JOIN_CHECK): dial it at
 * the join's address and take its fabric identity from its own HELLO
 * (with TLS, on a connection whose certificate names it).  Answered after
 * agree's actions are drained (node_checks_answer), or at the deadline.
 */
void node_join_check(struct imexd_node *n, const char *name,
		     const char *addr, uint64_t tag)
{
	const struct node_hello *h;
	struct node_check *c;
	int i = check_find(n, name);

	if (i >= 0) {
		n->checks[i].tag = tag;	/* the newest request waits */
		return;
	}
	if (n->n_checks >= IMEXD_NODE_JOINS_MAX) {
		/* The request times out. */
		if (node_log_due(n, "no-check", name))
			node_log(n, IMEXD_LOG_WARN,
				 "join of '%s' not checked: %u joins under way",
				 name, (unsigned int)IMEXD_NODE_JOINS_MAX);
		return;
	}
	c = &n->checks[n->n_checks++];
	memset(c, 0, sizeof(*c));
	c->tag = tag;
	snprintf(c->name, sizeof(c->name), "%s", name);
	/* An address that does not parse: refused at once. */
	c->deadline = imexd_peers_add(n->peers, n->now, name, addr) ?
		      n->now : n->now + park_ms(n);
	h = hello_of(n, name);
	if (h) {
		c->ready = true;
		memcpy(c->fabric_uuid, h->fabric_uuid, 16);
		c->partition = h->partition;
	}
}

/* Answer checks whose HELLO came, and those past their deadline. */
void node_checks_answer(struct imexd_node *n)
{
	unsigned i = 0;

	while (i < n->n_checks) {
		struct node_check c = n->checks[i];

		if (!c.ready && c.deadline > n->now) {
			i++;
			continue;
		}
		n->checks[i] = n->checks[--n->n_checks];
		n->members_seen = 0;	/* sync: it may stop being a peer */
		node_ag(n, imexd_agree_join_checked(n->agree, n->now, c.tag,
						    c.fabric_uuid, c.partition,
						    c.ready ? 0 : EHOSTUNREACH),
			"a join's check");
		i = 0;	/* the table may have changed */
	}
}

void node_join_done(struct imexd_node *n, uint64_t req_id)
{
	unsigned i;

	for (i = 0; i < n->n_joins; i++)
		if (n->joins[i].req_id == req_id && n->joins[i].submitted) {
			join_drop(n, i);
			return;
		}
}

void node_joins_expire(struct imexd_node *n)
{
	char why[IMEXD_MESSAGE_MAX + 1];
	unsigned i = 0;

	while (i < n->n_joins) {
		struct node_join *j = &n->joins[i];

		if (j->submitted || j->deadline > n->now) {
			i++;
			continue;
		}
		snprintf(why, sizeof(why),
			 "node '%s' did not connect: check that imexd runs there (started with this group's NODES_FILE) and reaches this node%s%.64s; not joined",
			 j->name, j->addr[0] ? " from " : "", j->addr);
		req_fail(n, j->req_id, EHOSTUNREACH, why);
		join_drop(n, i);
	}
	node_checks_answer(n);
	node_members_sync(n);
}

uint64_t node_joins_deadline(const struct imexd_node *n)
{
	uint64_t t = UINT64_MAX;
	unsigned i;

	for (i = 0; i < n->n_joins; i++)
		if (!n->joins[i].submitted && n->joins[i].deadline < t)
			t = n->joins[i].deadline;
	for (i = 0; i < n->n_checks; i++)
		if (n->checks[i].deadline < t)
			t = n->checks[i].deadline;
	return t;
}

/* A join: dial the node, then ask the group with its HELLO's identity. */
static void node_join(struct imexd_node *n, const struct imexd_request *r)
{
	const struct node_hello *h;
	struct node_join *j;
	char why[IMEXD_MESSAGE_MAX + 1];
	int e;

	if (!imexd_name_valid(r->member)) {
		req_fail(n, r->req_id, EINVAL, "not a valid node name");
		return;
	}
	if (!strcmp(r->member, n->cfg.name) || node_is_member(n, r->member)) {
		snprintf(why, sizeof(why),
			 "node '%s' is already a node of this NVLink domain",
			 r->member);
		req_fail(n, r->req_id, EALREADY, why);
		return;
	}
	if (join_find(n, r->member) >= 0 || n->n_joins >= IMEXD_NODE_JOINS_MAX) {
		req_fail(n, r->req_id, EBUSY,
			 "a join of that node, or too many joins, under way: retry");
		return;
	}
	e = imexd_peers_add(n->peers, n->now, r->member, r->addr);
	if (e) {
		req_fail(n, r->req_id, e == -ENOMEM ? ENOMEM : EINVAL,
			 "the node's address is not host[:port], or too many nodes");
		return;
	}
	j = &n->joins[n->n_joins++];
	memset(j, 0, sizeof(*j));
	j->req_id = r->req_id;
	snprintf(j->name, sizeof(j->name), "%s", r->member);
	snprintf(j->addr, sizeof(j->addr), "%s", r->addr);
	j->deadline = n->now + park_ms(n);
	h = hello_of(n, r->member);
	if (h)
		join_submit(n, n->n_joins - 1, h);
}

void imexd_node_request(struct imexd_node *n, uint64_t now,
			const struct imexd_request *req)
{
	char why[IMEXD_MESSAGE_MAX + 1] = "";
	struct imexd_cmd cmd;
	int e;

	n->now = now;
	if (req->cmd == IMEX_CMD_NODE_JOIN) {
		node_join(n, req);
		node_pump(n);
		return;
	}
	e = req_to_cmd(n, req, &cmd, why, sizeof(why));
	if (e) {
		req_fail(n, req->req_id, e, why);
	} else {
		e = imexd_agree_request(n->agree, now, &cmd, req->req_id);
		if (e < 0)
			req_fail(n, req->req_id, -e,
				 "imexd could not take the request: retry");
		node_ag(n, e, "a request");
	}
	imexd_cmd_free(&cmd);
	node_pump(n);
}

/* ---- messages ------------------------------------------------------------- */

void node_route(struct imexd_node *n, const char *from,
		const struct imexd_msg *m)
{
	switch (m->type) {
	case IMEXD_MSG_HEARTBEAT: {
		uint8_t was = imexd_health_peer_state(n->health, from);

		imexd_health_heartbeat(n->health, n->now, from, m);
		/* Lost past its grace (hung) but its connection held: the
		 * transport reports no PEER_UP, so the broker hears it here. */
		if (was == IMEX_MEMBER_DISCONNECTED &&
		    imexd_health_peer_state(n->health, from) ==
		    IMEX_MEMBER_CONNECTED &&
		    imexd_peers_connected(n->peers, from))
			imexd_broker_peer_up(n->broker, n->now, from, false,
					     node_fsm(n));
		break;
	}
	case IMEXD_MSG_RAFT:
		/* No group yet: the one of the leader that joins it. */
		if (!imexd_agree_group(n->agree))
			node_ag(n, imexd_agree_adopt_group(n->agree, n->now,
					imexd_peers_group(n->peers, from)),
				"a group id");
		node_ag(n, imexd_agree_receive(n->agree, n->now, from,
					       m->u.raft.data, m->u.raft.len),
			"raft traffic");
		break;
	case IMEXD_MSG_FORWARD:
		node_ag(n, imexd_agree_forwarded(n->agree, n->now, from,
						 m->u.forward.tag,
						 m->u.forward.cmd,
						 m->u.forward.len),
			"a forwarded request");
		break;
	case IMEXD_MSG_REPLY:
		node_ag(n, imexd_agree_reply(n->agree, n->now, from,
					     m->u.reply.tag, m->u.reply.error,
					     m->u.reply.message,
					     m->u.reply.has_def ?
					     &m->u.reply.def : NULL,
					     m->u.reply.index, m->u.reply.ids,
					     m->u.reply.nids),
			"a request's answer");
		break;
	case IMEXD_MSG_IMPORT_REQ:
	case IMEXD_MSG_IMPORT_RESP:
	case IMEXD_MSG_EXPORT_REVOKE:
		imexd_broker_msg(n->broker, n->now, node_fsm(n), from, m);
		break;
	case IMEXD_MSG_LEAVE:
		imexd_health_peer_down(n->health, n->now, from);
		imexd_broker_peer_down(n->broker, n->now, from);
		break;
	default:
		node_log(n, IMEXD_LOG_DEBUG,
			 "node '%s' sent a message of type %u, which this protocol version does not use: dropped",
			 from, m->type);
		break;
	}
}

/* ---- what health and the kernel are told ------------------------------------ */

static const struct imexd_def *kernel_find(const struct imexd_node *n,
					   const uint8_t uuid[16])
{
	size_t i;

	for (i = 0; i < n->n_kernel; i++)
		if (!memcmp(n->kernel[i].uuid, uuid, 16))
			return &n->kernel[i];
	return NULL;
}

void node_status_out(struct imexd_node *n,
		     const struct imexd_domain_status *st)
{
	struct node_out *o;

	/* The kernel knows only domains it holds. */
	if (!kernel_find(n, st->uuid))
		return;
	o = node_out_push(n, IMEXD_NODE_KERNEL_STATUS);
	if (!o)
		return;
	o->st = *st;
	if (st->nmembers) {
		o->st_members = malloc(st->nmembers * sizeof(*o->st_members));
		if (!o->st_members) {
			n->n_out--;
			return;
		}
		memcpy(o->st_members, st->members,
		       st->nmembers * sizeof(*o->st_members));
	}
	o->has_status = true;
}

void node_applied_refresh(struct imexd_node *n)
{
	const struct imexd_fsm *fsm = node_fsm(n);
	const struct imexd_def *d, *k;
	size_t pos = 0;

	if (!fsm)
		return;
	while ((d = imexd_fsm_domain_of(fsm, n->cfg.name, &pos))) {
		k = kernel_find(n, d->uuid);
		if (imexd_health_applied(n->health, n->now, d->uuid,
					 k ? k->generation : 0)) {
			node_log(n, IMEXD_LOG_ERR,
				 "out of memory telling health what the kernel holds");
			n->domains_dirty = true;
			return;
		}
	}
}

/* Whether @defs are the domains health's tables were built from. */
static bool dom_sig_same(const struct imexd_node *n,
			 const struct imexd_def **defs, size_t cnt)
{
	size_t i;

	if (!n->dom_sig_set || cnt != n->n_dom_sig)
		return false;
	for (i = 0; i < cnt; i++)
		if (!defs[i] ||
		    defs[i]->generation != n->dom_sig[i].generation ||
		    memcmp(defs[i]->uuid, n->dom_sig[i].uuid, 16))
			return false;
	return true;
}

static void dom_sig_keep(struct imexd_node *n, const struct imexd_def **defs,
			 size_t cnt)
{
	size_t i;

	n->dom_sig_set = false;
	if (cnt && imexd_grow((void **)&n->dom_sig, &n->cap_dom_sig, cnt,
			      sizeof(*n->dom_sig)))
		return;	/* unknown: the next refresh rebuilds */
	for (i = 0; i < cnt; i++) {
		if (!defs[i])
			return;
		memcpy(n->dom_sig[i].uuid, defs[i]->uuid, 16);
		n->dom_sig[i].generation = defs[i]->generation;
	}
	n->n_dom_sig = cnt;
	n->dom_sig_set = true;
}

void node_domains_refresh(struct imexd_node *n)
{
	const struct imexd_fsm *fsm = node_fsm(n);
	const struct imexd_def **defs = NULL, *d;
	const char **up;
	size_t pos = 0, cnt = 0, i, nup, total;
	uint16_t m;

	while (fsm && imexd_fsm_domain_of(fsm, n->cfg.name, &pos))
		cnt++;
	if (cnt) {
		defs = calloc(cnt, sizeof(const struct imexd_def *));
		if (!defs) {
			node_log(n, IMEXD_LOG_ERR,
				 "out of memory handing domains to health");
			n->domains_dirty = true;
			return;
		}
		for (pos = 0, i = 0; i < cnt &&
		     (d = imexd_fsm_domain_of(fsm, n->cfg.name, &pos)); i++)
			defs[i] = d;
	}
	if (!dom_sig_same(n, defs, cnt)) {
		if (imexd_health_set_domains(n->health, n->now,
					     (const struct imexd_def *const *)defs,
					     cnt)) {
			free(defs);
			n->domains_dirty = true;
			return;
		}
		dom_sig_keep(n, defs, cnt);
	}
	/* Members new to health whose connection is already bound, all in
	 * one input: each gets one heartbeat that shows them all (one by
	 * one if there is no memory for the list). */
	for (i = 0, total = 0; i < cnt; i++)
		total += defs[i]->nmembers;
	up = total ? calloc(total, sizeof(*up)) : NULL;
	for (i = 0, nup = 0; i < cnt; i++)
		for (m = 0; m < defs[i]->nmembers; m++) {
			const char *name = defs[i]->members[m].name;

			/* Not one it knew: a reset of a known peer's state
			 * would show a dead node connected till it is missed
			 * again (its TCP connection outlives it). */
			if (strcmp(name, n->cfg.name) &&
			    imexd_health_peer_state(n->health, name) ==
			    IMEX_MEMBER_NEVER_CONNECTED &&
			    imexd_peers_connected(n->peers, name)) {
				if (up)
					up[nup++] = name;
				else
					imexd_health_peer_up(n->health, n->now,
							     name);
			}
		}
	/* What the kernel holds first: the heartbeats to new peers carry
	 * it. */
	node_applied_refresh(n);
	if (nup)
		imexd_health_peers_up(n->health, n->now, up, nup);
	free(up);
	free(defs);
}

int node_kernel_set(struct imexd_node *n, const struct imexd_def *kernel,
		    size_t nkernel)
{
	struct imexd_def *copy = NULL;
	size_t i;

	if (nkernel) {
		copy = calloc(nkernel, sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		for (i = 0; i < nkernel; i++)
			if (imexd_def_copy(&copy[i], &kernel[i])) {
				while (i--)
					imexd_def_free(&copy[i]);
				free(copy);
				return -ENOMEM;
			}
	}
	for (i = 0; i < n->n_kernel; i++)
		imexd_def_free(&n->kernel[i]);
	free(n->kernel);
	n->kernel = copy;
	n->n_kernel = nkernel;
	return 0;
}

/* ---- answers held until the kernel shows them -------------------------------- */

/* 5 election timeouts, as agree's request timeout by default. */
static uint64_t park_ms(const struct imexd_node *n)
{
	uint64_t et = n->cfg.election_timeout_ms ? n->cfg.election_timeout_ms :
		      1000;

	return n->cfg.request_timeout_ms ? n->cfg.request_timeout_ms : 5 * et;
}

/* @o, the last queued action, moves to the parked list. */
void node_park(struct imexd_node *n, struct node_out *o, uint64_t index)
{
	struct node_parked *p;

	if (imexd_grow((void **)&n->parked, &n->cap_parked, n->n_parked + 1,
		       sizeof(*n->parked)))
		return;		/* answered at once: nothing is lost */
	p = &n->parked[n->n_parked++];
	p->o = *o;
	memcpy(p->uuid, o->def.uuid, 16);
	p->index = index;
	p->deleted = o->def.flags & IMEXD_DEF_DELETED;
	p->deadline = n->now + park_ms(n);
	n->n_out--;		/* @o was the queue's last entry */
}

/*
 * Shown: the kernel holds the domain at the change's index or later (or no
 * longer holds it after a delete), or the kernel matches a table that has
 * applied the change, which a later change may have superseded.
 */
static bool park_done(const struct imexd_node *n, const struct node_parked *p,
		      int *converged)
{
	const struct imexd_def *k = kernel_find(n, p->uuid);
	const struct imexd_fsm *fsm = node_fsm(n);

	if (n->now >= p->deadline)
		return true;
	if (p->deleted ? !k : k && k->generation >= p->index)
		return true;
	if (!fsm || imexd_fsm_last_index(fsm) < p->index)
		return false;
	if (*converged < 0)	/* a plan: once per release */
		*converged = imexd_agree_reconciled(n->agree);
	return *converged;
}

void node_parked_release(struct imexd_node *n)
{
	struct node_out *o;
	int converged = -1;
	size_t i = 0;

	while (i < n->n_parked) {
		struct node_parked *p = &n->parked[i];

		if (!park_done(n, p, &converged)) {
			i++;
			continue;
		}
		if (n->now >= p->deadline)
			node_log(n, IMEXD_LOG_WARN,
				 "request %llu: made, but this node's kernel does not show it yet (see the kernel step messages above)",
				 (unsigned long long)p->o.a.req_id);
		o = node_out_push(n, IMEXD_NODE_REQUEST_DONE);
		if (!o)
			return;		/* next time */
		*o = p->o;
		n->parked[i] = n->parked[--n->n_parked];
	}
}

uint64_t node_parked_deadline(const struct imexd_node *n)
{
	uint64_t t = UINT64_MAX;
	size_t i;

	for (i = 0; i < n->n_parked; i++)
		if (n->parked[i].deadline < t)
			t = n->parked[i].deadline;
	return t;
}

/* ---- forwards the transport could not send ----------------------------------- */

void node_unsent_add(struct imexd_node *n, const char *to, uint64_t tag)
{
	struct node_unsent *u;

	if (imexd_grow((void **)&n->unsent, &n->cap_unsent, n->n_unsent + 1,
		       sizeof(*n->unsent)))
		return;		/* the request times out instead */
	u = &n->unsent[n->n_unsent++];
	snprintf(u->to, sizeof(u->to), "%s", to);
	u->tag = tag;
}

void node_unsent_flush(struct imexd_node *n)
{
	struct node_unsent u;

	while (n->n_unsent && !n->in_agree) {
		u = n->unsent[--n->n_unsent];
		/* Never submitted there: agree looks for the leader again. */
		node_ag(n, imexd_agree_reply(n->agree, n->now, u.to, u.tag,
					     IMEXD_CONS_ENOTLEADER, "", NULL,
					     0, NULL, 0),
			"an unsent request");
	}
}
