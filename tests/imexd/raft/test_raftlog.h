/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test_raftlog program's shared part: the disk fixture, entry
 * builders and fingerprints in test_raftlog.c, and the tests of
 * test_raftlog_*.c that its main() runs.
 */
#ifndef IMEX_TEST_RAFTLOG_H
#define IMEX_TEST_RAFTLOG_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "raftlog.h"

/* A test's disk: a temp directory or a memory disk, and an I/O hook. */
struct hook {
	struct imexd_raftlog_io inner;
	int calls;	/* replace/write/truncate/sync calls so far */
	int fail_at;	/* that call fails (-1: none) ... */
	int fail_err;	/* ... with this */
	bool cut;	/* ... after doing its I/O, and every later call fails */
	bool dead;
	bool fail_undo;	/* truncate and sync fail too */
};

struct disk {
	char dir[256];
	struct imexd_raftlog_mem *mem;
	struct hook hook;
	char err[IMEXD_RAFTLOG_MSG_MAX];
	char note[IMEXD_RAFTLOG_MSG_MAX];
};

/* Everything the log holds, as numbers to compare. */
struct fp {
	raft_term term;
	raft_id vote;
	raft_index start, last;
	uint32_t ents;
	bool snap;
	raft_index sindex, sconf_index;
	raft_term sterm;
	unsigned sconf_n;
	uint32_t sdata;
};


/* test_raftlog.c */
void hook_reset(struct hook *h);
void disk_init(struct disk *d, bool mem);
void disk_fini(struct disk *d);
int disk_try_open(struct disk *d, struct imexd_raftlog **log);
struct imexd_raftlog *disk_open(struct disk *d);
struct imexd_raftlog *reopen(struct disk *d, struct imexd_raftlog *log);
void path_of(const struct disk *d, const char *name, char *p, size_t n);
off_t file_size(const struct disk *d, const char *name);
void file_flip(const struct disk *d, const char *name, off_t off);
void file_cut(const struct disk *d, const char *name, off_t len);
void conf_of(unsigned n, struct raft_configuration *c);
extern uint8_t payload[IMEXD_RAFT_ENTRY_MAX + 1];
struct raft_entry cmd(raft_term term, size_t len, unsigned seed);
void bootstrap(struct imexd_raftlog *log);
int append_cmds(struct imexd_raftlog *log, raft_index index,
		raft_term term, unsigned n);
struct fp fingerprint(const struct imexd_raftlog *log);
bool fp_eq(const struct fp *a, const struct fp *b);
void assert_fp(const struct fp *a, const struct fp *b);
struct imexd_raftlog *assert_reopen_same(struct disk *d,
					 struct imexd_raftlog *log);
void take(struct imexd_raftlog *log, raft_index index,
	  unsigned trailing, int expect);
int install(struct imexd_raftlog *log, raft_index index,
	    raft_term term);

/* test_raftlog_load.c */
void test_fresh_state_is_empty(void **state);
void test_term_and_vote_are_durable_and_never_go_back(void **state);
void test_group_is_durable_set_once_and_outlives_compaction(void **state);
void test_entries_load_back_byte_for_byte(void **state);
void test_append_replaces_the_conflicting_suffix(void **state);
void test_append_refuses_bad_input_and_changes_nothing(void **state);
void test_torn_last_frame_is_dropped_with_a_note(void **state);
void test_damage_before_the_last_frame_refuses_to_load(void **state);

/* test_raftlog_faults.c */
void test_every_write_error_is_returned_and_claims_nothing(void **state);
void test_a_failed_undo_stops_all_writes_until_reopened(void **state);
void test_a_crash_at_any_step_loads_the_old_or_the_new_state(void **state);
void test_memory_disk_fills_crashes_and_refuses_nothing_twice(void **state);

/* test_raftlog_snap.c */
void test_snapshot_take_compacts_and_keeps_trailing(void **state);
void test_snapshot_install_restarts_the_log(void **state);
void test_install_interrupted_before_the_log_reset_is_repaired(void **state);
void test_random_history_reloads_exactly(void **state);
void test_loaded_state_starts_a_raft_server(void **state);

#endif /* IMEX_TEST_RAFTLOG_H */
