// SPDX-License-Identifier: GPL-2.0
/*
 * The replicated state machine (imexd/fsm.h): its command codec, what each
 * command does and refuses (a refusal changes nothing: the snapshot before
 * and after are the same bytes), every bound, snapshot/restore, and
 * determinism over random command sequences.
 *
 * Random tests print their seed; IMEXD_FSM_SEED=N replays one,
 * IMEXD_FSM_STEPS=N sets the length of the random sequences.
 *
 * One program: this file holds the fixture, the command builders and checks
 * the parts share (test_fsm.h), and main(); the tests are in
 * test_fsm_codec.c, test_fsm_cmd.c, test_fsm_snap.c and test_fsm_random.c.
 */
#include "test_fsm.h"

/* ---- helpers -------------------------------------------------------------- */

uint64_t seed_from_env(const char *what)
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

unsigned int steps_from_env(unsigned int dflt)
{
	const char *s = getenv("IMEXD_FSM_STEPS");

	return s ? (unsigned int)strtoul(s, NULL, 0) : dflt;
}

const uint8_t FAB1[16] = { 0xfa, 0xb1, 1 };
const uint8_t FAB2[16] = { 0xfa, 0xb2, 2 };
const uint8_t NOFAB[16];

void uuid_of(uint8_t u[16], unsigned int v)
{
	memset(u, 0, 16);
	u[0] = 0xd0;
	u[14] = (uint8_t)(v >> 8);
	u[15] = (uint8_t)v;
}

/* A node UUID from its name, so re-reports are identical. */
void node_uuid(uint8_t u[16], const char *name)
{
	size_t i;

	memset(u, 0, 16);
	u[0] = 0x70;
	for (i = 0; name[i]; i++)
		u[1 + i % 15] ^= (uint8_t)(name[i] * (i + 1));
}

struct imexd_cmd node_cmd(const char *name, const uint8_t fab[16],
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
uint16_t members_of(const char *csv, struct imexd_member **out)
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

struct imexd_cmd create_cmd(const char *name, unsigned int uuid,
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

struct imexd_cmd alloc_cmd(const char *name, uint32_t count,
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

struct imexd_cmd free_cmd(const char *name, const uint32_t *ids,
			  uint32_t nids)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_CHANNEL_FREE };

	snprintf(c.u.free.name, sizeof(c.u.free.name), "%s", name);
	c.u.free.ids = ids_dup(ids, nids);
	c.u.free.nids = nids;
	return c;
}

struct imexd_cmd delete_cmd(const char *name)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_DOMAIN_DELETE };

	snprintf(c.u.del.name, sizeof(c.u.del.name), "%s", name);
	return c;
}

struct imexd_cmd evict_cmd(const char *name, const char *member)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_MEMBER_EVICT };

	snprintf(c.u.evict.name, sizeof(c.u.evict.name), "%s", name);
	snprintf(c.u.evict.member, sizeof(c.u.evict.member), "%s", member);
	return c;
}

struct imexd_cmd replace_cmd(const char *name, const char *member,
			     const char *with)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_MEMBER_REPLACE };

	snprintf(c.u.replace.name, sizeof(c.u.replace.name), "%s", name);
	snprintf(c.u.replace.member, sizeof(c.u.replace.member), "%s", member);
	snprintf(c.u.replace.with, sizeof(c.u.replace.with), "%s", with);
	return c;
}


struct blob snap(const struct imexd_fsm *fsm)
{
	struct blob b;

	assert_int_equal(imexd_fsm_snapshot(fsm, &b.p, &b.n), 0);
	return b;
}

void assert_same(struct blob a, struct blob b)
{
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.p, b.p, a.n);
}


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
void apply(struct tf *t, struct imexd_cmd *c, struct imexd_fsm_result *r)
{
	assert_int_equal(imexd_fsm_apply(t->fsm, ++t->index, c, r), 0);
	imexd_cmd_free(c);
}

void ok(struct tf *t, struct imexd_cmd c)
{
	struct imexd_fsm_result r;

	apply(t, &c, &r);
	if (r.error)
		fail_msg("refused (%d): %s", r.error, r.message);
	imexd_fsm_result_free(&r);
}

/* @c is refused with @err and a message containing @text, changing nothing. */
void refused(struct tf *t, struct imexd_cmd c, int err, const char *text)
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
void cluster(struct tf *t)
{
	ok(t, node_cmd("a", FAB1, 0, 16));
	ok(t, node_cmd("b", FAB1, 0, 16));
	ok(t, node_cmd("c", FAB1, 0, 16));
	ok(t, node_cmd("d", FAB1, 0, 16));
	ok(t, node_cmd("x", FAB2, 0, 16));
	ok(t, node_cmd("z", NOFAB, 0, 16));
}

void assert_channels(const struct imexd_def *d, const char *want)
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


struct blob encode(const struct imexd_cmd *c)
{
	const char *why = NULL;
	struct blob b;
	int err = imexd_cmd_encode(c, &b.p, &b.n, &why);

	if (err)
		fail_msg("encode: %d %s", err, why ? why : "");
	return b;
}

void populate(struct tf *t)
{
	cluster(t);
	ok(t, create_cmd("j1", 1, "a,b", 3, NULL, 0));
	ok(t, create_cmd("j2", 2, "c,b,d", 0, (const uint32_t[]){ 7, 9 }, 2));
	ok(t, create_cmd("j3", 3, "x", 2, NULL, 0));
	ok(t, alloc_cmd("j1", 0, (const uint32_t[]){ 12 }, 1));
	ok(t, evict_cmd("j2", "d"));
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
