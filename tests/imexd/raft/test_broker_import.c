// SPDX-License-Identifier: GPL-2.0
/*
 * The import broker's imports: a full import between two brokers, who
 * may ask and who may answer, and every bound on imports and checks.
 * See test_broker.c.
 */
#include "test_broker.h"

void test_round_trip(void **state)
{
	struct tb *t = *state;
	struct imexd_import imp = imp_of(100, "b", DOM1, 7);
	struct imexd_msg req, resp;
	struct got *e;
	uint64_t op;

	imp.channel_id = 0;
	assert_int_equal(imexd_broker_deadline(t->a), UINT64_MAX);
	imexd_broker_import(t->a, 1000, t->fsm, &imp);
	assert_int_equal(drain(t->a), 1);
	e = one(IMEXD_BROKER_SEND);
	assert_string_equal(e->to, "b");
	assert_int_equal(e->msg.type, IMEXD_MSG_IMPORT_REQ);
	assert_memory_equal(e->msg.domain_uuid, DOM1, 16);
	assert_int_equal(e->msg.u.import_req.handle_id, 7);
	assert_int_equal(imexd_broker_deadline(t->a),
			 1000 + IMEX_IMPORT_TIMEOUT_MAX_MS);
	wire_trip(&e->msg, "a", &req);

	/* The exporter asks its kernel on behalf of a. */
	imexd_broker_msg(t->b, 1001, t->fsm, "a", &req);
	imexd_msg_free(&req);
	assert_int_equal(drain(t->b), 1);
	e = one(IMEXD_BROKER_CHECK);
	assert_string_equal(e->to, "a");
	assert_int_equal(e->a.handle_id, 7);
	assert_memory_equal(e->a.domain_uuid, DOM1, 16);
	assert_int_equal(e->a.channel_id, 0);
	op = e->a.op_id;
	imexd_broker_checked(t->b, 1002, op, 0, (const uint8_t *)"xyz", 3);
	assert_int_equal(drain(t->b), 1);
	e = one(IMEXD_BROKER_SEND);
	assert_string_equal(e->to, "a");
	assert_int_equal(e->msg.type, IMEXD_MSG_IMPORT_RESP);
	assert_int_equal(e->msg.u.import_resp.tag, 100);
	assert_int_equal(e->msg.u.import_resp.status, 0);
	wire_trip(&e->msg, "b", &resp);

	/* A second answer for the same op is nobody's. */
	imexd_broker_checked(t->b, 1002, op, 0, (const uint8_t *)"xyz", 3);
	assert_int_equal(drain(t->b), 0);

	imexd_broker_msg(t->a, 1003, t->fsm, "b", &resp);
	assert_int_equal(drain(t->a), 1);
	e = one(IMEXD_BROKER_DONE);
	assert_int_equal(e->a.import_id, 100);
	assert_int_equal(e->a.error, 0);
	assert_int_equal(e->a.desc_len, 3);
	assert_memory_equal(e->desc, "xyz", 3);
	assert_int_equal(imexd_broker_deadline(t->a), UINT64_MAX);

	/* The same answer again matches nothing. */
	imexd_broker_msg(t->a, 1004, t->fsm, "b", &resp);
	drain(t->a);
	assert_int_equal(count(IMEXD_BROKER_DONE), 0);
	imexd_msg_free(&resp);

	/* A refusal by the exporter's kernel reaches the importer's. */
	import_sent(t, t->a, 2000, 101, "b");
	imexd_broker_msg(t->b, 2000, t->fsm, "a", &g[0].msg);
	drain(t->b);
	imexd_broker_checked(t->b, 2001, one(IMEXD_BROKER_CHECK)->a.op_id,
			     EPERM, NULL, 0);
	drain(t->b);
	e = one(IMEXD_BROKER_SEND);
	assert_int_equal(e->msg.u.import_resp.status, EPERM);
	deliver(t, t->a, 2002, "b", IMEXD_MSG_IMPORT_RESP, DOM1, 101, EPERM);
	e = one(IMEXD_BROKER_DONE);
	assert_int_equal(e->a.error, EPERM);
	assert_non_null(strstr(e->text, "b"));

	/* A kernel "success" without a descriptor goes out as EPROTO. */
	deliver(t, t->b, 3000, "a", IMEXD_MSG_IMPORT_REQ, DOM1, 102, 0);
	imexd_broker_checked(t->b, 3001, one(IMEXD_BROKER_CHECK)->a.op_id, 0,
			     NULL, 0);
	drain(t->b);
	assert_int_equal(one(IMEXD_BROKER_SEND)->msg.u.import_resp.status,
			 EPROTO);
}

void test_importer_refusals(void **state)
{
	struct tb *t = *state;
	struct imexd_import imp;
	struct got *e;

	/* d is not a member of "one". */
	imp = imp_of(1, "d", DOM1, 5);
	imexd_broker_import(t->a, 0, t->fsm, &imp);
	drain(t->a);
	assert_int_equal(count(IMEXD_BROKER_SEND), 0);
	e = one(IMEXD_BROKER_DONE);
	assert_int_equal(e->a.error, ENOENT);
	assert_non_null(strstr(e->text, "not a member of domain 'one'"));

	/* This node's own handle: not another member. */
	imp = imp_of(2, "a", DOM1, 5);
	imexd_broker_import(t->a, 0, t->fsm, &imp);
	drain(t->a);
	assert_int_equal(one(IMEXD_BROKER_DONE)->a.error, ENOENT);

	/* A node the table does not know. */
	imp = imp_of(3, "z", DOM1, 5);
	imexd_broker_import(t->a, 0, t->fsm, &imp);
	drain(t->a);
	assert_int_equal(one(IMEXD_BROKER_DONE)->a.error, ENOENT);

	/* A domain the table does not have. */
	imp = imp_of(4, "b", DOM_NONE, 5);
	imexd_broker_import(t->a, 0, t->fsm, &imp);
	drain(t->a);
	assert_int_equal(one(IMEXD_BROKER_DONE)->a.error, ENOENT);

	/* b (exporter of "one") is a member, but not of "two". */
	imp = imp_of(5, "b", DOM2, 5);
	imexd_broker_import(t->a, 0, t->fsm, &imp);
	drain(t->a);
	assert_int_equal(one(IMEXD_BROKER_DONE)->a.error, ENOENT);

	/* The exporter is not connected. */
	imexd_broker_peer_down(t->a, 0, "b");
	drain(t->a);
	imp = imp_of(6, "b", DOM1, 5);
	imexd_broker_import(t->a, 0, t->fsm, &imp);
	drain(t->a);
	assert_int_equal(one(IMEXD_BROKER_DONE)->a.error, EHOSTUNREACH);
	assert_int_equal(imexd_broker_deadline(t->a), UINT64_MAX);

	/* d through "two", where it is a member: asked. */
	imp = imp_of(7, "d", DOM2, 5);
	imexd_broker_import(t->a, 0, t->fsm, &imp);
	drain(t->a);
	assert_string_equal(one(IMEXD_BROKER_SEND)->to, "d");
}

void test_non_member_request_refused(void **state)
{
	struct tb *t = *state;
	struct got *e;

	/* d asks a for domain "one", which does not name it. */
	deliver(t, t->a, 0, "d", IMEXD_MSG_IMPORT_REQ, DOM1, 9, 0);
	assert_int_equal(count(IMEXD_BROKER_CHECK), 0);
	e = one(IMEXD_BROKER_SEND);
	assert_string_equal(e->to, "d");
	assert_int_equal(e->msg.type, IMEXD_MSG_IMPORT_RESP);
	assert_memory_equal(e->msg.domain_uuid, DOM1, 16);
	assert_int_equal(e->msg.u.import_resp.tag, 9);
	assert_int_equal(e->msg.u.import_resp.status, EACCES);
	e = one(IMEXD_BROKER_LOG);
	assert_int_equal(e->a.level, LOG_WARNING);
	assert_non_null(strstr(e->text, "'d'"));

	/* Again within the minute: answered, not logged. */
	deliver(t, t->a, 30000, "d", IMEXD_MSG_IMPORT_REQ, DOM1, 10, 0);
	assert_int_equal(one(IMEXD_BROKER_SEND)->msg.u.import_resp.status,
			 EACCES);
	assert_int_equal(count(IMEXD_BROKER_LOG), 0);
	deliver(t, t->a, 60000, "d", IMEXD_MSG_IMPORT_REQ, DOM_NONE, 11, 0);
	assert_int_equal(one(IMEXD_BROKER_SEND)->msg.u.import_resp.status,
			 EACCES);
	assert_non_null(strstr(one(IMEXD_BROKER_LOG)->text, "1 more"));

	/* c, a peer of a through "one", asks for "two" (a, d): refused. */
	deliver(t, t->a, 60001, "c", IMEXD_MSG_IMPORT_REQ, DOM2, 12, 0);
	assert_int_equal(one(IMEXD_BROKER_SEND)->msg.u.import_resp.status,
			 EACCES);

	/* Counted for the metrics: four refusals, reason "permission". */
	assert_int_equal(imexd_broker_refusals(t->a)[IMEXD_REFUSED_PERMISSION], 4);

	/* A member's request is checked. */
	deliver(t, t->a, 60002, "d", IMEXD_MSG_IMPORT_REQ, DOM2, 13, 0);
	assert_string_equal(one(IMEXD_BROKER_CHECK)->to, "d");
	assert_int_equal(count(IMEXD_BROKER_SEND), 0);

	/* A message type not for the broker: logged, nothing else. */
	deliver(t, t->a, 60003, "b", IMEXD_MSG_HEARTBEAT, DOM1, 0, 0);
	assert_int_equal(ng, 1);
	one(IMEXD_BROKER_LOG);
}

void test_wrong_responder_ignored(void **state)
{
	struct tb *t = *state;
	struct got *e;

	import_sent(t, t->a, 0, 100, "b");
	/* c, also a member, answers a request made to b. */
	deliver(t, t->a, 1, "c", IMEXD_MSG_IMPORT_RESP, DOM1, 100, 0);
	assert_int_equal(count(IMEXD_BROKER_DONE), 0);
	e = one(IMEXD_BROKER_LOG);
	assert_int_equal(e->a.level, LOG_WARNING);
	assert_non_null(strstr(e->text, "'c'"));
	/* ... and so does d, a non-member: dropped, not even logged again. */
	deliver(t, t->a, 2, "d", IMEXD_MSG_IMPORT_RESP, DOM1, 100, EPERM);
	assert_int_equal(ng, 0);
	/* b answers for another domain: not the request either. */
	deliver(t, t->a, 3, "b", IMEXD_MSG_IMPORT_RESP, DOM2, 100, 0);
	assert_int_equal(count(IMEXD_BROKER_DONE), 0);
	/* A tag nothing waits on. */
	deliver(t, t->a, 4, "b", IMEXD_MSG_IMPORT_RESP, DOM1, 555, 0);
	assert_int_equal(count(IMEXD_BROKER_DONE), 0);
	/* The peer asked still answers. */
	deliver(t, t->a, 5, "b", IMEXD_MSG_IMPORT_RESP, DOM1, 100, 0);
	e = one(IMEXD_BROKER_DONE);
	assert_int_equal(e->a.import_id, 100);
	assert_int_equal(e->a.error, 0);
	assert_int_equal(e->a.desc_len, 2);
	/* A bogus status from the exporter becomes EPROTO. */
	import_sent(t, t->a, 10, 101, "b");
	deliver(t, t->a, 11, "b", IMEXD_MSG_IMPORT_RESP, DOM1, 101, -5);
	assert_int_equal(one(IMEXD_BROKER_DONE)->a.error, EPROTO);
}

void test_imports_bound(void **state)
{
	struct tb *t = *state;
	struct imexd_import imp;
	uint64_t i;

	for (i = 1; i <= IMEXD_BROKER_IMPORTS_MAX; i++) {
		imp = imp_of(i, i % 2 ? "b" : "c", DOM1, i);
		imexd_broker_import(t->a, i, t->fsm, &imp);
		assert_int_equal(drain(t->a), 1);
		assert_int_equal(g[0].a.type, IMEXD_BROKER_SEND);
	}
	imp = imp_of(i, "b", DOM1, i);
	imexd_broker_import(t->a, i, t->fsm, &imp);
	assert_int_equal(drain(t->a), 1);
	assert_int_equal(g[0].a.type, IMEXD_BROKER_DONE);
	assert_int_equal(g[0].a.error, EAGAIN);
	assert_int_equal(imexd_broker_deadline(t->a),
			 1 + IMEX_IMPORT_TIMEOUT_MAX_MS);

	/* One answered: room for one more. */
	deliver(t, t->a, i, "b", IMEXD_MSG_IMPORT_RESP, DOM1, 1, 0);
	assert_int_equal(one(IMEXD_BROKER_DONE)->a.import_id, 1);
	import_sent(t, t->a, i, i + 1, "b");

	/* c goes down: its half of the table ends, in order, at once. */
	imexd_broker_peer_down(t->a, i, "c");
	drain(t->a);
	assert_int_equal(count(IMEXD_BROKER_DONE),
			 IMEXD_BROKER_IMPORTS_MAX / 2);
	assert_int_equal(g[0].a.import_id, 2);
	assert_int_equal(g[0].a.error, EHOSTUNREACH);
	assert_int_equal(g[ng - 1].a.import_id, IMEXD_BROKER_IMPORTS_MAX);
}

void test_checks_bound(void **state)
{
	struct tb *t = *state;
	uint64_t i, first_op = 0;

	for (i = 1; i <= IMEXD_BROKER_CHECKS_MAX; i++) {
		deliver(t, t->b, i, "a", IMEXD_MSG_IMPORT_REQ, DOM1, i, 0);
		assert_int_equal(ng, 1);
		assert_int_equal(g[0].a.type, IMEXD_BROKER_CHECK);
		if (i == 1)
			first_op = g[0].a.op_id;
	}
	deliver(t, t->b, i, "c", IMEXD_MSG_IMPORT_REQ, DOM1, i, 0);
	assert_int_equal(count(IMEXD_BROKER_CHECK), 0);
	assert_string_equal(one(IMEXD_BROKER_SEND)->to, "c");
	assert_int_equal(one(IMEXD_BROKER_SEND)->msg.u.import_resp.status,
			 EAGAIN);
	one(IMEXD_BROKER_LOG);
	/* Full still: answered EAGAIN, the log line is rate-limited. */
	deliver(t, t->b, i, "c", IMEXD_MSG_IMPORT_REQ, DOM1, i + 1, 0);
	assert_int_equal(ng, 1);
	assert_int_equal(g[0].msg.u.import_resp.status, EAGAIN);

	/* One answered: one more fits. */
	imexd_broker_checked(t->b, i, first_op, EPERM, NULL, 0);
	drain(t->b);
	assert_int_equal(one(IMEXD_BROKER_SEND)->msg.u.import_resp.tag, 1);
	/* The metrics count the kernel's EPERM and both EAGAINs. */
	assert_int_equal(imexd_broker_refusals(t->b)[IMEXD_REFUSED_PERMISSION], 1);
	assert_int_equal(imexd_broker_refusals(t->b)[IMEXD_REFUSED_NO_SPACE], 2);
	deliver(t, t->b, i, "c", IMEXD_MSG_IMPORT_REQ, DOM1, i + 2, 0);
	one(IMEXD_BROKER_CHECK);

	/* Checks the kernel never answers expire with the importer's wait. */
	assert_int_equal(imexd_broker_deadline(t->b),
			 2 + IMEX_IMPORT_TIMEOUT_MAX_MS);
	imexd_broker_timer(t->b, i + IMEX_IMPORT_TIMEOUT_MAX_MS);
	assert_int_equal(drain(t->b), 0);
	assert_int_equal(imexd_broker_deadline(t->b), UINT64_MAX);
	imexd_broker_checked(t->b, i, first_op + 5, 0,
			     (const uint8_t *)"x", 1);
	assert_int_equal(drain(t->b), 0);
}

void test_checked_after_importer_left(void **state)
{
	struct tb *t = *state;
	uint64_t op;

	deliver(t, t->b, 0, "a", IMEXD_MSG_IMPORT_REQ, DOM1, 1, 0);
	op = one(IMEXD_BROKER_CHECK)->a.op_id;
	imexd_broker_peer_down(t->b, 1, "a");
	drain(t->b);
	imexd_broker_peer_up(t->b, 2, "a", false, t->fsm);
	drain(t->b);
	/* Its import failed at the drop: the answer goes nowhere. */
	imexd_broker_checked(t->b, 3, op, 0, (const uint8_t *)"x", 1);
	assert_int_equal(drain(t->b), 0);
}
