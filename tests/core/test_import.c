// SPDX-License-Identifier: GPL-2.0
/* The core's remote imports: requests, checks, answers, revocations. */
#include "harness.h"

#define DOM1 0x11
#define DOM2 0x22

/* Node @self holding d1 = {a, b, c} (channels 0, 1) and d2 = {a, d}. */
static void start_two(struct tc *t, const char *self)
{
	struct imexd_def d[2];

	tc_def(&d[0], "d1", DOM1, 1, "a,b,c", 0, 1, -1);
	tc_def(&d[1], "d2", DOM2, 1, "a,d", 2, -1);
	tc_start(t, self, d, 2, d, 2);
	tc_def_free(&d[0]);
	tc_def_free(&d[1]);
}

static void kimport(struct tc *t, uint64_t id, uint8_t node, uint64_t handle,
		    uint8_t dom, uint32_t chan)
{
	struct imexd_import imp;

	memset(&imp, 0, sizeof(imp));
	imp.import_id = id;
	memset(imp.handle_node, node, 16);
	imp.handle_id = handle;
	memset(imp.domain_uuid, dom, 16);
	imp.channel_id = chan;
	imexd_core_import(t->core, t->now, &imp);
	tc_drain(t);
}

static const struct imexd_action *done_of(const struct tc *t, uint64_t id)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->a[i].type == IMEXD_ACT_IMPORT_DONE &&
		    t->a[i].import_id == id)
			return &t->a[i];
	return NULL;
}

static void resp(struct tc *t, uint64_t conn, const char *from, uint8_t dom,
		 uint64_t tag, int status, const char *desc)
{
	struct imexd_msg m;
	uint8_t u[16];

	memset(u, dom, 16);
	tc_msg_init(&m, IMEXD_MSG_IMPORT_RESP, from, u);
	m.u.import_resp.tag = tag;
	m.u.import_resp.status = status;
	if (desc) {
		m.u.import_resp.desc_len = (uint16_t)strlen(desc);
		memcpy(m.u.import_resp.desc, desc, strlen(desc));
	}
	tc_deliver(t, conn, &m);
}

static void test_import_is_one_request_and_one_answer(void **state)
{
	const struct imexd_action *a;
	struct tc t;

	(void)state;
	start_two(&t, "a");
	tc_bind(&t, 1, "b", true);
	kimport(&t, 500, 2, 77, DOM1, 1);
	assert_int_equal(t.n, 1);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_IMPORT_REQ, 1);
	assert_non_null(a);
	assert_true(a->msg.u.import_req.tag == 500);
	assert_true(a->msg.u.import_req.handle_id == 77);
	assert_int_equal(a->msg.u.import_req.channel_id, 1);
	assert_int_equal(a->msg.domain_uuid[0], DOM1);

	resp(&t, 1, "b", DOM1, 500, 0, "mem0");
	a = done_of(&t, 500);
	assert_non_null(a);
	assert_int_equal(a->error, 0);
	assert_int_equal(a->desc_len, 4);
	assert_memory_equal(a->desc, "mem0", 4);
	/* A second answer to the same tag is nobody's. */
	resp(&t, 1, "b", DOM1, 500, 0, "mem0");
	assert_null(done_of(&t, 500));
	tc_done(&t);
}

static void test_import_refusals_name_the_reason(void **state)
{
	const struct imexd_action *a;
	struct tc t;

	(void)state;
	start_two(&t, "a");
	tc_bind(&t, 1, "b", true);
	tc_bind(&t, 2, "d", true);
	/* d is known (HELLO) but not a member of d1. */
	kimport(&t, 1, 4, 9, DOM1, 0);
	a = done_of(&t, 1);
	assert_non_null(a);
	assert_int_equal(a->error, EPERM);
	assert_non_null(strstr(a->text, "not a member of domain d1"));
	/* c is a member that never said HELLO: its UUID may be the handle's. */
	kimport(&t, 2, 9, 9, DOM1, 0);
	assert_int_equal(done_of(&t, 2)->error, EHOSTUNREACH);
	/* In d2 every member is known: an unknown UUID is no member. */
	kimport(&t, 3, 9, 9, DOM2, 2);
	assert_int_equal(done_of(&t, 3)->error, EPERM);
	/* A domain this node does not hold. */
	kimport(&t, 4, 2, 9, 0x33, 0);
	assert_int_equal(done_of(&t, 4)->error, EHOSTUNREACH);
	/* A member whose connection dropped. */
	imexd_core_conn_down(t.core, t.now, 1);
	tc_drain(&t);
	kimport(&t, 5, 2, 9, DOM1, 0);
	assert_int_equal(done_of(&t, 5)->error, EHOSTUNREACH);
	assert_int_equal(tc_count(&t, IMEXD_ACT_SEND, IMEXD_MSG_IMPORT_REQ), 0);
	tc_done(&t);
}

static void test_lost_connection_and_silence_fail_pending_imports(void **state)
{
	struct tc t;

	(void)state;
	start_two(&t, "a");
	tc_bind(&t, 1, "b", true);
	tc_bind(&t, 2, "d", true);
	kimport(&t, 10, 2, 1, DOM1, 0);
	kimport(&t, 11, 4, 1, DOM2, 2);
	imexd_core_conn_down(t.core, t.now, 1);
	tc_drain(&t);
	assert_int_equal(done_of(&t, 10)->error, EHOSTUNREACH);
	assert_null(done_of(&t, 11));
	/* d keeps its connection alive but never answers. */
	tc_keep(&t, 2, "d");
	tc_advance(&t, IMEX_IMPORT_TIMEOUT_MAX_MS - 1);
	assert_null(done_of(&t, 11));
	tc_advance(&t, IMEX_IMPORT_TIMEOUT_MAX_MS);
	assert_int_equal(done_of(&t, 11)->error, ETIMEDOUT);
	tc_done(&t);
}

static void test_import_request_is_checked_for_the_asking_node(void **state)
{
	const struct imexd_action *a;
	struct imexd_msg m;
	uint8_t u[16];
	uint64_t op;
	struct tc t;

	(void)state;
	start_two(&t, "a");
	tc_bind(&t, 1, "b", true);
	tc_bind(&t, 2, "d", true);
	memset(u, DOM1, 16);
	tc_msg_init(&m, IMEXD_MSG_IMPORT_REQ, "b", u);
	m.u.import_req.tag = 42;
	m.u.import_req.handle_id = 7;
	m.u.import_req.channel_id = 1;
	tc_deliver(&t, 1, &m);
	a = tc_find(&t, IMEXD_ACT_IMPORT_CHECK, 0, 0);
	assert_non_null(a);
	assert_string_equal(a->peer, "b");
	assert_true(a->handle_id == 7);
	assert_int_equal(a->channel_id, 1);
	assert_int_equal(a->domain_uuid[0], DOM1);
	op = a->op_id;
	imexd_core_import_checked(t.core, t.now, op, 0, (const uint8_t *)"xyz", 3);
	tc_drain(&t);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_IMPORT_RESP, 1);
	assert_non_null(a);
	assert_true(a->msg.u.import_resp.tag == 42);
	assert_int_equal(a->msg.u.import_resp.status, 0);
	assert_int_equal(a->msg.u.import_resp.desc_len, 3);

	/* The kernel's refusal goes back as it is. */
	tc_deliver(&t, 1, &m);
	op = tc_find(&t, IMEXD_ACT_IMPORT_CHECK, 0, 0)->op_id;
	imexd_core_import_checked(t.core, t.now, op, EPERM, NULL, 0);
	tc_drain(&t);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_IMPORT_RESP, 1);
	assert_int_equal(a->msg.u.import_resp.status, EPERM);
	assert_int_equal(a->msg.u.import_resp.desc_len, 0);

	/* d asks through d1, which it is not a member of: no kernel check. */
	tc_msg_init(&m, IMEXD_MSG_IMPORT_REQ, "d", u);
	m.u.import_req.tag = 43;
	tc_deliver(&t, 2, &m);
	assert_null(tc_find(&t, IMEXD_ACT_IMPORT_CHECK, 0, 0));
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_IMPORT_RESP, 2);
	assert_non_null(a);
	assert_int_equal(a->msg.u.import_resp.status, EPERM);

	/* The asker's connection dropped before the kernel answered. */
	tc_msg_init(&m, IMEXD_MSG_IMPORT_REQ, "b", u);
	m.u.import_req.tag = 44;
	tc_deliver(&t, 1, &m);
	op = tc_find(&t, IMEXD_ACT_IMPORT_CHECK, 0, 0)->op_id;
	imexd_core_conn_down(t.core, t.now, 1);
	tc_drain(&t);
	imexd_core_import_checked(t.core, t.now, op, 0, (const uint8_t *)"x", 1);
	tc_drain(&t);
	assert_int_equal(tc_count(&t, IMEXD_ACT_SEND, IMEXD_MSG_IMPORT_RESP), 0);
	tc_done(&t);
}

static void test_export_end_reaches_every_member_even_one_away(void **state)
{
	const struct imexd_action *a;
	uint8_t u[16];
	struct tc t;

	(void)state;
	start_two(&t, "a");
	tc_bind(&t, 1, "b", true);
	tc_bind(&t, 3, "c", true);
	memset(u, DOM1, 16);
	imexd_core_conn_down(t.core, t.now, 3);		/* c is away */
	tc_drain(&t);
	imexd_core_export_del(t.core, t.now, 99, u, 1);
	tc_drain(&t);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_EXPORT_REVOKE, 1);
	assert_non_null(a);
	assert_true(a->msg.u.export_revoke.handle_id == 99);
	assert_int_equal(a->msg.domain_uuid[0], DOM1);
	assert_int_equal(tc_count(&t, IMEXD_ACT_SEND, IMEXD_MSG_EXPORT_REVOKE), 1);
	/* c comes back (same instance): it hears of the end then. */
	tc_bind(&t, 4, "c", true);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_EXPORT_REVOKE, 4);
	assert_non_null(a);
	assert_true(a->msg.u.export_revoke.handle_id == 99);
	tc_done(&t);
}

static void test_revocations_name_the_exporting_node(void **state)
{
	const struct imexd_action *a;
	struct imexd_msg m;
	uint8_t u[16];
	struct tc t;

	(void)state;
	start_two(&t, "a");
	tc_bind(&t, 1, "b", true);
	tc_bind(&t, 2, "d", true);
	memset(u, DOM1, 16);
	tc_msg_init(&m, IMEXD_MSG_EXPORT_REVOKE, "b", u);
	m.u.export_revoke.handle_id = 5;
	tc_deliver(&t, 1, &m);
	a = tc_find(&t, IMEXD_ACT_IMPORT_REVOKE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->node_uuid[0], 2);
	assert_true(a->has_handle);
	assert_true(a->handle_id == 5);
	assert_int_equal(a->reason, IMEX_REVOKE_UNEXPORTED);
	/* From a node outside the domain: dropped. */
	tc_msg_init(&m, IMEXD_MSG_EXPORT_REVOKE, "d", u);
	tc_deliver(&t, 2, &m);
	assert_null(tc_find(&t, IMEXD_ACT_IMPORT_REVOKE, 0, 0));

	/* b restarts: a new instance. */
	imexd_core_conn_up(t.core, t.now, 5, "10.0.0.2:41000", false);
	tc_drain(&t);
	tc_hello(&m, IMEXD_MSG_HELLO, "b");
	m.sender_epoch = 9000;
	tc_deliver(&t, 5, &m);
	a = tc_find(&t, IMEXD_ACT_IMPORT_REVOKE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->node_uuid[0], 2);
	assert_false(a->has_handle);
	assert_int_equal(a->reason, IMEX_REVOKE_NODE_RESTARTED);
	assert_int_equal(tc_count(&t, IMEXD_ACT_IMPORT_REVOKE, 0), 1);

	/* d goes silent: recovering, then lost after the 10 s grace. */
	tc_keep(&t, 5, "b");
	t.keep_conn[0] = 5;
	tc_advance(&t, t.now + 3000 + 9999);
	assert_null(tc_find(&t, IMEXD_ACT_IMPORT_REVOKE, 0, 0));
	tc_advance(&t, t.now + 2000);
	a = tc_find(&t, IMEXD_ACT_IMPORT_REVOKE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->node_uuid[0], 4);
	assert_int_equal(a->reason, IMEX_REVOKE_NODE_LOST);
	assert_int_equal(tc_count(&t, IMEXD_ACT_IMPORT_REVOKE, 0), 1);
	tc_done(&t);
}

/*
 * A member's IMPORT_REQs waiting for this node's kernel are bounded by
 * CORE_CHECKS_MAX (4096): past it the request is answered ENOBUFS at once,
 * and a slot that completes takes a new one.
 */
static void test_import_checks_are_bounded(void **state)
{
	const struct imexd_action *a;
	uint64_t first_op = 0;
	struct imexd_msg m;
	uint8_t u[16];
	unsigned i;
	struct tc t;

	(void)state;
	start_two(&t, "a");
	tc_bind(&t, 1, "b", true);
	memset(u, DOM1, 16);
	tc_msg_init(&m, IMEXD_MSG_IMPORT_REQ, "b", u);
	m.u.import_req.handle_id = 7;
	m.u.import_req.channel_id = 1;
	for (i = 0; i < 4096; i++) {
		m.u.import_req.tag = 1000 + i;
		tc_deliver(&t, 1, &m);
		a = tc_find(&t, IMEXD_ACT_IMPORT_CHECK, 0, 0);
		assert_non_null(a);
		if (!i)
			first_op = a->op_id;
		assert_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_IMPORT_RESP, 1));
	}
	m.u.import_req.tag = 9999;
	tc_deliver(&t, 1, &m);
	assert_null(tc_find(&t, IMEXD_ACT_IMPORT_CHECK, 0, 0));
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_IMPORT_RESP, 1);
	assert_non_null(a);
	assert_true(a->msg.u.import_resp.tag == 9999);
	assert_int_equal(a->msg.u.import_resp.status, ENOBUFS);
	/* One answer frees one slot. */
	imexd_core_import_checked(t.core, t.now, first_op, EPERM, NULL, 0);
	tc_drain(&t);
	tc_deliver(&t, 1, &m);
	assert_non_null(tc_find(&t, IMEXD_ACT_IMPORT_CHECK, 0, 0));
	tc_done(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import_is_one_request_and_one_answer),
		cmocka_unit_test(test_import_refusals_name_the_reason),
		cmocka_unit_test(test_lost_connection_and_silence_fail_pending_imports),
		cmocka_unit_test(test_import_request_is_checked_for_the_asking_node),
		cmocka_unit_test(test_import_checks_are_bounded),
		cmocka_unit_test(test_export_end_reaches_every_member_even_one_away),
		cmocka_unit_test(test_revocations_name_the_exporting_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
