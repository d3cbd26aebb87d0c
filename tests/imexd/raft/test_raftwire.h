/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test_raftwire program's shared part: building and comparing messages
 * in test_raftwire.c, and the tests of test_raftwire_*.c that its main()
 * runs.
 */
#ifndef IMEX_TEST_RAFTWIRE_H
#define IMEX_TEST_RAFTWIRE_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "raftwire.h"

#define FROM		7
#define FROM_ADDR	"n7"

enum {
	S_RV, S_RV_PRE, S_RVR, S_AE_HEARTBEAT, S_AE, S_AE_EMPTY, S_AER,
	S_IS, S_IS_EMPTY, S_TN, S_COUNT
};

/* test_raftwire.c */
void conf_make(struct raft_configuration *c, unsigned n,
	       size_t addr_len);
void entries_make(struct raft_append_entries *a, unsigned n,
		  const raft_term *terms, const int *types, size_t len);
void sample(int which, struct raft_message *m);
void encode_ok(const struct raft_message *m, uint8_t **buf, size_t *len);
void sample_enc(int which, uint8_t **buf, size_t *len);
int decode(const uint8_t *buf, size_t len, struct raft_message *m,
	   const char **why);
void assert_msg_equal(const struct raft_message *a,
		      const struct raft_message *b);
void assert_valid(const struct raft_message *m, const uint8_t *buf,
		  size_t len);

/* the tests: test_raftwire_codec.c, test_raftwire_rules.c,
 * test_raftwire_own.c
 */
void test_round_trip_every_type(void **state);
void test_conf_check_accepts_libraft_encoding(void **state);
void test_conf_check_byte_changes(void **state);
void test_every_truncation_refused(void **state);
void test_every_byte_change_refused_or_valid(void **state);
void test_random_bytes_never_crash(void **state);
void test_entry_bounds(void **state);
void test_configuration_bounds(void **state);
void test_snapshot_and_frame_bounds(void **state);
void test_rules_refused_both_ways(void **state);
void test_stale_term_reply_with_any_last_index(void **state);
void test_sender_is_the_candidate(void **state);
void test_out_of_memory_changes_nothing(void **state);
void test_release_matches_raft_ownership(void **state);
void test_snapshot_while_installing_is_freed_not_stepped(void **state);

#endif
