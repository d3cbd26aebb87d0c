/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test_agree program's shared part: the in-test network of agree
 * parts in test_agree.c, and the tests of test_agree_*.c that its main()
 * runs.
 */
#ifndef IMEX_TEST_AGREE_H
#define IMEX_TEST_AGREE_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agree.h"
#include "metrics.h"
#include "raftwire.h"

#define NN 5
#define ET ((uint64_t)1000)

struct tmsg {
	enum imexd_agree_action_type type;
	unsigned from, to;
	uint64_t at, tag, index;
	uint8_t *data;
	size_t len;
	int error;
	char message[300];
};

struct tdone {
	bool done;
	int error;
	char message[300];
};

struct tnode {
	char name[8];
	struct imexd_raftlog_mem *disk;
	struct imexd_raftlog *log;
	struct imexd_agree *ag;
	struct imexd_def *kernel;
	size_t nk;
	const uint8_t *hello_fabric;	/* its HELLO's; NULL: fabric */
	unsigned leaving_lines, removed_lines;
	unsigned dropped;	/* SET steps whose kernel list had a member more */
};

struct tnet {
	uint64_t now;
	unsigned n_roster;
	struct tnode nodes[NN];
	struct tmsg *q;
	size_t nq, capq;
	struct tdone done[16];
};

/* test_agree.c */
struct imexd_agree *agree_on(struct imexd_raftlog_mem *disk,
			     struct imexd_agree_config *cfg,
			     struct imexd_raftlog **log);
extern const uint8_t fabric[16];
void drain(struct tnet *t, unsigned i, int rv);
void node_start(struct tnet *t, unsigned i);
void node_stop(struct tnet *t, unsigned i);
struct tnet *net_new(unsigned n_roster);
void net_free(struct tnet *t);
void run_for(struct tnet *t, uint64_t ms);
const struct imexd_cons *cons_of(struct tnet *t, unsigned i);
int role_at(struct tnet *t, unsigned at, const char *name);
unsigned leader_of(struct tnet *t);
unsigned settled_leader(struct tnet *t, unsigned n);
void wait_done(struct tnet *t, uint64_t tag, uint64_t limit);
void request_node(struct tnet *t, unsigned at, uint64_t tag,
		  uint8_t type, const char *name, const char *addr,
		  const uint8_t fab[16]);
void request_create(struct tnet *t, unsigned at, uint64_t tag,
		    const char *name, const char *const *members,
		    uint16_t n);

/* test_agree_members.c */
void test_join_and_leave(void **state);
void test_leave_leader_lost(void **state);
void test_forwarded_join_checked_by_leader(void **state);
void test_leave_of_the_leader_hands_over(void **state);
void test_create_and_leave_at_once(void **state);
void test_kernel_step_names_members_dropped(void **state);
void test_leave_refused_names_unreachable_voter(void **state);

/* test_agree_forward.c */
void test_forwarded_replace_by_a_non_member_refused(void **state);
void test_forwards_again_on_replaced_connection(void **state);
void test_forwarded_identity_of_another_node_refused(void **state);
void test_served_requests_per_peer_bounded(void **state);

/* test_agree_logs.c */
void test_dropped_lines_limited_per_name(void **state);
void test_dropped_message_lines_rate_limited(void **state);

#endif /* IMEX_TEST_AGREE_H */
