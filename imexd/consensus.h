/* SPDX-License-Identifier: GPL-2.0 */
/*
 * consensus: one Raft server of an NVLink domain's group, on libraft
 * 0.22.1 driven through raft_step() (sans I/O).  Events go in (start,
 * message received, timer, entries/snapshot persisted, submit); actions
 * come out as a tagged union, drained in order with imexd_cons_next().
 * No sockets, clock, files or threads: time is passed in as ms.
 *
 * Ids and members: a node's raft id is a hash of its name
 * (imexd_cons_name_id), the same on every node whatever the roster; two
 * names of one id are refused (at new and at a join).  A server's raft
 * address is its name, or "name=addr" when a join gave an address.  The
 * roster (NODES_FILE) only forms the first configuration and names nodes;
 * after that the configuration in the log is the authority: nodes it adds
 * are learnt from it.  Vote requests are taken only from members of the
 * current configuration (a node in none, waiting to be joined or
 * removed, takes them from any node); other messages from any node the
 * caller knows (imexd_cons_learn: the transport authenticated it).
 *
 * Bootstrap: a node of the roster that starts with nothing stored (no
 * snapshot, no entries) begins from entry 1 = the initial configuration
 * (term 1): the first imexd_cons_voters(n) names in sorted order are
 * voters (both of two names: a node never leads alone unless it is the
 * roster's only name), the rest standby.  That entry is identical on
 * every node, so no node has to be "first"; it is handed out once with a
 * PERSIST_ENTRIES action.  A node outside its roster starts empty and never campaigns: it
 * waits until a leader adds it (imexd_cons_change), so a new node can
 * never form a second group with the same names.
 *
 * Group id: every group has one, a hash of its bootstrap entry
 * (imexd_cons_group_id), the same on every node that wrote or received
 * that entry, and different for a node whose NODES_FILE named other
 * nodes at first start: Raft alone cannot tell two entries at (term 1,
 * index 1) apart, so the transport compares group ids (HELLO) and refuses
 * a peer of another group.  It is fixed at bootstrap, derived from entry 1
 * of a stored log, or given by storage (a snapshot compacts entry 1 away);
 * a node with none (waiting to be joined, or a log of an older imexd)
 * takes its group's from entry 1 when it receives it, or from the caller
 * (imexd_cons_set_group: the id of the leader that joined it).  The caller
 * persists it (imexd_raftlog_set_group) when imexd_cons_group() changes.
 *
 * Membership changes (imexd_cons_change): one server added (as standby)
 * or removed per configuration entry, on a leader, one at a time; voter
 * upkeep then keeps imexd_cons_voters(members) voters.
 *
 * Voter upkeep (leader only): keep imexd_cons_voters(n) voters.  When a
 * voter has not been heard from for lost_voter_timeouts election timeouts
 * and a standby was heard from within one election timeout, the standby is
 * caught up and promoted, then the lost voter demoted to standby: one
 * configuration change at a time, and only after the leader has committed
 * an entry of its own term (a barrier, submitted here when needed).
 *
 * libraft 0.22.1 workarounds (each found by tests/imexd/raft/sim_agree, see
 * consensus*.c): every committed configuration entry is recorded as the
 * committed configuration (raft skips those it does not expect); a
 * snapshot carries the last configuration entry it covers; a refused
 * pre-vote is answered with this server's term, so a candidate learns it.
 *
 * Out-of-memory policy: a failed allocation returns -ENOMEM from the input
 * call; the daemon treats it as fatal for that event (the raft state may
 * have advanced, so the daemon restarts the server from storage).
 */
#ifndef IMEXD_CONSENSUS_H
#define IMEXD_CONSENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <raft.h>

/* Voters and roster size. */
#define IMEXD_CONS_VOTERS_MAX 5
#define IMEXD_CONS_ROSTER_MAX 1024

/* Returned by imexd_cons_submit() on a node that is not the leader. */
#define IMEXD_CONS_ENOTLEADER EREMOTE

struct imexd_cons;

struct imexd_cons_config {
	const char *const *roster; /* node names, any order, no duplicates */
	unsigned n_roster;
	const char *self;          /* this node's name, in the roster */
	unsigned election_timeout_ms;  /* 0: 1000 */
	unsigned heartbeat_timeout_ms; /* 0: election timeout / 10 */
	unsigned lost_voter_timeouts;  /* K; 0: 10 */
	unsigned snapshot_threshold;   /* applied entries between snapshots; 0: never */
	unsigned snapshot_trailing;    /* entries kept behind a snapshot */
	unsigned seed;                 /* election timer randomness */
};

/*
 * What storage loaded (imexd_raftlog): everything is copied, nothing is
 * taken over.  snapshot NULL when none; then snapshot_data is ignored.
 */
struct imexd_cons_start {
	raft_term term;
	raft_id voted_for;
	const struct raft_snapshot_metadata *snapshot;
	const void *snapshot_data;
	size_t snapshot_len;
	raft_index start_index; /* index of entries[0]; 1 without snapshot */
	const struct raft_entry *entries;
	unsigned n_entries;
	uint64_t group; /* the stored group id, 0: none */
};

enum imexd_cons_action_type {
	/* Store term + vote durably before handling any later action. */
	IMEXD_CONS_PERSIST_TERM_VOTE = 1,
	/* Drop stored entries from index on, append these; when durable call
	 * imexd_cons_persisted(index + n - 1).  Complete them in order. */
	IMEXD_CONS_PERSIST_ENTRIES,
	/* Replace log and snapshot by this snapshot (sent by the leader);
	 * when durable call imexd_cons_snapshot_persisted(). */
	IMEXD_CONS_PERSIST_SNAPSHOT,
	/* Send msg to node `to` (name `to_name`). */
	IMEXD_CONS_SEND,
	/* Replace the state machine by the snapshot blob (index = its last
	 * entry): after an installed snapshot. */
	IMEXD_CONS_RESTORE,
	/* Apply a committed command.  tag != 0: submitted here with that tag;
	 * answer the submitter with the state machine's result. */
	IMEXD_CONS_APPLY,
	/* A submitted command that will never apply (lost with its term). */
	IMEXD_CONS_DROPPED,
	/* Encode the state machine now (it is at index), store it with this
	 * metadata, then call imexd_cons_snapshot_taken() with the blob. */
	IMEXD_CONS_TAKE_SNAPSHOT,
	/* Raft state, term or known leader changed (logs, status). */
	IMEXD_CONS_STATE,
	/* A configuration entry committed (apply.index, apply.term;
	 * apply.tag != 0: submitted here with imexd_cons_change). */
	IMEXD_CONS_CHANGED,
};

/*
 * Pointers inside an action stay valid until the next input call.  Drain
 * every action before the next input (else it returns -EBUSY); after a
 * TAKE_SNAPSHOT the next input must be imexd_cons_snapshot_taken().
 */
struct imexd_cons_action {
	enum imexd_cons_action_type type;
	union {
		struct {
			raft_term term;
			raft_id voted_for;
		} term_vote;
		struct {
			raft_index index;
			const struct raft_entry *entries; /* batch NULL */
			unsigned n;
		} entries;
		struct {
			const struct raft_snapshot_metadata *metadata;
			const void *data;
			size_t len;
		} snapshot; /* PERSIST_SNAPSHOT, RESTORE, TAKE_SNAPSHOT (no data) */
		struct {
			raft_id to;
			const char *to_name;
			const struct raft_message *msg; /* entries' batch NULL */
		} send;
		struct {
			raft_index index;
			raft_term term;
			const void *data;
			size_t len;
			uint64_t tag;
		} apply; /* APPLY, CHANGED (no data) */
		struct {
			uint64_t tag;
			raft_index index; /* where it was submitted */
		} dropped;
		struct {
			enum raft_state state;
			raft_term term;
			raft_id leader; /* 0: unknown */
			const char *leader_name;
		} state;
	};
};

/* Number of voters for a roster of n nodes: the largest odd number
 * <= min(n, IMEXD_CONS_VOTERS_MAX). */
unsigned imexd_cons_voters(unsigned n);

/* Longest node name + 1. */
#define IMEXD_CONS_NAME_MAX 64

/* The raft id of a node name (63-bit FNV-1a, never 0). */
raft_id imexd_cons_name_id(const char *name);
/* raft id of a known name (roster, self, any configuration seen), 0 when
 * unknown; and back (NULL).  addr: the address a join gave, or NULL. */
raft_id imexd_cons_id(const struct imexd_cons *c, const char *name);
const char *imexd_cons_name(const struct imexd_cons *c, raft_id id);
const char *imexd_cons_addr(const struct imexd_cons *c, raft_id id);
/* Know node `name` (a sender the transport authenticated): its id, or
 * 0 (bad name, its id another node's, the table full, no memory). */
raft_id imexd_cons_learn(struct imexd_cons *c, const char *name);
/* When a raft message from a known node came last (0: unknown). */
uint64_t imexd_cons_heard(const struct imexd_cons *c, raft_id id);
/* The current (latest, maybe uncommitted) configuration, and the index
 * of the entry (or snapshot) it came from (0: none). */
const struct raft_configuration *imexd_cons_members(const struct imexd_cons *c);
raft_index imexd_cons_members_index(const struct imexd_cons *c);

/* The group id of a bootstrap entry (its encoded configuration): 64-bit
 * FNV-1a of the bytes, never 0. */
uint64_t imexd_cons_group_id(const void *entry, size_t len);
/* This server's group id, 0 while it has none. */
uint64_t imexd_cons_group(const struct imexd_cons *c);
/* Take group id @group (not 0) when this server has none: 0, or -EEXIST
 * (it has another), -EINVAL. */
int imexd_cons_set_group(struct imexd_cons *c, uint64_t group);

/* Allocate a server.  -EINVAL: bad roster (duplicate, empty, a name with
 * '=', two names of one id, too many), -ENOMEM.  self need not be in the
 * roster (it then waits to be joined).  The roster is copied. */
int imexd_cons_new(const struct imexd_cons_config *cfg, struct imexd_cons **out);
void imexd_cons_free(struct imexd_cons *c);

/*
 * Inputs.  Each returns 0 or a negative errno; actions queue up.
 *
 * Start: the caller's state machine must be at the stored snapshot (or
 * empty without one); APPLY actions continue from the entry after it.
 * Without a snapshot threshold the in-memory log is never compacted: the
 * daemon sets one.
 */
int imexd_cons_start(struct imexd_cons *c, uint64_t now,
		     const struct imexd_cons_start *st);
/* msg: decoded message from node `from` (authenticated by the transport,
 * shape checked by the codec).  Ownership as raft_step() takes it: the
 * entries' batch and an install-snapshot's conf and data pass to the
 * server (also on error); the entries array and msg stay the caller's.
 * -EINVAL: from is not in the roster, or is this node. */
int imexd_cons_receive(struct imexd_cons *c, uint64_t now, raft_id from,
		       struct raft_message *msg);
/* The time imexd_cons_timeout() returned has come. */
int imexd_cons_tick(struct imexd_cons *c, uint64_t now);
/* Leader: every follower gets an AppendEntries (the commit index) now,
 * not at its next heartbeat, e.g. when a node comes back.  Others: no
 * effect. */
int imexd_cons_heartbeat(struct imexd_cons *c, uint64_t now);
int imexd_cons_persisted(struct imexd_cons *c, uint64_t now, raft_index last);
int imexd_cons_snapshot_persisted(struct imexd_cons *c, uint64_t now);
int imexd_cons_snapshot_taken(struct imexd_cons *c, uint64_t now,
			      const void *data, size_t len);
/*
 * Submit one encoded command with a caller tag (not 0).  0 and *index on
 * success: the tag comes back exactly once, on an APPLY of that index
 * (committed) or a DROPPED (another leader's entry took the index, or an
 * installed snapshot covered it: outcome unknown, ask the state machine).
 * A submit accepted by a leader cut off from its majority neither applies
 * nor drops until it learns the new leader's log: the caller times out.
 * -IMEXD_CONS_ENOTLEADER: not the leader; *leader is the leader's id (0
 * when unknown) so the caller forwards.  *leader is set on every return.
 */
int imexd_cons_submit(struct imexd_cons *c, uint64_t now, const void *data,
		      size_t len, uint64_t tag, raft_index *index,
		      raft_id *leader);

/*
 * Add node `address` ("name" or "name=addr") as standby (add), or remove
 * node "name" (!add), tagged like a submit: the tag comes back on the
 * CHANGED action of its entry, or DROPPED.  -IMEXD_CONS_ENOTLEADER (with
 * *leader), -EBUSY (a change under way, or the leader has not committed
 * an entry of its term yet: retry), -EALREADY (already a member), -ENOENT
 * (not a member), -EEXIST (its id is another node's), -EDEADLK (removing
 * the leader itself with no other node to take over: else leadership
 * moves to an up-to-date voter, after promoting a standby if there is no
 * other voter, and this returns -EBUSY meanwhile), -ENOSPC (IMEXD_CONS_ROSTER_MAX members), -EINVAL.
 * A removal must leave a majority of the remaining voters heard from
 * within an election timeout: else a reachable standby is promoted first
 * (-EBUSY: retry), or -EHOSTUNREACH when there is none.
 */
int imexd_cons_change(struct imexd_cons *c, uint64_t now,
		      const char *address, bool add, uint64_t tag,
		      raft_index *index, raft_id *leader);

/* Whether imexd_cons_change() could remove node `name` now, as far as
 * this leader can tell: 0, or the error it would return (-EHOSTUNREACH,
 * -EDEADLK, -ENOENT, -IMEXD_CONS_ENOTLEADER). */
int imexd_cons_can_remove(struct imexd_cons *c, uint64_t now,
			  const char *name);

/* Next action; false when none is left. */
bool imexd_cons_next(struct imexd_cons *c, struct imexd_cons_action *a);

/* When to call imexd_cons_tick() next (absolute ms). */
uint64_t imexd_cons_timeout(const struct imexd_cons *c);

enum raft_state imexd_cons_state(const struct imexd_cons *c);
raft_id imexd_cons_leader(const struct imexd_cons *c);
raft_term imexd_cons_term(const struct imexd_cons *c);
raft_index imexd_cons_applied(const struct imexd_cons *c);
/* The commit index this server knows (a follower learns it from the
 * leader). */
raft_index imexd_cons_commit(const struct imexd_cons *c);
/* Role of node id in the current configuration (RAFT_VOTER, RAFT_STANDBY,
 * RAFT_SPARE) or -1. */
int imexd_cons_role(const struct imexd_cons *c, raft_id id);
raft_id imexd_cons_self(const struct imexd_cons *c);

#endif
