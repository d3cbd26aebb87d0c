// SPDX-License-Identifier: GPL-2.0
/*
 * test_raftwire: each bound, and each validity rule (refused both ways).
 */
#include "test_raftwire.h"

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

void test_entry_bounds(void **state)
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

void test_configuration_bounds(void **state)
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

void test_snapshot_and_frame_bounds(void **state)
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

void test_rules_refused_both_ways(void **state)
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
void test_stale_term_reply_with_any_last_index(void **state)
{
	struct raft_message m;

	(void)state;
	sample(S_AER, &m);
	m.append_entries_result.last_log_index = ~0ULL;
	assert_round_trips(&m);
	m.append_entries_result.rejected = 0;
	assert_round_trips(&m);
}

void test_sender_is_the_candidate(void **state)
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
