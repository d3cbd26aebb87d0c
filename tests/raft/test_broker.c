// SPDX-License-Identifier: GPL-2.0
/*
 * The import broker (imexd/broker.h) over a committed table built with the
 * real fsm: a full import between two brokers (messages through the wire
 * codec), who may ask and who may answer, every bound, timeouts, peers
 * down, lost and restarted, held ends of exports, shutdown, allocation
 * failures, and a random run of two brokers checking that every import
 * ends exactly once and that the same inputs give the same actions.
 * The random run prints its seed; IMEXD_BROKER_SEED=N replays it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "broker.h"
#include "fsm.h"
#include "metrics.h"

/* ---- allocation failures (linked with --wrap=realloc) ---- */

static long fail_at = -1, allocs;

void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);

void *__wrap_realloc(void *p, size_t n)
{
	if (fail_at >= 0 && allocs++ == fail_at)
		return NULL;
	return __real_realloc(p, n);
}

/* ---- the committed table ----
 *
 * Nodes a, b, c, d; domain "one" = {a, b, c}, domain "two" = {a, d}.
 */
static const uint8_t FAB[16] = { 0xfa, 0xb1, 1 };
static uint8_t DOM1[16], DOM2[16], DOM_NONE[16];

static void node_uuid(uint8_t u[16], const char *name)
{
	memset(u, 0, 16);
	u[0] = 0x70;
	u[1] = (uint8_t)name[0];
	u[15] = 0x01;
}

static void dom_uuid(uint8_t u[16], unsigned int v)
{
	memset(u, 0, 16);
	u[0] = 0xd0;
	u[15] = (uint8_t)v;
}

static uint64_t fsm_index;

static void fsm_ok(struct imexd_fsm *fsm, struct imexd_cmd *c)
{
	struct imexd_fsm_result r;

	assert_int_equal(imexd_fsm_apply(fsm, ++fsm_index, c, &r), 0);
	if (r.error)
		fail_msg("refused (%d): %s", r.error, r.message);
	imexd_fsm_result_free(&r);
	imexd_cmd_free(c);
}

static void fsm_node(struct imexd_fsm *fsm, const char *name)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_NODE_SET };

	snprintf(c.u.node_set.name, sizeof(c.u.node_set.name), "%s", name);
	node_uuid(c.u.node_set.uuid, name);
	memcpy(c.u.node_set.fabric_uuid, FAB, 16);
	c.u.node_set.partition = 1;
	c.u.node_set.max_channels = 64;
	fsm_ok(fsm, &c);
}

static void fsm_domain(struct imexd_fsm *fsm, const char *name,
		       const uint8_t uuid[16], const char *const *members,
		       uint16_t n)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_DOMAIN_CREATE };
	uint16_t i;

	snprintf(c.u.create.name, sizeof(c.u.create.name), "%s", name);
	memcpy(c.u.create.uuid, uuid, 16);
	c.u.create.members = calloc(n, sizeof(*c.u.create.members));
	assert_non_null(c.u.create.members);
	for (i = 0; i < n; i++) {
		snprintf(c.u.create.members[i].name, IMEX_NAME_MAX, "%s",
			 members[i]);
		snprintf(c.u.create.members[i].addr, IMEXD_ADDR_MAX, "%s:1",
			 members[i]);
	}
	c.u.create.nmembers = n;
	c.u.create.ch.count = 1;
	c.u.create.ch.mode = 0660;
	fsm_ok(fsm, &c);
}

static struct imexd_fsm *table(void)
{
	static const char *const in_one[] = { "a", "b", "c" };
	static const char *const in_two[] = { "a", "d" };
	struct imexd_fsm *fsm = imexd_fsm_new();

	assert_non_null(fsm);
	dom_uuid(DOM1, 1);
	dom_uuid(DOM2, 2);
	dom_uuid(DOM_NONE, 9);
	fsm_node(fsm, "a");
	fsm_node(fsm, "b");
	fsm_node(fsm, "c");
	fsm_node(fsm, "d");
	fsm_domain(fsm, "one", DOM1, in_one, 3);
	fsm_domain(fsm, "two", DOM2, in_two, 2);
	return fsm;
}

/* ---- drained actions, copied ---- */

struct got {
	struct imexd_broker_action a;
	struct imexd_msg msg;
	char to[IMEX_NAME_MAX];
	char text[512];
	uint8_t desc[IMEX_DESC_MAX];
};

static struct got *g;
static size_t ng, g_cap;

/* Drain @b into g[0..ng). */
static size_t drain(struct imexd_broker *b)
{
	struct imexd_broker_action a;

	ng = 0;
	while (imexd_broker_next(b, &a)) {
		struct got *e;

		if (ng == g_cap) {
			g_cap = g_cap ? g_cap * 2 : 64;
			g = __real_realloc(g, g_cap * sizeof(*g));
			assert_non_null(g);
		}
		e = &g[ng++];
		memset(e, 0, sizeof(*e));
		e->a = a;
		if (a.to)
			snprintf(e->to, sizeof(e->to), "%s", a.to);
		if (a.text)
			snprintf(e->text, sizeof(e->text), "%s", a.text);
		if (a.msg)
			e->msg = *a.msg;
		if (a.desc) {
			assert_true(a.desc_len <= IMEX_DESC_MAX);
			memcpy(e->desc, a.desc, a.desc_len);
		}
	}
	return ng;
}

static size_t count(enum imexd_broker_action_type type)
{
	size_t i, n = 0;

	for (i = 0; i < ng; i++)
		n += g[i].a.type == type;
	return n;
}

/* The only action of @type drained (fails when not exactly one). */
static struct got *one(enum imexd_broker_action_type type)
{
	struct got *hit = NULL;
	size_t i;

	for (i = 0; i < ng; i++) {
		if (g[i].a.type != type)
			continue;
		if (hit)
			fail_msg("more than one action of type %d", type);
		hit = &g[i];
	}
	if (!hit)
		fail_msg("no action of type %d", type);
	return hit;
}

/* Through the wire codec as the dispatcher would send it. */
static void wire_trip(const struct imexd_msg *in, const char *sender,
		      struct imexd_msg *out)
{
	struct imexd_msg m = *in;
	uint8_t *buf;
	size_t len;

	node_uuid(m.sender_uuid, sender);
	m.sender_epoch = 42;
	assert_int_equal(imexd_msg_encode(&m, &buf, &len), 0);
	assert_int_equal(imexd_msg_decode(buf, len, out, NULL), 0);
	free(buf);
}

/* ---- fixture: brokers a and b over the table, all peers up ---- */

struct tb {
	struct imexd_fsm *fsm;
	struct imexd_broker *a, *b;
};

static int tb_setup(void **state)
{
	struct tb *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	fsm_index = 0;
	t->fsm = table();
	assert_int_equal(imexd_broker_new("a", &t->a), 0);
	assert_int_equal(imexd_broker_new("b", &t->b), 0);
	imexd_broker_peer_up(t->a, 0, "b", false, t->fsm);
	imexd_broker_peer_up(t->a, 0, "c", false, t->fsm);
	imexd_broker_peer_up(t->a, 0, "d", false, t->fsm);
	imexd_broker_peer_up(t->b, 0, "a", false, t->fsm);
	imexd_broker_peer_up(t->b, 0, "c", false, t->fsm);
	imexd_broker_peer_up(t->b, 0, "d", false, t->fsm);
	assert_int_equal(drain(t->a), 0);
	assert_int_equal(drain(t->b), 0);
	*state = t;
	return 0;
}

static int tb_teardown(void **state)
{
	struct tb *t = *state;

	imexd_broker_free(t->a);
	imexd_broker_free(t->b);
	imexd_fsm_free(t->fsm);
	free(t);
	free(g);
	g = NULL;
	ng = g_cap = 0;
	fail_at = -1;
	return 0;
}

static struct imexd_import imp_of(uint64_t id, const char *exporter,
				  const uint8_t domain[16], uint64_t handle)
{
	struct imexd_import imp = { .import_id = id, .handle_id = handle,
				    .channel_id = 0 };

	node_uuid(imp.handle_node, exporter);
	memcpy(imp.domain_uuid, domain, 16);
	return imp;
}

/* Broker @b imports @id from @exporter; the IMPORT_REQ went out. */
static void import_sent(struct tb *t, struct imexd_broker *b, uint64_t now,
			uint64_t id, const char *exporter)
{
	struct imexd_import imp = imp_of(id, exporter, DOM1, 1000 + id);
	struct got *s;

	imexd_broker_import(b, now, t->fsm, &imp);
	drain(b);
	s = one(IMEXD_BROKER_SEND);
	assert_int_equal(ng, 1);
	assert_string_equal(s->to, exporter);
	assert_int_equal(s->msg.type, IMEXD_MSG_IMPORT_REQ);
	assert_int_equal(s->msg.u.import_req.tag, id);
}

/* Broker @b gets @type for @domain from @from (body fields as given). */
static void deliver(struct tb *t, struct imexd_broker *b, uint64_t now,
		    const char *from, uint8_t type, const uint8_t domain[16],
		    uint64_t x, int32_t status)
{
	struct imexd_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	memcpy(m.domain_uuid, domain, 16);
	node_uuid(m.sender_uuid, from);
	switch (type) {
	case IMEXD_MSG_IMPORT_REQ:
		m.u.import_req.tag = x;
		m.u.import_req.handle_id = 77;
		m.u.import_req.channel_id = 0;
		break;
	case IMEXD_MSG_IMPORT_RESP:
		m.u.import_resp.tag = x;
		m.u.import_resp.status = status;
		if (!status) {
			m.u.import_resp.desc_len = 2;
			m.u.import_resp.desc[0] = 0xde;
			m.u.import_resp.desc[1] = 0xad;
		}
		break;
	case IMEXD_MSG_EXPORT_REVOKE:
		m.u.export_revoke.handle_id = x;
		break;
	default:
		break;
	}
	imexd_broker_msg(b, now, t->fsm, from, &m);
	drain(b);
}

/* ---- tests ---- */

static void test_round_trip(void **state)
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

static void test_importer_refusals(void **state)
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

static void test_non_member_request_refused(void **state)
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

static void test_wrong_responder_ignored(void **state)
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

static void test_imports_bound(void **state)
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

static void test_checks_bound(void **state)
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

static void test_checked_after_importer_left(void **state)
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

static void test_timeout(void **state)
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

static void test_exporter_lost(void **state)
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

static void test_exporter_restarted(void **state)
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
static void test_member_replaced(void **state)
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

static void test_revoke_held_flushed_dropped(void **state)
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

static void test_revokes_bound(void **state)
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

static void test_revoke_from_peer(void **state)
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

static void test_shutdown(void **state)
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

static void test_undrained_actions_kept(void **state)
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

static void test_out_of_memory(void **state)
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

/* ---- random run: two brokers, a lossy link, a kernel on each side ----
 *
 * Every import must end exactly once (DONE), and the same seed must give
 * the same actions (a hash of them) twice.
 */
static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

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

static void test_random_runs(void **state)
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, tb_setup,
						tb_teardown),
		cmocka_unit_test_setup_teardown(test_importer_refusals,
						tb_setup, tb_teardown),
		cmocka_unit_test_setup_teardown(test_non_member_request_refused,
						tb_setup, tb_teardown),
		cmocka_unit_test_setup_teardown(test_wrong_responder_ignored,
						tb_setup, tb_teardown),
		cmocka_unit_test_setup_teardown(test_imports_bound, tb_setup,
						tb_teardown),
		cmocka_unit_test_setup_teardown(test_checks_bound, tb_setup,
						tb_teardown),
		cmocka_unit_test_setup_teardown(test_checked_after_importer_left,
						tb_setup, tb_teardown),
		cmocka_unit_test_setup_teardown(test_timeout, tb_setup,
						tb_teardown),
		cmocka_unit_test_setup_teardown(test_exporter_lost, tb_setup,
						tb_teardown),
		cmocka_unit_test_setup_teardown(test_member_replaced, tb_setup,
						tb_teardown),
		cmocka_unit_test_setup_teardown(test_exporter_restarted,
						tb_setup, tb_teardown),
		cmocka_unit_test_setup_teardown(test_revoke_held_flushed_dropped,
						tb_setup, tb_teardown),
		cmocka_unit_test_setup_teardown(test_revokes_bound, tb_setup,
						tb_teardown),
		cmocka_unit_test_setup_teardown(test_revoke_from_peer,
						tb_setup, tb_teardown),
		cmocka_unit_test_setup_teardown(test_shutdown, tb_setup,
						tb_teardown),
		cmocka_unit_test_setup_teardown(test_undrained_actions_kept,
						tb_setup, tb_teardown),
		cmocka_unit_test_setup_teardown(test_out_of_memory, tb_setup,
						tb_teardown),
		cmocka_unit_test(test_random_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
