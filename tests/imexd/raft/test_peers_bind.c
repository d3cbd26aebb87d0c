// SPDX-License-Identifier: GPL-2.0
/*
 * test_peers: creation, and roster-only binding through the HELLO exchange
 * (directions, shared addresses, refusals, added and removed peers, the
 * refusal log's bounds).
 */
#include "test_peers.h"

/* ---- creation ------------------------------------------------------------- */

void test_new_checks_its_config(void **state)
{
	static const struct imexd_roster_node dup[] = {
		{ "a", "" }, { "b", "" }, { "b", "h" },
	};
	static const struct imexd_roster_node badname[] = { { "_x", "" } };
	static const struct imexd_roster_node badaddr[] = { { "x", "a b" } };
	struct imexd_peers_config c = config("a");
	struct imexd_peers *p = NULL;

	(void)state;
	c.self = "";
	assert_int_equal(imexd_peers_new(&c, &p), -EINVAL);
	c.self = "a";
	c.epoch = 0;
	assert_int_equal(imexd_peers_new(&c, &p), -EINVAL);
	c.epoch = 1;
	c.roster = dup;
	c.n_roster = 3;
	assert_int_equal(imexd_peers_new(&c, &p), -EINVAL);
	c.roster = badname;
	c.n_roster = 1;
	assert_int_equal(imexd_peers_new(&c, &p), -EINVAL);
	c.roster = badaddr;
	assert_int_equal(imexd_peers_new(&c, &p), -EINVAL);
	assert_null(p);
	c.roster = roster3;
	c.n_roster = 3;
	assert_int_equal(imexd_peers_new(&c, &p), 0);
	imexd_peers_free(p);
}

/* Every roster peer but self is dialled, at its normalized address. */
void test_start_dials_the_roster(void **state)
{
	static const struct imexd_roster_node r[] = {
		{ "a", "" }, { "b", "" }, { "c", "hostc" }, { "d", "fe80::1" },
		{ "e", "[fe80::2]" }, { "f", "10.1.1.1:7" },
	};
	struct imexd_peers_config c = config("a");
	static const char *const want[] = {
		"b:4242", "hostc:4242", "[fe80::1]:4242", "[fe80::2]:4242",
		"10.1.1.1:7",
	};
	struct tp t;
	size_t i;

	(void)state;
	c.roster = r;
	c.n_roster = 6;
	c.default_port = 4242;
	tp_new(&t, &c);
	assert_int_equal(imexd_peers_deadline(t.p), UINT64_MAX);
	imexd_peers_start(t.p, 100);
	drain(&t);
	assert_int_equal(t.n, 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(t.r[i].type, IMEXD_PEERS_CONNECT);
		assert_string_equal(t.r[i].addr, want[i]);
	}
	/* Dials under way: nothing more until they end. */
	imexd_peers_timer(t.p, 100000);
	drain(&t);
	assert_int_equal(t.n, 0);
	tp_free(&t);
}

/* ---- binding --------------------------------------------------------------- */

void test_inbound_hello_binds_a_roster_peer(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	const struct rec *r;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_conn_up(t.p, 10, 7, "10.0.0.2:41000", false, NULL);
	drain(&t);
	assert_int_equal(t.n, 0);		/* the dialler speaks first */
	assert_false(imexd_peers_connected(t.p, "b"));
	hello(&m, IMEXD_MSG_HELLO, "b", 5, 1, PV);
	imexd_peers_msg(t.p, 10, 7, &m);
	drain(&t);
	r = find_sent(&t, IMEXD_MSG_HELLO_ACK, 7);
	assert_non_null(r);
	assert_string_equal(r->sent.u.hello.node_name, "a");
	assert_int_equal(r->sent.u.hello.proto_min, IMEXD_PROTO_VERSION);
	assert_int_equal(r->sent.u.hello.proto_max, IMEXD_PROTO_VERSION);
	assert_int_equal(r->sent.u.hello.max_channels, 2048);
	assert_true(r->sent.sender_epoch == 1);
	assert_memory_equal(r->sent.sender_uuid, c.self_uuid, 16);
	r = find(&t, IMEXD_PEERS_PEER_UP, 7);
	assert_non_null(r);
	assert_string_equal(r->name, "b");
	assert_true(r->epoch == 5);
	assert_memory_equal(r->uuid, m.sender_uuid, 16);
	assert_false(r->restarted);
	assert_int_equal(r->msg_type, IMEXD_MSG_HELLO);
	assert_true(imexd_peers_connected(t.p, "b"));
	assert_true(imexd_peers_conn(t.p, "b") == 7);
	assert_true(imexd_peers_conn(t.p, "c") == 0);

	/* Messages now reach the other parts, with the proved name. */
	leave_from(&m, "b", 5);
	imexd_peers_msg(t.p, 11, 7, &m);
	drain(&t);
	r = find(&t, IMEXD_PEERS_MSG, 7);
	assert_non_null(r);
	assert_string_equal(r->name, "b");
	assert_int_equal(r->msg_type, IMEXD_MSG_LEAVE);

	/* And sending fills in the header. */
	memset(&m, 0, sizeof(m));
	m.type = IMEXD_MSG_HEARTBEAT;
	assert_int_equal(imexd_peers_send(t.p, "b", &m), 0);
	assert_int_equal(imexd_peers_send(t.p, "c", &m), -ENOTCONN);
	assert_int_equal(imexd_peers_send(t.p, "zz", &m), -ENOTCONN);
	m.type = 0;
	assert_int_equal(imexd_peers_send(t.p, "b", &m), -EINVAL);
	drain(&t);
	assert_int_equal(t.n, 1);
	r = find_sent(&t, IMEXD_MSG_HEARTBEAT, 7);
	assert_non_null(r);
	assert_true(r->sent.sender_epoch == 1);
	assert_memory_equal(r->sent.sender_uuid, c.self_uuid, 16);
	tp_free(&t);
}

void test_outbound_hello_ack_binds(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	struct tp t;

	(void)state;
	tp_started(&t, &c);
	assert_int_equal(count(&t, IMEXD_PEERS_CONNECT), 2);
	imexd_peers_conn_up(t.p, 5, 3, "10.0.0.2:50100", true, NULL);
	drain(&t);
	assert_non_null(find_sent(&t, IMEXD_MSG_HELLO, 3));
	/* b answers: bound, nothing more to send. */
	hello(&m, IMEXD_MSG_HELLO_ACK, "b", 9, PV, PV);
	imexd_peers_msg(t.p, 6, 3, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 3));
	assert_int_equal(count(&t, IMEXD_PEERS_SEND), 0);
	assert_true(imexd_peers_conn(t.p, "b") == 3);

	/* An outbound connection nothing here dialled is closed. */
	imexd_peers_conn_up(t.p, 7, 4, "10.9.9.9:1", true, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 4));
	tp_free(&t);
}

void test_hello_direction_and_node_map(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	struct tp t;

	(void)state;
	tp_started(&t, &c);
	/* HELLO_ACK on an inbound connection. */
	imexd_peers_conn_up(t.p, 1, 1, "10.0.0.2:4000", false, NULL);
	hello(&m, IMEXD_MSG_HELLO_ACK, "b", 1, PV, PV);
	imexd_peers_msg(t.p, 1, 1, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	/* b's address answered as c. */
	imexd_peers_conn_up(t.p, 2, 2, "10.0.0.2:50100", true, NULL);
	hello(&m, IMEXD_MSG_HELLO_ACK, "c", 1, PV, PV);
	imexd_peers_msg(t.p, 2, 2, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	assert_non_null(strstr(find(&t, IMEXD_PEERS_LOG, 0)->text,
			       "node-map mismatch"));
	assert_false(imexd_peers_connected(t.p, "b"));
	assert_false(imexd_peers_connected(t.p, "c"));
	tp_free(&t);
}

/* Two roster nodes at one address: each dial is its own connection. */
void test_shared_address_dials(void **state)
{
	static const struct imexd_roster_node r[] = {
		{ "a", "10.0.0.1:50100" }, { "b", "10.0.0.2:50100" },
		{ "c", "10.0.0.2:50100" },
	};
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	struct tp t;

	(void)state;
	c.roster = r;
	tp_started(&t, &c);
	assert_int_equal(count(&t, IMEXD_PEERS_CONNECT), 2);
	imexd_peers_conn_up(t.p, 1, 1, "10.0.0.2:50100", true, NULL);
	imexd_peers_conn_up(t.p, 1, 2, "10.0.0.2:50100", true, NULL);
	drain(&t);
	assert_non_null(find_sent(&t, IMEXD_MSG_HELLO, 1));
	assert_non_null(find_sent(&t, IMEXD_MSG_HELLO, 2));
	hello(&m, IMEXD_MSG_HELLO_ACK, "b", 1, PV, PV);
	imexd_peers_msg(t.p, 2, 1, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 1));
	/* The second dial was c's: b answering there is refused, and c is
	 * dialled again after the backoff. */
	imexd_peers_msg(t.p, 2, 2, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_true(imexd_peers_conn(t.p, "b") == 1);
	assert_true(imexd_peers_deadline(t.p) == 502);
	imexd_peers_timer(t.p, 502);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CONNECT), 1);
	tp_free(&t);
}

void test_non_roster_and_self_refused(void **state)
{
	struct imexd_peers_config c = config("a");
	const struct rec *r;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	inbound_hello(&t, 1000, 1, "10.0.0.66:999", "mallory", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	assert_int_equal(count(&t, IMEXD_PEERS_SEND), 0);
	r = find(&t, IMEXD_PEERS_LOG, 0);
	assert_non_null(r);
	assert_int_equal(r->level, 4);
	assert_non_null(strstr(r->text, "'mallory'"));
	assert_non_null(strstr(r->text, "10.0.0.66:999"));
	assert_false(imexd_peers_connected(t.p, "mallory"));

	/* The same (host, name) again within a minute: closed, not logged. */
	inbound_hello(&t, 30000, 2, "10.0.0.66:1000", "mallory", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 0);
	/* Another name from that host is a line of its own. */
	inbound_hello(&t, 30000, 3, "10.0.0.66:1001", "eve", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 3));
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);
	/* A minute later, logged again. */
	inbound_hello(&t, 61000, 4, "10.0.0.66:1002", "mallory", NULL);
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);

	/* Self. */
	inbound_hello(&t, 61000, 5, "10.0.0.1:5555", "a", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 5));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	assert_non_null(strstr(find(&t, IMEXD_PEERS_LOG, 0)->text,
			       "this node"));
	assert_false(imexd_peers_connected(t.p, "a"));
	tp_free(&t);
}

/* Membership: an added name is dialled and may bind; a removed one is
 * closed and refused; at most IMEXD_PEERS_MAX names are ever held. */
void test_added_and_removed_peers(void **state)
{
	struct imexd_peers_config c = config("a");
	const struct rec *r;
	struct tp t;
	unsigned i;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 1000);
	drain(&t);
	tp_clear(&t);
	/* "d" is refused before it is added. */
	inbound_hello(&t, 1000, 1, "10.0.0.4:999", "d", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	tp_clear(&t);
	assert_int_equal(imexd_peers_add(t.p, 1000, "d", "10.0.0.4:7000"), 0);
	drain(&t);
	r = find(&t, IMEXD_PEERS_CONNECT, 0);
	assert_non_null(r);
	assert_string_equal(r->addr, "10.0.0.4:7000");
	tp_clear(&t);
	inbound_hello(&t, 1001, 2, "10.0.0.4:1000", "d", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 2));
	assert_true(imexd_peers_connected(t.p, "d"));
	tp_clear(&t);
	/* Removed: its connection closes, it is down, a new HELLO refused. */
	imexd_peers_remove(t.p, 1002, "d");
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 2));
	assert_false(imexd_peers_connected(t.p, "d"));
	tp_clear(&t);
	imexd_peers_conn_down(t.p, 1002, 2);
	drain(&t);
	imexd_peers_timer(t.p, 100000);
	drain(&t);
	assert_null(find(&t, IMEXD_PEERS_CONNECT, 0));
	inbound_hello(&t, 100000, 3, "10.0.0.4:1001", "d", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 3));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	tp_clear(&t);
	/* Bad names and self are refused; the table is bounded. */
	assert_int_equal(imexd_peers_add(t.p, 1, "a", NULL), -EINVAL);
	assert_int_equal(imexd_peers_add(t.p, 1, "-x", NULL), -EINVAL);
	for (i = 0; i < IMEXD_PEERS_MAX + 5; i++) {
		char name[16];
		int rv;

		snprintf(name, sizeof(name), "m%u", i);
		rv = imexd_peers_add(t.p, 1, name, NULL);
		/* b, c and d hold three of the places (removed d's dial
		 * is still outstanding). */
		assert_int_equal(rv, i + 3 < IMEXD_PEERS_MAX ? 0 : -ENOSPC);
		tp_clear(&t);
		drain(&t);
		tp_clear(&t);
	}
	assert_int_equal(imexd_peers_count(t.p), IMEXD_PEERS_MAX);
	tp_free(&t);
}

/* Names that joined and left give their places back: a daemon's life may
 * see any number of them, IMEXD_PEERS_MAX at once at most. */
void test_removed_places_reused(void **state)
{
	struct imexd_peers_config c = config("a");
	struct tp t;
	unsigned i;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 1000);
	drain(&t);
	tp_clear(&t);
	for (i = 0; i < 2 * IMEXD_PEERS_MAX; i++) {
		char name[16];

		snprintf(name, sizeof(name), "m%u", i);
		if (imexd_peers_add(t.p, 1, name, "192.0.2.9:7000"))
			break;
		drain(&t);
		imexd_peers_remove(t.p, 1, name);
		/* Its dial's outcome comes after: then the place is free. */
		imexd_peers_conn_failed(t.p, 1, "192.0.2.9:7000");
		drain(&t);
		tp_clear(&t);
	}
	printf("  %u names joined and left\n", i);
	assert_int_equal(i, 2 * IMEXD_PEERS_MAX);
	assert_int_equal(imexd_peers_add(t.p, 2, "fresh", NULL), 0);
	assert_true(imexd_peers_count(t.p) <= 4);
	tp_free(&t);
}

/* Many refused names: the log limiter's table stays bounded. */
void test_refusal_log_table_is_bounded(void **state)
{
	struct imexd_peers_config c = config("a");
	char name[32], addr[32];
	unsigned i, logs = 0;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	/* A host a minute apart: each key new, each logged once. */
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "x%u", i);
		snprintf(addr, sizeof(addr), "10.1.%u.%u:1", i / 250, i % 250);
		inbound_hello(&t, 5000 + 60000ULL * i, 100 + i, addr, name, NULL);
		assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 100 + i));
		logs += count(&t, IMEXD_PEERS_LOG);
	}
	assert_int_equal(logs, 1000);
	tp_free(&t);
}

/*
 * One host cycling through junk names logs IMEXD_PEERS_LOG_PER_HOST lines a
 * minute and one that says the rest are not; other hosts still get theirs;
 * at most IMEXD_PEERS_LOG_HOSTS hosts a minute are logged at all.
 */
void test_refusal_log_per_host_bounded(void **state)
{
	struct imexd_peers_config c = config("a");
	char name[32], addr[32];
	unsigned i, logs = 0;
	const struct rec *r;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "junk%u", i);
		inbound_hello(&t, 1000 + i, 100 + i, "10.9.9.9:4000", name, NULL);
		assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 100 + i));
		r = find(&t, IMEXD_PEERS_LOG, 0);
		if (r && logs == IMEXD_PEERS_LOG_PER_HOST)
			assert_string_equal(r->text,
					    "more refused connections from 10.9.9.9: not logged for up to a minute");
		logs += count(&t, IMEXD_PEERS_LOG);
	}
	assert_int_equal(logs, IMEXD_PEERS_LOG_PER_HOST + 1);

	/* Another host is logged; the first one again a minute later. */
	inbound_hello(&t, 2000, 2000, "10.9.9.8:4000", "junk0", NULL);
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);
	inbound_hello(&t, 2000, 2001, "10.9.9.9:4001", "junkx", NULL);
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 0);
	inbound_hello(&t, 2000 + 60000, 2002, "10.9.9.9:4001", "junkx", NULL);
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);

	/* The host table: within one minute, the hosts past it are not logged. */
	logs = 0;
	for (i = 0; i < 100; i++) {
		snprintf(addr, sizeof(addr), "10.2.0.%u:1", i);
		inbound_hello(&t, 200000, 3000 + i, addr, "junk", NULL);
		assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 3000 + i));
		logs += count(&t, IMEXD_PEERS_LOG);
	}
	assert_int_equal(logs, IMEXD_PEERS_LOG_HOSTS);
	tp_free(&t);
}
