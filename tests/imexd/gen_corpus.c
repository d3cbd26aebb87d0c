// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of the wire fuzz target: a valid frame of every
 * type and shape (made by imexd_msg_encode, so they track the codec), and
 * near-valid frames, each one change away from valid, so the fuzzer starts
 * at the decoder's edges.  Deterministic: the files only change when the
 * codec does.  Usage: gen_corpus DIR
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samples.h"
#include "wire.h"

static const char *dir;
static int failed;

static void emit(const char *name, const uint8_t *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		failed = 1;
	}
}

/* Encode @m, or die: a seed the codec refuses is a bug here. */
static uint8_t *encode(const struct imexd_msg *m, size_t *len)
{
	uint8_t *f = NULL;

	if (imexd_msg_encode(m, &f, len)) {
		fprintf(stderr, "gen_corpus: cannot encode a %s\n",
			imexd_msg_type_name(m->type));
		exit(1);
	}
	return f;
}

static void emit_msg(const char *name, struct imexd_msg *m)
{
	size_t len;
	uint8_t *f = encode(m, &len);

	emit(name, f, len);
	free(f);
	imexd_msg_free(m);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void valid_seeds(void)
{
	struct imexd_msg m;
	char name[64];
	unsigned int t;

	for (t = IMEXD_MSG_HELLO; t <= IMEXD_MSG_TYPE_MAX; t++) {
		/* 4..13 were the two-phase protocol's. */
		if (t > IMEXD_MSG_HEARTBEAT && t < IMEXD_MSG_LEAVE)
			continue;
		sample_msg(&m, t);
		snprintf(name, sizeof(name), "valid-%s", imexd_msg_type_name(t));
		emit_msg(name, &m);
	}
	sample_msg(&m, IMEXD_MSG_HEARTBEAT);
	imexd_msg_free(&m);
	emit_msg("valid-HEARTBEAT-empty", &m);
	sample_msg(&m, IMEXD_MSG_IMPORT_RESP);
	m.u.import_resp.status = EPERM;
	m.u.import_resp.desc_len = 0;
	emit_msg("valid-IMPORT_RESP-eperm", &m);
	sample_msg(&m, IMEXD_MSG_IMPORT_RESP);
	m.u.import_resp.desc_len = IMEX_DESC_MAX;
	emit_msg("valid-IMPORT_RESP-desc-max", &m);
	sample_msg(&m, IMEXD_MSG_HEARTBEAT);
	free(m.u.heartbeat.gens);
	m.u.heartbeat.gens = NULL;
	m.u.heartbeat.ngens = 0;
	emit_msg("valid-HEARTBEAT-no-gens", &m);
	sample_msg(&m, IMEXD_MSG_REPLY);
	m.u.reply.has_def = false;
	free(m.u.reply.ids);
	m.u.reply.ids = NULL;
	m.u.reply.nids = 0;
	m.u.reply.error = EEXIST;
	strcpy(m.u.reply.message, "domain 'job9' exists");
	emit_msg("valid-REPLY-no-def", &m);
	sample_msg(&m, IMEXD_MSG_REPLY);
	imexd_def_free(&m.u.reply.def);
	m.u.reply.def.flags = IMEXD_DEF_DELETED;
	strcpy(m.u.reply.message, "deleted");
	emit_msg("valid-REPLY-tombstone", &m);
}

/* A valid frame of @type with one change made by @spoil. */
static void near(const char *name, uint8_t type,
		 size_t (*spoil)(uint8_t *f, size_t len))
{
	struct imexd_msg m;
	uint8_t *f, *g;
	size_t len;

	sample_msg(&m, type);
	f = encode(&m, &len);
	imexd_msg_free(&m);
	g = calloc(1, len + 16);	/* room to grow a little */
	memcpy(g, f, len);
	free(f);
	len = spoil(g, len);
	emit(name, g, len);
	free(g);
}

static void fix_len(uint8_t *f, size_t len)
{
	put_be32(f + 8, (uint32_t)(len - IMEXD_HEADER_LEN));
}

static size_t cut_one(uint8_t *f, size_t len)
{
	(void)f;
	return len - 1;
}

static size_t cut_fixed(uint8_t *f, size_t len)
{
	fix_len(f, len - 1);
	return len - 1;
}

static size_t grow_fixed(uint8_t *f, size_t len)
{
	fix_len(f, len + 1);
	return len + 1;
}

static size_t header_only(uint8_t *f, size_t len)
{
	(void)len;
	fix_len(f, IMEXD_HEADER_LEN);
	return IMEXD_HEADER_LEN;
}

/* The sample REPLY's def is followed by u32 nids and 3 ids. */
#define IDS_TAIL	16

/* One byte set: at @at from the start, or from the end if negative. */
#define SET(fn, at, v)							\
static size_t fn(uint8_t *f, size_t len)				\
{									\
	f[(at) < 0 ? len + (at) : (size_t)(at)] = (v);			\
	return len;							\
}

SET(magic, 3, 'Y')
SET(version2, 4, 2)
SET(flags, 7, 1)
SET(type0, 5, 0)
SET(type21, 5, IMEXD_MSG_TYPE_MAX + 1)
SET(type4, 5, 4)				/* the two-phase protocol's */
SET(type13, 5, 13)
SET(hb_state_7, -(2 + 2 * 24) - 1, 7)		/* before the sample's 2 gens */
SET(hb_gens_257, IMEXD_HEADER_LEN + 27, 1)	/* ngens high byte */
SET(len_0, IMEXD_HEADER_LEN + 3, 0)		/* RAFT len 7 -> 0 */
SET(len_8, IMEXD_HEADER_LEN + 3, 8)		/* RAFT len 7 -> 8 */
SET(fwd_len_0, IMEXD_HEADER_LEN + 11, 0)	/* FORWARD len 5 -> 0 */
SET(fwd_len_huge, IMEXD_HEADER_LEN + 9, 0x10)	/* 1 MiB + 5 */
SET(reply_has_def_2, IMEXD_HEADER_LEN + 28, 2)
SET(reply_err_4096, IMEXD_HEADER_LEN + 10, 0x10)
SET(leave0, IMEXD_HEADER_LEN, 0)
SET(name_dash, IMEXD_HEADER_LEN + 5, '-')	/* HELLO name, 1st char */
SET(name_long, IMEXD_HEADER_LEN + 4, 64)	/* HELLO name length */
SET(hb_161, IMEXD_HEADER_LEN + 5, 161)		/* HEARTBEAT n, low byte */
SET(reply_nl, IMEXD_HEADER_LEN + 14, '\n')	/* REPLY message */
SET(reply_neg, IMEXD_HEADER_LEN + 8, 0xff)	/* REPLY error, high byte */
SET(chan_mode, -IDS_TAIL - 2, 0x02)		/* last channel: mode 01000 */
SET(resp_err, IMEXD_HEADER_LEN + 11, 1)		/* IMPORT_RESP status 1 */
SET(resp_len_hi, IMEXD_HEADER_LEN + 12, 1)	/* desc_len 261 */
SET(req_chan_max, IMEXD_HEADER_LEN + 17, 0x10)	/* channel 1 << 20 */

static size_t no_domain_all(uint8_t *f, size_t len)
{
	memset(f + 12, 0, 16);
	return len;
}

static size_t body_max1(uint8_t *f, size_t len)
{
	put_be32(f + 8, IMEXD_BODY_MAX + 1);
	return len;
}

/* The sample REPLY ends with channel ids 1, 4, 7: the last becomes 4. */
static size_t reply_ids_down(uint8_t *f, size_t len)
{
	put_be32(f + len - 4, 4);
	return len;
}

static size_t raft_body_max1(uint8_t *f, size_t len)
{
	put_be32(f + 8, IMEXD_RAFT_BODY_MAX + 1);
	return len;
}

/* The sample HEARTBEAT ends with 2 gens of 24 bytes each. */
static size_t hb_gens_dup(uint8_t *f, size_t len)
{
	memcpy(f + len - 24, f + len - 48, 16);
	return len;
}

static size_t hb_gens_zero(uint8_t *f, size_t len)
{
	memset(f + len - 24, 0, 16);
	return len;
}

/* The sample REPLY def ends with 3 channels of 14 bytes each. */
static size_t chan_unsorted(uint8_t *f, size_t len)
{
	put_be32(f + len - IDS_TAIL - 14, 1);
	return len;
}

static size_t chan_huge(uint8_t *f, size_t len)
{
	put_be32(f + len - IDS_TAIL - 3UL * 14 - 4, 0xffffffffu);
	return len;
}

static size_t chan_short(uint8_t *f, size_t len)
{
	put_be32(f + len - IDS_TAIL - 3UL * 14 - 4, 5);
	return len;
}

/* Second member "node001" renamed "node000". */
static size_t member_dup(uint8_t *f, size_t len)
{
	uint8_t *p = memmem(f, len, "\x07node001", 8);

	if (p)
		p[7] = '0';
	return len;
}

static size_t member_addr_space(uint8_t *f, size_t len)
{
	uint8_t *p = memmem(f, len, "10.0.0.2", 8);

	if (p)
		p[2] = ' ';
	return len;
}

static void near_seeds(void)
{
	near("near-REPLY-cut-length-wrong", IMEXD_MSG_REPLY, cut_one);
	near("near-REPLY-trailing-byte", IMEXD_MSG_REPLY, grow_fixed);
	near("near-HELLO-bad-magic", IMEXD_MSG_HELLO, magic);
	near("near-HELLO-version-2", IMEXD_MSG_HELLO, version2);
	/* Seven of the group's eight bytes (protocol 3). */
	near("near-HELLO-group-cut", IMEXD_MSG_HELLO, cut_fixed);
	near("near-EXPORT_REVOKE-flags", IMEXD_MSG_EXPORT_REVOKE, flags);
	near("near-EXPORT_REVOKE-type-0", IMEXD_MSG_EXPORT_REVOKE, type0);
	near("near-EXPORT_REVOKE-type-21", IMEXD_MSG_EXPORT_REVOKE, type21);
	near("near-LEAVE-type-4", IMEXD_MSG_LEAVE, type4);
	near("near-LEAVE-type-13", IMEXD_MSG_LEAVE, type13);
	near("near-EXPORT_REVOKE-length-above-max", IMEXD_MSG_EXPORT_REVOKE,
	     body_max1);
	near("near-EXPORT_REVOKE-header-only", IMEXD_MSG_EXPORT_REVOKE,
	     header_only);
	near("near-HEARTBEAT-state-7", IMEXD_MSG_HEARTBEAT, hb_state_7);
	near("near-HEARTBEAT-257-gens", IMEXD_MSG_HEARTBEAT, hb_gens_257);
	near("near-HEARTBEAT-gens-duplicate", IMEXD_MSG_HEARTBEAT, hb_gens_dup);
	near("near-HEARTBEAT-gens-zero-uuid", IMEXD_MSG_HEARTBEAT, hb_gens_zero);
	near("near-HEARTBEAT-cut", IMEXD_MSG_HEARTBEAT, cut_fixed);
	near("near-RAFT-empty", IMEXD_MSG_RAFT, len_0);
	near("near-RAFT-beyond-body", IMEXD_MSG_RAFT, len_8);
	near("near-RAFT-trailing-byte", IMEXD_MSG_RAFT, grow_fixed);
	near("near-RAFT-length-above-max", IMEXD_MSG_RAFT, raft_body_max1);
	near("near-FORWARD-empty", IMEXD_MSG_FORWARD, fwd_len_0);
	near("near-FORWARD-huge", IMEXD_MSG_FORWARD, fwd_len_huge);
	near("near-FORWARD-cut", IMEXD_MSG_FORWARD, cut_fixed);
	near("near-REPLY-has-def-2", IMEXD_MSG_REPLY, reply_has_def_2);
	near("near-REPLY-error-4096", IMEXD_MSG_REPLY, reply_err_4096);
	near("near-REPLY-no-domain", IMEXD_MSG_REPLY, no_domain_all);
	near("near-REPLY-cut", IMEXD_MSG_REPLY, cut_fixed);
	near("near-REPLY-ids-unsorted", IMEXD_MSG_REPLY, reply_ids_down);
	near("near-HEARTBEAT-161-peers", IMEXD_MSG_HEARTBEAT, hb_161);
	near("near-LEAVE-reason-0", IMEXD_MSG_LEAVE, leave0);
	near("near-HELLO-name-dash", IMEXD_MSG_HELLO, name_dash);
	near("near-HELLO-name-64", IMEXD_MSG_HELLO, name_long);
	near("near-REPLY-newline", IMEXD_MSG_REPLY, reply_nl);
	near("near-REPLY-negative-error", IMEXD_MSG_REPLY, reply_neg);
	near("near-REPLY-channels-unsorted", IMEXD_MSG_REPLY, chan_unsorted);
	near("near-REPLY-channel-mode-01000", IMEXD_MSG_REPLY, chan_mode);
	near("near-REPLY-channels-huge", IMEXD_MSG_REPLY, chan_huge);
	near("near-REPLY-channels-beyond-body", IMEXD_MSG_REPLY, chan_short);
	near("near-REPLY-duplicate-member", IMEXD_MSG_REPLY, member_dup);
	near("near-REPLY-address-space", IMEXD_MSG_REPLY, member_addr_space);
	near("near-IMPORT_RESP-error-with-desc", IMEXD_MSG_IMPORT_RESP, resp_err);
	near("near-IMPORT_RESP-desc-beyond-body", IMEXD_MSG_IMPORT_RESP, resp_len_hi);
	near("near-IMPORT_RESP-cut", IMEXD_MSG_IMPORT_RESP, cut_fixed);
	near("near-IMPORT_REQ-channel-max", IMEXD_MSG_IMPORT_REQ, req_chan_max);
	near("near-IMPORT_REQ-no-domain", IMEXD_MSG_IMPORT_REQ, no_domain_all);
	near("near-IMPORT_REQ-trailing-byte", IMEXD_MSG_IMPORT_REQ, grow_fixed);
	near("near-EXPORT_REVOKE-no-domain", IMEXD_MSG_EXPORT_REVOKE, no_domain_all);
	near("near-EXPORT_REVOKE-cut", IMEXD_MSG_EXPORT_REVOKE, cut_fixed);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	dir = argv[1];
	valid_seeds();
	near_seeds();
	return failed;
}
