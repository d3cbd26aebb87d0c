// SPDX-License-Identifier: GPL-2.0
/*
 * peers: connections (peers.h): up and down, HELLO binding a connection
 * to a peer (or refusing it), the messages bound connections carry, and
 * sends to peers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "peers_internal.h"

/* ---- connections ----------------------------------------------------------- */

int peers_send_msg(struct imexd_peers *p, uint64_t conn, struct imexd_msg *m)
{
	struct act *a;
	uint8_t *f;
	size_t len;
	int r;

	memcpy(m->sender_uuid, p->self_uuid, 16);
	m->sender_epoch = p->epoch;
	r = imexd_msg_encode(m, &f, &len);
	if (r)
		return r;
	a = peers_act_push(p, IMEXD_PEERS_SEND);
	if (!a) {
		free(f);
		return -ENOMEM;
	}
	a->a.conn = conn;
	a->frame = f;
	a->a.len = len;
	return 0;
}

static int send_hello(struct imexd_peers *p, uint64_t conn, uint8_t type)
{
	struct imexd_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.u.hello.proto_min = IMEXD_PROTO_VERSION;
	m.u.hello.proto_max = IMEXD_PROTO_VERSION;
	snprintf(m.u.hello.node_name, sizeof(m.u.hello.node_name), "%s",
		 p->self);
	m.u.hello.max_channels = p->max_channels;
	memcpy(m.u.hello.fabric_uuid, p->fabric_uuid, 16);
	m.u.hello.partition = p->partition;
	m.u.hello.group = p->group;
	return peers_send_msg(p, conn, &m);
}

/* Inbound connections waiting for HELLO: from @addr's host, and in all. */
static void count_unbound(const struct imexd_peers *p, const char *addr,
			  unsigned *host, unsigned *all)
{
	size_t hl = peers_host_len(addr), i;

	*host = 0;
	*all = 0;
	for (i = 0; i < p->nconns; i++) {
		const struct conn *c = &p->conns[i];

		if (c->outbound || c->peer >= 0)
			continue;
		(*all)++;
		if (peers_host_len(c->addr) == hl && !memcmp(c->addr, addr, hl))
			(*host)++;
	}
}

/* Has the dial of peer @i come up already?  (Two peers at one address.) */
static bool dial_has_conn(const struct imexd_peers *p, size_t i)
{
	size_t j;

	for (j = 0; j < p->nconns; j++)
		if (p->conns[j].dialled == (int)i && p->conns[j].peer < 0)
			return true;
	return false;
}

void imexd_peers_conn_up(struct imexd_peers *p, uint64_t now, uint64_t conn,
			 const char *addr, bool outbound,
			 const struct imexd_peers_auth *auth)
{
	unsigned host, all;
	struct conn *c;
	int dialled = -1;
	size_t i;

	peers_acts_gc(p);
	if (!addr)
		addr = "";
	if (p->shutting_down || !conn || peers_conn_find(p, conn)) {
		peers_emit_close(p, conn);
		return;
	}
	if (outbound) {
		for (i = 0; i < p->npeers; i++)
			if (p->peers[i].connecting && !dial_has_conn(p, i) &&
			    !strcmp(p->peers[i].addr, addr)) {
				dialled = (int)i;
				break;
			}
		if (dialled < 0) {	/* nothing here dialled it */
			peers_emit_close(p, conn);
			return;
		}
	} else {
		count_unbound(p, addr, &host, &all);
		if (host >= IMEXD_PEERS_UNBOUND_PER_HOST ||
		    all >= IMEXD_PEERS_UNBOUND_MAX) {
			plog_limited(p, now, "unbound", addr, "", LOG_WARNING,
				     "refusing connection from %s: %u connections from that host and %u in all have not said HELLO (at most %u and %u)",
				     addr, host, all, IMEXD_PEERS_UNBOUND_PER_HOST,
				     IMEXD_PEERS_UNBOUND_MAX);
			peers_emit_close(p, conn);
			return;
		}
	}
	if (imexd_grow((void **)&p->conns, &p->cap_conns, p->nconns + 1,
		       sizeof(*p->conns))) {
		peers_log(p, LOG_ERR, "out of memory for connection %s %s: closing it",
			  outbound ? "to" : "from", addr);
		peers_emit_close(p, conn);
		if (dialled >= 0)
			peers_dial_failed(p, &p->peers[dialled], now);
		return;
	}
	c = &p->conns[p->nconns++];
	memset(c, 0, sizeof(*c));
	c->id = conn;
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	c->outbound = outbound;
	c->dialled = dialled;
	c->peer = -1;
	c->since = now;
	if (auth) {
		c->has_auth = true;
		c->auth = *auth;
		if (c->auth.n_names > IMEXD_PEERS_CERT_NAMES_MAX)
			c->auth.n_names = IMEXD_PEERS_CERT_NAMES_MAX;
	}
	/* The dialling side speaks first. */
	if (outbound && send_hello(p, conn, IMEXD_MSG_HELLO)) {
		peers_log(p, LOG_ERR, "cannot send HELLO to %s: closing the connection",
			  addr);
		peers_conn_end(p, c, now, true);
	}
}

void imexd_peers_conn_down(struct imexd_peers *p, uint64_t now, uint64_t conn)
{
	struct conn *c;

	peers_acts_gc(p);
	c = peers_conn_find(p, conn);
	if (c)
		peers_conn_end(p, c, now, false);
}

/* Does the verified certificate of @c carry @name?  (No TLS: yes.) */
static bool cert_names(const struct conn *c, const char *name)
{
	unsigned i;

	if (!c->has_auth || !c->auth.tls)
		return true;
	for (i = 0; i < c->auth.n_names; i++)
		if (!strncmp(c->auth.names[i], name, IMEX_NAME_MAX))
			return true;
	return false;
}

/*
 * Is @c the node its HELLO names (its certificate was checked to carry the
 * name)?  With TLS, yes; without, only a connection this node dialled to
 * the node list's address of it: an inbound claim is anyone's.  Only a
 * proven one may change how that member is shown.
 */
static bool proven(const struct conn *c)
{
	return (c->has_auth && c->auth.tls) || c->outbound;
}

/* "'x', 'y'" for the log, or "no node name". */
static void cert_list(const struct conn *c, char *buf, size_t len)
{
	size_t off = 0;
	unsigned i;

	buf[0] = '\0';
	if (!c->auth.n_names) {
		snprintf(buf, len, "no node name");
		return;
	}
	for (i = 0; i < c->auth.n_names && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s'%.*s'",
				 i ? ", " : "", IMEX_NAME_MAX - 1,
				 c->auth.names[i]);

		if (n < 0)
			break;
		off += (size_t)n;
	}
}

/*
 * Which of two bound connections to one peer instance survives: the one
 * opened by the node with the smaller name.  Both ends apply the same
 * rule, so they keep the same connection without talking about it.  Two
 * opened by the same node: that node gave up on the older one, keep the
 * newer.
 */
static bool keep_new(const struct imexd_peers *p, const struct conn *old,
		     const struct conn *new, const char *peer)
{
	const char *old_opener = old->outbound ? p->self : peer;
	const char *new_opener = new->outbound ? p->self : peer;

	if (!strcmp(old_opener, new_opener))
		return true;
	return strcmp(new_opener, old_opener) < 0;
}

static void peer_up(struct imexd_peers *p, struct peer *pe, uint64_t conn,
		    const struct imexd_msg *hello, bool restarted,
		    bool replaced)
{
	struct act *a = peers_act_push(p, IMEXD_PEERS_PEER_UP);

	if (!a)
		return;
	a->a.conn = conn;
	peers_name_copy(a->name, pe->name);
	a->a.epoch = hello->sender_epoch;
	memcpy(a->uuid, hello->sender_uuid, 16);
	a->a.restarted = restarted;
	a->a.replaced = replaced;
	a->a.msg = hello;
}

/*
 * Node @name's HELLO names another Raft group: its log began with another
 * bootstrap entry (a NODES_FILE whose names differed from the group's
 * first one at its first start), which Raft cannot tell from ours at
 * (term 1, index 1).
 */
void peers_group_refused(struct imexd_peers *p, uint64_t now,
				const struct conn *c, const char *name, uint64_t group)
{
	plog_limited(p, now, "group", c->addr, name, LOG_ERR,
		     "node '%s' (%s) is in another group (group id %016llx, this node's %016llx): one of the two first started with a NODES_FILE other than the group's first one; refused: give every node the group's first NODES_FILE (the names it first started with; addresses may differ), then move STATE_DIRECTORY/raft away on the nodes of the wrong group and restart them (they catch up from the group)",
		     name, c->addr, (unsigned long long)group,
		     (unsigned long long)p->group);
}

/* A name no configuration here named (so none removed). */
static bool learnable(const struct imexd_peers *p, const char *name)
{
	int i = peers_slot(p, name);

	return i < 0 || p->peers[i].learnt;
}

/*
 * Inbound @c says it is node @name, which is no peer here, and names our
 * group: a node joined while this one was away, leading or catching us up
 * before our log holds its join.  It becomes a peer that is not dialled
 * (it dials us) until the configuration adds it.  A name the
 * configuration removed stays refused.  -1: not learnt (logged).
 */
static int peer_learn(struct imexd_peers *p, uint64_t now,
		      const struct conn *c, const char *name)
{
	struct peer *pe;
	int i = peers_slot(p, name);

	if (i < 0) {
		if (p->npeers >= IMEXD_PEERS_MAX) {
			plog_limited(p, now, "learn", c->addr, name, LOG_WARNING,
				     "peer %s says it is node '%s' of this group, but this node holds %u node names already; refused",
				     c->addr, name, IMEXD_PEERS_MAX);
			return -1;
		}
		if (imexd_grow((void **)&p->peers, &p->cap_peers,
			       p->npeers + 1, sizeof(*p->peers))) {
			peers_log(p, LOG_ERR, "out of memory for node '%s' (%s): closing its connection",
				  name, c->addr);
			return -1;
		}
		i = (int)p->npeers++;
		pe = &p->peers[i];
		memset(pe, 0, sizeof(*pe));
		snprintf(pe->name, sizeof(pe->name), "%s", name);
		pe->backoff = p->backoff_min;
	}
	pe = &p->peers[i];
	pe->gone = false;
	pe->learnt = true;
	pe->connect_at = NO_TIME;
	plog_limited(p, now, "learnt", c->addr, name, LOG_INFO,
		     "node '%s' (%s) is of this group but not in the configuration this node knows yet (it joined while this node was away): taken as a peer",
		     name, c->addr);
	return i;
}

/*
 * A refusal that retrying soon will not change (protocol, group): an
 * inbound peer gets our HELLO_ACK first so that it can say the same, and
 * our own dial waits the longest backoff.
 */
static void refuse_for_long(struct imexd_peers *p, uint64_t now,
			    struct conn *c, struct peer *pe)
{
	bool outbound = c->outbound;

	if (!outbound)
		send_hello(p, c->id, IMEXD_MSG_HELLO_ACK);
	peers_conn_end(p, c, now, true);
	if (outbound && !pe->conn && !pe->connecting)
		pe->connect_at = now + p->backoff_max;
}

/* A HELLO (inbound) or HELLO_ACK (outbound) on unbound @c. */
static void hello_bind(struct imexd_peers *p, uint64_t now, struct conn *c,
		       const struct imexd_msg *m)
{
	const char *name = m->u.hello.node_name;
	uint64_t id = c->id;
	bool restarted = false, replaced = false, learn;
	struct peer *pe;
	struct conn *old;
	char certs[IMEXD_PEERS_CERT_NAMES_MAX * (IMEX_NAME_MAX + 4)];
	int q;

	if (!strcmp(name, p->self)) {
		plog_limited(p, now, "self", c->addr, name, LOG_WARNING,
			     "peer %s says it is this node ('%s'); refused: check the node list and addresses",
			     c->addr, name);
		peers_conn_end(p, c, now, true);
		return;
	}
	q = peers_find(p, name);
	/* Unknown but of our group (its id is a hash of our first entry). */
	learn = q < 0 && !c->outbound && p->group &&
		m->u.hello.group == p->group &&
		learnable(p, name);
	if (q < 0 && !learn) {
		plog_limited(p, now, "roster", c->addr, name, LOG_WARNING,
			     "peer %s says it is node '%s', which is not in the node list; refused",
			     c->addr, name);
		peers_conn_end(p, c, now, true);
		return;
	}
	if (!cert_names(c, name)) {
		cert_list(c, certs, sizeof(certs));
		plog_limited(p, now, "cert", c->addr, name, LOG_WARNING,
			     "peer %s claims to be '%s' but its certificate names %s; refused",
			     c->addr, name, certs);
		/* Someone else's certificate: the member claimed stays as is. */
		p->claims_refused++;
		peers_conn_end(p, c, now, true);
		return;
	}
	if (learn) {
		q = peer_learn(p, now, c, name);
		if (q < 0) {
			peers_conn_end(p, c, now, true);
			return;
		}
	}
	if (c->outbound && c->dialled != q) {
		plog_limited(p, now, "node-map", c->addr, name, LOG_ERR,
			     "node-map mismatch: %s is node '%s''s address, but node '%s' answered there; refused: fix the node list",
			     c->addr, p->peers[c->dialled].name, name);
		peers_conn_end(p, c, now, true);
		return;
	}
	pe = &p->peers[q];
	if (m->u.hello.proto_max < IMEXD_PROTO_VERSION ||
	    m->u.hello.proto_min > IMEXD_PROTO_VERSION) {
		plog_limited(p, now, "version", c->addr, name, LOG_ERR,
			     "node '%s' (%s) speaks protocol %u..%u, this node %u: upgrade one of them",
			     name, c->addr, m->u.hello.proto_min,
			     m->u.hello.proto_max, IMEXD_PROTO_VERSION);
		if (proven(c))
			peers_emit_name_why(p, IMEXD_PEERS_PEER_VERSION, pe, id,
					    "it speaks protocol %u..%u, this node %u",
					    m->u.hello.proto_min, m->u.hello.proto_max,
					    IMEXD_PROTO_VERSION);
		refuse_for_long(p, now, c, pe);
		return;
	}

	if (p->group && m->u.hello.group && m->u.hello.group != p->group) {
		peers_group_refused(p, now, c, name, m->u.hello.group);
		if (proven(c))
			peers_emit_name_why(p, IMEXD_PEERS_PEER_REFUSED, pe, id,
					    "identity: it is in another group (group id %016llx, this node's %016llx): see its log",
					    (unsigned long long)m->u.hello.group,
					    (unsigned long long)p->group);
		refuse_for_long(p, now, c, pe);
		return;
	}

	/* A new instance: whatever was bound belongs to the old one. */
	if (pe->known && (pe->epoch != m->sender_epoch ||
			  memcmp(pe->uuid, m->sender_uuid, 16))) {
		peers_log(p, LOG_INFO, "node '%s' restarted (instance %016llx, was %016llx)",
			  name, (unsigned long long)m->sender_epoch,
			  (unsigned long long)pe->epoch);
		restarted = true;
		old = pe->conn ? peers_conn_find(p, pe->conn) : NULL;
		if (old) {
			peers_conn_end(p, old, now, true);
			c = peers_conn_find(p, id);
		}
	} else if (pe->conn) {
		old = peers_conn_find(p, pe->conn);
		if (old && !keep_new(p, old, c, name)) {
			peers_log(p, LOG_DEBUG,
				  "second connection with node '%s' closed: the one opened by '%s' stays",
				  name, old->outbound ? p->self : name);
			peers_conn_end(p, c, now, true);
			return;
		}
		if (old) {
			/*
			 * Replaced, not lost: no PEER_DOWN, no redial.  But
			 * the peer may have closed it already (it bound the
			 * winner first): what was sent on it may be lost.
			 */
			replaced = true;
			old->peer = -1;
			old->dialled = -1;
			pe->conn = 0;
			peers_emit_close(p, old->id);
			peers_conn_forget(p, old);
			c = peers_conn_find(p, id);
		}
	}
	if (!c->outbound && send_hello(p, id, IMEXD_MSG_HELLO_ACK)) {
		peers_log(p, LOG_ERR, "cannot answer HELLO from node '%s': closing the connection",
			  name);
		peers_conn_end(p, c, now, true);
		return;
	}
	c->peer = q;
	pe->conn = id;
	pe->known = true;
	memcpy(pe->uuid, m->sender_uuid, 16);
	pe->epoch = m->sender_epoch;
	pe->group = m->u.hello.group;
	pe->backoff = p->backoff_min;
	if (c->dialled == q)
		pe->connecting = false;
	peer_up(p, pe, id, m, restarted, replaced);
}

void imexd_peers_msg(struct imexd_peers *p, uint64_t now, uint64_t conn,
		     const struct imexd_msg *msg)
{
	struct conn *c;
	struct peer *pe;
	struct act *a;
	bool hello;

	peers_acts_gc(p);
	c = peers_conn_find(p, conn);
	if (!c || !msg)
		return;
	hello = msg->type == IMEXD_MSG_HELLO || msg->type == IMEXD_MSG_HELLO_ACK;
	if (hello && (msg->type == IMEXD_MSG_HELLO) == c->outbound) {
		plog_limited(p, now, "direction", c->addr, msg->u.hello.node_name,
			     LOG_WARNING,
			     "%s from %s on a connection %s opened; closing it",
			     imexd_msg_type_name(msg->type), c->addr,
			     c->outbound ? "this node" : "the peer");
		peers_conn_end(p, c, now, true);
		return;
	}
	if (c->peer < 0) {
		if (hello) {
			hello_bind(p, now, c, msg);
			return;
		}
		plog_limited(p, now, "before-hello", c->addr, "", LOG_WARNING,
			     "%s from %s before HELLO: dropped",
			     imexd_msg_type_name(msg->type), c->addr);
		return;
	}
	pe = &p->peers[c->peer];
	if (memcmp(msg->sender_uuid, pe->uuid, 16) ||
	    msg->sender_epoch != pe->epoch) {
		plog_limited(p, now, "instance", c->addr, pe->name, LOG_WARNING,
			     "%s on node '%s''s connection names instance %016llx, not %016llx: closing it",
			     imexd_msg_type_name(msg->type), pe->name,
			     (unsigned long long)msg->sender_epoch,
			     (unsigned long long)pe->epoch);
		peers_conn_end(p, c, now, true);
		return;
	}
	if (hello) {
		if (strcmp(msg->u.hello.node_name, pe->name)) {
			plog_limited(p, now, "rename", c->addr, pe->name,
				     LOG_WARNING,
				     "node '%s' said HELLO again as '%s' on one connection; closing it",
				     pe->name, msg->u.hello.node_name);
			peers_conn_end(p, c, now, true);
		}
		return;
	}
	a = peers_act_push(p, IMEXD_PEERS_MSG);
	if (!a)
		return;
	a->a.conn = conn;
	peers_name_copy(a->name, pe->name);
	a->a.msg = msg;
}

/* ---- to peers ------------------------------------------------------------- */

int imexd_peers_send(struct imexd_peers *p, const char *name,
		     struct imexd_msg *msg)
{
	int q;

	if (!name || !msg)
		return -EINVAL;
	q = peers_find(p, name);
	if (q < 0 || !p->peers[q].conn)
		return -ENOTCONN;
	return peers_send_msg(p, p->peers[q].conn, msg);
}

bool imexd_peers_connected(const struct imexd_peers *p, const char *name)
{
	return imexd_peers_conn(p, name) != 0;
}

uint64_t imexd_peers_conn(const struct imexd_peers *p, const char *name)
{
	int q = name ? peers_find(p, name) : -1;

	return q < 0 ? 0 : p->peers[q].conn;
}
