/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test_broker program's shared part: the failing allocator, the
 * committed table, the drained actions and the two-broker fixture in
 * test_broker.c, and the tests of test_broker_*.c that its main() runs.
 */
#ifndef IMEX_TEST_BROKER_H
#define IMEX_TEST_BROKER_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "broker.h"
#include "fsm.h"
#include "metrics.h"

struct got {
	struct imexd_broker_action a;
	struct imexd_msg msg;
	char to[IMEX_NAME_MAX];
	char text[512];
	uint8_t desc[IMEX_DESC_MAX];
};

struct tb {
	struct imexd_fsm *fsm;
	struct imexd_broker *a, *b;
};

/* test_broker.c */
extern long fail_at, allocs;
extern uint8_t DOM1[16], DOM2[16], DOM_NONE[16];
void node_uuid(uint8_t u[16], const char *name);
extern uint64_t fsm_index;
struct imexd_fsm *table(void);
extern struct got *g;
extern size_t ng;
size_t drain(struct imexd_broker *b);
size_t count(enum imexd_broker_action_type type);
struct got *one(enum imexd_broker_action_type type);
void wire_trip(const struct imexd_msg *in, const char *sender,
	       struct imexd_msg *out);
struct imexd_import imp_of(uint64_t id, const char *exporter,
			   const uint8_t domain[16], uint64_t handle);
void import_sent(struct tb *t, struct imexd_broker *b, uint64_t now,
		 uint64_t id, const char *exporter);
void deliver(struct tb *t, struct imexd_broker *b, uint64_t now,
	     const char *from, uint8_t type, const uint8_t domain[16],
	     uint64_t x, int32_t status);

/* test_broker_import.c */
void test_round_trip(void **state);
void test_importer_refusals(void **state);
void test_non_member_request_refused(void **state);
void test_wrong_responder_ignored(void **state);
void test_imports_bound(void **state);
void test_checks_bound(void **state);
void test_checked_after_importer_left(void **state);

/* test_broker_end.c */
void test_timeout(void **state);
void test_exporter_lost(void **state);
void test_exporter_restarted(void **state);
void test_member_replaced(void **state);
void test_revoke_held_flushed_dropped(void **state);
void test_revokes_bound(void **state);
void test_revoke_from_peer(void **state);
void test_shutdown(void **state);
void test_undrained_actions_kept(void **state);
void test_out_of_memory(void **state);

/* test_broker_random.c */
void test_random_runs(void **state);

#endif /* IMEX_TEST_BROKER_H */
