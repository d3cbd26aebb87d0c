// SPDX-License-Identifier: GPL-2.0
/*
 * test_fsm: determinism over random command sequences, and out of memory
 * (-ENOMEM and nothing changed, at every allocation).
 */
#include "test_fsm.h"

/* ---- determinism over random command sequences ------------------------------ */

#define RNODES	9	/* n0..n7 report; n8 never does */
#define RDOMS	16

/* @k distinct ids below @range, increasing. */
static uint32_t rand_ids(uint32_t *ids, uint32_t k, uint32_t range)
{
	uint8_t used[64] = { 0 };
	uint32_t n = 0, id;

	while (n < k) {
		id = rndn(range);
		if (!used[id]) {
			used[id] = 1;
			n++;
		}
	}
	for (id = 0, n = 0; id < range; id++)
		if (used[id])
			ids[n++] = id;
	return n;
}

static struct imexd_cmd random_cmd(const struct imexd_fsm *fsm, unsigned int step)
{
	static const uint32_t maxch[] = { 8, 12, 16 };
	char name[IMEX_NAME_MAX], csv[64];
	uint32_t ids[20], n, i, w = rndn(100);
	const struct imexd_def *d;
	struct imexd_cmd c;

	/* Commands on a domain mostly name one that exists. */
	d = imexd_fsm_domain_count(fsm) && rndn(4) && w >= 40 ?
	    imexd_fsm_domain_at(fsm, rndn((uint32_t)imexd_fsm_domain_count(fsm))) :
	    NULL;
	snprintf(name, sizeof(name), "%s", d ? d->name : "");
	if (!d)
		snprintf(name, sizeof(name), "d%u", rndn(RDOMS));
	d = imexd_fsm_domain(fsm, name);
	if (step < RNODES - 1 || w < 8) {
		uint32_t k = step < RNODES - 1 ? step : rndn(RNODES - 1);
		char node[8];

		snprintf(node, sizeof(node), "n%u", k);
		c = node_cmd(node, k == 7 ? FAB2 : FAB1, k == 6,
			     maxch[rndn(10) ? (k % 3) : rndn(3)]);
		return c;
	}
	if (w < 40) {
		/*
		 * Mostly distinct members of n0..n5, which share a fabric
		 * and partition.
		 */
		uint32_t seen = 0, k;
		size_t m = 0;

		for (i = 0, n = 1 + rndn(4); i < n; i++) {
			do
				k = rndn(8) ? rndn(6) : rndn(RNODES);
			while ((seen & (1u << k)) && rndn(20));
			seen |= 1u << k;
			m += (size_t)snprintf(csv + m, sizeof(csv) - m, "%sn%u",
					      i ? "," : "", k);
		}
		w = rndn(10);
		n = w < 4 ? rand_ids(ids, 1 + rndn(3), 18) : 0;
		c = create_cmd(name, rndn(8) ? 1 + rndn(60000) : 1 + rndn(RDOMS),
			       csv, w >= 4 && w < 9 ? rndn(5) : 0, ids, n);
		return c;
	}
	if (w < 46)
		return delete_cmd(name);
	if (w < 70) {
		n = rndn(2) ? rand_ids(ids, 1 + rndn(3), 18) : 0;
		return alloc_cmd(name, n ? 0 : 1 + rndn(3), ids, n);
	}
	if (w < 85) {
		if (d && d->nchannels && rndn(4)) {
			for (i = 0, n = 0; i < d->nchannels && n < 20; i++)
				if (rndn(2))
					ids[n++] = d->channels[i].id;
			if (!n)
				ids[n++] = d->channels[0].id;
		} else {
			n = rand_ids(ids, 1 + rndn(2), 18);
		}
		return free_cmd(name, ids, n);
	}
	if (d && rndn(5))
		snprintf(csv, sizeof(csv), "%s", d->members[rndn(d->nmembers)].name);
	else
		snprintf(csv, sizeof(csv), "n%u", rndn(RNODES));
	if (w < 93) {
		char with[8];

		snprintf(with, sizeof(with), "n%u", rndn(RNODES));
		return replace_cmd(name, csv, with);
	}
	return evict_cmd(name, csv);
}

static void same_result(const struct imexd_fsm_result *a,
			const struct imexd_fsm_result *b)
{
	assert_int_equal(a->error, b->error);
	assert_string_equal(a->message, b->message);
	assert_true(imexd_def_equal(&a->def, &b->def));
	assert_int_equal(a->nids, b->nids);
	if (a->nids)
		assert_memory_equal(a->ids, b->ids, a->nids * sizeof(*a->ids));
}

/*
 * Three state machines take the same commands: A as built, B through the
 * codec, C from a restore of A's snapshot every 64 steps.  After every
 * step their snapshots are the same bytes, and a refusal left A's as it
 * was.  The restores also re-check every invariant of the table.
 */
void test_random_sequences_deterministic(void **state)
{
	struct imexd_fsm *a = imexd_fsm_new(), *b = imexd_fsm_new(),
			 *c = imexd_fsm_new();
	unsigned int step, steps = steps_from_env(3000);
	unsigned int done[IMEXD_CMD_TYPE_MAX + 1] = { 0 }, refusals = 0;

	(void)state;
	seed_from_env("random command sequences");
	for (step = 0; step < steps; step++) {
		struct imexd_cmd cmd = random_cmd(a, step), dec;
		struct imexd_fsm_result ra, rb, rc;
		struct blob sa0 = snap(a), sa, sb, sc, e;
		uint64_t index = (uint64_t)step * 3 + 1 + rndn(3);

		if (imexd_cmd_encode(&cmd, &e.p, &e.n, NULL) == 0) {
			assert_int_equal(imexd_cmd_decode(e.p, e.n, &dec, NULL), 0);
			free(e.p);
		} else {
			dec = cmd;	/* shallow: not freed twice */
			dec.type = 0;
		}
		assert_int_equal(imexd_fsm_apply(a, index, &cmd, &ra), 0);
		assert_int_equal(imexd_fsm_apply(b, index, dec.type ? &dec : &cmd,
						 &rb), 0);
		assert_int_equal(imexd_fsm_apply(c, index, &cmd, &rc), 0);
		same_result(&ra, &rb);
		same_result(&ra, &rc);
		sa = snap(a);
		sb = snap(b);
		sc = snap(c);
		assert_same(sa, sb);
		assert_same(sa, sc);
		if (ra.error) {
			refusals++;
			assert_same(sa0, sa);
		} else {
			done[cmd.type]++;
		}
		if (step % 64 == 63) {
			struct blob s2;

			assert_int_equal(imexd_fsm_restore(c, index, sa.p, sa.n, NULL), 0);
			s2 = snap(c);
			assert_same(sa, s2);
			free(s2.p);
		}
		free(sa0.p);
		free(sa.p);
		free(sb.p);
		free(sc.p);
		imexd_fsm_result_free(&ra);
		imexd_fsm_result_free(&rb);
		imexd_fsm_result_free(&rc);
		if (dec.type)
			imexd_cmd_free(&dec);
		imexd_cmd_free(&cmd);
	}
	printf("random command sequences: %u steps, %u refused, applied: "
	       "node_set %u create %u delete %u alloc %u free %u evict %u "
	       "replace %u; "
	       "%zu domains at the end\n", steps, refusals,
	       done[IMEXD_CMD_NODE_SET], done[IMEXD_CMD_DOMAIN_CREATE],
	       done[IMEXD_CMD_DOMAIN_DELETE], done[IMEXD_CMD_CHANNEL_ALLOC],
	       done[IMEXD_CMD_CHANNEL_FREE], done[IMEXD_CMD_MEMBER_EVICT],
	       done[IMEXD_CMD_MEMBER_REPLACE], imexd_fsm_domain_count(a));
	if (steps >= 1000)
		for (step = 1; step <= IMEXD_CMD_TYPE_MAX; step++)
			assert_true(done[step] > 0);
	imexd_fsm_free(a);
	imexd_fsm_free(b);
	imexd_fsm_free(c);
}

/* ---- out of memory: -ENOMEM and nothing changed, at every allocation ---- */

/*
 * Apply @c to @t failing the 1st, 2nd, ... allocation until it goes
 * through: every failure is -ENOMEM with the table and result untouched;
 * then the outcome is the one @ref (which never fails) gets.
 */
static void apply_under_oom(struct tf *t, struct tf *ref, struct imexd_cmd c)
{
	struct imexd_fsm_result r, rr;
	uint64_t index = ++t->index;
	long k;
	int err;

	assert_int_equal(imexd_fsm_apply(ref->fsm, index, &c, &rr), 0);
	ref->index = index;
	for (k = 0;; k++) {
		struct blob before = snap(t->fsm), after;

		arm(k);
		err = imexd_fsm_apply(t->fsm, index, &c, &r);
		disarm();
		after = snap(t->fsm);
		if (err) {
			assert_int_equal(err, -ENOMEM);
			assert_same(before, after);
			assert_int_equal(imexd_fsm_last_index(t->fsm), index - 1);
			assert_null(r.ids);
			assert_null(r.def.members);
			assert_null(r.def.channels);
		}
		free(before.p);
		free(after.p);
		if (!err)
			break;
	}
	same_result(&r, &rr);
	imexd_fsm_result_free(&r);
	imexd_fsm_result_free(&rr);
	imexd_cmd_free(&c);
	{
		struct blob a = snap(t->fsm), b = snap(ref->fsm);

		assert_same(a, b);
		free(a.p);
		free(b.p);
	}
}

void test_out_of_memory_changes_nothing(void **state)
{
	struct tf t = { imexd_fsm_new(), 0 }, ref = { imexd_fsm_new(), 0 };
	struct imexd_cmd c, d;
	struct blob a, b;
	long k;
	int err;

	(void)state;
	populate(&t);
	populate(&ref);
	apply_under_oom(&t, &ref, node_cmd("new", FAB1, 0, 16));
	apply_under_oom(&t, &ref, create_cmd("k1", 11, "a,b,new", 2, NULL, 0));
	apply_under_oom(&t, &ref, create_cmd("k2", 12, "c,d", 0, (const uint32_t[]){ 13, 14 }, 2));
	apply_under_oom(&t, &ref, create_cmd("k3", 13, "c", 0, (const uint32_t[]){ 13 }, 1));
	apply_under_oom(&t, &ref, alloc_cmd("k1", 3, NULL, 0));
	apply_under_oom(&t, &ref, alloc_cmd("k1", 0, (const uint32_t[]){ 15 }, 1));
	apply_under_oom(&t, &ref, alloc_cmd("k1", 0, (const uint32_t[]){ 9 }, 1));
	apply_under_oom(&t, &ref, free_cmd("k1", (const uint32_t[]){ 15 }, 1));
	apply_under_oom(&t, &ref, replace_cmd("k1", "new", "d"));
	apply_under_oom(&t, &ref, replace_cmd("k1", "d", "new"));
	apply_under_oom(&t, &ref, evict_cmd("k1", "new"));
	apply_under_oom(&t, &ref, delete_cmd("k2"));

	/* Snapshot, restore, encode, decode. */
	a = snap(t.fsm);
	for (k = 0;; k++) {
		arm(k);
		err = imexd_fsm_snapshot(t.fsm, &b.p, &b.n);
		disarm();
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
	}
	assert_same(a, b);
	free(b.p);
	for (k = 0;; k++) {
		arm(k);
		err = imexd_fsm_restore(ref.fsm, t.index, a.p, a.n, NULL);
		disarm();
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_int_equal(imexd_fsm_last_index(ref.fsm), ref.index);
	}
	assert_true(k > 0);
	free(a.p);
	c = create_cmd("k9", 19, "a,b,c", 0, (const uint32_t[]){ 1, 2 }, 2);
	for (k = 0;; k++) {
		arm(k);
		err = imexd_cmd_encode(&c, &a.p, &a.n, NULL);
		disarm();
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
	}
	for (k = 0;; k++) {
		arm(k);
		err = imexd_cmd_decode(a.p, a.n, &d, NULL);
		disarm();
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_int_equal(d.type, 0);
		assert_null(d.u.create.members);
	}
	assert_true(k >= 2);
	imexd_cmd_free(&d);
	imexd_cmd_free(&c);
	free(a.p);
	imexd_fsm_free(t.fsm);
	imexd_fsm_free(ref.fsm);
}

