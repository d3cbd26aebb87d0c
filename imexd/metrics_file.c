// SPDX-License-Identifier: GPL-2.0
/*
 * imexd.prom in the node exporter's textfile directory, replaced
 * atomically: written to a hidden temporary file in the same directory
 * (the collector reads only *.prom), then renamed over the old one, so a
 * scrape sees the old file or the new one, never a part.  No fsync: after
 * a crash the next write (within a second of the restart) replaces it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log.h"
#include "metrics_file.h"
#include "store_file.h"

struct imexd_metrics_file {
	char path[PATH_MAX];
	char tmp[PATH_MAX];
	char *last;		/* the text written last */
	size_t last_len;
	uint64_t written_at;
	bool written;
	bool failing;		/* the last write failed (logged once) */
};

int imexd_metrics_file_new(const char *dir, struct imexd_metrics_file **out)
{
	struct imexd_metrics_file *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	if ((size_t)snprintf(f->path, sizeof(f->path), "%s/%s", dir,
			     IMEXD_METRICS_FILE) >= sizeof(f->path) ||
	    (size_t)snprintf(f->tmp, sizeof(f->tmp), "%s/.%s.tmp", dir,
			     IMEXD_METRICS_FILE) >= sizeof(f->tmp)) {
		free(f);
		return -ENAMETOOLONG;
	}
	*out = f;
	return 0;
}

const char *imexd_metrics_file_path(const struct imexd_metrics_file *f)
{
	return f->path;
}

static int replace(struct imexd_metrics_file *f, const char *text,
		   size_t len)
{
	int fd, r;

	/*
	 * imexd writes as root into a directory another user (the node
	 * exporter's) may own: a link planted at the temporary name must
	 * not be followed, so the name is made afresh and never opened
	 * as it stands.
	 */
	if (unlink(f->tmp) && errno != ENOENT)
		return -errno;
	fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return -errno;
	/*
	 * imexd runs under umask 077 (its state is private), but the node
	 * exporter reads this file as its own user: 0644 whatever the umask.
	 */
	r = fchmod(fd, 0644) ? -errno : 0;
	if (!r)
		r = imexd_file_write_all(fd, text, len);
	if (close(fd) && !r)
		r = -errno;
	if (!r && rename(f->tmp, f->path))
		r = -errno;
	if (r)
		unlink(f->tmp);
	return r;
}

bool imexd_metrics_file_due(const struct imexd_metrics_file *f, uint64_t now,
			    const char *text, size_t len)
{
	if (!f->written)
		return true;
	if (now - f->written_at >= IMEXD_METRICS_REFRESH_MS)
		return true;
	if (now - f->written_at < IMEXD_METRICS_MIN_MS)
		return false;
	return len != f->last_len || memcmp(text, f->last, len);
}

int imexd_metrics_file_put(struct imexd_metrics_file *f, uint64_t now,
			   const char *text, size_t len)
{
	char *copy;
	int r;

	if (!imexd_metrics_file_due(f, now, text, len))
		return 0;
	r = replace(f, text, len);
	if (r) {
		if (!f->failing)
			log_warn("metrics: cannot write %s: %s (check METRICS_TEXTFILE_DIR)",
				 f->path, strerror(-r));
		f->failing = true;
		return r;
	}
	if (f->failing)
		log_info("metrics: %s written again", f->path);
	f->failing = false;
	f->written = true;
	f->written_at = now;
	copy = malloc(len ? len : 1);
	if (copy) {
		memcpy(copy, text, len);
		free(f->last);
		f->last = copy;
		f->last_len = len;
	}
	return 1;
}

void imexd_metrics_file_free(struct imexd_metrics_file *f, bool remove)
{
	if (!f)
		return;
	if (remove && f->written && unlink(f->path) && errno != ENOENT)
		log_warn("metrics: cannot remove %s: %s", f->path,
			 strerror(errno));
	free(f->last);
	free(f);
}
