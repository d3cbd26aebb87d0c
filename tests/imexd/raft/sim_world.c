// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated world of node cores: see sim_world.h.  Internal errors
 * (an input refused, a frame that does not decode) abort with the seed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/imex.h>

#include "sim_world_internal.h"
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
struct imexd_node *sw_node(struct sw *w, unsigned i) { return w->nodes[i].node; }
const struct imexd_fsm *sw_fsm(struct sw *w, unsigned i)
{
	return w->nodes[i].up ? imexd_node_fsm(w->nodes[i].node) : NULL;
}

const struct imexd_cons *sw_cons(const struct sw *w, unsigned i)
{
	return w->nodes[i].up ?
		imexd_agree_cons(imexd_node_agree(w->nodes[i].node)) : NULL;
}
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

const struct imexd_raftlog *sw_log(const struct sw *w, unsigned i)
{
	return w->nodes[i].log;
}

const struct imexd_def *sw_kernel(const struct sw *w, unsigned i, size_t *n)
{
	*n = w->nodes[i].nk;
	return w->nodes[i].k;
}

/* ---- network ------------------------------------------------------------- */

static bool ev_before(const struct sw_ev *a, const struct sw_ev *b)
{
	return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

struct sw_ev *ev_new(struct sw *w, int kind, unsigned to, uint64_t due)
{
	struct sw_ev *e;

	w->evs = xgrow(w->evs, &w->cap_evs, w->n_evs, sizeof(*w->evs));
	e = &w->evs[w->n_evs];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->to = to;
	e->inst = w->nodes[to].restarts;
	e->due = due;
	e->seq = w->seq++;
	return e;
}

/* The event last made by ev_new() into the heap. */
void ev_push(struct sw *w)
{
	size_t k = w->n_evs++;

	while (k) {
		size_t p = (k - 1) / 2;
		struct sw_ev t;

		if (!ev_before(&w->evs[k], &w->evs[p]))
			break;
		t = w->evs[p];
		w->evs[p] = w->evs[k];
		w->evs[k] = t;
		k = p;
	}
}

static struct sw_ev ev_pop(struct sw *w)
{
	struct sw_ev top = w->evs[0];
	size_t k = 0;

	w->evs[0] = w->evs[--w->n_evs];
	w->evs[w->n_evs].frame = NULL;	/* the slot left is free */
	for (;;) {
		size_t l = 2 * k + 1, r = l + 1, m = k;
		struct sw_ev t;

		if (l < w->n_evs && ev_before(&w->evs[l], &w->evs[m]))
			m = l;
		if (r < w->n_evs && ev_before(&w->evs[r], &w->evs[m]))
			m = r;
		if (m == k)
			break;
		t = w->evs[m];
		w->evs[m] = w->evs[k];
		w->evs[k] = t;
		k = m;
	}
	return top;
}

/* ---- nodes --------------------------------------------------------------- */

static struct sw_req *req_find(struct sw *w, uint64_t tag)
{
	return tag >= 1 && tag <= w->n_reqs ? w->reqs[tag - 1] : NULL;
}

/* Node i applies @index (node.h's hook): the command's bytes must be
 * what every other node applied there. */
static void record_apply(void *ctx, uint64_t index, const uint8_t *data,
			 size_t len)
{
	struct sw_node *nd = ctx;
	struct sw *w = nd->w;
	struct sw_chosen *c;

	sw_seen_commit(w, nd->idx, index);
	w->st.applied++;
	if (getenv("SIM_VERBOSE"))
		fprintf(stderr, "%llu %s: applied %llu (%s, %zu bytes)\n",
			(unsigned long long)w->now, nd->name,
			(unsigned long long)index,
			imexd_cmd_type_name(len > 1 ? data[1] : 0), len);
	if (index >= w->n_chosen) {
		size_t n = index + 64;

		w->chosen = realloc(w->chosen, n * sizeof(*w->chosen));
		CHECK(w->chosen);
		memset(w->chosen + w->n_chosen, 0,
		       (n - w->n_chosen) * sizeof(*w->chosen));
		w->n_chosen = n;
	}
	c = &w->chosen[index];
	if (!c->data) {
		c->data = xdup(data, len);
		c->len = len;
	} else if (c->len != len || memcmp(c->data, data, len)) {
		sw_violation(w, "%s applied a different command at index %llu",
			     nd->name, (unsigned long long)index);
	}
}

static void record_done(struct sw *w, unsigned i,
			const struct imexd_node_action *a)
{
	struct sw_req *r = req_find(w, a->req_id);

	CHECK(r && r->node == i);
	if (r->done) {
		sw_violation(w, "request %llu answered twice",
			     (unsigned long long)a->req_id);
		return;
	}
	r->done = true;
	r->error = a->error;
	r->index = a->index;
	snprintf(r->message, sizeof(r->message), "%s", a->text ? a->text : "");
	if (a->def && a->def->name[0])
		CHECK(!imexd_def_copy(&r->def, a->def));
	if (getenv("SIM_VERBOSE"))
		fprintf(stderr, "%llu %s: request %llu done: %d %s (index %llu)\n",
			(unsigned long long)w->now, w->names[i],
			(unsigned long long)a->req_id, a->error, r->message,
			(unsigned long long)a->index);
	if (a->error) {
		w->st.failed++;
		return;
	}
	w->st.acked++;
	if (!a->index)
		sw_violation(w, "request %llu acknowledged without a log index",
			     (unsigned long long)a->req_id);
	else
		sw_check_ack(w, r);
}

static void node_stop(struct sw *w, unsigned i, bool torn)
{
	struct sw_node *nd = &w->nodes[i];
	size_t k;

	if (!nd->up)
		return;
	if (getenv("SIM_VERBOSE"))
		fprintf(stderr, "%llu %s: crash\n", (unsigned long long)w->now,
			nd->name);
	/* The requests it had not answered die with it (the caller sees
	 * its connection drop). */
	for (k = 0; k < w->n_reqs; k++) {
		struct sw_req *r = w->reqs[k];

		if (r->node == i && !r->done) {
			r->done = true;
			r->error = ECONNRESET;
			snprintf(r->message, sizeof(r->message), "node crashed");
		}
	}
	/* Its connections end: the peers hear it. */
	for (k = 0; k < w->n_conns; k++)
		if (!w->conns[k].dead &&
		    conn_end(&w->conns[k], i, nd->restarts) >= 0)
			conn_kill(w, k + 1, conn_end(&w->conns[k], i,
						      nd->restarts));
	imexd_node_free(nd->node);
	nd->node = NULL;
	nd->dead = nd->log;
	nd->log = NULL;
	imexd_raftlog_mem_crash(nd->disk, torn ? sw_rand(w, 64) : 0);
	nd->up = false;
	nd->arm = SW_CRASH_NONE;
	/* The kernel marks the daemon lost: no status stands. */
	free(nd->st);
	nd->st = NULL;
	nd->nst = 0;
	w->st.crashes++;
}

void sw_crash(struct sw *w, unsigned i)
{
	node_stop(w, i, true);
}

void sw_retire(struct sw *w, unsigned i)
{
	if (w->nodes[i].up)
		node_stop(w, i, true);
	w->nodes[i].retired = true;
}

bool sw_retired(const struct sw *w, unsigned i)
{
	return w->nodes[i].retired;
}

void sw_arm(struct sw *w, unsigned i, enum sw_crash_point p)
{
	w->nodes[i].arm = p;
}

/* Carry out node i's actions, as the daemon does; stops if it crashes. */
void drain(struct sw *w, unsigned i)
{
	struct sw_node *nd = &w->nodes[i];
	struct imexd_node_action a;

	while (nd->up) {
		const struct imexd_cons *cons = sw_cons(w, i);

		/* Before a DONE it may carry: a leader commits and answers in
		 * the same input. */
		if (cons)
			sw_seen_commit(w, i, imexd_cons_commit(cons));
		if (!imexd_node_next(nd->node, &a))
			break;
		switch (a.type) {
		case IMEXD_NODE_CONNECT:
			net_connect(w, i, a.addr);
			break;
		case IMEXD_NODE_CLOSE:
			if (conn_of(w, a.conn))
				conn_kill(w, a.conn, conn_end(conn_of(w, a.conn), i,
							      nd->restarts));
			break;
		case IMEXD_NODE_SEND:
			net_send(w, i, &a);
			break;
		case IMEXD_NODE_CONN_BOUND: {
			const struct sw_conn *c = conn_of(w, a.conn);

			if (c)
				nd->bound[c->a == i ? c->b : c->a]++;
			break;
		}
		case IMEXD_NODE_KERNEL_SET:
		case IMEXD_NODE_KERNEL_REMOVE:
			kernel_action(w, i, &a);
			break;
		case IMEXD_NODE_KERNEL_STATUS:
			kernel_status(w, i, a.status);
			break;
		case IMEXD_NODE_REQUEST_DONE:
			record_done(w, i, &a);
			break;
		case IMEXD_NODE_IMPORT_DONE:
		case IMEXD_NODE_IMPORT_CHECK:
		case IMEXD_NODE_IMPORT_REVOKE:
			break;
		case IMEXD_NODE_LOG:
			if (a.level <= 3 && strstr(a.text, "raft server stopped"))
				w->st.storage_stops++;
			if (w->cfg.watch && strstr(a.text, w->cfg.watch))
				nd->watched++;
			if (getenv("SIM_VERBOSE"))
				fprintf(stderr, "%llu %s: %s\n",
					(unsigned long long)w->now, nd->name,
					a.text);
			if (applied_line(a.text) &&
			    nd->arm == SW_CRASH_AFTER_APPLY)
				sw_crash(w, i);
			break;
		}
	}
	if (nd->up)
		nd->deadline = imexd_node_deadline(nd->node);
}

void sw_restart(struct sw *w, unsigned i)
{
	struct sw_node *nd = &w->nodes[i];
	struct imexd_node_config nc;
	struct imexd_raftlog_io io;
	char note[IMEXD_RAFTLOG_MSG_MAX], err[IMEXD_RAFTLOG_MSG_MAX];
	char msg[256] = "";

	if (nd->up)
		return;
	nd->restarts++;
	if (getenv("SIM_VERBOSE"))
		fprintf(stderr, "%llu %s: restart\n", (unsigned long long)w->now,
			nd->name);
	imexd_raftlog_close(nd->dead);
	nd->dead = NULL;
	imexd_raftlog_mem_io(nd->disk, &io);
	if (imexd_raftlog_open(&nd->log, &io, note, sizeof(note), err,
			       sizeof(err))) {
		sw_violation(w, "%s: storage does not load: %s", nd->name, err);
		return;
	}
	memset(&nc, 0, sizeof(nc));
	snprintf(nc.name, sizeof(nc.name), "%s", nd->name);
	nc.node_uuid[0] = 0x10;
	nc.node_uuid[1] = (uint8_t)i;
	nc.node_uuid[2] = (uint8_t)(i >> 8);
	nc.epoch = (uint64_t)nd->restarts << 32 | (i + 1);
	nc.max_channels = w->cfg.max_channels;
	memset(nc.fabric_uuid, 0xfa, 16);
	nc.roster = w->roster;
	nc.n_roster = w->cfg.n_roster ? w->cfg.n_roster : w->cfg.n;
	if (i < 32 && ((w->cfg.other_mask >> i) & 1)) {
		nc.roster = w->roster + w->cfg.other_first;
		nc.n_roster = w->cfg.other_n;
	}
	nc.log = nd->log;
	nc.heartbeat_ms = w->cfg.heartbeat_ms ? w->cfg.heartbeat_ms :
			  2 * w->cfg.et_ms;
	nc.miss_count = 3;
	nc.grace_ms = 300ll * w->cfg.et_ms;
	nc.election_timeout_ms = w->cfg.et_ms;
	nc.snapshot_threshold = w->cfg.snapshot_threshold;
	nc.snapshot_trailing = w->cfg.snapshot_trailing;
	/* Reconnects at the pace of the election timeout (ms). */
	nc.backoff_min_ms = w->cfg.et_ms / 2;
	nc.backoff_max_ms = 3 * w->cfg.et_ms;
	nc.seed = w->cfg.seed * 7919u + i * 104729u + nd->restarts * 31u;
	if (imexd_node_new(&nc, &nd->node, msg, sizeof(msg))) {
		fprintf(stderr, "sim: %s: %s (IMEX_SEED=%u)\n", nd->name, msg,
			w->cfg.seed);
		abort();
	}
	imexd_node_set_applied_hook(nd->node, record_apply, nd);
	nd->up = true;
	CHECK(imexd_node_start(nd->node, w->now, nd->k, nd->nk) == 0);
	drain(w, i);
}

unsigned sw_bound(const struct sw *w, unsigned i, unsigned j)
{
	return w->nodes[i].bound[j];
}

unsigned sw_watched(const struct sw *w, unsigned i)
{
	return w->nodes[i].watched;
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
		const struct imexd_cons *c = sw_cons(w, i);

		if (!c)
			continue;
		if (imexd_cons_state(c) == RAFT_LEADER &&
		    imexd_cons_term(c) > best) {
			best = imexd_cons_term(c);
			l = (int)i;
		}
	}
	return l;
}

static uint8_t cmd_type(uint32_t cmd)
{
	switch (cmd) {
	case IMEX_CMD_DOMAIN_CREATE:	return IMEXD_CMD_DOMAIN_CREATE;
	case IMEX_CMD_DOMAIN_DELETE:	return IMEXD_CMD_DOMAIN_DELETE;
	case IMEX_CMD_CHANNEL_ALLOC:	return IMEXD_CMD_CHANNEL_ALLOC;
	case IMEX_CMD_CHANNEL_FREE:	return IMEXD_CMD_CHANNEL_FREE;
	case IMEX_CMD_MEMBER_EVICT:	return IMEXD_CMD_MEMBER_EVICT;
	case IMEX_CMD_NODE_JOIN:	return IMEXD_CMD_NODE_JOIN;
	case IMEX_CMD_NODE_LEAVE:	return IMEXD_CMD_NODE_LEAVE;
	default:			return 0;
	}
}

struct sw_req *sw_request(struct sw *w, unsigned i, struct imexd_request *req)
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
	r->type = cmd_type(req->cmd);
	r->t_enter = w->now;
	r->partition = w->epoch;
	req->req_id = r->tag;
	imexd_node_request(w->nodes[i].node, w->now, req);
	drain(w, i);
	return r;
}

/* ---- the event loop ------------------------------------------------------ */

static bool step_once(struct sw *w, uint64_t t)
{
	uint64_t best = UINT64_MAX;
	size_t which = 0;
	bool msg = false;
	unsigned i;

	if (w->n_evs) {
		best = w->evs[0].due;
		msg = true;
	}
	for (i = 0; i < w->cfg.n; i++) {
		uint64_t to;

		if (!w->nodes[i].up)
			continue;
		to = w->nodes[i].deadline;
#ifdef SW_CHECK_DEADLINE
		CHECK(to == imexd_node_deadline(w->nodes[i].node));
#endif
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
	if (msg) {
		struct sw_ev e = ev_pop(w);

		deliver(w, &e);
		free(e.frame);
	} else {
		imexd_node_timer(w->nodes[which].node, w->now);
		drain(w, (unsigned)which);
	}
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
	const char *verbose;
	unsigned i;

	if (!w || cfg->n < 1 || cfg->n > SW_NODES_MAX)
		abort();
	w->cfg = *cfg;
	w->rng = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)cfg->seed << 7);
	/* SIM_VERBOSE=2 traces every frame delivered too. */
	verbose = getenv("SIM_VERBOSE");
	w->trace_msgs = verbose && atoi(verbose) >= 2;
	w->roster = calloc(cfg->n, sizeof(*w->roster));
	CHECK(w->roster);
	for (i = 0; i < cfg->n; i++) {
		struct sw_node *nd = &w->nodes[i];

		snprintf(nd->name, sizeof(nd->name), "n%03u", i);
		nd->w = w;
		nd->idx = i;
		w->names[i] = nd->name;
		snprintf(w->roster[i].name, sizeof(w->roster[i].name), "%s",
			 nd->name);
		addr_of(w->roster[i].addr, sizeof(w->roster[i].addr), i,
			IMEXD_DEFAULT_PORT);
		nd->disk = imexd_raftlog_mem_new();
		CHECK(nd->disk);
	}
	for (i = 0; i < cfg->n; i++)
		sw_restart(w, i);
	/* The checker maps raft ids to nodes by their names. */
	for (i = 0; i < (cfg->n_roster ? cfg->n_roster : cfg->n); i++)
		CHECK(imexd_cons_id(sw_cons(w, 0), w->names[i]) ==
		      imexd_cons_name_id(w->names[i]));
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
		free(nd->st);
	}
	for (j = 0; j < w->n_evs; j++)
		free(w->evs[j].frame);
	free(w->evs);
	free(w->conns);
	free(w->roster);
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
