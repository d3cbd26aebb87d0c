// SPDX-License-Identifier: GPL-2.0
/*
 * The raft log's two backends (raftlog.h): a state directory, and a memory
 * disk that can crash (lose what was not synced) and fill up.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "raftlog.h"
#include "store_file.h"

/* ---- directory ----------------------------------------------------------- */

struct dir_io {
	char *dir;
	int dfd;
	int fd;			/* open on @fd_name, or -1 */
	const char *fd_name;	/* the file @fd is open on */
};

static void dir_drop_fd(struct dir_io *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	d->fd_name = NULL;
}

static int dir_fd(struct dir_io *d, const char *name)
{
	if (d->fd >= 0 && !strcmp(d->fd_name, name))
		return d->fd;
	dir_drop_fd(d);
	d->fd = openat(d->dfd, name,
		       O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (d->fd < 0)
		return -errno;
	d->fd_name = name;
	return d->fd;
}

static int dir_read(void *ctx, const char *name, size_t max, uint8_t **buf,
		    size_t *len)
{
	struct dir_io *d = ctx;
	char *p = NULL;
	int ret;

	ret = imexd_file_read_at(d->dfd, name, max, &p, len);
	if (!ret)
		*buf = (uint8_t *)p;
	return ret;
}

static int dir_replace(void *ctx, const char *name, const void *data,
		       size_t len)
{
	struct dir_io *d = ctx;

	/* The cached fd would name the replaced inode. */
	if (d->fd >= 0 && !strcmp(d->fd_name, name))
		dir_drop_fd(d);
	return imexd_file_replace(d->dfd, d->dir, name, data, len);
}

static int dir_write(void *ctx, const char *name, uint64_t off,
		     const void *data, size_t len)
{
	const char *p = data;
	int fd = dir_fd(ctx, name);

	if (fd < 0)
		return fd;
	while (len) {
		ssize_t r = pwrite(fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		p += r;
		off += (uint64_t)r;
		len -= (size_t)r;
	}
	return 0;
}

static int dir_truncate(void *ctx, const char *name, uint64_t len)
{
	int fd = dir_fd(ctx, name);

	if (fd < 0)
		return fd;
	return ftruncate(fd, (off_t)len) < 0 ? -errno : 0;
}

static int dir_sync(void *ctx, const char *name)
{
	int fd = dir_fd(ctx, name);

	if (fd < 0)
		return fd;
	return fdatasync(fd) < 0 ? -errno : 0;
}

static void dir_close(void *ctx)
{
	struct dir_io *d = ctx;

	if (!d)
		return;
	dir_drop_fd(d);
	if (d->dfd >= 0)
		close(d->dfd);
	free(d->dir);
	free(d);
}

int imexd_raftlog_dir_io(struct imexd_raftlog_io *io, const char *dir,
			 char *err, size_t errlen)
{
	struct dir_io *d;

	if (!io || !dir || !*dir) {
		if (err && errlen)
			snprintf(err, errlen, "no raft state directory");
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d || !(d->dir = strdup(dir))) {
		free(d);
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->fd = -1;
	d->dfd = imexd_file_open_dir(AT_FDCWD, dir, O_NOFOLLOW, err, errlen);
	if (d->dfd < 0) {
		int ret = d->dfd;

		dir_close(d);
		return ret;
	}
	imexd_file_remove_stale(d->dfd);
	*io = (struct imexd_raftlog_io){
		.read = dir_read, .replace = dir_replace, .write = dir_write,
		.truncate = dir_truncate, .sync = dir_sync, .close = dir_close,
		.ctx = d, .where = d->dir,
	};
	return 0;
}

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
 * The file a writing call acts on, or NULL with *@ret set: the failure
 * injected for this call, or -EINVAL for a name raftlog does not use.
 */
static struct mem_file *mem_op(struct imexd_raftlog_mem *m, const char *name,
			       int *ret)
{
	struct mem_file *f = mem_file(m, name);

	*ret = mem_injected(m);
	if (!*ret && !f)
		*ret = -EINVAL;
	return *ret ? NULL : f;
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
	int ret;
	struct mem_file *f = mem_op(m, name, &ret);

	if (!f)
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
	size_t end, room = len, grow;
	int ret;
	struct mem_file *f = mem_op(m, name, &ret);
	uint8_t *p;

	if (!f)
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
	struct imexd_raftlog_mem *m = ctx;
	int ret;
	struct mem_file *f = mem_op(m, name, &ret);

	if (!f)
		return ret;
	if (len > f->cur.len)
		return -EINVAL;	/* raftlog only ever shortens */
	f->cur.len = (size_t)len;
	f->cur.exists = true;
	return 0;
}

static int mem_sync(void *ctx, const char *name)
{
	struct imexd_raftlog_mem *m = ctx;
	int ret;
	struct mem_file *f = mem_op(m, name, &ret);

	if (!f)
		return ret;
	return mem_set(&f->dur, f->cur.p, f->cur.len);
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
