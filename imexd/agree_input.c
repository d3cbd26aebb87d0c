// SPDX-License-Identifier: GPL-2.0
/*
 * agree: this node's identity and its kernel (reconciling it with the
 * table), and the inputs: start, messages, ticks, peers, kernel answers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree_internal.h"
#include "raftwire.h"

/* ---- identity and kernel ------------------------------------------------- */

bool ag_synced(const struct imexd_agree *a)
{
	raft_index ci;

	if (!a->cons || !imexd_cons_leader(a->cons))
		return false;
	ci = imexd_cons_commit(a->cons);
	return ci && imexd_cons_applied(a->cons) >= ci &&
	       imexd_raftlog_term_of(a->cfg.log, ci) == imexd_cons_term(a->cons);
}

static int identity(struct imexd_agree *a, uint64_t now)
{
	const struct imexd_fsm_node *n, *me = &a->cfg.identity;
	struct imexd_cmd cmd = { .type = IMEXD_CMD_NODE_SET };
	uint8_t *buf;
	size_t i, len;
	int rv;

	if (a->identity_refused || !ag_synced(a))
		return 0;
	n = imexd_fsm_node(a->fsm, a->self);
	if (n && !memcmp(n->uuid, me->uuid, 16) &&
	    !memcmp(n->fabric_uuid, me->fabric_uuid, 16) &&
	    n->partition == me->partition &&
	    n->max_channels == me->max_channels)
		return 0;
	for (i = 0; i < a->n_reqs; i++)
		if (a->reqs[i].kind == REQ_IDENTITY)
			return 0;
	cmd.u.node_set = *me;
	rv = imexd_cmd_encode(&cmd, &buf, &len, NULL);
	if (rv) {
		a->identity_refused = true;
		return rv == -ENOMEM ? rv :
		       ag_log(a, 3, "this node's fabric identity does not encode");
	}
	if (!ag_req_new(a, now, REQ_IDENTITY, 0, buf, len)) {
		free(buf);
		return -ENOMEM;
	}
	return ag_dispatch(a, now);
}

static bool skipped(const struct imexd_agree *a, const struct imexd_rec_step *s)
{
	size_t i;

	for (i = 0; i < a->n_skip; i++)
		if (a->skip[i][0] == (char)s->type &&
		    !strcmp(a->skip[i] + 1, s->def.name))
			return true;
	return false;
}

/* The kernel's domain of @d's UUID, NULL if it holds none. */
static const struct imexd_def *have_of(const struct imexd_agree *a,
				       const struct imexd_def *d)
{
	size_t i;

	for (i = 0; d && i < a->n_have; i++)
		if (!memcmp(a->have[i].uuid, d->uuid, sizeof(d->uuid)))
			return &a->have[i];
	return NULL;
}

/* The plan from the committed table to the kernel's domains. */
int ag_plan(const struct imexd_agree *a, struct imexd_rec_plan *p)
{
	struct imexd_def *want = NULL;
	const struct imexd_def *d;
	size_t pos = 0, n = 0, max = 0;
	int rv;

	for (pos = 0; imexd_fsm_domain_of(a->fsm, a->self, &pos); )
		max++;
	if (max) {
		want = malloc(max * sizeof(*want));
		if (!want)
			return -ENOMEM;
	}
	for (pos = 0; want && n < max &&
		      (d = imexd_fsm_domain_of(a->fsm, a->self, &pos)); )
		want[n++] = *d; /* shallow: the plan copies what it keeps */
	rv = imexd_rec_plan(a->self, want, n, a->have, a->n_have, p);
	free(want);
	return rv;
}

static int reconcile(struct imexd_agree *a)
{
	struct imexd_agree_action *act;
	struct imexd_rec_plan p;
	size_t i;
	int rv;

	if (a->inflight || !a->rec_due || !ag_synced(a))
		return 0;
	rv = ag_plan(a, &p);
	if (rv)
		return rv;
	for (i = 0; i < p.n && skipped(a, &p.steps[i]); i++)
		;
	if (i == p.n) {
		a->rec_due = false;
		a->n_skip = 0;
		imexd_rec_plan_free(&p);
		return 0;
	}
	act = ag_push(a, IMEXD_AGREE_KERNEL);
	if (act) {
		act->step = p.steps[i].type;
		act->def = ag_def(a, &p.steps[i].def);
		act->was = act->step == IMEXD_REC_SET ?
			   have_of(a, act->def) : NULL;
		if (act->was)
			act->was = ag_def(a, act->was);
		a->cur.type = p.steps[i].type;
		snprintf(a->cur.def.name, sizeof(a->cur.def.name), "%s",
			 p.steps[i].def.name);
		a->inflight = true;
	}
	imexd_rec_plan_free(&p);
	return act && act->def ? 0 : -ENOMEM;
}

static int have_set(struct imexd_agree *a, const struct imexd_def *kernel,
		    size_t n)
{
	if (n && !kernel)
		return -EINVAL;
	return imexd_defs_replace(&a->have, &a->n_have, kernel, n);
}

/* What every input ends with. */
/* A configuration without this node (one it has): say so once. */
static int removed_note(struct imexd_agree *a)
{
	bool out = a->cons && imexd_cons_members_index(a->cons) > 0 &&
		   imexd_cons_role(a->cons, imexd_cons_self(a->cons)) < 0;

	if (!out || a->removed_logged) {
		a->removed_logged = out;
		return 0;
	}
	a->removed_logged = true;
	return ag_log(a, 4, "removed from the group by entry %llu: stop imexd or join it again",
		      (unsigned long long)imexd_cons_members_index(a->cons));
}

int ag_settle(struct imexd_agree *a, uint64_t now)
{
	int rv = ag_pump(a, now);

	if (!rv)
		rv = ag_dispatch(a, now);
	if (!rv)
		rv = ag_expire(a, now);
	if (!rv)
		rv = identity(a, now);
	if (!rv)
		rv = reconcile(a);
	if (!rv)
		rv = removed_note(a);
	return rv;
}

/* ---- inputs -------------------------------------------------------------- */

/* ag_begin() for an input that brings the kernel's domains; -EINVAL
 * unless @ok (the input's own precondition). */
static int begin_with_kernel(struct imexd_agree *a, bool ok,
			     const struct imexd_def *kernel, size_t n)
{
	int rv = ag_begin(a);

	if (!rv && !ok)
		rv = -EINVAL;
	return rv ? rv : have_set(a, kernel, n);
}

int imexd_agree_start(struct imexd_agree *a, uint64_t now,
		      const struct imexd_def *kernel, size_t n)
{
	int rv = begin_with_kernel(a, !a->started, kernel, n);

	if (rv)
		return rv;
	a->started = true;
	/* Request ids (FORWARD tags) from the start time: a late REPLY to the
	 * previous incarnation of this node must not match a new request. */
	a->next_id = (now << 16) | 1;
	a->next_period = now + a->cfg.reconcile_period_ms;
	rv = ag_server_start(a, now);
	if (rv == -ENOMEM || rv == -ESTALE)
		return rv;
	return ag_settle(a, now);
}

int imexd_agree_receive(struct imexd_agree *a, uint64_t now, const char *from,
			const uint8_t *buf, size_t len)
{
	struct raft_message msg;
	const char *why = NULL;
	raft_id id;
	int rv = ag_begin(a);

	if (rv || !a->cons)
		return rv;
	/* The transport binds only names of NODES_FILE and of the
	 * configurations seen: a sender this server does not know yet is
	 * one of those (a node that joined while it was away). */
	id = imexd_cons_id(a->cons, from);
	if (!id)
		id = imexd_cons_learn(a->cons, from);
	if (!id || id == imexd_cons_self(a->cons))
		return ag_log_limited(a, now, "raft-stranger", from, 4,
				      "raft message from %s dropped: not a peer in the roster",
				      from);
	rv = imexd_raftwire_decode(buf, len, id, imexd_cons_name(a->cons, id),
				   &msg, &why);
	if (rv == -ENOMEM)
		return rv;
	if (rv)
		return ag_log_limited(a, now, "raft-bad", from, 4,
				      "raft message from %s dropped: %s", from,
				      why ? why : strerror(-rv));
	rv = imexd_cons_receive(a->cons, now, id, &msg);
	imexd_raftwire_release(&msg);
	if (rv) {
		ag_stop(a, now, rv, "receiving a raft message");
		return rv == -ENOMEM ? rv : 0;
	}
	return ag_settle(a, now);
}

int imexd_agree_tick(struct imexd_agree *a, uint64_t now)
{
	int rv = ag_begin(a);

	if (rv || !a->started)
		return rv;
	if (!a->cons && now >= a->restart_at) {
		rv = ag_server_start(a, now);
		if (rv == -ENOMEM)
			return rv;
	}
	if (a->cons && now >= imexd_cons_timeout(a->cons)) {
		rv = imexd_cons_tick(a->cons, now);
		if (rv) {
			ag_stop(a, now, rv, "a raft timer");
			return rv == -ENOMEM ? rv : 0;
		}
	}
	if (now >= a->next_period) {
		a->rec_due = true;
		a->next_period = now + a->cfg.reconcile_period_ms;
	}
	return ag_settle(a, now);
}

int imexd_agree_peer_up(struct imexd_agree *a, uint64_t now, const char *name)
{
	raft_id id;
	int rv = ag_begin(a);

	if (rv || !a->cons || !a->started)
		return rv;
	id = imexd_cons_id(a->cons, name);
	if (!id || id == imexd_cons_self(a->cons) ||
	    imexd_cons_state(a->cons) != RAFT_LEADER)
		return 0;
	rv = imexd_cons_heartbeat(a->cons, now);
	if (rv) {
		ag_stop(a, now, rv, "a heartbeat to a node back");
		return rv == -ENOMEM ? rv : 0;
	}
	return ag_settle(a, now);
}

int imexd_agree_peer_replaced(struct imexd_agree *a, uint64_t now,
			      const char *name)
{
	int rv = ag_begin(a);

	if (rv)
		return rv;
	rv = ag_forwards_again(a, name, true,
			       "the connection to the leader was replaced before the change was answered; it may or may not have been made: check and retry");
	if (rv)
		return rv;
	return ag_settle(a, now);
}

uint64_t imexd_agree_timeout(const struct imexd_agree *a)
{
	uint64_t t = a->next_period;
	size_t i;

	if (a->cons) {
		/* Once: libraft's leader walks its followers for it. */
		uint64_t ct = imexd_cons_timeout(a->cons);

		if (ct < t)
			t = ct;
	} else if (a->restart_at < t) {
		t = a->restart_at;
	}
	for (i = 0; i < a->n_reqs; i++) {
		if (a->reqs[i].deadline < t)
			t = a->reqs[i].deadline;
		if (a->cons && a->reqs[i].state == REQ_WAIT &&
		    a->reqs[i].retry_at < t &&
		    a->reqs[i].retry_at)
			t = a->reqs[i].retry_at;
	}
	return t;
}

int imexd_agree_kernel_done(struct imexd_agree *a, uint64_t now, int error,
			    const struct imexd_def *kernel, size_t n)
{
	int rv = begin_with_kernel(a, a->inflight, kernel, n);

	if (rv)
		return rv;
	a->inflight = false;
	if (error) {
		if (!imexd_grow((void **)&a->skip, &a->cap_skip, a->n_skip + 1,
			  sizeof(*a->skip))) {
			a->skip[a->n_skip][0] = (char)a->cur.type;
			snprintf(a->skip[a->n_skip] + 1, IMEX_NAME_MAX, "%s",
				 a->cur.def.name);
			a->n_skip++;
		}
		rv = ag_log(a, 4, "kernel refused to %s domain %s: %s; retrying at the next reconcile",
			   a->cur.type == IMEXD_REC_SET ? "set" : "remove",
			   a->cur.def.name, strerror(error));
		if (rv)
			return rv;
	}
	return ag_settle(a, now);
}
