// SPDX-License-Identifier: GPL-2.0
/*
 * Invariants.
 *
 * Always (after every event of a node):
 *  - its kernel model is consistent and holds no prepared change past its
 *    lease;
 *  - no channel belongs to two of the domains its core holds.
 * Every 250 ms of virtual time:
 *  - a domain a core calls READY has every pair of members able to talk
 *    (both daemons up, link not cut), or the pair broke too recently for
 *    heartbeats to have told (twice miss_count x heartbeat, since the news
 *    may have to outlive a second broken link, + a period + delays).
 * At the quiescent point (faults healed, everything restarted, and long
 * enough with nothing happening):
 *  - no prepared change in any kernel, every request answered;
 *  - every definition a node holds is held identically by all its members,
 *    in their cores and their kernels;
 *  - every domain is READY on every member.
 */
#include <stdlib.h>
#include <string.h>
#include "sim.h"

static int node_index(const struct sim *s, const char *name)
{
	int i;

	if (sscanf(name, "n%d", &i) != 1 || i < 0 || i >= s->n)
		return -1;
	return i;
}

void check_node(struct sim *s, int i, bool full)
{
	struct sim_node *nd = &s->nodes[i];
	const struct imexd_def *defs[IMEX_DOMAINS_MAX * 2];
	const char *why = kmodel_check(&nd->kernel, s->now, full);
	uint16_t *owner = s->owner;
	size_t n, d;
	uint32_t c;

	if (why) {
		sim_fail(s, "node %s: kernel: %s", nd->name, why);
		return;
	}
	if (!nd->up)
		return;
	n = imexd_core_domains(nd->core, NULL);
	if (n > IMEX_DOMAINS_MAX * 2UL) {
		sim_fail(s, "node %s: the core holds %zu domains", nd->name, n);
		return;
	}
	imexd_core_domains(nd->core, defs);
	for (d = 0; d < n; d++)
		for (c = 0; c < defs[d]->nchannels; c++)
			if (defs[d]->channels[c].id < s->prm.max_channels)
				owner[defs[d]->channels[c].id] = 0;
	for (d = 0; d < n; d++) {
		for (c = 0; c < defs[d]->nchannels; c++) {
			uint32_t id = defs[d]->channels[c].id;

			if (id >= s->prm.max_channels) {
				sim_fail(s, "node %s: domain '%s' holds channel %u >= max_channels",
					 nd->name, defs[d]->name, id);
				return;
			}
			if (owner[id]) {
				sim_fail(s, "node %s: channel %u in domains '%s' and '%s'",
					 nd->name, id, defs[owner[id] - 1]->name,
					 defs[d]->name);
				return;
			}
			owner[id] = (uint16_t)(d + 1);
		}
	}
}

void check_ready(struct sim *s)
{
	/*
	 * How stale READY may be: the pair's own detection (miss x period),
	 * and a third member may learn of it only through a link that breaks
	 * meanwhile (another miss x period), plus a period and delays.
	 */
	uint64_t tol = 2 * 3 * 1000 + 1000 + 2ull * s->prm.delay_max + 300;
	const struct imexd_def *defs[IMEX_DOMAINS_MAX * 2];
	int i;

	for (i = 0; i < s->n; i++) {
		struct sim_node *nd = &s->nodes[i];
		size_t n, d;

		check_node(s, i, true);
		if (!nd->up)
			continue;
		n = imexd_core_domains(nd->core, defs);
		for (d = 0; d < n; d++) {
			const struct imexd_def *def = defs[d];
			uint16_t a, b;

			if (!imexd_core_domain_ready(nd->core, def->uuid))
				continue;
			for (a = 0; a < def->nmembers; a++) {
				int x = node_index(s, def->members[a].name);

				for (b = a + 1; b < def->nmembers; b++) {
					int y = node_index(s,
							   def->members[b].name);
					size_t k = (size_t)x * s->n + y;

					if (x < 0 || y < 0) {
						sim_fail(s, "domain '%s' names an unknown node",
							 def->name);
						return;
					}
					if (s->good_since[k] != SIM_NO_TIME ||
					    s->now - s->bad_since[k] <= tol)
						continue;
					sim_fail(s, "node %s: domain '%s' is READY, but %s and %s cannot reach each other since %llu ms",
						 nd->name, def->name,
						 s->nodes[x].name, s->nodes[y].name,
						 (unsigned long long)s->bad_since[k]);
					return;
				}
			}
		}
	}
}

static bool def_equal(const struct imexd_def *a, const struct imexd_def *b)
{
	uint32_t i;

	if (a->generation != b->generation || strcmp(a->name, b->name) ||
	    a->nmembers != b->nmembers || a->nchannels != b->nchannels)
		return false;
	for (i = 0; i < a->nmembers; i++)
		if (strcmp(a->members[i].name, b->members[i].name))
			return false;
	for (i = 0; i < a->nchannels; i++)
		if (a->channels[i].id != b->channels[i].id)
			return false;
	return true;
}

/* Does @i's kernel hold exactly @def (names, members, channels)? */
static const char *kernel_matches(const struct sim *s, int i,
				  const struct imexd_def *def)
{
	const struct kmodel *k = &s->nodes[i].kernel;
	int di = kmodel_find(k, def->name);
	uint32_t c, n = 0;
	uint16_t m;

	if (di < 0)
		return "the kernel lacks it";
	if (memcmp(k->doms[di].uuid, def->uuid, 16))
		return "the kernel has another domain of that name";
	if (k->doms[di].state == IMEX_DOMAIN_PREPARED)
		return "the kernel holds it only prepared";
	if (k->doms[di].nmembers != def->nmembers)
		return "the kernel's member list differs";
	for (m = 0; m < def->nmembers; m++)
		if (strcmp(k->doms[di].members[m].name, def->members[m].name))
			return "the kernel's member list differs";
	for (c = 0; c < k->max_channels; c++) {
		if (k->chans[c].dom != di)
			continue;
		if (n >= def->nchannels || def->channels[n].id != c)
			return "the kernel's channels differ";
		n++;
	}
	if (n != def->nchannels)
		return "the kernel's channels differ";
	if (k->doms[di].state != IMEX_DOMAIN_READY)
		return "the kernel does not have it READY";
	return NULL;
}

/*
 * Every definition a node holds must be held, identically, by each of its
 * members.  (Two nodes that evicted each other while each was down hold
 * two definitions with disjoint members: each is consistent on its own.)
 */
static void check_domain(struct sim *s, const uint8_t uuid[16])
{
	const struct imexd_def *defs[IMEX_DOMAINS_MAX * 2];
	const struct imexd_def *held[SIM_MAX_NODES];
	int i;

	for (i = 0; i < s->n; i++) {
		size_t n = imexd_core_domains(s->nodes[i].core, defs), d;

		held[i] = NULL;
		for (d = 0; d < n; d++)
			if (!memcmp(defs[d]->uuid, uuid, 16))
				held[i] = defs[d];
	}
	for (i = 0; i < s->n; i++) {
		const struct imexd_def *def = held[i];
		const char *why;
		uint16_t m;

		if (!def)
			continue;
		why = kernel_matches(s, i, def);
		if (why) {
			sim_fail(s, "domain '%s' on %s: %s", def->name,
				 s->nodes[i].name, why);
			return;
		}
		if (!imexd_core_domain_ready(s->nodes[i].core, uuid)) {
			sim_fail(s, "domain '%s' is not READY on %s after quiescence",
				 def->name, s->nodes[i].name);
			return;
		}
		for (m = 0; m < def->nmembers; m++) {
			int j = node_index(s, def->members[m].name);

			if (j < 0) {
				sim_fail(s, "domain '%s' names an unknown node",
					 def->name);
				return;
			}
			if (!held[j]) {
				sim_fail(s, "domain '%s' gen %llu on %s: member %s does not hold it",
					 def->name,
					 (unsigned long long)def->generation,
					 s->nodes[i].name, s->nodes[j].name);
				return;
			}
			if (!def_equal(held[j], def)) {
				sim_fail(s, "domain '%s': %s holds gen %llu (%u members, %u channels), member %s gen %llu (%u members, %u channels)",
					 def->name, s->nodes[i].name,
					 (unsigned long long)def->generation,
					 def->nmembers, def->nchannels,
					 s->nodes[j].name,
					 (unsigned long long)held[j]->generation,
					 held[j]->nmembers, held[j]->nchannels);
				return;
			}
		}
	}
}

void check_quiescent(struct sim *s)
{
	const struct imexd_def *defs[IMEX_DOMAINS_MAX * 2];
	size_t r, d;
	int i;

	for (i = 0; i < s->n && !s->failure[0]; i++) {
		const struct kmodel *k = &s->nodes[i].kernel;

		if (!s->nodes[i].up) {
			sim_fail(s, "node %s is not up at the end", s->nodes[i].name);
			return;
		}
		if (k->changes) {
			sim_fail(s, "node %s: the kernel still holds prepared change %016llx",
				 s->nodes[i].name,
				 (unsigned long long)k->changes->id);
			return;
		}
		/* Every kernel domain is one the core knows. */
		for (d = 0; d < k->ndoms; d++) {
			size_t n, e;
			bool known = false;

			if (!k->doms[d].live)
				continue;
			n = imexd_core_domains(s->nodes[i].core, defs);
			for (e = 0; e < n; e++)
				known |= !memcmp(defs[e]->uuid, k->doms[d].uuid, 16);
			if (!known) {
				sim_fail(s, "node %s: kernel domain '%s' unknown to the core",
					 s->nodes[i].name, k->doms[d].name);
				return;
			}
		}
	}
	for (r = 0; r < s->nreqs && !s->failure[0]; r++) {
		const struct sim_req *q = &s->reqs[r];

		if (!q->done && q->inc == s->nodes[q->node].inc)
			sim_fail(s, "request %llu (cmd %u, '%s') from %s, issued at %llu ms, never completed",
				 (unsigned long long)q->id, q->cmd, q->name,
				 s->nodes[q->node].name,
				 (unsigned long long)q->issued);
	}
	for (i = 0; i < s->n && !s->failure[0]; i++) {
		size_t n = imexd_core_domains(s->nodes[i].core, defs);
		uint8_t uuids[IMEX_DOMAINS_MAX * 2][16];

		for (d = 0; d < n; d++)
			memcpy(uuids[d], defs[d]->uuid, 16);
		for (d = 0; d < n && !s->failure[0]; d++)
			check_domain(s, uuids[d]);
	}
}
