// SPDX-License-Identifier: GPL-2.0
/*
 * test_fsm: snapshot and restore, and the snapshots restore refuses (bad
 * bytes, broken invariants).
 */
#include "test_fsm.h"

/* ---- snapshot and restore ------------------------------------------------- */

void test_snapshot_round_trip(void **state)
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

void test_restore_refuses_bad_snapshots(void **state)
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

void test_restore_refuses_broken_invariants(void **state)
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

