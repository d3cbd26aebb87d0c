/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the test_wire*.c files: the hand-built frame builder
 * (test_wire_frame.c) and the tests main() in test_wire.c runs.
 */
#ifndef IMEXD_TEST_WIRE_H
#define IMEXD_TEST_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* ---- hand-built frames (test_wire_frame.c) ------------------------------ */

struct fb {
	uint8_t b[8192];
	size_t n;
};

/* A REPLY whose def has the given members and channels (id, mode pairs). */
struct mb {
	const char *name, *addr;
};

/* The domain UUID every built frame carries. */
extern const uint8_t dom[16];

void fb_u8(struct fb *f, uint8_t v);
void fb_be(struct fb *f, uint64_t v, int bytes);
void fb_mem(struct fb *f, const void *p, size_t n);
void fb_zero(struct fb *f, size_t n);
void fb_str(struct fb *f, const char *s);
void fb_hdr(struct fb *f, uint8_t type);
void fb_done(struct fb *f);
void hello_body(struct fb *f, uint16_t lo, uint16_t hi,
		const char *name, uint32_t maxch);
void hello_group(struct fb *f, size_t n);
void def_frame(struct fb *f, const char *name, uint8_t flags,
	       const struct mb *ms, uint16_t nm, uint32_t nm_claim,
	       const uint32_t *ch, uint32_t nc, uint32_t nc_claim);
void hb_frame(struct fb *f, uint16_t n, uint16_t have,
	      const char *const *names, uint8_t state);
void hb_gens_frame(struct fb *f, uint16_t n, uint16_t have,
		   const uint8_t (*uuids)[16]);
void blob_frame(struct fb *f, uint8_t type, uint32_t len, uint32_t have);
void reply_ids_frame(struct fb *f, uint32_t err, const char *msg,
		     uint8_t has_def, uint32_t nids, uint32_t have,
		     const uint32_t *ids);
void reply_frame(struct fb *f, uint32_t err, const char *msg,
		 uint8_t has_def);
void import_resp_frame(struct fb *f, uint32_t status, uint16_t n);

/* ---- the tests ---------------------------------------------------------- */

/* test_wire_codec.c: round trips, bounds, mutations, the encoder */
void test_every_type_round_trips(void **state);
void test_header_is_big_endian_52_bytes(void **state);
void test_edge_values_round_trip(void **state);
void test_largest_bounded_messages_round_trip(void **state);
void test_body_max_is_the_limit(void **state);
void test_raft_body_bound(void **state);
void test_forward_bound(void **state);
void test_every_truncation_is_refused(void **state);
void test_byte_flips_round_trip_or_fail(void **state);
void test_encoder_refuses_what_decoder_would(void **state);

/* test_wire_bad.c: the malformed-frame table */
void test_malformed_frames_are_refused_untouched(void **state);
void test_frame_builder_controls_decode(void **state);

#endif
