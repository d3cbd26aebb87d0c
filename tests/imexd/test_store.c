// SPDX-License-Identifier: GPL-2.0
/*
 * The state directory: the node UUID is created once and kept, a damaged
 * node.json is an error and never a new identity, and a file replaced by
 * a writer killed at any instant (imexd_file_replace(), which node.json
 * and the raft log's term/vote file use) is the old or the new version,
 * never torn.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <setjmp.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "store.h"
#include "store_file.h"
#include "store_members.h"

/* ---- helpers ------------------------------------------------------------- */

static char *make_tmpdir(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *path = NULL;

	if (asprintf(&path, "%s/imexd-store.XXXXXX", base) < 0)
		return NULL;
	if (!mkdtemp(path)) {
		free(path);
		return NULL;
	}
	return path;
}

/* Remove @dir and what is in it, two levels deep (all the store makes). */
static void rm_tree(const char *dir)
{
	DIR *d = opendir(dir);

	if (d) {
		const struct dirent *de;
		char path[4096];

		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (unlink(path) < 0)
				rm_tree(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* Entries of @dir whose name starts with @prefix ("" for all). */
static size_t count_prefix(const char *dir, const char *prefix)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    !strncmp(de->d_name, prefix, strlen(prefix)))
			n++;
	closedir(d);
	return n;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

struct fixture {
	char *dir;
	struct imexd_store *store;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	if (!f)
		return -1;
	f->dir = make_tmpdir();
	if (!f->dir)
		goto fail;
	if (imexd_store_open(&f->store, f->dir, err, sizeof(err))) {
		fprintf(stderr, "store_open: %s\n", err);
		goto fail;
	}
	*state = f;
	return 0;
fail:
	free(f->dir);
	free(f);
	return -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	imexd_store_close(f->store);
	rm_tree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* ---- node identity ------------------------------------------------------ */

static void test_node_uuid_is_created_once_and_kept(void **state)
{
	struct fixture *f = *state;
	uint8_t a[16], b[16], c[16], zero[16] = { 0 };
	struct imexd_store *s2;
	char err[256], path[4200], *other;

	assert_int_equal(imexd_store_node_uuid(f->store, a, NULL, 0), 0);
	assert_memory_not_equal(a, zero, 16);
	assert_int_equal(a[6] >> 4, 4);			/* random UUID */
	assert_int_equal(a[8] & 0xc0, 0x80);
	assert_int_equal(imexd_store_node_uuid(f->store, b, NULL, 0), 0);
	assert_memory_equal(a, b, 16);
	snprintf(path, sizeof(path), "%s/node.json", f->dir);
	assert_int_equal(mode_of(path), 0600);

	/* Another open of the same directory: the same UUID. */
	assert_int_equal(imexd_store_open(&s2, f->dir, err, sizeof(err)), 0);
	assert_int_equal(imexd_store_node_uuid(s2, c, NULL, 0), 0);
	assert_memory_equal(a, c, 16);
	imexd_store_close(s2);

	/* Another directory: another UUID. */
	other = make_tmpdir();
	assert_int_equal(imexd_store_open(&s2, other, err, sizeof(err)), 0);
	assert_int_equal(imexd_store_node_uuid(s2, c, NULL, 0), 0);
	assert_memory_not_equal(a, c, 16);
	imexd_store_close(s2);
	rm_tree(other);
	free(other);
}

static void test_damaged_node_uuid_is_an_error_not_a_new_identity(void **state)
{
	struct fixture *f = *state;
	static const char *const damaged[] = {
		"", "{", "{\"uuid\":\"nope\"}", "{\"uuid\":5}",
		"{\"uuid\":\"0a0b0c0d-0000-4000-8000-000000000001\",\"x\":1}",
	};
	struct imexd_store *s2;
	char err[256], path[4200], buf[128];
	uint8_t u[16];
	size_t i;

	snprintf(path, sizeof(path), "%s/node.json", f->dir);
	for (i = 0; i < sizeof(damaged) / sizeof(damaged[0]); i++) {
		FILE *fp;

		write_file(path, damaged[i]);
		assert_int_equal(imexd_store_open(&s2, f->dir, err, sizeof(err)), 0);
		assert_int_equal(imexd_store_node_uuid(s2, u, err, sizeof(err)),
				 -EBADMSG);
		assert_true(err[0] != '\0');	/* says what is wrong */
		imexd_store_close(s2);
		fp = fopen(path, "r");
		buf[fread(buf, 1, sizeof(buf) - 1, fp)] = '\0';
		fclose(fp);
		assert_string_equal(buf, damaged[i]);
	}
	write_file(path, "{ \"uuid\": \"0A0B0C0D-0000-4000-8000-000000000001\" }\n");
	assert_int_equal(imexd_store_open(&s2, f->dir, err, sizeof(err)), 0);
	assert_int_equal(imexd_store_node_uuid(s2, u, NULL, 0), 0);
	assert_int_equal(u[0], 0x0a);
	assert_int_equal(u[15], 0x01);
	imexd_store_close(s2);
}

static void test_open_tightens_modes_and_reports_errors(void **state)
{
	struct fixture *f = *state;
	struct imexd_store *s2;
	char err[512], path[4400];

	chmod(f->dir, 0777);
	assert_int_equal(imexd_store_open(&s2, f->dir, err, sizeof(err)), 0);
	imexd_store_close(s2);
	assert_int_equal(mode_of(f->dir), 0700);

	/* Missing parent: not created, named. */
	snprintf(path, sizeof(path), "%s/no/such", f->dir);
	assert_int_equal(imexd_store_open(&s2, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/no/such: cannot create: No such file or directory"));
	/* A file where the directory should be. */
	snprintf(path, sizeof(path), "%s/file", f->dir);
	write_file(path, "x");
	assert_int_equal(imexd_store_open(&s2, path, err, sizeof(err)), -ENOTDIR);
	assert_non_null(strstr(err, "/file: cannot open"));
	assert_int_equal(imexd_store_open(&s2, "", err, sizeof(err)), -EINVAL);
}

/* ---- torn writes ------------------------------------------------------- */

#define KILLS		100
#define KILLS_MAX	2000	/* keep killing until enough landed mid-write */
#define BIG_BYTES	(75 << 10)	/* a write takes a while */

/* Drop the inotify events queued so far. */
static void drain(int ifd)
{
	char buf[4096];

	while (read(ifd, buf, sizeof(buf)) > 0)
		;
}

/* Wait (up to 5 s) for a temp file to be created: a write has begun. */
static bool wait_tmp_created(int ifd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd p = { .fd = ifd, .events = POLLIN };
	const struct inotify_event *ev;
	ssize_t off;

	while (poll(&p, 1, 5000) == 1) {
		ssize_t len = read(ifd, buf, sizeof(buf));

		for (off = 0; off < len; off += (ssize_t)sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			if (ev->len && !strncmp(ev->name, ".tmp.", 5))
				return true;
		}
	}
	return false;
}

static void test_killed_writer_never_leaves_a_torn_file(void **state)
{
	struct fixture *f = *state;
	size_t caught = 0, saw[2] = { 0, 0 }, len;
	struct timespec t0, t1;
	long put_us, range_us;
	char *v[2], *buf;
	int i, status, ifd, dfd;
	pid_t pid;

	for (i = 0; i < 2; i++) {
		v[i] = malloc(BIG_BYTES);
		assert_non_null(v[i]);
		memset(v[i], 'a' + i, BIG_BYTES);
	}
	dfd = open(f->dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	assert_true(dfd >= 0);
	/* Kill within a few write times, whatever this disk's speed. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 4; i++)
		assert_int_equal(imexd_file_replace(dfd, f->dir, "big",
						    v[i & 1], BIG_BYTES), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	put_us = ((t1.tv_sec - t0.tv_sec) * 1000000 +
		  (t1.tv_nsec - t0.tv_nsec) / 1000) / 4;
	range_us = put_us * 4 > 200 ? put_us * 4 : 200;
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(ifd >= 0);
	assert_true(inotify_add_watch(ifd, f->dir, IN_CREATE) >= 0);
	srand((unsigned int)time(NULL));
	/*
	 * At least KILLS kills, and more (up to KILLS_MAX) until enough of them
	 * landed mid-write and both versions were seen: how many land depends
	 * on the disk and the load, not on the code under test.
	 */
	for (i = 0; i < KILLS_MAX && (i < KILLS || caught < KILLS / 15 ||
				       !saw[0] || !saw[1]); i++) {
		drain(ifd);
		pid = fork();
		assert_true(pid >= 0);
		if (!pid) {
			/* Rewrite, alternating, until killed. */
			for (unsigned int k = 0;; k++)
				if (imexd_file_replace(dfd, f->dir, "big",
						       v[k & 1], BIG_BYTES))
					_exit(1);
		}
		/*
		 * Half the kills land anywhere; the other half just after a
		 * temp file appeared, inside the write/fsync/rename window.
		 */
		if (i % 2)
			usleep((useconds_t)(rand() % range_us));
		else if (wait_tmp_created(ifd) && i % 4)
			usleep((useconds_t)(rand() % 30));
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		caught += count_prefix(f->dir, ".tmp.") > 0;

		/* What a restarted reader sees: the old or the new version. */
		assert_int_equal(imexd_file_read_at(dfd, "big", 2 * (size_t)BIG_BYTES,
						    &buf, &len), 0);
		assert_int_equal(len, BIG_BYTES);
		if (!memcmp(buf, v[0], BIG_BYTES))
			saw[0]++;
		else if (!memcmp(buf, v[1], BIG_BYTES))
			saw[1]++;
		else
			fail_msg("kill %d: neither the old nor the new version", i);
		free(buf);
		imexd_file_remove_stale(dfd);
		assert_int_equal(count_prefix(f->dir, ".tmp."), 0);
	}
	print_message("%d kills within %ld us (a write takes %ld us): %zu left a temp file; reads saw v1 %zu, v2 %zu times\n",
		      i, range_us, put_us, caught, saw[0], saw[1]);
	/* Many kills did land mid-write, or the test proved nothing. */
	assert_true(caught >= KILLS / 15);
	assert_true(saw[0] > 0 && saw[1] > 0);
	close(ifd);
	close(dfd);
	free(v[0]);
	free(v[1]);
}

/* ---- members.json ------------------------------------------------------- */

/* The whole text, so imexctl's reader and the man page's example agree
 * with it; written, replaced and removed. */
static void test_members_file(void **state)
{
	static const char want[] =
		"{\"version\":1,\"node\":\"a\",\"pid\":42,\"member\":true,"
		"\"term\":3,\"leader\":\"b\",\"commit\":12,\"applied\":11,"
		"\"config_index\":5,\"members\":["
		"{\"name\":\"a\",\"addr\":\"\",\"role\":\"voter\",\"leader\":false,"
		"\"self\":true,\"connected\":null},"
		"{\"name\":\"b\",\"addr\":\"10.0.0.2:50100\",\"role\":\"voter\","
		"\"leader\":true,\"self\":false,\"connected\":true},"
		"{\"name\":\"d\",\"addr\":\"\",\"role\":\"standby\",\"leader\":false,"
		"\"self\":false,\"connected\":false}]}";
	struct fixture *f = *state;
	struct imexd_node_group g = { .member = true, .term = 3, .commit = 12,
				      .applied = 11, .config_index = 5,
				      .leader = "b", .n_members = 3 };
	struct imexd_node_member m[3] = {
		{ .name = "a", .role = RAFT_VOTER, .self = true },
		{ .name = "b", .addr = "10.0.0.2:50100", .role = RAFT_VOTER,
		  .leader = true, .connected = true },
		{ .name = "d", .role = RAFT_STANDBY },
	};
	char *text, *path = NULL, buf[1024];
	FILE *fp;
	size_t n;

	text = imexd_members_json("a", 42, &g, m, 3);
	assert_non_null(text);
	assert_string_equal(text, want);
	assert_int_equal(imexd_members_write(f->dir, text), 0);
	assert_true(asprintf(&path, "%s/%s", f->dir, IMEXD_MEMBERS_FILE) > 0);
	fp = fopen(path, "r");
	assert_non_null(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	assert_string_equal(buf, want);
	free(text);

	/* Waiting to be joined: no leader (null), no members. */
	memset(&g, 0, sizeof(g));
	text = imexd_members_json("z", 7, &g, NULL, 0);
	assert_non_null(text);
	assert_string_equal(text,
		"{\"version\":1,\"node\":\"z\",\"pid\":7,\"member\":false,"
		"\"term\":0,\"leader\":null,\"commit\":0,\"applied\":0,"
		"\"config_index\":0,\"members\":[]}");
	assert_int_equal(imexd_members_write(f->dir, text), 0);
	free(text);

	assert_int_equal(imexd_members_write(f->dir, NULL), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(imexd_members_write(f->dir, NULL), 0);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_node_uuid_is_created_once_and_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_node_uuid_is_an_error_not_a_new_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_tightens_modes_and_reports_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_writer_never_leaves_a_torn_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_members_file, setup, teardown),
	};

	return cmocka_run_group_tests_name("imexd store", tests, NULL, NULL);
}
