// SPDX-License-Identifier: GPL-2.0
/*
 * The imexd wire codec: every message type round-trips, every class of
 * malformed frame is refused without touching the output, and the encoder
 * refuses exactly what the decoder would.
 *
 * One binary: main() here with the frame-length, ownership, name and
 * fuzz-seed tests; the rest live in test_wire_<concern>.c.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "raftlog.h"
#include "samples.h"
#include "test_wire.h"

/* ---- frame length ------------------------------------------------------- */

static void test_frame_len_on_partial_input(void **state)
{
	struct imexd_msg m;
	uint8_t *f = NULL, bad[IMEXD_HEADER_LEN];
	size_t n = 0, k;

	(void)state;
	sample_msg(&m, IMEXD_MSG_REPLY);
	assert_int_equal(imexd_msg_encode(&m, &f, &n), 0);
	imexd_msg_free(&m);
	assert_int_equal(imexd_frame_len(NULL, 0), 0);
	for (k = 0; k < IMEXD_HEADER_LEN; k++)
		assert_int_equal(imexd_frame_len(f, k), 0);
	for (k = IMEXD_HEADER_LEN; k <= n; k++)
		assert_int_equal(imexd_frame_len(f, k), (long)n);

	/* Wrong bytes are refused as soon as they are there. */
	memcpy(bad, f, sizeof(bad));
	bad[0] = 'X';
	assert_int_equal(imexd_frame_len(bad, 1), -EBADMSG);
	memcpy(bad, f, sizeof(bad));
	bad[3] = 'Y';
	assert_int_equal(imexd_frame_len(bad, 3), 0);
	assert_int_equal(imexd_frame_len(bad, 4), -EBADMSG);
	memcpy(bad, f, sizeof(bad));
	bad[4] = 9;
	assert_int_equal(imexd_frame_len(bad, 4), 0);
	assert_int_equal(imexd_frame_len(bad, 5), -EBADMSG);
	memcpy(bad, f, sizeof(bad));
	bad[7] = 1;
	assert_int_equal(imexd_frame_len(bad, 8), -EBADMSG);
	memcpy(bad, f, sizeof(bad));
	bad[8] = 0x01;		/* 16 MiB + ... */
	assert_int_equal(imexd_frame_len(bad, 11), 0);
	assert_int_equal(imexd_frame_len(bad, 12), -EBADMSG);
	assert_int_equal(imexd_frame_len(bad, IMEXD_HEADER_LEN), -EBADMSG);
	/* Exactly the maximum is fine. */
	bad[8] = 0x00;
	bad[9] = 0x10;
	bad[10] = 0;
	bad[11] = 0;
	assert_int_equal(imexd_frame_len(bad, IMEXD_HEADER_LEN),
			 IMEXD_HEADER_LEN + IMEXD_BODY_MAX);
	/* 16 MiB: too much for a REPLY, fine for a RAFT frame. */
	bad[8] = 0x01;
	bad[9] = 0;
	assert_int_equal(imexd_frame_len(bad, 12), -EBADMSG);
	bad[5] = IMEXD_MSG_RAFT;
	assert_int_equal(imexd_frame_len(bad, 12), 0);
	assert_int_equal(imexd_frame_len(bad, IMEXD_HEADER_LEN),
			 IMEXD_HEADER_LEN + (16L << 20));
	free(f);
}

/* ---- ownership helpers and names ---------------------------------------- */

static void test_def_copy_is_deep_and_equal(void **state)
{
	struct imexd_def a, b;

	(void)state;
	assert_int_equal(sample_def(&a, "job", 5, 9, 4), 0);
	assert_int_equal(imexd_def_copy(&b, &a), 0);
	assert_true(imexd_def_equal(&a, &b));
	assert_ptr_not_equal(a.members, b.members);
	assert_ptr_not_equal(a.channels, b.channels);
	b.channels[8].mode = 0600;
	assert_false(imexd_def_equal(&a, &b));
	b.channels[8].mode = a.channels[8].mode;
	b.generation++;
	assert_false(imexd_def_equal(&a, &b));
	b.generation--;
	strcpy(b.members[4].addr, "elsewhere");
	assert_false(imexd_def_equal(&a, &b));
	imexd_def_free(&b);
	assert_null(b.members);
	assert_int_equal(b.nchannels, 0);
	assert_false(imexd_def_equal(&a, &b));
	imexd_def_free(&a);
	imexd_def_free(&a);	/* twice is harmless */
	assert_int_equal(imexd_def_copy(&b, &a), 0);	/* empty */
	assert_true(imexd_def_equal(&a, &b));
	assert_true(imexd_def_equal(NULL, NULL));
	assert_false(imexd_def_equal(&a, NULL));
}

static void test_def_check(void **state)
{
	struct imexd_def d;
	const char *why = NULL;

	(void)state;
	assert_int_equal(sample_def(&d, "job", 2, 2, 1), 0);
	assert_int_equal(imexd_def_check(&d, &why), 0);
	memset(d.uuid, 0, 16);
	assert_int_equal(imexd_def_check(&d, &why), -EINVAL);
	assert_non_null(why);
	d.uuid[3] = 1;
	d.nchannels = IMEX_CHANNELS_MAX + 1;
	assert_int_equal(imexd_def_check(&d, NULL), -E2BIG);
	d.nchannels = 2;
	/* The analyzer's memset() of d.uuid forgets d.members. */
	/* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker) */
	strcpy(d.members[1].name, d.members[0].name);
	assert_int_equal(imexd_def_check(&d, &why), -EINVAL);
	assert_int_equal(imexd_def_check(NULL, NULL), -EINVAL);
	imexd_def_free(&d);
}

static void test_name_rule(void **state)
{
	char n[IMEX_NAME_MAX + 1];

	(void)state;
	assert_true(imexd_name_valid("a"));
	assert_true(imexd_name_valid("0node_1.rack-2"));
	assert_false(imexd_name_valid(""));
	assert_false(imexd_name_valid(NULL));
	assert_false(imexd_name_valid("_a"));
	assert_false(imexd_name_valid(".a"));
	assert_false(imexd_name_valid("a:b"));
	assert_false(imexd_name_valid("a b"));
	memset(n, 'x', IMEX_NAME_MAX - 1);
	n[IMEX_NAME_MAX - 1] = '\0';
	assert_true(imexd_name_valid(n));
	n[IMEX_NAME_MAX - 1] = 'x';
	n[IMEX_NAME_MAX] = '\0';
	assert_false(imexd_name_valid(n));
}

static void test_type_names(void **state)
{
	(void)state;
	assert_string_equal(imexd_msg_type_name(IMEXD_MSG_HELLO), "HELLO");
	assert_string_equal(imexd_msg_type_name(IMEXD_MSG_HEARTBEAT), "HEARTBEAT");
	assert_string_equal(imexd_msg_type_name(4), "UNKNOWN");
	assert_string_equal(imexd_msg_type_name(13), "UNKNOWN");
	assert_string_equal(imexd_msg_type_name(IMEXD_MSG_LEAVE), "LEAVE");
	assert_string_equal(imexd_msg_type_name(IMEXD_MSG_RAFT), "RAFT");
	assert_string_equal(imexd_msg_type_name(IMEXD_MSG_FORWARD), "FORWARD");
	assert_string_equal(imexd_msg_type_name(IMEXD_MSG_REPLY), "REPLY");
	assert_string_equal(imexd_msg_type_name(0), "UNKNOWN");
	assert_string_equal(imexd_msg_type_name(IMEXD_MSG_TYPE_MAX + 1), "UNKNOWN");
	assert_string_equal(imexd_msg_type_name(255), "UNKNOWN");
}

/* The fuzz seeds (make corpus) still say what their names say. */
#define CORPUS "../fuzz/corpus/wire"

static void check_seed(const char *name)
{
	static uint8_t buf[IMEXD_HEADER_LEN + 65536];
	char path[512];
	struct imexd_msg m;
	uint8_t *g = NULL;
	size_t n, n2 = 0;
	FILE *f;

	snprintf(path, sizeof(path), CORPUS "/%s", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (!strncmp(name, "valid-", 6)) {
		if (imexd_msg_decode(buf, n, &m, NULL))
			fail_msg("seed %s does not decode", name);
		assert_int_equal(imexd_msg_encode(&m, &g, &n2), 0);
		assert_int_equal(n2, n);
		assert_memory_equal(g, buf, n);
		free(g);
		imexd_msg_free(&m);
	} else if (!strncmp(name, "near-", 5)) {
		if (!imexd_msg_decode(buf, n, &m, NULL))
			fail_msg("seed %s decodes", name);
	} else {
		fail_msg("seed %s is neither valid-* nor near-*", name);
	}
}

static void test_fuzz_seeds_are_what_they_say(void **state)
{
	struct dirent *de;
	size_t seen = 0;
	DIR *d = opendir(CORPUS);

	(void)state;
	assert_non_null(d);	/* the seeds are part of the tree */
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		check_seed(de->d_name);
		seen++;
	}
	closedir(d);
	assert_true(seen >= 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_round_trips),
		cmocka_unit_test(test_header_is_big_endian_52_bytes),
		cmocka_unit_test(test_edge_values_round_trip),
		cmocka_unit_test(test_largest_bounded_messages_round_trip),
		cmocka_unit_test(test_body_max_is_the_limit),
		cmocka_unit_test(test_raft_body_bound),
		cmocka_unit_test(test_forward_bound),
		cmocka_unit_test(test_malformed_frames_are_refused_untouched),
		cmocka_unit_test(test_frame_builder_controls_decode),
		cmocka_unit_test(test_every_truncation_is_refused),
		cmocka_unit_test(test_byte_flips_round_trip_or_fail),
		cmocka_unit_test(test_encoder_refuses_what_decoder_would),
		cmocka_unit_test(test_frame_len_on_partial_input),
		cmocka_unit_test(test_def_copy_is_deep_and_equal),
		cmocka_unit_test(test_def_check),
		cmocka_unit_test(test_name_rule),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_fuzz_seeds_are_what_they_say),
	};

	return cmocka_run_group_tests_name("imexd wire", tests, NULL, NULL);
}
