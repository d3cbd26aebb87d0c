// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated world: convergence, the history check and the check of
 * every acknowledgement (see sim_world.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/imex.h>

#include "sim_world_internal.h"

/* Up, caught up, kernel reconciled, and at raft index @last (the fsm's own
 * last index differs: a restored table counts the snapshot's index). */
static uint64_t applied_of(const struct sw *w, unsigned i)
{
	const struct imexd_cons *c = sw_cons(w, i);

	return c ? imexd_cons_applied(c) : 0;
}

/* Every committed domain naming node i has READY at its generation as the
 * last status pushed to i's kernel; @why (if not NULL) names one that has
 * not. */
static bool node_ready(struct sw *w, unsigned i, const char **why)
{
	const struct imexd_fsm *f = sw_fsm(w, i);
	const struct imexd_def *d;
	size_t pos = 0;

	while (f && (d = imexd_fsm_domain_of(f, w->names[i], &pos))) {
		const struct sw_status *st = sw_status_of(w, i, d->uuid);

		if (!st || st->state != IMEX_DOMAIN_READY ||
		    st->generation != d->generation) {
			if (why)
				*why = d->name;
			return false;
		}
	}
	return true;
}

/* Why: what node i last pushed for domain @name, and how it sees the
 * members. */
static void not_ready(struct sw *w, unsigned i, const char *name)
{
	const struct imexd_def *d = imexd_fsm_domain(sw_fsm(w, i), name);
	const struct sw_status *st = d ? sw_status_of(w, i, d->uuid) : NULL;
	char who[SW_NODES_MAX * 8 + 1] = "";
	uint16_t m;

	for (m = 0; d && m < d->nmembers; m++)
		snprintf(who + strlen(who), sizeof(who) - strlen(who), " %s:%u",
			 d->members[m].name,
			 imexd_node_peer_state(w->nodes[i].node,
					       d->members[m].name));
	sw_violation(w, "%s: domain %s (generation %llu) never became READY: last status %s, generation %llu; members%s",
		     w->names[i], name,
		     d ? (unsigned long long)d->generation : 0ULL,
		     !st ? "none" : st->state == IMEX_DOMAIN_READY ? "READY" :
		     "DEGRADED", st ? (unsigned long long)st->generation : 0ULL,
		     who);
}

static bool node_done(struct sw *w, unsigned i, uint64_t last)
{
	const struct imexd_agree *ag = w->nodes[i].up ?
		imexd_node_agree(w->nodes[i].node) : NULL;

	return ag && imexd_agree_cons(ag) &&
	       imexd_agree_synced(ag) && imexd_agree_reconciled(ag) &&
	       applied_of(w, i) == last;
}

/* The first node still in the group. */
static unsigned first_kept(const struct sw *w)
{
	unsigned i;

	for (i = 0; i < w->cfg.n && w->nodes[i].retired; i++)
		;
	return i < w->cfg.n ? i : 0;
}

bool sw_converged(struct sw *w)
{
	uint64_t last = applied_of(w, first_kept(w));
	unsigned i;

	if (!last)
		return false;
	for (i = 0; i < w->cfg.n; i++)
		if (!w->nodes[i].retired && !node_done(w, i, last))
			return false;
	for (i = 0; i < w->cfg.n; i++)
		if (!w->nodes[i].retired && !node_ready(w, i, NULL))
			return false;
	return true;
}

/* Every member's kernel holds exactly the committed domains naming it. */
static void check_kernels(struct sw *w)
{
	unsigned i;

	for (i = 0; i < w->cfg.n; i++) {
		const struct imexd_fsm *f = sw_fsm(w, i);
		const struct sw_node *nd = &w->nodes[i];
		const char *why = NULL;

		if (nd->retired)
			continue;
		const struct imexd_def *d;
		size_t pos = 0, n = 0, j;

		while ((d = imexd_fsm_domain_of(f, nd->name, &pos))) {
			n++;
			for (j = 0; j < nd->nk; j++)
				if (!strcmp(nd->k[j].name, d->name))
					break;
			if (j == nd->nk || !imexd_def_equal(&nd->k[j], d))
				sw_violation(w, "%s: kernel does not hold the committed %s",
					     nd->name, d->name);
		}
		if (n != nd->nk)
			sw_violation(w, "%s: kernel holds %zu domains, %zu committed name it",
				     nd->name, nd->nk, n);
		if (!node_ready(w, i, &why))
			sw_violation(w, "%s: its kernel's status of %s is not READY at the committed generation",
				     nd->name, why);
	}
}

/* Replay the committed entries; acknowledged outcomes must match. */
static void check_history(struct sw *w)
{
	struct sw_req **by = calloc(w->n_chosen + 1, sizeof(struct sw_req *));
	struct imexd_fsm *f = imexd_fsm_new();
	uint8_t *snap, *other;
	size_t j, len, olen;
	unsigned i;

	CHECK(by && f);
	for (j = 0; j < w->n_reqs; j++) {
		struct sw_req *r = w->reqs[j];

		if (!r->done) {
			sw_violation(w, "request %llu at %s never answered",
				     (unsigned long long)r->tag, w->names[r->node]);
			continue;
		}
		/* Membership changes are configuration entries: the voter
		 * sets the checker follows. */
		if (r->error || r->type == IMEXD_CMD_NODE_JOIN ||
		    r->type == IMEXD_CMD_NODE_LEAVE)
			continue;
		if (r->index >= w->n_chosen || !w->chosen[r->index].data) {
			sw_violation(w, "acknowledged %s (index %llu) was never committed",
				     imexd_cmd_type_name(r->type),
				     (unsigned long long)r->index);
			continue;
		}
		if (by[r->index])
			sw_violation(w, "two requests acknowledged at index %llu",
				     (unsigned long long)r->index);
		by[r->index] = r;
	}
	for (j = 1; j < w->n_chosen; j++) {
		struct imexd_fsm_result res;
		struct imexd_cmd cmd;

		if (!w->chosen[j].data)
			continue;
		if (imexd_cmd_decode(w->chosen[j].data, w->chosen[j].len, &cmd,
				     NULL))
			continue;
		CHECK(imexd_fsm_apply(f, j, &cmd, &res) == 0);
		imexd_cmd_free(&cmd);
		if (by[j] && (res.error || by[j]->type != cmd.type ||
			      (by[j]->def.name[0] &&
			       !imexd_def_equal(&by[j]->def, &res.def))))
			sw_violation(w, "acknowledged %s at index %zu is not what the log holds (%s)",
				     imexd_cmd_type_name(by[j]->type), j,
				     res.error ? res.message : "other outcome");
		imexd_fsm_result_free(&res);
	}
	CHECK(imexd_fsm_snapshot(f, &snap, &len) == 0);
	for (i = 0; i < w->cfg.n; i++) {
		if (w->nodes[i].retired)
			continue;
		CHECK(imexd_fsm_snapshot(sw_fsm(w, i), &other,
					 &olen) == 0);
		if (olen != len || memcmp(snap, other, len))
			sw_violation(w, "%s: table differs from the committed history",
				     w->names[i]);
		free(other);
	}
	free(snap);
	imexd_fsm_free(f);
	free(by);
}

/* ---- acknowledgements ---------------------------------------------------- */

static void conf_add(struct sw *w, uint64_t at,
		     const struct raft_configuration *conf)
{
	struct sw_conf *f;
	unsigned k;

	if (w->n_confs == w->cap_confs) {
		w->cap_confs = w->cap_confs ? 2 * w->cap_confs : 64;
		w->confs = realloc(w->confs, w->cap_confs * sizeof(*w->confs));
		CHECK(w->confs);
	}
	f = &w->confs[w->n_confs++];
	memset(f, 0, sizeof(*f));
	f->at = at;
	for (k = 0; k < conf->n; k++) {
		unsigned j;

		/* Voters by node index (raft ids are hashes of the names). */
		for (j = 0; j < w->cfg.n; j++)
			if (imexd_cons_name_id(w->names[j]) == conf->servers[k].id)
				break;
		if (conf->servers[k].role == RAFT_VOTER && j < w->cfg.n)
			f->voters[j / 64] |= 1ull << (j % 64);
	}
}

/*
 * Append to w->confs, oldest first, the configurations of @log from the
 * one in effect at @from to the last: its RAFT_CHANGE entries, and the
 * snapshot's configuration when no entry at or below @from holds one.
 */
static void confs_of(struct sw *w, const struct imexd_raftlog *log,
		     uint64_t from)
{
	uint64_t start = imexd_raftlog_start_index(log), p;
	size_t first = w->n_confs, a, b;
	bool found = false;

	for (p = imexd_raftlog_last_index(log); p >= start && p > 0; p--) {
		const struct raft_entry *e = imexd_raftlog_entry(log, p);
		struct raft_configuration conf;

		if (!e || e->type != RAFT_CHANGE)
			continue;
		CHECK(raft_configuration_decode(&e->buf, &conf) == 0);
		conf_add(w, p, &conf);
		raft_configuration_close(&conf);
		if (p <= from) {
			found = true;
			break;
		}
	}
	if (!found) {
		const struct raft_snapshot_metadata *sm =
			imexd_raftlog_snapshot(log, NULL);

		CHECK(sm);
		conf_add(w, sm->configuration_index, &sm->configuration);
	}
	for (a = first, b = w->n_confs - 1; a < b; a++, b--) {
		struct sw_conf t = w->confs[a];

		w->confs[a] = w->confs[b];
		w->confs[b] = t;
	}
}

/*
 * Node i knows that everything up to @index is committed.  The first node
 * to know an index is the leader that committed it (seen after the input
 * in which it did), unless that leader's server stopped in the same input
 * (disk full): then it is a node whose log is the same up to the index.
 */
void sw_seen_commit(struct sw *w, unsigned i, uint64_t index)
{
	const struct imexd_raftlog *log = w->nodes[i].log;
	uint64_t from = w->committed + 1, n;
	size_t conf0 = w->n_confs;

	if (index <= w->committed || !log)
		return;
	if (index >= w->n_commits) {
		size_t cap = index + 64;

		w->commits = realloc(w->commits, cap * sizeof(*w->commits));
		CHECK(w->commits);
		memset(w->commits + w->n_commits, 0,
		       (cap - w->n_commits) * sizeof(*w->commits));
		w->n_commits = cap;
	}
	confs_of(w, log, from);
	for (n = from; n <= index; n++) {
		struct sw_commit *c = &w->commits[n];

		c->set = true;
		c->by = i;
		c->term = imexd_raftlog_term_of(log, n);
		c->conf0 = conf0;
		c->nconf = w->n_confs - conf0;
	}
	w->committed = index;
}

/* Does node j's disk hold entry (index, term)?  A snapshot covering the
 * index holds it (only committed entries are snapshotted); term 0: the
 * recording node had it only in its snapshot, any term will do. */
static bool holds(const struct sw *w, unsigned j, uint64_t index,
		  uint64_t term)
{
	const struct sw_node *nd = &w->nodes[j];
	const struct imexd_raftlog *log = nd->up ? nd->log : nd->dead;
	const struct raft_snapshot_metadata *sm;
	const struct raft_entry *e;

	if (!log)
		return false;
	e = imexd_raftlog_entry(log, index);
	if (e)
		return !term || e->term == term;
	sm = imexd_raftlog_snapshot(log, NULL);
	return sm && sm->index >= index;
}

static bool is_voter(const struct sw_conf *f, unsigned j)
{
	return f->voters[j / 64] >> (j % 64) & 1;
}

/*
 * An acknowledged mutation: see sim_world.h.  Of the configurations the
 * committing node's log held from the index on, those a leader could
 * have counted the index by: the one in effect at it and every later one.
 */
void sw_check_ack(struct sw *w, const struct sw_req *r)
{
	const struct sw_commit *c = r->index < w->n_commits ?
		&w->commits[r->index] : NULL;
	bool sides = w->epoch && r->partition == w->epoch;
	const struct sw_conf *at = NULL;
	char who[SW_NODES_MAX * 6 + 1] = "";
	unsigned have = 0, voters = 0, j;
	size_t k;

	if (!c || !c->set) {
		w->st.bad_acks++;
		sw_violation(w, "%s acknowledged %s at index %llu, which no node was seen committing",
			     w->names[r->node], imexd_cmd_type_name(r->type),
			     (unsigned long long)r->index);
		return;
	}
	for (k = c->conf0; k < c->conf0 + c->nconf; k++) {
		const struct sw_conf *f = &w->confs[k];

		if (f->at <= r->index && k + 1 < c->conf0 + c->nconf &&
		    w->confs[k + 1].at <= r->index)
			continue;	/* replaced before the index */
		have = voters = 0;
		for (j = 0; j < w->cfg.n; j++) {
			if (!is_voter(f, j))
				continue;
			voters++;
			if ((!sides || w->side[j] == w->side[r->node]) &&
			    holds(w, j, r->index, c->term))
				have++;
		}
		if (have * 2 > voters)
			return;
		if (!at)
			at = f;
	}
	CHECK(at);
	have = voters = 0;
	for (j = 0; j < w->cfg.n; j++) {
		bool ok;

		if (!is_voter(at, j))
			continue;
		voters++;
		ok = (!sides || w->side[j] == w->side[r->node]) &&
		     holds(w, j, r->index, c->term);
		have += ok;
		snprintf(who + strlen(who), sizeof(who) - strlen(who), " %s%s",
			 w->names[j], ok ? "+" : "");
	}
	w->st.bad_acks++;
	sw_violation(w, "%s acknowledged %s at index %llu (term %llu, committed by %s) held by %u of the %u voters%s%s (+: holds it)",
		     w->names[r->node], imexd_cmd_type_name(r->type),
		     (unsigned long long)r->index,
		     (unsigned long long)c->term, w->names[c->by], have, voters,
		     sides ? " on its side of the partition:" : ":", who);
}

unsigned sw_check_final(struct sw *w)
{
	unsigned i;

	sw_heal(w);
	for (i = 0; i < w->cfg.n; i++) {
		w->nodes[i].arm = SW_CRASH_NONE;
		if (w->nodes[i].full)
			sw_disk_full(w, i, false);
		if (!w->nodes[i].up && !w->nodes[i].retired)
			sw_restart(w, i);
	}
	/* Past every request's deadline, and to convergence. */
	sw_run_for(w, 6ull * w->cfg.et_ms);
	if (!sw_run_pred(w, 400ull * w->cfg.et_ms, sw_converged)) {
		uint64_t last = applied_of(w, first_kept(w));

		for (i = 0; i < w->cfg.n; i++) {
			const struct imexd_agree *ag = w->nodes[i].up ?
				imexd_node_agree(w->nodes[i].node) : NULL;
			const char *why = "";

			if (w->nodes[i].retired)
				continue;
			if (!node_done(w, i, last))
				sw_violation(w, "%s did not converge (up %d, synced %d, reconciled %d, index %llu of %llu)",
					     w->names[i], w->nodes[i].up,
					     ag && imexd_agree_synced(ag),
					     ag && imexd_agree_reconciled(ag),
					     (unsigned long long)applied_of(w, i),
					     (unsigned long long)last);
			else if (!node_ready(w, i, &why))
				not_ready(w, i, why);
		}
		return w->violations;
	}
	check_history(w);
	check_kernels(w);
	return w->violations;
}
