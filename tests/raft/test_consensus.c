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
		if (imexd_cons_leader(hr_cons(h, i)) != hr_id(h, l) ||
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

static void test_election_3(void **state) { (void)state; election(3); }
static void test_election_5(void **state) { (void)state; election(5); }
static void test_election_7(void **state) { (void)state; election(7); }

static void test_roster_ids_and_voters(void **state)
{
	const char *roster[] = { "c", "a", "b" };
	struct imexd_cons_config cfg = { .roster = roster, .n_roster = 3, .self = "b" };
	const char *dup[] = { "a", "b", "a" };
	const char *eq[] = { "a", "b=10.0.0.1" };
	raft_id ida = imexd_cons_name_id("a");
	struct imexd_cons *c;

	(void)state;
	/* Ids come from names: stable, 63 bits, not 0, roster order free. */
	assert_int_not_equal(ida, 0);
	assert_true(ida <= 0x7fffffffffffffffULL);
	assert_int_equal(ida, imexd_cons_name_id("a"));
	assert_int_not_equal(ida, imexd_cons_name_id("b"));
	assert_int_equal(imexd_cons_new(&cfg, &c), 0);
	assert_int_equal(imexd_cons_id(c, "a"), ida);
	assert_int_equal(imexd_cons_id(c, "c"), imexd_cons_name_id("c"));
	assert_int_equal(imexd_cons_id(c, "d"), 0);
	assert_string_equal(imexd_cons_name(c, imexd_cons_name_id("c")), "c");
	assert_null(imexd_cons_name(c, imexd_cons_name_id("d")));
	assert_int_equal(imexd_cons_self(c), imexd_cons_name_id("b"));
	imexd_cons_free(c);
	cfg.roster = dup;
	assert_int_equal(imexd_cons_new(&cfg, &c), -EINVAL);
	cfg.roster = eq;
	cfg.n_roster = 2;
	assert_int_equal(imexd_cons_new(&cfg, &c), -EINVAL);
	/* Not in the roster: allowed, it waits to be joined. */
	cfg.roster = roster;
	cfg.n_roster = 3;
	cfg.self = "zz";
	assert_int_equal(imexd_cons_new(&cfg, &c), 0);
	assert_int_equal(imexd_cons_self(c), imexd_cons_name_id("zz"));
	imexd_cons_free(c);
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

/* Where started_group() copies the bootstrap entry it hands out. */
static uint8_t boot_copy[512];

/* The group id of a server started from @st; @entry1 (if given) gets the
 * bootstrap entry it handed out (its bytes in boot_copy). */
static uint64_t started_group(const char *const *roster, unsigned n,
			      const char *self, const struct imexd_cons_start *st,
			      struct raft_entry *entry1)
{
	struct imexd_cons_config cfg = { .roster = roster, .n_roster = n,
					 .self = self };
	struct imexd_cons_action a;
	struct imexd_cons *c;
	uint64_t g;

	assert_int_equal(imexd_cons_new(&cfg, &c), 0);
	assert_int_equal(imexd_cons_group(c), 0);
	assert_int_equal(imexd_cons_start(c, 0, st), 0);
	while (imexd_cons_next(c, &a))
		if (entry1 && a.type == IMEXD_CONS_PERSIST_ENTRIES &&
		    a.entries.index == 1) {
			*entry1 = a.entries.entries[0];
			assert_true(entry1->buf.len <= sizeof(boot_copy));
			memcpy(boot_copy, entry1->buf.base, entry1->buf.len);
			entry1->buf.base = boot_copy;
		}
	g = imexd_cons_group(c);
	imexd_cons_free(c);
	return g;
}

/*
 * The group id is the hash of the bootstrap entry: the same for every
 * node of one NODES_FILE whatever its order, another for a file naming
 * other nodes (the entry Raft cannot tell apart at (1, 1)); kept from a
 * stored entry 1, or from storage once a snapshot compacted it; none on
 * a node outside its roster until it is given one, then never another.
 */
static void test_group_id_of_the_bootstrap_entry(void **state)
{
	const char *roster[] = { "x", "y", "z", "w" };
	const char *shuffled[] = { "w", "z", "x", "y" };
	const char *other[] = { "x", "y", "v", "w" };
	struct imexd_cons_start st = { .start_index = 1 };
	struct raft_snapshot_metadata meta = { .index = 9, .term = 2 };
	struct imexd_cons_config cfg = { .roster = roster, .n_roster = 3,
					 .self = "q" };
	struct raft_entry e1 = { 0 };
	struct imexd_cons *c;
	uint64_t g;

	(void)state;
	g = started_group(roster, 4, "x", &st, &e1);
	assert_int_not_equal(g, 0);
	assert_int_equal(g, imexd_cons_group_id(e1.buf.base, e1.buf.len));
	assert_int_equal(started_group(shuffled, 4, "z", &st, NULL), g);
	assert_int_not_equal(started_group(other, 4, "x", &st, NULL), g);
	assert_int_not_equal(started_group(roster, 3, "x", &st, NULL), g);
	/* Restarted from its stored log (whatever NODES_FILE says now). */
	st.term = 1;
	st.entries = &e1;
	st.n_entries = 1;
	assert_int_equal(started_group(other, 4, "x", &st, NULL), g);
	/* From storage: entry 1 is gone into a snapshot. */
	raft_configuration_init(&meta.configuration);
	assert_int_equal(raft_configuration_add(&meta.configuration,
						imexd_cons_name_id("x"), "x",
						RAFT_VOTER), 0);
	memset(&st, 0, sizeof(st));
	st.term = 2;
	st.snapshot = &meta;
	st.snapshot_data = "s";
	st.snapshot_len = 1;
	st.start_index = 10;
	st.group = g;
	assert_int_equal(started_group(roster, 4, "x", &st, NULL), g);
	raft_configuration_close(&meta.configuration);
	/* Outside its roster: none, until given; then never another. */
	memset(&st, 0, sizeof(st));
	st.start_index = 1;
	assert_int_equal(started_group(roster, 3, "q", &st, NULL), 0);
	assert_int_equal(imexd_cons_new(&cfg, &c), 0);
	assert_int_equal(imexd_cons_set_group(c, 0), -EINVAL);
	assert_int_equal(imexd_cons_set_group(c, g), 0);
	assert_int_equal(imexd_cons_set_group(c, g), 0);
	assert_int_equal(imexd_cons_set_group(c, g + 1), -EEXIST);
	assert_int_equal(imexd_cons_group(c), g);
	imexd_cons_free(c);
}

/*
 * A node whose NODES_FILE names itself and one other name, its own first,
 * with nothing stored: alone it must never lead (as the only voter it
 * would form a group of its own beside the real one).  Its bootstrap
 * entry makes both names voters.
 */
static void test_two_names_never_lead_alone(void **state)
{
	const char *roster[] = { "z", "a" };
	struct imexd_cons_config cfg = {
		.roster = roster, .n_roster = 2, .self = "a",
		.election_timeout_ms = (unsigned)ET, .seed = 3,
	};
	struct imexd_cons_start st = { .start_index = 1 };
	struct imexd_cons_action a;
	struct imexd_cons *c;
	raft_index last = 0;
	uint64_t now = 0;
	unsigned round, voters = 0, i;

	(void)state;
	assert_int_equal(imexd_cons_new(&cfg, &c), 0);
	assert_int_equal(imexd_cons_start(c, now, &st), 0);
	for (round = 0; round < 50; round++) {
		while (imexd_cons_next(c, &a)) {
			const struct raft_entry *e;
			struct raft_configuration conf;

			if (a.type != IMEXD_CONS_PERSIST_ENTRIES)
				continue;
			last = a.entries.index + a.entries.n - 1;
			e = &a.entries.entries[0];
			if (a.entries.index != 1 || e->type != RAFT_CHANGE)
				continue;
			raft_configuration_init(&conf);
			assert_int_equal(raft_configuration_decode(&e->buf,
								   &conf), 0);
			for (i = 0; i < conf.n; i++)
				voters += conf.servers[i].role == RAFT_VOTER;
			raft_configuration_close(&conf);
		}
		if (last)
			assert_int_equal(imexd_cons_persisted(c, now, last), 0);
		last = 0;
		assert_int_not_equal(imexd_cons_leader(c), imexd_cons_self(c));
		now = imexd_cons_timeout(c) > now ? imexd_cons_timeout(c) :
						    now + 1;
		assert_int_equal(imexd_cons_tick(c, now), 0);
	}
	assert_true(now >= 10 * ET);
	assert_int_equal(voters, 2);
	assert_int_not_equal(imexd_cons_leader(c), imexd_cons_self(c));
	imexd_cons_free(c);
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
	assert_int_equal(imexd_cons_receive(c, 2, imexd_cons_self(c), &m),
			 -EINVAL); /* self */
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
		if (imexd_cons_role(hr_cons(h, at), hr_id(h, i)) == role)
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

	return l && imexd_cons_role(hr_cons(h, l), hr_id(h, ra->lost)) == RAFT_STANDBY &&
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

static unsigned long total_acked, total_dropped, total_restores, total_changes;

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
				imexd_cons_leader(c), imexd_cons_role(c, hr_id(h, i)),
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

static unsigned members_of(struct hr *h, unsigned at, int role)
{
	const struct raft_configuration *conf = imexd_cons_members(hr_cons(h, at));
	unsigned i, n = 0;

	for (i = 0; i < conf->n; i++)
		if (role < 0 || conf->servers[i].role == role)
			n++;
	return n;
}

/* Nodes 1..4 follow one leader (node 5 waits to be joined). */
static bool settled4(struct hr *h, void *arg)
{
	raft_id l = hr_leader(h);
	unsigned i;

	(void)arg;
	for (i = 1; l && i <= 4; i++)
		if (imexd_cons_leader(hr_cons(h, i)) != hr_id(h, l))
			return false;
	return l != 0;
}

struct member_goal {
	unsigned members, voters;
	unsigned applied; /* node that must have applied, 0: none */
	unsigned count;
};

static bool membership_is(struct hr *h, void *arg)
{
	struct member_goal *g = arg;
	raft_id l = hr_leader(h);

	return l && members_of(h, l, -1) == g->members &&
	       members_of(h, l, RAFT_VOTER) == g->voters &&
	       imexd_cons_commit(hr_cons(h, l)) ==
		       imexd_cons_applied(hr_cons(h, l)) &&
	       (!g->applied || hr_applied_count(h, g->applied) == g->count);
}

/*
 * A node outside the roster waits (never campaigns, forms no group); the
 * leader adds it as standby, upkeep promotes it, it catches up; a member
 * is removed; refusals say why; a restart of everyone keeps the
 * membership the log holds (the roster still lacks the joined node).
 */
static void test_join_and_leave(void **state)
{
	struct hr_config cfg = {
		.n = 5, .n_roster = 4, .seed = 11,
		.election_timeout_ms = (unsigned)ET, .lost_voter_timeouts = 3,
		.faults = lan,
	};
	struct member_goal g = { 0 };
	struct hr *h = hr_new(&cfg);
	raft_index index;
	raft_id l, gone;
	unsigned i;

	(void)state;
	assert_true(hr_run_until_pred(h, 10 * ET, settled4, NULL));
	hr_run_for(h, 3 * ET);
	l = hr_leader(h);
	assert_int_not_equal(l, 5);
	assert_int_equal(members_of(h, l, -1), 4);
	assert_int_equal(members_of(h, 5, -1), 0);
	assert_int_equal(imexd_cons_state(hr_cons(h, 5)), RAFT_FOLLOWER);
	assert_int_equal(imexd_cons_term(hr_cons(h, 5)), 0);
	assert_int_not_equal(imexd_cons_group(hr_cons(h, l)), 0);
	assert_int_equal(imexd_cons_group(hr_cons(h, 5)), 0);
	submit_n(h, l, 0, 10, "cmd");
	/* Refusals. */
	assert_int_equal(hr_change(h, l, "n00", true, &index), -EALREADY);
	assert_int_equal(hr_change(h, l, "zz", false, &index), -ENOENT);
	assert_int_equal(hr_change(h, l, "", true, &index), -EINVAL);
	assert_int_equal(hr_change(h, l % 4 + 1, "n04", true, &index),
			 -IMEXD_CONS_ENOTLEADER);
	/* Join n04 (node 5) with an address. */
	assert_int_equal(hr_change(h, l, "n04=10.0.0.5:7400", true, &index), 0);
	assert_int_equal(hr_change(h, l, "n00", false, &index), -EBUSY);
	g.members = 5;
	g.voters = 5;
	g.applied = 5;
	g.count = 10;
	assert_true(hr_run_until_pred(h, hr_now(h) + 20 * ET, membership_is, &g));
	assert_true(hr_is_acked(h, "n04=10.0.0.5:7400", 17));
	l = hr_leader(h);
	/* The joined node took its group's id from entry 1. */
	assert_int_equal(imexd_cons_group(hr_cons(h, 5)),
			 imexd_cons_group(hr_cons(h, l)));
	assert_string_equal(imexd_cons_addr(hr_cons(h, l), hr_id(h, 5)),
			    "10.0.0.5:7400");
	hr_run_for(h, 2 * ET); /* node 5 learns its promotion's commit */
	assert_int_equal(imexd_cons_role(hr_cons(h, 5), hr_id(h, 5)), RAFT_VOTER);
	submit_n(h, l, 10, 5, "cmd");
	assert_true(hr_run_until_pred(h, hr_now(h) + 5 * ET, converged, "cmd14"));
	/* Remove a member that is not the leader. */
	gone = l == 1 ? 2 : 1;
	{
		char name[8];

		snprintf(name, sizeof(name), "n%02u", (unsigned)gone - 1);
		assert_int_equal(hr_change(h, l, name, false, &index), 0);
	}
	g.members = 4;
	g.voters = 3;
	g.applied = 0;
	assert_true(hr_run_until_pred(h, hr_now(h) + 20 * ET, membership_is, &g));
	assert_int_equal(imexd_cons_role(hr_cons(h, l), hr_id(h, gone)), -1);
	/* Everyone restarts: the log, not the roster, says who is in. */
	for (i = 1; i <= 5; i++)
		hr_crash(h, i);
	for (i = 1; i <= 5; i++)
		hr_restart(h, i);
	assert_true(hr_run_until_pred(h, hr_now(h) + 20 * ET, membership_is, &g));
	l = hr_leader(h);
	assert_int_not_equal(l, gone);
	assert_int_equal(imexd_cons_role(hr_cons(h, l), hr_id(h, 5)) >= 0, 1);
	submit_n(h, l, 15, 3, "cmd");
	g.applied = 5;
	g.count = 18;
	assert_true(hr_run_until_pred(h, hr_now(h) + 10 * ET, membership_is, &g));
	hr_free(h);
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

/* ---- membership under random faults ---- */

/* Every up member of the leader's configuration follows it. */
static bool members_settled(struct hr *h, void *arg)
{
	raft_id l = hr_leader(h);
	unsigned i;

	(void)arg;
	if (!l)
		return false;
	for (i = 1; i <= hr_n(h); i++)
		if (hr_up(h, i) &&
		    imexd_cons_role(hr_cons(h, l), hr_id(h, i)) >= 0 &&
		    imexd_cons_leader(hr_cons(h, i)) != hr_id(h, l))
			return false;
	return true;
}

/*
 * Nodes join and leave (at the leader, one change at a time, never the
 * leader itself, never below 3 members) while nodes crash, restart and
 * partitions come and go; two nodes start outside the roster.  The
 * harness's checker refuses any two different entries chosen at one
 * index; at the end the members converge.
 */
static bool membership_run(unsigned seed)
{
	struct hr_config cfg = { 0 };
	unsigned n, k = 0, i, changes = 0;
	struct hr *h;
	bool ok;

	h = cluster(1, seed);
	n = 5 + hr_rand(h, 4); /* 5..8, the last two outside the roster */
	cfg.faults.latency_ms = 1 + hr_rand(h, 10);
	cfg.faults.jitter_ms = hr_rand(h, 40);
	cfg.faults.loss_pct = hr_rand(h, 10);
	cfg.faults.dup_pct = hr_rand(h, 5);
	cfg.faults.disk_ms = 1 + hr_rand(h, 20);
	cfg.snapshot_threshold = hr_rand(h, 2) ? 4 + hr_rand(h, 20) : 0;
	cfg.snapshot_trailing = hr_rand(h, 6);
	hr_free(h);
	cfg.seed = seed;
	cfg.n = n;
	cfg.n_roster = n - 2;
	cfg.election_timeout_ms = (unsigned)ET;
	cfg.lost_voter_timeouts = 3;
	h = hr_new(&cfg);
	while (hr_now(h) < 40 * ET) {
		unsigned op = hr_rand(h, 100);
		raft_id id = 1 + hr_rand(h, n), l = hr_leader(h);

		if (op < 45) {
			char cmd[32];
			raft_index index;

			snprintf(cmd, sizeof(cmd), "%u-%u", seed, k++);
			(void)hr_submit(h, l ? l : id, cmd, strlen(cmd), &index);
		} else if (op < 55 && l) {
			const struct raft_configuration *conf =
				imexd_cons_members(hr_cons(h, l));
			bool member = imexd_cons_role(hr_cons(h, l),
						      hr_id(h, id)) >= 0;
			char name[8];
			raft_index index;

			snprintf(name, sizeof(name), "n%02u", (unsigned)id - 1);
			if (!member || (id != l && conf->n > 3))
				changes += hr_change(h, l, name, !member,
						     &index) == 0;
		} else if (op < 62) {
			hr_crash(h, id);
		} else if (op < 74) {
			hr_restart(h, id);
		} else if (op < 78) {
			hr_partition(h, hr_rand(h, 1u << n));
		} else if (op < 86) {
			hr_heal(h);
		}
		hr_run_for(h, 20 + hr_rand(h, 400));
	}
	hr_heal(h);
	for (i = 1; i <= n; i++)
		hr_restart(h, i);
	hr_set_faults(h, &lan);
	ok = hr_run_until_pred(h, hr_now(h) + 30 * ET, members_settled, NULL);
	if (ok) {
		raft_id l = hr_leader(h);
		raft_index index;

		/* Nodes out of the group take no part in what follows. */
		for (i = 1; i <= n; i++)
			if (imexd_cons_role(hr_cons(h, l), hr_id(h, i)) < 0)
				hr_crash(h, i);
		/* A leader may still change (and drop it): submit again. */
		ok = false;
		for (i = 0; i < 3 && !ok; i++) {
			l = hr_leader(h);
			ok = l && hr_submit(h, l, "final", 5, &index) == 0 &&
			     hr_run_until_pred(h, hr_now(h) + 10 * ET,
					       converged, "final");
		}
		if (!ok && getenv("IMEX_VERBOSE"))
			fprintf(stderr, "  final acked %d, converged %d, leader n%02u\n",
				hr_is_acked(h, "final", 5), hr_converged(h),
				(unsigned)l - 1);
	}
	if (!ok || hr_violations(h)) {
		fprintf(stderr, "membership run failed: IMEX_SEED=%u (%u nodes, %u violations, converged %d)\n",
			seed, n, hr_violations(h), ok);
		for (i = 1; getenv("IMEX_VERBOSE") && i <= n; i++) {
			struct imexd_cons *c = hr_cons(h, i);

			if (!c)
				continue;
			fprintf(stderr, "  n%02u: state %d term %llu leader %u members %u self-role %d applied %llu commit %llu\n",
				i - 1, imexd_cons_state(c), imexd_cons_term(c),
				hr_node_of(h, imexd_cons_leader(c)),
				imexd_cons_members(c)->n,
				imexd_cons_role(c, hr_id(h, i)),
				imexd_cons_applied(c), imexd_cons_commit(c));
		}
	}
	ok = ok && !hr_violations(h);
	total_changes += changes;
	hr_free(h);
	return ok;
}

/*
 * Removing a healthy voter while another voter is down (not yet "lost")
 * would leave two voters that need the dead one: the change could never
 * commit and would block every later one.  It is refused up front
 * (-EHOSTUNREACH); the group stays available and removing the dead voter
 * instead goes through.
 */
static void test_leave_refused_when_voters_left_unreachable(void **state)
{
	struct hr *h = cluster(3, 5);
	raft_index index;
	raft_id l, b, c;
	char nb[8], nc[8];

	(void)state;
	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	hr_run_for(h, 3 * ET);
	l = hr_leader(h);
	b = l % 3 + 1;
	c = b % 3 + 1;
	snprintf(nb, sizeof(nb), "n%02u", (unsigned)b - 1);
	snprintf(nc, sizeof(nc), "n%02u", (unsigned)c - 1);
	assert_int_equal(count_role(h, l, RAFT_VOTER), 3);
	hr_crash(h, c);		/* rebooting for maintenance */
	hr_run_for(h, ET);	/* not yet lost (3 ET) */
	assert_int_equal(hr_change(h, l, nb, false, &index), -EHOSTUNREACH);
	hr_run_for(h, 5 * ET);
	assert_int_equal(hr_leader(h), l);
	assert_int_equal(count_role(h, l, RAFT_VOTER), 3);
	assert_int_equal(hr_change(h, l, nc, false, &index), 0);
	assert_true(hr_run_until_pred(h, hr_now(h) + 10 * ET, converged, nc));
	assert_int_equal(imexd_cons_role(hr_cons(h, l), hr_id(h, c)), -1);
	submit_n(h, l, 0, 3, "after");
	assert_true(hr_run_until_pred(h, hr_now(h) + 5 * ET, converged, "after2"));
	hr_free(h);
}

/*
 * The same with a caught-up standby: it is promoted first (-EBUSY while
 * that is under way), then the removal goes through and commits.
 */
static void test_leave_promotes_standby_first(void **state)
{
	struct hr *h = cluster(4, 5);
	raft_index index;
	raft_id l, b, c;
	unsigned tries = 0;
	char nb[8];
	int rv;

	(void)state;
	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	hr_run_for(h, 3 * ET);
	l = hr_leader(h);
	assert_int_equal(count_role(h, l, RAFT_VOTER), 3);
	for (b = 1; b == l || imexd_cons_role(hr_cons(h, l), hr_id(h, b)) !=
				     RAFT_VOTER; b++)
		;
	for (c = 1; c == l || c == b ||
		    imexd_cons_role(hr_cons(h, l), hr_id(h, c)) != RAFT_VOTER;
	     c++)
		;
	snprintf(nb, sizeof(nb), "n%02u", (unsigned)b - 1);
	hr_crash(h, c);
	hr_run_for(h, ET);
	while ((rv = hr_change(h, l, nb, false, &index)) == -EBUSY &&
	       tries++ < 100)
		hr_run_for(h, ET / 10);
	printf("  removal of %s accepted after %u retries\n", nb, tries);
	assert_int_equal(rv, 0);
	assert_true(tries > 0);
	assert_true(hr_run_until_pred(h, hr_now(h) + 10 * ET, converged, nb));
	assert_int_equal(imexd_cons_role(hr_cons(h, l), hr_id(h, b)), -1);
	hr_crash(h, b);		/* out of the group: no longer follows */
	submit_n(h, l, 0, 3, "after");
	assert_true(hr_run_until_pred(h, hr_now(h) + 5 * ET, converged, "after2"));
	hr_free(h);
}

/*
 * A leave of the leader in a 2-node group (one voter): the leader
 * promotes the other node, hands it leadership, and the leave then
 * completes on the new leader; the group keeps a leader throughout.
 */
static void test_leader_leave_hands_over_two_nodes(void **state)
{
	struct hr *h = cluster(2, 9);
	raft_index index;
	raft_id l, o, at;
	unsigned tries = 0;
	char nl[8];
	int rv;

	(void)state;
	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	hr_run_for(h, 10 * ET);	/* upkeep: 2 names keep 1 voter */
	l = hr_leader(h);
	o = l % 2 + 1;
	assert_int_equal(count_role(h, l, RAFT_VOTER), 1);
	snprintf(nl, sizeof(nl), "n%02u", (unsigned)l - 1);
	for (;;) {
		at = hr_leader(h);
		rv = at ? hr_change(h, at, nl, false, &index) : -EBUSY;
		if ((rv != -EBUSY && rv != -IMEXD_CONS_ENOTLEADER) ||
		    tries++ >= 200)
			break;
		hr_run_for(h, ET / 10);
	}
	printf("  leave of leader %s: %d after %u tries, at n%02u\n", nl, rv,
	       tries, (unsigned)at - 1);
	assert_int_equal(rv, 0);
	assert_int_equal(at, o);
	assert_true(hr_run_until_pred(h, hr_now(h) + 10 * ET, converged, nl));
	assert_int_equal(imexd_cons_role(hr_cons(h, o), hr_id(h, l)), -1);
	hr_crash(h, l);
	hr_run_for(h, 5 * ET);
	assert_int_equal(hr_leader(h), o);
	submit_n(h, o, 0, 3, "after");
	assert_true(hr_run_until_pred(h, hr_now(h) + 5 * ET, converged, "after2"));
	hr_free(h);
}

/* A group of one: nobody can take over, the leave is refused. */
static void test_leader_leave_alone_refused(void **state)
{
	struct hr *h = cluster(1, 3);
	raft_index index;

	(void)state;
	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	hr_run_for(h, 2 * ET);
	assert_int_equal(hr_change(h, 1, "n00", false, &index), -EDEADLK);
	hr_free(h);
}

/* Three voters: the leader hands over at once, the new one removes it. */
static void test_leader_leave_hands_over_three_voters(void **state)
{
	struct hr *h = cluster(3, 5);
	raft_index index;
	raft_id l, at;
	unsigned tries = 0;
	char nl[8];
	int rv;

	(void)state;
	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	hr_run_for(h, 3 * ET);
	l = hr_leader(h);
	snprintf(nl, sizeof(nl), "n%02u", (unsigned)l - 1);
	for (;;) {
		at = hr_leader(h);
		rv = at ? hr_change(h, at, nl, false, &index) : -EBUSY;
		if ((rv != -EBUSY && rv != -IMEXD_CONS_ENOTLEADER) ||
		    tries++ >= 200)
			break;
		hr_run_for(h, ET / 10);
	}
	assert_int_equal(rv, 0);
	assert_int_not_equal(at, l);
	assert_true(hr_run_until_pred(h, hr_now(h) + 10 * ET, converged, nl));
	assert_int_equal(imexd_cons_role(hr_cons(h, at), hr_id(h, l)), -1);
	hr_free(h);
}

static void test_membership_random_faults(void **state)
{
	const char *one = getenv("IMEX_SEED");
	const char *many = getenv("IMEX_SEEDS");
	unsigned base, n, i, failed = 0;

	(void)state;
	base = one ? (unsigned)strtoul(one, NULL, 0) : 1;
	n = many ? (unsigned)strtoul(many, NULL, 0) : (one ? 1 : 100);
	total_changes = 0;
	for (i = 0; i < n; i++)
		if (!membership_run(base + i))
			failed++;
	printf("  membership under faults: %u seeds, %u failed; %lu joins and leaves submitted\n",
	       n, failed, total_changes);
	assert_int_equal(failed, 0);
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
