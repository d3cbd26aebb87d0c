// SPDX-License-Identifier: GPL-2.0
/*
 * consensus (imexd/consensus.c) on the in-memory cluster harness:
 * elections, apply order, failover time, a 2|3 partition, voter
 * replacement and a run of random-fault seeds under an agreement checker.
 * IMEX_SEED=N replays one seed of the random run; IMEX_SEEDS=M runs M
 * seeds (from N, or from 1; default 250).
 */
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

static const struct hr_faults lan = { .latency_ms = 1, .jitter_ms = 1, .disk_ms = 2 };

static struct hr *cluster(unsigned n, unsigned seed)
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
static bool settled(struct hr *h, void *arg)
{
	raft_id l = hr_leader(h);
	unsigned i;

	(void)arg;
	if (!l)
		return false;
	for (i = 1; i <= hr_n(h); i++) {
		if (!hr_up(h, i))
			continue;
		if (imexd_cons_leader(hr_cons(h, i)) != l ||
		    imexd_cons_term(hr_cons(h, i)) != imexd_cons_term(hr_cons(h, l)))
			return false;
	}
	return true;
}

/* arg: NULL, or a command (string) that must have been acknowledged. */
static bool converged(struct hr *h, void *arg)
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

static void election(unsigned n)
{
	struct hr *h = cluster(n, 1000 + n);
	unsigned i, voters = 0;
	raft_id l;

	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	l = hr_leader(h);
	assert_int_equal(imexd_cons_role(hr_cons(h, l), l), RAFT_VOTER);
	for (i = 1; i <= n; i++)
		if (imexd_cons_role(hr_cons(h, l), i) == RAFT_VOTER)
			voters++;
	assert_int_equal(voters, imexd_cons_voters(n));
	printf("  %u nodes: leader n%02llu after %llu ms (term %llu)\n", n,
	       l - 1, (unsigned long long)hr_now(h), imexd_cons_term(hr_cons(h, l)));
	hr_run_for(h, 5 * ET);
	assert_int_equal(hr_leader(h), l);
	assert_one_leader_per_term(h);
	hr_free(h);
}

static void test_election_3(void **state) { (void)state; election(3); }
static void test_election_5(void **state) { (void)state; election(5); }
static void test_election_7(void **state) { (void)state; election(7); }

static void test_roster_ids_and_voters(void **state)
{
	const char *roster[] = { "c", "a", "b" };
	struct imexd_cons_config cfg = { .roster = roster, .n_roster = 3, .self = "b" };
	const char *dup[] = { "a", "b", "a" };
	struct imexd_cons *c;

	(void)state;
	assert_int_equal(imexd_cons_new(&cfg, &c), 0);
	assert_int_equal(imexd_cons_id(c, "a"), 1);
	assert_int_equal(imexd_cons_id(c, "b"), 2);
	assert_int_equal(imexd_cons_id(c, "c"), 3);
	assert_int_equal(imexd_cons_id(c, "d"), 0);
	assert_string_equal(imexd_cons_name(c, 3), "c");
	assert_null(imexd_cons_name(c, 4));
	assert_int_equal(imexd_cons_self(c), 2);
	imexd_cons_free(c);
	cfg.roster = dup;
	assert_int_equal(imexd_cons_new(&cfg, &c), -EINVAL);
	cfg.roster = roster;
	cfg.self = "zz";
	assert_int_equal(imexd_cons_new(&cfg, &c), -EINVAL);
	assert_int_equal(imexd_cons_voters(1), 1);
	assert_int_equal(imexd_cons_voters(2), 1);
	assert_int_equal(imexd_cons_voters(4), 3);
	assert_int_equal(imexd_cons_voters(5), 5);
	assert_int_equal(imexd_cons_voters(9), 5);
}

/* A fresh node hands out the bootstrap entry (term 1, index 1) first. */
static void test_bootstrap_entry_identical(void **state)
{
	const char *roster[] = { "x", "y", "z" };
	struct imexd_cons_config cfg = { .roster = roster, .n_roster = 3 };
	struct imexd_cons_start st = { .start_index = 1 };
	void *first = NULL;
	size_t first_len = 0;
	unsigned i;

	(void)state;
	for (i = 0; i < 3; i++) {
		struct imexd_cons_action a;
		struct imexd_cons *c;
		bool seen_tv = false, seen_e = false;

		cfg.self = roster[i];
		assert_int_equal(imexd_cons_new(&cfg, &c), 0);
		assert_int_equal(imexd_cons_start(c, 0, &st), 0);
		while (imexd_cons_next(c, &a)) {
			if (a.type == IMEXD_CONS_PERSIST_TERM_VOTE) {
				assert_false(seen_e);
				assert_int_equal(a.term_vote.term, 1);
				seen_tv = true;
			}
			if (a.type == IMEXD_CONS_PERSIST_ENTRIES) {
				const struct raft_entry *e = a.entries.entries;

				assert_int_equal(a.entries.index, 1);
				assert_int_equal(a.entries.n, 1);
				assert_int_equal(e->type, RAFT_CHANGE);
				assert_int_equal(e->term, 1);
				if (!first) {
					first = malloc(e->buf.len);
					memcpy(first, e->buf.base, e->buf.len);
					first_len = e->buf.len;
				} else {
					assert_int_equal(first_len, e->buf.len);
					assert_memory_equal(first, e->buf.base, first_len);
				}
				seen_e = true;
			}
		}
		assert_true(seen_tv && seen_e);
		imexd_cons_free(c);
	}
	free(first);
}

/* Inputs that break the contract are refused and change nothing; a
 * refused message's buffers are still released (ASan checks leaks). */
static void test_bad_inputs_refused(void **state)
{
	const char *roster[] = { "a", "b", "c" };
	struct imexd_cons_config cfg = { .roster = roster, .n_roster = 3, .self = "a" };
	struct imexd_cons_start st = { .start_index = 1 };
	struct imexd_cons_action a;
	struct raft_message m = { 0 };
	struct raft_entry *e;
	struct imexd_cons *c;
	raft_index index;
	raft_id leader;

	(void)state;
	assert_int_equal(imexd_cons_new(&cfg, &c), 0);
	assert_int_equal(imexd_cons_tick(c, 0), -EINVAL); /* not started */
	assert_int_equal(imexd_cons_start(c, 0, &st), 0);
	/* Actions not drained yet. */
	assert_int_equal(imexd_cons_tick(c, 1), -EBUSY);
	while (imexd_cons_next(c, &a))
		;
	assert_int_equal(imexd_cons_start(c, 0, &st), -EALREADY);
	/* A message from outside the roster. */
	e = raft_malloc(sizeof(*e));
	e->term = 1;
	e->type = RAFT_COMMAND;
	e->buf.len = 4;
	e->buf.base = raft_malloc(4);
	memcpy(e->buf.base, "evil", 4);
	e->batch = e->buf.base;
	m.type = RAFT_APPEND_ENTRIES;
	m.append_entries.term = 9;
	m.append_entries.entries = e;
	m.append_entries.n_entries = 1;
	assert_int_equal(imexd_cons_receive(c, 2, 99, &m), -EINVAL);
	raft_free(e);
	m.append_entries.entries = NULL;
	m.append_entries.n_entries = 0;
	assert_int_equal(imexd_cons_receive(c, 2, 1, &m), -EINVAL); /* self */
	assert_int_equal(imexd_cons_term(c), 1);
	/* Not the leader: refused, leader unknown. */
	assert_int_equal(imexd_cons_submit(c, 3, "x", 1, 1, &index, &leader),
			 -IMEXD_CONS_ENOTLEADER);
	assert_int_equal(leader, 0);
	assert_int_equal(imexd_cons_submit(c, 3, "x", 1, 0, &index, &leader), -EINVAL);
	/* A completion nobody asked for. */
	assert_int_equal(imexd_cons_persisted(c, 4, 7), -EINVAL);
	assert_int_equal(imexd_cons_snapshot_persisted(c, 4), -EINVAL);
	assert_int_equal(imexd_cons_snapshot_taken(c, 4, "", 0), -EINVAL);
	imexd_cons_free(c);
}

static void submit_n(struct hr *h, raft_id at, unsigned from, unsigned n,
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

static void test_apply_order_identical(void **state)
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
		assert_int_equal(leader, l);
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
static void test_commit_pushed_at_once(void **state)
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
static void test_entry_sent_at_once(void **state)
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
static void test_leader_kill_failover(void **state)
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
static void test_partition_2_3(void **state)
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

static unsigned count_role(struct hr *h, raft_id at, int role)
{
	unsigned i, n = 0;

	for (i = 1; i <= hr_n(h); i++)
		if (imexd_cons_role(hr_cons(h, at), i) == role)
			n++;
	return n;
}

struct replaced_arg {
	raft_id lost;
};

static bool replaced(struct hr *h, void *arg)
{
	const struct replaced_arg *ra = arg;
	raft_id l = hr_leader(h);

	return l && imexd_cons_role(hr_cons(h, l), ra->lost) == RAFT_STANDBY &&
	       count_role(h, l, RAFT_VOTER) == 5 &&
	       hr_cons(h, l) && imexd_cons_applied(hr_cons(h, l)) > 0;
}

/* 9-node roster, 5 voters: a voter lost for good is replaced by a
 * standby, twice in a row; the group keeps committing. */
static void test_lost_voter_replaced(void **state)
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
			    imexd_cons_role(hr_cons(h, l), i) == RAFT_VOTER)
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
static void test_snapshot_catch_up(void **state)
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

/* ---- random faults ---- */

static unsigned long total_acked, total_dropped, total_restores;

static bool random_run(unsigned seed)
{
	struct hr_config cfg = { 0 };
	struct hr *h;
	unsigned n, k = 0, i;
	uint64_t end;
	bool ok;

	cfg.seed = seed;
	/* Derive the shape from the seed with the harness RNG. */
	h = cluster(1, seed);
	n = 3 + hr_rand(h, 7); /* 3..9: from 6 on, some standby */
	cfg.faults.latency_ms = 1 + hr_rand(h, 10);
	cfg.faults.jitter_ms = hr_rand(h, 40);
	cfg.faults.loss_pct = hr_rand(h, 15);
	cfg.faults.dup_pct = hr_rand(h, 10);
	cfg.faults.disk_ms = 1 + hr_rand(h, 20);
	cfg.snapshot_threshold = hr_rand(h, 2) ? 4 + hr_rand(h, 20) : 0;
	cfg.snapshot_trailing = hr_rand(h, 6);
	hr_free(h);
	cfg.n = n;
	cfg.election_timeout_ms = (unsigned)ET;
	cfg.lost_voter_timeouts = 3;
	h = hr_new(&cfg);

	end = 40 * ET;
	while (hr_now(h) < end) {
		unsigned op = hr_rand(h, 100);
		raft_id id = 1 + hr_rand(h, n);

		if (op < 55) {
			char cmd[32];
			raft_index index;

			/* Mostly at the leader, so that much commits. */
			if (hr_rand(h, 4) && hr_leader(h))
				id = hr_leader(h);
			snprintf(cmd, sizeof(cmd), "%u-%u", seed, k++);
			(void)hr_submit(h, id, cmd, strlen(cmd), &index);
		} else if (op < 63) {
			hr_crash(h, id);
		} else if (op < 75) {
			hr_restart(h, id);
		} else if (op < 80) {
			hr_partition(h, hr_rand(h, 1u << n));
		} else if (op < 84) {
			hr_cut(h, id, 1 + hr_rand(h, n), true);
		} else if (op < 92) {
			hr_heal(h);
		}
		hr_run_for(h, 20 + hr_rand(h, 400));
	}
	/* Heal everything, let it settle, one more command commits all. */
	hr_heal(h);
	for (i = 1; i <= n; i++)
		hr_restart(h, i);
	hr_set_faults(h, &lan);
	ok = hr_run_until_pred(h, hr_now(h) + 30 * ET, settled, NULL);
	if (ok) {
		raft_index index;

		ok = hr_submit(h, hr_leader(h), "final", 5, &index) == 0 &&
		     hr_run_until_pred(h, hr_now(h) + 30 * ET, converged, "final");
	}
	if (!ok || hr_violations(h)) {
		fprintf(stderr, "random run failed: IMEX_SEED=%u (%u nodes, %u violations, converged %d)\n",
			seed, n, hr_violations(h), ok);
		for (i = 1; i <= n; i++) {
			struct imexd_cons *c = hr_cons(h, i);

			fprintf(stderr, "  n%02u: state %d term %llu leader %llu role %d applied %llu (%u commands)\n",
				i - 1, imexd_cons_state(c), imexd_cons_term(c),
				imexd_cons_leader(c), imexd_cons_role(c, i),
				imexd_cons_applied(c), hr_applied_count(h, i));
		}
	}
	ok = ok && !hr_violations(h);
	if (getenv("IMEX_VERBOSE"))
		printf("  seed %u: %u nodes, %u acknowledged, %u dropped, ended at %llu ms\n",
		       seed, n, hr_acked(h), hr_dropped(h),
		       (unsigned long long)hr_now(h));
	total_acked += hr_acked(h);
	total_dropped += hr_dropped(h);
	total_restores += hr_restores(h);
	hr_free(h);
	return ok;
}

static void test_random_faults_agreement(void **state)
{
	const char *one = getenv("IMEX_SEED");
	const char *many = getenv("IMEX_SEEDS");
	unsigned base, n, i, failed = 0;

	(void)state;
	base = one ? (unsigned)strtoul(one, NULL, 0) : 1;
	n = many ? (unsigned)strtoul(many, NULL, 0) : (one ? 1 : 250);
	printf("  random faults: seeds %u..%u (replay one with IMEX_SEED=N)\n",
	       base, base + n - 1);
	for (i = 0; i < n; i++)
		if (!random_run(base + i))
			failed++;
	printf("  random faults: %u seeds, %u failed; %lu commands acknowledged, %lu dropped, %lu snapshot installs\n",
	       n, failed, total_acked, total_dropped, total_restores);
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roster_ids_and_voters),
		cmocka_unit_test(test_bootstrap_entry_identical),
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
		cmocka_unit_test(test_random_faults_agreement),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
