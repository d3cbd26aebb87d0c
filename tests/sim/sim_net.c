// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated network.  A connection is set up in one round trip and
 * then carries messages in order with a random one-way delay; a closed end
 * sends a FIN that arrives after everything sent before it.  A cut link is
 * a black hole (messages vanish; cores find out by missed heartbeats, as
 * over a real partition).  During the chaos phase messages may also be
 * dropped, duplicated or reordered, which TCP would not do: the cores must
 * survive it anyway.  Every message goes through the wire codec when it is
 * built in (encoded on send, decoded on delivery).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

#ifdef SIM_WIRE
#define SIM_USE_CODEC 1

static int codec_encode(const struct imexd_msg *m, uint8_t **out, size_t *len)
{
	return imexd_msg_encode(m, out, len);
}

static int codec_decode(const uint8_t *buf, size_t len, struct imexd_msg *m,
			const char **why)
{
	return imexd_msg_decode(buf, len, m, why);
}

static void codec_free(struct imexd_msg *m)
{
	imexd_msg_free(m);
}
#else
/* Without the codec (not written yet): messages are deep copies. */
#define SIM_USE_CODEC 0

static int codec_encode(const struct imexd_msg *m, uint8_t **out, size_t *len)
{
	(void)m, (void)out, (void)len;
	return -ENOSYS;
}

static int codec_decode(const uint8_t *buf, size_t len, struct imexd_msg *m,
			const char **why)
{
	(void)buf, (void)len, (void)m, (void)why;
	return -ENOSYS;
}

static void codec_free(struct imexd_msg *m)
{
	(void)m;
}
#endif
void pkt_free(struct sim_pkt *p)
{
	free(p->frame);
	switch (p->msg.type) {
	case IMEXD_MSG_HEARTBEAT:
		free(p->msg.u.heartbeat.peers);
		break;
	case IMEXD_MSG_FREE:
		free(p->msg.u.free.bits);
		break;
	case IMEXD_MSG_PREPARE:
		free(p->msg.u.prepare.def.members);
		free(p->msg.u.prepare.def.channels);
		break;
	case IMEXD_MSG_SYNC:
		free(p->msg.u.sync.members);
		free(p->msg.u.sync.channels);
		break;
	}
	free(p);
}

static void msg_deep_copy(struct imexd_msg *d, const struct imexd_msg *m)
{
	struct imexd_def *dd = NULL;
	const struct imexd_def *sd = NULL;

	*d = *m;
	switch (m->type) {
	case IMEXD_MSG_HEARTBEAT:
		d->u.heartbeat.peers = malloc((m->u.heartbeat.n + 1) *
					      sizeof(*m->u.heartbeat.peers));
		memcpy(d->u.heartbeat.peers, m->u.heartbeat.peers,
		       m->u.heartbeat.n * sizeof(*m->u.heartbeat.peers));
		break;
	case IMEXD_MSG_FREE:
		d->u.free.bits = malloc(m->u.free.nbits / 8 + 1);
		memcpy(d->u.free.bits, m->u.free.bits, (m->u.free.nbits + 7) / 8);
		break;
	case IMEXD_MSG_PREPARE:
		dd = &d->u.prepare.def;
		sd = &m->u.prepare.def;
		break;
	case IMEXD_MSG_SYNC:
		dd = &d->u.sync;
		sd = &m->u.sync;
		break;
	}
	if (dd) {
		dd->members = malloc((sd->nmembers + 1) * sizeof(*sd->members));
		memcpy(dd->members, sd->members,
		       sd->nmembers * sizeof(*sd->members));
		dd->channels = malloc((sd->nchannels + 1) *
				      sizeof(*sd->channels));
		memcpy(dd->channels, sd->channels,
		       sd->nchannels * sizeof(*sd->channels));
	}
}

static struct sim_pkt *pkt_make(struct sim *s, uint64_t conn, int to,
				const struct imexd_msg *m)
{
	struct sim_pkt *p = calloc(1, sizeof(*p));

	if (!p)
		abort();
	p->conn = conn;
	p->to = to;
	/*
	 * Every message goes through the codec, as on the wire; the scale
	 * run samples heartbeats (143 names each, 20,000 a second).
	 */
	if (SIM_USE_CODEC && (!s->prm.scale || m->type != IMEXD_MSG_HEARTBEAT ||
			      !(s->st.msgs[IMEXD_MSG_HEARTBEAT] % 64))) {
		int err = codec_encode(m, &p->frame, &p->len);

		if (err) {
			sim_fail(s, "the codec refuses a %u message from the core: %d",
				 m->type, err);
			free(p);
			return NULL;
		}
		return p;
	}
	msg_deep_copy(&p->msg, m);
	return p;
}

static struct sim_pkt *pkt_dup(struct sim *s, const struct sim_pkt *o,
			       const struct imexd_msg *m)
{
	return pkt_make(s, o->conn, o->to, m);
}

/* ---- nodes ---- */

int sim_node_by_addr(const struct sim *s, const char *addr)
{
	unsigned int a, b, port;
	int i;

	if (sscanf(addr, "10.0.%u.%u:%u", &a, &b, &port) != 3 ||
	    port != SIM_PORT)
		return -1;
	i = (int)(a * 256 + b);
	return i < s->n ? i : -1;
}

bool sim_link_ok(const struct sim *s, int a, int b)
{
	return !s->cut[a * s->n + b];
}

/* Record when each pair became unable to talk, for the READY check. */
static void sim_pair_update(struct sim *s, int a, int b)
{
	bool ok = s->nodes[a].up && s->nodes[b].up && sim_link_ok(s, a, b);
	size_t k = (size_t)a * s->n + b, k2 = (size_t)b * s->n + a;

	if (ok && s->good_since[k] == SIM_NO_TIME) {
		s->good_since[k] = s->good_since[k2] = s->now;
	} else if (!ok && s->good_since[k] != SIM_NO_TIME) {
		s->good_since[k] = s->good_since[k2] = SIM_NO_TIME;
		s->bad_since[k] = s->bad_since[k2] = s->now;
	}
}

void sim_node_pairs(struct sim *s, int i)
{
	int j;

	for (j = 0; j < s->n; j++)
		if (j != i)
			sim_pair_update(s, i, j);
}

void sim_set_cut(struct sim *s, int a, int b, bool cut)
{
	s->cut[a * s->n + b] = s->cut[b * s->n + a] = cut;
	sim_pair_update(s, a, b);
}
static struct sim_conn *sim_conn_find(struct sim *s, uint64_t id)
{
	size_t lo = 0, hi = s->nconns;

	/* Ids grow with the array: binary search. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->conns[mid].id == id)
			return &s->conns[mid];
		if (s->conns[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static uint32_t sim_delay(struct sim *s)
{
	return rng_range(&s->rng, s->prm.delay_min, s->prm.delay_max);
}

void sim_connect(struct sim *s, int i, const char *addr)
{
	int t = sim_node_by_addr(s, addr);
	uint64_t d = sim_delay(s);
	struct sim_conn *c;

	if (t < 0 || t == i) {
		sim_push(s, s->now + 1, EV_CONN_FAILED, i, 0, 0, strdup(addr));
		return;
	}
	if (!s->nodes[t].powered || !sim_link_ok(s, i, t)) {
		/* Nobody answers the SYN: the caller's connect timeout. */
		sim_push(s, s->now + 1000, EV_CONN_FAILED, i, 0, 0,
			 strdup(addr));
		return;
	}
	if (!s->nodes[t].up) {
		/* The machine answers with RST: nothing listens. */
		sim_push(s, s->now + 2 * d, EV_CONN_FAILED, i, 0, 0,
			 strdup(addr));
		return;
	}
	if (s->nconns == s->conns_cap) {
		s->conns_cap = s->conns_cap ? s->conns_cap * 2 : 256;
		s->conns = realloc(s->conns, s->conns_cap * sizeof(*c));
		if (!s->conns)
			abort();
	}
	c = &s->conns[s->nconns++];
	memset(c, 0, sizeof(*c));
	c->id = ++s->next_conn;
	c->node[0] = i;
	c->node[1] = t;
	c->inc[0] = s->nodes[i].inc;
	c->inc[1] = s->nodes[t].inc;
	c->open[0] = c->open[1] = true;
	c->last[0] = c->last[1] = s->now + 2 * d;
	sim_push(s, s->now + 2 * d, EV_CONN_UP, i, c->id, 0, strdup(addr));
}

void sim_conn_up(struct sim *s, const struct sim_ev *e)
{
	struct sim_conn *c = sim_conn_find(s, e->a);
	int t;

	if (!c)
		return;
	t = c->node[1];
	if (c->dead || !c->open[0] || !c->open[1] ||
	    c->inc[1] != s->nodes[t].inc || !sim_link_ok(s, c->node[0], t)) {
		c->open[1] = c->open[0] = false;
		c->dead = true;
		if (s->nodes[c->node[0]].up && c->inc[0] == s->nodes[c->node[0]].inc) {
			imexd_core_conn_failed(s->nodes[c->node[0]].core,
					       s->now, e->p);
			sim_drain(s, c->node[0]);
		}
		return;
	}
	{
		char from[96];

		snprintf(from, sizeof(from), "%s:%u",
			 s->nodes[c->node[0]].addr,
			 (unsigned int)(40000 + (c->id % 20000)));
		c->up[1] = true;
		imexd_core_conn_up(s->nodes[t].core, s->now, c->id, from,
				   false);
		sim_drain(s, t);
	}
	if (!c->open[0])
		return;
	c->up[0] = true;
	imexd_core_conn_up(s->nodes[c->node[0]].core, s->now, c->id, e->p,
			   true);
	sim_drain(s, c->node[0]);
}

static void sim_close_end(struct sim *s, struct sim_conn *c, int side,
			  bool tell)
{
	int n = c->node[side];

	if (!c->open[side])
		return;
	c->open[side] = false;
	if (tell && c->up[side] && s->nodes[n].up &&
	    c->inc[side] == s->nodes[n].inc) {
		imexd_core_conn_down(s->nodes[n].core, s->now, c->id);
		sim_drain(s, n);
	}
	if (!c->open[!side])
		c->dead = true;
}

void sim_close(struct sim *s, int i, uint64_t id)
{
	struct sim_conn *c = sim_conn_find(s, id);
	int side;

	if (!c)
		return;
	side = c->node[1] == i;
	sim_close_end(s, c, side, false);
	if (c->open[!side])
		sim_push(s, SIM_MAX_T(s->now + sim_delay(s), c->last[!side]),
			 EV_FIN, c->node[!side], c->id, 0, NULL);
}

void sim_conn_reset(struct sim *s, size_t ci)
{
	struct sim_conn *c = &s->conns[ci];

	if (c->dead)
		return;
	s->st.resets++;
	sim_close_end(s, c, 0, true);
	c = &s->conns[ci];
	sim_close_end(s, c, 1, true);
}

void sim_fin(struct sim *s, const struct sim_ev *e)
{
	struct sim_conn *c = sim_conn_find(s, e->a);

	if (!c)
		return;
	sim_close_end(s, c, c->node[1] == e->node ? 1 : 0, true);
}

void sim_send(struct sim *s, int i, struct imexd_action *a)
{
	struct sim_conn *c = sim_conn_find(s, a->conn);
	struct sim_pkt *p;
	uint64_t at;
	int side, other;

	if (a->msg.type <= IMEXD_MSG_TYPE_MAX)
		s->st.msgs[a->msg.type]++;
	s->st.msgs_total++;
	if (s->tracking && a->msg.type <= IMEXD_MSG_TYPE_MAX)
		s->track_msgs[a->msg.type]++;
	if (s->prm.verbose > 1 && c)
		printf("%7llu.%03llu %s: send %s to %s on %llu\n",
		       (unsigned long long)(s->now / 1000),
		       (unsigned long long)(s->now % 1000), s->nodes[i].name,
		       a->msg.type == IMEXD_MSG_HEARTBEAT ? "HEARTBEAT" :
		       a->msg.type == IMEXD_MSG_SYNC ? "SYNC" : "msg",
		       s->nodes[c->node[c->node[0] == i]].name,
		       (unsigned long long)c->id);
	if (!c || c->dead)
		return;
	side = c->node[1] == i ? 1 : 0;
	if (!c->open[side] || !c->up[side])
		return;
	other = c->node[!side];
	if (!sim_link_ok(s, i, other))
		return;			/* the black hole of a partition */
	if (s->chaos && rng_chance(&s->rng, s->prm.p_drop)) {
		s->st.drops++;
		return;
	}
	p = pkt_make(s, c->id, other, &a->msg);
	if (!p)
		return;
	at = s->now + sim_delay(s);
	if (s->chaos && rng_chance(&s->rng, s->prm.p_reorder)) {
		at += rng_range(&s->rng, 1, 50);	/* may overtake */
	} else {
		at = SIM_MAX_T(at, c->last[!side]);
		c->last[!side] = at;
	}
	sim_push(s, at, EV_DELIVER, other, 0, 0, p);
	if (s->chaos && rng_chance(&s->rng, s->prm.p_dup)) {
		struct sim_pkt *q = pkt_dup(s, p, &a->msg);

		s->st.dups++;
		if (q)
			sim_push(s, at + rng_range(&s->rng, 0, 20), EV_DELIVER,
				 other, 0, 0, q);
	}
}

void sim_deliver(struct sim *s, const struct sim_ev *e)
{
	struct sim_pkt *p = e->p;
	struct sim_conn *c = sim_conn_find(s, p->conn);
	struct sim_node *nd = &s->nodes[e->node];
	int side;

	if (!c || !nd->up || e->inc != nd->inc)
		goto out;
	side = c->node[1] == e->node ? 1 : 0;
	if (!c->open[side] || !c->up[side] || c->inc[side] != nd->inc)
		goto out;
	if (p->frame) {
		struct imexd_msg m;
		const char *why = NULL;
		int err = codec_decode(p->frame, p->len, &m, &why);

		if (err) {
			sim_fail(s, "the codec refuses its own frame: %s",
				 why ? why : "?");
			goto out;
		}
		if (s->prm.verbose > 2) {
			printf("%7llu.%03llu %s: recv type %u on %llu:",
			       (unsigned long long)(s->now / 1000),
			       (unsigned long long)(s->now % 1000), nd->name,
			       m.type, (unsigned long long)p->conn);
			if (m.type == IMEXD_MSG_HEARTBEAT)
				for (int k = 0; k < m.u.heartbeat.n; k++)
					printf(" %s=%u", m.u.heartbeat.peers[k].name,
					       m.u.heartbeat.peers[k].state);
			printf("\n");
		}
		imexd_core_msg(nd->core, s->now, p->conn, &m);
		codec_free(&m);
	} else {
		imexd_core_msg(nd->core, s->now, p->conn, &p->msg);
	}
	sim_drain(s, e->node);
out:
	pkt_free(p);
}
