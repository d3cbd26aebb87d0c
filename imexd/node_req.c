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

void node_req_fail(struct imexd_node *n, uint64_t req_id, int error,
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
bool node_is_member(const struct imexd_node *n, const char *name)
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
		node_req_fail(n, req->req_id, e, why);
	} else {
		e = imexd_agree_request(n->agree, now, &cmd, req->req_id);
		if (e < 0)
			node_req_fail(n, req->req_id, -e,
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
