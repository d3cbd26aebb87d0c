// SPDX-License-Identifier: GPL-2.0
/*
 * The raft log's snapshots (taken, installed, an install interrupted),
 * a seeded random history that reloads exactly (RAFTLOG_SEED), and the
 * loaded state starting a real libraft server.  See test_raftlog.c.
 */
#include "test_raftlog.h"

void test_snapshot_take_compacts_and_keeps_trailing(void **state)
{
	const struct raft_snapshot_metadata *m;
	struct imexd_raftlog *log;
	struct raft_buffer data;
	off_t before;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 9), 0);	/* 1..10 */
	before = file_size(&d, IMEXD_RAFTLOG_LOG);
	take(log, 8, 3, 0);
	assert_int_equal(imexd_raftlog_start_index(log), 6);
	assert_int_equal(imexd_raftlog_last_index(log), 10);
	assert_null(imexd_raftlog_entry(log, 5));
	assert_non_null(imexd_raftlog_entry(log, 6));
	assert_true(file_size(&d, IMEXD_RAFTLOG_LOG) < before);
	log = assert_reopen_same(&d, log);
	m = imexd_raftlog_snapshot(log, &data);
	assert_non_null(m);
	assert_int_equal(m->index, 8);
	assert_int_equal(m->term, 1);
	assert_int_equal(m->configuration_index, 1);
	assert_int_equal(m->configuration.n, 3);
	assert_string_equal(m->configuration.servers[2].address, "n3");
	assert_int_equal(data.len, strlen("fsm at 8"));
	assert_memory_equal(data.base, "fsm at 8", data.len);
	/* Not held, or not above the current snapshot: refused. */
	take(log, 5, 0, -EINVAL);
	take(log, 8, 0, -EINVAL);
	/* Trailing 0 drops the snapshot's own entry; appends continue. */
	take(log, 10, 0, 0);
	assert_int_equal(imexd_raftlog_start_index(log), 11);
	assert_int_equal(imexd_raftlog_last_index(log), 10);
	assert_int_equal(imexd_raftlog_term_of(log, 10), 1);
	log = assert_reopen_same(&d, log);
	assert_int_equal(append_cmds(log, 11, 1, 2), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(append_cmds(log, 10, 1, 1), -EINVAL);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

void test_snapshot_install_restarts_the_log(void **state)
{
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 4), 0);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 3, 0), 0);
	assert_int_equal(install(log, 20, 3), 0);
	assert_int_equal(imexd_raftlog_start_index(log), 21);
	assert_int_equal(imexd_raftlog_last_index(log), 20);
	assert_int_equal(imexd_raftlog_term_of(log, 20), 3);
	assert_null(imexd_raftlog_entry(log, 5));
	log = assert_reopen_same(&d, log);
	assert_int_equal(install(log, 20, 3), -EINVAL);
	assert_int_equal(append_cmds(log, 21, 3, 2), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_snapshot(log, NULL)->configuration.n, 5);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

void test_install_interrupted_before_the_log_reset_is_repaired(void **state)
{
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	disk_init(&d, true);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 4), 0);
	/* The snapshot is stored; rewriting the log fails. */
	d.hook.fail_at = d.hook.calls + 1;
	d.hook.fail_err = -EIO;
	assert_int_equal(install(log, 3, 2), -EIO);
	assert_int_equal(append_cmds(log, 6, 1, 1), -EIO);
	/* Entry 3 has term 1, the snapshot term 2: the log goes. */
	log = reopen(&d, log);
	assert_int_equal(imexd_raftlog_start_index(log), 4);
	assert_int_equal(imexd_raftlog_last_index(log), 3);
	assert_null(imexd_raftlog_entry(log, 4));
	log = assert_reopen_same(&d, log);
	/* The repair is on disk: what follows the snapshot stays. */
	assert_int_equal(imexd_raftlog_set_term_vote(log, 2, 0), 0);
	assert_int_equal(append_cmds(log, 4, 2, 2), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_last_index(log), 5);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

/* Reopen after every step of a seeded random history equals the live log. */
void test_random_history_reloads_exactly(void **state)
{
	const char *env = getenv("RAFTLOG_SEED");
	unsigned seed = (unsigned)getpid();
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	if (env)
		seed = (unsigned)strtoul(env, NULL, 0);
	print_message("random history seed %u (RAFTLOG_SEED=%u replays)\n",
		      seed, seed);
	srandom(seed);
	disk_init(&d, true);
	log = disk_open(&d);
	bootstrap(log);
	for (int step = 0; step < 300; step++) {
		raft_index start = imexd_raftlog_start_index(log);
		raft_index last = imexd_raftlog_last_index(log);
		raft_term term = imexd_raftlog_term(log);
		const struct raft_snapshot_metadata *m =
			imexd_raftlog_snapshot(log, NULL);
		raft_index low = m && m->index + 1 > start ? m->index + 1 : start;
		long r = random() % 10;

		if (low < 2)
			low = 2;	/* entry 1 stays the bootstrap configuration */

		if (r == 0) {
			assert_int_equal(imexd_raftlog_set_term_vote(log, term + 1,
					 (raft_id)(random() % 4)), 0);
		} else if (r < 7) {
			raft_index at = low + (raft_index)random() %
					(last + 2 - low);

			assert_int_equal(append_cmds(log, at, term,
						     (unsigned)(random() % 6)), 0);
		} else if (r < 9 && last >= low && last > 1) {
			take(log, last - (raft_index)random() % (last - low + 1),
			     (unsigned)(random() % 4), 0);
		} else if (r == 9) {
			assert_int_equal(install(log, last + 1 + (raft_index)(random() % 3),
						 term), 0);
		}
		log = assert_reopen_same(&d, log);
	}
	imexd_raftlog_close(log);
	disk_fini(&d);
}

/* What open loads is what raft_step(RAFT_START) takes, with no leak. */
void test_loaded_state_starts_a_raft_server(void **state)
{
	struct imexd_raftlog *log;
	struct raft_update update;
	struct raft_event ev;
	struct raft r;
	struct disk d;
	int rv;

	(void)state;
	for (int with_snap = 0; with_snap < 2; with_snap++) {
		disk_init(&d, true);
		log = disk_open(&d);
		bootstrap(log);
		assert_int_equal(imexd_raftlog_set_term_vote(log, 2, 2), 0);
		assert_int_equal(append_cmds(log, 2, 2, 6), 0);
		if (with_snap)
			take(log, 5, 2, 0);
		log = reopen(&d, log);

		assert_int_equal(raft_init(&r, NULL, NULL, 1, "n1"), 0);
		memset(&ev, 0, sizeof(ev));
		assert_int_equal(imexd_raftlog_start(log, &ev), 0);
		assert_int_equal(ev.type, RAFT_START);
		assert_int_equal(ev.start.n_entries,
				 with_snap ? 4 : 7);
		assert_int_equal(ev.start.start_index, with_snap ? 4 : 1);
		ev.time = 0;
		rv = raft_step(&r, &ev, &update);
		imexd_raftlog_start_done(&ev, rv);
		assert_int_equal(rv, 0);
		assert_int_equal(raft_current_term(&r), 2);
		assert_int_equal(raft_voted_for(&r), 2);
		assert_int_equal(raft_last_index(&r), 7);
		assert_int_equal(raft_state(&r), RAFT_FOLLOWER);
		raft_close(&r, NULL);
		imexd_raftlog_close(log);
		disk_fini(&d);
	}
}
