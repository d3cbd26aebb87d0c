// SPDX-License-Identifier: GPL-2.0
/* Convergence: SYNC and adoption, tombstones, eviction, restart. */
#include "harness.h"

#define DOM1 0x11

/* b holding d1 = {a, b, c} at generation 1 with channel 0, a on conn 1. */
static void holder(struct tc *t)
{
	struct imexd_def d;

	tc_def(&d, "d1", DOM1, 1, "a,b,c", 0, -1);
	tc_start(t, "b", &d, 1, &d, 1);
	tc_def_free(&d);
	tc_bind(t, 1, "a", false);
	tc_bind(t, 2, "c", false);
}

static void sync_from(struct tc *t, uint64_t conn, const char *from,
		      struct imexd_def *d)
{
	struct imexd_msg m;

	tc_msg_init(&m, IMEXD_MSG_SYNC, from, d->uuid);
	m.u.sync = *d;
	tc_deliver(t, conn, &m);
}

static void test_sync_with_a_higher_generation_is_adopted(void **state)
{
	const struct imexd_action *a;
	struct imexd_def d;
	struct tc t;

	(void)state;
	holder(&t);
	tc_def(&d, "d1", DOM1, 3, "a,b,c", 0, 1, -1);
	sync_from(&t, 1, "a", &d);
	a = tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->op, IMEX_CHANGE_ADD_CHANNELS);
	assert_int_equal(a->nchans, 1);
	assert_int_equal(a->chans[0].id, 1);
	tc_kernel_all(&t, 0, "");		/* prepared */
	assert_non_null(tc_find(&t, IMEXD_ACT_KERNEL_COMMIT, 0, 0));
	tc_kernel_all(&t, 0, "");		/* committed */
	a = tc_find(&t, IMEXD_ACT_STORE_DEF, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->def.generation, 3);
	assert_int_equal(a->def.nchannels, 2);
	/* A repeat of the same SYNC changes nothing. */
	sync_from(&t, 1, "a", &d);
	assert_null(tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0));
	tc_def_free(&d);
	tc_done(&t);
}

static void test_sync_with_a_lower_generation_is_answered(void **state)
{
	const struct imexd_action *a;
	struct imexd_def d;
	struct tc t;

	(void)state;
	holder(&t);
	tc_def(&d, "d1", DOM1, 0, "a,b,c", -1);
	sync_from(&t, 2, "c", &d);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_SYNC, 2);
	assert_non_null(a);
	assert_int_equal(a->msg.u.sync.generation, 1);
	assert_null(tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0));
	tc_def_free(&d);
	tc_done(&t);
}

static void test_tombstone_deletes_and_the_domain_stays_deleted(void **state)
{
	const struct imexd_action *a;
	struct imexd_def d;
	struct tc t;

	(void)state;
	holder(&t);
	tc_def(&d, "d1", DOM1, 2, "a,b,c", 0, -1);
	d.flags = IMEXD_DEF_DELETED;
	sync_from(&t, 1, "a", &d);
	a = tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->op, IMEX_CHANGE_DELETE);
	tc_kernel_all(&t, 0, "");
	tc_kernel_all(&t, 0, "");
	a = tc_find(&t, IMEXD_ACT_STORE_DEF, 0, 0);
	assert_non_null(a);
	assert_true(a->def.flags & IMEXD_DEF_DELETED);
	assert_int_equal(imexd_core_domains(t.core, NULL), 0);
	tc_def_free(&d);

	/* c missed the delete and offers the live domain: it is told. */
	tc_def(&d, "d1", DOM1, 1, "a,b,c", 0, -1);
	sync_from(&t, 2, "c", &d);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_SYNC, 2);
	assert_non_null(a);
	assert_true(a->msg.u.sync.flags & IMEXD_DEF_DELETED);
	assert_null(tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0));
	tc_def_free(&d);
	tc_done(&t);
}

static void test_evicted_node_deletes_the_domain_locally(void **state)
{
	const struct imexd_action *a;
	struct imexd_def d;
	struct tc t;

	(void)state;
	holder(&t);
	tc_def(&d, "d1", DOM1, 2, "a,c", 0, -1);	/* without b */
	sync_from(&t, 1, "a", &d);
	a = tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->op, IMEX_CHANGE_DELETE);
	tc_kernel_all(&t, 0, "");
	tc_kernel_all(&t, 0, "");
	assert_non_null(tc_find(&t, IMEXD_ACT_STORE_REMOVE, 0, 0));
	assert_int_equal(imexd_core_domains(t.core, NULL), 0);
	tc_def_free(&d);
	tc_done(&t);
}

static void test_member_missing_a_domain_creates_it_from_sync(void **state)
{
	const struct imexd_action *a;
	struct imexd_def d;
	struct tc t;

	(void)state;
	tc_start(&t, "b", NULL, 0, NULL, 0);
	tc_bind(&t, 1, "a", false);
	tc_def(&d, "d9", 0x99, 4, "a,b", 7, -1);
	sync_from(&t, 1, "a", &d);
	a = tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->op, IMEX_CHANGE_CREATE);
	assert_int_equal(a->def.uuid[0], 0x99);
	assert_int_equal(a->def.nchannels, 1);
	tc_kernel_all(&t, 0, "");
	tc_kernel_all(&t, 0, "");
	a = tc_find(&t, IMEXD_ACT_STORE_DEF, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->def.generation, 4);
	tc_def_free(&d);
	tc_done(&t);
}

static void test_restart_recreates_what_a_reboot_lost(void **state)
{
	const struct imexd_action *a;
	struct imexd_def d;
	struct tc t;

	(void)state;
	tc_def(&d, "d1", DOM1, 5, "a,b,c", 3, 4, -1);
	tc_start(&t, "b", NULL, 0, &d, 1);	/* stored, kernel empty */
	a = tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->op, IMEX_CHANGE_CREATE);
	assert_memory_equal(a->def.uuid, d.uuid, 16);
	assert_int_equal(a->def.nchannels, 2);
	assert_int_equal(a->def.channels[1].id, 4);
	/* Not in the kernel yet: no status for it. */
	assert_null(tc_find(&t, IMEXD_ACT_KERNEL_STATUS, 0, 0));
	tc_kernel_all(&t, 0, "");
	tc_kernel_all(&t, 0, "");
	a = tc_find(&t, IMEXD_ACT_STORE_DEF, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->def.generation, 5);
	assert_non_null(tc_find(&t, IMEXD_ACT_KERNEL_STATUS, 0, 0));
	assert_int_equal(imexd_core_domains(t.core, NULL), 1);
	tc_def_free(&d);
	tc_done(&t);
}

static void test_restart_adopts_kernel_domains_and_pushes_status(void **state)
{
	const struct imexd_def *defs[4];
	const struct imexd_action *a;
	struct imexd_def k[2], s;
	struct tc t;

	(void)state;
	tc_def(&k[0], "d1", DOM1, 0, "a,b,c", 0, -1);	/* stored too */
	tc_def(&k[1], "d2", 0x22, 0, "b", 5, -1);	/* kernel only */
	tc_def(&s, "d1", DOM1, 7, "a,b,c", 0, -1);
	tc_start(&t, "b", k, 2, &s, 1);
	assert_int_equal(imexd_core_domains(t.core, defs), 2);
	assert_int_equal(defs[0]->generation, 7);	/* matches its store */
	assert_int_equal(defs[1]->generation, 0);	/* unknown: peers tell */
	a = tc_find(&t, IMEXD_ACT_STORE_DEF, 0, 0);
	assert_non_null(a);
	assert_string_equal(a->def.name, "d2");
	/* One status per domain at start; d2 has only us: READY. */
	assert_int_equal(tc_count(&t, IMEXD_ACT_KERNEL_STATUS, 0), 2);
	assert_null(tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0));
	tc_def_free(&k[0]);
	tc_def_free(&k[1]);
	tc_def_free(&s);
	tc_done(&t);
}

static void test_kernel_differing_from_store_takes_generation_zero(void **state)
{
	const struct imexd_def *defs[2];
	struct imexd_def k, s;
	struct tc t;

	(void)state;
	tc_def(&k, "d1", DOM1, 0, "a,b,c", 0, 1, -1);
	tc_def(&s, "d1", DOM1, 7, "a,b,c", 0, -1);
	tc_start(&t, "b", &k, 1, &s, 1);
	assert_int_equal(imexd_core_domains(t.core, defs), 1);
	assert_int_equal(defs[0]->generation, 0);
	assert_int_equal(defs[0]->nchannels, 2);	/* the kernel's truth */
	tc_def_free(&k);
	tc_def_free(&s);
	tc_done(&t);
}

static void test_digest_mismatch_twice_triggers_sync(void **state)
{
	struct tc t;

	(void)state;
	holder(&t);
	tc_heartbeat(&t, 1, "a", 12345, 0);
	assert_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_SYNC, 1));
	tc_heartbeat(&t, 1, "a", 12345, 0);
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_SYNC, 1));
	tc_done(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_with_a_higher_generation_is_adopted),
		cmocka_unit_test(test_sync_with_a_lower_generation_is_answered),
		cmocka_unit_test(test_tombstone_deletes_and_the_domain_stays_deleted),
		cmocka_unit_test(test_evicted_node_deletes_the_domain_locally),
		cmocka_unit_test(test_member_missing_a_domain_creates_it_from_sync),
		cmocka_unit_test(test_restart_recreates_what_a_reboot_lost),
		cmocka_unit_test(test_restart_adopts_kernel_domains_and_pushes_status),
		cmocka_unit_test(test_kernel_differing_from_store_takes_generation_zero),
		cmocka_unit_test(test_digest_mismatch_twice_triggers_sync),
	};

	return cmocka_run_group_tests_name("core: convergence and restart",
					   tests, NULL, NULL);
}
