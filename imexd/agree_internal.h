/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agree's internals, shared by agree.c (the raft server, life),
 * agree_input.c (identity, kernel, inputs), agree_req.c (action queue,
 * requests), agree_dispatch.c (dispatch, expiry) and agree_serve.c
 * (requests in).  Not an interface.
 */
#ifndef IMEXD_AGREE_INTERNAL_H
#define IMEXD_AGREE_INTERNAL_H

#include "agree.h"
#include "metrics.h"
#include "grow.h"

enum req_kind {
	REQ_LOCAL = 1,	/* an admin request of this node: DONE */
	REQ_SERVE,	/* a peer's request served by this leader: REPLY */
	REQ_IDENTITY,	/* this node's NODE_SET: a log line */
};

enum req_state { REQ_WAIT = 1, REQ_SUBMITTED, REQ_FORWARDED };

#define AG_LOGKEYS_MAX 32	/* names whose lines are limited */

struct ag_req {
	uint64_t id;		/* consensus tag / FORWARD tag; unique here */
	uint64_t tag;		/* the caller's (LOCAL) or the origin's (SERVE) */
	enum req_kind kind;
	enum req_state state;
	char peer[IMEX_NAME_MAX];	/* SERVE: origin; FORWARDED: leader */
	uint8_t type;
	uint8_t *cmd;
	size_t len;
	uint64_t deadline, retry_at;
	uint64_t submitted_at;	/* for the commit-latency histogram */
	bool left;		/* NODE_LEAVE: out of the configuration; the
				 * table command is next */
	bool repeated;		/* forwarded again after its leader was lost */
	/* NODE_JOIN on the leader: its own check of the node (JOIN_CHECK). */
	bool checking, checked;
	int check_error;
	uint8_t fabric_uuid[16];
	uint32_t partition;
};

struct ag_scratch {
	void *p;
	bool def;		/* a struct imexd_def to imexd_def_free() */
};

/* A write made durable, to report to consensus in order. */
struct ag_done {
	bool snapshot;
	raft_index last;
};

struct imexd_agree {
	struct imexd_agree_config cfg;
	char **roster;
	char self[IMEX_NAME_MAX];
	uint64_t et;

	struct imexd_cons *cons;	/* NULL before start and while failed */
	struct imexd_fsm *fsm;
	bool started;
	uint64_t restart_at;
	raft_id last_leader;
	enum raft_state last_state;

	struct imexd_agree_action *acts;
	size_t n_acts, cap_acts, next_act;
	struct ag_scratch *scratch;
	size_t n_scratch, cap_scratch;

	struct ag_done *dones;
	size_t n_dones, cap_dones;
	uint8_t *taken;			/* TAKE_SNAPSHOT blob to report */
	size_t taken_len;
	bool taking, failed_now;

	struct ag_req *reqs;
	size_t n_reqs, cap_reqs;
	uint64_t next_id;
	bool identity_refused;
	bool removed_logged;		/* "removed from the group": said */
	/* Lines a peer can cause: once a minute per (what, name). */
	struct ag_logkey {
		char what[16];
		char name[IMEX_NAME_MAX];
		uint64_t at;		/* when the last line went out */
		uint32_t skipped;	/* held back since */
	} logkeys[AG_LOGKEYS_MAX];

	struct imexd_metrics_hist commit;	/* submit to commit, here */

	struct imexd_def *have;		/* the kernel's domains */
	size_t n_have;
	bool rec_due, inflight;
	uint64_t next_period;
	struct imexd_rec_step cur;	/* the step in flight (def shallow) */
	char (*skip)[IMEX_NAME_MAX + 1];	/* type char + name */
	size_t n_skip, cap_skip;
};

/* agree_req.c: growth, the action queue and what it owns until the next
 * input, requests. */
int ag_keep(struct imexd_agree *a, void *p, bool def);
void ag_scratch_free(struct imexd_agree *a);
struct imexd_agree_action *ag_push(struct imexd_agree *a,
				enum imexd_agree_action_type type);
const char *ag_str(struct imexd_agree *a, const char *s);
const void *ag_dup(struct imexd_agree *a, const void *p, size_t len);
const struct imexd_def *ag_def(struct imexd_agree *a,
			     const struct imexd_def *def);
/* A LOG action with fields (@f NULL: none). */
__attribute__((format(printf, 4, 5)))
int ag_log_f(struct imexd_agree *a, const struct imexd_log_fields *f,
	     int level, const char *fmt, ...);
/* A LOG action without fields. */
#define ag_log(a, level, ...) ag_log_f(a, NULL, level, __VA_ARGS__)
/* ag_log(), at most once a minute per (@what, @name) in a table of
 * AG_LOGKEYS_MAX where the oldest gives way; the next line says how many
 * were held back. */
__attribute__((format(printf, 6, 7)))
int ag_log_limited(struct imexd_agree *a, uint64_t now, const char *what,
		   const char *name, int level, const char *fmt, ...);
int ag_begin(struct imexd_agree *a);
struct ag_req *ag_req_by_id(struct imexd_agree *a, uint64_t id);
void ag_req_del(struct imexd_agree *a, struct ag_req *r);
int ag_req_finish(struct imexd_agree *a, struct ag_req *r, int error,
	       const char *message, const struct imexd_def *def,
	       uint64_t index, const uint32_t *ids, uint32_t nids);
struct ag_req *ag_req_new(struct imexd_agree *a, uint64_t now,
		       enum req_kind kind, uint64_t tag, uint8_t *cmd,
		       size_t len);
void ag_quorum_text(struct imexd_agree *a, uint64_t now, char *buf, size_t size);
int ag_cmd_encode(const struct imexd_cmd *cmd, uint8_t **out, size_t *len,
		  const char **why);

/* agree_dispatch.c */
int ag_dispatch(struct imexd_agree *a, uint64_t now);
int ag_leader_moved(struct imexd_agree *a, const char *leader);
int ag_forwards_again(struct imexd_agree *a, const char *peer, bool to_peer,
		      const char *why);
int ag_expire(struct imexd_agree *a, uint64_t now);

/* agree.c */
int ag_pump(struct imexd_agree *a, uint64_t now);
int ag_stop(struct imexd_agree *a, uint64_t now, int err, const char *what);
int ag_server_start(struct imexd_agree *a, uint64_t now);

/* agree_input.c */
bool ag_synced(const struct imexd_agree *a);
int ag_settle(struct imexd_agree *a, uint64_t now);
int ag_plan(const struct imexd_agree *a, struct imexd_rec_plan *p);

#endif /* IMEXD_AGREE_INTERNAL_H */
