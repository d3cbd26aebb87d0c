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
#include "test_broker.h"
/* ---- allocation failures (linked with --wrap=realloc) ---- */

long fail_at = -1, allocs;

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
uint8_t DOM1[16], DOM2[16], DOM_NONE[16];

void node_uuid(uint8_t u[16], const char *name)
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

uint64_t fsm_index;

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

struct imexd_fsm *table(void)
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

struct got *g;
size_t ng, g_cap;

/* Drain @b into g[0..ng). */
size_t drain(struct imexd_broker *b)
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

size_t count(enum imexd_broker_action_type type)
{
	size_t i, n = 0;

	for (i = 0; i < ng; i++)
		n += g[i].a.type == type;
	return n;
}

/* The only action of @type drained (fails when not exactly one). */
struct got *one(enum imexd_broker_action_type type)
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
void wire_trip(const struct imexd_msg *in, const char *sender,
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

struct imexd_import imp_of(uint64_t id, const char *exporter,
			   const uint8_t domain[16], uint64_t handle)
{
	struct imexd_import imp = { .import_id = id, .handle_id = handle,
				    .channel_id = 0 };

	node_uuid(imp.handle_node, exporter);
	memcpy(imp.domain_uuid, domain, 16);
	return imp;
}

/* Broker @b imports @id from @exporter; the IMPORT_REQ went out. */
void import_sent(struct tb *t, struct imexd_broker *b, uint64_t now,
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
void deliver(struct tb *t, struct imexd_broker *b, uint64_t now,
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
