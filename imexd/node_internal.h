/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node dispatcher's internals, shared by its files:
 *   node.c         the action queue, the roster, life, events, views
 *   node_pump.c    the parts' actions, drained until none is left
 *   node_req.c     roster and parts set-up, requests into fsm commands,
 *                  messages routed by type, forwards not sent
 *   node_join.c    peers following the configuration, HELLOs, joins
 *   node_kernel.c  domains and generations handed to health, kernel
 *                  status out, answers held until the kernel shows them
 *   node_members.c the membership view
 */
#ifndef IMEXD_NODE_INTERNAL_H
#define IMEXD_NODE_INTERNAL_H

#include <stddef.h>

#include "agree.h"
#include "node.h"

/* A queued action and the storage its pointers point into. */
struct node_out {
	struct imexd_node_action a;
	uint8_t *frame;
	char *text;
	uint32_t *ids;
	char *addr;
	char *peer;
	bool has_def;
	struct imexd_def def;
	bool has_status;
	struct imexd_domain_status st;
	struct imexd_member_status *st_members;
	uint8_t desc[IMEX_DESC_MAX];
	uint16_t desc_len;
};

/*
 * A request's answer held until this node's kernel shows its outcome (the
 * domain at @index or later, or gone after a delete), so the command
 * returns once the change is in effect here; released after @deadline
 * anyway (the kernel refused a step: the log says why).
 */
struct node_parked {
	struct node_out o;
	uint8_t uuid[16];
	uint64_t index;
	bool deleted;
	uint64_t deadline;
};

/* A FORWARD the transport could not send: agree hears "not the leader". */
struct node_unsent {
	char to[IMEX_NAME_MAX];
	uint64_t tag;
};

struct node_dom_sig {
	uint8_t uuid[16];
	uint64_t generation;
};

#define NODE_LOGKEYS_MAX 32

struct imexd_node {
	struct imexd_node_config cfg;	/* roster: see below */
	struct imexd_roster_node *roster;
	size_t n_roster;
	const char **names;		/* roster names, for agree */

	struct imexd_peers *peers;
	struct imexd_agree *agree;
	struct imexd_health *health;
	struct imexd_broker *broker;

	uint64_t now;
	uint64_t started;		/* now at imexd_node_start() */
	uint64_t counter;		/* UUIDs of new domains */
	char leader[IMEX_NAME_MAX];
	bool in_agree;
	bool domains_dirty;
	/* The domains health's tables were last built from, by uuid and
	 * generation (every committed change sets a new one): an entry
	 * that changes none of them leaves the tables as they are. */
	struct node_dom_sig *dom_sig;
	size_t n_dom_sig, cap_dom_sig;
	bool dom_sig_set;
	uint64_t fsm_index;		/* the table's last index health saw */
	bool kernel_busy, kernel_lost;
	struct imexd_def *kernel;	/* the kernel's domains, last read */
	size_t n_kernel;

	struct node_unsent *unsent;
	size_t n_unsent, cap_unsent;
	struct node_parked *parked;
	size_t n_parked, cap_parked;

	struct node_out *out;
	size_t n_out, cap_out, out_head;
	struct node_out cur;		/* the action last handed out */

	/* Membership: peers follow the raft configuration. */
	bool outside;			/* not in NODES_FILE: waits to be joined */
	uint64_t members_seen;		/* configuration index synced, +1 */
	struct node_join {
		uint64_t req_id;
		char name[IMEX_NAME_MAX];
		char addr[IMEXD_ADDR_MAX + 1];
		uint64_t deadline;
		bool submitted;		/* waiting for the group's answer */
	} joins[IMEXD_NODE_JOINS_MAX];
	struct node_check {		/* this leader's own check of a join */
		uint64_t tag;		/* JOIN_CHECK's */
		char name[IMEX_NAME_MAX];
		uint64_t deadline;
		bool ready;		/* its HELLO came: answer agree */
		uint8_t fabric_uuid[16];
		uint32_t partition;
	} checks[IMEXD_NODE_JOINS_MAX];
	unsigned n_joins, n_checks;
	struct node_hello {		/* the last HELLO of each bound peer */
		char name[IMEX_NAME_MAX];
		uint8_t fabric_uuid[16];
		uint32_t partition;
		uint64_t down_at;	/* its connection lost (now); 0: up */
	} *hellos;
	size_t n_hellos, cap_hellos;

	/* Lines a peer or the configuration repeats: once a minute per
	 * (what, name), the oldest of NODE_LOGKEYS_MAX giving way. */
	struct node_logkey {
		char what[16];
		char name[IMEX_NAME_MAX];
		uint64_t at;
	} logkeys[NODE_LOGKEYS_MAX];

	imexd_node_applied_fn *applied_fn;	/* checkers only */
	void *applied_ctx;
};

/* node.c */
struct node_out *node_out_push(struct imexd_node *n,
			       enum imexd_node_action_type type);
void node_out_release(struct node_out *o);
/* A line with fields (@f NULL: none). */
void node_log_f(struct imexd_node *n, const struct imexd_log_fields *f,
		int level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void node_log(struct imexd_node *n, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
char *node_dup_str(const char *s);
/*
 * The index of the entry named @name among @count entries of @size bytes
 * at @base, each with its name (a char array) at @off; -1 if none.
 */
int node_name_find(const void *base, size_t count, size_t size, size_t off,
		   const char *name);
/* The index in array @arr, of @count entries with a .name, of @key. */
#define node_find(arr, count, key)					\
	node_name_find(arr, count, sizeof(*(arr)),			\
		       offsetof(__typeof__(*(arr)), name), key)
int node_roster_index(const struct imexd_node *n, const char *name);
/* "host:port" with the default port added when there is none. */
void node_addr_norm(const struct imexd_node *n, const char *in, char *out,
		    size_t len);

/* node_pump.c */
void node_ag(struct imexd_node *n, int rv, const char *what);
void node_pump(struct imexd_node *n);

/* node_req.c */
int node_roster_init(struct imexd_node *n, const struct imexd_node_config *cfg,
		     char *err, size_t errlen);
int node_parts_new(struct imexd_node *n, char *err, size_t errlen);
const struct imexd_fsm *node_fsm(const struct imexd_node *n);
void node_req_fail(struct imexd_node *n, uint64_t req_id, int error,
		   const char *text);
/* Is @name in the group's raft configuration? */
bool node_is_member(const struct imexd_node *n, const char *name);
void node_route(struct imexd_node *n, const char *from,
		const struct imexd_msg *msg);
void node_unsent_add(struct imexd_node *n, const char *to, uint64_t tag);
void node_unsent_flush(struct imexd_node *n);

/* node_join.c */
bool node_log_due(struct imexd_node *n, const char *what, const char *name);
void node_members_sync(struct imexd_node *n);
void node_hello(struct imexd_node *n, const char *name,
		const struct imexd_msg *hello);
void node_peer_down(struct imexd_node *n, const char *name);
void node_joins_expire(struct imexd_node *n);
void node_join_check(struct imexd_node *n, const char *name,
		     const char *addr, uint64_t tag);
void node_checks_answer(struct imexd_node *n);
void node_join_done(struct imexd_node *n, uint64_t req_id);
uint64_t node_joins_deadline(const struct imexd_node *n);
/* A join: dial the node, then ask the group with its HELLO's identity. */
void node_join(struct imexd_node *n, const struct imexd_request *r);

/* node_kernel.c */
void node_status_out(struct imexd_node *n,
		     const struct imexd_domain_status *st);
void node_domains_refresh(struct imexd_node *n);
void node_applied_refresh(struct imexd_node *n);
int node_kernel_set(struct imexd_node *n, const struct imexd_def *kernel,
		    size_t nkernel);
/* 5 election timeouts, as agree's request timeout by default. */
uint64_t node_park_ms(const struct imexd_node *n);
void node_park(struct imexd_node *n, struct node_out *o, uint64_t index);
void node_parked_release(struct imexd_node *n);
uint64_t node_parked_deadline(const struct imexd_node *n);

#endif /* IMEXD_NODE_INTERNAL_H */
