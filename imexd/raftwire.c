// SPDX-License-Identifier: GPL-2.0
/*
 * raftwire: the codec of libraft's messages (raftwire.h).
 *
 * As in wire.c, decoding reads the fields with every read and count bounded
 * before anything is allocated, then rw_check_msg() validates the result with
 * the very function the encoder runs on its input: whatever the encoder
 * accepts decodes, and whatever decodes re-encodes to the same bytes.
 *
 * The decoded message is allocated with raft_malloc() because raft frees
 * parts of it (raftwire.h, "Ownership").
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "raftwire_internal.h"

#define LIBRAFT_CONF_FORMAT	1	/* libraft's configuration encoding */
#define LIBRAFT_SERVER_MIN_LEN	11	/* u64 id, >= 1 byte, NUL, u8 role */

_Static_assert(IMEXD_RAFTWIRE_FRAME_MAX >= IMEXD_RAFTWIRE_HEADER_LEN +
	       4 * 8 + 2 + IMEXD_RAFT_SERVERS_MAX *
	       (8 + 1 + 1 + IMEXD_RAFTWIRE_ADDR_MAX) + 4 +
	       IMEXD_RAFTWIRE_SNAPSHOT_MAX, "snapshot frames exceed the max");
_Static_assert(IMEXD_RAFTWIRE_FRAME_MAX >= IMEXD_RAFTWIRE_HEADER_LEN +
	       4 * 8 + 4 + IMEXD_RAFTWIRE_ENTRIES_MAX * ENTRY_HDR_LEN +
	       IMEXD_RAFTWIRE_APPEND_MAX, "append frames exceed the max");
_Static_assert(IMEXD_RAFTWIRE_ENTRY_MAX <= IMEXD_RAFTWIRE_APPEND_MAX,
	       "one entry must fit in an AppendEntries");

int rw_bad(const char **why, int err, const char *what)
{
	if (why)
		*why = what;
	return err;
}

/* ---- configurations ------------------------------------------------------ */

/* One server, wherever it comes from (a struct, libraft's bytes). */
struct srv {
	uint64_t id;
	const char *addr;	/* not NUL-terminated */
	size_t alen;
	int role;
};

static int srv_cmp_id(const void *a, const void *b)
{
	const struct srv *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int srv_cmp_addr(const void *a, const void *b)
{
	const struct srv *x = a, *y = b;

	if (x->alen != y->alen)
		return x->alen < y->alen ? -1 : 1;
	return memcmp(x->addr, y->addr, x->alen);
}

bool rw_addr_ok(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '!' || s[i] > '~')
			return false;
	return true;
}

/*
 * The configuration rules on @n views (sorted in place).  Duplicates are
 * found by sorting: a hostile list of 1024 long, similar addresses costs
 * n log n comparisons, not n^2.
 */
static int check_servers(struct srv *v, size_t n, const char **why)
{
	size_t i;

	if (!n)
		return rw_bad(why, -EBADMSG, "configuration without servers");
	if (n > IMEXD_RAFT_SERVERS_MAX)
		return rw_bad(why, -E2BIG,
			   "more servers than IMEXD_RAFT_SERVERS_MAX");
	for (i = 0; i < n; i++) {
		if (!v[i].id)
			return rw_bad(why, -EBADMSG, "server id 0");
		if (v[i].role != RAFT_STANDBY && v[i].role != RAFT_VOTER &&
		    v[i].role != RAFT_SPARE)
			return rw_bad(why, -EBADMSG, "server role out of range");
		if (v[i].alen > IMEXD_RAFTWIRE_ADDR_MAX)
			return rw_bad(why, -E2BIG,
				   "server address longer than IMEXD_RAFTWIRE_ADDR_MAX");
		if (!v[i].alen || !rw_addr_ok(v[i].addr, v[i].alen))
			return rw_bad(why, -EBADMSG,
				   "server address is not printable ASCII");
	}
	qsort(v, n, sizeof(*v), srv_cmp_id);
	for (i = 1; i < n; i++)
		if (v[i].id == v[i - 1].id)
			return rw_bad(why, -EBADMSG, "server id listed twice");
	qsort(v, n, sizeof(*v), srv_cmp_addr);
	for (i = 1; i < n; i++)
		if (!srv_cmp_addr(&v[i], &v[i - 1]))
			return rw_bad(why, -EBADMSG, "server address listed twice");
	return 0;
}

static int check_conf(const struct raft_configuration *c, const char **why)
{
	struct srv *v;
	unsigned i;
	int err;

	if (!c->n)
		return rw_bad(why, -EBADMSG, "configuration without servers");
	if (c->n > IMEXD_RAFT_SERVERS_MAX)
		return rw_bad(why, -E2BIG,
			   "more servers than IMEXD_RAFT_SERVERS_MAX");
	if (!c->servers)
		return rw_bad(why, -EBADMSG, "server count without servers");
	v = calloc(c->n, sizeof(*v));
	if (!v)
		return rw_bad(why, -ENOMEM, "out of memory");
	err = 0;
	for (i = 0; i < c->n && !err; i++) {
		const struct raft_server *s = &c->servers[i];

		if (!s->address) {
			err = rw_bad(why, -EBADMSG, "server without an address");
			break;
		}
		v[i].id = s->id;
		v[i].addr = s->address;
		v[i].alen = strnlen(s->address, IMEXD_RAFTWIRE_ADDR_MAX + 1);
		v[i].role = s->role;
	}
	if (!err)
		err = check_servers(v, c->n, why);
	free(v);
	return err;
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * libraft's configuration encoding (src/configuration.c): u8 format (1),
 * u64 n (little-endian), n x { u64 id (little-endian), address, NUL,
 * u8 role }, zeros up to a multiple of 8 bytes.
 */
int imexd_raftwire_conf_check(const void *buf, size_t len, const char **why)
{
	const uint8_t *p = buf;
	struct srv *v;
	uint64_t n;
	size_t off, i;
	int err = 0;

	if (!p || len < 9 || len % 8)
		return rw_bad(why, -EBADMSG, "configuration entry length");
	if (p[0] != LIBRAFT_CONF_FORMAT)
		return rw_bad(why, -EBADMSG, "configuration entry format");
	n = get_le64(p + 1);
	if (n > IMEXD_RAFT_SERVERS_MAX)
		return rw_bad(why, -E2BIG,
			   "more servers than IMEXD_RAFT_SERVERS_MAX");
	if (!n)
		return rw_bad(why, -EBADMSG, "configuration without servers");
	if (n > (len - 9) / LIBRAFT_SERVER_MIN_LEN)
		return rw_bad(why, -EBADMSG, "configuration entry shorter than its servers");
	v = calloc(n, sizeof(*v));
	if (!v)
		return rw_bad(why, -ENOMEM, "out of memory");
	off = 9;
	for (i = 0; i < n && !err; i++) {
		const uint8_t *nul;

		if (len - off < LIBRAFT_SERVER_MIN_LEN) {
			err = rw_bad(why, -EBADMSG,
				  "configuration entry shorter than its servers");
			break;
		}
		v[i].id = get_le64(p + off);
		off += 8;
		nul = memchr(p + off, 0, len - off);
		if (!nul || (size_t)(nul - p) + 2 > len) {
			err = rw_bad(why, -EBADMSG,
				  "configuration entry shorter than its servers");
			break;
		}
		v[i].addr = (const char *)p + off;
		v[i].alen = (size_t)(nul - (p + off));
		off += v[i].alen + 1;
		v[i].role = p[off++];
	}
	if (!err && (off + 7) / 8 * 8 != len)
		err = rw_bad(why, -EBADMSG, "configuration entry longer than its servers");
	for (i = off; !err && i < len; i++)
		if (p[i])
			err = rw_bad(why, -EBADMSG, "configuration entry padding not zero");
	if (!err)
		err = check_servers(v, n, why);
	free(v);
	return err;
}

/* ---- validation shared by encoder and decoder --------------------------- */

static bool idx_ok(raft_index i)
{
	return i <= IMEXD_RAFTWIRE_INDEX_MAX;
}

static int check_term(raft_term term, const char **why)
{
	if (!term)
		return rw_bad(why, -EBADMSG, "term 0");
	if (!idx_ok(term))
		return rw_bad(why, -EBADMSG, "term above IMEXD_RAFTWIRE_INDEX_MAX");
	return 0;
}

static int check_features(unsigned short features, const char **why)
{
	if (features & ~IMEXD_RAFTWIRE_FEATURES)
		return rw_bad(why, -EBADMSG, "unknown feature flags");
	return 0;
}

static int check_entry(const struct raft_append_entries *a, unsigned i,
		       size_t *total, const char **why)
{
	const struct raft_entry *e = &a->entries[i];
	raft_term low = i ? a->entries[i - 1].term : a->prev_log_term;

	if (e->type != RAFT_COMMAND && e->type != RAFT_BARRIER &&
	    e->type != RAFT_CHANGE)
		return rw_bad(why, -EBADMSG, "entry type out of range");
	if (!e->term || e->term < low || e->term > a->term)
		return rw_bad(why, -EBADMSG,
			   "entry term not between the previous one and the message's");
	if (e->buf.len > IMEXD_RAFTWIRE_ENTRY_MAX)
		return rw_bad(why, -E2BIG, "entry longer than IMEXD_RAFTWIRE_ENTRY_MAX");
	if (e->buf.len && !e->buf.base)
		return rw_bad(why, -EBADMSG, "entry length without data");
	*total += e->buf.len;
	if (*total > IMEXD_RAFTWIRE_APPEND_MAX)
		return rw_bad(why, -E2BIG,
			   "entries longer than IMEXD_RAFTWIRE_APPEND_MAX");
	if (e->type == RAFT_CHANGE)
		return imexd_raftwire_conf_check(e->buf.base, e->buf.len, why);
	return 0;
}

static int check_append(const struct raft_append_entries *a, const char **why)
{
	size_t total = 0;
	unsigned i;
	int err;

	if (a->version != IMEXD_RAFTWIRE_V_APPEND_ENTRIES)
		return rw_bad(why, -EBADMSG, "message version is not libraft 0.22.1's");
	err = check_term(a->term, why);
	if (err)
		return err;
	if (!idx_ok(a->prev_log_index) || !idx_ok(a->leader_commit))
		return rw_bad(why, -EBADMSG, "index above IMEXD_RAFTWIRE_INDEX_MAX");
	if (!a->prev_log_index != !a->prev_log_term)
		return rw_bad(why, -EBADMSG,
			   "previous term 0 without previous index 0, or back");
	if (a->prev_log_term > a->term)
		return rw_bad(why, -EBADMSG, "previous term above the message's");
	if (a->n_entries > IMEXD_RAFTWIRE_ENTRIES_MAX)
		return rw_bad(why, -E2BIG,
			   "more entries than IMEXD_RAFTWIRE_ENTRIES_MAX");
	if (a->n_entries && !a->entries)
		return rw_bad(why, -EBADMSG, "entry count without entries");
	if (a->n_entries > IMEXD_RAFTWIRE_INDEX_MAX - a->prev_log_index)
		return rw_bad(why, -EBADMSG, "last entry index above IMEXD_RAFTWIRE_INDEX_MAX");
	for (i = 0; i < a->n_entries; i++) {
		err = check_entry(a, i, &total, why);
		if (err)
			return err;
	}
	return 0;
}

static int check_snapshot(const struct raft_install_snapshot *s,
			  const char **why)
{
	int err;

	if (s->version != IMEXD_RAFTWIRE_V_INSTALL_SNAPSHOT)
		return rw_bad(why, -EBADMSG, "message version is not libraft 0.22.1's");
	err = check_term(s->term, why);
	if (err)
		return err;
	if (!s->last_index || !idx_ok(s->last_index))
		return rw_bad(why, -EBADMSG, "snapshot index 0 or above the bound");
	if (!s->last_term || s->last_term > s->term)
		return rw_bad(why, -EBADMSG,
			   "snapshot term 0 or above the message's");
	if (s->conf_index > s->last_index)
		return rw_bad(why, -EBADMSG,
			   "configuration index above the snapshot's");
	if (s->data.len > IMEXD_RAFTWIRE_SNAPSHOT_MAX)
		return rw_bad(why, -E2BIG,
			   "snapshot longer than IMEXD_RAFTWIRE_SNAPSHOT_MAX");
	if (s->data.len && !s->data.base)
		return rw_bad(why, -EBADMSG, "snapshot length without data");
	return check_conf(&s->conf, why);
}

int rw_check_msg(const struct raft_message *m, const char **why)
{
	const struct raft_request_vote *rv = &m->request_vote;
	const struct raft_request_vote_result *rr = &m->request_vote_result;
	const struct raft_append_entries_result *ar = &m->append_entries_result;
	const struct raft_timeout_now *tn = &m->timeout_now;
	int err;

	switch (m->type) {
	case RAFT_REQUEST_VOTE:
		if (rv->version != IMEXD_RAFTWIRE_V_REQUEST_VOTE)
			break;
		err = check_term(rv->term, why);
		if (err)
			return err;
		if (!rv->candidate_id)
			return rw_bad(why, -EBADMSG, "candidate id 0");
		if (!idx_ok(rv->last_log_index) || rv->last_log_term > rv->term)
			return rw_bad(why, -EBADMSG,
				   "last log index or term out of range");
		return 0;
	case RAFT_REQUEST_VOTE_RESULT:
		if (rr->version != IMEXD_RAFTWIRE_V_REQUEST_VOTE_RESULT)
			break;
		err = check_term(rr->term, why);
		return err ? err : check_features(rr->features, why);
	case RAFT_APPEND_ENTRIES:
		return check_append(&m->append_entries, why);
	case RAFT_APPEND_ENTRIES_RESULT:
		if (ar->version != IMEXD_RAFTWIRE_V_APPEND_ENTRIES_RESULT)
			break;
		err = check_term(ar->term, why);
		if (err)
			return err;
		/*
		 * Not last_log_index: libraft 0.22.1 leaves it uninitialised
		 * when it rejects a stale term (recvAppendEntries(),
		 * recvInstallSnapshot()), and that reply must still reach
		 * the stale leader.
		 */
		if (!idx_ok(ar->rejected))
			return rw_bad(why, -EBADMSG,
				   "index above IMEXD_RAFTWIRE_INDEX_MAX");
		return check_features(ar->features, why);
	case RAFT_INSTALL_SNAPSHOT:
		return check_snapshot(&m->install_snapshot, why);
	case RAFT_TIMEOUT_NOW:
		if (tn->version != IMEXD_RAFTWIRE_V_TIMEOUT_NOW)
			break;
		err = check_term(tn->term, why);
		if (err)
			return err;
		if (!idx_ok(tn->last_log_index) || tn->last_log_term > tn->term)
			return rw_bad(why, -EBADMSG,
				   "last log index or term out of range");
		return 0;
	default:
		return rw_bad(why, -EPROTO, "unknown message type");
	}
	return rw_bad(why, -EBADMSG, "message version is not libraft 0.22.1's");
}

/* ---- encoder ------------------------------------------------------------ */

static uint8_t msg_version(const struct raft_message *m)
{
	switch (m->type) {
	case RAFT_REQUEST_VOTE:
		return m->request_vote.version;
	case RAFT_REQUEST_VOTE_RESULT:
		return m->request_vote_result.version;
	case RAFT_APPEND_ENTRIES:
		return m->append_entries.version;
	case RAFT_APPEND_ENTRIES_RESULT:
		return m->append_entries_result.version;
	case RAFT_INSTALL_SNAPSHOT:
		return m->install_snapshot.version;
	case RAFT_TIMEOUT_NOW:
		return m->timeout_now.version;
	}
	return 0;
}

static void wr_append(struct imexd_wr *w, const struct raft_append_entries *a)
{
	unsigned i;

	wr_u64(w, a->term);
	wr_u64(w, a->prev_log_index);
	wr_u64(w, a->prev_log_term);
	wr_u64(w, a->leader_commit);
	wr_u32(w, a->n_entries);
	for (i = 0; i < a->n_entries; i++) {
		wr_u64(w, a->entries[i].term);
		wr_u8(w, (uint8_t)a->entries[i].type);
		wr_u32(w, (uint32_t)a->entries[i].buf.len);
	}
	for (i = 0; i < a->n_entries; i++)
		wr_bytes(w, a->entries[i].buf.base, a->entries[i].buf.len);
}

static void wr_snapshot(struct imexd_wr *w,
			const struct raft_install_snapshot *s)
{
	unsigned i;

	wr_u64(w, s->term);
	wr_u64(w, s->last_index);
	wr_u64(w, s->last_term);
	wr_u64(w, s->conf_index);
	wr_u16(w, (uint16_t)s->conf.n);
	for (i = 0; i < s->conf.n; i++) {
		const struct raft_server *v = &s->conf.servers[i];
		size_t n = strlen(v->address);

		wr_u64(w, v->id);
		wr_u8(w, (uint8_t)v->role);
		wr_u8(w, (uint8_t)n);
		wr_bytes(w, v->address, n);
	}
	wr_u32(w, (uint32_t)s->data.len);
	wr_bytes(w, s->data.base, s->data.len);
}

static void wr_msg(struct imexd_wr *w, const void *arg)
{
	const struct raft_message *m = arg;
	const struct raft_request_vote *rv = &m->request_vote;
	const struct raft_request_vote_result *rr = &m->request_vote_result;
	const struct raft_append_entries_result *ar = &m->append_entries_result;
	const struct raft_timeout_now *tn = &m->timeout_now;

	wr_u8(w, IMEXD_RAFTWIRE_VERSION);
	wr_u8(w, (uint8_t)m->type);
	wr_u8(w, msg_version(m));
	wr_u8(w, 0);
	switch (m->type) {
	case RAFT_REQUEST_VOTE:
		wr_u64(w, rv->term);
		wr_u64(w, rv->candidate_id);
		wr_u64(w, rv->last_log_index);
		wr_u64(w, rv->last_log_term);
		wr_u8(w, (uint8_t)(rv->disrupt_leader | rv->pre_vote << 1));
		break;
	case RAFT_REQUEST_VOTE_RESULT:
		wr_u64(w, rr->term);
		wr_u8(w, (uint8_t)(rr->vote_granted | rr->pre_vote << 1));
		wr_u16(w, rr->features);
		wr_u16(w, rr->capacity);
		break;
	case RAFT_APPEND_ENTRIES:
		wr_append(w, &m->append_entries);
		break;
	case RAFT_APPEND_ENTRIES_RESULT:
		wr_u64(w, ar->term);
		wr_u64(w, ar->rejected);
		wr_u64(w, ar->last_log_index);
		wr_u16(w, ar->features);
		wr_u16(w, ar->capacity);
		break;
	case RAFT_INSTALL_SNAPSHOT:
		wr_snapshot(w, &m->install_snapshot);
		break;
	case RAFT_TIMEOUT_NOW:
		wr_u64(w, tn->term);
		wr_u64(w, tn->last_log_index);
		wr_u64(w, tn->last_log_term);
		break;
	}
}

int imexd_raftwire_encode(const struct raft_message *msg, uint8_t **out,
			  size_t *len)
{
	int err;

	if (!msg || !out || !len)
		return -EINVAL;
	err = rw_check_msg(msg, NULL);
	if (err)
		return err == -E2BIG || err == -ENOMEM ? err : -EINVAL;
	/* Validated bounds keep the length below IMEXD_RAFTWIRE_FRAME_MAX. */
	return wr_encode(wr_msg, msg, out, len);
}

void imexd_raftwire_free(struct raft_message *msg)
{
	struct raft_append_entries *a;

	if (!msg)
		return;
	switch (msg->type) {
	case RAFT_APPEND_ENTRIES:
		a = &msg->append_entries;
		if (a->entries)
			raft_free(a->entries[0].batch);
		raft_free(a->entries);
		a->entries = NULL;
		a->n_entries = 0;
		break;
	case RAFT_INSTALL_SNAPSHOT:
		raft_configuration_close(&msg->install_snapshot.conf);
		raft_configuration_init(&msg->install_snapshot.conf);
		raft_free(msg->install_snapshot.data.base);
		msg->install_snapshot.data.base = NULL;
		msg->install_snapshot.data.len = 0;
		break;
	default:
		break;
	}
}

void imexd_raftwire_release(struct raft_message *msg)
{
	if (!msg)
		return;
	switch (msg->type) {
	case RAFT_APPEND_ENTRIES:
		raft_free(msg->append_entries.entries);
		msg->append_entries.entries = NULL;
		msg->append_entries.n_entries = 0;
		break;
	case RAFT_INSTALL_SNAPSHOT:
		/* raft took both (freed, or handed out in update->snapshot). */
		raft_configuration_init(&msg->install_snapshot.conf);
		msg->install_snapshot.data.base = NULL;
		msg->install_snapshot.data.len = 0;
		break;
	default:
		break;
	}
}

unsigned imexd_raftwire_entries_fit(const struct raft_entry *entries,
				    unsigned n)
{
	size_t total = 0;
	unsigned i;

	for (i = 0; entries && i < n && i < IMEXD_RAFTWIRE_ENTRIES_MAX; i++) {
		if (entries[i].buf.len > IMEXD_RAFTWIRE_ENTRY_MAX ||
		    entries[i].buf.len > IMEXD_RAFTWIRE_APPEND_MAX - total)
			break;
		total += entries[i].buf.len;
	}
	return i;
}
