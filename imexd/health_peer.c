// SPDX-License-Identifier: GPL-2.0
/*
 * health: what the transport and the peers tell it (health.h): links up
 * and down, versions and names refused, and the heartbeats peers send.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "health_internal.h"

/* About what a peer sent: rate-limited per kind, with what was held back. */
__attribute__((format(printf, 4, 5)))
static void complain(struct imexd_health *h, enum complaint c, int level,
		     const char *fmt, ...)
{
	char buf[HL_LINE];
	va_list ap;

	if (h->complained_ever[c] &&
	    h->now - h->complained[c] < COMPLAIN_GAP_MS) {
		h->quiet[c]++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (h->quiet[c])
		hl_log(h, level, "%s (and %lu more like it since the last such line)",
		       buf, h->quiet[c]);
	else
		hl_log(h, level, "%s", buf);
	h->complained_ever[c] = true;
	h->complained[c] = h->now;
	h->quiet[c] = 0;
}


static void peer_up(struct imexd_health *h, uint64_t now, const char *name)
{
	int p = hl_peer_find(&h->t, name);

	if (p >= 0) {
		struct hpeer *pe = &h->t.peers[p];

		/* A new connection: a heartbeat on it at once. */
		pe->link = true;
		pe->next_hb = now;
		pe->last_rx = now;
		hl_set_state(h, p, IMEX_MEMBER_CONNECTED, now, NULL);
	}
}

void imexd_health_peer_up(struct imexd_health *h, uint64_t now,
			  const char *name)
{
	hl_begin(h, now);
	peer_up(h, now, name);
	hl_end(h);
}

void imexd_health_peers_up(struct imexd_health *h, uint64_t now,
			   const char *const *names, size_t n)
{
	size_t i;

	hl_begin(h, now);
	for (i = 0; i < n; i++)
		peer_up(h, now, names[i]);
	hl_end(h);
}

/* Keep the transport's words (@why may be NULL: @dflt). */
/*
 * The transport's words, printable ASCII only ('?' for any other byte):
 * they may carry a peer's bytes, and reasons are cut at a byte count,
 * which must not split a UTF-8 sequence or keep a terminal control.
 */
static void set_detail(struct hpeer *pe, const char *why, const char *dflt)
{
	char *s;

	snprintf(pe->detail, sizeof(pe->detail), "%s", why && *why ? why : dflt);
	for (s = pe->detail; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			*s = '?';
}

void imexd_health_peer_down_why(struct imexd_health *h, uint64_t now,
				const char *name, const char *why)
{
	int p;

	hl_begin(h, now);
	p = hl_peer_find(&h->t, name);
	if (p >= 0) {
		struct hpeer *pe = &h->t.peers[p];

		pe->link = false;
		if (pe->state == IMEX_MEMBER_CONNECTED) {
			pe->cause = HC_CLOSED;
			pe->cause_at = now;
			set_detail(pe, why, "connection lost");
			hl_set_state(h, p, IMEX_MEMBER_RECOVERING, now, pe->detail);
		}
	}
	hl_end(h);
}

void imexd_health_peer_down(struct imexd_health *h, uint64_t now,
			    const char *name)
{
	imexd_health_peer_down_why(h, now, name, NULL);
}

/*
 * An input refusing peer @name begins: the peer (its index in *@p), or
 * NULL when it is linked or connected, as then the one refused only
 * claimed its name.  hl_end() follows either way.
 */
static struct hpeer *refusal_begin(struct imexd_health *h, uint64_t now,
				   const char *name, int *p)
{
	hl_begin(h, now);
	*p = hl_peer_find(&h->t, name);
	if (*p < 0 || h->t.peers[*p].link ||
	    h->t.peers[*p].state == IMEX_MEMBER_CONNECTED)
		return NULL;
	return &h->t.peers[*p];
}

void imexd_health_peer_version_why(struct imexd_health *h, uint64_t now,
				   const char *name, const char *why)
{
	int p;
	struct hpeer *pe = refusal_begin(h, now, name, &p);

	if (pe) {
		pe->cause = HC_VERSION;
		pe->cause_at = now;
		set_detail(pe, why, "no protocol version in common");
		hl_set_state(h, p, IMEX_MEMBER_VERSION_MISMATCH, now,
			     "no protocol version in common");
	}
	hl_end(h);
}

void imexd_health_peer_version(struct imexd_health *h, uint64_t now,
			       const char *name)
{
	imexd_health_peer_version_why(h, now, name, NULL);
}

void imexd_health_peer_refused(struct imexd_health *h, uint64_t now,
			       const char *name, const char *why)
{
	int p;
	struct hpeer *pe = refusal_begin(h, now, name, &p);

	if (pe) {
		bool same = pe->state == IMEX_MEMBER_REFUSED &&
			    !strcmp(pe->detail, why && *why ? why : "refused");

		if (pe->state == IMEX_MEMBER_RECOVERING && h->grace_ms >= 0)
			pe->grace_end = pe->since + (uint64_t)h->grace_ms;
		pe->cause = HC_REFUSED;
		pe->cause_at = now;
		set_detail(pe, why, "refused");
		if (pe->state == IMEX_MEMBER_REFUSED && !same)
			hl_state_changed(h, p);	/* new words, same state */
		hl_set_state(h, p, IMEX_MEMBER_REFUSED, now, pe->detail);
	}
	hl_end(h);
}

/* Why a heartbeat cannot be taken as it is, NULL if it can. */
static const char *hb_problem(const struct imexd_msg *msg)
{
	uint16_t i;

	if (msg->type != IMEXD_MSG_HEARTBEAT)
		return "not a heartbeat";
	if (msg->u.heartbeat.n > IMEX_MEMBERS_MAX)
		return "more views than IMEX_MEMBERS_MAX";
	if (msg->u.heartbeat.ngens > IMEX_DOMAINS_MAX)
		return "more generations than IMEX_DOMAINS_MAX";
	if ((msg->u.heartbeat.n && !msg->u.heartbeat.peers) ||
	    (msg->u.heartbeat.ngens && !msg->u.heartbeat.gens))
		return "a count without entries";
	for (i = 0; i < msg->u.heartbeat.n; i++) {
		const struct imexd_peer_view *v = &msg->u.heartbeat.peers[i];

		if (!memchr(v->name, '\0', sizeof(v->name)))
			return "a name without its end";
		if (v->state >= __IMEX_MEMBER_STATE_MAX)
			return "a member state out of range";
	}
	return NULL;
}

/* Take peer @p's report: its view of the peers it shares a domain with
 * (and of this node), and the generations of those domains. */
static void hb_take(struct imexd_health *h, int p, const struct imexd_msg *msg)
{
	struct htab *t = &h->t;
	struct hpeer *pe = &t->peers[p];
	uint8_t self_v = IMEX_MEMBER_UNKNOWN;
	bool changed, owed = !pe->has_view;
	size_t i;
	uint16_t k;

	hl_mark_shared(h, p);
	memset(t->rview, IMEX_MEMBER_UNKNOWN, t->npeers);
	for (k = 0; k < msg->u.heartbeat.n; k++) {
		const struct imexd_peer_view *v = &msg->u.heartbeat.peers[k];
		int q;

		if (!strcmp(v->name, h->self)) {
			self_v = v->state;
			continue;
		}
		q = hl_peer_find(t, v->name);
		if (q >= 0 && q != p && t->mark[q])
			t->rview[q] = v->state;
	}
	changed = !pe->has_view || pe->self_in_view != self_v ||
		  memcmp(pe->rview, t->rview, t->npeers);
	if (changed) {
		memcpy(pe->rview, t->rview, t->npeers);
		pe->self_in_view = self_v;
		pe->has_view = true;
		hl_report_changed(h, p);
	}
	for (i = 0; i < t->ndoms; i++) {
		struct hdom *d = &t->doms[i];
		int m = hl_dom_member(d, p);
		uint64_t g = 0;

		if (m < 0)
			continue;
		for (k = 0; k < msg->u.heartbeat.ngens; k++) {
			if (!memcmp(msg->u.heartbeat.gens[k].uuid,
				    d->st.uuid, 16)) {
				g = msg->u.heartbeat.gens[k].generation;
				break;
			}
		}
		if (d->mgen[m] != g) {
			owed |= !d->mgen[m];
			d->mgen[m] = g;
			d->dirty = true;
		}
	}
	/*
	 * Its first report since it connected, or the first of a domain
	 * it now holds: it may have dropped what we sent before it knew
	 * the domain (a node back from a restart, a member that applied
	 * the create after us), so ours goes again, within the rate limit.
	 */
	if (owed) {
		pe->owed = true;
		pe->dirty = true;
	}
}

void imexd_health_heartbeat(struct imexd_health *h, uint64_t now,
			    const char *from, const struct imexd_msg *msg)
{
	const char *why;
	int p;

	if (!from || !msg)
		return;
	hl_begin(h, now);
	p = hl_peer_find(&h->t, from);
	if (p < 0) {
		complain(h, C_STRANGER, L_INFO,
			 "heartbeat from node '%s', which shares no domain with this node: ignored",
			 from);
	} else if ((why = hb_problem(msg))) {
		complain(h, C_BAD, L_WARN,
			 "heartbeat from node '%s' ignored: %s", from, why);
	} else {
		struct hpeer *pe = &h->t.peers[p];

		if (!pe->link) {
			/* It came over a connection we had not heard of. */
			pe->link = true;
			pe->next_hb = now;
		}
		pe->last_rx = now;
		hl_set_state(h, p, IMEX_MEMBER_CONNECTED, now, NULL);
		hb_take(h, p, msg);
	}
	hl_end(h);
}
