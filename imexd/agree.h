/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agree: one node's agreement part.  Composes consensus (raft_step
 * driver), raftlog (durable storage, called synchronously through the
 * handle the caller injects), fsm (the replicated domain table) and the
 * reconciler (what this node's kernel must be told).  Pure: no sockets,
 * clock, netlink or threads; time is passed in as ms.  Events go in
 * (start, raft bytes from a peer, timer, admin request, forwarded request,
 * a peer's reply, kernel step result); actions come out as a tagged union,
 * drained in order with imexd_agree_next().
 *
 * Requests.  An admin request (an fsm command + the caller's tag) is
 * submitted to the log on the leader.  On a follower it is sent to the
 * leader (FORWARD); the leader submits it (imexd_agree_forwarded()) and
 * REPLYs when it applied; the follower then reports DONE.  A forwarded
 * request is served only when the sender's own kernel could have asked
 * it: its own NODE_SET, a create naming it, a change to a domain the table
 * has naming it; else EACCES (logged at most once a minute).  At most
 * IMEXD_AGREE_SERVE_PER_PEER of one peer's requests are held at once; the
 * next is answered EBUSY.  A request is
 * handed to at most one leader, once: it is never re-sent after it may
 * have been submitted (a count allocation must not happen twice).  With no
 * leader known it waits.  Every request ends with exactly one DONE: the
 * fsm's result, or after request_timeout_ms a failure that says why
 * ("no quorum: 2 of 5 voters reachable (n3, n4, n5 unreachable)" when
 * voters have not been heard from, else "timed out: outcome unknown").
 * Channel ids of a request are sorted and deduplicated before submit.
 * FORWARD tags are unique across restarts as long as the start time (ms)
 * grows and fewer than 65536 requests pass in one run: a late REPLY meant
 * for the node's previous run never answers a new request.
 *
 * Identity.  Once a leader is known, the node reports its fabric identity
 * (NODE_SET) through the log if the table does not hold it yet.
 *
 * Kernel.  After every applied entry and every reconcile_period_ms the
 * node plans (imexd_rec_plan) from the committed table and the kernel's
 * domains, and hands out one KERNEL step at a time; the caller runs it and
 * reports imexd_agree_kernel_done() with the kernel's domains re-read.  A
 * refused step is skipped for the rest of the round and retried in the
 * next.  Planning waits until the node is caught up: it has applied an
 * entry of the current term (every leader commits one), so a restarted
 * node never takes its kernel back to an older state.
 *
 * Storage.  Term/vote, entries and snapshots are written through the
 * raftlog before anything that depends on them goes out.  A write error
 * (disk full) stops the raft server: the node logs it, stays silent
 * (its peers see it as down) and restarts the server from what storage
 * holds after one election timeout, until writes succeed again.  The
 * kernel keeps what it holds meanwhile.
 *
 * Out-of-memory policy: a failed allocation returns -ENOMEM from the input
 * call; as for a storage error the raft server is restarted from storage
 * at the next timer, so no half-applied state survives.
 */
#ifndef IMEXD_AGREE_H
#define IMEXD_AGREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consensus.h"
#include "fsm.h"
#include "logfields.h"
#include "raftlog.h"
#include "reconcile.h"

/*
 * A peer's forwarded requests held at once (submitted, not yet applied or
 * timed out).  Its kernel queues at most IMEX_REQS_MAX; twice that leaves
 * room for requests whose answer was lost (checked in agree_serve.c).
 */
#define IMEXD_AGREE_SERVE_PER_PEER	128
#include "wire.h"

struct imexd_agree;

struct imexd_agree_config {
	const char *const *roster;	/* node names, as for consensus */
	unsigned n_roster;
	const char *self;
	/* NODE_SET contents (name is self's). */
	struct imexd_fsm_node identity;
	struct imexd_raftlog *log;	/* borrowed; must outlive the node */
	unsigned election_timeout_ms;	/* 0: 1000 */
	unsigned heartbeat_timeout_ms;	/* 0: election / 10 */
	unsigned lost_voter_timeouts;	/* 0: 10 */
	unsigned snapshot_threshold;	/* 0: 256 */
	unsigned snapshot_trailing;	/* 0: 64 */
	unsigned request_timeout_ms;	/* 0: 5 election timeouts */
	unsigned reconcile_period_ms;	/* 0: 5 election timeouts */
	unsigned seed;
};

enum imexd_agree_action_type {
	/* Raft message bytes (raftwire) for peer node `to`. */
	IMEXD_AGREE_SEND = 1,
	/* A request for leader `to`: tag + encoded command; the peer calls
	 * imexd_agree_forwarded() with them. */
	IMEXD_AGREE_FORWARD,
	/* The answer to a forwarded request, for peer `to`: it calls
	 * imexd_agree_reply() with tag, error, message, def. */
	IMEXD_AGREE_REPLY,
	/* A local admin request is done (tag: the caller's). */
	IMEXD_AGREE_DONE,
	/* Run this kernel step, then call imexd_agree_kernel_done(). */
	IMEXD_AGREE_KERNEL,
	/* A committed command was applied to the table (index, bytes,
	 * result): for logs and for checkers. */
	IMEXD_AGREE_APPLIED,
	/* A line for the log (level as syslog: 3 error, 4 warning, 6 info). */
	IMEXD_AGREE_LOG,
	/* Raft state, term or leader changed. */
	IMEXD_AGREE_STATE,
	/* This leader checks a joining node itself: dial node `to` (at
	 * address `message`, "" for the known one), wait for its HELLO,
	 * then call imexd_agree_join_checked() with tag and the HELLO's
	 * fabric identity (or an error after the wait). */
	IMEXD_AGREE_JOIN_CHECK,
};

/* Pointers in an action stay valid until the next input call. */
struct imexd_agree_action {
	enum imexd_agree_action_type type;
	struct imexd_log_fields fields;	/* LOG: msgid NULL: none */
	const char *to;			/* SEND, FORWARD, REPLY, JOIN_CHECK */
	uint64_t tag;			/* FORWARD, REPLY, DONE, JOIN_CHECK */
	const uint8_t *data;		/* SEND, FORWARD, APPLIED */
	size_t len;
	/* DONE, REPLY, APPLIED: outcome; def the domain after the change
	 * (zeroed if none); index the log index (0: not committed). */
	int error;			/* 0 or a positive errno */
	const char *message;		/* "" on success; LOG: the line */
	const struct imexd_def *def;
	uint64_t index;
	/* DONE, REPLY, APPLIED: channel ids granted or freed (increasing) */
	const uint32_t *ids;
	uint32_t nids;
	/* KERNEL */
	enum imexd_rec_type step;	/* def: the domain to SET/REMOVE */
	const struct imexd_def *was;	/* SET: the kernel's now, NULL: none */
	/* LOG */
	int level;
	/* STATE */
	enum raft_state state;
	raft_term term;
	const char *leader;		/* NULL: unknown */
};

/* 0, -EINVAL (bad roster or identity, no log), -ENOMEM. */
int imexd_agree_new(const struct imexd_agree_config *cfg,
		    struct imexd_agree **out);
void imexd_agree_free(struct imexd_agree *a);

/*
 * Inputs.  Each returns 0 or a negative errno; drain the actions (all of
 * them) before the next input (else -EBUSY).
 *
 * Start from what the raftlog holds, with the kernel's domains now.
 * -ESTALE: the log's group is not this roster's (a LOG action says how).
 */
int imexd_agree_start(struct imexd_agree *a, uint64_t now,
		      const struct imexd_def *kernel, size_t n);
/* Raft bytes from peer `from` (authenticated by the transport).  Bad
 * bytes are logged and dropped (0). */
int imexd_agree_receive(struct imexd_agree *a, uint64_t now, const char *from,
			const uint8_t *buf, size_t len);
/* The time imexd_agree_timeout() named has come. */
int imexd_agree_tick(struct imexd_agree *a, uint64_t now);
/* The transport bound a connection to node @name: if this node leads,
 * every follower hears the commit index now (a node back from a restart
 * applies its log without waiting for the leader's next heartbeat). */
int imexd_agree_peer_up(struct imexd_agree *a, uint64_t now, const char *name);
/* What was sent to node @name may be lost (its connection was replaced
 * by a duplicate): requests forwarded to it go again where a repeat is
 * harmless, others are answered EAGAIN now rather than at their timeout. */
int imexd_agree_peer_replaced(struct imexd_agree *a, uint64_t now,
			      const char *name);
/* "no quorum: 2 of 5 voters reachable (n3, n4, n5 unreachable)", or ""
 * when a majority of voters was heard from lately.  A view: no actions. */
void imexd_agree_quorum(struct imexd_agree *a, uint64_t now, char *buf,
			size_t size);
uint64_t imexd_agree_timeout(const struct imexd_agree *a);
/* An admin request; the tag (caller's, any value) comes back on DONE. */
int imexd_agree_request(struct imexd_agree *a, uint64_t now,
			const struct imexd_cmd *cmd, uint64_t tag);
/* A request peer `from` forwarded (FORWARD's tag and bytes). */
int imexd_agree_forwarded(struct imexd_agree *a, uint64_t now,
			  const char *from, uint64_t tag,
			  const uint8_t *cmd, size_t len);
/*
 * The answer to JOIN_CHECK `tag`: the joining node's HELLO reported this
 * fabric identity (error 0), or it did not connect (error EHOSTUNREACH,
 * or another errno).  The leader takes a joining node's identity only
 * from here, never from the request.
 */
int imexd_agree_join_checked(struct imexd_agree *a, uint64_t now,
			     uint64_t tag, const uint8_t fabric_uuid[16],
			     uint32_t partition, int error);

/* The leader's answer to a FORWARD (REPLY's fields); late ones ignored. */
int imexd_agree_reply(struct imexd_agree *a, uint64_t now, const char *from,
		      uint64_t tag, int error, const char *message,
		      const struct imexd_def *def, uint64_t index,
		      const uint32_t *ids, uint32_t nids);
/* The last KERNEL step's result (0 or a positive errno) and the kernel's
 * domains re-read. */
int imexd_agree_kernel_done(struct imexd_agree *a, uint64_t now, int error,
			    const struct imexd_def *kernel, size_t n);

bool imexd_agree_next(struct imexd_agree *a, struct imexd_agree_action *act);

/*
 * The Raft group id (consensus.h), 0 while none: the transport sends it
 * in HELLO and refuses peers of another.  A node with none takes @group,
 * the id of the peer that sends it Raft traffic (the leader that joined
 * it), and stores it; with one already, nothing changes.
 */
uint64_t imexd_agree_group(const struct imexd_agree *a);
int imexd_agree_adopt_group(struct imexd_agree *a, uint64_t now,
			    uint64_t group);

/* Views for status and checkers. */
const struct imexd_fsm *imexd_agree_fsm(const struct imexd_agree *a);
/* NULL while storage failed (the server is down until restarted). */
const struct imexd_cons *imexd_agree_cons(const struct imexd_agree *a);
/* Commands submitted here (as the leader): submit to commit, in ms. */
struct imexd_metrics_hist;
const struct imexd_metrics_hist *
imexd_agree_commit_latency(const struct imexd_agree *a);
/* Is the node caught up (see Kernel above) and its kernel converged? */
bool imexd_agree_synced(const struct imexd_agree *a);
bool imexd_agree_reconciled(const struct imexd_agree *a);

#endif /* IMEXD_AGREE_H */
