// SPDX-License-Identifier: GPL-2.0
/*
 * test_raftwire: allocation failures, and the ownership contract against a
 * real libraft follower driven with raft_step().
 */
#include "test_raftwire.h"

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

void test_out_of_memory_changes_nothing(void **state)
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
void test_release_matches_raft_ownership(void **state)
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
void test_snapshot_while_installing_is_freed_not_stepped(void **state)
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
