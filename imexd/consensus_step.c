// SPDX-License-Identifier: GPL-2.0
/*
 * consensus: raft_step() and what its updates ask for (entries to write,
 * messages, commits to apply, status), submitting entries, and the tail
 * of every input.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "consensus_internal.h"

/* ---- raft_step and its update ---- */

int cons_map_err(int rv)
{
	switch (rv) {
	case 0:
		return 0;
	case RAFT_NOMEM:
		return -ENOMEM;
	case RAFT_NOTLEADER:
	case RAFT_LEADERSHIPLOST:
		return -IMEXD_CONS_ENOTLEADER;
	case RAFT_CANTCHANGE:
	case RAFT_BUSY:
		return -EBUSY;
	case RAFT_NOSPACE:
		return -ENOSPC;
	case RAFT_MALFORMED:
	case RAFT_INVALID:
		return -EINVAL;
	default:
		return -EIO;
	}
}

static int queue_event(struct imexd_cons *c, const struct raft_event *ev)
{
	if (GROW(c, events, n_events, cap_events))
		return -ENOMEM;
	c->events[c->n_events++] = *ev;
	return 0;
}

static int on_entries(struct imexd_cons *c, const struct raft_update *u)
{
	struct imexd_cons_action *a;
	struct cons_write *w;
	unsigned i;
	int rv = 0;

	cons_log_truncate(c, u->entries.index);
	if (u->entries.n)
		cons_group_from(c, u->entries.index, &u->entries.batch[0]);
	for (i = 0; i < u->entries.n && !rv; i++)
		rv = cons_log_append(c, &u->entries.batch[i]);
	/* The batch is ours now, copied or not. */
	raft_free(u->entries.batch[0].batch);
	if (rv)
		return rv;
	if (GROW(c, writes, n_writes, cap_writes))
		return -ENOMEM;
	w = &c->writes[c->n_writes];
	w->terms = malloc(u->entries.n * sizeof(*w->terms));
	if (!w->terms)
		return -ENOMEM;
	for (i = 0; i < u->entries.n; i++)
		w->terms[i] = u->entries.batch[i].term;
	w->first = u->entries.index;
	w->n = u->entries.n;
	w->bootstrap = false;
	c->n_writes++;
	a = cons_push(c, IMEXD_CONS_PERSIST_ENTRIES);
	if (!a)
		return -ENOMEM;
	a->entries.index = u->entries.index;
	a->entries.n = u->entries.n;
	a->entries.entries = cons_entries_out(c, u->entries.index, u->entries.n);
	return a->entries.entries ? 0 : -ENOMEM;
}

static int on_install(struct imexd_cons *c, const struct raft_update *u)
{
	/* raft gives us the chunk; the configuration goes back to it with
	 * RAFT_PERSISTED_SNAPSHOT. */
	cons_snap_clear(&c->install);
	c->install.have = true;
	c->install.meta = u->snapshot.metadata;
	c->install.data = u->snapshot.chunk.base;
	c->install.len = u->snapshot.chunk.len;
	c->installing = true;
	cons_log_truncate(c, c->log_start);
	c->log_start = u->snapshot.metadata.index + 1;
	return cons_push_snap(c, IMEXD_CONS_PERSIST_SNAPSHOT, &c->install);
}

static int on_message(struct imexd_cons *c, const struct raft_message *m)
{
	struct imexd_cons_action *a;
	struct raft_message *out;

	out = malloc(sizeof(*out));
	if (!out || cons_scratch_add(c, out, false))
		return -ENOMEM;
	*out = *m;
	out->server_id = c->self;
	out->server_address = c->raft.address;
	/*
	 * libraft 0.22.1 answers a pre-vote request of a lower term with the
	 * request's term, so the candidate never learns ours: a node with a
	 * higher term and an older log then refuses it for good, and when its
	 * vote is needed the group never elects (found by the agreement
	 * simulator).  Answer a refusal with our term, as etcd does: the
	 * candidate adopts it and asks again.
	 */
	if (m->type == RAFT_REQUEST_VOTE_RESULT &&
	    m->request_vote_result.pre_vote &&
	    !m->request_vote_result.vote_granted &&
	    m->request_vote_result.term < c->raft.current_term)
		out->request_vote_result.term = c->raft.current_term;
	if (m->type == RAFT_APPEND_ENTRIES) {
		struct raft_append_entries *ae = &out->append_entries;

		ae->entries = NULL;
		if (ae->n_entries) {
			ae->entries = cons_entries_out(c, ae->prev_log_index + 1,
						  ae->n_entries);
			if (!ae->entries)
				return -ENOMEM;
		}
	} else if (m->type == RAFT_INSTALL_SNAPSHOT) {
		struct raft_install_snapshot *is = &out->install_snapshot;
		struct raft_configuration *conf;

		if (!c->snap.have)
			return -EIO;
		conf = malloc(sizeof(*conf));
		if (!conf)
			return -ENOMEM;
		if (cons_conf_copy(&c->snap.meta.configuration, conf)) {
			free(conf);
			return -ENOMEM;
		}
		if (cons_scratch_add(c, conf, true))
			return -ENOMEM;
		is->last_index = c->snap.meta.index;
		is->last_term = c->snap.meta.term;
		is->conf = *conf;
		is->conf_index = c->snap.meta.configuration_index;
		is->data.len = c->snap.len;
		is->data.base = cons_scratch_dup(c, c->snap.data, c->snap.len);
		if (!is->data.base)
			return -ENOMEM;
	}
	a = cons_push(c, IMEXD_CONS_SEND);
	if (!a)
		return -ENOMEM;
	a->send.to = m->server_id;
	a->send.to_name = imexd_cons_name(c, m->server_id);
	a->send.msg = out;
	return 0;
}

/* Tags of entries up to index are settled: applied with the same term,
 * or dropped. */
int cons_settle_tags(struct imexd_cons *c, raft_index index,
		     raft_term term, struct imexd_cons_action *apply)
{
	size_t i = 0;

	while (i < c->n_tags) {
		struct cons_tag *t = &c->tags[i];

		if (t->index > index) {
			i++;
			continue;
		}
		if (apply && t->index == index && t->term == term) {
			apply->apply.tag = t->tag;
		} else {
			struct imexd_cons_action *a;

			a = cons_push(c, IMEXD_CONS_DROPPED);
			if (!a)
				return -ENOMEM;
			a->dropped.tag = t->tag;
			a->dropped.index = t->index;
		}
		c->tags[i] = c->tags[--c->n_tags];
	}
	return 0;
}

/* A configuration entry committed: CHANGED, with the tag of a change
 * submitted here. */
static int changed(struct imexd_cons *c, raft_index i, raft_term term)
{
	struct imexd_cons_action *a = cons_push(c, IMEXD_CONS_CHANGED);

	if (!a)
		return -ENOMEM;
	a->apply.index = i;
	a->apply.term = term;
	return cons_settle_tags(c, i, term, a);
}

static int apply_committed(struct imexd_cons *c)
{
	raft_index commit = raft_commit_index(&c->raft);

	while (c->applied < commit) {
		raft_index i = c->applied + 1;
		const struct cons_entry *e = cons_log_get(c, i);
		struct imexd_cons_action *a;
		struct raft_event ev;
		struct raft_buffer b;
		int rv;

		if (!e)
			break; /* a snapshot is being installed */
		switch (e->type) {
		case RAFT_COMMAND:
			a = cons_push(c, IMEXD_CONS_APPLY);
			if (!a)
				return -ENOMEM;
			a->apply.index = i;
			a->apply.term = e->term;
			a->apply.len = e->len;
			a->apply.data = cons_scratch_dup(c, e->buf, e->len);
			if (!a->apply.data)
				return -ENOMEM;
			rv = cons_settle_tags(c, i, e->term, a);
			break;
		case RAFT_CHANGE:
			memset(&ev, 0, sizeof(ev));
			ev.type = RAFT_CONFIGURATION;
			ev.configuration.index = i;
			b.base = e->buf;
			b.len = e->len;
			rv = raft_configuration_decode(&b, &ev.configuration.conf);
			if (rv)
				return cons_map_err(rv);
			if (c->raft.configuration_uncommitted_index != i &&
			    i > c->raft.configuration_committed_index) {
				/* libraft 0.22.1 ignores the commit of a
				 * configuration while a later one is pending
				 * (replicationApplyConfigurationChange()), so a
				 * rollback of the later one would restore an
				 * older configuration than the committed one
				 * (a split brain).  Record it as committed. */
				raft_configuration_close(&c->raft.configuration_committed);
				c->raft.configuration_committed = ev.configuration.conf;
				c->raft.configuration_committed_index = i;
				rv = changed(c, i, e->term);
				break;
			}
			rv = queue_event(c, &ev);
			if (rv) {
				raft_configuration_close(&ev.configuration.conf);
				return rv;
			}
			rv = changed(c, i, e->term);
			break;
		default:
			rv = cons_settle_tags(c, i, 0, NULL);
			break;
		}
		if (rv)
			return rv;
		c->applied = i;
	}
	return 0;
}

static int report_state(struct imexd_cons *c)
{
	struct imexd_cons_action *a;
	raft_id leader = imexd_cons_leader(c);
	int st = raft_state(&c->raft);

	if (st == c->rep_state && leader == c->rep_leader &&
	    c->raft.current_term == c->rep_term)
		return 0;
	if (st == RAFT_LEADER && c->rep_state != RAFT_LEADER) {
		unsigned i;

		/* Everybody gets a fresh start on a new leader. */
		for (i = 0; i < c->n_peers; i++)
			c->peers[i].heard = c->raft.now;
		c->promoting = 0;
	}
	c->rep_state = st;
	c->rep_leader = leader;
	c->rep_term = c->raft.current_term;
	a = cons_push(c, IMEXD_CONS_STATE);
	if (!a)
		return -ENOMEM;
	a->state.state = st;
	a->state.term = c->rep_term;
	a->state.leader = leader;
	a->state.leader_name = imexd_cons_name(c, leader);
	return 0;
}

static int step_one(struct imexd_cons *c, struct raft_event *ev)
{
	struct raft_update u;
	unsigned i;
	int rv;

	ev->capacity = 0;
	memset(ev->reserved, 0, sizeof(ev->reserved));
	rv = raft_step(&c->raft, ev, &u);
	c->refused = rv != 0;
	if (rv)
		return cons_map_err(rv);
	if (u.flags & (RAFT_UPDATE_CURRENT_TERM | RAFT_UPDATE_VOTED_FOR)) {
		struct imexd_cons_action *a;

		a = cons_push(c, IMEXD_CONS_PERSIST_TERM_VOTE);
		if (!a)
			return -ENOMEM;
		a->term_vote.term = c->raft.current_term;
		a->term_vote.voted_for = c->raft.voted_for;
	}
	if (u.flags & RAFT_UPDATE_ENTRIES) {
		rv = on_entries(c, &u);
		if (rv)
			return rv;
	}
	if (u.flags & RAFT_UPDATE_SNAPSHOT) {
		rv = on_install(c, &u);
		if (rv)
			return rv;
	}
	/* Before messages: they may go to a node just added. */
	rv = cons_peers_learn(c);
	if (rv)
		return rv;
	if (u.flags & RAFT_UPDATE_MESSAGES) {
		for (i = 0; i < u.messages.n; i++) {
			rv = on_message(c, &u.messages.batch[i]);
			if (rv)
				return rv;
		}
	}
	if (u.flags & RAFT_UPDATE_COMMIT_INDEX) {
		rv = apply_committed(c);
		if (rv)
			return rv;
	}
	rv = cons_peers_learn(c);
	return rv ? rv : report_state(c);
}

/* Step ev, then the configuration events it led to. */
int cons_step(struct imexd_cons *c, uint64_t now, struct raft_event *ev)
{
	size_t i;
	int rv;

	ev->time = now;
	rv = step_one(c, ev);
	if (rv)
		return rv;
	for (i = 0; !rv && i < c->n_events; i++) {
		/* A copy: stepping may grow (move) the array. */
		struct raft_event e = c->events[i];

		e.time = now;
		rv = step_one(c, &e); /* raft takes the configuration */
	}
	for (; i < c->n_events; i++)
		raft_configuration_close(&c->events[i].configuration.conf);
	c->n_events = 0;
	c->refused = false;
	return rv;
}

/* Whether the actions from @from on send every other server that keeps a
 * log (voters and standbys) an AppendEntries. */
static bool all_appended(const struct imexd_cons *c, size_t from)
{
	const struct raft_configuration *conf = &c->raft.configuration;
	unsigned i;
	size_t k;

	for (i = 0; i < conf->n; i++) {
		const struct raft_server *s = &conf->servers[i];

		if (s->id == c->self || s->role == RAFT_SPARE)
			continue;
		for (k = from; k < c->n_actions; k++)
			if (c->actions[k].type == IMEXD_CONS_SEND &&
			    c->actions[k].send.to == s->id &&
			    c->actions[k].send.msg->type == RAFT_APPEND_ENTRIES)
				break;
		if (k == c->n_actions)
			return false;
	}
	return true;
}

/* Remember @tag for the entry just submitted (room was grown before). */
raft_index cons_tag_last(struct imexd_cons *c, uint64_t tag)
{
	struct cons_tag *t = &c->tags[c->n_tags++];

	t->tag = tag;
	t->index = raft_last_index(&c->raft);
	t->term = c->raft.current_term;
	return t->index;
}

int cons_submit_entry(struct imexd_cons *c, uint64_t now,
		      enum raft_entry_type type, const void *data,
		      size_t len)
{
	struct raft_event ev;
	struct raft_entry e;
	size_t from = c->n_actions;
	int rv;

	e.term = c->raft.current_term;
	e.type = type;
	e.buf.len = len;
	e.buf.base = raft_malloc(len ? len : 1);
	if (!e.buf.base)
		return -ENOMEM;
	if (len)
		memcpy(e.buf.base, data, len);
	e.batch = e.buf.base;
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_SUBMIT;
	ev.submit.entries = &e;
	ev.submit.n = 1;
	/* Refused: the batch is still ours.  Accepted: on_entries frees it. */
	rv = cons_step(c, now, &ev);
	if (rv && c->refused)
		raft_free(e.batch);
	/*
	 * libraft sends a new entry at once only to followers it has in
	 * pipeline mode; one in probe mode gets it with its next heartbeat,
	 * up to a heartbeat timeout later.  Its leader drops a follower to
	 * probe mode whenever a tick finds no answer from it since the tick
	 * before (not since an election timeout), which an idle group's
	 * timing often gives.  A follower the step left out gets the entry
	 * now (broadcast: an AppendEntries to every follower).
	 */
	if (!rv && raft_state(&c->raft) == RAFT_LEADER && !all_appended(c, from))
		rv = cons_broadcast(c, now);
	return rv;
}

/*
 * libraft 0.22.1 tells the followers a new commit index only with the
 * next AppendEntries it sends them, a heartbeat timeout later when no
 * entry follows, and every member of a new domain waits for it (and a
 * node back from a restart, to apply its log).  Send it at once, as
 * etcd's leader does when its commit index moves: a timeout
 * step with a zero heartbeat timeout sends every follower an
 * AppendEntries now (and resets their heartbeat clocks).  That step also
 * runs the leader's quorum check: it is made to count every server heard
 * from within the last election timeout, so it can neither step down nor
 * give up on a follower the regular check would keep, and the check's
 * timer is put back afterwards, so the regular check is not moved.
 */
int cons_broadcast(struct imexd_cons *c, uint64_t now)
{
	raft_time start = c->raft.election_timer_start;
	unsigned hb = c->raft.heartbeat_timeout;
	struct raft_event ev;
	int rv;

	c->pushed = raft_commit_index(&c->raft);
	c->raft.election_timer_start = now >= c->et ? now - c->et + 1 : 0;
	raft_set_heartbeat_timeout(&c->raft, 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_TIMEOUT;
	rv = cons_step(c, now, &ev);
	raft_set_heartbeat_timeout(&c->raft, hb);
	if (raft_state(&c->raft) == RAFT_LEADER)
		c->raft.election_timer_start = start;
	return rv;
}

static int push_commit(struct imexd_cons *c, uint64_t now)
{
	if (raft_state(&c->raft) != RAFT_LEADER ||
	    raft_commit_index(&c->raft) <= c->pushed)
		return 0;
	return cons_broadcast(c, now);
}

/* Common tail of every input: the commit index out, leader upkeep and
 * snapshots. */
int cons_finish(struct imexd_cons *c, uint64_t now, int rv)
{
	if (!rv)
		rv = push_commit(c, now);
	if (!rv)
		rv = cons_upkeep(c, now);
	if (!rv)
		rv = cons_maybe_take_snapshot(c);
	return rv;
}
