// SPDX-License-Identifier: GPL-2.0
/*
 * What this node's kernel holds, as the core models it: which channels are
 * taken (by committed domains, or reserved by changes in progress), and the
 * health of each domain, pushed to the kernel with KERNEL_STATUS whenever
 * any part of it changes so `imexctl domain show` prints the
 * connectivity matrix without asking the daemon.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core_internal.h"

static void core_bits_clear(uint8_t *bits, uint32_t nbits,
			    const struct imexd_channel *ch, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ch[i].id < nbits)
			bits[ch[i].id / 8] &= ~(1u << (ch[i].id % 8));
}

/* Channels nobody here holds or reserves: bit i set = channel i free. */
uint8_t *core_free_bits(const struct imexd_core *core)
{
	uint32_t nbits = core->cfg.max_channels;
	uint8_t *bits = malloc((nbits + 7) / 8 + 1);
	size_t i;

	if (!bits)
		abort();
	memset(bits, 0xff, (nbits + 7) / 8 + 1);
	if (nbits % 8)
		bits[nbits / 8] = (1u << (nbits % 8)) - 1;
	for (i = 0; i < core->ndoms; i++) {
		const struct core_domain *d = core->doms[i];

		if (d->kind != DOM_LIVE)
			continue;
		core_bits_clear(bits, nbits, d->def.channels, d->def.nchannels);
		if (d->adopt)
			core_bits_clear(bits, nbits, d->adopt->target.channels,
					d->adopt->target.nchannels);
	}
	for (i = 0; i < core->npc; i++) {
		const struct core_pchange *pc = core->pc[i];

		if (pc->done)
			continue;
		core_bits_clear(bits, nbits, pc->delta, pc->ndelta);
	}
	for (i = 0; i < core->ncc; i++) {
		const struct core_cchange *cc = core->cc[i];

		if (cc->done || cc->phase == CP_CONNECT || cc->phase == CP_RETRY)
			continue;
		core_bits_clear(bits, nbits, cc->delta, cc->ndelta);
	}
	return bits;
}

static bool core_chan_in(const struct imexd_channel *ch, uint32_t n,
			 uint32_t id)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ch[i].id == id)
			return true;
	return false;
}

/*
 * Who holds channel @id here, other than domain @except: 1 a committed
 * domain (*domain names it), 2 a change in progress (*pending), 0 nobody.
 * The distinction matters: a reservation may go away, so a change refused
 * for it is worth retrying; a grant will not.
 */
int core_reserved_by(const struct imexd_core *core, uint32_t id,
		     const uint8_t except[16], const char **domain,
		     bool *pending)
{
	size_t i;

	*pending = false;
	for (i = 0; i < core->ndoms; i++) {
		const struct core_domain *d = core->doms[i];

		if (d->kind != DOM_LIVE || !memcmp(d->def.uuid, except, 16))
			continue;
		if (core_def_channel(&d->def, id) >= 0) {
			*domain = d->def.name;
			return 1;
		}
		if (d->adopt && core_def_channel(&d->adopt->target, id) >= 0) {
			*domain = d->def.name;
			*pending = true;
			return 2;
		}
	}
	for (i = 0; i < core->npc; i++) {
		const struct core_pchange *pc = core->pc[i];

		if (pc->done || !memcmp(pc->uuid, except, 16))
			continue;
		if (core_chan_in(pc->delta, pc->ndelta, id)) {
			*domain = pc->newdef.name;
			*pending = true;
			return 2;
		}
	}
	for (i = 0; i < core->ncc; i++) {
		const struct core_cchange *cc = core->cc[i];

		if (cc->done || cc->phase == CP_CONNECT ||
		    cc->phase == CP_RETRY || !memcmp(cc->uuid, except, 16))
			continue;
		if (core_chan_in(cc->delta, cc->ndelta, id)) {
			*domain = cc->name;
			*pending = true;
			return 2;
		}
	}
	return 0;
}

/* Does something of ours hold domain @uuid in the kernel right now? */
bool core_dom_busy(const struct imexd_core *core, const uint8_t uuid[16],
		   uint64_t except_change)
{
	const struct core_domain *d = core_dom_find(core, uuid);
	size_t i;

	if (d && d->adopt)
		return true;
	for (i = 0; i < core->npc; i++)
		if (!core->pc[i]->done && core->pc[i]->id != except_change &&
		    !memcmp(core->pc[i]->uuid, uuid, 16))
			return true;
	for (i = 0; i < core->ncc; i++) {
		const struct core_cchange *cc = core->cc[i];

		if (!cc->done && cc->id != except_change &&
		    cc->local != LOC_NONE && cc->local != LOC_COMMITTED &&
		    !memcmp(cc->uuid, uuid, 16))
			return true;
	}
	return false;
}

void core_dom_peer_changed(struct imexd_core *core, int p)
{
	size_t i;
	uint16_t m;

	for (i = 0; i < core->ndoms; i++) {
		struct core_domain *d = core->doms[i];

		if (d->kind != DOM_LIVE || d->status_dirty)
			continue;
		for (m = 0; m < d->def.nmembers; m++) {
			if (d->midx[m] == p) {
				d->status_dirty = true;
				break;
			}
		}
	}
}

/* How member @from sees member @to (both indexes into the member list). */
static uint8_t core_view_of(const struct imexd_core *core,
			    const struct core_domain *d, uint16_t from,
			    uint16_t to)
{
	const struct core_peer *pe;
	int pf = d->midx[from], pt = d->midx[to];

	if (from == to)
		return IMEX_MEMBER_SELF;
	if (pf < 0)
		return core->peers[pt].state;
	pe = &core->peers[pf];
	/* pf >= 0: core->peers is not NULL, whatever the analyzer assumes. */
	if (!pe->has_view)	/* NOLINT(clang-analyzer-core.NullDereference) */
		return IMEX_MEMBER_UNKNOWN;
	return pt < 0 ? pe->self_in_view : pe->view[pt];
}

/*
 * The status as bytes: state, one state per member, then per member a
 * has-view flag and its row.  Compared with what was pushed last, so the
 * kernel hears about every change and nothing else.
 */
static uint8_t *core_status_bytes(const struct imexd_core *core,
				  const struct core_domain *d, size_t *len)
{
	uint16_t n = d->def.nmembers, i, j;
	size_t sz = 1 + n + (size_t)n * (1 + n);
	bool ready = true;
	uint8_t *b = calloc(1, sz);

	if (!b)
		abort();
	for (i = 0; i < n; i++) {
		const struct core_peer *pe = d->midx[i] >= 0 ?
			&core->peers[d->midx[i]] : NULL;
		uint8_t *row = b + 1 + n + (size_t)i * (1 + n);

		b[1 + i] = pe ? pe->state : IMEX_MEMBER_SELF;
		row[0] = !pe || pe->has_view;
		if (pe && pe->state != IMEX_MEMBER_CONNECTED)
			ready = false;
		for (j = 0; j < n; j++) {
			row[1 + j] = row[0] ? core_view_of(core, d, i, j) :
				     IMEX_MEMBER_UNKNOWN;
			if (i != j && row[1 + j] != IMEX_MEMBER_CONNECTED)
				ready = false;
		}
	}
	b[0] = ready ? IMEX_DOMAIN_READY : IMEX_DOMAIN_DEGRADED;
	*len = sz;
	return b;
}

static void core_push_status(struct imexd_core *core,
			     const struct core_domain *d, const uint8_t *b)
{
	struct imexd_action *a = core_act(core, IMEXD_ACT_KERNEL_STATUS);
	struct imexd_domain_status *st = &a->status;
	uint16_t n = d->def.nmembers, i;

	snprintf(st->name, sizeof(st->name), "%s", d->def.name);
	st->state = b[0];
	st->nmembers = n;
	st->members = calloc(n ? n : 1, sizeof(*st->members));
	if (!st->members)
		abort();
	for (i = 0; i < n; i++) {
		struct imexd_member_status *ms = &st->members[i];
		const uint8_t *row = b + 1 + n + (size_t)i * (1 + n);

		snprintf(ms->name, sizeof(ms->name), "%s",
			 d->def.members[i].name);
		ms->state = b[1 + i];
		ms->has_view = row[0];
		if (ms->has_view)
			memcpy(ms->view, row + 1, n);
	}
}

/*
 * Pushes go out at once, but at most one per domain per heartbeat/50
 * (20 ms): a 144-node mesh forming changes the matrix hundreds of times in
 * a few milliseconds, and each push carries the whole matrix.  The last
 * state always goes out (the timer comes back for it).
 */
static uint64_t core_status_gap(const struct imexd_core *core)
{
	return CORE_MAX(1, core->cfg.heartbeat_ms / 50);
}

void core_dom_flush(struct imexd_core *core)
{
	size_t i, len;

	if (core->shutting_down)
		return;
	for (i = 0; i < core->ndoms; i++) {
		struct core_domain *d = core->doms[i];
		uint8_t *b;

		if (!d->status_dirty || d->kind != DOM_LIVE || !d->in_kernel ||
		    core->now < d->status_next)
			continue;
		d->status_dirty = false;
		b = core_status_bytes(core, d, &len);
		if (d->npushed == len && !memcmp(d->pushed, b, len)) {
			free(b);
			continue;
		}
		if (!d->npushed || d->pushed[0] != b[0])
			core_log(core, IMEXD_LOG_INFO, "domain '%s': %s",
				 d->def.name, b[0] == IMEX_DOMAIN_READY ?
				 "READY" : "DEGRADED");
		core_push_status(core, d, b);
		free(d->pushed);
		d->pushed = b;
		d->npushed = len;
		d->status_next = core->now + core_status_gap(core);
	}
}

/* A push held back by the rate limit. */
uint64_t core_status_deadline(const struct imexd_core *core)
{
	uint64_t t = CORE_NO_TIME;
	size_t i;

	for (i = 0; i < core->ndoms; i++) {
		const struct core_domain *d = core->doms[i];

		if (d->status_dirty && d->kind == DOM_LIVE && d->in_kernel &&
		    d->status_next > core->now)
			t = CORE_MIN(t, d->status_next);
	}
	return t;
}
