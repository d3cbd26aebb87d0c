// SPDX-License-Identifier: GPL-2.0
/*
 * The node dispatcher's membership (see node_internal.h): peers follow the
 * raft configuration, the last HELLO of each peer, and joins: a node's
 * own join request and this leader's check of a joining node.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "node_internal.h"

/* ---- membership ------------------------------------------------------------ */

static int join_find(const struct imexd_node *n, const char *name)
{
	return node_find(n->joins, n->n_joins, name);
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
	return node_find(n->checks, n->n_checks, name);
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
		node_req_fail(n, j->req_id, -e, "imexd could not take the request: retry");
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
		      n->now : n->now + node_park_ms(n);
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
		node_req_fail(n, j->req_id, EHOSTUNREACH, why);
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
void node_join(struct imexd_node *n, const struct imexd_request *r)
{
	const struct node_hello *h;
	struct node_join *j;
	char why[IMEXD_MESSAGE_MAX + 1];
	int e;

	if (!imexd_name_valid(r->member)) {
		node_req_fail(n, r->req_id, EINVAL, "not a valid node name");
		return;
	}
	if (!strcmp(r->member, n->cfg.name) || node_is_member(n, r->member)) {
		snprintf(why, sizeof(why),
			 "node '%s' is already a node of this NVLink domain",
			 r->member);
		node_req_fail(n, r->req_id, EALREADY, why);
		return;
	}
	if (join_find(n, r->member) >= 0 || n->n_joins >= IMEXD_NODE_JOINS_MAX) {
		node_req_fail(n, r->req_id, EBUSY,
			      "a join of that node, or too many joins, under way: retry");
		return;
	}
	e = imexd_peers_add(n->peers, n->now, r->member, r->addr);
	if (e) {
		node_req_fail(n, r->req_id, e == -ENOMEM ? ENOMEM : EINVAL,
			      "the node's address is not host[:port], or too many nodes");
		return;
	}
	j = &n->joins[n->n_joins++];
	memset(j, 0, sizeof(*j));
	j->req_id = r->req_id;
	snprintf(j->name, sizeof(j->name), "%s", r->member);
	snprintf(j->addr, sizeof(j->addr), "%s", r->addr);
	j->deadline = n->now + node_park_ms(n);
	h = hello_of(n, r->member);
	if (h)
		join_submit(n, n->n_joins - 1, h);
}
