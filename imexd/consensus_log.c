// SPDX-License-Identifier: GPL-2.0
/*
 * consensus: the actions queue and what it owns until the next input,
 * the server's copy of the log, and taking snapshots of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "consensus_internal.h"

/* ---- scratch and actions ---- */

void cons_scratch_free(struct imexd_cons *c)
{
	size_t i;

	for (i = 0; i < c->n_scratch; i++) {
		if (c->scratch[i].conf)
			raft_configuration_close(c->scratch[i].p);
		free(c->scratch[i].p);
	}
	c->n_scratch = 0;
}

/* Keep p until the next input call; frees p on failure. */
int cons_scratch_add(struct imexd_cons *c, void *p, bool conf)
{
	if (GROW(c, scratch, n_scratch, cap_scratch)) {
		if (conf)
			raft_configuration_close(p);
		free(p);
		return -ENOMEM;
	}
	c->scratch[c->n_scratch].p = p;
	c->scratch[c->n_scratch++].conf = conf;
	return 0;
}

void *cons_scratch_dup(struct imexd_cons *c, const void *p, size_t len)
{
	void *d = malloc(len ? len : 1);

	if (!d)
		return NULL;
	if (len)
		memcpy(d, p, len);
	return cons_scratch_add(c, d, false) ? NULL : d;
}

struct imexd_cons_action *cons_push(struct imexd_cons *c,
				    enum imexd_cons_action_type type)
{
	struct imexd_cons_action *a;

	if (GROW(c, actions, n_actions, cap_actions))
		return NULL;
	a = &c->actions[c->n_actions++];
	memset(a, 0, sizeof(*a));
	a->type = type;
	return a;
}

/* An action handing out the snapshot @s. */
int cons_push_snap(struct imexd_cons *c, enum imexd_cons_action_type type,
		   const struct cons_snap *s)
{
	struct imexd_cons_action *a = cons_push(c, type);

	if (!a)
		return -ENOMEM;
	a->snapshot.metadata = &s->meta;
	a->snapshot.data = s->data;
	a->snapshot.len = s->len;
	return 0;
}

bool imexd_cons_next(struct imexd_cons *c, struct imexd_cons_action *a)
{
	if (c->next_action >= c->n_actions)
		return false;
	*a = c->actions[c->next_action++];
	return true;
}

/* Every input call starts here: the previous call's actions must have
 * been drained, their memory goes now.  Then -EINVAL unless @ok (the
 * input's own precondition). */
int cons_begin(struct imexd_cons *c, bool ok)
{
	if (c->next_action < c->n_actions || c->taking)
		return -EBUSY;
	c->n_actions = 0;
	c->next_action = 0;
	cons_scratch_free(c);
	return ok ? 0 : -EINVAL;
}

/* ---- log copy ---- */

raft_index cons_log_last(const struct imexd_cons *c)
{
	return c->log_start + c->log_n - 1;
}

const struct cons_entry *cons_log_get(const struct imexd_cons *c,
				      raft_index i)
{
	if (i < c->log_start || i > cons_log_last(c))
		return NULL;
	return &c->log[i - c->log_start];
}

raft_term cons_log_term(const struct imexd_cons *c, raft_index i)
{
	const struct cons_entry *e = cons_log_get(c, i);

	if (e)
		return e->term;
	if (c->snap.have && c->snap.meta.index == i)
		return c->snap.meta.term;
	return 0;
}

void cons_log_truncate(struct imexd_cons *c, raft_index from)
{
	while (c->log_n > 0 && cons_log_last(c) >= from)
		free(c->log[--c->log_n].buf);
}

/* Drop entries up to and including upto. */
void cons_log_compact(struct imexd_cons *c, raft_index upto)
{
	size_t drop, i;

	if (upto < c->log_start)
		return;
	drop = upto - c->log_start + 1;
	if (drop > c->log_n)
		drop = c->log_n;
	for (i = 0; i < drop; i++)
		free(c->log[i].buf);
	memmove(c->log, c->log + drop, (c->log_n - drop) * sizeof(*c->log));
	c->log_n -= drop;
	c->log_start += drop;
}

int cons_log_append(struct imexd_cons *c, const struct raft_entry *e)
{
	struct cons_entry *d;

	if (GROW(c, log, log_n, log_cap))
		return -ENOMEM;
	d = &c->log[c->log_n];
	d->buf = malloc(e->buf.len ? e->buf.len : 1);
	if (!d->buf)
		return -ENOMEM;
	if (e->buf.len)
		memcpy(d->buf, e->buf.base, e->buf.len);
	d->len = e->buf.len;
	d->term = e->term;
	d->type = e->type;
	c->log_n++;
	return 0;
}

/* n entries from index as raft_entry structs in scratch memory. */
struct raft_entry *cons_entries_out(struct imexd_cons *c, raft_index index,
				    unsigned n)
{
	struct raft_entry *out;
	unsigned i;

	out = calloc(n ? n : 1, sizeof(*out));
	if (!out || cons_scratch_add(c, out, false))
		return NULL;
	for (i = 0; i < n; i++) {
		const struct cons_entry *e = cons_log_get(c, index + i);

		if (!e)
			return NULL;
		out[i].term = e->term;
		out[i].type = e->type;
		out[i].buf.len = e->len;
		out[i].buf.base = cons_scratch_dup(c, e->buf, e->len);
		if (!out[i].buf.base)
			return NULL;
	}
	return out;
}

/* ---- snapshots ---- */

/*
 * The configuration a snapshot at c->applied carries: the last
 * configuration entry at or below it still in the log copy (committed,
 * since applied), else raft's committed one.  raft's own record can lag
 * behind the log (libraft 0.22.1 skips commits it does not expect, and
 * restart treats the last stored one as uncommitted); a snapshot with an
 * older configuration than the entries it replaces makes a restarted node
 * count votes against replaced voters (found by the agreement simulator).
 */
static int snapshot_conf(const struct imexd_cons *c,
			 struct raft_configuration *conf, raft_index *index)
{
	raft_index i;

	for (i = c->applied; i >= c->log_start && i > 0; i--) {
		const struct cons_entry *e = cons_log_get(c, i);
		struct raft_buffer b;

		if (!e || e->type != RAFT_CHANGE)
			continue;
		if (i <= c->raft.configuration_committed_index)
			break;
		b.base = e->buf;
		b.len = e->len;
		if (raft_configuration_decode(&b, conf))
			return -ENOMEM;
		*index = i;
		return 0;
	}
	*index = c->raft.configuration_committed_index;
	return cons_conf_copy(&c->raft.configuration_committed, conf);
}

int cons_maybe_take_snapshot(struct imexd_cons *c)
{
	struct imexd_cons_action *a;
	raft_index base = c->snap.have ? c->snap.meta.index : 0;

	/* Not past what is stored here: raft forgets the terms of entries a
	 * snapshot covers, and a write still in flight needs them. */
	if (!c->snap_threshold || c->taking || c->installing ||
	    c->applied != raft_commit_index(&c->raft) ||
	    c->applied > c->raft.last_stored ||
	    c->applied - base < c->snap_threshold ||
	    !cons_log_get(c, c->applied))
		return 0;
	memset(&c->take_meta, 0, sizeof(c->take_meta));
	if (snapshot_conf(c, &c->take_meta.configuration,
			  &c->take_meta.configuration_index))
		return -ENOMEM;
	c->take_meta.index = c->applied;
	c->take_meta.term = cons_log_term(c, c->applied);
	c->taking = true;
	a = cons_push(c, IMEXD_CONS_TAKE_SNAPSHOT);
	if (!a)
		return -ENOMEM;
	a->snapshot.metadata = &c->take_meta;
	return 0;
}
