// SPDX-License-Identifier: GPL-2.0
/*
 * test_health: determinism over random inputs (IMEXD_HEALTH_SEED=N).
 */
#include "test_health.h"

/* ---- determinism over random inputs ----------------------------------------- */

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

void test_random_inputs_deterministic(void **state)
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
