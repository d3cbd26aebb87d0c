/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A deterministic world of whole node cores (imexd/node.h), driven as
 * imexd/daemon.c drives one: N nodes n000.. at "n000:50100".., each an
 * imexd_node (peers, agree, health, broker) on a raftlog over a memory
 * disk (imexd_raftlog_mem_*), with the roster of all N, a new epoch at
 * every restart, and a simulated kernel.  One seeded RNG and a virtual
 * clock (ms).
 *
 * The network carries connections, as TCP does: a node's CONNECT opens
 * one to the addressed node (or fails: conn_failed), both ends get
 * conn_up; SEND frames arrive as bytes in order within a connection and
 * are decoded with imexd_msg_decode() (the real wire codec); CLOSE, a
 * crash or a fault ends it (conn_down at the surviving end).  Faults:
 * latency and jitter (frames reorder across connections, never within
 * one); a connection reset on a frame (break_pm per mille: that frame and
 * those in flight are lost, as a drop or a duplicate would force; the
 * peers reconnect); partitions and one-way cuts (no dial crosses them; a
 * frame meeting one resets its connection); crashes at chosen steps and
 * restarts from the memory disk; disk-full on a node.
 *
 * The simulated kernel refuses what imex.ko refuses: a channel in two
 * domains, a name on two UUIDs, a domain not naming the node.  After every
 * kernel step the world checks that no channel is in two domains, and it
 * answers every step with imexd_node_kernel_done() and its domains.  It
 * keeps the last health status pushed for each domain (KERNEL_STATUS).
 *
 * The history checker records every applied entry (index -> bytes: a
 * different command at the same index anywhere is a violation) and every
 * request with its outcome; sw_check_final() asserts, after healing, that
 * every node holds the same table, equal to a replay of the committed
 * entries in which every acknowledged request has the outcome it was
 * acknowledged with, and that every member's kernel holds exactly the
 * committed definition of each domain naming it, and that its last
 * pushed status for it is READY at the committed generation.
 *
 * Every acknowledged mutation (DONE with error 0 at the node it entered)
 * is checked when it is acknowledged: its entry (index, term) must be on
 * the disks of a majority of the voters of a configuration the leader
 * that committed it counted by (the one in effect at that index in the
 * leader's log, or one it appended after it before the commit: libraft
 * counts by its latest).  If the request entered during the partition
 * still in place, those voters must also be on the acknowledging node's
 * side: a minority never completes a mutation.  (A request entered before
 * the partition may have been committed before it: then only the disks
 * count.  One-way cuts come and go between a commit and its answer, so
 * only partitions decide sides.)
 *
 * Every violation is printed with the seed; sw_violations() counts them.
 */
#ifndef SIM_WORLD_H
#define SIM_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agree.h"
#include "node.h"

#define SW_NODES_MAX 160

/* Where a node crashes (armed with sw_arm()). */
enum sw_crash_point {
	SW_CRASH_NONE = 0,
	SW_CRASH_AFTER_APPLY,	/* right after applying an entry */
	SW_CRASH_BEFORE_KERNEL,	/* a kernel step handed out, not run */
	SW_CRASH_MID_RECONCILE,	/* a kernel step run, not reported */
};

struct sw_config {
	unsigned n;
	unsigned seed;
	unsigned et_ms;		/* election timeout */
	unsigned latency_ms, jitter_ms;
	unsigned break_pm;	/* connection resets per 1000 frames */
	unsigned heartbeat_ms;	/* health; 0: 2 election timeouts */
	unsigned max_channels;	/* each node's NODE_SET */
	unsigned snapshot_threshold, snapshot_trailing;
	unsigned n_roster;	/* NODES_FILE: the first n_roster nodes; 0 all
				 * (the others wait to be joined) */
	/* Nodes of other_mask (bit i: node i) have a NODES_FILE of the
	 * other_n nodes from other_first instead (a wrong one). */
	uint32_t other_mask;
	unsigned other_first, other_n;
	const char *watch;	/* log lines holding it are counted */
	bool quiet;		/* no per-violation detail */
	/* Checker self-tests: break the world so that a check must fail. */
	bool selftest;		/* violations are expected (said so) */
	bool leak_requests;	/* connections survive partitions and
				 * carry all but raft frames across */
};

/* A request entered at a node and what became of it. */
struct sw_req {
	uint64_t tag;
	unsigned node;
	uint8_t type;
	uint64_t t_enter;
	unsigned partition;	/* partition epoch at entry (0: none) */
	bool done;
	int error;
	uint64_t index;
	char message[IMEXD_MESSAGE_MAX + 1];
	struct imexd_def def;	/* the result's domain */
};

struct sw;

/* The last health status the node pushed to its kernel for a domain. */
struct sw_status {
	uint8_t uuid[16];
	uint32_t state;
	uint64_t generation;
};


struct sw *sw_new(const struct sw_config *cfg);
void sw_free(struct sw *w);

uint64_t sw_now(const struct sw *w);
unsigned sw_n(const struct sw *w);
unsigned sw_seed(const struct sw *w);
unsigned sw_rand(struct sw *w, unsigned n);
const char *sw_name(const struct sw *w, unsigned i);
unsigned sw_violations(const struct sw *w);
void sw_violation(struct sw *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Run events until time t. */
void sw_run_until(struct sw *w, uint64_t t);
void sw_run_for(struct sw *w, uint64_t ms);
/* Run until pred holds (checked after each event) or ms pass. */
bool sw_run_pred(struct sw *w, uint64_t ms, bool (*pred)(struct sw *w));

/* Nodes (0-based). */
bool sw_up(const struct sw *w, unsigned i);
struct imexd_node *sw_node(struct sw *w, unsigned i);
const struct imexd_fsm *sw_fsm(struct sw *w, unsigned i);
void sw_crash(struct sw *w, unsigned i);
/* Node i left the group for good: down, never restarted, out of the
 * convergence and table checks. */
void sw_retire(struct sw *w, unsigned i);
bool sw_retired(const struct sw *w, unsigned i);
void sw_restart(struct sw *w, unsigned i);
void sw_arm(struct sw *w, unsigned i, enum sw_crash_point p);
/* Disk of node i full (true) or not. */
void sw_disk_full(struct sw *w, unsigned i, bool full);
/* Self-test only: crash node i and give it an empty disk (a disk that
 * lost what it had acknowledged: outside what raft survives). */
void sw_disk_lose(struct sw *w, unsigned i);
/* Node i's consensus server (NULL while down). */
const struct imexd_cons *sw_cons(const struct sw *w, unsigned i);
/* Connections node i bound to node j (its transport took j's HELLO). */
unsigned sw_bound(const struct sw *w, unsigned i, unsigned j);
/* Log lines of node i that held cfg.watch so far. */
unsigned sw_watched(const struct sw *w, unsigned i);
/* Node i's raft log (NULL while down). */
const struct imexd_raftlog *sw_log(const struct sw *w, unsigned i);
/* The node's kernel domains. */
const struct imexd_def *sw_kernel(const struct sw *w, unsigned i, size_t *n);
/* Whether domain @d holds channel @id (in any order). */
bool sw_has_channel(const struct imexd_def *d, uint32_t id);
/* The leader (highest term among up nodes), -1 if none. */
int sw_leader(struct sw *w);

/* Network: group is a bitmask array of n bools (side A true). */
void sw_partition(struct sw *w, const bool *side);
void sw_cut(struct sw *w, unsigned from, unsigned to, bool cut);
void sw_heal(struct sw *w);

/* Enter a request at node i (its req_id is set here); returns its record
 * (stable until sw_free), NULL if the node is down. */
struct sw_req *sw_request(struct sw *w, unsigned i, struct imexd_request *req);
/* The last status node i pushed to its kernel for domain @uuid, NULL if
 * none since it started. */
const struct sw_status *sw_status_of(const struct sw *w, unsigned i,
				     const uint8_t uuid[16]);
size_t sw_nreqs(const struct sw *w);
struct sw_req *sw_req_at(struct sw *w, size_t k);

/* All up, healed nodes synced, same table, kernels reconciled. */
bool sw_converged(struct sw *w);
/* Heal, restart every node, clear full disks, run to convergence (bounded),
 * then check the history; returns the violations so far. */
unsigned sw_check_final(struct sw *w);

/* Figures. */
struct sw_stats {
	unsigned long msgs, delivered, raft_msgs, conns, resets, applied, acked, failed, crashes, kernel_steps,
		kernel_refused, storage_stops;
	unsigned long bad_acks;	/* acknowledgements the check refused */
	unsigned long breaks;	/* resets of them at random (break_pm) */
	uint64_t last_break;	/* when the last of them was (ms) */
};
const struct sw_stats *sw_stats(const struct sw *w);

#endif /* SIM_WORLD_H */
