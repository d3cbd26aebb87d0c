// SPDX-License-Identifier: GPL-2.0
/*
 * The raft log's memory backend (raftlog.h): a memory disk that can crash
 * (lose what was not synced) and fill up, for the simulator and tests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "raftlog.h"

/* ---- memory -------------------------------------------------------------- */

static const char *const mem_names[] = {
	IMEXD_RAFTLOG_META, IMEXD_RAFTLOG_SNAPSHOT, IMEXD_RAFTLOG_LOG,
};
#define MEM_FILES (sizeof(mem_names) / sizeof(mem_names[0]))

struct mem_buf {
	uint8_t *p;
	size_t len;
	bool exists;
};

struct mem_file {
	struct mem_buf cur;	/* what reads see */
	struct mem_buf dur;	/* what survives a crash */
};

struct imexd_raftlog_mem {
	struct mem_file f[MEM_FILES];
	size_t limit;
	int fail_err;
	unsigned fail_count;
};

static struct mem_file *mem_file(struct imexd_raftlog_mem *m, const char *name)
{
	size_t i;

	for (i = 0; i < MEM_FILES; i++)
		if (!strcmp(name, mem_names[i]))
			return &m->f[i];
	return NULL;
}

size_t imexd_raftlog_mem_used(const struct imexd_raftlog_mem *m)
{
	size_t i, n = 0;

	for (i = 0; i < MEM_FILES; i++)
		n += m->f[i].cur.len;
	return n;
}

/* Copy @len bytes of @src into @b (NULL-safe for len 0). */
static int mem_set(struct mem_buf *b, const void *src, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	if (!p)
		return -ENOMEM;
	if (len)
		memcpy(p, src, len);
	free(b->p);
	b->p = p;
	b->len = len;
	b->exists = true;
	return 0;
}

/* An injected failure for this call, if any. */
static int mem_injected(struct imexd_raftlog_mem *m)
{
	if (!m->fail_count)
		return 0;
	m->fail_count--;
	return m->fail_err;
}

/*
 * The file @name, to be changed: the injected failure for this call if
 * any, -EINVAL for a name that is none of raftlog's, else 0 and *@f.
 */
static int mem_change(struct imexd_raftlog_mem *m, const char *name,
		      struct mem_file **f)
{
	int ret = mem_injected(m);

	*f = mem_file(m, name);
	if (ret)
		return ret;
	return *f ? 0 : -EINVAL;
}

static int mem_read(void *ctx, const char *name, size_t max, uint8_t **buf,
		    size_t *len)
{
	struct mem_file *f = mem_file(ctx, name);
	uint8_t *p;

	if (!f || !f->cur.exists)
		return -ENOENT;
	if (f->cur.len > max)
		return -EFBIG;
	p = malloc(f->cur.len ? f->cur.len : 1);
	if (!p)
		return -ENOMEM;
	if (f->cur.len)
		memcpy(p, f->cur.p, f->cur.len);
	*buf = p;
	*len = f->cur.len;
	return 0;
}

static int mem_replace(void *ctx, const char *name, const void *data,
		       size_t len)
{
	struct imexd_raftlog_mem *m = ctx;
	struct mem_file *f;
	int ret = mem_change(m, name, &f);

	if (ret)
		return ret;
	/* Old and new both exist until the rename. */
	if (m->limit && imexd_raftlog_mem_used(m) + len > m->limit)
		return -ENOSPC;
	ret = mem_set(&f->dur, data, len);
	if (!ret)
		ret = mem_set(&f->cur, data, len);
	return ret;
}

static int mem_write(void *ctx, const char *name, uint64_t off,
		     const void *data, size_t len)
{
	struct imexd_raftlog_mem *m = ctx;
	struct mem_file *f;
	size_t end, room = len, grow;
	int ret = mem_change(m, name, &f);
	uint8_t *p;

	if (ret)
		return ret;
	if (off > SIZE_MAX / 2 || len > SIZE_MAX / 2)
		return -EINVAL;
	end = (size_t)off + len;
	grow = end > f->cur.len ? end - f->cur.len : 0;
	if (m->limit && grow) {
		size_t used = imexd_raftlog_mem_used(m);
		size_t free_bytes = used < m->limit ? m->limit - used : 0;

		if (grow > free_bytes) {
			/* Write what fits, as a full disk does. */
			room = grow - free_bytes < len ?
				       len - (grow - free_bytes) : 0;
			end = (size_t)off + room;
			ret = -ENOSPC;
		}
	}
	if (end > f->cur.len) {
		p = realloc(f->cur.p, end);
		if (!p)
			return -ENOMEM;
		if ((size_t)off > f->cur.len)
			memset(p + f->cur.len, 0, (size_t)off - f->cur.len);
		f->cur.p = p;
		f->cur.len = end;
	}
	if (room)
		memcpy(f->cur.p + off, data, room);
	f->cur.exists = true;
	return ret;
}

static int mem_truncate(void *ctx, const char *name, uint64_t len)
{
	struct mem_file *f;
	int ret = mem_change(ctx, name, &f);

	if (ret)
		return ret;
	if (len > f->cur.len)
		return -EINVAL;	/* raftlog only ever shortens */
	f->cur.len = (size_t)len;
	f->cur.exists = true;
	return 0;
}

static int mem_sync(void *ctx, const char *name)
{
	struct mem_file *f;
	int ret = mem_change(ctx, name, &f);

	return ret ? ret : mem_set(&f->dur, f->cur.p, f->cur.len);
}

/* Only the simulator and tests crash disks: out of memory there aborts. */
static void mem_set_or_die(struct mem_buf *b, const void *src, size_t len)
{
	if (mem_set(b, src, len))
		abort();
}

void imexd_raftlog_mem_crash(struct imexd_raftlog_mem *m, size_t keep)
{
	size_t i, same, n;

	for (i = 0; i < MEM_FILES; i++) {
		struct mem_file *f = &m->f[i];

		if (keep && f->cur.exists) {
			/* A torn write: a prefix of the unsynced tail stays. */
			for (same = 0; same < f->cur.len && same < f->dur.len &&
			     f->cur.p[same] == f->dur.p[same]; same++)
				;
			n = f->cur.len - same < keep ? f->cur.len - same : keep;
			if (n)
				mem_set_or_die(&f->dur, f->cur.p, same + n);
		}
		free(f->cur.p);
		f->cur = (struct mem_buf){ 0 };
		if (f->dur.exists)
			mem_set_or_die(&f->cur, f->dur.p, f->dur.len);
	}
	m->fail_count = 0;
}

struct imexd_raftlog_mem *imexd_raftlog_mem_new(void)
{
	return calloc(1, sizeof(struct imexd_raftlog_mem));
}

void imexd_raftlog_mem_free(struct imexd_raftlog_mem *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < MEM_FILES; i++) {
		free(m->f[i].cur.p);
		free(m->f[i].dur.p);
	}
	free(m);
}

void imexd_raftlog_mem_set_limit(struct imexd_raftlog_mem *m, size_t bytes)
{
	m->limit = bytes;
}

void imexd_raftlog_mem_fail_next(struct imexd_raftlog_mem *m, int err,
				 unsigned count)
{
	m->fail_err = err;
	m->fail_count = count;
}

void imexd_raftlog_mem_io(struct imexd_raftlog_mem *m,
			  struct imexd_raftlog_io *io)
{
	*io = (struct imexd_raftlog_io){
		.read = mem_read, .replace = mem_replace, .write = mem_write,
		.truncate = mem_truncate, .sync = mem_sync, .close = NULL,
		.ctx = m, .where = "memory disk",
	};
}
