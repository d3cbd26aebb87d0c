/* SPDX-License-Identifier: GPL-2.0 */
/*
 * File helpers of the state directory, shared by the definition store
 * (store_dir.c), the raft log's file disk (disk_file.c) and the metrics file
 * (metrics_file.c).
 * Plain POSIX calls, no allocation kept: every function returns 0 (or what
 * it says) or -errno.
 */
#ifndef IMEXD_STORE_FILE_H
#define IMEXD_STORE_FILE_H

#include <stddef.h>

#include "errf.h"

/* Temp files start with this; no loader reads such a name. */
#define IMEXD_FILE_TMP_PREFIX ".tmp."

/* write() all of @p, retrying on EINTR and short writes. */
int imexd_file_write_all(int fd, const void *p, size_t n);

/*
 * Replace @dpath/@name (the directory open as @dfd) with @data atomically
 * and durably: temp file in the same directory (mode 0600), fsync, rename,
 * fsync of the directory.  A crash leaves the old or the new file.
 */
int imexd_file_replace(int dfd, const char *dpath, const char *name,
		       const void *data, size_t len);

/*
 * Read the regular file @name under @dfd, at most @max bytes (-EFBIG if
 * larger), into a malloc'd NUL-terminated buffer the caller frees.
 */
int imexd_file_read_at(int dfd, const char *name, size_t max, char **buf,
		       size_t *len);

/*
 * Create (0700) or open the directory @path (relative to @atfd) that this
 * user must own, tightening its mode to 0700.  Returns the fd or -errno
 * with a message naming @path in @err.
 */
int imexd_file_open_dir(int atfd, const char *path, int flags, char *err,
			size_t errlen);

/* Remove the temp files of writers that died (nothing else may write). */
void imexd_file_remove_stale(int dfd);

#endif /* IMEXD_STORE_FILE_H */
