// SPDX-License-Identifier: GPL-2.0-only
/*
 * Event decoding (libimexctl/event.c) and the monitor's reading of
 * datagrams (monitor.c), fed through a datagram socketpair: every kind of
 * notification, and malformed ones, which must give -EPROTO with a
 * sentence and leave the monitor usable.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "internal.h"

#define FAMILY 0x1d

struct fixture {
	struct imexctl *ctx;
	struct imexctl_monitor *mon;
	int peer;		/* the "kernel" end */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int sv[2];

	assert_non_null(f);
	assert_int_equal(imexctl_new(&f->ctx), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv), 0);
	assert_int_equal(imexctl_monitor_open_fd(f->ctx, sv[0], FAMILY, &f->mon), 0);
	f->peer = sv[1];
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	imexctl_monitor_free(f->mon);
	close(f->peer);
	imexctl_free(f->ctx);
	free(f);
	return 0;
}

static struct nl_msg *event_msg(uint8_t cmd)
{
	struct nl_msg *m = nlmsg_alloc_size((size_t)256 * 1024);

	assert_non_null(m);
	assert_non_null(genlmsg_put(m, 0, 0, FAMILY, 0, 0, cmd, IMEX_GENL_VERSION));
	return m;
}

static void put_member(struct nl_msg *m, int idx, const char *name, uint32_t st,
		       const char *reason, uint64_t since)
{
	struct nlattr *e = nla_nest_start(m, idx);

	if (name)
		nla_put_string(m, IMEX_A_MEMBER_ENTRY_NAME, name);
	nla_put_u32(m, IMEX_A_MEMBER_STATE, st);
	if (reason)
		nla_put_string(m, IMEX_A_MEMBER_REASON, reason);
	if (since)
		nla_put_u64(m, IMEX_A_MEMBER_SINCE, since);
	nla_nest_end(m, e);
}

static void put_domain(struct nl_msg *m, const char *name, uint32_t state)
{
	static const uint8_t uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

	nla_put_string(m, IMEX_A_DOMAIN_NAME, name);
	nla_put(m, IMEX_A_DOMAIN_UUID, 16, uuid);
	nla_put_u32(m, IMEX_A_DOMAIN_STATE, state);
	nla_put_u32(m, IMEX_A_MEMBER_COUNT, 3);
	nla_put_u32(m, IMEX_A_CHANNEL_COUNT, 2);
	nla_put_u32(m, IMEX_A_GENERATION, 9);
}

/* Send @m as one datagram and free it. */
static void send_msg(struct fixture *f, struct nl_msg *m)
{
	struct nlmsghdr *h = nlmsg_hdr(m);

	assert_int_equal(send(f->peer, h, h->nlmsg_len, 0), (ssize_t)h->nlmsg_len);
	nlmsg_free(m);
}

static const struct imexctl_event *next_ok(struct fixture *f)
{
	const struct imexctl_event *ev = NULL;

	assert_int_equal(imexctl_monitor_next(f->mon, &ev), 1);
	assert_non_null(ev);
	return ev;
}

static void expect_proto(struct fixture *f, const char *words)
{
	const struct imexctl_event *ev = (const void *)1;

	assert_int_equal(imexctl_monitor_next(f->mon, &ev), -EPROTO);
	assert_null(ev);
	if (!strstr(imexctl_errmsg(f->ctx), words))
		fail_msg("message '%s' lacks '%s'", imexctl_errmsg(f->ctx), words);
}

static void expect_none(struct fixture *f)
{
	const struct imexctl_event *ev;

	assert_int_equal(imexctl_monitor_next(f->mon, &ev), 0);
	assert_null(ev);
}

static void test_domain_status_carries_reasons_and_changed_members(void **state)
{
	struct fixture *f = *state;
	const struct imexctl_event *ev;
	struct nl_msg *m = event_msg(IMEX_CMD_DOMAIN_SET_STATUS);
	struct nlattr *arr;

	put_domain(m, "job7", IMEX_DOMAIN_DEGRADED);
	nla_put_string(m, IMEX_A_DOMAIN_REASON, "member n2 is disconnected");
	arr = nla_nest_start(m, IMEX_A_MEMBERS);
	put_member(m, 1, "n2", IMEX_MEMBER_DISCONNECTED, "heartbeat lost", 1764000000123ULL);
	put_member(m, 2, "n3", IMEX_MEMBER_CONNECTED, NULL, 0);
	nla_nest_end(m, arr);
	send_msg(f, m);

	ev = next_ok(f);
	assert_int_equal(ev->kind, IMEXCTL_EVENT_DOMAIN_STATUS);
	assert_string_equal(imexctl_event_kind_name(ev->kind), "domain-status");
	assert_true(ev->has_domain && ev->has_domain_uuid && ev->has_state);
	assert_string_equal(ev->domain, "job7");
	assert_int_equal(ev->domain_uuid[15], 16);
	assert_int_equal(ev->state, IMEX_DOMAIN_DEGRADED);
	assert_string_equal(ev->reason, "member n2 is disconnected");
	assert_int_equal(ev->member_count, 3);
	assert_int_equal(ev->channel_count, 2);
	assert_int_equal(ev->generation, 9);
	assert_int_equal(ev->n_members, 2);
	assert_string_equal(ev->members[0].name, "n2");
	assert_int_equal(ev->members[0].state, IMEX_MEMBER_DISCONNECTED);
	assert_string_equal(ev->members[0].reason, "heartbeat lost");
	assert_true(ev->members[0].since_ms == 1764000000123ULL);
	assert_string_equal(ev->members[1].reason, "");
	assert_true(ev->members[1].since_ms == 0);
	assert_false(ev->has_channel || ev->has_request || ev->has_revoke);
	expect_none(f);
}

static void test_every_kind_is_decoded(void **state)
{
	static const uint8_t node[16] = { [0] = 0xab, [15] = 0xcd };
	struct fixture *f = *state;
	const struct imexctl_event *ev;
	struct nl_msg *m;

	m = event_msg(IMEX_CMD_DOMAIN_NEW);
	put_domain(m, "a", IMEX_DOMAIN_READY);
	send_msg(f, m);
	ev = next_ok(f);
	assert_int_equal(ev->kind, IMEXCTL_EVENT_DOMAIN_NEW);
	assert_int_equal(ev->state, IMEX_DOMAIN_READY);
	assert_string_equal(ev->reason, "");
	assert_null(ev->members);

	m = event_msg(IMEX_CMD_DOMAIN_DEL);
	nla_put_string(m, IMEX_A_DOMAIN_NAME, "a");
	send_msg(f, m);
	ev = next_ok(f);
	assert_int_equal(ev->kind, IMEXCTL_EVENT_DOMAIN_DEL);
	assert_true(ev->has_domain);
	assert_false(ev->has_state);

	m = event_msg(IMEX_CMD_CHANNEL_SET);
	nla_put_u32(m, IMEX_A_CHANNEL_ID, 42);
	nla_put_string(m, IMEX_A_DOMAIN_NAME, "a");
	nla_put_u32(m, IMEX_A_CHANNEL_STATE, IMEX_CHANNEL_GRANTED);
	nla_put_u32(m, IMEX_A_CHANNEL_UID, 1000);
	nla_put_u32(m, IMEX_A_CHANNEL_GID, 100);
	nla_put_u32(m, IMEX_A_CHANNEL_MODE, 0640);
	send_msg(f, m);
	ev = next_ok(f);
	assert_int_equal(ev->kind, IMEXCTL_EVENT_CHANNEL_SET);
	assert_true(ev->has_channel && ev->has_domain);
	assert_int_equal(ev->channel_id, 42);
	assert_int_equal(ev->uid, 1000);
	assert_int_equal(ev->gid, 100);
	assert_int_equal(ev->mode, 0640);
	assert_int_equal(ev->channel_state, IMEX_CHANNEL_GRANTED);

	m = event_msg(IMEX_CMD_REQ_DONE);
	nla_put_u64(m, IMEX_A_REQ_ID, 0x123456789ULL);
	nla_put_u32(m, IMEX_A_REQ_CMD, IMEX_CMD_DOMAIN_CREATE);
	nla_put_u32(m, IMEX_A_REQ_STATUS, EEXIST);
	nla_put_string(m, IMEX_A_REQ_MESSAGE, "name taken");
	send_msg(f, m);
	ev = next_ok(f);
	assert_int_equal(ev->kind, IMEXCTL_EVENT_REQ_DONE);
	assert_true(ev->has_request && !ev->has_domain);
	assert_true(ev->req_id == 0x123456789ULL);
	assert_int_equal(ev->req_cmd, IMEX_CMD_DOMAIN_CREATE);
	assert_int_equal(ev->req_status, EEXIST);
	assert_string_equal(ev->req_message, "name taken");

	m = event_msg(IMEX_CMD_MANAGER_DETACH);
	nla_put_u32(m, IMEX_A_MANAGER_PID, 77);
	send_msg(f, m);
	ev = next_ok(f);
	assert_int_equal(ev->kind, IMEXCTL_EVENT_MANAGER_DETACH);
	assert_true(ev->has_manager);
	assert_int_equal(ev->manager_pid, 77);

	m = event_msg(IMEX_CMD_NODE_SET);
	nla_put_string(m, IMEX_A_NODE_NAME, "n1");
	nla_put(m, IMEX_A_NODE_UUID, 16, node);
	send_msg(f, m);
	ev = next_ok(f);
	assert_int_equal(ev->kind, IMEXCTL_EVENT_NODE_SET);
	assert_string_equal(ev->node_name, "n1");
	assert_int_equal(ev->node_uuid[15], 0xcd);

	m = event_msg(IMEX_CMD_IMPORTS_REVOKED);
	nla_put_string(m, IMEX_A_DOMAIN_NAME, "a");
	nla_put(m, IMEX_A_HANDLE_NODE, 16, node);
	nla_put_u32(m, IMEX_A_REVOKE_REASON, IMEX_REVOKE_NODE_LOST);
	nla_put_u32(m, IMEX_A_IMPORT_COUNT, 5);
	send_msg(f, m);
	ev = next_ok(f);
	assert_int_equal(ev->kind, IMEXCTL_EVENT_IMPORTS_REVOKED);
	assert_true(ev->has_revoke && ev->has_domain);
	assert_int_equal(ev->handle_node[0], 0xab);
	assert_string_equal(imexctl_revoke_reason_name(ev->revoke_reason), "node-lost");
	assert_int_equal(ev->import_count, 5);

	/* A command from a newer module: named, not refused. */
	m = event_msg(200);
	nla_put_u32(m, 250, 1);
	send_msg(f, m);
	ev = next_ok(f);
	assert_int_equal(ev->kind, IMEXCTL_EVENT_OTHER);
	assert_int_equal(ev->cmd, 200);
	assert_string_equal(imexctl_event_kind_name(ev->kind), "other");
	assert_string_equal(imexctl_revoke_reason_name(99), "unknown");
	expect_none(f);
}

static void test_several_messages_in_one_datagram_and_others_skipped(void **state)
{
	struct fixture *f = *state;
	struct nl_msg *a = event_msg(IMEX_CMD_DOMAIN_NEW), *b = event_msg(IMEX_CMD_DOMAIN_DEL);
	struct nlmsghdr noop = { .nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = NLMSG_NOOP };
	uint8_t buf[4096];
	size_t la, lb;

	put_domain(a, "x", IMEX_DOMAIN_DEGRADED);
	nla_put_string(b, IMEX_A_DOMAIN_NAME, "x");
	la = NLMSG_ALIGN(nlmsg_hdr(a)->nlmsg_len);
	lb = nlmsg_hdr(b)->nlmsg_len;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, nlmsg_hdr(a), nlmsg_hdr(a)->nlmsg_len);
	memcpy(buf + la, &noop, sizeof(noop));
	memcpy(buf + la + NLMSG_HDRLEN, nlmsg_hdr(b), lb);
	assert_int_equal(send(f->peer, buf, la + NLMSG_HDRLEN + lb, 0),
			 (ssize_t)(la + NLMSG_HDRLEN + lb));
	nlmsg_free(a);
	nlmsg_free(b);

	assert_int_equal(next_ok(f)->kind, IMEXCTL_EVENT_DOMAIN_NEW);
	assert_int_equal(next_ok(f)->kind, IMEXCTL_EVENT_DOMAIN_DEL);
	expect_none(f);
}

static void test_malformed_notifications_are_skipped_with_a_sentence(void **state)
{
	struct fixture *f = *state;
	struct nlattr *arr;
	struct nl_msg *m;
	uint8_t raw[64];
	struct nlmsghdr *h = (struct nlmsghdr *)raw;
	int i;

	/* No domain name. */
	m = event_msg(IMEX_CMD_DOMAIN_SET_STATUS);
	nla_put_u32(m, IMEX_A_DOMAIN_STATE, IMEX_DOMAIN_READY);
	send_msg(f, m);
	expect_proto(f, "'domain-status' notification from the imex module (no domain name)");

	/* A string without its NUL. */
	m = event_msg(IMEX_CMD_DOMAIN_NEW);
	nla_put(m, IMEX_A_DOMAIN_NAME, 3, "abc");
	send_msg(f, m);
	expect_proto(f, "attributes do not parse");

	/* A name longer than names can be. */
	m = event_msg(IMEX_CMD_DOMAIN_NEW);
	nla_put(m, IMEX_A_DOMAIN_NAME, 65, (char[65]){ [0] = 'a' });
	send_msg(f, m);
	expect_proto(f, "attributes do not parse");

	/* A short UUID, a short u32, a short u64. */
	m = event_msg(IMEX_CMD_DOMAIN_NEW);
	nla_put_string(m, IMEX_A_DOMAIN_NAME, "a");
	nla_put(m, IMEX_A_DOMAIN_UUID, 8, raw);
	send_msg(f, m);
	expect_proto(f, "do not parse");
	m = event_msg(IMEX_CMD_CHANNEL_NEW);
	nla_put(m, IMEX_A_CHANNEL_ID, 2, raw);
	send_msg(f, m);
	expect_proto(f, "do not parse");
	m = event_msg(IMEX_CMD_REQ_DONE);
	nla_put_u32(m, IMEX_A_REQ_ID, 1);
	nla_put_u32(m, IMEX_A_REQ_STATUS, 0);
	send_msg(f, m);
	expect_proto(f, "do not parse");

	/* Required parts missing. */
	m = event_msg(IMEX_CMD_CHANNEL_DEL);
	send_msg(f, m);
	expect_proto(f, "no channel id");
	m = event_msg(IMEX_CMD_IMPORTS_REVOKED);
	nla_put_u32(m, IMEX_A_REVOKE_REASON, 1);
	send_msg(f, m);
	expect_proto(f, "no reason or count");
	m = event_msg(IMEX_CMD_NODE_SET);
	send_msg(f, m);
	expect_proto(f, "no node name");

	/* Members: one without a state, a member list that is not nested. */
	m = event_msg(IMEX_CMD_DOMAIN_SET_STATUS);
	put_domain(m, "a", IMEX_DOMAIN_READY);
	arr = nla_nest_start(m, IMEX_A_MEMBERS);
	put_member(m, 1, NULL, IMEX_MEMBER_CONNECTED, NULL, 0);
	nla_nest_end(m, arr);
	send_msg(f, m);
	expect_proto(f, "a member without name or state");
	m = event_msg(IMEX_CMD_DOMAIN_SET_STATUS);
	put_domain(m, "a", IMEX_DOMAIN_READY);
	arr = nla_nest_start(m, IMEX_A_MEMBERS);
	nla_put(m, 1, 3, "xyz");	/* an entry that is no attribute list */
	nla_nest_end(m, arr);
	send_msg(f, m);
	expect_proto(f, "member");
	m = event_msg(IMEX_CMD_DOMAIN_SET_STATUS);
	put_domain(m, "a", IMEX_DOMAIN_READY);
	arr = nla_nest_start(m, IMEX_A_MEMBERS);
	put_member(m, 1, "n", IMEX_MEMBER_CONNECTED, NULL, 0);
	nla_nest_end(m, arr);
	send_msg(f, m);
	assert_int_equal(next_ok(f)->n_members, 1);

	/* More members than a domain can have (the bound of the table). */
	m = event_msg(IMEX_CMD_DOMAIN_SET_STATUS);
	put_domain(m, "a", IMEX_DOMAIN_DEGRADED);
	arr = nla_nest_start(m, IMEX_A_MEMBERS);
	for (i = 0; i <= IMEX_MEMBERS_MAX; i++)
		put_member(m, i + 1, "n", IMEX_MEMBER_CONNECTED, "r", 1);
	nla_nest_end(m, arr);
	send_msg(f, m);
	expect_proto(f, "too many members");
	/* ...and exactly the bound is fine. */
	m = event_msg(IMEX_CMD_DOMAIN_SET_STATUS);
	put_domain(m, "a", IMEX_DOMAIN_DEGRADED);
	arr = nla_nest_start(m, IMEX_A_MEMBERS);
	for (i = 0; i < IMEX_MEMBERS_MAX; i++)
		put_member(m, i + 1, "n", IMEX_MEMBER_CONNECTED, "r", 1);
	nla_nest_end(m, arr);
	send_msg(f, m);
	assert_int_equal(next_ok(f)->n_members, IMEX_MEMBERS_MAX);

	/* Headers: shorter than the genl header, a length past the datagram,
	 * a datagram shorter than a netlink header. */
	memset(raw, 0, sizeof(raw));
	h->nlmsg_len = NLMSG_HDRLEN + 2;
	h->nlmsg_type = FAMILY;
	assert_int_equal(send(f->peer, raw, h->nlmsg_len, 0), (ssize_t)h->nlmsg_len);
	expect_proto(f, "shorter than its headers");
	h->nlmsg_len = 4000;
	assert_int_equal(send(f->peer, raw, sizeof(raw), 0), (ssize_t)sizeof(raw));
	expect_proto(f, "truncated");
	assert_int_equal(send(f->peer, raw, 7, 0), 7);
	expect_proto(f, "truncated");

	/* After all that the monitor still works. */
	m = event_msg(IMEX_CMD_DOMAIN_DEL);
	nla_put_string(m, IMEX_A_DOMAIN_NAME, "still");
	send_msg(f, m);
	assert_string_equal(next_ok(f)->domain, "still");
	expect_none(f);
}

/* A random byte flip anywhere in a good message never crashes the decoder. */
static void test_flipped_bytes_never_crash(void **state)
{
	struct fixture *f = *state;
	const struct imexctl_event *ev;
	const char *env = getenv("IMEX_TEST_SEED");
	unsigned int seed = env ? (unsigned int)strtoul(env, NULL, 0) :
			    (unsigned int)time(NULL);
	struct nlattr *arr;
	struct nl_msg *m;
	uint8_t buf[2048];
	size_t len;
	int i, r;

	m = event_msg(IMEX_CMD_DOMAIN_SET_STATUS);
	put_domain(m, "job", IMEX_DOMAIN_DEGRADED);
	nla_put_string(m, IMEX_A_DOMAIN_REASON, "why");
	arr = nla_nest_start(m, IMEX_A_MEMBERS);
	put_member(m, 1, "n2", IMEX_MEMBER_DISCONNECTED, "heartbeat lost", 5);
	nla_nest_end(m, arr);
	len = nlmsg_hdr(m)->nlmsg_len;
	assert_true(len <= sizeof(buf));
	memcpy(buf, nlmsg_hdr(m), len);
	nlmsg_free(m);

	print_message("seed %u (replay: IMEX_TEST_SEED=%u)\n", seed, seed);
	srand(seed);
	for (i = 0; i < 2000; i++) {
		uint8_t copy[2048];

		memcpy(copy, buf, len);
		copy[(size_t)rand() % len] = (uint8_t)rand();
		copy[(size_t)rand() % len] = (uint8_t)rand();
		assert_int_equal(send(f->peer, copy, len, 0), (ssize_t)len);
		do {
			r = imexctl_monitor_next(f->mon, &ev);
			assert_true(r == 1 || r == 0 || r == -EPROTO);
		} while (r != 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_domain_status_carries_reasons_and_changed_members,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_kind_is_decoded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_several_messages_in_one_datagram_and_others_skipped,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_notifications_are_skipped_with_a_sentence,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_flipped_bytes_never_crash, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
