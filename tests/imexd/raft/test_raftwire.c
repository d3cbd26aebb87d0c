// SPDX-License-Identifier: GPL-2.0
/*
 * raftwire: round trips of every libraft message, every truncation and
 * every single-byte change of valid encodings, seeded random input
 * (IMEXD_RAFTWIRE_SEED=<n> replays a run; the seed is printed), each bound,
 * each validity rule, allocation failures, and the ownership contract
 * against a real libraft follower driven with raft_step().
 *
 * One program: this file holds the message builders and comparisons the
 * parts share (test_raftwire.h), and main(); the tests are in
 * test_raftwire_codec.c, test_raftwire_rules.c and test_raftwire_own.c.
 */
#include "test_raftwire.h"

/* ---- building messages ---------------------------------------------------- */

void conf_make(struct raft_configuration *c, unsigned n,
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
void entries_make(struct raft_append_entries *a, unsigned n,
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

/* Sample @which: a valid message with non-trivial fields. */
void sample(int which, struct raft_message *m)
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

void encode_ok(const struct raft_message *m, uint8_t **buf, size_t *len)
{
	assert_int_equal(imexd_raftwire_encode(m, buf, len), 0);
	assert_true(*len <= IMEXD_RAFTWIRE_FRAME_MAX);
}

void sample_enc(int which, uint8_t **buf, size_t *len)
{
	struct raft_message m;

	sample(which, &m);
	encode_ok(&m, buf, len);
	imexd_raftwire_free(&m);
}

int decode(const uint8_t *buf, size_t len, struct raft_message *m,
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

void assert_msg_equal(const struct raft_message *a,
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
void assert_valid(const struct raft_message *m, const uint8_t *buf,
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
