// SPDX-License-Identifier: GPL-2.0
/*
 * In-memory consensus cluster: see harness_raft.h.  Internal errors abort
 * the test (assert) with the seed printed by the caller.  The event loop
 * and the calls on a running cluster are in harness_raft_run.c.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_raft_internal.h"
static void conf_dup(const struct raft_configuration *s,
		     struct raft_configuration *d)
{
	unsigned i;

	raft_configuration_init(d);
	for (i = 0; i < s->n; i++) {
		int rv = raft_configuration_add(d, s->servers[i].id,
						s->servers[i].address,
						s->servers[i].role);
		assert(rv == 0);
		(void)rv;
	}
}

unsigned hr_rand(struct hr *h, unsigned n)
{
	/* xorshift64* */
	h->rng ^= h->rng >> 12;
	h->rng ^= h->rng << 25;
	h->rng ^= h->rng >> 27;
	return n ? (unsigned)((h->rng * 2685821657736338717ULL) >> 33) % n : 0;
}

uint64_t hr_now(const struct hr *h) { return h->now; }
unsigned hr_seed(const struct hr *h) { return h->seed; }
unsigned hr_n(const struct hr *h) { return h->cfg.n; }
unsigned hr_acked(const struct hr *h) { return h->n_acked; }
unsigned hr_dropped(const struct hr *h) { return h->n_dropped; }
unsigned hr_violations(const struct hr *h) { return h->violations; }
unsigned hr_restores(const struct hr *h) { return h->restores; }

void hr_set_faults(struct hr *h, const struct hr_faults *f)
{
	h->cfg.faults = *f;
}

struct hr_node *node(struct hr *h, raft_id id)
{
	CHECK(id >= 1 && id <= h->cfg.n);
	return &h->nodes[id - 1];
}

struct imexd_cons *hr_cons(struct hr *h, raft_id id)
{
	return node(h, id)->cons;
}

bool hr_up(const struct hr *h, raft_id id)
{
	return id >= 1 && id <= h->cfg.n && h->nodes[id - 1].up;
}

/* ---- state machine and checker ---- */

static void list_add(struct hr_list *l, raft_index index, raft_term term,
		     const void *data, size_t len)
{
	l->v = xgrow(l->v, &l->cap, l->n, sizeof(*l->v));
	l->v[l->n].index = index;
	l->v[l->n].term = term;
	l->v[l->n].len = len;
	l->v[l->n].data = xdup(data, len);
	l->n++;
}

static void list_clear(struct hr_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].data);
	l->n = 0;
}

/* Record (or compare with) what index holds cluster-wide. */
static void check_chosen(struct hr *h, raft_id id, raft_index index,
			 const void *data, size_t len)
{
	size_t i;

	for (i = 0; i < h->chosen.n; i++) {
		const struct hr_cmd *c = &h->chosen.v[i];

		if (c->index != index)
			continue;
		if (c->len != len || memcmp(c->data, data, len)) {
			fprintf(stderr,
				"harness: node %llu applied a different command at index %llu (seed %u)\n",
				id, index, h->seed);
			h->violations++;
		}
		return;
	}
	list_add(&h->chosen, index, 0, data, len);
}

static void fsm_apply(struct hr *h, raft_id id, raft_index index,
		      raft_term term, const void *data, size_t len)
{
	struct hr_list *l = &node(h, id)->fsm;

	if (l->n && l->v[l->n - 1].index >= index) {
		fprintf(stderr, "harness: node %llu applied index %llu after %llu (seed %u)\n",
			id, index, l->v[l->n - 1].index, h->seed);
		h->violations++;
	}
	check_chosen(h, id, index, data, len);
	list_add(l, index, term, data, len);
}

/* Snapshot blob: [index u64][len u64][bytes]... */
static uint8_t *fsm_encode(const struct hr_list *l, size_t *len)
{
	size_t i, n = 0;
	uint8_t *b, *p;

	for (i = 0; i < l->n; i++)
		n += 16 + l->v[i].len;
	b = p = malloc(n ? n : 1);
	assert(b);
	for (i = 0; i < l->n; i++) {
		uint64_t x = l->v[i].index, y = l->v[i].len;

		memcpy(p, &x, 8);
		memcpy(p + 8, &y, 8);
		memcpy(p + 16, l->v[i].data, l->v[i].len);
		p += 16 + l->v[i].len;
	}
	*len = n;
	return b;
}

static void fsm_restore(struct hr *h, raft_id id, const uint8_t *b, size_t n)
{
	struct hr_list *l = &node(h, id)->fsm;
	size_t off = 0;

	list_clear(l);
	while (off < n) {
		uint64_t x, y;

		CHECK(n - off >= 16);
		memcpy(&x, b + off, 8);
		memcpy(&y, b + off + 8, 8);
		CHECK(n - off - 16 >= y);
		check_chosen(h, id, x, b + off + 16, y);
		list_add(l, x, 0, b + off + 16, y);
		off += 16 + y;
	}
}

/* ---- messages ---- */

void msg_free(struct raft_message *m)
{
	if (m->type == RAFT_APPEND_ENTRIES && m->append_entries.n_entries) {
		raft_free(m->append_entries.entries[0].batch);
		raft_free(m->append_entries.entries);
	} else if (m->type == RAFT_INSTALL_SNAPSHOT) {
		raft_configuration_close(&m->install_snapshot.conf);
		raft_free(m->install_snapshot.data.base);
	}
}

/* Deep copy with the ownership raft_step(RAFT_RECEIVE) expects: one
 * raft_malloc batch for the entries' data. */
static void msg_copy(const struct raft_message *s, struct raft_message *d)
{
	*d = *s;
	if (s->type == RAFT_APPEND_ENTRIES) {
		const struct raft_append_entries *a = &s->append_entries;
		size_t total = 0;
		unsigned i;
		uint8_t *batch;

		d->append_entries.entries = NULL;
		if (!a->n_entries)
			return;
		for (i = 0; i < a->n_entries; i++)
			total += a->entries[i].buf.len;
		batch = raft_malloc(total ? total : 1);
		d->append_entries.entries =
			raft_malloc(a->n_entries * sizeof(struct raft_entry));
		assert(batch && d->append_entries.entries);
		for (i = 0; i < a->n_entries; i++) {
			struct raft_entry *e = &d->append_entries.entries[i];

			*e = a->entries[i];
			e->buf.base = batch;
			e->batch = d->append_entries.entries[0].buf.base;
			if (a->entries[i].buf.len)
				memcpy(batch, a->entries[i].buf.base,
				       a->entries[i].buf.len);
			batch += a->entries[i].buf.len;
		}
		for (i = 0; i < a->n_entries; i++)
			d->append_entries.entries[i].batch =
				d->append_entries.entries[0].buf.base;
	} else if (s->type == RAFT_INSTALL_SNAPSHOT) {
		const struct raft_install_snapshot *is = &s->install_snapshot;

		conf_dup(&is->conf, &d->install_snapshot.conf);
		d->install_snapshot.data.base = raft_malloc(is->data.len ? is->data.len : 1);
		assert(d->install_snapshot.data.base);
		memcpy(d->install_snapshot.data.base, is->data.base, is->data.len);
	}
}

static void send_one(struct hr *h, raft_id from, raft_id to,
		     const struct raft_message *m)
{
	struct hr_msg *q;

	h->msgs = xgrow(h->msgs, &h->cap_msgs, h->n_msgs, sizeof(*h->msgs));
	q = &h->msgs[h->n_msgs++];
	q->from = from;
	q->to = to;
	q->seq = h->seq++;
	q->due = h->now + h->cfg.faults.latency_ms +
		 hr_rand(h, h->cfg.faults.jitter_ms + 1);
	msg_copy(m, &q->m);
}

static void send(struct hr *h, raft_id from, raft_id to,
		 const struct raft_message *m)
{
	if (hr_rand(h, 100) < h->cfg.faults.loss_pct)
		return;
	send_one(h, from, to, m);
	if (hr_rand(h, 100) < h->cfg.faults.dup_pct)
		send_one(h, from, to, m);
}

/* ---- node I/O ---- */

void input_done(struct hr *h, raft_id id, int rv)
{
	CHECK(rv == 0);
	drain(h, id);
}

static void write_free(struct hr_write *w)
{
	unsigned i;

	for (i = 0; i < w->n; i++)
		free(w->ents[i].buf);
	free(w->ents);
	if (w->snapshot)
		raft_configuration_close(&w->meta.configuration);
	free(w->data);
}

static void disk_truncate(struct hr_node *nd, raft_index from)
{
	while (nd->log_n && nd->log_start + nd->log_n - 1 >= from)
		free(nd->log[--nd->log_n].buf);
}

static void disk_compact(struct hr_node *nd, raft_index upto)
{
	size_t drop, i;

	if (upto < nd->log_start)
		return;
	drop = upto - nd->log_start + 1;
	if (drop > nd->log_n)
		drop = nd->log_n;
	for (i = 0; i < drop; i++)
		free(nd->log[i].buf);
	memmove(nd->log, nd->log + drop, (nd->log_n - drop) * sizeof(*nd->log));
	nd->log_n -= drop;
	nd->log_start += drop;
}

static void disk_set_snapshot(struct hr_node *nd,
			      const struct raft_snapshot_metadata *meta,
			      uint8_t *data, size_t len)
{
	if (nd->snap) {
		raft_configuration_close(&nd->snap_meta.configuration);
		free(nd->snap_data);
	}
	nd->snap = true;
	nd->snap_meta = *meta;
	conf_dup(&meta->configuration, &nd->snap_meta.configuration);
	nd->snap_data = data;
	nd->snap_len = len;
}

void write_complete(struct hr *h, raft_id id)
{
	struct hr_node *nd = node(h, id);
	struct hr_write w = nd->w[0];
	unsigned i;

	memmove(nd->w, nd->w + 1, --nd->n_w * sizeof(*nd->w));
	if (w.snapshot) {
		disk_truncate(nd, nd->log_start);
		nd->log_start = w.meta.index + 1;
		disk_set_snapshot(nd, &w.meta, w.data, w.len);
		w.data = NULL;
		write_free(&w);
		input_done(h, id, imexd_cons_snapshot_persisted(nd->cons, h->now));
		return;
	}
	if (nd->log_n == 0)
		nd->log_start = w.index;
	CHECK(w.index >= nd->log_start && w.index <= nd->log_start + nd->log_n);
	disk_truncate(nd, w.index);
	nd->log = realloc(nd->log, (nd->log_n + w.n) * sizeof(*nd->log));
	assert(nd->log);
	for (i = 0; i < w.n; i++) {
		nd->log[nd->log_n++] = w.ents[i];
		w.ents[i].buf = NULL;
	}
	write_free(&w);
	input_done(h, id, imexd_cons_persisted(nd->cons, h->now, w.index + w.n - 1));
}

static struct hr_write *write_new(struct hr *h, struct hr_node *nd)
{
	struct hr_write *w;

	nd->w = xgrow(nd->w, &nd->cap_w, nd->n_w, sizeof(*nd->w));
	w = &nd->w[nd->n_w++];
	memset(w, 0, sizeof(*w));
	/* FIFO: never before the previous write. */
	w->due = h->now + h->cfg.faults.disk_ms;
	if (nd->n_w > 1 && nd->w[nd->n_w - 2].due > w->due)
		w->due = nd->w[nd->n_w - 2].due;
	return w;
}

static struct hr_ack *ack_find(struct hr *h, uint64_t tag)
{
	size_t i;

	for (i = 0; i < h->n_acks; i++)
		if (h->acks[i].tag == tag)
			return &h->acks[i];
	return NULL;
}

void drain(struct hr *h, raft_id id)
{
	struct hr_node *nd = node(h, id);
	struct imexd_cons_action a;
	struct hr_write *w;
	struct hr_ack *ack;
	unsigned i;

	while (imexd_cons_next(nd->cons, &a)) {
		switch (a.type) {
		case IMEXD_CONS_PERSIST_TERM_VOTE:
			nd->term = a.term_vote.term;
			nd->vote = a.term_vote.voted_for;
			break;
		case IMEXD_CONS_PERSIST_ENTRIES:
			w = write_new(h, nd);
			w->index = a.entries.index;
			w->n = a.entries.n;
			w->ents = calloc(w->n, sizeof(*w->ents));
			assert(w->ents);
			for (i = 0; i < w->n; i++) {
				const struct raft_entry *e = &a.entries.entries[i];

				w->ents[i].term = e->term;
				w->ents[i].type = e->type;
				w->ents[i].len = e->buf.len;
				w->ents[i].buf = xdup(e->buf.base, e->buf.len);
			}
			break;
		case IMEXD_CONS_PERSIST_SNAPSHOT:
			w = write_new(h, nd);
			w->snapshot = true;
			w->meta = *a.snapshot.metadata;
			conf_dup(&a.snapshot.metadata->configuration,
				 &w->meta.configuration);
			w->data = xdup(a.snapshot.data, a.snapshot.len);
			w->len = a.snapshot.len;
			break;
		case IMEXD_CONS_SEND:
			CHECK(a.send.to_name &&
			      hr_id(h, hr_node_of(h, a.send.to)) == a.send.to);
			send(h, id, hr_node_of(h, a.send.to), a.send.msg);
			break;
		case IMEXD_CONS_CHANGED:
			if (a.apply.tag) {
				ack = ack_find(h, a.apply.tag);
				CHECK(ack && ack->node == id && !ack->acked);
				ack->acked = true;
				h->n_acked++;
			}
			break;
		case IMEXD_CONS_RESTORE:
			fsm_restore(h, id, a.snapshot.data, a.snapshot.len);
			h->restores++;
			break;
		case IMEXD_CONS_APPLY:
			fsm_apply(h, id, a.apply.index, a.apply.term,
				  a.apply.data, a.apply.len);
			if (a.apply.tag) {
				ack = ack_find(h, a.apply.tag);
				CHECK(ack && ack->node == id && !ack->acked);
				CHECK(ack->len == a.apply.len &&
				      !memcmp(ack->data, a.apply.data, ack->len));
				ack->acked = true;
				h->n_acked++;
			}
			break;
		case IMEXD_CONS_DROPPED:
			ack = ack_find(h, a.dropped.tag);
			CHECK(ack && !ack->acked && !ack->dropped);
			ack->dropped = true;
			h->n_dropped++;
			break;
		case IMEXD_CONS_TAKE_SNAPSHOT: {
			size_t len;
			uint8_t *blob = fsm_encode(&nd->fsm, &len);

			/* Written at once: the contract wants the answer as
			 * the next input. */
			disk_set_snapshot(nd, a.snapshot.metadata, xdup(blob, len), len);
			if (h->cfg.snapshot_trailing + 1 < a.snapshot.metadata->index)
				disk_compact(nd, a.snapshot.metadata->index -
						 h->cfg.snapshot_trailing - 1);
			CHECK(imexd_cons_snapshot_taken(nd->cons, h->now, blob, len) == 0);
			free(blob);
			break;
		}
		case IMEXD_CONS_STATE:
			break;
		}
	}
}

/* ---- lifecycle ---- */

static void node_start(struct hr *h, raft_id id)
{
	struct hr_node *nd = node(h, id);
	struct imexd_cons_config cc = {
		.roster = (const char *const *)h->names,
		.n_roster = h->cfg.n_roster ? h->cfg.n_roster : h->cfg.n,
		.self = h->names[id - 1],
		.election_timeout_ms = h->cfg.election_timeout_ms,
		.lost_voter_timeouts = h->cfg.lost_voter_timeouts,
		.snapshot_threshold = h->cfg.snapshot_threshold,
		.snapshot_trailing = h->cfg.snapshot_trailing,
		.seed = h->seed * 31u + (unsigned)id * 7919u + nd->restarts,
	};
	struct imexd_cons_start st = { 0 };
	struct raft_entry *ents = NULL;
	size_t i;

	CHECK(imexd_cons_new(&cc, &nd->cons) == 0);
	CHECK(imexd_cons_self(nd->cons) == hr_id(h, id));
	st.term = nd->term;
	st.voted_for = nd->vote;
	if (nd->snap) {
		st.snapshot = &nd->snap_meta;
		st.snapshot_data = nd->snap_data;
		st.snapshot_len = nd->snap_len;
	}
	st.start_index = nd->log_n ? nd->log_start :
		(nd->snap ? nd->snap_meta.index + 1 : 1);
	if (nd->log_n) {
		ents = calloc(nd->log_n, sizeof(*ents));
		assert(ents);
		for (i = 0; i < nd->log_n; i++) {
			ents[i].term = nd->log[i].term;
			ents[i].type = nd->log[i].type;
			ents[i].buf.base = nd->log[i].buf;
			ents[i].buf.len = nd->log[i].len;
		}
	}
	st.entries = ents;
	st.n_entries = (unsigned)nd->log_n;
	/* A restarted state machine starts from the stored snapshot. */
	list_clear(&nd->fsm);
	if (nd->snap)
		fsm_restore(h, id, nd->snap_data, nd->snap_len);
	nd->up = true;
	input_done(h, id, imexd_cons_start(nd->cons, h->now, &st));
	free(ents);
}

struct hr *hr_new(const struct hr_config *cfg)
{
	struct hr *h = calloc(1, sizeof(*h));
	unsigned i;

	assert(h && cfg->n >= 1 && cfg->n <= HR_NODES_MAX);
	h->cfg = *cfg;
	h->seed = cfg->seed;
	h->rng = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)cfg->seed << 1);
	if (!h->rng)
		h->rng = 1;
	h->next_tag = 1;
	for (i = 0; i < cfg->n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%02u", i);
		h->names[i] = strdup(name);
		assert(h->names[i]);
	}
	for (i = 1; i <= cfg->n; i++)
		node_start(h, i);
	return h;
}

static void node_stop(struct hr *h, raft_id id)
{
	struct hr_node *nd = node(h, id);
	size_t i;

	imexd_cons_free(nd->cons);
	nd->cons = NULL;
	nd->up = false;
	for (i = 0; i < nd->n_w; i++)
		write_free(&nd->w[i]);
	nd->n_w = 0;
}

void hr_free(struct hr *h)
{
	unsigned i;
	size_t j;

	for (i = 1; i <= h->cfg.n; i++) {
		struct hr_node *nd = node(h, i);

		if (nd->up)
			node_stop(h, i);
		disk_truncate(nd, nd->log_start);
		free(nd->log);
		free(nd->w);
		if (nd->snap) {
			raft_configuration_close(&nd->snap_meta.configuration);
			free(nd->snap_data);
		}
		list_clear(&nd->fsm);
		free(nd->fsm.v);
		free(h->names[i - 1]);
	}
	for (j = 0; j < h->n_msgs; j++)
		msg_free(&h->msgs[j].m);
	free(h->msgs);
	list_clear(&h->chosen);
	free(h->chosen.v);
	for (j = 0; j < h->n_acks; j++)
		free(h->acks[j].data);
	free(h->acks);
	free(h);
}

void hr_crash(struct hr *h, raft_id id)
{
	if (node(h, id)->up)
		node_stop(h, id);
}

void hr_restart(struct hr *h, raft_id id)
{
	struct hr_node *nd = node(h, id);

	if (nd->up)
		return;
	nd->restarts++;
	node_start(h, id);
}

void hr_cut(struct hr *h, raft_id from, raft_id to, bool cut)
{
	CHECK(from >= 1 && from <= h->cfg.n && to >= 1 && to <= h->cfg.n);
	h->cut[from - 1][to - 1] = cut;
}

void hr_partition(struct hr *h, uint32_t group)
{
	unsigned a, b;

	for (a = 0; a < h->cfg.n; a++)
		for (b = 0; b < h->cfg.n; b++)
			h->cut[a][b] = !!(group & (1u << a)) != !!(group & (1u << b));
}

void hr_heal(struct hr *h)
{
	memset(h->cut, 0, sizeof(h->cut));
}
