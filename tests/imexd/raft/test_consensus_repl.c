// SPDX-License-Identifier: GPL-2.0
/*
 * test_consensus: replication: apply order, commits and entries pushed at
 * once, leader failover, a 2|3 partition, voter replacement, snapshot
 * catch-up.
 */
#include "test_consensus.h"

void test_apply_order_identical(void **state)
{
	struct hr *h = cluster(5, 7);
	raft_id l, f;
	raft_index index;
	unsigned i, j;
	int rv;

	(void)state;
	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	l = hr_leader(h);
	submit_n(h, l, 0, 60, "cmd");
	assert_true(hr_run_until_pred(h, hr_now(h) + 5 * ET, converged, "cmd59"));
	/* A follower refuses and names the leader. */
	f = l % 5 + 1;
	{
		raft_id leader;

		rv = imexd_cons_submit(hr_cons(h, f), hr_now(h), "x", 1, 99,
				       &index, &leader);
		assert_int_equal(rv, -IMEXD_CONS_ENOTLEADER);
		assert_int_equal(leader, hr_id(h, l));
	}
	assert_true(hr_run_until_pred(h, hr_now(h) + 5 * ET, converged, NULL));
	assert_int_equal(hr_acked(h), 60);
	for (i = 1; i <= 5; i++) {
		assert_int_equal(hr_applied_count(h, i), 60);
		for (j = 0; j < 60; j++) {
			char cmd[32];
			size_t len;
			const void *d = hr_applied(h, i, j, &len, NULL);

			snprintf(cmd, sizeof(cmd), "cmd%u", j);
			assert_int_equal(len, strlen(cmd));
			assert_memory_equal(d, cmd, len);
		}
	}
	assert_int_equal(hr_violations(h), 0);
	hr_free(h);
}

static bool all_applied_one(struct hr *h, void *arg)
{
	unsigned i;

	(void)arg;
	for (i = 1; i <= hr_n(h); i++)
		if (hr_applied_count(h, i) < 1)
			return false;
	return true;
}

/* A follower learns a new commit index at once, not at the leader's next
 * heartbeat (a heartbeat timeout, 100 ms here, later). */
void test_commit_pushed_at_once(void **state)
{
	struct hr *h = cluster(5, 11);
	raft_index index;
	uint64_t t0;
	raft_id l;

	(void)state;
	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	hr_run_for(h, 5 * ET);
	l = hr_leader(h);
	t0 = hr_now(h);
	assert_int_equal(hr_submit(h, l, "one", 3, &index), 0);
	/* Out and back (2-4 ms), the disks (2 ms), the commit out (1-2 ms). */
	assert_true(hr_run_until_pred(h, t0 + 20, all_applied_one, NULL));
	printf("  applied on every node %llu ms after the submit\n",
	       (unsigned long long)(hr_now(h) - t0));
	hr_run_for(h, 5 * ET);
	assert_int_equal(hr_leader(h), l);
	assert_int_equal(hr_violations(h), 0);
	hr_free(h);
}

struct applied_arg {
	unsigned count;
};

static bool all_applied_n(struct hr *h, void *arg)
{
	const struct applied_arg *aa = arg;
	unsigned i;

	for (i = 1; i <= hr_n(h); i++)
		if (hr_applied_count(h, i) < aa->count)
			return false;
	return true;
}

/* Every entry reaches every follower at once, whatever the leader's tick
 * did to its view of them: libraft sends a new entry to a follower it has
 * in probe mode only with the next heartbeat (100 ms here), and it puts
 * one there whenever a tick heard nothing from it since the tick before.
 * Submits at many offsets from the leader's ticks and commit pushes. */
void test_entry_sent_at_once(void **state)
{
	struct hr *h = cluster(3, 5);
	struct applied_arg aa = { 0 };
	uint64_t worst = 0;
	raft_id l, f, g;
	unsigned k;

	(void)state;
	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	l = hr_leader(h);
	/* A follower back from a crash, behind: the leader's catch-up goes
	 * to it alone, so the followers' heartbeats run out of step. */
	f = l % 3 + 1;
	g = f % 3 + 1;
	hr_crash(h, f);
	submit_n(h, l, 0, 3, "behind");
	hr_run_for(h, 2 * ET);
	hr_restart(h, f);
	aa.count = 3;
	assert_true(hr_run_until_pred(h, hr_now(h) + 5 * ET, all_applied_n, &aa));
	hr_run_for(h, 2 * ET);
	for (k = 0; k < 40; k++) {
		uint64_t t0;
		raft_index index;

		/* Every other round, the followers' answers lost for a few
		 * heartbeats: the leader's ticks put them in probe mode. */
		if (k % 2) {
			hr_cut(h, f, l, true);
			hr_cut(h, g, l, true);
			hr_run_for(h, 250);
			hr_cut(h, f, l, false);
			hr_cut(h, g, l, false);
		}
		hr_run_for(h, 150 + 7 * k);
		assert_int_equal(hr_leader(h), l);
		t0 = hr_now(h);
		assert_int_equal(hr_submit(h, l, "e", 1, &index), 0);
		aa.count++;
		/* Out and back (2-4 ms), the disks (2 ms), the commit out. */
		assert_true(hr_run_until_pred(h, t0 + 20, all_applied_n, &aa));
		if (hr_now(h) - t0 > worst)
			worst = hr_now(h) - t0;
	}
	printf("  40 entries: applied everywhere at worst %llu ms after the submit\n",
	       (unsigned long long)worst);
	assert_int_equal(hr_violations(h), 0);
	hr_free(h);
}

struct failover_arg {
	raft_id old;
};

static bool new_leader(struct hr *h, void *arg)
{
	const struct failover_arg *fa = arg;
	raft_id l = hr_leader(h);

	return l && l != fa->old;
}

/* Leader killed: a new one within 2 election timeouts (simulated). */
void test_leader_kill_failover(void **state)
{
	uint64_t worst = 0, sum = 0;
	unsigned seed, runs = 30;

	(void)state;
	for (seed = 1; seed <= runs; seed++) {
		struct hr *h = cluster(5, seed);
		struct failover_arg fa;
		uint64_t t0, took;

		assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
		submit_n(h, hr_leader(h), 0, 5, "f");
		assert_true(hr_run_until_pred(h, hr_now(h) + 3 * ET, converged, "f4"));
		hr_run_for(h, ET);
		fa.old = hr_leader(h);
		assert_int_not_equal(fa.old, 0);
		t0 = hr_now(h);
		hr_crash(h, fa.old);
		if (!hr_run_until_pred(h, t0 + 2 * ET, new_leader, &fa)) {
			fprintf(stderr, "seed %u: no new leader within %u ms\n",
				seed, (unsigned)(2 * ET));
			fail();
		}
		took = hr_now(h) - t0;
		sum += took;
		if (took > worst)
			worst = took;
		/* The new leader has every acknowledged entry. */
		hr_restart(h, fa.old);
		assert_true(hr_run_until_pred(h, hr_now(h) + 10 * ET, converged, "f4"));
		assert_int_equal(hr_applied_count(h, fa.old), 5);
		assert_int_equal(hr_violations(h), 0);
		hr_free(h);
	}
	printf("  failover (5 nodes, election timeout %u ms, %u runs): mean %llu ms, worst %llu ms\n",
	       (unsigned)ET, runs, (unsigned long long)(sum / runs),
	       (unsigned long long)worst);
}

static bool minority_stepped_down(struct hr *h, void *arg)
{
	raft_id a = ((raft_id *)arg)[0], b = ((raft_id *)arg)[1];

	return imexd_cons_state(hr_cons(h, a)) != RAFT_LEADER &&
	       imexd_cons_state(hr_cons(h, b)) != RAFT_LEADER;
}

struct majority_arg {
	uint32_t group;
};

static bool majority_leader(struct hr *h, void *arg)
{
	const struct majority_arg *ma = arg;
	unsigned i;

	for (i = 1; i <= hr_n(h); i++)
		if (!(ma->group & (1u << (i - 1))) &&
		    imexd_cons_state(hr_cons(h, i)) == RAFT_LEADER)
			return true;
	return false;
}

/* 2|3 with the leader in the minority: its submit never applies and it
 * refuses once it steps down; the majority goes on; healing converges. */
void test_partition_2_3(void **state)
{
	struct hr *h = cluster(5, 23);
	struct majority_arg ma;
	raft_id l, other, ml = 0, pair[2], leader;
	raft_index index;
	unsigned i;
	int rv;

	(void)state;
	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	l = hr_leader(h);
	submit_n(h, l, 0, 3, "before");
	assert_true(hr_run_until_pred(h, hr_now(h) + 2 * ET, converged, "before2"));
	other = l % 5 + 1;
	ma.group = (1u << (l - 1)) | (1u << (other - 1));
	hr_partition(h, ma.group);
	/* Still leader for a moment: accepted, but no majority. */
	assert_int_equal(hr_submit(h, l, "minority", 8, &index), 0);
	pair[0] = l;
	pair[1] = other;
	assert_true(hr_run_until_pred(h, hr_now(h) + 3 * ET, minority_stepped_down, pair));
	rv = imexd_cons_submit(hr_cons(h, l), hr_now(h), "late", 4, 1000, &index,
			       &leader);
	assert_int_equal(rv, -IMEXD_CONS_ENOTLEADER);
	assert_true(hr_run_until_pred(h, hr_now(h) + 5 * ET, majority_leader, &ma));
	for (i = 1; i <= 5; i++)
		if (!(ma.group & (1u << (i - 1))) &&
		    imexd_cons_state(hr_cons(h, i)) == RAFT_LEADER)
			ml = i;
	submit_n(h, ml, 0, 10, "major");
	hr_run_for(h, 10 * ET);
	assert_false(hr_is_acked(h, "minority", 8));
	assert_true(hr_is_acked(h, "major9", 6));
	assert_int_equal(hr_applied_count(h, l), 3);
	assert_int_equal(hr_applied_count(h, other), 3);
	assert_int_equal(hr_applied_count(h, ml), 13);
	hr_heal(h);
	assert_true(hr_run_until_pred(h, hr_now(h) + 10 * ET, converged, NULL));
	assert_int_equal(hr_applied_count(h, l), 13);
	for (i = 0; i < 13; i++) {
		size_t len;
		const void *d = hr_applied(h, l, i, &len, NULL);

		assert_false(len == 8 && !memcmp(d, "minority", 8));
	}
	assert_int_equal(hr_dropped(h), 1);
	assert_int_equal(hr_violations(h), 0);
	hr_free(h);
}

struct replaced_arg {
	raft_id lost;
};

static bool replaced(struct hr *h, void *arg)
{
	const struct replaced_arg *ra = arg;
	raft_id l = hr_leader(h);

	return l && imexd_cons_role(hr_cons(h, l), hr_id(h, ra->lost)) == RAFT_STANDBY &&
	       count_role(h, l, RAFT_VOTER) == 5 &&
	       hr_cons(h, l) && imexd_cons_applied(hr_cons(h, l)) > 0;
}

/* 9-node roster, 5 voters: a voter lost for good is replaced by a
 * standby, twice in a row; the group keeps committing. */
void test_lost_voter_replaced(void **state)
{
	struct hr *h = cluster(9, 99);
	struct replaced_arg ra;
	raft_id l;
	unsigned round, i;

	(void)state;
	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	l = hr_leader(h);
	assert_int_equal(count_role(h, l, RAFT_VOTER), 5);
	assert_int_equal(count_role(h, l, RAFT_STANDBY), 4);
	for (round = 0; round < 2; round++) {
		uint64_t t0;

		l = hr_leader(h);
		ra.lost = 0;
		for (i = 1; i <= 9 && !ra.lost; i++)
			if (i != l && hr_up(h, i) &&
			    imexd_cons_role(hr_cons(h, l), hr_id(h, i)) == RAFT_VOTER)
				ra.lost = i;
		assert_int_not_equal(ra.lost, 0);
		hr_crash(h, ra.lost);
		t0 = hr_now(h);
		assert_true(hr_run_until_pred(h, t0 + 20 * ET, replaced, &ra));
		printf("  round %u: voter n%02llu replaced after %llu ms (K = 3 election timeouts)\n",
		       round, ra.lost - 1, (unsigned long long)(hr_now(h) - t0));
		l = hr_leader(h);
		assert_int_equal(count_role(h, l, RAFT_STANDBY), 4);
		submit_n(h, l, round * 5, 5, "r");
		hr_run_for(h, 2 * ET);
		assert_true(hr_is_acked(h, round ? "r9" : "r4", 2));
	}
	assert_int_equal(hr_violations(h), 0);
	hr_free(h);
}

/* Snapshots: a node away for long catches up through InstallSnapshot. */
void test_snapshot_catch_up(void **state)
{
	struct hr_config cfg = {
		.n = 3, .seed = 5, .election_timeout_ms = (unsigned)ET,
		.lost_voter_timeouts = 3, .snapshot_threshold = 8,
		.snapshot_trailing = 2, .faults = lan,
	};
	struct hr *h = hr_new(&cfg);
	raft_id l, away;

	(void)state;
	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	l = hr_leader(h);
	away = l % 3 + 1;
	hr_crash(h, away);
	submit_n(h, l, 0, 40, "s");
	assert_true(hr_run_until_pred(h, hr_now(h) + 10 * ET, converged, "s39"));
	hr_restart(h, away);
	assert_true(hr_run_until_pred(h, hr_now(h) + 10 * ET, converged, "s39"));
	assert_int_equal(hr_applied_count(h, away), 40);
	assert_int_equal(hr_restores(h), 1);
	/* And a restart from its own snapshot + log. */
	hr_crash(h, away);
	hr_restart(h, away);
	assert_true(hr_run_until_pred(h, hr_now(h) + 10 * ET, converged, NULL));
	assert_int_equal(hr_violations(h), 0);
	hr_free(h);
}
