// SPDX-License-Identifier: GPL-2.0
/*
 * test_peers: a connection's life: restarts seen by epoch, reconnect
 * backoff, the bounds on unbound connections, the hello timeout, LEAVE on
 * shutdown.
 */
#include "test_peers.h"

/* ---- restarts ---------------------------------------------------------------- */

void test_restart_seen_by_epoch(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	const struct rec *r;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	inbound_hello(&t, 0, 1, "10.0.0.2:1", "b", NULL);
	assert_false(find(&t, IMEXD_PEERS_PEER_UP, 1)->restarted);
	imexd_peers_conn_down(t.p, 10, 1);
	drain(&t);
	r = find(&t, IMEXD_PEERS_PEER_DOWN, 1);
	assert_non_null(r);
	assert_string_equal(r->name, "b");
	assert_false(imexd_peers_connected(t.p, "b"));
	/* Same instance again: not a restart. */
	inbound_hello(&t, 20, 2, "10.0.0.2:2", "b", NULL);
	assert_false(find(&t, IMEXD_PEERS_PEER_UP, 2)->restarted);
	imexd_peers_conn_down(t.p, 30, 2);
	drain(&t);
	/* A new epoch: restarted. */
	imexd_peers_conn_up(t.p, 40, 3, "10.0.0.2:3", false, NULL);
	hello(&m, IMEXD_MSG_HELLO, "b", 2, PV, PV);
	imexd_peers_msg(t.p, 40, 3, &m);
	drain(&t);
	r = find(&t, IMEXD_PEERS_PEER_UP, 3);
	assert_non_null(r);
	assert_true(r->restarted);
	assert_true(r->epoch == 2);

	/* A restart while the old instance's connection still looks alive:
	 * it is closed (PEER_DOWN), then the new one is up, restarted. */
	imexd_peers_conn_up(t.p, 50, 4, "10.0.0.2:4", false, NULL);
	hello(&m, IMEXD_MSG_HELLO, "b", 3, PV, PV);
	imexd_peers_msg(t.p, 50, 4, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 3));
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 3));
	r = find(&t, IMEXD_PEERS_PEER_UP, 4);
	assert_non_null(r);
	assert_true(r->restarted);
	assert_true(find(&t, IMEXD_PEERS_PEER_DOWN, 3) < r);
	assert_true(imexd_peers_conn(t.p, "b") == 4);
	/* The old instance's messages are not taken for the new one's. */
	leave_from(&m, "b", 2);
	imexd_peers_msg(t.p, 60, 4, &m);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_MSG), 0);
	tp_free(&t);
}

/* ---- backoff ---------------------------------------------------------------- */

/* Fail the dial of b at @now; the next CONNECT comes @delay later. */
static void fail_and_expect(struct tp *t, uint64_t now, uint64_t delay)
{
	imexd_peers_conn_failed(t->p, now, "10.0.0.2:50100");
	drain(t);
	assert_true(imexd_peers_deadline(t->p) == now + delay);
	imexd_peers_timer(t->p, now + delay - 1);
	drain(t);
	assert_int_equal(count(t, IMEXD_PEERS_CONNECT), 0);
	imexd_peers_timer(t->p, now + delay);
	drain(t);
	assert_int_equal(count(t, IMEXD_PEERS_CONNECT), 1);
	assert_string_equal(t->r[0].addr, "10.0.0.2:50100");
}

void test_backoff_doubles_within_bounds(void **state)
{
	static const struct imexd_roster_node r[] = {
		{ "a", "10.0.0.1:50100" }, { "b", "10.0.0.2:50100" },
	};
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	uint64_t now = 1000;
	struct tp t;

	(void)state;
	c.roster = r;
	c.n_roster = 2;
	tp_new(&t, &c);
	imexd_peers_start(t.p, now);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CONNECT), 1);
	/* Defaults: 500, 1000, 2000, then 3000 for good. */
	fail_and_expect(&t, now, 500);
	now += 500;
	fail_and_expect(&t, now, 1000);
	now += 1000;
	fail_and_expect(&t, now, 2000);
	now += 2000;
	fail_and_expect(&t, now, 3000);
	now += 3000;
	fail_and_expect(&t, now, 3000);
	now += 3000;
	/* A dial that connects but never answers counts as a failure. */
	imexd_peers_conn_up(t.p, now, 1, "10.0.0.2:50100", true, NULL);
	drain(&t);
	imexd_peers_conn_down(t.p, now, 1);
	drain(&t);
	assert_true(imexd_peers_deadline(t.p) == now + 3000);
	now += 3000;
	imexd_peers_timer(t.p, now);
	drain(&t);
	/* Once bound the backoff starts over. */
	imexd_peers_conn_up(t.p, now, 2, "10.0.0.2:50100", true, NULL);
	hello(&m, IMEXD_MSG_HELLO_ACK, "b", 1, PV, PV);
	imexd_peers_msg(t.p, now, 2, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 2));
	assert_true(imexd_peers_deadline(t.p) == UINT64_MAX);
	imexd_peers_conn_down(t.p, now, 2);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 2));
	assert_true(imexd_peers_deadline(t.p) == now + 500);
	imexd_peers_timer(t.p, now + 500);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CONNECT), 1);
	fail_and_expect(&t, now + 500, 1000);
	tp_free(&t);

	/* Configured bounds are kept: 100, 200, 250, 250. */
	c.backoff_min_ms = 100;
	c.backoff_max_ms = 250;
	tp_started(&t, &c);
	fail_and_expect(&t, 0, 100);
	fail_and_expect(&t, 100, 200);
	fail_and_expect(&t, 300, 250);
	fail_and_expect(&t, 550, 250);
	tp_free(&t);
}

/* ---- bounds on unbound connections ------------------------------------------ */

void test_unbound_per_host_bound(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	uint64_t id = 1;
	unsigned i;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	for (i = 0; i < IMEXD_PEERS_UNBOUND_PER_HOST; i++) {
		imexd_peers_conn_up(t.p, 0, id++, "10.0.0.9:100", false, NULL);
		drain(&t);
		assert_int_equal(t.n, 0);
	}
	imexd_peers_conn_up(t.p, 0, id, "10.0.0.9:101", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, id));
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);
	assert_non_null(strstr(t.r[0].text, "10.0.0.9:101"));
	id++;
	/* Again: closed, the line not repeated within the minute. */
	imexd_peers_conn_up(t.p, 1, id, "10.0.0.9:102", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, id));
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 0);
	id++;
	/* Another host still gets in. */
	imexd_peers_conn_up(t.p, 1, id++, "10.0.0.10:100", false, NULL);
	drain(&t);
	assert_int_equal(t.n, 0);
	/* One of the host's connections binds: room for one more. */
	hello(&m, IMEXD_MSG_HELLO, "b", 1, PV, PV);
	imexd_peers_msg(t.p, 1, 1, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 1));
	imexd_peers_conn_up(t.p, 2, id, "10.0.0.9:103", false, NULL);
	drain(&t);
	assert_null(find(&t, IMEXD_PEERS_CLOSE, 0));
	id++;
	imexd_peers_conn_up(t.p, 2, id, "10.0.0.9:104", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, id));
	/* An IPv6 host is its address without the port. */
	for (i = 0; i < IMEXD_PEERS_UNBOUND_PER_HOST; i++) {
		imexd_peers_conn_up(t.p, 3, 1000 + i, "[fe80::1]:5", false, NULL);
		drain(&t);
		assert_int_equal(count(&t, IMEXD_PEERS_CLOSE), 0);
	}
	imexd_peers_conn_up(t.p, 3, 1000 + i, "[fe80::1]:6", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1000 + i));
	tp_free(&t);
}

void test_unbound_total_bound(void **state)
{
	struct imexd_peers_config c = config("a");
	char addr[32];
	unsigned i;
	struct tp t;

	(void)state;
	tp_started(&t, &c);
	/* Our own dials do not count. */
	imexd_peers_conn_up(t.p, 0, 9000, "10.0.0.2:50100", true, NULL);
	imexd_peers_conn_up(t.p, 0, 9001, "10.0.0.3:50100", true, NULL);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CLOSE), 0);
	for (i = 0; i < IMEXD_PEERS_UNBOUND_MAX; i++) {
		/* Below the per-host bound: 4 per host. */
		snprintf(addr, sizeof(addr), "10.2.%u.1:%u", i / 4, i);
		imexd_peers_conn_up(t.p, 0, 1 + i, addr, false, NULL);
		drain(&t);
		assert_int_equal(count(&t, IMEXD_PEERS_CLOSE), 0);
	}
	imexd_peers_conn_up(t.p, 0, 500, "10.3.0.1:1", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 500));
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);
	/* One goes away: room again. */
	imexd_peers_conn_down(t.p, 0, 1);
	imexd_peers_conn_up(t.p, 0, 501, "10.3.0.1:2", false, NULL);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CLOSE), 0);
	imexd_peers_conn_up(t.p, 0, 502, "10.3.0.1:3", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 502));
	tp_free(&t);
}

/* ---- hello timeout -------------------------------------------------------------- */

void test_hello_timeout(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_conn_up(t.p, 1000, 1, "10.0.0.5:1", false, NULL);
	imexd_peers_conn_up(t.p, 2000, 2, "10.0.0.5:2", false, NULL);
	drain(&t);
	assert_true(imexd_peers_deadline(t.p) == 6000);
	imexd_peers_timer(t.p, 5999);
	drain(&t);
	assert_int_equal(t.n, 0);
	imexd_peers_timer(t.p, 6000);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);
	assert_true(imexd_peers_deadline(t.p) == 7000);
	/* A HELLO in time binds; bound connections have no timeout. */
	hello(&m, IMEXD_MSG_HELLO, "b", 1, PV, PV);
	imexd_peers_msg(t.p, 6999, 2, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 2));
	assert_true(imexd_peers_deadline(t.p) == UINT64_MAX);
	imexd_peers_timer(t.p, 100000);
	drain(&t);
	assert_int_equal(t.n, 0);
	tp_free(&t);

	/* Outbound, configured: no HELLO_ACK within 200 ms closes it and
	 * the peer is dialled again after the backoff. */
	c.hello_timeout_ms = 200;
	tp_started(&t, &c);
	imexd_peers_conn_up(t.p, 10, 1, "10.0.0.2:50100", true, NULL);
	drain(&t);
	imexd_peers_timer(t.p, 210);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_true(imexd_peers_deadline(t.p) == 710);
	tp_free(&t);
}

/* ---- shutdown -------------------------------------------------------------------- */

void test_leave_on_shutdown(void **state)
{
	struct imexd_peers_config c = config("a");
	const struct rec *r;
	struct tp t;

	(void)state;
	tp_started(&t, &c);
	inbound_hello(&t, 0, 1, "10.0.0.2:1", "b", NULL);
	inbound_hello(&t, 0, 2, "10.0.0.3:1", "c", NULL);
	imexd_peers_conn_up(t.p, 0, 3, "10.0.0.4:1", false, NULL);
	drain(&t);
	imexd_peers_shutdown(t.p, 1);
	drain(&t);
	assert_int_equal(t.n, 2);
	r = find_sent(&t, IMEXD_MSG_LEAVE, 1);
	assert_non_null(r);
	assert_int_equal(r->sent.u.leave.reason, IMEXD_LEAVE_SHUTDOWN);
	assert_true(r->sent.sender_epoch == 1);
	assert_non_null(find_sent(&t, IMEXD_MSG_LEAVE, 2));
	assert_null(find(&t, IMEXD_PEERS_SEND, 3));
	/* No more dialling, no new connections; a second call is a no-op. */
	imexd_peers_conn_down(t.p, 2, 1);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 1));
	imexd_peers_timer(t.p, 100000);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CONNECT), 0);
	imexd_peers_conn_up(t.p, 100000, 4, "10.0.0.2:9", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 4));
	imexd_peers_shutdown(t.p, 100001);
	drain(&t);
	assert_int_equal(t.n, 0);
	tp_free(&t);
}
