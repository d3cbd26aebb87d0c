// SPDX-License-Identifier: GPL-2.0
/*
 * Durable raft state (raftlog.h).  Formats, all integers little-endian:
 *
 * raft-meta (40 bytes; version 1, 32 bytes without the group, still loads):
 *   "IMXRMETA" u32 version(2) u32 crc(bytes 16..end) u64 term u64 vote
 *   u64 group (the group id, 0: none yet)
 * raft-snapshot (56-byte header, then the configuration, then the data):
 *   "IMXRSNAP" u32 version(1) u32 crc(bytes 16..end) u64 index u64 term
 *   u64 configuration_index u64 data_len u32 conf_len u32 0
 * raft-log: "IMXRLOG\0" u32 version(1) u32 crc(bytes 0..12), then frames:
 *   u32 hcrc(bytes 4..32) u32 count u64 first_index u64 payload_len
 *   u32 pcrc(payload) u32 FRAME_MAGIC, then count entries of
 *   u64 term u32 len u8 type u8[3] 0, then len bytes of data.
 *
 * The header CRC tells a frame header from a torn one before its length
 * is trusted; appends are synchronous (write + fdatasync), so only the
 * last frame can be torn, and a bad frame that is not the last is damage.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "raftlog.h"
#include "store_file.h"

#define VERSION		1u
#define META_VERSION	2u
#define META_LEN_V1	32u
#define META_LEN	40u
#define SNAP_HDR	56u
#define LOG_HDR		16u
#define FRAME_HDR	32u
#define ENTRY_HDR	16u
#define FRAME_MAGIC	0x46584d49u	/* "IMXF" */
/* Largest file read back: the log may hold many trailing entries. */
#define LOG_FILE_MAX	((size_t)1 << 40)
#define CONF_SERVERS_MAX 4096u

/* Byte arrays, not strings: no NUL in the first two. */
static const uint8_t meta_magic[8] = { 'I', 'M', 'X', 'R', 'M', 'E', 'T',
				       'A' };
static const uint8_t snap_magic[8] = { 'I', 'M', 'X', 'R', 'S', 'N', 'A',
				       'P' };
static const uint8_t log_magic[8] = { 'I', 'M', 'X', 'R', 'L', 'O', 'G', 0 };

struct imexd_raftlog {
	struct imexd_raftlog_io io;
	raft_term term;
	raft_id vote;
	uint64_t group;
	/* Entries start..start+n-1, each buffer malloc'd, batch NULL. */
	raft_index start;
	struct raft_entry *ents;
	size_t n, cap;
	/* Snapshot: metadata with a decoded configuration we own. */
	bool has_snap;
	struct raft_snapshot_metadata snap;
	struct raft_buffer snap_conf;	/* encoded, malloc'd */
	struct raft_buffer snap_data;	/* malloc'd */
	/* raft-log: bytes of valid content, whether the file exists. */
	uint64_t log_end;
	bool log_exists;
	bool broken;	/* a failed write could not be undone */
};

/* ---- helpers ------------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t crc(const void *p, size_t len)
{
	return (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), p, len);
}


#define DAMAGED "the raft state is damaged: move it aside and let this node rejoin its group"

static int raft_errno(int rv)
{
	return rv == RAFT_NOMEM ? -ENOMEM : -EINVAL;
}

/*
 * raft_configuration_decode() trusts its input's lengths: walk the
 * encoding (u8 format 1, u64 count, per server u64 id, NUL-terminated
 * address, u8 role) within @len first.
 */
static bool conf_fits(const uint8_t *p, size_t len)
{
	size_t off = 9, i;
	uint64_t n;

	if (len < 9 || p[0] != 1)
		return false;
	n = get64(p + 1);
	if (n == 0 || n > CONF_SERVERS_MAX)
		return false;
	for (i = 0; i < n; i++) {
		const uint8_t *nul;

		if (len - off < 8)
			return false;
		off += 8;
		nul = memchr(p + off, 0, len - off);
		if (!nul)
			return false;
		off = (size_t)(nul - p) + 1;
		if (len - off < 1)
			return false;
		off++;
	}
	return true;
}

/* Decode @buf into @conf (init'ed here); 0, -EINVAL or -ENOMEM. */
static int conf_decode(const void *base, size_t len,
		       struct raft_configuration *conf)
{
	struct raft_buffer b = { .base = (void *)base, .len = len };
	int rv;

	raft_configuration_init(conf);
	if (!conf_fits(base, len))
		return -EINVAL;
	rv = raft_configuration_decode(&b, conf);
	if (rv) {
		raft_configuration_close(conf);
		raft_configuration_init(conf);
		return raft_errno(rv);
	}
	return 0;
}

static bool entry_type_valid(int type)
{
	return type == RAFT_COMMAND || type == RAFT_BARRIER ||
	       type == RAFT_CHANGE;
}

static raft_index last_index(const struct imexd_raftlog *l)
{
	if (l->n)
		return l->start + l->n - 1;
	return l->has_snap ? l->snap.index : 0;
}

static void free_entries(struct raft_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].buf.base);
}

static int reserve(struct raft_entry **ents, size_t *cap, size_t want)
{
	struct raft_entry *p;
	size_t c = *cap ? *cap : 16;

	if (want <= *cap)
		return 0;
	while (c < want)
		c *= 2;
	p = realloc(*ents, c * sizeof(*p));
	if (!p)
		return -ENOMEM;
	*ents = p;
	*cap = c;
	return 0;
}

/* ---- encoding ------------------------------------------------------------ */

static void log_header(uint8_t h[LOG_HDR])
{
	memcpy(h, log_magic, 8);
	put32(h + 8, VERSION);
	put32(h + 12, crc(h, 12));
}

static size_t frame_size(const struct raft_entry *e, size_t n)
{
	size_t sz = FRAME_HDR;

	for (size_t i = 0; i < n; i++)
		sz += ENTRY_HDR + e[i].buf.len;
	return sz;
}

/* Encode one frame of @n entries from @first into @p (frame_size bytes). */
static size_t frame_encode(uint8_t *p, raft_index first,
			   const struct raft_entry *e, size_t n)
{
	uint8_t *q = p + FRAME_HDR;

	for (size_t i = 0; i < n; i++) {
		put64(q, e[i].term);
		put32(q + 8, (uint32_t)e[i].buf.len);
		q[12] = (uint8_t)e[i].type;
		q[13] = q[14] = q[15] = 0;
		if (e[i].buf.len)
			memcpy(q + ENTRY_HDR, e[i].buf.base, e[i].buf.len);
		q += ENTRY_HDR + e[i].buf.len;
	}
	put32(p + 4, (uint32_t)n);
	put64(p + 8, first);
	put64(p + 16, (uint64_t)(q - p - FRAME_HDR));
	put32(p + 24, crc(p + FRAME_HDR, (size_t)(q - p - FRAME_HDR)));
	put32(p + 28, FRAME_MAGIC);
	put32(p, crc(p + 4, FRAME_HDR - 4));
	return (size_t)(q - p);
}

/* The whole log file holding entries [from, last]: header + frames. */
static int log_image(const struct imexd_raftlog *l, raft_index from,
		     uint8_t **out, size_t *outlen)
{
	size_t skip = from > l->start ? (size_t)(from - l->start) : 0;
	size_t n = skip < l->n ? l->n - skip : 0;
	size_t len = LOG_HDR, off, i, k;
	uint8_t *p;

	for (i = 0; i < n; i += IMEXD_RAFTLOG_BATCH_MAX) {
		k = n - i < IMEXD_RAFTLOG_BATCH_MAX ? n - i :
						      IMEXD_RAFTLOG_BATCH_MAX;
		len += frame_size(l->ents + skip + i, k);
	}
	p = malloc(len);
	if (!p)
		return -ENOMEM;
	log_header(p);
	off = LOG_HDR;
	for (i = 0; i < n; i += IMEXD_RAFTLOG_BATCH_MAX) {
		k = n - i < IMEXD_RAFTLOG_BATCH_MAX ? n - i :
						      IMEXD_RAFTLOG_BATCH_MAX;
		off += frame_encode(p + off, l->start + skip + i,
				    l->ents + skip + i, k);
	}
	*out = p;
	*outlen = len;
	return 0;
}

/* Replace raft-log with entries [from, last]; the memory is the caller's. */
static int log_rewrite(struct imexd_raftlog *l, raft_index from)
{
	uint8_t *img;
	size_t len;
	int ret = log_image(l, from, &img, &len);

	if (ret)
		return ret;
	ret = l->io.replace(l->io.ctx, IMEXD_RAFTLOG_LOG, img, len);
	free(img);
	if (!ret) {
		l->log_end = len;
		l->log_exists = true;
	}
	return ret;
}

/* ---- loading ------------------------------------------------------------- */

struct loader {
	struct imexd_raftlog *l;
	bool seen;	/* a frame was loaded: its index fixes the start */
	char *err;
	size_t errlen;
	char *note;
	size_t notelen;
};

static int load_meta(struct loader *ld)
{
	struct imexd_raftlog *l = ld->l;
	uint8_t *b = NULL;
	size_t len = 0;
	int ret;

	ret = l->io.read(l->io.ctx, IMEXD_RAFTLOG_META, META_LEN + 1, &b, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return imexd_errf(ld->err, ld->errlen, ret, "%s/%s: cannot read: %s",
			    l->io.where, IMEXD_RAFTLOG_META, strerror(-ret));
	/* Version 1 (no group) as an older imexd wrote it. */
	if (len < META_LEN_V1 || memcmp(b, meta_magic, 8) ||
	    len != (get32(b + 8) == VERSION ? META_LEN_V1 : META_LEN) ||
	    (get32(b + 8) != VERSION && get32(b + 8) != META_VERSION) ||
	    get32(b + 12) != crc(b + 16, len - 16))
		ret = imexd_errf(ld->err, ld->errlen, -EBADMSG,
			   "%s/%s: offset 0: bad size, format or checksum: " DAMAGED,
			   l->io.where, IMEXD_RAFTLOG_META);
	else {
		l->term = get64(b + 16);
		l->vote = get64(b + 24);
		l->group = len == META_LEN ? get64(b + 32) : 0;
	}
	free(b);
	return ret;
}

static int load_snapshot(struct loader *ld)
{
	struct imexd_raftlog *l = ld->l;
	uint64_t dlen, clen;
	uint8_t *b = NULL;
	size_t len = 0;
	int ret;

	ret = l->io.read(l->io.ctx, IMEXD_RAFTLOG_SNAPSHOT,
			 SNAP_HDR + IMEXD_RAFTLOG_CONF_MAX +
				 IMEXD_RAFTLOG_SNAPSHOT_MAX, &b, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return imexd_errf(ld->err, ld->errlen, ret, "%s/%s: cannot read: %s",
			    l->io.where, IMEXD_RAFTLOG_SNAPSHOT,
			    strerror(-ret));
	ret = -EBADMSG;
	if (len < SNAP_HDR || memcmp(b, snap_magic, 8) ||
	    get32(b + 8) != VERSION || get32(b + 12) != crc(b + 16, len - 16))
		goto bad;
	dlen = get64(b + 40);
	clen = get32(b + 48);
	if (dlen > IMEXD_RAFTLOG_SNAPSHOT_MAX ||
	    clen > IMEXD_RAFTLOG_CONF_MAX || SNAP_HDR + clen + dlen != len)
		goto bad;
	l->snap.index = get64(b + 16);
	l->snap.term = get64(b + 24);
	l->snap.configuration_index = get64(b + 32);
	if (!l->snap.index || !l->snap.term ||
	    l->snap.configuration_index > l->snap.index)
		goto bad;
	ret = conf_decode(b + SNAP_HDR, clen, &l->snap.configuration);
	if (ret == -EINVAL) {
		ret = -EBADMSG;
		goto bad;
	}
	if (ret)
		goto out;
	l->snap_conf.base = malloc(clen);
	l->snap_data.base = malloc(dlen ? dlen : 1);
	if (!l->snap_conf.base || !l->snap_data.base) {
		ret = -ENOMEM;
		goto out;	/* imexd_raftlog_close() frees */
	}
	memcpy(l->snap_conf.base, b + SNAP_HDR, clen);
	l->snap_conf.len = clen;
	if (dlen)
		memcpy(l->snap_data.base, b + SNAP_HDR + clen, dlen);
	l->snap_data.len = dlen;
	l->has_snap = true;
	ret = 0;
	goto out;
bad:
	imexd_errf(ld->err, ld->errlen, ret,
	     "%s/%s: offset 0: bad size, format or checksum: " DAMAGED,
	     l->io.where, IMEXD_RAFTLOG_SNAPSHOT);
out:
	free(b);
	return ret;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Add the entries of the frame at @b (its header checked) to the log.
 * -EBADMSG with a message for anything libraft or this log would refuse.
 */
static int load_frame(struct loader *ld, const uint8_t *b, uint64_t off)
{
	struct imexd_raftlog *l = ld->l;
	uint32_t count = get32(b + 4);
	raft_index first = get64(b + 8);
	uint64_t plen = get64(b + 16);
	const uint8_t *q = b + FRAME_HDR, *end = q + plen;
	raft_term prev;
	size_t keep;
	const char *why = NULL;
	struct raft_entry *e;
	int ret;

	if (count > IMEXD_RAFTLOG_BATCH_MAX || !first)
		why = "bad entry count or index";
	else if (ld->seen && (first < l->start || first > l->start + l->n))
		why = "the frame's first index leaves a gap";
	if (why)
		goto bad;
	if (!ld->seen)
		l->start = first;
	ld->seen = true;
	keep = (size_t)(first - l->start);
	free_entries(l->ents + keep, l->n - keep);
	l->n = keep;
	if (reserve(&l->ents, &l->cap, l->n + count))
		return -ENOMEM;
	prev = l->n ? l->ents[l->n - 1].term : 0;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t len;

		if ((size_t)(end - q) < ENTRY_HDR) {
			why = "entries overrun the frame";
			goto bad;
		}
		e = &l->ents[l->n];
		*e = (struct raft_entry){ .term = get64(q),
					  .type = (enum raft_entry_type)q[12] };
		len = get32(q + 8);
		q += ENTRY_HDR;
		if ((size_t)(end - q) < len || len > IMEXD_RAFT_ENTRY_MAX) {
			why = "an entry overruns the frame or its bound";
			goto bad;
		}
		if (!entry_type_valid(e->type) || !e->term || e->term < prev) {
			why = "bad entry type or term";
			goto bad;
		}
		if (e->type == RAFT_CHANGE) {
			struct raft_configuration c;

			ret = conf_decode(q, len, &c);
			raft_configuration_close(&c);
			if (ret == -ENOMEM)
				return ret;
			if (ret) {
				why = "a configuration entry does not decode";
				goto bad;
			}
		}
		e->buf.base = malloc(len ? len : 1);
		if (!e->buf.base)
			return -ENOMEM;
		if (len)
			memcpy(e->buf.base, q, len);
		e->buf.len = len;
		l->n++;
		prev = e->term;
		q += len;
	}
	if (q != end) {
		why = "the frame has bytes after its entries";
		goto bad;
	}
	return 0;
bad:
	return imexd_errf(ld->err, ld->errlen, -EBADMSG, "%s/%s: offset %llu: %s: " DAMAGED,
		    l->io.where, IMEXD_RAFTLOG_LOG, (unsigned long long)off,
		    why);
}

static int load_log(struct loader *ld)
{
	struct imexd_raftlog *l = ld->l;
	uint8_t *b = NULL;
	size_t len = 0, off = LOG_HDR;
	const char *torn = NULL;
	int ret;

	ret = l->io.read(l->io.ctx, IMEXD_RAFTLOG_LOG, LOG_FILE_MAX, &b, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return imexd_errf(ld->err, ld->errlen, ret, "%s/%s: cannot read: %s",
			    l->io.where, IMEXD_RAFTLOG_LOG, strerror(-ret));
	l->log_exists = true;
	if (len < LOG_HDR || memcmp(b, log_magic, 8) ||
	    get32(b + 8) != VERSION || get32(b + 12) != crc(b, 12)) {
		ret = imexd_errf(ld->err, ld->errlen, -EBADMSG,
			   "%s/%s: offset 0: bad header: " DAMAGED,
			   l->io.where, IMEXD_RAFTLOG_LOG);
		goto out;
	}
	while (off < len && !torn) {
		const uint8_t *h = b + off;
		size_t rest = len - off;
		uint64_t plen;

		if (rest < FRAME_HDR) {
			torn = "an incomplete frame header";
			break;
		}
		if (get32(h) != crc(h + 4, FRAME_HDR - 4) ||
		    get32(h + 28) != FRAME_MAGIC) {
			/* Never written (a crash after the size grew). */
			if (all_zero(h, rest)) {
				torn = "zeroes";
				break;
			}
			ret = imexd_errf(ld->err, ld->errlen, -EBADMSG,
				   "%s/%s: offset %zu: bad frame header checksum: " DAMAGED,
				   l->io.where, IMEXD_RAFTLOG_LOG, off);
			goto out;
		}
		plen = get64(h + 16);
		if (plen > rest - FRAME_HDR) {
			torn = "an incomplete frame";
			break;
		}
		if (get32(h + 24) != crc(h + FRAME_HDR, (size_t)plen)) {
			if (FRAME_HDR + plen == rest ||
			    all_zero(h + FRAME_HDR + plen,
				     rest - FRAME_HDR - (size_t)plen)) {
				torn = "a frame with a bad checksum";
				break;
			}
			ret = imexd_errf(ld->err, ld->errlen, -EBADMSG,
				   "%s/%s: offset %zu: bad frame checksum: " DAMAGED,
				   l->io.where, IMEXD_RAFTLOG_LOG, off);
			goto out;
		}
		ret = load_frame(ld, h, off);
		if (ret)
			goto out;
		off += FRAME_HDR + (size_t)plen;
	}
	l->log_end = off;
	if (torn) {
		/* Cut it, so the next frame does not follow garbage. */
		ret = l->io.truncate(l->io.ctx, IMEXD_RAFTLOG_LOG, off);
		if (!ret)
			ret = l->io.sync(l->io.ctx, IMEXD_RAFTLOG_LOG);
		if (ret) {
			imexd_errf(ld->err, ld->errlen, ret,
			     "%s/%s: cannot cut a torn tail at offset %zu: %s",
			     l->io.where, IMEXD_RAFTLOG_LOG, off,
			     strerror(-ret));
			goto out;
		}
		imexd_errf(ld->note, ld->notelen, 0,
		     "%s/%s: dropped %zu bytes at offset %zu (%s), left by a crash during an append that never completed",
		     l->io.where, IMEXD_RAFTLOG_LOG, len - off, off, torn);
	}
out:
	free(b);
	return ret;
}

/* Make the loaded pieces one state libraft accepts, repairing what a crash
 * between storing a snapshot and compacting the log leaves. */
static int load_check(struct loader *ld)
{
	struct imexd_raftlog *l = ld->l;
	raft_index s = l->snap.index;
	bool rewrite = false;

	if (!l->term && (l->vote || l->has_snap || l->n))
		return imexd_errf(ld->err, ld->errlen, -EBADMSG,
			    "%s/%s: state without a term (entries, snapshot or vote but term 0): " DAMAGED,
			    l->io.where, IMEXD_RAFTLOG_META);
	if (!l->has_snap) {
		if (l->n && l->start != 1)
			return imexd_errf(ld->err, ld->errlen, -EBADMSG,
				    "%s/%s: the log starts at index %llu without a snapshot: " DAMAGED,
				    l->io.where, IMEXD_RAFTLOG_LOG,
				    (unsigned long long)l->start);
		if (l->n && l->ents[0].type != RAFT_CHANGE)
			return imexd_errf(ld->err, ld->errlen, -EBADMSG,
				    "%s/%s: entry 1 is not a configuration: " DAMAGED,
				    l->io.where, IMEXD_RAFTLOG_LOG);
		if (!l->n)
			l->start = 1;
		return 0;
	}
	if (!l->n) {
		l->start = s + 1;
	} else if (l->start > s + 1) {
		return imexd_errf(ld->err, ld->errlen, -EBADMSG,
			    "%s/%s: the log starts at index %llu after the snapshot's %llu: " DAMAGED,
			    l->io.where, IMEXD_RAFTLOG_LOG,
			    (unsigned long long)l->start,
			    (unsigned long long)s);
	} else if (l->start <= s &&
		   (s > l->start + l->n - 1 ||
		    l->ents[s - l->start].term != l->snap.term)) {
		/* An installed snapshot whose log reset did not happen. */
		free_entries(l->ents, l->n);
		l->n = 0;
		l->start = s + 1;
		rewrite = true;
	}
	if (rewrite) {
		int ret = log_rewrite(l, l->start);

		if (ret)
			return imexd_errf(ld->err, ld->errlen, ret,
				    "%s/%s: cannot reset the log after the snapshot: %s",
				    l->io.where, IMEXD_RAFTLOG_LOG,
				    strerror(-ret));
	}
	return 0;
}

int imexd_raftlog_open(struct imexd_raftlog **logp,
		       const struct imexd_raftlog_io *io, char *note,
		       size_t notelen, char *err, size_t errlen)
{
	struct loader ld = { .err = err, .errlen = errlen, .note = note,
			     .notelen = notelen };
	struct imexd_raftlog *l;
	int ret;

	if (note && notelen)
		note[0] = '\0';
	if (!logp || !io || !io->read || !io->replace || !io->write ||
	    !io->truncate || !io->sync || !io->where) {
		if (io && io->close)
			io->close(io->ctx);
		return imexd_errf(err, errlen, -EINVAL, "raft log: incomplete io");
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		if (io->close)
			io->close(io->ctx);
		return imexd_errf(err, errlen, -ENOMEM, "out of memory");
	}
	l->io = *io;
	l->start = 1;
	raft_configuration_init(&l->snap.configuration);
	ld.l = l;
	ret = load_meta(&ld);
	if (!ret)
		ret = load_snapshot(&ld);
	if (!ret)
		ret = load_log(&ld);
	if (!ret)
		ret = load_check(&ld);
	if (ret == -ENOMEM)
		imexd_errf(err, errlen, ret, "out of memory");
	if (ret) {
		imexd_raftlog_close(l);
		return ret;
	}
	*logp = l;
	return 0;
}

void imexd_raftlog_close(struct imexd_raftlog *l)
{
	if (!l)
		return;
	free_entries(l->ents, l->n);
	free(l->ents);
	raft_configuration_close(&l->snap.configuration);
	free(l->snap_conf.base);
	free(l->snap_data.base);
	if (l->io.close)
		l->io.close(l->io.ctx);
	free(l);
}

/* ---- views --------------------------------------------------------------- */

raft_term imexd_raftlog_term(const struct imexd_raftlog *l)
{
	return l->term;
}

uint64_t imexd_raftlog_group(const struct imexd_raftlog *l)
{
	return l->group;
}

raft_id imexd_raftlog_vote(const struct imexd_raftlog *l)
{
	return l->vote;
}

raft_index imexd_raftlog_start_index(const struct imexd_raftlog *l)
{
	return l->start;
}

raft_index imexd_raftlog_last_index(const struct imexd_raftlog *l)
{
	return last_index(l);
}

const struct raft_entry *imexd_raftlog_entry(const struct imexd_raftlog *l,
					     raft_index index)
{
	if (index < l->start || index - l->start >= l->n)
		return NULL;
	return &l->ents[index - l->start];
}

raft_term imexd_raftlog_term_of(const struct imexd_raftlog *l,
				raft_index index)
{
	const struct raft_entry *e = imexd_raftlog_entry(l, index);

	if (e)
		return e->term;
	return l->has_snap && index == l->snap.index ? l->snap.term : 0;
}

const struct raft_snapshot_metadata *
imexd_raftlog_snapshot(const struct imexd_raftlog *l, struct raft_buffer *data)
{
	if (!l->has_snap)
		return NULL;
	if (data)
		*data = l->snap_data;
	return &l->snap;
}

/* ---- writes -------------------------------------------------------------- */

static int meta_write(struct imexd_raftlog *l, raft_term term, raft_id vote,
		      uint64_t group)
{
	uint8_t b[META_LEN];
	int ret;

	memcpy(b, meta_magic, 8);
	put32(b + 8, META_VERSION);
	put64(b + 16, term);
	put64(b + 24, vote);
	put64(b + 32, group);
	put32(b + 12, crc(b + 16, META_LEN - 16));
	ret = l->io.replace(l->io.ctx, IMEXD_RAFTLOG_META, b, sizeof(b));
	if (!ret) {
		l->term = term;
		l->vote = vote;
		l->group = group;
	}
	return ret;
}

int imexd_raftlog_set_term_vote(struct imexd_raftlog *l, raft_term term,
				raft_id vote)
{
	if (l->broken)
		return -EIO;
	if (term < l->term)
		return -EINVAL;
	return meta_write(l, term, vote, l->group);
}

int imexd_raftlog_set_group(struct imexd_raftlog *l, uint64_t group)
{
	if (l->broken)
		return -EIO;
	if (!group || (l->group && l->group != group))
		return -EINVAL;
	if (l->group == group)
		return 0;
	return meta_write(l, l->term, l->vote, group);
}

static int check_entries(const struct imexd_raftlog *l, raft_index index,
			 const struct raft_entry *e, unsigned n)
{
	raft_term prev = index > 1 ? imexd_raftlog_term_of(l, index - 1) : 0;

	if (n > IMEXD_RAFTLOG_BATCH_MAX)
		return -E2BIG;
	if (n && !e)
		return -EINVAL;
	if (!index || index < l->start || index > last_index(l) + 1 ||
	    (l->has_snap && index <= l->snap.index))
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		if (e[i].buf.len > IMEXD_RAFT_ENTRY_MAX)
			return -EFBIG;
		if (e[i].buf.len && !e[i].buf.base)
			return -EINVAL;
		if (!entry_type_valid(e[i].type) || !e[i].term ||
		    e[i].term < prev)
			return -EINVAL;
		if (index + i == 1 && e[i].type != RAFT_CHANGE)
			return -EINVAL;
		if (e[i].type == RAFT_CHANGE) {
			struct raft_configuration c;
			int ret = conf_decode(e[i].buf.base, e[i].buf.len, &c);

			raft_configuration_close(&c);
			if (ret)
				return ret;
		}
		prev = e[i].term;
	}
	return 0;
}

/* Undo a failed append's bytes; if even that fails, stop writing. */
static void log_undo(struct imexd_raftlog *l)
{
	if (l->io.truncate(l->io.ctx, IMEXD_RAFTLOG_LOG, l->log_end) ||
	    l->io.sync(l->io.ctx, IMEXD_RAFTLOG_LOG))
		l->broken = true;
}

int imexd_raftlog_append(struct imexd_raftlog *l, raft_index index,
			 const struct raft_entry *entries, unsigned n)
{
	struct raft_entry *copy;
	size_t keep, flen;
	uint8_t *frame;
	uint8_t h[LOG_HDR];
	int ret;

	if (l->broken)
		return -EIO;
	ret = check_entries(l, index, entries, n);
	if (ret)
		return ret;
	keep = (size_t)(index - l->start);
	copy = calloc(n ? n : 1, sizeof(*copy));
	flen = frame_size(entries, n);
	frame = malloc(flen);
	ret = copy && frame ? reserve(&l->ents, &l->cap, keep + n) : -ENOMEM;
	for (unsigned i = 0; !ret && i < n; i++) {
		copy[i] = entries[i];
		copy[i].batch = NULL;
		copy[i].buf.base = malloc(entries[i].buf.len ?
					  entries[i].buf.len : 1);
		if (!copy[i].buf.base)
			ret = -ENOMEM;
		else if (entries[i].buf.len)
			memcpy(copy[i].buf.base, entries[i].buf.base,
			       entries[i].buf.len);
	}
	if (ret)
		goto out;
	frame_encode(frame, index, entries, n);
	if (!l->log_exists) {
		log_header(h);
		ret = l->io.replace(l->io.ctx, IMEXD_RAFTLOG_LOG, h, sizeof(h));
		if (ret)
			goto out;
		l->log_exists = true;
		l->log_end = LOG_HDR;
	}
	ret = l->io.write(l->io.ctx, IMEXD_RAFTLOG_LOG, l->log_end, frame,
			  flen);
	if (!ret)
		ret = l->io.sync(l->io.ctx, IMEXD_RAFTLOG_LOG);
	if (ret) {
		log_undo(l);
		goto out;
	}
	l->log_end += flen;
	free_entries(l->ents + keep, l->n - keep);
	if (n)
		memcpy(l->ents + keep, copy, n * sizeof(*copy));
	l->n = keep + n;
	n = 0;	/* the copies are the log's now */
out:
	if (copy)
		free_entries(copy, n);
	free(copy);
	free(frame);
	return ret;
}

/* Store @meta + @data as raft-snapshot and in memory. */
static int snapshot_store(struct imexd_raftlog *l,
			  const struct raft_snapshot_metadata *meta,
			  const void *data, size_t len)
{
	struct raft_configuration conf;
	struct raft_buffer enc = { 0 };
	uint8_t *img = NULL, *dcopy = NULL, *ccopy = NULL;
	size_t ilen;
	int ret;

	if (len > IMEXD_RAFTLOG_SNAPSHOT_MAX)
		return -EFBIG;
	if (!meta->index || !meta->term ||
	    meta->configuration_index > meta->index || (len && !data) ||
	    !meta->configuration.n)
		return -EINVAL;
	ret = raft_configuration_encode(&meta->configuration, &enc);
	if (ret)
		return raft_errno(ret);
	ret = enc.len > IMEXD_RAFTLOG_CONF_MAX ? -EFBIG :
	      conf_decode(enc.base, enc.len, &conf);
	if (ret) {
		raft_free(enc.base);
		return ret;
	}
	ilen = SNAP_HDR + enc.len + len;
	img = malloc(ilen);
	dcopy = malloc(len ? len : 1);
	ccopy = malloc(enc.len);
	if (!img || !dcopy || !ccopy) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(img, snap_magic, 8);
	put32(img + 8, VERSION);
	put64(img + 16, meta->index);
	put64(img + 24, meta->term);
	put64(img + 32, meta->configuration_index);
	put64(img + 40, len);
	put32(img + 48, (uint32_t)enc.len);
	put32(img + 52, 0);
	memcpy(img + SNAP_HDR, enc.base, enc.len);
	if (len) {
		memcpy(img + SNAP_HDR + enc.len, data, len);
		memcpy(dcopy, data, len);
	}
	put32(img + 12, crc(img + 16, ilen - 16));
	ret = l->io.replace(l->io.ctx, IMEXD_RAFTLOG_SNAPSHOT, img, ilen);
	if (ret)
		goto out;
	raft_configuration_close(&l->snap.configuration);
	free(l->snap_conf.base);
	free(l->snap_data.base);
	l->snap = *meta;
	l->snap.configuration = conf;
	raft_configuration_init(&conf);
	/* Ours to free with free(), not raft_free(). */
	memcpy(ccopy, enc.base, enc.len);
	l->snap_conf.base = ccopy;
	l->snap_conf.len = enc.len;
	ccopy = NULL;
	l->snap_data.base = dcopy;
	l->snap_data.len = len;
	dcopy = NULL;
	l->has_snap = true;
out:
	raft_configuration_close(&conf);
	raft_free(enc.base);
	free(img);
	free(dcopy);
	free(ccopy);
	return ret;
}

/* Drop the entries before @start from memory (they are off the disk). */
static void drop_prefix(struct imexd_raftlog *l, raft_index start)
{
	size_t k = (size_t)(start - l->start);

	if (start <= l->start)
		return;
	if (k > l->n)
		k = l->n;
	free_entries(l->ents, k);
	memmove(l->ents, l->ents + k, (l->n - k) * sizeof(*l->ents));
	l->n -= k;
	l->start = start;
}

int imexd_raftlog_snapshot_take(struct imexd_raftlog *l,
				const struct raft_snapshot_metadata *meta,
				const void *data, size_t len,
				unsigned trailing)
{
	const struct raft_entry *e;
	raft_index from;
	int ret;

	if (l->broken)
		return -EIO;
	e = imexd_raftlog_entry(l, meta->index);
	if (!e || e->term != meta->term ||
	    (l->has_snap && meta->index <= l->snap.index))
		return -EINVAL;
	ret = snapshot_store(l, meta, data, len);
	if (ret)
		return ret;
	/* Keep (index - trailing, last], as libraft's trail does. */
	from = meta->index > trailing ? meta->index - trailing + 1 : 1;
	if (from <= l->start)
		return 0;
	ret = log_rewrite(l, from);
	if (!ret)
		drop_prefix(l, from);
	return ret;
}

int imexd_raftlog_snapshot_install(struct imexd_raftlog *l,
				   const struct raft_snapshot_metadata *meta,
				   const void *data, size_t len)
{
	int ret;

	if (l->broken)
		return -EIO;
	if (l->has_snap && meta->index <= l->snap.index)
		return -EINVAL;
	ret = snapshot_store(l, meta, data, len);
	if (ret)
		return ret;
	ret = log_rewrite(l, last_index(l) + 1);
	if (ret) {
		/* The log no longer fits the snapshot: reopen repairs it. */
		l->broken = true;
		return ret;
	}
	free_entries(l->ents, l->n);
	l->n = 0;
	l->start = meta->index + 1;
	return 0;
}

/* ---- RAFT_START ---------------------------------------------------------- */

int imexd_raftlog_start(const struct imexd_raftlog *l, struct raft_event *ev)
{
	struct raft_snapshot_metadata *meta = NULL;
	struct raft_entry *ents = NULL;
	uint8_t *batch = NULL;
	size_t total = 0, off = 0, i;
	int rv;

	if (l->has_snap) {
		meta = raft_malloc(sizeof(*meta));
		if (!meta)
			return -ENOMEM;
		*meta = l->snap;
		raft_configuration_init(&meta->configuration);
		rv = raft_configuration_decode(&l->snap_conf,
					       &meta->configuration);
		if (rv) {
			raft_configuration_close(&meta->configuration);
			raft_free(meta);
			return raft_errno(rv);
		}
	}
	if (l->n) {
		for (i = 0; i < l->n; i++)
			total += l->ents[i].buf.len;
		ents = raft_malloc(l->n * sizeof(*ents));
		batch = raft_malloc(total ? total : 1);
		if (!ents || !batch) {
			raft_free(ents);
			raft_free(batch);
			if (meta) {
				raft_configuration_close(&meta->configuration);
				raft_free(meta);
			}
			return -ENOMEM;
		}
		for (i = 0; i < l->n; i++) {
			ents[i] = l->ents[i];
			ents[i].buf.base = batch + off;
			ents[i].batch = batch;
			if (l->ents[i].buf.len)
				memcpy(batch + off, l->ents[i].buf.base,
				       l->ents[i].buf.len);
			off += l->ents[i].buf.len;
		}
	}
	ev->type = RAFT_START;
	ev->start.term = l->term;
	ev->start.voted_for = l->vote;
	ev->start.metadata = meta;
	ev->start.start_index = l->start;
	ev->start.entries = ents;
	ev->start.n_entries = (unsigned)l->n;
	return 0;
}

void imexd_raftlog_start_done(struct raft_event *ev, int rv)
{
	if (!rv && ev->start.entries) {
		raft_free(ev->start.entries[0].batch);
		raft_free(ev->start.entries);
	}
	/* raft_step() took the configuration over, but not the struct. */
	raft_free(ev->start.metadata);
	ev->start.metadata = NULL;
	ev->start.entries = NULL;
	ev->start.n_entries = 0;
}
