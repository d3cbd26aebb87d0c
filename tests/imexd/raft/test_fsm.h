/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test_fsm program's shared part: the fixture, the command builders and
 * checks in test_fsm.c, and the tests of test_fsm_*.c that its main() runs.
 */
#ifndef IMEX_TEST_FSM_H
#define IMEX_TEST_FSM_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "fsm.h"
#include "test_alloc.h"
#include "test_rng.h"

struct blob {
	uint8_t *p;
	size_t n;
};

struct tf {
	struct imexd_fsm *fsm;
	uint64_t index;
};

/* test_fsm.c */
uint64_t seed_from_env(const char *what);
unsigned int steps_from_env(unsigned int dflt);
extern const uint8_t FAB1[16];
extern const uint8_t FAB2[16];
extern const uint8_t NOFAB[16];
void uuid_of(uint8_t u[16], unsigned int v);
void node_uuid(uint8_t u[16], const char *name);
struct imexd_cmd node_cmd(const char *name, const uint8_t fab[16],
			  uint32_t part, uint32_t maxch);
uint16_t members_of(const char *csv, struct imexd_member **out);
struct imexd_cmd create_cmd(const char *name, unsigned int uuid,
			    const char *members, uint32_t count,
			    const uint32_t *ids, uint32_t nids);
struct imexd_cmd alloc_cmd(const char *name, uint32_t count,
			   const uint32_t *ids, uint32_t nids);
struct imexd_cmd free_cmd(const char *name, const uint32_t *ids,
			  uint32_t nids);
struct imexd_cmd delete_cmd(const char *name);
struct imexd_cmd evict_cmd(const char *name, const char *member);
struct imexd_cmd replace_cmd(const char *name, const char *member,
			     const char *with);
struct blob snap(const struct imexd_fsm *fsm);
void assert_same(struct blob a, struct blob b);
void apply(struct tf *t, struct imexd_cmd *c, struct imexd_fsm_result *r);
void ok(struct tf *t, struct imexd_cmd c);
void refused(struct tf *t, struct imexd_cmd c, int err, const char *text);
void cluster(struct tf *t);
void assert_channels(const struct imexd_def *d, const char *want);
struct blob encode(const struct imexd_cmd *c);
void populate(struct tf *t);

/* the tests: test_fsm_codec.c, test_fsm_cmd.c, test_fsm_snap.c,
 * test_fsm_random.c
 */
void test_codec_round_trip(void **state);
void test_codec_truncations_refused(void **state);
void test_codec_version_and_type(void **state);
void test_codec_refuses_bad_fields(void **state);
void test_codec_bounds(void **state);
void test_codec_random_bytes(void **state);
void test_node_set(void **state);
void test_node_leave_marks_then_forgets(void **state);
void test_nodes_bound(void **state);
void test_create_by_count_lowest_free_everywhere(void **state);
void test_create_repeated(void **state);
void test_create_refusals(void **state);
void test_members_bound(void **state);
void test_channels_per_command_bound(void **state);
void test_domains_per_node_bound(void **state);
void test_alloc_and_free(void **state);
void test_evict(void **state);
void test_replace(void **state);
void test_replace_domains_per_node_bound(void **state);
void test_delete(void **state);
void test_queries(void **state);
void test_index_must_increase(void **state);
void test_messages_fit_longest_names(void **state);
void test_snapshot_round_trip(void **state);
void test_restore_refuses_bad_snapshots(void **state);
void test_restore_refuses_broken_invariants(void **state);
void test_random_sequences_deterministic(void **state);
void test_out_of_memory_changes_nothing(void **state);

#endif
