// SPDX-License-Identifier: GPL-2.0
/*
 * test_peers: duplicate connections, two peers objects driven against each
 * other over a simulated network in random orders (IMEXD_PEERS_SEED=N).
 */
#include "test_peers.h"

/* ---- duplicates: two peers objects against each other ------------------------- */

#define EV_MAX 256

enum ev_kind { EV_UP, EV_MSG, EV_DOWN };

struct ev {
	enum ev_kind kind;
	int side;			/* 0: a, 1: b */
	uint64_t conn;
	bool outbound;
	char addr[64];
	uint8_t frame[FRAME_MAX];
	size_t len;
};

struct pair {
	uint64_t id[2];			/* the connection on side 0 and 1 */
	int opener;
};

struct world {
	struct tp t[2];
	struct ev ev[EV_MAX];
	size_t nev;
	struct pair pairs[64];
	size_t npairs;
	uint64_t next_id;
	unsigned peer_downs[2];
};

static const struct imexd_roster_node roster2[] = {
	{ "a", "10.0.0.1:50100" },
	{ "b", "10.0.0.2:50100" },
};

static struct ev *ev_add(struct world *w, enum ev_kind kind, int side,
			 uint64_t conn)
{
	struct ev *e;

	assert_true(w->nev < EV_MAX);
	e = &w->ev[w->nev++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->side = side;
	e->conn = conn;
	return e;
}

/* The pair holding @conn on @side; its index, -1 if none. */
static int pair_of(const struct world *w, int side, uint64_t conn)
{
	size_t i;

	for (i = 0; i < w->npairs; i++)
		if (w->pairs[i].id[side] == conn)
			return (int)i;
	return -1;
}

/* Carry out what side @s asked for. */
static void w_actions(struct world *w, int s)
{
	struct tp *t = &w->t[s];
	size_t i;

	drain(t);
	for (i = 0; i < t->n; i++) {
		const struct rec *r = &t->r[i];
		struct ev *e;
		int q;

		switch (r->type) {
		case IMEXD_PEERS_CONNECT: {
			struct pair *pr = &w->pairs[w->npairs++];
			int o = 1 - s;

			assert_string_equal(r->addr, roster2[o].addr);
			pr->id[s] = ++w->next_id;
			pr->id[o] = ++w->next_id;
			pr->opener = s;
			e = ev_add(w, EV_UP, s, pr->id[s]);
			e->outbound = true;
			snprintf(e->addr, sizeof(e->addr), "%s", r->addr);
			e = ev_add(w, EV_UP, o, pr->id[o]);
			snprintf(e->addr, sizeof(e->addr), "10.0.0.%d:%u",
				 s + 1, (unsigned)(40000 + pr->id[s]));
			break;
		}
		case IMEXD_PEERS_SEND:
			q = pair_of(w, s, r->conn);
			assert_true(q >= 0);
			e = ev_add(w, EV_MSG, 1 - s, w->pairs[q].id[1 - s]);
			memcpy(e->frame, r->frame, r->len);
			e->len = r->len;
			break;
		case IMEXD_PEERS_CLOSE:
			q = pair_of(w, s, r->conn);
			if (q >= 0)
				ev_add(w, EV_DOWN, 1 - s, w->pairs[q].id[1 - s]);
			break;
		case IMEXD_PEERS_PEER_DOWN:
			w->peer_downs[s]++;
			break;
		default:
			break;
		}
	}
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/*
 * Deliver one event: a random one, but never ahead of an earlier event on
 * the same connection end (a stream keeps its order).
 */
static void w_step(struct world *w, unsigned *rs)
{
	size_t i = rnd(rs) % w->nev, j;
	struct imexd_msg m;
	struct ev e;

	for (j = 0; j < i; j++)
		if (w->ev[j].side == w->ev[i].side &&
		    w->ev[j].conn == w->ev[i].conn) {
			i = j;
			break;
		}
	e = w->ev[i];
	memmove(&w->ev[i], &w->ev[i + 1], (w->nev - i - 1) * sizeof(e));
	w->nev--;
	switch (e.kind) {
	case EV_UP:
		imexd_peers_conn_up(w->t[e.side].p, 0, e.conn, e.addr,
				    e.outbound, NULL);
		break;
	case EV_MSG:
		assert_int_equal(imexd_msg_decode(e.frame, e.len, &m, NULL), 0);
		imexd_peers_msg(w->t[e.side].p, 0, e.conn, &m);
		w_actions(w, e.side);	/* before m is freed */
		imexd_msg_free(&m);
		return;
	case EV_DOWN:
		imexd_peers_conn_down(w->t[e.side].p, 0, e.conn);
		break;
	}
	w_actions(w, e.side);
}

static void w_run(unsigned seed)
{
	struct world *w = calloc(1, sizeof(*w));
	struct imexd_peers_config c;
	unsigned rs = seed, steps = 0;
	struct imexd_msg m;
	uint64_t ca, cb;
	int q, s;

	assert_non_null(w);
	for (s = 0; s < 2; s++) {
		c = config(roster2[s].name);
		c.roster = roster2;
		c.n_roster = 2;
		tp_new(&w->t[s], &c);
	}
	/* Both dial at once; which starts first is part of the order. */
	s = (int)(rnd(&rs) & 1);
	imexd_peers_start(w->t[s].p, 0);
	w_actions(w, s);
	imexd_peers_start(w->t[1 - s].p, 0);
	w_actions(w, 1 - s);
	while (w->nev) {
		w_step(w, &rs);
		assert_true(++steps < 10000);
	}
	/* One connection, the same on both sides, opened by 'a'. */
	ca = imexd_peers_conn(w->t[0].p, "b");
	cb = imexd_peers_conn(w->t[1].p, "a");
	if (!ca || !cb)
		fail_msg("seed %u: not connected (a: %llu, b: %llu)", seed,
			 (unsigned long long)ca, (unsigned long long)cb);
	q = pair_of(w, 0, ca);
	assert_true(q >= 0);
	if (w->pairs[q].id[1] != cb || w->pairs[q].opener != 0)
		fail_msg("seed %u: a keeps %llu, b keeps %llu (opened by %d)",
			 seed, (unsigned long long)ca, (unsigned long long)cb,
			 w->pairs[q].opener);
	/* And it carries messages, with the proved name. */
	memset(&m, 0, sizeof(m));
	m.type = IMEXD_MSG_HEARTBEAT;
	assert_int_equal(imexd_peers_send(w->t[1].p, "a", &m), 0);
	w_actions(w, 1);
	assert_int_equal(w->nev, 1);
	w_step(w, &rs);
	assert_int_equal(count(&w->t[0], IMEXD_PEERS_MSG), 1);
	assert_string_equal(find(&w->t[0], IMEXD_PEERS_MSG, ca)->name, "b");
	for (s = 0; s < 2; s++)
		tp_free(&w->t[s]);
	free(w);
}

void test_duplicates_resolved_alike_on_both_sides(void **state)
{
	const char *env = getenv("IMEXD_PEERS_SEED");
	unsigned seed, i;

	(void)state;
	if (env) {
		seed = (unsigned)strtoul(env, NULL, 0);
		printf("duplicates: replaying seed %u\n", seed);
		w_run(seed);
		return;
	}
	seed = 20261124;
	printf("duplicates: seeds %u..%u (IMEXD_PEERS_SEED=N replays one)\n",
	       seed, seed + 499);
	for (i = 0; i < 500; i++)
		w_run(seed + i);
}

/* The same by hand: both bound, then the duplicate arrives on each side. */
void test_duplicate_replaces_with_repeated_peer_up(void **state)
{
	struct imexd_peers_config c = config("b");
	struct imexd_msg m;
	const struct rec *r;
	struct tp t;

	(void)state;
	tp_started(&t, &c);
	/* b dialled a (conn 1) and a answered: bound, opened by 'b'. */
	imexd_peers_conn_up(t.p, 0, 1, "10.0.0.1:50100", true, NULL);
	hello(&m, IMEXD_MSG_HELLO_ACK, "a", 1, PV, PV);
	imexd_peers_msg(t.p, 0, 1, &m);
	drain(&t);
	r = find(&t, IMEXD_PEERS_PEER_UP, 1);
	assert_non_null(r);
	assert_false(r->replaced);
	/* a's own dial (conn 2) arrives: opened by 'a' < 'b', it wins. */
	inbound_hello(&t, 0, 2, "10.0.0.1:40000", "a", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_null(find(&t, IMEXD_PEERS_PEER_DOWN, 0));
	r = find(&t, IMEXD_PEERS_PEER_UP, 2);
	assert_non_null(r);
	assert_false(r->restarted);
	/* a may have closed conn 1 before what b sent on it arrived (it
	 * bound conn 2 first): said, so that it can be sent again. */
	assert_true(r->replaced);
	assert_true(imexd_peers_conn(t.p, "a") == 2);
	/* The closed one's end is no news; no redial either. */
	imexd_peers_conn_down(t.p, 0, 1);
	drain(&t);
	assert_int_equal(t.n, 0);
	assert_true(imexd_peers_deadline(t.p) == UINT64_MAX);
	/* a dials again, same instance: it gave up on conn 2 (half open
	 * here), so the newer one it opened stays. */
	inbound_hello(&t, 0, 3, "10.0.0.1:40001", "a", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_null(find(&t, IMEXD_PEERS_PEER_DOWN, 0));
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 3));
	assert_true(imexd_peers_conn(t.p, "a") == 3);
	/* The survivor's end is the peer's. */
	imexd_peers_conn_down(t.p, 0, 3);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 3));
	tp_free(&t);
}
