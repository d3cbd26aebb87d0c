// SPDX-License-Identifier: GPL-2.0
/*
 * test_consensus: elections, the roster's ids and voters, the bootstrap
 * entry and the group id it gives, and the inputs consensus refuses.
 */
#include "test_consensus.h"

void test_election_3(void **state) { (void)state; election(3); }
void test_election_5(void **state) { (void)state; election(5); }
void test_election_7(void **state) { (void)state; election(7); }

void test_roster_ids_and_voters(void **state)
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
void test_bootstrap_entry_identical(void **state)
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
void test_group_id_of_the_bootstrap_entry(void **state)
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
void test_two_names_never_lead_alone(void **state)
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
void test_bad_inputs_refused(void **state)
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
