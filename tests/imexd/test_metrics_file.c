// SPDX-License-Identifier: GPL-2.0
/*
 * imexd.prom's writer (imexd/metrics_file.c): the first text is written at
 * once; a change waits for a second since the last write; the same text
 * is written again after 15 s (its mtime says imexd lives); nothing but
 * imexd.prom is left in the directory (the temporary file is renamed); a
 * failing write returns the errno and leaves the old file; a link planted
 * at the temporary name is not followed; a clean exit removes the file;
 * the file is readable by all (0644) under imexd's umask 077.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "metrics_file.h"

static char dir[256], path[300];

static int setup(void **state)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	(void)state;
	snprintf(dir, sizeof(dir), "%s/imexd-metrics-XXXXXX", base);
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/imexd.prom", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return rmdir(dir);
}

static void assert_file(const char *want)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

/* Entries of the directory: only imexd.prom, or nothing. */
static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_writes_when_changed_at_most_once_a_second(void **state)
{
	struct imexd_metrics_file *f;

	(void)state;
	assert_int_equal(imexd_metrics_file_new(dir, &f), 0);
	assert_string_equal(imexd_metrics_file_path(f), path);
	assert_int_equal(imexd_metrics_file_put(f, 1000, "a 1\n", 4), 1);
	assert_file("a 1\n");
	assert_int_equal(entries(), 1);
	/* Unchanged: not written before the refresh. */
	assert_int_equal(imexd_metrics_file_put(f, 5000, "a 1\n", 4), 0);
	/* Changed, but within a second of the last write: later. */
	assert_int_equal(imexd_metrics_file_put(f, 5000, "a 2\n", 4), 1);
	assert_int_equal(imexd_metrics_file_put(f, 5999, "a 3\n", 4), 0);
	assert_file("a 2\n");
	assert_int_equal(imexd_metrics_file_put(f, 6000, "a 3\n", 4), 1);
	assert_file("a 3\n");
	/* Unchanged for 15 s: written again (a fresh mtime). */
	assert_int_equal(imexd_metrics_file_put(f, 20999, "a 3\n", 4), 0);
	assert_true(imexd_metrics_file_due(f, 21000, "a 3\n", 4));
	assert_int_equal(imexd_metrics_file_put(f, 21000, "a 3\n", 4), 1);
	assert_int_equal(entries(), 1);
	/* A clean exit removes it. */
	imexd_metrics_file_free(f, true);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(entries(), 0);
}

static void test_failing_write_keeps_the_old_file(void **state)
{
	struct imexd_metrics_file *f;

	(void)state;
	assert_int_equal(imexd_metrics_file_new(dir, &f), 0);
	assert_int_equal(imexd_metrics_file_put(f, 0, "b 1\n", 4), 1);
	/* A directory where the temporary file goes: open() fails. */
	{
		char tmp[320];

		snprintf(tmp, sizeof(tmp), "%s/.imexd.prom.tmp", dir);
		assert_int_equal(mkdir(tmp, 0700), 0);
		assert_int_equal(imexd_metrics_file_put(f, 2000, "b 2\n", 4), -EISDIR);
		assert_file("b 1\n");
		assert_int_equal(rmdir(tmp), 0);
	}
	assert_int_equal(imexd_metrics_file_put(f, 3000, "b 2\n", 4), 1);
	assert_file("b 2\n");
	/* Not a clean exit: the file stays. */
	imexd_metrics_file_free(f, false);
	assert_int_equal(access(path, F_OK), 0);
}

/* A link planted at the temporary name (the directory's owner may not be
 * root): the file it names stays as it was. */
static void test_planted_link_is_not_followed(void **state)
{
	struct imexd_metrics_file *f;
	char tmp[320], victim[320];
	FILE *v;

	(void)state;
	snprintf(tmp, sizeof(tmp), "%s/.imexd.prom.tmp", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	v = fopen(victim, "w");
	assert_non_null(v);
	fputs("keep\n", v);
	fclose(v);
	assert_int_equal(symlink(victim, tmp), 0);
	assert_int_equal(imexd_metrics_file_new(dir, &f), 0);
	assert_int_equal(imexd_metrics_file_put(f, 0, "c 1\n", 4), 1);
	assert_file("c 1\n");
	v = fopen(victim, "r");
	assert_non_null(v);
	{
		char buf[16] = "";

		assert_non_null(fgets(buf, sizeof(buf), v));
		assert_string_equal(buf, "keep\n");
	}
	fclose(v);
	assert_int_equal(access(tmp, F_OK), -1);
	imexd_metrics_file_free(f, true);
	assert_int_equal(unlink(victim), 0);
}

/* imexd's umask is 077; the node exporter reads the file as its own user. */
static void test_mode_is_0644_under_umask_077(void **state)
{
	struct imexd_metrics_file *f;
	struct stat st;
	mode_t old;

	(void)state;
	old = umask(0077);
	assert_int_equal(imexd_metrics_file_new(dir, &f), 0);
	assert_int_equal(imexd_metrics_file_put(f, 0, "m 1\n", 4), 1);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	imexd_metrics_file_free(f, true);
}

static void test_name_too_long(void **state)
{
	struct imexd_metrics_file *f = NULL;
	char *longdir = malloc(5000);

	(void)state;
	memset(longdir, 'x', 4999);
	longdir[0] = '/';
	longdir[4999] = '\0';
	assert_int_equal(imexd_metrics_file_new(longdir, &f), -ENAMETOOLONG);
	assert_null(f);
	free(longdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_writes_when_changed_at_most_once_a_second,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_failing_write_keeps_the_old_file,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_planted_link_is_not_followed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_mode_is_0644_under_umask_077,
						setup, teardown),
		cmocka_unit_test(test_name_too_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
