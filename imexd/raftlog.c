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

#include "raftlog_internal.h"

int rl_raft_errno(int rv)
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
int rl_conf_decode(const void *base, size_t len,
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
		return rl_raft_errno(rv);
	}
	return 0;
}

bool rl_entry_type_valid(int type)
{
	return type == RAFT_COMMAND || type == RAFT_BARRIER ||
	       type == RAFT_CHANGE;
}

raft_index rl_last_index(const struct imexd_raftlog *l)
{
	if (l->n)
		return l->start + l->n - 1;
	return l->has_snap ? l->snap.index : 0;
}

void rl_free_entries(struct raft_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].buf.base);
}

int rl_reserve(struct raft_entry **ents, size_t *cap, size_t want)
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

void rl_log_header(uint8_t h[LOG_HDR])
{
	memcpy(h, log_magic, 8);
	put32(h + 8, VERSION);
	put32(h + 12, crc(h, 12));
}

size_t rl_frame_size(const struct raft_entry *e, size_t n)
{
	size_t sz = FRAME_HDR;

	for (size_t i = 0; i < n; i++)
		sz += ENTRY_HDR + e[i].buf.len;
	return sz;
}

/* Encode one frame of @n entries from @first into @p (frame_size bytes). */
size_t rl_frame_encode(uint8_t *p, raft_index first,
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
		len += rl_frame_size(l->ents + skip + i, k);
	}
	p = malloc(len);
	if (!p)
		return -ENOMEM;
	rl_log_header(p);
	off = LOG_HDR;
	for (i = 0; i < n; i += IMEXD_RAFTLOG_BATCH_MAX) {
		k = n - i < IMEXD_RAFTLOG_BATCH_MAX ? n - i :
						      IMEXD_RAFTLOG_BATCH_MAX;
		off += rl_frame_encode(p + off, l->start + skip + i,
				    l->ents + skip + i, k);
	}
	*out = p;
	*outlen = len;
	return 0;
}

/* Replace raft-log with entries [from, last]; the memory is the caller's. */
int rl_log_rewrite(struct imexd_raftlog *l, raft_index from)
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
	return rl_last_index(l);
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
