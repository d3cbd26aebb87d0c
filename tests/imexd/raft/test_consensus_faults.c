// SPDX-License-Identifier: GPL-2.0
/*
 * test_consensus: random-fault seeds under an agreement checker, joining
 * and leaving, and membership changes under random faults (IMEX_SEED=N
 * replays one seed, IMEX_SEEDS=M runs M).
 */
#include "test_consensus.h"

/* ---- random faults ---- */

static unsigned long total_acked, total_dropped, total_restores, total_changes;

/* The seeds to run: IMEX_SEED=N alone, or IMEX_SEEDS=M from N (or 1); else @dflt. */
static unsigned seeds_from_env(unsigned *base, unsigned dflt)
{
	const char *one = getenv("IMEX_SEED");
	const char *many = getenv("IMEX_SEEDS");

	*base = one ? (unsigned)strtoul(one, NULL, 0) : 1;
	return many ? (unsigned)strtoul(many, NULL, 0) : (one ? 1 : dflt);
}

/*
 * A run's faults and snapshot settings, drawn (after its size) from @h's
 * RNG: loss below @loss %, duplicates below @dup %.
 */
static void draw_faults(struct hr *h, struct hr_config *cfg, unsigned loss,
			unsigned dup)
{
	cfg->faults.latency_ms = 1 + hr_rand(h, 10);
	cfg->faults.jitter_ms = hr_rand(h, 40);
	cfg->faults.loss_pct = hr_rand(h, loss);
	cfg->faults.dup_pct = hr_rand(h, dup);
	cfg->faults.disk_ms = 1 + hr_rand(h, 20);
	cfg->snapshot_threshold = hr_rand(h, 2) ? 4 + hr_rand(h, 20) : 0;
	cfg->snapshot_trailing = hr_rand(h, 6);
}

/* Heal every link, restart all @n servers, back to LAN faults. */
static void heal_all(struct hr *h, unsigned n)
{
	unsigned i;

	hr_heal(h);
	for (i = 1; i <= n; i++)
		hr_restart(h, i);
	hr_set_faults(h, &lan);
}

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
	draw_faults(h, &cfg, 15, 10);
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
	heal_all(h, n);
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
void test_join_and_leave(void **state)
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

void test_random_faults_agreement(void **state)
{
	unsigned base, n, i, failed = 0;

	(void)state;
	n = seeds_from_env(&base, 250);
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
	draw_faults(h, &cfg, 10, 5);
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
	heal_all(h, n);
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

/* Once @h settled, @ets election timeouts more; then its leader. */
static raft_id leader_after_settling(struct hr *h, uint64_t ets)
{
	assert_true(hr_run_until_pred(h, 10 * ET, settled, NULL));
	hr_run_for(h, ets * ET);
	return hr_leader(h);
}

/* Leave of @name at whoever leads (@at), retried while busy or moving. */
static int leave_at_leader(struct hr *h, const char *name, raft_id *at,
			   unsigned *tries)
{
	raft_index index;
	int rv;

	for (;;) {
		*at = hr_leader(h);
		rv = *at ? hr_change(h, *at, name, false, &index) : -EBUSY;
		if ((rv != -EBUSY && rv != -IMEXD_CONS_ENOTLEADER) ||
		    (*tries)++ >= 200)
			return rv;
		hr_run_for(h, ET / 10);
	}
}

/* The group still commits: three more commands, submitted at @at, everywhere. */
static void still_commits(struct hr *h, raft_id at)
{
	submit_n(h, at, 0, 3, "after");
	assert_true(hr_run_until_pred(h, hr_now(h) + 5 * ET, converged, "after2"));
}

/*
 * Removing a healthy voter while another voter is down (not yet "lost")
 * would leave two voters that need the dead one: the change could never
 * commit and would block every later one.  It is refused up front
 * (-EHOSTUNREACH); the group stays available and removing the dead voter
 * instead goes through.
 */
void test_leave_refused_when_voters_left_unreachable(void **state)
{
	struct hr *h = cluster(3, 5);
	raft_index index;
	raft_id l, b, c;
	char nb[8], nc[8];

	(void)state;
	l = leader_after_settling(h, 3);
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
	still_commits(h, l);
	hr_free(h);
}

/*
 * The same with a caught-up standby: it is promoted first (-EBUSY while
 * that is under way), then the removal goes through and commits.
 */
void test_leave_promotes_standby_first(void **state)
{
	struct hr *h = cluster(4, 5);
	raft_index index;
	raft_id l, b, c;
	unsigned tries = 0;
	char nb[8];
	int rv;

	(void)state;
	l = leader_after_settling(h, 3);
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
	still_commits(h, l);
	hr_free(h);
}

/*
 * A leave of the leader in a 2-node group (one voter): the leader
 * promotes the other node, hands it leadership, and the leave then
 * completes on the new leader; the group keeps a leader throughout.
 */
void test_leader_leave_hands_over_two_nodes(void **state)
{
	struct hr *h = cluster(2, 9);
	raft_id l, o, at;
	unsigned tries = 0;
	char nl[8];
	int rv;

	(void)state;
	l = leader_after_settling(h, 10);	/* upkeep: 2 names keep 1 voter */
	o = l % 2 + 1;
	assert_int_equal(count_role(h, l, RAFT_VOTER), 1);
	snprintf(nl, sizeof(nl), "n%02u", (unsigned)l - 1);
	rv = leave_at_leader(h, nl, &at, &tries);
	printf("  leave of leader %s: %d after %u tries, at n%02u\n", nl, rv,
	       tries, (unsigned)at - 1);
	assert_int_equal(rv, 0);
	assert_int_equal(at, o);
	assert_true(hr_run_until_pred(h, hr_now(h) + 10 * ET, converged, nl));
	assert_int_equal(imexd_cons_role(hr_cons(h, o), hr_id(h, l)), -1);
	hr_crash(h, l);
	hr_run_for(h, 5 * ET);
	assert_int_equal(hr_leader(h), o);
	still_commits(h, o);
	hr_free(h);
}

/* A group of one: nobody can take over, the leave is refused. */
void test_leader_leave_alone_refused(void **state)
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
void test_leader_leave_hands_over_three_voters(void **state)
{
	struct hr *h = cluster(3, 5);
	raft_id l, at;
	unsigned tries = 0;
	char nl[8];
	int rv;

	(void)state;
	l = leader_after_settling(h, 3);
	snprintf(nl, sizeof(nl), "n%02u", (unsigned)l - 1);
	rv = leave_at_leader(h, nl, &at, &tries);
	assert_int_equal(rv, 0);
	assert_int_not_equal(at, l);
	assert_true(hr_run_until_pred(h, hr_now(h) + 10 * ET, converged, nl));
	assert_int_equal(imexd_cons_role(hr_cons(h, at), hr_id(h, l)), -1);
	hr_free(h);
}

void test_membership_random_faults(void **state)
{
	unsigned base, n, i, failed = 0;

	(void)state;
	n = seeds_from_env(&base, 100);
	total_changes = 0;
	for (i = 0; i < n; i++)
		if (!membership_run(base + i))
			failed++;
	printf("  membership under faults: %u seeds, %u failed; %lu joins and leaves submitted\n",
	       n, failed, total_changes);
	assert_int_equal(failed, 0);
}
