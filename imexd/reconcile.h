/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reconciler: what this node's kernel must be told so that it holds
 * exactly the committed definition of every domain naming this node, and
 * nothing else.  Pure and level-triggered: given what is wanted (the
 * replicated domain table) and what the kernel holds now, it returns an
 * ordered list of kernel steps; running the same plan twice, or planning
 * again after a crash halfway, converges to the same kernel state.
 *
 * Order, so that every step is valid on its own for a kernel that keeps a
 * channel in at most one domain and a name on at most one domain:
 *   1. REMOVE every kernel domain that is not wanted here (deleted, this
 *      node evicted, or a name now carried by another UUID);
 *   2. SET every wanted domain whose channels shrink, to the channels it
 *      keeps (a domain that also gains channels gets an intermediate state:
 *      its wanted definition with only the channels it already holds);
 *   3. SET every wanted domain not yet equal to what is wanted (new ones,
 *      and the ones that gain channels, now free).
 * Within each phase, by domain name.  A step the kernel refuses does not
 * stop the others: the next plan tries again.
 *
 * Out of memory: imexd_rec_plan() returns -ENOMEM with @plan empty.
 */
#ifndef IMEXD_RECONCILE_H
#define IMEXD_RECONCILE_H

#include <stdbool.h>
#include <stddef.h>
#include "wire.h"

enum imexd_rec_type {
	IMEXD_REC_REMOVE = 1,	/* def.name and def.uuid: remove it */
	IMEXD_REC_SET,		/* def: the domain's whole state from now */
};

struct imexd_rec_step {
	enum imexd_rec_type type;
	struct imexd_def def;	/* owned by the plan */
};

struct imexd_rec_plan {
	size_t n;
	struct imexd_rec_step *steps;
};

/*
 * Plan the steps that take the kernel from @have (its domains now) to the
 * domains of @want that name @node.  Entries of @want not naming @node are
 * ignored; both arrays stay the caller's and must each hold unique UUIDs
 * and names.  Returns 0 with @plan filled (n == 0: nothing to do), or
 * -EINVAL (a NULL array with a non-zero count) / -ENOMEM with @plan empty.
 * Free with imexd_rec_plan_free().
 */
int imexd_rec_plan(const char *node, const struct imexd_def *want,
		   size_t nwant, const struct imexd_def *have, size_t nhave,
		   struct imexd_rec_plan *plan);

void imexd_rec_plan_free(struct imexd_rec_plan *plan);

#endif /* IMEXD_RECONCILE_H */
