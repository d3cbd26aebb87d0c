/* SPDX-License-Identifier: GPL-2.0 */
/*
 * node: imexd's core, one dispatcher over four parts that each own their
 * struct and header:
 *
 *   peers   (peers.h)   connections, HELLO, authenticated peer names
 *   agree   (agree.h)   raft log + domain table + what the kernel must hold
 *   health  (health.h)  heartbeats among domain members, READY/DEGRADED
 *   broker  (broker.h)  remote imports between members
 *
 * The parts never call each other: every event enters here, goes to the
 * part it concerns, and the part's actions are turned into other parts'
 * inputs or into this dispatcher's actions for the caller (the daemon, or
 * the simulator).  Pure: no sockets, clock, netlink or threads; storage is
 * the raftlog handle the caller injects (written synchronously).
 *
 * Roster: the nodes of the NVLink domain (NODES_FILE).  Without one, the
 * node is a one-member group: domains name only itself.  A request naming
 * a node outside the roster fails (EINVAL, naming it); a member given as
 * NAME=ADDR must match the roster's address for NAME.
 *
 * Requests (imexd_node_request) become fsm commands submitted through
 * agree (forwarded to the leader from a follower); REQUEST_DONE answers
 * each with the table's outcome: the domain's UUID (create) and the
 * channels granted or freed.
 *
 * Kernel: agree hands out one step at a time (KERNEL_SET or
 * KERNEL_REMOVE); the caller runs it and answers with
 * imexd_node_kernel_done() and the kernel's domains re-read.  What the
 * kernel holds is what this node reports to its peers as applied.
 *
 * Out-of-memory policy (grow.h): a failed allocation fails the one event
 * that needed it; agree restarts its raft server from storage at the next
 * timer, the other parts are left as before the event.
 */
#ifndef IMEXD_NODE_H
#define IMEXD_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker.h"
#include "health.h"
#include "peers.h"
#include "raftlog.h"
#include "wire.h"

struct imexd_node;
struct imexd_agree;

/* Zero in a timing field means its default. */
struct imexd_node_config {
	char name[IMEX_NAME_MAX];
	uint8_t node_uuid[16];
	uint64_t epoch;			/* this instance; nonzero */
	uint32_t max_channels;
	uint8_t fabric_uuid[16];
	uint32_t partition;
	const struct imexd_roster_node *roster;	/* NULL/0: just this node */
	size_t n_roster;
	uint16_t default_port;
	struct imexd_raftlog *log;	/* borrowed; outlives the node */
	/* health */
	uint32_t heartbeat_ms;
	uint32_t miss_count;
	int64_t grace_ms;		/* -1 forever, 0 none */
	/* agreement */
	uint32_t election_timeout_ms;	/* default 1000 */
	uint32_t request_timeout_ms;	/* default 5 election timeouts */
	unsigned snapshot_threshold;	/* 0: agree's default (tests: less) */
	unsigned snapshot_trailing;	/* 0: agree's default */
	/* transport */
	uint32_t backoff_min_ms;
	uint32_t backoff_max_ms;
	unsigned seed;
};

/* An administrator's request, as accepted from the kernel. */
struct imexd_request {
	uint64_t req_id;
	uint32_t cmd;			/* IMEX_CMD_DOMAIN_CREATE, ... */
	char name[IMEX_NAME_MAX];	/* the domain */
	bool has_uuid;
	uint8_t uuid[16];
	uint16_t nmembers;		/* CREATE */
	struct imexd_member *members;
	uint32_t count;			/* CREATE, CHANNEL_ALLOC: by count */
	uint32_t nids;			/* ... or these ids */
	uint32_t *ids;
	uint32_t uid, gid, mode;	/* owner of new channels */
	char member[IMEX_NAME_MAX];	/* MEMBER_EVICT/REPLACE; NODE_JOIN/LEAVE: the node */
	char with[IMEX_NAME_MAX];	/* MEMBER_REPLACE: the new member */
	char addr[IMEXD_ADDR_MAX + 1];	/* NODE_JOIN: its address ("": the name) */
};

/*
 * Membership requests (imexd_request.cmd IMEX_CMD_NODE_JOIN/LEAVE, no
 * domain name), answered like the others.  A join dials the node (addr)
 * and waits for its HELLO: its fabric identity must be this node's; a node
 * that does not connect within the request timeout is refused.
 */
#define IMEXD_NODE_JOINS_MAX	8	/* joins waiting for a HELLO */

enum imexd_log_level { IMEXD_LOG_ERR = 3, IMEXD_LOG_WARN = 4,
		       IMEXD_LOG_INFO = 6, IMEXD_LOG_DEBUG = 7 };

enum imexd_node_action_type {
	IMEXD_NODE_CONNECT = 1,		/* addr */
	IMEXD_NODE_CLOSE,		/* conn */
	IMEXD_NODE_SEND,		/* conn, frame */
	IMEXD_NODE_CONN_BOUND,		/* conn: a peer proved its name */
	IMEXD_NODE_KERNEL_SET,		/* def */
	IMEXD_NODE_KERNEL_REMOVE,	/* def (name, uuid) */
	IMEXD_NODE_KERNEL_STATUS,	/* status */
	IMEXD_NODE_REQUEST_DONE,	/* req_id, error, text, def, ids */
	IMEXD_NODE_IMPORT_DONE,		/* import_id, error, desc, text */
	IMEXD_NODE_IMPORT_CHECK,	/* op_id, handle_id, domain_uuid,
					 * channel_id, peer: answer with
					 * imexd_node_import_checked() */
	IMEXD_NODE_IMPORT_REVOKE,	/* node_uuid, handle_id if has_handle,
					 * domain_uuid if has_domain, reason */
	IMEXD_NODE_LOG,			/* level, text */
};

/* Pointers stay valid until the next imexd_node_next(). */
struct imexd_node_action {
	enum imexd_node_action_type type;
	uint64_t conn;
	const char *addr;
	const uint8_t *frame;
	size_t len;
	const struct imexd_def *def;
	const struct imexd_domain_status *status;
	uint64_t req_id;
	uint64_t index;			/* REQUEST_DONE: its log entry (0:
					 * none), for checkers */
	int error;			/* 0 or a positive errno */
	const char *text;		/* message or log line */
	const uint32_t *ids;
	uint32_t nids;
	int level;
	const char *peer;
	/* imports */
	uint64_t import_id;
	uint64_t op_id;
	uint64_t handle_id;
	bool has_handle;
	bool has_domain;
	uint8_t node_uuid[16];
	uint8_t domain_uuid[16];
	uint32_t channel_id;
	uint8_t reason;			/* enum imex_revoke_reason */
	const uint8_t *desc;
	uint16_t desc_len;
	struct imexd_log_fields fields;	/* LOG: msgid NULL: none */
};

/* 0, -EINVAL (a bad name, roster or config; logged in @err), -ENOMEM. */
int imexd_node_new(const struct imexd_node_config *cfg,
		   struct imexd_node **out, char *err, size_t errlen);
void imexd_node_free(struct imexd_node *n);

/* Start from what the raftlog holds and what the kernel holds now. */
int imexd_node_start(struct imexd_node *n, uint64_t now,
		     const struct imexd_def *kernel, size_t nkernel);

void imexd_node_conn_up(struct imexd_node *n, uint64_t now, uint64_t conn,
			const char *addr, bool outbound,
			const struct imexd_peers_auth *auth);
void imexd_node_conn_failed(struct imexd_node *n, uint64_t now,
			    const char *addr);
void imexd_node_conn_down(struct imexd_node *n, uint64_t now, uint64_t conn);
void imexd_node_msg(struct imexd_node *n, uint64_t now, uint64_t conn,
		    const struct imexd_msg *msg);
void imexd_node_request(struct imexd_node *n, uint64_t now,
			const struct imexd_request *req);
/* The last KERNEL_SET/REMOVE's result (0 or a positive errno, the
 * kernel's message) and the kernel's domains re-read. */
void imexd_node_kernel_done(struct imexd_node *n, uint64_t now, int error,
			    const char *message,
			    const struct imexd_def *kernel, size_t nkernel);
void imexd_node_import(struct imexd_node *n, uint64_t now,
		       const struct imexd_import *imp);
void imexd_node_import_checked(struct imexd_node *n, uint64_t now,
			       uint64_t op_id, int error, const uint8_t *desc,
			       uint16_t desc_len);
void imexd_node_export_del(struct imexd_node *n, uint64_t now,
			   uint64_t handle_id, const uint8_t domain_uuid[16],
			   uint32_t channel_id);
void imexd_node_timer(struct imexd_node *n, uint64_t now);
/* Wall clock minus the clock of now, ms: health's statuses say when. */
void imexd_node_set_wall(struct imexd_node *n, int64_t wall_minus_now);
uint64_t imexd_node_deadline(const struct imexd_node *n);
/* SIGHUP: new health timing (zero: default). */
void imexd_node_set_timing(struct imexd_node *n, uint32_t heartbeat_ms,
			   uint32_t miss_count, int64_t grace_ms);
/* SIGTERM: LEAVE to peers, waiting imports end; the log is kept. */
void imexd_node_shutdown(struct imexd_node *n, uint64_t now);

bool imexd_node_next(struct imexd_node *n, struct imexd_node_action *a);

/* Views for status and checkers. */
/* The committed domains naming this node; returns their number and, if
 * @defs, fills up to @max of them. */
size_t imexd_node_domains(const struct imexd_node *n,
			  const struct imexd_def **defs, size_t max);
bool imexd_node_domain_ready(const struct imexd_node *n,
			     const uint8_t uuid[16]);
uint8_t imexd_node_peer_state(const struct imexd_node *n, const char *name);
const struct imexd_fsm *imexd_node_fsm(const struct imexd_node *n);
/* NULL: not known; else the leader's name. */
const char *imexd_node_leader(const struct imexd_node *n);
/*
 * This node's view of the group's raft configuration (imexctl node list):
 * the latest configuration it knows (maybe not committed yet), with what
 * it believes of the leader and its connections.  Another node may see
 * more, or less.
 */
struct imexd_node_member {
	char name[IMEX_NAME_MAX];
	char addr[IMEXD_ADDR_MAX + 1];	/* "": the name, the default port */
	int role;			/* RAFT_VOTER, RAFT_STANDBY, RAFT_SPARE */
	bool leader;			/* this node believes it leads */
	bool self;
	bool connected;			/* to this node now (self: false) */
};
struct imexd_node_group {
	bool member;			/* false: waits to be joined (or left) */
	uint64_t term, commit, applied;
	uint64_t config_index;		/* the configuration's entry (0: none) */
	char leader[IMEX_NAME_MAX];	/* "": not known */
	size_t n_members;		/* all of them, even beyond @max */
};
/* Fills @g and up to @max members (sorted by name); returns how many it
 * filled. */
size_t imexd_node_members(const struct imexd_node *n,
			  struct imexd_node_group *g,
			  struct imexd_node_member *m, size_t max);
/* For checkers (the simulator): the agreement part, to read only. */
const struct imexd_agree *imexd_node_agree(const struct imexd_node *n);
/* For the metrics: the import broker, to read only. */
const struct imexd_broker *imexd_node_broker(const struct imexd_node *n);
/* For checkers: @fn sees every entry as agree applies it, with the
 * command's bytes (which the log may compact before any action shows). */
typedef void imexd_node_applied_fn(void *ctx, uint64_t index,
				   const uint8_t *data, size_t len);
void imexd_node_set_applied_hook(struct imexd_node *n,
				 imexd_node_applied_fn *fn, void *ctx);

#endif /* IMEXD_NODE_H */
