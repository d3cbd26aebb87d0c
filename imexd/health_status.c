// SPDX-License-Identifier: GPL-2.0
/*
 * health: each domain's READY/DEGRADED state and the status pushed to the
 * kernel (the From/To matrix of member views, with generations).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "health_internal.h"

/* How member @i of @d sees member @j. */
static uint8_t view_of(const struct htab *t, const struct hdom *d,
		       uint16_t i, uint16_t j)
{
	const struct hpeer *pe;

	if (i == j)
		return IMEX_MEMBER_SELF;
	/* Two members, one of them a peer: never without peers. */
	if (!t->peers)
		return IMEX_MEMBER_UNKNOWN;
	if (d->midx[i] < 0)
		return t->peers[d->midx[j]].state;
	pe = &t->peers[d->midx[i]];
	if (!pe->has_view)
		return IMEX_MEMBER_UNKNOWN;
	return d->midx[j] < 0 ? pe->self_in_view : pe->rview[d->midx[j]];
}

static uint64_t gen_of(const struct imexd_health *h, const struct hdom *d,
		       uint16_t i)
{
	return d->midx[i] < 0 ? hl_kgen(h, d->st.uuid) : d->mgen[i];
}

/*
 * READY: every member connected in this node's view and in every member's
 * reported view, and every member holding the committed generation.
 * Otherwise @why (if any) says the first thing that is not so.
 */
bool hl_dom_ready(const struct imexd_health *h, const struct hdom *d,
		  char *why, size_t len)
{
	const struct htab *t = &h->t;
	uint16_t i, j;

	for (i = 0; i < d->n; i++) {
		const struct hpeer *pe = d->midx[i] < 0 ? NULL :
					 &t->peers[d->midx[i]];

		if (pe && pe->state != IMEX_MEMBER_CONNECTED) {
			if (why)
				snprintf(why, len, "node '%s' is %s", pe->name,
					 hl_state_name(pe->state));
			return false;
		}
	}
	for (i = 0; i < d->n; i++) {
		uint64_t g = gen_of(h, d, i);

		if (g != d->gen || !g) {
			if (why && !g)
				snprintf(why, len, "node '%s' has not reported holding generation %llu",
					 hl_member_name(h, t, d, i),
					 (unsigned long long)d->gen);
			else if (why)
				snprintf(why, len, "node '%s' holds generation %llu, not the committed %llu",
					 hl_member_name(h, t, d, i),
					 (unsigned long long)g,
					 (unsigned long long)d->gen);
			return false;
		}
	}
	for (i = 0; i < d->n; i++) {
		for (j = 0; j < d->n; j++) {
			uint8_t v = view_of(t, d, i, j);

			if (i == j || v == IMEX_MEMBER_CONNECTED)
				continue;
			if (why)
				snprintf(why, len, "node '%s' sees node '%s' as %s",
					 hl_member_name(h, t, d, i),
					 hl_member_name(h, t, d, j),
					 hl_state_name(v));
			return false;
		}
	}
	return true;
}

void hl_iso(const struct imexd_health *h, uint64_t ms, char out[32])
{
	int64_t wall = (int64_t)ms + h->wall_off;
	time_t t = (time_t)(wall / 1000);
	struct tm tm;

	out[0] = '\0';
	if (!h->wall_set || wall <= 0 || !gmtime_r(&t, &tm) ||
	    !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		out[0] = '\0';
}

void imexd_health_iso(const struct imexd_health *h, uint64_t ms, char out[32])
{
	hl_iso(h, ms, out);
}

/* What made @pe leave CONNECTED (or never reach it), with its time. */
static void peer_cause(const struct imexd_health *h, const struct hpeer *pe,
		       char *out, size_t len)
{
	char at[32];

	hl_iso(h, pe->cause == HC_NONE ? pe->since : pe->cause_at, at);
	switch (pe->cause) {
	case HC_HEARTBEAT:
		snprintf(out, len, "heartbeat lost%s%s", at[0] ? " at " : "", at);
		break;
	case HC_CLOSED:
		snprintf(out, len, "%s%s%s", pe->detail, at[0] ? " at " : "", at);
		break;
	case HC_VERSION:
	case HC_REFUSED:
		snprintf(out, len, "%s", pe->detail);
		break;
	default:
		if (at[0])
			snprintf(out, len, "no connection since %s", at);
		else
			snprintf(out, len, "no connection since imexd started");
		break;
	}
}

void hl_peer_reason(const struct imexd_health *h, const struct hpeer *pe,
		    char *out, size_t len)
{
	char cause[IMEXD_REASON_MAX], until[32];

	out[0] = '\0';
	switch (pe->state) {
	case IMEX_MEMBER_NEVER_CONNECTED:
		if (pe->cause != HC_NONE) {
			/* Refused or mismatched before, not since. */
			peer_cause(h, pe, cause, sizeof(cause));
			snprintf(out, len, "never connected; last: %s", cause);
		} else {
			hl_iso(h, pe->since, until);
			snprintf(out, len, "never connected since %s",
				 until[0] ? until : "imexd started");
		}
		break;
	case IMEX_MEMBER_RECOVERING:
		peer_cause(h, pe, cause, sizeof(cause));
		if (h->grace_ms >= 0)
			hl_iso(h, pe->since + (uint64_t)h->grace_ms, until);
		else
			until[0] = '\0';
		snprintf(out, len, "%s, grace time running%s%s", cause,
			 until[0] ? " until " : "", until);
		break;
	case IMEX_MEMBER_DISCONNECTED:
		peer_cause(h, pe, cause, sizeof(cause));
		snprintf(out, len, "%s, grace time of %lld ms over", cause,
			 (long long)h->grace_ms);
		break;
	case IMEX_MEMBER_VERSION_MISMATCH:
	case IMEX_MEMBER_REFUSED:
		peer_cause(h, pe, out, len);
		break;
	default:
		break;
	}
}

/*
 * The domain's reason: the agreement layer's when it cannot commit, else
 * the first member not connected and why, else what hl_dom_ready() found.
 */
static void dom_reason(const struct imexd_health *h, const struct hdom *d,
		       const char *why, char *out, size_t len)
{
	const struct htab *t = &h->t;
	/* Room for "<name> <state>: " in front. */
	char cause[IMEXD_REASON_MAX - IMEX_NAME_MAX - 32];
	uint16_t i;

	if (h->quorum[0]) {
		snprintf(out, len, "%s", h->quorum);
		return;
	}
	for (i = 0; i < d->n; i++) {
		const struct hpeer *pe = d->midx[i] < 0 ? NULL :
					 &t->peers[d->midx[i]];

		if (!pe || pe->state == IMEX_MEMBER_CONNECTED)
			continue;
		peer_cause(h, pe, cause, sizeof(cause));
		snprintf(out, len, "%s %s: %s", pe->name,
			 hl_state_name(pe->state), cause);
		return;
	}
	snprintf(out, len, "%s", why);
}

static void status_build(const struct imexd_health *h, const struct hdom *d,
			 struct imexd_member_status *ms)
{
	const struct htab *t = &h->t;
	uint16_t i, j;

	memset(ms, 0, d->n * sizeof(*ms));
	for (i = 0; i < d->n; i++) {
		const struct hpeer *pe = d->midx[i] < 0 ? NULL :
					 &t->peers[d->midx[i]];

		snprintf(ms[i].name, sizeof(ms[i].name), "%s",
			 hl_member_name(h, t, d, i));
		ms[i].state = pe ? pe->state : IMEX_MEMBER_SELF;
		if (pe) {
			hl_peer_reason(h, pe, ms[i].reason, sizeof(ms[i].reason));
			if (h->wall_set && (int64_t)pe->since + h->wall_off > 0)
				ms[i].since = (uint64_t)((int64_t)pe->since +
							 h->wall_off);
		}
		ms[i].has_view = !pe || pe->has_view;
		for (j = 0; ms[i].has_view && j < d->n; j++)
			ms[i].view[j] = view_of(t, d, i, j);
		ms[i].generation = gen_of(h, d, i);
	}
}

/* Pushes at once: a new state (READY, DEGRADED, a new generation) up to
 * BURST times, then one per heartbeat_ms / 50 per domain; a change of the
 * matrix only (a mesh forming changes it many times a millisecond, and
 * each push carries all of it) at most once per that gap.  The latest
 * state follows when the gap is over.  Only for domains this node's kernel
 * holds (imexd_health_applied()). */
void hl_status_flush(struct imexd_health *h)
{
	uint64_t gap = hl_max1(h->hb_ms / 50), now = h->now;
	uint64_t slack = hl_slack(gap);
	struct htab *t = &h->t;
	char why[192], reason[IMEXD_REASON_MAX];
	size_t i;

	for (i = 0; i < t->ndoms; i++) {
		struct hdom *d = &t->doms[i];
		uint32_t state;
		bool fresh;

		if (!d->dirty || now + slack < d->status_tat)
			continue;
		/* Not in the kernel (yet): nothing to push it to. */
		if (!hl_kgen(h, d->st.uuid)) {
			d->dirty = false;
			continue;
		}
		state = hl_dom_ready(h, d, why, sizeof(why)) ?
			IMEX_DOMAIN_READY : IMEX_DOMAIN_DEGRADED;
		fresh = !d->valid || d->st.state != state ||
			d->st.generation != d->gen;
		d->held = !fresh && now < d->status_tat;
		if (d->held)
			continue;
		d->dirty = false;
		status_build(h, d, t->members);
		reason[0] = '\0';
		if (state != IMEX_DOMAIN_READY)
			dom_reason(h, d, why, reason, sizeof(reason));
		if (!fresh && !memcmp(d->st.members, t->members,
				      d->n * sizeof(*t->members)) &&
		    !strcmp(d->st.reason, reason))
			continue;
		if (d->last_state != state) {
			if (state == IMEX_DOMAIN_READY)
				hl_log_f(h, IMEXD_MSGID_DOMAIN_READY,
					 d->st.name, NULL, L_INFO,
					 "domain '%s': READY", d->st.name);
			else
				hl_log_f(h, IMEXD_MSGID_DOMAIN_DEGRADED,
					 d->st.name, NULL, L_INFO,
					 "domain '%s': DEGRADED (%s)",
					 d->st.name, why);
		}
		memcpy(d->st.members, t->members, d->n * sizeof(*t->members));
		memcpy(d->st.reason, reason, sizeof(d->st.reason));
		d->st.state = state;
		d->st.generation = d->gen;
		d->last_state = state;
		d->valid = true;
		d->status_due = true;
		d->status_tat = hl_tat_next(d->status_tat, now, gap);
	}
}
