// SPDX-License-Identifier: GPL-2.0
/*
 * consensus: voter upkeep on the leader and membership changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "consensus_internal.h"

/* ---- voter upkeep ---- */

/* Submit @conf, which is closed here, as a configuration entry. */
static int submit_conf(struct imexd_cons *c, uint64_t now,
		       struct raft_configuration *conf)
{
	struct raft_buffer buf;
	int rv = raft_configuration_encode(conf, &buf);

	raft_configuration_close(conf);
	if (rv)
		return cons_map_err(rv);
	rv = cons_submit_entry(c, now, RAFT_CHANGE, buf.base, buf.len);
	raft_free(buf.base);
	return rv;
}

static int change_role(struct imexd_cons *c, uint64_t now, raft_id id,
		       int role)
{
	struct raft_configuration conf;
	unsigned i;

	if (cons_conf_copy(&c->raft.configuration, &conf))
		return -ENOMEM;
	for (i = 0; i < conf.n; i++)
		if (conf.servers[i].id == id)
			conf.servers[i].role = role;
	return submit_conf(c, now, &conf);
}

static bool leader_ready(const struct imexd_cons *c)
{
	raft_index ci = raft_commit_index(&c->raft);

	return ci > 0 && cons_log_term(c, ci) == c->raft.current_term;
}

/*
 * Whether the voters left once `gone` stops voting include a majority
 * heard from within an election timeout: a change that loses it never
 * commits, and the uncommitted change blocks every later one.
 */
static bool keeps_quorum(const struct imexd_cons *c, uint64_t now,
			 raft_id gone)
{
	const struct raft_configuration *conf = &c->raft.configuration;
	unsigned i, voters = 0, up = 0;

	for (i = 0; i < conf->n; i++) {
		const struct raft_server *s = &conf->servers[i];

		if (s->role != RAFT_VOTER || s->id == gone)
			continue;
		voters++;
		if (s->id == c->self || now - imexd_cons_heard(c, s->id) < c->et)
			up++;
	}
	return up >= voters / 2 + 1;
}

/* A standby heard from within an election timeout, 0 if none. */
static raft_id reachable_standby(const struct imexd_cons *c, uint64_t now)
{
	const struct raft_configuration *conf = &c->raft.configuration;
	unsigned i;

	for (i = 0; i < conf->n; i++)
		if (conf->servers[i].role == RAFT_STANDBY &&
		    now - imexd_cons_heard(c, conf->servers[i].id) < c->et)
			return conf->servers[i].id;
	return 0;
}

/* Promote standby: at once when caught up, else after a catch-up round
 * that upkeep follows. */
static int promote(struct imexd_cons *c, uint64_t now, raft_id standby)
{
	struct raft_event ev;
	raft_index match;

	if (raft_match_index(&c->raft, standby, &match) == 0 &&
	    match == raft_last_index(&c->raft))
		return change_role(c, now, standby, RAFT_VOTER);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_CATCH_UP;
	ev.catch_up.server_id = standby;
	c->promoting = standby;
	return cons_step(c, now, &ev);
}

int cons_upkeep(struct imexd_cons *c, uint64_t now)
{
	const struct raft_configuration *conf = &c->raft.configuration;
	uint64_t lost_after = (uint64_t)c->k * c->et;
	raft_id lost = 0, standby = 0, oldest = 0;
	uint64_t oldest_heard = UINT64_MAX;
	unsigned i, voters = 0;
	int status;

	if (raft_state(&c->raft) != RAFT_LEADER)
		return 0;
	if (!leader_ready(c)) {
		/* Commit an entry of this term before any change. */
		if (cons_log_term(c, cons_log_last(c)) == c->raft.current_term)
			return 0;
		return cons_submit_entry(c, now, RAFT_BARRIER, "\0\0\0\0\0\0\0\0", 8);
	}
	if (c->promoting) {
		if (raft_catch_up(&c->raft, c->promoting, &status) ||
		    status == RAFT_CATCH_UP_ABORTED) {
			c->promoting = 0;
			c->promote_backoff = now + c->et;
			return 0;
		}
		if (status != RAFT_CATCH_UP_FINISHED)
			return 0;
		if (c->raft.configuration_uncommitted_index ||
		    c->raft.leader_state.promotee_id)
			return 0;
		standby = c->promoting;
		c->promoting = 0;
		return change_role(c, now, standby, RAFT_VOTER);
	}
	if (c->raft.configuration_uncommitted_index ||
	    c->raft.leader_state.promotee_id)
		return 0;
	for (i = 0; i < conf->n; i++) {
		const struct raft_server *s = &conf->servers[i];
		uint64_t heard;

		heard = s->id == c->self ? now : imexd_cons_heard(c, s->id);
		if (s->role == RAFT_VOTER) {
			voters++;
			if (s->id != c->self && now - heard > lost_after && !lost)
				lost = s->id;
			if (s->id != c->self && heard <= oldest_heard) {
				oldest_heard = heard;
				oldest = s->id;
			}
		} else if (s->role == RAFT_STANDBY && !standby &&
			   now - heard < c->et) {
			standby = s->id;
		}
	}
	if (voters > imexd_cons_voters(conf->n) && (lost || oldest) &&
	    now >= c->self_leaving_until &&
	    keeps_quorum(c, now, lost ? lost : oldest))
		return change_role(c, now, lost ? lost : oldest, RAFT_STANDBY);
	if ((lost || voters < imexd_cons_voters(conf->n)) && standby &&
	    now >= c->promote_backoff)
		return promote(c, now, standby);
	return 0;
}

/*
 * A leave of the leader: hand leadership to an up-to-date voter heard
 * from lately (the caller retries and forwards the leave to it); with no
 * other voter, promote a reachable standby first (upkeep demotes nobody
 * meanwhile).  -EBUSY while under way, -EDEADLK when nobody can take over.
 */
static int leave_self(struct imexd_cons *c, uint64_t now)
{
	const struct raft_configuration *conf = &c->raft.configuration;
	raft_id to = 0, standby;
	struct raft_event ev;
	raft_index match;
	unsigned i;
	int rv;

	if (c->raft.leader_state.transferee)
		return -EBUSY;
	for (i = 0; i < conf->n && !to; i++) {
		const struct raft_server *s = &conf->servers[i];

		if (s->role == RAFT_VOTER && s->id != c->self &&
		    now - imexd_cons_heard(c, s->id) < c->et &&
		    raft_match_index(&c->raft, s->id, &match) == 0 &&
		    match == raft_last_index(&c->raft))
			to = s->id;
	}
	if (to) {
		memset(&ev, 0, sizeof(ev));
		ev.type = RAFT_TRANSFER;
		ev.transfer.server_id = to;
		rv = cons_finish(c, now, cons_step(c, now, &ev));
		return rv ? rv : -EBUSY;
	}
	standby = reachable_standby(c, now);
	if (!standby)
		return -EDEADLK;
	c->self_leaving_until = now + 3 * (uint64_t)c->et;
	rv = cons_finish(c, now, promote(c, now, standby));
	return rv ? rv : -EBUSY;
}

int imexd_cons_can_remove(struct imexd_cons *c, uint64_t now,
			  const char *name)
{
	raft_id id = imexd_cons_name_id(name);

	if (raft_state(&c->raft) != RAFT_LEADER)
		return -IMEXD_CONS_ENOTLEADER;
	if (!cons_is_member(c, id))
		return -ENOENT;
	if (id == c->self)
		return -EDEADLK;
	if (!keeps_quorum(c, now, id) && !reachable_standby(c, now))
		return -EHOSTUNREACH;
	return 0;
}

/*
 * Membership.  One change at a time, on a leader that committed an entry
 * of its term, never while upkeep promotes a node.
 */
int imexd_cons_change(struct imexd_cons *c, uint64_t now,
		      const char *address, bool add, uint64_t tag,
		      raft_index *index, raft_id *leader)
{
	struct raft_configuration conf;
	const struct cons_peer *p;
	const char *eq = address ? strchr(address, '=') : NULL;
	size_t len = eq ? (size_t)(eq - address) : (address ? strlen(address) : 0);
	char name[IMEXD_CONS_NAME_MAX];
	raft_id id;
	unsigned i;
	int rv = cons_begin(c, c->started && tag);

	*leader = imexd_cons_leader(c);
	if (rv)
		return rv;
	if (!len || len >= sizeof(name))
		return -EINVAL;
	memcpy(name, address, len);
	name[len] = '\0';
	if (raft_state(&c->raft) != RAFT_LEADER)
		return -IMEXD_CONS_ENOTLEADER;
	if (!leader_ready(c) || c->promoting ||
	    c->raft.configuration_uncommitted_index ||
	    c->raft.leader_state.promotee_id)
		return -EBUSY;
	id = imexd_cons_name_id(name);
	p = cons_peer_find(c, id);
	if (p && strcmp(p->name, name))
		return -EEXIST; /* another node's id */
	if (add ? cons_is_member(c, id) : !cons_is_member(c, id))
		return add ? -EALREADY : -ENOENT;
	if (!add && id == c->self)
		return leave_self(c, now);
	if (!add && !keeps_quorum(c, now, id)) {
		raft_id standby = reachable_standby(c, now);

		/* A voter more first; the caller retries. */
		if (!standby)
			return -EHOSTUNREACH;
		rv = cons_finish(c, now, promote(c, now, standby));
		return rv ? rv : -EBUSY;
	}
	if (add && c->raft.configuration.n >= IMEXD_CONS_ROSTER_MAX)
		return -ENOSPC;
	if (GROW(c, tags, n_tags, cap_tags))
		return -ENOMEM;
	if (cons_conf_copy(&c->raft.configuration, &conf))
		return -ENOMEM;
	if (add) {
		rv = raft_configuration_add(&conf, id, address, RAFT_STANDBY);
	} else {
		for (i = 0; i < conf.n && conf.servers[i].id != id; i++)
			;
		raft_free(conf.servers[i].address);
		memmove(conf.servers + i, conf.servers + i + 1,
			(conf.n - i - 1) * sizeof(*conf.servers));
		conf.n--;
	}
	if (rv) {
		raft_configuration_close(&conf);
		return cons_map_err(rv);
	}
	rv = submit_conf(c, now, &conf);
	if (rv)
		return cons_finish(c, now, rv);
	*index = cons_tag_last(c, tag);
	return cons_finish(c, now, 0);
}
