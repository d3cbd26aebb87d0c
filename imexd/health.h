/* SPDX-License-Identifier: GPL-2.0 */
/*
 * health: the node core's peer-to-peer health part.  Among the members of
 * each domain naming this node (never through the raft log) it sends
 * heartbeats, keeps every peer's state and reported view, and decides each
 * domain's state, pushed to the kernel with STATUS actions.  Pure: no
 * sockets, clock or threads.
 *
 * Peer states (enum imex_member_state): NEVER_CONNECTED until first
 * contact; CONNECTED from PEER_UP (the transport bound a connection) or a
 * heartbeat; RECOVERING once miss_count x heartbeat_ms pass without a
 * heartbeat, or the connection drops; DISCONNECTED after grace_ms more
 * (grace_ms -1: never, 0: at once); VERSION_MISMATCH and REFUSED (TLS
 * names, another group) from the transport.  Each state keeps why and
 * since when, pushed with the status (reason, since) in words an operator
 * acts on: "never connected since T", "heartbeat lost at T, grace time
 * running", "connection closed by the peer at T, grace time of N ms
 * over", the transport's words for VERSION_MISMATCH and REFUSED; the
 * domain's reason names the first member not connected and why (or the
 * agreement layer's, imexd_health_set_quorum()).  Times are the wall
 * clock's (imexd_health_set_wall()), in ISO 8601 UTC.
 *
 * Heartbeats go every heartbeat_ms to each connected peer that shares a
 * domain with this node, at once on a new connection, and when what they
 * carry changes at the end of the turn (imexd_health_deadline() comes at
 * once: the caller's timer, run when the inputs at hand are done, sends
 * one heartbeat with all the turn changed), up to 4 at once and then one
 * per heartbeat_ms / 10 per peer.  A peer's first report since it
 * connected, or the first that shows it holding a shared domain, gets
 * ours again: it may have dropped what we sent before it knew the domain.
 * A heartbeat to peer X carries
 * this node's view of the members of the domains it shares with X, and
 * for each of those domains the generation this node's kernel holds
 * (imexd_health_applied()).
 *
 * READY: a domain is READY when every member is CONNECTED in this node's
 * view and in every member's reported view, and every member (this node
 * included) reported holding the committed generation
 * (imexd_health_set_domains()); otherwise DEGRADED.  A member that lags or
 * failed to apply therefore shows as DEGRADED, never as READY.
 *
 * Status pushes: a new state (READY, DEGRADED, generation) at once, up to
 * 4 at once and then one per domain per heartbeat_ms / 50; a change of
 * the member matrix only at most one per that gap.  The latest state
 * always follows.  They wait until this node's kernel
 * holds the domain (imexd_health_applied() with a generation), and are
 * repeated in full when it reports a new one.
 *
 * Bounds: peers are those of the committed domains naming this node (the
 * dispatcher passes them; a heartbeat from anyone else is ignored), views
 * are kept per peer for those members only, generations per shared domain
 * only: nothing a peer sends can grow a table here.
 *
 * Out-of-memory policy: a failed allocation returns -ENOMEM from the call
 * and leaves the part as it was before it.
 */
#ifndef IMEXD_HEALTH_H
#define IMEXD_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "logfields.h"
#include "wire.h"

struct imexd_health;

/* Zero means the default, but for grace_ms (-1 forever, 0 none). */
struct imexd_health_config {
	const char *self;
	uint32_t heartbeat_ms;		/* default 1000 */
	uint32_t miss_count;		/* default 3 */
	int64_t grace_ms;		/* default 30000 */
};

/* Reasons as the kernel keeps them (IMEX_MESSAGE_MAX, with the NUL). */
#define IMEXD_REASON_MAX	IMEX_MESSAGE_MAX

struct imexd_member_status {
	char name[IMEX_NAME_MAX];
	uint8_t state;			/* enum imex_member_state (this view) */
	bool has_view;
	uint8_t view[IMEX_MEMBERS_MAX];	/* that member's view, per member */
	uint64_t generation;		/* it holds; 0: unknown */
	char reason[IMEXD_REASON_MAX];	/* why it is in its state; "": none */
	uint64_t since;			/* wall-clock ms it entered it; 0: unknown */
};

struct imexd_domain_status {
	char name[IMEX_NAME_MAX];
	uint8_t uuid[16];
	uint32_t state;			/* IMEX_DOMAIN_READY or _DEGRADED */
	char reason[IMEXD_REASON_MAX];	/* why not READY; "" when READY */
	uint64_t generation;		/* committed */
	uint16_t nmembers;
	struct imexd_member_status *members;
};

enum imexd_health_action_type {
	IMEXD_HEALTH_SEND = 1,		/* to, msg (a HEARTBEAT) */
	IMEXD_HEALTH_STATUS,		/* status: push to the kernel */
	IMEXD_HEALTH_PEER_LOST,		/* to: DISCONNECTED (grace over) */
	IMEXD_HEALTH_LOG,		/* level, text */
};

/* Pointers stay valid until the next call into the part. */
struct imexd_health_action {
	enum imexd_health_action_type type;
	const char *to;
	struct imexd_msg *msg;		/* the caller may fill header fields */
	const struct imexd_domain_status *status;
	int level;
	const char *text;
	struct imexd_log_fields fields;	/* LOG: msgid NULL: none */
};

int imexd_health_new(const struct imexd_health_config *cfg,
		     struct imexd_health **out);
void imexd_health_free(struct imexd_health *h);
/* SIGHUP: new timing (zero: default); applies from the next deadline. */
void imexd_health_set_timing(struct imexd_health *h, uint32_t heartbeat_ms,
			     uint32_t miss_count, int64_t grace_ms);

/*
 * The committed domains naming this node (copied): their members become
 * the peers watched; a domain no longer listed is forgotten (no STATUS).
 * A new peer starts NEVER_CONNECTED: report imexd_health_peer_up() for
 * one whose connection is already bound.  0, -EINVAL, -ENOMEM.
 */
int imexd_health_set_domains(struct imexd_health *h, uint64_t now,
			     const struct imexd_def *const *defs, size_t n);
/*
 * This node's kernel now holds @generation of domain @uuid (0: none),
 * whether or not set_domains() lists it yet.  0 or -ENOMEM.
 */
int imexd_health_applied(struct imexd_health *h, uint64_t now,
			 const uint8_t uuid[16], uint64_t generation);

void imexd_health_peer_up(struct imexd_health *h, uint64_t now,
			  const char *name);
/* Several at once (a new domain's members): one heartbeat to each
 * carries them all. */
void imexd_health_peers_up(struct imexd_health *h, uint64_t now,
			   const char *const *names, size_t n);
void imexd_health_peer_down(struct imexd_health *h, uint64_t now,
			    const char *name);
/* No protocol version in common: VERSION_MISMATCH, unless @name is
 * linked or connected (then it was someone using its name). */
void imexd_health_peer_version(struct imexd_health *h, uint64_t now,
			       const char *name);
/* The same, with the transport's words for it (@why may be NULL). */
void imexd_health_peer_down_why(struct imexd_health *h, uint64_t now,
				const char *name, const char *why);
void imexd_health_peer_version_why(struct imexd_health *h, uint64_t now,
				   const char *name, const char *why);
/*
 * The transport refused what said HELLO as @name (@why: TLS names, another
 * group): REFUSED, unless @name is connected (then it was someone else).
 */
void imexd_health_peer_refused(struct imexd_health *h, uint64_t now,
			       const char *name, const char *why);
/*
 * Wall clock minus the clock of @now, in ms: statuses then say since when
 * (member since, times in reasons).  Steps under a second are ignored, so
 * that reading two clocks does not make every status new.
 */
void imexd_health_set_wall(struct imexd_health *h, int64_t wall_minus_now);
/* @ms of this node's clock in ISO 8601 UTC, as reasons give it; "" while
 * the wall clock is unknown. */
void imexd_health_iso(const struct imexd_health *h, uint64_t ms, char out[32]);
/*
 * Why the agreement layer cannot commit ("no quorum: 1 of 3 voters
 * reachable"), NULL or "" when it can: the first reason of every domain
 * not READY while it holds.
 */
void imexd_health_set_quorum(struct imexd_health *h, uint64_t now,
			     const char *why);
/* A HEARTBEAT from authenticated peer @from (stays the caller's). */
void imexd_health_heartbeat(struct imexd_health *h, uint64_t now,
			    const char *from, const struct imexd_msg *msg);
void imexd_health_timer(struct imexd_health *h, uint64_t now);
uint64_t imexd_health_deadline(const struct imexd_health *h);

bool imexd_health_next(struct imexd_health *h, struct imexd_health_action *a);

/* Views for status queries and checkers. */
uint8_t imexd_health_peer_state(const struct imexd_health *h,
				const char *name);
bool imexd_health_ready(const struct imexd_health *h, const uint8_t uuid[16]);

#endif /* IMEXD_HEALTH_H */
