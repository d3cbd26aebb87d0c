// SPDX-License-Identifier: GPL-2.0
/*
 * health: the tables sized by the committed domains (peers, their
 * heartbeat buffers, statuses, log lines, scratch).  A new set is built
 * whole, then swapped in keeping what stays, so that out of memory leaves
 * the part as it was and no other input needs to allocate.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health_internal.h"

void hl_tab_free(struct htab *t)
{
	size_t i;

	for (i = 0; t->peers && i < t->npeers; i++) {
		free(t->peers[i].rview);
		free(t->peers[i].views);
		free(t->peers[i].gens);
	}
	for (i = 0; t->doms && i < t->ndoms; i++) {
		free(t->doms[i].midx);
		free(t->doms[i].mgen);
		free(t->doms[i].st.members);
	}
	free(t->peers);
	free(t->doms);
	free(t->mark);
	free(t->rview);
	free(t->views);
	free(t->gens);
	free(t->members);
	free(t->lines);
	free(t->levels);
	free(t->fields);
	memset(t, 0, sizeof(*t));
}

static bool dom_listed(const struct imexd_health *h, const struct imexd_def *d)
{
	return !(d->flags & IMEXD_DEF_DELETED) &&
	       imexd_def_has_member(d, h->self);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Validate @defs; count the domains kept and their members but self. */
static int defs_count(const struct imexd_health *h,
		      const struct imexd_def *const *defs, size_t n,
		      size_t *ndoms, size_t *nrefs)
{
	size_t i, j;

	*ndoms = *nrefs = 0;
	for (i = 0; i < n; i++) {
		if (!defs[i])
			return -EINVAL;
		if (!dom_listed(h, defs[i]))
			continue;
		if (defs[i]->nmembers > IMEX_MEMBERS_MAX || !defs[i]->members)
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (dom_listed(h, defs[j]) &&
			    !memcmp(defs[j]->uuid, defs[i]->uuid, 16))
				return -EINVAL;
		(*ndoms)++;
		for (j = 0; j < defs[i]->nmembers; j++)
			*nrefs += !!strcmp(defs[i]->members[j].name, h->self);
	}
	return 0;
}

/* The sorted, unique peer names of @defs (pointers into them). */
static size_t peer_names(const struct imexd_health *h,
			 const struct imexd_def *const *defs, size_t n,
			 const char **names)
{
	size_t i, k = 0, u = 0;
	uint16_t m;

	for (i = 0; i < n; i++) {
		if (!dom_listed(h, defs[i]))
			continue;
		for (m = 0; m < defs[i]->nmembers; m++)
			if (strcmp(defs[i]->members[m].name, h->self))
				names[k++] = defs[i]->members[m].name;
	}
	if (k)
		qsort(names, k, sizeof(*names), cmp_name);
	for (i = 0; i < k; i++)
		if (!u || strcmp(names[u - 1], names[i]))
			names[u++] = names[i];
	return u;
}

/*
 * Allocate and fill the static part of a table for @defs: names, members,
 * buffers.  Nothing of @h changes; -ENOMEM leaves @t empty.
 */
int hl_tab_build(const struct imexd_health *h,
		 const struct imexd_def *const *defs, size_t n, struct htab *t)
{
	size_t nd, nrefs, np, i, k, maxn = 1, vcap;
	const char **names;
	int rv;

	memset(t, 0, sizeof(*t));
	rv = defs_count(h, defs, n, &nd, &nrefs);
	if (rv)
		return rv;
	names = malloc((nrefs ? nrefs : 1) * sizeof(*names));
	if (!names)
		return -ENOMEM;
	np = peer_names(h, defs, n, names);
	vcap = np < IMEX_MEMBERS_MAX ? np : IMEX_MEMBERS_MAX;
	t->npeers = np;
	t->ndoms = nd;
	t->peers = calloc(np ? np : 1, sizeof(*t->peers));
	t->doms = calloc(nd ? nd : 1, sizeof(*t->doms));
	if (!t->peers || !t->doms)
		goto nomem;
	for (i = 0; i < np; i++)
		memcpy(t->peers[i].name, names[i], strlen(names[i]) + 1);
	for (i = 0, k = 0; i < n; i++) {
		const struct imexd_def *def = defs[i];
		struct hdom *d;
		uint16_t m;

		if (!dom_listed(h, def))
			continue;
		d = &t->doms[k++];
		snprintf(d->st.name, sizeof(d->st.name), "%s", def->name);
		memcpy(d->st.uuid, def->uuid, 16);
		d->gen = def->generation;
		d->n = def->nmembers;
		d->st.nmembers = def->nmembers;
		if (d->n > maxn)
			maxn = d->n;
		d->midx = calloc(d->n, sizeof(*d->midx));
		d->mgen = calloc(d->n, sizeof(*d->mgen));
		d->st.members = calloc(d->n, sizeof(*d->st.members));
		if (!d->midx || !d->mgen || !d->st.members)
			goto nomem;
		for (m = 0; m < d->n; m++)
			d->midx[m] = hl_peer_find(t, def->members[m].name);
	}
	for (i = 0; i < np; i++) {
		struct hpeer *pe = &t->peers[i];
		size_t shared = 0;

		for (k = 0; k < nd; k++)
			shared += hl_dom_member(&t->doms[k], (int)i) >= 0;
		pe->state = IMEX_MEMBER_NEVER_CONNECTED;
		pe->views_cap = (uint16_t)vcap;
		pe->gens_cap = (uint16_t)shared;
		pe->rview = malloc(np);
		pe->views = calloc(vcap, sizeof(*pe->views));
		pe->gens = calloc(shared ? shared : 1, sizeof(*pe->gens));
		if (!pe->rview || !pe->views || !pe->gens)
			goto nomem;
		memset(pe->rview, IMEX_MEMBER_UNKNOWN, np);
	}
	t->lines_cap = LOG_SPARE + 2 * np + nd;
	t->mark = calloc(np ? np : 1, 1);
	t->rview = calloc(np ? np : 1, 1);
	t->views = calloc(vcap ? vcap : 1, sizeof(*t->views));
	t->gens = calloc(nd ? nd : 1, sizeof(*t->gens));
	t->members = calloc(maxn, sizeof(*t->members));
	t->lines = calloc(t->lines_cap, sizeof(*t->lines));
	t->levels = calloc(t->lines_cap, sizeof(*t->levels));
	t->fields = calloc(t->lines_cap, sizeof(*t->fields));
	if (!t->mark || !t->rview || !t->views || !t->gens || !t->members ||
	    !t->lines || !t->levels || !t->fields)
		goto nomem;
	free(names);
	return 0;
nomem:
	free(names);
	hl_tab_free(t);
	return -ENOMEM;
}

/* What a peer that stays keeps: state, timers, its report, the last
 * heartbeat (when it still fits the new buffers). */
static void peer_carry(const struct imexd_health *h, const struct htab *ot,
		       const struct hpeer *op, struct htab *t,
		       struct hpeer *pe)
{
	uint16_t nv = op->msg.u.heartbeat.n, ng = op->msg.u.heartbeat.ngens;
	size_t j;

	pe->state = op->state;
	pe->link = op->link;
	pe->has_view = op->has_view;
	pe->self_in_view = op->self_in_view;
	pe->sent = op->sent;
	pe->owed = op->owed;
	pe->lost_due = op->lost_due;
	pe->last_rx = op->last_rx;
	pe->since = op->since;
	pe->cause = op->cause;
	pe->cause_at = op->cause_at;
	pe->grace_end = op->grace_end;
	memcpy(pe->detail, op->detail, sizeof(pe->detail));
	pe->hb_tat = op->hb_tat;
	pe->next_hb = op->next_hb;
	pe->seq = op->seq;
	for (j = 0; j < t->npeers; j++) {
		int o = hl_peer_find(ot, t->peers[j].name);

		pe->rview[j] = o < 0 ? IMEX_MEMBER_UNKNOWN : op->rview[o];
	}
	pe->msg = op->msg;
	if (nv <= pe->views_cap && ng <= pe->gens_cap) {
		memcpy(pe->views, op->views, nv * sizeof(*pe->views));
		if (ng)
			memcpy(pe->gens, op->gens, ng * sizeof(*pe->gens));
		pe->send_due = op->send_due;
	} else {
		/* Cannot be what goes next anyway: send anew at once. */
		nv = ng = 0;
		if (op->send_due)
			pe->next_hb = h->now;
	}
	pe->msg.u.heartbeat.n = nv;
	pe->msg.u.heartbeat.peers = pe->views;
	pe->msg.u.heartbeat.ngens = ng;
	pe->msg.u.heartbeat.gens = pe->gens;
}

static void dom_carry(const struct imexd_health *h, const struct htab *ot,
		      const struct hdom *od, const struct htab *t,
		      struct hdom *d)
{
	uint16_t i, j;

	d->last_state = od->last_state;
	d->status_tat = od->status_tat;
	d->held = od->held;
	if (od->n == d->n) {
		memcpy(d->st.members, od->st.members,
		       d->n * sizeof(*d->st.members));
		d->st.state = od->st.state;
		memcpy(d->st.reason, od->st.reason, sizeof(d->st.reason));
		d->st.generation = od->st.generation;
		d->valid = od->valid;
		d->status_due = od->status_due;
	}
	for (i = 0; i < d->n; i++) {
		const char *name = hl_member_name(h, t, d, i);

		if (d->midx[i] < 0)
			continue;
		for (j = 0; j < od->n; j++)
			if (!strcmp(hl_member_name(h, ot, od, j), name))
				d->mgen[i] = od->mgen[j];
	}
}

/* Swap in @t, keeping what stays; cannot fail. */
void hl_tab_swap(struct imexd_health *h, struct htab *t)
{
	struct htab *ot = &h->t;
	size_t i, k;

	for (i = 0; i < t->npeers; i++) {
		int o = hl_peer_find(ot, t->peers[i].name);

		if (o >= 0)
			peer_carry(h, ot, &ot->peers[o], t, &t->peers[i]);
		else
			t->peers[i].since = h->now;	/* watched from now */
		t->peers[i].dirty = true;
	}
	for (i = 0; i < t->ndoms; i++) {
		int o = hl_dom_find(ot, t->doms[i].st.uuid);

		if (o >= 0)
			dom_carry(h, ot, &ot->doms[o], t, &t->doms[i]);
		t->doms[i].dirty = true;
	}
	/* Lines not drained yet move over (as many as fit). */
	for (i = h->line_rd, k = 0; i < h->nlines; i++) {
		if (k >= t->lines_cap) {
			h->dropped++;
			continue;
		}
		memcpy(t->lines[k], ot->lines[i], HL_LINE);
		t->fields[k] = ot->fields[i];
		t->levels[k++] = ot->levels[i];
	}
	h->line_rd = 0;
	h->nlines = k;
	hl_tab_free(ot);
	h->t = *t;
}
