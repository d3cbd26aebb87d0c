/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test_consensus program's shared part: the cluster helpers in
 * test_consensus.c, and the tests of test_consensus_*.c that its main()
 * runs.
 */
#ifndef IMEX_TEST_CONSENSUS_H
#define IMEX_TEST_CONSENSUS_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness_raft.h"

#define ET ((uint64_t)1000) /* election timeout, ms */

/* test_consensus.c */
extern const struct hr_faults lan;
struct hr *cluster(unsigned n, unsigned seed);
bool settled(struct hr *h, void *arg);
bool converged(struct hr *h, void *arg);
void election(unsigned n);
void submit_n(struct hr *h, raft_id at, unsigned from, unsigned n,
	      const char *prefix);
unsigned count_role(struct hr *h, raft_id at, int role);

/* the tests: test_consensus_boot.c, test_consensus_repl.c,
 * test_consensus_faults.c
 */
void test_election_3(void **state);
void test_election_5(void **state);
void test_election_7(void **state);
void test_roster_ids_and_voters(void **state);
void test_bootstrap_entry_identical(void **state);
void test_group_id_of_the_bootstrap_entry(void **state);
void test_two_names_never_lead_alone(void **state);
void test_bad_inputs_refused(void **state);
void test_apply_order_identical(void **state);
void test_commit_pushed_at_once(void **state);
void test_entry_sent_at_once(void **state);
void test_leader_kill_failover(void **state);
void test_partition_2_3(void **state);
void test_lost_voter_replaced(void **state);
void test_snapshot_catch_up(void **state);
void test_join_and_leave(void **state);
void test_random_faults_agreement(void **state);
void test_leave_refused_when_voters_left_unreachable(void **state);
void test_leave_promotes_standby_first(void **state);
void test_leader_leave_hands_over_two_nodes(void **state);
void test_leader_leave_alone_refused(void **state);
void test_leader_leave_hands_over_three_voters(void **state);
void test_membership_random_faults(void **state);

#endif
