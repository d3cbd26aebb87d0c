// SPDX-License-Identifier: GPL-2.0
/*
 * test_fsm: the command codec (round trips, truncations, versions, field
 * checks, bounds, random bytes).
 */
#include "test_fsm.h"

/* ---- codec ------------------------------------------------------------------ */

/* One of each command type, with every field used. */
static struct imexd_cmd sample(unsigned int i)
{
	static const uint32_t ids[] = { 0, 3, 7, 1000, IMEX_CHANNELS_MAX - 1 };

	switch (i) {
	case 0:
		return node_cmd("node-1.rack_2", FAB1, 0xdeadbeef, 2048);
	case 1:
		return create_cmd("job.42", 0x4242, "a,b,c", 0, ids, 5);
	case 2:
		return create_cmd("job-43", 0x4343, "a", 12, NULL, 0);
	case 3:
		return delete_cmd("job.42");
	case 4:
		return alloc_cmd("job.42", 0, ids, 3);
	case 5:
		return alloc_cmd("job.42", 9, NULL, 0);
	case 6:
		return free_cmd("job.42", ids, 5);
	case 7:
		return evict_cmd("job.42", "b");
	default:
		return replace_cmd("job.42", "b", "spare-1");
	}
}

#define NSAMPLES 9

void test_codec_round_trip(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < NSAMPLES; i++) {
		struct imexd_cmd c = sample(i), d;
		struct blob a = encode(&c), b;
		const char *why = NULL;

		assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, &why), 0);
		assert_int_equal(d.type, c.type);
		assert_string_not_equal(imexd_cmd_type_name(d.type), "UNKNOWN");
		b = encode(&d);
		assert_same(a, b);
		if (c.type == IMEXD_CMD_MEMBER_REPLACE) {
			assert_string_equal(d.u.replace.name, "job.42");
			assert_string_equal(d.u.replace.member, "b");
			assert_string_equal(d.u.replace.with, "spare-1");
		}
		if (c.type == IMEXD_CMD_DOMAIN_CREATE) {
			assert_int_equal(d.u.create.nmembers, c.u.create.nmembers);
			assert_string_equal(d.u.create.members[2 % d.u.create.nmembers].addr,
					    c.u.create.members[2 % c.u.create.nmembers].addr);
			assert_memory_equal(d.u.create.uuid, c.u.create.uuid, 16);
			assert_int_equal(d.u.create.ch.mode, 0660);
		}
		free(a.p);
		free(b.p);
		imexd_cmd_free(&c);
		imexd_cmd_free(&d);
	}
	assert_string_equal(imexd_cmd_type_name(0), "UNKNOWN");
	assert_string_equal(imexd_cmd_type_name(IMEXD_CMD_TYPE_MAX + 1), "UNKNOWN");
}

void test_codec_truncations_refused(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < NSAMPLES; i++) {
		struct imexd_cmd c = sample(i), d;
		struct blob a = encode(&c);
		uint8_t *longer = malloc(a.n + 1);
		size_t n;

		for (n = 0; n < a.n; n++) {
			/* A copy of exactly n bytes: ASan sees any overread. */
			uint8_t *p = malloc(n ? n : 1);

			memcpy(p, a.p, n);
			memset(&d, 0x5a, sizeof(d));
			assert_int_equal(imexd_cmd_decode(p, n, &d, NULL), -EBADMSG);
			free(p);
		}
		memcpy(longer, a.p, a.n);
		longer[a.n] = 0;
		assert_int_equal(imexd_cmd_decode(longer, a.n + 1, &d, NULL),
				 -EBADMSG);
		free(longer);
		free(a.p);
		imexd_cmd_free(&c);
	}
}

void test_codec_version_and_type(void **state)
{
	struct imexd_cmd c = sample(3), d;
	struct blob a = encode(&c);
	const char *why = NULL;

	(void)state;
	a.p[0] = IMEXD_CMD_VERSION + 1;
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, &why), -EPROTO);
	assert_string_equal(why, "unknown command version");
	a.p[0] = IMEXD_CMD_VERSION;
	a.p[1] = 0;
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, &why), -EPROTO);
	a.p[1] = IMEXD_CMD_TYPE_MAX + 1;
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, &why), -EPROTO);
	assert_string_equal(why, "unknown command type");
	free(a.p);
}

/* The encoder refuses @c, for the reason @why_want (then frees it). */
static void both_refuse(struct imexd_cmd *c, const char *why_want)
{
	const char *why = NULL;
	struct blob a;

	assert_int_equal(imexd_cmd_encode(c, &a.p, &a.n, &why), -EINVAL);
	assert_string_equal(why, why_want);
	imexd_cmd_free(c);
}

void test_codec_refuses_bad_fields(void **state)
{
	struct imexd_cmd c, d;
	struct blob a;
	size_t at;

	(void)state;
	c = delete_cmd("-bad");
	both_refuse(&c, "domain name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
	c = evict_cmd("ok", "b c");
	both_refuse(&c, "member name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
	c = replace_cmd("ok", "", "b");
	both_refuse(&c, "member name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
	c = replace_cmd("ok", "a", ".b");
	both_refuse(&c, "new member name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
	c = replace_cmd("-ok", "a", "b");
	both_refuse(&c, "domain name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
	c = node_cmd("n", FAB1, 0, 16);
	memset(c.u.node_set.uuid, 0, 16);
	both_refuse(&c, "node UUID is all-zero");
	c = node_cmd("n", FAB1, 0, 0);
	both_refuse(&c, "max_channels not in 1..IMEX_CHANNELS_MAX");
	c = node_cmd("n", FAB1, 0, IMEX_CHANNELS_MAX + 1);
	both_refuse(&c,
		    "max_channels not in 1..IMEX_CHANNELS_MAX");
	c = create_cmd("d", 1, "a,b,a", 0, NULL, 0);
	both_refuse(&c, "member listed twice");
	c = create_cmd("d", 1, "a", 0, NULL, 0);
	c.u.create.nmembers = 0;
	both_refuse(&c, "a domain needs at least one member");
	c = create_cmd("d", 0, "a", 0, NULL, 0);
	for (at = 0; at < 16; at++)
		c.u.create.uuid[at] = 0;
	both_refuse(&c, "domain UUID is all-zero");
	c = create_cmd("d", 1, "a", 0, (const uint32_t[]){ 3, 3 }, 2);
	both_refuse(&c, "channel ids not strictly increasing");
	c = create_cmd("d", 1, "a", 2, (const uint32_t[]){ 3 }, 1);
	both_refuse(&c, "both a channel count and channel ids");
	c = create_cmd("d", 1, "a", 2, NULL, 0);
	c.u.create.ch.mode = 01000;
	both_refuse(&c, "channel mode above 0777");
	c = create_cmd("d", 1, "a", 0, (const uint32_t[]){ IMEX_CHANNELS_MAX }, 1);
	both_refuse(&c, "channel id >= IMEX_CHANNELS_MAX");
	c = alloc_cmd("d", 0, NULL, 0);
	both_refuse(&c, "neither a channel count nor channel ids");
	c = free_cmd("d", NULL, 0);
	both_refuse(&c, "no channel ids to free");
	c = create_cmd("d", 1, "a", 0, NULL, 0);
	snprintf(c.u.create.members[0].addr, sizeof(c.u.create.members[0].addr), "a b");
	both_refuse(&c, "member address is not printable ASCII");

	/* The decoder checks the same on the bytes: a name made invalid. */
	c = evict_cmd("dom", "mem");
	a = encode(&c);
	at = 2 + 1 + 3 + 1;		/* version, type, "dom", len of "mem" */
	a.p[at] = '_';
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, NULL), -EBADMSG);
	a.p[at] = '\0';			/* a NUL inside a string */
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, NULL), -EBADMSG);
	free(a.p);
	imexd_cmd_free(&c);

	/* A replace's third name made invalid, empty, or its length past the end. */
	c = replace_cmd("dom", "old", "new");
	a = encode(&c);
	at = 2 + 1 + 3 + 1 + 3 + 1;	/* ..., "old", the first byte of "new" */
	a.p[at] = '-';
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, NULL), -EBADMSG);
	a.p[at] = 'n';
	a.p[at - 1] = 0;		/* "" then 3 bytes left over */
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, NULL), -EBADMSG);
	a.p[at - 1] = 4;		/* one byte more than there is */
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, NULL), -EBADMSG);
	a.p[at - 1] = 3;
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, NULL), 0);
	assert_string_equal(d.u.replace.with, "new");
	free(a.p);
	imexd_cmd_free(&c);
	imexd_cmd_free(&d);
}

void test_codec_bounds(void **state)
{
	uint32_t *ids = calloc(IMEX_CHANNEL_IDS_MAX + 1, sizeof(*ids));
	struct imexd_cmd c, d;
	const char *why = NULL;
	struct blob a;
	uint32_t i;

	(void)state;
	assert_non_null(ids);
	for (i = 0; i <= IMEX_CHANNEL_IDS_MAX; i++)
		ids[i] = i;
	/* At the bound: fine both ways. */
	c = free_cmd("d", ids, IMEX_CHANNEL_IDS_MAX);
	a = encode(&c);
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, NULL), 0);
	assert_int_equal(d.u.free.nids, IMEX_CHANNEL_IDS_MAX);
	imexd_cmd_free(&d);
	imexd_cmd_free(&c);
	free(a.p);
	/* One above: the encoder refuses, the decoder says E2BIG on the count. */
	c = free_cmd("d", ids, IMEX_CHANNEL_IDS_MAX + 1);
	assert_int_equal(imexd_cmd_encode(&c, &a.p, &a.n, &why), -EINVAL);
	imexd_cmd_free(&c);
	/* Free "d" at the bound, then its u32 nids (at 4..7) one above. */
	c = free_cmd("d", ids, IMEX_CHANNEL_IDS_MAX);
	a = encode(&c);
	imexd_cmd_free(&c);
	a.p[6] = (uint8_t)((IMEX_CHANNEL_IDS_MAX + 1) >> 8);
	a.p[7] = (uint8_t)(IMEX_CHANNEL_IDS_MAX + 1);
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, &why), -E2BIG);
	/* A huge count with no bytes behind it: refused before allocating. */
	memset(a.p + 4, 0, 4);
	a.p[6] = 0x3e;			/* 15872 ids claimed, 4 bytes there */
	assert_int_equal(imexd_cmd_decode(a.p, 12, &d, &why), -EBADMSG);
	assert_string_equal(why, "count larger than the bytes left");
	free(a.p);

	c = alloc_cmd("d", IMEX_CHANNEL_IDS_MAX + 1, NULL, 0);
	assert_int_equal(imexd_cmd_encode(&c, &a.p, &a.n, &why), -EINVAL);
	assert_string_equal(why, "channel count above IMEX_CHANNEL_IDS_MAX");
	c.u.alloc.ch.count = IMEX_CHANNEL_IDS_MAX;
	a = encode(&c);
	a.p[7] = (uint8_t)(IMEX_CHANNEL_IDS_MAX + 1);	/* count: 4..7 */
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, &why), -E2BIG);
	free(a.p);
	imexd_cmd_free(&c);

	c = create_cmd("d", 1, "a", 0, NULL, 0);
	free(c.u.create.members);
	c.u.create.members = calloc(IMEX_MEMBERS_MAX + 1, sizeof(*c.u.create.members));
	for (i = 0; i <= IMEX_MEMBERS_MAX; i++)
		snprintf(c.u.create.members[i].name, IMEX_NAME_MAX, "m%u", i);
	c.u.create.nmembers = IMEX_MEMBERS_MAX;
	a = encode(&c);
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, NULL), 0);
	imexd_cmd_free(&d);
	free(a.p);
	c.u.create.nmembers = IMEX_MEMBERS_MAX + 1;
	assert_int_equal(imexd_cmd_encode(&c, &a.p, &a.n, &why), -EINVAL);
	assert_string_equal(why, "more members than IMEX_MEMBERS_MAX");
	c.u.create.nmembers = 1;
	a = encode(&c);
	/* version, type, str "d", uuid: the u16 member count at 20..21 */
	a.p[20] = (IMEX_MEMBERS_MAX + 1) >> 8;
	a.p[21] = (uint8_t)(IMEX_MEMBERS_MAX + 1);
	assert_int_equal(imexd_cmd_decode(a.p, a.n, &d, &why), -E2BIG);
	free(a.p);
	imexd_cmd_free(&c);
	free(ids);
}

/* Random bytes and mutated valid encodings: refused or sound, never a crash. */
void test_codec_random_bytes(void **state)
{
	unsigned int round, rounds = steps_from_env(3000) * 10;
	uint8_t buf[512];

	(void)state;
	seed_from_env("codec random bytes");
	for (round = 0; round < rounds; round++) {
		struct imexd_cmd c, d;
		size_t n, k;
		uint8_t *p;
		int err;

		if (round % 2) {
			struct blob a;

			c = sample(round / 2 % NSAMPLES);
			a = encode(&c);
			imexd_cmd_free(&c);
			n = a.n < sizeof(buf) ? a.n : sizeof(buf);
			memcpy(buf, a.p, n);
			free(a.p);
			for (k = 1 + rndn(4); k; k--)
				buf[rndn((uint32_t)n)] ^= (uint8_t)(1u << rndn(8));
		} else {
			n = rndn(sizeof(buf));
			for (k = 0; k < n; k++)
				buf[k] = (uint8_t)rnd();
			if (n >= 2 && rndn(2)) {
				buf[0] = IMEXD_CMD_VERSION;
				buf[1] = (uint8_t)(1 + rndn(IMEXD_CMD_TYPE_MAX));
			}
		}
		p = malloc(n ? n : 1);
		memcpy(p, buf, n);
		err = imexd_cmd_decode(p, n, &d, NULL);
		if (!err) {
			/* What decodes re-encodes to the same bytes. */
			struct blob b = encode(&d);

			assert_int_equal(b.n, n);
			assert_memory_equal(b.p, p, n);
			free(b.p);
			imexd_cmd_free(&d);
		} else {
			assert_true(err == -EBADMSG || err == -EPROTO ||
				    err == -E2BIG);
		}
		free(p);
	}
}

