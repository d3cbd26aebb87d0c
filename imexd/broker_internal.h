/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The import broker's tables and the helpers its files share: broker.c
 * (actions, who is who, ending imports, peer events, life) and
 * broker_import.c (an import's round trip, on both nodes).
 */
#ifndef IMEXD_BROKER_INTERNAL_H
#define IMEXD_BROKER_INTERNAL_H

#include "broker.h"
#include "metrics.h"

#define BRK_NO_TIME		UINT64_MAX
#define BRK_LOG_INTERVAL_MS	60000	/* rate limit: one line a minute */
#define BRK_ACTS_MIN		64	/* kept: room for any one small event */
#define BRK_ERRNO_MAX		4095

/* Why a waiting import ended; its IMPORT_DONE is still due. */
enum brk_end {
	BRK_WAITING,
	BRK_END_DOWN,
	BRK_END_LOST,
	BRK_END_RESTARTED,
	BRK_END_SHUTDOWN,
};

struct brk_import {
	uint64_t import_id;		/* also the tag on the wire */
	char peer[IMEX_NAME_MAX];	/* the exporter asked */
	uint8_t domain_uuid[16];
	uint64_t deadline;
	uint8_t end;			/* enum brk_end */
};

struct brk_check {
	uint64_t op_id;
	char peer[IMEX_NAME_MAX];	/* the importer that asked */
	uint8_t domain_uuid[16];
	uint64_t tag;
	uint64_t deadline;		/* by then the importer gave up */
	bool orphan;			/* its connection went: no answer */
};

struct brk_revoke {
	char peer[IMEX_NAME_MAX];
	uint8_t domain_uuid[16];
	uint64_t handle_id;
};

/* Log lines a peer (or a burst of exports) could repeat without end. */
enum brk_limited {
	BRK_LIM_REQ_REFUSED,
	BRK_LIM_RESP_WRONG_PEER,
	BRK_LIM_RESP_STRAY,
	BRK_LIM_REVOKE_REFUSED,
	BRK_LIM_MSG_TYPE,
	BRK_LIM_CHECKS_FULL,
	BRK_LIM_HOLD_FULL,
	BRK_LIM_N
};

struct brk_limit {
	bool used;
	uint64_t last;
	uint32_t skipped;
};

/* One queued action with the storage its pointers point into. */
struct brk_act {
	struct imexd_broker_action a;
	struct imexd_msg msg;
	char to[IMEX_NAME_MAX];
	char text[IMEX_MESSAGE_MAX];
	uint8_t desc[IMEX_DESC_MAX];
};

struct imexd_broker {
	char self[IMEX_NAME_MAX];
	bool shut;
	uint64_t next_op;

	struct brk_import *imps;
	size_t nimps, imps_cap;
	struct brk_check *checks;
	size_t nchecks, checks_cap;
	struct brk_revoke *revs;
	size_t nrevs, revs_cap;
	/* Peers with a bound connection now (roster names only). */
	char (*up)[IMEX_NAME_MAX];
	size_t nup, up_cap;

	struct brk_limit lim[BRK_LIM_N];
	/* Peers' imports this node's kernel or broker refused (metrics). */
	uint64_t refused[IMEXD_REFUSED_N];

	struct brk_act *acts;
	size_t nacts, next_act, acts_cap;
	struct imexd_log_fields next_fields;	/* of the next log line */
};

/* Every input starts here: what the caller drained goes, the rest stays. */
void brk_begin(struct imexd_broker *b);
struct brk_act *brk_push(struct imexd_broker *b,
			 enum imexd_broker_action_type type);
/* Fields for the next log line (brk_log, brk_log_limited) only. */
void brk_fields(struct imexd_broker *b, const char *msgid,
		const char *domain, const char *node);
__attribute__((format(printf, 3, 4)))
void brk_log(struct imexd_broker *b, int level, const char *fmt, ...);
/* At most one line of kind @kind a minute; the next says how many went. */
__attribute__((format(printf, 5, 6)))
void brk_log_limited(struct imexd_broker *b, uint64_t now,
		     enum brk_limited kind, int level,
		     const char *fmt, ...);
__attribute__((format(printf, 6, 7)))
bool brk_done(struct imexd_broker *b, uint64_t import_id, int error,
	      const uint8_t *desc, uint16_t desc_len,
	      const char *fmt, ...);
struct imexd_msg *brk_send(struct imexd_broker *b, const char *to,
			   uint8_t type, const uint8_t domain_uuid[16]);
bool brk_is_up(const struct imexd_broker *b, const char *name);
/*
 * The committed domain @uuid if it names this node and @peer (NULL: only
 * this node) as members; else NULL.
 */
const struct imexd_def *brk_domain(const struct imexd_broker *b,
				   const struct imexd_fsm *fsm,
				   const uint8_t uuid[16],
				   const char *peer);
/*
 * The member of @d other than this node whose reported node UUID is
 * @uuid; NULL when none, or when more than one reports it (*@many).
 */
const char *brk_exporter(const struct imexd_broker *b,
			 const struct imexd_fsm *fsm,
			 const struct imexd_def *d,
			 const uint8_t uuid[16], bool *many);
/* The first node of the table that reported @uuid, for messages; or NULL. */
const char *brk_node_name(const struct imexd_fsm *fsm,
			  const uint8_t uuid[16]);
void brk_imp_remove(struct imexd_broker *b, size_t i);
void brk_resp_in(struct imexd_broker *b, uint64_t now,
		 const char *from, const struct imexd_msg *msg);
void brk_req_in(struct imexd_broker *b, uint64_t now,
		const struct imexd_fsm *fsm, const char *from,
		const struct imexd_msg *msg);
/* Send (@send) or drop what is held for peer @name, in order. */
void brk_revokes_flush(struct imexd_broker *b, const char *name,
		       bool send);

#endif /* IMEXD_BROKER_INTERNAL_H */
