// SPDX-License-Identifier: GPL-2.0
/*
 * The raft log: loading and checking the state files, open and close.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raftlog_internal.h"

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
	ret = rl_conf_decode(b + SNAP_HDR, clen, &l->snap.configuration);
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
	rl_free_entries(l->ents + keep, l->n - keep);
	l->n = keep;
	if (rl_reserve(&l->ents, &l->cap, l->n + count))
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
		if (!rl_entry_type_valid(e->type) || !e->term || e->term < prev) {
			why = "bad entry type or term";
			goto bad;
		}
		if (e->type == RAFT_CHANGE) {
			struct raft_configuration c;

			ret = rl_conf_decode(q, len, &c);
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
		rl_free_entries(l->ents, l->n);
		l->n = 0;
		l->start = s + 1;
		rewrite = true;
	}
	if (rewrite) {
		int ret = rl_log_rewrite(l, l->start);

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
	rl_free_entries(l->ents, l->n);
	free(l->ents);
	raft_configuration_close(&l->snap.configuration);
	free(l->snap_conf.base);
	free(l->snap_data.base);
	if (l->io.close)
		l->io.close(l->io.ctx);
	free(l);
}
