/* SPDX-License-Identifier: GPL-2.0 */
/* Shared between imex-nl's command front end and its manager stand-in. */
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
struct nl_msg *msg_new(struct ctx *c, int cmd, int flags);
int transact(struct ctx *c, struct nl_msg *m, nl_recvmsg_msg_cb_t valid,
	     void *arg);
int wait_fd(int fd, int timeout_ms);
int cmd_serve(struct ctx *c, const struct kv *kv);

#endif
