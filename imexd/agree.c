// SPDX-License-Identifier: GPL-2.0
/*
 * agree: one node's agreement part (consensus + raftlog + fsm +
 * reconciler): the raft server, the kernel, the inputs.  See agree.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree_internal.h"
#include "raftwire.h"

/* ---- the raft server ----------------------------------------------------- */

static int server_stop(struct imexd_agree *a, uint64_t now, int err,
		       const char *what)
{
	size_t i = 0;
	int rv;

	imexd_cons_free(a->cons);
	a->cons = NULL;
	free(a->taken);
	a->taken = NULL;
	a->taking = false;
	a->n_dones = 0;
	a->failed_now = true;
	a->restart_at = now + a->et;
	a->last_leader = 0;
	rv = ag_log(a, 3, "raft server stopped: %s: %s; restarting from storage in %llu ms",
		   what, strerror(-err), (unsigned long long)a->et);
	/* Submitted requests lost their tag: their outcome is unknown. */
	while (!rv && i < a->n_reqs) {
		struct ag_req *r = &a->reqs[i];

		if (r->state != REQ_SUBMITTED) {
			i++;
			continue;
		}
		if (r->kind == REQ_SERVE) {
			ag_req_del(a, r);
			continue;
		}
		rv = ag_req_finish(a, r, EIO,
				"this node's raft server stopped (state directory write failed): the change may or may not have been made; check and retry",
				NULL, 0, NULL, 0);
	}
	return rv;
}

/* Stop the server; 1 (stopped) unless that failed. */
int ag_stop(struct imexd_agree *a, uint64_t now, int err, const char *what)
{
	int rv = server_stop(a, now, err, what);

	return rv ? rv : 1;
}

static int on_apply(struct imexd_agree *a, const struct imexd_cons_action *ca)
{
	struct imexd_fsm_result res;
	struct imexd_agree_action *act;
	struct imexd_cmd cmd;
	const char *why = NULL;
	bool self_leave = false;
	struct ag_req *r;
	int rv;

	a->rec_due = true;
	rv = imexd_cmd_decode(ca->apply.data, ca->apply.len, &cmd, &why);
	if (rv == -ENOMEM)
		return rv;
	memset(&res, 0, sizeof(res));
	if (rv) {
		/* A committed entry no node could apply: everyone skips it. */
		res.error = EBADMSG;
		snprintf(res.message, sizeof(res.message),
			 "entry %llu does not decode: %s",
			 (unsigned long long)ca->apply.index, why);
	} else {
		rv = imexd_fsm_apply(a->fsm, ca->apply.index, &cmd, &res);
		self_leave = cmd.type == IMEXD_CMD_NODE_LEAVE &&
			     !strcmp(cmd.u.node.name, a->self);
		imexd_cmd_free(&cmd);
		if (rv)
			return rv;
	}
	if (self_leave && !res.error && imexd_fsm_node(a->fsm, a->self)) {
		/* Marked leaving: the configuration change that follows
		 * never reaches this node. */
		rv = ag_log(a, 4, "this node is leaving the group by entry %llu: once it is out, stop imexd here or join it again",
			    (unsigned long long)ca->apply.index);
		if (rv) {
			imexd_fsm_result_free(&res);
			return rv;
		}
	}
	act = ag_push(a, IMEXD_AGREE_APPLIED);
	if (!act) {
		imexd_fsm_result_free(&res);
		return -ENOMEM;
	}
	act->index = ca->apply.index;
	act->error = res.error;
	act->data = ag_dup(a, ca->apply.data, ca->apply.len);
	act->len = ca->apply.len;
	act->message = ag_str(a, res.message);
	act->def = ag_def(a, &res.def);
	act->nids = res.nids;
	act->ids = res.nids ? ag_dup(a, res.ids, res.nids * sizeof(*res.ids)) :
			      NULL;
	rv = act->data && act->message && act->def &&
	     (act->ids || !res.nids) ? 0 : -ENOMEM;
	r = ca->apply.tag ? ag_req_by_id(a, ca->apply.tag) : NULL;
	if (!rv && r && r->state == REQ_SUBMITTED &&
	    r->type == IMEXD_CMD_NODE_LEAVE && !r->left && !res.error) {
		/* Marked leaving: the configuration change is next. */
		r->state = REQ_WAIT;
		r->retry_at = 0;
	} else if (!rv && r && r->state == REQ_SUBMITTED) {
		rv = ag_req_finish(a, r, res.error, res.message, &res.def,
				ca->apply.index, res.ids, res.nids);
	}
	imexd_fsm_result_free(&res);
	return rv;
}

static int on_send(struct imexd_agree *a, const struct imexd_cons_action *ca)
{
	struct imexd_agree_action *act;
	uint8_t *buf;
	size_t len;
	int rv = imexd_raftwire_encode(ca->send.msg, &buf, &len);

	if (rv == -ENOMEM)
		return rv;
	if (rv)
		return ag_log(a, 3, "raft message for %s not sent: %s",
			     ca->send.to_name, strerror(-rv));
	if (ag_keep(a, buf, false))
		return -ENOMEM;
	act = ag_push(a, IMEXD_AGREE_SEND);
	if (!act)
		return -ENOMEM;
	act->to = ag_str(a, ca->send.to_name);
	act->data = buf;
	act->len = len;
	return act->to ? 0 : -ENOMEM;
}

static int on_state(struct imexd_agree *a, const struct imexd_cons_action *ca)
{
	struct imexd_agree_action *act = ag_push(a, IMEXD_AGREE_STATE);

	if (!act)
		return -ENOMEM;
	act->state = ca->state.state;
	act->term = ca->state.term;
	act->leader = ca->state.leader_name ? ag_str(a, ca->state.leader_name) :
					      NULL;
	a->last_leader = ca->state.leader;
	a->last_state = ca->state.state;
	if (ca->state.leader_name && !act->leader)
		return -ENOMEM;
	return ca->state.leader_name ?
	       ag_leader_moved(a, ca->state.leader_name) : 0;
}

static int done_push(struct imexd_agree *a, bool snapshot, raft_index last)
{
	if (imexd_grow((void **)&a->dones, &a->cap_dones, a->n_dones + 1,
		 sizeof(*a->dones)))
		return -ENOMEM;
	a->dones[a->n_dones].snapshot = snapshot;
	a->dones[a->n_dones++].last = last;
	return 0;
}

/* One consensus action; a storage error stops the server (returned as
 * 1 after the stop). */
static int on_action(struct imexd_agree *a, uint64_t now,
		     const struct imexd_cons_action *ca)
{
	struct imexd_raftlog *log = a->cfg.log;
	const char *why = NULL;
	uint8_t *blob;
	size_t len;
	struct ag_req *r;
	int rv = 0;

	switch (ca->type) {
	case IMEXD_CONS_PERSIST_TERM_VOTE:
		rv = imexd_raftlog_set_term_vote(log, ca->term_vote.term,
						 ca->term_vote.voted_for);
		if (rv)
			return ag_stop(a, now, rv, "storing term and vote");
		return 0;
	case IMEXD_CONS_PERSIST_ENTRIES:
		rv = imexd_raftlog_append(log, ca->entries.index,
					  ca->entries.entries, ca->entries.n);
		if (rv)
			return ag_stop(a, now, rv, "storing log entries");
		return done_push(a, false,
				 ca->entries.index + ca->entries.n - 1);
	case IMEXD_CONS_PERSIST_SNAPSHOT:
		rv = imexd_raftlog_snapshot_install(log, ca->snapshot.metadata,
						    ca->snapshot.data,
						    ca->snapshot.len);
		if (rv)
			return ag_stop(a, now, rv, "storing a snapshot");
		return done_push(a, true, 0);
	case IMEXD_CONS_SEND:
		return on_send(a, ca);
	case IMEXD_CONS_RESTORE:
		a->rec_due = true;
		rv = imexd_fsm_restore(a->fsm, ca->snapshot.metadata->index,
				       ca->snapshot.data, ca->snapshot.len, &why);
		if (rv)
			return ag_stop(a, now, rv, why ? why :
					   "restoring a snapshot");
		return 0;
	case IMEXD_CONS_APPLY:
		r = ca->apply.tag ? ag_req_by_id(a, ca->apply.tag) : NULL;
		if (r && r->state == REQ_SUBMITTED)
			imexd_metrics_hist_add(&a->commit, now - r->submitted_at);
		rv = on_apply(a, ca);
		if (rv)
			return ag_stop(a, now, rv, "applying an entry");
		return 0;
	case IMEXD_CONS_DROPPED:
		r = ag_req_by_id(a, ca->dropped.tag);
		if (!r || r->state != REQ_SUBMITTED)
			return 0;
		return ag_req_finish(a, r, EAGAIN,
				  "leadership changed before the change committed; it may or may not have been made: check and retry",
				  NULL, 0, NULL, 0);
	case IMEXD_CONS_TAKE_SNAPSHOT:
		rv = imexd_fsm_snapshot(a->fsm, &blob, &len);
		if (rv)
			return ag_stop(a, now, rv, "encoding a snapshot");
		rv = imexd_raftlog_snapshot_take(log, ca->snapshot.metadata,
						 blob, len,
						 a->cfg.snapshot_trailing);
		if (rv) {
			free(blob);
			return ag_stop(a, now, rv, "storing a snapshot");
		}
		a->taken = blob;
		a->taken_len = len;
		a->taking = true;
		return 0;
	case IMEXD_CONS_STATE:
		return on_state(a, ca);
	case IMEXD_CONS_CHANGED:
		r = ca->apply.tag ? ag_req_by_id(a, ca->apply.tag) : NULL;
		if (!r || r->state != REQ_SUBMITTED)
			return 0;
		if (r->type == IMEXD_CMD_NODE_LEAVE && !r->left) {
			/* Out of the group: next out of the table, as a
			 * command (dispatched after this drain). */
			r->left = true;
			r->state = REQ_WAIT;
			r->retry_at = 0;
			return 0;
		}
		return ag_req_finish(a, r, 0, "", NULL, ca->apply.index,
				     NULL, 0);
	}
	return 0;
}

/* The group id consensus learnt (bootstrap, entry 1, adopted), stored
 * before the writes that follow it; 1 after a stop, as on_action(). */
static int group_store(struct imexd_agree *a, uint64_t now)
{
	uint64_t g = imexd_cons_group(a->cons);
	int rv;

	if (!g || g == imexd_raftlog_group(a->cfg.log))
		return 0;
	rv = imexd_raftlog_set_group(a->cfg.log, g);
	return rv ? ag_stop(a, now, rv, "storing the group id") : 0;
}

/* Drain consensus and report durable writes in order, until quiet.  A
 * failure stops the server (the error is returned). */
int ag_pump(struct imexd_agree *a, uint64_t now)
{
	struct imexd_cons_action ca;
	int rv;

	while (a->cons) {
		rv = group_store(a, now);
		if (rv)
			return rv > 0 ? 0 : rv;
		while (imexd_cons_next(a->cons, &ca)) {
			rv = on_action(a, now, &ca);
			if (rv > 0)
				return 0;
			if (rv < 0) {
				ag_stop(a, now, rv, "handling a raft action");
				return rv;
			}
		}
		if (a->taking) {
			a->taking = false;
			rv = imexd_cons_snapshot_taken(a->cons, now, a->taken,
						       a->taken_len);
			free(a->taken);
			a->taken = NULL;
		} else if (a->n_dones) {
			struct ag_done d = a->dones[0];

			memmove(a->dones, a->dones + 1,
				--a->n_dones * sizeof(*a->dones));
			rv = d.snapshot ?
			     imexd_cons_snapshot_persisted(a->cons, now) :
			     imexd_cons_persisted(a->cons, now, d.last);
		} else {
			break;
		}
		if (rv) {
			ag_stop(a, now, rv, "reporting a durable write");
			return rv;
		}
	}
	return 0;
}

/* (Re)start the raft server and the table from what storage holds. */
/*
 * The group stored in the log (its latest configuration) is the authority
 * on membership; NODES_FILE may differ.  Its ids must be those the names
 * give (imexd_cons_name_id): a log formed by an imexd that numbered the
 * roster would count votes for the wrong nodes.  0, or -ESTALE with a
 * line logged that names the group.
 */
static int roster_matches(struct imexd_agree *a, const struct imexd_cons *cons,
			  const struct imexd_cons_start *st)
{
	struct raft_configuration conf = { 0 }, *pc = NULL;
	char stored[256] = "";
	unsigned i, k;
	size_t off = 0;
	int bad = 0;

	for (k = st->n_entries; k-- > 0 && !pc; )
		if (st->entries[k].type == RAFT_CHANGE &&
		    !raft_configuration_decode(&st->entries[k].buf, &conf))
			pc = &conf;
	if (!pc && st->snapshot)
		pc = (struct raft_configuration *)&st->snapshot->configuration;
	for (i = 0; pc && i < pc->n; i++) {
		const struct raft_server *s = &pc->servers[i];

		char name[IMEXD_CONS_NAME_MAX];

		snprintf(name, sizeof(name), "%.*s",
			 (int)strcspn(s->address, "="), s->address);
		if (imexd_cons_name_id(name) != s->id)
			bad = 1;
		if (off < sizeof(stored))
			off += (size_t)snprintf(stored + off, sizeof(stored) - off,
						"%s%s", i ? ", " : "", s->address);
	}
	if (pc == &conf)
		raft_configuration_close(&conf);
	if (!bad)
		return 0;
	(void)cons;
	ag_log(a, 3, "the raft log was formed by nodes %s with ids this imexd does not derive from their names (an older imexd): move STATE_DIRECTORY/raft away on every node to start the group anew",
	       stored);
	return -ESTALE;
}

int ag_server_start(struct imexd_agree *a, uint64_t now)
{
	struct imexd_raftlog *log = a->cfg.log;
	struct imexd_cons_config cc = {
		.roster = (const char *const *)a->roster,
		.n_roster = a->cfg.n_roster,
		.self = a->self,
		.election_timeout_ms = a->cfg.election_timeout_ms,
		.heartbeat_timeout_ms = a->cfg.heartbeat_timeout_ms,
		.lost_voter_timeouts = a->cfg.lost_voter_timeouts,
		.snapshot_threshold = a->cfg.snapshot_threshold,
		.snapshot_trailing = a->cfg.snapshot_trailing,
		.seed = a->cfg.seed++,
	};
	const struct raft_snapshot_metadata *meta;
	struct imexd_cons_start st = { 0 };
	struct raft_entry *ents = NULL;
	struct imexd_cons *cons = NULL;
	raft_index first, last, i;
	struct raft_buffer snap;
	struct imexd_fsm *fsm;
	const char *why = NULL;
	unsigned n = 0;
	int rv;

	a->failed_now = false;
	fsm = imexd_fsm_new();
	if (!fsm)
		return -ENOMEM;
	meta = imexd_raftlog_snapshot(log, &snap);
	if (meta) {
		rv = imexd_fsm_restore(fsm, meta->index, snap.base, snap.len,
				       &why);
		if (rv) {
			imexd_fsm_free(fsm);
			a->restart_at = now + a->et;
			ag_log(a, 3, "stored snapshot refused: %s", why);
			return rv;
		}
	}
	first = imexd_raftlog_start_index(log);
	last = imexd_raftlog_last_index(log);
	if (last >= first && first) {
		ents = calloc(last - first + 1, sizeof(*ents));
		if (!ents) {
			imexd_fsm_free(fsm);
			return -ENOMEM;
		}
		for (i = first; i <= last; i++) {
			const struct raft_entry *e = imexd_raftlog_entry(log, i);

			if (!e)
				break;
			ents[n] = *e;
			ents[n++].batch = NULL;
		}
	}
	st.term = imexd_raftlog_term(log);
	st.voted_for = imexd_raftlog_vote(log);
	st.snapshot = meta;
	st.snapshot_data = meta ? snap.base : NULL;
	st.snapshot_len = meta ? snap.len : 0;
	st.start_index = n ? first : (meta ? meta->index + 1 : 1);
	st.entries = ents;
	st.n_entries = n;
	st.group = imexd_raftlog_group(log);
	rv = imexd_cons_new(&cc, &cons);
	if (!rv)
		rv = roster_matches(a, cons, &st);
	if (!rv)
		rv = imexd_cons_start(cons, now, &st);
	free(ents);
	if (rv) {
		imexd_cons_free(cons);
		imexd_fsm_free(fsm);
		a->restart_at = now + a->et;
		return rv;
	}
	imexd_fsm_free(a->fsm);
	a->fsm = fsm;
	a->cons = cons;
	a->last_leader = 0;
	a->rec_due = true;
	return ag_pump(a, now);
}

/* ---- life ---------------------------------------------------------------- */

int imexd_agree_new(const struct imexd_agree_config *cfg,
		    struct imexd_agree **out)
{
	struct imexd_agree *a;
	unsigned i;

	*out = NULL;
	if (!cfg->log || !cfg->self || !cfg->roster || !cfg->n_roster ||
	    cfg->n_roster > IMEXD_CONS_ROSTER_MAX ||
	    strlen(cfg->self) >= IMEX_NAME_MAX)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->cfg = *cfg;
	if (!a->cfg.election_timeout_ms)
		a->cfg.election_timeout_ms = 1000;
	a->et = a->cfg.election_timeout_ms;
	if (!a->cfg.snapshot_threshold)
		a->cfg.snapshot_threshold = 256;
	if (!a->cfg.snapshot_trailing)
		a->cfg.snapshot_trailing = 64;
	if (!a->cfg.request_timeout_ms)
		a->cfg.request_timeout_ms = 5 * a->et;
	if (!a->cfg.reconcile_period_ms)
		a->cfg.reconcile_period_ms = 5 * a->et;
	snprintf(a->self, sizeof(a->self), "%s", cfg->self);
	snprintf(a->cfg.identity.name, sizeof(a->cfg.identity.name), "%s",
		 cfg->self);
	a->next_id = 1;
	a->roster = calloc(cfg->n_roster, sizeof(*a->roster));
	a->fsm = imexd_fsm_new();
	if (!a->roster || !a->fsm) {
		imexd_agree_free(a);
		return -ENOMEM;
	}
	for (i = 0; i < cfg->n_roster; i++) {
		a->roster[i] = strdup(cfg->roster[i]);
		if (!a->roster[i]) {
			imexd_agree_free(a);
			return -ENOMEM;
		}
	}
	a->cfg.roster = (const char *const *)a->roster;
	*out = a;
	return 0;
}

void imexd_agree_free(struct imexd_agree *a)
{
	size_t i;

	if (!a)
		return;
	imexd_cons_free(a->cons);
	imexd_fsm_free(a->fsm);
	for (i = 0; i < a->n_reqs; i++)
		free(a->reqs[i].cmd);
	free(a->reqs);
	ag_scratch_free(a);
	free(a->scratch);
	free(a->acts);
	free(a->dones);
	free(a->taken);
	for (i = 0; i < a->n_have; i++)
		imexd_def_free(&a->have[i]);
	free(a->have);
	free(a->skip);
	if (a->roster)
		for (i = 0; i < a->cfg.n_roster; i++)
			free(a->roster[i]);
	free(a->roster);
	free(a);
}

const struct imexd_fsm *imexd_agree_fsm(const struct imexd_agree *a)
{
	return a->fsm;
}

uint64_t imexd_agree_group(const struct imexd_agree *a)
{
	return a->cons ? imexd_cons_group(a->cons) :
			 imexd_raftlog_group(a->cfg.log);
}

int imexd_agree_adopt_group(struct imexd_agree *a, uint64_t now,
			    uint64_t group)
{
	if (!group || !a->cons || imexd_cons_group(a->cons))
		return 0;
	ag_log(a, 6, "this node takes the group id %016llx of the group that joins it",
	       (unsigned long long)group);
	imexd_cons_set_group(a->cons, group);
	return ag_pump(a, now);
}

const struct imexd_metrics_hist *
imexd_agree_commit_latency(const struct imexd_agree *a)
{
	return &a->commit;
}

const struct imexd_cons *imexd_agree_cons(const struct imexd_agree *a)
{
	return a->cons;
}

bool imexd_agree_synced(const struct imexd_agree *a)
{
	return ag_synced(a);
}

bool imexd_agree_reconciled(const struct imexd_agree *a)
{
	struct imexd_rec_plan p;
	bool done;

	if (!ag_synced(a) || a->inflight || ag_plan(a, &p))
		return false;
	done = p.n == 0;
	imexd_rec_plan_free(&p);
	return done;
}
