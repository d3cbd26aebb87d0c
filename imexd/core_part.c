// SPDX-License-Identifier: GPL-2.0
/*
 * The participant side of a two-phase change: every member other than the
 * coordinator.
 *
 * PREPARE is checked here before the kernel sees it: the sender must be a
 * member of the domain as it is and as it will be, the new generation must
 * follow ours (else ESTALE, with our SYNC so the behind side catches up),
 * and the domain must not be held by another change (EBUSY) nor the
 * channels by another reservation (EAGAIN): those are the refusals a
 * coordinator retries.  The kernel then prepares under a lease and we vote.
 *
 * A member that voted yes and hears nothing is in doubt.  At half the lease
 * it asks the coordinator and the other members for the outcome, and keeps
 * asking (less often) after the lease ran out and the kernel rolled back:
 * a COMMITTED answer is then applied afresh from the definition.  While in
 * doubt the domain takes no other change, so two different definitions can
 * never be committed under one generation.  The doubt also ends when a SYNC
 * shows the generation (committed, or superseded), when the coordinator
 * comes back as a new instance without it (it stores a commit before it
 * sends one, so it would have it), or when the coordinator is evicted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core_internal.h"

struct core_pchange *core_pc_find(const struct imexd_core *core, uint64_t id)
{
	size_t i;

	for (i = 0; i < core->npc; i++)
		if (core->pc[i]->id == id)
			return core->pc[i];
	return NULL;
}

struct core_pchange *core_pc_for_domain(const struct imexd_core *core,
					const uint8_t uuid[16])
{
	size_t i;

	for (i = 0; i < core->npc; i++)
		if (!core->pc[i]->done && !memcmp(core->pc[i]->uuid, uuid, 16))
			return core->pc[i];
	return NULL;
}

static bool core_pc_in_doubt(const struct imexd_core *core,
			     const struct core_pchange *pc)
{
	return pc->phase == PP_EXPIRED ||
	       (pc->phase == PP_PREPARED &&
		core->now >= pc->lease_end - pc->lease_ms / 2);
}

bool core_pc_names(const struct imexd_core *core, const char *name)
{
	size_t i;

	for (i = 0; i < core->npc; i++) {
		const struct core_pchange *pc = core->pc[i];

		if (pc->done)
			continue;
		if (!strcmp(pc->coord, name))
			return true;
		/* Only a member in doubt needs the others: ask them. */
		if (core_pc_in_doubt(core, pc) &&
		    core_def_member(&pc->newdef, name) >= 0)
			return true;
	}
	return false;
}

static void core_pc_release(struct core_pchange *pc)
{
	imexd_def_free(&pc->newdef);
	free(pc->delta);
	free(pc);
}

void core_pc_free_all(struct imexd_core *core)
{
	size_t i;

	for (i = 0; i < core->npc; i++)
		core_pc_release(core->pc[i]);
	free(core->pc);
	core->pc = NULL;
	core->npc = 0;
}

static void core_pc_gc(struct imexd_core *core)
{
	size_t i = 0;

	while (i < core->npc) {
		struct core_pchange *pc = core->pc[i];

		if (pc->done) {
			memmove(&core->pc[i], &core->pc[i + 1],
				(core->npc - i - 1) * sizeof(struct core_pchange *));
			core->npc--;
			core_pc_release(pc);
			core->wanted_dirty = true;
			continue;
		}
		i++;
	}
}

static void core_pc_vote(struct imexd_core *core, int p, uint64_t id,
			 const uint8_t uuid[16], int error, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void core_pc_vote(struct imexd_core *core, int p, uint64_t id,
			 const uint8_t uuid[16], int error, const char *fmt, ...)
{
	struct imexd_msg m;
	va_list ap;

	core_msg_init(core, &m, IMEXD_MSG_VOTE, uuid);
	m.u.vote.change_id = id;
	m.u.vote.error = error;
	va_start(ap, fmt);
	vsnprintf(m.u.vote.message, sizeof(m.u.vote.message), fmt, ap);
	va_end(ap);
	if (error)
		core_log(core, IMEXD_LOG_INFO, "change %016llx refused: %s",
			 (unsigned long long)id, m.u.vote.message);
	core_send_peer(core, p, &m);
}

static void core_pc_ack(struct imexd_core *core, const char *to, uint64_t id,
			const uint8_t uuid[16], uint8_t what, int error)
{
	struct imexd_msg m;

	core_msg_init(core, &m, IMEXD_MSG_ACK, uuid);
	m.u.ack.change_id = id;
	m.u.ack.what = what;
	m.u.ack.error = error;
	core_send_peer(core, core_peer_find(core, to), &m);
}

/* ---- PREPARE ---- */

static int core_pc_delta(const struct imexd_core *core,
			 const struct core_domain *d, uint8_t op,
			 const struct imexd_def *nd, struct imexd_channel **out,
			 uint32_t *n)
{
	static const struct imexd_def none;

	(void)core;
	switch (op) {
	case IMEX_CHANGE_CREATE:
		return core_chan_diff(nd, &none, out, n);
	case IMEX_CHANGE_ADD_CHANNELS:
		return core_chan_diff(nd, &d->def, out, n);
	case IMEX_CHANGE_REMOVE_CHANNELS:
		return core_chan_diff(&d->def, nd, out, n);
	default:
		*out = NULL;
		*n = 0;
		return 0;
	}
}

static void core_pc_prepare(struct imexd_core *core, int p,
			    const struct imexd_msg *msg)
{
	const char *peer = core->peers[p].name;
	const char *self = core->cfg.node_name;
	uint64_t id = msg->u.prepare.change_id;
	uint8_t op = msg->u.prepare.op;
	struct core_pchange *pc = core_pc_find(core, id);
	struct imexd_def nd = msg->u.prepare.def;
	struct core_domain *d;
	const char *owner;
	bool pending;
	uint32_t i;

	memcpy(nd.uuid, msg->domain_uuid, 16);
	if (pc) {
		/* A repeat (new connection, duplicate): say it again. */
		if (!pc->done && pc->phase == PP_PREPARED)
			core_pc_vote(core, p, id, nd.uuid, 0, "%s", "");
		return;
	}
	if (core_outcome_get(core, id) == IMEXD_OUTCOME_ABORTED) {
		core_pc_vote(core, p, id, nd.uuid, ECANCELED,
			     "change %016llx was already aborted",
			     (unsigned long long)id);
		return;
	}
	if (core_outcome_get(core, id) == IMEXD_OUTCOME_COMMITTED)
		return;
	d = core_dom_find(core, nd.uuid);
	if (op == IMEX_CHANGE_CREATE || !d || d->kind != DOM_LIVE) {
		if (core_def_member(&nd, peer) < 0 ||
		    core_def_member(&nd, self) < 0) {
			core_log_once(core, op == IMEX_CHANGE_CREATE ?
				      "non-member" : "unknown-domain", peer,
				      core->peers[p].epoch, IMEXD_LOG_WARN,
				      "PREPARE from node '%s' for domain '%s', which does not name both of us: dropped",
				      peer, nd.name);
			return;
		}
	} else if (core_def_member(&d->def, peer) < 0) {
		core_log_once(core, "non-member", peer, core->peers[p].epoch,
			      IMEXD_LOG_WARN,
			      "PREPARE from node '%s', not a member of domain '%s': dropped",
			      peer, d->def.name);
		return;
	}
	if (op == IMEX_CHANGE_CREATE && d) {
		core_pc_vote(core, p, id, nd.uuid, EEXIST,
			     "domain UUID of '%s' is already %s on node '%s'",
			     nd.name, d->kind == DOM_TOMBSTONE ?
			     "used by a deleted domain" : "in use", self);
		return;
	}
	if (op != IMEX_CHANGE_CREATE && (!d || d->kind != DOM_LIVE ||
					 !d->in_kernel)) {
		core_pc_vote(core, p, id, nd.uuid, ESTALE,
			     "domain '%s' is not on node '%s' yet", nd.name,
			     self);
		return;
	}
	if (core_def_member(&nd, self) < 0) {
		core_pc_vote(core, p, id, nd.uuid, EADDRNOTAVAIL,
			     "node '%s' is not in the new member list of domain '%s'",
			     self, nd.name);
		return;
	}
	if (d && d->def.generation + 1 != nd.generation) {
		core_pc_vote(core, p, id, nd.uuid, ESTALE,
			     "domain '%s' is at generation %llu on node '%s'; the change makes %llu",
			     nd.name, (unsigned long long)d->def.generation,
			     self, (unsigned long long)nd.generation);
		/* Whoever is behind catches up from this. */
		core_dom_sync_one(core, p, d);
		return;
	}
	if (op == IMEX_CHANGE_SET_MEMBERS)
		for (i = 0; i < d->def.nmembers; i++)
			if (core_def_member(&nd, d->def.members[i].name) < 0)
				core_pc_evicting(core, nd.uuid,
						 d->def.members[i].name);
	if (core_quarantined(core)) {
		/* EINPROGRESS: the coordinator waits for us, see core_cc_abort. */
		core_pc_vote(core, p, id, nd.uuid, EINPROGRESS,
			     "node '%s' restarted moments ago and is catching up with its peers: retry in a few seconds",
			     self);
		return;
	}
	if (core_dom_busy(core, nd.uuid, 0)) {
		struct core_pchange *old = core_pc_for_domain(core, nd.uuid);

		if (old && old->phase != PP_PREPARING)
			old->next_query = core->now;	/* settle it soon */
		core_pc_vote(core, p, id, nd.uuid, EBUSY,
			     "domain '%s' has another change in progress on node '%s'",
			     nd.name, self);
		return;
	}

	pc = calloc(1, sizeof(*pc));
	if (!pc || imexd_def_copy(&pc->newdef, &nd)) {
		free(pc);
		core_pc_vote(core, p, id, nd.uuid, ENOMEM,
			     "imexd on node '%s' is out of memory", self);
		return;
	}
	core_def_sort(&pc->newdef);
	if (core_pc_delta(core, d, op, &pc->newdef, &pc->delta, &pc->ndelta)) {
		core_pc_release(pc);
		core_pc_vote(core, p, id, nd.uuid, ENOMEM,
			     "imexd on node '%s' is out of memory", self);
		return;
	}
	for (i = 0; i < pc->ndelta && op != IMEX_CHANGE_REMOVE_CHANNELS; i++) {
		int r = core_reserved_by(core, pc->delta[i].id, nd.uuid, &owner,
					 &pending);

		if (!r)
			continue;
		core_pc_vote(core, p, id, nd.uuid, r == 2 ? EAGAIN : EADDRINUSE,
			     r == 2 ? "channel %u is reserved by a pending change of domain '%s'" :
			     "channel %u belongs to domain '%s'",
			     pc->delta[i].id, owner);
		core_pc_release(pc);
		return;
	}
	pc->id = id;
	memcpy(pc->uuid, nd.uuid, 16);
	snprintf(pc->coord, sizeof(pc->coord), "%s", peer);
	pc->coord_epoch = core->peers[p].epoch;
	pc->op = op;
	pc->lease_ms = msg->u.prepare.lease_ms ? msg->u.prepare.lease_ms :
		       IMEX_LEASE_DEFAULT_MS;
	pc->lease_ms = CORE_MIN(pc->lease_ms, IMEX_LEASE_MAX_MS);
	pc->phase = PP_PREPARING;
	if (core->npc == core->pc_cap) {
		size_t cap = core->pc_cap ? core->pc_cap * 2 : 8;
		struct core_pchange **n = realloc(core->pc,
						 cap * sizeof(struct core_pchange *));

		if (!n)
			abort();
		core->pc = n;
		core->pc_cap = cap;
	}
	core->pc[core->npc++] = pc;
	core->wanted_dirty = true;
	/* The coordinator's lease, not ours, bounds this change. */
	core_kernel_prepare(core, core_kop_add(core, KOP_PART_PREPARE, id,
					       pc->uuid),
			    id, op, pc->lease_ms, &pc->newdef, pc->delta,
			    op == IMEX_CHANGE_ADD_CHANNELS ||
			    op == IMEX_CHANGE_REMOVE_CHANNELS ? pc->ndelta : 0);
}

/* ---- outcomes ---- */

static void core_pc_commit(struct imexd_core *core, struct core_pchange *pc)
{
	switch (pc->phase) {
	case PP_PREPARING:
		pc->commit_when_prepared = 1;
		break;
	case PP_PREPARED:
		pc->phase = PP_COMMITTING;
		core_kernel_simple(core, IMEXD_ACT_KERNEL_COMMIT,
				   core_kop_add(core, KOP_PART_COMMIT, pc->id,
						pc->uuid), pc->id);
		break;
	case PP_EXPIRED:
		/* The kernel let it go: apply the agreed definition anew. */
		core_log(core, IMEXD_LOG_WARN,
			 "change %016llx of domain '%s' committed after its lease ran out here: re-applying it",
			 (unsigned long long)pc->id, pc->newdef.name);
		core_outcome_put(core, pc->id, IMEXD_OUTCOME_COMMITTED);
		pc->done = true;
		core_dom_reapply(core, &pc->newdef);
		core_pc_ack(core, pc->coord, pc->id, pc->uuid,
			    IMEXD_ACK_COMMIT, 0);
		break;
	default:
		break;
	}
}

static void core_pc_abort(struct imexd_core *core, struct core_pchange *pc,
			  bool ack)
{
	switch (pc->phase) {
	case PP_PREPARING:
		pc->commit_when_prepared = -1;
		break;
	case PP_PREPARED:
		pc->phase = PP_ABORTING;
		core_kernel_simple(core, IMEXD_ACT_KERNEL_ABORT,
				   core_kop_add(core, KOP_PART_ABORT, pc->id,
						pc->uuid), pc->id);
		break;
	case PP_EXPIRED:
		core_outcome_put(core, pc->id, IMEXD_OUTCOME_ABORTED);
		pc->done = true;
		if (ack)
			core_pc_ack(core, pc->coord, pc->id, pc->uuid,
				    IMEXD_ACK_ABORT, 0);
		break;
	default:
		break;
	}
}

void core_pc_kernel_done(struct imexd_core *core, const struct core_kop *k,
			 int error, const char *message)
{
	struct core_pchange *pc = core_pc_find(core, k->change_id);

	if (!pc || pc->done) {
		if (k->kind == KOP_PART_PREPARE && !error)
			core_kernel_simple(core, IMEXD_ACT_KERNEL_ABORT,
					   core_kop_add(core, KOP_FIRE_AND_FORGET,
							k->change_id, k->uuid),
					   k->change_id);
		return;
	}
	switch (k->kind) {
	case KOP_PART_PREPARE:
		if (error) {
			pc->done = true;
			core_pc_vote(core, core_peer_find(core, pc->coord),
				     pc->id, pc->uuid, error, "%s",
				     message[0] ? message : strerror(error));
			break;
		}
		pc->phase = PP_PREPARED;
		pc->lease_end = core->now + pc->lease_ms;
		pc->next_query = core->now + pc->lease_ms / 2;
		pc->query_gap = CORE_MAX(pc->lease_ms / 4, 1);
		if (pc->commit_when_prepared > 0) {
			core_pc_commit(core, pc);
		} else if (pc->commit_when_prepared < 0) {
			core_pc_abort(core, pc, true);
		} else {
			core_pc_vote(core, core_peer_find(core, pc->coord),
				     pc->id, pc->uuid, 0, "%s", "");
		}
		break;
	case KOP_PART_COMMIT:
		if (error == ENOENT) {
			pc->phase = PP_EXPIRED;
			core_pc_commit(core, pc);
			break;
		}
		if (error)
			core_log(core, IMEXD_LOG_ERR,
				 "kernel refused to commit change %016llx of domain '%s': %s",
				 (unsigned long long)pc->id, pc->newdef.name,
				 message);
		else
			core_dom_committed(core, &pc->newdef,
					   core->cfg.node_name);
		core_outcome_put(core, pc->id, IMEXD_OUTCOME_COMMITTED);
		pc->done = true;
		core_pc_ack(core, pc->coord, pc->id, pc->uuid,
			    IMEXD_ACK_COMMIT, error);
		break;
	case KOP_PART_ABORT:
		core_outcome_put(core, pc->id, IMEXD_OUTCOME_ABORTED);
		pc->done = true;
		core_pc_ack(core, pc->coord, pc->id, pc->uuid,
			    IMEXD_ACK_ABORT, error);
		break;
	default:
		break;
	}
	core_pc_gc(core);
}

static void core_pc_outcome_query(struct imexd_core *core, int p,
				  const struct imexd_msg *msg)
{
	uint64_t id = msg->u.change.change_id;
	struct imexd_msg m;

	core_msg_init(core, &m, IMEXD_MSG_OUTCOME, msg->domain_uuid);
	m.u.outcome.change_id = id;
	m.u.outcome.outcome = core_outcome_get(core, id);
	core_send_peer(core, p, &m);
}

/*
 * COMMIT, ABORT, OUTCOME_QUERY and OUTCOME concern a change of a domain:
 * only from a member of it, as we know it (held, or being changed), or
 * about a change we took part in.
 */
static bool core_pc_admit(struct imexd_core *core, int p,
			  const struct imexd_msg *msg, uint64_t id)
{
	const struct core_pchange *pc = core_pc_find(core, id);
	const struct core_cchange *cc = core_cc_find(core, id);
	const struct core_domain *d = core_dom_find(core, msg->domain_uuid);
	const char *peer = core->peers[p].name;

	if (pc && !memcmp(pc->uuid, msg->domain_uuid, 16))
		return core_def_member(&pc->newdef, peer) >= 0;
	if (cc && !memcmp(cc->uuid, msg->domain_uuid, 16))
		return true;
	if (d && core_def_member(&d->def, peer) >= 0)
		return true;
	if (core_outcome_get(core, id) != IMEXD_OUTCOME_UNKNOWN)
		return true;
	core_log_once(core, d ? "non-member" : "unknown-domain", peer,
		      core->peers[p].epoch, IMEXD_LOG_WARN,
		      "%s from node '%s' about %s: dropped",
		      core_msg_name(msg->type), peer,
		      d ? "a domain it is not a member of" :
		      "a domain and change unknown here");
	return false;
}

void core_pc_msg(struct imexd_core *core, int p, const struct imexd_msg *msg)
{
	const char *peer = core->peers[p].name;
	struct core_pchange *pc;
	uint64_t id;

	if (msg->type != IMEXD_MSG_PREPARE &&
	    !core_pc_admit(core, p, msg, msg->type == IMEXD_MSG_OUTCOME ?
			   msg->u.outcome.change_id : msg->u.change.change_id))
		return;
	switch (msg->type) {
	case IMEXD_MSG_PREPARE:
		core_pc_prepare(core, p, msg);
		break;
	case IMEXD_MSG_OUTCOME_QUERY:
		core_pc_outcome_query(core, p, msg);
		break;
	case IMEXD_MSG_COMMIT:
	case IMEXD_MSG_ABORT:
		id = msg->u.change.change_id;
		pc = core_pc_find(core, id);
		if (pc && strcmp(pc->coord, peer)) {
			core_log_once(core, "non-member", peer,
				      core->peers[p].epoch, IMEXD_LOG_WARN,
				      "%s of change %016llx from node '%s', not its coordinator: dropped",
				      core_msg_name(msg->type),
				      (unsigned long long)id, peer);
			break;
		}
		if (!pc || pc->done) {
			uint8_t o = core_outcome_get(core, id);

			if (msg->type == IMEXD_MSG_ABORT) {
				/* Remember it: a PREPARE that lags is refused. */
				if (o != IMEXD_OUTCOME_COMMITTED)
					core_outcome_put(core, id,
							 IMEXD_OUTCOME_ABORTED);
				core_pc_ack(core, peer, id, msg->domain_uuid,
					    IMEXD_ACK_ABORT,
					    o == IMEXD_OUTCOME_COMMITTED ?
					    EALREADY : 0);
			} else if (!pc) {
				core_pc_ack(core, peer, id, msg->domain_uuid,
					    IMEXD_ACK_COMMIT,
					    o == IMEXD_OUTCOME_COMMITTED ? 0 :
					    ENOENT);
			}
			break;
		}
		if (msg->type == IMEXD_MSG_COMMIT)
			core_pc_commit(core, pc);
		else
			core_pc_abort(core, pc, true);
		break;
	case IMEXD_MSG_OUTCOME:
		pc = core_pc_find(core, msg->u.outcome.change_id);
		if (!pc || pc->done)
			break;
		if (msg->u.outcome.outcome == IMEXD_OUTCOME_COMMITTED)
			core_pc_commit(core, pc);
		else if (msg->u.outcome.outcome == IMEXD_OUTCOME_ABORTED)
			core_pc_abort(core, pc, true);
		break;
	}
	core_pc_gc(core);
}

/* ---- ending a doubt without the coordinator ---- */

/* A SYNC for a domain we hold a change of: it may say how it ended. */
void core_pc_sync_seen(struct imexd_core *core, int p,
		       const struct imexd_def *def)
{
	struct core_pchange *pc = core_pc_for_domain(core, def->uuid);
	uint64_t gen;

	if (!pc || pc->phase == PP_COMMITTING || pc->phase == PP_ABORTING)
		return;
	gen = pc->newdef.generation;
	if (def->generation == gen && core_def_same(def, &pc->newdef) &&
	    !(def->flags & IMEXD_DEF_DELETED && pc->op != IMEX_CHANGE_DELETE)) {
		core_pc_commit(core, pc);
	} else if (def->generation >= gen || (def->flags & IMEXD_DEF_DELETED) ||
		   (pc->coord_restarted &&
		    !strcmp(core->peers[p].name, pc->coord))) {
		/*
		 * Superseded (whatever it was, the newer one wins), or its
		 * coordinator is back without it: it never committed.
		 */
		core_pc_abort(core, pc, false);
	}
	core_pc_gc(core);
}

void core_pc_peer_restarted(struct imexd_core *core, int p)
{
	size_t i;

	for (i = 0; i < core->npc; i++)
		if (!core->pc[i]->done &&
		    !strcmp(core->pc[i]->coord, core->peers[p].name))
			core->pc[i]->coord_restarted = true;
	core_cc_peer_restarted(core, p);
}

/*
 * The first heartbeat of a restarted coordinator follows the SYNCs it sends
 * on connecting; if none of them settled the doubt, it does not hold the
 * change, which it would if it had committed: aborted.
 */
void core_pc_peer_heard(struct imexd_core *core, int p)
{
	size_t i;

	for (i = 0; i < core->npc; i++) {
		struct core_pchange *pc = core->pc[i];

		if (pc->done || !pc->coord_restarted ||
		    strcmp(pc->coord, core->peers[p].name) ||
		    (pc->phase != PP_PREPARED && pc->phase != PP_EXPIRED))
			continue;
		core_log(core, IMEXD_LOG_INFO,
			 "change %016llx of domain '%s': coordinator '%s' restarted without it: aborted",
			 (unsigned long long)pc->id, pc->newdef.name, pc->coord);
		core_pc_abort(core, pc, false);
	}
	core_pc_gc(core);
}

/* The coordinator of a change in doubt is being evicted: it cannot finish. */
void core_pc_evicting(struct imexd_core *core, const uint8_t uuid[16],
		      const char *evicted)
{
	struct core_pchange *pc = core_pc_for_domain(core, uuid);

	if (!pc || !evicted || strcmp(pc->coord, evicted) ||
	    (pc->phase != PP_PREPARED && pc->phase != PP_EXPIRED))
		return;
	core_log(core, IMEXD_LOG_WARN,
		 "change %016llx of domain '%s': its coordinator '%s' is being evicted: aborted",
		 (unsigned long long)pc->id, pc->newdef.name, evicted);
	core_pc_abort(core, pc, false);
	core_pc_gc(core);
}

/* ---- timers: in doubt ---- */

static void core_pc_query(struct imexd_core *core, struct core_pchange *pc)
{
	uint16_t m;

	for (m = 0; m < pc->newdef.nmembers; m++) {
		const char *name = pc->newdef.members[m].name;
		struct imexd_msg msg;

		if (!strcmp(name, core->cfg.node_name))
			continue;
		core_msg_init(core, &msg, IMEXD_MSG_OUTCOME_QUERY, pc->uuid);
		msg.u.change.change_id = pc->id;
		core_send_peer(core, core_peer_find(core, name), &msg);
	}
}

void core_pc_timer(struct imexd_core *core)
{
	size_t i;

	for (i = 0; i < core->npc; i++) {
		struct core_pchange *pc = core->pc[i];

		if (pc->done)
			continue;
		if (pc->phase == PP_PREPARED && core->now >= pc->lease_end) {
			core_log(core, IMEXD_LOG_WARN,
				 "change %016llx of domain '%s': lease over without an outcome; still asking the members",
				 (unsigned long long)pc->id, pc->newdef.name);
			pc->phase = PP_EXPIRED;
			/* The kernel rolled back; make sure of it. */
			core_kernel_simple(core, IMEXD_ACT_KERNEL_ABORT,
					   core_kop_add(core, KOP_FIRE_AND_FORGET,
							pc->id, pc->uuid),
					   pc->id);
			core->wanted_dirty = true;
		}
		if ((pc->phase == PP_PREPARED || pc->phase == PP_EXPIRED) &&
		    core->now >= pc->next_query) {
			core->wanted_dirty = true;
			core_pc_query(core, pc);
			pc->next_query = core->now + pc->query_gap;
			if (pc->phase == PP_EXPIRED)
				pc->query_gap = CORE_MIN(pc->query_gap * 2,
							 30000u);
		}
	}
	core_pc_gc(core);
}

uint64_t core_pc_deadline(const struct imexd_core *core)
{
	uint64_t t = CORE_NO_TIME;
	size_t i;

	for (i = 0; i < core->npc; i++) {
		const struct core_pchange *pc = core->pc[i];

		if (pc->done)
			continue;
		if (pc->phase == PP_PREPARED)
			t = CORE_MIN(t, CORE_MIN(pc->lease_end, pc->next_query));
		else if (pc->phase == PP_EXPIRED)
			t = CORE_MIN(t, pc->next_query);
	}
	return t;
}
