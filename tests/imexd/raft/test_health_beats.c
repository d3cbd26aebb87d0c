// SPDX-License-Identifier: GPL-2.0
/*
 * test_health: heartbeats (periodic, on change, rate-limited, their
 * content), READY needing views and generations, STATUS rate limit and
 * forgotten domains.
 */
#include "test_health.h"

/* ---- heartbeats ----------------------------------------------------------- */

/*
 * Protocol 3 has no REFUSED: a member refused while recovering goes to the
 * others as recovering until its grace is over, then as disconnected.
 */
void test_heartbeat_refused_while_recovering(void **state)
{
	const struct rec *r;

	(void)state;
	start(1000, 3, 5000);
	doms(0, 1, mk(1, "d1", 1, "a b c"));
	applied(0, 1, 1);
	up(0, "b");
	up(0, "c");
	down(1000, "c");
	imexd_health_peer_refused(H, 2000, "c", "identity: it is in another group");
	settle(2000);
	assert_int_equal(st("c"), IMEX_MEMBER_REFUSED);
	tick(3000);
	r = last(IMEXD_HEALTH_SEND, "b");
	assert_non_null(r);
	assert_string_equal(r->views[1].name, "c");
	assert_int_equal(r->views[1].state, IMEX_MEMBER_RECOVERING);
	tick(6000);			/* grace over */
	tick(7000);
	r = last(IMEXD_HEALTH_SEND, "b");
	assert_string_equal(r->views[1].name, "c");
	assert_int_equal(r->views[1].state, IMEX_MEMBER_DISCONNECTED);
	assert_int_equal(st("c"), IMEX_MEMBER_REFUSED);
}

void test_heartbeat_content_and_period(void **state)
{
	const struct rec *r;

	(void)state;
	start(1000, 3, 5000);
	doms(0, 2, mk(1, "d1", 1, "a b c"), mk(2, "d2", 1, "a d"));
	applied(0, 1, 1);
	applied(0, 2, 1);
	assert_int_equal(count(IMEXD_HEALTH_SEND, NULL), 0);

	up(0, "d");
	r = last(IMEXD_HEALTH_SEND, "d");
	assert_int_equal(r->seq, 1);
	assert_int_equal(r->n, 1);
	assert_string_equal(r->views[0].name, "d");
	assert_int_equal(r->views[0].state, IMEX_MEMBER_CONNECTED);
	assert_int_equal(r->ngens, 1);
	assert_int_equal(r->gens[0].uuid[0], 2);
	assert_int_equal(r->gens[0].generation, 1);

	up(0, "b");		/* d shares nothing with b: no heartbeat to d */
	assert_int_equal(count(IMEXD_HEALTH_SEND, "d"), 1);
	r = last(IMEXD_HEALTH_SEND, "b");
	assert_int_equal(r->seq, 1);
	assert_int_equal(r->n, 2);
	assert_string_equal(r->views[0].name, "b");
	assert_int_equal(r->views[0].state, IMEX_MEMBER_CONNECTED);
	assert_string_equal(r->views[1].name, "c");
	assert_int_equal(r->views[1].state, IMEX_MEMBER_NEVER_CONNECTED);
	assert_int_equal(r->ngens, 1);
	assert_int_equal(r->gens[0].uuid[0], 1);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "c"), 0);	/* no link */

	tick(20);			/* the status pushes held back */
	reset();
	assert_int_equal(imexd_health_deadline(H), 1000);
	tick(999);
	assert_int_equal(count(IMEXD_HEALTH_SEND, NULL), 0);
	tick(1000);
	assert_int_equal(count(IMEXD_HEALTH_SEND, NULL), 2);
	assert_int_equal(last(IMEXD_HEALTH_SEND, "b")->seq, 2);
	assert_int_equal(last(IMEXD_HEALTH_SEND, "d")->seq, 2);
	tick(2000);
	assert_int_equal(count(IMEXD_HEALTH_SEND, NULL), 4);

	/* The kernel dropped d2: its generation leaves d's heartbeats. */
	applied(2100, 2, 0);
	assert_int_equal(last(IMEXD_HEALTH_SEND, "d")->ngens, 0);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 2);

	/* A heartbeat over a connection we were not told about: ours at once. */
	reset();
	hbeat(2200, "c", "a b", "1=1");
	assert_int_equal(st("c"), IMEX_MEMBER_CONNECTED);
	assert_int_equal(last(IMEXD_HEALTH_SEND, "c")->seq, 1);
}

void test_change_heartbeat_rate_limit(void **state)
{
	(void)state;
	start(1000, 3, 5000);		/* change gap: 100 ms, a burst of 4 */
	doms(0, 1, mk(1, "d1", 1, "a b c"));
	up(0, "b");
	assert_int_equal(last(IMEXD_HEALTH_SEND, "b")->seq, 1);
	tick(20);
	reset();
	/* c flaps: b's view of it changes each time; the first three
	 * changes go at once (with the first heartbeat, a burst of four),
	 * the fourth waits for the gap. */
	up(50, "c");
	down(51, "c");
	up(52, "c");
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 3);
	down(53, "c");
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 3);
	assert_int_equal(imexd_health_deadline(H), 100);
	tick(99);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 3);
	tick(100);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 4);
	assert_int_equal(last(IMEXD_HEALTH_SEND, "b")->seq, 5);
	assert_int_equal(last(IMEXD_HEALTH_SEND, "b")->views[1].state,
			 IMEX_MEMBER_RECOVERING);
	/* Then one per gap. */
	up(110, "c");
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 4);
	assert_int_equal(imexd_health_deadline(H), 200);
	tick(200);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 5);
	assert_int_equal(last(IMEXD_HEALTH_SEND, "b")->views[1].state,
			 IMEX_MEMBER_CONNECTED);

	/* What b's heartbeats carry did not change: nothing to b. */
	reset();
	hbeat(300, "c", "a b", "");
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 0);

	/* Quiet for a while: the burst is back. */
	down(700, "c");
	up(701, "c");
	down(702, "c");
	up(703, "c");
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 4);
	down(704, "c");
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 4);
	tick(800);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 5);
	tick(1799);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 5);
	tick(1800);			/* a period after the last one */
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 6);
}

/* Heartbeats on change go when the turn ends (the timer the caller runs
 * at once): all a turn changed in one.  A peer's first report gets ours
 * again, though it is the same: it may have dropped it. */
void test_change_heartbeats_at_turn_end(void **state)
{
	const char *cd[] = { "c", "d" };
	const struct rec *r;
	uint8_t u[16];

	(void)state;
	start(1000, 3, 5000);
	doms(0, 1, mk(1, "d1", 1, "a b c d"));
	up(0, "b");
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 1);
	reset();
	/* One turn: two peers up, the kernel's domain. */
	imexd_health_peers_up(H, 10, cd, 2);
	uuid_of(u, 1);
	assert_int_equal(imexd_health_applied(H, 10, u, 1), 0);
	drain();
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 0);
	assert_true(imexd_health_deadline(H) <= 10);
	tick(10);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 1);
	r = last(IMEXD_HEALTH_SEND, "b");
	assert_int_equal(r->n, 3);		/* b, c, d */
	assert_int_equal(r->views[1].state, IMEX_MEMBER_CONNECTED);
	assert_int_equal(r->views[2].state, IMEX_MEMBER_CONNECTED);
	assert_int_equal(r->ngens, 1);
	assert_int_equal(r->gens[0].generation, 1);

	reset();
	hbeat(20, "b", "a c d", "1=1");	/* its first report */
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 1);
	assert_int_equal(last(IMEXD_HEALTH_SEND, "b")->seq, 3);
	hbeat(30, "b", "a c d", "1=1");
	tick(500);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 1);
}

/* Actions left undrained are superseded by newer ones, never queued. */
void test_undrained_actions_superseded(void **state)
{
	int i;

	(void)state;
	start(1000, 3, 5000);
	doms(0, 1, mk(1, "d1", 1, "a b"));
	applied(0, 1, 1);
	reset();
	for (i = 0; i < 40; i++) {
		imexd_health_peer_up(H, 100 + 200 * (uint64_t)i, "b");
		imexd_health_peer_down(H, 200 + 200 * (uint64_t)i, "b");
	}
	imexd_health_peer_up(H, 10000, "b");
	drain();
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 1);
	assert_int_equal(last(IMEXD_HEALTH_SEND, "b")->seq, 41);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 1);
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->m[1].state,
			 IMEX_MEMBER_CONNECTED);
	assert_true(count(IMEXD_HEALTH_LOG, NULL) < 30);
	assert_int_equal(logs_with("health log lines dropped (actions not drained)"), 1);
	assert_int_equal(last(IMEXD_HEALTH_LOG, NULL)->level, 4);
	reset();
	tick(10001);
	assert_int_equal(nrec, 0);
}

/* ---- READY ---------------------------------------------------------------- */

void test_ready_needs_views_and_generations(void **state)
{
	const struct rec *r;

	(void)state;
	start(1000, 3, 5000);
	doms(0, 1, mk(1, "d1", 5, "a b c"));
	applied(0, 1, 5);
	up(0, "b");
	up(0, "c");
	assert_false(ready(1));		/* connected, but no views yet */
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->dstate,
			 IMEX_DOMAIN_DEGRADED);

	hbeat(10, "b", "a c", "1=5");
	hbeat(10, "c", "a b", "1=4");	/* c lags */
	tick(100);
	assert_false(ready(1));
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_int_equal(r->dstate, IMEX_DOMAIN_DEGRADED);
	assert_int_equal(r->dgen, 5);
	assert_int_equal(r->nm, 3);
	assert_string_equal(r->m[0].name, "a");
	assert_int_equal(r->m[0].state, IMEX_MEMBER_SELF);
	assert_int_equal(r->m[0].generation, 5);
	assert_int_equal(r->m[0].view[1], IMEX_MEMBER_CONNECTED);
	assert_int_equal(r->m[1].generation, 5);
	assert_true(r->m[1].has_view);
	assert_int_equal(r->m[1].view[0], IMEX_MEMBER_CONNECTED);
	assert_int_equal(r->m[1].view[1], IMEX_MEMBER_SELF);
	assert_int_equal(r->m[2].generation, 4);

	hbeat(200, "c", "a b", "1=5");
	assert_true(ready(1));
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->dstate,
			 IMEX_DOMAIN_READY);
	assert_int_equal(logs_with("domain 'd1': READY"), 1);
	assert_int_equal(logs_with_fields("domain 'd1': READY", IMEXD_MSGID_DOMAIN_READY,
					  "d1", ""), 1);

	/* Every member's view counts, of this node included. */
	hbeat(300, "b", "a c:R", "1=5");
	assert_false(ready(1));
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->dstate,
			 IMEX_DOMAIN_DEGRADED);
	hbeat(400, "b", "a c", "1=5");
	assert_true(ready(1));
	hbeat(500, "b", "c", "1=5");
	assert_false(ready(1));
	hbeat(600, "b", "a c", "1=5");
	assert_true(ready(1));

	/* A new committed generation: READY once everyone holds it. */
	doms(700, 1, mk(1, "d1", 6, "a b c"));
	assert_false(ready(1));
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->dgen, 6);
	applied(750, 1, 6);
	hbeat(800, "b", "a c", "1=6");
	hbeat(800, "c", "a b", "1=5");	/* c lags */
	tick(900);
	assert_false(ready(1));
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->dstate,
			 IMEX_DOMAIN_DEGRADED);
	hbeat(1000, "c", "a b", "1=6");
	assert_true(ready(1));
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->dstate,
			 IMEX_DOMAIN_READY);

	/* This node lagging counts too. */
	doms(1100, 1, mk(1, "d1", 7, "a b c"));
	hbeat(1200, "b", "a c", "1=7");
	hbeat(1200, "c", "a b", "1=7");
	assert_false(ready(1));
	applied(1300, 1, 7);
	assert_true(ready(1));

	/* A member gone: its report is forgotten with it. */
	down(1400, "c");
	assert_false(ready(1));
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_int_equal(r->m[2].state, IMEX_MEMBER_RECOVERING);
	assert_false(r->m[2].has_view);
	assert_int_equal(r->m[2].generation, 0);
}

/* ---- STATUS ----------------------------------------------------------------- */

void test_status_rate_limit(void **state)
{
	const struct rec *r;

	(void)state;
	start(1000, 3, 5000);		/* status gap: 20 ms */
	doms(0, 1, mk(1, "d1", 1, "a b c"));
	applied(0, 1, 1);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 1);
	up(5, "b");
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 1);
	assert_int_equal(imexd_health_deadline(H), 20);
	up(10, "c");
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 1);
	tick(19);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 1);
	tick(20);			/* the latest, once */
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 2);
	r = last(IMEXD_HEALTH_STATUS, "d1");
	assert_int_equal(r->m[1].state, IMEX_MEMBER_CONNECTED);
	assert_int_equal(r->m[2].state, IMEX_MEMBER_CONNECTED);
	down(30, "c");
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 2);
	assert_int_equal(imexd_health_deadline(H), 40);
	tick(40);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 3);
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->m[2].state,
			 IMEX_MEMBER_RECOVERING);
	/* Nothing changed: nothing pushed. */
	tick(100);
	hbeat(100, "b", "a c:R", "");
	hbeat(150, "b", "a c:R", "");
	tick(200);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 4);

	/* A new state goes at once, within the gap, up to a burst of four
	 * pushes; then it waits for the gap too. */
	applied(300, 1, 0);
	applied(300, 1, 1);		/* the kernel's domain set anew */
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 5);
	up(301, "c");
	hbeat(301, "b", "a c", "1=1");
	hbeat(302, "c", "a b", "1=1");	/* READY */
	assert_true(ready(1));
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 6);
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->dstate,
			 IMEX_DOMAIN_READY);
	hbeat(303, "c", "a b:R", "1=1");	/* DEGRADED */
	hbeat(304, "c", "a b", "1=1");	/* READY */
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 8);
	hbeat(305, "c", "a b:R", "1=1");	/* DEGRADED: burst spent */
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 8);
	assert_int_equal(imexd_health_deadline(H), 320);
	tick(320);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 9);
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->dstate,
			 IMEX_DOMAIN_DEGRADED);
}

void test_dropped_domain_gets_no_status(void **state)
{
	(void)state;
	start(1000, 3, 5000);
	doms(0, 2, mk(1, "d1", 1, "a b"), mk(2, "d2", 1, "a c"));
	applied(0, 1, 1);
	applied(0, 2, 1);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 1);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d2"), 1);
	up(5, "c");			/* d2's push held back */
	reset();
	doms(10, 1, defs[1]);
	assert_int_equal(st("c"), IMEX_MEMBER_UNKNOWN);
	assert_false(ready(2));
	tick(20);
	tick(100);
	up(200, "c");
	down(300, "c");
	hbeat(400, "c", "a", "2=1");
	tick(100000);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d2"), 0);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "c"), 0);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 0);	/* unchanged */

	/* Listed again: a new start. */
	doms(100010, 2, defs[1], mk(2, "d2", 2, "a c"));
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d2"), 1);
	assert_int_equal(st("c"), IMEX_MEMBER_NEVER_CONNECTED);
}

/* The kernel must hold a domain for its status to go there. */
void test_status_waits_for_kernel(void **state)
{
	(void)state;
	start(1000, 3, 5000);
	doms(0, 1, mk(1, "d1", 1, "a b"));
	up(0, "b");
	hbeat(10, "b", "a", "1=1");	/* its first report: ours again */
	tick(100);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, NULL), 0);
	assert_int_equal(imexd_health_deadline(H), 1010);
	applied(200, 1, 1);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 1);
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->dstate,
			 IMEX_DOMAIN_READY);
	assert_int_equal(logs_with("domain 'd1': READY"), 1);
	applied(300, 1, 0);		/* the kernel dropped it */
	down(400, "b");
	tick(500);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 1);
	up(600, "b");
	hbeat(600, "b", "a", "1=1");
	applied(700, 1, 1);		/* back: the whole status again */
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 2);
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "d1")->dstate,
			 IMEX_DOMAIN_READY);
}
