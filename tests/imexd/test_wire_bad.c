// SPDX-License-Identifier: GPL-2.0
/*
 * The imexd wire codec: every class of malformed frame is refused
 * without touching the output, for the reason it should be.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "raftlog.h"
#include "test_wire.h"

static const struct mb two[] = { { "a", "10.0.0.1" }, { "b", "10.0.0.2" } };
static const uint32_t chans_ok[] = { 1, 0600, 2, 0600 };

/* ---- the malformed-frame table ------------------------------------------ */

static void bad_empty(struct fb *f)
{
	f->n = 0;
}

static void bad_truncated_header(struct fb *f)
{
	hello_body(f, 1, 1, "a", 1);
	f->n = IMEXD_HEADER_LEN - 1;
}

/* A valid HELLO with header byte @at set to @v: the POKE() cases. */
static void hello_poked(struct fb *f, size_t at, uint8_t v)
{
	hello_body(f, 1, 1, "a", 1);
	f->b[at] = v;
}

static void bad_length_beyond_max(struct fb *f)
{
	hello_body(f, 1, 1, "a", 1);
	f->b[8] = 0;
	f->b[9] = 0x10;		/* 1 MiB + 1 */
	f->b[10] = 0;
	f->b[11] = 1;
}

static void bad_length_above_frame(struct fb *f)
{
	hello_body(f, 1, 1, "a", 1);
	f->n--;			/* header says one byte more */
}

static void bad_length_below_frame(struct fb *f)
{
	hello_body(f, 1, 1, "a", 1);
	fb_u8(f, 0);		/* a byte after the frame */
}

static void bad_revoke_short(struct fb *f)
{
	fb_hdr(f, IMEXD_MSG_EXPORT_REVOKE);
	fb_be(f, 1, 7);
	fb_done(f);
}

static void bad_leave_empty(struct fb *f)
{
	fb_hdr(f, IMEXD_MSG_LEAVE);
	fb_done(f);
}

static void bad_name_empty(struct fb *f)
{
	hello_body(f, 1, 1, "", 1);
}

static void bad_name_first_char(struct fb *f)
{
	hello_body(f, 1, 1, "-node", 1);
}

static void bad_name_space(struct fb *f)
{
	hello_body(f, 1, 1, "no de", 1);
}

static void bad_name_slash(struct fb *f)
{
	hello_body(f, 1, 1, "a/b", 1);
}

static void bad_name_high_byte(struct fb *f)
{
	hello_body(f, 1, 1, "n\xc3\xa9", 1);
}

static void bad_name_nul_inside(struct fb *f)
{
	fb_hdr(f, IMEXD_MSG_HELLO);
	fb_be(f, 1, 2);
	fb_be(f, 1, 2);
	fb_mem(f, "\x03" "a\0b", 4);
	fb_be(f, 1, 4);
	fb_zero(f, 20);
	fb_done(f);
}

static void bad_name_64(struct fb *f)
{
	char n[65];

	memset(n, 'a', 64);
	n[64] = '\0';
	hello_body(f, 1, 1, n, 1);
}

static void bad_name_255(struct fb *f)
{
	char n[256];

	memset(n, 'a', 255);
	n[255] = '\0';
	hello_body(f, 1, 1, n, 1);
}

static void bad_str_beyond_body(struct fb *f)
{
	fb_hdr(f, IMEXD_MSG_HELLO);
	fb_be(f, 1, 2);
	fb_be(f, 1, 2);
	fb_mem(f, "\x09" "abc", 4);	/* says 9, has 3 */
	fb_done(f);
}

static void bad_hello_proto_range(struct fb *f)
{
	hello_body(f, 3, 2, "a", 1);
}

static void bad_hello_max_channels(struct fb *f)
{
	hello_body(f, 1, 1, "a", IMEX_CHANNELS_MAX + 1);
}

static const uint8_t u12[2][16] = { { 1 }, { 2 } }, u11[2][16] = { { 1 }, { 1 } },
		     u10[2][16] = { { 1 }, { 0 } };

static void bad_hb_gens_too_many(struct fb *f)
{
	hb_gens_frame(f, IMEX_DOMAINS_MAX + 1, 0, u12);
}

static void bad_hb_gens_beyond_body(struct fb *f)
{
	hb_gens_frame(f, 3, 2, u12);
}

static void bad_hb_gens_duplicate(struct fb *f)
{
	hb_gens_frame(f, 2, 2, u11);
}

static void bad_hb_gens_zero_uuid(struct fb *f)
{
	hb_gens_frame(f, 2, 2, u10);
}

/* A protocol 1 heartbeat: no gens count at all. */
static void bad_hb_v1(struct fb *f)
{
	static const char *const xy[] = { "x", "y" };

	hb_frame(f, 2, 2, xy, 2);
	f->n -= 2;
	fb_done(f);
}

static void bad_hb_gens_trailing(struct fb *f)
{
	hb_gens_frame(f, 2, 2, u12);
	fb_u8(f, 0);
	fb_done(f);
}

static void bad_raft_empty(struct fb *f)
{
	blob_frame(f, IMEXD_MSG_RAFT, 0, 0);
}

static void bad_raft_huge(struct fb *f)
{
	blob_frame(f, IMEXD_MSG_RAFT, IMEXD_RAFT_DATA_MAX + 1, 16);
}

static void bad_raft_beyond_body(struct fb *f)
{
	blob_frame(f, IMEXD_MSG_RAFT, 17, 16);
}

static void bad_raft_trailing(struct fb *f)
{
	blob_frame(f, IMEXD_MSG_RAFT, 15, 16);
}

static void bad_forward_empty(struct fb *f)
{
	blob_frame(f, IMEXD_MSG_FORWARD, 0, 0);
}

static void bad_forward_huge(struct fb *f)
{
	blob_frame(f, IMEXD_MSG_FORWARD, IMEXD_RAFT_ENTRY_MAX + 1, 16);
}

static void bad_forward_beyond_body(struct fb *f)
{
	blob_frame(f, IMEXD_MSG_FORWARD, 100, 99);
}

static void bad_forward_cut(struct fb *f)
{
	blob_frame(f, IMEXD_MSG_FORWARD, 1, 1);
	f->n -= 6;	/* into the length */
	fb_done(f);
}

static const uint32_t ids_ok[] = { 1, 5 }, ids_dup[] = { 5, 5 },
		      ids_down[] = { 5, 1 }, ids_max[] = { 1, IMEX_CHANNELS_MAX };

static void bad_reply_ids_dup(struct fb *f)
{
	reply_ids_frame(f, 0, "ok", 0, 2, 2, ids_dup);
}

static void bad_reply_ids_unsorted(struct fb *f)
{
	reply_ids_frame(f, 0, "ok", 1, 2, 2, ids_down);
}

static void bad_reply_ids_max(struct fb *f)
{
	reply_ids_frame(f, 0, "ok", 0, 2, 2, ids_max);
}

static void bad_reply_ids_too_many(struct fb *f)
{
	reply_ids_frame(f, 0, "ok", 0, IMEX_CHANNELS_MAX + 1, 2, ids_ok);
}

static void bad_reply_ids_beyond_body(struct fb *f)
{
	reply_ids_frame(f, 0, "ok", 0, 3, 2, ids_ok);
}

static void bad_reply_no_nids(struct fb *f)
{
	reply_frame(f, 0, "ok", 0);
	f->n -= 4;
	fb_done(f);
}

static void bad_reply_has_def_2(struct fb *f)
{
	reply_frame(f, 0, "ok", 2);
}

static void bad_reply_negative(struct fb *f)
{
	reply_frame(f, (uint32_t)-5, "ok", 0);
}

static void bad_reply_errno_big(struct fb *f)
{
	reply_frame(f, 4096, "ok", 0);
}

static void bad_reply_text(struct fb *f)
{
	reply_frame(f, 0, "o\x7fk", 0);
}

static void bad_reply_zero_uuid(struct fb *f)
{
	reply_frame(f, 0, "ok", 1);
	memset(f->b + 12, 0, 16);
}

static void bad_reply_def_cut(struct fb *f)
{
	reply_frame(f, 0, "ok", 1);
	f->n -= 2;
	fb_done(f);
}

static void bad_reply_no_def_trailing(struct fb *f)
{
	reply_frame(f, 0, "ok", 0);
	fb_u8(f, 0);
	fb_done(f);
}

static const char *const ab[] = { "a", "b" }, *const aa[] = { "a", "a" };

static void bad_hb_too_many(struct fb *f)
{
	hb_frame(f, IMEX_MEMBERS_MAX + 1, 0, ab, 2);
}

static void bad_hb_state(struct fb *f)
{
	hb_frame(f, 2, 2, ab, __IMEX_MEMBER_STATE_MAX);
}

static void bad_hb_duplicate(struct fb *f)
{
	hb_frame(f, 2, 2, aa, 2);
}

static void bad_hb_missing_peer(struct fb *f)
{
	hb_frame(f, 2, 1, ab, 2);
}

static void bad_def_name(struct fb *f)
{
	def_frame(f, ".job", 0, two, 2, 0, chans_ok, 2, 0);
}

static void bad_def_flags(struct fb *f)
{
	def_frame(f, "job", 0x02, two, 2, 0, chans_ok, 2, 0);
}

static void bad_def_too_many_members(struct fb *f)
{
	def_frame(f, "job", 0, two, 2, IMEX_MEMBERS_MAX + 1, chans_ok, 2, 0);
}

static void bad_def_missing_member(struct fb *f)
{
	def_frame(f, "job", 0, two, 1, 2, chans_ok, 0, 0);
}

static void bad_def_duplicate_member(struct fb *f)
{
	static const struct mb dup[] = { { "a", "10.0.0.1" }, { "a", "x" } };

	def_frame(f, "job", 0, dup, 2, 0, chans_ok, 2, 0);
}

static void bad_def_member_name(struct fb *f)
{
	static const struct mb m[] = { { "a b", "10.0.0.1" } };

	def_frame(f, "job", 0, m, 1, 0, chans_ok, 2, 0);
}

static void bad_def_addr_space(struct fb *f)
{
	static const struct mb m[] = { { "a", "10.0.0.1 x" } };

	def_frame(f, "job", 0, m, 1, 0, chans_ok, 2, 0);
}

static void bad_def_addr_control(struct fb *f)
{
	static const struct mb m[] = { { "a", "host\n" } };

	def_frame(f, "job", 0, m, 1, 0, chans_ok, 2, 0);
}

static void bad_def_addr_high(struct fb *f)
{
	static const struct mb m[] = { { "a", "h\x80st" } };

	def_frame(f, "job", 0, m, 1, 0, chans_ok, 2, 0);
}

static void bad_def_chan_unsorted(struct fb *f)
{
	static const uint32_t c[] = { 5, 0600, 4, 0600 };

	def_frame(f, "job", 0, two, 2, 0, c, 2, 0);
}

static void bad_def_chan_duplicate(struct fb *f)
{
	static const uint32_t c[] = { 4, 0600, 4, 0600 };

	def_frame(f, "job", 0, two, 2, 0, c, 2, 0);
}

static void bad_def_chan_id(struct fb *f)
{
	static const uint32_t c[] = { 4, 0600, IMEX_CHANNELS_MAX, 0600 };

	def_frame(f, "job", 0, two, 2, 0, c, 2, 0);
}

static void bad_def_chan_mode(struct fb *f)
{
	static const uint32_t c[] = { 4, 01000 };

	def_frame(f, "job", 0, two, 2, 0, c, 1, 0);
}

static void bad_def_too_many_channels(struct fb *f)
{
	def_frame(f, "job", 0, two, 2, 0, chans_ok, 2, IMEX_CHANNELS_MAX + 1);
}

static void bad_def_channels_huge(struct fb *f)
{
	def_frame(f, "job", 0, two, 2, 0, chans_ok, 0, UINT32_MAX);
}

static void bad_def_channels_beyond_body(struct fb *f)
{
	def_frame(f, "job", 0, two, 2, 0, chans_ok, 2, 1000);
}

static void bad_def_trailing(struct fb *f)
{
	def_frame(f, "job", 0, two, 2, 0, chans_ok, 2, 0);
	fb_u8(f, 0);
	fb_done(f);
}

static void bad_def_zero_uuid(struct fb *f)
{
	def_frame(f, "job", 0, two, 2, 0, chans_ok, 2, 0);
	memset(f->b + 12, 0, 16);
}

static void bad_leave_0(struct fb *f)
{
	fb_hdr(f, IMEXD_MSG_LEAVE);
	fb_u8(f, 0);
	fb_done(f);
}

static void bad_leave_2(struct fb *f)
{
	fb_hdr(f, IMEXD_MSG_LEAVE);
	fb_u8(f, 2);
	fb_done(f);
}

static void bad_resp_no_desc(struct fb *f)
{
	import_resp_frame(f, 0, 0);
}

static void bad_resp_error_with_desc(struct fb *f)
{
	import_resp_frame(f, 1, 1);
}

static void bad_resp_desc_257(struct fb *f)
{
	import_resp_frame(f, 0, IMEX_DESC_MAX + 1);
}

static void bad_resp_negative(struct fb *f)
{
	import_resp_frame(f, 0xffffffffu, 0);
}

static void bad_resp_desc_beyond_body(struct fb *f)
{
	import_resp_frame(f, 0, 4);
	f->n -= 1;
	fb_done(f);
}

static void bad_import_req_channel(struct fb *f)
{
	fb_hdr(f, IMEXD_MSG_IMPORT_REQ);
	fb_be(f, 1, 8);
	fb_be(f, 2, 8);
	fb_be(f, IMEX_CHANNELS_MAX, 4);
	fb_done(f);
}

static void bad_import_req_no_domain(struct fb *f)
{
	fb_hdr(f, IMEXD_MSG_IMPORT_REQ);
	memset(f->b + 12, 0, 16);
	fb_be(f, 1, 8);
	fb_be(f, 2, 8);
	fb_be(f, 3, 4);
	fb_done(f);
}

static void bad_revoke_long(struct fb *f)
{
	fb_hdr(f, IMEXD_MSG_EXPORT_REVOKE);
	fb_be(f, 1, 8);
	fb_u8(f, 0);
	fb_done(f);
}

struct bad_case {
	const char *name;
	void (*build)(struct fb *f);
	const char *why;	/* the reason the decoder must give */
	size_t at;		/* no build: a HELLO with byte @at set to @v */
	int err;
	uint8_t v;
};

#define BAD(fn, e, w) { #fn, fn, w, 0, e, 0 }
#define POKE(name, at, v, e, w) { #name, NULL, w, at, e, v }

static const struct bad_case bad_cases[] = {
	BAD(bad_empty, -EBADMSG, "truncated header"),
	BAD(bad_truncated_header, -EBADMSG, "truncated header"),
	POKE(bad_magic, 0, 'J', -EBADMSG, "bad magic"),
	POKE(bad_version_2, 4, 2, -EPROTO, "unsupported protocol version"),
	POKE(bad_version_0, 4, 0, -EPROTO, "unsupported protocol version"),
	POKE(bad_type_0, 5, 0, -EPROTO, "unknown message type"),
	POKE(bad_type_above_max, 5, IMEXD_MSG_TYPE_MAX + 1, -EPROTO, "unknown message type"),
	/* The two-phase protocol's first and last types. */
	POKE(bad_type_4, 5, 4, -EPROTO, "unknown message type"),
	POKE(bad_type_13, 5, 13, -EPROTO, "unknown message type"),
	BAD(bad_resp_no_desc, -EBADMSG, "success without a descriptor"),
	BAD(bad_resp_error_with_desc, -EBADMSG, "a descriptor with an error"),
	BAD(bad_resp_desc_257, -E2BIG, "descriptor longer than IMEX_DESC_MAX"),
	BAD(bad_resp_negative, -EBADMSG, "error is not 0 or a positive errno"),
	BAD(bad_resp_desc_beyond_body, -EBADMSG, "body shorter than its fields"),
	BAD(bad_import_req_channel, -EBADMSG, "channel id >= IMEX_CHANNELS_MAX"),
	BAD(bad_import_req_no_domain, -EBADMSG, "import message without a domain UUID"),
	BAD(bad_revoke_long, -EBADMSG, "body longer than its fields"),
	POKE(bad_type_255, 5, 255, -EPROTO, "unknown message type"),
	POKE(bad_flags_low, 7, 1, -EBADMSG, "non-zero header flags"),
	POKE(bad_flags_high, 6, 0x80, -EBADMSG, "non-zero header flags"),
	BAD(bad_length_beyond_max, -E2BIG, "body longer than IMEXD_BODY_MAX"),
	BAD(bad_length_above_frame, -EBADMSG, "frame length differs from the header's"),
	BAD(bad_length_below_frame, -EBADMSG, "frame length differs from the header's"),
	BAD(bad_revoke_short, -EBADMSG, "body shorter than its fields"),
	BAD(bad_leave_empty, -EBADMSG, "body shorter than its fields"),
	BAD(bad_name_empty, -EBADMSG, "name is not [A-Za-z0-9][A-Za-z0-9_.-]*"),
	BAD(bad_name_first_char, -EBADMSG, "name is not [A-Za-z0-9][A-Za-z0-9_.-]*"),
	BAD(bad_name_space, -EBADMSG, "name is not [A-Za-z0-9][A-Za-z0-9_.-]*"),
	BAD(bad_name_slash, -EBADMSG, "name is not [A-Za-z0-9][A-Za-z0-9_.-]*"),
	BAD(bad_name_high_byte, -EBADMSG, "name is not [A-Za-z0-9][A-Za-z0-9_.-]*"),
	BAD(bad_name_nul_inside, -EBADMSG, "name is not [A-Za-z0-9][A-Za-z0-9_.-]*"),
	BAD(bad_name_64, -EBADMSG, "name longer than IMEX_NAME_MAX - 1"),
	BAD(bad_name_255, -EBADMSG, "name longer than IMEX_NAME_MAX - 1"),
	BAD(bad_str_beyond_body, -EBADMSG, "body shorter than its fields"),
	BAD(bad_hello_proto_range, -EBADMSG, "proto_min above proto_max"),
	BAD(bad_hello_max_channels, -E2BIG, "max_channels above IMEX_CHANNELS_MAX"),
	BAD(bad_hb_too_many, -E2BIG, "more peers than IMEX_MEMBERS_MAX"),
	BAD(bad_hb_state, -EBADMSG, "peer state out of range"),
	BAD(bad_hb_duplicate, -EBADMSG, "peer listed twice"),
	BAD(bad_hb_missing_peer, -EBADMSG, "body shorter than its fields"),
	BAD(bad_def_name, -EBADMSG, "name is not [A-Za-z0-9][A-Za-z0-9_.-]*"),
	BAD(bad_def_flags, -EBADMSG, "unknown definition flags"),
	BAD(bad_def_too_many_members, -E2BIG, "more members than IMEX_MEMBERS_MAX"),
	BAD(bad_def_missing_member, -EBADMSG, "name is not [A-Za-z0-9][A-Za-z0-9_.-]*"),
	BAD(bad_def_duplicate_member, -EBADMSG, "member listed twice"),
	BAD(bad_def_member_name, -EBADMSG, "name is not [A-Za-z0-9][A-Za-z0-9_.-]*"),
	BAD(bad_def_addr_space, -EBADMSG, "address is not printable ASCII"),
	BAD(bad_def_addr_control, -EBADMSG, "address is not printable ASCII"),
	BAD(bad_def_addr_high, -EBADMSG, "address is not printable ASCII"),
	BAD(bad_def_chan_unsorted, -EBADMSG, "channel ids not strictly increasing"),
	BAD(bad_def_chan_duplicate, -EBADMSG, "channel ids not strictly increasing"),
	BAD(bad_def_chan_id, -EBADMSG, "channel id >= IMEX_CHANNELS_MAX"),
	BAD(bad_def_chan_mode, -EBADMSG, "channel mode above 0777"),
	BAD(bad_def_too_many_channels, -E2BIG, "more channels than IMEX_CHANNELS_MAX"),
	BAD(bad_def_channels_huge, -E2BIG, "more channels than IMEX_CHANNELS_MAX"),
	BAD(bad_def_channels_beyond_body, -EBADMSG, "body shorter than its fields"),
	BAD(bad_def_trailing, -EBADMSG, "body longer than its fields"),
	BAD(bad_def_zero_uuid, -EBADMSG, "definition without a domain UUID"),
	BAD(bad_leave_0, -EBADMSG, "leave reason out of range"),
	BAD(bad_leave_2, -EBADMSG, "leave reason out of range"),
	BAD(bad_hb_gens_too_many, -E2BIG, "more domains than IMEX_DOMAINS_MAX"),
	BAD(bad_hb_gens_beyond_body, -EBADMSG, "body shorter than its fields"),
	BAD(bad_hb_gens_duplicate, -EBADMSG, "domain listed twice"),
	BAD(bad_hb_gens_zero_uuid, -EBADMSG, "domain UUID is all-zero"),
	BAD(bad_hb_v1, -EBADMSG, "body shorter than its fields"),
	BAD(bad_hb_gens_trailing, -EBADMSG, "body longer than its fields"),
	BAD(bad_raft_empty, -EBADMSG, "empty payload"),
	BAD(bad_raft_huge, -E2BIG, "raft frame longer than IMEXD_RAFTWIRE_FRAME_MAX"),
	BAD(bad_raft_beyond_body, -EBADMSG, "body shorter than its fields"),
	BAD(bad_raft_trailing, -EBADMSG, "body longer than its fields"),
	BAD(bad_forward_empty, -EBADMSG, "empty payload"),
	BAD(bad_forward_huge, -E2BIG, "command longer than IMEXD_RAFT_ENTRY_MAX"),
	BAD(bad_forward_beyond_body, -EBADMSG, "body shorter than its fields"),
	BAD(bad_forward_cut, -EBADMSG, "body shorter than its fields"),
	BAD(bad_reply_has_def_2, -EBADMSG, "has_def is not 0 or 1"),
	BAD(bad_reply_negative, -EBADMSG, "error is not 0 or a positive errno"),
	BAD(bad_reply_errno_big, -EBADMSG, "error is not 0 or a positive errno"),
	BAD(bad_reply_text, -EBADMSG, "message is not printable ASCII"),
	BAD(bad_reply_zero_uuid, -EBADMSG, "definition without a domain UUID"),
	BAD(bad_reply_def_cut, -EBADMSG, "body shorter than its fields"),
	BAD(bad_reply_no_def_trailing, -EBADMSG, "body longer than its fields"),
	BAD(bad_reply_ids_dup, -EBADMSG, "channel ids not strictly increasing"),
	BAD(bad_reply_ids_unsorted, -EBADMSG, "channel ids not strictly increasing"),
	BAD(bad_reply_ids_max, -EBADMSG, "channel id >= IMEX_CHANNELS_MAX"),
	BAD(bad_reply_ids_too_many, -E2BIG, "more channel ids than IMEX_CHANNELS_MAX"),
	BAD(bad_reply_ids_beyond_body, -EBADMSG, "body shorter than its fields"),
	BAD(bad_reply_no_nids, -EBADMSG, "body shorter than its fields"),
};

void test_malformed_frames_are_refused_untouched(void **state)
{
	static struct fb f;
	struct imexd_msg m, before;
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		int ret;

		if (bad_cases[i].build)
			bad_cases[i].build(&f);
		else
			hello_poked(&f, bad_cases[i].at, bad_cases[i].v);
		memset(&m, 0xa5, sizeof(m));
		memcpy(&before, &m, sizeof(m));
		why = NULL;
		ret = imexd_msg_decode(f.n ? f.b : NULL, f.n, &m, &why);
		if (ret != bad_cases[i].err)
			fail_msg("%s: decode returned %d, expected %d (%s)",
				 bad_cases[i].name, ret, bad_cases[i].err,
				 why ? why : "no reason");
		if (!why || strcmp(why, bad_cases[i].why))
			fail_msg("%s: reason '%s', expected '%s'",
				 bad_cases[i].name, why ? why : "(none)",
				 bad_cases[i].why);
		/* Padding too, on purpose: before is a byte copy of m. */
		/* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison) */
		if (memcmp(&m, &before, sizeof(m)))
			fail_msg("%s: the output was changed", bad_cases[i].name);
	}
}

/* The builder itself makes valid frames: the cases fail for their reason. */
void test_frame_builder_controls_decode(void **state)
{
	static struct fb f;
	struct imexd_msg m;

	(void)state;
	/* A protocol 2 HELLO (no group) decodes, so its range is read. */
	hello_body(&f, 1, 2, "a", 2048);
	assert_int_equal(imexd_msg_decode(f.b, f.n, &m, NULL), 0);
	assert_true(m.u.hello.group == 0);
	imexd_msg_free(&m);
	/* Protocol 3: the group follows; part of one is refused. */
	hello_group(&f, 8);
	assert_int_equal(imexd_msg_decode(f.b, f.n, &m, NULL), 0);
	assert_true(m.u.hello.group == 0x0102030405060708ULL);
	imexd_msg_free(&m);
	hello_group(&f, 4);
	assert_int_equal(imexd_msg_decode(f.b, f.n, &m, NULL), -EBADMSG);
	hello_group(&f, 9);
	assert_int_equal(imexd_msg_decode(f.b, f.n, &m, NULL), -EBADMSG);
	def_frame(&f, "job", 0, two, 2, 0, chans_ok, 2, 0);
	assert_int_equal(imexd_msg_decode(f.b, f.n, &m, NULL), 0);
	assert_memory_equal(m.u.reply.def.uuid, dom, 16);
	assert_int_equal(m.u.reply.def.nchannels, 2);
	imexd_msg_free(&m);
	hb_frame(&f, 2, 2, ab, IMEX_MEMBER_VERSION_MISMATCH);
	assert_int_equal(imexd_msg_decode(f.b, f.n, &m, NULL), 0);
	imexd_msg_free(&m);
	hb_gens_frame(&f, 2, 2, u12);
	assert_int_equal(imexd_msg_decode(f.b, f.n, &m, NULL), 0);
	assert_int_equal(m.u.heartbeat.ngens, 2);
	imexd_msg_free(&m);
	blob_frame(&f, IMEXD_MSG_RAFT, 16, 16);
	assert_int_equal(imexd_msg_decode(f.b, f.n, &m, NULL), 0);
	imexd_msg_free(&m);
	blob_frame(&f, IMEXD_MSG_FORWARD, 99, 99);
	assert_int_equal(imexd_msg_decode(f.b, f.n, &m, NULL), 0);
	imexd_msg_free(&m);
	reply_frame(&f, 4095, "ok", 0);
	assert_int_equal(imexd_msg_decode(f.b, f.n, &m, NULL), 0);
	reply_frame(&f, 0, "ok", 1);
	assert_int_equal(imexd_msg_decode(f.b, f.n, &m, NULL), 0);
	assert_memory_equal(m.u.reply.def.uuid, dom, 16);
	imexd_msg_free(&m);
	reply_ids_frame(&f, 0, "ok", 1, 2, 2, ids_ok);
	assert_int_equal(imexd_msg_decode(f.b, f.n, &m, NULL), 0);
	assert_int_equal(m.u.reply.nids, 2);
	assert_int_equal(m.u.reply.ids[1], 5);
	imexd_msg_free(&m);
}
