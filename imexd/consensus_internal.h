/* SPDX-License-Identifier: GPL-2.0 */
/*
 * consensus's internals, shared by consensus*.c.  Not an interface.
 */
#ifndef IMEXD_CONSENSUS_INTERNAL_H
#define IMEXD_CONSENSUS_INTERNAL_H

#include "consensus.h"
#include "grow.h"

struct cons_entry {
	raft_term term;
	enum raft_entry_type type;
	void *buf;
	size_t len;
};

/* An entries write handed out and not yet reported durable. */
struct cons_write {
	raft_index first;
	unsigned n;
	raft_term *terms;
	bool bootstrap; /* raft already counts it stored */
};

struct cons_tag {
	uint64_t tag;
	raft_index index;
	raft_term term;
};

struct cons_scratch {
	void *p;
	bool conf; /* p is a struct raft_configuration to close */
};

/* A node this server can name: the roster's and every configuration's. */
struct cons_peer {
	raft_id id;
	char *name;
	char *addr;     /* from a join entry ("name=addr"); NULL: none */
	uint64_t heard; /* last message from it */
	bool roster;
};

struct cons_snap {
	bool have;
	struct raft_snapshot_metadata meta; /* configuration owned */
	void *data;
	size_t len;
};

struct imexd_cons {
	struct raft raft;
	bool started;
	bool self_in_roster;
	uint64_t group; /* group id, 0: none yet */
	char **names; /* the roster (n), sorted: the bootstrap entry's order */
	raft_id self;
	struct cons_peer *peers; /* sorted by id; bounded by ROSTER_MAX */
	size_t n_peers, cap_peers;
	raft_index known_conf[2]; /* configuration indexes peers were learnt at */
	unsigned n, et, k, snap_threshold, snap_trailing;

	struct cons_entry *log;
	size_t log_n, log_cap;
	raft_index log_start; /* index of log[0] */

	struct cons_snap snap;
	struct cons_snap install; /* received, being persisted */
	bool installing;
	bool taking;
	struct raft_snapshot_metadata take_meta;

	raft_index applied;

	struct cons_write *writes;
	size_t n_writes, cap_writes;

	struct cons_tag *tags;
	size_t n_tags, cap_tags;

	struct imexd_cons_action *actions;
	size_t n_actions, cap_actions, next_action;
	struct cons_scratch *scratch;
	size_t n_scratch, cap_scratch;

	struct raft_event *events; /* follow-up events (configurations) */
	size_t n_events, cap_events;

	/* Upkeep (leader). */
	raft_id promoting;
	uint64_t promote_backoff;
	uint64_t self_leaving_until;	/* a leave of this leader: no demotion */

	/* Last reported status. */
	int rep_state;
	raft_term rep_term;
	raft_id rep_leader;

	bool refused; /* the last raft_step() failed: inputs still ours */
	raft_index pushed; /* commit index last sent to followers at once */
};

/* Room for one more element in c->arr (c->n held, capacity c->cap). */
#define GROW(c, arr, n, cap) \
	imexd_grow((void **)&(c)->arr, &(c)->cap, (c)->n + 1, sizeof(*(c)->arr))

/* consensus_peers.c */
int cons_peer_add(struct imexd_cons *c, raft_id id, const char *address,
		  bool roster);
void cons_snap_clear(struct cons_snap *s);
int cons_conf_copy(const struct raft_configuration *src,
		   struct raft_configuration *dst);
void cons_group_from(struct imexd_cons *c, raft_index index,
		     const struct raft_entry *e);
bool cons_is_member(const struct imexd_cons *c, raft_id id);
struct cons_peer *cons_peer_find(const struct imexd_cons *c, raft_id id);
int cons_cmp_name(const void *a, const void *b);
int cons_peers_learn(struct imexd_cons *c);

/* consensus_log.c */
void cons_scratch_free(struct imexd_cons *c);
void cons_log_truncate(struct imexd_cons *c, raft_index from);
int cons_begin(struct imexd_cons *c, bool ok);
struct imexd_cons_action *cons_push(struct imexd_cons *c,
				    enum imexd_cons_action_type type);
int cons_push_snap(struct imexd_cons *c, enum imexd_cons_action_type type,
		   const struct cons_snap *s);
int cons_log_append(struct imexd_cons *c, const struct raft_entry *e);
struct raft_entry *cons_entries_out(struct imexd_cons *c, raft_index index,
				    unsigned n);
raft_term cons_log_term(const struct imexd_cons *c, raft_index i);
void cons_log_compact(struct imexd_cons *c, raft_index upto);
raft_index cons_log_last(const struct imexd_cons *c);
int cons_scratch_add(struct imexd_cons *c, void *p, bool conf);
void *cons_scratch_dup(struct imexd_cons *c, const void *p, size_t len);
const struct cons_entry *cons_log_get(const struct imexd_cons *c,
				      raft_index i);
int cons_maybe_take_snapshot(struct imexd_cons *c);

/* consensus_step.c */
int cons_map_err(int rv);
int cons_finish(struct imexd_cons *c, uint64_t now, int rv);
int cons_broadcast(struct imexd_cons *c, uint64_t now);
int cons_settle_tags(struct imexd_cons *c, raft_index index,
		     raft_term term, struct imexd_cons_action *apply);
int cons_submit_entry(struct imexd_cons *c, uint64_t now,
		      enum raft_entry_type type, const void *data,
		      size_t len);
raft_index cons_tag_last(struct imexd_cons *c, uint64_t tag);
int cons_step(struct imexd_cons *c, uint64_t now, struct raft_event *ev);

/* consensus_member.c */
int cons_upkeep(struct imexd_cons *c, uint64_t now);

#endif /* IMEXD_CONSENSUS_INTERNAL_H */
