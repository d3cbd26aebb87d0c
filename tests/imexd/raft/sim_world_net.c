// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated world's network (see sim_world.h): latency and jitter,
 * partitions and one-way cuts, connections dialled, reset and closed,
 * frames sent, and the delivery of network events to the nodes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/imex.h>

#include "sim_world_internal.h"

static uint64_t latency(struct sw *w)
{
	return w->now + w->cfg.latency_ms + sw_rand(w, w->cfg.jitter_ms + 1);
}

/* A partition is kept apart from one-way cuts, so that a cut ending
 * during a partition does not open one of its links. */
void sw_partition(struct sw *w, const bool *side)
{
	unsigned a;

	for (a = 0; a < w->cfg.n; a++)
		w->side[a] = side[a];
	w->epoch = ++w->epochs;
}

static bool parted(const struct sw *w, unsigned a, unsigned b)
{
	return w->epoch && w->side[a] != w->side[b];
}

/* TCP needs both directions: a one-way cut stops a connection too. */
static bool link_down(const struct sw *w, unsigned a, unsigned b)
{
	return w->cut[a][b] || w->cut[b][a] || parted(w, a, b);
}

void sw_cut(struct sw *w, unsigned from, unsigned to, bool cut)
{
	w->cut[from][to] = cut;
}

void sw_heal(struct sw *w)
{
	memset(w->cut, 0, sizeof(w->cut));
	w->epoch = 0;
}

struct sw_conn *conn_of(struct sw *w, uint64_t id)
{
	return id >= 1 && id <= w->n_conns ? &w->conns[id - 1] : NULL;
}

/* Which end of @c node @i at instance @inst is: 0, 1, or -1 (neither). */
int conn_end(const struct sw_conn *c, unsigned i, unsigned inst)
{
	if (c->a == i && c->ia == inst)
		return 0;
	if (c->b == i && c->ib == inst)
		return 1;
	return -1;
}

/* The connection ends: the ends still open hear it after a latency,
 * except @quiet's (the end that closed it, -1: none). */
void conn_kill(struct sw *w, uint64_t id, int quiet)
{
	struct sw_conn *c = conn_of(w, id);
	int e;

	if (!c || c->dead)
		return;
	c->dead = true;
	for (e = 0; e < 2; e++) {
		struct sw_ev *ev;

		if (e == quiet)
			continue;
		ev = ev_new(w, EV_DOWN, e ? c->b : c->a, latency(w));
		ev->inst = e ? c->ib : c->ia;
		ev->conn = id;
		ev_push(w);
	}
}

void addr_of(char *out, size_t len, unsigned i, unsigned port)
{
	snprintf(out, len, "n%03u:%u", i, port);
}

/* Node i dials @addr. */
void net_connect(struct sw *w, unsigned i, const char *addr)
{
	unsigned t = w->cfg.n, inst = w->nodes[i].restarts;
	struct sw_conn *c;
	struct sw_ev *ev;
	uint64_t due = latency(w);

	if (addr[0] == 'n' && strlen(addr) > 4)
		t = (unsigned)strtoul(addr + 1, NULL, 10);
	if (t >= w->cfg.n || !w->nodes[t].up || t == i ||
	    (!w->cfg.leak_requests && link_down(w, i, t)) ||
	    (w->cfg.leak_requests && (w->cut[i][t] || w->cut[t][i]))) {
		ev = ev_new(w, EV_FAILED, i, due);
		snprintf(ev->addr, sizeof(ev->addr), "%s", addr);
		ev_push(w);
		return;
	}
	w->conns = xgrow(w->conns, &w->cap_conns, w->n_conns,
			 sizeof(*w->conns));
	c = &w->conns[w->n_conns++];
	memset(c, 0, sizeof(*c));
	c->a = i;
	c->ia = inst;
	c->b = t;
	c->ib = w->nodes[t].restarts;
	w->st.conns++;
	/* The accepting end first: the dialler's first frame needs it. */
	ev = ev_new(w, EV_UP, t, due);
	ev->conn = w->n_conns;
	addr_of(ev->addr, sizeof(ev->addr), i, 40000 + (unsigned)w->n_conns % 20000);
	ev_push(w);
	ev = ev_new(w, EV_UP, i, due);
	ev->conn = w->n_conns;
	ev->outbound = true;
	snprintf(ev->addr, sizeof(ev->addr), "%s", addr);
	ev_push(w);
}

void net_send(struct sw *w, unsigned i, const struct imexd_node_action *a)
{
	struct sw_conn *c = conn_of(w, a->conn);
	int e = c ? conn_end(c, i, w->nodes[i].restarts) : -1;
	unsigned to;
	struct sw_ev *ev;
	uint64_t due;

	CHECK(c && e >= 0);
	to = e ? c->a : c->b;
	if (c->dead || !c->open[e]) {
		/* The daemon's send fails: dropped. */
		if (w->trace_msgs)
			fprintf(stderr, "%llu %s -> %s: frame of %zu bytes on a closed connection, lost\n",
				(unsigned long long)w->now, w->names[i],
				w->names[to], a->len);
		return;
	}
	w->st.msgs++;
	if (sw_rand(w, 1000) < w->cfg.break_pm) {
		w->st.resets++;
		w->st.breaks++;
		w->st.last_break = w->now;
		if (w->trace_msgs)
			fprintf(stderr, "%llu %s -> %s: connection reset, frame of %zu bytes lost\n",
				(unsigned long long)w->now, w->names[i],
				w->names[to], a->len);
		conn_kill(w, a->conn, -1);
		return;
	}
	/* In order within the connection. */
	due = latency(w);
	if (due < c->last_due[!e])
		due = c->last_due[!e];
	c->last_due[!e] = due;
	ev = ev_new(w, EV_MSG, to, due);
	ev->inst = e ? c->ia : c->ib;
	ev->conn = a->conn;
	ev->frame = xdup(a->frame, a->len);
	ev->len = a->len;
	ev_push(w);
}

static void deliver_msg(struct sw *w, struct sw_ev *e, struct sw_conn *c,
			int end)
{
	unsigned from = end ? c->a : c->b;
	struct imexd_msg msg;
	const char *why = NULL;
	int rv;

	rv = imexd_msg_decode(e->frame, e->len, &msg, &why);
	if (rv) {
		fprintf(stderr, "sim: %s sent a frame that does not decode: %s (IMEX_SEED=%u)\n",
			w->names[from], why ? why : "?", w->cfg.seed);
		abort();
	}
	if (parted(w, from, e->to) && w->cfg.leak_requests) {
		/* Self-test: all but raft traffic crosses. */
		if (msg.type == IMEXD_MSG_RAFT) {
			imexd_msg_free(&msg);
			return;
		}
	} else if (link_down(w, from, e->to)) {
		imexd_msg_free(&msg);
		w->st.resets++;
		conn_kill(w, e->conn, -1);
		return;
	}
	w->st.delivered++;
	if (msg.type == IMEXD_MSG_RAFT)
		w->st.raft_msgs++;
	if (w->trace_msgs)
		fprintf(stderr, "%llu %s <- %s: message %u/%u (%zu bytes)\n",
			(unsigned long long)w->now, w->names[e->to],
			w->names[from], (unsigned)msg.type,
			msg.type == IMEXD_MSG_RAFT && msg.u.raft.len > 1 ?
			(unsigned)msg.u.raft.data[1] : 0u, e->len);
	imexd_node_msg(w->nodes[e->to].node, w->now, e->conn, &msg);
	imexd_msg_free(&msg);
	drain(w, e->to);
}

void deliver(struct sw *w, struct sw_ev *e)
{
	struct sw_node *nd = &w->nodes[e->to];
	struct sw_conn *c = conn_of(w, e->conn);
	int end = c ? conn_end(c, e->to, e->inst) : -1;

	if (!nd->up || nd->restarts != e->inst)
		return;
	switch (e->kind) {
	case EV_FAILED:
		imexd_node_conn_failed(nd->node, w->now, e->addr);
		break;
	case EV_UP:
		CHECK(end >= 0);
		if (c->dead) {
			/* It ended before it opened: a failed dial. */
			if (e->outbound)
				imexd_node_conn_failed(nd->node, w->now, e->addr);
			else
				return;
			break;
		}
		c->open[end] = true;
		imexd_node_conn_up(nd->node, w->now, e->conn, e->addr,
				   e->outbound, NULL);
		break;
	case EV_DOWN:
		if (end < 0 || !c->open[end])
			return;
		c->open[end] = false;
		imexd_node_conn_down(nd->node, w->now, e->conn);
		break;
	case EV_MSG:
		if (end < 0 || c->dead || !c->open[end]) {
			if (w->trace_msgs)
				fprintf(stderr, "%llu %s: frame of %zu bytes arrived on a closed connection, lost\n",
					(unsigned long long)w->now,
					w->names[e->to], e->len);
			return;
		}
		deliver_msg(w, e, c, end);
		return;
	}
	drain(w, e->to);
}

