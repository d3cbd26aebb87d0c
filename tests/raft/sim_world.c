// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated world of agree nodes: see sim_world.h.  Internal errors
 * (an input refused, a disk that will not load) abort with the seed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_world_internal.h"

static void *xgrow(void *p, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 16;
	p = realloc(p, *cap * sz);
	if (!p)
		abort();
	return p;
}

static void *xdup(const void *p, size_t len)
{
	void *d = malloc(len ? len : 1);

	if (!d)
		abort();
	if (len)
		memcpy(d, p, len);
	return d;
}

unsigned sw_rand(struct sw *w, unsigned n)
{
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return n ? (unsigned)((w->rng * 2685821657736338717ULL) >> 33) % n : 0;
}

uint64_t sw_now(const struct sw *w) { return w->now; }
unsigned sw_n(const struct sw *w) { return w->cfg.n; }
unsigned sw_seed(const struct sw *w) { return w->cfg.seed; }
const char *sw_name(const struct sw *w, unsigned i) { return w->names[i]; }
unsigned sw_violations(const struct sw *w) { return w->violations; }
bool sw_up(const struct sw *w, unsigned i) { return w->nodes[i].up; }
struct imexd_agree *sw_agree(struct sw *w, unsigned i) { return w->nodes[i].ag; }
const struct sw_stats *sw_stats(const struct sw *w) { return &w->st; }
size_t sw_nreqs(const struct sw *w) { return w->n_reqs; }
struct sw_req *sw_req_at(struct sw *w, size_t k) { return w->reqs[k]; }

void sw_violation(struct sw *w, const char *fmt, ...)
{
	va_list ap;

	w->violations++;
	if (w->cfg.quiet && w->violations > 3)
		return;
	fprintf(stderr, "sim: %s at %llu ms (IMEX_SEED=%u, %u nodes): ",
		w->cfg.selftest ? "expected violation (self-test)" : "VIOLATION",
		(unsigned long long)w->now, w->cfg.seed, w->cfg.n);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const struct imexd_def *sw_kernel(const struct sw *w, unsigned i, size_t *n)
{
	*n = w->nodes[i].nk;
	return w->nodes[i].k;
}

/* ---- network ------------------------------------------------------------- */

static struct sw_msg *msg_new(struct sw *w, unsigned from, unsigned to,
			      int kind)
{
	struct sw_msg *m;

	w->msgs = xgrow(w->msgs, &w->cap_msgs, w->n_msgs, sizeof(*w->msgs));
	m = &w->msgs[w->n_msgs++];
	memset(m, 0, sizeof(*m));
	m->from = from;
	m->to = to;
	m->kind = kind;
	m->seq = w->seq++;
	m->due = w->now + w->cfg.latency_ms + sw_rand(w, w->cfg.jitter_ms + 1);
	w->st.msgs++;
	return m;
}

static void msg_free(struct sw_msg *m)
{
	free(m->data);
	free(m->message);
	imexd_def_free(&m->def);
}

static int node_of(const struct sw *w, const char *name)
{
	unsigned i;

	for (i = 0; i < w->cfg.n; i++)
		if (!strcmp(w->names[i], name))
			return (int)i;
	return -1;
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

static bool link_down(const struct sw *w, unsigned from, unsigned to,
		      int kind)
{
	if (w->cfg.leak_requests && kind != M_RAFT)
		return w->cut[from][to];
	return w->cut[from][to] || (w->epoch && w->side[from] != w->side[to]);
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

/* ---- the simulated kernel ------------------------------------------------ */

static bool has_channel(const struct imexd_def *d, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < d->nchannels; i++)
		if (d->channels[i].id == id)
			return true;
	return false;
}

static void kernel_check(struct sw *w, unsigned i)
{
	const struct sw_node *nd = &w->nodes[i];
	size_t a, b;
	uint32_t c;

	for (a = 0; a < nd->nk; a++)
		for (b = a + 1; b < nd->nk; b++)
			for (c = 0; c < nd->k[a].nchannels; c++)
				if (has_channel(&nd->k[b], nd->k[a].channels[c].id))
					sw_violation(w, "%s: channel %u in domains %s and %s",
						     nd->name, nd->k[a].channels[c].id,
						     nd->k[a].name, nd->k[b].name);
}

/* What imex.ko refuses, it refuses here. */
static int kernel_step(struct sw *w, unsigned i)
{
	struct sw_node *nd = &w->nodes[i];
	const struct imexd_def *d = &nd->kdef;
	size_t j, at = nd->nk;
	uint32_t c;

	w->st.kernel_steps++;
	for (j = 0; j < nd->nk; j++)
		if (!memcmp(nd->k[j].uuid, d->uuid, 16))
			at = j;
	if (nd->ktype == IMEXD_REC_REMOVE) {
		if (at == nd->nk || strcmp(nd->k[at].name, d->name))
			return ENOENT;
		imexd_def_free(&nd->k[at]);
		nd->k[at] = nd->k[--nd->nk];
		return 0;
	}
	if (!imexd_def_has_member(d, nd->name))
		return EINVAL;
	for (j = 0; j < nd->nk; j++) {
		if (j == at)
			continue;
		if (!strcmp(nd->k[j].name, d->name))
			return EEXIST;
		for (c = 0; c < d->nchannels; c++)
			if (has_channel(&nd->k[j], d->channels[c].id))
				return EADDRINUSE;
	}
	if (at == nd->nk) {
		nd->k = realloc(nd->k, (nd->nk + 1) * sizeof(*nd->k));
		CHECK(nd->k);
		memset(&nd->k[nd->nk++], 0, sizeof(*nd->k));
	} else {
		imexd_def_free(&nd->k[at]);
	}
	CHECK(!imexd_def_copy(&nd->k[at], d));
	return 0;
}

/* ---- nodes --------------------------------------------------------------- */

static struct sw_req *req_find(struct sw *w, uint64_t tag)
{
	return tag >= 1 && tag <= w->n_reqs ? w->reqs[tag - 1] : NULL;
}

static void record_apply(struct sw *w, unsigned i,
			 const struct imexd_agree_action *a)
{
	struct sw_chosen *c;

	sw_seen_commit(w, i, a->index);
	w->st.applied++;
	if (getenv("SIM_VERBOSE"))
		fprintf(stderr, "%llu %s: applied %llu (%s, %zu bytes, %s)\n",
			(unsigned long long)w->now, w->names[i],
			(unsigned long long)a->index,
			imexd_cmd_type_name(a->len > 1 ? a->data[1] : 0), a->len,
			a->error ? a->message : "ok");
	if (a->index >= w->n_chosen) {
		size_t n = a->index + 64;

		w->chosen = realloc(w->chosen, n * sizeof(*w->chosen));
		CHECK(w->chosen);
		memset(w->chosen + w->n_chosen, 0,
		       (n - w->n_chosen) * sizeof(*w->chosen));
		w->n_chosen = n;
	}
	c = &w->chosen[a->index];
	if (!c->data) {
		c->data = xdup(a->data, a->len);
		c->len = a->len;
	} else if (c->len != a->len || memcmp(c->data, a->data, a->len)) {
		sw_violation(w, "%s applied a different command at index %llu",
			     w->names[i], (unsigned long long)a->index);
	}
}

static void record_done(struct sw *w, unsigned i,
			const struct imexd_agree_action *a)
{
	struct sw_req *r = req_find(w, a->tag);

	CHECK(r && r->node == i);
	if (r->done) {
		sw_violation(w, "request %llu answered twice",
			     (unsigned long long)a->tag);
		return;
	}
	r->done = true;
	r->error = a->error;
	r->index = a->index;
	snprintf(r->message, sizeof(r->message), "%s", a->message);
	if (a->def && a->def->name[0])
		CHECK(!imexd_def_copy(&r->def, a->def));
	if (a->error) {
		w->st.failed++;
		return;
	}
	w->st.acked++;
	if (!a->index)
		sw_violation(w, "request %llu acknowledged without a log index",
			     (unsigned long long)a->tag);
	else
		sw_check_ack(w, r);
}

static void node_stop(struct sw *w, unsigned i, bool torn)
{
	struct sw_node *nd = &w->nodes[i];

	if (!nd->up)
		return;
	if (getenv("SIM_VERBOSE"))
		fprintf(stderr, "%llu %s: crash\n", (unsigned long long)w->now,
			nd->name);
	/* The requests it had not answered die with it (the caller sees
	 * its connection drop). */
	for (size_t k = 0; k < w->n_reqs; k++) {
		struct sw_req *r = w->reqs[k];

		if (r->node == i && !r->done) {
			r->done = true;
			r->error = ECONNRESET;
			snprintf(r->message, sizeof(r->message), "node crashed");
		}
	}
	imexd_agree_free(nd->ag);
	nd->ag = NULL;
	nd->dead = nd->log;
	nd->log = NULL;
	imexd_raftlog_mem_crash(nd->disk, torn ? sw_rand(w, 64) : 0);
	nd->up = false;
	nd->arm = SW_CRASH_NONE;
	if (nd->kpending)
		imexd_def_free(&nd->kdef);
	nd->kpending = false;
	w->st.crashes++;
}

void sw_crash(struct sw *w, unsigned i)
{
	node_stop(w, i, true);
}

void sw_arm(struct sw *w, unsigned i, enum sw_crash_point p)
{
	w->nodes[i].arm = p;
}

static void drain(struct sw *w, unsigned i);

static void done_input(struct sw *w, unsigned i, int rv)
{
	CHECK(rv == 0);
	drain(w, i);
}

/* Queue a message; raft messages may be duplicated. */
static void send(struct sw *w, unsigned i, const struct imexd_agree_action *a,
		 int kind)
{
	int to = node_of(w, a->to);
	unsigned copies = 1, k;

	CHECK(to >= 0);
	if (kind == M_RAFT && sw_rand(w, 100) < w->cfg.dup_pct)
		copies = 2;
	for (k = 0; k < copies; k++) {
		struct sw_msg *m = msg_new(w, i, (unsigned)to, kind);

		m->data = a->data ? xdup(a->data, a->len) : NULL;
		m->len = a->len;
		m->tag = a->tag;
		m->error = a->error;
		m->index = a->index;
		if (kind == M_REPLY) {
			m->message = strdup(a->message);
			CHECK(m->message);
			if (a->def && a->def->name[0])
				CHECK(!imexd_def_copy(&m->def, a->def));
		}
	}
}

static void drain(struct sw *w, unsigned i)
{
	struct sw_node *nd = &w->nodes[i];
	struct imexd_agree_action a;
	int err;

	for (;;) {
		const struct imexd_cons *cons = imexd_agree_cons(nd->ag);

		/* Before a DONE it may carry: a leader commits and answers in
		 * the same input. */
		if (cons)
			sw_seen_commit(w, i, imexd_cons_commit(cons));
		while (imexd_agree_next(nd->ag, &a)) {
			switch (a.type) {
			case IMEXD_AGREE_SEND:
				send(w, i, &a, M_RAFT);
				break;
			case IMEXD_AGREE_FORWARD:
				send(w, i, &a, M_FWD);
				break;
			case IMEXD_AGREE_REPLY:
				send(w, i, &a, M_REPLY);
				break;
			case IMEXD_AGREE_DONE:
				record_done(w, i, &a);
				break;
			case IMEXD_AGREE_KERNEL:
				CHECK(!nd->kpending);
				if (nd->arm == SW_CRASH_BEFORE_KERNEL) {
					sw_crash(w, i);
					return;
				}
				nd->kpending = true;
				nd->ktype = a.step;
				CHECK(!imexd_def_copy(&nd->kdef, a.def));
				break;
			case IMEXD_AGREE_APPLIED:
				record_apply(w, i, &a);
				if (nd->arm == SW_CRASH_AFTER_APPLY) {
					sw_crash(w, i);
					return;
				}
				break;
			case IMEXD_AGREE_LOG:
				if (a.level <= 3 && !strncmp(a.message, "raft server stopped", 19))
					w->st.storage_stops++;
				if (getenv("SIM_VERBOSE"))
					fprintf(stderr, "%llu %s: %s\n",
						(unsigned long long)w->now,
						nd->name, a.message);
				break;
			case IMEXD_AGREE_STATE:
				if (getenv("SIM_VERBOSE"))
				{
					char vs[256] = "";
					unsigned q;
					const struct imexd_cons *c = imexd_agree_cons(nd->ag);

					for (q = 0; c && q < w->cfg.n; q++)
						if (imexd_cons_role(c, imexd_cons_id(c, w->names[q])) == RAFT_VOTER)
							snprintf(vs + strlen(vs), sizeof(vs) - strlen(vs), " %u", q);
					fprintf(stderr, "%llu %s: state %d term %llu leader %s voters%s\n",
						(unsigned long long)w->now, nd->name,
						(int)a.state, (unsigned long long)a.term,
						a.leader ? a.leader : "-", vs);
				}
				break;
			}
		}
		if (!nd->kpending)
			return;
		err = kernel_step(w, i);
		if (err)
			w->st.kernel_refused++;
		imexd_def_free(&nd->kdef);
		nd->kpending = false;
		kernel_check(w, i);
		if (nd->arm == SW_CRASH_MID_RECONCILE) {
			sw_crash(w, i);
			return;
		}
		CHECK(imexd_agree_kernel_done(nd->ag, w->now, err, nd->k,
					      nd->nk) == 0);
	}
}

void sw_restart(struct sw *w, unsigned i)
{
	struct sw_node *nd = &w->nodes[i];
	struct imexd_agree_config ac = {
		.roster = w->names,
		.n_roster = w->cfg.n,
		.self = nd->name,
		.election_timeout_ms = w->cfg.et_ms,
		.lost_voter_timeouts = 10,
		.snapshot_threshold = w->cfg.snapshot_threshold,
		.snapshot_trailing = w->cfg.snapshot_trailing,
		.seed = w->cfg.seed * 7919u + i * 104729u + nd->restarts * 31u,
	};
	struct imexd_raftlog_io io;
	char note[IMEXD_RAFTLOG_MSG_MAX], err[IMEXD_RAFTLOG_MSG_MAX];

	if (nd->up)
		return;
	nd->restarts++;
	if (getenv("SIM_VERBOSE"))
		fprintf(stderr, "%llu %s: restart\n", (unsigned long long)w->now,
			nd->name);
	imexd_raftlog_close(nd->dead);
	nd->dead = NULL;
	ac.identity.uuid[0] = 0x10;
	ac.identity.uuid[1] = (uint8_t)i;
	ac.identity.uuid[2] = (uint8_t)(i >> 8);
	memset(ac.identity.fabric_uuid, 0xfa, 16);
	ac.identity.max_channels = w->cfg.max_channels;
	imexd_raftlog_mem_io(nd->disk, &io);
	if (imexd_raftlog_open(&nd->log, &io, note, sizeof(note), err,
			       sizeof(err))) {
		sw_violation(w, "%s: storage does not load: %s", nd->name, err);
		return;
	}
	if (getenv("SIM_VERBOSE")) {
		struct raft_buffer sd;
		const struct raft_snapshot_metadata *sm =
			imexd_raftlog_snapshot(nd->log, &sd);
		char vs[128] = "";
		unsigned q;

		for (q = 0; sm && q < sm->configuration.n; q++)
			if (sm->configuration.servers[q].role == RAFT_VOTER)
				snprintf(vs + strlen(vs), sizeof(vs) - strlen(vs),
					 " %llu", sm->configuration.servers[q].id - 1);
		fprintf(stderr, "%llu %s: disk: snapshot %llu (conf %llu:%s), entries %llu..%llu\n",
			(unsigned long long)w->now, nd->name,
			sm ? (unsigned long long)sm->index : 0ULL,
			sm ? (unsigned long long)sm->configuration_index : 0ULL, vs,
			(unsigned long long)imexd_raftlog_start_index(nd->log),
			(unsigned long long)imexd_raftlog_last_index(nd->log));
	}
	ac.log = nd->log;
	CHECK(imexd_agree_new(&ac, &nd->ag) == 0);
	nd->up = true;
	done_input(w, i, imexd_agree_start(nd->ag, w->now, nd->k, nd->nk));
}

void sw_disk_full(struct sw *w, unsigned i, bool full)
{
	struct sw_node *nd = &w->nodes[i];

	nd->full = full;
	imexd_raftlog_mem_set_limit(nd->disk, full ?
				    imexd_raftlog_mem_used(nd->disk) + 1 : 0);
}

void sw_disk_lose(struct sw *w, unsigned i)
{
	struct sw_node *nd = &w->nodes[i];

	node_stop(w, i, false);
	imexd_raftlog_close(nd->dead);
	nd->dead = NULL;
	imexd_raftlog_mem_free(nd->disk);
	nd->disk = imexd_raftlog_mem_new();
	CHECK(nd->disk);
	nd->full = false;
}

int sw_leader(struct sw *w)
{
	raft_term best = 0;
	int l = -1;
	unsigned i;

	for (i = 0; i < w->cfg.n; i++) {
		const struct imexd_cons *c;

		if (!w->nodes[i].up || !(c = imexd_agree_cons(w->nodes[i].ag)))
			continue;
		if (imexd_cons_state(c) == RAFT_LEADER &&
		    imexd_cons_term(c) > best) {
			best = imexd_cons_term(c);
			l = (int)i;
		}
	}
	return l;
}

struct sw_req *sw_request(struct sw *w, unsigned i, const struct imexd_cmd *cmd)
{
	struct sw_req *r;

	if (!w->nodes[i].up)
		return NULL;
	w->reqs = xgrow(w->reqs, &w->cap_reqs, w->n_reqs,
			sizeof(struct sw_req *));
	r = calloc(1, sizeof(*r));
	CHECK(r);
	w->reqs[w->n_reqs++] = r;
	r->tag = w->n_reqs;
	r->node = i;
	r->type = cmd->type;
	r->t_enter = w->now;
	r->partition = w->epoch;
	done_input(w, i, imexd_agree_request(w->nodes[i].ag, w->now, cmd,
					     r->tag));
	return r;
}

/* ---- the event loop ------------------------------------------------------ */

static void deliver(struct sw *w, size_t k)
{
	struct sw_msg m = w->msgs[k];
	struct sw_node *nd = &w->nodes[m.to];

	w->msgs[k] = w->msgs[--w->n_msgs];
	if (nd->up && !link_down(w, m.from, m.to, m.kind)) {
		int rv = 0;

		if (m.kind == M_RAFT)
			rv = imexd_agree_receive(nd->ag, w->now, w->names[m.from],
						 m.data, m.len);
		else if (m.kind == M_FWD)
			rv = imexd_agree_forwarded(nd->ag, w->now,
						   w->names[m.from], m.tag,
						   m.data, m.len);
		else
			rv = imexd_agree_reply(nd->ag, w->now, w->names[m.from],
					       m.tag, m.error, m.message,
					       &m.def, m.index, NULL, 0);
		done_input(w, m.to, rv);
	}
	msg_free(&m);
}

static bool step_once(struct sw *w, uint64_t t)
{
	uint64_t best = UINT64_MAX, best_seq = UINT64_MAX;
	size_t which = 0, j;
	bool msg = false;
	unsigned i;

	for (j = 0; j < w->n_msgs; j++) {
		const struct sw_msg *m = &w->msgs[j];

		if (m->due < best || (m->due == best && m->seq < best_seq)) {
			best = m->due;
			best_seq = m->seq;
			msg = true;
			which = j;
		}
	}
	for (i = 0; i < w->cfg.n; i++) {
		uint64_t to;

		if (!w->nodes[i].up)
			continue;
		to = imexd_agree_timeout(w->nodes[i].ag);
		if (to < w->now)
			to = w->now;
		if (to < best) {
			best = to;
			msg = false;
			which = i;
		}
	}
	if (best == UINT64_MAX || best > t)
		return false;
	if (best > w->now) {
		w->now = best;
		w->same = 0;
	} else if (++w->same > 1000000) {
		fprintf(stderr, "sim: livelock at %llu ms: %s %zu (IMEX_SEED=%u)\n",
			(unsigned long long)w->now, msg ? "message" : "timer of node",
			which, w->cfg.seed);
		abort();
	}
	if (msg)
		deliver(w, which);
	else
		done_input(w, (unsigned)which,
			   imexd_agree_tick(w->nodes[which].ag, w->now));
	return true;
}

void sw_run_until(struct sw *w, uint64_t t)
{
	while (step_once(w, t))
		;
	if (w->now < t)
		w->now = t;
}

void sw_run_for(struct sw *w, uint64_t ms)
{
	sw_run_until(w, w->now + ms);
}

bool sw_run_pred(struct sw *w, uint64_t ms, bool (*pred)(struct sw *w))
{
	uint64_t end = w->now + ms, next = w->now;

	for (;;) {
		if (w->now >= next) {
			if (pred(w))
				return true;
			next = w->now + w->cfg.et_ms / 4;
		}
		if (!step_once(w, end))
			break;
	}
	return pred(w);
}

/* ---- life ---------------------------------------------------------------- */

struct sw *sw_new(const struct sw_config *cfg)
{
	struct sw *w = calloc(1, sizeof(*w));
	unsigned i;

	if (!w || cfg->n < 1 || cfg->n > SW_NODES_MAX)
		abort();
	w->cfg = *cfg;
	w->rng = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)cfg->seed << 7);
	for (i = 0; i < cfg->n; i++) {
		struct sw_node *nd = &w->nodes[i];

		snprintf(nd->name, sizeof(nd->name), "n%03u", i);
		w->names[i] = nd->name;
		nd->disk = imexd_raftlog_mem_new();
		CHECK(nd->disk);
	}
	for (i = 0; i < cfg->n; i++)
		sw_restart(w, i);
	/* The checker reads raft ids as node index + 1 (sorted names). */
	for (i = 0; i < cfg->n; i++)
		CHECK(imexd_cons_id(imexd_agree_cons(w->nodes[0].ag),
				    w->names[i]) == i + 1);
	return w;
}

void sw_free(struct sw *w)
{
	unsigned i;
	size_t j;

	for (i = 0; i < w->cfg.n; i++) {
		struct sw_node *nd = &w->nodes[i];

		node_stop(w, i, false);
		imexd_raftlog_close(nd->dead);
		imexd_raftlog_mem_free(nd->disk);
		for (j = 0; j < nd->nk; j++)
			imexd_def_free(&nd->k[j]);
		free(nd->k);
	}
	for (j = 0; j < w->n_msgs; j++)
		msg_free(&w->msgs[j]);
	free(w->msgs);
	for (j = 0; j < w->n_chosen; j++)
		free(w->chosen[j].data);
	free(w->chosen);
	free(w->commits);
	free(w->confs);
	for (j = 0; j < w->n_reqs; j++) {
		imexd_def_free(&w->reqs[j]->def);
		free(w->reqs[j]);
	}
	free(w->reqs);
	free(w);
}
