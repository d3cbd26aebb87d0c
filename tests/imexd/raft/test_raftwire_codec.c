// SPDX-License-Identifier: GPL-2.0
/*
 * test_raftwire: round trips of every libraft message, and hostile input:
 * every truncation and every single-byte change of valid encodings, seeded
 * random input (IMEXD_RAFTWIRE_SEED=<n>).
 */
#include "test_raftwire.h"

/* ---- round trips ---------------------------------------------------------- */

void test_round_trip_every_type(void **state)
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
void test_conf_check_accepts_libraft_encoding(void **state)
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
void test_conf_check_byte_changes(void **state)
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

void test_every_truncation_refused(void **state)
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
void test_every_byte_change_refused_or_valid(void **state)
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

void test_random_bytes_never_crash(void **state)
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
