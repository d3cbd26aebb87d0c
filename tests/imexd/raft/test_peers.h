/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test_peers program's shared part: recording a part's actions and the
 * set-up helpers in test_peers.c, and the tests of test_peers_*.c that its
 * main() runs.
 */
#ifndef IMEX_TEST_PEERS_H
#define IMEX_TEST_PEERS_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "peers.h"

#define RECS_MAX	256
#define FRAME_MAX	256		/* the frames these tests see */
#define PV		IMEXD_PROTO_VERSION	/* this protocol */

struct rec {
	enum imexd_peers_action_type type;
	uint64_t conn;
	char name[IMEX_NAME_MAX];
	char addr[IMEXD_ADDR_MAX + 1];
	uint64_t epoch;
	uint8_t uuid[16];
	bool restarted;
	bool replaced;
	uint8_t msg_type;		/* MSG, PEER_UP: the message's type */
	struct imexd_msg sent;		/* SEND: the frame, decoded */
	uint8_t frame[FRAME_MAX];	/* SEND: the frame */
	size_t len;
	int level;
	char text[512];
};

struct tp {
	struct imexd_peers *p;
	struct rec r[RECS_MAX];
	size_t n;
};

/* test_peers.c */
void tp_clear(struct tp *t);
void drain(struct tp *t);
unsigned count(const struct tp *t, enum imexd_peers_action_type type);
const struct rec *find(const struct tp *t,
		       enum imexd_peers_action_type type, uint64_t conn);
const struct rec *find_sent(const struct tp *t, uint8_t msg_type,
			    uint64_t conn);
extern const struct imexd_roster_node roster3[];
void uuid_of(uint8_t u[16], const char *name, uint64_t epoch);
struct imexd_peers_config config(const char *self);
void tp_new(struct tp *t, const struct imexd_peers_config *c);
void tp_started(struct tp *t, const struct imexd_peers_config *c);
void tp_free(struct tp *t);
void hello(struct imexd_msg *m, uint8_t type, const char *name,
	   uint64_t epoch, uint16_t lo, uint16_t hi);
void leave_from(struct imexd_msg *m, const char *name, uint64_t epoch);
void inbound_hello(struct tp *t, uint64_t now, uint64_t conn,
		   const char *addr, const char *name,
		   const struct imexd_peers_auth *auth);

/* the tests: test_peers_bind.c, test_peers_admit.c, test_peers_conn.c,
 * test_peers_dup.c
 */
void test_new_checks_its_config(void **state);
void test_start_dials_the_roster(void **state);
void test_inbound_hello_binds_a_roster_peer(void **state);
void test_outbound_hello_ack_binds(void **state);
void test_hello_direction_and_node_map(void **state);
void test_shared_address_dials(void **state);
void test_non_roster_and_self_refused(void **state);
void test_added_and_removed_peers(void **state);
void test_removed_places_reused(void **state);
void test_refusal_log_table_is_bounded(void **state);
void test_refusal_log_per_host_bounded(void **state);
void test_tls_claim_must_be_in_the_certificate(void **state);
void test_version_mismatch_reported_and_closed(void **state);
void test_peer_of_another_group_refused(void **state);
void test_unknown_node_of_our_group_learnt(void **state);
void test_learnt_names_bounded(void **state);
void test_unbound_messages_never_delivered(void **state);
void test_restart_seen_by_epoch(void **state);
void test_backoff_doubles_within_bounds(void **state);
void test_unbound_per_host_bound(void **state);
void test_unbound_total_bound(void **state);
void test_hello_timeout(void **state);
void test_leave_on_shutdown(void **state);
void test_duplicates_resolved_alike_on_both_sides(void **state);
void test_duplicate_replaces_with_repeated_peer_up(void **state);

#endif
