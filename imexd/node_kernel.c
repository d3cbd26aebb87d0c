// SPDX-License-Identifier: GPL-2.0
/*
 * What the node dispatcher tells health and the kernel (see
 * node_internal.h): domain statuses, the domains and generations health's
 * tables are built from, the kernel's domains, and request answers held
 * until this node's kernel shows their outcome.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "node_internal.h"

/* ---- what health and the kernel are told ------------------------------------ */

static const struct imexd_def *kernel_find(const struct imexd_node *n,
					   const uint8_t uuid[16])
{
	size_t i;

	for (i = 0; i < n->n_kernel; i++)
		if (!memcmp(n->kernel[i].uuid, uuid, 16))
			return &n->kernel[i];
	return NULL;
}

void node_status_out(struct imexd_node *n,
		     const struct imexd_domain_status *st)
{
	struct node_out *o;

	/* The kernel knows only domains it holds. */
	if (!kernel_find(n, st->uuid))
		return;
	o = node_out_push(n, IMEXD_NODE_KERNEL_STATUS);
	if (!o)
		return;
	o->st = *st;
	if (st->nmembers) {
		o->st_members = malloc(st->nmembers * sizeof(*o->st_members));
		if (!o->st_members) {
			n->n_out--;
			return;
		}
		memcpy(o->st_members, st->members,
		       st->nmembers * sizeof(*o->st_members));
	}
	o->has_status = true;
}

void node_applied_refresh(struct imexd_node *n)
{
	const struct imexd_fsm *fsm = node_fsm(n);
	const struct imexd_def *d, *k;
	size_t pos = 0;

	if (!fsm)
		return;
	while ((d = imexd_fsm_domain_of(fsm, n->cfg.name, &pos))) {
		k = kernel_find(n, d->uuid);
		if (imexd_health_applied(n->health, n->now, d->uuid,
					 k ? k->generation : 0)) {
			node_log(n, IMEXD_LOG_ERR,
				 "out of memory telling health what the kernel holds");
			n->domains_dirty = true;
			return;
		}
	}
}

/* Whether @defs are the domains health's tables were built from. */
static bool dom_sig_same(const struct imexd_node *n,
			 const struct imexd_def **defs, size_t cnt)
{
	size_t i;

	if (!n->dom_sig_set || cnt != n->n_dom_sig)
		return false;
	for (i = 0; i < cnt; i++)
		if (!defs[i] ||
		    defs[i]->generation != n->dom_sig[i].generation ||
		    memcmp(defs[i]->uuid, n->dom_sig[i].uuid, 16))
			return false;
	return true;
}

static void dom_sig_keep(struct imexd_node *n, const struct imexd_def **defs,
			 size_t cnt)
{
	size_t i;

	n->dom_sig_set = false;
	if (cnt && imexd_grow((void **)&n->dom_sig, &n->cap_dom_sig, cnt,
			      sizeof(*n->dom_sig)))
		return;	/* unknown: the next refresh rebuilds */
	for (i = 0; i < cnt; i++) {
		if (!defs[i])
			return;
		memcpy(n->dom_sig[i].uuid, defs[i]->uuid, 16);
		n->dom_sig[i].generation = defs[i]->generation;
	}
	n->n_dom_sig = cnt;
	n->dom_sig_set = true;
}

void node_domains_refresh(struct imexd_node *n)
{
	const struct imexd_fsm *fsm = node_fsm(n);
	const struct imexd_def **defs = NULL, *d;
	const char **up;
	size_t pos = 0, cnt = 0, i, nup, total;
	uint16_t m;

	while (fsm && imexd_fsm_domain_of(fsm, n->cfg.name, &pos))
		cnt++;
	if (cnt) {
		defs = calloc(cnt, sizeof(const struct imexd_def *));
		if (!defs) {
			node_log(n, IMEXD_LOG_ERR,
				 "out of memory handing domains to health");
			n->domains_dirty = true;
			return;
		}
		for (pos = 0, i = 0; i < cnt &&
		     (d = imexd_fsm_domain_of(fsm, n->cfg.name, &pos)); i++)
			defs[i] = d;
	}
	if (!dom_sig_same(n, defs, cnt)) {
		if (imexd_health_set_domains(n->health, n->now,
					     (const struct imexd_def *const *)defs,
					     cnt)) {
			free(defs);
			n->domains_dirty = true;
			return;
		}
		dom_sig_keep(n, defs, cnt);
	}
	/* Members new to health whose connection is already bound, all in
	 * one input: each gets one heartbeat that shows them all (one by
	 * one if there is no memory for the list). */
	for (i = 0, total = 0; i < cnt; i++)
		total += defs[i]->nmembers;
	up = total ? calloc(total, sizeof(*up)) : NULL;
	for (i = 0, nup = 0; i < cnt; i++)
		for (m = 0; m < defs[i]->nmembers; m++) {
			const char *name = defs[i]->members[m].name;

			/* Not one it knew: a reset of a known peer's state
			 * would show a dead node connected till it is missed
			 * again (its TCP connection outlives it). */
			if (strcmp(name, n->cfg.name) &&
			    imexd_health_peer_state(n->health, name) ==
			    IMEX_MEMBER_NEVER_CONNECTED &&
			    imexd_peers_connected(n->peers, name)) {
				if (up)
					up[nup++] = name;
				else
					imexd_health_peer_up(n->health, n->now,
							     name);
			}
		}
	/* What the kernel holds first: the heartbeats to new peers carry
	 * it. */
	node_applied_refresh(n);
	if (nup)
		imexd_health_peers_up(n->health, n->now, up, nup);
	free(up);
	free(defs);
}

int node_kernel_set(struct imexd_node *n, const struct imexd_def *kernel,
		    size_t nkernel)
{
	return imexd_defs_replace(&n->kernel, &n->n_kernel, kernel, nkernel);
}

/* ---- answers held until the kernel shows them -------------------------------- */

/* 5 election timeouts, as agree's request timeout by default. */
uint64_t node_park_ms(const struct imexd_node *n)
{
	uint64_t et = n->cfg.election_timeout_ms ? n->cfg.election_timeout_ms :
		      1000;

	return n->cfg.request_timeout_ms ? n->cfg.request_timeout_ms : 5 * et;
}

/* @o, the last queued action, moves to the parked list. */
void node_park(struct imexd_node *n, struct node_out *o, uint64_t index)
{
	struct node_parked *p;

	if (imexd_grow((void **)&n->parked, &n->cap_parked, n->n_parked + 1,
		       sizeof(*n->parked)))
		return;		/* answered at once: nothing is lost */
	p = &n->parked[n->n_parked++];
	p->o = *o;
	memcpy(p->uuid, o->def.uuid, 16);
	p->index = index;
	p->deleted = o->def.flags & IMEXD_DEF_DELETED;
	p->deadline = n->now + node_park_ms(n);
	n->n_out--;		/* @o was the queue's last entry */
}

/*
 * Shown: the kernel holds the domain at the change's index or later (or no
 * longer holds it after a delete), or the kernel matches a table that has
 * applied the change, which a later change may have superseded.
 */
static bool park_done(const struct imexd_node *n, const struct node_parked *p,
		      int *converged)
{
	const struct imexd_def *k = kernel_find(n, p->uuid);
	const struct imexd_fsm *fsm = node_fsm(n);

	if (n->now >= p->deadline)
		return true;
	if (p->deleted ? !k : k && k->generation >= p->index)
		return true;
	if (!fsm || imexd_fsm_last_index(fsm) < p->index)
		return false;
	if (*converged < 0)	/* a plan: once per release */
		*converged = imexd_agree_reconciled(n->agree);
	return *converged;
}

void node_parked_release(struct imexd_node *n)
{
	struct node_out *o;
	int converged = -1;
	size_t i = 0;

	while (i < n->n_parked) {
		struct node_parked *p = &n->parked[i];

		if (!park_done(n, p, &converged)) {
			i++;
			continue;
		}
		if (n->now >= p->deadline)
			node_log(n, IMEXD_LOG_WARN,
				 "request %llu: made, but this node's kernel does not show it yet (see the kernel step messages above)",
				 (unsigned long long)p->o.a.req_id);
		o = node_out_push(n, IMEXD_NODE_REQUEST_DONE);
		if (!o)
			return;		/* next time */
		*o = p->o;
		n->parked[i] = n->parked[--n->n_parked];
	}
}

uint64_t node_parked_deadline(const struct imexd_node *n)
{
	uint64_t t = UINT64_MAX;
	size_t i;

	for (i = 0; i < n->n_parked; i++)
		if (n->parked[i].deadline < t)
			t = n->parked[i].deadline;
	return t;
}
