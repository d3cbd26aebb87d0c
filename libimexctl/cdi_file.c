// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Transient CDI spec files: DIR/VENDOR-CLASS_ID.json, written so that a
 * runtime scanning the directory never sees a partial file (temp file in
 * the same directory, fsync, rename, fsync of the directory).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define SPEC_MODE 0644
#define DIR_MODE 0755

static char *spec_name(const struct imexctl_cdi_opts *opts, const char *id)
{
	char *name;

	if (asprintf(&name, "%s-%s_%s.json", imexctl_cdi_vendor(opts),
		     imexctl_cdi_class(opts), id) < 0)
		return NULL;
	return name;
}

int imexctl_cdi_spec_path(struct imexctl *ctx,
			  const struct imexctl_cdi_opts *opts, const char *id,
			  char **path)
{
	const char *why = NULL;
	int r;

	r = imexctl_cdi_opts_check(ctx, opts);
	if (r < 0)
		return r;
	if (imexctl_cdi_check_id(id, &why) < 0)
		return imexctl_err(ctx, -EINVAL,
				   "invalid CDI spec id '%s': %s (letters, digits, '_', '.', ':', '-'; alphanumeric first and last)",
				   id ? id : "", why);
	if (asprintf(path, "%s/%s-%s_%s.json", imexctl_cdi_dir(opts),
		     imexctl_cdi_vendor(opts), imexctl_cdi_class(opts), id) < 0)
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	return 0;
}

/* mkdir -p, each missing level DIR_MODE. */
static int make_dirs(const char *dir)
{
	char *p, *s = strdup(dir);
	struct stat st;
	int r = 0;

	if (!s)
		return -ENOMEM;
	for (p = s + 1; ; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(s, DIR_MODE) < 0 && errno != EEXIST) {
			r = -errno;
			break;
		}
		*p = c;
		if (!c)
			break;
	}
	if (r == 0 && (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)))
		r = -ENOTDIR;
	free(s);
	return r;
}

static int write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* rename, or with @noreplace fail with EEXIST instead of replacing. */
static int put_in_place(int dfd, const char *tmp, const char *name, bool noreplace)
{
	if (!noreplace)
		return renameat(dfd, tmp, dfd, name) < 0 ? -errno : 0;
	if (renameat2(dfd, tmp, dfd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* File systems without RENAME_NOREPLACE: link() refuses existing names too. */
	if (linkat(dfd, tmp, dfd, name, 0) < 0)
		return -errno;
	(void)unlinkat(dfd, tmp, 0);
	return 0;
}

static int write_spec(struct imexctl *ctx, const char *dir, const char *name,
		      const char *json, bool noreplace)
{
	char tmp[300];
	int dfd, fd = -1, r;

	r = make_dirs(dir);
	if (r < 0)
		return imexctl_err(ctx, r, "cannot create CDI directory %s: %s", dir,
				   strerror(-r));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return imexctl_err(ctx, -errno, "cannot open CDI directory %s: %s", dir,
				   strerror(errno));

	/* A dot name without ".json": runtimes never pick up the temp file. */
	for (unsigned int attempt = 0; attempt < 100 && fd < 0; attempt++) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(tmp, sizeof(tmp), ".%s.%d.%lx.tmp", name, (int)getpid(),
			 (unsigned long)ts.tv_nsec ^ ((unsigned long)attempt << 24));
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, SPEC_MODE);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		r = imexctl_err(ctx, -errno, "cannot create a file in CDI directory %s: %s",
				dir, strerror(errno));
		goto out;
	}
	/* Exactly 0644 whatever the umask. */
	r = fchmod(fd, SPEC_MODE) < 0 ? -errno : 0;
	if (r == 0)
		r = write_all(fd, json, strlen(json));
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0)
		r = put_in_place(dfd, tmp, name, noreplace);
	if (r < 0) {
		(void)unlinkat(dfd, tmp, 0);
		if (r == -EEXIST)
			imexctl_err(ctx, r, "CDI spec %s/%s already exists: remove it first ('imexctl cdi remove') or allow overwriting",
				    dir, name);
		else
			imexctl_err(ctx, r, "cannot write CDI spec %s/%s: %s", dir, name,
				    strerror(-r));
		goto out;
	}
	/* The rename itself must survive a crash. */
	if (fsync(dfd) < 0)
		r = imexctl_err(ctx, -errno, "cannot sync CDI directory %s: %s", dir,
				strerror(errno));
out:
	close(dfd);
	return r;
}

IMEXCTL_API int imexctl_cdi_write(struct imexctl *ctx, const char *id,
				  const char *json,
				  const struct imexctl_cdi_opts *opts, char **path)
{
	char *full = NULL, *name = NULL;
	int r;

	imexctl_err_clear(ctx);
	if (!json)
		return imexctl_err(ctx, -EINVAL, "no CDI spec to write");
	r = imexctl_cdi_spec_path(ctx, opts, id, &full);
	if (r < 0)
		return r;
	name = spec_name(opts, id);
	if (!name) {
		free(full);
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	}
	r = write_spec(ctx, imexctl_cdi_dir(opts), name, json,
		       opts && opts->no_overwrite);
	free(name);
	if (r == 0 && path)
		*path = full;
	else
		free(full);
	return r;
}

IMEXCTL_API int imexctl_cdi_generate(struct imexctl *ctx, const char *domain,
				     const uint32_t *ids, size_t n_ids,
				     const char *id,
				     const struct imexctl_cdi_opts *opts,
				     char **path)
{
	char *json = NULL, *full = NULL;
	int r;

	imexctl_err_clear(ctx);
	/* Check the id before asking the kernel anything. */
	r = imexctl_cdi_spec_path(ctx, opts, id, &full);
	if (r < 0)
		return r;
	free(full);
	r = imexctl_cdi_spec(ctx, domain, ids, n_ids, opts, &json);
	if (r == 0)
		r = imexctl_cdi_write(ctx, id, json, opts, path);
	free(json);
	return r;
}

IMEXCTL_API int imexctl_cdi_remove(struct imexctl *ctx, const char *id,
				   const struct imexctl_cdi_opts *opts)
{
	const char *dir = imexctl_cdi_dir(opts);
	char *full = NULL;
	int dfd, r;

	imexctl_err_clear(ctx);
	r = imexctl_cdi_spec_path(ctx, opts, id, &full);
	if (r < 0)
		return r;
	/* imexctl_err() returns its (negative) err: full is set here. */
	if (unlink(full) < 0) { // NOLINT(clang-analyzer-core.NonNullParamChecker)
		r = -errno;
		if (r == -ENOENT)
			imexctl_err(ctx, r, "no CDI spec with id '%s' (%s): see 'imexctl cdi list'",
				    id, full);
		else
			imexctl_err(ctx, r, "cannot remove CDI spec %s: %s", full, strerror(-r));
		free(full);
		return r;
	}
	free(full);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	return 0;
}

IMEXCTL_API void imexctl_cdi_list_free(struct imexctl_cdi_entry *entries, size_t n)
{
	size_t i;

	for (i = 0; entries && i < n; i++) {
		free(entries[i].id);
		free(entries[i].path);
	}
	free(entries);
}

static int by_id(const void *a, const void *b)
{
	const struct imexctl_cdi_entry *x = a, *y = b;

	return strcmp(x->id, y->id);
}

/* The id of @name if it is PREFIX<id>.json with a valid id, else NULL. */
static char *match(const char *name, const char *prefix)
{
	size_t plen = strlen(prefix), len = strlen(name);
	const char *why;
	char *id;

	if (len <= plen + 5 || strncmp(name, prefix, plen) ||
	    strcmp(name + len - 5, ".json"))
		return NULL;
	id = strndup(name + plen, len - plen - 5);
	if (id && imexctl_cdi_check_id(id, &why) < 0) {
		free(id);
		return NULL;
	}
	return id;
}

IMEXCTL_API int imexctl_cdi_list(struct imexctl *ctx,
				 const struct imexctl_cdi_opts *opts,
				 struct imexctl_cdi_entry **entries, size_t *n)
{
	const char *dir = imexctl_cdi_dir(opts);
	struct imexctl_cdi_entry *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	char *prefix = NULL, *id;
	DIR *d;
	int r;

	imexctl_err_clear(ctx);
	*entries = NULL;
	*n = 0;
	r = imexctl_cdi_opts_check(ctx, opts);
	if (r < 0)
		return r;
	d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		return imexctl_err(ctx, -errno, "cannot read CDI directory %s: %s", dir,
				   strerror(errno));
	}
	if (asprintf(&prefix, "%s-%s_", imexctl_cdi_vendor(opts), imexctl_cdi_class(opts)) < 0) {
		closedir(d);
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	}
	while ((de = readdir(d))) {
		id = match(de->d_name, prefix);
		if (!id)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(id);
				goto nomem;
			}
			v = nv;
		}
		v[cnt].id = id;
		if (asprintf(&v[cnt].path, "%s/%s", dir, de->d_name) < 0) {
			free(id);
			goto nomem;
		}
		cnt++;
	}
	closedir(d);
	free(prefix);
	if (cnt)
		qsort(v, cnt, sizeof(*v), by_id);
	*entries = v;
	*n = cnt;
	return 0;
nomem:
	closedir(d);
	free(prefix);
	imexctl_cdi_list_free(v, cnt);
	return imexctl_err(ctx, -ENOMEM, "out of memory");
}
