/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An in-memory cluster of consensus servers (imexd/consensus.h) for
 * tests and the simulator: deterministic time (ms), one seeded RNG,
 * messages passed as deep-copied structs with latency, loss, duplication,
 * reordering, partitions and one-way cuts; a disk per node (term/vote
 * written at once, entries and snapshots after a disk latency, lost on a
 * crash if not yet written); a trivial state machine per node (the list
 * of applied commands) and an agreement checker that fails the run at
 * the first divergence.
 */
#ifndef HARNESS_RAFT_H
#define HARNESS_RAFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consensus.h"

#define HR_NODES_MAX 16

struct hr_faults {
	unsigned latency_ms;     /* base one-way latency */
	unsigned jitter_ms;      /* + random 0..jitter: reorders */
	unsigned loss_pct;       /* messages dropped */
	unsigned dup_pct;        /* messages delivered twice */
	unsigned disk_ms;        /* entries/snapshot write latency */
};

struct hr_config {
	unsigned n;                /* nodes n0..n{n-1} */
	unsigned n_roster;         /* roster n0..: 0 all; the rest wait to be joined */
	unsigned seed;
	unsigned election_timeout_ms;
	unsigned lost_voter_timeouts;
	unsigned snapshot_threshold;
	unsigned snapshot_trailing;
	struct hr_faults faults;
};

struct hr;

/* Fails (abort via the test framework's assert) on any internal error. */
struct hr *hr_new(const struct hr_config *cfg);
void hr_free(struct hr *h);

uint64_t hr_now(const struct hr *h);
unsigned hr_seed(const struct hr *h);
void hr_set_faults(struct hr *h, const struct hr_faults *f);
/* A random number in [0, n). */
unsigned hr_rand(struct hr *h, unsigned n);

/* Run events until time t (absolute ms). */
void hr_run_until(struct hr *h, uint64_t t);
void hr_run_for(struct hr *h, uint64_t ms);
/* Run until pred(h, arg) holds (checked after each event) or the time
 * limit passes; true if it held. */
bool hr_run_until_pred(struct hr *h, uint64_t limit,
		       bool (*pred)(struct hr *h, void *arg), void *arg);

/* Nodes are 1..n (names n0..); hr_id() is node i's raft id (a hash of
 * its name), hr_node_of() the node of a raft id (0: none). */
struct imexd_cons *hr_cons(struct hr *h, raft_id id);
raft_id hr_id(const struct hr *h, unsigned i);
unsigned hr_node_of(const struct hr *h, raft_id id);
/* imexd_cons_change() at node i (its tag acked on CHANGED). */
int hr_change(struct hr *h, unsigned i, const char *address, bool add,
	      raft_index *index);
bool hr_up(const struct hr *h, raft_id id);
/* The single leader among up nodes with the highest term, 0 if none. */
raft_id hr_leader(struct hr *h);
unsigned hr_n(const struct hr *h);

/* Links: cut(a,b) drops messages from a to b. */
void hr_cut(struct hr *h, raft_id from, raft_id to, bool cut);
/* Isolate group (bitmask of ids, bit id-1) from the others both ways. */
void hr_partition(struct hr *h, uint32_t group);
void hr_heal(struct hr *h);

/* Lose everything not yet written to disk. */
void hr_crash(struct hr *h, raft_id id);
void hr_restart(struct hr *h, raft_id id);

/*
 * Submit a command at node id.  0 and *index, or the consensus error
 * (-IMEXD_CONS_ENOTLEADER ...).  The harness gives it a tag; when the
 * node applies it with that tag, the command is "acknowledged".
 */
int hr_submit(struct hr *h, raft_id id, const void *data, size_t len,
	      raft_index *index);
/* Submitted commands acknowledged / dropped so far. */
unsigned hr_acked(const struct hr *h);
unsigned hr_dropped(const struct hr *h);
/* Whether the command with these bytes was acknowledged. */
bool hr_is_acked(const struct hr *h, const void *data, size_t len);

/* Commands applied by node id (its state machine), in order. */
unsigned hr_applied_count(const struct hr *h, raft_id id);
const void *hr_applied(const struct hr *h, raft_id id, unsigned i,
		       size_t *len, raft_index *index);
/* Every up node has applied the same commands as the longest one, and
 * every acknowledged command is among them. */
bool hr_converged(struct hr *h);
/* State machines replaced from a snapshot sent by a leader so far. */
unsigned hr_restores(const struct hr *h);
/* Number of agreement violations seen (0 expected). */
unsigned hr_violations(const struct hr *h);

#endif
