// SPDX-License-Identifier: GPL-2.0
/*
 * The raft log's file backend (raftlog.h): a state directory.  Daemon side:
 * the memory disk (raftlog_mem.c) is the core's.
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
