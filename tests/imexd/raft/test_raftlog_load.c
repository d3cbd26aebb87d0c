// SPDX-License-Identifier: GPL-2.0
/*
 * The raft log: what is written loads back (fresh state, term and vote,
 * the group, entries, a replaced suffix, refused input), torn tails are
 * dropped and damage elsewhere refuses to load.  See test_raftlog.c.
 */
#include "test_raftlog.h"

void test_fresh_state_is_empty(void **state)
{
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	assert_int_equal(imexd_raftlog_term(log), 0);
	assert_int_equal(imexd_raftlog_vote(log), 0);
	assert_int_equal(imexd_raftlog_start_index(log), 1);
	assert_int_equal(imexd_raftlog_last_index(log), 0);
	assert_null(imexd_raftlog_snapshot(log, NULL));
	assert_null(imexd_raftlog_entry(log, 1));
	imexd_raftlog_close(log);
	disk_fini(&d);
}

void test_term_and_vote_are_durable_and_never_go_back(void **state)
{
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 7, 2), 0);
	log = reopen(&d, log);
	assert_int_equal(imexd_raftlog_term(log), 7);
	assert_int_equal(imexd_raftlog_vote(log), 2);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 6, 0), -EINVAL);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 8, 0), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_term(log), 8);
	assert_int_equal(imexd_raftlog_vote(log), 0);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

/* A raft-meta file as imexd wrote it before the group id (version 1). */
static void write_meta_v1(const struct disk *d, raft_term term, raft_id vote)
{
	uint8_t b[32] = { 'I', 'M', 'X', 'R', 'M', 'E', 'T', 'A', 1 };
	char p[512];
	uint32_t c;
	FILE *f;
	int i;

	for (i = 0; i < 8; i++) {
		b[16 + i] = (uint8_t)(term >> (8 * i));
		b[24 + i] = (uint8_t)(vote >> (8 * i));
	}
	c = (uint32_t)crc32(crc32(0, Z_NULL, 0), b + 16, 16);
	for (i = 0; i < 4; i++)
		b[12 + i] = (uint8_t)(c >> (8 * i));
	path_of(d, IMEXD_RAFTLOG_META, p, sizeof(p));
	f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, sizeof(b), f), sizeof(b));
	assert_int_equal(fclose(f), 0);
}

void test_group_is_durable_set_once_and_outlives_compaction(void **state)
{
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	assert_int_equal(imexd_raftlog_group(log), 0);
	assert_int_equal(imexd_raftlog_set_group(log, 0), -EINVAL);
	/* Before any term: a node waiting to be joined adopts a group. */
	assert_int_equal(imexd_raftlog_set_group(log, 0x1234abcd5678ef00ULL), 0);
	log = reopen(&d, log);
	assert_int_equal(imexd_raftlog_group(log), 0x1234abcd5678ef00ULL);
	assert_int_equal(imexd_raftlog_term(log), 0);
	assert_int_equal(imexd_raftlog_set_group(log, 0x1234abcd5678ef00ULL), 0);
	assert_int_equal(imexd_raftlog_set_group(log, 7), -EINVAL);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 1, 0), 0);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 9), 0);
	take(log, 8, 0, 0);	/* entry 1 compacted away */
	assert_null(imexd_raftlog_entry(log, 1));
	assert_int_equal(imexd_raftlog_set_term_vote(log, 3, 2), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_group(log), 0x1234abcd5678ef00ULL);
	assert_int_equal(imexd_raftlog_term(log), 3);
	assert_int_equal(imexd_raftlog_vote(log), 2);
	imexd_raftlog_close(log);

	/* An older imexd's raft-meta loads, with no group yet. */
	write_meta_v1(&d, 5, 9);
	log = disk_open(&d);
	assert_int_equal(imexd_raftlog_term(log), 5);
	assert_int_equal(imexd_raftlog_vote(log), 9);
	assert_int_equal(imexd_raftlog_group(log), 0);
	assert_int_equal(imexd_raftlog_set_group(log, 42), 0);
	log = reopen(&d, log);
	assert_int_equal(imexd_raftlog_group(log), 42);
	assert_int_equal(imexd_raftlog_term(log), 5);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

void test_entries_load_back_byte_for_byte(void **state)
{
	const struct raft_entry *e;
	struct imexd_raftlog *log;
	struct raft_entry big;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	log = assert_reopen_same(&d, log);
	assert_int_equal(append_cmds(log, 2, 1, 5), 0);
	log = assert_reopen_same(&d, log);
	big = cmd(2, IMEXD_RAFT_ENTRY_MAX, 99);
	assert_int_equal(imexd_raftlog_append(log, 7, &big, 1), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_last_index(log), 7);
	e = imexd_raftlog_entry(log, 7);
	assert_non_null(e);
	assert_int_equal(e->term, 2);
	assert_int_equal(e->type, RAFT_COMMAND);
	assert_int_equal(e->buf.len, IMEXD_RAFT_ENTRY_MAX);
	assert_memory_equal(e->buf.base, big.buf.base, big.buf.len);
	assert_null(e->batch);
	assert_int_equal(imexd_raftlog_entry(log, 1)->type, RAFT_CHANGE);
	assert_int_equal(imexd_raftlog_entry(log, 2)->buf.len, 2 % 5 * 13);
	free(big.buf.base);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

void test_append_replaces_the_conflicting_suffix(void **state)
{
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 8), 0);	/* 2..9 */
	assert_int_equal(imexd_raftlog_set_term_vote(log, 3, 0), 0);
	assert_int_equal(append_cmds(log, 5, 3, 2), 0);	/* 5..6 of term 3 */
	assert_int_equal(imexd_raftlog_last_index(log), 6);
	assert_int_equal(imexd_raftlog_term_of(log, 4), 1);
	assert_int_equal(imexd_raftlog_term_of(log, 5), 3);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_last_index(log), 6);
	/* Truncation alone (no entries) is a frame too. */
	assert_int_equal(imexd_raftlog_append(log, 4, NULL, 0), 0);
	assert_int_equal(imexd_raftlog_last_index(log), 3);
	log = assert_reopen_same(&d, log);
	assert_int_equal(append_cmds(log, 4, 3, 3), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_last_index(log), 6);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

void test_append_refuses_bad_input_and_changes_nothing(void **state)
{
	struct raft_entry e[IMEXD_RAFTLOG_BATCH_MAX + 1];
	struct imexd_raftlog *log;
	struct raft_entry big, junk;
	struct fp before, now;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	/* The first entry must be the bootstrap configuration. */
	assert_int_equal(append_cmds(log, 1, 1, 1), -EINVAL);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 2, 3), 0);
	before = fingerprint(log);
	assert_int_equal(append_cmds(log, 6, 2, 1), -EINVAL);	/* gap */
	assert_int_equal(append_cmds(log, 0, 2, 1), -EINVAL);
	now = fingerprint(log);
	assert_fp(&before, &now);
	assert_int_equal(append_cmds(log, 4, 0, 1), -EINVAL);	/* term 0 */
	big = cmd(2, IMEXD_RAFT_ENTRY_MAX + 1, 1);
	assert_int_equal(imexd_raftlog_append(log, 4, &big, 1), -EFBIG);
	free(big.buf.base);
	for (unsigned i = 0; i <= IMEXD_RAFTLOG_BATCH_MAX; i++)
		e[i] = (struct raft_entry){ .term = 2, .type = RAFT_BARRIER };
	assert_int_equal(imexd_raftlog_append(log, 4, e,
					      IMEXD_RAFTLOG_BATCH_MAX + 1),
			 -E2BIG);
	junk = (struct raft_entry){ .term = 2, .type = RAFT_CHANGE,
				    .buf = { .base = payload, .len = 5 } };
	memset(payload, 0xff, 5);
	assert_int_equal(imexd_raftlog_append(log, 4, &junk, 1), -EINVAL);
	junk.type = 9;
	assert_int_equal(imexd_raftlog_append(log, 4, &junk, 1), -EINVAL);
	/* The term never decreases along the log. */
	assert_int_equal(imexd_raftlog_set_term_vote(log, 4, 0), 0);
	assert_int_equal(append_cmds(log, 4, 4, 1), 0);
	assert_int_equal(append_cmds(log, 5, 3, 1), -EINVAL);
	assert_int_equal(imexd_raftlog_append(log, 5, NULL, 0), 0);
	before = fingerprint(log);
	log = reopen(&d, log);
	now = fingerprint(log);
	assert_fp(&before, &now);
	/* A full batch is fine. */
	for (unsigned i = 0; i < IMEXD_RAFTLOG_BATCH_MAX; i++)
		e[i].term = 4;
	assert_int_equal(imexd_raftlog_append(log, 5, e,
					      IMEXD_RAFTLOG_BATCH_MAX), 0);
	log = assert_reopen_same(&d, log);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

void test_torn_last_frame_is_dropped_with_a_note(void **state)
{
	struct imexd_raftlog *log;
	struct fp before, now;
	off_t mid, end;
	struct disk d;
	char p[512];
	int fd;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 3), 0);
	before = fingerprint(log);
	mid = file_size(&d, IMEXD_RAFTLOG_LOG);
	assert_int_equal(append_cmds(log, 5, 1, 4), 0);
	end = file_size(&d, IMEXD_RAFTLOG_LOG);
	imexd_raftlog_close(log);

	/* Cut inside the last frame: its payload, then its header. */
	file_cut(&d, IMEXD_RAFTLOG_LOG, end - 3);
	log = disk_open(&d);
	now = fingerprint(log);
	assert_fp(&before, &now);
	assert_non_null(strstr(d.note, "raft-log: dropped"));
	assert_int_equal(file_size(&d, IMEXD_RAFTLOG_LOG), mid);
	/* Appending after the cut, then reopening, is clean. */
	assert_int_equal(append_cmds(log, 5, 1, 4), 0);
	log = assert_reopen_same(&d, log);
	imexd_raftlog_close(log);
	file_cut(&d, IMEXD_RAFTLOG_LOG, mid + 10);
	log = disk_open(&d);
	now = fingerprint(log);
	assert_fp(&before, &now);
	assert_string_not_equal(d.note, "");

	/* Size grew but the data never came (zeroes). */
	assert_int_equal(append_cmds(log, 5, 1, 4), 0);
	imexd_raftlog_close(log);
	end = file_size(&d, IMEXD_RAFTLOG_LOG);
	path_of(&d, IMEXD_RAFTLOG_LOG, p, sizeof(p));
	fd = open(p, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, end + 4096), 0);
	close(fd);
	log = disk_open(&d);
	assert_int_equal(imexd_raftlog_last_index(log), 8);
	assert_string_not_equal(d.note, "");
	assert_int_equal(file_size(&d, IMEXD_RAFTLOG_LOG), end);

	/* A bad checksum in the last frame only: torn as well. */
	imexd_raftlog_close(log);
	file_flip(&d, IMEXD_RAFTLOG_LOG, end - 2);
	log = disk_open(&d);
	now = fingerprint(log);
	assert_fp(&before, &now);
	assert_string_not_equal(d.note, "");
	imexd_raftlog_close(log);
	disk_fini(&d);
}

void test_damage_before_the_last_frame_refuses_to_load(void **state)
{
	struct imexd_raftlog *log = NULL;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 3), 0);
	assert_int_equal(append_cmds(log, 5, 1, 3), 0);
	imexd_raftlog_close(log);

	/* The first frame (offset 16): its payload, then its header. */
	file_flip(&d, IMEXD_RAFTLOG_LOG, 16 + 32 + 20);
	assert_int_equal(disk_try_open(&d, &log), -EBADMSG);
	assert_non_null(strstr(d.err, "raft-log: offset 16: bad frame checksum"));
	assert_non_null(strstr(d.err, d.dir));
	file_flip(&d, IMEXD_RAFTLOG_LOG, 16 + 32 + 20);
	file_flip(&d, IMEXD_RAFTLOG_LOG, 16 + 9);
	assert_int_equal(disk_try_open(&d, &log), -EBADMSG);
	assert_non_null(strstr(d.err, "raft-log: offset 16: bad frame header"));
	file_flip(&d, IMEXD_RAFTLOG_LOG, 16 + 9);
	file_flip(&d, IMEXD_RAFTLOG_LOG, 3);
	assert_int_equal(disk_try_open(&d, &log), -EBADMSG);
	assert_non_null(strstr(d.err, "raft-log: offset 0"));
	file_flip(&d, IMEXD_RAFTLOG_LOG, 3);

	/* Term and vote, and the snapshot. */
	file_flip(&d, IMEXD_RAFTLOG_META, 20);
	assert_int_equal(disk_try_open(&d, &log), -EBADMSG);
	assert_non_null(strstr(d.err, "raft-meta: offset 0"));
	file_flip(&d, IMEXD_RAFTLOG_META, 20);
	log = disk_open(&d);
	take(log, 6, 2, 0);
	imexd_raftlog_close(log);
	file_flip(&d, IMEXD_RAFTLOG_SNAPSHOT, 60);
	assert_int_equal(disk_try_open(&d, &log), -EBADMSG);
	assert_non_null(strstr(d.err, "raft-snapshot"));
	file_flip(&d, IMEXD_RAFTLOG_SNAPSHOT, 60);
	log = disk_open(&d);
	assert_int_equal(imexd_raftlog_last_index(log), 7);
	imexd_raftlog_close(log);
	disk_fini(&d);
}
