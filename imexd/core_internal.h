/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The protocol core's internals, shared by its files:
 *
 *   core.c         entry points, the action queue, ids, kernel-op routing,
 *                  outcome memory, log dedupe, deadlines
 *   core_def.c     definition helpers (copy, compare, diff, channel sets)
 *   core_peer.c    the peer table, connections, HELLO, reconnect backoff,
 *                  admission and dispatch of incoming messages
 *   core_health.c  peer states, heartbeats and views, the shared digest
 *   core_status.c  the channels this node holds, domain health -> kernel
 *   core_domain.c  held definitions, SYNC and adoption, start-up
 *                  reconciliation, tombstones
 *   core_request.c a request turned into a change (checks, new definition,
 *                  channel picking, the caller's message)
 *   core_change.c  the coordinator running a two-phase change
 *   core_part.c    the participant: PREPARE/COMMIT/ABORT, in-doubt outcome
 *                  queries
 *   core_import.c  remote imports, checks for peers, export ends and
 *                  revocations
 *
 * Nothing here reads a clock or does I/O: "now" always comes from the caller
 * of the public entry points.  Everything is kept in arrays iterated in
 * index order, so the same inputs always give the same actions.
 */
#ifndef IMEXD_CORE_INTERNAL_H
#define IMEXD_CORE_INTERNAL_H

#include <stdarg.h>
#include "core.h"

#define CORE_PROTO_MIN		1
#define CORE_PROTO_MAX		1	/* this core speaks protocol 1 only */
#define CORE_RETRIES		3	/* automatic retries of a collided change */
#define CORE_WAITS		40	/* waits of CORE_WAIT_MS for a member that */
#define CORE_WAIT_MS		500	/* just restarted (votes EINPROGRESS) */
#define CORE_OUTCOMES		1024	/* outcomes remembered for queries */
#define CORE_LOGONCE		512	/* (reason, peer, epoch) dedupe slots */
#define CORE_PEERS_MAX		(4UL * IMEX_MEMBERS_MAX)	/* peers named only by
					 * a HELLO or a heartbeat (members of
					 * known domains always get an entry);
					 * past it a HELLO reuses the entry of
					 * such a stranger that is not connected */
#define CORE_STRANGERS_PER_HOST	8	/* connections from one host bound to
					 * names nothing here knows */
#define CORE_TOMBSTONE_MS	3600000	/* deleted/evicted defs are remembered */
#define CORE_NO_TIME		UINT64_MAX

#define CORE_MIN(a, b)		((a) < (b) ? (a) : (b))
#define CORE_MAX(a, b)		((a) > (b) ? (a) : (b))

/* ---- connections and peers (core_peer.c) ---- */

struct core_conn {
	uint64_t id;
	char addr[IMEXD_ADDR_MAX + 1];	/* outbound: what we connected to */
	bool outbound;
	bool hello_done;		/* the peer's HELLO/HELLO_ACK arrived */
	int peer;			/* bound peer, -1 until then */
	uint8_t uuid[16];		/* as announced in that HELLO */
	uint64_t epoch;
	uint64_t last_rx;
	uint64_t last_hb;		/* last heartbeat sent, 0: none yet */
	uint64_t next_hb;
};

struct core_peer {
	char name[IMEX_NAME_MAX];
	char addr[IMEXD_ADDR_MAX + 1];	/* host:port, from a member list */
	uint8_t state;			/* enum imex_member_state */
	uint64_t state_since;
	uint64_t conn;			/* bound connection, 0 if none */
	bool known;			/* an instance was seen */
	uint8_t uuid[16];
	uint64_t epoch;
	uint32_t max_channels;
	/* its latest view, indexed by our peer index (UNKNOWN if absent) */
	uint8_t *view;
	bool has_view;
	uint8_t self_in_view;		/* how it sees us */
	/* reconnects */
	bool wanted;
	bool connecting;
	uint64_t connect_at;
	uint32_t backoff;
	bool q_need;			/* must hear from it after our start */
	/* anti-entropy: its digest of what we share, as last heard */
	uint32_t digest_misses;
	uint64_t last_sync;
};

/* ---- domains (core_domain.c) ---- */

enum core_dom_kind {
	DOM_LIVE,			/* committed here, in the kernel */
	DOM_TOMBSTONE,			/* deleted: remembered so it stays so */
	DOM_GHOST,			/* we were evicted: the newer def */
};

/* A local-only change series that brings the kernel to @target. */
struct core_adopt {
	struct imexd_def target;
	struct imexd_def after;		/* the kernel once the step is in */
	uint64_t change_id;		/* the step in flight */
	uint64_t op_id;
	uint8_t op;
	bool committing;
};

struct core_domain {
	struct imexd_def def;		/* committed definition */
	enum core_dom_kind kind;
	bool in_kernel;			/* committed in the kernel */
	uint64_t expires;		/* tombstones and ghosts */
	int *midx;			/* member -> peer index, -1 for us */
	bool status_dirty;
	uint64_t status_next;		/* no push before (rate limit) */
	uint8_t *pushed;		/* last KERNEL_STATUS, as bytes */
	size_t npushed;
	struct core_adopt *adopt;
	uint64_t adopt_retry_at;
};

/* ---- changes ---- */

enum core_kop_kind {
	KOP_COORD_PREPARE = 1,
	KOP_COORD_COMMIT,
	KOP_COORD_ABORT,
	KOP_PART_PREPARE,
	KOP_PART_COMMIT,
	KOP_PART_ABORT,
	KOP_ADOPT_PREPARE,
	KOP_ADOPT_COMMIT,
	KOP_FIRE_AND_FORGET,
};

struct core_kop {
	uint64_t op_id;
	enum core_kop_kind kind;
	uint64_t change_id;
	uint8_t uuid[16];
};

enum core_cphase {
	CP_CONNECT,			/* waiting for connections / FREE */
	CP_PREPARE,
	CP_COMMIT,			/* decided: committing, collecting ACKs */
	CP_RETRY,			/* aborted, waiting to try again */
};

enum core_local {
	LOC_NONE,
	LOC_PREPARING,
	LOC_PREPARED,
	LOC_COMMITTING,
	LOC_COMMITTED,
	LOC_ABORTING,
};

struct core_target {
	int peer;
	uint64_t sent_conn;		/* this phase's message went here */
	bool answered;
	bool got_prepare;		/* so it must hear the outcome */
};

struct core_cchange {
	uint64_t id;
	uint64_t req_id;
	uint32_t cmd;
	uint8_t op;
	char name[IMEX_NAME_MAX];
	uint8_t uuid[16];
	uint32_t count;			/* by count: channels still to pick */
	uint32_t nids;
	uint32_t *ids;			/* explicit ids */
	uint32_t uid, gid, mode;
	char member[IMEX_NAME_MAX];	/* MEMBER_EVICT */
	struct imexd_member *members;	/* CREATE */
	uint16_t nmembers;

	struct imexd_def newdef;
	uint32_t ndelta;
	struct imexd_channel *delta;
	struct core_target *targets;
	uint16_t ntargets;
	enum core_cphase phase;
	uint64_t deadline;
	uint8_t *freebits;		/* intersection of FREE answers */
	enum core_local local;
	bool abort_when_prepared;
	int retries;
	int waits;			/* for restarted members, see CORE_WAITS */
	int err;
	bool err_retryable;
	char errmsg[IMEXD_MESSAGE_MAX + 1];
	bool done;
};

enum core_pphase {
	PP_PREPARING,			/* kernel prepare in flight */
	PP_PREPARED,			/* voted yes; waiting for the outcome */
	PP_COMMITTING,
	PP_ABORTING,
	PP_EXPIRED,			/* lease over, still in doubt */
};

struct core_pchange {
	uint64_t id;
	uint8_t uuid[16];
	char coord[IMEX_NAME_MAX];
	uint64_t coord_epoch;
	uint8_t op;
	struct imexd_def newdef;
	uint32_t ndelta;
	struct imexd_channel *delta;
	uint32_t lease_ms;
	uint64_t lease_end;
	uint64_t next_query;
	uint32_t query_gap;
	enum core_pphase phase;
	int commit_when_prepared;	/* 1 commit, -1 abort, 0 nothing */
	bool coord_restarted;		/* its coordinator came back anew */
	bool done;
};

struct core_outcome {
	uint64_t change_id;
	uint8_t outcome;
};

/* ---- imports (core_import.c) ---- */

#define CORE_CHECKS_MAX		4096	/* IMPORT_CHECKs in the kernel */
#define CORE_REVOKES_MAX	4096	/* EXPORT_REVOKEs held for absent peers */

struct core_import {			/* IMPORT_REQ sent, no IMPORT_RESP yet */
	uint64_t import_id;		/* also the tag on the wire */
	int peer;
	uint64_t conn;
	uint64_t deadline;
};

struct core_check {			/* IMPORT_CHECK for a peer's IMPORT_REQ */
	uint64_t op_id;
	int peer;
	uint64_t conn;
	uint64_t tag;
	uint8_t domain_uuid[16];
};

struct core_revoke {			/* EXPORT_REVOKE for a peer away now */
	int peer;
	uint8_t domain_uuid[16];
	uint64_t handle_id;
};

struct core_pending_req {
	struct imexd_request req;	/* deep copy */
	uint64_t arrived;
};

struct imexd_core {
	struct imexd_core_cfg cfg;
	bool started;
	bool shutting_down;
	uint64_t id_base;
	uint64_t counter;
	uint64_t now;
	uint64_t quarantine_min;	/* just started: not voting before */
	uint64_t quarantine_max;	/* ... nor after, whatever happens */

	/* actions */
	struct imexd_action *acts;
	size_t nacts, acts_head, acts_cap;

	/* peers and connections */
	struct core_peer *peers;
	size_t npeers, peers_cap;
	int *phash;			/* open addressing: peer index + 1 */
	size_t phash_cap;
	struct core_conn *conns;
	size_t nconns, conns_cap;
	bool view_dirty;
	bool wanted_dirty;
	uint64_t view_changed_at;

	/* domains */
	struct core_domain **doms;
	size_t ndoms, doms_cap;

	/* changes */
	struct core_cchange **cc;
	size_t ncc, cc_cap;
	struct core_pchange **pc;
	size_t npc, pc_cap;
	struct core_kop *kops;
	size_t nkops, kops_cap;
	struct core_pending_req *reqs;
	size_t nreqs, reqs_cap;
	struct core_outcome outcomes[CORE_OUTCOMES];
	size_t noutcomes, outcome_pos;
	uint64_t logonce[CORE_LOGONCE];
	size_t nlogonce, logonce_pos;

	/* imports */
	struct core_import *imps;
	size_t nimps, imps_cap;
	struct core_check *checks;
	size_t nchecks, checks_cap;
	struct core_revoke *revokes;
	size_t nrevokes, revokes_cap;
};

/* ---- core.c ---- */
struct imexd_action *core_act(struct imexd_core *core,
			      enum imexd_action_type type);
void core_log(struct imexd_core *core, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void core_log_once(struct imexd_core *core, const char *reason,
		   const char *who, uint64_t epoch, int level,
		   const char *fmt, ...) __attribute__((format(printf, 6, 7)));
uint64_t core_new_id(struct imexd_core *core);
bool core_quarantined(const struct imexd_core *core);
void core_new_uuid(struct imexd_core *core, uint8_t uuid[16]);
uint64_t core_kop_add(struct imexd_core *core, enum core_kop_kind kind,
		      uint64_t change_id, const uint8_t uuid[16]);
void core_outcome_put(struct imexd_core *core, uint64_t change_id,
		      uint8_t outcome);
uint8_t core_outcome_get(const struct imexd_core *core, uint64_t change_id);
void core_kernel_prepare(struct imexd_core *core, uint64_t op_id,
			 uint64_t change_id, uint8_t op, uint32_t lease_ms,
			 const struct imexd_def *def,
			 const struct imexd_channel *delta, uint32_t ndelta);
void core_kernel_simple(struct imexd_core *core,
			enum imexd_action_type type, uint64_t op_id,
			uint64_t change_id);
void core_request_done(struct imexd_core *core, uint64_t req_id, int error,
		       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void core_msg_init(const struct imexd_core *core, struct imexd_msg *msg,
		   uint8_t type, const uint8_t domain_uuid[16]);
const char *core_msg_name(uint8_t type);

/* ---- core_def.c ---- */
bool core_def_same(const struct imexd_def *a, const struct imexd_def *b);
int core_def_member(const struct imexd_def *def, const char *name);
int core_def_channel(const struct imexd_def *def, uint32_t id);
void core_def_sort(struct imexd_def *def);
int core_chan_diff(const struct imexd_def *a, const struct imexd_def *b,
		   struct imexd_channel **out, uint32_t *n);
bool core_members_same(const struct imexd_def *a, const struct imexd_def *b);
uint32_t core_def_hash(const struct imexd_def *def);
void core_format_ids(char *buf, size_t len, const struct imexd_channel *ch,
		     uint32_t n);
int core_channels_from_ids(const uint32_t *ids, uint32_t n, uint32_t uid,
			   uint32_t gid, uint32_t mode,
			   struct imexd_channel **out);

/* ---- core_peer.c ---- */
int core_peer_find(const struct imexd_core *core, const char *name);
int core_peer_admit(struct imexd_core *core, const char *name,
		    const struct core_conn *via, bool reuse);
int core_peer_get(struct imexd_core *core, const char *name,
		  const char *addr);
void core_peer_set_state(struct imexd_core *core, int p, uint8_t state);
bool core_send_peer(struct imexd_core *core, int p, struct imexd_msg *msg);
void core_send_conn(struct imexd_core *core, uint64_t conn,
		    struct imexd_msg *msg);
bool core_peer_usable(const struct imexd_core *core, int p);
uint64_t core_peer_conn_pending(const struct imexd_core *core, int p);
void core_peer_connect_now(struct imexd_core *core, int p);
void core_peer_conn_up(struct imexd_core *core, uint64_t conn,
		       const char *addr, bool outbound);
void core_peer_conn_failed(struct imexd_core *core, const char *addr);
void core_peer_conn_down(struct imexd_core *core, uint64_t conn);
void core_peer_msg(struct imexd_core *core, uint64_t conn,
		   const struct imexd_msg *msg);
void core_peer_timer(struct imexd_core *core);
void core_peer_flush(struct imexd_core *core);
uint64_t core_peer_deadline(const struct imexd_core *core);
void core_peer_shutdown(struct imexd_core *core);
void core_peer_free_all(struct imexd_core *core);
void core_addr_normalize(const struct imexd_core *core, const char *in,
			 char *out, size_t len);
uint32_t core_digest_for(const struct imexd_core *core, int p);

/* ---- core_health.c ---- */
void core_peer_forget_view(struct imexd_core *core, int p);
void core_send_heartbeat(struct imexd_core *core, struct core_conn *c);
void core_heartbeat_in(struct imexd_core *core, int p,
		       const struct imexd_msg *msg);
void core_health_flush(struct imexd_core *core);

/* ---- core_domain.c ---- */
struct core_domain *core_dom_find(const struct imexd_core *core,
				  const uint8_t uuid[16]);
struct core_domain *core_dom_find_name(const struct imexd_core *core,
				       const char *name);
struct core_domain *core_dom_add(struct imexd_core *core,
				 const struct imexd_def *def,
				 enum core_dom_kind kind);
void core_dom_set_def(struct imexd_core *core, struct core_domain *d,
		      const struct imexd_def *def);
void core_dom_remove(struct imexd_core *core, struct core_domain *d);
void core_dom_committed(struct imexd_core *core, const struct imexd_def *def,
			const char *self_name);
void core_dom_start(struct imexd_core *core, const struct imexd_def *kernel,
		    size_t nkernel, const struct imexd_def *stored,
		    size_t nstored);
void core_dom_sync_peer(struct imexd_core *core, int p);
void core_dom_sync_one(struct imexd_core *core, int p,
		       const struct core_domain *d);
void core_dom_msg_sync(struct imexd_core *core, int p,
		       const struct imexd_msg *msg);
void core_dom_adopt_done(struct imexd_core *core, const struct core_kop *k,
			 int error, const char *message);
void core_dom_reapply(struct imexd_core *core, const struct imexd_def *def);
void core_dom_peer_changed(struct imexd_core *core, int p);
void core_dom_flush(struct imexd_core *core);
uint64_t core_status_deadline(const struct imexd_core *core);
void core_dom_timer(struct imexd_core *core);
uint64_t core_dom_deadline(const struct imexd_core *core);
void core_dom_free_all(struct imexd_core *core);
uint8_t *core_free_bits(const struct imexd_core *core);
int core_reserved_by(const struct imexd_core *core, uint32_t id,
		     const uint8_t except_uuid[16], const char **domain,
		     bool *pending);
bool core_dom_busy(const struct imexd_core *core, const uint8_t uuid[16],
		   uint64_t except_change);
void core_dom_mark_all_dirty(struct imexd_core *core);
void core_dom_quarantine_peers(struct imexd_core *core);

/* ---- core_request.c (coordinator: building a change) ---- */
void core_cc_release(struct core_cchange *cc);
const char *core_cc_what(const struct core_cchange *cc);
int core_cc_build(struct imexd_core *core, struct core_cchange *cc,
		  char *msg, size_t len);
int core_cc_pick(struct imexd_core *core, struct core_cchange *cc,
		 char *msg, size_t len);
void core_cc_success(struct imexd_core *core, struct core_cchange *cc,
		     const char *late);

/* ---- core_change.c (coordinator: running it) ---- */
void core_cc_advance(struct imexd_core *core, struct core_cchange *cc);
void core_cc_finish(struct imexd_core *core, struct core_cchange *cc,
		    int err, const char *msg);
void core_cc_request(struct imexd_core *core, const struct imexd_request *r);
void core_cc_msg(struct imexd_core *core, int p, const struct imexd_msg *msg);
void core_cc_kernel_done(struct imexd_core *core, const struct core_kop *k,
			 int error, const char *message);
void core_cc_peer_event(struct imexd_core *core, int p);
void core_cc_peer_restarted(struct imexd_core *core, int p);
void core_cc_timer(struct imexd_core *core);
uint64_t core_cc_deadline(const struct imexd_core *core);
void core_cc_shutdown(struct imexd_core *core);
void core_cc_free_all(struct imexd_core *core);
struct core_cchange *core_cc_find(const struct imexd_core *core,
				  uint64_t id);
bool core_cc_names(const struct imexd_core *core, const char *name);
bool core_cc_holds(const struct imexd_core *core, const uint8_t uuid[16]);

/* ---- core_part.c (participant) ---- */
void core_pc_msg(struct imexd_core *core, int p, const struct imexd_msg *msg);
void core_pc_kernel_done(struct imexd_core *core, const struct core_kop *k,
			 int error, const char *message);
void core_pc_sync_seen(struct imexd_core *core, int p,
		       const struct imexd_def *def);
void core_pc_peer_restarted(struct imexd_core *core, int p);
void core_pc_timer(struct imexd_core *core);
uint64_t core_pc_deadline(const struct imexd_core *core);
void core_pc_free_all(struct imexd_core *core);
struct core_pchange *core_pc_find(const struct imexd_core *core,
				  uint64_t id);
struct core_pchange *core_pc_for_domain(const struct imexd_core *core,
					const uint8_t uuid[16]);
bool core_pc_names(const struct imexd_core *core, const char *name);
void core_pc_evicting(struct imexd_core *core, const uint8_t uuid[16],
		      const char *evicted);
void core_pc_peer_heard(struct imexd_core *core, int p);

/* ---- core_import.c ---- */
void core_imp_kernel(struct imexd_core *core, const struct imexd_import *imp);
void core_imp_checked(struct imexd_core *core, uint64_t op_id, int error,
		      const uint8_t *desc, uint16_t desc_len);
void core_imp_export_del(struct imexd_core *core, uint64_t handle_id,
			 const uint8_t domain_uuid[16]);
void core_imp_msg(struct imexd_core *core, int p, const struct imexd_msg *msg);
void core_imp_conn_lost(struct imexd_core *core, int p, uint64_t conn);
void core_imp_peer_bound(struct imexd_core *core, int p);
bool core_imp_uses_peer(const struct imexd_core *core, int p);
void core_imp_peer_lost(struct imexd_core *core, int p);
void core_imp_peer_restarted(struct imexd_core *core, int p,
			     const uint8_t old_uuid[16]);
void core_imp_timer(struct imexd_core *core);
uint64_t core_imp_deadline(const struct imexd_core *core);
void core_imp_shutdown(struct imexd_core *core);
void core_imp_free_all(struct imexd_core *core);

#endif /* IMEXD_CORE_INTERNAL_H */
