// SPDX-License-Identifier: GPL-2.0
/* The core's peer layer: HELLO, admission, heartbeats, health. */
#include "harness.h"

#define DOM1 0x11

/* Node @self holding d1 = {a, b, c}, channels 0 and 1, generation 1. */
static void start_with_d1(struct tc *t, const char *self)
{
	struct imexd_def d;

	tc_def(&d, "d1", DOM1, 1, "a,b,c", 0, 1, -1);
	tc_start(t, self, &d, 1, &d, 1);
	tc_def_free(&d);
}

static void test_hello_binds_outbound_connection_and_syncs(void **state)
{
	const struct imexd_action *a;
	struct imexd_msg m;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	a = tc_find(&t, IMEXD_ACT_CONNECT, 0, 0);
	assert_non_null(a);
	assert_string_equal(a->addr, "10.0.0.2:50100");
	assert_int_equal(tc_count(&t, IMEXD_ACT_CONNECT, 0), 2);

	imexd_core_conn_up(t.core, 0, 1, "10.0.0.2:50100", true);
	tc_drain(&t);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_HELLO, 1);
	assert_non_null(a);
	assert_string_equal(a->msg.u.hello.node_name, "a");
	assert_int_equal(a->msg.u.hello.proto_min, 1);
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_NEVER_CONNECTED);

	tc_hello(&m, IMEXD_MSG_HELLO_ACK, "b");
	tc_deliver(&t, 1, &m);
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_CONNECTED);
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_HEARTBEAT, 1));
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_SYNC, 1);
	assert_non_null(a);
	assert_int_equal(a->msg.u.sync.generation, 1);
	assert_int_equal(a->msg.domain_uuid[0], DOM1);
	tc_done(&t);
}

static void test_hello_on_inbound_connection_is_acked(void **state)
{
	struct imexd_msg m;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	imexd_core_conn_up(t.core, 0, 5, "10.0.0.2:41000", false);
	tc_drain(&t);
	assert_int_equal(tc_count(&t, IMEXD_ACT_SEND, 0), 0);
	tc_hello(&m, IMEXD_MSG_HELLO, "b");
	tc_deliver(&t, 5, &m);
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_HELLO_ACK, 5));
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_CONNECTED);
	tc_done(&t);
}

/* a < b: whichever end, the connection a opened survives. */
static void test_duplicate_connection_keeps_the_one_opened_by_smaller_name(void **state)
{
	struct imexd_msg m;
	struct tc t;

	(void)state;
	/* On a: its own connection is bound first; b's is closed. */
	start_with_d1(&t, "a");
	tc_bind(&t, 1, "b", true);
	tc_bind(&t, 2, "b", false);
	assert_non_null(tc_find(&t, IMEXD_ACT_CLOSE, 0, 2));
	assert_null(tc_find(&t, IMEXD_ACT_CLOSE, 0, 1));
	tc_heartbeat(&t, 1, "b", 0, 0);
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_CONNECTED);
	tc_done(&t);

	/* On b, a's connection came first: b's own is the one to go. */
	start_with_d1(&t, "b");
	tc_bind(&t, 1, "a", false);
	tc_bind(&t, 2, "a", true);
	assert_non_null(tc_find(&t, IMEXD_ACT_CLOSE, 0, 2));
	tc_done(&t);

	/* On b, its own was bound first: it still yields to a's. */
	start_with_d1(&t, "b");
	tc_bind(&t, 2, "a", true);
	imexd_core_conn_up(t.core, 0, 1, "10.0.0.1:40000", false);
	tc_drain(&t);
	tc_hello(&m, IMEXD_MSG_HELLO, "a");
	tc_deliver(&t, 1, &m);
	assert_non_null(tc_find(&t, IMEXD_ACT_CLOSE, 0, 2));
	assert_null(tc_find(&t, IMEXD_ACT_CLOSE, 0, 1));
	assert_int_equal(imexd_core_peer_state(t.core, "a"),
			 IMEX_MEMBER_CONNECTED);
	tc_done(&t);
}

static void test_stale_instance_is_dropped_and_logged_once(void **state)
{
	struct imexd_msg m;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	tc_bind(&t, 1, "b", true);
	tc_msg_init(&m, IMEXD_MSG_LEAVE, "b", NULL);
	m.u.leave.reason = IMEXD_LEAVE_SHUTDOWN;
	m.sender_epoch = 999;		/* not the epoch of b's HELLO */
	tc_deliver(&t, 1, &m);
	assert_int_equal(tc_count(&t, IMEXD_ACT_LOG, 0), 1);
	tc_deliver(&t, 1, &m);
	assert_int_equal(tc_count(&t, IMEXD_ACT_LOG, 0), 0);
	/* Not acted upon: b is still connected. */
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_CONNECTED);
	m.sender_epoch = 102;
	m.sender_uuid[3] = 0x77;	/* another node's uuid */
	tc_deliver(&t, 1, &m);
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_CONNECTED);
	tc_done(&t);
}

static void test_message_before_hello_is_dropped(void **state)
{
	struct imexd_msg m;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	imexd_core_conn_up(t.core, 0, 7, "10.0.0.2:41000", false);
	tc_drain(&t);
	tc_msg_init(&m, IMEXD_MSG_QUERY_FREE, "b", NULL);
	m.u.query_free.change_id = 5;
	m.u.query_free.count = 1;
	tc_deliver(&t, 7, &m);
	assert_int_equal(tc_count(&t, IMEXD_ACT_SEND, 0), 0);
	assert_int_equal(tc_count(&t, IMEXD_ACT_LOG, 0), 1);
	tc_done(&t);
}

static void prepare_msg(struct imexd_msg *m, const char *from, uint8_t uuid,
			uint8_t op, const struct imexd_def *def, uint64_t id)
{
	uint8_t u[16];

	tc_uuid(u, uuid);
	tc_msg_init(m, IMEXD_MSG_PREPARE, from, u);
	m->u.prepare.change_id = id;
	m->u.prepare.op = op;
	m->u.prepare.lease_ms = 15000;
	m->u.prepare.def = *def;
}

static void test_domain_message_from_non_member_is_dropped(void **state)
{
	struct imexd_msg m;
	struct imexd_def nd;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	tc_advance(&t, 31000);
	tc_bind(&t, 4, "d", false);
	tc_def(&nd, "d1", DOM1, 2, "a,b,c,d", 0, 1, -1);
	prepare_msg(&m, "d", DOM1, IMEX_CHANGE_SET_MEMBERS, &nd, 77);
	tc_deliver(&t, 4, &m);
	assert_int_equal(tc_count(&t, IMEXD_ACT_SEND, IMEXD_MSG_VOTE), 0);
	assert_int_equal(tc_count(&t, IMEXD_ACT_KERNEL_PREPARE, 0), 0);
	assert_int_equal(tc_count(&t, IMEXD_ACT_LOG, 0), 1);
	tc_deliver(&t, 4, &m);
	assert_int_equal(tc_count(&t, IMEXD_ACT_LOG, 0), 0);
	tc_def_free(&nd);
	tc_done(&t);
}

static void test_unknown_domain_is_dropped_unless_a_create_names_both(void **state)
{
	struct imexd_msg m;
	struct imexd_def nd;
	struct tc t;

	(void)state;
	tc_start(&t, "a", NULL, 0, NULL, 0);
	tc_advance(&t, 7000);
	tc_bind(&t, 2, "b", false);
	/* A change to a domain we do not hold, not naming us: dropped. */
	tc_def(&nd, "zz", 0x77, 2, "b,c", 3, -1);
	prepare_msg(&m, "b", 0x77, IMEX_CHANGE_ADD_CHANNELS, &nd, 78);
	tc_deliver(&t, 2, &m);
	assert_int_equal(tc_count(&t, IMEXD_ACT_SEND, IMEXD_MSG_VOTE), 0);
	assert_int_equal(tc_count(&t, IMEXD_ACT_LOG, 0), 1);
	tc_def_free(&nd);
	/* A create naming both of us is how a domain arrives. */
	tc_def(&nd, "zz", 0x78, 1, "a,b", 3, -1);
	prepare_msg(&m, "b", 0x78, IMEX_CHANGE_CREATE, &nd, 79);
	tc_deliver(&t, 2, &m);
	assert_non_null(tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0));
	tc_def_free(&nd);
	tc_done(&t);
}

static void test_version_mismatch_is_reported_and_closed(void **state)
{
	struct imexd_msg m;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	imexd_core_conn_up(t.core, 0, 9, "10.0.0.3:41000", false);
	tc_drain(&t);
	tc_hello(&m, IMEXD_MSG_HELLO, "c");
	m.u.hello.proto_min = 2;
	m.u.hello.proto_max = 3;
	tc_deliver(&t, 9, &m);
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_HELLO_ACK, 9));
	assert_non_null(tc_find(&t, IMEXD_ACT_CLOSE, 0, 9));
	assert_int_equal(imexd_core_peer_state(t.core, "c"),
			 IMEX_MEMBER_VERSION_MISMATCH);
	tc_done(&t);
}

static void test_node_map_mismatch_is_refused(void **state)
{
	const struct imexd_action *a;
	struct imexd_msg m;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	imexd_core_conn_up(t.core, 0, 1, "10.0.0.2:50100", true);
	tc_drain(&t);
	tc_hello(&m, IMEXD_MSG_HELLO_ACK, "c");	/* b's address, c answers */
	tc_deliver(&t, 1, &m);
	assert_non_null(tc_find(&t, IMEXD_ACT_CLOSE, 0, 1));
	a = tc_find(&t, IMEXD_ACT_LOG, 0, 0);
	assert_non_null(a);
	assert_non_null(strstr(a->text, "node-map mismatch"));
	assert_int_not_equal(imexd_core_peer_state(t.core, "c"),
			     IMEX_MEMBER_CONNECTED);
	assert_int_not_equal(imexd_core_peer_state(t.core, "b"),
			     IMEX_MEMBER_CONNECTED);
	tc_done(&t);
}

static void test_missed_heartbeats_recover_then_disconnect_after_grace(void **state)
{
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	tc_bind(&t, 1, "b", true);
	tc_advance(&t, 2999);
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_CONNECTED);
	tc_timer(&t, 3000);		/* 3 x 1000 ms without a word */
	assert_non_null(tc_find(&t, IMEXD_ACT_CLOSE, 0, 1));
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_RECOVERING);
	tc_advance(&t, 12999);
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_RECOVERING);
	tc_advance(&t, 13000);		/* + grace 10 s */
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_DISCONNECTED);
	tc_done(&t);
}

static void test_reconnect_backs_off_exponentially_to_the_cap(void **state)
{
	uint64_t at[6];
	struct tc t;
	int i;

	(void)state;
	start_with_d1(&t, "a");
	for (i = 0; i < 6; i++) {
		imexd_core_conn_failed(t.core, t.now, "10.0.0.2:50100");
		tc_drain(&t);
		t.now = imexd_core_next_deadline(t.core);
		/* Skip deadlines that are not b's redial. */
		for (;;) {
			tc_timer(&t, t.now);
			if (tc_find(&t, IMEXD_ACT_CONNECT, 0, 0) &&
			    !strcmp(tc_find(&t, IMEXD_ACT_CONNECT, 0, 0)->addr,
				    "10.0.0.2:50100"))
				break;
			t.now = imexd_core_next_deadline(t.core);
		}
		at[i] = t.now;
	}
	assert_int_equal(at[1] - at[0], 1000);
	assert_int_equal(at[2] - at[1], 2000);
	assert_int_equal(at[3] - at[2], 3000);
	assert_int_equal(at[4] - at[3], 3000);
	tc_done(&t);
}

static void test_leave_marks_the_peer_recovering(void **state)
{
	struct imexd_msg m;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	tc_bind(&t, 1, "b", true);
	tc_msg_init(&m, IMEXD_MSG_LEAVE, "b", NULL);
	m.u.leave.reason = IMEXD_LEAVE_SHUTDOWN;
	tc_deliver(&t, 1, &m);
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_RECOVERING);
	tc_done(&t);
}

static void test_new_epoch_means_peer_restarted(void **state)
{
	const struct imexd_action *a;
	struct imexd_msg m;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	tc_bind(&t, 1, "b", true);
	imexd_core_conn_up(t.core, 0, 2, "10.0.0.2:41000", false);
	tc_drain(&t);
	tc_hello(&m, IMEXD_MSG_HELLO, "b");
	m.sender_epoch = 5000;
	tc_deliver(&t, 2, &m);
	a = tc_find(&t, IMEXD_ACT_PEER_RESTARTED, 0, 0);
	assert_non_null(a);
	assert_string_equal(a->peer, "b");
	assert_non_null(tc_find(&t, IMEXD_ACT_CLOSE, 0, 1));
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_CONNECTED);
	tc_done(&t);
}

static const struct imexd_action *last_status(const struct tc *t)
{
	const struct imexd_action *a = NULL;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->a[i].type == IMEXD_ACT_KERNEL_STATUS)
			a = &t->a[i];
	return a;
}

static void test_ready_needs_every_member_seeing_every_other(void **state)
{
	const struct imexd_action *a;
	uint8_t u[16];
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	a = last_status(&t);		/* pushed once at start */
	assert_non_null(a);
	assert_int_equal(a->status.state, IMEX_DOMAIN_DEGRADED);
	assert_int_equal(a->status.members[0].state, IMEX_MEMBER_SELF);
	tc_uuid(u, DOM1);

	tc_bind(&t, 1, "b", true);
	tc_bind(&t, 2, "c", true);
	assert_false(imexd_core_domain_ready(t.core, u));
	tc_heartbeat(&t, 1, "b", 0, 2, "a", IMEX_MEMBER_CONNECTED,
		     "c", IMEX_MEMBER_CONNECTED);
	assert_false(imexd_core_domain_ready(t.core, u));
	t.now = 100;
	tc_heartbeat(&t, 2, "c", 0, 2, "a", IMEX_MEMBER_CONNECTED,
		     "b", IMEX_MEMBER_CONNECTED);
	a = last_status(&t);
	assert_non_null(a);
	assert_int_equal(a->status.state, IMEX_DOMAIN_READY);
	assert_true(imexd_core_domain_ready(t.core, u));
	assert_int_equal(a->status.nmembers, 3);
	assert_true(a->status.members[2].has_view);
	assert_int_equal(a->status.members[2].view[1], IMEX_MEMBER_CONNECTED);
	assert_int_equal(a->status.members[2].view[2], IMEX_MEMBER_SELF);

	/*
	 * c loses b: everyone's matrix shows it, the domain degrades.  Pushes
	 * are at most one per 20 ms; the held-back one follows on the timer.
	 */
	t.now = 110;
	tc_heartbeat(&t, 2, "c", 0, 2, "a", IMEX_MEMBER_CONNECTED,
		     "b", IMEX_MEMBER_RECOVERING);
	assert_null(last_status(&t));
	assert_int_equal(imexd_core_next_deadline(t.core), 120);
	tc_timer(&t, 120);
	a = last_status(&t);
	assert_non_null(a);
	assert_int_equal(a->status.state, IMEX_DOMAIN_DEGRADED);
	assert_int_equal(a->status.members[2].view[1], IMEX_MEMBER_RECOVERING);
	/* The same view again changes nothing: no push. */
	t.now = 200;
	tc_heartbeat(&t, 2, "c", 0, 2, "a", IMEX_MEMBER_CONNECTED,
		     "b", IMEX_MEMBER_RECOVERING);
	assert_null(last_status(&t));
	tc_done(&t);
}

static void test_view_change_sends_a_heartbeat_at_once(void **state)
{
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	tc_bind(&t, 1, "b", true);
	t.now = 500;
	tc_bind(&t, 2, "c", true);
	/* c joining changed our view: b hears it now, not a period later. */
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_HEARTBEAT, 1));
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_HEARTBEAT, 2));
	tc_done(&t);
}

/* An inbound connection @conn from host @host saying HELLO as @name. */
static void bind_from(struct tc *t, uint64_t conn, const char *name,
		      const char *host)
{
	struct imexd_msg m;
	char addr[64];

	snprintf(addr, sizeof(addr), "%s:41234", host);
	imexd_core_conn_up(t->core, t->now, conn, addr, false);
	tc_drain(t);
	tc_hello(&m, IMEXD_MSG_HELLO, name);
	tc_deliver(t, conn, &m);
}

static bool bound(struct tc *t, uint64_t conn)
{
	return !tc_find(t, IMEXD_ACT_CLOSE, 0, conn) &&
	       tc_find(t, IMEXD_ACT_SEND, IMEXD_MSG_HELLO_ACK, conn);
}

/*
 * HELLO names that no domain knows take a peer entry each, up to
 * CORE_PEERS_MAX (4 * IMEX_MEMBERS_MAX) in all; while every such stranger
 * is connected, one more is refused, while the members of known domains
 * still bind.  (Strangers from many hosts: one host holds only
 * CORE_STRANGERS_PER_HOST.)
 */
static void test_hello_names_are_bounded(void **state)
{
	const size_t peers_max = 4UL * IMEX_MEMBERS_MAX;
	char name[16], host[32];
	uint64_t conn = 100;
	size_t i;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");		/* b and c are known: 2 entries */
	for (i = 0; i < peers_max - 2; i++, conn++) {
		snprintf(name, sizeof(name), "z%zu", i);
		snprintf(host, sizeof(host), "10.1.%zu.%zu", i / 8 / 250,
			 i / 8 % 250);
		bind_from(&t, conn, name, host);
		assert_true(bound(&t, conn));
		assert_int_equal(imexd_core_peer_state(t.core, name),
				 IMEX_MEMBER_CONNECTED);
	}
	snprintf(name, sizeof(name), "z%zu", i);
	bind_from(&t, conn, name, "10.2.0.1");
	assert_non_null(tc_find(&t, IMEXD_ACT_CLOSE, 0, conn));
	assert_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_HELLO_ACK, conn));
	assert_int_equal(imexd_core_peer_state(t.core, name),
			 IMEX_MEMBER_UNKNOWN);
	/* A member of d1 is still heard. */
	conn++;
	tc_bind(&t, conn, "c", false);
	assert_null(tc_find(&t, IMEXD_ACT_CLOSE, 0, conn));
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_HELLO_ACK, conn));
	assert_int_equal(imexd_core_peer_state(t.core, "c"),
			 IMEX_MEMBER_CONNECTED);
	tc_done(&t);
}

/*
 * 640 junk names from one host: it holds CORE_STRANGERS_PER_HOST (8)
 * connections under names nothing here knows, the rest are closed, and a
 * genuine new node (a coordinator this node never heard of) still binds,
 * as do the members of known domains.
 */
static void test_junk_hello_names_from_one_host_lock_nobody_out(void **state)
{
	char name[16];
	uint64_t conn = 100;
	unsigned ok = 0;
	size_t i;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	for (i = 0; i < 4UL * IMEX_MEMBERS_MAX; i++, conn++) {
		snprintf(name, sizeof(name), "z%zu", i);
		bind_from(&t, conn, name, "10.9.9.9");
		if (bound(&t, conn))
			ok++;
	}
	assert_int_equal(ok, 8);
	bind_from(&t, conn, "newnode", "10.0.0.14");
	assert_true(bound(&t, conn));
	assert_int_equal(imexd_core_peer_state(t.core, "newnode"),
			 IMEX_MEMBER_CONNECTED);
	conn++;
	tc_bind(&t, conn, "b", false);
	assert_true(bound(&t, conn));
	tc_done(&t);
}

/*
 * A heartbeat from a member naming 640 nodes nobody knows fills the peer
 * table; a genuine new node's HELLO then takes the entry of one of those
 * strangers (connected to nothing), and the table does not grow past its
 * bound.
 */
static void test_junk_heartbeat_names_lock_nobody_out(void **state)
{
	static struct imexd_peer_view v[4 * IMEX_MEMBERS_MAX];
	struct imexd_msg m;
	uint64_t conn = 100;
	size_t i;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	tc_bind(&t, 2, "c", false);
	for (i = 0; i < 4UL * IMEX_MEMBERS_MAX; i++) {
		snprintf(v[i].name, sizeof(v[i].name), "j%zu", i);
		v[i].state = IMEX_MEMBER_CONNECTED;
	}
	tc_msg_init(&m, IMEXD_MSG_HEARTBEAT, "c", NULL);
	m.u.heartbeat.n = (uint16_t)(4 * IMEX_MEMBERS_MAX);
	m.u.heartbeat.peers = v;
	tc_deliver(&t, 2, &m);
	/* b, c and 638 of the junk names: the table is full. */
	assert_int_equal(imexd_core_peer_state(t.core, "j637"),
			 IMEX_MEMBER_NEVER_CONNECTED);
	assert_int_equal(imexd_core_peer_state(t.core, "j638"),
			 IMEX_MEMBER_UNKNOWN);
	t.now = 1000;
	for (i = 0; i < 3; i++, conn++) {
		char name[16];

		snprintf(name, sizeof(name), "new%zu", i);
		bind_from(&t, conn, name, i ? "10.0.0.15" : "10.0.0.14");
		assert_true(bound(&t, conn));
		assert_int_equal(imexd_core_peer_state(t.core, name),
				 IMEX_MEMBER_CONNECTED);
	}
	/* Their entries were junk ones: 3 junk names are gone. */
	for (i = 0; i < 638; i++) {
		char name[16];

		snprintf(name, sizeof(name), "j%zu", i);
		if (imexd_core_peer_state(t.core, name) == IMEX_MEMBER_UNKNOWN)
			conn++;
	}
	assert_int_equal(conn, 103 + 3);
	/* The members still bind. */
	tc_bind(&t, conn, "b", false);
	assert_true(bound(&t, conn));
	tc_done(&t);
}

/* A bound connection cannot change names: a second HELLO as another
 * node closes it. */
static void test_second_hello_under_another_name_closes(void **state)
{
	struct imexd_msg m;
	struct tc t;

	(void)state;
	start_with_d1(&t, "a");
	tc_bind(&t, 2, "c", false);
	assert_true(bound(&t, 2));
	tc_hello(&m, IMEXD_MSG_HELLO, "b");
	memset(m.sender_uuid, tc_id("c"), 16);
	m.sender_epoch = 100 + tc_id("c");
	tc_deliver(&t, 2, &m);
	assert_non_null(tc_find(&t, IMEXD_ACT_CLOSE, 0, 2));
	assert_int_equal(imexd_core_peer_state(t.core, "b"),
			 IMEX_MEMBER_NEVER_CONNECTED);
	tc_done(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello_binds_outbound_connection_and_syncs),
		cmocka_unit_test(test_hello_on_inbound_connection_is_acked),
		cmocka_unit_test(test_duplicate_connection_keeps_the_one_opened_by_smaller_name),
		cmocka_unit_test(test_hello_names_are_bounded),
		cmocka_unit_test(test_junk_hello_names_from_one_host_lock_nobody_out),
		cmocka_unit_test(test_junk_heartbeat_names_lock_nobody_out),
		cmocka_unit_test(test_second_hello_under_another_name_closes),
		cmocka_unit_test(test_stale_instance_is_dropped_and_logged_once),
		cmocka_unit_test(test_message_before_hello_is_dropped),
		cmocka_unit_test(test_domain_message_from_non_member_is_dropped),
		cmocka_unit_test(test_unknown_domain_is_dropped_unless_a_create_names_both),
		cmocka_unit_test(test_version_mismatch_is_reported_and_closed),
		cmocka_unit_test(test_node_map_mismatch_is_refused),
		cmocka_unit_test(test_missed_heartbeats_recover_then_disconnect_after_grace),
		cmocka_unit_test(test_reconnect_backs_off_exponentially_to_the_cap),
		cmocka_unit_test(test_leave_marks_the_peer_recovering),
		cmocka_unit_test(test_new_epoch_means_peer_restarted),
		cmocka_unit_test(test_ready_needs_every_member_seeing_every_other),
		cmocka_unit_test(test_view_change_sends_a_heartbeat_at_once),
	};

	return cmocka_run_group_tests_name("core: peers and health", tests,
					   NULL, NULL);
}
