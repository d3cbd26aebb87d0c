// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated world's kernel (see sim_world.h): it refuses what
 * imex.ko refuses, checks that no channel is in two domains, answers
 * every step and keeps the last status pushed for each domain.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/imex.h>

#include "sim_world_internal.h"

/* ---- the simulated kernel ------------------------------------------------ */

bool sw_has_channel(const struct imexd_def *d, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < d->nchannels; i++)
		if (d->channels[i].id == id)
			return true;
	return false;
}

static void kernel_check(struct sw *w, unsigned i)
{
	const struct sw_node *nd = &w->nodes[i];
	size_t a, b;
	uint32_t c;

	for (a = 0; a < nd->nk; a++)
		for (b = a + 1; b < nd->nk; b++)
			for (c = 0; c < nd->k[a].nchannels; c++)
				if (sw_has_channel(&nd->k[b], nd->k[a].channels[c].id))
					sw_violation(w, "%s: channel %u in domains %s and %s",
						     nd->name, nd->k[a].channels[c].id,
						     nd->k[a].name, nd->k[b].name);
}

static void status_drop(struct sw_node *nd, const uint8_t uuid[16])
{
	size_t j;

	for (j = 0; j < nd->nst; j++)
		if (!memcmp(nd->st[j].uuid, uuid, 16)) {
			nd->st[j] = nd->st[--nd->nst];
			return;
		}
}

/* What imex.ko refuses, it refuses here. */
static int kernel_step(struct sw *w, unsigned i, bool remove,
		       const struct imexd_def *d)
{
	struct sw_node *nd = &w->nodes[i];
	size_t j, at = nd->nk;
	uint32_t c;

	w->st.kernel_steps++;
	for (j = 0; j < nd->nk; j++)
		if (!memcmp(nd->k[j].uuid, d->uuid, 16))
			at = j;
	if (remove) {
		if (at == nd->nk || strcmp(nd->k[at].name, d->name))
			return ENOENT;
		imexd_def_free(&nd->k[at]);
		nd->k[at] = nd->k[--nd->nk];
		status_drop(nd, d->uuid);
		return 0;
	}
	if (!imexd_def_has_member(d, nd->name))
		return EINVAL;
	for (j = 0; j < nd->nk; j++) {
		if (j == at)
			continue;
		if (!strcmp(nd->k[j].name, d->name))
			return EEXIST;
		for (c = 0; c < d->nchannels; c++)
			if (sw_has_channel(&nd->k[j], d->channels[c].id))
				return EADDRINUSE;
	}
	if (at == nd->nk) {
		nd->k = realloc(nd->k, (nd->nk + 1) * sizeof(*nd->k));
		CHECK(nd->k);
		memset(&nd->k[nd->nk++], 0, sizeof(*nd->k));
	} else {
		imexd_def_free(&nd->k[at]);
	}
	CHECK(!imexd_def_copy(&nd->k[at], d));
	return 0;
}

void kernel_status(struct sw *w, unsigned i,
		   const struct imexd_domain_status *st)
{
	struct sw_node *nd = &w->nodes[i];
	size_t j;

	for (j = 0; j < nd->nst; j++)
		if (!memcmp(nd->st[j].uuid, st->uuid, 16))
			break;
	if (j == nd->nst) {
		nd->st = realloc(nd->st, (nd->nst + 1) * sizeof(*nd->st));
		CHECK(nd->st);
		nd->nst++;
		memcpy(nd->st[j].uuid, st->uuid, 16);
	}
	nd->st[j].state = st->state;
	nd->st[j].generation = st->generation;
	if (getenv("SIM_VERBOSE"))
		fprintf(stderr, "%llu %s: status %s generation %llu: %s\n",
			(unsigned long long)w->now, nd->name, st->name,
			(unsigned long long)st->generation,
			st->state == IMEX_DOMAIN_READY ? "READY" : "DEGRADED");
}

const struct sw_status *sw_status_of(const struct sw *w, unsigned i,
				     const uint8_t uuid[16])
{
	const struct sw_node *nd = &w->nodes[i];
	size_t j;

	for (j = 0; j < nd->nst; j++)
		if (!memcmp(nd->st[j].uuid, uuid, 16))
			return &nd->st[j];
	return NULL;
}

/* "applied entry N: ..." (node_pump.c's debug line for agree's APPLIED): the
 * point to crash after an apply. */
bool applied_line(const char *text)
{
	return !strncmp(text, "applied entry ", 14);
}

void kernel_action(struct sw *w, unsigned i,
		   const struct imexd_node_action *a)
{
	struct sw_node *nd = &w->nodes[i];
	int err;

	if (nd->arm == SW_CRASH_BEFORE_KERNEL) {
		sw_crash(w, i);
		return;
	}
	err = kernel_step(w, i, a->type == IMEXD_NODE_KERNEL_REMOVE, a->def);
	if (getenv("SIM_VERBOSE"))
		fprintf(stderr, "%llu %s: kernel %s %s generation %llu: %d\n",
			(unsigned long long)w->now, nd->name,
			a->type == IMEXD_NODE_KERNEL_REMOVE ? "remove" : "set",
			a->def->name, (unsigned long long)a->def->generation,
			err);
	if (err)
		w->st.kernel_refused++;
	kernel_check(w, i);
	if (nd->arm == SW_CRASH_MID_RECONCILE) {
		sw_crash(w, i);
		return;
	}
	imexd_node_kernel_done(nd->node, w->now, err,
			       err ? "refused by the simulated kernel" : NULL,
			       nd->k, nd->nk);
}

