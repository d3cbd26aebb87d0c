/* SPDX-License-Identifier: GPL-2.0 */
/* Shared between imex-nl's files: front end, plumbing, printing, commands, sweep, stand-in. */
#ifndef IMEX_NL_H
#define IMEX_NL_H

#include <stdbool.h>
#include <stdint.h>
#include <netlink/netlink.h>

#define MAX_ARGS 64

struct ctx {
	struct nl_sock *sk;	/* commands */
	struct nl_sock *ev;	/* events, subscribed on demand */
	int family;
	int grp_events, grp_manager;
	int err;		/* errno of the last command, positive */
	char msg[512];		/* its extended-ack message */
	uint64_t req_id;	/* the last request id */
	bool quiet;
	bool dump_intr;
	unsigned int fail_nth;	/* arm fail-nth for the next request sent */
	bool armed;		/* the last command ran with it armed */
	bool injected;		/* ... and the fault was used */
	int lost;		/* errno that lost its reply, or 0 */
	bool lost_send;		/* ... at the send: the kernel saw nothing */
};

struct kv {
	char *key[MAX_ARGS];
	char *val[MAX_ARGS];
	int n;
};

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
const char *kv_get(const struct kv *kv, const char *key);
uint64_t parse_u64(const char *s);
void parse_range(char *s, uint64_t *lo, uint64_t *hi);
struct nl_msg *msg_new(struct ctx *c, int cmd, int flags);
int transact(struct ctx *c, struct nl_msg *m, nl_recvmsg_msg_cb_t valid,
	     void *arg);
int wait_fd(int fd, int timeout_ms);
/* imex-nl.c */
const char *errname(int e);
int run_line(struct ctx *c, char *line, int lineno);

/* imex-nl-msg.c */
struct nl_sock *open_sock(struct ctx *c);
void ctx_init(struct ctx *c);
void events_open(struct ctx *c);
void put_uuid(struct nl_msg *m, int type, const char *s);
void put_fabric(struct nl_msg *m, const char *spec);
uint32_t state_from_name(const char *s);
void put_raw(struct nl_msg *m, const char *spec);
void put_common(struct nl_msg *m, const struct kv *kv);

/* imex-nl-dump.c */
int print_msg(struct nl_msg *m, void *arg);

/* imex-nl-cmd.c */
int cmd_simple(struct ctx *c, int cmd, const struct kv *kv, int flags);
int cmd_accept(struct ctx *c, const struct kv *kv);
int cmd_request(struct ctx *c, int cmd, const struct kv *kv);
int cmd_domain_set(struct ctx *c, const struct kv *kv);
int cmd_status(struct ctx *c, const struct kv *kv);
int cmd_node_set(struct ctx *c, const struct kv *kv);
int cmd_channel_set(struct ctx *c, const struct kv *kv);
int cmd_channel_get(struct ctx *c, const struct kv *kv, bool dump);
int cmd_done(struct ctx *c, const struct kv *kv);
int cmd_events(struct ctx *c, const struct kv *kv);
int cmd_join(struct ctx *c, const struct kv *kv);
int cmd_dump_intr(struct ctx *c, const struct kv *kv);

/* imex-nl-sweep.c */
int sweep(struct ctx *c, const char *name, char **lines, int nlines,
	  bool client);

/* serve.c */
int cmd_serve(struct ctx *c, const struct kv *kv);

#endif
