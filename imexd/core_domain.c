// SPDX-License-Identifier: GPL-2.0
/*
 * The definitions this node holds, and how members converge on them.
 *
 * Every definition carries a generation, bumped by each committed change.
 * Members exchange SYNC (their committed definition) on every new
 * connection, and again whenever the digest in a peer's heartbeats keeps
 * disagreeing with ours.  The lower generation adopts the higher one by
 * applying the difference to its own kernel as a series of local
 * prepare+commit steps (CREATE if missing, SET_MEMBERS, REMOVE_CHANNELS,
 * ADD_CHANNELS, or DELETE); the higher one answers a lower SYNC with its
 * own.  A deleted domain leaves a tombstone (kept tombstone_ms, stored) so
 * a member that missed the delete learns it instead of resurrecting the
 * domain; a node that finds itself evicted deletes the domain locally and
 * keeps the newer definition as a ghost for the same reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core_internal.h"

struct core_domain *core_dom_find(const struct imexd_core *core,
				  const uint8_t uuid[16])
{
	size_t i;

	for (i = 0; i < core->ndoms; i++)
		if (!memcmp(core->doms[i]->def.uuid, uuid, 16))
			return core->doms[i];
	return NULL;
}

struct core_domain *core_dom_find_name(const struct imexd_core *core,
				       const char *name)
{
	size_t i;

	for (i = 0; i < core->ndoms; i++)
		if (core->doms[i]->kind == DOM_LIVE &&
		    !strcmp(core->doms[i]->def.name, name))
			return core->doms[i];
	return NULL;
}

static void core_dom_index(struct imexd_core *core, struct core_domain *d)
{
	uint16_t m;

	free(d->midx);
	d->midx = calloc(d->def.nmembers ? d->def.nmembers : 1,
			 sizeof(*d->midx));
	if (!d->midx)
		abort();
	for (m = 0; m < d->def.nmembers; m++) {
		const struct imexd_member *mb = &d->def.members[m];

		if (!strcmp(mb->name, core->cfg.node_name))
			d->midx[m] = -1;
		else
			d->midx[m] = core_peer_get(core, mb->name,
						   d->kind == DOM_LIVE ?
						   mb->addr : NULL);
	}
	d->status_dirty = true;
	core->wanted_dirty = true;
}

void core_dom_set_def(struct imexd_core *core, struct core_domain *d,
		      const struct imexd_def *def)
{
	struct imexd_def copy;

	if (imexd_def_copy(&copy, def))
		abort();
	imexd_def_free(&d->def);
	d->def = copy;
	core_def_sort(&d->def);
	core_dom_index(core, d);
}

struct core_domain *core_dom_add(struct imexd_core *core,
				 const struct imexd_def *def,
				 enum core_dom_kind kind)
{
	struct core_domain *d = calloc(1, sizeof(*d));

	if (!d)
		abort();
	if (core->ndoms == core->doms_cap) {
		size_t cap = core->doms_cap ? core->doms_cap * 2 : 16;
		struct core_domain **n = realloc(core->doms,
						 cap * sizeof(struct core_domain *));

		if (!n)
			abort();
		core->doms = n;
		core->doms_cap = cap;
	}
	d->kind = kind;
	core->doms[core->ndoms++] = d;
	core_dom_set_def(core, d, def);
	return d;
}

static void core_adopt_free(struct core_domain *d)
{
	imexd_def_free(&d->adopt->target);
	imexd_def_free(&d->adopt->after);
	free(d->adopt);
	d->adopt = NULL;
}

static void core_dom_release(struct core_domain *d)
{
	imexd_def_free(&d->def);
	free(d->midx);
	free(d->pushed);
	if (d->adopt)
		core_adopt_free(d);
	free(d);
}

void core_dom_remove(struct imexd_core *core, struct core_domain *d)
{
	size_t i;

	for (i = 0; i < core->ndoms; i++) {
		if (core->doms[i] != d)
			continue;
		memmove(&core->doms[i], &core->doms[i + 1],
			(core->ndoms - i - 1) * sizeof(struct core_domain *));
		core->ndoms--;
		break;
	}
	core_dom_release(d);
	core->wanted_dirty = true;
}

void core_dom_free_all(struct imexd_core *core)
{
	size_t i;

	for (i = 0; i < core->ndoms; i++)
		core_dom_release(core->doms[i]);
	free(core->doms);
	core->doms = NULL;
	core->ndoms = 0;
}

static void core_store_def(struct imexd_core *core, const struct imexd_def *def)
{
	struct imexd_action *a = core_act(core, IMEXD_ACT_STORE_DEF);

	if (imexd_def_copy(&a->def, def))
		abort();
}

static void core_store_remove(struct imexd_core *core, const uint8_t uuid[16])
{
	memcpy(core_act(core, IMEXD_ACT_STORE_REMOVE)->def.uuid, uuid, 16);
}

/* Turn @d into a tombstone (deleted) or a ghost (we were evicted). */
static void core_dom_retire(struct imexd_core *core, struct core_domain *d,
			    const struct imexd_def *def, bool deleted)
{
	core_dom_set_def(core, d, def);
	d->kind = deleted ? DOM_TOMBSTONE : DOM_GHOST;
	d->in_kernel = false;
	d->expires = core->now + core->cfg.tombstone_ms;
	free(d->pushed);
	d->pushed = NULL;
	d->npushed = 0;
	core_dom_index(core, d);
	if (deleted) {
		d->def.flags |= IMEXD_DEF_DELETED;
		core_store_def(core, &d->def);
	} else {
		core_store_remove(core, d->def.uuid);
	}
}

/* A change this node took part in was committed in its kernel. */
void core_dom_committed(struct imexd_core *core, const struct imexd_def *def,
			const char *self_name)
{
	struct core_domain *d = core_dom_find(core, def->uuid);

	if (def->flags & IMEXD_DEF_DELETED ||
	    core_def_member(def, self_name) < 0) {
		if (!d)
			d = core_dom_add(core, def, DOM_LIVE);
		core_dom_retire(core, d, def, def->flags & IMEXD_DEF_DELETED);
		return;
	}
	if (!d) {
		d = core_dom_add(core, def, DOM_LIVE);
	} else {
		d->kind = DOM_LIVE;
		core_dom_set_def(core, d, def);
	}
	d->in_kernel = true;
	core_store_def(core, &d->def);
}

/* ---- SYNC ---- */

void core_dom_sync_one(struct imexd_core *core, int p,
		       const struct core_domain *d)
{
	struct imexd_msg m;

	core_msg_init(core, &m, IMEXD_MSG_SYNC, d->def.uuid);
	if (imexd_def_copy(&m.u.sync, &d->def))
		abort();
	core_send_peer(core, p, &m);
}

/* Everything we share with @p: on a new connection, or a digest mismatch. */
void core_dom_sync_peer(struct imexd_core *core, int p)
{
	size_t i;

	for (i = 0; i < core->ndoms; i++) {
		const struct core_domain *d = core->doms[i];

		if (core_def_member(&d->def, core->peers[p].name) < 0)
			continue;
		if ((d->kind == DOM_LIVE && d->in_kernel) ||
		    d->kind == DOM_TOMBSTONE)
			core_dom_sync_one(core, p, d);
	}
}

/* ---- adoption: local steps towards a definition ---- */

static bool core_dom_adopt_blocked(const struct imexd_core *core,
				   const struct core_domain *d)
{
	return core_cc_holds(core, d->def.uuid) ||
	       core_pc_for_domain(core, d->def.uuid) != NULL;
}

/* @def with @delta added or removed. */
static void core_adopt_channels(struct imexd_def *def,
				const struct imexd_channel *delta, uint32_t n,
				bool add)
{
	struct imexd_channel *ch = malloc((def->nchannels + n + 1) *
					  sizeof(*ch));
	uint32_t i, k = 0, j;

	if (!ch)
		abort();
	for (i = 0; i < def->nchannels; i++) {
		bool drop = false;

		for (j = 0; !add && j < n && !drop; j++)
			drop = delta[j].id == def->channels[i].id;
		if (!drop)
			ch[k++] = def->channels[i];
	}
	for (j = 0; add && j < n; j++)
		ch[k++] = delta[j];
	free(def->channels);
	def->channels = ch;
	def->nchannels = k;
	core_def_sort(def);
}

/* Issue the next local step, or finish when the kernel matches. */
static void core_adopt_step(struct imexd_core *core, struct core_domain *d)
{
	struct core_adopt *ad = d->adopt;
	const struct imexd_def *t = &ad->target;
	bool leave = (t->flags & IMEXD_DEF_DELETED) ||
		     core_def_member(t, core->cfg.node_name) < 0;
	struct imexd_channel *delta = NULL;
	struct imexd_def step;
	uint32_t n = 0;

	if (imexd_def_copy(&step, &d->def))
		abort();
	ad->committing = false;
	if (leave && d->in_kernel) {
		ad->op = IMEX_CHANGE_DELETE;
	} else if (leave) {
		core_dom_retire(core, d, t, t->flags & IMEXD_DEF_DELETED);
		goto finish;
	} else if (!d->in_kernel) {
		ad->op = IMEX_CHANGE_CREATE;
		imexd_def_free(&step);
		if (imexd_def_copy(&step, t))
			abort();
	} else if (!core_members_same(&d->def, t)) {
		ad->op = IMEX_CHANGE_SET_MEMBERS;
		free(step.members);
		step.members = malloc(t->nmembers * sizeof(*t->members));
		if (!step.members)
			abort();
		memcpy(step.members, t->members,
		       t->nmembers * sizeof(*t->members));
		step.nmembers = t->nmembers;
	} else if (core_chan_diff(&d->def, t, &delta, &n), n) {
		ad->op = IMEX_CHANGE_REMOVE_CHANNELS;
	} else if (core_chan_diff(t, &d->def, &delta, &n), n) {
		ad->op = IMEX_CHANGE_ADD_CHANNELS;
	} else {
		imexd_def_free(&ad->after);
		/* The kernel matches: take the generation and keep it. */
		uint64_t old = d->def.generation;

		core_dom_set_def(core, d, t);
		d->kind = DOM_LIVE;
		d->in_kernel = true;
		core_store_def(core, &d->def);
		core_log(core, IMEXD_LOG_INFO,
			 "domain '%s': now at generation %llu (was %llu)",
			 d->def.name, (unsigned long long)d->def.generation,
			 (unsigned long long)old);
		goto finish;
	}
	/*
	 * What the kernel will hold once this step commits: the target may
	 * move on meanwhile, the kernel will not.
	 */
	imexd_def_free(&ad->after);
	if (imexd_def_copy(&ad->after, &step))
		abort();
	if (ad->op == IMEX_CHANGE_REMOVE_CHANNELS ||
	    ad->op == IMEX_CHANGE_ADD_CHANNELS)
		core_adopt_channels(&ad->after, delta, n,
				    ad->op == IMEX_CHANGE_ADD_CHANNELS);
	ad->change_id = core_new_id(core);
	ad->op_id = core_kop_add(core, KOP_ADOPT_PREPARE, ad->change_id,
				 d->def.uuid);
	core_kernel_prepare(core, ad->op_id, ad->change_id, ad->op,
			    core->cfg.lease_ms, &step, delta, n);
	imexd_def_free(&step);
	free(delta);
	return;
finish:
	imexd_def_free(&step);
	d = core_dom_find(core, t->uuid);
	if (d && d->adopt)
		core_adopt_free(d);
}

static void core_adopt(struct imexd_core *core, struct core_domain *d,
		       const struct imexd_def *target)
{
	if (d->adopt) {
		/* One step at a time; aim at the newest target. */
		if (target->generation >= d->adopt->target.generation) {
			imexd_def_free(&d->adopt->target);
			if (imexd_def_copy(&d->adopt->target, target))
				abort();
			core_def_sort(&d->adopt->target);
		}
		return;
	}
	d->adopt = calloc(1, sizeof(*d->adopt));
	if (!d->adopt || imexd_def_copy(&d->adopt->target, target))
		abort();
	core_def_sort(&d->adopt->target);
	if (core_dom_adopt_blocked(core, d)) {
		/* A change of ours holds the domain: try again shortly. */
		d->adopt_retry_at = core->now + core->cfg.heartbeat_ms / 4 + 1;
		d->adopt->op_id = 0;
		return;
	}
	core_log(core, IMEXD_LOG_INFO,
		 "domain '%s': adopting generation %llu%s",
		 target->name, (unsigned long long)target->generation,
		 target->flags & IMEXD_DEF_DELETED ? " (deleted)" : "");
	core_adopt_step(core, d);
}

void core_dom_adopt_done(struct imexd_core *core, const struct core_kop *k,
			 int error, const char *message)
{
	struct core_domain *d = core_dom_find(core, k->uuid);
	struct core_adopt *ad = d ? d->adopt : NULL;

	if (!ad || ad->change_id != k->change_id) {
		if (k->kind == KOP_ADOPT_PREPARE && !error) {
			uint64_t op = core_kop_add(core, KOP_FIRE_AND_FORGET,
						   k->change_id, k->uuid);

			core_kernel_simple(core, IMEXD_ACT_KERNEL_ABORT, op,
					   k->change_id);
		}
		return;
	}
	if (error) {
		core_log_once(core, "adopt-failed", d->def.name,
			      ad->target.generation, IMEXD_LOG_ERR,
			      "domain '%s': cannot bring this node to generation %llu: %s",
			      d->def.name,
			      (unsigned long long)ad->target.generation,
			      message[0] ? message : strerror(error));
		if (!d->in_kernel && d->kind == DOM_LIVE) {
			/* Never got into the kernel: forget it. */
			core_dom_remove(core, d);
			return;
		}
		core_adopt_free(d);
		return;
	}
	if (k->kind == KOP_ADOPT_PREPARE) {
		ad->committing = true;
		ad->op_id = core_kop_add(core, KOP_ADOPT_COMMIT, ad->change_id,
					 d->def.uuid);
		core_kernel_simple(core, IMEXD_ACT_KERNEL_COMMIT, ad->op_id,
				   ad->change_id);
		return;
	}
	/* A step is in: reflect it in what we hold, then go on. */
	if (ad->op == IMEX_CHANGE_DELETE) {
		d->in_kernel = false;
	} else {
		uint64_t gen = d->def.generation;

		core_dom_set_def(core, d, &ad->after);
		d->def.generation = gen;
		d->def.flags = 0;
		d->in_kernel = true;
	}
	d->status_dirty = true;
	core_adopt_step(core, d);
}

/*
 * Bring this node to @def without asking anyone (a commit whose prepared
 * state expired here, or a reboot): the members already agreed on it.
 */
void core_dom_reapply(struct imexd_core *core, const struct imexd_def *def)
{
	struct core_domain *d = core_dom_find(core, def->uuid);

	if (!d) {
		struct imexd_def empty = *def;

		empty.members = def->members;
		empty.nmembers = def->nmembers;
		empty.channels = NULL;
		empty.nchannels = 0;
		empty.generation = 0;
		d = core_dom_add(core, &empty, DOM_LIVE);
		d->in_kernel = false;
	}
	if (d->kind == DOM_TOMBSTONE)
		return;
	if (d->kind == DOM_GHOST && def->generation <= d->def.generation)
		return;
	if (d->kind == DOM_GHOST) {
		d->kind = DOM_LIVE;
		d->in_kernel = false;
	}
	core_adopt(core, d, def);
}

/* ---- incoming SYNC ---- */

void core_dom_msg_sync(struct imexd_core *core, int p,
		       const struct imexd_msg *msg)
{
	const char *peer = core->peers[p].name;
	const char *self = core->cfg.node_name;
	struct core_domain *d = core_dom_find(core, msg->domain_uuid);
	struct imexd_def def = msg->u.sync;
	bool deleted = def.flags & IMEXD_DEF_DELETED;
	uint32_t ours, theirs;

	memcpy(def.uuid, msg->domain_uuid, 16);
	if (!d) {
		if (deleted)
			return;		/* nothing here to delete */
		if (core_def_member(&def, peer) < 0 ||
		    core_def_member(&def, self) < 0) {
			core_log_once(core, "sync-unknown", peer,
				      core->peers[p].epoch, IMEXD_LOG_WARN,
				      "SYNC from node '%s' for domain '%s', which does not name both of us: dropped",
				      peer, def.name);
			return;
		}
		core_pc_sync_seen(core, p, &def);
		if (core_pc_for_domain(core, def.uuid) ||
		    core_dom_find(core, def.uuid))
			return;		/* an in-doubt create settles it */
		core_dom_reapply(core, &def);
		return;
	}
	if (d->kind == DOM_TOMBSTONE) {
		if (!deleted)
			core_dom_sync_one(core, p, d);
		return;
	}
	if (d->kind == DOM_GHOST) {
		if (def.generation < d->def.generation)
			core_dom_sync_one(core, p, d);
		else if (def.generation > d->def.generation && !deleted &&
			 core_def_member(&def, self) >= 0)
			core_dom_reapply(core, &def);
		return;
	}
	if (core_def_member(&d->def, peer) < 0 &&
	    core_def_member(&def, peer) < 0) {
		/* A former member with an old definition: tell it. */
		if (def.generation <= d->def.generation)
			core_dom_sync_one(core, p, d);
		return;
	}
	core_pc_sync_seen(core, p, &def);
	d = core_dom_find(core, def.uuid);
	if (!d || d->kind != DOM_LIVE)
		return;
	if (deleted || def.generation > d->def.generation) {
		core_dom_reapply(core, &def);
		return;
	}
	if (def.generation < d->def.generation) {
		if (d->in_kernel)
			core_dom_sync_one(core, p, d);
		return;
	}
	if (!d->in_kernel || core_def_same(&def, &d->def))
		return;
	/*
	 * Same generation, different content: only a lost race can do this
	 * (a restart between a local commit and its record).  Both sides pick
	 * the same winner by content hash, so they end up equal.
	 */
	ours = core_def_hash(&d->def);
	theirs = core_def_hash(&def);
	core_log_once(core, "sync-diverged", d->def.name, def.generation,
		      IMEXD_LOG_WARN,
		      "domain '%s': node '%s' holds a different generation %llu; converging on %s",
		      d->def.name, peer, (unsigned long long)def.generation,
		      theirs > ours ? "its copy" : "this node's copy");
	if (theirs > ours)
		core_dom_reapply(core, &def);
	else
		core_dom_sync_one(core, p, d);
}

/* ---- start-up reconciliation ---- */

void core_dom_start(struct imexd_core *core, const struct imexd_def *kernel,
		    size_t nkernel, const struct imexd_def *stored,
		    size_t nstored)
{
	struct core_domain *d;
	size_t i, j;

	for (i = 0; i < nstored; i++) {
		const struct imexd_def *s = &stored[i];
		const struct imexd_def *k = NULL;

		for (j = 0; j < nkernel; j++)
			if (!memcmp(kernel[j].uuid, s->uuid, 16))
				k = &kernel[j];
		if (core_dom_find(core, s->uuid))
			continue;
		if (s->flags & IMEXD_DEF_DELETED) {
			d = core_dom_add(core, s, DOM_TOMBSTONE);
			d->expires = core->now + core->cfg.tombstone_ms;
			if (k) {
				/* Deleted, yet here: finish the delete. */
				struct imexd_def live;

				imexd_def_copy(&live, k);
				d->kind = DOM_LIVE;
				d->in_kernel = true;
				core_dom_set_def(core, d, &live);
				imexd_def_free(&live);
				core_adopt(core, d, s);
			}
			continue;
		}
		if (core_def_member(s, core->cfg.node_name) < 0)
			continue;
		if (k) {
			d = core_dom_add(core, k, DOM_LIVE);
			d->in_kernel = true;
			d->def.generation = s->generation;
			d->def.flags = 0;
			if (!core_def_same(&d->def, s) ||
			    strcmp(k->name, s->name)) {
				/*
				 * The kernel is the truth; a generation we
				 * cannot vouch for is 0, so members overwrite
				 * it with the agreed one.
				 */
				core_log(core, IMEXD_LOG_WARN,
					 "domain '%s': the kernel differs from the stored definition; its generation is unknown until members sync",
					 k->name);
				d->def.generation = 0;
				core_store_def(core, &d->def);
			}
			continue;
		}
		/* Stored but not in the kernel: the node rebooted. */
		core_log(core, IMEXD_LOG_INFO,
			 "domain '%s': re-creating it in the kernel from the stored definition (generation %llu)",
			 s->name, (unsigned long long)s->generation);
		core_dom_reapply(core, s);
		d = core_dom_find(core, s->uuid);
		if (d)
			d->def.generation = s->generation;
	}
	for (j = 0; j < nkernel; j++) {
		if (core_dom_find(core, kernel[j].uuid))
			continue;
		core_log(core, IMEXD_LOG_INFO,
			 "domain '%s': in the kernel but not stored; adopted at generation 0",
			 kernel[j].name);
		d = core_dom_add(core, &kernel[j], DOM_LIVE);
		d->in_kernel = true;
		d->def.generation = 0;
		d->def.flags = 0;
		core_store_def(core, &d->def);
	}
	core_dom_mark_all_dirty(core);
}

/* The members we must hear from before voting again (see core.c). */
void core_dom_quarantine_peers(struct imexd_core *core)
{
	size_t i;
	uint16_t m;

	for (i = 0; i < core->ndoms; i++) {
		const struct core_domain *d = core->doms[i];

		if (d->kind != DOM_LIVE)
			continue;
		for (m = 0; m < d->def.nmembers; m++)
			if (d->midx[m] >= 0)
				core->peers[d->midx[m]].q_need = true;
	}
}

void core_dom_mark_all_dirty(struct imexd_core *core)
{
	size_t i;

	for (i = 0; i < core->ndoms; i++)
		core->doms[i]->status_dirty = true;
}

void core_dom_timer(struct imexd_core *core)
{
	size_t i = 0;

	while (i < core->ndoms) {
		struct core_domain *d = core->doms[i];

		if (d->kind != DOM_LIVE && !d->adopt &&
		    core->now >= d->expires) {
			if (d->kind == DOM_TOMBSTONE)
				core_store_remove(core, d->def.uuid);
			core_dom_remove(core, d);
			continue;
		}
		if (d->adopt && !d->adopt->op_id && !d->adopt->committing &&
		    core->now >= d->adopt_retry_at) {
			if (core_dom_adopt_blocked(core, d)) {
				d->adopt_retry_at = core->now +
					core->cfg.heartbeat_ms / 4 + 1;
			} else {
				core_adopt_step(core, d);
				continue;	/* @d may be gone */
			}
		}
		i++;
	}
}

uint64_t core_dom_deadline(const struct imexd_core *core)
{
	uint64_t t = CORE_NO_TIME;
	size_t i;

	for (i = 0; i < core->ndoms; i++) {
		const struct core_domain *d = core->doms[i];

		if (d->kind != DOM_LIVE && !d->adopt)
			t = CORE_MIN(t, d->expires);
		if (d->adopt && !d->adopt->op_id && !d->adopt->committing)
			t = CORE_MIN(t, d->adopt_retry_at);
	}
	return t;
}
