// SPDX-License-Identifier: GPL-2.0
/*
 * The peers part (imexd/peers.[ch]): roster-only binding through the
 * HELLO exchange, TLS name binding, duplicate connections (two peers
 * objects driven against each other over a simulated network), restarts,
 * reconnect backoff, the bounds on unbound connections, the hello timeout,
 * LEAVE on shutdown, and that nothing from an unbound connection is ever
 * delivered.
 *
 * The duplicate-connection test delivers events in random orders; it
 * prints its seed, and IMEXD_PEERS_SEED=N replays that one order.
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

#include "peers.h"

/* ---- recording a part's actions ------------------------------------------ */

#define RECS_MAX	256
#define FRAME_MAX	256		/* the frames these tests see */
#define PV		IMEXD_PROTO_VERSION	/* this protocol */

struct rec {
	enum imexd_peers_action_type type;
	uint64_t conn;
	char name[IMEX_NAME_MAX];
	char addr[IMEXD_ADDR_MAX + 1];
	uint64_t epoch;
	uint8_t uuid[16];
	bool restarted;
	bool replaced;
	uint8_t msg_type;		/* MSG, PEER_UP: the message's type */
	struct imexd_msg sent;		/* SEND: the frame, decoded */
	uint8_t frame[FRAME_MAX];	/* SEND: the frame */
	size_t len;
	int level;
	char text[512];
};

struct tp {
	struct imexd_peers *p;
	struct rec r[RECS_MAX];
	size_t n;
};

static void tp_clear(struct tp *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->r[i].type == IMEXD_PEERS_SEND)
			imexd_msg_free(&t->r[i].sent);
	t->n = 0;
}

/* Forget what was recorded, then record every queued action. */
static void drain(struct tp *t)
{
	struct imexd_peers_action a;

	tp_clear(t);
	while (imexd_peers_next(t->p, &a)) {
		struct rec *r;

		if (t->n >= RECS_MAX) {
			fprintf(stderr, "more than %d actions at once\n", RECS_MAX);
			abort();
		}
		r = &t->r[t->n++];
		memset(r, 0, sizeof(*r));
		r->type = a.type;
		r->conn = a.conn;
		if (a.name)
			snprintf(r->name, sizeof(r->name), "%s", a.name);
		if (a.addr)
			snprintf(r->addr, sizeof(r->addr), "%s", a.addr);
		r->epoch = a.epoch;
		if (a.uuid)
			memcpy(r->uuid, a.uuid, 16);
		r->restarted = a.restarted;
		r->replaced = a.replaced;
		if (a.msg)
			r->msg_type = a.msg->type;
		if (a.type == IMEXD_PEERS_SEND) {
			assert_non_null(a.frame);
			assert_true(a.len <= FRAME_MAX);
			assert_int_equal(imexd_msg_decode(a.frame, a.len,
							  &r->sent, NULL), 0);
			memcpy(r->frame, a.frame, a.len);
			r->len = a.len;
		}
		if (a.type == IMEXD_PEERS_LOG) {
			assert_non_null(a.text);
			r->level = a.level;
			snprintf(r->text, sizeof(r->text), "%s", a.text);
		}
	}
}

static unsigned count(const struct tp *t, enum imexd_peers_action_type type)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < t->n; i++)
		n += t->r[i].type == type;
	return n;
}

/* The first recorded action of @type (on @conn unless 0), or NULL. */
static const struct rec *find(const struct tp *t,
			      enum imexd_peers_action_type type, uint64_t conn)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->r[i].type == type && (!conn || t->r[i].conn == conn))
			return &t->r[i];
	return NULL;
}

/* A SEND of a message of @msg_type on @conn, or NULL. */
static const struct rec *find_sent(const struct tp *t, uint8_t msg_type,
				   uint64_t conn)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->r[i].type == IMEXD_PEERS_SEND &&
		    t->r[i].sent.type == msg_type && t->r[i].conn == conn)
			return &t->r[i];
	return NULL;
}

/* ---- setting up ------------------------------------------------------------ */

static const struct imexd_roster_node roster3[] = {
	{ "a", "10.0.0.1:50100" },
	{ "b", "10.0.0.2:50100" },
	{ "c", "10.0.0.3:50100" },
};

static void uuid_of(uint8_t u[16], const char *name, uint64_t epoch)
{
	memset(u, 0, 16);
	u[0] = (uint8_t)name[0];
	u[15] = (uint8_t)epoch;
}

static struct imexd_peers_config config(const char *self)
{
	struct imexd_peers_config c;

	memset(&c, 0, sizeof(c));
	c.self = self;
	uuid_of(c.self_uuid, self, 1);
	c.epoch = 1;
	c.roster = roster3;
	c.n_roster = 3;
	c.max_channels = 2048;
	return c;
}

static void tp_new(struct tp *t, const struct imexd_peers_config *c)
{
	memset(t, 0, sizeof(*t));
	assert_int_equal(imexd_peers_new(c, &t->p), 0);
}

static void tp_free(struct tp *t)
{
	tp_clear(t);
	imexd_peers_free(t->p);
	t->p = NULL;
}

/* A HELLO or HELLO_ACK from node @name, instance @epoch, range lo..hi. */
static void hello(struct imexd_msg *m, uint8_t type, const char *name,
		  uint64_t epoch, uint16_t lo, uint16_t hi)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	uuid_of(m->sender_uuid, name, epoch);
	m->sender_epoch = epoch;
	m->u.hello.proto_min = lo;
	m->u.hello.proto_max = hi;
	snprintf(m->u.hello.node_name, sizeof(m->u.hello.node_name), "%s", name);
	m->u.hello.max_channels = 2048;
}

static void leave_from(struct imexd_msg *m, const char *name, uint64_t epoch)
{
	memset(m, 0, sizeof(*m));
	m->type = IMEXD_MSG_LEAVE;
	uuid_of(m->sender_uuid, name, epoch);
	m->sender_epoch = epoch;
	m->u.leave.reason = IMEXD_LEAVE_SHUTDOWN;
}

/* Inbound @conn from @addr says HELLO as @name (epoch 1, this protocol). */
static void inbound_hello(struct tp *t, uint64_t now, uint64_t conn,
			  const char *addr, const char *name,
			  const struct imexd_peers_auth *auth)
{
	struct imexd_msg m;

	imexd_peers_conn_up(t->p, now, conn, addr, false, auth);
	drain(t);
	hello(&m, IMEXD_MSG_HELLO, name, 1, PV, PV);
	imexd_peers_msg(t->p, now, conn, &m);
	drain(t);
}

/* ---- creation ------------------------------------------------------------- */

static void test_new_checks_its_config(void **state)
{
	static const struct imexd_roster_node dup[] = {
		{ "a", "" }, { "b", "" }, { "b", "h" },
	};
	static const struct imexd_roster_node badname[] = { { "_x", "" } };
	static const struct imexd_roster_node badaddr[] = { { "x", "a b" } };
	struct imexd_peers_config c = config("a");
	struct imexd_peers *p = NULL;

	(void)state;
	c.self = "";
	assert_int_equal(imexd_peers_new(&c, &p), -EINVAL);
	c.self = "a";
	c.epoch = 0;
	assert_int_equal(imexd_peers_new(&c, &p), -EINVAL);
	c.epoch = 1;
	c.roster = dup;
	c.n_roster = 3;
	assert_int_equal(imexd_peers_new(&c, &p), -EINVAL);
	c.roster = badname;
	c.n_roster = 1;
	assert_int_equal(imexd_peers_new(&c, &p), -EINVAL);
	c.roster = badaddr;
	assert_int_equal(imexd_peers_new(&c, &p), -EINVAL);
	assert_null(p);
	c.roster = roster3;
	c.n_roster = 3;
	assert_int_equal(imexd_peers_new(&c, &p), 0);
	imexd_peers_free(p);
}

/* Every roster peer but self is dialled, at its normalized address. */
static void test_start_dials_the_roster(void **state)
{
	static const struct imexd_roster_node r[] = {
		{ "a", "" }, { "b", "" }, { "c", "hostc" }, { "d", "fe80::1" },
		{ "e", "[fe80::2]" }, { "f", "10.1.1.1:7" },
	};
	struct imexd_peers_config c = config("a");
	static const char *const want[] = {
		"b:4242", "hostc:4242", "[fe80::1]:4242", "[fe80::2]:4242",
		"10.1.1.1:7",
	};
	struct tp t;
	size_t i;

	(void)state;
	c.roster = r;
	c.n_roster = 6;
	c.default_port = 4242;
	tp_new(&t, &c);
	assert_int_equal(imexd_peers_deadline(t.p), UINT64_MAX);
	imexd_peers_start(t.p, 100);
	drain(&t);
	assert_int_equal(t.n, 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(t.r[i].type, IMEXD_PEERS_CONNECT);
		assert_string_equal(t.r[i].addr, want[i]);
	}
	/* Dials under way: nothing more until they end. */
	imexd_peers_timer(t.p, 100000);
	drain(&t);
	assert_int_equal(t.n, 0);
	tp_free(&t);
}

/* ---- binding --------------------------------------------------------------- */

static void test_inbound_hello_binds_a_roster_peer(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	const struct rec *r;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_conn_up(t.p, 10, 7, "10.0.0.2:41000", false, NULL);
	drain(&t);
	assert_int_equal(t.n, 0);		/* the dialler speaks first */
	assert_false(imexd_peers_connected(t.p, "b"));
	hello(&m, IMEXD_MSG_HELLO, "b", 5, 1, PV);
	imexd_peers_msg(t.p, 10, 7, &m);
	drain(&t);
	r = find_sent(&t, IMEXD_MSG_HELLO_ACK, 7);
	assert_non_null(r);
	assert_string_equal(r->sent.u.hello.node_name, "a");
	assert_int_equal(r->sent.u.hello.proto_min, IMEXD_PROTO_VERSION);
	assert_int_equal(r->sent.u.hello.proto_max, IMEXD_PROTO_VERSION);
	assert_int_equal(r->sent.u.hello.max_channels, 2048);
	assert_true(r->sent.sender_epoch == 1);
	assert_memory_equal(r->sent.sender_uuid, c.self_uuid, 16);
	r = find(&t, IMEXD_PEERS_PEER_UP, 7);
	assert_non_null(r);
	assert_string_equal(r->name, "b");
	assert_true(r->epoch == 5);
	assert_memory_equal(r->uuid, m.sender_uuid, 16);
	assert_false(r->restarted);
	assert_int_equal(r->msg_type, IMEXD_MSG_HELLO);
	assert_true(imexd_peers_connected(t.p, "b"));
	assert_true(imexd_peers_conn(t.p, "b") == 7);
	assert_true(imexd_peers_conn(t.p, "c") == 0);

	/* Messages now reach the other parts, with the proved name. */
	leave_from(&m, "b", 5);
	imexd_peers_msg(t.p, 11, 7, &m);
	drain(&t);
	r = find(&t, IMEXD_PEERS_MSG, 7);
	assert_non_null(r);
	assert_string_equal(r->name, "b");
	assert_int_equal(r->msg_type, IMEXD_MSG_LEAVE);

	/* And sending fills in the header. */
	memset(&m, 0, sizeof(m));
	m.type = IMEXD_MSG_HEARTBEAT;
	assert_int_equal(imexd_peers_send(t.p, "b", &m), 0);
	assert_int_equal(imexd_peers_send(t.p, "c", &m), -ENOTCONN);
	assert_int_equal(imexd_peers_send(t.p, "zz", &m), -ENOTCONN);
	m.type = 0;
	assert_int_equal(imexd_peers_send(t.p, "b", &m), -EINVAL);
	drain(&t);
	assert_int_equal(t.n, 1);
	r = find_sent(&t, IMEXD_MSG_HEARTBEAT, 7);
	assert_non_null(r);
	assert_true(r->sent.sender_epoch == 1);
	assert_memory_equal(r->sent.sender_uuid, c.self_uuid, 16);
	tp_free(&t);
}

static void test_outbound_hello_ack_binds(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 0);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CONNECT), 2);
	imexd_peers_conn_up(t.p, 5, 3, "10.0.0.2:50100", true, NULL);
	drain(&t);
	assert_non_null(find_sent(&t, IMEXD_MSG_HELLO, 3));
	/* b answers: bound, nothing more to send. */
	hello(&m, IMEXD_MSG_HELLO_ACK, "b", 9, PV, PV);
	imexd_peers_msg(t.p, 6, 3, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 3));
	assert_int_equal(count(&t, IMEXD_PEERS_SEND), 0);
	assert_true(imexd_peers_conn(t.p, "b") == 3);

	/* An outbound connection nothing here dialled is closed. */
	imexd_peers_conn_up(t.p, 7, 4, "10.9.9.9:1", true, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 4));
	tp_free(&t);
}

static void test_hello_direction_and_node_map(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 0);
	drain(&t);
	/* HELLO_ACK on an inbound connection. */
	imexd_peers_conn_up(t.p, 1, 1, "10.0.0.2:4000", false, NULL);
	hello(&m, IMEXD_MSG_HELLO_ACK, "b", 1, PV, PV);
	imexd_peers_msg(t.p, 1, 1, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	/* b's address answered as c. */
	imexd_peers_conn_up(t.p, 2, 2, "10.0.0.2:50100", true, NULL);
	hello(&m, IMEXD_MSG_HELLO_ACK, "c", 1, PV, PV);
	imexd_peers_msg(t.p, 2, 2, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	assert_non_null(strstr(find(&t, IMEXD_PEERS_LOG, 0)->text,
			       "node-map mismatch"));
	assert_false(imexd_peers_connected(t.p, "b"));
	assert_false(imexd_peers_connected(t.p, "c"));
	tp_free(&t);
}

/* Two roster nodes at one address: each dial is its own connection. */
static void test_shared_address_dials(void **state)
{
	static const struct imexd_roster_node r[] = {
		{ "a", "10.0.0.1:50100" }, { "b", "10.0.0.2:50100" },
		{ "c", "10.0.0.2:50100" },
	};
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	struct tp t;

	(void)state;
	c.roster = r;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 0);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CONNECT), 2);
	imexd_peers_conn_up(t.p, 1, 1, "10.0.0.2:50100", true, NULL);
	imexd_peers_conn_up(t.p, 1, 2, "10.0.0.2:50100", true, NULL);
	drain(&t);
	assert_non_null(find_sent(&t, IMEXD_MSG_HELLO, 1));
	assert_non_null(find_sent(&t, IMEXD_MSG_HELLO, 2));
	hello(&m, IMEXD_MSG_HELLO_ACK, "b", 1, PV, PV);
	imexd_peers_msg(t.p, 2, 1, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 1));
	/* The second dial was c's: b answering there is refused, and c is
	 * dialled again after the backoff. */
	imexd_peers_msg(t.p, 2, 2, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_true(imexd_peers_conn(t.p, "b") == 1);
	assert_true(imexd_peers_deadline(t.p) == 502);
	imexd_peers_timer(t.p, 502);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CONNECT), 1);
	tp_free(&t);
}

static void test_non_roster_and_self_refused(void **state)
{
	struct imexd_peers_config c = config("a");
	const struct rec *r;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	inbound_hello(&t, 1000, 1, "10.0.0.66:999", "mallory", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	assert_int_equal(count(&t, IMEXD_PEERS_SEND), 0);
	r = find(&t, IMEXD_PEERS_LOG, 0);
	assert_non_null(r);
	assert_int_equal(r->level, 4);
	assert_non_null(strstr(r->text, "'mallory'"));
	assert_non_null(strstr(r->text, "10.0.0.66:999"));
	assert_false(imexd_peers_connected(t.p, "mallory"));

	/* The same (host, name) again within a minute: closed, not logged. */
	inbound_hello(&t, 30000, 2, "10.0.0.66:1000", "mallory", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 0);
	/* Another name from that host is a line of its own. */
	inbound_hello(&t, 30000, 3, "10.0.0.66:1001", "eve", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 3));
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);
	/* A minute later, logged again. */
	inbound_hello(&t, 61000, 4, "10.0.0.66:1002", "mallory", NULL);
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);

	/* Self. */
	inbound_hello(&t, 61000, 5, "10.0.0.1:5555", "a", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 5));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	assert_non_null(strstr(find(&t, IMEXD_PEERS_LOG, 0)->text,
			       "this node"));
	assert_false(imexd_peers_connected(t.p, "a"));
	tp_free(&t);
}

/* Membership: an added name is dialled and may bind; a removed one is
 * closed and refused; at most IMEXD_PEERS_MAX names are ever held. */
static void test_added_and_removed_peers(void **state)
{
	struct imexd_peers_config c = config("a");
	const struct rec *r;
	struct tp t;
	unsigned i;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 1000);
	drain(&t);
	tp_clear(&t);
	/* "d" is refused before it is added. */
	inbound_hello(&t, 1000, 1, "10.0.0.4:999", "d", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	tp_clear(&t);
	assert_int_equal(imexd_peers_add(t.p, 1000, "d", "10.0.0.4:7000"), 0);
	drain(&t);
	r = find(&t, IMEXD_PEERS_CONNECT, 0);
	assert_non_null(r);
	assert_string_equal(r->addr, "10.0.0.4:7000");
	tp_clear(&t);
	inbound_hello(&t, 1001, 2, "10.0.0.4:1000", "d", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 2));
	assert_true(imexd_peers_connected(t.p, "d"));
	tp_clear(&t);
	/* Removed: its connection closes, it is down, a new HELLO refused. */
	imexd_peers_remove(t.p, 1002, "d");
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 2));
	assert_false(imexd_peers_connected(t.p, "d"));
	tp_clear(&t);
	imexd_peers_conn_down(t.p, 1002, 2);
	drain(&t);
	imexd_peers_timer(t.p, 100000);
	drain(&t);
	assert_null(find(&t, IMEXD_PEERS_CONNECT, 0));
	inbound_hello(&t, 100000, 3, "10.0.0.4:1001", "d", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 3));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	tp_clear(&t);
	/* Bad names and self are refused; the table is bounded. */
	assert_int_equal(imexd_peers_add(t.p, 1, "a", NULL), -EINVAL);
	assert_int_equal(imexd_peers_add(t.p, 1, "-x", NULL), -EINVAL);
	for (i = 0; i < IMEXD_PEERS_MAX + 5; i++) {
		char name[16];
		int rv;

		snprintf(name, sizeof(name), "m%u", i);
		rv = imexd_peers_add(t.p, 1, name, NULL);
		/* b, c and d hold three of the places (removed d's dial
		 * is still outstanding). */
		assert_int_equal(rv, i + 3 < IMEXD_PEERS_MAX ? 0 : -ENOSPC);
		tp_clear(&t);
		drain(&t);
		tp_clear(&t);
	}
	assert_int_equal(imexd_peers_count(t.p), IMEXD_PEERS_MAX);
	tp_free(&t);
}

/* Names that joined and left give their places back: a daemon's life may
 * see any number of them, IMEXD_PEERS_MAX at once at most. */
static void test_removed_places_reused(void **state)
{
	struct imexd_peers_config c = config("a");
	struct tp t;
	unsigned i;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 1000);
	drain(&t);
	tp_clear(&t);
	for (i = 0; i < 2 * IMEXD_PEERS_MAX; i++) {
		char name[16];

		snprintf(name, sizeof(name), "m%u", i);
		if (imexd_peers_add(t.p, 1, name, "192.0.2.9:7000"))
			break;
		drain(&t);
		imexd_peers_remove(t.p, 1, name);
		/* Its dial's outcome comes after: then the place is free. */
		imexd_peers_conn_failed(t.p, 1, "192.0.2.9:7000");
		drain(&t);
		tp_clear(&t);
	}
	printf("  %u names joined and left\n", i);
	assert_int_equal(i, 2 * IMEXD_PEERS_MAX);
	assert_int_equal(imexd_peers_add(t.p, 2, "fresh", NULL), 0);
	assert_true(imexd_peers_count(t.p) <= 4);
	tp_free(&t);
}

/* Many refused names: the log limiter's table stays bounded. */
static void test_refusal_log_table_is_bounded(void **state)
{
	struct imexd_peers_config c = config("a");
	char name[32], addr[32];
	unsigned i, logs = 0;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	/* A host a minute apart: each key new, each logged once. */
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "x%u", i);
		snprintf(addr, sizeof(addr), "10.1.%u.%u:1", i / 250, i % 250);
		inbound_hello(&t, 5000 + 60000ULL * i, 100 + i, addr, name, NULL);
		assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 100 + i));
		logs += count(&t, IMEXD_PEERS_LOG);
	}
	assert_int_equal(logs, 1000);
	tp_free(&t);
}

/*
 * One host cycling through junk names logs IMEXD_PEERS_LOG_PER_HOST lines a
 * minute and one that says the rest are not; other hosts still get theirs;
 * at most IMEXD_PEERS_LOG_HOSTS hosts a minute are logged at all.
 */
static void test_refusal_log_per_host_bounded(void **state)
{
	struct imexd_peers_config c = config("a");
	char name[32], addr[32];
	unsigned i, logs = 0;
	const struct rec *r;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "junk%u", i);
		inbound_hello(&t, 1000 + i, 100 + i, "10.9.9.9:4000", name, NULL);
		assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 100 + i));
		r = find(&t, IMEXD_PEERS_LOG, 0);
		if (r && logs == IMEXD_PEERS_LOG_PER_HOST)
			assert_string_equal(r->text,
					    "more refused connections from 10.9.9.9: not logged for up to a minute");
		logs += count(&t, IMEXD_PEERS_LOG);
	}
	assert_int_equal(logs, IMEXD_PEERS_LOG_PER_HOST + 1);

	/* Another host is logged; the first one again a minute later. */
	inbound_hello(&t, 2000, 2000, "10.9.9.8:4000", "junk0", NULL);
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);
	inbound_hello(&t, 2000, 2001, "10.9.9.9:4001", "junkx", NULL);
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 0);
	inbound_hello(&t, 2000 + 60000, 2002, "10.9.9.9:4001", "junkx", NULL);
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);

	/* The host table: within one minute, the hosts past it are not logged. */
	logs = 0;
	for (i = 0; i < 100; i++) {
		snprintf(addr, sizeof(addr), "10.2.0.%u:1", i);
		inbound_hello(&t, 200000, 3000 + i, addr, "junk", NULL);
		assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 3000 + i));
		logs += count(&t, IMEXD_PEERS_LOG);
	}
	assert_int_equal(logs, IMEXD_PEERS_LOG_HOSTS);
	tp_free(&t);
}

/* ---- TLS ------------------------------------------------------------------- */

static void test_tls_claim_must_be_in_the_certificate(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_peers_auth auth = { .tls = true, .n_names = 1 };
	const struct rec *r;
	struct tp t;

	(void)state;
	strcpy(auth.names[0], "x");
	tp_new(&t, &c);
	inbound_hello(&t, 0, 1, "10.0.0.7:41234", "b", &auth);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	/* Someone else's certificate: 'b' is left as it is, counted. */
	assert_null(find(&t, IMEXD_PEERS_PEER_REFUSED, 0));
	assert_true(imexd_peers_claims_refused(t.p) == 1);
	assert_int_equal(count(&t, IMEXD_PEERS_SEND), 0);
	r = find(&t, IMEXD_PEERS_LOG, 0);
	assert_non_null(r);
	assert_int_equal(r->level, 4);
	assert_string_equal(r->text,
			    "peer 10.0.0.7:41234 claims to be 'b' but its certificate names 'x'; refused");

	/* Several names, none of them the claim. */
	auth.n_names = 2;
	strcpy(auth.names[1], "c");
	inbound_hello(&t, 0, 2, "10.0.0.8:1", "b", &auth);
	assert_string_equal(find(&t, IMEXD_PEERS_LOG, 0)->text,
			    "peer 10.0.0.8:1 claims to be 'b' but its certificate names 'x', 'c'; refused");
	/* Case matters: names are exact. */
	strcpy(auth.names[0], "B");
	inbound_hello(&t, 0, 3, "10.0.0.9:1", "b", &auth);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 3));
	assert_false(imexd_peers_connected(t.p, "b"));
	assert_null(find(&t, IMEXD_PEERS_PEER_REFUSED, 0));
	assert_true(imexd_peers_claims_refused(t.p) == 3);

	/* The certificate carries the claim: bound. */
	strcpy(auth.names[0], "b");
	inbound_hello(&t, 0, 4, "10.0.0.2:1", "b", &auth);
	assert_null(find(&t, IMEXD_PEERS_CLOSE, 0));
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 4));
	/* Without TLS the claim is taken as is (the documented limit). */
	auth.tls = false;
	auth.n_names = 0;
	inbound_hello(&t, 0, 5, "10.0.0.3:1", "c", &auth);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 5));
	tp_free(&t);
}

static const struct rec *find_log(const struct tp *t, const char *text)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->r[i].type == IMEXD_PEERS_LOG && strstr(t->r[i].text, text))
			return &t->r[i];
	return NULL;
}

/* ---- protocol versions ----------------------------------------------------- */

static void test_version_mismatch_reported_and_closed(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_peers_auth auth = { .tls = true, .n_names = 1 };
	struct imexd_msg m;
	struct tp t;

	(void)state;
	strcpy(auth.names[0], "b");
	tp_new(&t, &c);
	imexd_peers_conn_up(t.p, 0, 1, "10.0.0.2:1", false, NULL);
	hello(&m, IMEXD_MSG_HELLO, "b", 1, 1, 1);
	imexd_peers_msg(t.p, 0, 1, &m);
	drain(&t);
	/* Inbound without TLS: anyone's claim, logged, 'b' left as it is. */
	assert_null(find(&t, IMEXD_PEERS_PEER_VERSION, 0));
	assert_non_null(find_log(&t, "speaks protocol 1..1"));
	assert_non_null(find_sent(&t, IMEXD_MSG_HELLO_ACK, 1));
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	/* With TLS, the certificate naming 'b': reported. */
	imexd_peers_conn_up(t.p, 0, 9, "10.0.0.2:9", false, &auth);
	imexd_peers_msg(t.p, 0, 9, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_VERSION, 9));
	assert_string_equal(find(&t, IMEXD_PEERS_PEER_VERSION, 9)->name, "b");
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 9));
	leave_from(&m, "b", 1);
	imexd_peers_msg(t.p, 0, 1, &m);
	drain(&t);
	assert_int_equal(t.n, 0);

	/* Outbound: the next dial waits backoff_max. */
	imexd_peers_start(t.p, 0);
	drain(&t);
	imexd_peers_conn_up(t.p, 0, 2, "10.0.0.2:50100", true, NULL);
	hello(&m, IMEXD_MSG_HELLO_ACK, "b", 1, PV + 1, PV + 2);
	imexd_peers_msg(t.p, 0, 2, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_VERSION, 2));
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	imexd_peers_timer(t.p, 2999);
	drain(&t);
	assert_null(find(&t, IMEXD_PEERS_CONNECT, 0));
	imexd_peers_timer(t.p, 3000);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CONNECT, 0));
	assert_string_equal(find(&t, IMEXD_PEERS_CONNECT, 0)->addr,
			    "10.0.0.2:50100");
	tp_free(&t);
}

/* ---- Raft groups ------------------------------------------------------------ */

/*
 * A peer whose HELLO names another group is not bound (inbound: after our
 * HELLO_ACK with our id), nothing it sends is handed on, one error line a
 * minute says what to do, and it is redialled only after backoff_max.  A
 * peer with no group binds; when ours is set later, a bound peer of
 * another group goes.
 */
static void test_peer_of_another_group_refused(void **state)
{
	struct imexd_peers_config c = config("a");
	uint8_t data[3] = { 1, 2, 3 };
	const struct rec *r;
	struct imexd_msg m;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_set_group(t.p, 0, 0x1111);
	imexd_peers_conn_up(t.p, 0, 1, "10.0.0.2:1", false, NULL);
	hello(&m, IMEXD_MSG_HELLO, "b", 1, PV, PV);
	m.u.hello.group = 0x2222;
	imexd_peers_msg(t.p, 0, 1, &m);
	drain(&t);
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	/* An inbound claim without TLS proves nothing: 'b' is not marked. */
	assert_null(find(&t, IMEXD_PEERS_PEER_REFUSED, 0));
	r = find_sent(&t, IMEXD_MSG_HELLO_ACK, 1);
	assert_non_null(r);
	assert_true(r->sent.u.hello.group == 0x1111);
	r = find_log(&t, "is in another group");
	assert_non_null(r);
	assert_int_equal(r->level, 3);
	assert_non_null(strstr(r->text, "node 'b'"));
	assert_non_null(strstr(r->text, "0000000000002222"));
	assert_non_null(strstr(r->text, "this node's 0000000000001111"));
	assert_non_null(strstr(r->text, "NODES_FILE"));
	assert_false(imexd_peers_connected(t.p, "b"));
	m.type = IMEXD_MSG_RAFT;
	m.u.raft.len = 3;
	m.u.raft.data = data;
	imexd_peers_msg(t.p, 1, 1, &m);
	drain(&t);
	assert_null(find(&t, IMEXD_PEERS_MSG, 0));
	/* Again within the minute: refused, not logged. */
	imexd_peers_conn_up(t.p, 10, 2, "10.0.0.2:2", false, NULL);
	hello(&m, IMEXD_MSG_HELLO, "b", 1, PV, PV);
	m.u.hello.group = 0x2222;
	imexd_peers_msg(t.p, 10, 2, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_null(find_log(&t, "is in another group"));

	/* Outbound: refused, the next dial waits backoff_max. */
	imexd_peers_start(t.p, 100);
	drain(&t);
	imexd_peers_conn_up(t.p, 100, 3, "10.0.0.3:50100", true, NULL);
	drain(&t);
	r = find_sent(&t, IMEXD_MSG_HELLO, 3);
	assert_non_null(r);
	assert_true(r->sent.u.hello.group == 0x1111);
	hello(&m, IMEXD_MSG_HELLO_ACK, "c", 1, PV, PV);
	m.u.hello.group = 0x3333;
	imexd_peers_msg(t.p, 100, 3, &m);
	drain(&t);
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 3));
	/* Dialled by this node at c's address: shown refused. */
	assert_non_null(find(&t, IMEXD_PEERS_PEER_REFUSED, 3));
	assert_non_null(find_log(&t, "node 'c' (10.0.0.3:50100) is in another group"));
	imexd_peers_timer(t.p, 100 + 2999);
	drain(&t);
	assert_null(find(&t, IMEXD_PEERS_CONNECT, 0));
	imexd_peers_timer(t.p, 100 + 3000);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CONNECT, 0));
	tp_free(&t);

	/* No group on one side: binds; ours set later closes another. */
	tp_new(&t, &c);
	imexd_peers_conn_up(t.p, 0, 1, "10.0.0.2:1", false, NULL);
	hello(&m, IMEXD_MSG_HELLO, "b", 1, PV, PV);
	m.u.hello.group = 0x2222;
	imexd_peers_msg(t.p, 0, 1, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 1));
	assert_true(imexd_peers_group(t.p, "b") == 0x2222);
	imexd_peers_conn_up(t.p, 0, 2, "10.0.0.3:1", false, NULL);
	hello(&m, IMEXD_MSG_HELLO, "c", 1, PV, PV);
	imexd_peers_msg(t.p, 0, 2, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 2));
	assert_true(imexd_peers_group(t.p, "c") == 0);
	imexd_peers_set_group(t.p, 5, 0x1111);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 1));
	assert_non_null(find_log(&t, "node 'b' (10.0.0.2:1) is in another group"));
	assert_false(imexd_peers_connected(t.p, "b"));
	assert_true(imexd_peers_connected(t.p, "c"));
	assert_true(imexd_peers_group(t.p, "b") == 0);
	tp_free(&t);
}

/* Inbound @conn from @addr says HELLO as @name with group id @group. */
static void inbound_hello_group(struct tp *t, uint64_t now, uint64_t conn,
				const char *addr, const char *name,
				uint64_t group,
				const struct imexd_peers_auth *auth)
{
	struct imexd_msg m;

	imexd_peers_conn_up(t->p, now, conn, addr, false, auth);
	drain(t);
	hello(&m, IMEXD_MSG_HELLO, name, 1, PV, PV);
	m.u.hello.group = group;
	imexd_peers_msg(t->p, now, conn, &m);
	drain(t);
}

/* Is @name one of the peers (not removed)? */
static bool has_peer(const struct tp *t, const char *name)
{
	size_t i;

	for (i = 0; i < imexd_peers_count(t->p); i++)
		if (imexd_peers_name(t->p, i) &&
		    !strcmp(imexd_peers_name(t->p, i), name))
			return true;
	return false;
}

/*
 * A node this one does not know (it joined while this one was away) binds
 * when its HELLO names our group, and only then; with TLS its certificate
 * must name it.  It is not dialled until the configuration adds it; a name
 * the configuration removed stays refused; one learnt and removed before
 * any configuration named it is learnt again.
 */
static void test_unknown_node_of_our_group_learnt(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_peers_auth auth = { .tls = true, .n_names = 1 };
	uint8_t data[3] = { 1, 2, 3 };
	const struct rec *r;
	struct imexd_msg m;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 0);
	drain(&t);
	/* No group of ours yet: refused whatever it says. */
	inbound_hello_group(&t, 0, 1, "10.0.0.4:1", "d", 0x1111, NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	assert_non_null(find_log(&t, "which is not in the node list; refused"));
	imexd_peers_set_group(t.p, 0, 0x1111);
	/* No group, or another: refused as before. */
	inbound_hello_group(&t, 0, 2, "10.0.0.4:2", "d", 0, NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	inbound_hello_group(&t, 0, 3, "10.0.0.4:3", "d", 0x2222, NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 3));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	assert_false(has_peer(&t, "d"));
	assert_int_equal(imexd_peers_count(t.p), 2);
	/* TLS: the certificate must name it; nothing learnt otherwise. */
	strcpy(auth.names[0], "x");
	inbound_hello_group(&t, 0, 4, "10.0.0.4:4", "d", 0x1111, &auth);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 4));
	assert_non_null(find_log(&t, "claims to be 'd' but its certificate names 'x'"));
	assert_int_equal(imexd_peers_count(t.p), 2);

	/* Our group: bound, answered, logged once, its messages handed on. */
	strcpy(auth.names[0], "d");
	inbound_hello_group(&t, 0, 5, "10.0.0.4:5", "d", 0x1111, &auth);
	assert_null(find(&t, IMEXD_PEERS_CLOSE, 0));
	r = find(&t, IMEXD_PEERS_PEER_UP, 5);
	assert_non_null(r);
	assert_string_equal(r->name, "d");
	r = find_sent(&t, IMEXD_MSG_HELLO_ACK, 5);
	assert_non_null(r);
	assert_true(r->sent.u.hello.group == 0x1111);
	r = find_log(&t, "node 'd' (10.0.0.4:5) is of this group");
	assert_non_null(r);
	assert_int_equal(r->level, 6);
	assert_true(imexd_peers_connected(t.p, "d"));
	assert_true(has_peer(&t, "d"));
	assert_int_equal(imexd_peers_count(t.p), 3);
	memset(&m, 0, sizeof(m));
	m.type = IMEXD_MSG_RAFT;
	uuid_of(m.sender_uuid, "d", 1);
	m.sender_epoch = 1;
	m.u.raft.len = 3;
	m.u.raft.data = data;
	imexd_peers_msg(t.p, 1, 5, &m);
	drain(&t);
	r = find(&t, IMEXD_PEERS_MSG, 5);
	assert_non_null(r);
	assert_string_equal(r->name, "d");

	/* Not dialled when its connection ends (it dials us); back again. */
	imexd_peers_conn_down(t.p, 2, 5);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 5));
	imexd_peers_timer(t.p, 100000);
	drain(&t);
	assert_null(find(&t, IMEXD_PEERS_CONNECT, 0));
	inbound_hello_group(&t, 100000, 6, "10.0.0.4:6", "d", 0x1111, NULL);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 6));
	assert_null(find_log(&t, "is of this group"));	/* within the minute */

	/* The configuration adds it: a peer like any, dialled at its
	 * address once its connection ends. */
	assert_int_equal(imexd_peers_add(t.p, 100001, "d", "10.0.0.4:7000"), 0);
	drain(&t);
	assert_null(find(&t, IMEXD_PEERS_CONNECT, 0));
	imexd_peers_conn_down(t.p, 100002, 6);
	drain(&t);
	imexd_peers_timer(t.p, 200000);
	drain(&t);
	r = find(&t, IMEXD_PEERS_CONNECT, 0);
	assert_non_null(r);
	assert_string_equal(r->addr, "10.0.0.4:7000");
	/* Then removed by the configuration: it stays refused. */
	imexd_peers_remove(t.p, 200001, "d");
	drain(&t);
	inbound_hello_group(&t, 200002, 7, "10.0.0.4:8", "d", 0x1111, NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 7));
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));

	/* Learnt, removed before any configuration named it: learnt again. */
	inbound_hello_group(&t, 200003, 8, "10.0.0.5:1", "e", 0x1111, NULL);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 8));
	imexd_peers_remove(t.p, 200004, "e");
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 8));
	assert_false(has_peer(&t, "e"));
	inbound_hello_group(&t, 200005, 9, "10.0.0.5:2", "e", 0x1111, NULL);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 9));
	assert_true(has_peer(&t, "e"));
	/* An answer (outbound) from a name we did not dial is never learnt. */
	imexd_peers_conn_up(t.p, 200006, 10, "10.0.0.2:50100", true, NULL);
	drain(&t);
	hello(&m, IMEXD_MSG_HELLO_ACK, "z", 1, PV, PV);
	m.u.hello.group = 0x1111;
	imexd_peers_msg(t.p, 200006, 10, &m);
	drain(&t);
	assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
	assert_false(has_peer(&t, "z"));
	tp_free(&t);
}

/* Names learnt from HELLOs count against IMEXD_PEERS_MAX, as added ones. */
static void test_learnt_names_bounded(void **state)
{
	struct imexd_peers_config c = config("a");
	unsigned i, refused = 0;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_set_group(t.p, 0, 0x1111);
	for (i = 0; i < IMEXD_PEERS_MAX + 5; i++) {
		char name[16], addr[32];

		snprintf(name, sizeof(name), "m%u", i);
		snprintf(addr, sizeof(addr), "10.1.%u.%u:1", i / 250, i % 250);
		/* A minute apart: every refusal is logged. */
		inbound_hello_group(&t, (uint64_t)i * 61000, i + 1, addr, name,
				    0x1111, NULL);
		/* b and c hold two of the places. */
		if (i + 2 < IMEXD_PEERS_MAX) {
			assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, i + 1));
			continue;
		}
		assert_null(find(&t, IMEXD_PEERS_PEER_UP, 0));
		assert_non_null(find(&t, IMEXD_PEERS_CLOSE, i + 1));
		if (find_log(&t, "holds 1024 node names already; refused"))
			refused++;
	}
	assert_int_equal(refused, 7);
	assert_int_equal(imexd_peers_count(t.p), IMEXD_PEERS_MAX);
	assert_int_equal(imexd_peers_add(t.p, 1, "n0", NULL), -ENOSPC);
	tp_free(&t);
}

/* ---- unbound connections never deliver ------------------------------------- */

static void test_unbound_messages_never_delivered(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	uint8_t data[3] = { 1, 2, 3 };
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_conn_up(t.p, 0, 1, "10.0.0.2:1", false, NULL);
	drain(&t);
	/* Before HELLO: dropped (one log line), never MSG. */
	leave_from(&m, "b", 1);
	imexd_peers_msg(t.p, 0, 1, &m);
	memset(&m, 0, sizeof(m));
	m.type = IMEXD_MSG_RAFT;
	m.u.raft.len = 3;
	m.u.raft.data = data;
	imexd_peers_msg(t.p, 0, 1, &m);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_MSG), 0);
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);
	/* After a refused HELLO the connection is gone: still nothing. */
	hello(&m, IMEXD_MSG_HELLO, "zz", 1, PV, PV);
	imexd_peers_msg(t.p, 0, 1, &m);
	leave_from(&m, "zz", 1);
	imexd_peers_msg(t.p, 0, 1, &m);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_MSG), 0);
	/* A connection never announced: nothing. */
	imexd_peers_msg(t.p, 0, 99, &m);
	drain(&t);
	assert_int_equal(t.n, 0);
	/* Bound, but a message naming another instance: closed, dropped. */
	inbound_hello(&t, 0, 2, "10.0.0.2:2", "b", NULL);
	leave_from(&m, "b", 2);
	imexd_peers_msg(t.p, 0, 2, &m);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_MSG), 0);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 2));
	tp_free(&t);
}

/* ---- restarts ---------------------------------------------------------------- */

static void test_restart_seen_by_epoch(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	const struct rec *r;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	inbound_hello(&t, 0, 1, "10.0.0.2:1", "b", NULL);
	assert_false(find(&t, IMEXD_PEERS_PEER_UP, 1)->restarted);
	imexd_peers_conn_down(t.p, 10, 1);
	drain(&t);
	r = find(&t, IMEXD_PEERS_PEER_DOWN, 1);
	assert_non_null(r);
	assert_string_equal(r->name, "b");
	assert_false(imexd_peers_connected(t.p, "b"));
	/* Same instance again: not a restart. */
	inbound_hello(&t, 20, 2, "10.0.0.2:2", "b", NULL);
	assert_false(find(&t, IMEXD_PEERS_PEER_UP, 2)->restarted);
	imexd_peers_conn_down(t.p, 30, 2);
	drain(&t);
	/* A new epoch: restarted. */
	imexd_peers_conn_up(t.p, 40, 3, "10.0.0.2:3", false, NULL);
	hello(&m, IMEXD_MSG_HELLO, "b", 2, PV, PV);
	imexd_peers_msg(t.p, 40, 3, &m);
	drain(&t);
	r = find(&t, IMEXD_PEERS_PEER_UP, 3);
	assert_non_null(r);
	assert_true(r->restarted);
	assert_true(r->epoch == 2);

	/* A restart while the old instance's connection still looks alive:
	 * it is closed (PEER_DOWN), then the new one is up, restarted. */
	imexd_peers_conn_up(t.p, 50, 4, "10.0.0.2:4", false, NULL);
	hello(&m, IMEXD_MSG_HELLO, "b", 3, PV, PV);
	imexd_peers_msg(t.p, 50, 4, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 3));
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 3));
	r = find(&t, IMEXD_PEERS_PEER_UP, 4);
	assert_non_null(r);
	assert_true(r->restarted);
	assert_true(find(&t, IMEXD_PEERS_PEER_DOWN, 3) < r);
	assert_true(imexd_peers_conn(t.p, "b") == 4);
	/* The old instance's messages are not taken for the new one's. */
	leave_from(&m, "b", 2);
	imexd_peers_msg(t.p, 60, 4, &m);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_MSG), 0);
	tp_free(&t);
}

/* ---- backoff ---------------------------------------------------------------- */

/* Fail the dial of b at @now; the next CONNECT comes @delay later. */
static void fail_and_expect(struct tp *t, uint64_t now, uint64_t delay)
{
	imexd_peers_conn_failed(t->p, now, "10.0.0.2:50100");
	drain(t);
	assert_true(imexd_peers_deadline(t->p) == now + delay);
	imexd_peers_timer(t->p, now + delay - 1);
	drain(t);
	assert_int_equal(count(t, IMEXD_PEERS_CONNECT), 0);
	imexd_peers_timer(t->p, now + delay);
	drain(t);
	assert_int_equal(count(t, IMEXD_PEERS_CONNECT), 1);
	assert_string_equal(t->r[0].addr, "10.0.0.2:50100");
}

static void test_backoff_doubles_within_bounds(void **state)
{
	static const struct imexd_roster_node r[] = {
		{ "a", "10.0.0.1:50100" }, { "b", "10.0.0.2:50100" },
	};
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	uint64_t now = 1000;
	struct tp t;

	(void)state;
	c.roster = r;
	c.n_roster = 2;
	tp_new(&t, &c);
	imexd_peers_start(t.p, now);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CONNECT), 1);
	/* Defaults: 500, 1000, 2000, then 3000 for good. */
	fail_and_expect(&t, now, 500);
	now += 500;
	fail_and_expect(&t, now, 1000);
	now += 1000;
	fail_and_expect(&t, now, 2000);
	now += 2000;
	fail_and_expect(&t, now, 3000);
	now += 3000;
	fail_and_expect(&t, now, 3000);
	now += 3000;
	/* A dial that connects but never answers counts as a failure. */
	imexd_peers_conn_up(t.p, now, 1, "10.0.0.2:50100", true, NULL);
	drain(&t);
	imexd_peers_conn_down(t.p, now, 1);
	drain(&t);
	assert_true(imexd_peers_deadline(t.p) == now + 3000);
	now += 3000;
	imexd_peers_timer(t.p, now);
	drain(&t);
	/* Once bound the backoff starts over. */
	imexd_peers_conn_up(t.p, now, 2, "10.0.0.2:50100", true, NULL);
	hello(&m, IMEXD_MSG_HELLO_ACK, "b", 1, PV, PV);
	imexd_peers_msg(t.p, now, 2, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 2));
	assert_true(imexd_peers_deadline(t.p) == UINT64_MAX);
	imexd_peers_conn_down(t.p, now, 2);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 2));
	assert_true(imexd_peers_deadline(t.p) == now + 500);
	imexd_peers_timer(t.p, now + 500);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CONNECT), 1);
	fail_and_expect(&t, now + 500, 1000);
	tp_free(&t);

	/* Configured bounds are kept: 100, 200, 250, 250. */
	c.backoff_min_ms = 100;
	c.backoff_max_ms = 250;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 0);
	drain(&t);
	fail_and_expect(&t, 0, 100);
	fail_and_expect(&t, 100, 200);
	fail_and_expect(&t, 300, 250);
	fail_and_expect(&t, 550, 250);
	tp_free(&t);
}

/* ---- bounds on unbound connections ------------------------------------------ */

static void test_unbound_per_host_bound(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	uint64_t id = 1;
	unsigned i;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	for (i = 0; i < IMEXD_PEERS_UNBOUND_PER_HOST; i++) {
		imexd_peers_conn_up(t.p, 0, id++, "10.0.0.9:100", false, NULL);
		drain(&t);
		assert_int_equal(t.n, 0);
	}
	imexd_peers_conn_up(t.p, 0, id, "10.0.0.9:101", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, id));
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);
	assert_non_null(strstr(t.r[0].text, "10.0.0.9:101"));
	id++;
	/* Again: closed, the line not repeated within the minute. */
	imexd_peers_conn_up(t.p, 1, id, "10.0.0.9:102", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, id));
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 0);
	id++;
	/* Another host still gets in. */
	imexd_peers_conn_up(t.p, 1, id++, "10.0.0.10:100", false, NULL);
	drain(&t);
	assert_int_equal(t.n, 0);
	/* One of the host's connections binds: room for one more. */
	hello(&m, IMEXD_MSG_HELLO, "b", 1, PV, PV);
	imexd_peers_msg(t.p, 1, 1, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 1));
	imexd_peers_conn_up(t.p, 2, id, "10.0.0.9:103", false, NULL);
	drain(&t);
	assert_null(find(&t, IMEXD_PEERS_CLOSE, 0));
	id++;
	imexd_peers_conn_up(t.p, 2, id, "10.0.0.9:104", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, id));
	/* An IPv6 host is its address without the port. */
	for (i = 0; i < IMEXD_PEERS_UNBOUND_PER_HOST; i++) {
		imexd_peers_conn_up(t.p, 3, 1000 + i, "[fe80::1]:5", false, NULL);
		drain(&t);
		assert_int_equal(count(&t, IMEXD_PEERS_CLOSE), 0);
	}
	imexd_peers_conn_up(t.p, 3, 1000 + i, "[fe80::1]:6", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1000 + i));
	tp_free(&t);
}

static void test_unbound_total_bound(void **state)
{
	struct imexd_peers_config c = config("a");
	char addr[32];
	unsigned i;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 0);
	drain(&t);
	/* Our own dials do not count. */
	imexd_peers_conn_up(t.p, 0, 9000, "10.0.0.2:50100", true, NULL);
	imexd_peers_conn_up(t.p, 0, 9001, "10.0.0.3:50100", true, NULL);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CLOSE), 0);
	for (i = 0; i < IMEXD_PEERS_UNBOUND_MAX; i++) {
		/* Below the per-host bound: 4 per host. */
		snprintf(addr, sizeof(addr), "10.2.%u.1:%u", i / 4, i);
		imexd_peers_conn_up(t.p, 0, 1 + i, addr, false, NULL);
		drain(&t);
		assert_int_equal(count(&t, IMEXD_PEERS_CLOSE), 0);
	}
	imexd_peers_conn_up(t.p, 0, 500, "10.3.0.1:1", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 500));
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);
	/* One goes away: room again. */
	imexd_peers_conn_down(t.p, 0, 1);
	imexd_peers_conn_up(t.p, 0, 501, "10.3.0.1:2", false, NULL);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CLOSE), 0);
	imexd_peers_conn_up(t.p, 0, 502, "10.3.0.1:3", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 502));
	tp_free(&t);
}

/* ---- hello timeout -------------------------------------------------------------- */

static void test_hello_timeout(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_msg m;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_conn_up(t.p, 1000, 1, "10.0.0.5:1", false, NULL);
	imexd_peers_conn_up(t.p, 2000, 2, "10.0.0.5:2", false, NULL);
	drain(&t);
	assert_true(imexd_peers_deadline(t.p) == 6000);
	imexd_peers_timer(t.p, 5999);
	drain(&t);
	assert_int_equal(t.n, 0);
	imexd_peers_timer(t.p, 6000);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_int_equal(count(&t, IMEXD_PEERS_LOG), 1);
	assert_true(imexd_peers_deadline(t.p) == 7000);
	/* A HELLO in time binds; bound connections have no timeout. */
	hello(&m, IMEXD_MSG_HELLO, "b", 1, PV, PV);
	imexd_peers_msg(t.p, 6999, 2, &m);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 2));
	assert_true(imexd_peers_deadline(t.p) == UINT64_MAX);
	imexd_peers_timer(t.p, 100000);
	drain(&t);
	assert_int_equal(t.n, 0);
	tp_free(&t);

	/* Outbound, configured: no HELLO_ACK within 200 ms closes it and
	 * the peer is dialled again after the backoff. */
	c.hello_timeout_ms = 200;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 0);
	drain(&t);
	imexd_peers_conn_up(t.p, 10, 1, "10.0.0.2:50100", true, NULL);
	drain(&t);
	imexd_peers_timer(t.p, 210);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_true(imexd_peers_deadline(t.p) == 710);
	tp_free(&t);
}

/* ---- shutdown -------------------------------------------------------------------- */

static void test_leave_on_shutdown(void **state)
{
	struct imexd_peers_config c = config("a");
	const struct rec *r;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 0);
	drain(&t);
	inbound_hello(&t, 0, 1, "10.0.0.2:1", "b", NULL);
	inbound_hello(&t, 0, 2, "10.0.0.3:1", "c", NULL);
	imexd_peers_conn_up(t.p, 0, 3, "10.0.0.4:1", false, NULL);
	drain(&t);
	imexd_peers_shutdown(t.p, 1);
	drain(&t);
	assert_int_equal(t.n, 2);
	r = find_sent(&t, IMEXD_MSG_LEAVE, 1);
	assert_non_null(r);
	assert_int_equal(r->sent.u.leave.reason, IMEXD_LEAVE_SHUTDOWN);
	assert_true(r->sent.sender_epoch == 1);
	assert_non_null(find_sent(&t, IMEXD_MSG_LEAVE, 2));
	assert_null(find(&t, IMEXD_PEERS_SEND, 3));
	/* No more dialling, no new connections; a second call is a no-op. */
	imexd_peers_conn_down(t.p, 2, 1);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 1));
	imexd_peers_timer(t.p, 100000);
	drain(&t);
	assert_int_equal(count(&t, IMEXD_PEERS_CONNECT), 0);
	imexd_peers_conn_up(t.p, 100000, 4, "10.0.0.2:9", false, NULL);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 4));
	imexd_peers_shutdown(t.p, 100001);
	drain(&t);
	assert_int_equal(t.n, 0);
	tp_free(&t);
}

/* ---- duplicates: two peers objects against each other ------------------------- */

#define EV_MAX 256

enum ev_kind { EV_UP, EV_MSG, EV_DOWN };

struct ev {
	enum ev_kind kind;
	int side;			/* 0: a, 1: b */
	uint64_t conn;
	bool outbound;
	char addr[64];
	uint8_t frame[FRAME_MAX];
	size_t len;
};

struct pair {
	uint64_t id[2];			/* the connection on side 0 and 1 */
	int opener;
};

struct world {
	struct tp t[2];
	struct ev ev[EV_MAX];
	size_t nev;
	struct pair pairs[64];
	size_t npairs;
	uint64_t next_id;
	unsigned peer_downs[2];
};

static const struct imexd_roster_node roster2[] = {
	{ "a", "10.0.0.1:50100" },
	{ "b", "10.0.0.2:50100" },
};

static struct ev *ev_add(struct world *w, enum ev_kind kind, int side,
			 uint64_t conn)
{
	struct ev *e;

	assert_true(w->nev < EV_MAX);
	e = &w->ev[w->nev++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->side = side;
	e->conn = conn;
	return e;
}

/* The pair holding @conn on @side; its index, -1 if none. */
static int pair_of(const struct world *w, int side, uint64_t conn)
{
	size_t i;

	for (i = 0; i < w->npairs; i++)
		if (w->pairs[i].id[side] == conn)
			return (int)i;
	return -1;
}

/* Carry out what side @s asked for. */
static void w_actions(struct world *w, int s)
{
	struct tp *t = &w->t[s];
	size_t i;

	drain(t);
	for (i = 0; i < t->n; i++) {
		const struct rec *r = &t->r[i];
		struct ev *e;
		int q;

		switch (r->type) {
		case IMEXD_PEERS_CONNECT: {
			struct pair *pr = &w->pairs[w->npairs++];
			int o = 1 - s;

			assert_string_equal(r->addr, roster2[o].addr);
			pr->id[s] = ++w->next_id;
			pr->id[o] = ++w->next_id;
			pr->opener = s;
			e = ev_add(w, EV_UP, s, pr->id[s]);
			e->outbound = true;
			snprintf(e->addr, sizeof(e->addr), "%s", r->addr);
			e = ev_add(w, EV_UP, o, pr->id[o]);
			snprintf(e->addr, sizeof(e->addr), "10.0.0.%d:%u",
				 s + 1, (unsigned)(40000 + pr->id[s]));
			break;
		}
		case IMEXD_PEERS_SEND:
			q = pair_of(w, s, r->conn);
			assert_true(q >= 0);
			e = ev_add(w, EV_MSG, 1 - s, w->pairs[q].id[1 - s]);
			memcpy(e->frame, r->frame, r->len);
			e->len = r->len;
			break;
		case IMEXD_PEERS_CLOSE:
			q = pair_of(w, s, r->conn);
			if (q >= 0)
				ev_add(w, EV_DOWN, 1 - s, w->pairs[q].id[1 - s]);
			break;
		case IMEXD_PEERS_PEER_DOWN:
			w->peer_downs[s]++;
			break;
		default:
			break;
		}
	}
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/*
 * Deliver one event: a random one, but never ahead of an earlier event on
 * the same connection end (a stream keeps its order).
 */
static void w_step(struct world *w, unsigned *rs)
{
	size_t i = rnd(rs) % w->nev, j;
	struct imexd_msg m;
	struct ev e;

	for (j = 0; j < i; j++)
		if (w->ev[j].side == w->ev[i].side &&
		    w->ev[j].conn == w->ev[i].conn) {
			i = j;
			break;
		}
	e = w->ev[i];
	memmove(&w->ev[i], &w->ev[i + 1], (w->nev - i - 1) * sizeof(e));
	w->nev--;
	switch (e.kind) {
	case EV_UP:
		imexd_peers_conn_up(w->t[e.side].p, 0, e.conn, e.addr,
				    e.outbound, NULL);
		break;
	case EV_MSG:
		assert_int_equal(imexd_msg_decode(e.frame, e.len, &m, NULL), 0);
		imexd_peers_msg(w->t[e.side].p, 0, e.conn, &m);
		w_actions(w, e.side);	/* before m is freed */
		imexd_msg_free(&m);
		return;
	case EV_DOWN:
		imexd_peers_conn_down(w->t[e.side].p, 0, e.conn);
		break;
	}
	w_actions(w, e.side);
}

static void w_run(unsigned seed)
{
	struct world *w = calloc(1, sizeof(*w));
	struct imexd_peers_config c;
	unsigned rs = seed, steps = 0;
	struct imexd_msg m;
	uint64_t ca, cb;
	int q, s;

	assert_non_null(w);
	for (s = 0; s < 2; s++) {
		c = config(roster2[s].name);
		c.roster = roster2;
		c.n_roster = 2;
		tp_new(&w->t[s], &c);
	}
	/* Both dial at once; which starts first is part of the order. */
	s = (int)(rnd(&rs) & 1);
	imexd_peers_start(w->t[s].p, 0);
	w_actions(w, s);
	imexd_peers_start(w->t[1 - s].p, 0);
	w_actions(w, 1 - s);
	while (w->nev) {
		w_step(w, &rs);
		assert_true(++steps < 10000);
	}
	/* One connection, the same on both sides, opened by 'a'. */
	ca = imexd_peers_conn(w->t[0].p, "b");
	cb = imexd_peers_conn(w->t[1].p, "a");
	if (!ca || !cb)
		fail_msg("seed %u: not connected (a: %llu, b: %llu)", seed,
			 (unsigned long long)ca, (unsigned long long)cb);
	q = pair_of(w, 0, ca);
	assert_true(q >= 0);
	if (w->pairs[q].id[1] != cb || w->pairs[q].opener != 0)
		fail_msg("seed %u: a keeps %llu, b keeps %llu (opened by %d)",
			 seed, (unsigned long long)ca, (unsigned long long)cb,
			 w->pairs[q].opener);
	/* And it carries messages, with the proved name. */
	memset(&m, 0, sizeof(m));
	m.type = IMEXD_MSG_HEARTBEAT;
	assert_int_equal(imexd_peers_send(w->t[1].p, "a", &m), 0);
	w_actions(w, 1);
	assert_int_equal(w->nev, 1);
	w_step(w, &rs);
	assert_int_equal(count(&w->t[0], IMEXD_PEERS_MSG), 1);
	assert_string_equal(find(&w->t[0], IMEXD_PEERS_MSG, ca)->name, "b");
	for (s = 0; s < 2; s++)
		tp_free(&w->t[s]);
	free(w);
}

static void test_duplicates_resolved_alike_on_both_sides(void **state)
{
	const char *env = getenv("IMEXD_PEERS_SEED");
	unsigned seed, i;

	(void)state;
	if (env) {
		seed = (unsigned)strtoul(env, NULL, 0);
		printf("duplicates: replaying seed %u\n", seed);
		w_run(seed);
		return;
	}
	seed = 20261124;
	printf("duplicates: seeds %u..%u (IMEXD_PEERS_SEED=N replays one)\n",
	       seed, seed + 499);
	for (i = 0; i < 500; i++)
		w_run(seed + i);
}

/* The same by hand: both bound, then the duplicate arrives on each side. */
static void test_duplicate_replaces_with_repeated_peer_up(void **state)
{
	struct imexd_peers_config c = config("b");
	struct imexd_msg m;
	const struct rec *r;
	struct tp t;

	(void)state;
	tp_new(&t, &c);
	imexd_peers_start(t.p, 0);
	drain(&t);
	/* b dialled a (conn 1) and a answered: bound, opened by 'b'. */
	imexd_peers_conn_up(t.p, 0, 1, "10.0.0.1:50100", true, NULL);
	hello(&m, IMEXD_MSG_HELLO_ACK, "a", 1, PV, PV);
	imexd_peers_msg(t.p, 0, 1, &m);
	drain(&t);
	r = find(&t, IMEXD_PEERS_PEER_UP, 1);
	assert_non_null(r);
	assert_false(r->replaced);
	/* a's own dial (conn 2) arrives: opened by 'a' < 'b', it wins. */
	inbound_hello(&t, 0, 2, "10.0.0.1:40000", "a", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 1));
	assert_null(find(&t, IMEXD_PEERS_PEER_DOWN, 0));
	r = find(&t, IMEXD_PEERS_PEER_UP, 2);
	assert_non_null(r);
	assert_false(r->restarted);
	/* a may have closed conn 1 before what b sent on it arrived (it
	 * bound conn 2 first): said, so that it can be sent again. */
	assert_true(r->replaced);
	assert_true(imexd_peers_conn(t.p, "a") == 2);
	/* The closed one's end is no news; no redial either. */
	imexd_peers_conn_down(t.p, 0, 1);
	drain(&t);
	assert_int_equal(t.n, 0);
	assert_true(imexd_peers_deadline(t.p) == UINT64_MAX);
	/* a dials again, same instance: it gave up on conn 2 (half open
	 * here), so the newer one it opened stays. */
	inbound_hello(&t, 0, 3, "10.0.0.1:40001", "a", NULL);
	assert_non_null(find(&t, IMEXD_PEERS_CLOSE, 2));
	assert_null(find(&t, IMEXD_PEERS_PEER_DOWN, 0));
	assert_non_null(find(&t, IMEXD_PEERS_PEER_UP, 3));
	assert_true(imexd_peers_conn(t.p, "a") == 3);
	/* The survivor's end is the peer's. */
	imexd_peers_conn_down(t.p, 0, 3);
	drain(&t);
	assert_non_null(find(&t, IMEXD_PEERS_PEER_DOWN, 3));
	tp_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_checks_its_config),
		cmocka_unit_test(test_start_dials_the_roster),
		cmocka_unit_test(test_inbound_hello_binds_a_roster_peer),
		cmocka_unit_test(test_outbound_hello_ack_binds),
		cmocka_unit_test(test_hello_direction_and_node_map),
		cmocka_unit_test(test_shared_address_dials),
		cmocka_unit_test(test_non_roster_and_self_refused),
		cmocka_unit_test(test_added_and_removed_peers),
		cmocka_unit_test(test_removed_places_reused),
		cmocka_unit_test(test_refusal_log_table_is_bounded),
		cmocka_unit_test(test_refusal_log_per_host_bounded),
		cmocka_unit_test(test_tls_claim_must_be_in_the_certificate),
		cmocka_unit_test(test_version_mismatch_reported_and_closed),
		cmocka_unit_test(test_peer_of_another_group_refused),
		cmocka_unit_test(test_unknown_node_of_our_group_learnt),
		cmocka_unit_test(test_learnt_names_bounded),
		cmocka_unit_test(test_unbound_messages_never_delivered),
		cmocka_unit_test(test_restart_seen_by_epoch),
		cmocka_unit_test(test_backoff_doubles_within_bounds),
		cmocka_unit_test(test_unbound_per_host_bound),
		cmocka_unit_test(test_unbound_total_bound),
		cmocka_unit_test(test_hello_timeout),
		cmocka_unit_test(test_leave_on_shutdown),
		cmocka_unit_test(test_duplicates_resolved_alike_on_both_sides),
		cmocka_unit_test(test_duplicate_replaces_with_repeated_peer_up),
	};

	return cmocka_run_group_tests_name("imexd peers", tests, NULL, NULL);
}
