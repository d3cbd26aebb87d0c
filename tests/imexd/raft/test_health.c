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
 *
 * One program: this file holds the domains, the part under test and its
 * recorded actions, which the parts share (test_health.h), and main(); the
 * tests are in test_health_states.c, test_health_beats.c,
 * test_health_bounds.c and test_health_random.c.
 */
#include "test_health.h"

/* ---- domains -------------------------------------------------------------- */

struct imexd_def *defs[NDEFS];	/* not an array: struct imexd_def pads */

void uuid_of(uint8_t u[16], uint8_t id)
{
	memset(u, 0x5a, 16);
	u[0] = id;
}

/* Domain slot @id (uuid from it): @members space-separated. */
const struct imexd_def *mk(uint8_t id, const char *name, uint64_t gen,
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


struct imexd_health *H;
static struct rec recs[NRECS];
size_t nrec;

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

void drain(void)
{
	struct imexd_health_action a;

	while (imexd_health_next(H, &a))
		record(&a);
}

/* After an input, as the daemon does: the timer runs at once when the
 * deadline has come (heartbeats on change go at the end of the turn). */
void settle(uint64_t now)
{
	drain();
	if (imexd_health_deadline(H) <= now) {
		imexd_health_timer(H, now);
		drain();
	}
}

void reset(void)
{
	nrec = 0;
}

size_t count(int type, const char *to)
{
	size_t i, k = 0;

	for (i = 0; i < nrec; i++)
		if (recs[i].type == type && (!to || !strcmp(recs[i].to, to)))
			k++;
	return k;
}

const struct rec *last(int type, const char *to)
{
	size_t i = nrec;

	while (i--)
		if (recs[i].type == type && (!to || !strcmp(recs[i].to, to)))
			return &recs[i];
	fail_msg("no action %d for %s", type, to ? to : "-");
	return NULL;
}

size_t logs_with(const char *needle)
{
	size_t i, k = 0;

	for (i = 0; i < nrec; i++)
		if (recs[i].type == IMEXD_HEALTH_LOG &&
		    strstr(recs[i].text, needle))
			k++;
	return k;
}

/* Lines with @needle whose fields are exactly @msgid, @dom and @node. */
size_t logs_with_fields(const char *needle, const char *msgid,
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

void start(uint32_t hb, uint32_t miss, int64_t grace)
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

void doms(uint64_t now, int n, ...)
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

void up(uint64_t now, const char *name)
{
	imexd_health_peer_up(H, now, name);
	settle(now);
}

void down(uint64_t now, const char *name)
{
	imexd_health_peer_down(H, now, name);
	settle(now);
}

void tick(uint64_t now)
{
	imexd_health_timer(H, now);
	drain();
}

void applied(uint64_t now, uint8_t id, uint64_t gen)
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
void hbeat(uint64_t now, const char *from, const char *views,
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

bool ready(uint8_t id)
{
	uint8_t u[16];

	uuid_of(u, id);
	return imexd_health_ready(H, u);
}

uint8_t st(const char *name)
{
	return imexd_health_peer_state(H, name);
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
