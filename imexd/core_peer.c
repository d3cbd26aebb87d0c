// SPDX-License-Identifier: GPL-2.0
/*
 * Peers and their connections: the peer table, HELLO binding, the
 * one-connection-per-peer rule, admission of every incoming message (right
 * instance, after HELLO) and its dispatch, and reconnects with capped
 * exponential backoff.  Heartbeats and health states are core_health.c's.
 *
 * A peer is a node name.  Its address comes from the member lists of the
 * definitions this node holds; its instance is the (uuid, epoch) of the
 * latest HELLO.  A connection is bound to a peer once the HELLO exchange on
 * it is done, and everything it carries afterwards must come from that
 * same instance.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core_internal.h"

/* c->peer of an outbound connection not bound yet: the peer dialled. */
#define CONN_DIALED(p)	(-2 - (p))

static uint32_t core_name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

int core_peer_find(const struct imexd_core *core, const char *name)
{
	size_t mask, i;

	if (!core->phash_cap)
		return -1;
	mask = core->phash_cap - 1;
	for (i = core_name_hash(name) & mask; core->phash[i];
	     i = (i + 1) & mask) {
		int p = core->phash[i] - 1;

		if (!strcmp(core->peers[p].name, name))
			return p;
	}
	return -1;
}

static void core_phash_insert(struct imexd_core *core, int p)
{
	size_t mask = core->phash_cap - 1, i;

	for (i = core_name_hash(core->peers[p].name) & mask; core->phash[i];
	     i = (i + 1) & mask)
		;
	core->phash[i] = p + 1;
}

static void core_peers_grow(struct imexd_core *core)
{
	size_t cap = core->peers_cap ? core->peers_cap * 2 : 16, i;
	struct core_peer *n = realloc(core->peers, cap * sizeof(*n));

	if (!n)
		abort();
	core->peers = n;
	/* Views are indexed by peer: they grow with the table. */
	for (i = 0; i < core->npeers; i++) {
		uint8_t *v = realloc(n[i].view, cap);

		if (!v)
			abort();
		memset(v + core->peers_cap, IMEX_MEMBER_UNKNOWN,
		       cap - core->peers_cap);
		n[i].view = v;
	}
	core->peers_cap = cap;
	free(core->phash);
	core->phash_cap = cap * 2;
	core->phash = calloc(core->phash_cap, sizeof(*core->phash));
	if (!core->phash)
		abort();
	for (i = 0; i < core->npeers; i++)
		core_phash_insert(core, (int)i);
}

/* "host" -> "host:port", "v6::addr" -> "[v6::addr]:port"; else as is. */
void core_addr_normalize(const struct imexd_core *core, const char *in,
			 char *out, size_t len)
{
	const char *colon = strrchr(in, ':');

	if (in[0] == '[') {
		const char *close = strchr(in, ']');

		if (close && close[1] == ':')
			snprintf(out, len, "%s", in);
		else
			snprintf(out, len, "%s:%u", in, core->cfg.default_port);
	} else if (colon && strchr(in, ':') != colon) {
		snprintf(out, len, "[%s]:%u", in, core->cfg.default_port);
	} else if (colon) {
		snprintf(out, len, "%s", in);
	} else {
		snprintf(out, len, "%s:%u", in, core->cfg.default_port);
	}
}

/*
 * Find or add the peer @name.  A non-NULL @addr (from a definition) also
 * updates its address: the newest definition knows best, and an address
 * that changed is worth a log line (IP churn is a known way to lose a
 * domain silently).
 */
int core_peer_get(struct imexd_core *core, const char *name, const char *addr)
{
	char norm[IMEXD_ADDR_MAX + 1];
	struct core_peer *pe;
	int p = core_peer_find(core, name);

	if (p < 0) {
		if (core->npeers == core->peers_cap)
			core_peers_grow(core);
		p = (int)core->npeers++;
		pe = &core->peers[p];
		memset(pe, 0, sizeof(*pe));
		snprintf(pe->name, sizeof(pe->name), "%s", name);
		pe->state = IMEX_MEMBER_NEVER_CONNECTED;
		pe->state_since = core->now;
		pe->backoff = core->cfg.backoff_min_ms;
		pe->view = malloc(core->peers_cap);
		if (!pe->view)
			abort();
		memset(pe->view, IMEX_MEMBER_UNKNOWN, core->peers_cap);
		core_phash_insert(core, p);
		core->view_dirty = true;
	}
	pe = &core->peers[p];
	if (addr && addr[0]) {
		core_addr_normalize(core, addr, norm, sizeof(norm));
		if (strcmp(pe->addr, norm)) {
			if (pe->addr[0])
				core_log(core, IMEXD_LOG_INFO,
					 "node '%s' is now at %s (was %s)",
					 name, norm, pe->addr);
			snprintf(pe->addr, sizeof(pe->addr), "%s", norm);
		}
	}
	return p;
}

/* The host part of an inbound connection's "ip:port" (its length). */
static size_t core_addr_host_len(const char *addr)
{
	const char *colon = strrchr(addr, ':');

	return colon ? (size_t)(colon - addr) : strlen(addr);
}

/* Does anything here name peer @p: a domain (any kind), a change, an
 * import, a connection? */
static bool core_peer_in_use(const struct imexd_core *core, int p)
{
	const struct core_peer *pe = &core->peers[p];
	size_t i;
	uint16_t m;

	if (pe->conn || pe->connecting || pe->wanted)
		return true;
	for (i = 0; i < core->ndoms; i++)
		for (m = 0; m < core->doms[i]->def.nmembers; m++)
			if (core->doms[i]->midx[m] == p)
				return true;
	for (i = 0; i < core->nconns; i++)
		if (core->conns[i].peer == p ||
		    core->conns[i].peer == CONN_DIALED(p))
			return true;
	return core_cc_names(core, pe->name) || core_pc_names(core, pe->name) ||
	       core_imp_uses_peer(core, p);
}

/* A stranger: a peer only a HELLO or a heartbeat named. */
static bool core_peer_stranger(const struct imexd_core *core, int p)
{
	const struct core_peer *pe = &core->peers[p];
	size_t i;
	uint16_t m;

	if (pe->wanted)
		return false;
	for (i = 0; i < core->ndoms; i++)
		for (m = 0; m < core->doms[i]->def.nmembers; m++)
			if (core->doms[i]->midx[m] == p)
				return false;
	return !core_cc_names(core, pe->name) && !core_pc_names(core, pe->name);
}

/* Give the entry of an unused stranger @p to @name. */
static void core_peer_reuse(struct imexd_core *core, int p, const char *name)
{
	struct core_peer *pe = &core->peers[p];
	uint8_t *view = pe->view;
	size_t i;

	core_log(core, IMEXD_LOG_DEBUG,
		 "peer table full: node '%s' takes the entry of '%s', which nothing here names",
		 name, pe->name);
	for (i = 0; i < core->npeers; i++)
		core->peers[i].view[p] = IMEX_MEMBER_UNKNOWN;
	memset(pe, 0, sizeof(*pe));
	pe->view = view;
	memset(pe->view, IMEX_MEMBER_UNKNOWN, core->peers_cap);
	snprintf(pe->name, sizeof(pe->name), "%s", name);
	pe->state = IMEX_MEMBER_NEVER_CONNECTED;
	pe->state_since = core->now;
	pe->backoff = core->cfg.backoff_min_ms;
	memset(core->phash, 0, core->phash_cap * sizeof(*core->phash));
	for (i = 0; i < core->npeers; i++)
		core_phash_insert(core, (int)i);
	core->view_dirty = true;
}

/*
 * A peer entry for @name, which a HELLO on @via (or, @via NULL, a
 * heartbeat) names; -1 when refused.  Names nothing here knows are bounded
 * so that junk cannot lock genuine nodes out: one host holds at most
 * CORE_STRANGERS_PER_HOST connections under such names, and once the table
 * holds CORE_PEERS_MAX peers a new one (@reuse: from a HELLO) takes the
 * entry of the stranger unused longest, connected to nothing.
 */
int core_peer_admit(struct imexd_core *core, const char *name,
		    const struct core_conn *via, bool reuse)
{
	int p = core_peer_find(core, name), q = -1;
	size_t i, hlen;
	unsigned same = 0;

	if (p >= 0)
		return p;
	if (via && !via->outbound) {
		hlen = core_addr_host_len(via->addr);
		for (i = 0; i < core->nconns; i++) {
			const struct core_conn *c = &core->conns[i];

			if (!c->outbound && c->peer >= 0 && c->hello_done &&
			    core_addr_host_len(c->addr) == hlen &&
			    !memcmp(c->addr, via->addr, hlen) &&
			    core_peer_stranger(core, c->peer))
				same++;
		}
		if (same >= CORE_STRANGERS_PER_HOST)
			return -1;
	}
	if (core->npeers < CORE_PEERS_MAX)
		return core_peer_get(core, name, NULL);
	if (!reuse)
		return -1;
	for (i = 0; i < core->npeers; i++) {
		if (core->peers[i].addr[0] || core_peer_in_use(core, (int)i))
			continue;
		if (q < 0 || core->peers[i].state_since < core->peers[q].state_since)
			q = (int)i;
	}
	if (q >= 0)
		core_peer_reuse(core, q, name);
	return q;
}

static struct core_conn *core_conn_find(struct imexd_core *core, uint64_t id)
{
	size_t i;

	for (i = 0; i < core->nconns; i++)
		if (core->conns[i].id == id)
			return &core->conns[i];
	return NULL;
}

void core_send_conn(struct imexd_core *core, uint64_t conn,
		    struct imexd_msg *msg)
{
	struct imexd_action *a = core_act(core, IMEXD_ACT_SEND);

	a->conn = conn;
	a->msg = *msg;			/* the action owns its pointers now */
	memset(msg, 0, sizeof(*msg));
}

bool core_send_peer(struct imexd_core *core, int p, struct imexd_msg *msg)
{
	if (p < 0 || !core->peers[p].conn) {
		imexd_msg_free(msg);
		return false;
	}
	core_send_conn(core, core->peers[p].conn, msg);
	return true;
}

bool core_peer_usable(const struct imexd_core *core, int p)
{
	return p >= 0 && core->peers[p].conn != 0;
}

/*
 * An outbound connection to @p that is up but still waiting for HELLO_ACK:
 * the coordinator may pipeline its first request behind the HELLO (the
 * stream keeps the order), saving a round trip on a fresh mesh.
 */
uint64_t core_peer_conn_pending(const struct imexd_core *core, int p)
{
	size_t i;

	for (i = 0; i < core->nconns; i++) {
		const struct core_conn *c = &core->conns[i];

		if (c->outbound && !c->hello_done && c->peer == CONN_DIALED(p))
			return c->id;
	}
	return 0;
}

void core_peer_connect_now(struct imexd_core *core, int p)
{
	struct core_peer *pe = &core->peers[p];

	pe->wanted = true;
	if (!pe->conn && !pe->connecting)
		pe->connect_at = core->now;
}

static void core_schedule_reconnect(struct imexd_core *core, int p)
{
	struct core_peer *pe = &core->peers[p];

	pe->connecting = false;
	pe->connect_at = core->now + pe->backoff;
	pe->backoff = CORE_MIN(pe->backoff * 2, core->cfg.backoff_max_ms);
	if (pe->state == IMEX_MEMBER_VERSION_MISMATCH)
		pe->connect_at = core->now + core->cfg.backoff_max_ms;
}

/* Forget a connection; the caller has been told to close it (or it died). */
static void core_conn_drop(struct imexd_core *core, struct core_conn *c,
			   bool emit_close)
{
	size_t i = c - core->conns;
	int p = c->peer;

	if (emit_close)
		core_act(core, IMEXD_ACT_CLOSE)->conn = c->id;
	if (p >= 0 && core->peers[p].conn == c->id) {
		core->peers[p].conn = 0;
		core_imp_conn_lost(core, p, c->id);
		/* What it saw is news only while we hear from it. */
		core_peer_forget_view(core, p);
		if (core->peers[p].state == IMEX_MEMBER_CONNECTED)
			core_peer_set_state(core, p, IMEX_MEMBER_RECOVERING);
		core_schedule_reconnect(core, p);
		core_cc_peer_event(core, p);
	} else if (p <= CONN_DIALED(0) &&
		   core->peers[CONN_DIALED(p)].connecting) {
		core_schedule_reconnect(core, CONN_DIALED(p));
	}
	memmove(&core->conns[i], &core->conns[i + 1],
		(core->nconns - i - 1) * sizeof(*c));
	core->nconns--;
}

static void core_send_hello(struct imexd_core *core, uint64_t conn,
			    uint8_t type)
{
	struct imexd_msg m;

	core_msg_init(core, &m, type, NULL);
	m.u.hello.proto_min = CORE_PROTO_MIN;
	m.u.hello.proto_max = CORE_PROTO_MAX;
	snprintf(m.u.hello.node_name, sizeof(m.u.hello.node_name), "%s",
		 core->cfg.node_name);
	m.u.hello.max_channels = core->cfg.max_channels;
	memcpy(m.u.hello.fabric_uuid, core->cfg.fabric_uuid, 16);
	m.u.hello.partition = core->cfg.partition;
	core_send_conn(core, conn, &m);
}

void core_peer_conn_up(struct imexd_core *core, uint64_t conn,
		       const char *addr, bool outbound)
{
	struct core_conn *c;
	size_t i;

	if (core->shutting_down || core_conn_find(core, conn)) {
		core_act(core, IMEXD_ACT_CLOSE)->conn = conn;
		return;
	}
	if (core->nconns == core->conns_cap) {
		size_t cap = core->conns_cap ? core->conns_cap * 2 : 16;

		c = realloc(core->conns, cap * sizeof(*c));
		if (!c)
			abort();
		core->conns = c;
		core->conns_cap = cap;
	}
	c = &core->conns[core->nconns++];
	memset(c, 0, sizeof(*c));
	c->id = conn;
	c->outbound = outbound;
	c->peer = -1;
	c->last_rx = core->now;
	c->next_hb = CORE_NO_TIME;
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	if (!outbound)
		return;			/* the other side speaks first */
	/* Remember which peer we dialled, until the HELLO binds one. */
	for (i = 0; i < core->npeers; i++) {
		if (core->peers[i].connecting &&
		    !strcmp(core->peers[i].addr, addr)) {
			c->peer = CONN_DIALED((int)i);
			break;
		}
	}
	core_send_hello(core, conn, IMEXD_MSG_HELLO);
	/* A coordinator may pipeline its first request behind the HELLO. */
	if (c->peer <= CONN_DIALED(0))
		core_cc_peer_event(core, CONN_DIALED(c->peer));
}

void core_peer_conn_failed(struct imexd_core *core, const char *addr)
{
	size_t i;

	for (i = 0; i < core->npeers; i++)
		if (core->peers[i].connecting &&
		    !strcmp(core->peers[i].addr, addr))
			core_schedule_reconnect(core, (int)i);
}

void core_peer_conn_down(struct imexd_core *core, uint64_t conn)
{
	struct core_conn *c = core_conn_find(core, conn);

	if (c)
		core_conn_drop(core, c, false);
}

/* The peer names its member-list address belongs to (node-map check). */
static bool core_addr_is_other(const struct imexd_core *core,
			       const char *addr, const char *name)
{
	bool other = false;
	size_t i;

	for (i = 0; i < core->npeers; i++) {
		if (strcmp(core->peers[i].addr, addr))
			continue;
		if (!strcmp(core->peers[i].name, name))
			return false;
		other = true;
	}
	return other;
}

static void core_peer_reset(struct imexd_core *core, int p)
{
	struct core_peer *pe = &core->peers[p];

	core_peer_forget_view(core, p);
	pe->digest_misses = 0;
	pe->last_sync = 0;
}

/*
 * Which of two connections to one peer survives: the one opened by the
 * node with the smaller name.  Both ends apply the same rule, so they keep
 * the same connection without talking about it.
 */
static bool core_keep_new(const struct imexd_core *core,
			  const struct core_conn *old,
			  const struct core_conn *new, const char *peer)
{
	const char *old_opener = old->outbound ? core->cfg.node_name : peer;
	const char *new_opener = new->outbound ? core->cfg.node_name : peer;

	if (!strcmp(old_opener, new_opener))
		return false;		/* a redial raced: keep the first */
	return strcmp(new_opener, old_opener) < 0;
}

static void core_hello(struct imexd_core *core, struct core_conn *c,
		       const struct imexd_msg *msg)
{
	const char *name = msg->u.hello.node_name;
	bool want_ack = !c->outbound;
	uint64_t cid = c->id;
	struct core_conn *old;
	struct core_peer *pe;
	int p;

	if ((msg->type == IMEXD_MSG_HELLO) == c->outbound) {
		core_log_once(core, "hello-direction", c->addr,
			      msg->sender_epoch, IMEXD_LOG_WARN,
			      "%s from %s on a connection %s opened: dropped",
			      core_msg_name(msg->type), c->addr,
			      c->outbound ? "this node" : "the peer");
		return;
	}
	if (c->hello_done) {
		if (c->peer >= 0 && strcmp(core->peers[c->peer].name, name)) {
			core_log(core, IMEXD_LOG_WARN,
				 "node '%s' said HELLO again as '%s' on one connection: closing it",
				 core->peers[c->peer].name, name);
			core_conn_drop(core, c, true);
		} else if (memcmp(c->uuid, msg->sender_uuid, 16) ||
			   c->epoch != msg->sender_epoch) {
			core_log(core, IMEXD_LOG_WARN,
				 "node '%s' changed identity on one connection: closing it",
				 name);
			core_conn_drop(core, c, true);
		}
		return;
	}
	if (!strcmp(name, core->cfg.node_name) || !name[0]) {
		core_log_once(core, "hello-self", c->addr, msg->sender_epoch,
			      IMEXD_LOG_WARN,
			      "%s answered with this node's own name '%s': check the node list",
			      c->addr, name);
		core_conn_drop(core, c, true);
		return;
	}
	if (c->outbound && core_addr_is_other(core, c->addr, name)) {
		core_log_once(core, "node-map", name, msg->sender_epoch,
			      IMEXD_LOG_ERR,
			      "node-map mismatch: %s is another member's address, but node '%s' answered there: fix the member list (addresses must not be shared or stale)",
			      c->addr, name);
		core_conn_drop(core, c, true);
		return;
	}
	p = core_peer_admit(core, name, c, true);
	if (p < 0) {
		core_log_once(core, "peers-full", c->addr, msg->sender_epoch,
			      IMEXD_LOG_WARN,
			      "%s says it is node '%s', which nothing here names, and that host or the peer table (%zu nodes) holds as many such names as allowed: closing it",
			      c->addr, name, core->npeers);
		core_conn_drop(core, c, true);
		return;
	}
	pe = &core->peers[p];
	if (msg->u.hello.proto_max < CORE_PROTO_MIN ||
	    msg->u.hello.proto_min > CORE_PROTO_MAX) {
		core_log_once(core, "version", name, msg->sender_epoch,
			      IMEXD_LOG_ERR,
			      "node '%s' speaks protocol %u..%u, this node %u..%u: upgrade one of them",
			      name, msg->u.hello.proto_min,
			      msg->u.hello.proto_max, CORE_PROTO_MIN,
			      CORE_PROTO_MAX);
		if (want_ack)
			core_send_hello(core, c->id, IMEXD_MSG_HELLO_ACK);
		if (!pe->conn)
			core_peer_set_state(core, p,
					    IMEX_MEMBER_VERSION_MISMATCH);
		core_conn_drop(core, c, true);
		if (pe->connecting || !pe->conn)
			core_schedule_reconnect(core, p);
		return;
	}

	c->hello_done = true;
	memcpy(c->uuid, msg->sender_uuid, 16);
	c->epoch = msg->sender_epoch;
	if (want_ack)
		core_send_hello(core, c->id, IMEXD_MSG_HELLO_ACK);

	if (pe->known && (pe->epoch != msg->sender_epoch ||
			  memcmp(pe->uuid, msg->sender_uuid, 16))) {
		core_log(core, IMEXD_LOG_WARN,
			 "node '%s' restarted (new instance %016llx)", name,
			 (unsigned long long)msg->sender_epoch);
		snprintf(core_act(core, IMEXD_ACT_PEER_RESTARTED)->peer,
			 IMEX_NAME_MAX, "%s", name);
		core_imp_peer_restarted(core, p, pe->uuid);
		if (pe->conn) {
			old = core_conn_find(core, pe->conn);
			if (old)
				core_conn_drop(core, old, true);
			c = core_conn_find(core, cid);
		}
		core_peer_reset(core, p);
		pe->known = false;
		core_pc_peer_restarted(core, p);
		if (!c)
			return;
	}
	if (pe->conn && pe->conn != c->id) {
		old = core_conn_find(core, pe->conn);
		if (old && !core_keep_new(core, old, c, name)) {
			core_log(core, IMEXD_LOG_DEBUG,
				 "second connection to node '%s' closed: the one opened by '%s' stays",
				 name, old->outbound ? core->cfg.node_name : name);
			c->peer = -1;
			core_conn_drop(core, c, true);
			return;
		}
		if (old) {
			old->peer = -1;	/* not a loss of the peer */
			pe->conn = 0;
			core_conn_drop(core, old, true);
			c = core_conn_find(core, cid);
		}
	}
	c->peer = p;
	pe->conn = c->id;
	pe->known = true;
	memcpy(pe->uuid, msg->sender_uuid, 16);
	pe->epoch = msg->sender_epoch;
	pe->max_channels = msg->u.hello.max_channels;
	pe->connecting = false;
	pe->backoff = core->cfg.backoff_min_ms;
	c->last_hb = 0;
	c->next_hb = core->now;		/* tell it our view at once */
	if (pe->state != IMEX_MEMBER_CONNECTED)
		core_peer_set_state(core, p, IMEX_MEMBER_CONNECTED);
	else
		core_cc_peer_event(core, p);
	core_dom_sync_peer(core, p);
	core_imp_peer_bound(core, p);
}

/* Answer QUERY_FREE: node-level, since the domain may not exist here yet. */
static void core_query_free_in(struct imexd_core *core, int p,
			       const struct imexd_msg *msg)
{
	struct imexd_msg m;

	core_msg_init(core, &m, IMEXD_MSG_FREE, msg->domain_uuid);
	m.u.free.change_id = msg->u.query_free.change_id;
	m.u.free.nbits = core->cfg.max_channels;
	m.u.free.bits = core_free_bits(core);
	core_send_peer(core, p, &m);
}

void core_peer_msg(struct imexd_core *core, uint64_t conn,
		   const struct imexd_msg *msg)
{
	struct core_conn *c = core_conn_find(core, conn);
	const char *who;
	int p;

	if (!c || core->shutting_down)
		return;
	c->last_rx = core->now;
	if (msg->type == IMEXD_MSG_HELLO || msg->type == IMEXD_MSG_HELLO_ACK) {
		core_hello(core, c, msg);
		return;
	}
	if (!c->hello_done) {
		core_log_once(core, "before-hello", c->addr, msg->sender_epoch,
			      IMEXD_LOG_WARN,
			      "%s from %s before HELLO: dropped",
			      core_msg_name(msg->type), c->addr);
		return;
	}
	p = c->peer;
	who = p >= 0 ? core->peers[p].name : c->addr;
	if (memcmp(msg->sender_uuid, c->uuid, 16) ||
	    msg->sender_epoch != c->epoch) {
		core_log_once(core, "stale-instance", who, msg->sender_epoch,
			      IMEXD_LOG_WARN,
			      "%s from node '%s' names instance %016llx, not the one that said HELLO on this connection (%016llx): dropped",
			      core_msg_name(msg->type), who,
			      (unsigned long long)msg->sender_epoch,
			      (unsigned long long)c->epoch);
		return;
	}
	if (p < 0)
		return;			/* a duplicate being closed */
	switch (msg->type) {
	case IMEXD_MSG_HEARTBEAT:
		core_heartbeat_in(core, p, msg);
		break;
	case IMEXD_MSG_LEAVE:
		core_log(core, IMEXD_LOG_INFO,
			 "node '%s' is shutting down; it has %s to come back",
			 who, core->cfg.grace_ms < 0 ? "all the time it needs" :
			 "the grace time");
		if (core->peers[p].state == IMEX_MEMBER_CONNECTED)
			core_peer_set_state(core, p, IMEX_MEMBER_RECOVERING);
		break;
	case IMEXD_MSG_QUERY_FREE:
		core_query_free_in(core, p, msg);
		break;
	case IMEXD_MSG_FREE:
	case IMEXD_MSG_VOTE:
	case IMEXD_MSG_ACK:
		core_cc_msg(core, p, msg);
		break;
	case IMEXD_MSG_PREPARE:
	case IMEXD_MSG_COMMIT:
	case IMEXD_MSG_ABORT:
	case IMEXD_MSG_OUTCOME_QUERY:
	case IMEXD_MSG_OUTCOME:
		core_pc_msg(core, p, msg);
		break;
	case IMEXD_MSG_SYNC:
		core_dom_msg_sync(core, p, msg);
		break;
	case IMEXD_MSG_IMPORT_REQ:
	case IMEXD_MSG_IMPORT_RESP:
	case IMEXD_MSG_EXPORT_REVOKE:
		core_imp_msg(core, p, msg);
		break;
	default:
		core_log_once(core, "bad-type", who, msg->sender_epoch,
			      IMEXD_LOG_WARN, "message type %u from '%s': dropped",
			      msg->type, who);
		break;
	}
}

/* Members of what we hold, and of changes in progress, are worth a link. */
static void core_peer_update_wanted(struct imexd_core *core)
{
	size_t i;
	uint16_t m;

	for (i = 0; i < core->npeers; i++)
		core->peers[i].wanted = false;
	for (i = 0; i < core->ndoms; i++) {
		const struct core_domain *d = core->doms[i];

		if (d->kind != DOM_LIVE)
			continue;
		for (m = 0; m < d->def.nmembers; m++)
			if (d->midx[m] >= 0)
				core->peers[d->midx[m]].wanted = true;
	}
	for (i = 0; i < core->npeers; i++) {
		struct core_peer *pe = &core->peers[i];

		if (!pe->wanted && (core_cc_names(core, pe->name) ||
				    core_pc_names(core, pe->name)))
			pe->wanted = true;
	}
}

static void core_peer_dial(struct imexd_core *core)
{
	size_t i;

	if (core->shutting_down)
		return;
	for (i = 0; i < core->npeers; i++) {
		struct core_peer *pe = &core->peers[i];

		if (!pe->wanted || pe->conn || pe->connecting ||
		    !pe->addr[0] || core->now < pe->connect_at)
			continue;
		pe->connecting = true;
		snprintf(core_act(core, IMEXD_ACT_CONNECT)->addr,
			 IMEXD_ADDR_MAX + 1, "%s", pe->addr);
	}
}

void core_peer_timer(struct imexd_core *core)
{
	uint64_t miss = (uint64_t)core->cfg.miss_count * core->cfg.heartbeat_ms;
	size_t i = 0;

	while (i < core->nconns) {
		struct core_conn *c = &core->conns[i];

		if (core->now - c->last_rx >= miss) {
			if (c->peer >= 0)
				core_log(core, IMEXD_LOG_WARN,
					 "node '%s': nothing heard for %llu ms: closing the connection",
					 core->peers[c->peer].name,
					 (unsigned long long)(core->now - c->last_rx));
			core_conn_drop(core, c, true);
			continue;
		}
		if (c->peer >= 0 && c->hello_done && core->now >= c->next_hb)
			core_send_heartbeat(core, c);
		i++;
	}
	for (i = 0; i < core->npeers; i++) {
		struct core_peer *pe = &core->peers[i];

		if (pe->state == IMEX_MEMBER_RECOVERING && !pe->conn &&
		    core->cfg.grace_ms >= 0 &&
		    core->now - pe->state_since >= (uint64_t)core->cfg.grace_ms)
			core_peer_set_state(core, (int)i,
					    IMEX_MEMBER_DISCONNECTED);
	}
	core_peer_dial(core);
}

void core_peer_flush(struct imexd_core *core)
{
	if (core->wanted_dirty) {
		core->wanted_dirty = false;
		core_peer_update_wanted(core);
	}
	core_peer_dial(core);
	core_health_flush(core);
}

uint64_t core_peer_deadline(const struct imexd_core *core)
{
	uint64_t miss = (uint64_t)core->cfg.miss_count * core->cfg.heartbeat_ms;
	uint64_t t = CORE_NO_TIME;
	size_t i;

	for (i = 0; i < core->nconns; i++) {
		const struct core_conn *c = &core->conns[i];

		t = CORE_MIN(t, c->last_rx + miss);
		if (c->peer >= 0 && c->hello_done)
			t = CORE_MIN(t, c->next_hb);
	}
	for (i = 0; i < core->npeers; i++) {
		const struct core_peer *pe = &core->peers[i];

		if (pe->state == IMEX_MEMBER_RECOVERING && !pe->conn &&
		    core->cfg.grace_ms >= 0)
			t = CORE_MIN(t, pe->state_since +
				     (uint64_t)core->cfg.grace_ms);
		if (pe->wanted && !pe->conn && !pe->connecting && pe->addr[0])
			t = CORE_MIN(t, pe->connect_at);
	}
	return t;
}

/* LEAVE: peers expect us back and keep our domains in grace meanwhile. */
void core_peer_shutdown(struct imexd_core *core)
{
	struct imexd_msg m;

	while (core->nconns) {
		struct core_conn *c = &core->conns[0];

		if (c->peer >= 0 && c->hello_done) {
			core_msg_init(core, &m, IMEXD_MSG_LEAVE, NULL);
			m.u.leave.reason = IMEXD_LEAVE_SHUTDOWN;
			core_send_conn(core, c->id, &m);
		}
		c->peer = -1;
		core_conn_drop(core, c, true);
	}
}

void core_peer_free_all(struct imexd_core *core)
{
	size_t i;

	for (i = 0; i < core->npeers; i++)
		free(core->peers[i].view);
	free(core->peers);
	free(core->phash);
	free(core->conns);
}
