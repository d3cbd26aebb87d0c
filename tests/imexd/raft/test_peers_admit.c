// SPDX-License-Identifier: GPL-2.0
/*
 * test_peers: who else is admitted or refused: TLS names, protocol versions,
 * Raft groups (and the names learnt from them), and that nothing from an
 * unbound connection is ever delivered.
 */
#include "test_peers.h"

/* ---- TLS ------------------------------------------------------------------- */

void test_tls_claim_must_be_in_the_certificate(void **state)
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

void test_version_mismatch_reported_and_closed(void **state)
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
void test_peer_of_another_group_refused(void **state)
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
void test_unknown_node_of_our_group_learnt(void **state)
{
	struct imexd_peers_config c = config("a");
	struct imexd_peers_auth auth = { .tls = true, .n_names = 1 };
	uint8_t data[3] = { 1, 2, 3 };
	const struct rec *r;
	struct imexd_msg m;
	struct tp t;

	(void)state;
	tp_started(&t, &c);
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
void test_learnt_names_bounded(void **state)
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

void test_unbound_messages_never_delivered(void **state)
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
