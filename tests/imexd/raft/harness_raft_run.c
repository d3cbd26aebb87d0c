// SPDX-License-Identifier: GPL-2.0
/*
 * In-memory consensus cluster (see harness_raft.h): the event loop, which
 * delivers messages, completes disk writes and fires timers in time order,
 * and the calls tests make on a running cluster (leader, membership
 * changes, submissions, what was applied and acknowledged).
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_raft_internal.h"

/* ---- the event loop ---- */

enum { EV_NONE, EV_MSG, EV_WRITE, EV_TIMER };

static void deliver(struct hr *h, size_t i)
{
	struct hr_msg q = h->msgs[i];
	struct hr_node *nd;

	h->msgs[i] = h->msgs[--h->n_msgs];
	nd = node(h, q.to);
	if (!nd->up || h->cut[q.from - 1][q.to - 1]) {
		msg_free(&q.m);
		return;
	}
	/* The sender is authenticated: the receiver learns its name, as
	 * agree does. */
	CHECK(imexd_cons_learn(nd->cons, h->names[q.from - 1]) ==
	      hr_id(h, q.from));
	input_done(h, q.to, imexd_cons_receive(nd->cons, h->now,
					       hr_id(h, q.from), &q.m));
	/* The entries array stays ours; the batch went to raft. */
	if (q.m.type == RAFT_APPEND_ENTRIES)
		raft_free(q.m.append_entries.entries);
}

/* Run the earliest event due at or before t; false if none. */
static bool step_once(struct hr *h, uint64_t t)
{
	uint64_t best = UINT64_MAX, best_seq = UINT64_MAX;
	int kind = EV_NONE;
	size_t which = 0;
	unsigned i;
	size_t j;

	for (j = 0; j < h->n_msgs; j++) {
		const struct hr_msg *q = &h->msgs[j];

		if (q->due < best || (q->due == best && q->seq < best_seq)) {
			best = q->due;
			best_seq = q->seq;
			kind = EV_MSG;
			which = j;
		}
	}
	for (i = 1; i <= h->cfg.n; i++) {
		struct hr_node *nd = node(h, i);
		uint64_t to;

		if (!nd->up)
			continue;
		if (nd->n_w && nd->w[0].due < best) {
			best = nd->w[0].due;
			kind = EV_WRITE;
			which = i;
		}
		to = imexd_cons_timeout(nd->cons);
		if (to < h->now)
			to = h->now;
		if (to < best) {
			best = to;
			kind = EV_TIMER;
			which = i;
		}
	}
	if (kind == EV_NONE || best > t)
		return false;
	if (best > h->now)
		h->now = best;
	switch (kind) {
	case EV_MSG:
		deliver(h, which);
		break;
	case EV_WRITE:
		write_complete(h, (raft_id)which);
		break;
	default:
		input_done(h, (raft_id)which,
			   imexd_cons_tick(node(h, (raft_id)which)->cons, h->now));
		break;
	}
	return true;
}

void hr_run_until(struct hr *h, uint64_t t)
{
	while (step_once(h, t))
		;
	if (h->now < t)
		h->now = t;
}

void hr_run_for(struct hr *h, uint64_t ms)
{
	hr_run_until(h, h->now + ms);
}

bool hr_run_until_pred(struct hr *h, uint64_t limit,
		       bool (*pred)(struct hr *h, void *arg), void *arg)
{
	if (pred(h, arg))
		return true;
	while (step_once(h, limit))
		if (pred(h, arg))
			return true;
	if (h->now < limit)
		h->now = limit;
	return pred(h, arg);
}

raft_id hr_leader(struct hr *h)
{
	raft_term best = 0;
	raft_id leader = 0;
	unsigned i;

	for (i = 1; i <= h->cfg.n; i++) {
		struct hr_node *nd = node(h, i);

		if (!nd->up || imexd_cons_state(nd->cons) != RAFT_LEADER)
			continue;
		if (imexd_cons_term(nd->cons) > best) {
			best = imexd_cons_term(nd->cons);
			leader = i;
		}
	}
	return leader;
}

raft_id hr_id(const struct hr *h, unsigned i)
{
	return i >= 1 && i <= h->cfg.n ? imexd_cons_name_id(h->names[i - 1]) : 0;
}

unsigned hr_node_of(const struct hr *h, raft_id id)
{
	unsigned i;

	for (i = 1; i <= h->cfg.n; i++)
		if (hr_id(h, i) == id)
			return i;
	return 0;
}

int hr_change(struct hr *h, unsigned i, const char *address, bool add,
	      raft_index *index)
{
	struct hr_node *nd = node(h, i);
	uint64_t tag = h->next_tag++;
	raft_id leader;
	int rv;

	if (!nd->up)
		return -ENOTCONN;
	h->acks = xgrow(h->acks, &h->cap_acks, h->n_acks, sizeof(*h->acks));
	rv = imexd_cons_change(nd->cons, h->now, address, add, tag, index,
			       &leader);
	if (rv) {
		drain(h, i);
		return rv;
	}
	memset(&h->acks[h->n_acks], 0, sizeof(*h->acks));
	h->acks[h->n_acks].tag = tag;
	h->acks[h->n_acks].node = i;
	h->acks[h->n_acks].len = strlen(address);
	h->acks[h->n_acks].data = xdup(address, strlen(address));
	h->acks[h->n_acks].change = true;
	h->n_acks++;
	drain(h, i);
	return 0;
}

int hr_submit(struct hr *h, raft_id id, const void *data, size_t len,
	      raft_index *index)
{
	struct hr_node *nd = node(h, id);
	raft_id leader;
	uint64_t tag = h->next_tag++;
	int rv;

	if (!nd->up)
		return -ENOTCONN;
	h->acks = xgrow(h->acks, &h->cap_acks, h->n_acks, sizeof(*h->acks));
	rv = imexd_cons_submit(nd->cons, h->now, data, len, tag, index, &leader);
	if (rv == -IMEXD_CONS_ENOTLEADER) {
		CHECK(imexd_cons_state(nd->cons) != RAFT_LEADER);
		CHECK(leader != hr_id(h, id));
		return rv;
	}
	if (rv)
		return rv;
	memset(&h->acks[h->n_acks], 0, sizeof(*h->acks));
	h->acks[h->n_acks].tag = tag;
	h->acks[h->n_acks].node = id;
	h->acks[h->n_acks].len = len;
	h->acks[h->n_acks].data = xdup(data, len);
	h->n_acks++;
	drain(h, id);
	return 0;
}

bool hr_is_acked(const struct hr *h, const void *data, size_t len)
{
	size_t i;

	for (i = 0; i < h->n_acks; i++)
		if (h->acks[i].acked && h->acks[i].len == len &&
		    !memcmp(h->acks[i].data, data, len))
			return true;
	return false;
}

unsigned hr_applied_count(const struct hr *h, raft_id id)
{
	return (unsigned)h->nodes[id - 1].fsm.n;
}

const void *hr_applied(const struct hr *h, raft_id id, unsigned i,
		       size_t *len, raft_index *index)
{
	const struct hr_cmd *c = &h->nodes[id - 1].fsm.v[i];

	*len = c->len;
	if (index)
		*index = c->index;
	return c->data;
}

bool hr_converged(struct hr *h)
{
	const struct hr_list *ref = NULL;
	unsigned i;
	size_t j, k;

	for (i = 1; i <= h->cfg.n; i++) {
		const struct hr_list *l = &node(h, i)->fsm;

		if (!node(h, i)->up)
			continue;
		if (!ref || l->n > ref->n)
			ref = l;
	}
	if (!ref)
		return false;
	for (i = 1; i <= h->cfg.n; i++) {
		const struct hr_list *l = &node(h, i)->fsm;

		if (!node(h, i)->up)
			continue;
		if (l->n != ref->n)
			return false;
		for (j = 0; j < l->n; j++)
			if (l->v[j].index != ref->v[j].index ||
			    l->v[j].len != ref->v[j].len ||
			    memcmp(l->v[j].data, ref->v[j].data, l->v[j].len))
				return false;
	}
	for (j = 0; j < h->n_acks; j++) {
		bool found = false;

		if (!h->acks[j].acked || h->acks[j].change)
			continue;
		for (k = 0; k < ref->n && !found; k++)
			found = ref->v[k].len == h->acks[j].len &&
				!memcmp(ref->v[k].data, h->acks[j].data, ref->v[k].len);
		if (!found)
			return false;
	}
	return true;
}
