// SPDX-License-Identifier: GPL-2.0
/*
 * How the import broker's imports end: timeouts, the exporter lost or
 * restarted, a member replaced, held ends of exports revoked, shutdown,
 * actions kept when not drained, allocation failures.  See test_broker.c.
 */
#include "test_broker.h"

void test_timeout(void **state)
{
	struct tb *t = *state;
	const uint64_t t0 = 5000, dl = t0 + IMEX_IMPORT_TIMEOUT_MAX_MS;
	struct got *e;

	import_sent(t, t->a, t0, 1, "b");
	import_sent(t, t->a, t0 + 10, 2, "c");
	assert_int_equal(imexd_broker_deadline(t->a), dl);
	imexd_broker_timer(t->a, dl - 1);
	assert_int_equal(drain(t->a), 0);
	imexd_broker_timer(t->a, dl);
	drain(t->a);
	e = one(IMEXD_BROKER_DONE);
	assert_int_equal(e->a.import_id, 1);
	assert_int_equal(e->a.error, ETIMEDOUT);
	assert_int_equal(one(IMEXD_BROKER_LOG)->a.level, LOG_WARNING);
	assert_int_equal(imexd_broker_deadline(t->a), dl + 10);
	/* A late answer matches nothing. */
	deliver(t, t->a, dl + 1, "b", IMEXD_MSG_IMPORT_RESP, DOM1, 1, 0);
	assert_int_equal(count(IMEXD_BROKER_DONE), 0);
	imexd_broker_timer(t->a, dl + 10);
	drain(t->a);
	assert_int_equal(one(IMEXD_BROKER_DONE)->a.import_id, 2);
	assert_int_equal(imexd_broker_deadline(t->a), UINT64_MAX);
}

void test_exporter_lost(void **state)
{
	struct tb *t = *state;
	uint8_t ub[16];
	struct got *e;

	node_uuid(ub, "b");
	import_sent(t, t->a, 0, 1, "b");
	import_sent(t, t->a, 0, 2, "c");
	/* b lost without a drop seen first: its import ends, ours from it
	 * are revoked by its node UUID from the table. */
	imexd_broker_peer_lost(t->a, 10, "b", t->fsm);
	drain(t->a);
	e = one(IMEXD_BROKER_DONE);
	assert_int_equal(e->a.import_id, 1);
	assert_int_equal(e->a.error, EHOSTUNREACH);
	e = one(IMEXD_BROKER_REVOKE);
	assert_memory_equal(e->a.node_uuid, ub, 16);
	assert_false(e->a.has_handle);
	assert_false(e->a.has_domain);
	assert_int_equal(e->a.reason, IMEX_REVOKE_NODE_LOST);
	/* c's import still waits, and b cannot be asked now. */
	assert_int_equal(imexd_broker_deadline(t->a),
			 IMEX_IMPORT_TIMEOUT_MAX_MS);
	import_sent(t, t->a, 11, 3, "c");
	{
		struct imexd_import imp = imp_of(4, "b", DOM1, 1);

		imexd_broker_import(t->a, 11, t->fsm, &imp);
		drain(t->a);
		assert_int_equal(one(IMEXD_BROKER_DONE)->a.error,
				 EHOSTUNREACH);
	}

	/* Down first, then lost: the import ends at the drop. */
	imexd_broker_peer_down(t->a, 12, "c");
	drain(t->a);
	assert_int_equal(count(IMEXD_BROKER_DONE), 2);
	assert_int_equal(count(IMEXD_BROKER_REVOKE), 0);
	imexd_broker_peer_lost(t->a, 13, "c", t->fsm);
	drain(t->a);
	assert_int_equal(count(IMEXD_BROKER_DONE), 0);
	assert_int_equal(one(IMEXD_BROKER_REVOKE)->a.reason,
			 IMEX_REVOKE_NODE_LOST);
}

void test_exporter_restarted(void **state)
{
	struct tb *t = *state;
	uint8_t ub[16];
	struct got *e;

	node_uuid(ub, "b");
	import_sent(t, t->a, 0, 1, "b");
	imexd_broker_peer_up(t->a, 5, "b", true, t->fsm);
	drain(t->a);
	e = one(IMEXD_BROKER_DONE);
	assert_int_equal(e->a.error, EHOSTUNREACH);
	e = one(IMEXD_BROKER_REVOKE);
	assert_memory_equal(e->a.node_uuid, ub, 16);
	assert_int_equal(e->a.reason, IMEX_REVOKE_NODE_RESTARTED);
	/* The new instance can be asked at once. */
	import_sent(t, t->a, 6, 2, "b");
}

/*
 * b replaced in domain one (a replace committed): our imports from b
 * through one only are revoked; an import waiting on b, b's connection and
 * everything else stay.
 */
void test_member_replaced(void **state)
{
	struct tb *t = *state;
	const struct imexd_def *one_def = imexd_fsm_domain(t->fsm, "one");
	uint8_t ub[16];
	struct got *e;

	node_uuid(ub, "b");
	import_sent(t, t->a, 0, 1, "c");
	imexd_broker_member_gone(t->a, 5, "b", one_def, t->fsm);
	drain(t->a);
	e = one(IMEXD_BROKER_REVOKE);
	assert_memory_equal(e->a.node_uuid, ub, 16);
	assert_false(e->a.has_handle);
	assert_true(e->a.has_domain);
	assert_memory_equal(e->a.domain_uuid, DOM1, 16);
	assert_int_equal(e->a.reason, IMEX_REVOKE_NODE_LOST);
	assert_int_equal(count(IMEXD_BROKER_DONE), 0);
	assert_int_equal(imexd_broker_deadline(t->a),
			 IMEX_IMPORT_TIMEOUT_MAX_MS);
	/* A node the table never had, or no domain: nothing. */
	imexd_broker_member_gone(t->a, 6, "zz", one_def, t->fsm);
	imexd_broker_member_gone(t->a, 6, "b", NULL, t->fsm);
	drain(t->a);
	assert_int_equal(count(IMEXD_BROKER_REVOKE), 0);
}

void test_revoke_held_flushed_dropped(void **state)
{
	struct tb *t = *state;
	size_t i;

	/* Both others of "one" up: sent to each, in member order. */
	imexd_broker_export_del(t->a, 0, t->fsm, 5, DOM1, 0);
	assert_int_equal(drain(t->a), 2);
	assert_string_equal(g[0].to, "b");
	assert_string_equal(g[1].to, "c");
	for (i = 0; i < 2; i++) {
		assert_int_equal(g[i].msg.type, IMEXD_MSG_EXPORT_REVOKE);
		assert_memory_equal(g[i].msg.domain_uuid, DOM1, 16);
		assert_int_equal(g[i].msg.u.export_revoke.handle_id, 5);
	}

	/* b away: held for it (once), sent to c; flushed when it is up. */
	imexd_broker_peer_down(t->a, 1, "b");
	drain(t->a);
	imexd_broker_export_del(t->a, 2, t->fsm, 6, DOM1, 0);
	drain(t->a);
	assert_string_equal(one(IMEXD_BROKER_SEND)->to, "c");
	imexd_broker_export_del(t->a, 2, t->fsm, 6, DOM1, 0);
	drain(t->a);
	imexd_broker_export_del(t->a, 3, t->fsm, 7, DOM1, 0);
	drain(t->a);
	imexd_broker_peer_up(t->a, 4, "b", false, t->fsm);
	assert_int_equal(drain(t->a), 2);
	assert_string_equal(g[0].to, "b");
	assert_int_equal(g[0].msg.u.export_revoke.handle_id, 6);
	assert_int_equal(g[1].msg.u.export_revoke.handle_id, 7);
	imexd_broker_peer_down(t->a, 5, "b");
	imexd_broker_peer_up(t->a, 6, "b", false, t->fsm);
	assert_int_equal(drain(t->a), 0);

	/* Dropped once b is lost: it drops our exports by itself. */
	imexd_broker_peer_down(t->a, 7, "b");
	imexd_broker_export_del(t->a, 8, t->fsm, 8, DOM1, 0);
	imexd_broker_peer_lost(t->a, 9, "b", t->fsm);
	drain(t->a);
	imexd_broker_peer_up(t->a, 10, "b", false, t->fsm);
	assert_int_equal(drain(t->a), 0);

	/* Dropped when b comes back restarted. */
	imexd_broker_peer_down(t->a, 11, "b");
	imexd_broker_export_del(t->a, 12, t->fsm, 9, DOM1, 0);
	drain(t->a);
	imexd_broker_peer_up(t->a, 13, "b", true, t->fsm);
	drain(t->a);
	assert_int_equal(count(IMEXD_BROKER_SEND), 0);
	one(IMEXD_BROKER_REVOKE);

	/* A domain the table does not have: nothing to tell. */
	imexd_broker_export_del(t->a, 14, t->fsm, 10, DOM_NONE, 0);
	assert_int_equal(drain(t->a), 0);
	/* "two" = {a, d}: d only. */
	imexd_broker_export_del(t->a, 15, t->fsm, 11, DOM2, 0);
	drain(t->a);
	assert_string_equal(one(IMEXD_BROKER_SEND)->to, "d");
}

void test_revokes_bound(void **state)
{
	struct tb *t = *state;
	struct got *e;
	uint64_t h;

	imexd_broker_peer_down(t->a, 0, "b");
	drain(t->a);
	for (h = 1; h <= IMEXD_BROKER_REVOKES_MAX; h++) {
		imexd_broker_export_del(t->a, h, t->fsm, h, DOM1, 0);
		assert_int_equal(drain(t->a), 1);	/* to c */
	}
	/* One more: the oldest goes, with a line; the next one quietly. */
	imexd_broker_export_del(t->a, h, t->fsm, h, DOM1, 0);
	drain(t->a);
	e = one(IMEXD_BROKER_LOG);
	assert_int_equal(e->a.level, LOG_WARNING);
	assert_non_null(strstr(e->text, "export 1 "));
	imexd_broker_export_del(t->a, h + 1, t->fsm, h + 1, DOM1, 0);
	drain(t->a);
	assert_int_equal(count(IMEXD_BROKER_LOG), 0);

	imexd_broker_peer_up(t->a, h + 2, "b", false, t->fsm);
	assert_int_equal(drain(t->a), IMEXD_BROKER_REVOKES_MAX);
	assert_int_equal(g[0].msg.u.export_revoke.handle_id, 3);
	assert_int_equal(g[ng - 1].msg.u.export_revoke.handle_id, h + 1);
	for (h = 0; h < ng; h++)
		assert_string_equal(g[h].to, "b");
}

void test_revoke_from_peer(void **state)
{
	struct tb *t = *state;
	uint8_t ua[16];
	struct got *e;

	node_uuid(ua, "a");
	/* a (member of "one") ended export 9: b revokes its imports of it. */
	deliver(t, t->b, 0, "a", IMEXD_MSG_EXPORT_REVOKE, DOM1, 9, 0);
	assert_int_equal(ng, 1);
	e = one(IMEXD_BROKER_REVOKE);
	assert_memory_equal(e->a.node_uuid, ua, 16);
	assert_true(e->a.has_handle);
	assert_int_equal(e->a.handle_id, 9);
	assert_true(e->a.has_domain);
	assert_memory_equal(e->a.domain_uuid, DOM1, 16);
	assert_int_equal(e->a.reason, IMEX_REVOKE_UNEXPORTED);

	/* d is not a member of "one": ignored, logged once a minute. */
	deliver(t, t->b, 1, "d", IMEXD_MSG_EXPORT_REVOKE, DOM1, 9, 0);
	assert_int_equal(ng, 1);
	assert_int_equal(one(IMEXD_BROKER_LOG)->a.level, LOG_WARNING);
	deliver(t, t->b, 2, "d", IMEXD_MSG_EXPORT_REVOKE, DOM2, 9, 0);
	assert_int_equal(ng, 0);	/* "two" does not name b */
	deliver(t, t->b, 3, "d", IMEXD_MSG_EXPORT_REVOKE, DOM_NONE, 9, 0);
	assert_int_equal(ng, 0);
	deliver(t, t->b, 60001, "d", IMEXD_MSG_EXPORT_REVOKE, DOM1, 9, 0);
	assert_int_equal(ng, 1);
	assert_non_null(strstr(one(IMEXD_BROKER_LOG)->text, "2 more"));
}

void test_shutdown(void **state)
{
	struct tb *t = *state;
	struct imexd_import imp;
	uint64_t op;

	import_sent(t, t->a, 0, 1, "b");
	import_sent(t, t->a, 0, 2, "c");
	import_sent(t, t->a, 0, 3, "b");
	deliver(t, t->a, 0, "b", IMEXD_MSG_IMPORT_REQ, DOM1, 50, 0);
	op = one(IMEXD_BROKER_CHECK)->a.op_id;
	imexd_broker_peer_down(t->a, 0, "c");	/* import 2 ends here */
	drain(t->a);
	imexd_broker_peer_down(t->a, 0, "b");
	imexd_broker_export_del(t->a, 0, t->fsm, 5, DOM1, 0);	/* held */
	imexd_broker_peer_up(t->a, 0, "b", false, t->fsm);
	imexd_broker_export_del(t->a, 0, t->fsm, 6, DOM1, 0);	/* held: c */
	drain(t->a);
	import_sent(t, t->a, 1, 4, "b");
	import_sent(t, t->a, 1, 5, "b");

	imexd_broker_shutdown(t->a, 2);
	assert_int_equal(drain(t->a), 2);
	assert_int_equal(g[0].a.import_id, 4);
	assert_int_equal(g[0].a.error, ESHUTDOWN);
	assert_int_equal(g[1].a.import_id, 5);
	assert_int_equal(imexd_broker_deadline(t->a), UINT64_MAX);

	/* Nothing starts after: imports end at once, requests are refused,
	 * checks and held ends are gone. */
	imp = imp_of(6, "b", DOM1, 1);
	imexd_broker_import(t->a, 3, t->fsm, &imp);
	drain(t->a);
	assert_int_equal(one(IMEXD_BROKER_DONE)->a.error, ESHUTDOWN);
	deliver(t, t->a, 3, "b", IMEXD_MSG_IMPORT_REQ, DOM1, 51, 0);
	assert_int_equal(one(IMEXD_BROKER_SEND)->msg.u.import_resp.status,
			 ESHUTDOWN);
	imexd_broker_checked(t->a, 4, op, 0, (const uint8_t *)"x", 1);
	assert_int_equal(drain(t->a), 0);
	imexd_broker_peer_up(t->a, 5, "c", false, t->fsm);
	assert_int_equal(drain(t->a), 0);
	imexd_broker_export_del(t->a, 6, t->fsm, 7, DOM1, 0);
	assert_int_equal(drain(t->a), 0);
}

void test_undrained_actions_kept(void **state)
{
	struct tb *t = *state;
	struct imexd_broker_action a;
	struct imexd_import imp = imp_of(1, "b", DOM1, 1);

	/* The caller takes one action, then calls in again: the rest stay,
	 * in order, ahead of the new ones. */
	imexd_broker_export_del(t->a, 0, t->fsm, 5, DOM1, 0);
	assert_true(imexd_broker_next(t->a, &a));
	assert_string_equal(a.to, "b");
	imexd_broker_import(t->a, 0, t->fsm, &imp);
	assert_int_equal(drain(t->a), 2);
	assert_string_equal(g[0].to, "c");
	assert_int_equal(g[0].msg.type, IMEXD_MSG_EXPORT_REVOKE);
	assert_int_equal(g[1].msg.type, IMEXD_MSG_IMPORT_REQ);
}

void test_out_of_memory(void **state)
{
	struct tb *t = *state;
	struct imexd_import imp = imp_of(1, "b", DOM1, 1);
	struct imexd_broker *x;

	/* The first import grows the table: that allocation fails. */
	allocs = 0;
	fail_at = 0;
	imexd_broker_import(t->a, 0, t->fsm, &imp);
	fail_at = -1;
	drain(t->a);
	assert_int_equal(one(IMEXD_BROKER_DONE)->a.error, ENOMEM);
	assert_int_equal(imexd_broker_deadline(t->a), UINT64_MAX);
	import_sent(t, t->a, 0, 2, "b");

	/* The first check likewise: the importer hears ENOMEM. */
	allocs = 0;
	fail_at = 0;
	deliver(t, t->b, 0, "a", IMEXD_MSG_IMPORT_REQ, DOM1, 2, 0);
	fail_at = -1;
	assert_int_equal(count(IMEXD_BROKER_CHECK), 0);
	assert_int_equal(one(IMEXD_BROKER_SEND)->msg.u.import_resp.status,
			 ENOMEM);

	/* A held end that cannot be stored is logged. */
	imexd_broker_peer_down(t->a, 0, "b");
	drain(t->a);
	allocs = 0;
	fail_at = 0;
	imexd_broker_export_del(t->a, 0, t->fsm, 5, DOM1, 0);
	fail_at = -1;
	drain(t->a);
	assert_int_equal(one(IMEXD_BROKER_LOG)->a.level, LOG_ERR);
	imexd_broker_peer_up(t->a, 0, "b", false, t->fsm);
	drain(t->a);
	assert_int_equal(count(IMEXD_BROKER_SEND), 0);

	/* new: bad name, no memory. */
	assert_int_equal(imexd_broker_new("bad name", &x), -EINVAL);
	assert_null(x);
	allocs = 0;
	fail_at = 0;
	assert_int_equal(imexd_broker_new("a", &x), -ENOMEM);
	fail_at = -1;
	assert_null(x);
}
