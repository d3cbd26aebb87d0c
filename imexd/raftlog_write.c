// SPDX-License-Identifier: GPL-2.0
/*
 * The raft log: writes (term and vote, entries, snapshots) and the
 * RAFT_START event built from what was loaded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raftlog_internal.h"

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
	if (!index || index < l->start || index > rl_last_index(l) + 1 ||
	    (l->has_snap && index <= l->snap.index))
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		if (e[i].buf.len > IMEXD_RAFT_ENTRY_MAX)
			return -EFBIG;
		if (e[i].buf.len && !e[i].buf.base)
			return -EINVAL;
		if (!rl_entry_type_valid(e[i].type) || !e[i].term ||
		    e[i].term < prev)
			return -EINVAL;
		if (index + i == 1 && e[i].type != RAFT_CHANGE)
			return -EINVAL;
		if (e[i].type == RAFT_CHANGE) {
			struct raft_configuration c;
			int ret = rl_conf_decode(e[i].buf.base, e[i].buf.len, &c);

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
	flen = rl_frame_size(entries, n);
	frame = malloc(flen);
	ret = copy && frame ? rl_reserve(&l->ents, &l->cap, keep + n) : -ENOMEM;
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
	rl_frame_encode(frame, index, entries, n);
	if (!l->log_exists) {
		rl_log_header(h);
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
	rl_free_entries(l->ents + keep, l->n - keep);
	if (n)
		memcpy(l->ents + keep, copy, n * sizeof(*copy));
	l->n = keep + n;
	n = 0;	/* the copies are the log's now */
out:
	if (copy)
		rl_free_entries(copy, n);
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
		return rl_raft_errno(ret);
	ret = enc.len > IMEXD_RAFTLOG_CONF_MAX ? -EFBIG :
	      rl_conf_decode(enc.base, enc.len, &conf);
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
	rl_free_entries(l->ents, k);
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
	ret = rl_log_rewrite(l, from);
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
	ret = rl_log_rewrite(l, rl_last_index(l) + 1);
	if (ret) {
		/* The log no longer fits the snapshot: reopen repairs it. */
		l->broken = true;
		return ret;
	}
	rl_free_entries(l->ents, l->n);
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
			return rl_raft_errno(rv);
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
