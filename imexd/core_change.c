// SPDX-License-Identifier: GPL-2.0
/*
 * The coordinator of a two-phase change: the node whose kernel accepted the
 * administrator's request.
 *
 *   CONNECT  every other member connected; QUERY_FREE/FREE when channels
 *            are asked for by count (pipelined behind HELLO on a fresh
 *            connection), the lowest ids free everywhere are picked
 *   PREPARE  to its own kernel (where two coordinators of one domain meet:
 *            it holds one change per domain) and to every member at once;
 *            each member votes
 *   COMMIT   all yes: the outcome is recorded, the own kernel commits and
 *            the definition is stored *before* any COMMIT leaves, so a
 *            coordinator that restarts can never have let others commit
 *            what it lacks; then COMMIT to all and collect ACKs
 *   ABORT    any refusal or silence: ABORT to all that were asked; the
 *            request fails with the refusing node's errno and message, or
 *            is retried when the only refusals were collisions with other
 *            changes in flight (reserved channels, a busy domain, a stale
 *            generation), after a delay that depends on this node's rank
 *            so two colliding coordinators do not meet again
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core_internal.h"

struct core_cchange *core_cc_find(const struct imexd_core *core, uint64_t id)
{
	size_t i;

	for (i = 0; i < core->ncc; i++)
		if (core->cc[i]->id == id)
			return core->cc[i];
	return NULL;
}

/* Done and nothing of it left in the kernel: forget it. */
static void core_cc_gc(struct imexd_core *core)
{
	size_t i = 0;

	while (i < core->ncc) {
		struct core_cchange *cc = core->cc[i];

		if (cc->done && cc->local != LOC_PREPARING &&
		    cc->local != LOC_COMMITTING && cc->local != LOC_ABORTING) {
			memmove(&core->cc[i], &core->cc[i + 1],
				(core->ncc - i - 1) * sizeof(struct core_cchange *));
			core->ncc--;
			core_cc_release(cc);
			core->wanted_dirty = true;
			continue;
		}
		i++;
	}
}

bool core_cc_names(const struct imexd_core *core, const char *name)
{
	size_t i;
	uint16_t t;

	for (i = 0; i < core->ncc; i++) {
		const struct core_cchange *cc = core->cc[i];

		if (cc->done)
			continue;
		for (t = 0; t < cc->ntargets; t++)
			if (!strcmp(core->peers[cc->targets[t].peer].name, name))
				return true;
	}
	return false;
}

bool core_cc_holds(const struct imexd_core *core, const uint8_t uuid[16])
{
	size_t i;

	for (i = 0; i < core->ncc; i++) {
		const struct core_cchange *cc = core->cc[i];

		if (!memcmp(cc->uuid, uuid, 16) &&
		    (cc->local == LOC_PREPARING || cc->local == LOC_PREPARED ||
		     cc->local == LOC_COMMITTING || cc->local == LOC_ABORTING))
			return true;
	}
	return false;
}

void core_cc_finish(struct imexd_core *core, struct core_cchange *cc,
			   int err, const char *msg)
{
	cc->done = true;
	core->wanted_dirty = true;
	core_request_done(core, cc->req_id, err, "%s", msg);
}

/* ---- building the change ---- */

static void core_cc_reset_targets(struct core_cchange *cc)
{
	uint16_t t;

	for (t = 0; t < cc->ntargets; t++) {
		cc->targets[t].answered = false;
		cc->targets[t].sent_conn = 0;
	}
}

/* ---- phases ---- */

static void core_cc_send(struct imexd_core *core, struct core_cchange *cc,
			 struct core_target *t, uint8_t type, uint64_t conn)
{
	struct imexd_msg m;

	core_msg_init(core, &m, type, cc->uuid);
	switch (type) {
	case IMEXD_MSG_QUERY_FREE:
		m.u.query_free.change_id = cc->id;
		m.u.query_free.count = cc->count;
		break;
	case IMEXD_MSG_PREPARE:
		m.u.prepare.change_id = cc->id;
		m.u.prepare.op = cc->op;
		m.u.prepare.lease_ms = core->cfg.lease_ms;
		if (imexd_def_copy(&m.u.prepare.def, &cc->newdef))
			abort();
		t->got_prepare = true;
		break;
	default:
		m.u.change.change_id = cc->id;
		break;
	}
	core_send_conn(core, conn, &m);
	t->sent_conn = conn;
}

static void core_cc_abort(struct imexd_core *core, struct core_cchange *cc,
			  int err, bool retryable, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void core_cc_enter_prepare(struct imexd_core *core,
				  struct core_cchange *cc)
{
	char msg[IMEXD_MESSAGE_MAX + 1];
	const char *owner;
	bool pending;
	uint32_t i;
	int err;

	err = core_cc_build(core, cc, msg, sizeof(msg));
	if (err) {
		core_cc_finish(core, cc, err, msg);
		return;
	}
	cc->phase = CP_PREPARE;
	cc->deadline = core->now + core->cfg.step_timeout_ms;
	core_cc_reset_targets(cc);
	/* Our own model first: a collision here is worth a retry. */
	if (core_dom_busy(core, cc->uuid, cc->id)) {
		core_cc_abort(core, cc, EBUSY, true,
			      "node '%s' refused: domain '%s' has another change in progress",
			      core->cfg.node_name, cc->name);
		return;
	}
	if (cc->op == IMEX_CHANGE_ADD_CHANNELS || cc->op == IMEX_CHANGE_CREATE) {
		for (i = 0; i < cc->ndelta; i++) {
			if (core_reserved_by(core, cc->delta[i].id, cc->uuid,
					     &owner, &pending) != 2)
				continue;
			core_cc_abort(core, cc, EADDRINUSE, true,
				      "node '%s' refused: channel %u is reserved by a pending change of domain '%s'",
				      core->cfg.node_name, cc->delta[i].id,
				      owner);
			return;
		}
	}
	cc->local = LOC_PREPARING;
	core_kernel_prepare(core, core_kop_add(core, KOP_COORD_PREPARE, cc->id,
					       cc->uuid),
			    cc->id, cc->op, core->cfg.lease_ms, &cc->newdef,
			    cc->delta,
			    cc->op == IMEX_CHANGE_ADD_CHANNELS ||
			    cc->op == IMEX_CHANGE_REMOVE_CHANNELS ?
			    cc->ndelta : 0);
}

static void core_cc_commit(struct imexd_core *core, struct core_cchange *cc)
{
	core_outcome_put(core, cc->id, IMEXD_OUTCOME_COMMITTED);
	cc->phase = CP_COMMIT;
	cc->deadline = CORE_NO_TIME;	/* set once our own commit is in */
	core_cc_reset_targets(cc);
	cc->local = LOC_COMMITTING;
	core_kernel_simple(core, IMEXD_ACT_KERNEL_COMMIT,
			   core_kop_add(core, KOP_COORD_COMMIT, cc->id, cc->uuid),
			   cc->id);
}

void core_cc_advance(struct imexd_core *core, struct core_cchange *cc)
{
	bool all = true;
	uint16_t i;

	if (cc->done)
		return;
	switch (cc->phase) {
	case CP_CONNECT:
		for (i = 0; i < cc->ntargets; i++) {
			struct core_target *t = &cc->targets[i];
			int p = t->peer;
			uint64_t conn;

			if (!cc->count) {
				all &= core_peer_usable(core, p);
				continue;
			}
			if (t->answered)
				continue;
			all = false;
			conn = core->peers[p].conn ? core->peers[p].conn :
			       core_peer_conn_pending(core, p);
			if (conn && t->sent_conn != conn)
				core_cc_send(core, cc, t, IMEXD_MSG_QUERY_FREE,
					     conn);
		}
		if (!all)
			return;
		if (cc->count) {
			char msg[IMEXD_MESSAGE_MAX + 1];
			int err = core_cc_pick(core, cc, msg, sizeof(msg));

			if (err) {
				core_cc_finish(core, cc, err, msg);
				return;
			}
		}
		core_cc_enter_prepare(core, cc);
		if (cc->phase == CP_PREPARE && !cc->done)
			core_cc_advance(core, cc);
		return;
	case CP_PREPARE:
		for (i = 0; i < cc->ntargets; i++) {
			struct core_target *t = &cc->targets[i];
			uint64_t conn = core->peers[t->peer].conn;

			if (t->answered)
				continue;
			all = false;
			if (conn && t->sent_conn != conn)
				core_cc_send(core, cc, t, IMEXD_MSG_PREPARE,
					     conn);
		}
		if (all && cc->local == LOC_PREPARED)
			core_cc_commit(core, cc);
		return;
	case CP_COMMIT:
		if (cc->local != LOC_COMMITTED)
			return;
		for (i = 0; i < cc->ntargets; i++) {
			struct core_target *t = &cc->targets[i];
			uint64_t conn = core->peers[t->peer].conn;

			if (t->answered)
				continue;
			all = false;
			if (conn && t->sent_conn != conn)
				core_cc_send(core, cc, t, IMEXD_MSG_COMMIT,
					     conn);
		}
		if (all)
			core_cc_success(core, cc, "");
		return;
	case CP_RETRY:
		return;
	}
}

/* Rank among the members by name: spaces out colliding retries. */
static uint32_t core_cc_rank(const struct imexd_core *core,
			     const struct core_cchange *cc)
{
	uint32_t r = 0;
	uint16_t m;

	for (m = 0; m < cc->newdef.nmembers; m++)
		if (strcmp(cc->newdef.members[m].name, core->cfg.node_name) < 0)
			r++;
	return r;
}

static void core_cc_abort(struct imexd_core *core, struct core_cchange *cc,
			  int err, bool retryable, const char *fmt, ...)
{
	char msg[IMEXD_MESSAGE_MAX + 1];
	uint16_t i;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	core_outcome_put(core, cc->id, IMEXD_OUTCOME_ABORTED);
	if (cc->local == LOC_PREPARED) {
		cc->local = LOC_ABORTING;
		core_kernel_simple(core, IMEXD_ACT_KERNEL_ABORT,
				   core_kop_add(core, KOP_COORD_ABORT, cc->id,
						cc->uuid), cc->id);
	} else if (cc->local == LOC_PREPARING) {
		cc->abort_when_prepared = true;
	}
	for (i = 0; i < cc->ntargets; i++) {
		struct core_target *t = &cc->targets[i];
		uint64_t conn = core->peers[t->peer].conn;

		if (t->got_prepare && conn)
			core_cc_send(core, cc, t, IMEXD_MSG_ABORT, conn);
		t->got_prepare = false;
	}
	/*
	 * A member that restarted moments ago votes EINPROGRESS until it has
	 * caught up with its peers: wait for it, up to about a lease, without
	 * spending a collision retry, so a create right after the daemons
	 * start simply takes a little longer.
	 */
	if (err == EINPROGRESS && cc->waits < CORE_WAITS) {
		cc->waits++;
		core_log(core, IMEXD_LOG_INFO,
			 "%s of domain '%s' waits for a member that just restarted (%s)",
			 core_cc_what(cc), cc->name, msg);
		cc->phase = CP_RETRY;
		cc->deadline = core->now + CORE_WAIT_MS;
		return;
	}
	if (retryable && cc->retries < CORE_RETRIES) {
		uint64_t delay = (uint64_t)(cc->retries + 1) *
				 (50 + 20 * core_cc_rank(core, cc));

		cc->retries++;
		core_log(core, IMEXD_LOG_INFO,
			 "%s of domain '%s' collided (%s); retry %d in %llu ms",
			 core_cc_what(cc), cc->name, msg, cc->retries,
			 (unsigned long long)delay);
		cc->phase = CP_RETRY;
		cc->deadline = core->now + delay;
		return;
	}
	/* A collision that outlived the retries reads as what it is. */
	if (err == EAGAIN)
		err = EADDRINUSE;
	core_cc_finish(core, cc, err, msg);
}

static void core_cc_retry(struct imexd_core *core, struct core_cchange *cc)
{
	if (cc->local == LOC_PREPARING || cc->local == LOC_ABORTING) {
		cc->deadline = core->now + 10;	/* our kernel is not done */
		return;
	}
	cc->local = LOC_NONE;
	cc->abort_when_prepared = false;
	cc->id = core_new_id(core);
	cc->phase = CP_CONNECT;
	cc->deadline = core->now + core->cfg.step_timeout_ms;
	core_cc_reset_targets(cc);
	if (cc->freebits) {
		memset(cc->freebits, 0xff, (core->cfg.max_channels + 7) / 8 + 1);
		free(cc->delta);
		cc->delta = NULL;
		cc->ndelta = 0;
	}
	core_cc_advance(core, cc);
}

/* ---- events ---- */

static struct core_target *core_cc_target(struct core_cchange *cc, int p)
{
	uint16_t i;

	for (i = 0; i < cc->ntargets; i++)
		if (cc->targets[i].peer == p)
			return &cc->targets[i];
	return NULL;
}

static bool core_errno_retryable(int err)
{
	return err == EAGAIN || err == EBUSY || err == ESTALE ||
	       err == EINPROGRESS;
}

void core_cc_msg(struct imexd_core *core, int p, const struct imexd_msg *msg)
{
	uint64_t id = msg->type == IMEXD_MSG_FREE ? msg->u.free.change_id :
		      msg->type == IMEXD_MSG_VOTE ? msg->u.vote.change_id :
		      msg->u.ack.change_id;
	struct core_cchange *cc = core_cc_find(core, id);
	const char *peer = core->peers[p].name;
	struct core_target *t;
	uint32_t i, n;

	if (!cc || cc->done)
		return;			/* late answer to a finished change */
	t = core_cc_target(cc, p);
	if (!t || memcmp(msg->domain_uuid, cc->uuid, 16)) {
		core_log_once(core, "non-member", peer, core->peers[p].epoch,
			      IMEXD_LOG_WARN,
			      "%s from node '%s', which change %016llx does not involve: dropped",
			      core_msg_name(msg->type), peer,
			      (unsigned long long)id);
		return;
	}
	switch (msg->type) {
	case IMEXD_MSG_FREE:
		if (cc->phase != CP_CONNECT || t->answered || !cc->freebits)
			return;
		n = CORE_MIN(msg->u.free.nbits, core->cfg.max_channels);
		for (i = 0; i < core->cfg.max_channels; i++)
			if (i >= n || !(msg->u.free.bits[i / 8] & (1u << (i % 8))))
				cc->freebits[i / 8] &= ~(1u << (i % 8));
		t->answered = true;
		break;
	case IMEXD_MSG_VOTE:
		if (cc->phase != CP_PREPARE || t->answered)
			return;
		if (msg->u.vote.error) {
			int err = msg->u.vote.error;

			core_cc_abort(core, cc, err, core_errno_retryable(err),
				      "node '%s' refused: %s", peer,
				      msg->u.vote.message[0] ?
				      msg->u.vote.message : strerror(err));
			return;
		}
		t->answered = true;
		break;
	case IMEXD_MSG_ACK:
		if (cc->phase != CP_COMMIT || msg->u.ack.what != IMEXD_ACK_COMMIT)
			return;
		t->answered = true;
		break;
	}
	core_cc_advance(core, cc);
}

void core_cc_kernel_done(struct imexd_core *core, const struct core_kop *k,
			 int error, const char *message)
{
	struct core_cchange *cc = core_cc_find(core, k->change_id);

	if (!cc) {
		if (k->kind == KOP_COORD_PREPARE && !error)
			core_kernel_simple(core, IMEXD_ACT_KERNEL_ABORT,
					   core_kop_add(core, KOP_FIRE_AND_FORGET,
							k->change_id, k->uuid),
					   k->change_id);
		return;
	}
	switch (k->kind) {
	case KOP_COORD_PREPARE:
		if (cc->abort_when_prepared || cc->done ||
		    cc->phase != CP_PREPARE) {
			cc->abort_when_prepared = false;
			if (error) {
				cc->local = LOC_NONE;
				break;
			}
			cc->local = LOC_ABORTING;
			core_kernel_simple(core, IMEXD_ACT_KERNEL_ABORT,
					   core_kop_add(core, KOP_COORD_ABORT,
							cc->id, cc->uuid),
					   cc->id);
			break;
		}
		if (error) {
			cc->local = LOC_NONE;
			core_cc_abort(core, cc, error,
				      error == EBUSY || error == EAGAIN,
				      "node '%s' refused: %s",
				      core->cfg.node_name,
				      message[0] ? message : strerror(error));
			break;
		}
		cc->local = LOC_PREPARED;
		core_cc_advance(core, cc);
		break;
	case KOP_COORD_COMMIT:
		cc->local = LOC_COMMITTED;
		if (error == ENOENT) {
			/* Our lease ran out first: apply the agreed result. */
			core_log(core, IMEXD_LOG_WARN,
				 "change %016llx expired in this node's kernel before the commit: re-applying it",
				 (unsigned long long)cc->id);
			core_dom_reapply(core, &cc->newdef);
		} else {
			if (error)
				core_log(core, IMEXD_LOG_ERR,
					 "kernel refused to commit change %016llx: %s",
					 (unsigned long long)cc->id, message);
			core_dom_committed(core, &cc->newdef,
					   core->cfg.node_name);
		}
		cc->deadline = core->now + core->cfg.step_timeout_ms;
		core_cc_advance(core, cc);
		break;
	case KOP_COORD_ABORT:
		cc->local = LOC_NONE;
		break;
	default:
		break;
	}
	core_cc_gc(core);
}

/* A connection came or went, or a peer changed state: resend what's due. */
void core_cc_peer_event(struct imexd_core *core, int p)
{
	size_t i;

	for (i = 0; i < core->ncc; i++) {
		struct core_cchange *cc = core->cc[i];

		if (!cc->done && core_cc_target(cc, p))
			core_cc_advance(core, cc);
	}
}

/* A new instance of @p lost whatever it had prepared: its yes is void. */
void core_cc_peer_restarted(struct imexd_core *core, int p)
{
	size_t i;

	for (i = 0; i < core->ncc; i++) {
		struct core_cchange *cc = core->cc[i];
		struct core_target *t = core_cc_target(cc, p);

		if (cc->done || !t)
			continue;
		t->answered = false;
		t->sent_conn = 0;
		if (cc->phase == CP_PREPARE && t->got_prepare)
			core_cc_abort(core, cc, EAGAIN, true,
				      "node '%s' restarted during the change",
				      core->peers[p].name);
	}
}

/* Name the first missing member, and how many more there are. */
static void core_cc_timeout(struct imexd_core *core, struct core_cchange *cc)
{
	struct core_target *miss = NULL;
	uint16_t i, more = 0;
	const char *addr;

	for (i = 0; i < cc->ntargets; i++) {
		if (cc->targets[i].answered ||
		    (cc->phase == CP_CONNECT && !cc->count &&
		     core_peer_usable(core, cc->targets[i].peer)))
			continue;
		if (!miss)
			miss = &cc->targets[i];
		else
			more++;
	}
	if (cc->phase == CP_COMMIT) {
		char late[128];

		snprintf(late, sizeof(late),
			 " (node '%s'%s has not confirmed yet; it will catch up)",
			 miss ? core->peers[miss->peer].name : "?",
			 more ? " and others" : "");
		core_cc_success(core, cc, miss ? late : "");
		return;
	}
	if (!miss) {
		core_cc_abort(core, cc, ETIMEDOUT, false,
			      "this node's kernel did not answer within %u ms",
			      core->cfg.step_timeout_ms);
		return;
	}
	addr = core->peers[miss->peer].addr;
	if (!core_peer_usable(core, miss->peer)) {
		char extra[48] = "";

		if (more)
			snprintf(extra, sizeof(extra), " (and %u more)", more);
		core_cc_abort(core, cc, EHOSTUNREACH, false,
			      "node '%s' (%s) is not reachable%s: check that imexd runs there",
			      core->peers[miss->peer].name, addr, extra);
		return;
	}
	core_cc_abort(core, cc, ETIMEDOUT, false,
		      "node '%s' (%s) did not %s within %u ms",
		      core->peers[miss->peer].name, addr,
		      cc->phase == CP_CONNECT ? "answer" : "vote",
		      core->cfg.step_timeout_ms);
}

void core_cc_timer(struct imexd_core *core)
{
	size_t i;

	for (i = 0; i < core->ncc; i++) {
		struct core_cchange *cc = core->cc[i];

		if (cc->done || core->now < cc->deadline)
			continue;
		if (cc->phase == CP_RETRY)
			core_cc_retry(core, cc);
		else
			core_cc_timeout(core, cc);
	}
	core_cc_gc(core);
}

uint64_t core_cc_deadline(const struct imexd_core *core)
{
	uint64_t t = CORE_NO_TIME;
	size_t i;

	for (i = 0; i < core->ncc; i++)
		if (!core->cc[i]->done)
			t = CORE_MIN(t, core->cc[i]->deadline);
	return t;
}

void core_cc_shutdown(struct imexd_core *core)
{
	size_t i;

	for (i = 0; i < core->ncc; i++) {
		struct core_cchange *cc = core->cc[i];

		if (cc->done)
			continue;
		if (cc->phase == CP_COMMIT)
			core_cc_success(core, cc,
					" (imexd stopped before every member confirmed)");
		else
			core_cc_abort(core, cc, ESHUTDOWN, false,
				      "imexd on '%s' is shutting down: retry once it runs again",
				      core->cfg.node_name);
	}
}
