/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test_health program's shared part: the domains, the part under test
 * and its recorded actions in test_health.c, and the tests of
 * test_health_*.c that its main() runs.
 */
#ifndef IMEX_TEST_HEALTH_H
#define IMEX_TEST_HEALTH_H

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

#include "health.h"
#include "msgid.h"
#include "test_alloc.h"
#include "test_rng.h"

#define NDEFS 8
#define NRECS 512

struct rec {
	uint64_t dgen;
	struct imexd_peer_gen gens[8];
	struct imexd_member_status m[4];
	int type;
	uint32_t seq;
	uint32_t dstate;
	int level;
	uint16_t n, ngens;
	uint16_t nm;
	char to[IMEX_NAME_MAX];		/* SEND, PEER_LOST; STATUS: domain */
	char text[256];
	char dreason[IMEXD_REASON_MAX];
	struct imexd_log_fields fields;	/* LOG */
	struct imexd_peer_view views[IMEX_MEMBERS_MAX];
};

/* test_health.c */
extern struct imexd_def *defs[NDEFS];
void uuid_of(uint8_t u[16], uint8_t id);
const struct imexd_def *mk(uint8_t id, const char *name, uint64_t gen,
			   const char *members);
extern struct imexd_health *H;
extern size_t nrec;
void drain(void);
void settle(uint64_t now);
void reset(void);
size_t count(int type, const char *to);
const struct rec *last(int type, const char *to);
size_t logs_with(const char *needle);
size_t logs_with_fields(const char *needle, const char *msgid,
			const char *dom, const char *node);
void start(uint32_t hb, uint32_t miss, int64_t grace);
void doms(uint64_t now, int n, ...);
void up(uint64_t now, const char *name);
void down(uint64_t now, const char *name);
void tick(uint64_t now);
void applied(uint64_t now, uint8_t id, uint64_t gen);
void hbeat(uint64_t now, const char *from, const char *views,
	   const char *gens);
bool ready(uint8_t id);
uint8_t st(const char *name);

/* the tests: test_health_states.c, test_health_beats.c, test_health_bounds.c,
 * test_health_random.c
 */
void test_states_at_exact_times(void **state);
void test_reasons_say_why_and_since(void **state);
void test_refused_while_recovering_still_lost(void **state);
void test_reasons_without_wall_clock(void **state);
void test_grace_forever(void **state);
void test_grace_zero(void **state);
void test_reasons_ascii_only(void **state);
void test_heartbeat_refused_while_recovering(void **state);
void test_heartbeat_content_and_period(void **state);
void test_change_heartbeat_rate_limit(void **state);
void test_change_heartbeats_at_turn_end(void **state);
void test_undrained_actions_superseded(void **state);
void test_ready_needs_views_and_generations(void **state);
void test_status_rate_limit(void **state);
void test_dropped_domain_gets_no_status(void **state);
void test_status_waits_for_kernel(void **state);
void test_strangers_and_unshared_ignored(void **state);
void test_heartbeat_views_bounded(void **state);
void test_set_timing(void **state);
void test_out_of_memory_changes_nothing(void **state);
void test_random_inputs_deterministic(void **state);

#endif
