// SPDX-License-Identifier: GPL-2.0
/*
 * raftwire: round trips of every libraft message, every truncation and
 * every single-byte change of valid encodings, seeded random input
 * (IMEXD_RAFTWIRE_SEED=<n> replays a run; the seed is printed), each bound,
 * each validity rule, allocation failures, and the ownership contract
 * against a real libraft follower driven with raft_step().
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "raftwire.h"

#define FROM		7
#define FROM_ADDR	"n7"

/* ---- building messages ---------------------------------------------------- */

static void conf_make(struct raft_configuration *c, unsigned n,
		      size_t addr_len)
{
	char addr[IMEXD_RAFTWIRE_ADDR_MAX + 2];
	unsigned i;

	raft_configuration_init(c);
	for (i = 0; i < n; i++) {
		int len = snprintf(addr, sizeof(addr), "n%u", i + 1);

		if (addr_len > (size_t)len) {
			memset(addr + len, 'x', addr_len - (size_t)len);
			addr[addr_len] = '\0';
		}
		assert_int_equal(raft_configuration_add(c, i + 1 + (i % 3) * 1000,
							addr, (int)(i % 3)), 0);
	}
}

static void *dup_raft(const void *p, size_t n)
{
	void *q = raft_malloc(n ? n : 1);

	assert_non_null(q);
	if (n)
		memcpy(q, p, n);
	return q;
}

/*
 * Entries in one batch, like libraft's receivers: @terms[i] and @types[i];
 * CHANGE entries get a configuration of 3 servers, the rest @len bytes.
 */
static void entries_make(struct raft_append_entries *a, unsigned n,
			 const raft_term *terms, const int *types, size_t len)
{
	struct raft_configuration c;
	struct raft_buffer enc;
	size_t total = 0, at = 0;
	unsigned i;
	uint8_t *b;

	conf_make(&c, 3, 0);
	assert_int_equal(raft_configuration_encode(&c, &enc), 0);
	raft_configuration_close(&c);
	for (i = 0; i < n; i++)
		total += types[i] == RAFT_CHANGE ? enc.len : len;
	a->entries = raft_calloc(n, sizeof(*a->entries));
	b = raft_malloc(total ? total : 1);
	assert_non_null(a->entries);
	assert_non_null(b);
	a->n_entries = n;
	for (i = 0; i < n; i++) {
		struct raft_entry *e = &a->entries[i];

		e->term = terms[i];
		e->type = (enum raft_entry_type)types[i];
		e->batch = b;
		e->buf.base = b + at;
		e->buf.len = types[i] == RAFT_CHANGE ? enc.len : len;
		if (types[i] == RAFT_CHANGE)
			memcpy(b + at, enc.base, enc.len);
		else
			memset(b + at, (int)(0x40 + i), len);
		at += e->buf.len;
	}
	raft_free(enc.base);
}

enum {
	S_RV, S_RV_PRE, S_RVR, S_AE_HEARTBEAT, S_AE, S_AE_EMPTY, S_AER,
	S_IS, S_IS_EMPTY, S_TN, S_COUNT
};

/* Sample @which: a valid message with non-trivial fields. */
static void sample(int which, struct raft_message *m)
{
	static const raft_term terms[] = { 3, 4, 4, 5 };
	static const int types[] = { RAFT_COMMAND, RAFT_CHANGE, RAFT_BARRIER,
				     RAFT_COMMAND };
	static const int empty_types[] = { RAFT_COMMAND, RAFT_COMMAND };

	memset(m, 0, sizeof(*m));
	switch (which) {
	case S_RV:
	case S_RV_PRE:
		m->type = RAFT_REQUEST_VOTE;
		m->request_vote.version = IMEXD_RAFTWIRE_V_REQUEST_VOTE;
		m->request_vote.term = 0x0102030405060708ULL;
		m->request_vote.candidate_id = FROM;
		m->request_vote.last_log_index = 0x1112131415161718ULL;
		m->request_vote.last_log_term = 0x0102030405060700ULL;
		m->request_vote.disrupt_leader = which == S_RV;
		m->request_vote.pre_vote = which == S_RV_PRE;
		break;
	case S_RVR:
		m->type = RAFT_REQUEST_VOTE_RESULT;
		m->request_vote_result.version =
			IMEXD_RAFTWIRE_V_REQUEST_VOTE_RESULT;
		m->request_vote_result.term = 77;
		m->request_vote_result.vote_granted = true;
		m->request_vote_result.pre_vote = true;
		m->request_vote_result.features = 1;
		m->request_vote_result.capacity = 0xbeef;
		break;
	case S_AE_HEARTBEAT:
	case S_AE:
	case S_AE_EMPTY:
		m->type = RAFT_APPEND_ENTRIES;
		m->append_entries.version = IMEXD_RAFTWIRE_V_APPEND_ENTRIES;
		m->append_entries.term = 5;
		m->append_entries.prev_log_index = 41;
		m->append_entries.prev_log_term = 3;
		m->append_entries.leader_commit = 43;
		if (which == S_AE)
			entries_make(&m->append_entries, 4, terms, types, 13);
		else if (which == S_AE_EMPTY)
			entries_make(&m->append_entries, 2, terms, empty_types, 0);
		break;
	case S_AER:
		m->type = RAFT_APPEND_ENTRIES_RESULT;
		m->append_entries_result.version =
			IMEXD_RAFTWIRE_V_APPEND_ENTRIES_RESULT;
		m->append_entries_result.term = 9;
		m->append_entries_result.rejected = 100;
		m->append_entries_result.last_log_index = 99;
		m->append_entries_result.features = 1;
		m->append_entries_result.capacity = 4242;
		break;
	case S_IS:
	case S_IS_EMPTY:
		m->type = RAFT_INSTALL_SNAPSHOT;
		m->install_snapshot.version = IMEXD_RAFTWIRE_V_INSTALL_SNAPSHOT;
		m->install_snapshot.term = 12;
		m->install_snapshot.last_index = 1000;
		m->install_snapshot.last_term = 11;
		m->install_snapshot.conf_index = 998;
		conf_make(&m->install_snapshot.conf, which == S_IS ? 5 : 1, 0);
		m->install_snapshot.data.len = which == S_IS ? 37 : 0;
		m->install_snapshot.data.base =
			dup_raft("the snapshot of the domain table....", 37);
		break;
	case S_TN:
		m->type = RAFT_TIMEOUT_NOW;
		m->timeout_now.version = IMEXD_RAFTWIRE_V_TIMEOUT_NOW;
		m->timeout_now.term = 6;
		m->timeout_now.last_log_index = 60;
		m->timeout_now.last_log_term = 5;
		break;
	}
}

static void encode_ok(const struct raft_message *m, uint8_t **buf, size_t *len)
{
	assert_int_equal(imexd_raftwire_encode(m, buf, len), 0);
	assert_true(*len <= IMEXD_RAFTWIRE_FRAME_MAX);
}

static void sample_enc(int which, uint8_t **buf, size_t *len)
{
	struct raft_message m;

	sample(which, &m);
	encode_ok(&m, buf, len);
	imexd_raftwire_free(&m);
}

static int decode(const uint8_t *buf, size_t len, struct raft_message *m,
		  const char **why)
{
	return imexd_raftwire_decode(buf, len, FROM, FROM_ADDR, m, why);
}

/* ---- comparing ---------------------------------------------------------- */

static void assert_conf_equal(const struct raft_configuration *a,
			      const struct raft_configuration *b)
{
	unsigned i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		assert_int_equal(a->servers[i].id, b->servers[i].id);
		assert_int_equal(a->servers[i].role, b->servers[i].role);
		assert_string_equal(a->servers[i].address,
				    b->servers[i].address);
	}
}

static void assert_msg_equal(const struct raft_message *a,
			     const struct raft_message *b)
{
	const struct raft_append_entries *x = &a->append_entries;
	const struct raft_append_entries *y = &b->append_entries;
	unsigned i;

	assert_int_equal(a->type, b->type);
	switch (a->type) {
	case RAFT_REQUEST_VOTE:
		assert_int_equal(a->request_vote.version, b->request_vote.version);
		assert_true(a->request_vote.term == b->request_vote.term);
		assert_true(a->request_vote.candidate_id ==
			    b->request_vote.candidate_id);
		assert_true(a->request_vote.last_log_index ==
			    b->request_vote.last_log_index);
		assert_true(a->request_vote.last_log_term ==
			    b->request_vote.last_log_term);
		assert_int_equal(a->request_vote.disrupt_leader,
				 b->request_vote.disrupt_leader);
		assert_int_equal(a->request_vote.pre_vote,
				 b->request_vote.pre_vote);
		break;
	case RAFT_REQUEST_VOTE_RESULT:
		assert_memory_equal(&a->request_vote_result.term,
				    &b->request_vote_result.term, 8);
		assert_int_equal(a->request_vote_result.version,
				 b->request_vote_result.version);
		assert_int_equal(a->request_vote_result.vote_granted,
				 b->request_vote_result.vote_granted);
		assert_int_equal(a->request_vote_result.pre_vote,
				 b->request_vote_result.pre_vote);
		assert_int_equal(a->request_vote_result.features,
				 b->request_vote_result.features);
		assert_int_equal(a->request_vote_result.capacity,
				 b->request_vote_result.capacity);
		break;
	case RAFT_APPEND_ENTRIES:
		assert_int_equal(x->version, y->version);
		assert_true(x->term == y->term);
		assert_true(x->prev_log_index == y->prev_log_index);
		assert_true(x->prev_log_term == y->prev_log_term);
		assert_true(x->leader_commit == y->leader_commit);
		assert_int_equal(x->n_entries, y->n_entries);
		for (i = 0; i < x->n_entries; i++) {
			assert_true(x->entries[i].term == y->entries[i].term);
			assert_int_equal(x->entries[i].type, y->entries[i].type);
			assert_int_equal(x->entries[i].buf.len,
					 y->entries[i].buf.len);
			if (x->entries[i].buf.len)
				assert_memory_equal(x->entries[i].buf.base,
						    y->entries[i].buf.base,
						    x->entries[i].buf.len);
		}
		break;
	case RAFT_APPEND_ENTRIES_RESULT:
		assert_int_equal(a->append_entries_result.version,
				 b->append_entries_result.version);
		assert_true(a->append_entries_result.term ==
			    b->append_entries_result.term);
		assert_true(a->append_entries_result.rejected ==
			    b->append_entries_result.rejected);
		assert_true(a->append_entries_result.last_log_index ==
			    b->append_entries_result.last_log_index);
		assert_int_equal(a->append_entries_result.features,
				 b->append_entries_result.features);
		assert_int_equal(a->append_entries_result.capacity,
				 b->append_entries_result.capacity);
		break;
	case RAFT_INSTALL_SNAPSHOT:
		assert_int_equal(a->install_snapshot.version,
				 b->install_snapshot.version);
		assert_true(a->install_snapshot.term == b->install_snapshot.term);
		assert_true(a->install_snapshot.last_index ==
			    b->install_snapshot.last_index);
		assert_true(a->install_snapshot.last_term ==
			    b->install_snapshot.last_term);
		assert_true(a->install_snapshot.conf_index ==
			    b->install_snapshot.conf_index);
		assert_conf_equal(&a->install_snapshot.conf,
				  &b->install_snapshot.conf);
		assert_int_equal(a->install_snapshot.data.len,
				 b->install_snapshot.data.len);
		if (a->install_snapshot.data.len)
			assert_memory_equal(a->install_snapshot.data.base,
					    b->install_snapshot.data.base,
					    a->install_snapshot.data.len);
		break;
	case RAFT_TIMEOUT_NOW:
		assert_int_equal(a->timeout_now.version, b->timeout_now.version);
		assert_true(a->timeout_now.term == b->timeout_now.term);
		assert_true(a->timeout_now.last_log_index ==
			    b->timeout_now.last_log_index);
		assert_true(a->timeout_now.last_log_term ==
			    b->timeout_now.last_log_term);
		break;
	}
}

/*
 * A decoded message is valid: it re-encodes, and that decodes to the same
 * message and the same bytes.
 */
static void assert_valid(const struct raft_message *m, const uint8_t *buf,
			 size_t len)
{
	struct raft_message again;
	uint8_t *enc;
	size_t n;

	encode_ok(m, &enc, &n);
	assert_int_equal(n, len);
	assert_memory_equal(enc, buf, len);
	assert_int_equal(decode(enc, n, &again, NULL), 0);
	assert_msg_equal(m, &again);
	imexd_raftwire_free(&again);
	free(enc);
}

/* ---- round trips ---------------------------------------------------------- */

static void test_round_trip_every_type(void **state)
{
	int which;

	(void)state;
	for (which = 0; which < S_COUNT; which++) {
		struct raft_message m, d;
		const char *why = "unset";
		uint8_t *buf;
		size_t len;
		unsigned i;

		sample(which, &m);
		encode_ok(&m, &buf, &len);
		assert_int_equal(decode(buf, len, &d, &why), 0);
		assert_null(why);
		assert_msg_equal(&m, &d);
		assert_true(d.server_id == FROM);
		assert_string_equal(d.server_address, FROM_ADDR);
		/* One batch for all entries, each entry 8-byte aligned in it. */
		for (i = 0; d.type == RAFT_APPEND_ENTRIES &&
			    i < d.append_entries.n_entries; i++) {
			const struct raft_entry *e = &d.append_entries.entries[i];

			assert_non_null(e->batch);
			assert_ptr_equal(e->batch,
					 d.append_entries.entries[0].batch);
			assert_non_null(e->buf.base);
			assert_int_equal(((uintptr_t)e->buf.base -
					  (uintptr_t)e->batch) % 8, 0);
		}
		if (d.type == RAFT_INSTALL_SNAPSHOT)
			assert_non_null(d.install_snapshot.data.base);
		assert_valid(&d, buf, len);
		imexd_raftwire_free(&d);
		imexd_raftwire_free(&m);
		free(buf);
	}
}

/* libraft's own encoding of a configuration is what a CHANGE entry holds. */
static void test_conf_check_accepts_libraft_encoding(void **state)
{
	static const unsigned sizes[] = { 1, 2, 3, 7, IMEXD_RAFT_SERVERS_MAX };
	unsigned k;

	(void)state;
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct raft_configuration c;
		struct raft_buffer enc;

		conf_make(&c, sizes[k], k == 4 ? 0 : IMEXD_RAFTWIRE_ADDR_MAX);
		assert_int_equal(raft_configuration_encode(&c, &enc), 0);
		assert_int_equal(imexd_raftwire_conf_check(enc.base, enc.len,
							   NULL), 0);
		raft_free(enc.base);
		raft_configuration_close(&c);
	}
}

/*
 * Every single-byte change of libraft's configuration encoding: refused by
 * conf_check, or accepted and then decoded by libraft itself to a
 * configuration with the same servers count (libraft reads it unbounded).
 */
static void test_conf_check_byte_changes(void **state)
{
	static const uint8_t deltas[] = { 0x01, 0x20, 0x80, 0xff };
	struct raft_configuration c;
	struct raft_buffer enc;
	unsigned accepted = 0, refused = 0;
	size_t i, k;

	(void)state;
	conf_make(&c, 4, 0);
	assert_int_equal(raft_configuration_encode(&c, &enc), 0);
	raft_configuration_close(&c);
	for (i = 0; i < enc.len; i++) {
		for (k = 0; k < sizeof(deltas); k++) {
			uint8_t *p = enc.base;
			struct raft_configuration d;

			p[i] ^= deltas[k];
			if (imexd_raftwire_conf_check(enc.base, enc.len,
						      NULL)) {
				refused++;
			} else {
				accepted++;
				assert_int_equal(raft_configuration_decode(&enc, &d), 0);
				assert_int_equal(d.n, 4);
				raft_configuration_close(&d);
			}
			p[i] ^= deltas[k];
		}
		/* Every truncation is refused too. */
		assert_int_not_equal(imexd_raftwire_conf_check(enc.base, i,
							       NULL), 0);
	}
	print_message("configuration byte changes: %u refused, %u accepted\n",
		      refused, accepted);
	raft_free(enc.base);
}

/* ---- hostile input -------------------------------------------------------- */

static void test_every_truncation_refused(void **state)
{
	unsigned total = 0;
	int which;

	(void)state;
	for (which = 0; which < S_COUNT; which++) {
		uint8_t *buf;
		size_t len, n;

		sample_enc(which, &buf, &len);
		for (n = 0; n < len; n++) {
			struct raft_message d;
			uint8_t *copy = malloc(n ? n : 1);

			assert_non_null(copy);
			memcpy(copy, buf, n);
			/* An exact-size copy: ASan sees any read past it. */
			assert_int_not_equal(decode(copy, n, &d, NULL), 0);
			free(copy);
			total++;
		}
		free(buf);
	}
	print_message("truncations refused: %u\n", total);
}

/*
 * Every byte of every sample, changed to several values: refused, or a
 * valid message (re-encodes to exactly the changed bytes).
 */
static void test_every_byte_change_refused_or_valid(void **state)
{
	unsigned accepted = 0, refused = 0;
	int which;

	(void)state;
	for (which = 0; which < S_COUNT; which++) {
		uint8_t *buf;
		size_t len, i;

		sample_enc(which, &buf, &len);
		for (i = 0; i < len; i++) {
			const uint8_t orig = buf[i];
			const uint8_t vals[] = {
				(uint8_t)(orig ^ 0x01), (uint8_t)(orig ^ 0x80),
				(uint8_t)(orig + 1), (uint8_t)(orig - 1),
				0x00, 0xff, 0x20,
			};
			size_t k;

			for (k = 0; k < sizeof(vals); k++) {
				struct raft_message d;

				if (vals[k] == orig)
					continue;
				buf[i] = vals[k];
				if (decode(buf, len, &d, NULL)) {
					refused++;
				} else {
					accepted++;
					assert_valid(&d, buf, len);
					imexd_raftwire_free(&d);
				}
			}
			buf[i] = orig;
		}
		free(buf);
	}
	print_message("byte changes: %u refused, %u decoded to valid messages\n",
		      refused, accepted);
	assert_true(refused > 0 && accepted > 0);
}

static unsigned long long rnd_state;

static unsigned rnd(void)
{
	/* xorshift64*: the same seed gives the same run everywhere. */
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return (unsigned)((rnd_state * 2685821657736338717ULL) >> 32);
}

static void test_random_bytes_never_crash(void **state)
{
	const char *env = getenv("IMEXD_RAFTWIRE_SEED");
	unsigned long long seed;
	unsigned accepted = 0, i;
	uint8_t *samples[S_COUNT];
	size_t lens[S_COUNT];
	int which;

	(void)state;
	seed = env ? strtoull(env, NULL, 0) : (unsigned long long)time(NULL);
	print_message("random input: seed %llu (IMEXD_RAFTWIRE_SEED=%llu replays it)\n",
		      seed, seed);
	rnd_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (which = 0; which < S_COUNT; which++)
		sample_enc(which, &samples[which], &lens[which]);
	for (i = 0; i < 100000; i++) {
		struct raft_message d;
		size_t len, k;
		uint8_t *buf;

		if (i % 2) {
			/* Pure noise, mostly with a plausible header. */
			len = rnd() % 320;
			buf = malloc(len ? len : 1);
			assert_non_null(buf);
			for (k = 0; k < len; k++)
				buf[k] = (uint8_t)rnd();
			if (len >= 4 && rnd() % 4) {
				buf[0] = IMEXD_RAFTWIRE_VERSION;
				buf[1] = (uint8_t)(1 + rnd() % 6);
				buf[2] = (uint8_t)(rnd() % 3);
				buf[3] = 0;
			}
		} else {
			/* A sample with a few random changes, cut or extended. */
			which = (int)(rnd() % S_COUNT);
			len = lens[which];
			if (rnd() % 3 == 0)
				len = rnd() % (len + 16);
			buf = calloc(1, len ? len : 1);
			assert_non_null(buf);
			memcpy(buf, samples[which],
			       len < lens[which] ? len : lens[which]);
			for (k = rnd() % 4; len && k > 0; k--)
				buf[rnd() % len] = (uint8_t)rnd();
		}
		if (!decode(buf, len, &d, NULL)) {
			accepted++;
			assert_valid(&d, buf, len);
			imexd_raftwire_free(&d);
		}
		free(buf);
	}
	for (which = 0; which < S_COUNT; which++)
		free(samples[which]);
	print_message("random input: 100000 inputs, %u decoded to valid messages\n",
		      accepted);
}

/* ---- bounds --------------------------------------------------------------- */

static void put_be(uint8_t *p, uint64_t v, unsigned bytes)
{
	while (bytes--) {
		p[bytes] = (uint8_t)v;
		v >>= 8;
	}
}

/* @n entries of @len bytes each, terms all 5. */
static void append_of(struct raft_message *m, unsigned n, size_t len)
{
	raft_term *terms = calloc(n, sizeof(*terms));
	int *types = calloc(n, sizeof(*types));
	unsigned i;

	assert_non_null(terms);
	assert_non_null(types);
	for (i = 0; i < n; i++) {
		terms[i] = 5;
		types[i] = RAFT_COMMAND;
	}
	sample(S_AE_HEARTBEAT, m);
	entries_make(&m->append_entries, n, terms, types, len);
	free(terms);
	free(types);
}

/* Encodes and round-trips at the bound; one above, -E2BIG both ways. */
static void assert_round_trips(const struct raft_message *m)
{
	struct raft_message d;
	uint8_t *buf;
	size_t len;

	encode_ok(m, &buf, &len);
	assert_int_equal(decode(buf, len, &d, NULL), 0);
	assert_msg_equal(m, &d);
	imexd_raftwire_free(&d);
	free(buf);
}

static void test_entry_bounds(void **state)
{
	struct raft_message m, d;
	const char *why;
	uint8_t *buf;
	size_t len;

	(void)state;
	/* Entries per message. */
	append_of(&m, IMEXD_RAFTWIRE_ENTRIES_MAX, 3);
	assert_int_equal(imexd_raftwire_entries_fit(m.append_entries.entries,
						    IMEXD_RAFTWIRE_ENTRIES_MAX),
			 IMEXD_RAFTWIRE_ENTRIES_MAX);
	assert_round_trips(&m);
	encode_ok(&m, &buf, &len);
	imexd_raftwire_free(&m);
	put_be(buf + 36, IMEXD_RAFTWIRE_ENTRIES_MAX + 1, 4);
	assert_int_equal(decode(buf, len, &d, &why), -E2BIG);
	free(buf);
	append_of(&m, IMEXD_RAFTWIRE_ENTRIES_MAX + 1, 3);
	assert_int_equal(imexd_raftwire_encode(&m, &buf, &len), -E2BIG);
	assert_int_equal(imexd_raftwire_entries_fit(m.append_entries.entries,
						    m.append_entries.n_entries),
			 IMEXD_RAFTWIRE_ENTRIES_MAX);
	imexd_raftwire_free(&m);

	/* Bytes per entry. */
	append_of(&m, 1, IMEXD_RAFTWIRE_ENTRY_MAX);
	assert_round_trips(&m);
	encode_ok(&m, &buf, &len);
	imexd_raftwire_free(&m);
	put_be(buf + 40 + 9, IMEXD_RAFTWIRE_ENTRY_MAX + 1, 4);
	assert_int_equal(decode(buf, len, &d, NULL), -E2BIG);
	free(buf);
	append_of(&m, 1, IMEXD_RAFTWIRE_ENTRY_MAX + 1);
	assert_int_equal(imexd_raftwire_encode(&m, &buf, &len), -E2BIG);
	assert_int_equal(imexd_raftwire_entries_fit(m.append_entries.entries, 1), 0);
	imexd_raftwire_free(&m);

	/* All entries' bytes. */
	append_of(&m, IMEXD_RAFTWIRE_APPEND_MAX / IMEXD_RAFTWIRE_ENTRY_MAX,
		  IMEXD_RAFTWIRE_ENTRY_MAX);
	assert_round_trips(&m);
	imexd_raftwire_free(&m);
	append_of(&m, IMEXD_RAFTWIRE_APPEND_MAX / IMEXD_RAFTWIRE_ENTRY_MAX + 1,
		  IMEXD_RAFTWIRE_ENTRY_MAX);
	assert_int_equal(imexd_raftwire_encode(&m, &buf, &len), -E2BIG);
	assert_int_equal(imexd_raftwire_entries_fit(m.append_entries.entries,
						    m.append_entries.n_entries),
			 IMEXD_RAFTWIRE_APPEND_MAX / IMEXD_RAFTWIRE_ENTRY_MAX);
	imexd_raftwire_free(&m);
}

static void test_configuration_bounds(void **state)
{
	struct raft_message m, d;
	struct raft_configuration c;
	struct raft_buffer enc;
	uint8_t *buf;
	size_t len;

	(void)state;
	/* Servers: IMEXD_RAFT_SERVERS_MAX with the longest addresses. */
	sample(S_IS_EMPTY, &m);
	raft_configuration_close(&m.install_snapshot.conf);
	conf_make(&m.install_snapshot.conf, IMEXD_RAFT_SERVERS_MAX,
		  IMEXD_RAFTWIRE_ADDR_MAX);
	assert_round_trips(&m);
	encode_ok(&m, &buf, &len);
	put_be(buf + 36, IMEXD_RAFT_SERVERS_MAX + 1, 2);
	assert_int_equal(decode(buf, len, &d, NULL), -E2BIG);
	free(buf);
	assert_int_equal(raft_configuration_add(&m.install_snapshot.conf, 99999,
						"one-too-many", RAFT_SPARE), 0);
	assert_int_equal(imexd_raftwire_encode(&m, &buf, &len), -E2BIG);
	imexd_raftwire_free(&m);

	/* An address one byte too long (the wire cannot even say it). */
	sample(S_IS_EMPTY, &m);
	raft_configuration_close(&m.install_snapshot.conf);
	conf_make(&m.install_snapshot.conf, 2, IMEXD_RAFTWIRE_ADDR_MAX + 1);
	assert_int_equal(imexd_raftwire_encode(&m, &buf, &len), -E2BIG);
	imexd_raftwire_free(&m);

	/* A CHANGE entry naming too many servers. */
	conf_make(&c, IMEXD_RAFT_SERVERS_MAX + 1, 0);
	assert_int_equal(raft_configuration_encode(&c, &enc), 0);
	assert_int_equal(imexd_raftwire_conf_check(enc.base, enc.len, NULL),
			 -E2BIG);
	raft_free(enc.base);
	raft_configuration_close(&c);
}

static void test_snapshot_and_frame_bounds(void **state)
{
	static uint8_t small[8];
	struct raft_message m, d;
	uint8_t *buf;
	size_t len;

	(void)state;
	sample(S_IS_EMPTY, &m);
	raft_free(m.install_snapshot.data.base);
	m.install_snapshot.data.len = IMEXD_RAFTWIRE_SNAPSHOT_MAX;
	m.install_snapshot.data.base = raft_calloc(1, IMEXD_RAFTWIRE_SNAPSHOT_MAX);
	assert_non_null(m.install_snapshot.data.base);
	assert_round_trips(&m);
	encode_ok(&m, &buf, &len);
	imexd_raftwire_free(&m);
	/* Data length field: the u32 before the data. */
	put_be(buf + len - IMEXD_RAFTWIRE_SNAPSHOT_MAX - 4,
	       IMEXD_RAFTWIRE_SNAPSHOT_MAX + 1, 4);
	assert_int_equal(decode(buf, len, &d, NULL), -E2BIG);
	free(buf);

	/* Refused before the data is read: a small buffer stands in. */
	sample(S_IS_EMPTY, &m);
	raft_free(m.install_snapshot.data.base);
	m.install_snapshot.data.base = small;
	m.install_snapshot.data.len = IMEXD_RAFTWIRE_SNAPSHOT_MAX + 1;
	assert_int_equal(imexd_raftwire_encode(&m, &buf, &len), -E2BIG);
	m.install_snapshot.data.base = NULL;
	imexd_raftwire_free(&m);

	/* A frame above IMEXD_RAFTWIRE_FRAME_MAX is refused outright. */
	buf = calloc(1, IMEXD_RAFTWIRE_FRAME_MAX + 1);
	assert_non_null(buf);
	buf[0] = IMEXD_RAFTWIRE_VERSION;
	buf[1] = RAFT_INSTALL_SNAPSHOT;
	assert_int_equal(decode(buf, IMEXD_RAFTWIRE_FRAME_MAX + 1, &d, NULL),
			 -E2BIG);
	free(buf);
}

/* ---- validity rules ------------------------------------------------------ */

/*
 * Build sample @which, break it with @edit, and expect the encoder to
 * refuse it (-EINVAL) ...
 */
static void assert_encode_refuses(int which,
				  void (*edit)(struct raft_message *))
{
	struct raft_message m;
	uint8_t *buf = NULL;
	size_t len;

	sample(which, &m);
	edit(&m);
	assert_int_equal(imexd_raftwire_encode(&m, &buf, &len), -EINVAL);
	assert_null(buf);
	imexd_raftwire_free(&m);
}

/* ... and the decoder to refuse the same thing patched into valid bytes. */
static void assert_decode_refuses(int which, size_t off, uint64_t v,
				  unsigned bytes, int err)
{
	struct raft_message d;
	const char *why = NULL;
	uint8_t *buf;
	size_t len;

	sample_enc(which, &buf, &len);
	put_be(buf + off, v, bytes);
	assert_int_equal(decode(buf, len, &d, &why), err);
	assert_non_null(why);
	free(buf);
}

static void e_term0(struct raft_message *m) { m->request_vote.term = 0; }
static void e_cand0(struct raft_message *m) { m->request_vote.candidate_id = 0; }
static void e_rv_version(struct raft_message *m) { m->request_vote.version = 1; }
static void e_rv_lastterm(struct raft_message *m)
{
	m->request_vote.last_log_term = m->request_vote.term + 1;
}
static void e_rvr_features(struct raft_message *m)
{
	m->request_vote_result.features = 2;
}
static void e_prevterm0(struct raft_message *m)
{
	m->append_entries.prev_log_term = 0;
}
static void e_previndex0(struct raft_message *m)
{
	m->append_entries.prev_log_index = 0;
}
static void e_entry_term0(struct raft_message *m)
{
	m->append_entries.entries[0].term = 0;
}
static void e_entry_below_prev(struct raft_message *m)
{
	m->append_entries.entries[0].term = 2;
}
static void e_entry_decreasing(struct raft_message *m)
{
	m->append_entries.entries[3].term = 3;
}
static void e_entry_above_msg(struct raft_message *m)
{
	m->append_entries.entries[3].term = 6;
}
static void e_entry_type(struct raft_message *m)
{
	m->append_entries.entries[2].type = (enum raft_entry_type)4;
}
static void e_change_garbage(struct raft_message *m)
{
	((uint8_t *)m->append_entries.entries[1].buf.base)[0] = 2;
}
static void e_index_max(struct raft_message *m)
{
	m->append_entries.prev_log_index = IMEXD_RAFTWIRE_INDEX_MAX - 3;
}
static void e_dup_id(struct raft_message *m)
{
	m->install_snapshot.conf.servers[3].id =
		m->install_snapshot.conf.servers[1].id;
}
static void e_dup_addr(struct raft_message *m)
{
	m->install_snapshot.conf.servers[4].address[1] = '1';
}
static void e_role(struct raft_message *m)
{
	m->install_snapshot.conf.servers[0].role = 3;
}
static void e_addr_space(struct raft_message *m)
{
	m->install_snapshot.conf.servers[2].address[0] = ' ';
}
static void e_addr_empty(struct raft_message *m)
{
	m->install_snapshot.conf.servers[2].address[0] = '\0';
}
static void e_conf_empty(struct raft_message *m)
{
	raft_configuration_close(&m->install_snapshot.conf);
	raft_configuration_init(&m->install_snapshot.conf);
}
static void e_snap_index0(struct raft_message *m)
{
	m->install_snapshot.last_index = 0;
	m->install_snapshot.conf_index = 0;
}
static void e_snap_term(struct raft_message *m)
{
	m->install_snapshot.last_term = m->install_snapshot.term + 1;
}
static void e_conf_index(struct raft_message *m)
{
	m->install_snapshot.conf_index = m->install_snapshot.last_index + 1;
}
static void e_bad_type(struct raft_message *m)
{
	m->type = (enum raft_message_type)7;
}

static void test_rules_refused_both_ways(void **state)
{
	static const struct {
		int which;
		void (*edit)(struct raft_message *);
	} cases[] = {
		{ S_RV, e_term0 }, { S_RV, e_cand0 }, { S_RV, e_rv_version },
		{ S_RV, e_rv_lastterm }, { S_RVR, e_rvr_features },
		{ S_AE, e_prevterm0 }, { S_AE, e_previndex0 },
		{ S_AE, e_entry_term0 }, { S_AE, e_entry_below_prev },
		{ S_AE, e_entry_decreasing }, { S_AE, e_entry_above_msg },
		{ S_AE, e_entry_type }, { S_AE, e_change_garbage },
		{ S_AE, e_index_max },
		{ S_IS, e_dup_id }, { S_IS, e_dup_addr }, { S_IS, e_role },
		{ S_IS, e_addr_space }, { S_IS, e_addr_empty },
		{ S_IS, e_conf_empty }, { S_IS, e_snap_index0 },
		{ S_IS, e_snap_term }, { S_IS, e_conf_index },
		{ S_TN, e_bad_type },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_encode_refuses(cases[i].which, cases[i].edit);

	/* The same rules on the wire (offsets: raftwire.h). */
	assert_decode_refuses(S_RV, 4, 0, 8, -EBADMSG);		/* term 0 */
	assert_decode_refuses(S_RV, 2, 1, 1, -EBADMSG);		/* version */
	assert_decode_refuses(S_RV, 28, ~0ULL, 8, -EBADMSG);	/* last term */
	assert_decode_refuses(S_RV, 36, 4, 1, -EBADMSG);		/* flags */
	assert_decode_refuses(S_RV, 3, 1, 1, -EBADMSG);		/* header */
	assert_decode_refuses(S_RV, 0, 2, 1, -EPROTO);		/* format */
	assert_decode_refuses(S_RV, 1, 7, 1, -EPROTO);		/* type */
	assert_decode_refuses(S_RV, 1, 0, 1, -EPROTO);
	assert_decode_refuses(S_RVR, 13, 2, 2, -EBADMSG);	/* features */
	assert_decode_refuses(S_AE, 20, 0, 8, -EBADMSG);	/* prev term */
	assert_decode_refuses(S_AE, 40, 0, 8, -EBADMSG);	/* entry term */
	assert_decode_refuses(S_AE, 40 + 3 * 13, 3, 8, -EBADMSG); /* order */
	assert_decode_refuses(S_AE, 40 + 2 * 13 + 8, 0, 1, -EBADMSG); /* type */
	assert_decode_refuses(S_AE, 40 + 4 * 13 + 13, 2, 1, -EBADMSG); /* CHANGE */
	assert_decode_refuses(S_IS, 12, 0, 8, -EBADMSG);	/* last index */
	assert_decode_refuses(S_IS, 28, 1001, 8, -EBADMSG);	/* conf index */
	assert_decode_refuses(S_IS, 38 + 8, 3, 1, -EBADMSG);	/* role */
	assert_decode_refuses(S_IS, 38 + 10, ' ', 1, -EBADMSG);	/* address */
	assert_decode_refuses(S_IS, 38 + 10, 0, 1, -EBADMSG);	/* NUL */
	assert_decode_refuses(S_IS, 38 + 9, 0, 1, -EBADMSG);	/* empty */
	assert_decode_refuses(S_IS, 36, 0, 2, -EBADMSG);	/* no servers */
}

/*
 * libraft 0.22.1 replies to a stale term without setting last_log_index
 * (recvAppendEntries(), recvInstallSnapshot()): whatever was on its stack
 * must still go through, or a stale leader never learns the new term.
 */
static void test_stale_term_reply_with_any_last_index(void **state)
{
	struct raft_message m;

	(void)state;
	sample(S_AER, &m);
	m.append_entries_result.last_log_index = ~0ULL;
	assert_round_trips(&m);
	m.append_entries_result.rejected = 0;
	assert_round_trips(&m);
}

static void test_sender_is_the_candidate(void **state)
{
	struct raft_message d;
	const char *why;
	uint8_t *buf, *longer;
	size_t len;

	(void)state;
	sample_enc(S_RV, &buf, &len);
	assert_int_equal(imexd_raftwire_decode(buf, len, FROM + 1, "n8", &d,
					       &why), -EBADMSG);
	assert_string_equal(why, "candidate id is not the sender's");
	assert_int_equal(imexd_raftwire_decode(buf, len, 0, "n0", &d, NULL),
			 -EINVAL);
	assert_int_equal(imexd_raftwire_decode(buf, len, FROM, NULL, &d, NULL),
			 -EINVAL);
	assert_int_equal(imexd_raftwire_decode(NULL, len, FROM, FROM_ADDR, &d,
					       NULL), -EBADMSG);
	free(buf);
	/* One trailing byte. */
	sample_enc(S_TN, &buf, &len);
	longer = calloc(1, len + 1);
	assert_non_null(longer);
	memcpy(longer, buf, len);
	assert_int_equal(decode(longer, len + 1, &d, &why), -EBADMSG);
	assert_string_equal(why, "message longer than its fields");
	free(longer);
	free(buf);
}

/* ---- allocation failures ------------------------------------------------- */

static long heap_live, heap_fail_at, heap_count;

static void *h_malloc(void *data, size_t size)
{
	(void)data;
	if (heap_count++ == heap_fail_at)
		return NULL;
	heap_live++;
	return malloc(size);
}

static void h_free(void *data, void *ptr)
{
	(void)data;
	if (ptr)
		heap_live--;
	free(ptr);
}

static void *h_calloc(void *data, size_t n, size_t size)
{
	(void)data;
	if (heap_count++ == heap_fail_at)
		return NULL;
	heap_live++;
	return calloc(n, size);
}

static void *h_realloc(void *data, void *ptr, size_t size)
{
	(void)data;
	if (heap_count++ == heap_fail_at)
		return NULL;
	if (!ptr)
		heap_live++;
	return realloc(ptr, size);
}

static void *h_aligned_alloc(void *data, size_t alignment, size_t size)
{
	(void)data;
	if (heap_count++ == heap_fail_at)
		return NULL;
	heap_live++;
	return aligned_alloc(alignment, size);
}

static void h_aligned_free(void *data, size_t alignment, void *ptr)
{
	(void)alignment;
	h_free(data, ptr);
}

static void test_out_of_memory_changes_nothing(void **state)
{
	static struct raft_heap heap = {
		NULL, h_malloc, h_free, h_calloc, h_realloc, h_aligned_alloc,
		h_aligned_free,
	};
	static const int which[] = { S_AE, S_AE_EMPTY, S_IS, S_IS_EMPTY };
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(which) / sizeof(which[0]); k++) {
		uint8_t *buf;
		size_t len;
		int err;

		sample_enc(which[k], &buf, &len);
		raft_heap_set(&heap);
		for (heap_fail_at = 0;; heap_fail_at++) {
			struct raft_message d;

			memset(&d, 0xa5, sizeof(d));
			heap_count = 0;
			heap_live = 0;
			err = decode(buf, len, &d, NULL);
			if (!err) {
				imexd_raftwire_free(&d);
				assert_int_equal(heap_live, 0);
				break;
			}
			assert_int_equal(err, -ENOMEM);
			assert_int_equal(heap_live, 0);
			/* @msg untouched on failure. */
			assert_int_equal(((uint8_t *)&d)[0], 0xa5);
		}
		raft_heap_set_default();
		print_message("sample %d: %ld allocations, each failure -ENOMEM\n",
			      which[k], heap_fail_at);
		assert_true(heap_fail_at >= 2);
		free(buf);
	}
}

/* ---- ownership, against libraft itself ---------------------------------- */

/* A follower (id 2) of a 2-voter configuration {1, 2}, started at term 1. */
static void follower_start(struct raft *r)
{
	struct raft_configuration c;
	struct raft_event ev;
	struct raft_update up;
	struct raft_entry *e;
	struct raft_buffer enc;

	assert_int_equal(raft_init(r, NULL, NULL, 2, "n2"), 0);
	raft_configuration_init(&c);
	assert_int_equal(raft_configuration_add(&c, 1, "n1", RAFT_VOTER), 0);
	assert_int_equal(raft_configuration_add(&c, 2, "n2", RAFT_VOTER), 0);
	assert_int_equal(raft_configuration_encode(&c, &enc), 0);
	raft_configuration_close(&c);
	e = raft_calloc(1, sizeof(*e));
	assert_non_null(e);
	e->term = 1;
	e->type = RAFT_CHANGE;
	e->buf = enc;
	e->batch = enc.base;
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_START;
	ev.time = 0;
	ev.start.term = 1;
	ev.start.start_index = 1;
	ev.start.entries = e;
	ev.start.n_entries = 1;
	assert_int_equal(raft_step(r, &ev, &up), 0);
	/* The caller keeps what it loaded (test/lib/cluster.c). */
	raft_free(e[0].batch);
	raft_free(e);
}

/* What raft asks to send goes through the encoder (entries aside). */
static void encode_replies(const struct raft_update *up)
{
	unsigned i;

	for (i = 0; (up->flags & RAFT_UPDATE_MESSAGES) && i < up->messages.n;
	     i++) {
		const struct raft_message *m = &up->messages.batch[i];
		uint8_t *buf;
		size_t len;

		if (m->type == RAFT_APPEND_ENTRIES ||
		    m->type == RAFT_INSTALL_SNAPSHOT)
			continue;
		encode_ok(m, &buf, &len);
		free(buf);
	}
}

/*
 * Deliver @buf as raft would see it from server 1; persist what raft asks
 * to (freeing it as its owner), then release the message.
 */
static void deliver(struct raft *r, const uint8_t *buf, size_t len,
		    unsigned expect_entries, bool expect_snapshot)
{
	struct raft_message m;
	struct raft_event ev;
	struct raft_update up;

	assert_int_equal(imexd_raftwire_decode(buf, len, 1, "n1", &m, NULL), 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_RECEIVE;
	ev.time = 10;
	ev.receive.message = &m;
	assert_int_equal(raft_step(r, &ev, &up), 0);
	encode_replies(&up);
	assert_int_equal(!!(up.flags & RAFT_UPDATE_ENTRIES), !!expect_entries);
	assert_int_equal(!!(up.flags & RAFT_UPDATE_SNAPSHOT), expect_snapshot);
	if (up.flags & RAFT_UPDATE_ENTRIES) {
		raft_index last = up.entries.index + up.entries.n - 1;

		assert_int_equal(up.entries.n, expect_entries);
		/* "Persisted": the persister owns the batch. */
		raft_free(up.entries.batch[0].batch);
		imexd_raftwire_release(&m);
		memset(&ev, 0, sizeof(ev));
		ev.type = RAFT_PERSISTED_ENTRIES;
		ev.time = 11;
		ev.persisted_entries.index = last;
		assert_int_equal(raft_step(r, &ev, &up), 0);
		encode_replies(&up);
		return;
	}
	if (up.flags & RAFT_UPDATE_SNAPSHOT) {
		struct raft_buffer chunk = up.snapshot.chunk;

		imexd_raftwire_release(&m);
		memset(&ev, 0, sizeof(ev));
		ev.type = RAFT_PERSISTED_SNAPSHOT;
		ev.time = 12;
		ev.persisted_snapshot.metadata = up.snapshot.metadata;
		ev.persisted_snapshot.offset = 0;
		ev.persisted_snapshot.last = true;
		assert_int_equal(raft_step(r, &ev, &up), 0);
		encode_replies(&up);
		/* "Persisted": the chunk is the persister's. */
		raft_free(chunk.base);
		return;
	}
	imexd_raftwire_release(&m);
}

static void encode_append(raft_term term, raft_index prev, raft_term prev_term,
			  unsigned n, uint8_t **buf, size_t *len)
{
	struct raft_message m;
	raft_term terms[4] = { term, term, term, term };
	int types[4] = { RAFT_COMMAND, RAFT_BARRIER, RAFT_COMMAND, RAFT_COMMAND };

	sample(S_AE_HEARTBEAT, &m);
	m.append_entries.term = term;
	m.append_entries.prev_log_index = prev;
	m.append_entries.prev_log_term = prev_term;
	m.append_entries.leader_commit = prev;
	if (n)
		entries_make(&m.append_entries, n, terms, types, 9);
	encode_ok(&m, buf, len);
	imexd_raftwire_free(&m);
}

/*
 * Every path a received message takes in libraft 0.22.1 -- entries to
 * persist, entries already there, a stale term, a heartbeat, a snapshot to
 * install -- with release() after it: ASan reports any leak or double free.
 * Each reply raft asks to send goes through the encoder.
 */
static void test_release_matches_raft_ownership(void **state)
{
	struct raft r;
	struct raft_message m;
	uint8_t *buf;
	size_t len;

	(void)state;
	follower_start(&r);
	encode_append(1, 1, 1, 3, &buf, &len);
	deliver(&r, buf, len, 3, false);	/* new: raft hands them out */
	deliver(&r, buf, len, 0, false);	/* present: raft frees them */
	free(buf);
	assert_true(raft_commit_index(&r) >= 1);
	encode_append(2, 4, 1, 0, &buf, &len);	/* heartbeat, term 2 */
	deliver(&r, buf, len, 0, false);
	free(buf);
	encode_append(1, 4, 1, 2, &buf, &len);	/* stale term: rejected */
	deliver(&r, buf, len, 0, false);
	free(buf);
	assert_true(raft_current_term(&r) == 2);

	sample(S_IS, &m);
	m.install_snapshot.term = 2;
	m.install_snapshot.last_index = 50;
	m.install_snapshot.last_term = 2;
	m.install_snapshot.conf_index = 1;
	raft_configuration_close(&m.install_snapshot.conf);
	raft_configuration_init(&m.install_snapshot.conf);
	assert_int_equal(raft_configuration_add(&m.install_snapshot.conf, 1,
						"n1", RAFT_VOTER), 0);
	assert_int_equal(raft_configuration_add(&m.install_snapshot.conf, 2,
						"n2", RAFT_VOTER), 0);
	encode_ok(&m, &buf, &len);
	imexd_raftwire_free(&m);
	deliver(&r, buf, len, 0, true);		/* raft takes conf and data */
	deliver(&r, buf, len, 0, false);	/* have it: raft frees them */
	free(buf);
	assert_true(raft_commit_index(&r) >= 50);
	raft_close(&r, NULL);
}

/*
 * libraft 0.22.1 keeps nothing of an InstallSnapshot received while it is
 * installing one, and frees nothing either (replicationInstallSnapshot()
 * returns 0): stepping it leaks its configuration and data.  The documented
 * way -- raft->snapshot.installing: free() instead of stepping -- leaks
 * nothing.
 */
static void test_snapshot_while_installing_is_freed_not_stepped(void **state)
{
	struct raft r;
	struct raft_message m, first, second;
	struct raft_event ev;
	struct raft_update up;
	struct raft_buffer chunk;
	uint8_t *buf;
	size_t len;

	(void)state;
	follower_start(&r);
	sample(S_IS, &m);
	m.install_snapshot.term = 2;
	m.install_snapshot.last_index = 50;
	m.install_snapshot.last_term = 2;
	m.install_snapshot.conf_index = 1;
	encode_ok(&m, &buf, &len);
	imexd_raftwire_free(&m);
	assert_int_equal(imexd_raftwire_decode(buf, len, 1, "n1", &first, NULL), 0);
	assert_int_equal(imexd_raftwire_decode(buf, len, 1, "n1", &second, NULL), 0);
	free(buf);

	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_RECEIVE;
	ev.receive.message = &first;
	assert_int_equal(raft_step(&r, &ev, &up), 0);
	assert_true(up.flags & RAFT_UPDATE_SNAPSHOT);
	chunk = up.snapshot.chunk;
	imexd_raftwire_release(&first);

	assert_true(r.snapshot.installing);
	imexd_raftwire_free(&second);

	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_PERSISTED_SNAPSHOT;
	ev.persisted_snapshot.metadata = up.snapshot.metadata;
	ev.persisted_snapshot.last = true;
	assert_int_equal(raft_step(&r, &ev, &up), 0);
	raft_free(chunk.base);
	assert_false(r.snapshot.installing);
	raft_close(&r, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_every_type),
		cmocka_unit_test(test_conf_check_accepts_libraft_encoding),
		cmocka_unit_test(test_conf_check_byte_changes),
		cmocka_unit_test(test_every_truncation_refused),
		cmocka_unit_test(test_every_byte_change_refused_or_valid),
		cmocka_unit_test(test_random_bytes_never_crash),
		cmocka_unit_test(test_entry_bounds),
		cmocka_unit_test(test_configuration_bounds),
		cmocka_unit_test(test_snapshot_and_frame_bounds),
		cmocka_unit_test(test_rules_refused_both_ways),
		cmocka_unit_test(test_sender_is_the_candidate),
		cmocka_unit_test(test_stale_term_reply_with_any_last_index),
		cmocka_unit_test(test_out_of_memory_changes_nothing),
		cmocka_unit_test(test_release_matches_raft_ownership),
		cmocka_unit_test(test_snapshot_while_installing_is_freed_not_stepped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
