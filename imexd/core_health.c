// SPDX-License-Identifier: GPL-2.0
/*
 * Health: peer states, heartbeats and the views they carry.
 *
 * Each bound connection carries a heartbeat every heartbeat_ms with this
 * node's view of its peers; a change of that view goes out at once (rate
 * limited per connection), so READY does not wait a period.  A peer's own
 * view is kept only while we hear from it, indexed like our peer table so
 * the status matrix is cheap to build.  The heartbeat's seq carries a
 * digest of what the two nodes share: a lasting mismatch makes them SYNC.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core_internal.h"

void core_peer_set_state(struct imexd_core *core, int p, uint8_t state)
{
	struct core_peer *pe = &core->peers[p];

	if (pe->state == state)
		return;
	core_log(core, state == IMEX_MEMBER_CONNECTED ? IMEXD_LOG_INFO :
		 IMEXD_LOG_WARN, "node '%s': %s", pe->name,
		 state == IMEX_MEMBER_CONNECTED ? "connected" :
		 state == IMEX_MEMBER_RECOVERING ? "recovering (heartbeats missed or connection lost)" :
		 state == IMEX_MEMBER_DISCONNECTED ? "disconnected (grace time over)" :
		 state == IMEX_MEMBER_VERSION_MISMATCH ? "protocol version mismatch" :
		 "not connected");
	pe->state = state;
	pe->state_since = core->now;
	core->view_dirty = true;
	if (state == IMEX_MEMBER_DISCONNECTED)
		core_imp_peer_lost(core, p);
	core_dom_peer_changed(core, p);
	core_cc_peer_event(core, p);
}

void core_peer_forget_view(struct imexd_core *core, int p)
{
	struct core_peer *pe = &core->peers[p];

	if (!pe->has_view)
		return;
	memset(pe->view, IMEX_MEMBER_UNKNOWN, core->peers_cap);
	pe->has_view = false;
	pe->self_in_view = IMEX_MEMBER_UNKNOWN;
	core_dom_peer_changed(core, p);
}

static struct imexd_peer_view *core_build_view(struct imexd_core *core,
					       uint16_t *n)
{
	struct imexd_peer_view *v;
	size_t i, k = 0;

	*n = 0;
	if (!core->npeers)
		return NULL;
	v = malloc(core->npeers * sizeof(*v));
	if (!v)
		abort();
	for (i = 0; i < core->npeers && k < IMEX_MEMBERS_MAX; i++) {
		const struct core_peer *pe = &core->peers[i];

		if (!pe->wanted && !pe->conn)
			continue;
		memcpy(v[k].name, pe->name, sizeof(v[k].name));
		v[k].state = pe->state;
		k++;
	}
	*n = (uint16_t)k;
	return v;
}

void core_send_heartbeat(struct imexd_core *core, struct core_conn *c)
{
	struct imexd_msg m;

	core_msg_init(core, &m, IMEXD_MSG_HEARTBEAT, NULL);
	/*
	 * seq carries a digest of the definitions this node shares with the
	 * receiver: a mismatch that persists tells both sides to SYNC, so a
	 * lost commit or SYNC heals without a reconnect.
	 */
	m.u.heartbeat.seq = core_digest_for(core, c->peer);
	m.u.heartbeat.peers = core_build_view(core, &m.u.heartbeat.n);
	core_send_conn(core, c->id, &m);
	c->last_hb = core->now ? core->now : 1;
	c->next_hb = core->now + core->cfg.heartbeat_ms;
}

void core_heartbeat_in(struct imexd_core *core, int p,
			      const struct imexd_msg *msg)
{
	int idx[IMEX_MEMBERS_MAX * 4] = { 0 };
	uint8_t self = IMEX_MEMBER_UNKNOWN;
	size_t n = msg->u.heartbeat.n;
	struct core_peer *pe;
	uint8_t *nv;
	size_t i;

	if (n > IMEX_MEMBERS_MAX * 4UL)
		n = IMEX_MEMBERS_MAX * 4UL;
	/*
	 * Peers we have not heard of yet get an entry (no address, so not
	 * dialled): a domain created a moment later needs this view of them,
	 * and the sender will not repeat it until its view changes.
	 */
	for (i = 0; i < n; i++) {
		const struct imexd_peer_view *e = &msg->u.heartbeat.peers[i];

		idx[i] = core_peer_find(core, e->name);
		if (idx[i] >= 0 || e->state >= __IMEX_MEMBER_STATE_MAX)
			continue;
		if (!strcmp(e->name, core->cfg.node_name))
			self = e->state;
		else if (e->name[0])
			idx[i] = core_peer_admit(core, e->name, NULL, false);
	}
	pe = &core->peers[p];
	nv = malloc(core->peers_cap);
	if (!nv)
		abort();
	memset(nv, IMEX_MEMBER_UNKNOWN, core->peers_cap);
	for (i = 0; i < n; i++)
		if (idx[i] >= 0 &&
		    msg->u.heartbeat.peers[i].state < __IMEX_MEMBER_STATE_MAX)
			nv[idx[i]] = msg->u.heartbeat.peers[i].state;
	if (!pe->has_view || self != pe->self_in_view ||
	    memcmp(nv, pe->view, core->npeers)) {
		free(pe->view);
		pe->view = nv;
		pe->has_view = true;
		pe->self_in_view = self;
		core_dom_peer_changed(core, p);
	} else {
		free(nv);
	}

	if (msg->u.heartbeat.seq == core_digest_for(core, p)) {
		pe->digest_misses = 0;
	} else if (++pe->digest_misses >= 2 &&
		   (!pe->last_sync || core->now - pe->last_sync >=
		    (uint64_t)core->cfg.miss_count * core->cfg.heartbeat_ms)) {
		/* Twice in a row: not a commit in flight, a real difference. */
		pe->digest_misses = 0;
		pe->last_sync = core->now;
		core_dom_sync_peer(core, p);
	}
	pe->q_need = false;	/* its SYNCs, if any, came before this */
	core_pc_peer_heard(core, p);
}

/*
 * What this node shares with peer @p, as one word: the domains both are
 * members of, with their generations.  XOR keeps it independent of order.
 */
uint32_t core_digest_for(const struct imexd_core *core, int p)
{
	uint32_t h = 0;
	size_t i;

	if (p < 0)
		return 0;
	for (i = 0; i < core->ndoms; i++) {
		const struct core_domain *d = core->doms[i];
		uint32_t x = 2166136261u;
		int k;

		if (d->kind != DOM_LIVE || !d->in_kernel ||
		    core_def_member(&d->def, core->peers[p].name) < 0)
			continue;
		for (k = 0; k < 16; k++)
			x = (x ^ d->def.uuid[k]) * 16777619u;
		for (k = 0; k < 8; k++)
			x = (x ^ (uint8_t)(d->def.generation >> (8 * k))) *
			    16777619u;
		h ^= x;
	}
	return h;
}

void core_health_flush(struct imexd_core *core)
{
	uint64_t gap = CORE_MAX(1, core->cfg.heartbeat_ms / 50);
	size_t i;

	if (!core->view_dirty || core->shutting_down)
		return;
	core->view_dirty = false;
	/*
	 * A changed view goes out at once (READY should not wait a period),
	 * but at most once per gap per connection: a node meeting 143 peers
	 * must not send 143 heartbeats to each of them.
	 */
	for (i = 0; i < core->nconns; i++) {
		struct core_conn *c = &core->conns[i];

		if (c->peer < 0 || !c->hello_done)
			continue;
		if (!c->last_hb || core->now - c->last_hb >= gap)
			core_send_heartbeat(core, c);
		else
			c->next_hb = CORE_MIN(c->next_hb, c->last_hb + gap);
	}
}
