/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the unit tests (header-only: each test is one binary). */
#ifndef IMEXCTL_TEST_UTIL_H
#define IMEXCTL_TEST_UTIL_H

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read what was written to @f (from its start) into @buf; closes @f. */
static inline void slurp(FILE *f, char *buf, size_t size)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* A fresh directory under $TMPDIR; removed (one level deep) by rm_tree(). */
static inline char *make_tmpdir(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *path = NULL;

	if (asprintf(&path, "%s/imexctl-test.XXXXXX", base) < 0)
		return NULL;
	if (!mkdtemp(path)) {
		free(path);
		return NULL;
	}
	return path;
}

static inline void rm_tree(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
			    (int)sizeof(path))
				continue;
			if (unlink(path) < 0)
				rm_tree(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

static inline size_t count_entries(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static inline char *read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

#endif /* IMEXCTL_TEST_UTIL_H */
