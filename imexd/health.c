// SPDX-License-Identifier: GPL-2.0
/*
 * health: peer states, heartbeats and the READY/DEGRADED state of the
 * domains naming this node.  See health.h; this file takes the inputs,
 * keeps the peer states and sends the heartbeats.
 *
 * Every table is sized by imexd_health_set_domains() (below), so
 * no other input allocates but imexd_health_applied(): what a peer sends
 * changes entries, never their number.  Actions are not queued: an input
 * marks what is due (a heartbeat per peer, a status per domain, a lost
 * peer) and imexd_health_next() hands it out, so an action left undrained
 * is superseded by a newer one, never lost or doubled.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "health_internal.h"

static uint64_t miss_ms(const struct imexd_health *h)
{
	return (uint64_t)h->miss_count * h->hb_ms;
}

const char *hl_state_name(uint8_t s)
{
	switch (s) {
	case IMEX_MEMBER_SELF:			return "self";
	case IMEX_MEMBER_CONNECTED:		return "connected";
	case IMEX_MEMBER_RECOVERING:		return "recovering";
	case IMEX_MEMBER_DISCONNECTED:		return "disconnected";
	case IMEX_MEMBER_NEVER_CONNECTED:	return "never connected";
	case IMEX_MEMBER_VERSION_MISMATCH:	return "version mismatch";
	case IMEX_MEMBER_REFUSED:		return "refused";
	default:				return "unknown";
	}
}

/* ---- log lines ----------------------------------------------------------- */

static void hl_vlog(struct imexd_health *h, const char *msgid,
		    const char *domain, const char *node, int level,
		    const char *fmt, va_list ap)
{
	if (h->nlines >= h->t.lines_cap) {
		h->dropped++;
		return;
	}
	vsnprintf(h->t.lines[h->nlines], HL_LINE, fmt, ap);
	imexd_log_fields_set(&h->t.fields[h->nlines], msgid, domain, node);
	h->t.levels[h->nlines++] = level;
}

void hl_log(struct imexd_health *h, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hl_vlog(h, NULL, NULL, NULL, level, fmt, ap);
	va_end(ap);
}

void hl_log_f(struct imexd_health *h, const char *msgid, const char *domain,
	      const char *node, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hl_vlog(h, msgid, domain, node, level, fmt, ap);
	va_end(ap);
}

/* ---- lookups ------------------------------------------------------------- */

int hl_peer_find(const struct htab *t, const char *name)
{
	size_t lo = 0, hi = t->npeers;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, t->peers[mid].name);

		if (!c)
			return (int)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

int hl_dom_find(const struct htab *t, const uint8_t uuid[16])
{
	size_t i;

	for (i = 0; i < t->ndoms; i++)
		if (!memcmp(t->doms[i].st.uuid, uuid, 16))
			return (int)i;
	return -1;
}

/* Member index of peer @p in @d, -1 if not a member. */
int hl_dom_member(const struct hdom *d, int p)
{
	uint16_t i;

	for (i = 0; i < d->n; i++)
		if (d->midx[i] == p)
			return i;
	return -1;
}

const char *hl_member_name(const struct imexd_health *h, const struct htab *t,
			   const struct hdom *d, uint16_t i)
{
	return d->midx[i] < 0 ? h->self : t->peers[d->midx[i]].name;
}

uint64_t hl_kgen(const struct imexd_health *h, const uint8_t uuid[16])
{
	size_t i;

	for (i = 0; i < h->nkgens; i++)
		if (!memcmp(h->kgens[i].uuid, uuid, 16))
			return h->kgens[i].generation;
	return 0;
}

/* t->mark[q] = 1 for each peer q sharing a domain with peer @p. */
void hl_mark_shared(struct imexd_health *h, int p)
{
	struct htab *t = &h->t;
	size_t i;
	uint16_t m;

	memset(t->mark, 0, t->npeers);
	for (i = 0; i < t->ndoms; i++) {
		const struct hdom *d = &t->doms[i];

		if (hl_dom_member(d, p) < 0)
			continue;
		for (m = 0; m < d->n; m++)
			if (d->midx[m] >= 0)
				t->mark[d->midx[m]] = 1;
	}
}

/* ---- what changed --------------------------------------------------------- */

/* Peer @p's state: the statuses of its domains and the heartbeats to
 * every peer of those domains carry it. */
void hl_state_changed(struct imexd_health *h, int p)
{
	size_t i;
	uint16_t m;

	for (i = 0; i < h->t.ndoms; i++) {
		struct hdom *d = &h->t.doms[i];

		if (hl_dom_member(d, p) < 0)
			continue;
		d->dirty = true;
		for (m = 0; m < d->n; m++)
			if (d->midx[m] >= 0)
				h->t.peers[d->midx[m]].dirty = true;
	}
}

/* What peer @p reported (view, generations): its domains' statuses. */
void hl_report_changed(struct imexd_health *h, int p)
{
	size_t i;

	for (i = 0; i < h->t.ndoms; i++)
		if (hl_dom_member(&h->t.doms[i], p) >= 0)
			h->t.doms[i].dirty = true;
}

static void forget_report(struct imexd_health *h, int p)
{
	struct hpeer *pe = &h->t.peers[p];
	size_t i;

	pe->has_view = false;
	pe->self_in_view = IMEX_MEMBER_UNKNOWN;
	memset(pe->rview, IMEX_MEMBER_UNKNOWN, h->t.npeers);
	for (i = 0; i < h->t.ndoms; i++) {
		struct hdom *d = &h->t.doms[i];
		int m = hl_dom_member(d, p);

		if (m >= 0)
			d->mgen[m] = 0;
	}
	hl_report_changed(h, p);
}

void hl_set_state(struct imexd_health *h, int p, uint8_t state,
		  uint64_t since, const char *why)
{
	struct hpeer *pe = &h->t.peers[p];

	if (pe->state == state)
		return;
	hl_log_f(h, IMEXD_MSGID_MEMBER_STATE, NULL, pe->name,
		 state == IMEX_MEMBER_CONNECTED ? L_INFO : L_WARN,
	       "node '%s': %s%s%s%s", pe->name, hl_state_name(state),
	       why ? " (" : "", why ? why : "", why ? ")" : "");
	/* What it reported held while it was connected; now it is stale. */
	if (pe->state == IMEX_MEMBER_CONNECTED)
		forget_report(h, p);
	pe->state = state;
	pe->since = since;
	if (state == IMEX_MEMBER_CONNECTED)
		pe->grace_end = 0;
	if (state == IMEX_MEMBER_DISCONNECTED)
		pe->lost_due = true;
	hl_state_changed(h, p);
}

/* Deadlines passed by @now, as if the timer had run on time. */
static void advance(struct imexd_health *h)
{
	uint64_t miss = miss_ms(h), now = h->now;
	char why[64];
	size_t i;

	for (i = 0; i < h->t.npeers; i++) {
		struct hpeer *pe = &h->t.peers[i];

		if (pe->state == IMEX_MEMBER_CONNECTED &&
		    now >= pe->last_rx + miss) {
			snprintf(why, sizeof(why), "no heartbeat for %llu ms",
				 (unsigned long long)miss);
			pe->cause = HC_HEARTBEAT;
			pe->cause_at = pe->last_rx + miss;
			hl_set_state(h, (int)i, IMEX_MEMBER_RECOVERING,
				  pe->last_rx + miss, why);
		}
		if (pe->state == IMEX_MEMBER_RECOVERING && h->grace_ms >= 0 &&
		    now >= pe->since + (uint64_t)h->grace_ms) {
			snprintf(why, sizeof(why), "grace time of %lld ms over",
				 (long long)h->grace_ms);
			hl_set_state(h, (int)i, IMEX_MEMBER_DISCONNECTED,
				  pe->since + (uint64_t)h->grace_ms, why);
		}
		/* Refused meanwhile: still lost when its grace is over. */
		if (pe->state == IMEX_MEMBER_REFUSED && pe->grace_end &&
		    now >= pe->grace_end) {
			pe->grace_end = 0;
			pe->lost_due = true;
		}
	}
}

/* ---- heartbeats out ------------------------------------------------------- */

/*
 * A member's state as protocol 3 says it: REFUSED is newer, so it goes as
 * what it means for the others: still recovering while its grace runs
 * (it was refused while recovering), else disconnected.
 */
static uint32_t hb_state(const struct hpeer *pe)
{
	if (pe->state <= IMEXD_WIRE_MEMBER_STATE_MAX)
		return pe->state;
	if (pe->state == IMEX_MEMBER_REFUSED && pe->grace_end)
		return IMEX_MEMBER_RECOVERING;
	return IMEX_MEMBER_DISCONNECTED;
}

/*
 * What a heartbeat to peer @p carries, into the scratch: this node's view
 * of the members (but itself) of the domains it shares with @p, in peer
 * order, and the generation its kernel holds of each of those domains.
 */
static void hb_build(struct imexd_health *h, int p, uint16_t *nv,
		     uint16_t *ng)
{
	struct htab *t = &h->t;
	size_t i, k = 0, g = 0;

	hl_mark_shared(h, p);
	for (i = 0; i < t->ndoms; i++) {
		const struct hdom *d = &t->doms[i];
		uint64_t gen = hl_kgen(h, d->st.uuid);

		if (!gen || hl_dom_member(d, p) < 0)
			continue;
		memcpy(t->gens[g].uuid, d->st.uuid, 16);
		t->gens[g++].generation = gen;
	}
	for (i = 0; i < t->npeers && k < IMEX_MEMBERS_MAX; i++) {
		if (!t->mark[i])
			continue;
		memcpy(t->views[k].name, t->peers[i].name, IMEX_NAME_MAX);
		t->views[k++].state = hb_state(&t->peers[i]);
	}
	*nv = (uint16_t)k;
	*ng = (uint16_t)g;
}

static bool hb_same(const struct hpeer *pe, const struct htab *t,
		    uint16_t nv, uint16_t ng)
{
	uint16_t i;

	if (pe->msg.u.heartbeat.n != nv || pe->msg.u.heartbeat.ngens != ng)
		return false;
	for (i = 0; i < nv; i++)
		if (pe->views[i].state != t->views[i].state ||
		    strcmp(pe->views[i].name, t->views[i].name))
			return false;
	return !ng || !memcmp(pe->gens, t->gens, ng * sizeof(*t->gens));
}

/* Periodic heartbeats at once; those on change at the end of the turn
 * (@turn_end: the timer, which the caller runs when the inputs at hand
 * are done), so that all a turn changes goes in one. */
static void hb_flush(struct imexd_health *h, bool turn_end)
{
	uint64_t gap = hl_max1(h->hb_ms / 10), now = h->now;
	uint64_t slack = hl_slack(gap);
	struct htab *t = &h->t;
	uint16_t nv, ng;
	size_t i;

	for (i = 0; i < t->npeers; i++) {
		struct hpeer *pe = &t->peers[i];
		bool periodic = now >= pe->next_hb;

		if (!pe->link) {
			pe->dirty = false;
			continue;
		}
		if (!periodic && (!pe->dirty || (pe->sent && !turn_end) ||
				  (pe->sent && now + slack < pe->hb_tat)))
			continue;
		pe->dirty = false;
		hb_build(h, (int)i, &nv, &ng);
		if (!periodic && pe->sent && !pe->owed && hb_same(pe, t, nv, ng))
			continue;
		pe->owed = false;
		memcpy(pe->views, t->views, nv * sizeof(*pe->views));
		if (ng)
			memcpy(pe->gens, t->gens, ng * sizeof(*pe->gens));
		pe->msg.type = IMEXD_MSG_HEARTBEAT;
		memset(pe->msg.domain_uuid, 0, 16);
		pe->msg.u.heartbeat.seq = ++pe->seq;
		pe->msg.u.heartbeat.n = nv;
		pe->msg.u.heartbeat.peers = pe->views;
		pe->msg.u.heartbeat.ngens = ng;
		pe->msg.u.heartbeat.gens = pe->gens;
		pe->send_due = true;
		pe->sent = true;
		pe->hb_tat = hl_tat_next(pe->hb_tat, now, gap);
		pe->next_hb = now + h->hb_ms;
	}
}

/* ---- inputs --------------------------------------------------------------- */

void hl_begin(struct imexd_health *h, uint64_t now)
{
	h->now = now;
	if (h->line_rd == h->nlines)
		h->nlines = h->line_rd = 0;
	h->cur_lost = h->cur_status = h->cur_send = 0;
	advance(h);
}

void hl_end(struct imexd_health *h)
{
	advance(h);
	hb_flush(h, false);
	hl_status_flush(h);
}

void imexd_health_set_timing(struct imexd_health *h, uint32_t heartbeat_ms,
			     uint32_t miss_count, int64_t grace_ms)
{
	h->hb_ms = heartbeat_ms ? heartbeat_ms : HB_DEFAULT_MS;
	h->miss_count = miss_count ? miss_count : MISS_DEFAULT;
	h->grace_ms = grace_ms < 0 ? -1 : grace_ms;
}

int imexd_health_new(const struct imexd_health_config *cfg,
		     struct imexd_health **out)
{
	struct imexd_health *h;
	int rv;

	*out = NULL;
	if (!cfg || !cfg->self || !imexd_name_valid(cfg->self))
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	memcpy(h->self, cfg->self, strlen(cfg->self) + 1);
	imexd_health_set_timing(h, cfg->heartbeat_ms, cfg->miss_count,
				cfg->grace_ms);
	rv = hl_tab_build(h, NULL, 0, &h->t);
	if (rv) {
		free(h);
		return rv;
	}
	*out = h;
	return 0;
}

void imexd_health_free(struct imexd_health *h)
{
	if (!h)
		return;
	hl_tab_free(&h->t);
	free(h->kgens);
	free(h);
}

int imexd_health_set_domains(struct imexd_health *h, uint64_t now,
			     const struct imexd_def *const *defs, size_t n)
{
	struct htab t;
	int rv = hl_tab_build(h, defs, n, &t);

	if (rv)
		return rv;
	/* Deadlines that passed count in the old tables, then carry over. */
	hl_begin(h, now);
	hl_tab_swap(h, &t);
	hl_end(h);
	return 0;
}

int imexd_health_applied(struct imexd_health *h, uint64_t now,
			 const uint8_t uuid[16], uint64_t generation)
{
	size_t i;
	int d;

	for (i = 0; i < h->nkgens; i++)
		if (!memcmp(h->kgens[i].uuid, uuid, 16))
			break;
	if (i == h->nkgens && generation &&
	    imexd_grow((void **)&h->kgens, &h->kgens_cap, h->nkgens + 1,
		       sizeof(*h->kgens)))
		return -ENOMEM;
	hl_begin(h, now);
	if (i < h->nkgens && h->kgens[i].generation == generation) {
		hl_end(h);
		return 0;
	}
	if (i == h->nkgens && !generation) {
		hl_end(h);
		return 0;
	}
	if (!generation) {
		memmove(&h->kgens[i], &h->kgens[i + 1],
			(h->nkgens - i - 1) * sizeof(*h->kgens));
		h->nkgens--;
	} else {
		if (i == h->nkgens)
			memcpy(h->kgens[h->nkgens++].uuid, uuid, 16);
		h->kgens[i].generation = generation;
	}
	d = hl_dom_find(&h->t, uuid);
	if (d >= 0) {
		struct hdom *dm = &h->t.doms[d];
		uint16_t m;

		/* The kernel's domain is new or set anew: push it all. */
		dm->dirty = true;
		dm->valid = false;
		for (m = 0; m < dm->n; m++)
			if (dm->midx[m] >= 0)
				h->t.peers[dm->midx[m]].dirty = true;
	}
	hl_end(h);
	return 0;
}

void imexd_health_set_wall(struct imexd_health *h, int64_t wall_minus_now)
{
	int64_t d = wall_minus_now - h->wall_off;
	size_t i;

	if (h->wall_set && d > -1000 && d < 1000)
		return;
	h->wall_set = true;
	h->wall_off = wall_minus_now;
	/* Every time shown moved: statuses go anew. */
	for (i = 0; i < h->t.ndoms; i++)
		h->t.doms[i].dirty = true;
}

void imexd_health_set_quorum(struct imexd_health *h, uint64_t now,
			     const char *why)
{
	size_t i;

	if (!strcmp(h->quorum, why ? why : ""))
		return;
	hl_begin(h, now);
	snprintf(h->quorum, sizeof(h->quorum), "%s", why ? why : "");
	for (i = 0; i < h->t.ndoms; i++)
		h->t.doms[i].dirty = true;
	hl_end(h);
}

void imexd_health_timer(struct imexd_health *h, uint64_t now)
{
	hl_begin(h, now);
	advance(h);
	hb_flush(h, true);
	hl_status_flush(h);
}

uint64_t imexd_health_deadline(const struct imexd_health *h)
{
	uint64_t t = NO_TIME, miss = miss_ms(h);
	uint64_t hb_slack = hl_slack(hl_max1(h->hb_ms / 10));
	uint64_t st_slack = hl_slack(hl_max1(h->hb_ms / 50));
	size_t i;

#define AT_MOST(v) do { if ((v) < t) t = (v); } while (0)
	for (i = 0; i < h->t.npeers; i++) {
		const struct hpeer *pe = &h->t.peers[i];

		if (pe->state == IMEX_MEMBER_CONNECTED)
			AT_MOST(pe->last_rx + miss);
		if (pe->state == IMEX_MEMBER_RECOVERING && h->grace_ms >= 0)
			AT_MOST(pe->since + (uint64_t)h->grace_ms);
		if (pe->state == IMEX_MEMBER_REFUSED && pe->grace_end)
			AT_MOST(pe->grace_end);
		if (pe->link)
			AT_MOST(pe->next_hb);
		if (pe->link && pe->dirty && pe->sent)
			AT_MOST(pe->hb_tat > hb_slack ? pe->hb_tat - hb_slack : 0);
	}
	for (i = 0; i < h->t.ndoms; i++) {
		const struct hdom *d = &h->t.doms[i];

		if (d->dirty && d->held)
			AT_MOST(d->status_tat);
		else if (d->dirty)
			AT_MOST(d->status_tat > st_slack ? d->status_tat - st_slack : 0);
	}
#undef AT_MOST
	return t;
}

bool imexd_health_next(struct imexd_health *h, struct imexd_health_action *a)
{
	struct htab *t = &h->t;

	memset(a, 0, sizeof(*a));
	if (h->line_rd < h->nlines) {
		a->type = IMEXD_HEALTH_LOG;
		a->level = t->levels[h->line_rd];
		a->fields = t->fields[h->line_rd];
		a->text = t->lines[h->line_rd++];
		return true;
	}
	if (h->dropped) {
		snprintf(h->drop_line, sizeof(h->drop_line),
			 "%lu health log lines dropped (actions not drained)",
			 h->dropped);
		h->dropped = 0;
		a->type = IMEXD_HEALTH_LOG;
		a->level = L_WARN;
		a->text = h->drop_line;
		return true;
	}
	for (; h->cur_lost < t->npeers; h->cur_lost++) {
		struct hpeer *pe = &t->peers[h->cur_lost];

		if (pe->lost_due) {
			pe->lost_due = false;
			a->type = IMEXD_HEALTH_PEER_LOST;
			a->to = pe->name;
			return true;
		}
	}
	for (; h->cur_status < t->ndoms; h->cur_status++) {
		struct hdom *d = &t->doms[h->cur_status];

		if (d->status_due) {
			d->status_due = false;
			a->type = IMEXD_HEALTH_STATUS;
			a->status = &d->st;
			return true;
		}
	}
	for (; h->cur_send < t->npeers; h->cur_send++) {
		struct hpeer *pe = &t->peers[h->cur_send];

		if (pe->send_due) {
			pe->send_due = false;
			a->type = IMEXD_HEALTH_SEND;
			a->to = pe->name;
			a->msg = &pe->msg;
			return true;
		}
	}
	return false;
}

uint8_t imexd_health_peer_state(const struct imexd_health *h,
				const char *name)
{
	int p;

	if (!strcmp(name, h->self))
		return IMEX_MEMBER_SELF;
	p = hl_peer_find(&h->t, name);
	return p < 0 ? IMEX_MEMBER_UNKNOWN : h->t.peers[p].state;
}

bool imexd_health_ready(const struct imexd_health *h, const uint8_t uuid[16])
{
	int d = hl_dom_find(&h->t, uuid);

	return d >= 0 && hl_dom_ready(h, &h->t.doms[d], NULL, 0);
}
