// SPDX-License-Identifier: GPL-2.0
/* Two-phase changes: the coordinator's steps and the participant's. */
#include "harness.h"

#define DOM1 0x11

static struct imexd_member mb[4];

static void members(const char *list, uint16_t *n)
{
	*n = 0;
	for (; *list; list++) {
		if (*list == ',')
			continue;
		snprintf(mb[*n].name, sizeof(mb[*n].name), "%c", *list);
		snprintf(mb[*n].addr, sizeof(mb[*n].addr), "10.0.0.%d",
			 *list - 'a' + 1);
		(*n)++;
	}
}

static void create_req(struct tc *t, const char *list, uint32_t count,
		       uint32_t *ids, uint32_t nids)
{
	struct imexd_request r;

	memset(&r, 0, sizeof(r));
	r.req_id = 42;
	r.cmd = IMEX_CMD_DOMAIN_CREATE;
	snprintf(r.name, sizeof(r.name), "job");
	members(list, &r.nmembers);
	r.members = mb;
	r.count = count;
	r.ids = ids;
	r.nids = nids;
	r.mode = 0600;
	imexd_core_request(t->core, t->now, &r);
	tc_drain(t);
}

static void vote(struct tc *t, uint64_t conn, const char *from,
		 const uint8_t *uuid, uint64_t id, int err, const char *msg)
{
	struct imexd_msg m;

	tc_msg_init(&m, IMEXD_MSG_VOTE, from, uuid);
	m.u.vote.change_id = id;
	m.u.vote.error = err;
	snprintf(m.u.vote.message, sizeof(m.u.vote.message), "%s", msg);
	tc_deliver(t, conn, &m);
}

static void ack(struct tc *t, uint64_t conn, const char *from,
		const uint8_t *uuid, uint64_t id)
{
	struct imexd_msg m;

	tc_msg_init(&m, IMEXD_MSG_ACK, from, uuid);
	m.u.ack.change_id = id;
	m.u.ack.what = IMEXD_ACK_COMMIT;
	tc_deliver(t, conn, &m);
}

static void test_coordinator_happy_path_by_count(void **state)
{
	const struct imexd_action *a;
	uint8_t bits[8], uuid[16];
	struct imexd_msg m;
	uint64_t id;
	int i, q, p;
	struct tc t;

	(void)state;
	tc_start(&t, "a", NULL, 0, NULL, 0);
	tc_advance(&t, 7000);
	create_req(&t, "a,b", 2, NULL, 0);
	a = tc_find(&t, IMEXD_ACT_CONNECT, 0, 0);
	assert_non_null(a);
	assert_string_equal(a->addr, "10.0.0.2:50100");
	assert_int_equal(tc_count(&t, IMEXD_ACT_SEND, 0), 0);

	/* The query rides right behind the HELLO on the new connection. */
	imexd_core_conn_up(t.core, t.now, 1, "10.0.0.2:50100", true);
	tc_drain(&t);
	i = tc_index(&t, IMEXD_ACT_SEND, IMEXD_MSG_HELLO, 0);
	q = tc_index(&t, IMEXD_ACT_SEND, IMEXD_MSG_QUERY_FREE, 0);
	assert_true(i >= 0 && q > i);
	assert_int_equal(t.a[q].msg.u.query_free.count, 2);
	id = t.a[q].msg.u.query_free.change_id;
	memcpy(uuid, t.a[q].msg.domain_uuid, 16);

	tc_hello(&m, IMEXD_MSG_HELLO_ACK, "b");
	tc_deliver(&t, 1, &m);
	memset(bits, 0xff, sizeof(bits));
	bits[0] = 0xfe;			/* channel 0 is taken on b */
	tc_msg_init(&m, IMEXD_MSG_FREE, "b", uuid);
	m.u.free.change_id = id;
	m.u.free.nbits = 64;
	m.u.free.bits = bits;
	tc_deliver(&t, 1, &m);
	/* Own kernel and b, with the lowest channels free on both. */
	p = tc_index(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0);
	assert_true(p >= 0);
	assert_int_equal(t.a[p].op, IMEX_CHANGE_CREATE);
	assert_int_equal(t.a[p].change_id, id);
	assert_int_equal(t.a[p].def.generation, 1);
	assert_int_equal(t.a[p].def.nchannels, 2);
	assert_int_equal(t.a[p].def.channels[0].id, 1);
	assert_int_equal(t.a[p].def.channels[1].id, 2);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_PREPARE, 1);
	assert_non_null(a);
	assert_int_equal(a->msg.u.prepare.op, IMEX_CHANGE_CREATE);
	assert_int_equal(a->msg.u.prepare.def.nchannels, 2);
	assert_int_equal(a->msg.u.prepare.lease_ms, 15000);

	tc_kernel_all(&t, 0, "");
	assert_null(tc_find(&t, IMEXD_ACT_KERNEL_COMMIT, 0, 0));
	vote(&t, 1, "b", uuid, id, 0, "");
	/* Decided: own kernel commits and the result is stored first. */
	assert_non_null(tc_find(&t, IMEXD_ACT_KERNEL_COMMIT, 0, 0));
	assert_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_COMMIT, 0));
	tc_kernel_all(&t, 0, "");
	i = tc_index(&t, IMEXD_ACT_STORE_DEF, 0, 0);
	q = tc_index(&t, IMEXD_ACT_SEND, IMEXD_MSG_COMMIT, 0);
	assert_true(i >= 0 && q > i);
	assert_int_equal(t.a[i].def.generation, 1);
	assert_null(tc_find(&t, IMEXD_ACT_REQUEST_DONE, 0, 0));

	ack(&t, 1, "b", uuid, id);
	a = tc_find(&t, IMEXD_ACT_REQUEST_DONE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->req_id, 42);
	assert_int_equal(a->error, 0);
	assert_string_equal(a->text,
			    "domain 'job' created on 2 nodes, channels 1-2");
	assert_int_equal(imexd_core_domains(t.core, NULL), 1);

	/* And it remembers the outcome for a member in doubt. */
	tc_msg_init(&m, IMEXD_MSG_OUTCOME_QUERY, "b", uuid);
	m.u.change.change_id = id;
	tc_deliver(&t, 1, &m);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_OUTCOME, 1);
	assert_non_null(a);
	assert_int_equal(a->msg.u.outcome.outcome, IMEXD_OUTCOME_COMMITTED);
	tc_done(&t);
}

/* a coordinating a create of {a, b, c} with channel 5, b and c bound. */
static uint64_t start_create(struct tc *t, uint8_t uuid[16])
{
	const struct imexd_action *a;
	uint32_t ids[] = { 5 };

	tc_start(t, "a", NULL, 0, NULL, 0);
	tc_advance(t, 7000);
	tc_bind(t, 1, "b", true);
	tc_bind(t, 2, "c", true);
	tc_keep(t, 1, "b");
	tc_keep(t, 2, "c");
	create_req(t, "a,b,c", 0, ids, 1);
	assert_non_null(tc_find(t, IMEXD_ACT_KERNEL_PREPARE, 0, 0));
	assert_non_null(tc_find(t, IMEXD_ACT_SEND, IMEXD_MSG_PREPARE, 1));
	a = tc_find(t, IMEXD_ACT_SEND, IMEXD_MSG_PREPARE, 2);
	assert_non_null(a);
	memcpy(uuid, a->msg.domain_uuid, 16);
	return a->msg.u.prepare.change_id;
}

static void test_refusal_aborts_everywhere_with_the_refusers_message(void **state)
{
	const struct imexd_action *a;
	uint8_t uuid[16];
	uint64_t id;
	struct tc t;

	(void)state;
	id = start_create(&t, uuid);
	tc_kernel_all(&t, 0, "");
	vote(&t, 2, "c", uuid, id, 0, "");
	vote(&t, 1, "b", uuid, id, EADDRINUSE,
	     "channel 5 belongs to domain 'job3'");
	assert_non_null(tc_find(&t, IMEXD_ACT_KERNEL_ABORT, 0, 0));
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_ABORT, 1));
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_ABORT, 2));
	a = tc_find(&t, IMEXD_ACT_REQUEST_DONE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->error, EADDRINUSE);
	assert_string_equal(a->text,
			    "node 'b' refused: channel 5 belongs to domain 'job3'");
	assert_null(tc_find(&t, IMEXD_ACT_KERNEL_COMMIT, 0, 0));
	tc_done(&t);
}

static void test_unreachable_member_fails_the_request_naming_it(void **state)
{
	const struct imexd_action *a;
	uint32_t ids[] = { 5 };
	struct tc t;

	(void)state;
	tc_start(&t, "a", NULL, 0, NULL, 0);
	tc_advance(&t, 7000);
	tc_bind(&t, 1, "b", true);
	tc_keep(&t, 1, "b");
	create_req(&t, "a,b,c", 0, ids, 1);
	a = tc_find(&t, IMEXD_ACT_CONNECT, 0, 0);
	assert_non_null(a);
	assert_string_equal(a->addr, "10.0.0.3:50100");
	imexd_core_conn_failed(t.core, t.now, "10.0.0.3:50100");
	tc_drain(&t);
	tc_advance(&t, 7000 + 4999);
	assert_null(tc_find(&t, IMEXD_ACT_REQUEST_DONE, 0, 0));
	tc_timer(&t, 12000);
	a = tc_find(&t, IMEXD_ACT_REQUEST_DONE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->error, EHOSTUNREACH);
	assert_string_equal(a->text,
			    "node 'c' (10.0.0.3:50100) is not reachable: check that imexd runs there");
	assert_null(tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0));
	tc_done(&t);
}

static void test_silent_member_in_prepare_aborts_and_names_it(void **state)
{
	const struct imexd_action *a;
	uint8_t uuid[16];
	uint64_t id;
	struct tc t;

	(void)state;
	id = start_create(&t, uuid);
	tc_kernel_all(&t, 0, "");
	vote(&t, 1, "b", uuid, id, 0, "");
	imexd_core_conn_down(t.core, t.now, 2);	/* c goes away */
	t.nkeep = 1;
	tc_drain(&t);
	tc_advance(&t, 11999);
	assert_null(tc_find(&t, IMEXD_ACT_REQUEST_DONE, 0, 0));
	tc_timer(&t, 12000);
	assert_non_null(tc_find(&t, IMEXD_ACT_KERNEL_ABORT, 0, 0));
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_ABORT, 1));
	a = tc_find(&t, IMEXD_ACT_REQUEST_DONE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->error, EHOSTUNREACH);
	assert_non_null(strstr(a->text, "node 'c' (10.0.0.3:50100) is not reachable"));
	tc_done(&t);
}

static void test_collision_with_another_change_is_retried(void **state)
{
	const struct imexd_action *a;
	uint8_t uuid[16];
	uint64_t id, id2;
	int round;
	struct tc t;

	(void)state;
	id = start_create(&t, uuid);
	tc_kernel_all(&t, 0, "");
	for (round = 0; round < 4; round++) {
		vote(&t, 1, "b", uuid, id, EAGAIN,
		     "channel 5 is reserved by a pending change of domain 'x'");
		assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_ABORT, 1));
		if (round == 3)
			break;
		assert_null(tc_find(&t, IMEXD_ACT_REQUEST_DONE, 0, 0));
		tc_kernel_all(&t, 0, "");	/* our abort */
		/* After a delay: the same change again, as a new one. */
		tc_advance(&t, t.now + 1000);
		a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_PREPARE, 1);
		assert_non_null(a);
		id2 = a->msg.u.prepare.change_id;
		assert_int_not_equal(id2, id);
		id = id2;
		tc_kernel_all(&t, 0, "");
	}
	a = tc_find(&t, IMEXD_ACT_REQUEST_DONE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->error, EADDRINUSE);
	assert_non_null(strstr(a->text, "reserved by a pending change"));
	tc_done(&t);
}

static void test_missing_ack_still_succeeds_after_the_step_timeout(void **state)
{
	const struct imexd_action *a;
	uint8_t uuid[16];
	uint64_t id;
	struct tc t;

	(void)state;
	id = start_create(&t, uuid);
	tc_kernel_all(&t, 0, "");
	vote(&t, 1, "b", uuid, id, 0, "");
	vote(&t, 2, "c", uuid, id, 0, "");
	tc_kernel_all(&t, 0, "");		/* our commit */
	assert_int_equal(tc_count(&t, IMEXD_ACT_SEND, IMEXD_MSG_COMMIT), 2);
	ack(&t, 1, "b", uuid, id);
	assert_null(tc_find(&t, IMEXD_ACT_REQUEST_DONE, 0, 0));
	imexd_core_conn_down(t.core, t.now, 2);
	t.nkeep = 1;
	tc_advance(&t, t.now + 5000);
	a = tc_find(&t, IMEXD_ACT_REQUEST_DONE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->error, 0);
	assert_non_null(strstr(a->text, "node 'c' has not confirmed yet"));
	tc_done(&t);
}

static void test_shutdown_says_leave_and_aborts_what_it_coordinates(void **state)
{
	const struct imexd_action *a;
	uint8_t uuid[16];
	struct tc t;

	(void)state;
	start_create(&t, uuid);
	tc_kernel_all(&t, 0, "");
	imexd_core_shutdown(t.core, t.now);
	tc_drain(&t);
	assert_non_null(tc_find(&t, IMEXD_ACT_KERNEL_ABORT, 0, 0));
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_ABORT, 1));
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_ABORT, 2));
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_LEAVE, 1));
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_LEAVE, 2));
	assert_true(tc_index(&t, IMEXD_ACT_SEND, IMEXD_MSG_LEAVE, 0) <
		    tc_index(&t, IMEXD_ACT_CLOSE, 0, 0));
	a = tc_find(&t, IMEXD_ACT_REQUEST_DONE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->error, ESHUTDOWN);
	assert_int_equal(imexd_core_next_deadline(t.core), UINT64_MAX);
	tc_done(&t);
}

/* ---- participant ---- */

/* b holding d1 = {a, b, c} at generation 3, connected to a and c. */
static void participant(struct tc *t)
{
	struct imexd_def d;

	tc_def(&d, "d1", DOM1, 3, "a,b,c", 0, -1);
	tc_start(t, "b", &d, 1, &d, 1);
	tc_def_free(&d);
	tc_advance(t, 7000);
	tc_bind(t, 1, "a", false);
	tc_bind(t, 2, "c", false);
	tc_heartbeat(t, 1, "a", 0, 0);	/* heard from both: may vote */
	tc_heartbeat(t, 2, "c", 0, 0);
	tc_keep(t, 1, "a");
	tc_keep(t, 2, "c");
}

static void prepare_add(struct tc *t, uint64_t gen, uint64_t id)
{
	struct imexd_msg m;
	struct imexd_def nd;
	uint8_t u[16];

	tc_uuid(u, DOM1);
	tc_def(&nd, "d1", DOM1, gen, "a,b,c", 0, 2, -1);
	tc_msg_init(&m, IMEXD_MSG_PREPARE, "a", u);
	m.u.prepare.change_id = id;
	m.u.prepare.op = IMEX_CHANGE_ADD_CHANNELS;
	m.u.prepare.lease_ms = 10000;
	m.u.prepare.def = nd;
	tc_deliver(t, 1, &m);
	tc_def_free(&nd);
}

static void test_participant_votes_estale_on_a_wrong_generation(void **state)
{
	const struct imexd_action *a;
	struct tc t;

	(void)state;
	participant(&t);
	prepare_add(&t, 6, 900);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_VOTE, 1);
	assert_non_null(a);
	assert_int_equal(a->msg.u.vote.error, ESTALE);
	assert_non_null(strstr(a->msg.u.vote.message, "generation 3"));
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_SYNC, 1));
	assert_null(tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0));
	tc_done(&t);
}

static void test_participant_prepares_votes_commits_and_acks(void **state)
{
	const struct imexd_action *a;
	struct imexd_msg m;
	uint8_t u[16];
	struct tc t;

	(void)state;
	participant(&t);
	prepare_add(&t, 4, 901);
	a = tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->op, IMEX_CHANGE_ADD_CHANNELS);
	assert_int_equal(a->lease_ms, 10000);
	assert_int_equal(a->nchans, 1);
	assert_int_equal(a->chans[0].id, 2);
	assert_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_VOTE, 0));
	tc_kernel_all(&t, 0, "");
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_VOTE, 1);
	assert_non_null(a);
	assert_int_equal(a->msg.u.vote.error, 0);

	tc_uuid(u, DOM1);
	tc_msg_init(&m, IMEXD_MSG_COMMIT, "a", u);
	m.u.change.change_id = 901;
	tc_deliver(&t, 1, &m);
	assert_non_null(tc_find(&t, IMEXD_ACT_KERNEL_COMMIT, 0, 0));
	tc_kernel_all(&t, 0, "");
	a = tc_find(&t, IMEXD_ACT_STORE_DEF, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->def.generation, 4);
	assert_int_equal(a->def.nchannels, 2);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_ACK, 1);
	assert_non_null(a);
	assert_int_equal(a->msg.u.ack.what, IMEXD_ACK_COMMIT);
	assert_int_equal(a->msg.u.ack.error, 0);
	tc_done(&t);
}

static void test_in_doubt_participant_asks_everyone_and_commits(void **state)
{
	const struct imexd_action *a;
	struct imexd_msg m;
	uint8_t u[16];
	struct tc t;

	(void)state;
	participant(&t);
	prepare_add(&t, 4, 902);
	tc_kernel_all(&t, 0, "");
	tc_advance(&t, t.now + 4999);
	assert_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_OUTCOME_QUERY, 0));
	tc_advance(&t, t.now + 1);	/* half the 10 s lease */
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_OUTCOME_QUERY, 1));
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_OUTCOME_QUERY, 2));

	tc_uuid(u, DOM1);
	tc_msg_init(&m, IMEXD_MSG_OUTCOME, "c", u);
	m.u.outcome.change_id = 902;
	m.u.outcome.outcome = IMEXD_OUTCOME_COMMITTED;
	tc_deliver(&t, 2, &m);
	assert_non_null(tc_find(&t, IMEXD_ACT_KERNEL_COMMIT, 0, 0));
	tc_kernel_all(&t, 0, "");
	a = tc_find(&t, IMEXD_ACT_STORE_DEF, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->def.generation, 4);
	tc_done(&t);
}

static void test_commit_after_the_lease_is_reapplied(void **state)
{
	const struct imexd_action *a;
	struct imexd_msg m;
	uint8_t u[16];
	struct tc t;

	(void)state;
	participant(&t);
	prepare_add(&t, 4, 903);
	tc_kernel_all(&t, 0, "");
	tc_advance(&t, t.now + 10000);	/* the kernel rolled it back */
	tc_uuid(u, DOM1);
	tc_msg_init(&m, IMEXD_MSG_COMMIT, "a", u);
	m.u.change.change_id = 903;
	tc_deliver(&t, 1, &m);
	/* A fresh local change brings the kernel to the agreed result. */
	a = tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->op, IMEX_CHANGE_ADD_CHANNELS);
	assert_int_not_equal(a->change_id, 903);
	assert_non_null(tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_ACK, 1));
	tc_kernel_all(&t, 0, "");
	tc_kernel_all(&t, 0, "");
	a = tc_find(&t, IMEXD_ACT_STORE_DEF, 0, 0);
	assert_non_null(a);
	assert_int_equal(a->def.generation, 4);
	tc_done(&t);
}

static void test_abort_rolls_back_and_a_late_prepare_is_refused(void **state)
{
	const struct imexd_action *a;
	struct imexd_msg m;
	uint8_t u[16];
	struct tc t;

	(void)state;
	participant(&t);
	prepare_add(&t, 4, 904);
	tc_kernel_all(&t, 0, "");
	tc_uuid(u, DOM1);
	tc_msg_init(&m, IMEXD_MSG_ABORT, "a", u);
	m.u.change.change_id = 904;
	tc_deliver(&t, 1, &m);
	assert_non_null(tc_find(&t, IMEXD_ACT_KERNEL_ABORT, 0, 0));
	tc_kernel_all(&t, 0, "");
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_ACK, 1);
	assert_non_null(a);
	assert_int_equal(a->msg.u.ack.what, IMEXD_ACK_ABORT);

	/* An ABORT that overtook its PREPARE: the PREPARE is refused. */
	m.u.change.change_id = 905;
	tc_deliver(&t, 1, &m);
	prepare_add(&t, 4, 905);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_VOTE, 1);
	assert_non_null(a);
	assert_int_equal(a->msg.u.vote.error, ECANCELED);
	assert_null(tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0));
	tc_done(&t);
}

static void test_second_change_on_a_busy_domain_is_refused_ebusy(void **state)
{
	const struct imexd_action *a;
	struct tc t;

	(void)state;
	participant(&t);
	prepare_add(&t, 4, 906);
	tc_kernel_all(&t, 0, "");
	prepare_add(&t, 4, 907);
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_VOTE, 1);
	assert_non_null(a);
	assert_int_equal(a->msg.u.vote.change_id, 907);
	assert_int_equal(a->msg.u.vote.error, EBUSY);
	tc_done(&t);
}

static void test_restarted_node_does_not_vote_until_it_has_caught_up(void **state)
{
	const struct imexd_action *a;
	struct imexd_def d;
	struct tc t;

	(void)state;
	tc_def(&d, "d1", DOM1, 3, "a,b,c", 0, -1);
	tc_start(&t, "b", &d, 1, &d, 1);
	tc_def_free(&d);
	tc_advance(&t, 7000);
	tc_bind(&t, 1, "a", false);
	tc_heartbeat(&t, 1, "a", 0, 0);
	prepare_add(&t, 4, 908);	/* c not heard from yet */
	a = tc_find(&t, IMEXD_ACT_SEND, IMEXD_MSG_VOTE, 1);
	assert_non_null(a);
	assert_int_equal(a->msg.u.vote.error, EINPROGRESS);	/* "wait for me" */
	assert_non_null(strstr(a->msg.u.vote.message, "restarted"));
	tc_bind(&t, 2, "c", false);
	tc_heartbeat(&t, 2, "c", 0, 0);
	prepare_add(&t, 4, 909);
	assert_non_null(tc_find(&t, IMEXD_ACT_KERNEL_PREPARE, 0, 0));
	tc_done(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coordinator_happy_path_by_count),
		cmocka_unit_test(test_refusal_aborts_everywhere_with_the_refusers_message),
		cmocka_unit_test(test_unreachable_member_fails_the_request_naming_it),
		cmocka_unit_test(test_silent_member_in_prepare_aborts_and_names_it),
		cmocka_unit_test(test_collision_with_another_change_is_retried),
		cmocka_unit_test(test_missing_ack_still_succeeds_after_the_step_timeout),
		cmocka_unit_test(test_shutdown_says_leave_and_aborts_what_it_coordinates),
		cmocka_unit_test(test_participant_votes_estale_on_a_wrong_generation),
		cmocka_unit_test(test_participant_prepares_votes_commits_and_acks),
		cmocka_unit_test(test_in_doubt_participant_asks_everyone_and_commits),
		cmocka_unit_test(test_commit_after_the_lease_is_reapplied),
		cmocka_unit_test(test_abort_rolls_back_and_a_late_prepare_is_refused),
		cmocka_unit_test(test_second_change_on_a_busy_domain_is_refused_ebusy),
		cmocka_unit_test(test_restarted_node_does_not_vote_until_it_has_caught_up),
	};

	return cmocka_run_group_tests_name("core: two-phase changes", tests,
					   NULL, NULL);
}
