// SPDX-License-Identifier: GPL-2.0
/*
 * The import broker's random run: two brokers, a lossy link and a kernel
 * on each side; every import ends exactly once and the same seed gives
 * the same actions (IMEXD_BROKER_SEED=N replays).  See test_broker.c.
 */
#include "test_broker.h"
#include "test_rng.h"

/* ---- random run: two brokers, a lossy link, a kernel on each side ----
 *
 * Every import must end exactly once (DONE), and the same seed must give
 * the same actions (a hash of them) twice.
 */
struct flight {
	char to;			/* 'a' or 'b' */
	struct imexd_msg msg;
};

struct run {
	struct imexd_fsm *fsm;
	struct imexd_broker *br[2];
	bool up;			/* the a-b link */
	struct flight *net;
	size_t nnet;
	uint64_t ops[2][64];		/* checks the kernel still owes */
	size_t nops[2];
	uint8_t *done;			/* per import id: DONEs seen */
	unsigned int ends[5];		/* ok, refused, unreachable, timed out,
					 * shut down */
	uint64_t next_id;
	uint64_t hash;
};

static void mix(struct run *r, uint64_t v)
{
	r->hash = (r->hash ^ v) * 0x100000001b3ull;
}

static void run_drain(struct run *r, int side)
{
	struct imexd_broker_action a;

	while (imexd_broker_next(r->br[side], &a)) {
		mix(r, a.type);
		switch (a.type) {
		case IMEXD_BROKER_SEND:
			mix(r, a.msg->type);
			assert_string_equal(a.to, side ? "a" : "b");
			if (r->up && r->nnet < 4096) {
				r->net[r->nnet].to = side ? 'a' : 'b';
				r->net[r->nnet++].msg = *a.msg;
			}
			break;
		case IMEXD_BROKER_DONE:
			mix(r, a.import_id);
			mix(r, (uint64_t)a.error);
			assert_true(a.import_id < r->next_id);
			r->done[a.import_id]++;
			assert_int_equal(r->done[a.import_id], 1);
			r->ends[a.error == 0 ? 0 : a.error == EHOSTUNREACH ? 2 :
				a.error == ETIMEDOUT ? 3 :
				a.error == ESHUTDOWN ? 4 : 1]++;
			break;
		case IMEXD_BROKER_CHECK:
			mix(r, a.op_id);
			if (r->nops[side] < 64)
				r->ops[side][r->nops[side]++] = a.op_id;
			break;
		case IMEXD_BROKER_REVOKE:
			mix(r, a.reason);
			break;
		case IMEXD_BROKER_LOG:
			assert_non_null(a.text);
			break;
		}
	}
}

static uint64_t random_run(uint64_t seed, unsigned int steps, bool say)
{
	static const char *const names[2] = { "a", "b" };
	struct run r = { 0 };
	uint64_t now = 0;
	unsigned int s;
	int side;

	rng = seed;
	fsm_index = 0;
	r.fsm = table();
	r.net = calloc(4096, sizeof(*r.net));
	r.done = calloc(steps + 1, 1);
	assert_non_null(r.net);
	assert_non_null(r.done);
	r.next_id = 1;
	r.hash = 0xcbf29ce484222325ull;
	for (side = 0; side < 2; side++) {
		assert_int_equal(imexd_broker_new(names[side], &r.br[side]), 0);
		imexd_broker_peer_up(r.br[side], 0, names[!side], false, r.fsm);
		run_drain(&r, side);
	}
	r.up = true;
	for (s = 0; s < steps; s++) {
		uint64_t k = rnd() % 100;

		side = (int)(rnd() & 1);
		now += rnd() % 500;
		if (k < 25) {
			struct imexd_import imp = imp_of(r.next_id++,
							 names[!side], DOM1,
							 rnd() % 8);

			imexd_broker_import(r.br[side], now, r.fsm, &imp);
		} else if (k < 60 && r.nnet) {
			size_t i = rnd() % r.nnet;
			struct flight f = r.net[i];

			r.net[i] = r.net[--r.nnet];
			side = f.to == 'b';
			imexd_broker_msg(r.br[side], now, r.fsm,
					 names[!side], &f.msg);
		} else if (k < 80 && r.nops[side]) {
			size_t i = rnd() % r.nops[side];
			uint64_t op = r.ops[side][i];

			r.ops[side][i] = r.ops[side][--r.nops[side]];
			imexd_broker_checked(r.br[side], now, op,
					     rnd() % 2 ? 0 : EPERM,
					     (const uint8_t *)"d", 1);
		} else if (k < 85) {
			imexd_broker_export_del(r.br[side], now, r.fsm,
						rnd() % 8, DOM1, 0);
		} else if (k < 86 && r.up) {
			r.up = false;
			r.nnet = 0;
			imexd_broker_peer_down(r.br[0], now, "b");
			run_drain(&r, 0);
			imexd_broker_peer_down(r.br[1], now, "a");
			side = 1;
		} else if (k < 88 && !r.up) {
			imexd_broker_peer_lost(r.br[side], now,
					       names[!side], r.fsm);
		} else if (k < 98 && !r.up) {
			bool restarted = rnd() % 4 == 0;

			r.up = true;
			imexd_broker_peer_up(r.br[0], now, "b", restarted,
					     r.fsm);
			run_drain(&r, 0);
			imexd_broker_peer_up(r.br[1], now, "a", restarted,
					     r.fsm);
			side = 1;
		} else {
			now += rnd() % 2 ? rnd() % 3000 : rnd() % 60000;
			imexd_broker_timer(r.br[side], now);
			run_drain(&r, side);
			/* Nothing due is left behind. */
			assert_true(imexd_broker_deadline(r.br[side]) > now);
		}
		run_drain(&r, side);
	}
	/* In the end, every import ends: by answer, timeout or shutdown. */
	for (side = 0; side < 2; side++) {
		imexd_broker_timer(r.br[side], now + 1);
		run_drain(&r, side);
		imexd_broker_shutdown(r.br[side], now + 1);
		run_drain(&r, side);
		imexd_broker_free(r.br[side]);
	}
	for (s = 1; s < r.next_id; s++)
		if (r.done[s] != 1)
			fail_msg("import %u ended %u times (seed %llu)", s,
				 r.done[s], (unsigned long long)seed);
	if (say)
		printf("  %llu imports: %u answered, %u refused, %u unreachable, %u timed out, %u at shutdown\n",
		       (unsigned long long)(r.next_id - 1), r.ends[0],
		       r.ends[1], r.ends[2], r.ends[3], r.ends[4]);
	imexd_fsm_free(r.fsm);
	free(r.net);
	free(r.done);
	return r.hash;
}

void test_random_runs(void **state)
{
	const char *s = getenv("IMEXD_BROKER_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 0) :
			(uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	unsigned int i, runs = s ? 1 : 10;

	(void)state;
	for (i = 0; i < runs; i++, seed++) {
		uint64_t h1, h2;

		if (!seed)
			seed = 1;
		printf("broker random run: seed %llu (replay: IMEXD_BROKER_SEED=%llu)\n",
		       (unsigned long long)seed, (unsigned long long)seed);
		h1 = random_run(seed, 3000, true);
		h2 = random_run(seed, 3000, false);
		if (h1 != h2)
			fail_msg("seed %llu: two runs, two results",
				 (unsigned long long)seed);
	}
}
