// SPDX-License-Identifier: GPL-2.0
/*
 * consensus: one raft server driven through raft_step().  See consensus.h
 * for the contract.  The server keeps its own copy of the log because
 * raft_step() hands entries out once (to be persisted) and later only
 * names indexes: outgoing AppendEntries, committed entries to apply and
 * snapshots are filled from this copy, as libraft's legacy layer does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "consensus_internal.h"

/* ---- public ---- */

int imexd_cons_new(const struct imexd_cons_config *cfg, struct imexd_cons **out)
{
	struct imexd_cons *c;
	unsigned i;

	if (!cfg->roster || !cfg->n_roster || cfg->n_roster > IMEXD_CONS_ROSTER_MAX ||
	    !cfg->self)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->names = calloc(cfg->n_roster, sizeof(*c->names));
	if (!c->names)
		goto nomem;
	for (i = 0; i < cfg->n_roster; i++) {
		if (!cfg->roster[i] || !cfg->roster[i][0])
			goto inval;
		c->names[i] = strdup(cfg->roster[i]);
		if (!c->names[i])
			goto nomem;
		c->n++;
	}
	qsort(c->names, c->n, sizeof(*c->names), cons_cmp_name);
	for (i = 1; i < c->n; i++)
		if (!strcmp(c->names[i - 1], c->names[i]))
			goto inval;
	/* Two names of one id would count one node's vote for another. */
	for (i = 0; i < c->n; i++) {
		int rv = cons_peer_add(c, imexd_cons_name_id(c->names[i]),
				  c->names[i], true);

		if (rv == -ENOMEM)
			goto nomem;
		if (rv || strchr(c->names[i], '='))
			goto inval;
		if (!strcmp(c->names[i], cfg->self))
			c->self_in_roster = true;
	}
	if (!cfg->self[0] || strchr(cfg->self, '='))
		goto inval;
	c->self = imexd_cons_name_id(cfg->self);
	switch (cons_peer_add(c, c->self, cfg->self, false)) {
	case 0:
		break;
	case -ENOMEM:
		goto nomem;
	default:
		goto inval;
	}
	c->et = cfg->election_timeout_ms ? cfg->election_timeout_ms : 1000;
	c->k = cfg->lost_voter_timeouts ? cfg->lost_voter_timeouts : 10;
	c->snap_threshold = cfg->snapshot_threshold;
	c->snap_trailing = cfg->snapshot_trailing;
	c->log_start = 1;
	c->rep_state = -1;
	if (raft_init(&c->raft, NULL, NULL, c->self, imexd_cons_name(c, c->self)))
		goto nomem;
	/* libraft formats a diagnostic line for every message and timeout
	 * into its tracer, which prints only under LIBRAFT_TRACE; without a
	 * tracer it formats nothing (imexd logs from the actions). */
	c->raft.tracer = NULL;
	raft_seed(&c->raft, cfg->seed ? cfg->seed : (unsigned)c->self);
	raft_set_election_timeout(&c->raft, c->et);
	raft_set_heartbeat_timeout(&c->raft, cfg->heartbeat_timeout_ms ?
				   cfg->heartbeat_timeout_ms :
				   (c->et / 10 ? c->et / 10 : 1));
	raft_set_pre_vote(&c->raft, true);
	*out = c;
	return 0;
inval:
	imexd_cons_free(c);
	return -EINVAL;
nomem:
	imexd_cons_free(c);
	return -ENOMEM;
}

void imexd_cons_free(struct imexd_cons *c)
{
	size_t i;

	if (!c)
		return;
	if (c->raft.address)
		raft_close(&c->raft, NULL);
	cons_scratch_free(c);
	free(c->scratch);
	free(c->actions);
	for (i = 0; i < c->n_events; i++)
		raft_configuration_close(&c->events[i].configuration.conf);
	free(c->events);
	cons_log_truncate(c, c->log_start);
	free(c->log);
	for (i = 0; i < c->n_writes; i++)
		free(c->writes[i].terms);
	free(c->writes);
	free(c->tags);
	cons_snap_clear(&c->snap);
	if (c->installing) {
		raft_configuration_close(&c->install.meta.configuration);
		free(c->install.data);
	}
	if (c->taking)
		raft_configuration_close(&c->take_meta.configuration);
	for (i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->names);
	for (i = 0; i < c->n_peers; i++) {
		free(c->peers[i].name);
		free(c->peers[i].addr);
	}
	free(c->peers);
	free(c);
}

/*
 * The initial configuration entry of the roster (term 1, index 1).  Never
 * one voter unless the roster is this node alone: a node whose NODES_FILE
 * wrongly names it and one other would otherwise lead a group of its own.
 * Two voters need the other name's vote, which a node of another group
 * refuses (votes only from its members); upkeep may demote one later.
 */
static int bootstrap_entry(const struct imexd_cons *c, struct raft_buffer *buf)
{
	struct raft_configuration conf;
	unsigned i, v = c->n == 2 ? 2 : imexd_cons_voters(c->n);
	int rv = 0;

	raft_configuration_init(&conf);
	for (i = 0; i < c->n && !rv; i++)
		rv = raft_configuration_add(&conf, imexd_cons_name_id(c->names[i]),
					    c->names[i],
					    i < v ? RAFT_VOTER : RAFT_STANDBY);
	if (!rv)
		rv = raft_configuration_encode(&conf, buf);
	raft_configuration_close(&conf);
	return cons_map_err(rv);
}

int imexd_cons_start(struct imexd_cons *c, uint64_t now,
		     const struct imexd_cons_start *st)
{
	struct raft_snapshot_metadata meta, *pmeta = NULL;
	struct raft_entry boot, *ents = NULL;
	const struct raft_entry *src = st->entries;
	struct raft_buffer bbuf = { 0 };
	struct imexd_cons_action *a;
	struct raft_event ev;
	unsigned i, n = st->n_entries;
	raft_index start = st->start_index;
	raft_term term = st->term;
	size_t total = 0;
	uint8_t *cur, *batch = NULL;
	/* A node outside the roster waits to be joined: it never forms a
	 * group of its own. */
	bool boot_needed = !st->snapshot && !n && c->self_in_roster;
	int rv;

	rv = cons_begin(c, true);
	if (rv)
		return rv;
	if (c->started)
		return -EALREADY;
	if (boot_needed) {
		rv = bootstrap_entry(c, &bbuf);
		if (rv)
			return rv;
		boot.term = 1;
		boot.type = RAFT_CHANGE;
		boot.buf = bbuf;
		boot.batch = NULL;
		src = &boot;
		n = 1;
		start = 1;
		if (term < 1) {
			term = 1;
			a = cons_push(c, IMEXD_CONS_PERSIST_TERM_VOTE);
			if (!a)
				goto nomem;
			a->term_vote.term = 1;
			a->term_vote.voted_for = st->voted_for;
		}
	} else if (!st->snapshot && n && start != 1) {
		return -EINVAL;
	}
	if (st->snapshot) {
		c->snap.have = true;
		c->snap.meta = *st->snapshot;
		if (cons_conf_copy(&st->snapshot->configuration,
			      &c->snap.meta.configuration)) {
			c->snap.have = false;
			goto nomem;
		}
		c->snap.data = malloc(st->snapshot_len ? st->snapshot_len : 1);
		if (!c->snap.data)
			goto nomem;
		if (st->snapshot_len)
			memcpy(c->snap.data, st->snapshot_data, st->snapshot_len);
		c->snap.len = st->snapshot_len;
		c->applied = st->snapshot->index;
		meta = *st->snapshot;
		if (cons_conf_copy(&st->snapshot->configuration, &meta.configuration))
			goto nomem;
		pmeta = &meta; /* raft takes meta.configuration */
	}
	c->group = st->group;
	if (n)
		cons_group_from(c, start, &src[0]);
	c->log_start = start;
	for (i = 0; i < n; i++) {
		rv = cons_log_append(c, &src[i]);
		if (rv)
			goto out;
		total += src[i].buf.len;
	}
	if (n) {
		ents = raft_malloc(n * sizeof(*ents));
		batch = raft_malloc(total ? total : 1);
		if (!ents || !batch) {
			raft_free(ents);
			raft_free(batch);
			ents = NULL;
			goto nomem;
		}
		cur = batch;
		for (i = 0; i < n; i++) {
			ents[i] = src[i];
			ents[i].buf.base = cur;
			ents[i].batch = batch;
			if (src[i].buf.len)
				memcpy(cur, src[i].buf.base, src[i].buf.len);
			cur += src[i].buf.len;
		}
	}
	if (boot_needed) {
		struct cons_write *w;

		if (GROW(c, writes, n_writes, cap_writes))
			goto nomem_ents;
		w = &c->writes[c->n_writes];
		w->terms = malloc(sizeof(*w->terms));
		if (!w->terms)
			goto nomem_ents;
		w->terms[0] = 1;
		w->first = 1;
		w->n = 1;
		w->bootstrap = true;
		c->n_writes++;
		a = cons_push(c, IMEXD_CONS_PERSIST_ENTRIES);
		if (!a)
			goto nomem_ents;
		a->entries.index = 1;
		a->entries.n = 1;
		a->entries.entries = cons_entries_out(c, 1, 1);
		if (!a->entries.entries)
			goto nomem_ents;
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_START;
	ev.start.term = term;
	ev.start.voted_for = st->voted_for;
	ev.start.metadata = pmeta;
	ev.start.start_index = start;
	ev.start.entries = ents;
	ev.start.n_entries = n;
	pmeta = NULL;
	rv = cons_step(c, now, &ev);
	/* Refused: raft has freed the entries already. */
	if (ents && !(rv && c->refused)) {
		raft_free(batch);
		raft_free(ents);
	}
	ents = NULL;
	if (!rv)
		c->started = true;
	rv = cons_finish(c, now, rv);
	goto out;
nomem_ents:
	if (ents) {
		raft_free(batch);
		raft_free(ents);
	}
nomem:
	rv = -ENOMEM;
	if (pmeta)
		raft_configuration_close(&pmeta->configuration);
out:
	raft_free(bbuf.base);
	return rv;
}

/*
 * libraft rejects an AppendEntries whose previous entry lies inside this
 * node's snapshot (its terms are forgotten), and the leader, whose own
 * snapshot is older, retries below it for ever.  Entries up to our
 * snapshot are committed, so every leader of a term we accept holds them
 * unchanged: start the message at our snapshot instead.
 */
static void skip_snapshotted(struct imexd_cons *c, struct raft_append_entries *ae)
{
	raft_index si = c->snap.have ? c->snap.meta.index : 0;
	unsigned k;

	if (!si || ae->prev_log_index >= si || ae->term < c->raft.current_term)
		return;
	k = (unsigned)(si - ae->prev_log_index);
	if (k > ae->n_entries)
		k = ae->n_entries;
	/* An entry at the snapshot's index must be the snapshot's. */
	if (k && ae->prev_log_index + k == si &&
	    ae->entries[k - 1].term != c->snap.meta.term)
		return;
	if (k == ae->n_entries && ae->n_entries)
		raft_free(ae->entries[0].batch); /* nothing left for raft */
	ae->entries = k == ae->n_entries ? NULL : ae->entries + k;
	ae->n_entries -= k;
	ae->prev_log_index = si;
	ae->prev_log_term = c->snap.meta.term;
}

int imexd_cons_receive(struct imexd_cons *c, uint64_t now, raft_id from,
		       struct raft_message *msg)
{
	struct raft_message local;
	struct raft_event ev;
	int rv = cons_begin(c, c->started && imexd_cons_name(c, from) &&
				 from != c->self);

	/*
	 * Votes count only among members: a node outside the group (never
	 * joined, removed, or one that formed a group of its own from a
	 * wrong NODES_FILE) gets none here and starts no election, so it
	 * can never lead members.  Leader traffic is taken from any node the
	 * transport delivered: a member that missed a join must still catch
	 * up from the joined node when it leads.
	 */
	if (!rv && !cons_is_member(c, from) && cons_is_member(c, c->self) &&
	    (msg->type == RAFT_REQUEST_VOTE || msg->type == RAFT_TIMEOUT_NOW))
		rv = 1;
	/* raft would keep a second snapshot's buffers without using them;
	 * the leader sends it again later. */
	if (!rv && c->installing && msg->type == RAFT_INSTALL_SNAPSHOT)
		rv = 1;
	if (rv) {
		/* Ownership passes even on refusal. */
		if (msg->type == RAFT_APPEND_ENTRIES &&
		    msg->append_entries.n_entries)
			raft_free(msg->append_entries.entries[0].batch);
		if (msg->type == RAFT_INSTALL_SNAPSHOT) {
			raft_configuration_close(&msg->install_snapshot.conf);
			raft_free(msg->install_snapshot.data.base);
		}
		return rv > 0 ? 0 : rv;
	}
	cons_peer_find(c, from)->heard = now;
	msg->server_id = from;
	msg->server_address = imexd_cons_name(c, from);
	local = *msg;
	if (local.type == RAFT_APPEND_ENTRIES)
		skip_snapshotted(c, &local.append_entries);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_RECEIVE;
	ev.receive.message = &local;
	return cons_finish(c, now, cons_step(c, now, &ev));
}

int imexd_cons_tick(struct imexd_cons *c, uint64_t now)
{
	struct raft_event ev;
	int rv = cons_begin(c, c->started);

	if (rv)
		return rv;
	if (now < raft_timeout(&c->raft))
		return cons_finish(c, now, 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_TIMEOUT;
	return cons_finish(c, now, cons_step(c, now, &ev));
}

int imexd_cons_heartbeat(struct imexd_cons *c, uint64_t now)
{
	int rv = cons_begin(c, c->started);

	if (rv)
		return rv;
	if (raft_state(&c->raft) != RAFT_LEADER)
		return cons_finish(c, now, 0);
	return cons_finish(c, now, cons_broadcast(c, now));
}

int imexd_cons_persisted(struct imexd_cons *c, uint64_t now, raft_index last)
{
	struct cons_write w;
	struct raft_event ev;
	unsigned m = 0;
	int rv = cons_begin(c, c->n_writes &&
				 c->writes[0].first + c->writes[0].n - 1 == last);

	if (rv)
		return rv;
	w = c->writes[0];
	memmove(c->writes, c->writes + 1, --c->n_writes * sizeof(*c->writes));
	/* Only the prefix still in the log counts: a newer leader may have
	 * replaced the rest meanwhile. */
	while (m < w.n && (w.first + m < c->log_start ||
			   cons_log_term(c, w.first + m) == w.terms[m]))
		m++;
	free(w.terms);
	if (w.bootstrap || !m || c->installing ||
	    w.first + m - 1 <= c->raft.last_stored ||
	    raft_state(&c->raft) == RAFT_CANDIDATE)
		return cons_finish(c, now, 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_PERSISTED_ENTRIES;
	ev.persisted_entries.index = w.first + m - 1;
	return cons_finish(c, now, cons_step(c, now, &ev));
}

int imexd_cons_snapshot_persisted(struct imexd_cons *c, uint64_t now)
{
	struct raft_configuration keep;
	struct raft_event ev;
	int rv = cons_begin(c, c->installing);

	if (rv)
		return rv;
	if (cons_conf_copy(&c->install.meta.configuration, &keep))
		return -ENOMEM;
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_PERSISTED_SNAPSHOT;
	ev.persisted_snapshot.metadata = c->install.meta; /* raft takes conf */
	ev.persisted_snapshot.offset = 0;
	ev.persisted_snapshot.last = true;
	cons_snap_clear(&c->snap);
	c->snap = c->install;
	c->snap.meta.configuration = keep;
	memset(&c->install, 0, sizeof(c->install));
	c->installing = false;
	/* Writes handed out before the snapshot no longer count. */
	while (c->n_writes)
		free(c->writes[--c->n_writes].terms);
	cons_log_truncate(c, c->log_start);
	c->log_start = c->snap.meta.index + 1;
	c->applied = c->snap.meta.index;
	rv = cons_settle_tags(c, c->snap.meta.index, 0, NULL);
	if (rv)
		return rv;
	rv = cons_push_snap(c, IMEXD_CONS_RESTORE, &c->snap);
	if (rv)
		return rv;
	return cons_finish(c, now, cons_step(c, now, &ev));
}

int imexd_cons_snapshot_taken(struct imexd_cons *c, uint64_t now,
			      const void *data, size_t len)
{
	struct raft_event ev;
	void *copy;
	bool taking = c->taking;
	int rv;

	c->taking = false;
	rv = cons_begin(c, taking);
	c->taking = taking;
	if (rv)
		return rv;
	copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, data, len);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_SNAPSHOT;
	ev.snapshot.metadata = c->take_meta; /* raft takes the configuration */
	ev.snapshot.trailing = c->snap_trailing;
	cons_snap_clear(&c->snap);
	c->snap.have = true;
	c->snap.meta = c->take_meta;
	c->snap.data = copy;
	c->snap.len = len;
	c->taking = false;
	if (cons_conf_copy(&ev.snapshot.metadata.configuration,
		      &c->snap.meta.configuration)) {
		raft_configuration_close(&ev.snapshot.metadata.configuration);
		cons_snap_clear(&c->snap);
		return -ENOMEM;
	}
	/* Keep at least what raft keeps (trailing entries). */
	if (c->snap.meta.index > (raft_index)c->snap_trailing + 1)
		cons_log_compact(c, c->snap.meta.index - c->snap_trailing - 1);
	return cons_finish(c, now, cons_step(c, now, &ev));
}

int imexd_cons_submit(struct imexd_cons *c, uint64_t now, const void *data,
		      size_t len, uint64_t tag, raft_index *index,
		      raft_id *leader)
{
	int rv = cons_begin(c, c->started && tag);

	*leader = imexd_cons_leader(c);
	if (rv)
		return rv;
	if (raft_state(&c->raft) != RAFT_LEADER)
		return -IMEXD_CONS_ENOTLEADER;
	if (GROW(c, tags, n_tags, cap_tags))
		return -ENOMEM;
	rv = cons_submit_entry(c, now, RAFT_COMMAND, data, len);
	if (rv)
		return cons_finish(c, now, rv);
	*index = cons_tag_last(c, tag);
	return cons_finish(c, now, 0);
}

uint64_t imexd_cons_timeout(const struct imexd_cons *c)
{
	return raft_timeout(&c->raft);
}

enum raft_state imexd_cons_state(const struct imexd_cons *c)
{
	return (enum raft_state)c->raft.state;
}

raft_id imexd_cons_leader(const struct imexd_cons *c)
{
	if (c->raft.state == RAFT_LEADER)
		return c->self;
	if (c->raft.state == RAFT_FOLLOWER)
		return c->raft.follower_state.current_leader.id;
	return 0;
}

raft_term imexd_cons_term(const struct imexd_cons *c)
{
	return c->raft.current_term;
}

raft_index imexd_cons_applied(const struct imexd_cons *c)
{
	return c->applied;
}

raft_index imexd_cons_commit(const struct imexd_cons *c)
{
	return raft_commit_index(&c->raft);
}

int imexd_cons_role(const struct imexd_cons *c, raft_id id)
{
	unsigned i;

	for (i = 0; i < c->raft.configuration.n; i++)
		if (c->raft.configuration.servers[i].id == id)
			return c->raft.configuration.servers[i].role;
	return -1;
}

raft_id imexd_cons_self(const struct imexd_cons *c)
{
	return c->self;
}
