// SPDX-License-Identifier: GPL-2.0
/*
 * The imexd wire codec, by hand-built frames: the frame builder the
 * malformed-frame table (test_wire_bad.c) builds its cases with.
 */
#include <string.h>

#include "test_wire.h"

/* ---- hand-built frames ------------------------------------------------- */

void fb_u8(struct fb *f, uint8_t v)
{
	f->b[f->n++] = v;
}

void fb_be(struct fb *f, uint64_t v, int bytes)
{
	while (bytes--)
		fb_u8(f, (uint8_t)(v >> (8 * bytes)));
}

void fb_mem(struct fb *f, const void *p, size_t n)
{
	memcpy(f->b + f->n, p, n);
	f->n += n;
}

void fb_zero(struct fb *f, size_t n)
{
	memset(f->b + f->n, 0, n);
	f->n += n;
}

void fb_str(struct fb *f, const char *s)
{
	fb_u8(f, (uint8_t)strlen(s));
	fb_mem(f, s, strlen(s));
}

const uint8_t dom[16] = { 0xd0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
				 12, 13, 14, 15 };

void fb_hdr(struct fb *f, uint8_t type)
{
	f->n = 0;
	fb_be(f, IMEXD_MAGIC, 4);
	fb_u8(f, IMEXD_FRAME_VERSION);
	fb_u8(f, type);
	fb_be(f, 0, 2);
	fb_be(f, 0, 4);		/* fixed by fb_done() */
	fb_mem(f, dom, 16);
	fb_mem(f, "sender-uuid-0123", 16);
	fb_be(f, 1, 8);
}

void fb_done(struct fb *f)
{
	uint32_t body = (uint32_t)(f->n - IMEXD_HEADER_LEN);

	f->b[8] = (uint8_t)(body >> 24);
	f->b[9] = (uint8_t)(body >> 16);
	f->b[10] = (uint8_t)(body >> 8);
	f->b[11] = (uint8_t)body;
}

void hello_body(struct fb *f, uint16_t lo, uint16_t hi,
		       const char *name, uint32_t maxch)
{
	fb_hdr(f, IMEXD_MSG_HELLO);
	fb_be(f, lo, 2);
	fb_be(f, hi, 2);
	fb_str(f, name);
	fb_be(f, maxch, 4);
	fb_zero(f, 16);
	fb_be(f, 0, 4);
	fb_done(f);
}

/* A protocol 3 HELLO with @n bytes of group (8: the whole field). */
void hello_group(struct fb *f, size_t n)
{
	static const uint8_t group[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	fb_hdr(f, IMEXD_MSG_HELLO);
	fb_be(f, 2, 2);
	fb_be(f, 3, 2);
	fb_str(f, "a");
	fb_be(f, 1, 4);
	fb_zero(f, 16);
	fb_be(f, 0, 4);
	fb_mem(f, group, n < 8 ? n : 8);
	if (n > 8)
		fb_zero(f, n - 8);
	fb_done(f);
}

void def_frame(struct fb *f, const char *name, uint8_t flags,
		       const struct mb *ms, uint16_t nm, uint32_t nm_claim,
		       const uint32_t *ch, uint32_t nc, uint32_t nc_claim)
{
	uint32_t i;

	fb_hdr(f, IMEXD_MSG_REPLY);
	fb_be(f, 5, 8);		/* tag */
	fb_be(f, 0, 4);		/* error */
	fb_str(f, "");
	fb_be(f, 42, 8);	/* index */
	fb_u8(f, 1);		/* has_def */
	fb_str(f, name);
	fb_be(f, 3, 8);
	fb_u8(f, flags);
	fb_zero(f, 16);
	fb_be(f, 1, 4);
	fb_be(f, nm_claim ? nm_claim : nm, 2);
	for (i = 0; i < nm; i++) {
		fb_str(f, ms[i].name);
		fb_str(f, ms[i].addr);
	}
	fb_be(f, nc_claim ? nc_claim : nc, 4);
	for (i = 0; i < nc; i++) {
		fb_be(f, ch[2 * (size_t)i], 4);
		fb_be(f, 0, 4);
		fb_be(f, 0, 4);
		fb_be(f, ch[2 * i + 1], 2);
	}
	fb_be(f, 0, 4);		/* nids */
	fb_done(f);
}

void hb_frame(struct fb *f, uint16_t n, uint16_t have,
		     const char *const *names, uint8_t state)
{
	uint16_t i;

	fb_hdr(f, IMEXD_MSG_HEARTBEAT);
	fb_be(f, 1, 4);
	fb_be(f, n, 2);
	for (i = 0; i < have; i++) {
		fb_str(f, names[i % 2]);
		fb_u8(f, state);
	}
	if (have == n)
		fb_be(f, 0, 2);		/* no domains */
	fb_done(f);
}

/* A HEARTBEAT with no peers and @have of @n domains from @uuids[i % 2]. */
void hb_gens_frame(struct fb *f, uint16_t n, uint16_t have,
			  const uint8_t (*uuids)[16])
{
	uint16_t i;

	fb_hdr(f, IMEXD_MSG_HEARTBEAT);
	fb_be(f, 1, 4);
	fb_be(f, 0, 2);
	fb_be(f, n, 2);
	for (i = 0; i < have; i++) {
		fb_mem(f, uuids[i % 2], 16);
		fb_be(f, i, 8);
	}
	fb_done(f);
}

/* RAFT or FORWARD claiming @len bytes and carrying @have. */
void blob_frame(struct fb *f, uint8_t type, uint32_t len, uint32_t have)
{
	fb_hdr(f, type);
	if (type == IMEXD_MSG_FORWARD)
		fb_be(f, 7, 8);
	fb_be(f, len, 4);
	memset(f->b + f->n, 0xab, have);
	f->n += have;
	fb_done(f);
}

/* A REPLY with a def when @has_def (1 or more), else none, and @nids of
 * the channel ids @ids (@have of them on the wire). */
void reply_ids_frame(struct fb *f, uint32_t err, const char *msg,
			    uint8_t has_def, uint32_t nids, uint32_t have,
			    const uint32_t *ids)
{
	uint32_t i;

	fb_hdr(f, IMEXD_MSG_REPLY);
	fb_be(f, 5, 8);
	fb_be(f, err, 4);
	fb_str(f, msg);
	fb_be(f, 42, 8);
	fb_u8(f, has_def);
	if (has_def) {
		fb_str(f, "job");
		fb_be(f, 1, 8);
		fb_u8(f, 0);
		fb_zero(f, 16);
		fb_be(f, 0, 4);
		fb_be(f, 1, 2);
		fb_str(f, "a");
		fb_str(f, "h:1");
		fb_be(f, 0, 4);
	}
	fb_be(f, nids, 4);
	for (i = 0; i < have; i++)
		fb_be(f, ids[i], 4);
	fb_done(f);
}

void reply_frame(struct fb *f, uint32_t err, const char *msg,
			uint8_t has_def)
{
	reply_ids_frame(f, err, msg, has_def, 0, 0, NULL);
}

void import_resp_frame(struct fb *f, uint32_t status, uint16_t n)
{
	fb_hdr(f, IMEXD_MSG_IMPORT_RESP);
	fb_be(f, 7, 8);
	fb_be(f, status, 4);
	fb_be(f, n, 2);
	fb_zero(f, n);
	fb_done(f);
}
