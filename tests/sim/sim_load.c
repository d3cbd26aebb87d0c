// SPDX-License-Identifier: GPL-2.0
/*
 * What happens to the simulated cluster: administrators' requests (creates
 * by count or by explicit, deliberately overlapping ids; deletes; channel
 * alloc and free; evictions of crashed members; bursts of concurrent
 * requests from different coordinators) and faults (daemon crashes, node
 * reboots, partitions, cut links, connection resets).  A request first
 * passes the checks imex.ko makes before queueing it (kmod/request.c), so
 * the cores only see what a real kernel would hand them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

static int pick_up_node(struct sim *s)
{
	int tries;

	for (tries = 0; tries < 4 * s->n; tries++) {
		int i = (int)rng_below(&s->rng, s->n);

		if (s->nodes[i].up)
			return i;
	}
	return -1;
}

/* A committed domain in @i's kernel, or -1. */
static int pick_domain(struct sim *s, int i)
{
	const struct kmodel *k = &s->nodes[i].kernel;
	int cand[IMEX_DOMAINS_MAX], n = 0;
	size_t d;

	for (d = 0; d < k->ndoms && n < IMEX_DOMAINS_MAX; d++)
		if (k->doms[d].live && k->doms[d].state != IMEX_DOMAIN_PREPARED)
			cand[n++] = (int)d;
	return n ? cand[rng_below(&s->rng, n)] : -1;
}

static void req_init(struct sim *s, struct imexd_request *r, uint32_t cmd,
		     const char *name)
{
	memset(r, 0, sizeof(*r));
	r->req_id = ++s->next_req_id;
	r->cmd = cmd;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->mode = 0600;
}

/* Explicit ids: a short run from a random start, so creates overlap. */
static uint32_t pick_ids(struct sim *s, uint32_t *ids)
{
	uint32_t n = rng_range(&s->rng, 1, 3), base, i;

	base = rng_below(&s->rng, s->prm.max_channels - n + 1);
	for (i = 0; i < n; i++)
		ids[i] = base + i;
	return n;
}

static bool ids_free(const struct kmodel *k, const uint32_t *ids, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (!kmodel_chan_free(k, ids[i]))
			return false;
	return true;
}

static void load_create(struct sim *s, int i, uint32_t count_hint)
{
	struct imexd_member members[SIM_MAX_NODES];
	struct imexd_request r;
	uint32_t ids[4];
	char name[IMEX_NAME_MAX];
	int n = 1, j;
	bool in[SIM_MAX_NODES] = { false };

	/* Sometimes a name that may exist elsewhere: EEXIST paths. */
	if (s->name_counter && rng_chance(&s->rng, 0.1))
		snprintf(name, sizeof(name), "j%llu",
			 (unsigned long long)rng_below(&s->rng,
						      s->name_counter) + 1);
	else
		snprintf(name, sizeof(name), "j%llu",
			 (unsigned long long)++s->name_counter);
	if (kmodel_find(&s->nodes[i].kernel, name) >= 0) {
		s->st.req_local_refused++;
		return;
	}
	req_init(s, &r, IMEX_CMD_DOMAIN_CREATE, name);
	memset(members, 0, sizeof(members));
	snprintf(members[0].name, sizeof(members[0].name), "%s",
		 s->nodes[i].name);
	snprintf(members[0].addr, sizeof(members[0].addr), "%s",
		 s->nodes[i].addr);
	in[i] = true;
	{
		int want = rng_chance(&s->rng, 0.1) ? s->n :
			   1 + (int)rng_below(&s->rng, s->n < 7 ? s->n : 7);

		while (n < want) {
			j = (int)rng_below(&s->rng, s->n);
			if (in[j])
				continue;
			in[j] = true;
			snprintf(members[n].name, sizeof(members[n].name), "%s",
				 s->nodes[j].name);
			/* Half the addresses rely on the default port. */
			snprintf(members[n].addr, sizeof(members[n].addr),
				 rng_chance(&s->rng, 0.5) ? "%s" : "%s:50100",
				 s->nodes[j].addr);
			n++;
		}
	}
	r.members = members;
	r.nmembers = (uint16_t)n;
	if (count_hint || rng_chance(&s->rng, 0.5)) {
		r.count = count_hint ? count_hint : rng_below(&s->rng, 4);
	} else {
		r.nids = pick_ids(s, ids);
		r.ids = ids;
		if (!ids_free(&s->nodes[i].kernel, ids, r.nids)) {
			s->st.req_local_refused++;
			return;
		}
	}
	sim_request(s, i, &r);
}

/* The kernel refuses requests on a domain with a change in progress. */
static bool dom_busy(const struct kdom *d)
{
	return d->change != NULL;
}

static void load_change(struct sim *s, int i, uint32_t cmd)
{
	struct kmodel *k = &s->nodes[i].kernel;
	int di = pick_domain(s, i);
	struct imexd_request r;
	uint32_t ids[8], n = 0, c;
	const struct kdom *d;

	if (di < 0 || dom_busy(&k->doms[di])) {
		s->st.req_local_refused++;
		return;
	}
	d = &k->doms[di];
	req_init(s, &r, cmd, d->name);
	switch (cmd) {
	case IMEX_CMD_CHANNEL_ALLOC:
		if (rng_chance(&s->rng, 0.6)) {
			r.count = rng_range(&s->rng, 1, 2);
		} else {
			r.nids = pick_ids(s, ids);
			r.ids = ids;
			if (!ids_free(k, ids, r.nids)) {
				s->st.req_local_refused++;
				return;
			}
		}
		break;
	case IMEX_CMD_CHANNEL_FREE:
		for (c = 0; c < k->max_channels && n < 8; c++)
			if (k->chans[c].dom == di && !k->chans[c].reserved &&
			    rng_chance(&s->rng, 0.5))
				ids[n++] = c;
		if (!n) {
			s->st.req_local_refused++;
			return;
		}
		r.nids = n;
		r.ids = ids;
		break;
	case IMEX_CMD_MEMBER_EVICT: {
		uint16_t m;

		/* Only members that are down: the administrator's way out. */
		for (m = 0; m < d->nmembers; m++) {
			int j;

			if (sscanf(d->members[m].name, "n%d", &j) != 1 ||
			    j == i || s->nodes[j].up)
				continue;
			snprintf(r.member, sizeof(r.member), "%s",
				 d->members[m].name);
			break;
		}
		if (m == d->nmembers) {
			s->st.req_local_refused++;
			return;
		}
		break;
	}
	default:
		break;
	}
	sim_request(s, i, &r);
}

/* Several coordinators at once on one domain, or creates colliding. */
static void load_burst(struct sim *s)
{
	char name[IMEX_NAME_MAX];
	int i = pick_up_node(s), di, k = 0, j, who[SIM_MAX_NODES], n = 0;
	const struct kdom *d;
	uint16_t m;

	if (i < 0)
		return;
	if (rng_chance(&s->rng, 0.5)) {
		int a = pick_up_node(s), b = pick_up_node(s);

		if (a >= 0)
			load_create(s, a, 2);
		if (b >= 0)
			load_create(s, b, 2);
		return;
	}
	di = pick_domain(s, i);
	if (di < 0)
		return;
	/* Copy first: requests change the kernels' arrays. */
	d = &s->nodes[i].kernel.doms[di];
	snprintf(name, sizeof(name), "%s", d->name);
	for (m = 0; m < d->nmembers; m++)
		if (sscanf(d->members[m].name, "n%d", &j) == 1)
			who[n++] = j;
	for (m = 0; m < n && k < 3; m++) {
		struct imexd_request r;

		j = who[m];
		if (!s->nodes[j].up)
			continue;
		di = kmodel_find(&s->nodes[j].kernel, name);
		if (di < 0 || dom_busy(&s->nodes[j].kernel.doms[di]) ||
		    s->nodes[j].kernel.doms[di].state == IMEX_DOMAIN_PREPARED)
			continue;
		req_init(s, &r, IMEX_CMD_CHANNEL_ALLOC, name);
		r.count = 1;
		sim_request(s, j, &r);
		k++;
	}
}

void load_event(struct sim *s)
{
	uint32_t what;
	int i;

	if (s->quiet)
		return;
	sim_push(s, s->now + rng_range(&s->rng, s->prm.load_gap_ms / 2,
				       s->prm.load_gap_ms * 3 / 2),
		 EV_LOAD, -1, 0, 0, NULL);
	i = pick_up_node(s);
	if (i < 0)
		return;
	what = rng_below(&s->rng, 100);
	if (what < 35)
		load_create(s, i, 0);
	else if (what < 55)
		load_change(s, i, IMEX_CMD_CHANNEL_ALLOC);
	else if (what < 70)
		load_change(s, i, IMEX_CMD_CHANNEL_FREE);
	else if (what < 83)
		load_change(s, i, IMEX_CMD_DOMAIN_DELETE);
	else if (what < 93)
		load_change(s, i, IMEX_CMD_MEMBER_EVICT);
	else
		load_burst(s);
}

void fault_event(struct sim *s)
{
	uint32_t what;
	int i, j;

	if (s->quiet)
		return;
	sim_push(s, s->now + rng_range(&s->rng, s->prm.fault_gap_ms / 2,
				       s->prm.fault_gap_ms * 3 / 2),
		 EV_FAULT, -1, 0, 0, NULL);
	what = rng_below(&s->rng, 100);
	i = (int)rng_below(&s->rng, s->n);
	if (what < 22) {
		if (!s->nodes[i].up)
			return;
		sim_node_crash(s, i, false);
		sim_push(s, s->now + rng_range(&s->rng, 200, 8000), EV_RESTART,
			 i, 0, 0, NULL);
	} else if (what < 32) {
		if (!s->nodes[i].powered)
			return;
		sim_node_crash(s, i, true);
		sim_push(s, s->now + rng_range(&s->rng, 1000, 10000),
			 EV_RESTART, i, 0, 0, NULL);
	} else if (what < 52) {
		/* A group cut off from the rest. */
		bool in[SIM_MAX_NODES] = { false };
		int g = 1 + (int)rng_below(&s->rng, s->n / 2), k;
		uint64_t until = s->now + rng_range(&s->rng, 500, 12000);

		for (k = 0; k < g; k++)
			in[rng_below(&s->rng, s->n)] = true;
		s->st.partitions++;
		for (i = 0; i < s->n; i++)
			for (j = i + 1; j < s->n; j++)
				if (in[i] != in[j]) {
					sim_set_cut(s, i, j, true);
					sim_push(s, until, EV_CUT_END, -1, i, j,
						 NULL);
				}
	} else if (what < 67) {
		j = (int)rng_below(&s->rng, s->n);
		if (i == j)
			return;
		s->st.partitions++;
		sim_set_cut(s, i, j, true);
		sim_push(s, s->now + rng_range(&s->rng, 200, 8000), EV_CUT_END,
			 -1, i, j, NULL);
	} else if (what < 95) {
		size_t c, live = 0;

		for (c = 0; c < s->nconns; c++)
			live += !s->conns[c].dead;
		if (!live)
			return;
		live = rng_below(&s->rng, (uint32_t)live);
		for (c = 0; c < s->nconns; c++) {
			if (s->conns[c].dead)
				continue;
			if (!live--) {
				sim_conn_reset(s, c);
				break;
			}
		}
	}
}

/* End of chaos: no more faults or requests; heal and restart everything. */
void load_heal_all(struct sim *s)
{
	int i, j;

	s->quiet = true;
	s->chaos = false;
	for (i = 0; i < s->n; i++)
		for (j = i + 1; j < s->n; j++)
			if (!sim_link_ok(s, i, j))
				sim_set_cut(s, i, j, false);
	for (i = 0; i < s->n; i++)
		if (!s->nodes[i].up)
			sim_node_start(s, i);
}
