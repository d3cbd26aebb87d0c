// SPDX-License-Identifier: GPL-2.0
/*
 * test_health: what strangers and hostile heartbeats change (nothing, and
 * no allocation), set_timing, and out of memory.
 */
#include "test_health.h"

/* ---- what peers send cannot grow or change anything ----------------------- */

void test_strangers_and_unshared_ignored(void **state)
{
	struct imexd_peer_view *big;
	struct imexd_msg m;
	const struct rec *r;
	long before;

	(void)state;
	start(1000, 3, 5000);
	doms(0, 2, mk(1, "d1", 1, "a b"), mk(2, "d2", 1, "a c"));
	applied(0, 1, 1);
	applied(0, 2, 1);
	up(0, "b");
	up(0, "c");
	tick(100);
	reset();
	before = allocs;
	hbeat(200, "z", "a b", "1=1");
	assert_int_equal(st("z"), IMEX_MEMBER_UNKNOWN);
	assert_int_equal(logs_with("heartbeat from node 'z', which shares no domain with this node: ignored"), 1);
	hbeat(300, "y", "a", "");	/* within the minute: quiet */
	assert_int_equal(count(IMEXD_HEALTH_LOG, NULL), 1);
	assert_int_equal(count(IMEXD_HEALTH_SEND, NULL), 0);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, NULL), 0);

	/* b names c (not shared with b), strangers and domains not shared. */
	hbeat(400, "b", "a c z y x", "2=1 9=3 1=1");
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d2"), 0);
	assert_int_equal(count(IMEXD_HEALTH_STATUS, "d1"), 1);
	assert_int_equal(allocs, before);	/* no table grew */

	/* b's view of c was not kept: a domain of both shows it unknown. */
	doms(500, 3, defs[1], defs[2], mk(3, "d3", 1, "a b c"));
	applied(500, 3, 1);
	r = last(IMEXD_HEALTH_STATUS, "d3");
	assert_true(r->m[1].has_view);
	assert_int_equal(r->m[1].view[2], IMEX_MEMBER_UNKNOWN);
	assert_int_equal(r->m[1].generation, 0);	/* nor d3's generation */
	hbeat(600, "b", "a c", "3=1");
	r = last(IMEXD_HEALTH_STATUS, "d3");
	assert_int_equal(r->m[1].view[2], IMEX_MEMBER_CONNECTED);
	assert_int_equal(r->m[1].generation, 1);

	/* A minute on, the next stranger line says how many were held back. */
	reset();
	hbeat(60200, "z", "", "");
	assert_int_equal(logs_with("(and 1 more like it since the last such line)"), 1);

	/* Hostile heartbeats from a peer: refused, nothing changes, not even
	 * its last contact. */
	hbeat(60300, "b", "a c", "1=1 3=1");
	reset();
	big = calloc(IMEX_MEMBERS_MAX + 1, sizeof(*big));
	assert_non_null(big);
	before = allocs;
	memset(&m, 0, sizeof(m));
	m.type = IMEXD_MSG_HEARTBEAT;
	m.u.heartbeat.n = IMEX_MEMBERS_MAX + 1;
	m.u.heartbeat.peers = big;
	imexd_health_heartbeat(H, 61000, "b", &m);
	drain();
	assert_int_equal(logs_with("heartbeat from node 'b' ignored: more views than IMEX_MEMBERS_MAX"), 1);
	m.u.heartbeat.n = 1;
	snprintf(big[0].name, IMEX_NAME_MAX, "a");
	big[0].state = __IMEX_MEMBER_STATE_MAX;
	imexd_health_heartbeat(H, 61100, "b", &m);
	big[0].state = IMEX_MEMBER_CONNECTED;
	memset(big[0].name, 'a', IMEX_NAME_MAX);
	imexd_health_heartbeat(H, 61200, "b", &m);
	big[0].name[1] = '\0';
	m.u.heartbeat.ngens = IMEX_DOMAINS_MAX + 1;
	imexd_health_heartbeat(H, 61300, "b", &m);
	m.u.heartbeat.ngens = 0;
	m.type = IMEXD_MSG_LEAVE;
	imexd_health_heartbeat(H, 61400, "b", &m);
	drain();
	assert_int_equal(count(IMEXD_HEALTH_LOG, NULL), 1);	/* rate-limited */
	assert_int_equal(count(IMEXD_HEALTH_STATUS, NULL), 0);
	assert_int_equal(allocs, before);
	free(big);
	tick(63299);
	assert_int_equal(st("b"), IMEX_MEMBER_CONNECTED);
	tick(63300);			/* 3000 ms after the last good one */
	assert_int_equal(st("b"), IMEX_MEMBER_RECOVERING);
}

/* The union of the members shared with a peer can pass the wire bound. */
void test_heartbeat_views_bounded(void **state)
{
	char *m1, *m2;
	size_t i, o;
	struct imexd_msg msg;
	static struct imexd_peer_view v[IMEX_MEMBERS_MAX];
	long before;

	(void)state;
	m1 = malloc((size_t)IMEX_MEMBERS_MAX * 8);
	m2 = malloc(256);
	assert_non_null(m1);
	assert_non_null(m2);
	o = (size_t)sprintf(m1, "a");
	for (i = 0; i < IMEX_MEMBERS_MAX - 1; i++)
		o += (size_t)sprintf(m1 + o, " p%03zu", i);
	o = (size_t)sprintf(m2, "a p000");
	for (i = 0; i < 10; i++)
		o += (size_t)sprintf(m2 + o, " q%02zu", i);
	start(1000, 3, 5000);
	doms(0, 2, mk(1, "big", 1, m1), mk(2, "d2", 1, m2));
	applied(0, 1, 1);
	free(m1);
	free(m2);
	up(0, "p000");
	assert_int_equal(last(IMEXD_HEALTH_SEND, "p000")->n, IMEX_MEMBERS_MAX);
	up(0, "q00");
	assert_int_equal(last(IMEXD_HEALTH_SEND, "q00")->n, 11);
	assert_int_equal(last(IMEXD_HEALTH_STATUS, "big")->nm,
			 IMEX_MEMBERS_MAX);

	/* A full heartbeat of strangers grows nothing. */
	for (i = 0; i < IMEX_MEMBERS_MAX; i++)
		snprintf(v[i].name, IMEX_NAME_MAX, "stranger%zu", i);
	memset(&msg, 0, sizeof(msg));
	msg.type = IMEXD_MSG_HEARTBEAT;
	msg.u.heartbeat.n = IMEX_MEMBERS_MAX;
	msg.u.heartbeat.peers = v;
	before = allocs;
	imexd_health_heartbeat(H, 10, "p000", &msg);
	drain();
	assert_int_equal(allocs, before);
	assert_int_equal(st("p000"), IMEX_MEMBER_CONNECTED);
}

/* ---- timing --------------------------------------------------------------- */

void test_set_timing(void **state)
{
	(void)state;
	start(1000, 3, 5000);
	doms(0, 1, mk(1, "d1", 1, "a b"));
	up(0, "b");
	hbeat(0, "b", "a", "");		/* its first report: ours again */
	imexd_health_set_timing(H, 500, 2, 1000);
	hbeat(900, "b", "a", "");
	reset();
	tick(999);			/* the deadline already set stays */
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 0);
	tick(1000);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 1);
	assert_int_equal(imexd_health_deadline(H), 1500);
	tick(1499);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 1);
	tick(1500);
	assert_int_equal(count(IMEXD_HEALTH_SEND, "b"), 2);
	tick(1899);
	assert_int_equal(st("b"), IMEX_MEMBER_CONNECTED);
	tick(1900);			/* 2 x 500 ms after the heartbeat */
	assert_int_equal(st("b"), IMEX_MEMBER_RECOVERING);
	tick(2899);
	assert_int_equal(st("b"), IMEX_MEMBER_RECOVERING);
	tick(2900);
	assert_int_equal(st("b"), IMEX_MEMBER_DISCONNECTED);

	/* Zero: the defaults (1000 ms, 3), but grace 0 is none. */
	imexd_health_set_timing(H, 0, 0, 0);
	up(3000, "b");
	tick(5999);
	assert_int_equal(st("b"), IMEX_MEMBER_CONNECTED);
	tick(6000);
	assert_int_equal(st("b"), IMEX_MEMBER_DISCONNECTED);
}

/* ---- out of memory ------------------------------------------------------------ */

/* What the part shows of itself, to compare before and after. */
static void snapshot(char *buf, size_t len)
{
	snprintf(buf, len, "%u %u %u %u %d %d %llu", st("b"), st("c"), st("d"),
		 st("e"), ready(1), ready(2),
		 (unsigned long long)imexd_health_deadline(H));
}

void test_out_of_memory_changes_nothing(void **state)
{
	struct imexd_health_config cfg = { .self = "a" };
	struct imexd_health_action a;
	struct imexd_health *h2;
	char before[128], after[128];
	uint8_t u[16];
	long k;
	int rv;

	(void)state;
	for (k = 0;; k++) {
		arm(k);
		rv = imexd_health_new(&cfg, &h2);
		disarm();
		if (!rv)
			break;
		assert_int_equal(rv, -ENOMEM);
		assert_null(h2);
	}
	assert_true(k > 0);
	imexd_health_free(h2);

	start(1000, 3, 5000);
	doms(0, 1, mk(1, "d1", 1, "a b c"));
	applied(0, 1, 1);
	up(0, "b");
	up(0, "c");
	hbeat(10, "b", "a c", "1=1");
	hbeat(10, "c", "a b", "1=1");
	tick(100);
	assert_true(ready(1));
	snapshot(before, sizeof(before));
	mk(1, "d1", 2, "a b c");
	mk(2, "d2", 1, "a d e");
	for (k = 0;; k++) {
		const struct imexd_def *d[2] = { defs[1], defs[2] };

		reset();
		arm(k);
		rv = imexd_health_set_domains(H, 150, d, 2);
		disarm();
		drain();
		if (!rv)
			break;
		assert_int_equal(rv, -ENOMEM);
		assert_int_equal(nrec, 0);
		snapshot(after, sizeof(after));
		assert_string_equal(before, after);
	}
	assert_true(k > 3);
	assert_int_equal(st("d"), IMEX_MEMBER_NEVER_CONNECTED);
	assert_false(ready(1));		/* generation 2 not held yet */

	/* applied() for a domain the kernel did not hold allocates (once
	 * the table's first 8 entries are taken). */
	for (k = 10; k < 17; k++)
		applied(155, (uint8_t)k, 1);
	snapshot(before, sizeof(before));
	uuid_of(u, 2);
	arm(0);
	rv = imexd_health_applied(H, 160, u, 1);
	disarm();
	assert_int_equal(rv, -ENOMEM);
	assert_false(imexd_health_next(H, &a));
	snapshot(after, sizeof(after));
	assert_string_equal(before, after);
	applied(160, 2, 1);
	up(170, "d");
	assert_int_equal(last(IMEXD_HEALTH_SEND, "d")->ngens, 1);

	/* Invalid definitions: refused, nothing changes. */
	{
		const struct imexd_def *d[2] = { defs[1], defs[1] };

		snapshot(before, sizeof(before));
		reset();
		assert_int_equal(imexd_health_set_domains(H, 180, d, 2),
				 -EINVAL);
		drain();
		assert_int_equal(nrec, 0);
		snapshot(after, sizeof(after));
		assert_string_equal(before, after);
	}
}
