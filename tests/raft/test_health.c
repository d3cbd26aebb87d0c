// SPDX-License-Identifier: GPL-2.0
/*
 * The health part (imexd/health.h): peer states at exact times, grace
 * -1/0, heartbeats (periodic, on change, rate-limited, their content and
 * its wire bound), READY needing views and generations, STATUS rate limit
 * and forgotten domains, what strangers and hostile heartbeats change
 * (nothing, and no allocation), set_timing, out of memory, determinism.
 *
 * Messages are struct imexd_msg values, never encoded bytes.  The random
 * test prints its seed; IMEXD_HEALTH_SEED=N replays it.
 */
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

/* ---- allocations: counted, and failed on demand ---------------------------
 *
 * The Makefile links this program with --wrap=malloc,calloc,realloc: every
 * allocation of the sources under test (or this file) is counted, and
 * while fail_at >= 0 the fail_at-th one returns NULL.
 */
static long fail_at = -1, allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static int inject(void)
{
	long k = allocs++;

	return fail_at >= 0 && k == fail_at;
}

void *__wrap_malloc(size_t n)
{
	return inject() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return inject() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return inject() ? NULL : __real_realloc(p, n);
}

static void arm(long k)
{
	allocs = 0;
	fail_at = k;
}

static void disarm(void)
{
	fail_at = -1;
}

/* ---- domains -------------------------------------------------------------- */

#define NDEFS 8
static struct imexd_def *defs[NDEFS];	/* not an array: struct imexd_def pads */

static void uuid_of(uint8_t u[16], uint8_t id)
{
	memset(u, 0x5a, 16);
	u[0] = id;
}

/* Domain slot @id (uuid from it): @members space-separated. */
static const struct imexd_def *mk(uint8_t id, const char *name, uint64_t gen,
				  const char *members)
{
	struct imexd_def *d;
	char buf[4096], *tok, *save = NULL;
	uint16_t n = 0;

	if (!defs[id])
		defs[id] = calloc(1, sizeof(*defs[id]));
	d = defs[id];
	assert_non_null(d);
	imexd_def_free(d);
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	uuid_of(d->uuid, id);
	d->generation = gen;
	d->members = calloc(IMEX_MEMBERS_MAX, sizeof(*d->members));
	assert_non_null(d->members);
	snprintf(buf, sizeof(buf), "%s", members);
	for (tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		assert_true(n < IMEX_MEMBERS_MAX);
		snprintf(d->members[n++].name, IMEX_NAME_MAX, "%s", tok);
	}
	d->nmembers = n;
	return d;
}

static void defs_free(void)
{
	int i;

	for (i = 0; i < NDEFS; i++) {
		if (defs[i])
			imexd_def_free(defs[i]);
		free(defs[i]);
		defs[i] = NULL;
	}
}

/* ---- the part under test and its actions ---------------------------------- */

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

static struct imexd_health *H;
static struct rec recs[NRECS];
static size_t nrec;

static void record(const struct imexd_health_action *a)
{
	struct rec *r;

	assert_true(nrec < NRECS);
	r = &recs[nrec++];
	memset(r, 0, sizeof(*r));
	r->type = a->type;
	switch (a->type) {
	case IMEXD_HEALTH_SEND:
		snprintf(r->to, sizeof(r->to), "%s", a->to);
		assert_int_equal(a->msg->type, IMEXD_MSG_HEARTBEAT);
		assert_true(a->msg->u.heartbeat.n <= IMEX_MEMBERS_MAX);
		r->seq = a->msg->u.heartbeat.seq;
		r->n = a->msg->u.heartbeat.n;
		r->ngens = a->msg->u.heartbeat.ngens;
		memcpy(r->views, a->msg->u.heartbeat.peers,
		       r->n * sizeof(*r->views));
		memcpy(r->gens, a->msg->u.heartbeat.gens,
		       (r->ngens < 8 ? r->ngens : 8) * sizeof(*r->gens));
		break;
	case IMEXD_HEALTH_STATUS:
		snprintf(r->to, sizeof(r->to), "%s", a->status->name);
		r->dstate = a->status->state;
		r->dgen = a->status->generation;
		memcpy(r->dreason, a->status->reason, sizeof(r->dreason));
		r->nm = a->status->nmembers;
		memcpy(r->m, a->status->members,
		       (r->nm < 4 ? r->nm : 4) * sizeof(*r->m));
		break;
	case IMEXD_HEALTH_PEER_LOST:
		snprintf(r->to, sizeof(r->to), "%s", a->to);
		break;
	case IMEXD_HEALTH_LOG:
		r->level = a->level;
		snprintf(r->text, sizeof(r->text), "%s", a->text);
		r->fields = a->fields;
		break;
	default:
		fail_msg("action type %d", a->type);
	}
}

static void drain(void)
{
	struct imexd_health_action a;

	while (imexd_health_next(H, &a))
		record(&a);
}

/* After an input, as the daemon does: the timer runs at once when the
 * deadline has come (heartbeats on change go at the end of the turn). */
static void settle(uint64_t now)
{
	drain();
	if (imexd_health_deadline(H) <= now) {
		imexd_health_timer(H, now);
		drain();
	}
}

static void reset(void)
{
	nrec = 0;
}

static size_t count(int type, const char *to)
{
	size_t i, k = 0;

	for (i = 0; i < nrec; i++)
		if (recs[i].type == type && (!to || !strcmp(recs[i].to, to)))
			k++;
	return k;
}

static const struct rec *last(int type, const char *to)
{
	size_t i = nrec;

	while (i--)
		if (recs[i].type == type && (!to || !strcmp(recs[i].to, to)))
			return &recs[i];
	fail_msg("no action %d for %s", type, to ? to : "-");
	return NULL;
}

static size_t logs_with(const char *needle)
{
	size_t i, k = 0;

	for (i = 0; i < nrec; i++)
		if (recs[i].type == IMEXD_HEALTH_LOG &&
		    strstr(recs[i].text, needle))
			k++;
	return k;
}

/* Lines with @needle whose fields are exactly @msgid, @dom and @node. */
static size_t logs_with_fields(const char *needle, const char *msgid,
			       const char *dom, const char *node)
{
	size_t i, k = 0;

	for (i = 0; i < nrec; i++) {
		const struct imexd_log_fields *f = &recs[i].fields;

		if (recs[i].type != IMEXD_HEALTH_LOG ||
		    !strstr(recs[i].text, needle))
			continue;
		assert_non_null(f->msgid);
		assert_string_equal(f->msgid, msgid);
		assert_string_equal(f->domain, dom);
		assert_string_equal(f->node, node);
		assert_false(f->has_channel);
		k++;
	}
	return k;
}

static void start(uint32_t hb, uint32_t miss, int64_t grace)
{
	struct imexd_health_config cfg = {
		.self = "a", .heartbeat_ms = hb, .miss_count = miss,
		.grace_ms = grace,
	};

	reset();
	assert_int_equal(imexd_health_new(&cfg, &H), 0);
}

static int teardown(void **state)
{
	(void)state;
	imexd_health_free(H);
	H = NULL;
	defs_free();
	disarm();
	return 0;
}

static void doms(uint64_t now, int n, ...)
{
	const struct imexd_def *d[NDEFS];
	va_list ap;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		d[i] = va_arg(ap, const struct imexd_def *);
	va_end(ap);
	assert_int_equal(imexd_health_set_domains(H, now, d, (size_t)n), 0);
	settle(now);
}

static void up(uint64_t now, const char *name)
{
	imexd_health_peer_up(H, now, name);
	settle(now);
}

static void down(uint64_t now, const char *name)
{
	imexd_health_peer_down(H, now, name);
	settle(now);
}

static void tick(uint64_t now)
{
	imexd_health_timer(H, now);
	drain();
}

static void applied(uint64_t now, uint8_t id, uint64_t gen)
{
	uint8_t u[16];

	uuid_of(u, id);
	assert_int_equal(imexd_health_applied(H, now, u, gen), 0);
	settle(now);
}

static uint8_t letter_state(char c)
{
	switch (c) {
	case 'C': return IMEX_MEMBER_CONNECTED;
	case 'R': return IMEX_MEMBER_RECOVERING;
	case 'D': return IMEX_MEMBER_DISCONNECTED;
	case 'N': return IMEX_MEMBER_NEVER_CONNECTED;
	case 'V': return IMEX_MEMBER_VERSION_MISMATCH;
	default:  return IMEX_MEMBER_UNKNOWN;
	}
}

/*
 * A heartbeat from @from: @views "b c:R" (connected unless a letter says
 * otherwise), @gens "1=5 2=7" (domain slot = generation).
 */
static void hbeat(uint64_t now, const char *from, const char *views,
		  const char *gens)
{
	static struct imexd_peer_view v[IMEX_MEMBERS_MAX];
	struct imexd_peer_gen g[16];
	struct imexd_msg m;
	char buf[4096], *tok, *save = NULL, *c;
	uint16_t nv = 0, ng = 0;

	memset(&m, 0, sizeof(m));
	memset(v, 0, sizeof(v));
	snprintf(buf, sizeof(buf), "%s", views);
	for (tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		c = strchr(tok, ':');
		v[nv].state = c ? letter_state(c[1]) : IMEX_MEMBER_CONNECTED;
		if (c)
			*c = '\0';
		snprintf(v[nv++].name, IMEX_NAME_MAX, "%s", tok);
	}
	snprintf(buf, sizeof(buf), "%s", gens);
	save = NULL;
	for (tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		uuid_of(g[ng].uuid, (uint8_t)atoi(tok));
		g[ng++].generation = strtoull(strchr(tok, '=') + 1, NULL, 10);
	}
	m.type = IMEXD_MSG_HEARTBEAT;
	m.u.heartbeat.seq = 7;
	m.u.heartbeat.n = nv;
	m.u.heartbeat.peers = v;
	m.u.heartbeat.ngens = ng;
	m.u.heartbeat.gens = g;
	imexd_health_heartbeat(H, now, from, &m);
	settle(now);
}

static bool ready(uint8_t id)
{
	uint8_t u[16];

	uuid_of(u, id);
	return imexd_health_ready(H, u);
}

static uint8_t st(const char *name)
{
	return imexd_health_peer_state(H, name);
}

/* ---- peer states ---------------------------------------------------------- */

static void test_states_at_exact_times(void **state)
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
static void test_reasons_say_why_and_since(void **state)
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
static void test_refused_while_recovering_still_lost(void **state)
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
static void test_reasons_without_wall_clock(void **state)
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

static void test_grace_forever(void **state)
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

static void test_grace_zero(void **state)
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
static void test_reasons_ascii_only(void **state)
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

/* ---- heartbeats ----------------------------------------------------------- */

/*
 * Protocol 3 has no REFUSED: a member refused while recovering goes to the
 * others as recovering until its grace is over, then as disconnected.
 */
static void test_heartbeat_refused_while_recovering(void **state)
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

static void test_heartbeat_content_and_period(void **state)
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

static void test_change_heartbeat_rate_limit(void **state)
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
static void test_change_heartbeats_at_turn_end(void **state)
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
static void test_undrained_actions_superseded(void **state)
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

static void test_ready_needs_views_and_generations(void **state)
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

static void test_status_rate_limit(void **state)
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

static void test_dropped_domain_gets_no_status(void **state)
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
static void test_status_waits_for_kernel(void **state)
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

/* ---- what peers send cannot grow or change anything ----------------------- */

static void test_strangers_and_unshared_ignored(void **state)
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
static void test_heartbeat_views_bounded(void **state)
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

static void test_set_timing(void **state)
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

static void test_out_of_memory_changes_nothing(void **state)
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

/* ---- determinism over random inputs ----------------------------------------- */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t rndn(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* One action as text, to compare two runs. */
static void action_text(const struct imexd_health_action *a, char *buf,
			size_t len)
{
	size_t o = 0;
	uint16_t i, j;

	o += (size_t)snprintf(buf + o, len - o, "%d ", a->type);
	switch (a->type) {
	case IMEXD_HEALTH_SEND:
		o += (size_t)snprintf(buf + o, len - o, "%s %u", a->to,
				      a->msg->u.heartbeat.seq);
		for (i = 0; i < a->msg->u.heartbeat.n && o < len; i++)
			o += (size_t)snprintf(buf + o, len - o, " %s=%u",
				a->msg->u.heartbeat.peers[i].name,
				a->msg->u.heartbeat.peers[i].state);
		for (i = 0; i < a->msg->u.heartbeat.ngens && o < len; i++)
			o += (size_t)snprintf(buf + o, len - o, " %u:%llu",
				a->msg->u.heartbeat.gens[i].uuid[0],
				(unsigned long long)a->msg->u.heartbeat.gens[i].generation);
		break;
	case IMEXD_HEALTH_STATUS:
		o += (size_t)snprintf(buf + o, len - o, "%s %u %llu",
				      a->status->name, a->status->state,
				      (unsigned long long)a->status->generation);
		for (i = 0; i < a->status->nmembers && o < len; i++) {
			const struct imexd_member_status *m =
				&a->status->members[i];

			o += (size_t)snprintf(buf + o, len - o, " %s:%u:%d:%llu:",
					      m->name, m->state, m->has_view,
					      (unsigned long long)m->generation);
			for (j = 0; j < a->status->nmembers && o < len; j++)
				o += (size_t)snprintf(buf + o, len - o, "%u",
						      m->view[j]);
		}
		break;
	case IMEXD_HEALTH_PEER_LOST:
		snprintf(buf + o, len - o, "%s", a->to);
		break;
	default:
		snprintf(buf + o, len - o, "%d %s", a->level, a->text);
		break;
	}
}

/* A READY status must hold what READY means; 1 if READY. */
static int check_status(const struct imexd_domain_status *s)
{
	uint16_t i, j;

	if (s->state != IMEX_DOMAIN_READY)
		return 0;
	for (i = 0; i < s->nmembers; i++) {
		const struct imexd_member_status *m = &s->members[i];

		assert_true(m->state == IMEX_MEMBER_SELF ||
			    m->state == IMEX_MEMBER_CONNECTED);
		assert_true(m->has_view);
		assert_int_equal(m->generation, s->generation);
		for (j = 0; j < s->nmembers; j++)
			assert_int_equal(m->view[j], i == j ? IMEX_MEMBER_SELF :
					 IMEX_MEMBER_CONNECTED);
	}
	return 1;
}

static const char *const NAMES[] = { "a", "b", "c", "d", "e", "z" };

static void random_step(struct imexd_health *h, uint64_t now, uint32_t op,
			uint32_t who, uint64_t r)
{
	const char *name = NAMES[who % 6];
	struct imexd_peer_view v[6];
	struct imexd_peer_gen g[3];
	struct imexd_msg m;
	uint32_t i, nv = 0, ng = 0;
	uint8_t u[16];
	bool good;

	switch (op) {
	case 0:
		imexd_health_peer_up(h, now, name);
		break;
	case 1:
		imexd_health_peer_down(h, now, name);
		break;
	case 2:
		if (r % 8 == 0)
			imexd_health_peer_version(h, now, name);
		else
			imexd_health_timer(h, now);
		break;
	case 3:		/* slot i's committed generation is i: mostly that */
		uuid_of(u, (uint8_t)(1 + r % 3));
		assert_int_equal(imexd_health_applied(h, now, u, (r >> 2) % 4 ?
						      1 + r % 3 :
						      (r >> 4) % 4), 0);
		break;
	case 4: {
		const struct imexd_def *d[3];
		size_t n = 0;

		for (i = 0; i < 3; i++)
			if (r & (1u << i))
				d[n++] = defs[1 + i];
		assert_int_equal(imexd_health_set_domains(h, now, d, n), 0);
		break;
	}
	default:
		/* Mostly what a healthy peer says, else anything. */
		good = (r >> 40) % 4 != 0;
		memset(&m, 0, sizeof(m));
		memset(v, 0, sizeof(v));
		for (i = 0; i < 6; i++) {
			if (good && i < 5 && i != who % 6) {
				snprintf(v[nv].name, IMEX_NAME_MAX, "%s",
					 NAMES[i]);
				v[nv++].state = IMEX_MEMBER_CONNECTED;
				continue;
			}
			if (good || !((r >> i) & 1))
				continue;
			snprintf(v[nv].name, IMEX_NAME_MAX, "%s", NAMES[i]);
			v[nv++].state = (r >> (8 + i)) % 3 ?
					IMEX_MEMBER_CONNECTED :
					(uint8_t)((r >> (16 + i)) % 7);
		}
		for (i = 0; i < 3; i++) {
			if (!good && !((r >> (24 + i)) & 1))
				continue;
			uuid_of(g[ng].uuid, (uint8_t)(1 + i));
			g[ng++].generation = good ? 1 + i :
					     (r >> (28 + 2 * i)) % 4;
		}
		m.type = IMEXD_MSG_HEARTBEAT;
		m.u.heartbeat.n = (uint16_t)nv;
		m.u.heartbeat.peers = v;
		m.u.heartbeat.ngens = (uint16_t)ng;
		m.u.heartbeat.gens = g;
		imexd_health_heartbeat(h, now, name, &m);
		break;
	}
}

/* Both parts' actions, drained: identical, and sound. */
static unsigned long same_actions(struct imexd_health **h,
				  unsigned long *readies)
{
	static char ta[8192], tb[8192];
	struct imexd_health_action a, b;
	unsigned long actions = 0;

	for (;;) {
		bool ga = imexd_health_next(h[0], &a);
		bool gb = imexd_health_next(h[1], &b);

		assert_int_equal(ga, gb);
		if (!ga)
			break;
		action_text(&a, ta, sizeof(ta));
		action_text(&b, tb, sizeof(tb));
		assert_string_equal(ta, tb);
		if (a.type == IMEXD_HEALTH_STATUS)
			*readies += check_status(a.status);
		if (a.type == IMEXD_HEALTH_SEND) {
			assert_int_not_equal(
				imexd_health_peer_state(h[0], a.to),
				IMEX_MEMBER_UNKNOWN);
			assert_true(a.msg->u.heartbeat.n <= 4);
		}
		actions++;
	}
	return actions;
}

static void test_random_inputs_deterministic(void **state)
{
	struct imexd_health_config cfg = {
		.self = "a", .heartbeat_ms = 100, .miss_count = 2,
		.grace_ms = 300,
	};
	struct imexd_health *h[2];
	const char *s = getenv("IMEXD_HEALTH_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 0) :
			(uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	uint64_t now = 0;
	unsigned long actions = 0, readies = 0;
	int i, k;

	(void)state;
	if (!seed)
		seed = 1;
	printf("random health inputs: seed %llu (replay: IMEXD_HEALTH_SEED=%llu)\n",
	       (unsigned long long)seed, (unsigned long long)seed);
	rng = seed;
	mk(1, "d1", 1, "a b c");
	mk(2, "d2", 2, "a c d");
	mk(3, "d3", 3, "a b c d e");
	for (k = 0; k < 2; k++)
		assert_int_equal(imexd_health_new(&cfg, &h[k]), 0);
	for (i = 0; i < 20000; i++) {
		uint32_t op = rndn(8), who = rndn(6);
		uint64_t r = rnd();

		now += rndn(4) ? rndn(60) : rndn(600);
		for (k = 0; k < 2; k++)
			random_step(h[k], now, op, who, r);
		actions += same_actions(h, &readies);
		/* The timer at once if its time has come (the turn's end). */
		if (imexd_health_deadline(h[0]) <= now) {
			for (k = 0; k < 2; k++)
				imexd_health_timer(h[k], now);
			actions += same_actions(h, &readies);
		}
		assert_int_equal(imexd_health_deadline(h[0]),
				 imexd_health_deadline(h[1]));
		assert_true(imexd_health_deadline(h[0]) > now);
	}
	printf("random health inputs: %lu actions (%lu READY statuses), identical\n",
	       actions, readies);
	assert_true(readies > 0);	/* the READY checks ran */
	for (k = 0; k < 2; k++)
		imexd_health_free(h[k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_states_at_exact_times, teardown),
		cmocka_unit_test_teardown(test_reasons_say_why_and_since, teardown),
		cmocka_unit_test_teardown(test_reasons_without_wall_clock, teardown),
		cmocka_unit_test_teardown(test_refused_while_recovering_still_lost, teardown),
		cmocka_unit_test_teardown(test_grace_forever, teardown),
		cmocka_unit_test_teardown(test_grace_zero, teardown),
		cmocka_unit_test_teardown(test_heartbeat_content_and_period,
					  teardown),
		cmocka_unit_test_teardown(test_heartbeat_refused_while_recovering,
					  teardown),
		cmocka_unit_test_teardown(test_reasons_ascii_only,
					  teardown),
		cmocka_unit_test_teardown(test_change_heartbeats_at_turn_end,
					  teardown),
		cmocka_unit_test_teardown(test_change_heartbeat_rate_limit,
					  teardown),
		cmocka_unit_test_teardown(test_undrained_actions_superseded,
					  teardown),
		cmocka_unit_test_teardown(test_ready_needs_views_and_generations,
					  teardown),
		cmocka_unit_test_teardown(test_status_rate_limit, teardown),
		cmocka_unit_test_teardown(test_dropped_domain_gets_no_status,
					  teardown),
		cmocka_unit_test_teardown(test_status_waits_for_kernel,
					  teardown),
		cmocka_unit_test_teardown(test_strangers_and_unshared_ignored,
					  teardown),
		cmocka_unit_test_teardown(test_heartbeat_views_bounded,
					  teardown),
		cmocka_unit_test_teardown(test_set_timing, teardown),
		cmocka_unit_test_teardown(test_out_of_memory_changes_nothing,
					  teardown),
		cmocka_unit_test_teardown(test_random_inputs_deterministic,
					  teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
