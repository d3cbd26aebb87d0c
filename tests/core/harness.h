/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny harness for the protocol core's transitions: one core, events fed
 * by hand, the actions it answers with collected and inspected.  Peers are
 * "a" (1), "b" (2), "c" (3), "d" (4): node uuid all bytes = id, epoch 100 +
 * id, address 10.0.0.<id> (the default port, 50100, is implied).
 */
#ifndef IMEXD_TEST_HARNESS_H
#define IMEXD_TEST_HARNESS_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core.h"

#define TC_MAX_ACTS 1024

struct tc {
	struct imexd_core *core;
	struct imexd_action a[TC_MAX_ACTS];
	size_t n;
	uint64_t now;
	const char *self;
	/* peers that keep talking while time is advanced (tc_keep) */
	uint64_t keep_conn[4];
	const char *keep_name[4];
	int nkeep;
};

static inline uint8_t tc_id(const char *name)
{
	return (uint8_t)(name[0] - 'a' + 1);
}

static inline void tc_addr(const char *name, char *out, size_t len)
{
	snprintf(out, len, "10.0.0.%u:50100", tc_id(name));
}

static inline void tc_clear(struct tc *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		imexd_action_free(&t->a[i]);
	t->n = 0;
}

/* Add what the core wants done to the batch. */
static inline void tc_collect(struct tc *t)
{
	while (t->n < TC_MAX_ACTS && imexd_core_next_action(t->core, &t->a[t->n]))
		t->n++;
}

/* A new batch: what the core wants done since the last call. */
static inline void tc_drain(struct tc *t)
{
	tc_clear(t);
	tc_collect(t);
}

static inline void tc_cfg(struct imexd_core_cfg *c, const char *name)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->node_name, sizeof(c->node_name), "%s", name);
	memset(c->node_uuid, tc_id(name), 16);
	c->epoch = 100 + tc_id(name);
	c->max_channels = 64;
	memset(c->fabric_uuid, 0xab, 16);
	c->partition = 7;
	c->grace_ms = 10000;
}

/* Start @name with these kernel and stored definitions, at time 0. */
static inline void tc_start(struct tc *t, const char *name,
			    const struct imexd_def *kernel, size_t nk,
			    const struct imexd_def *stored, size_t ns)
{
	struct imexd_core_cfg c;

	memset(t, 0, sizeof(*t));
	tc_cfg(&c, name);
	t->self = name;
	t->core = imexd_core_new(&c);
	assert_non_null(t->core);
	imexd_core_start(t->core, 0, kernel, nk, stored, ns);
	tc_drain(t);
}

static inline void tc_done(struct tc *t)
{
	tc_clear(t);
	imexd_core_free(t->core);
}

static inline void tc_timer(struct tc *t, uint64_t now)
{
	t->now = now;
	imexd_core_timer(t->core, now);
	tc_drain(t);
}

static inline void tc_keep(struct tc *t, uint64_t conn, const char *peer)
{
	t->keep_conn[t->nkeep] = conn;
	t->keep_name[t->nkeep++] = peer;
}

/*
 * Run the timer through [now, until], stopping at each deadline; peers
 * named with tc_keep() send an (empty) heartbeat every 500 ms.  Every
 * action of the way ends up in the batch.
 */
static inline void tc_advance(struct tc *t, uint64_t until)
{
	uint64_t next_hb = t->now + 500;
	struct imexd_msg m;
	int k;

	tc_clear(t);
	for (;;) {
		uint64_t d = imexd_core_next_deadline(t->core);

		if (t->nkeep && next_hb <= until && next_hb <= d) {
			t->now = next_hb;
			for (k = 0; k < t->nkeep; k++) {
				memset(&m, 0, sizeof(m));
				m.type = IMEXD_MSG_HEARTBEAT;
				memset(m.sender_uuid, tc_id(t->keep_name[k]), 16);
				m.sender_epoch = 100 + tc_id(t->keep_name[k]);
				imexd_core_msg(t->core, t->now, t->keep_conn[k], &m);
				tc_collect(t);
			}
			next_hb += 500;
			continue;
		}
		if (d > until)
			break;
		t->now = d < t->now ? t->now : d;
		imexd_core_timer(t->core, t->now);
		tc_collect(t);
	}
	t->now = until;
}

static inline const struct imexd_action *tc_find(const struct tc *t,
						 enum imexd_action_type type,
						 uint8_t msg_type, uint64_t conn)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct imexd_action *a = &t->a[i];

		if (a->type != type)
			continue;
		if (type == IMEXD_ACT_SEND && msg_type && a->msg.type != msg_type)
			continue;
		if (conn && a->conn != conn)
			continue;
		return a;
	}
	return NULL;
}

static inline size_t tc_count(const struct tc *t, enum imexd_action_type type,
			      uint8_t msg_type)
{
	size_t i, n = 0;

	for (i = 0; i < t->n; i++)
		if (t->a[i].type == type &&
		    (type != IMEXD_ACT_SEND || !msg_type ||
		     t->a[i].msg.type == msg_type))
			n++;
	return n;
}

/* The index of the first action of @type from @from on, or -1. */
static inline int tc_index(const struct tc *t, enum imexd_action_type type,
			   uint8_t msg_type, int from)
{
	size_t i;

	for (i = from; i < t->n; i++)
		if (t->a[i].type == type &&
		    (type != IMEXD_ACT_SEND || !msg_type ||
		     t->a[i].msg.type == msg_type))
			return (int)i;
	return -1;
}

static inline void tc_msg_init(struct imexd_msg *m, uint8_t type,
			       const char *from, const uint8_t *domain)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	memset(m->sender_uuid, tc_id(from), 16);
	m->sender_epoch = 100 + tc_id(from);
	if (domain)
		memcpy(m->domain_uuid, domain, 16);
}

static inline void tc_deliver(struct tc *t, uint64_t conn, struct imexd_msg *m)
{
	imexd_core_msg(t->core, t->now, conn, m);
	tc_drain(t);
}

static inline void tc_hello(struct imexd_msg *m, uint8_t type, const char *from)
{
	tc_msg_init(m, type, from, NULL);
	m->u.hello.proto_min = 1;
	m->u.hello.proto_max = 1;
	snprintf(m->u.hello.node_name, sizeof(m->u.hello.node_name), "%s", from);
	m->u.hello.max_channels = 64;
	memset(m->u.hello.fabric_uuid, 0xab, 16);
	m->u.hello.partition = 7;
}

/* Bring connection @conn to @peer up and through HELLO. */
static inline void tc_bind(struct tc *t, uint64_t conn, const char *peer,
			   bool outbound)
{
	struct imexd_msg m;
	char addr[64];

	if (outbound)
		tc_addr(peer, addr, sizeof(addr));
	else
		snprintf(addr, sizeof(addr), "10.0.0.%u:41234", tc_id(peer));
	imexd_core_conn_up(t->core, t->now, conn, addr, outbound);
	tc_drain(t);
	tc_hello(&m, outbound ? IMEXD_MSG_HELLO_ACK : IMEXD_MSG_HELLO, peer);
	tc_deliver(t, conn, &m);
}

/* A heartbeat from @from: its view, as "name=state" pairs. */
static inline void tc_heartbeat(struct tc *t, uint64_t conn, const char *from,
				uint32_t digest, int n, ...)
{
	struct imexd_peer_view v[8] = { 0 };
	struct imexd_msg m;
	va_list ap;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++) {
		snprintf(v[i].name, sizeof(v[i].name), "%s",
			 va_arg(ap, const char *));
		v[i].state = (uint8_t)va_arg(ap, int);
	}
	va_end(ap);
	tc_msg_init(&m, IMEXD_MSG_HEARTBEAT, from, NULL);
	m.u.heartbeat.seq = digest;
	m.u.heartbeat.n = (uint16_t)n;
	m.u.heartbeat.peers = v;
	tc_deliver(t, conn, &m);
}

/*
 * A definition: members "a,b,c" (comma-separated single letters), channels
 * as a -1-terminated list.  Free with tc_def_free().
 */
static inline void tc_def(struct imexd_def *d, const char *name, uint8_t uuid,
			  uint64_t gen, const char *members, ...)
{
	const char *p;
	va_list ap;
	int id;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	memset(d->uuid, uuid, 16);
	d->generation = gen;
	memset(d->fabric_uuid, 0xab, 16);
	d->partition = 7;
	d->members = calloc(8, sizeof(*d->members));
	d->channels = calloc(64, sizeof(*d->channels));
	assert_non_null(d->members);
	assert_non_null(d->channels);
	for (p = members; *p; p++) {
		if (*p == ',')
			continue;
		snprintf(d->members[d->nmembers].name, IMEX_NAME_MAX, "%c", *p);
		snprintf(d->members[d->nmembers].addr, IMEXD_ADDR_MAX, "10.0.0.%u",
			 (unsigned int)(*p - 'a' + 1));
		d->nmembers++;
	}
	va_start(ap, members);
	while ((id = va_arg(ap, int)) >= 0) {
		d->channels[d->nchannels].id = (uint32_t)id;
		d->channels[d->nchannels].mode = 0600;
		d->nchannels++;
	}
	va_end(ap);
}

static inline void tc_def_free(struct imexd_def *d)
{
	free(d->members);
	free(d->channels);
	d->members = NULL;
	d->channels = NULL;
}

static inline void tc_uuid(uint8_t u[16], uint8_t b)
{
	memset(u, b, 16);
}

/* Answer every kernel operation in the current batch with @err. */
static inline void tc_kernel_all(struct tc *t, int err, const char *msg)
{
	uint64_t ops[64];
	size_t i, n = 0;

	for (i = 0; i < t->n && n < 64; i++)
		if (t->a[i].type == IMEXD_ACT_KERNEL_PREPARE ||
		    t->a[i].type == IMEXD_ACT_KERNEL_COMMIT ||
		    t->a[i].type == IMEXD_ACT_KERNEL_ABORT)
			ops[n++] = t->a[i].op_id;
	tc_clear(t);
	for (i = 0; i < n; i++) {
		imexd_core_kernel_done(t->core, t->now, ops[i], err, msg);
		tc_collect(t);
	}
}

#endif /* IMEXD_TEST_HARNESS_H */
