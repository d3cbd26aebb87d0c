// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated world: the PRNG, the event queue, the nodes (daemon,
 * kernel, disk) and the wiring of each core's actions.  Daemon crash: its
 * connections get a FIN, its kernel rolls back prepared changes and marks
 * domains DOWN.  Reboot: the same, and the kernel forgets everything; the
 * store survives.  The network is sim_net.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"


/* ---- PRNG: xoshiro256**, seeded through splitmix64 ---- */

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_seed(struct sim_rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct sim_rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

uint32_t rng_below(struct sim_rng *r, uint32_t n)
{
	return n ? (uint32_t)((rng_next(r) >> 32) * n >> 32) : 0;
}

uint32_t rng_range(struct sim_rng *r, uint32_t lo, uint32_t hi)
{
	return lo + rng_below(r, hi - lo + 1);
}

bool rng_chance(struct sim_rng *r, double p)
{
	return p > 0 && (double)(rng_next(r) >> 11) / 9007199254740992.0 < p;
}

/* ---- event queue: a binary heap on (time, sequence) ---- */

static bool ev_before(const struct sim_ev *a, const struct sim_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void sim_push(struct sim *s, uint64_t t, uint8_t type, int node, uint64_t a,
	      uint64_t b, void *p)
{
	struct sim_ev e = { .t = t, .seq = s->seq++, .type = type,
			    .node = node, .a = a, .b = b, .p = p };
	size_t i;

	if (node >= 0)
		e.inc = s->nodes[node].inc;
	if (s->nheap == s->heap_cap) {
		s->heap_cap = s->heap_cap ? s->heap_cap * 2 : 1024;
		s->heap = realloc(s->heap, s->heap_cap * sizeof(e));
		if (!s->heap)
			abort();
	}
	i = s->nheap++;
	while (i && ev_before(&e, &s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = e;
}

static struct sim_ev sim_pop(struct sim *s)
{
	struct sim_ev top = s->heap[0], last = s->heap[--s->nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && ev_before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!ev_before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

void sim_fail(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failure[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->failure, sizeof(s->failure), fmt, ap);
	va_end(ap);
	s->fail_step = s->st.events;
	s->fail_time = s->now;
}

static void sim_hash(struct sim *s, uint64_t v)
{
	s->hash = (s->hash ^ v) * 0x100000001b3ULL;
}

/* ---- messages ---- */

static void sim_schedule_timer(struct sim *s, int i);


void sim_node_start(struct sim *s, int i)
{
	struct sim_node *nd = &s->nodes[i];
	struct imexd_def *kdefs;
	size_t nk, j;

	nd->inc++;
	nd->up = true;
	nd->powered = true;
	nd->timer_at = SIM_NO_TIME;
	do {
		nd->cfg.epoch = rng_next(&s->rng);
	} while (!nd->cfg.epoch);
	nd->core = imexd_core_new(&nd->cfg);
	if (!nd->core)
		abort();
	nd->kernel.manager = true;
	nk = kmodel_defs(&nd->kernel, &kdefs);
	imexd_core_start(nd->core, s->now, kdefs, nk, nd->store.defs,
			 nd->store.n);
	for (j = 0; j < nk; j++) {
		free(kdefs[j].members);
		free(kdefs[j].channels);
	}
	free(kdefs);
	sim_node_pairs(s, i);
	sim_drain(s, i);
}

void sim_node_crash(struct sim *s, int i, bool reboot)
{
	struct sim_node *nd = &s->nodes[i];
	size_t c;

	if (!nd->up && !reboot)
		return;
	if (nd->up) {
		imexd_core_free(nd->core);
		nd->core = NULL;
		kmodel_detach(&nd->kernel);
	}
	nd->up = false;
	nd->inc++;
	nd->down_since = s->now;
	if (reboot) {
		kmodel_reboot(&nd->kernel);
		nd->powered = false;
		s->st.reboots++;
	} else {
		s->st.restarts++;
	}
	for (c = 0; c < s->nconns; c++) {
		struct sim_conn *cn = &s->conns[c];
		int side;

		if (cn->dead)
			continue;
		for (side = 0; side < 2; side++) {
			if (cn->node[side] != i || !cn->open[side])
				continue;
			cn->open[side] = false;
			/* A dead process's socket says FIN; a dead machine
			 * says nothing: peers notice missing heartbeats. */
			if (!reboot && cn->open[!side])
				sim_push(s, SIM_MAX_T(s->now + s->prm.delay_min,
						       cn->last[!side]),
					 EV_FIN, cn->node[!side], cn->id, 0,
					 NULL);
		}
	}
	for (c = 0; c < s->nreqs; c++)
		if (s->reqs[c].node == i && !s->reqs[c].done)
			s->reqs[c].done = true;	/* the kernel fails it */
	sim_node_pairs(s, i);
}

/* ---- connections ---- */


/* ---- actions ---- */

struct sim_kdone {
	int err;
	char msg[IMEX_MESSAGE_MAX];
};

static void sim_kernel_answer(struct sim *s, int i, uint64_t op, int err)
{
	struct sim_kdone *kd = malloc(sizeof(*kd));
	uint64_t d = s->prm.kdelay_max ? rng_below(&s->rng,
						   s->prm.kdelay_max + 1) : 0;

	if (!kd)
		abort();
	kd->err = err;
	snprintf(kd->msg, sizeof(kd->msg), "%s", s->nodes[i].kernel.msg);
	sim_push(s, s->now + d, EV_KDONE, i, op, 0, kd);
}

static void sim_kexpire_schedule(struct sim *s, int i)
{
	struct sim_node *nd = &s->nodes[i];
	uint64_t t = kmodel_expire(&nd->kernel, s->now);

	if (t != SIM_NO_TIME && (nd->kexpire_at == SIM_NO_TIME ||
				 t < nd->kexpire_at || nd->kexpire_at < s->now)) {
		nd->kexpire_at = t;
		sim_push(s, t, EV_KEXPIRE, i, 0, 0, NULL);
	}
}

static void sim_action(struct sim *s, int i, struct imexd_action *a)
{
	struct sim_node *nd = &s->nodes[i];
	size_t r;
	int err;

	sim_hash(s, a->type);
	switch (a->type) {
	case IMEXD_ACT_CONNECT:
		sim_connect(s, i, a->addr);
		break;
	case IMEXD_ACT_CLOSE:
		sim_close(s, i, a->conn);
		break;
	case IMEXD_ACT_SEND:
		sim_send(s, i, a);
		break;
	case IMEXD_ACT_KERNEL_PREPARE:
		err = kmodel_prepare(&nd->kernel, s->now, a);
		sim_kexpire_schedule(s, i);
		sim_kernel_answer(s, i, a->op_id, err);
		break;
	case IMEXD_ACT_KERNEL_COMMIT:
		sim_kernel_answer(s, i, a->op_id,
				  kmodel_commit(&nd->kernel, a->change_id));
		break;
	case IMEXD_ACT_KERNEL_ABORT:
		sim_kernel_answer(s, i, a->op_id,
				  kmodel_abort(&nd->kernel, a->change_id));
		break;
	case IMEXD_ACT_KERNEL_STATUS:
		if (kmodel_status(&nd->kernel, &a->status))
			s->st.status_refused++;
		break;
	case IMEXD_ACT_REQUEST_DONE:
		for (r = 0; r < s->nreqs; r++)
			if (s->reqs[r].id == a->req_id)
				break;
		if (r == s->nreqs || s->reqs[r].node != i) {
			sim_fail(s, "node %s: REQUEST_DONE for unknown request %llu",
				 nd->name, (unsigned long long)a->req_id);
			break;
		}
		if (s->reqs[r].done && s->reqs[r].inc == nd->inc) {
			sim_fail(s, "node %s: request %llu done twice",
				 nd->name, (unsigned long long)a->req_id);
			break;
		}
		s->reqs[r].done = true;
		s->reqs[r].error = a->error;
		if (a->error) {
			s->st.req_err++;
			if (a->error < 160)
				s->st.errors[a->error]++;
		} else {
			s->st.req_ok++;
		}
		if (s->tracking && a->req_id == s->track_req) {
			s->track_done = s->now;
			s->tracking = false;
		}
		if (s->prm.verbose)
			printf("%7llu.%03llu %s: request %llu (%s) done: %d %s\n",
			       (unsigned long long)(s->now / 1000),
			       (unsigned long long)(s->now % 1000), nd->name,
			       (unsigned long long)a->req_id, s->reqs[r].name,
			       a->error, a->text);
		break;
	case IMEXD_ACT_STORE_DEF:
		store_put(&nd->store, &a->def);
		break;
	case IMEXD_ACT_STORE_REMOVE:
		store_remove(&nd->store, a->def.uuid);
		break;
	case IMEXD_ACT_PEER_RESTARTED:
		s->st.peer_restarted++;
		break;
	case IMEXD_ACT_IMPORT_CHECK:
		/* The simulated kernel holds no exports. */
		imexd_core_import_checked(nd->core, s->now, a->op_id, ENOENT,
					  NULL, 0);
		break;
	case IMEXD_ACT_IMPORT_DONE:
	case IMEXD_ACT_IMPORT_REVOKE:
		break;
	case IMEXD_ACT_LOG:
		if (s->prm.verbose)
			printf("%7llu.%03llu %s: %s\n",
			       (unsigned long long)(s->now / 1000),
			       (unsigned long long)(s->now % 1000), nd->name,
			       a->text);
		break;
	}
}

void sim_drain(struct sim *s, int i)
{
	struct imexd_action a;

	while (s->nodes[i].up && imexd_core_next_action(s->nodes[i].core, &a)) {
		sim_action(s, i, &a);
		imexd_action_free(&a);
	}
	if (s->nodes[i].up)
		sim_schedule_timer(s, i);
}

static void sim_schedule_timer(struct sim *s, int i)
{
	struct sim_node *nd = &s->nodes[i];
	uint64_t t = imexd_core_next_deadline(nd->core);

	if (t == SIM_NO_TIME)
		return;
	if (t < s->now)
		t = s->now;
	if (nd->timer_at != SIM_NO_TIME && nd->timer_at <= t)
		return;
	nd->timer_at = t;
	sim_push(s, t, EV_TIMER, i, 0, 0, NULL);
}

void sim_request(struct sim *s, int i, const struct imexd_request *r)
{
	struct sim_req *q;

	if (s->nreqs == s->reqs_cap) {
		s->reqs_cap = s->reqs_cap ? s->reqs_cap * 2 : 64;
		s->reqs = realloc(s->reqs, s->reqs_cap * sizeof(*q));
		if (!s->reqs)
			abort();
	}
	q = &s->reqs[s->nreqs++];
	memset(q, 0, sizeof(*q));
	q->id = r->req_id;
	q->node = i;
	q->inc = s->nodes[i].inc;
	q->cmd = r->cmd;
	q->issued = s->now;
	snprintf(q->name, sizeof(q->name), "%s", r->name);
	s->st.requests++;
	if (s->prm.verbose)
		printf("%7llu.%03llu %s: request %llu: cmd %u on '%s'\n",
		       (unsigned long long)(s->now / 1000),
		       (unsigned long long)(s->now % 1000), s->nodes[i].name,
		       (unsigned long long)r->req_id, r->cmd, r->name);
	imexd_core_request(s->nodes[i].core, s->now, r);
	sim_drain(s, i);
}

/* ---- the loop ---- */

bool sim_step(struct sim *s)
{
	struct sim_ev e;
	struct sim_node *nd;

	if (!s->nheap)
		return false;
	e = sim_pop(s);
	s->now = e.t;
	s->st.events++;
	sim_hash(s, e.t);
	sim_hash(s, ((uint64_t)e.type << 32) | (uint32_t)e.node);
	nd = e.node >= 0 ? &s->nodes[e.node] : NULL;
	/* Only the world's own events (load, faults, cuts, checks) have none. */
	if (!nd && e.type != EV_LOAD && e.type != EV_FAULT && e.type != EV_HEAL &&
	    e.type != EV_CUT_END && e.type != EV_CHECK)
		abort();
	switch (e.type) {
	case EV_TIMER:
		if (!nd->up || e.inc != nd->inc || e.t != nd->timer_at)
			break;
		nd->timer_at = SIM_NO_TIME;
		/* A core that keeps asking for the same instant is stuck. */
		if (e.t == nd->last_timer) {
			if (++nd->same_timer > 10000) {
				sim_fail(s, "node %s: the core asks for its timer again and again at %llu ms",
					 nd->name, (unsigned long long)e.t);
				break;
			}
		} else {
			nd->last_timer = e.t;
			nd->same_timer = 0;
		}
		imexd_core_timer(nd->core, s->now);
		sim_drain(s, e.node);
		break;
	case EV_CONN_UP:
		if (nd->up && e.inc == nd->inc)
			sim_conn_up(s, &e);
		free(e.p);
		break;
	case EV_CONN_FAILED:
		if (nd->up && e.inc == nd->inc) {
			imexd_core_conn_failed(nd->core, s->now, e.p);
			sim_drain(s, e.node);
		}
		free(e.p);
		break;
	case EV_FIN:
		sim_fin(s, &e);
		break;
	case EV_DELIVER:
		sim_deliver(s, &e);
		break;
	case EV_KDONE: {
		struct sim_kdone *kd = e.p;

		if (nd->up && e.inc == nd->inc) {
			imexd_core_kernel_done(nd->core, s->now, e.a, kd->err,
					       kd->msg);
			sim_drain(s, e.node);
		}
		free(kd);
		break;
	}
	case EV_KEXPIRE:
		if (e.t == nd->kexpire_at) {
			nd->kexpire_at = SIM_NO_TIME;
			sim_kexpire_schedule(s, e.node);
		}
		break;
	case EV_LOAD:
		load_event(s);
		break;
	case EV_FAULT:
		fault_event(s);
		break;
	case EV_RESTART:
		if (!nd->up && e.inc == nd->inc)
			sim_node_start(s, e.node);
		break;
	case EV_HEAL:
		load_heal_all(s);
		break;
	case EV_CUT_END:
		sim_set_cut(s, (int)e.a, (int)e.b, false);
		break;
	case EV_CHECK:
		check_ready(s);
		if (!s->quiet || s->now + 100 < s->prm.chaos_ms + s->prm.quiesce_ms)
			sim_push(s, s->now + 100, EV_CHECK, -1, 0, 0, NULL);
		break;
	}
	if (nd)
		check_node(s, e.node, false);
	return true;
}

void sim_run_until(struct sim *s, uint64_t t)
{
	while (s->nheap && s->heap[0].t <= t && !s->failure[0])
		sim_step(s);
	if (s->now < t)
		s->now = t;
}

void sim_init(struct sim *s, const struct sim_params *prm)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->prm = *prm;
	rng_seed(&s->rng, prm->seed);
	s->n = prm->nodes;
	s->hash = 0xcbf29ce484222325ULL;
	s->nodes = calloc(s->n, sizeof(*s->nodes));
	s->cut = calloc((size_t)s->n * s->n, sizeof(*s->cut));
	s->bad_since = calloc((size_t)s->n * s->n, sizeof(*s->bad_since));
	s->good_since = malloc((size_t)s->n * s->n * sizeof(*s->good_since));
	s->owner = calloc(prm->max_channels + 1, sizeof(*s->owner));
	if (!s->nodes || !s->cut || !s->bad_since || !s->good_since || !s->owner)
		abort();
	for (i = 0; i < s->n * s->n; i++)
		s->good_since[i] = SIM_NO_TIME;
	for (i = 0; i < s->n; i++) {
		struct sim_node *nd = &s->nodes[i];
		struct imexd_core_cfg *c = &nd->cfg;
		uint64_t u = rng_next(&s->rng), v = rng_next(&s->rng);

		nd->idx = i;
		snprintf(nd->name, sizeof(nd->name), "n%03d", i);
		snprintf(nd->addr, sizeof(nd->addr), "10.0.%d.%d", i / 256,
			 i % 256);
		nd->timer_at = SIM_NO_TIME;
		nd->kexpire_at = SIM_NO_TIME;
		snprintf(c->node_name, sizeof(c->node_name), "%s", nd->name);
		memcpy(c->node_uuid, &u, 8);
		memcpy(c->node_uuid + 8, &v, 8);
		c->max_channels = prm->max_channels;
		memset(c->fabric_uuid, 0xab, 16);
		c->partition = 7;
		c->grace_ms = 10000;
		c->default_port = SIM_PORT;
		kmodel_init(&nd->kernel, nd->name, c->fabric_uuid, c->partition,
			    prm->max_channels);
	}
}

void sim_free(struct sim *s)
{
	int i;

	for (size_t k = 0; k < s->nheap; k++) {
		if (s->heap[k].type == EV_DELIVER)
			pkt_free(s->heap[k].p);
		else
			free(s->heap[k].p);
	}
	s->nheap = 0;
	free(s->heap);
	for (i = 0; i < s->n; i++) {
		if (s->nodes[i].core)
			imexd_core_free(s->nodes[i].core);
		kmodel_free(&s->nodes[i].kernel);
		store_free(&s->nodes[i].store);
	}
	free(s->nodes);
	free(s->conns);
	free(s->reqs);
	free(s->cut);
	free(s->bad_since);
	free(s->good_since);
	free(s->owner);
}
