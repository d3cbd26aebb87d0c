// SPDX-License-Identifier: GPL-2.0
/*
 * consensus (imexd/consensus*.c) on the in-memory cluster harness:
 * elections, apply order, failover time, a 2|3 partition, voter
 * replacement and a run of random-fault seeds under an agreement checker.
 * IMEX_SEED=N replays one seed of the random run; IMEX_SEEDS=M runs M
 * seeds (from N, or from 1; default 250).
 *
 * One program: this file holds the cluster helpers the parts share
 * (test_consensus.h), and main(); the tests are in test_consensus_boot.c,
 * test_consensus_repl.c and test_consensus_faults.c.
 */
#include "test_consensus.h"

const struct hr_faults lan = { .latency_ms = 1, .jitter_ms = 1, .disk_ms = 2 };

struct hr *cluster(unsigned n, unsigned seed)
{
	struct hr_config cfg = {
		.n = n,
		.seed = seed,
		.election_timeout_ms = (unsigned)ET,
		.lost_voter_timeouts = 3,
		.faults = lan,
	};

	return hr_new(&cfg);
}

/* Every up node follows the same leader in the same term. */
bool settled(struct hr *h, void *arg)
{
	raft_id l = hr_leader(h);
	unsigned i;

	(void)arg;
	if (!l)
		return false;
	for (i = 1; i <= hr_n(h); i++) {
		if (!hr_up(h, i))
			continue;
		if (imexd_cons_leader(hr_cons(h, i)) != hr_id(h, l) ||
		    imexd_cons_term(hr_cons(h, i)) != imexd_cons_term(hr_cons(h, l)))
			return false;
	}
	return true;
}

/* arg: NULL, or a command (string) that must have been acknowledged. */
bool converged(struct hr *h, void *arg)
{
	return (!arg || hr_is_acked(h, arg, strlen(arg))) && hr_converged(h);
}

/* At most one leader per term among all nodes. */
static void assert_one_leader_per_term(struct hr *h)
{
	unsigned i, j;

	for (i = 1; i <= hr_n(h); i++)
		for (j = i + 1; j <= hr_n(h); j++) {
			if (!hr_up(h, i) || !hr_up(h, j))
				continue;
			if (imexd_cons_state(hr_cons(h, i)) == RAFT_LEADER &&
			    imexd_cons_state(hr_cons(h, j)) == RAFT_LEADER)
				assert_int_not_equal(imexd_cons_term(hr_cons(h, i)),
						     imexd_cons_term(hr_cons(h, j)));
		}
}

void election(unsigned n)
{
	struct hr *h = cluster(n, 1000 + n);
	unsigned i, voters = 0;
	raft_id l;

	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	l = hr_leader(h);
	assert_int_equal(imexd_cons_role(hr_cons(h, l), hr_id(h, l)), RAFT_VOTER);
	for (i = 1; i <= n; i++)
		if (imexd_cons_role(hr_cons(h, l), hr_id(h, i)) == RAFT_VOTER)
			voters++;
	assert_int_equal(voters, imexd_cons_voters(n));
	printf("  %u nodes: leader n%02llu after %llu ms (term %llu)\n", n,
	       l - 1, (unsigned long long)hr_now(h), imexd_cons_term(hr_cons(h, l)));
	hr_run_for(h, 5 * ET);
	assert_int_equal(hr_leader(h), l);
	assert_one_leader_per_term(h);
	hr_free(h);
}

void submit_n(struct hr *h, raft_id at, unsigned from, unsigned n,
	      const char *prefix)
{
	unsigned i;

	for (i = from; i < from + n; i++) {
		char cmd[32];
		raft_index index;

		snprintf(cmd, sizeof(cmd), "%s%u", prefix, i);
		assert_int_equal(hr_submit(h, at, cmd, strlen(cmd), &index), 0);
		hr_run_for(h, 1);
	}
}

unsigned count_role(struct hr *h, raft_id at, int role)
{
	unsigned i, n = 0;

	for (i = 1; i <= hr_n(h); i++)
		if (imexd_cons_role(hr_cons(h, at), hr_id(h, i)) == role)
			n++;
	return n;
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roster_ids_and_voters),
		cmocka_unit_test(test_bootstrap_entry_identical),
		cmocka_unit_test(test_group_id_of_the_bootstrap_entry),
		cmocka_unit_test(test_two_names_never_lead_alone),
		cmocka_unit_test(test_bad_inputs_refused),
		cmocka_unit_test(test_election_3),
		cmocka_unit_test(test_election_5),
		cmocka_unit_test(test_election_7),
		cmocka_unit_test(test_apply_order_identical),
		cmocka_unit_test(test_commit_pushed_at_once),
		cmocka_unit_test(test_entry_sent_at_once),
		cmocka_unit_test(test_leader_kill_failover),
		cmocka_unit_test(test_partition_2_3),
		cmocka_unit_test(test_lost_voter_replaced),
		cmocka_unit_test(test_snapshot_catch_up),
		cmocka_unit_test(test_join_and_leave),
		cmocka_unit_test(test_random_faults_agreement),
		cmocka_unit_test(test_membership_random_faults),
		cmocka_unit_test(test_leave_refused_when_voters_left_unreachable),
		cmocka_unit_test(test_leave_promotes_standby_first),
		cmocka_unit_test(test_leader_leave_hands_over_two_nodes),
		cmocka_unit_test(test_leader_leave_hands_over_three_voters),
		cmocka_unit_test(test_leader_leave_alone_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
