// SPDX-License-Identifier: GPL-2.0
/*
 * The replicated state machine (imexd/fsm.h): its command codec, what each
 * command does and refuses (a refusal changes nothing: the snapshot before
 * and after are the same bytes), every bound, snapshot/restore, and
 * determinism over random command sequences.
 *
 * Random tests print their seed; IMEXD_FSM_SEED=N replays one,
 * IMEXD_FSM_STEPS=N sets the length of the random sequences.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "fsm.h"

/* ---- allocation failures ----------------------------------------------------
 *
 * The Makefile links this program with --wrap=malloc,calloc,realloc: while
 * fail_at >= 0, the fail_at-th allocation from the sources under test (or
 * this file) returns NULL.
 */
static long fail_at = -1, allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static int inject(void)
{
	return fail_at >= 0 && allocs++ == fail_at;
}

void *__wrap_malloc(size_t n)
{
	return inject() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return inject() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return inject() ? NULL : __real_realloc(p, n);
}

static void arm(long k)
{
	allocs = 0;
	fail_at = k;
}

static void disarm(void)
{
	fail_at = -1;
}

/* ---- helpers -------------------------------------------------------------- */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t rndn(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static uint64_t seed_from_env(const char *what)
{
	const char *s = getenv("IMEXD_FSM_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 0) :
			(uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);

	if (!seed)
		seed = 1;
	printf("%s: seed %llu (replay: IMEXD_FSM_SEED=%llu)\n", what,
	       (unsigned long long)seed, (unsigned long long)seed);
	rng = seed;
	return seed;
}

static unsigned int steps_from_env(unsigned int dflt)
{
	const char *s = getenv("IMEXD_FSM_STEPS");

	return s ? (unsigned int)strtoul(s, NULL, 0) : dflt;
}

static const uint8_t FAB1[16] = { 0xfa, 0xb1, 1 };
static const uint8_t FAB2[16] = { 0xfa, 0xb2, 2 };
static const uint8_t NOFAB[16];

static void uuid_of(uint8_t u[16], unsigned int v)
{
	memset(u, 0, 16);
	u[0] = 0xd0;
	u[14] = (uint8_t)(v >> 8);
	u[15] = (uint8_t)v;
}

/* A node UUID from its name, so re-reports are identical. */
static void node_uuid(uint8_t u[16], const char *name)
{
	size_t i;

	memset(u, 0, 16);
	u[0] = 0x70;
	for (i = 0; name[i]; i++)
		u[1 + i % 15] ^= (uint8_t)(name[i] * (i + 1));
}

static struct imexd_cmd node_cmd(const char *name, const uint8_t fab[16],
				 uint32_t part, uint32_t maxch)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_NODE_SET };

	snprintf(c.u.node_set.name, sizeof(c.u.node_set.name), "%s", name);
	node_uuid(c.u.node_set.uuid, name);
	memcpy(c.u.node_set.fabric_uuid, fab, 16);
	c.u.node_set.partition = part;
	c.u.node_set.max_channels = maxch;
	return c;
}

/* "a,b,c" into a member list (addresses "<name>:1"). */
static uint16_t members_of(const char *csv, struct imexd_member **out)
{
	char buf[4096], *save = NULL, *tok;
	struct imexd_member *m = calloc(IMEX_MEMBERS_MAX + 8, sizeof(*m));
	uint16_t n = 0;

	assert_non_null(m);
	snprintf(buf, sizeof(buf), "%s", csv);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		snprintf(m[n].name, sizeof(m[n].name), "%s", tok);
		snprintf(m[n].addr, sizeof(m[n].addr), "%s:1", tok);
		n++;
	}
	*out = m;
	return n;
}

static uint32_t *ids_dup(const uint32_t *ids, uint32_t n)
{
	uint32_t *p = calloc(n ? n : 1, sizeof(*p));

	assert_non_null(p);
	if (n)
		memcpy(p, ids, n * sizeof(*p));
	return p;
}

static struct imexd_cmd create_cmd(const char *name, unsigned int uuid,
				   const char *members, uint32_t count,
				   const uint32_t *ids, uint32_t nids)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_DOMAIN_CREATE };

	snprintf(c.u.create.name, sizeof(c.u.create.name), "%s", name);
	uuid_of(c.u.create.uuid, uuid);
	c.u.create.nmembers = members_of(members, &c.u.create.members);
	c.u.create.ch.count = count;
	c.u.create.ch.ids = ids_dup(ids, nids);
	c.u.create.ch.nids = nids;
	c.u.create.ch.uid = 1000;
	c.u.create.ch.gid = 100;
	c.u.create.ch.mode = 0660;
	return c;
}

static struct imexd_cmd alloc_cmd(const char *name, uint32_t count,
				  const uint32_t *ids, uint32_t nids)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_CHANNEL_ALLOC };

	snprintf(c.u.alloc.name, sizeof(c.u.alloc.name), "%s", name);
	c.u.alloc.ch.count = count;
	c.u.alloc.ch.ids = ids_dup(ids, nids);
	c.u.alloc.ch.nids = nids;
	c.u.alloc.ch.uid = 7;
	c.u.alloc.ch.gid = 8;
	c.u.alloc.ch.mode = 0600;
	return c;
}

static struct imexd_cmd free_cmd(const char *name, const uint32_t *ids,
				 uint32_t nids)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_CHANNEL_FREE };

	snprintf(c.u.free.name, sizeof(c.u.free.name), "%s", name);
	c.u.free.ids = ids_dup(ids, nids);
	c.u.free.nids = nids;
	return c;
}

static struct imexd_cmd delete_cmd(const char *name)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_DOMAIN_DELETE };

	snprintf(c.u.del.name, sizeof(c.u.del.name), "%s", name);
	return c;
}

static struct imexd_cmd evict_cmd(const char *name, const char *member)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_MEMBER_EVICT };

	snprintf(c.u.evict.name, sizeof(c.u.evict.name), "%s", name);
	snprintf(c.u.evict.member, sizeof(c.u.evict.member), "%s", member);
	return c;
}

static struct imexd_cmd replace_cmd(const char *name, const char *member,
				     const char *with)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_MEMBER_REPLACE };

	snprintf(c.u.replace.name, sizeof(c.u.replace.name), "%s", name);
	snprintf(c.u.replace.member, sizeof(c.u.replace.member), "%s", member);
	snprintf(c.u.replace.with, sizeof(c.u.replace.with), "%s", with);
	return c;
}

struct blob {
	uint8_t *p;
	size_t n;
};

static struct blob snap(const struct imexd_fsm *fsm)
{
	struct blob b;

	assert_int_equal(imexd_fsm_snapshot(fsm, &b.p, &b.n), 0);
	return b;
}

static void assert_same(struct blob a, struct blob b)
{
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.p, b.p, a.n);
}

struct tf {
	struct imexd_fsm *fsm;
	uint64_t index;
};

static int tf_setup(void **state)
{
	struct tf *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->fsm = imexd_fsm_new();
	assert_non_null(t->fsm);
	*state = t;
	return 0;
}

static int tf_teardown(void **state)
{
	struct tf *t = *state;

	imexd_fsm_free(t->fsm);
	free(t);
	return 0;
}

/* Apply @c (then free it); the result stays in @r for the caller. */
static void apply(struct tf *t, struct imexd_cmd *c, struct imexd_fsm_result *r)
{
	assert_int_equal(imexd_fsm_apply(t->fsm, ++t->index, c, r), 0);
	imexd_cmd_free(c);
}

static void ok(struct tf *t, struct imexd_cmd c)
{
	struct imexd_fsm_result r;

	apply(t, &c, &r);
	if (r.error)
		fail_msg("refused (%d): %s", r.error, r.message);
	imexd_fsm_result_free(&r);
}

/* @c is refused with @err and a message containing @text, changing nothing. */
static void refused(struct tf *t, struct imexd_cmd c, int err, const char *text)
{
	struct blob before = snap(t->fsm), after;
	struct imexd_fsm_result r;

	apply(t, &c, &r);
	if (r.error != err || !strstr(r.message, text))
		fail_msg("expected %d '%s', got %d '%s'", err, text, r.error,
			 r.message);
	assert_int_equal(r.nids, 0);
	assert_null(r.ids);
	assert_int_equal(r.def.nmembers, 0);
	assert_true(strlen(r.message) < IMEXD_MESSAGE_MAX);
	after = snap(t->fsm);
	assert_same(before, after);
	assert_int_equal(imexd_fsm_last_index(t->fsm), t->index);
	free(before.p);
	free(after.p);
	imexd_fsm_result_free(&r);
}

/* a, b, c, d in FAB1 partition 0 with 16 channels; x in FAB2; z none. */
static void cluster(struct tf *t)
{
	ok(t, node_cmd("a", FAB1, 0, 16));
	ok(t, node_cmd("b", FAB1, 0, 16));
	ok(t, node_cmd("c", FAB1, 0, 16));
	ok(t, node_cmd("d", FAB1, 0, 16));
	ok(t, node_cmd("x", FAB2, 0, 16));
	ok(t, node_cmd("z", NOFAB, 0, 16));
}

static void assert_channels(const struct imexd_def *d, const char *want)
{
	char got[512] = "";
	size_t n = 0;
	uint32_t i;

	assert_non_null(d);
	for (i = 0; i < d->nchannels; i++)
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%u",
				      i ? "," : "", d->channels[i].id);
	assert_string_equal(got, want);
}

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

static struct blob encode(const struct imexd_cmd *c)
{
	const char *why = NULL;
	struct blob b;
	int err = imexd_cmd_encode(c, &b.p, &b.n, &why);

	if (err)
		fail_msg("encode: %d %s", err, why ? why : "");
	return b;
}

static void test_codec_round_trip(void **state)
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

static void test_codec_truncations_refused(void **state)
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

static void test_codec_version_and_type(void **state)
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

static void test_codec_refuses_bad_fields(void **state)
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

static void test_codec_bounds(void **state)
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
static void test_codec_random_bytes(void **state)
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

/* ---- commands ----------------------------------------------------------------- */

static void test_node_set(void **state)
{
	struct tf *t = *state;
	const struct imexd_fsm_node *n;
	struct blob a, b;
	struct imexd_cmd c;

	cluster(t);
	assert_int_equal(imexd_fsm_node_count(t->fsm), 6);
	n = imexd_fsm_node(t->fsm, "a");
	assert_non_null(n);
	assert_int_equal(n->max_channels, 16);
	assert_memory_equal(n->fabric_uuid, FAB1, 16);
	/* The same report again (every start): nothing changes. */
	a = snap(t->fsm);
	ok(t, node_cmd("a", FAB1, 0, 16));
	b = snap(t->fsm);
	assert_same(a, b);
	free(a.p);
	free(b.p);
	/* A node no domain names may change. */
	ok(t, node_cmd("d", FAB2, 3, 32));
	assert_int_equal(imexd_fsm_node(t->fsm, "d")->partition, 3);
	ok(t, node_cmd("d", FAB1, 0, 16));

	ok(t, create_cmd("j", 1, "a,b", 1, NULL, 0));
	refused(t, node_cmd("a", FAB1, 0, 32), EBUSY,
		"node 'a' is a member of domain 'j': its max_channels cannot change until no domain names it");
	refused(t, node_cmd("b", FAB2, 0, 16), EBUSY, "its fabric identity cannot change");
	refused(t, node_cmd("b", FAB1, 1, 16), EBUSY, "its fabric identity cannot change");
	c = node_cmd("a", FAB1, 0, 16);
	c.u.node_set.uuid[15] ^= 1;
	refused(t, c, EBUSY, "its node UUID cannot change");
	refused(t, node_cmd("bad name", FAB1, 0, 16), EINVAL,
		"malformed command refused: node name is not");
	ok(t, delete_cmd("j"));
	ok(t, node_cmd("a", FAB1, 0, 32));
	assert_int_equal(imexd_fsm_node(t->fsm, "a")->max_channels, 32);
}

static struct imexd_cmd leave_cmd(const char *name)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_NODE_LEAVE };

	snprintf(c.u.node.name, sizeof(c.u.node.name), "%s", name);
	return c;
}

/*
 * A leave's first table step marks the node leaving (refused while a
 * domain names it); a create naming it is then refused; its reports keep
 * the mark; a snapshot carries it; the second step drops the identity.
 */
static void test_node_leave_marks_then_forgets(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm *g = imexd_fsm_new();
	struct blob b;

	cluster(t);
	ok(t, create_cmd("j", 1, "a,b", 1, NULL, 0));
	refused(t, leave_cmd("b"), EBUSY,
		"node 'b' is a member of domain 'j': delete the domain or evict the node from it first; not removed");
	ok(t, leave_cmd("c"));
	assert_true(imexd_fsm_node(t->fsm, "c")->leaving);
	refused(t, create_cmd("k", 2, "a,c", 1, NULL, 0), EHOSTUNREACH,
		"node 'c' is leaving the NVLink domain");
	ok(t, node_cmd("c", FAB1, 0, 32));
	assert_true(imexd_fsm_node(t->fsm, "c")->leaving);
	b = snap(t->fsm);
	assert_int_equal(imexd_fsm_restore(g, t->index, b.p, b.n, NULL), 0);
	assert_true(imexd_fsm_node(g, "c")->leaving);
	assert_false(imexd_fsm_node(g, "d")->leaving);
	free(b.p);
	imexd_fsm_free(g);
	ok(t, leave_cmd("c"));
	assert_null(imexd_fsm_node(t->fsm, "c"));
	ok(t, leave_cmd("c"));	/* nothing left to do */
	/* Joined again: a fresh report, not leaving. */
	ok(t, node_cmd("c", FAB1, 0, 16));
	assert_false(imexd_fsm_node(t->fsm, "c")->leaving);
	ok(t, create_cmd("k", 2, "a,c", 1, NULL, 0));
}

static void test_nodes_bound(void **state)
{
	struct tf *t = *state;
	char name[16];
	unsigned int i;

	for (i = 0; i < IMEXD_FSM_NODES_MAX; i++) {
		snprintf(name, sizeof(name), "n%04u", i);
		ok(t, node_cmd(name, FAB1, 0, 16));
	}
	assert_int_equal(imexd_fsm_node_count(t->fsm), IMEXD_FSM_NODES_MAX);
	refused(t, node_cmd("late", FAB1, 0, 16), ENOSPC,
		"the NVLink domain already has 1024 nodes, the most it may: node 'late' cannot join");
	/* Nodes already there still report, and change while unnamed. */
	ok(t, node_cmd("n0007", FAB1, 0, 16));
	ok(t, node_cmd("n0007", FAB1, 0, 64));
	assert_int_equal(imexd_fsm_node_count(t->fsm), IMEXD_FSM_NODES_MAX);
}

static void create_ok(struct tf *t, struct imexd_cmd c, const char *ids)
{
	struct imexd_fsm_result r;
	char name[IMEX_NAME_MAX];
	const struct imexd_def *d;
	uint32_t i;

	memcpy(name, c.u.create.name, sizeof(name));
	apply(t, &c, &r);
	if (r.error)
		fail_msg("refused (%d): %s", r.error, r.message);
	d = imexd_fsm_domain(t->fsm, name);
	assert_channels(d, ids);
	assert_channels(&r.def, ids);
	assert_true(imexd_def_equal(d, &r.def));
	assert_int_equal(d->generation, t->index);
	assert_int_equal(d->flags, 0);
	assert_int_equal(r.nids, d->nchannels);
	for (i = 0; i < r.nids; i++) {
		assert_int_equal(r.ids[i], d->channels[i].id);
		assert_int_equal(d->channels[i].uid, 1000);
		assert_int_equal(d->channels[i].mode, 0660);
	}
	imexd_fsm_result_free(&r);
}

static void test_create_by_count_lowest_free_everywhere(void **state)
{
	struct tf *t = *state;
	const struct imexd_def *d;

	cluster(t);
	create_ok(t, create_cmd("d1", 1, "a,b", 2, NULL, 0), "0,1");
	create_ok(t, create_cmd("d2", 2, "b,c", 2, NULL, 0), "2,3");
	create_ok(t, create_cmd("d3", 3, "c,d", 3, NULL, 0), "0,1,4");
	create_ok(t, create_cmd("d4", 4, "a,d", 2, NULL, 0), "2,3");
	create_ok(t, create_cmd("d5", 5, "d,c,b,a", 1, NULL, 0), "5");
	create_ok(t, create_cmd("d6", 6, "b", 0, NULL, 0), "");
	d = imexd_fsm_domain(t->fsm, "d5");
	assert_memory_equal(d->fabric_uuid, FAB1, 16);
	assert_int_equal(d->partition, 0);
	assert_int_equal(d->nmembers, 4);
	assert_string_equal(d->members[0].name, "d");	/* order kept */
	assert_string_equal(d->members[0].addr, "d:1");
}

/* The same create again (forwarded again after its leader was lost):
 * answered with the domain as made, and nothing changes. */
static void test_create_repeated(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm_result r;
	const struct imexd_def *d;
	struct imexd_cmd c;
	uint64_t gen;

	cluster(t);
	create_ok(t, create_cmd("d1", 1, "a,b", 2, NULL, 0), "0,1");
	gen = imexd_fsm_domain(t->fsm, "d1")->generation;
	c = create_cmd("d1", 1, "b,a", 2, NULL, 0);
	apply(t, &c, &r);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.nids, 2);
	assert_int_equal(r.ids[0], 0);
	assert_int_equal(r.ids[1], 1);
	d = imexd_fsm_domain(t->fsm, "d1");
	assert_true(imexd_def_equal(d, &r.def));
	assert_int_equal(d->generation, gen);
	imexd_fsm_result_free(&r);
	/* Nothing else was taken: the next create gets channel 2. */
	create_ok(t, create_cmd("d2", 2, "a", 1, NULL, 0), "2");
}

static void test_create_refusals(void **state)
{
	struct tf *t = *state;
	struct imexd_cmd c;

	cluster(t);
	ok(t, node_cmd("p1", FAB1, 1, 16));
	ok(t, node_cmd("e", FAB1, 0, 8));
	create_ok(t, create_cmd("d1", 1, "a,b", 0, (const uint32_t[]){ 1, 5 }, 2), "1,5");
	refused(t, create_cmd("d1", 9, "c", 1, NULL, 0), EEXIST,
		"domain 'd1' already exists");
	/* Its UUID with other members is another create. */
	refused(t, create_cmd("d1", 1, "a,c", 0, (const uint32_t[]){ 1, 5 }, 2),
		EEXIST, "domain 'd1' already exists");
	refused(t, create_cmd("d9", 1, "c", 1, NULL, 0), EEXIST,
		"domain UUID of 'd9' is already in use by domain 'd1'");
	refused(t, create_cmd("d9", 9, "a,q", 1, NULL, 0), EHOSTUNREACH,
		"node 'q' has not joined the NVLink domain: check that imexd runs there");
	refused(t, create_cmd("d9", 9, "a,z", 1, NULL, 0), EXDEV,
		"node 'z' has no fabric identity: set it there with 'imexctl node set-fabric'");
	refused(t, create_cmd("d9", 9, "a,x", 1, NULL, 0), EXDEV,
		"nodes 'a' and 'x' are not in one NVLink partition");
	refused(t, create_cmd("d9", 9, "a,p1", 1, NULL, 0), EXDEV,
		"nodes 'a' and 'p1' are not in one NVLink partition");
	refused(t, create_cmd("d9", 9, "c,b", 0, (const uint32_t[]){ 2, 5 }, 2),
		EADDRINUSE, "channel 5 belongs to domain 'd1' on node 'b'");
	refused(t, create_cmd("d9", 9, "c,a", 0, (const uint32_t[]){ 16 }, 1),
		ERANGE, "channel 16 is out of range: node 'c' has max_channels=16");
	refused(t, create_cmd("d9", 9, "a,e", 0, (const uint32_t[]){ 8 }, 1),
		ERANGE, "channel 8 is out of range: node 'e' has max_channels=8");
	refused(t, create_cmd("d9", 9, "e,c", 9, NULL, 0), ERANGE,
		"9 channels asked for; node 'e' has max_channels=8");
	refused(t, create_cmd("d9", 9, "c,b", 15, NULL, 0), ENOSPC,
		"15 channels asked for, but only 14 are free on every member of domain 'd9'");
	refused(t, create_cmd("bad/name", 9, "c", 1, NULL, 0), EINVAL,
		"malformed command refused: domain name is not");
	c = create_cmd("d9", 9, "c", 1, NULL, 0);
	c.u.create.ch.mode = 01000;
	refused(t, c, EINVAL, "channel mode above 0777");
	c = create_cmd("d9", 9, "c", 1, NULL, 0);
	c.u.create.nmembers = 0;
	refused(t, c, EINVAL, "a domain needs at least one member");
	refused(t, create_cmd("d9", 9, "c,c", 1, NULL, 0), EINVAL,
		"member listed twice");
	create_ok(t, create_cmd("d9", 9, "c,b", 14, NULL, 0),
		  "0,2,3,4,6,7,8,9,10,11,12,13,14,15");
}

static void test_members_bound(void **state)
{
	struct tf *t = *state;
	char csv[IMEX_MEMBERS_MAX * 8], name[16];
	size_t n = 0;
	unsigned int i;

	for (i = 0; i <= IMEX_MEMBERS_MAX; i++) {
		snprintf(name, sizeof(name), "m%u", i);
		ok(t, node_cmd(name, FAB1, 0, 16));
		if (i < IMEX_MEMBERS_MAX)
			n += (size_t)snprintf(csv + n, sizeof(csv) - n, "%s%s",
					      i ? "," : "", name);
	}
	create_ok(t, create_cmd("full", 1, csv, 1, NULL, 0), "0");
	snprintf(csv + n, sizeof(csv) - n, ",m%d", IMEX_MEMBERS_MAX);
	refused(t, create_cmd("over", 2, csv, 1, NULL, 0), E2BIG,
		"161 members is more than the 160 a domain may have");
}

static void test_channels_per_command_bound(void **state)
{
	uint32_t *ids = calloc(IMEX_CHANNEL_IDS_MAX + 1, sizeof(*ids));
	struct tf *t = *state;
	uint32_t i;

	assert_non_null(ids);
	for (i = 0; i <= IMEX_CHANNEL_IDS_MAX; i++)
		ids[i] = 20000 + i;
	ok(t, node_cmd("big", FAB1, 0, 40000));
	ok(t, create_cmd("by-count", 1, "big", IMEX_CHANNEL_IDS_MAX, NULL, 0));
	assert_int_equal(imexd_fsm_domain(t->fsm, "by-count")->nchannels,
			 IMEX_CHANNEL_IDS_MAX);
	ok(t, create_cmd("by-ids", 2, "big", 0, ids, IMEX_CHANNEL_IDS_MAX));
	refused(t, create_cmd("c1", 3, "big", IMEX_CHANNEL_IDS_MAX + 1, NULL, 0),
		E2BIG, "16001 channels in one request is more than the 16000 allowed: split it");
	refused(t, create_cmd("c2", 4, "big", 0, ids, IMEX_CHANNEL_IDS_MAX + 1),
		E2BIG, "16001 channels in one request is more than the 16000 allowed");
	refused(t, alloc_cmd("by-count", IMEX_CHANNEL_IDS_MAX + 1, NULL, 0),
		E2BIG, "16001 channels in one request");
	refused(t, alloc_cmd("by-count", 0, ids, IMEX_CHANNEL_IDS_MAX + 1),
		E2BIG, "16001 channels in one request");
	for (i = 0; i <= IMEX_CHANNEL_IDS_MAX; i++)
		ids[i] = i;
	refused(t, free_cmd("by-count", ids, IMEX_CHANNEL_IDS_MAX + 1),
		E2BIG, "16001 channels in one request");
	ok(t, free_cmd("by-count", ids, IMEX_CHANNEL_IDS_MAX));
	assert_int_equal(imexd_fsm_domain(t->fsm, "by-count")->nchannels, 0);
	free(ids);
}

static void test_domains_per_node_bound(void **state)
{
	struct tf *t = *state;
	char name[16];
	unsigned int i;

	cluster(t);
	for (i = 0; i < IMEX_DOMAINS_MAX; i++) {
		snprintf(name, sizeof(name), "j%03u", i);
		ok(t, create_cmd(name, 100 + i, i % 2 ? "a,b" : "a", 0, NULL, 0));
	}
	refused(t, create_cmd("one-more", 1, "c,a", 0, NULL, 0), ENOSPC,
		"node 'a' already holds 256 domains, the most it may");
	ok(t, create_cmd("other", 1, "b,c", 0, NULL, 0));
	ok(t, delete_cmd("j000"));
	ok(t, create_cmd("one-more", 2, "c,a", 0, NULL, 0));
}

static void test_alloc_and_free(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm_result r;
	const struct imexd_def *d;
	struct imexd_cmd c;

	cluster(t);
	create_ok(t, create_cmd("d1", 1, "a,b", 0, (const uint32_t[]){ 0 }, 1), "0");
	create_ok(t, create_cmd("d2", 2, "b,c", 0, (const uint32_t[]){ 1 }, 1), "1");
	c = alloc_cmd("d1", 2, NULL, 0);
	apply(t, &c, &r);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.nids, 2);
	assert_int_equal(r.ids[0], 2);
	assert_int_equal(r.ids[1], 3);
	assert_channels(&r.def, "0,2,3");
	d = imexd_fsm_domain(t->fsm, "d1");
	assert_true(imexd_def_equal(d, &r.def));
	assert_int_equal(d->generation, t->index);
	assert_int_equal(d->channels[0].uid, 1000);	/* old ones keep theirs */
	assert_int_equal(d->channels[1].uid, 7);
	assert_int_equal(d->channels[1].gid, 8);
	assert_int_equal(d->channels[1].mode, 0600);
	imexd_fsm_result_free(&r);

	refused(t, alloc_cmd("d1", 0, (const uint32_t[]){ 0 }, 1), EEXIST,
		"channel 0 is already granted to domain 'd1'");
	refused(t, alloc_cmd("d1", 0, (const uint32_t[]){ 1 }, 1), EADDRINUSE,
		"channel 1 belongs to domain 'd2' on node 'b'");
	refused(t, alloc_cmd("nope", 1, NULL, 0), ENOENT,
		"no domain 'nope': see 'imexctl domain list'");
	refused(t, alloc_cmd("d1", 0, NULL, 0), EINVAL,
		"neither a channel count nor channel ids");
	refused(t, alloc_cmd("d1", 0, (const uint32_t[]){ 16 }, 1), ERANGE,
		"channel 16 is out of range");
	refused(t, alloc_cmd("d1", 13, NULL, 0), ENOSPC,
		"13 channels asked for, but only 12 are free on every member of domain 'd1'");
	refused(t, free_cmd("d1", (const uint32_t[]){ 1 }, 1), ENOENT,
		"channel 1 is not granted to domain 'd1'");
	refused(t, free_cmd("d1", (const uint32_t[]){ 0, 1 }, 2), ENOENT,
		"channel 1 is not granted to domain 'd1'");
	refused(t, free_cmd("nope", (const uint32_t[]){ 0 }, 1), ENOENT,
		"no domain 'nope'");

	c = free_cmd("d1", (const uint32_t[]){ 0, 3 }, 2);
	apply(t, &c, &r);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.nids, 2);
	assert_int_equal(r.ids[1], 3);
	assert_channels(&r.def, "2");
	assert_int_equal(imexd_fsm_domain(t->fsm, "d1")->generation, t->index);
	imexd_fsm_result_free(&r);
	/* What was freed on b is free for d2 now. */
	ok(t, alloc_cmd("d2", 0, (const uint32_t[]){ 0, 3 }, 2));
	assert_channels(imexd_fsm_domain(t->fsm, "d2"), "0,1,3");
}

static void test_evict(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm_result r;
	struct imexd_cmd c;
	size_t pos = 0;

	cluster(t);
	create_ok(t, create_cmd("d1", 1, "a,b,c", 0, (const uint32_t[]){ 4 }, 1), "4");
	refused(t, create_cmd("d2", 2, "c", 0, (const uint32_t[]){ 4 }, 1),
		EADDRINUSE, "channel 4 belongs to domain 'd1' on node 'c'");
	refused(t, evict_cmd("d1", "q"), ENOENT, "'q' is not a member of domain 'd1'");
	refused(t, evict_cmd("nope", "a"), ENOENT, "no domain 'nope'");
	c = evict_cmd("d1", "b");
	apply(t, &c, &r);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.def.nmembers, 2);
	assert_string_equal(r.def.members[0].name, "a");
	assert_string_equal(r.def.members[1].name, "c");
	assert_int_equal(r.def.generation, t->index);
	assert_true(imexd_def_equal(&r.def, imexd_fsm_domain(t->fsm, "d1")));
	imexd_fsm_result_free(&r);
	assert_null(imexd_fsm_domain_of(t->fsm, "b", &pos));
	/* The evicted node's channel 4 is free there now. */
	ok(t, create_cmd("d2", 2, "b", 0, (const uint32_t[]){ 4 }, 1));
	ok(t, evict_cmd("d1", "c"));
	refused(t, evict_cmd("d1", "a"), EINVAL,
		"'a' is the last member of domain 'd1': delete the domain instead");
}

/*
 * b leaves d1 and e takes its place, position and channels; a and c keep
 * theirs.  Every refusal changes nothing and says why.
 */
static void test_replace(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm_result r;
	struct imexd_cmd c;
	const struct imexd_def *d;
	size_t pos = 0;

	cluster(t);
	ok(t, node_cmd("e", FAB1, 0, 16));
	ok(t, node_cmd("p1", FAB1, 1, 16));
	ok(t, node_cmd("small", FAB1, 0, 4));
	ok(t, node_cmd("gone", FAB1, 0, 16));
	ok(t, (struct imexd_cmd){ .type = IMEXD_CMD_NODE_LEAVE,
				  .u.node.name = "gone" });
	create_ok(t, create_cmd("d1", 1, "a,b,c", 0, (const uint32_t[]){ 4, 6 }, 2), "4,6");
	create_ok(t, create_cmd("d2", 2, "d", 0, (const uint32_t[]){ 6 }, 1), "6");

	refused(t, replace_cmd("nope", "b", "e"), ENOENT, "no domain 'nope'");
	refused(t, replace_cmd("d1", "b", "b"), EINVAL,
		"'b' cannot replace itself in domain 'd1'");
	refused(t, replace_cmd("d1", "q", "e"), ENOENT,
		"'q' is not a member of domain 'd1'");
	refused(t, replace_cmd("d1", "b", "c"), EEXIST,
		"'c' is a member of domain 'd1' already");
	refused(t, replace_cmd("d1", "q", "c"), ENOENT,
		"'q' is not a member of domain 'd1' and 'c' is: replaced already?");
	refused(t, replace_cmd("d1", "b", "w"), EINVAL,
		"node 'w' is not in the group");
	refused(t, replace_cmd("d1", "b", "gone"), EHOSTUNREACH,
		"node 'gone' is leaving the NVLink domain");
	refused(t, replace_cmd("d1", "b", "z"), EXDEV,
		"node 'z' has no fabric identity");
	refused(t, replace_cmd("d1", "b", "x"), EXDEV,
		"node 'x' is in another NVLink domain (fabric UUID) than domain 'd1'");
	refused(t, replace_cmd("d1", "b", "p1"), EXDEV,
		"node 'p1' is in NVLink partition 1, domain 'd1' in partition 0: pick a spare of partition 0");
	refused(t, replace_cmd("d1", "b", "d"), EADDRINUSE,
		"channel 6 is held on node 'd' by domain 'd2': free it there, or pick another spare");
	refused(t, replace_cmd("d1", "b", "small"), ERANGE,
		"channel 4 of domain 'd1' is out of range on node 'small' (max_channels=4)");

	c = replace_cmd("d1", "b", "e");
	apply(t, &c, &r);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.def.nmembers, 3);
	assert_string_equal(r.def.members[0].name, "a");
	assert_string_equal(r.def.members[1].name, "e");
	assert_string_equal(r.def.members[2].name, "c");
	assert_string_equal(r.def.members[1].addr, "");
	assert_string_equal(r.def.members[2].addr, "c:1");
	assert_int_equal(r.def.generation, t->index);
	assert_int_equal(r.nids, 0);
	assert_channels(&r.def, "4,6");
	d = imexd_fsm_domain(t->fsm, "d1");
	assert_true(imexd_def_equal(&r.def, d));
	assert_int_equal(d->channels[0].uid, 1000);
	assert_int_equal(d->channels[0].mode, 0660);
	imexd_fsm_result_free(&r);
	assert_null(imexd_fsm_domain_of(t->fsm, "b", &pos));
	pos = 0;
	assert_ptr_equal(imexd_fsm_domain_of(t->fsm, "e", &pos), d);
	/* Done once: the same request again finds b gone and e there. */
	refused(t, replace_cmd("d1", "b", "e"), ENOENT, "replaced already?");
	/* b's channels are free there; e's are held by d1. */
	ok(t, create_cmd("d3", 3, "b", 0, (const uint32_t[]){ 4 }, 1));
	refused(t, create_cmd("d4", 4, "e", 0, (const uint32_t[]){ 4 }, 1),
		EADDRINUSE, "channel 4 belongs to domain 'd1' on node 'e'");
	/* A one-member domain's member can be replaced too. */
	ok(t, replace_cmd("d2", "d", "b"));
	refused(t, replace_cmd("d1", "a", "b"), EADDRINUSE,
		"channel 6 is held on node 'b' by domain 'd2'");
}

/* A node holding IMEX_DOMAINS_MAX domains takes no place in another. */
static void test_replace_domains_per_node_bound(void **state)
{
	struct tf *t = *state;
	char name[16];
	unsigned int i;

	cluster(t);
	ok(t, create_cmd("big", 1, "a,b", 1, NULL, 0));
	for (i = 0; i < IMEX_DOMAINS_MAX; i++) {
		snprintf(name, sizeof(name), "c%u", i);
		ok(t, create_cmd(name, 10 + i, "c", 0, NULL, 0));
	}
	refused(t, replace_cmd("big", "b", "c"), ENOSPC,
		"node 'c' already holds 256 domains, the most it may");
	ok(t, delete_cmd("c0"));
	ok(t, replace_cmd("big", "b", "c"));
}

static void test_delete(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm_result r;
	struct imexd_cmd c;

	cluster(t);
	create_ok(t, create_cmd("d1", 1, "a,b", 0, (const uint32_t[]){ 3 }, 1), "3");
	refused(t, delete_cmd("nope"), ENOENT,
		"no domain 'nope': see 'imexctl domain list'");
	c = delete_cmd("d1");
	apply(t, &c, &r);
	assert_int_equal(r.error, 0);
	assert_string_equal(r.def.name, "d1");
	assert_int_equal(r.def.flags, IMEXD_DEF_DELETED);
	assert_int_equal(r.def.generation, t->index);
	assert_channels(&r.def, "3");
	assert_int_equal(r.def.nmembers, 2);
	imexd_fsm_result_free(&r);
	assert_null(imexd_fsm_domain(t->fsm, "d1"));
	assert_int_equal(imexd_fsm_domain_count(t->fsm), 0);
	refused(t, delete_cmd("d1"), ENOENT, "no domain 'd1'");
	/* Its name, UUID and channel are free again. */
	create_ok(t, create_cmd("d1", 1, "b", 0, (const uint32_t[]){ 3 }, 1), "3");
}

static void test_queries(void **state)
{
	struct tf *t = *state;
	const struct imexd_def *d;
	uint8_t u[16];
	size_t pos = 0;

	cluster(t);
	ok(t, create_cmd("j3", 3, "a,c", 1, NULL, 0));
	ok(t, create_cmd("j1", 1, "a,b", 1, NULL, 0));
	ok(t, create_cmd("j2", 2, "b,c", 1, NULL, 0));
	d = imexd_fsm_domain_of(t->fsm, "a", &pos);
	assert_string_equal(d->name, "j1");
	d = imexd_fsm_domain_of(t->fsm, "a", &pos);
	assert_string_equal(d->name, "j3");
	assert_null(imexd_fsm_domain_of(t->fsm, "a", &pos));
	pos = 0;
	assert_null(imexd_fsm_domain_of(t->fsm, "d", &pos));
	uuid_of(u, 2);
	assert_string_equal(imexd_fsm_domain_by_uuid(t->fsm, u)->name, "j2");
	uuid_of(u, 9);
	assert_null(imexd_fsm_domain_by_uuid(t->fsm, u));
	assert_int_equal(imexd_fsm_domain_count(t->fsm), 3);
	assert_string_equal(imexd_fsm_domain_at(t->fsm, 0)->name, "j1");
	assert_string_equal(imexd_fsm_domain_at(t->fsm, 2)->name, "j3");
	assert_null(imexd_fsm_domain_at(t->fsm, 3));
	assert_null(imexd_fsm_domain(t->fsm, NULL));
	assert_null(imexd_fsm_domain(t->fsm, "j4"));
	assert_string_equal(imexd_fsm_node_at(t->fsm, 0)->name, "a");
	assert_string_equal(imexd_fsm_node_at(t->fsm, 5)->name, "z");
	assert_null(imexd_fsm_node_at(t->fsm, 6));
	assert_null(imexd_fsm_node(t->fsm, "q"));
}

static void test_index_must_increase(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm_result r;
	struct imexd_cmd c;
	struct blob a, b;

	cluster(t);
	a = snap(t->fsm);
	c = create_cmd("j", 1, "a", 1, NULL, 0);
	assert_int_equal(imexd_fsm_apply(t->fsm, t->index, &c, &r), -EINVAL);
	assert_int_equal(imexd_fsm_apply(t->fsm, 0, &c, &r), -EINVAL);
	b = snap(t->fsm);
	assert_same(a, b);
	assert_int_equal(imexd_fsm_last_index(t->fsm), t->index);
	imexd_cmd_free(&c);
	free(a.p);
	free(b.p);
}

/* The longest messages, with IMEX_NAME_MAX - 1 names, are not cut. */
static void test_messages_fit_longest_names(void **state)
{
	char n1[IMEX_NAME_MAX], n2[IMEX_NAME_MAX], n3[IMEX_NAME_MAX];
	char d1[IMEX_NAME_MAX], d2[IMEX_NAME_MAX], want[1024], csv[256];
	struct tf *t = *state;
	struct imexd_cmd c;

	memset(n1, 'a', IMEX_NAME_MAX - 1);
	memset(n2, 'b', IMEX_NAME_MAX - 1);
	memset(n3, 'c', IMEX_NAME_MAX - 1);
	memset(d1, 'D', IMEX_NAME_MAX - 1);
	memset(d2, 'E', IMEX_NAME_MAX - 1);
	n1[IMEX_NAME_MAX - 1] = n2[IMEX_NAME_MAX - 1] = n3[IMEX_NAME_MAX - 1] = 0;
	d1[IMEX_NAME_MAX - 1] = d2[IMEX_NAME_MAX - 1] = 0;
	ok(t, node_cmd(n1, FAB1, 0, IMEX_CHANNELS_MAX));
	ok(t, node_cmd(n2, FAB1, 0, IMEX_CHANNELS_MAX));
	ok(t, node_cmd(n3, FAB2, 0, IMEX_CHANNELS_MAX));
	snprintf(want, sizeof(want), "%s,%s", n1, n2);
	ok(t, create_cmd(d1, 1, want, 0, (const uint32_t[]){ IMEX_CHANNELS_MAX - 1 }, 1));

	snprintf(want, sizeof(want),
		 "channel %u belongs to domain '%s' on node '%s': use other ids ('imexctl channel list' there)",
		 IMEX_CHANNELS_MAX - 1, d1, n2);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	refused(t, create_cmd(d2, 2, n2, 0, (const uint32_t[]){ IMEX_CHANNELS_MAX - 1 }, 1),
		EADDRINUSE, want);
	snprintf(want, sizeof(want),
		 "nodes '%s' and '%s' are not in one NVLink partition: compare 'imexctl node show' on both",
		 n1, n3);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	snprintf(csv, sizeof(csv), "%s,%s", n1, n3);
	c = create_cmd(d2, 2, csv, 1, NULL, 0);
	refused(t, c, EXDEV, want);
	snprintf(want, sizeof(want),
		 "node '%s' is a member of domain '%s': its fabric identity cannot change until no domain names it",
		 n1, d1);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	refused(t, node_cmd(n1, FAB2, 0, IMEX_CHANNELS_MAX), EBUSY, want);
	snprintf(want, sizeof(want),
		 "'%s' is not a member of domain '%s' and '%s' is: replaced already?",
		 n3, d1, n2);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	refused(t, replace_cmd(d1, n3, n2), ENOENT, want);
	snprintf(want, sizeof(want),
		 "node '%s' is in another NVLink domain (fabric UUID) than domain '%s': pick a spare of its fabric",
		 n3, d1);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	refused(t, replace_cmd(d1, n2, n3), EXDEV, want);
	ok(t, create_cmd(d2, 2, n3, 0, (const uint32_t[]){ IMEX_CHANNELS_MAX - 1 }, 1));
	snprintf(want, sizeof(want),
		 "channel %u is held on node '%s' by domain '%s': free it there, or pick another spare",
		 IMEX_CHANNELS_MAX - 1, n2, d1);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	refused(t, replace_cmd(d2, n3, n2), EXDEV, "another NVLink domain");
	snprintf(want, sizeof(want),
		 "channel %u of domain '%s' is out of range on node '%s' (max_channels=%u): pick another spare",
		 IMEX_CHANNELS_MAX - 1, d1, n3, (unsigned int)IMEX_CHANNELS_MAX);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	snprintf(want, sizeof(want),
		 "node '%s' is in NVLink partition %u, domain '%s' in partition %u: pick a spare of partition %u",
		 n3, UINT32_MAX, d1, UINT32_MAX, UINT32_MAX);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	snprintf(want, sizeof(want),
		 "'%s' cannot replace itself in domain '%s': name a spare as the new member",
		 n1, d1);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	refused(t, replace_cmd(d1, n1, n1), EINVAL, want);
	snprintf(want, sizeof(want),
		 "node '%s' is not in the group: join it with 'imexctl node join' and check that imexd runs there",
		 n1);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	snprintf(want, sizeof(want),
		 "%u channels asked for, but only %u are free on every member of domain '%s'",
		 (unsigned int)IMEX_CHANNEL_IDS_MAX,
		 (unsigned int)IMEX_CHANNEL_IDS_MAX - 1, d1);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
}

/* ---- snapshot and restore ------------------------------------------------- */

static void populate(struct tf *t)
{
	cluster(t);
	ok(t, create_cmd("j1", 1, "a,b", 3, NULL, 0));
	ok(t, create_cmd("j2", 2, "c,b,d", 0, (const uint32_t[]){ 7, 9 }, 2));
	ok(t, create_cmd("j3", 3, "x", 2, NULL, 0));
	ok(t, alloc_cmd("j1", 0, (const uint32_t[]){ 12 }, 1));
	ok(t, evict_cmd("j2", "d"));
}

static void test_snapshot_round_trip(void **state)
{
	struct imexd_fsm *g = imexd_fsm_new();
	struct tf *t = *state;
	struct blob a, b;
	size_t i;

	populate(t);
	a = snap(t->fsm);
	/* Into a new fsm, and over one that holds something else. */
	assert_int_equal(imexd_fsm_restore(g, t->index, a.p, a.n, NULL), 0);
	assert_int_equal(imexd_fsm_last_index(g), t->index);
	b = snap(g);
	assert_same(a, b);
	free(b.p);
	assert_int_equal(imexd_fsm_domain_count(g), imexd_fsm_domain_count(t->fsm));
	for (i = 0; i < imexd_fsm_domain_count(g); i++)
		assert_true(imexd_def_equal(imexd_fsm_domain_at(g, i),
					    imexd_fsm_domain_at(t->fsm, i)));
	for (i = 0; i < imexd_fsm_node_count(g); i++)
		assert_memory_equal(imexd_fsm_node_at(g, i),
				    imexd_fsm_node_at(t->fsm, i),
				    sizeof(struct imexd_fsm_node));
	ok(t, delete_cmd("j1"));
	b = snap(t->fsm);
	assert_int_equal(imexd_fsm_restore(g, t->index, b.p, b.n, NULL), 0);
	free(b.p);
	b = snap(g);
	assert_null(imexd_fsm_domain(g, "j1"));
	/* The restored fsm goes on like the original. */
	ok(t, create_cmd("j4", 4, "a", 1, NULL, 0));
	{
		struct imexd_cmd c = create_cmd("j4", 4, "a", 1, NULL, 0);
		struct imexd_fsm_result r;

		assert_int_equal(imexd_fsm_apply(g, t->index, &c, &r), 0);
		assert_int_equal(r.error, 0);
		imexd_fsm_result_free(&r);
		imexd_cmd_free(&c);
	}
	free(b.p);
	a.n = 0;
	free(a.p);
	a = snap(t->fsm);
	b = snap(g);
	assert_same(a, b);
	free(a.p);
	free(b.p);
	imexd_fsm_free(g);
}

/* @fsm refuses @p/@n at @index, with @err, and is left as it was. */
static void restore_refused(struct imexd_fsm *fsm, uint64_t index,
			    const uint8_t *p, size_t n, int err, const char *why)
{
	struct blob before = snap(fsm), after;
	uint64_t last = imexd_fsm_last_index(fsm);
	uint8_t *copy = malloc(n ? n : 1);
	const char *w = NULL;
	int got;

	memcpy(copy, p, n);
	got = imexd_fsm_restore(fsm, index, copy, n, &w);
	if (got != err || (why && (!w || strcmp(w, why))))
		fail_msg("restore: expected %d '%s', got %d '%s'", err,
			 why ? why : "", got, w ? w : "");
	after = snap(fsm);
	assert_same(before, after);
	assert_int_equal(imexd_fsm_last_index(fsm), last);
	free(copy);
	free(before.p);
	free(after.p);
}

static void test_restore_refuses_bad_snapshots(void **state)
{
	struct imexd_fsm *g = imexd_fsm_new();
	struct tf *t = *state;
	unsigned int round, rounds = steps_from_env(3000) * 4;
	struct blob a;
	size_t n;

	populate(t);
	a = snap(t->fsm);
	/* g holds something else: a refused restore must leave it. */
	ok(t, create_cmd("keep", 77, "d", 1, NULL, 0));
	{
		struct blob k = snap(t->fsm);

		assert_int_equal(imexd_fsm_restore(g, t->index, k.p, k.n, NULL), 0);
		free(k.p);
	}
	for (n = 0; n < a.n; n++)
		restore_refused(g, t->index, a.p, n, -EBADMSG, NULL);
	a.p = realloc(a.p, a.n + 1);
	a.p[a.n] = 0;
	restore_refused(g, t->index, a.p, a.n + 1, -EBADMSG, "bytes after the snapshot");
	a.p[0] ^= 1;
	restore_refused(g, t->index, a.p, a.n, -EBADMSG, "not a state machine snapshot");
	a.p[0] ^= 1;
	a.p[4] = IMEXD_FSM_SNAP_VERSION + 1;
	restore_refused(g, t->index, a.p, a.n, -EPROTO, "unknown snapshot version");
	a.p[4] = IMEXD_FSM_SNAP_VERSION;
	/* Domains changed at later indexes than the snapshot's: refused. */
	restore_refused(g, 3, a.p, a.n, -EBADMSG,
			"generation not in 1..the snapshot's index");

	seed_from_env("restore random bytes");
	for (round = 0; round < rounds; round++) {
		uint8_t *p = calloc(a.n + 1, 1);
		struct blob before = snap(g), after;
		size_t k;
		int err;

		memcpy(p, a.p, a.n);
		if (round % 2) {
			for (k = 1 + rndn(3); k; k--)
				p[rndn((uint32_t)a.n)] ^= (uint8_t)(1u << rndn(8));
			n = a.n;
		} else {
			n = 5 + rndn((uint32_t)a.n - 5);
			for (k = 5; k < n; k++)
				p[k] = (uint8_t)rnd();
		}
		err = imexd_fsm_restore(g, t->index, p, n, NULL);
		after = snap(g);
		if (err) {
			assert_true(err == -EBADMSG || err == -EPROTO || err == -E2BIG);
			assert_same(before, after);
		} else {
			/* Accepted: it is canonical, and g holds exactly it. */
			assert_int_equal(after.n, n);
			assert_memory_equal(after.p, p, n);
		}
		free(before.p);
		free(after.p);
		free(p);
	}
	free(a.p);
	imexd_fsm_free(g);
}

/* A snapshot written by hand, to break one invariant at a time. */
struct raw {
	uint8_t *p;
	size_t n;
};

static void raw_be(struct raw *r, uint64_t v, unsigned int bytes)
{
	unsigned int i;

	r->p = realloc(r->p, r->n + bytes);
	assert_non_null(r->p);
	for (i = 0; i < bytes; i++)
		r->p[r->n++] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

static void raw_bytes(struct raw *r, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		raw_be(r, b[i], 1);
}

static void raw_str(struct raw *r, const char *s)
{
	raw_be(r, strlen(s), 1);
	raw_bytes(r, (const uint8_t *)s, strlen(s));
}

static void raw_node(struct raw *r, const char *name, const uint8_t fab[16],
		     uint32_t part, uint32_t maxch)
{
	uint8_t u[16];

	node_uuid(u, name);
	raw_str(r, name);
	raw_bytes(r, u, 16);
	raw_bytes(r, fab, 16);
	raw_be(r, part, 4);
	raw_be(r, maxch, 4);
}

/* @csv members; @ids channels with mode 0600. */
static void raw_domain(struct raw *r, const char *name, unsigned int uuid,
		       uint64_t gen, const uint8_t fab[16], const char *csv,
		       const uint32_t *ids, uint32_t nids)
{
	struct imexd_member *m;
	uint16_t n = members_of(csv, &m), i;
	uint8_t u[16];
	uint32_t c;

	if (uuid)
		uuid_of(u, uuid);
	else
		memset(u, 0, 16);
	raw_str(r, name);
	raw_bytes(r, u, 16);
	raw_be(r, gen, 8);
	raw_bytes(r, fab, 16);
	raw_be(r, 0, 4);
	raw_be(r, n, 2);
	for (i = 0; i < n; i++) {
		raw_str(r, m[i].name);
		raw_str(r, m[i].addr);
	}
	free(m);
	raw_be(r, nids, 4);
	for (c = 0; c < nids; c++) {
		raw_be(r, ids[c], 4);
		raw_be(r, 1, 4);
		raw_be(r, 2, 4);
		raw_be(r, 0600, 2);
	}
}

/* Nodes a, b (FAB1, 16 channels), x (FAB2), z (none); then @ndom domains. */
static struct raw raw_start(uint32_t ndom)
{
	struct raw r = { NULL, 0 };

	raw_be(&r, IMEXD_FSM_MAGIC, 4);
	raw_be(&r, 1, 1);	/* version 1 (no leaving flag): still read */
	raw_be(&r, 4, 4);
	raw_node(&r, "a", FAB1, 0, 16);
	raw_node(&r, "b", FAB1, 0, 16);
	raw_node(&r, "x", FAB2, 0, 16);
	raw_node(&r, "z", NOFAB, 0, 16);
	raw_be(&r, ndom, 4);
	return r;
}

static void raw_refused(struct imexd_fsm *g, struct raw *r, int err, const char *why)
{
	restore_refused(g, 100000, r->p, r->n, err, why);
	free(r->p);
	r->p = NULL;
	r->n = 0;
}

static void test_restore_refuses_broken_invariants(void **state)
{
	struct imexd_fsm *g = imexd_fsm_new();
	struct raw r;
	unsigned int i;

	(void)state;
	/* The hand-written form is the real one: a valid table restores. */
	r = raw_start(2);
	raw_domain(&r, "d1", 1, 5, FAB1, "a,b", (const uint32_t[]){ 1, 2 }, 2);
	raw_domain(&r, "d2", 2, 6, FAB2, "x", (const uint32_t[]){ 1, 2 }, 2);
	assert_int_equal(imexd_fsm_restore(g, 6, r.p, r.n, NULL), 0);
	assert_int_equal(imexd_fsm_domain_count(g), 2);
	free(r.p);

	r = raw_start(2);
	raw_domain(&r, "d1", 1, 5, FAB1, "a,b", (const uint32_t[]){ 1, 2 }, 2);
	raw_domain(&r, "d2", 2, 6, FAB1, "b", (const uint32_t[]){ 2, 3 }, 2);
	raw_refused(g, &r, -EBADMSG, "a channel in two domains on one node");
	r = raw_start(2);
	raw_domain(&r, "d2", 1, 5, FAB1, "a", NULL, 0);
	raw_domain(&r, "d1", 2, 6, FAB1, "b", NULL, 0);
	raw_refused(g, &r, -EBADMSG, "domains not sorted by name");
	r = raw_start(2);
	raw_domain(&r, "d1", 1, 5, FAB1, "a", NULL, 0);
	raw_domain(&r, "d1", 2, 6, FAB1, "b", NULL, 0);
	raw_refused(g, &r, -EBADMSG, "domains not sorted by name");
	r = raw_start(2);
	raw_domain(&r, "d1", 1, 5, FAB1, "a", NULL, 0);
	raw_domain(&r, "d2", 1, 6, FAB1, "b", NULL, 0);
	raw_refused(g, &r, -EBADMSG, "two domains with one UUID");
	r = raw_start(1);
	raw_domain(&r, "d1", 1, 5, FAB1, "a,q", NULL, 0);
	raw_refused(g, &r, -EBADMSG, "member not in the node table");
	r = raw_start(1);
	raw_domain(&r, "d1", 1, 5, FAB1, "a,x", NULL, 0);
	raw_refused(g, &r, -EBADMSG, "member not in the domain's fabric");
	r = raw_start(1);
	raw_domain(&r, "d1", 1, 5, NOFAB, "z", NULL, 0);
	raw_refused(g, &r, -EBADMSG, "member not in the domain's fabric");
	r = raw_start(1);
	raw_domain(&r, "d1", 1, 5, FAB1, "a", (const uint32_t[]){ 16 }, 1);
	raw_refused(g, &r, -EBADMSG, "channel above a member's max_channels");
	r = raw_start(1);
	raw_domain(&r, "d1", 1, 5, FAB1, "a", (const uint32_t[]){ 3, 2 }, 2);
	raw_refused(g, &r, -EBADMSG, "channel ids not strictly increasing");
	r = raw_start(1);
	raw_domain(&r, "d1", 1, 0, FAB1, "a", NULL, 0);
	raw_refused(g, &r, -EBADMSG, "generation not in 1..the snapshot's index");
	r = raw_start(1);
	raw_domain(&r, "d1", 0, 5, FAB1, "a", NULL, 0);
	raw_refused(g, &r, -EBADMSG, "domain UUID is all-zero");
	r = raw_start(1);
	raw_domain(&r, "d1", 1, 5, FAB1, "a", (const uint32_t[]){ 3 }, 1);
	r.p[r.n - 2] = 0x02;		/* mode 01000 | ... */
	raw_refused(g, &r, -EBADMSG, "channel mode above 0777");
	r = raw_start(2);
	raw_domain(&r, "d0", 1, 5, FAB1, "", NULL, 0);
	raw_domain(&r, "d1", 2, 5, FAB1, "a", NULL, 0);
	raw_refused(g, &r, -EBADMSG, "a domain needs at least one member");

	/* Nodes: sorted, unique, a UUID, max_channels in range, bounded. */
	r = raw_start(0);
	r.n -= 4 + 4 * 42;
	raw_node(&r, "b", FAB1, 0, 16);
	raw_node(&r, "a", FAB1, 0, 16);
	raw_be(&r, 0, 4);
	r.p[8] = 2;
	raw_refused(g, &r, -EBADMSG, "nodes not sorted by name");
	r = raw_start(0);
	r.p[r.n - 4 - 1] = 0;			/* z's max_channels: 0 */
	raw_refused(g, &r, -EBADMSG, "max_channels not in 1..IMEX_CHANNELS_MAX");
	r = raw_start(0);
	memset(r.p + r.n - 4 - 4 - 4 - 16 - 16, 0, 16);	/* z's UUID */
	raw_refused(g, &r, -EBADMSG, "node UUID is all-zero");
	r = raw_start(0);
	r.p[7] = 0x04;
	r.p[8] = 0x01;				/* 1025 nodes */
	raw_refused(g, &r, -E2BIG, "more nodes than IMEXD_FSM_NODES_MAX");

	/* At most IMEX_DOMAINS_MAX domains per node. */
	r = raw_start(IMEX_DOMAINS_MAX + 1);
	for (i = 0; i <= IMEX_DOMAINS_MAX; i++) {
		char name[16];

		snprintf(name, sizeof(name), "j%03u", i);
		raw_domain(&r, name, 100 + i, 5, FAB1, i % 2 ? "a,b" : "a", NULL, 0);
	}
	raw_refused(g, &r, -EBADMSG, "a node in more than IMEX_DOMAINS_MAX domains");
	assert_int_equal(imexd_fsm_domain_count(g), 2);
	imexd_fsm_free(g);
}

/* ---- determinism over random command sequences ------------------------------ */

#define RNODES	9	/* n0..n7 report; n8 never does */
#define RDOMS	16

/* @k distinct ids below @range, increasing. */
static uint32_t rand_ids(uint32_t *ids, uint32_t k, uint32_t range)
{
	uint8_t used[64] = { 0 };
	uint32_t n = 0, id;

	while (n < k) {
		id = rndn(range);
		if (!used[id]) {
			used[id] = 1;
			n++;
		}
	}
	for (id = 0, n = 0; id < range; id++)
		if (used[id])
			ids[n++] = id;
	return n;
}

static struct imexd_cmd random_cmd(const struct imexd_fsm *fsm, unsigned int step)
{
	static const uint32_t maxch[] = { 8, 12, 16 };
	char name[IMEX_NAME_MAX], csv[64];
	uint32_t ids[20], n, i, w = rndn(100);
	const struct imexd_def *d;
	struct imexd_cmd c;

	/* Commands on a domain mostly name one that exists. */
	d = imexd_fsm_domain_count(fsm) && rndn(4) && w >= 40 ?
	    imexd_fsm_domain_at(fsm, rndn((uint32_t)imexd_fsm_domain_count(fsm))) :
	    NULL;
	snprintf(name, sizeof(name), "%s", d ? d->name : "");
	if (!d)
		snprintf(name, sizeof(name), "d%u", rndn(RDOMS));
	d = imexd_fsm_domain(fsm, name);
	if (step < RNODES - 1 || w < 8) {
		uint32_t k = step < RNODES - 1 ? step : rndn(RNODES - 1);
		char node[8];

		snprintf(node, sizeof(node), "n%u", k);
		c = node_cmd(node, k == 7 ? FAB2 : FAB1, k == 6,
			     maxch[rndn(10) ? (k % 3) : rndn(3)]);
		return c;
	}
	if (w < 40) {
		/*
		 * Mostly distinct members of n0..n5, which share a fabric
		 * and partition.
		 */
		uint32_t seen = 0, k;
		size_t m = 0;

		for (i = 0, n = 1 + rndn(4); i < n; i++) {
			do
				k = rndn(8) ? rndn(6) : rndn(RNODES);
			while ((seen & (1u << k)) && rndn(20));
			seen |= 1u << k;
			m += (size_t)snprintf(csv + m, sizeof(csv) - m, "%sn%u",
					      i ? "," : "", k);
		}
		w = rndn(10);
		n = w < 4 ? rand_ids(ids, 1 + rndn(3), 18) : 0;
		c = create_cmd(name, rndn(8) ? 1 + rndn(60000) : 1 + rndn(RDOMS),
			       csv, w >= 4 && w < 9 ? rndn(5) : 0, ids, n);
		return c;
	}
	if (w < 46)
		return delete_cmd(name);
	if (w < 70) {
		n = rndn(2) ? rand_ids(ids, 1 + rndn(3), 18) : 0;
		return alloc_cmd(name, n ? 0 : 1 + rndn(3), ids, n);
	}
	if (w < 85) {
		if (d && d->nchannels && rndn(4)) {
			for (i = 0, n = 0; i < d->nchannels && n < 20; i++)
				if (rndn(2))
					ids[n++] = d->channels[i].id;
			if (!n)
				ids[n++] = d->channels[0].id;
		} else {
			n = rand_ids(ids, 1 + rndn(2), 18);
		}
		return free_cmd(name, ids, n);
	}
	if (d && rndn(5))
		snprintf(csv, sizeof(csv), "%s", d->members[rndn(d->nmembers)].name);
	else
		snprintf(csv, sizeof(csv), "n%u", rndn(RNODES));
	if (w < 93) {
		char with[8];

		snprintf(with, sizeof(with), "n%u", rndn(RNODES));
		return replace_cmd(name, csv, with);
	}
	return evict_cmd(name, csv);
}

static void same_result(const struct imexd_fsm_result *a,
			const struct imexd_fsm_result *b)
{
	assert_int_equal(a->error, b->error);
	assert_string_equal(a->message, b->message);
	assert_true(imexd_def_equal(&a->def, &b->def));
	assert_int_equal(a->nids, b->nids);
	if (a->nids)
		assert_memory_equal(a->ids, b->ids, a->nids * sizeof(*a->ids));
}

/*
 * Three state machines take the same commands: A as built, B through the
 * codec, C from a restore of A's snapshot every 64 steps.  After every
 * step their snapshots are the same bytes, and a refusal left A's as it
 * was.  The restores also re-check every invariant of the table.
 */
static void test_random_sequences_deterministic(void **state)
{
	struct imexd_fsm *a = imexd_fsm_new(), *b = imexd_fsm_new(),
			 *c = imexd_fsm_new();
	unsigned int step, steps = steps_from_env(3000);
	unsigned int done[IMEXD_CMD_TYPE_MAX + 1] = { 0 }, refusals = 0;

	(void)state;
	seed_from_env("random command sequences");
	for (step = 0; step < steps; step++) {
		struct imexd_cmd cmd = random_cmd(a, step), dec;
		struct imexd_fsm_result ra, rb, rc;
		struct blob sa0 = snap(a), sa, sb, sc, e;
		uint64_t index = (uint64_t)step * 3 + 1 + rndn(3);

		if (imexd_cmd_encode(&cmd, &e.p, &e.n, NULL) == 0) {
			assert_int_equal(imexd_cmd_decode(e.p, e.n, &dec, NULL), 0);
			free(e.p);
		} else {
			dec = cmd;	/* shallow: not freed twice */
			dec.type = 0;
		}
		assert_int_equal(imexd_fsm_apply(a, index, &cmd, &ra), 0);
		assert_int_equal(imexd_fsm_apply(b, index, dec.type ? &dec : &cmd,
						 &rb), 0);
		assert_int_equal(imexd_fsm_apply(c, index, &cmd, &rc), 0);
		same_result(&ra, &rb);
		same_result(&ra, &rc);
		sa = snap(a);
		sb = snap(b);
		sc = snap(c);
		assert_same(sa, sb);
		assert_same(sa, sc);
		if (ra.error) {
			refusals++;
			assert_same(sa0, sa);
		} else {
			done[cmd.type]++;
		}
		if (step % 64 == 63) {
			struct blob s2;

			assert_int_equal(imexd_fsm_restore(c, index, sa.p, sa.n, NULL), 0);
			s2 = snap(c);
			assert_same(sa, s2);
			free(s2.p);
		}
		free(sa0.p);
		free(sa.p);
		free(sb.p);
		free(sc.p);
		imexd_fsm_result_free(&ra);
		imexd_fsm_result_free(&rb);
		imexd_fsm_result_free(&rc);
		if (dec.type)
			imexd_cmd_free(&dec);
		imexd_cmd_free(&cmd);
	}
	printf("random command sequences: %u steps, %u refused, applied: "
	       "node_set %u create %u delete %u alloc %u free %u evict %u "
	       "replace %u; "
	       "%zu domains at the end\n", steps, refusals,
	       done[IMEXD_CMD_NODE_SET], done[IMEXD_CMD_DOMAIN_CREATE],
	       done[IMEXD_CMD_DOMAIN_DELETE], done[IMEXD_CMD_CHANNEL_ALLOC],
	       done[IMEXD_CMD_CHANNEL_FREE], done[IMEXD_CMD_MEMBER_EVICT],
	       done[IMEXD_CMD_MEMBER_REPLACE], imexd_fsm_domain_count(a));
	if (steps >= 1000)
		for (step = 1; step <= IMEXD_CMD_TYPE_MAX; step++)
			assert_true(done[step] > 0);
	imexd_fsm_free(a);
	imexd_fsm_free(b);
	imexd_fsm_free(c);
}

/* ---- out of memory: -ENOMEM and nothing changed, at every allocation ---- */

/*
 * Apply @c to @t failing the 1st, 2nd, ... allocation until it goes
 * through: every failure is -ENOMEM with the table and result untouched;
 * then the outcome is the one @ref (which never fails) gets.
 */
static void apply_under_oom(struct tf *t, struct tf *ref, struct imexd_cmd c)
{
	struct imexd_fsm_result r, rr;
	uint64_t index = ++t->index;
	long k;
	int err;

	assert_int_equal(imexd_fsm_apply(ref->fsm, index, &c, &rr), 0);
	ref->index = index;
	for (k = 0;; k++) {
		struct blob before = snap(t->fsm), after;

		arm(k);
		err = imexd_fsm_apply(t->fsm, index, &c, &r);
		disarm();
		after = snap(t->fsm);
		if (err) {
			assert_int_equal(err, -ENOMEM);
			assert_same(before, after);
			assert_int_equal(imexd_fsm_last_index(t->fsm), index - 1);
			assert_null(r.ids);
			assert_null(r.def.members);
			assert_null(r.def.channels);
		}
		free(before.p);
		free(after.p);
		if (!err)
			break;
	}
	same_result(&r, &rr);
	imexd_fsm_result_free(&r);
	imexd_fsm_result_free(&rr);
	imexd_cmd_free(&c);
	{
		struct blob a = snap(t->fsm), b = snap(ref->fsm);

		assert_same(a, b);
		free(a.p);
		free(b.p);
	}
}

static void test_out_of_memory_changes_nothing(void **state)
{
	struct tf t = { imexd_fsm_new(), 0 }, ref = { imexd_fsm_new(), 0 };
	struct imexd_cmd c, d;
	struct blob a, b;
	long k;
	int err;

	(void)state;
	populate(&t);
	populate(&ref);
	apply_under_oom(&t, &ref, node_cmd("new", FAB1, 0, 16));
	apply_under_oom(&t, &ref, create_cmd("k1", 11, "a,b,new", 2, NULL, 0));
	apply_under_oom(&t, &ref, create_cmd("k2", 12, "c,d", 0, (const uint32_t[]){ 13, 14 }, 2));
	apply_under_oom(&t, &ref, create_cmd("k3", 13, "c", 0, (const uint32_t[]){ 13 }, 1));
	apply_under_oom(&t, &ref, alloc_cmd("k1", 3, NULL, 0));
	apply_under_oom(&t, &ref, alloc_cmd("k1", 0, (const uint32_t[]){ 15 }, 1));
	apply_under_oom(&t, &ref, alloc_cmd("k1", 0, (const uint32_t[]){ 9 }, 1));
	apply_under_oom(&t, &ref, free_cmd("k1", (const uint32_t[]){ 15 }, 1));
	apply_under_oom(&t, &ref, replace_cmd("k1", "new", "d"));
	apply_under_oom(&t, &ref, replace_cmd("k1", "d", "new"));
	apply_under_oom(&t, &ref, evict_cmd("k1", "new"));
	apply_under_oom(&t, &ref, delete_cmd("k2"));

	/* Snapshot, restore, encode, decode. */
	a = snap(t.fsm);
	for (k = 0;; k++) {
		arm(k);
		err = imexd_fsm_snapshot(t.fsm, &b.p, &b.n);
		disarm();
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
	}
	assert_same(a, b);
	free(b.p);
	for (k = 0;; k++) {
		arm(k);
		err = imexd_fsm_restore(ref.fsm, t.index, a.p, a.n, NULL);
		disarm();
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_int_equal(imexd_fsm_last_index(ref.fsm), ref.index);
	}
	assert_true(k > 0);
	free(a.p);
	c = create_cmd("k9", 19, "a,b,c", 0, (const uint32_t[]){ 1, 2 }, 2);
	for (k = 0;; k++) {
		arm(k);
		err = imexd_cmd_encode(&c, &a.p, &a.n, NULL);
		disarm();
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
	}
	for (k = 0;; k++) {
		arm(k);
		err = imexd_cmd_decode(a.p, a.n, &d, NULL);
		disarm();
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_int_equal(d.type, 0);
		assert_null(d.u.create.members);
	}
	assert_true(k >= 2);
	imexd_cmd_free(&d);
	imexd_cmd_free(&c);
	free(a.p);
	imexd_fsm_free(t.fsm);
	imexd_fsm_free(ref.fsm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codec_round_trip),
		cmocka_unit_test(test_codec_truncations_refused),
		cmocka_unit_test(test_codec_version_and_type),
		cmocka_unit_test(test_codec_refuses_bad_fields),
		cmocka_unit_test(test_codec_bounds),
		cmocka_unit_test(test_codec_random_bytes),
		cmocka_unit_test_setup_teardown(test_node_set, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_node_leave_marks_then_forgets,
						tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_nodes_bound, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_create_by_count_lowest_free_everywhere,
						tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_create_repeated, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_create_refusals, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_members_bound, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_channels_per_command_bound,
						tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_domains_per_node_bound,
						tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_alloc_and_free, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_evict, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_replace, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_replace_domains_per_node_bound,
						tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_delete, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_queries, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_index_must_increase,
						tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_messages_fit_longest_names,
						tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_round_trip,
						tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_restore_refuses_bad_snapshots,
						tf_setup, tf_teardown),
		cmocka_unit_test(test_restore_refuses_broken_invariants),
		cmocka_unit_test(test_random_sequences_deterministic),
		cmocka_unit_test(test_out_of_memory_changes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
