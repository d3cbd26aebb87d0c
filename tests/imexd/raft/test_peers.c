// SPDX-License-Identifier: GPL-2.0
/*
 * The peers part (imexd/peers.[ch]): roster-only binding through the
 * HELLO exchange, TLS name binding, duplicate connections (two peers
 * objects driven against each other over a simulated network), restarts,
 * reconnect backoff, the bounds on unbound connections, the hello timeout,
 * LEAVE on shutdown, and that nothing from an unbound connection is ever
 * delivered.
 *
 * The duplicate-connection test delivers events in random orders; it
 * prints its seed, and IMEXD_PEERS_SEED=N replays that one order.
 *
 * One program: this file holds the recording and set-up helpers the parts
 * share (test_peers.h), and main(); the tests are in test_peers_bind.c,
 * test_peers_admit.c, test_peers_conn.c and test_peers_dup.c.
 */
#include "test_peers.h"

/* ---- recording a part's actions ------------------------------------------ */

void tp_clear(struct tp *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->r[i].type == IMEXD_PEERS_SEND)
			imexd_msg_free(&t->r[i].sent);
	t->n = 0;
}

/* Forget what was recorded, then record every queued action. */
void drain(struct tp *t)
{
	struct imexd_peers_action a;

	tp_clear(t);
	while (imexd_peers_next(t->p, &a)) {
		struct rec *r;

		if (t->n >= RECS_MAX) {
			fprintf(stderr, "more than %d actions at once\n", RECS_MAX);
			abort();
		}
		r = &t->r[t->n++];
		memset(r, 0, sizeof(*r));
		r->type = a.type;
		r->conn = a.conn;
		if (a.name)
			snprintf(r->name, sizeof(r->name), "%s", a.name);
		if (a.addr)
			snprintf(r->addr, sizeof(r->addr), "%s", a.addr);
		r->epoch = a.epoch;
		if (a.uuid)
			memcpy(r->uuid, a.uuid, 16);
		r->restarted = a.restarted;
		r->replaced = a.replaced;
		if (a.msg)
			r->msg_type = a.msg->type;
		if (a.type == IMEXD_PEERS_SEND) {
			assert_non_null(a.frame);
			assert_true(a.len <= FRAME_MAX);
			assert_int_equal(imexd_msg_decode(a.frame, a.len,
							  &r->sent, NULL), 0);
			memcpy(r->frame, a.frame, a.len);
			r->len = a.len;
		}
		if (a.type == IMEXD_PEERS_LOG) {
			assert_non_null(a.text);
			r->level = a.level;
			snprintf(r->text, sizeof(r->text), "%s", a.text);
		}
	}
}

unsigned count(const struct tp *t, enum imexd_peers_action_type type)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < t->n; i++)
		n += t->r[i].type == type;
	return n;
}

/* The first recorded action of @type (on @conn unless 0), or NULL. */
const struct rec *find(const struct tp *t,
		       enum imexd_peers_action_type type, uint64_t conn)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->r[i].type == type && (!conn || t->r[i].conn == conn))
			return &t->r[i];
	return NULL;
}

/* A SEND of a message of @msg_type on @conn, or NULL. */
const struct rec *find_sent(const struct tp *t, uint8_t msg_type,
			    uint64_t conn)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->r[i].type == IMEXD_PEERS_SEND &&
		    t->r[i].sent.type == msg_type && t->r[i].conn == conn)
			return &t->r[i];
	return NULL;
}

/* ---- setting up ------------------------------------------------------------ */

const struct imexd_roster_node roster3[] = {
	{ "a", "10.0.0.1:50100" },
	{ "b", "10.0.0.2:50100" },
	{ "c", "10.0.0.3:50100" },
};

void uuid_of(uint8_t u[16], const char *name, uint64_t epoch)
{
	memset(u, 0, 16);
	u[0] = (uint8_t)name[0];
	u[15] = (uint8_t)epoch;
}

struct imexd_peers_config config(const char *self)
{
	struct imexd_peers_config c;

	memset(&c, 0, sizeof(c));
	c.self = self;
	uuid_of(c.self_uuid, self, 1);
	c.epoch = 1;
	c.roster = roster3;
	c.n_roster = 3;
	c.max_channels = 2048;
	return c;
}

void tp_new(struct tp *t, const struct imexd_peers_config *c)
{
	memset(t, 0, sizeof(*t));
	assert_int_equal(imexd_peers_new(c, &t->p), 0);
}

/* @t: the peers of config @c, started at time 0, the dials it made drained. */
void tp_started(struct tp *t, const struct imexd_peers_config *c)
{
	tp_new(t, c);
	imexd_peers_start(t->p, 0);
	drain(t);
}

void tp_free(struct tp *t)
{
	tp_clear(t);
	imexd_peers_free(t->p);
	t->p = NULL;
}

/* A HELLO or HELLO_ACK from node @name, instance @epoch, range lo..hi. */
void hello(struct imexd_msg *m, uint8_t type, const char *name,
	   uint64_t epoch, uint16_t lo, uint16_t hi)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	uuid_of(m->sender_uuid, name, epoch);
	m->sender_epoch = epoch;
	m->u.hello.proto_min = lo;
	m->u.hello.proto_max = hi;
	snprintf(m->u.hello.node_name, sizeof(m->u.hello.node_name), "%s", name);
	m->u.hello.max_channels = 2048;
}

void leave_from(struct imexd_msg *m, const char *name, uint64_t epoch)
{
	memset(m, 0, sizeof(*m));
	m->type = IMEXD_MSG_LEAVE;
	uuid_of(m->sender_uuid, name, epoch);
	m->sender_epoch = epoch;
	m->u.leave.reason = IMEXD_LEAVE_SHUTDOWN;
}

/* Inbound @conn from @addr says HELLO as @name (epoch 1, this protocol). */
void inbound_hello(struct tp *t, uint64_t now, uint64_t conn,
		   const char *addr, const char *name,
		   const struct imexd_peers_auth *auth)
{
	struct imexd_msg m;

	imexd_peers_conn_up(t->p, now, conn, addr, false, auth);
	drain(t);
	hello(&m, IMEXD_MSG_HELLO, name, 1, PV, PV);
	imexd_peers_msg(t->p, now, conn, &m);
	drain(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_checks_its_config),
		cmocka_unit_test(test_start_dials_the_roster),
		cmocka_unit_test(test_inbound_hello_binds_a_roster_peer),
		cmocka_unit_test(test_outbound_hello_ack_binds),
		cmocka_unit_test(test_hello_direction_and_node_map),
		cmocka_unit_test(test_shared_address_dials),
		cmocka_unit_test(test_non_roster_and_self_refused),
		cmocka_unit_test(test_added_and_removed_peers),
		cmocka_unit_test(test_removed_places_reused),
		cmocka_unit_test(test_refusal_log_table_is_bounded),
		cmocka_unit_test(test_refusal_log_per_host_bounded),
		cmocka_unit_test(test_tls_claim_must_be_in_the_certificate),
		cmocka_unit_test(test_version_mismatch_reported_and_closed),
		cmocka_unit_test(test_peer_of_another_group_refused),
		cmocka_unit_test(test_unknown_node_of_our_group_learnt),
		cmocka_unit_test(test_learnt_names_bounded),
		cmocka_unit_test(test_unbound_messages_never_delivered),
		cmocka_unit_test(test_restart_seen_by_epoch),
		cmocka_unit_test(test_backoff_doubles_within_bounds),
		cmocka_unit_test(test_unbound_per_host_bound),
		cmocka_unit_test(test_unbound_total_bound),
		cmocka_unit_test(test_hello_timeout),
		cmocka_unit_test(test_leave_on_shutdown),
		cmocka_unit_test(test_duplicates_resolved_alike_on_both_sides),
		cmocka_unit_test(test_duplicate_replaces_with_repeated_peer_up),
	};

	return cmocka_run_group_tests_name("imexd peers", tests, NULL, NULL);
}
