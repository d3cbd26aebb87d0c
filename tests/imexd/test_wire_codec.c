// SPDX-License-Identifier: GPL-2.0
/*
 * The imexd wire codec: every message type round-trips, the size
 * bounds hold, no truncation or byte flip is misread, and the encoder
 * refuses exactly what the decoder would.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "raftlog.h"
#include "samples.h"
#include "test_wire.h"

/* ---- comparing decoded messages ---------------------------------------- */

static void assert_msg_equal(const struct imexd_msg *a,
			     const struct imexd_msg *b)
{
	uint16_t i;

	assert_int_equal(a->type, b->type);
	assert_memory_equal(a->domain_uuid, b->domain_uuid, 16);
	assert_memory_equal(a->sender_uuid, b->sender_uuid, 16);
	assert_true(a->sender_epoch == b->sender_epoch);
	switch (a->type) {
	case IMEXD_MSG_HELLO:
	case IMEXD_MSG_HELLO_ACK:
		assert_int_equal(a->u.hello.proto_min, b->u.hello.proto_min);
		assert_int_equal(a->u.hello.proto_max, b->u.hello.proto_max);
		assert_string_equal(a->u.hello.node_name, b->u.hello.node_name);
		assert_int_equal(a->u.hello.max_channels, b->u.hello.max_channels);
		assert_memory_equal(a->u.hello.fabric_uuid, b->u.hello.fabric_uuid, 16);
		assert_int_equal(a->u.hello.partition, b->u.hello.partition);
		assert_true(a->u.hello.group == b->u.hello.group);
		break;
	case IMEXD_MSG_HEARTBEAT:
		assert_int_equal(a->u.heartbeat.seq, b->u.heartbeat.seq);
		assert_int_equal(a->u.heartbeat.n, b->u.heartbeat.n);
		for (i = 0; i < a->u.heartbeat.n; i++) {
			assert_string_equal(a->u.heartbeat.peers[i].name,
					    b->u.heartbeat.peers[i].name);
			assert_int_equal(a->u.heartbeat.peers[i].state,
					 b->u.heartbeat.peers[i].state);
		}
		assert_int_equal(a->u.heartbeat.ngens, b->u.heartbeat.ngens);
		for (i = 0; i < a->u.heartbeat.ngens; i++) {
			assert_memory_equal(a->u.heartbeat.gens[i].uuid,
					    b->u.heartbeat.gens[i].uuid, 16);
			assert_true(a->u.heartbeat.gens[i].generation ==
				    b->u.heartbeat.gens[i].generation);
		}
		break;
	case IMEXD_MSG_LEAVE:
		assert_int_equal(a->u.leave.reason, b->u.leave.reason);
		break;
	case IMEXD_MSG_IMPORT_REQ:
		assert_true(a->u.import_req.tag == b->u.import_req.tag);
		assert_true(a->u.import_req.handle_id == b->u.import_req.handle_id);
		assert_int_equal(a->u.import_req.channel_id, b->u.import_req.channel_id);
		break;
	case IMEXD_MSG_IMPORT_RESP:
		assert_true(a->u.import_resp.tag == b->u.import_resp.tag);
		assert_int_equal(a->u.import_resp.status, b->u.import_resp.status);
		assert_int_equal(a->u.import_resp.desc_len, b->u.import_resp.desc_len);
		assert_memory_equal(a->u.import_resp.desc, b->u.import_resp.desc,
				    a->u.import_resp.desc_len);
		break;
	case IMEXD_MSG_EXPORT_REVOKE:
		assert_true(a->u.export_revoke.handle_id == b->u.export_revoke.handle_id);
		break;
	case IMEXD_MSG_RAFT:
		assert_int_equal(a->u.raft.len, b->u.raft.len);
		assert_memory_equal(a->u.raft.data, b->u.raft.data, a->u.raft.len);
		break;
	case IMEXD_MSG_FORWARD:
		assert_true(a->u.forward.tag == b->u.forward.tag);
		assert_int_equal(a->u.forward.len, b->u.forward.len);
		assert_memory_equal(a->u.forward.cmd, b->u.forward.cmd,
				    a->u.forward.len);
		break;
	case IMEXD_MSG_REPLY:
		assert_true(a->u.reply.tag == b->u.reply.tag);
		assert_int_equal(a->u.reply.error, b->u.reply.error);
		assert_string_equal(a->u.reply.message, b->u.reply.message);
		assert_true(a->u.reply.index == b->u.reply.index);
		assert_int_equal(a->u.reply.has_def, b->u.reply.has_def);
		if (a->u.reply.has_def)
			assert_true(imexd_def_equal(&a->u.reply.def,
						    &b->u.reply.def));
		assert_int_equal(a->u.reply.nids, b->u.reply.nids);
		if (a->u.reply.nids)
			assert_memory_equal(a->u.reply.ids, b->u.reply.ids,
					    a->u.reply.nids * sizeof(uint32_t));
		break;
	default:
		fail_msg("unknown type %u", a->type);
	}
}

/* The types there are (4..13 were the two-phase protocol's). */
static bool live_type(unsigned int t)
{
	return t <= IMEXD_MSG_HEARTBEAT || t >= IMEXD_MSG_LEAVE;
}

/* Encode, decode, compare, re-encode to the same bytes. */
static void round_trip(const struct imexd_msg *m)
{
	uint8_t *f = NULL, *g = NULL;
	size_t n = 0, n2 = 0;
	struct imexd_msg d;
	const char *why = "unset";

	assert_int_equal(imexd_msg_encode(m, &f, &n), 0);
	assert_true(n >= IMEXD_HEADER_LEN);
	assert_int_equal(imexd_frame_len(f, n), (long)n);
	assert_int_equal(imexd_msg_decode(f, n, &d, &why), 0);
	assert_null(why);
	assert_msg_equal(m, &d);
	assert_int_equal(imexd_msg_encode(&d, &g, &n2), 0);
	assert_int_equal(n, n2);
	assert_memory_equal(f, g, n);
	imexd_msg_free(&d);
	free(f);
	free(g);
}

void test_every_type_round_trips(void **state)
{
	struct imexd_msg m;
	unsigned int t;

	(void)state;
	for (t = IMEXD_MSG_HELLO; t <= IMEXD_MSG_TYPE_MAX; t++) {
		if (!live_type(t))
			continue;
		assert_int_equal(sample_msg(&m, t), 0);
		round_trip(&m);
		imexd_msg_free(&m);
	}
}

void test_header_is_big_endian_52_bytes(void **state)
{
	struct imexd_msg m;
	uint8_t *f = NULL;
	size_t n = 0;

	(void)state;
	sample_msg(&m, IMEXD_MSG_EXPORT_REVOKE);
	m.u.export_revoke.handle_id = 0xfedcba9876543210ULL;
	assert_int_equal(imexd_msg_encode(&m, &f, &n), 0);
	assert_int_equal(n, IMEXD_HEADER_LEN + 8);
	assert_memory_equal(f, "IMEX\x01\x11\x00\x00\x00\x00\x00\x08", 12);
	assert_memory_equal(f + 12, m.domain_uuid, 16);
	assert_memory_equal(f + 28, m.sender_uuid, 16);
	assert_memory_equal(f + 44, "\x01\x23\x45\x67\x89\xab\xcd\xef", 8);
	assert_memory_equal(f + 52, "\xfe\xdc\xba\x98\x76\x54\x32\x10", 8);
	free(f);
}

void test_edge_values_round_trip(void **state)
{
	struct imexd_msg m;

	(void)state;
	/* Empty lists, empty strings where allowed, extremes. */
	sample_msg(&m, IMEXD_MSG_HEARTBEAT);
	imexd_msg_free(&m);
	m.u.heartbeat.seq = UINT32_MAX;
	round_trip(&m);

	sample_msg(&m, IMEXD_MSG_REPLY);
	m.u.reply.message[0] = '\0';
	m.u.reply.error = 4095;
	round_trip(&m);
	memset(m.u.reply.message, '~', IMEXD_MESSAGE_MAX);
	m.u.reply.message[IMEXD_MESSAGE_MAX] = '\0';
	round_trip(&m);
	/* A tombstone: no members, no channels. */
	imexd_def_free(&m.u.reply.def);
	m.u.reply.def.generation = UINT64_MAX;
	m.u.reply.def.flags = IMEXD_DEF_DELETED;
	round_trip(&m);
	imexd_msg_free(&m);

	sample_msg(&m, IMEXD_MSG_REPLY);
	m.u.reply.def.members[0].addr[0] = '\0';	/* kernel: optional */
	m.u.reply.def.channels[2].id = IMEX_CHANNELS_MAX - 1;
	m.u.reply.def.channels[2].mode = 0777;
	round_trip(&m);
	imexd_msg_free(&m);

	/* A heartbeat without domains; one at generation 0 and at the top. */
	sample_msg(&m, IMEXD_MSG_HEARTBEAT);
	m.u.heartbeat.gens[0].generation = 0;
	m.u.heartbeat.gens[1].generation = UINT64_MAX;
	round_trip(&m);
	free(m.u.heartbeat.gens);
	m.u.heartbeat.gens = NULL;
	m.u.heartbeat.ngens = 0;
	round_trip(&m);
	imexd_msg_free(&m);

	/* One-byte payloads. */
	sample_msg(&m, IMEXD_MSG_RAFT);
	m.u.raft.len = 1;
	round_trip(&m);
	imexd_msg_free(&m);
	sample_msg(&m, IMEXD_MSG_FORWARD);
	m.u.forward.len = 1;
	m.u.forward.tag = 0;
	round_trip(&m);
	imexd_msg_free(&m);

	/* A REPLY without a def sends none, whatever the def field holds. */
	sample_msg(&m, IMEXD_MSG_REPLY);
	m.u.reply.has_def = false;
	m.u.reply.error = 4095;
	m.u.reply.message[0] = '\0';
	m.u.reply.index = UINT64_MAX;
	free(m.u.reply.ids);
	m.u.reply.ids = NULL;
	m.u.reply.nids = 0;
	{
		struct imexd_msg d;
		uint8_t *f = NULL;
		size_t n = 0;

		assert_int_equal(imexd_msg_encode(&m, &f, &n), 0);
		/* tag, error, "", index, has_def, nids */
		assert_int_equal(n, IMEXD_HEADER_LEN + 8 + 4 + 1 + 8 + 1 + 4);
		assert_int_equal(imexd_msg_decode(f, n, &d, NULL), 0);
		assert_false(d.u.reply.has_def);
		assert_null(d.u.reply.def.members);
		assert_int_equal(d.u.reply.def.nchannels, 0);
		assert_msg_equal(&m, &d);
		imexd_msg_free(&d);
		free(f);
	}
	memset(m.domain_uuid, 0, 16);	/* no def: no domain needed */
	round_trip(&m);
	/* The highest channel id. */
	m.u.reply.ids = malloc(2 * sizeof(*m.u.reply.ids));
	m.u.reply.nids = 2;
	m.u.reply.ids[0] = 0;
	m.u.reply.ids[1] = IMEX_CHANNELS_MAX - 1;
	round_trip(&m);
	imexd_msg_free(&m);

	sample_msg(&m, IMEXD_MSG_HELLO);
	m.u.hello.proto_min = m.u.hello.proto_max = 0xffff;
	m.u.hello.max_channels = IMEX_CHANNELS_MAX;
	memset(m.u.hello.node_name, 'a', IMEX_NAME_MAX - 1);
	m.u.hello.node_name[IMEX_NAME_MAX - 1] = '\0';
	round_trip(&m);
}

void test_largest_bounded_messages_round_trip(void **state)
{
	struct imexd_msg m;
	uint16_t i;

	(void)state;
	/* 160 members with the longest names and addresses. */
	sample_msg(&m, IMEXD_MSG_REPLY);
	imexd_def_free(&m.u.reply.def);
	assert_int_equal(sample_def(&m.u.reply.def, "big", IMEX_MEMBERS_MAX,
				    1000, 1), 0);
	for (i = 0; i < IMEX_MEMBERS_MAX; i++) {
		struct imexd_member *mb = &m.u.reply.def.members[i];

		memset(mb->name, 'n', IMEX_NAME_MAX - 1);
		snprintf(mb->name + IMEX_NAME_MAX - 5, 5, "%04u", i);
		memset(mb->addr, 'a', IMEXD_ADDR_MAX);
		snprintf(mb->addr + IMEXD_ADDR_MAX - 4, 5, "%04u", i);
	}
	round_trip(&m);
	imexd_msg_free(&m);

	/* A heartbeat with a view of every possible peer. */
	sample_msg(&m, IMEXD_MSG_HEARTBEAT);
	free(m.u.heartbeat.peers);
	m.u.heartbeat.n = IMEX_MEMBERS_MAX;
	m.u.heartbeat.peers = calloc(IMEX_MEMBERS_MAX, sizeof(*m.u.heartbeat.peers));
	for (i = 0; i < IMEX_MEMBERS_MAX; i++) {
		snprintf(m.u.heartbeat.peers[i].name, IMEX_NAME_MAX, "p%u", i);
		m.u.heartbeat.peers[i].state =
			i % (IMEXD_WIRE_MEMBER_STATE_MAX + 1);
	}
	round_trip(&m);
	imexd_msg_free(&m);

	/* A heartbeat naming every domain a kernel can hold. */
	sample_msg(&m, IMEXD_MSG_HEARTBEAT);
	free(m.u.heartbeat.gens);
	m.u.heartbeat.ngens = IMEX_DOMAINS_MAX;
	m.u.heartbeat.gens = calloc(IMEX_DOMAINS_MAX, sizeof(*m.u.heartbeat.gens));
	for (i = 0; i < IMEX_DOMAINS_MAX; i++) {
		m.u.heartbeat.gens[i].uuid[0] = (uint8_t)i;
		m.u.heartbeat.gens[i].uuid[15] = 1;
		m.u.heartbeat.gens[i].generation = i;
	}
	round_trip(&m);
	m.u.heartbeat.ngens = IMEX_DOMAINS_MAX + 1;
	{
		uint8_t *f = NULL;
		size_t n = 0;

		assert_int_equal(imexd_msg_encode(&m, &f, &n), -EINVAL);
	}
	m.u.heartbeat.ngens = IMEX_DOMAINS_MAX;
	imexd_msg_free(&m);
}

/* RAFT alone goes past IMEXD_BODY_MAX, up to raftwire's frame bound. */
void test_raft_body_bound(void **state)
{
	struct imexd_msg m, d;
	uint8_t *f = NULL;
	size_t n = 0;
	const char *why = NULL;

	(void)state;
	sample_msg(&m, IMEXD_MSG_RAFT);
	free(m.u.raft.data);
	m.u.raft.len = IMEXD_RAFT_DATA_MAX;
	m.u.raft.data = malloc(IMEXD_RAFT_DATA_MAX);
	assert_non_null(m.u.raft.data);
	for (n = 0; n < IMEXD_RAFT_DATA_MAX; n += 4096)
		m.u.raft.data[n] = (uint8_t)(n >> 12);
	m.u.raft.data[IMEXD_RAFT_DATA_MAX - 1] = 0x77;
	assert_int_equal(imexd_msg_encode(&m, &f, &n), 0);
	assert_int_equal(n, IMEXD_HEADER_LEN + IMEXD_RAFT_BODY_MAX);
	assert_int_equal(imexd_frame_len(f, IMEXD_HEADER_LEN), (long)n);
	assert_int_equal(imexd_msg_decode(f, n, &d, &why), 0);
	assert_int_equal(d.u.raft.len, IMEXD_RAFT_DATA_MAX);
	assert_memory_equal(d.u.raft.data, m.u.raft.data, IMEXD_RAFT_DATA_MAX);
	imexd_msg_free(&d);

	/* One byte more: the header's length alone refuses it. */
	f[8] = (uint8_t)((IMEXD_RAFT_BODY_MAX + 1) >> 24);
	f[9] = (uint8_t)((IMEXD_RAFT_BODY_MAX + 1) >> 16);
	f[10] = (uint8_t)((IMEXD_RAFT_BODY_MAX + 1) >> 8);
	f[11] = (uint8_t)(IMEXD_RAFT_BODY_MAX + 1);
	assert_int_equal(imexd_frame_len(f, IMEXD_HEADER_LEN), -EBADMSG);
	assert_int_equal(imexd_msg_decode(f, n, &d, &why), -E2BIG);
	assert_string_equal(why, "body longer than IMEXD_RAFT_BODY_MAX");
	/* The same length on another type is far beyond IMEXD_BODY_MAX. */
	f[11] = (uint8_t)IMEXD_RAFT_BODY_MAX;
	f[5] = IMEXD_MSG_FORWARD;
	assert_int_equal(imexd_frame_len(f, IMEXD_HEADER_LEN), -EBADMSG);
	assert_int_equal(imexd_msg_decode(f, n, &d, &why), -E2BIG);
	assert_string_equal(why, "body longer than IMEXD_BODY_MAX");
	free(f);

	/* The encoder refuses a payload above the bound. */
	m.u.raft.len = IMEXD_RAFT_DATA_MAX + 1;
	assert_int_equal(imexd_msg_encode(&m, &f, &n), -EINVAL);
	m.u.raft.len = IMEXD_RAFT_DATA_MAX;
	imexd_msg_free(&m);
}

/* FORWARD: a command up to IMEXD_RAFT_ENTRY_MAX, the body within 1 MiB. */
void test_forward_bound(void **state)
{
	struct imexd_msg m;
	uint8_t *f = NULL;
	size_t n = 0;
	uint32_t fit = IMEXD_BODY_MAX - 12;

	(void)state;
	sample_msg(&m, IMEXD_MSG_FORWARD);
	free(m.u.forward.cmd);
	m.u.forward.cmd = calloc(1, IMEXD_RAFT_ENTRY_MAX + 1);
	assert_non_null(m.u.forward.cmd);
	m.u.forward.cmd[0] = 3;
	m.u.forward.len = fit;
	round_trip(&m);
	m.u.forward.len = fit + 1;
	assert_int_equal(imexd_msg_encode(&m, &f, &n), -EINVAL);
	m.u.forward.len = IMEXD_RAFT_ENTRY_MAX + 1;
	assert_int_equal(imexd_msg_encode(&m, &f, &n), -EINVAL);
	imexd_msg_free(&m);
}

void test_body_max_is_the_limit(void **state)
{
	struct imexd_msg m;
	uint8_t *f = NULL;
	size_t n = 0, fixed;
	uint32_t fit;

	(void)state;
	/* A REPLY: u64 tag, i32 error, "", u64 index, has_def, then def "x"
	 * with no members (1+1 + 8 + 1 + 16 + 4 + 2 + 4 bytes), u32 nids 0. */
	fixed = 8 + 4 + 1 + 8 + 1 + (2 + 8 + 1 + 16 + 4 + 2 + 4) + 4;
	fit = (uint32_t)((IMEXD_BODY_MAX - fixed) / 14);
	sample_msg(&m, IMEXD_MSG_REPLY);
	m.u.reply.message[0] = '\0';
	free(m.u.reply.ids);
	m.u.reply.ids = NULL;
	m.u.reply.nids = 0;
	imexd_def_free(&m.u.reply.def);
	assert_int_equal(sample_def(&m.u.reply.def, "x", 0, fit + 1, 1), 0);
	assert_int_equal(imexd_msg_encode(&m, &f, &n), -EINVAL);
	m.u.reply.def.nchannels = fit;
	assert_int_equal(imexd_msg_encode(&m, &f, &n), 0);
	assert_true(n - IMEXD_HEADER_LEN <= IMEXD_BODY_MAX);
	assert_true(n - IMEXD_HEADER_LEN + 14 > IMEXD_BODY_MAX);
	free(f);
	m.u.reply.def.nchannels = fit + 1;
	imexd_msg_free(&m);
}

/* Every prefix of every valid frame is refused; none is over-read. */
void test_every_truncation_is_refused(void **state)
{
	struct imexd_msg m, d;
	uint8_t *f = NULL, *cut;
	size_t n = 0, k;
	unsigned int t;

	(void)state;
	for (t = IMEXD_MSG_HELLO; t <= IMEXD_MSG_TYPE_MAX; t++) {
		if (!live_type(t))
			continue;
		sample_msg(&m, t);
		assert_int_equal(imexd_msg_encode(&m, &f, &n), 0);
		for (k = 0; k < n; k++) {
			/* An exact-size copy, so ASan sees any over-read. */
			cut = malloc(k ? k : 1);
			memcpy(cut, f, k);
			assert_int_not_equal(imexd_msg_decode(cut, k, &d, NULL), 0);
			assert_true(imexd_frame_len(cut, k) == 0 ||
				    imexd_frame_len(cut, k) == (long)n);
			free(cut);
		}
		free(f);
		imexd_msg_free(&m);
	}
}

/* Any single-byte change decodes to an error or to a message that
 * re-encodes to exactly the changed frame. */
void test_byte_flips_round_trip_or_fail(void **state)
{
	struct imexd_msg m, d;
	uint8_t *f = NULL, *g = NULL;
	size_t n = 0, n2, k;
	unsigned int v, t;

	(void)state;
	for (t = IMEXD_MSG_HELLO; t <= IMEXD_MSG_TYPE_MAX; t++) {
		if (!live_type(t))
			continue;
		sample_msg(&m, t);
		assert_int_equal(imexd_msg_encode(&m, &f, &n), 0);
		for (k = 0; k < n; k++) {
			uint8_t orig = f[k];

			for (v = 0; v < 256; v += 17) {
				f[k] = (uint8_t)(orig ^ v);
				if (imexd_msg_decode(f, n, &d, NULL))
					continue;
				assert_int_equal(imexd_msg_encode(&d, &g, &n2), 0);
				assert_int_equal(n2, n);
				assert_memory_equal(g, f, n);
				free(g);
				imexd_msg_free(&d);
			}
			f[k] = orig;
		}
		free(f);
		imexd_msg_free(&m);
	}
}

/* ---- the encoder refuses what the decoder would ------------------------- */

struct enc_case {
	const char *name;
	uint8_t type;
	void (*spoil)(struct imexd_msg *m);
};

static void e_type_0(struct imexd_msg *m) { m->type = 0; }
static void e_type_above_max(struct imexd_msg *m) { m->type = IMEXD_MSG_TYPE_MAX + 1; }
static void e_type_4(struct imexd_msg *m) { m->type = 4; }
static void e_type_13(struct imexd_msg *m) { m->type = 13; }
static void e_hello_name(struct imexd_msg *m) { strcpy(m->u.hello.node_name, "a b"); }
static void e_hello_empty(struct imexd_msg *m) { m->u.hello.node_name[0] = 0; }
static void e_hello_unterminated(struct imexd_msg *m)
{
	memset(m->u.hello.node_name, 'a', IMEX_NAME_MAX);
}
static void e_hello_range(struct imexd_msg *m) { m->u.hello.proto_min = 4; }
static void e_hello_maxch(struct imexd_msg *m)
{
	m->u.hello.max_channels = IMEX_CHANNELS_MAX + 1;
}
static void e_hb_state(struct imexd_msg *m) { m->u.heartbeat.peers[1].state = 200; }
static void e_hb_dup(struct imexd_msg *m) { strcpy(m->u.heartbeat.peers[2].name, "peer0"); }
static void e_hb_count(struct imexd_msg *m) { m->u.heartbeat.n = IMEX_MEMBERS_MAX + 1; }
static void e_hb_null(struct imexd_msg *m)
{
	free(m->u.heartbeat.peers);
	m->u.heartbeat.peers = NULL;
}
static void e_def_uuid(struct imexd_msg *m) { m->u.reply.def.uuid[0] ^= 1; }
static void e_def_zero_uuid(struct imexd_msg *m)
{
	memset(m->domain_uuid, 0, 16);
	memset(m->u.reply.def.uuid, 0, 16);
}
static void e_def_dup(struct imexd_msg *m)
{
	strcpy(m->u.reply.def.members[1].name, m->u.reply.def.members[0].name);
}
static void e_def_addr(struct imexd_msg *m) { strcpy(m->u.reply.def.members[1].addr, "a\tb"); }
static void e_def_sort(struct imexd_msg *m) { m->u.reply.def.channels[2].id = 1; }
static void e_def_chan(struct imexd_msg *m) { m->u.reply.def.channels[2].id = IMEX_CHANNELS_MAX; }
static void e_def_mode(struct imexd_msg *m) { m->u.reply.def.channels[0].mode = 01777; }
static void e_def_flags(struct imexd_msg *m) { m->u.reply.def.flags = 0x80; }
static void e_def_nmembers(struct imexd_msg *m) { m->u.reply.def.nmembers = IMEX_MEMBERS_MAX + 1; }
static void e_def_nchannels(struct imexd_msg *m) { m->u.reply.def.nchannels = IMEX_CHANNELS_MAX + 1; }
static void e_leave(struct imexd_msg *m) { m->u.leave.reason = 0; }
static void e_def_name(struct imexd_msg *m) { strcpy(m->u.reply.def.name, "_x"); }
static void e_hb_gens_dup(struct imexd_msg *m)
{
	memcpy(m->u.heartbeat.gens[1].uuid, m->u.heartbeat.gens[0].uuid, 16);
}
static void e_hb_gens_zero(struct imexd_msg *m) { memset(m->u.heartbeat.gens[1].uuid, 0, 16); }
static void e_hb_gens_null(struct imexd_msg *m)
{
	free(m->u.heartbeat.gens);
	m->u.heartbeat.gens = NULL;
}
static void e_raft_empty(struct imexd_msg *m) { m->u.raft.len = 0; }
static void e_raft_null(struct imexd_msg *m)
{
	free(m->u.raft.data);
	m->u.raft.data = NULL;
}
static void e_fwd_empty(struct imexd_msg *m) { m->u.forward.len = 0; }
static void e_fwd_huge(struct imexd_msg *m) { m->u.forward.len = IMEXD_RAFT_ENTRY_MAX + 1; }
static void e_reply_err(struct imexd_msg *m) { m->u.reply.error = -2; }
static void e_reply_text(struct imexd_msg *m) { m->u.reply.message[1] = '\n'; }
static void e_reply_uuid(struct imexd_msg *m) { m->domain_uuid[3] ^= 1; }
static void e_reply_def(struct imexd_msg *m) { m->u.reply.def.channels[1].id = 0; }
static void e_reply_ids(struct imexd_msg *m) { m->u.reply.ids[2] = m->u.reply.ids[1]; }
static void e_reply_id_max(struct imexd_msg *m) { m->u.reply.ids[2] = IMEX_CHANNELS_MAX; }
static void e_reply_ids_null(struct imexd_msg *m)
{
	free(m->u.reply.ids);
	m->u.reply.ids = NULL;
}

#define ENC(t, fn) { #fn, IMEXD_MSG_##t, fn }

static const struct enc_case enc_cases[] = {
	ENC(LEAVE, e_type_0), ENC(LEAVE, e_type_above_max),
	ENC(LEAVE, e_type_4), ENC(LEAVE, e_type_13),
	ENC(HELLO, e_hello_name), ENC(HELLO, e_hello_empty),
	ENC(HELLO_ACK, e_hello_unterminated), ENC(HELLO, e_hello_range),
	ENC(HELLO, e_hello_maxch),
	ENC(HEARTBEAT, e_hb_state), ENC(HEARTBEAT, e_hb_dup),
	ENC(HEARTBEAT, e_hb_count), ENC(HEARTBEAT, e_hb_null),
	ENC(REPLY, e_def_uuid), ENC(REPLY, e_def_zero_uuid),
	ENC(REPLY, e_def_dup), ENC(REPLY, e_def_addr),
	ENC(REPLY, e_def_sort), ENC(REPLY, e_def_chan),
	ENC(REPLY, e_def_mode), ENC(REPLY, e_def_flags),
	ENC(REPLY, e_def_nmembers), ENC(REPLY, e_def_nchannels),
	ENC(REPLY, e_def_name), ENC(LEAVE, e_leave),
	ENC(HEARTBEAT, e_hb_gens_dup), ENC(HEARTBEAT, e_hb_gens_zero),
	ENC(HEARTBEAT, e_hb_gens_null),
	ENC(RAFT, e_raft_empty), ENC(RAFT, e_raft_null),
	ENC(FORWARD, e_fwd_empty), ENC(FORWARD, e_fwd_huge),
	ENC(REPLY, e_reply_err), ENC(REPLY, e_reply_text),
	ENC(REPLY, e_reply_uuid), ENC(REPLY, e_reply_def),
	ENC(REPLY, e_reply_ids), ENC(REPLY, e_reply_id_max),
	ENC(REPLY, e_reply_ids_null),
};

void test_encoder_refuses_what_decoder_would(void **state)
{
	struct imexd_msg m;
	uint8_t *f = (uint8_t *)"untouched";
	size_t n = 12345, i;

	(void)state;
	for (i = 0; i < sizeof(enc_cases) / sizeof(enc_cases[0]); i++) {
		uint8_t type;
		int ret;

		assert_int_equal(sample_msg(&m, enc_cases[i].type), 0);
		enc_cases[i].spoil(&m);
		ret = imexd_msg_encode(&m, &f, &n);
		if (ret != -EINVAL)
			fail_msg("%s: encode returned %d", enc_cases[i].name, ret);
		assert_string_equal((const char *)f, "untouched");
		assert_int_equal(n, 12345);
		/* Put back what the spoiler broke in counts, then free. */
		type = enc_cases[i].type;
		m.type = type;
		if (type == IMEXD_MSG_HEARTBEAT)
			m.u.heartbeat.n = 3;
		if (type == IMEXD_MSG_RAFT)
			m.u.raft.len = 7;
		if (type == IMEXD_MSG_FORWARD)
			m.u.forward.len = 5;
		if (type == IMEXD_MSG_REPLY) {
			m.u.reply.def.nmembers = 2;
			m.u.reply.def.nchannels = 3;
		}
		imexd_msg_free(&m);
	}
	assert_int_equal(imexd_msg_encode(NULL, &f, &n), -EINVAL);
}
