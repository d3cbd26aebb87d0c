// SPDX-License-Identifier: GPL-2.0
/*
 * The raft log under faults: every write error is returned and claims
 * nothing, a failed undo stops all writes, a power cut at any I/O call
 * loads the old or the new state, a full memory disk.  See test_raftlog.c.
 */
#include "test_raftlog.h"

/* Run @op once with the @k-th I/O call failing with @err. */
typedef int (*op_fn)(struct imexd_raftlog *log);

static int op_term(struct imexd_raftlog *log)
{
	return imexd_raftlog_set_term_vote(log, 5, 3);
}

static int op_append(struct imexd_raftlog *log)
{
	return append_cmds(log, 4, 2, 3);
}

static int op_truncate_append(struct imexd_raftlog *log)
{
	return append_cmds(log, 3, 3, 2);
}

static int op_first_append(struct imexd_raftlog *log)
{
	return append_cmds(log, 6, 2, 2);
}

static int op_take(struct imexd_raftlog *log)
{
	take(log, 4, 1, imexd_raftlog_snapshot(log, NULL) ? -EINVAL : 0);
	return 0;
}

static int take_at_5(struct imexd_raftlog *log, unsigned trailing)
{
	struct raft_snapshot_metadata m = {
		.index = 5, .term = 2, .configuration_index = 1,
	};
	int ret;

	conf_of(3, &m.configuration);
	ret = imexd_raftlog_snapshot_take(log, &m, "snap", 4, trailing);
	raft_configuration_close(&m.configuration);
	return ret;
}

static int op_take_ret(struct imexd_raftlog *log)
{
	return take_at_5(log, 1);
}

/* What a take leaves when its compaction did not happen. */
static int op_take_uncompacted(struct imexd_raftlog *log)
{
	return take_at_5(log, 100);
}

static int op_install(struct imexd_raftlog *log)
{
	return install(log, 40, 3);
}

/* @alt: a third state a crash may leave (a stored snapshot whose
 * compaction did not run), or NULL. */
static const struct { const char *name; op_fn fn, alt; } ops[] = {
	{ "set_term_vote", op_term, NULL },
	{ "append", op_append, NULL },
	{ "append over a suffix", op_truncate_append, NULL },
	{ "append after a snapshot", op_first_append, NULL },
	{ "snapshot take", op_take_ret, op_take_uncompacted },
	{ "snapshot install", op_install, NULL },
};

/* The state every fault test starts from: term 2, entries 1..5, and for the
 * "after a snapshot" op a snapshot at 4 keeping 1 (log 4..5). */
static struct imexd_raftlog *base_state(struct disk *d, size_t op)
{
	struct imexd_raftlog *log = disk_open(d);

	bootstrap(log);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 2, 1), 0);
	assert_int_equal(append_cmds(log, 2, 2, 4), 0);
	if (ops[op].fn == op_first_append)
		assert_int_equal(op_take(log), 0);
	if (ops[op].fn == op_term)
		assert_int_equal(imexd_raftlog_set_term_vote(log, 3, 0), 0);
	return reopen(d, log);
}

/* The state @fn leaves (from op @op's base) when nothing fails. */
static struct fp expected_after(size_t op, op_fn fn, bool mem)
{
	struct imexd_raftlog *log;
	struct disk d;
	struct fp f;

	disk_init(&d, mem);
	log = base_state(&d, op);
	assert_int_equal(fn(log), 0);
	f = fingerprint(log);
	log = assert_reopen_same(&d, log);
	imexd_raftlog_close(log);
	disk_fini(&d);
	return f;
}

void test_every_write_error_is_returned_and_claims_nothing(void **state)
{
	static const int errs[] = { -ENOSPC, -EIO };
	unsigned runs = 0;

	(void)state;
	for (size_t op = 0; op < sizeof(ops) / sizeof(ops[0]); op++) {
		for (size_t e = 0; e < 2; e++) {
			for (int k = 0;; k++) {
				struct imexd_raftlog *log;
				struct fp before, now;
				struct disk d;
				int ret;

				disk_init(&d, false);
				log = base_state(&d, op);
				before = fingerprint(log);
				d.hook.fail_at = k;
				d.hook.fail_err = errs[e];
				ret = ops[op].fn(log);
				if (d.hook.calls <= k) {	/* past the last call */
					assert_int_equal(ret, 0);
					imexd_raftlog_close(log);
					disk_fini(&d);
					break;
				}
				runs++;
				if (ret != errs[e])
					fail_msg("%s: call %d failing with %d returned %d",
						 ops[op].name, k, errs[e], ret);
				now = fingerprint(log);
				/* A take that stored its snapshot but could not
				 * compact keeps every entry and says so. */
				if (!fp_eq(&before, &now)) {
					assert_true(ops[op].fn == op_take_ret ||
						    ops[op].fn == op_install);
					assert_true(now.snap);
					assert_int_equal(now.start, before.start);
				}
				log = reopen(&d, log);
				/* The failed call's bytes were cut, not left
				 * for the next load to find torn. */
				assert_string_equal(d.note, "");
				if (ops[op].fn != op_install) {
					struct fp again = fingerprint(log);

					assert_fp(&now, &again);
				}
				/* The log still takes writes. */
				assert_int_equal(imexd_raftlog_set_term_vote(log, 9, 0), 0);
				imexd_raftlog_close(log);
				disk_fini(&d);
			}
		}
	}
	print_message("%u failed I/O calls checked\n", runs);
}

void test_a_failed_undo_stops_all_writes_until_reopened(void **state)
{
	struct imexd_raftlog *log;
	struct fp before, now;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	before = fingerprint(log);
	d.hook.fail_at = d.hook.calls;	/* the frame's write */
	d.hook.fail_err = -ENOSPC;
	d.hook.fail_undo = true;
	assert_int_equal(append_cmds(log, 2, 1, 2), -ENOSPC);
	hook_reset(&d.hook);
	assert_int_equal(append_cmds(log, 2, 1, 2), -EIO);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 4, 0), -EIO);
	now = fingerprint(log);
	assert_fp(&before, &now);
	/* Reopening drops the half frame as a torn tail. */
	log = reopen(&d, log);
	now = fingerprint(log);
	assert_fp(&before, &now);
	assert_string_not_equal(d.note, "");
	assert_int_equal(append_cmds(log, 2, 1, 2), 0);
	log = assert_reopen_same(&d, log);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

/*
 * A power cut at each I/O call of each operation, on the memory disk, with
 * torn writes of several sizes: the state loads, and is the old or the new.
 */
void test_a_crash_at_any_step_loads_the_old_or_the_new_state(void **state)
{
	static const size_t keeps[] = { 0, 1, 7, 33, 100, SIZE_MAX };
	unsigned runs = 0;

	(void)state;
	for (size_t op = 0; op < sizeof(ops) / sizeof(ops[0]); op++) {
		struct fp want = expected_after(op, ops[op].fn, true);
		struct fp alt = ops[op].alt ?
				expected_after(op, ops[op].alt, true) : want;

		for (int k = 0;; k++) {
			bool done = false;

			for (size_t i = 0; i < sizeof(keeps) / sizeof(keeps[0]); i++) {
				struct imexd_raftlog *log;
				struct fp before, now;
				struct disk d;
				int ret;

				disk_init(&d, true);
				log = base_state(&d, op);
				before = fingerprint(log);
				d.hook.fail_at = k;
				d.hook.cut = true;
				ret = ops[op].fn(log);
				done = d.hook.calls <= k;
				runs++;
				imexd_raftlog_close(log);
				imexd_raftlog_mem_crash(d.mem, keeps[i]);
				log = reopen(&d, NULL);
				now = fingerprint(log);
				if (!fp_eq(&now, &want) &&
				    !(ret && (fp_eq(&now, &before) ||
					      fp_eq(&now, &alt))))
					fail_msg("%s: cut at call %d keeping %zu: neither the old nor the new state (ret %d)",
						 ops[op].name, k, keeps[i], ret);
				imexd_raftlog_close(log);
				disk_fini(&d);
			}
			if (done)
				break;
		}
	}
	print_message("%u power cuts checked\n", runs);
}

void test_memory_disk_fills_crashes_and_refuses_nothing_twice(void **state)
{
	struct imexd_raftlog *log;
	struct fp before, now;
	size_t used;
	struct disk d;

	(void)state;
	disk_init(&d, true);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 2), 0);
	before = fingerprint(log);
	used = imexd_raftlog_mem_used(d.mem);
	imexd_raftlog_mem_set_limit(d.mem, used + 40);
	assert_int_equal(append_cmds(log, 4, 1, 5), -ENOSPC);
	assert_int_equal(imexd_raftlog_mem_used(d.mem), used);
	now = fingerprint(log);
	assert_fp(&before, &now);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 2, 0), 0);
	/* An injected EIO on the sync. */
	imexd_raftlog_mem_set_limit(d.mem, 0);
	imexd_raftlog_mem_fail_next(d.mem, -EIO, 1);
	before = fingerprint(log);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 3, 0), -EIO);
	now = fingerprint(log);
	assert_fp(&before, &now);
	log = assert_reopen_same(&d, log);
	assert_int_equal(append_cmds(log, 4, 2, 5), 0);
	log = assert_reopen_same(&d, log);
	/* What was never synced is lost in a crash; what was, stays. */
	before = fingerprint(log);
	imexd_raftlog_close(log);
	imexd_raftlog_mem_crash(d.mem, 0);
	log = reopen(&d, NULL);
	now = fingerprint(log);
	assert_fp(&before, &now);
	imexd_raftlog_close(log);
	disk_fini(&d);
}
