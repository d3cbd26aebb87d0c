/* SPDX-License-Identifier: GPL-2.0 */
/*
 * imexd's protocol core: one node's membership, health and two-phase change
 * logic as a pure state machine.  It never touches a socket, the clock, the
 * kernel or the disk: the caller feeds it events (each with the current
 * monotonic time in ms) and drains the actions it returns.  The daemon wires
 * actions to TCP, netlink and files; the simulator wires the same core to a
 * simulated network, kernel and disk.
 *
 * Connections are the caller's: it names each with a uint64_t id, tells the
 * core when one comes up or goes down, and carries out CONNECT/SEND/CLOSE.
 * The core binds a connection to a peer after the HELLO exchange and keeps
 * at most one per peer (on a duplicate, the connection opened by the node
 * with the smaller name survives).
 *
 * Two-phase changes (create, delete, channel alloc/free, evict): the node
 * that accepted the administrator's request coordinates: QUERY_FREE (only
 * when channels are asked for by count) → PREPARE → COMMIT or ABORT, every
 * member applying each step to its own kernel through KERNEL_* actions.
 * A participant left in doubt asks the others for the outcome before its
 * lease ends; definitions carry a generation and members exchange SYNC on
 * every (re)connection, so a member that missed a commit, rebooted, or was
 * partitioned converges to the highest committed generation.
 *
 * Health: a peer is CONNECTED after HELLO, RECOVERING once heartbeats are
 * missed (miss_count × heartbeat_ms) or its connection drops, DISCONNECTED
 * after grace_ms more, NEVER_CONNECTED until first contact, VERSION_MISMATCH
 * when protocol ranges do not overlap.  A domain is READY when every member
 * is CONNECTED in this node's view and in every member's reported view,
 * DEGRADED otherwise; each change is pushed with KERNEL_STATUS.
 *
 * Contract details the caller relies on:
 *  - Every entry point may queue actions; drain them with
 *    imexd_core_next_action() after each call, in order (a KERNEL_COMMIT
 *    queued before a SEND must reach the kernel before the message leaves:
 *    a coordinator commits and stores locally before telling anyone).
 *  - CONNECT carries "host:port" (the default port added when a member
 *    address has none); the caller reports the result with conn_up(...,
 *    addr, true) using that same string, or conn_failed(addr).
 *  - After the core queues CLOSE for a connection it has forgotten it; a
 *    later conn_down() for it is harmless.
 *  - Kernel operations (KERNEL_PREPARE/COMMIT/ABORT) are answered with
 *    imexd_core_kernel_done(op_id, error, extack message), synchronously or
 *    later.  KERNEL_STATUS and STORE_* need no answer.
 *  - HEARTBEAT.seq carries a digest of the definitions the sender shares
 *    with the receiver (domain uuid + generation), not a sequence number;
 *    two mismatching heartbeats in a row make both sides SYNC.
 *  - After imexd_core_start() the node takes part in no change until it
 *    has heard from every member of its stored domains, and for at least
 *    miss_count x heartbeat_ms + backoff_max_ms (at most 2 x lease_ms):
 *    what it had prepared before is gone from the kernel, and a commit of
 *    it may have happened meanwhile.  PREPAREs are refused with EBUSY
 *    (coordinators retry), requests wait.
 *  - Requests on a domain with a change already coordinated here wait for
 *    it (FIFO per domain name) instead of failing with EBUSY.
 *  - Kernel status pushes are rate-limited to one per domain per
 *    heartbeat_ms / 50; the latest state always follows.
 *
 * Remote imports (core_import.c): a kernel import (imexd_core_import) goes
 * as one IMPORT_REQ to the member whose HELLO named the handle's node UUID;
 * its IMPORT_RESP becomes IMPORT_DONE.  An IMPORT_REQ from a member becomes
 * IMPORT_CHECK, answered with imexd_core_import_checked(), whose result
 * goes back as IMPORT_RESP.  Ends of exports that peers imported
 * (imexd_core_export_del) go out as EXPORT_REVOKE to the domain's members
 * (held for a member that is away, until it is back or lost); the importer
 * turns them, a member's loss past its grace and a member's new instance
 * into IMPORT_REVOKE.
 */
#ifndef IMEXD_CORE_H
#define IMEXD_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "wire.h"

struct imexd_core;

/* Zero in any field but epoch, fabric and grace_ms means its default. */
struct imexd_core_cfg {
	char node_name[IMEX_NAME_MAX];
	uint8_t node_uuid[16];
	uint64_t epoch;			/* this instance; nonzero */
	uint32_t max_channels;		/* the kernel's max_channels */
	uint8_t fabric_uuid[16];
	uint32_t partition;
	uint32_t heartbeat_ms;		/* default 1000 */
	uint32_t miss_count;		/* default 3 */
	int64_t grace_ms;		/* -1 forever, 0 none; default 30000 */
	uint32_t step_timeout_ms;	/* a phase without all answers fails;
					 * default 5000 */
	uint32_t lease_ms;		/* given with PREPARE; default 15000 */
	uint32_t backoff_min_ms;	/* reconnect backoff, default 500 */
	uint32_t backoff_max_ms;	/* default 3000 */
	uint16_t default_port;		/* for member addresses without one */
	uint32_t tombstone_ms;		/* how long deleted domains are
					 * remembered; default 3600000 */
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
	uint32_t uid, gid, mode;	/* owner of new channels: the caller
					 * fills the kernel's defaults (0, 0,
					 * 0600) where the request had none */
	char member[IMEX_NAME_MAX];	/* MEMBER_EVICT */
};

enum imexd_action_type {
	IMEXD_ACT_CONNECT = 1,		/* addr */
	IMEXD_ACT_CLOSE,		/* conn */
	IMEXD_ACT_SEND,			/* conn, msg */
	IMEXD_ACT_KERNEL_PREPARE,	/* op_id, change_id, op, lease_ms, def,
					 * chans (ADD/REMOVE_CHANNELS) */
	IMEXD_ACT_KERNEL_COMMIT,	/* op_id, change_id */
	IMEXD_ACT_KERNEL_ABORT,		/* op_id, change_id */
	IMEXD_ACT_KERNEL_STATUS,	/* status */
	IMEXD_ACT_REQUEST_DONE,		/* req_id, error, text */
	IMEXD_ACT_STORE_DEF,		/* def: persist (atomically) */
	IMEXD_ACT_STORE_REMOVE,		/* def.uuid: forget */
	IMEXD_ACT_PEER_RESTARTED,	/* peer: a new instance (a log line) */
	IMEXD_ACT_LOG,			/* level, text */
	IMEXD_ACT_IMPORT_DONE,		/* import_id, error, desc (error 0),
					 * text */
	IMEXD_ACT_IMPORT_CHECK,		/* op_id, handle_id, domain_uuid,
					 * channel_id, peer (the importer);
					 * answer: imexd_core_import_checked */
	IMEXD_ACT_IMPORT_REVOKE,	/* node_uuid, handle_id if has_handle,
					 * domain_uuid if has_domain, reason */
};

enum imexd_log_level { IMEXD_LOG_ERR = 3, IMEXD_LOG_WARN = 4,
		       IMEXD_LOG_INFO = 6, IMEXD_LOG_DEBUG = 7 };

struct imexd_member_status {
	char name[IMEX_NAME_MAX];
	uint8_t state;			/* enum imex_member_state (this view) */
	bool has_view;
	uint8_t view[IMEX_MEMBERS_MAX];	/* that member's view, per member */
};

struct imexd_domain_status {
	char name[IMEX_NAME_MAX];
	uint32_t state;			/* IMEX_DOMAIN_READY or _DEGRADED */
	uint16_t nmembers;
	struct imexd_member_status *members;
};

/* Owned pointers are released by imexd_action_free(). */
struct imexd_action {
	enum imexd_action_type type;
	uint64_t conn;
	char addr[IMEXD_ADDR_MAX + 1];
	struct imexd_msg msg;
	uint64_t op_id;			/* echoed in imexd_core_kernel_done */
	uint64_t change_id;
	uint8_t op;			/* enum imex_change_op */
	uint32_t lease_ms;
	struct imexd_def def;
	uint32_t nchans;
	struct imexd_channel *chans;
	struct imexd_domain_status status;
	uint64_t req_id;
	int error;			/* positive errno or 0 */
	char text[512];			/* message or log line */
	int level;
	char peer[IMEX_NAME_MAX];
	/* imports */
	uint64_t import_id;
	uint64_t handle_id;
	bool has_handle;
	bool has_domain;
	uint8_t node_uuid[16];
	uint8_t domain_uuid[16];
	uint32_t channel_id;
	uint8_t reason;			/* enum imex_revoke_reason */
	uint16_t desc_len;
	uint8_t desc[IMEX_DESC_MAX];
};

/* A remote import, as accepted from the kernel (IMEX_CMD_IMPORT_ACCEPT). */
struct imexd_import {
	uint64_t import_id;
	uint8_t handle_node[16];
	uint64_t handle_id;
	uint8_t domain_uuid[16];	/* the importer's channel */
	uint32_t channel_id;
};

struct imexd_core *imexd_core_new(const struct imexd_core_cfg *cfg);
void imexd_core_free(struct imexd_core *core);

/*
 * Start (or restart) with what the kernel holds and what was stored.  The
 * core reconciles: stored definitions the kernel lacks (a reboot) are
 * re-created through KERNEL_PREPARE/COMMIT, kernel domains are adopted, and
 * every peer is connected to and sent SYNC.  The generation of @kernel
 * entries is ignored (the kernel's counter is not the definitions'): a
 * kernel domain takes the stored generation when its content matches the
 * stored definition, else 0, so members overwrite it with theirs.  Stored
 * entries with IMEXD_DEF_DELETED are tombstones.  Arrays stay the caller's.
 */
void imexd_core_start(struct imexd_core *core, uint64_t now,
		      const struct imexd_def *kernel, size_t nkernel,
		      const struct imexd_def *stored, size_t nstored);

void imexd_core_conn_up(struct imexd_core *core, uint64_t now, uint64_t conn,
			const char *addr, bool outbound);
void imexd_core_conn_failed(struct imexd_core *core, uint64_t now,
			    const char *addr);
void imexd_core_conn_down(struct imexd_core *core, uint64_t now,
			  uint64_t conn);
/* @msg stays the caller's. */
void imexd_core_msg(struct imexd_core *core, uint64_t now, uint64_t conn,
		    const struct imexd_msg *msg);
/* @req stays the caller's. */
void imexd_core_request(struct imexd_core *core, uint64_t now,
			const struct imexd_request *req);
void imexd_core_kernel_done(struct imexd_core *core, uint64_t now,
			    uint64_t op_id, int error, const char *message);
/* @imp stays the caller's. */
void imexd_core_import(struct imexd_core *core, uint64_t now,
		       const struct imexd_import *imp);
/* The kernel's IMPORT_CHECK answer: @error (positive errno or 0), @desc. */
void imexd_core_import_checked(struct imexd_core *core, uint64_t now,
			       uint64_t op_id, int error, const uint8_t *desc,
			       uint16_t desc_len);
/* An export that peers imported ended (IMEX_CMD_EXPORT_DEL_ACCEPT). */
void imexd_core_export_del(struct imexd_core *core, uint64_t now,
			   uint64_t handle_id, const uint8_t domain_uuid[16],
			   uint32_t channel_id);
/* Call at (or after) imexd_core_next_deadline(). */
void imexd_core_timer(struct imexd_core *core, uint64_t now);
/*
 * SIGHUP: new heartbeat, miss count, grace, step timeout and lease (zero:
 * the default, as in imexd_core_new).  Each applies from the next time it
 * is used; deadlines already set keep theirs.
 */
void imexd_core_set_timing(struct imexd_core *core, uint32_t heartbeat_ms,
			   uint32_t miss_count, int64_t grace_ms,
			   uint32_t step_timeout_ms, uint32_t lease_ms);
/* SIGTERM: tell peers (LEAVE), stop coordinating; state is kept. */
void imexd_core_shutdown(struct imexd_core *core, uint64_t now);

/* The earliest time imexd_core_timer() is wanted; UINT64_MAX if none. */
uint64_t imexd_core_next_deadline(const struct imexd_core *core);
/* Pop the next action into @a (caller frees it); false when none. */
bool imexd_core_next_action(struct imexd_core *core, struct imexd_action *a);
void imexd_action_free(struct imexd_action *a);

/* Read-only views for the simulator's invariants and for debugging. */
size_t imexd_core_domains(const struct imexd_core *core,
			  const struct imexd_def **defs);
bool imexd_core_domain_ready(const struct imexd_core *core,
			     const uint8_t uuid[16]);
uint8_t imexd_core_peer_state(const struct imexd_core *core,
			      const char *node_name);

#endif /* IMEXD_CORE_H */
