// SPDX-License-Identifier: GPL-2.0
/*
 * The reconciler's planner (reconcile.h): wanted domains vs the kernel's,
 * to an ordered list of REMOVE and SET steps.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reconcile.h"

/* qsort_r order of indexes into the array @defs, by domain name. */
static int by_name(const void *a, const void *b, void *defs)
{
	const struct imexd_def *d = defs;
	const size_t *x = a, *y = b;

	return strncmp(d[*x].name, d[*y].name, IMEX_NAME_MAX);
}

/* The kernel domain with @w's UUID and name, or NULL. */
static const struct imexd_def *same_domain(const struct imexd_def *w,
					   const struct imexd_def *have,
					   size_t nhave)
{
	size_t i;

	for (i = 0; i < nhave; i++)
		if (!memcmp(have[i].uuid, w->uuid, sizeof(w->uuid)) &&
		    !strncmp(have[i].name, w->name, IMEX_NAME_MAX))
			return &have[i];
	return NULL;
}

/* Does @h hold a channel that @w does not? */
static bool shrinks(const struct imexd_def *h, const struct imexd_def *w)
{
	uint32_t i;

	for (i = 0; i < h->nchannels; i++)
		if (!imexd_def_has_channel(w, h->channels[i].id))
			return true;
	return false;
}

/* @w with only the channels @h already holds (their owners as in @w). */
static int kept_part(struct imexd_def *mid, const struct imexd_def *w,
		     const struct imexd_def *h)
{
	uint32_t i, n = 0;
	int err;

	err = imexd_def_copy(mid, w);
	if (err)
		return err;
	for (i = 0; i < mid->nchannels; i++)
		if (imexd_def_has_channel(h, mid->channels[i].id))
			mid->channels[n++] = mid->channels[i];
	mid->nchannels = n;
	return 0;
}

static int add_step(struct imexd_rec_plan *plan, enum imexd_rec_type type,
		    const struct imexd_def *def)
{
	struct imexd_rec_step *s = &plan->steps[plan->n];
	int err;

	s->type = type;
	if (type == IMEXD_REC_REMOVE) {
		memset(&s->def, 0, sizeof(s->def));
		memcpy(s->def.name, def->name, sizeof(s->def.name));
		memcpy(s->def.uuid, def->uuid, sizeof(s->def.uuid));
	} else {
		err = imexd_def_copy(&s->def, def);
		if (err)
			return err;
	}
	plan->n++;
	return 0;
}

int imexd_rec_plan(const char *node, const struct imexd_def *want,
		   size_t nwant, const struct imexd_def *have, size_t nhave,
		   struct imexd_rec_plan *plan)
{
	size_t *w = NULL, *h = NULL;	/* indexes, in name order */
	struct imexd_def mid = { 0 };
	bool *done = NULL;
	size_t i, nw = 0;
	int err = -ENOMEM;

	memset(plan, 0, sizeof(*plan));
	if (!node || (nwant && !want) || (nhave && !have))
		return -EINVAL;
	w = calloc(nwant + 1, sizeof(*w));
	h = calloc(nhave + 1, sizeof(*h));
	done = calloc(nwant + 1, sizeof(*done));
	/* At most one REMOVE per kernel domain and two SETs per wanted one. */
	plan->steps = calloc(nhave + 2 * nwant + 1, sizeof(*plan->steps));
	if (!w || !h || !done || !plan->steps)
		goto out;

	for (i = 0; i < nwant; i++)
		if (imexd_def_has_member(&want[i], node))
			w[nw++] = i;
	for (i = 0; i < nhave; i++)
		h[i] = i;
	qsort_r(w, nw, sizeof(*w), by_name, (void *)want);
	qsort_r(h, nhave, sizeof(*h), by_name, (void *)have);

	/* 1. Kernel domains no wanted domain (same UUID and name) explains. */
	for (i = 0; i < nhave; i++) {
		size_t j;
		bool wanted = false;

		for (j = 0; j < nw && !wanted; j++)
			wanted = same_domain(&want[w[j]], &have[h[i]], 1);
		if (!wanted) {
			err = add_step(plan, IMEXD_REC_REMOVE, &have[h[i]]);
			if (err)
				goto out;
		}
	}

	/* 2. Wanted domains that give channels back, before anyone takes them. */
	for (i = 0; i < nw; i++) {
		const struct imexd_def *d = &want[w[i]];
		const struct imexd_def *k = same_domain(d, have, nhave);

		if (!k || imexd_def_equal(k, d) || !shrinks(k, d))
			continue;
		err = kept_part(&mid, d, k);
		if (err)
			goto out;
		done[i] = imexd_def_equal(&mid, d);
		err = add_step(plan, IMEXD_REC_SET, &mid);
		imexd_def_free(&mid);
		if (err)
			goto out;
	}

	/* 3. The rest: new domains, and the ones that gain channels. */
	for (i = 0; i < nw; i++) {
		const struct imexd_def *d = &want[w[i]];
		const struct imexd_def *k = same_domain(d, have, nhave);

		if (done[i] || (k && imexd_def_equal(k, d)))
			continue;
		err = add_step(plan, IMEXD_REC_SET, d);
		if (err)
			goto out;
	}
	err = 0;
out:
	if (err)
		imexd_rec_plan_free(plan);
	free(w);
	free(h);
	free(done);
	return err;
}

void imexd_rec_plan_free(struct imexd_rec_plan *plan)
{
	size_t i;

	if (!plan)
		return;
	for (i = 0; i < plan->n; i++)
		imexd_def_free(&plan->steps[i].def);
	free(plan->steps);
	plan->steps = NULL;
	plan->n = 0;
}
