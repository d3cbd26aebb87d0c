// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated world: convergence and the history check (see
 * sim_world.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_world_internal.h"

/* Up, caught up, kernel reconciled, and at raft index @last (the fsm's own
 * last index differs: a restored table counts the snapshot's index). */
static uint64_t applied_of(const struct sw *w, unsigned i)
{
	const struct imexd_cons *c = w->nodes[i].up ?
		imexd_agree_cons(w->nodes[i].ag) : NULL;

	return c ? imexd_cons_applied(c) : 0;
}

static bool node_done(struct sw *w, unsigned i, uint64_t last)
{
	const struct imexd_agree *ag = w->nodes[i].ag;

	return w->nodes[i].up && imexd_agree_cons(ag) &&
	       imexd_agree_synced(ag) && imexd_agree_reconciled(ag) &&
	       applied_of(w, i) == last;
}

bool sw_converged(struct sw *w)
{
	uint64_t last = applied_of(w, 0);
	unsigned i;

	if (!last)
		return false;
	for (i = 0; i < w->cfg.n; i++)
		if (!node_done(w, i, last))
			return false;
	return true;
}

/* Every member's kernel holds exactly the committed domains naming it. */
static void check_kernels(struct sw *w)
{
	unsigned i;

	for (i = 0; i < w->cfg.n; i++) {
		const struct imexd_fsm *f = imexd_agree_fsm(w->nodes[i].ag);
		const struct sw_node *nd = &w->nodes[i];
		const struct imexd_def *d;
		size_t pos = 0, n = 0, j;

		while ((d = imexd_fsm_domain_of(f, nd->name, &pos))) {
			n++;
			for (j = 0; j < nd->nk; j++)
				if (!strcmp(nd->k[j].name, d->name))
					break;
			if (j == nd->nk || !imexd_def_equal(&nd->k[j], d))
				sw_violation(w, "%s: kernel does not hold the committed %s",
					     nd->name, d->name);
		}
		if (n != nd->nk)
			sw_violation(w, "%s: kernel holds %zu domains, %zu committed name it",
				     nd->name, nd->nk, n);
	}
}

/* Replay the committed entries; acknowledged outcomes must match. */
static void check_history(struct sw *w)
{
	struct sw_req **by = calloc(w->n_chosen + 1, sizeof(struct sw_req *));
	struct imexd_fsm *f = imexd_fsm_new();
	uint8_t *snap, *other;
	size_t j, len, olen;
	unsigned i;

	CHECK(by && f);
	for (j = 0; j < w->n_reqs; j++) {
		struct sw_req *r = w->reqs[j];

		if (!r->done) {
			sw_violation(w, "request %llu at %s never answered",
				     (unsigned long long)r->tag, w->names[r->node]);
			continue;
		}
		if (r->error)
			continue;
		if (r->index >= w->n_chosen || !w->chosen[r->index].data) {
			sw_violation(w, "acknowledged %s (index %llu) was never committed",
				     imexd_cmd_type_name(r->type),
				     (unsigned long long)r->index);
			continue;
		}
		if (by[r->index])
			sw_violation(w, "two requests acknowledged at index %llu",
				     (unsigned long long)r->index);
		by[r->index] = r;
	}
	for (j = 1; j < w->n_chosen; j++) {
		struct imexd_fsm_result res;
		struct imexd_cmd cmd;

		if (!w->chosen[j].data)
			continue;
		if (imexd_cmd_decode(w->chosen[j].data, w->chosen[j].len, &cmd,
				     NULL))
			continue;
		CHECK(imexd_fsm_apply(f, j, &cmd, &res) == 0);
		imexd_cmd_free(&cmd);
		if (by[j] && (res.error || by[j]->type != cmd.type ||
			      (by[j]->def.name[0] &&
			       !imexd_def_equal(&by[j]->def, &res.def))))
			sw_violation(w, "acknowledged %s at index %zu is not what the log holds (%s)",
				     imexd_cmd_type_name(by[j]->type), j,
				     res.error ? res.message : "other outcome");
		imexd_fsm_result_free(&res);
	}
	CHECK(imexd_fsm_snapshot(f, &snap, &len) == 0);
	for (i = 0; i < w->cfg.n; i++) {
		CHECK(imexd_fsm_snapshot(imexd_agree_fsm(w->nodes[i].ag), &other,
					 &olen) == 0);
		if (olen != len || memcmp(snap, other, len))
			sw_violation(w, "%s: table differs from the committed history",
				     w->names[i]);
		free(other);
	}
	free(snap);
	imexd_fsm_free(f);
	free(by);
}

unsigned sw_check_final(struct sw *w)
{
	unsigned i;

	sw_heal(w);
	for (i = 0; i < w->cfg.n; i++) {
		w->nodes[i].arm = SW_CRASH_NONE;
		if (w->nodes[i].full)
			sw_disk_full(w, i, false);
		if (!w->nodes[i].up)
			sw_restart(w, i);
	}
	/* Past every request's deadline, and to convergence. */
	sw_run_for(w, 6ull * w->cfg.et_ms);
	if (!sw_run_pred(w, 400ull * w->cfg.et_ms, sw_converged)) {
		uint64_t last = applied_of(w, 0);

		for (i = 0; i < w->cfg.n; i++)
			if (!node_done(w, i, last))
				sw_violation(w, "%s did not converge (up %d, synced %d, reconciled %d, index %llu of %llu)",
					     w->names[i], w->nodes[i].up,
					     w->nodes[i].up && imexd_agree_synced(w->nodes[i].ag),
					     w->nodes[i].up && imexd_agree_reconciled(w->nodes[i].ag),
					     (unsigned long long)applied_of(w, i),
					     (unsigned long long)last);
		return w->violations;
	}
	check_history(w);
	check_kernels(w);
	return w->violations;
}
