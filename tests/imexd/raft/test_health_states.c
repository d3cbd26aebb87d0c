// SPDX-License-Identifier: GPL-2.0
/*
 * test_health: peer states at exact times, the reasons they give, grace
 * -1 and 0.
 */
#include "test_health.h"

/* ---- peer states ---------------------------------------------------------- */

void test_states_at_exact_times(void **state)
{
	(void)state;
	start(1000, 3, 5000);
	doms(0, 1, mk(1, "d1", 1, "a b"));
	applied(0, 1, 1);
	assert_int_equal(st("a"), IMEX_MEMBER_SELF);
	assert_int_equal(st("b"), IMEX_MEMBER_NEVER_CONNECTED);
	assert_int_equal(st("z"), IMEX_MEMBER_UNKNOWN);
	assert_int_equal(imexd_health_deadline(H), UINT64_MAX);
	assert_int_equal(logs_with("domain 'd1': DEGRADED (node 'b' is never connected)"), 1);
	/* journalctl IMEX_DOMAIN=d1 finds it. */
	assert_int_equal(logs_with_fields("domain 'd1': DEGRADED", IMEXD_MSGID_DOMAIN_DEGRADED,
					  "d1", ""), 1);

	up(100, "b");
	assert_int_equal(st("b"), IMEX_MEMBER_CONNECTED);
	tick(3099);
	assert_int_equal(st("b"), IMEX_MEMBER_CONNECTED);
	tick(3100);			/* 3 x 1000 ms without a heartbeat */
	assert_int_equal(st("b"), IMEX_MEMBER_RECOVERING);
	assert_int_equal(count(IMEXD_HEALTH_PEER_LOST, NULL), 0);
	tick(8099);
	assert_int_equal(st("b"), IMEX_MEMBER_RECOVERING);
	tick(8100);			/* 5000 ms of grace over */
	assert_int_equal(st("b"), IMEX_MEMBER_DISCONNECTED);
	assert_int_equal(count(IMEXD_HEALTH_PEER_LOST, "b"), 1);
	tick(9000);
	assert_int_equal(count(IMEXD_HEALTH_PEER_LOST, "b"), 1);

	hbeat(9000, "b", "a", "");
	assert_int_equal(st("b"), IMEX_MEMBER_CONNECTED);
	down(9500, "b");
	assert_int_equal(st("b"), IMEX_MEMBER_RECOVERING);
	assert_int_equal(imexd_health_deadline(H), 14500);
	tick(14499);
	assert_int_equal(st("b"), IMEX_MEMBER_RECOVERING);
	tick(14500);
	assert_int_equal(st("b"), IMEX_MEMBER_DISCONNECTED);
	assert_int_equal(count(IMEXD_HEALTH_PEER_LOST, "b"), 2);

	imexd_health_peer_version(H, 15000, "b");
	drain();
	assert_int_equal(st("b"), IMEX_MEMBER_VERSION_MISMATCH);
	assert_int_equal(imexd_health_deadline(H), UINT64_MAX);
	tick(1000000000);
	assert_int_equal(st("b"), IMEX_MEMBER_VERSION_MISMATCH);
	assert_int_equal(count(IMEXD_HEALTH_PEER_LOST, "b"), 2);
	assert_int_equal(logs_with("node 'b': version mismatch"), 1);

	/* A late timer: both deadlines passed count, as if on time. */
	up(1000000000, "b");
	tick(1000020000);
	assert_int_equal(st("b"), IMEX_MEMBER_DISCONNECTED);
	assert_int_equal(count(IMEXD_HEALTH_PEER_LOST, "b"), 3);
	assert_int_equal(logs_with("node 'b': recovering (no heartbeat for 3000 ms)"), 2);
	assert_int_equal(logs_with("node 'b': disconnected (grace time of 5000 ms over)"), 3);
	/* journalctl IMEX_NODE=b finds each state change. */
	assert_int_equal(logs_with_fields("node 'b': ", IMEXD_MSGID_MEMBER_STATE,
					  "", "b"), logs_with("node 'b': "));
}

/* The wall clock at health's 0 ms: 2026-11-18T11:06:40Z. */
#define WALL0 1795000000000LL

/* Each state says why and since when, in words, with wall-clock times. */
void test_reasons_say_why_and_since(void **state)
{
	const struct rec *r;

	(void)state;
	start(1000, 3, 5000);
	imexd_health_set_wall(H, WALL0);
	doms(0, 1, mk(1, "d1", 1, "a b"));
	applied(0, 1, 1);
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_int_equal(r->dstate, IMEX_DOMAIN_DEGRADED);
	assert_string_equal(r->dreason, "b never connected: no connection since 2026-11-18T11:06:40Z");
	assert_string_equal(r->m[0].reason, "");
	assert_int_equal(r->m[0].since, 0);
	assert_string_equal(r->m[1].reason, "never connected since 2026-11-18T11:06:40Z");
	assert_int_equal(r->m[1].since, WALL0);

	up(100, "b");
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_string_equal(r->m[1].reason, "");
	assert_int_equal(r->m[1].since, WALL0 + 100);
	assert_string_equal(r->dreason, "node 'b' has not reported holding generation 1");
	hbeat(100, "b", "a", "1=1");
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_int_equal(r->dstate, IMEX_DOMAIN_READY);
	assert_string_equal(r->dreason, "");

	tick(3100);			/* 3 x 1000 ms without a heartbeat */
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_int_equal(r->m[1].state, IMEX_MEMBER_RECOVERING);
	assert_int_equal(r->m[1].since, WALL0 + 3100);
	assert_string_equal(r->m[1].reason,
			    "heartbeat lost at 2026-11-18T11:06:43Z, grace time running until 2026-11-18T11:06:48Z");
	assert_string_equal(r->dreason, "b recovering: heartbeat lost at 2026-11-18T11:06:43Z");
	tick(8100);			/* grace over */
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_int_equal(r->m[1].state, IMEX_MEMBER_DISCONNECTED);
	assert_string_equal(r->m[1].reason,
			    "heartbeat lost at 2026-11-18T11:06:43Z, grace time of 5000 ms over");
	assert_string_equal(r->dreason, "b disconnected: heartbeat lost at 2026-11-18T11:06:43Z");

	hbeat(9000, "b", "a", "1=1");
	assert_int_equal(st("b"), IMEX_MEMBER_CONNECTED);
	imexd_health_peer_down_why(H, 9500, "b", "connection closed by the peer");
	settle(9500);
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_string_equal(r->m[1].reason,
			    "connection closed by the peer at 2026-11-18T11:06:49Z, grace time running until 2026-11-18T11:06:54Z");
	assert_string_equal(r->dreason,
			    "b recovering: connection closed by the peer at 2026-11-18T11:06:49Z");
	assert_int_equal(logs_with("node 'b': recovering (connection closed by the peer)"), 1);

	imexd_health_peer_version_why(H, 15000, "b", "it speaks protocol 2..2, this node 3");
	settle(15000);
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_int_equal(r->m[1].state, IMEX_MEMBER_VERSION_MISMATCH);
	assert_string_equal(r->m[1].reason, "it speaks protocol 2..2, this node 3");
	assert_string_equal(r->dreason, "b version mismatch: it speaks protocol 2..2, this node 3");

	imexd_health_peer_refused(H, 16000, "b", "TLS: the certificate at 192.0.2.2:7000 names x, not 'b'");
	settle(16000);
	assert_int_equal(st("b"), IMEX_MEMBER_REFUSED);
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_int_equal(r->m[1].state, IMEX_MEMBER_REFUSED);
	assert_int_equal(r->m[1].since, WALL0 + 16000);
	assert_string_equal(r->m[1].reason, "TLS: the certificate at 192.0.2.2:7000 names x, not 'b'");
	assert_string_equal(r->dreason, "b refused: TLS: the certificate at 192.0.2.2:7000 names x, not 'b'");
	assert_int_equal(logs_with("node 'b': refused (TLS: the certificate"), 1);
	/* New words, same state: pushed again. */
	imexd_health_peer_refused(H, 17000, "b", "identity: it is in another group");
	settle(17000);
	assert_string_equal(last(IMEXD_HEALTH_STATUS, "d1")->m[1].reason,
			    "identity: it is in another group");

	/* Connected, a refusal of someone using its name changes nothing. */
	up(18000, "b");
	imexd_health_peer_refused(H, 18000, "b", "TLS: the certificate names x");
	settle(18000);
	assert_int_equal(st("b"), IMEX_MEMBER_CONNECTED);
	/* Nor a version mismatch claimed under its name. */
	imexd_health_peer_version_why(H, 18000, "b", "it speaks protocol 9..9, this node 3");
	settle(18000);
	assert_int_equal(st("b"), IMEX_MEMBER_CONNECTED);

	/* No leader: the agreement layer's reason comes first, then goes. */
	imexd_health_set_quorum(H, 19000, "no quorum: 1 of 3 voters reachable (b, c unreachable)");
	settle(19000);
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_int_equal(r->dstate, IMEX_DOMAIN_DEGRADED);
	assert_string_equal(r->dreason, "no quorum: 1 of 3 voters reachable (b, c unreachable)");
	imexd_health_set_quorum(H, 19100, NULL);
	settle(19100);
	assert_string_equal(last(IMEXD_HEALTH_STATUS, "d1")->dreason,
			    "node 'b' has not reported holding generation 1");

	/* A wall-clock step under a second is no news; a larger one is. */
	reset();
	imexd_health_set_wall(H, WALL0 + 500);
	tick(19200);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 0);
	imexd_health_set_wall(H, WALL0 + 60000);
	up(19300, "b");
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->m[1].since, WALL0 + 60000 + 18000);
}

/*
 * Refused while recovering (someone else says HELLO as it, or it comes
 * back with the wrong certificate): still lost when its grace is over, so
 * its imports go as they would have.
 */
void test_refused_while_recovering_still_lost(void **state)
{
	(void)state;
	start(1000, 3, 5000);
	doms(0, 1, mk(1, "d1", 1, "a b"));
	applied(0, 1, 1);
	up(0, "b");
	down(1000, "b");
	assert_int_equal(st("b"), IMEX_MEMBER_RECOVERING);
	imexd_health_peer_refused(H, 2000, "b", "TLS: names x");
	settle(2000);
	assert_int_equal(st("b"), IMEX_MEMBER_REFUSED);
	assert_int_equal(imexd_health_deadline(H), 6000);
	tick(5999);
	assert_int_equal(count(IMEXD_HEALTH_PEER_LOST, "b"), 0);
	tick(6000);
	assert_int_equal(count(IMEXD_HEALTH_PEER_LOST, "b"), 1);
	assert_int_equal(st("b"), IMEX_MEMBER_REFUSED);
	tick(20000);
	assert_int_equal(count(IMEXD_HEALTH_PEER_LOST, "b"), 1);
	/* Refused from never connected: nothing to lose. */
	imexd_health_peer_refused(H, 21000, "z", "not a peer");
	settle(21000);
	assert_int_equal(st("z"), IMEX_MEMBER_UNKNOWN);
}

/* Without a wall clock: no times, no since. */
void test_reasons_without_wall_clock(void **state)
{
	const struct rec *r;

	(void)state;
	start(1000, 3, 5000);
	doms(0, 1, mk(1, "d1", 1, "a b"));
	applied(0, 1, 1);
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_string_equal(r->m[1].reason, "never connected since imexd started");
	assert_int_equal(r->m[1].since, 0);
	assert_string_equal(r->dreason, "b never connected: no connection since imexd started");
	up(10, "b");
	tick(3010);
	assert_string_equal(last(IMEXD_HEALTH_STATUS, "d1")->m[1].reason,
			    "heartbeat lost, grace time running");
}

void test_grace_forever(void **state)
{
	(void)state;
	start(1000, 3, -1);
	doms(0, 1, mk(1, "d1", 1, "a b"));
	up(0, "b");
	tick(3000);
	assert_int_equal(st("b"), IMEX_MEMBER_RECOVERING);
	tick(1000000000000ULL);
	assert_int_equal(st("b"), IMEX_MEMBER_RECOVERING);
	down(1000000000001ULL, "b");
	assert_int_equal(st("b"), IMEX_MEMBER_RECOVERING);
	assert_int_equal(imexd_health_deadline(H), UINT64_MAX);
	assert_int_equal(count(IMEXD_HEALTH_PEER_LOST, NULL), 0);
}

void test_grace_zero(void **state)
{
	(void)state;
	start(1000, 3, 0);
	doms(0, 1, mk(1, "d1", 1, "a b"));
	up(0, "b");
	down(10, "b");			/* at once, in the same call */
	assert_int_equal(st("b"), IMEX_MEMBER_DISCONNECTED);
	assert_int_equal(count(IMEXD_HEALTH_PEER_LOST, "b"), 1);
	up(20, "b");
	tick(3019);
	assert_int_equal(st("b"), IMEX_MEMBER_CONNECTED);
	tick(3020);
	assert_int_equal(st("b"), IMEX_MEMBER_DISCONNECTED);
	assert_int_equal(count(IMEXD_HEALTH_PEER_LOST, "b"), 2);
}

/* A transport's words carrying a peer's bytes reach reasons as ASCII. */
void test_reasons_ascii_only(void **state)
{
	const struct rec *r;
	const char *s;

	(void)state;
	start(1000, 3, 5000);
	doms(0, 1, mk(1, "d1", 1, "a b"));
	applied(0, 1, 1);
	up(0, "b");
	imexd_health_peer_down_why(H, 1000, "b", "closed \x1b[2J\xc3\xa9\x7f");
	settle(1000);
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_non_null(r);
	assert_non_null(strstr(r->m[1].reason, "closed ?[2J???"));
	for (s = r->m[1].reason; *s; s++)
		assert_true(*s >= 0x20 && *s < 0x7f);
	for (s = r->dreason; *s; s++)
		assert_true(*s >= 0x20 && *s < 0x7f);
}
