// SPDX-License-Identifier: GPL-2.0
/*
 * The reconciler's plans, applied to a model kernel that refuses what the
 * real one refuses (a channel in two domains, a name on two UUIDs, a domain
 * not naming this node): every step must be accepted, the end state must be
 * exactly what is wanted, and planning again must find nothing to do.
 * Randomized cases print their seed; IMEXD_TEST_SEED=N replays one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "reconcile.h"

#define NODE "n0"
#define KMAX 32

struct kernel {
	size_t n;
	struct imexd_def *d;	/* KMAX of them */
};

static void kernel_init(struct kernel *k)
{
	k->n = 0;
	k->d = calloc(KMAX, sizeof(*k->d));
	assert_non_null(k->d);
}

static void kernel_free(struct kernel *k)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		imexd_def_free(&k->d[i]);
	k->n = 0;
	free(k->d);
}

/* The model kernel's SET/REMOVE: 0, or the errno the real one gives. */
static int kernel_step(struct kernel *k, const struct imexd_rec_step *s)
{
	size_t i, at = k->n;
	uint32_t c;

	for (i = 0; i < k->n; i++)
		if (!memcmp(k->d[i].uuid, s->def.uuid, 16))
			at = i;
	if (s->type == IMEXD_REC_REMOVE) {
		if (at == k->n || strcmp(k->d[at].name, s->def.name))
			return ENOENT;
		imexd_def_free(&k->d[at]);
		k->d[at] = k->d[--k->n];
		return 0;
	}
	if (!imexd_def_has_member(&s->def, NODE))
		return ENOLINK;
	for (i = 0; i < k->n; i++) {
		if (i == at)
			continue;
		if (!strcmp(k->d[i].name, s->def.name))
			return EEXIST;
		for (c = 0; c < s->def.nchannels; c++) {
			uint32_t j;

			for (j = 0; j < k->d[i].nchannels; j++)
				if (k->d[i].channels[j].id == s->def.channels[c].id)
					return EADDRINUSE;
		}
	}
	if (at == k->n) {
		assert_true(k->n < KMAX);
		k->n++;
	} else {
		imexd_def_free(&k->d[at]);
	}
	assert_int_equal(imexd_def_copy(&k->d[at], &s->def), 0);
	return 0;
}

/* A domain: members from a bit mask over n0..n3, channels from a mask. */
static void mkdef(struct imexd_def *d, const char *name, uint8_t uuid,
		  unsigned members, uint32_t chans, uint64_t gen)
{
	unsigned i;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->uuid[0] = uuid;
	d->uuid[15] = 1;
	d->generation = gen;
	d->members = calloc(4, sizeof(*d->members));
	d->channels = calloc(32, sizeof(*d->channels));
	assert_non_null(d->members);
	assert_non_null(d->channels);
	for (i = 0; i < 4; i++)
		if (members & (1u << i))
			snprintf(d->members[d->nmembers++].name, IMEX_NAME_MAX,
				 "n%u", i);
	for (i = 0; i < 32; i++)
		if (chans & (1u << i)) {
			d->channels[d->nchannels].id = i;
			d->channels[d->nchannels].mode = 0600;
			d->nchannels++;
		}
}

static void defs_free(struct imexd_def *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		imexd_def_free(&d[i]);
}

/* Plan, apply every step (each must be accepted), check the end state. */
static size_t converge(struct kernel *k, const struct imexd_def *want,
		       size_t nwant)
{
	struct imexd_rec_plan plan;
	size_t i, j, nmine = 0, steps;

	assert_int_equal(imexd_rec_plan(NODE, want, nwant, k->d, k->n, &plan), 0);
	steps = plan.n;
	for (i = 0; i < plan.n; i++) {
		int err = kernel_step(k, &plan.steps[i]);

		if (err)
			fail_msg("step %zu (%s %s) refused: errno %d", i,
				 plan.steps[i].type == IMEXD_REC_SET ? "SET" : "REMOVE",
				 plan.steps[i].def.name, err);
	}
	imexd_rec_plan_free(&plan);

	for (i = 0; i < nwant; i++) {
		bool found = false;

		if (!imexd_def_has_member(&want[i], NODE))
			continue;
		nmine++;
		for (j = 0; j < k->n; j++)
			found |= imexd_def_equal(&k->d[j], &want[i]) == 1;
		if (!found)
			fail_msg("kernel lacks wanted domain %s", want[i].name);
	}
	assert_int_equal(k->n, nmine);

	assert_int_equal(imexd_rec_plan(NODE, want, nwant, k->d, k->n, &plan), 0);
	assert_int_equal(plan.n, 0);
	imexd_rec_plan_free(&plan);
	return steps;
}

static void test_new_domain_set_once(void **state)
{
	struct kernel k;
	struct imexd_def want[2];

	(void)state;
	kernel_init(&k);
	mkdef(&want[0], "job1", 1, 0x7, 0x3, 5);
	mkdef(&want[1], "other", 2, 0x6, 0x3, 6);	/* not naming n0 */
	assert_int_equal(converge(&k, want, 2), 1);
	kernel_free(&k);
	defs_free(want, 2);
}

static void test_deleted_and_evicted_removed(void **state)
{
	struct kernel k;
	struct imexd_def have[2], want[1];
	struct imexd_rec_step s = { .type = IMEXD_REC_SET };

	(void)state;
	kernel_init(&k);
	mkdef(&have[0], "gone", 1, 0x3, 0x1, 3);
	mkdef(&have[1], "evicted", 2, 0x3, 0x2, 4);
	s.def = have[0];
	assert_int_equal(kernel_step(&k, &s), 0);
	s.def = have[1];
	assert_int_equal(kernel_step(&k, &s), 0);
	mkdef(&want[0], "evicted", 2, 0x2, 0x2, 9);	/* n0 evicted */
	assert_int_equal(converge(&k, want, 1), 2);
	assert_int_equal(k.n, 0);
	kernel_free(&k);
	defs_free(have, 2);
	defs_free(want, 1);
}

/* a: {0,1} → {0}, b: {} → {1, 2}: a gives 1 back before b takes it. */
static void test_channel_moves_between_domains(void **state)
{
	struct kernel k;
	struct imexd_def have, want[2];
	struct imexd_rec_step s = { .type = IMEXD_REC_SET };
	struct imexd_rec_plan plan;

	(void)state;
	kernel_init(&k);
	mkdef(&have, "a", 1, 0x1, 0x3, 1);
	s.def = have;
	assert_int_equal(kernel_step(&k, &s), 0);
	mkdef(&want[0], "a", 1, 0x1, 0x1, 7);
	mkdef(&want[1], "b", 2, 0x1, 0x6, 8);
	/* b sorts after a, but a test on names alone would not show the order. */
	assert_int_equal(imexd_rec_plan(NODE, want, 2, k.d, k.n, &plan), 0);
	assert_int_equal(plan.n, 2);
	assert_string_equal(plan.steps[0].def.name, "a");
	assert_string_equal(plan.steps[1].def.name, "b");
	imexd_rec_plan_free(&plan);
	assert_int_equal(converge(&k, want, 2), 2);
	kernel_free(&k);
	imexd_def_free(&have);
	defs_free(want, 2);
}

/* a: {0} → {1}, b: {1} → {0}: both go through an intermediate state. */
static void test_channels_swapped(void **state)
{
	struct kernel k;
	struct imexd_def have[2], want[2];
	struct imexd_rec_step s = { .type = IMEXD_REC_SET };

	(void)state;
	kernel_init(&k);
	mkdef(&have[0], "a", 1, 0x1, 0x1, 1);
	mkdef(&have[1], "b", 2, 0x1, 0x2, 2);
	s.def = have[0];
	assert_int_equal(kernel_step(&k, &s), 0);
	s.def = have[1];
	assert_int_equal(kernel_step(&k, &s), 0);
	mkdef(&want[0], "a", 1, 0x1, 0x2, 3);
	mkdef(&want[1], "b", 2, 0x1, 0x1, 4);
	assert_int_equal(converge(&k, want, 2), 4);
	kernel_free(&k);
	defs_free(have, 2);
	defs_free(want, 2);
}

/* The name came back on another UUID while this node was away. */
static void test_name_reused_by_new_domain(void **state)
{
	struct kernel k;
	struct imexd_def have, want;
	struct imexd_rec_step s = { .type = IMEXD_REC_SET };

	(void)state;
	kernel_init(&k);
	mkdef(&have, "job", 1, 0x1, 0x1, 1);
	s.def = have;
	assert_int_equal(kernel_step(&k, &s), 0);
	mkdef(&want, "job", 9, 0x3, 0x1, 50);
	assert_int_equal(converge(&k, &want, 1), 2);
	assert_int_equal(k.d[0].uuid[0], 9);
	kernel_free(&k);
	imexd_def_free(&have);
	imexd_def_free(&want);
}

static void test_bad_arguments(void **state)
{
	struct imexd_rec_plan plan;

	(void)state;
	assert_int_equal(imexd_rec_plan(NODE, NULL, 1, NULL, 0, &plan), -EINVAL);
	assert_int_equal(plan.n, 0);
	assert_int_equal(imexd_rec_plan(NULL, NULL, 0, NULL, 0, &plan), -EINVAL);
	assert_int_equal(imexd_rec_plan(NODE, NULL, 0, NULL, 0, &plan), 0);
	assert_int_equal(plan.n, 0);
	imexd_rec_plan_free(&plan);
}

/*
 * Random kernel states and wanted tables (each valid on its own), over 8
 * names, 10 UUIDs, 4 nodes and 12 channels.
 */
static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

static size_t random_table(uint64_t *seed, struct imexd_def *d, bool only_n0)
{
	uint32_t used = 0;
	unsigned names = 0, uuids = 0;
	size_t n = 0, i, want = rnd(seed) % 6;

	for (i = 0; i < want; i++) {
		unsigned name = rnd(seed) % 8, uuid = 1 + rnd(seed) % 10;
		unsigned members = (rnd(seed) % 15) + 1;
		uint32_t chans = rnd(seed) & 0xfff;
		char nm[8];

		if (only_n0)
			members |= 1;
		if (names & (1u << name) || uuids & (1u << uuid))
			continue;
		/* Disjoint channels among the domains naming n0. */
		if (members & 1) {
			chans &= ~used;
			used |= chans;
		}
		names |= 1u << name;
		uuids |= 1u << uuid;
		snprintf(nm, sizeof(nm), "d%u", name);
		mkdef(&d[n++], nm, (uint8_t)uuid, members, chans, rnd(seed) % 4);
	}
	return n;
}

static void test_random_tables_converge(void **state)
{
	const char *env = getenv("IMEXD_TEST_SEED");
	uint64_t first = env ? strtoull(env, NULL, 0) : 1, seed;
	unsigned long long shown;
	unsigned runs = env ? 1 : 5000, r;
	size_t steps = 0;

	(void)state;
	for (r = 0; r < runs; r++) {
		struct imexd_def *have = calloc(8, sizeof(*have));
		struct imexd_def *want = calloc(8, sizeof(*want));
		struct kernel k;
		struct imexd_rec_step s = { .type = IMEXD_REC_SET };
		size_t nh, nw, i;

		assert_non_null(have);
		assert_non_null(want);
		kernel_init(&k);
		seed = first + r;
		nh = random_table(&seed, have, true);
		nw = random_table(&seed, want, false);
		for (i = 0; i < nh; i++) {
			s.def = have[i];
			assert_int_equal(kernel_step(&k, &s), 0);
		}
		shown = first + r;
		if (env || r % 1000 == 0)
			printf("reconcile: seed %llu\n", shown);
		steps += converge(&k, want, nw);
		kernel_free(&k);
		defs_free(have, nh);
		defs_free(want, nw);
		free(have);
		free(want);
	}
	printf("reconcile: %u random cases from seed %llu converged in %zu steps\n",
	       runs, (unsigned long long)first, steps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_domain_set_once),
		cmocka_unit_test(test_deleted_and_evicted_removed),
		cmocka_unit_test(test_channel_moves_between_domains),
		cmocka_unit_test(test_channels_swapped),
		cmocka_unit_test(test_name_reused_by_new_domain),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_random_tables_converge),
	};

	return cmocka_run_group_tests_name("reconcile", tests, NULL, NULL);
}
