// SPDX-License-Identifier: GPL-2.0
/*
 * peers: the group id and membership (peers.h): which nodes are peers as
 * the raft configuration adds and removes them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "grow.h"
#include "peers_internal.h"

/* ---- group ------------------------------------------------------------------ */

void imexd_peers_set_group(struct imexd_peers *p, uint64_t now, uint64_t group)
{
	size_t i = 0;

	/* No peers_acts_gc(): the caller may be handling one of our actions. */
	if (group == p->group)
		return;
	p->group = group;
	while (group && i < p->nconns) {
		struct conn *c = &p->conns[i];
		const struct peer *pe = c->peer >= 0 ? &p->peers[c->peer] : NULL;

		if (pe && pe->group && pe->group != group) {
			peers_group_refused(p, now, c, pe->name, pe->group);
			peers_conn_end(p, c, now, true);
			continue;
		}
		i++;
	}
}

uint64_t imexd_peers_group(const struct imexd_peers *p, const char *name)
{
	int q = name ? peers_find(p, name) : -1;

	return q < 0 || !p->peers[q].conn ? 0 : p->peers[q].group;
}

/* ---- membership ------------------------------------------------------------- */

/* A removed peer's place no connection refers to any more, or -1. */
static int reusable_slot(const struct imexd_peers *p)
{
	size_t i, k;

	for (i = 0; i < p->npeers; i++) {
		const struct peer *pe = &p->peers[i];

		if (!pe->gone || pe->conn || pe->connecting)
			continue;
		for (k = 0; k < p->nconns; k++)
			if (p->conns[k].peer == (int)i ||
			    p->conns[k].dialled == (int)i)
				break;
		if (k == p->nconns)
			return (int)i;
	}
	return -1;
}

int imexd_peers_add(struct imexd_peers *p, uint64_t now, const char *name,
		    const char *addr)
{
	char norm[IMEXD_ADDR_MAX + 1];
	struct peer *pe;
	int i;

	/* No peers_acts_gc(): the caller may be handling one of our actions. */
	if (!imexd_name_valid(name) || !strcmp(name, p->self) ||
	    !peers_addr_normalize(addr ? addr : "", name, p->default_port, norm,
				  sizeof(norm)))
		return -EINVAL;
	i = peers_slot(p, name);
	if (i < 0 && (i = reusable_slot(p)) >= 0) {
		pe = &p->peers[i];
		memset(pe, 0, sizeof(*pe));
		snprintf(pe->name, sizeof(pe->name), "%s", name);
		pe->backoff = p->backoff_min;
		pe->gone = true;
	}
	if (i < 0) {
		if (p->npeers >= IMEXD_PEERS_MAX)
			return -ENOSPC;
		if (imexd_grow((void **)&p->peers, &p->cap_peers,
			       p->npeers + 1, sizeof(*p->peers)))
			return -ENOMEM;
		pe = &p->peers[p->npeers++];
		memset(pe, 0, sizeof(*pe));
		snprintf(pe->name, sizeof(pe->name), "%s", name);
		pe->backoff = p->backoff_min;
		pe->gone = true;
	}
	pe = &p->peers[i < 0 ? (int)p->npeers - 1 : i];
	/* A joined node's address: the join's, else the one known. */
	if ((addr && addr[0]) || !pe->addr[0])
		snprintf(pe->addr, sizeof(pe->addr), "%s", norm);
	if (pe->gone || pe->learnt) {
		pe->gone = false;
		pe->learnt = false;
		pe->backoff = p->backoff_min;
		pe->connect_at = p->started ? now : NO_TIME;
		peers_dial_due(p, now);
	}
	return 0;
}

void imexd_peers_remove(struct imexd_peers *p, uint64_t now, const char *name)
{
	int i = peers_find(p, name);
	size_t k;

	if (i < 0)
		return;
	p->peers[i].gone = true;
	p->peers[i].connect_at = NO_TIME;
	for (k = 0; k < p->nconns; k++)
		if (p->conns[k].peer == i) {
			peers_conn_end(p, &p->conns[k], now, true);
			break;
		}
}

size_t imexd_peers_count(const struct imexd_peers *p)
{
	return p->npeers;
}

const char *imexd_peers_name(const struct imexd_peers *p, size_t i)
{
	return i < p->npeers && !p->peers[i].gone ? p->peers[i].name : NULL;
}

uint64_t imexd_peers_claims_refused(const struct imexd_peers *p)
{
	return p->claims_refused;
}
