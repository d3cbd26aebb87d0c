// SPDX-License-Identifier: GPL-2.0
/*
 * raftwire: the decoder of libraft's messages (raftwire.h); the rules it
 * checks and the encoder are in raftwire.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "raftwire_internal.h"

/* ---- decoder ------------------------------------------------------------ */

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The rest of the message, which must be @n bytes; NULL when it is not. */
static const uint8_t *rd_rest(struct imexd_rd *r, size_t n)
{
	if (n != rd_left(r)) {
		rd_fail(r, -EBADMSG, n > rd_left(r) ?
			"message shorter than its fields" :
			"message longer than its fields");
		return NULL;
	}
	return rd_take(r, n);
}

/*
 * The entries: every header is checked on the raw bytes (type, length,
 * total against what is left) before the array and the batch are allocated.
 */
static void rd_entries(struct imexd_rd *r, struct raft_append_entries *a)
{
	const uint8_t *h, *d;
	size_t total = 0, batch = 0, at = 0, from = 0;
	uint32_t n, i;
	uint8_t *b;

	n = rd_u32(r);
	if (r->err || !n)
		return;
	if (n > IMEXD_RAFTWIRE_ENTRIES_MAX) {
		rd_fail(r, -E2BIG, "more entries than IMEXD_RAFTWIRE_ENTRIES_MAX");
		return;
	}
	h = rd_take(r, (size_t)n * ENTRY_HDR_LEN);
	if (!h)
		return;
	for (i = 0; i < n; i++) {
		const uint8_t *e = h + (size_t)i * ENTRY_HDR_LEN;
		uint32_t elen = (uint32_t)get_be(e + 9, 4);

		if (e[8] != RAFT_COMMAND && e[8] != RAFT_BARRIER &&
		    e[8] != RAFT_CHANGE) {
			rd_fail(r, -EBADMSG, "entry type out of range");
			return;
		}
		if (elen > IMEXD_RAFTWIRE_ENTRY_MAX) {
			rd_fail(r, -E2BIG, "entry longer than IMEXD_RAFTWIRE_ENTRY_MAX");
			return;
		}
		total += elen;
		batch += pad8(elen);
	}
	if (total > IMEXD_RAFTWIRE_APPEND_MAX) {
		rd_fail(r, -E2BIG, "entries longer than IMEXD_RAFTWIRE_APPEND_MAX");
		return;
	}
	d = rd_rest(r, total);
	if (!d)
		return;
	a->entries = raft_calloc(n, sizeof(*a->entries));
	/* Never NULL, even for empty entries: raft frees entries[0].batch. */
	b = raft_malloc(batch ? batch : 8);
	if (!a->entries || !b) {
		raft_free(a->entries);
		raft_free(b);
		a->entries = NULL;
		rd_fail(r, -ENOMEM, "out of memory");
		return;
	}
	a->n_entries = n;
	for (i = 0; i < n; i++) {
		const uint8_t *e = h + (size_t)i * ENTRY_HDR_LEN;
		struct raft_entry *x = &a->entries[i];

		x->term = get_be(e, 8);
		x->type = (enum raft_entry_type)e[8];
		x->buf.len = get_be(e + 9, 4);
		x->buf.base = b + at;
		x->batch = b;
		memcpy(b + at, d + from, x->buf.len);
		memset(b + at + x->buf.len, 0, pad8(x->buf.len) - x->buf.len);
		from += x->buf.len;
		at += pad8(x->buf.len);
	}
}

static void rd_append(struct imexd_rd *r, struct raft_append_entries *a)
{
	a->term = rd_u64(r);
	a->prev_log_index = rd_u64(r);
	a->prev_log_term = rd_u64(r);
	a->leader_commit = rd_u64(r);
	rd_entries(r, a);
}

static void rd_servers(struct imexd_rd *r, struct raft_configuration *c)
{
	uint16_t n = rd_u16(r);
	uint16_t i;

	if (r->err || !n)
		return;
	if (n > IMEXD_RAFT_SERVERS_MAX) {
		rd_fail(r, -E2BIG, "more servers than IMEXD_RAFT_SERVERS_MAX");
		return;
	}
	if (n > rd_left(r) / SERVER_MIN_LEN) {
		rd_fail(r, -EBADMSG, "message shorter than its fields");
		return;
	}
	c->servers = raft_calloc(n, sizeof(*c->servers));
	if (!c->servers) {
		rd_fail(r, -ENOMEM, "out of memory");
		return;
	}
	for (i = 0; i < n && !r->err; i++) {
		struct raft_server *s = &c->servers[i];
		const uint8_t *a;
		uint8_t alen;

		s->id = rd_u64(r);
		s->role = rd_u8(r);
		alen = rd_u8(r);
		a = rd_take(r, alen);
		if (!a)
			break;
		/* Checked on the raw bytes, so a NUL cannot hide a tail. */
		if (!alen || !rw_addr_ok((const char *)a, alen)) {
			rd_fail(r, -EBADMSG, "server address is not printable ASCII");
			break;
		}
		s->address = raft_malloc((size_t)alen + 1);
		if (!s->address) {
			rd_fail(r, -ENOMEM, "out of memory");
			break;
		}
		memcpy(s->address, a, alen);
		s->address[alen] = '\0';
		c->n = i + 1u;
	}
}

static void rd_snapshot(struct imexd_rd *r, struct raft_install_snapshot *s)
{
	const uint8_t *d;
	uint32_t n;

	s->term = rd_u64(r);
	s->last_index = rd_u64(r);
	s->last_term = rd_u64(r);
	s->conf_index = rd_u64(r);
	rd_servers(r, &s->conf);
	n = rd_u32(r);
	if (r->err)
		return;
	if (n > IMEXD_RAFTWIRE_SNAPSHOT_MAX) {
		rd_fail(r, -E2BIG, "snapshot longer than IMEXD_RAFTWIRE_SNAPSHOT_MAX");
		return;
	}
	d = rd_rest(r, n);
	if (!d)
		return;
	/* Never NULL: whoever persists the chunk may hand it to write(). */
	s->data.base = raft_malloc(n ? n : 1);
	if (!s->data.base) {
		rd_fail(r, -ENOMEM, "out of memory");
		return;
	}
	s->data.len = n;
	memcpy(s->data.base, d, n);
}

static void rd_flags(struct imexd_rd *r, bool *bit0, bool *bit1)
{
	uint8_t f = rd_u8(r);

	if (f & ~3u)
		rd_fail(r, -EBADMSG, "unknown message flags");
	*bit0 = f & 1;
	*bit1 = f & 2;
}

static void rd_body(struct imexd_rd *r, struct raft_message *m, uint8_t version)
{
	struct raft_request_vote *rv = &m->request_vote;
	struct raft_request_vote_result *rr = &m->request_vote_result;
	struct raft_append_entries_result *ar = &m->append_entries_result;
	struct raft_timeout_now *tn = &m->timeout_now;

	switch (m->type) {
	case RAFT_REQUEST_VOTE:
		rv->version = version;
		rv->term = rd_u64(r);
		rv->candidate_id = rd_u64(r);
		rv->last_log_index = rd_u64(r);
		rv->last_log_term = rd_u64(r);
		rd_flags(r, &rv->disrupt_leader, &rv->pre_vote);
		break;
	case RAFT_REQUEST_VOTE_RESULT:
		rr->version = version;
		rr->term = rd_u64(r);
		rd_flags(r, &rr->vote_granted, &rr->pre_vote);
		rr->features = rd_u16(r);
		rr->capacity = rd_u16(r);
		break;
	case RAFT_APPEND_ENTRIES:
		m->append_entries.version = version;
		rd_append(r, &m->append_entries);
		break;
	case RAFT_APPEND_ENTRIES_RESULT:
		ar->version = version;
		ar->term = rd_u64(r);
		ar->rejected = rd_u64(r);
		ar->last_log_index = rd_u64(r);
		ar->features = rd_u16(r);
		ar->capacity = rd_u16(r);
		break;
	case RAFT_INSTALL_SNAPSHOT:
		m->install_snapshot.version = version;
		rd_snapshot(r, &m->install_snapshot);
		break;
	case RAFT_TIMEOUT_NOW:
		tn->version = version;
		tn->term = rd_u64(r);
		tn->last_log_index = rd_u64(r);
		tn->last_log_term = rd_u64(r);
		break;
	}
}

static int rd_header(struct imexd_rd *r, struct raft_message *m,
		     uint8_t *version)
{
	uint8_t type;

	if (r->len > IMEXD_RAFTWIRE_FRAME_MAX)
		rd_fail(r, -E2BIG, "message longer than IMEXD_RAFTWIRE_FRAME_MAX");
	else if (r->len < IMEXD_RAFTWIRE_HEADER_LEN)
		rd_fail(r, -EBADMSG, "truncated header");
	else if (rd_u8(r) != IMEXD_RAFTWIRE_VERSION)
		rd_fail(r, -EPROTO, "unknown raftwire version");
	if (r->err)
		return r->err;
	type = rd_u8(r);
	*version = rd_u8(r);
	if (type < RAFT_APPEND_ENTRIES || type > RAFT_TIMEOUT_NOW)
		rd_fail(r, -EPROTO, "unknown message type");
	else if (rd_u8(r))
		rd_fail(r, -EBADMSG, "non-zero header byte");
	m->type = (enum raft_message_type)type;
	return r->err;
}

int imexd_raftwire_decode(const uint8_t *buf, size_t len, raft_id from,
			  const char *from_address, struct raft_message *msg,
			  const char **why)
{
	struct imexd_rd r = {
		.p = buf, .len = buf ? len : 0,
		.short_why = "message shorter than its fields",
	};
	struct raft_message m;
	uint8_t version = 0;
	int err;

	if (why)
		*why = NULL;
	if (!from || !from_address || !msg)
		return rw_bad(why, -EINVAL, "no sender");
	memset(&m, 0, sizeof(m));
	if (!rd_header(&r, &m, &version)) {
		rd_body(&r, &m, version);
		if (!r.err && r.off != r.len)
			rd_fail(&r, -EBADMSG, "message longer than its fields");
	}
	err = r.err;
	if (!err)
		err = rw_check_msg(&m, &r.why);
	if (!err && m.type == RAFT_REQUEST_VOTE &&
	    m.request_vote.candidate_id != from) {
		r.why = "candidate id is not the sender's";
		err = -EBADMSG;
	}
	if (err) {
		imexd_raftwire_free(&m);
		return rw_bad(why, err, r.why);
	}
	m.server_id = from;
	m.server_address = from_address;
	*msg = m;
	return 0;
}
