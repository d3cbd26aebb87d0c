// SPDX-License-Identifier: GPL-2.0
/*
 * The state directory: definitions round-trip through JSON and the disk,
 * the node UUID is created once and kept, damaged files are skipped and
 * named, and a writer killed at any instant never leaves a torn file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "samples.h"
#include "store.h"
#include "wire.h"

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

static void free_defs(struct imexd_def *defs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		imexd_def_free(&defs[i]);
	free(defs);
}

struct fixture {
	char *dir;
	char domains[4200];
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
	snprintf(f->domains, sizeof(f->domains), "%s/domains", f->dir);
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

/* ---- JSON ---------------------------------------------------------------- */

static void test_def_json_round_trip(void **state)
{
	struct imexd_def a, b;
	char *json, err[256];

	(void)state;
	assert_int_equal(sample_def(&a, "job-7", 5, 10, UINT64_MAX), 0);
	a.flags = IMEXD_DEF_DELETED;
	a.partition = UINT32_MAX;
	a.channels[9].uid = UINT32_MAX;
	a.channels[9].mode = 0;
	a.members[4].addr[0] = '\0';
	json = imexd_def_to_json(&a);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"0660\""));
	assert_non_null(strstr(json, "\"deleted\":true"));
	assert_int_equal(imexd_def_from_json(json, &b, err, sizeof(err)), 0);
	assert_true(imexd_def_equal(&a, &b));
	free(json);
	imexd_def_free(&b);
	/* An invalid definition has no JSON form. */
	a.channels[3].id = a.channels[2].id;
	assert_null(imexd_def_to_json(&a));
	imexd_def_free(&a);
}

/* A definition as JSON, field by field; NULL leaves the field out. */
enum { F_VERSION, F_NAME, F_UUID, F_GEN, F_DELETED, F_FABRIC, F_PART,
       F_MEMBERS, F_CHANNELS, F_COUNT };

static const char *const fields[F_COUNT] = {
	"version", "name", "uuid", "generation", "deleted", "fabric_uuid",
	"partition", "members", "channels",
};

static const char *const good_values[F_COUNT] = {
	"1", "\"job\"", "\"0a0b0c0d-0000-4000-8000-000000000001\"", "3",
	"false", "\"00000000-0000-0000-0000-000000000000\"", "7",
	"[{\"name\":\"a\",\"addr\":\"10.0.0.1\"},{\"name\":\"b\",\"addr\":\"\"}]",
	("[{\"id\":1,\"uid\":0,\"gid\":0,\"mode\":\"0600\"},"
	 "{\"id\":2,\"uid\":1000,\"gid\":100,\"mode\":\"660\"}]"),
};

static char *json_with(int field, const char *value, const char *extra)
{
	char *s = malloc(4096);
	size_t n = 0;
	int i;

	n += (size_t)sprintf(s + n, "{");
	for (i = 0; i < F_COUNT; i++) {
		const char *v = i == field ? value : good_values[i];

		if (v)
			n += (size_t)sprintf(s + n, "%s\"%s\":%s", n > 1 ? "," : "",
					     fields[i], v);
	}
	sprintf(s + n, "%s}", extra ? extra : "");
	return s;
}

struct bad_json {
	int field;
	const char *value, *extra, *err;
};

static const struct bad_json bad_jsons[] = {
	{ F_VERSION, "2", NULL, "format version 2 is not 1" },
	{ F_VERSION, NULL, NULL, "definition: a key is missing (needs 9)" },
	{ -1, NULL, ",\"owner\":\"x\"", "definition: unknown key 'owner'" },
	{ F_NAME, "5", NULL, "'name' is not a string" },
	{ F_NAME, "\"bad name\"", NULL, "name is not [A-Za-z0-9][A-Za-z0-9_.-]*" },
	{ F_NAME, "\"a\\u0000b\"", NULL, "'name' is too long or has a NUL byte" },
	{ F_UUID, "\"xyz\"", NULL, "'uuid' is not a UUID" },
	{ F_UUID, "\"0a0b0c0d-0000-4000-8000-00000000000g\"", NULL, "'uuid' is not a UUID" },
	{ F_UUID, "\"0a0b0c0d00004000800000000000000001\"", NULL, "'uuid' is not a UUID" },
	{ F_UUID, "\"00000000-0000-0000-0000-000000000000\"", NULL, "domain UUID is all-zero" },
	{ F_GEN, "-1", NULL, "'generation' is negative" },
	{ F_GEN, "1.5", NULL, "'generation' is not an integer" },
	{ F_GEN, "\"1\"", NULL, "'generation' is not an integer" },
	{ F_DELETED, "0", NULL, "'deleted' is not true or false" },
	{ F_PART, "4294967296", NULL, "'partition' is above 4294967295" },
	{ F_FABRIC, "null", NULL, "'fabric_uuid' is not a UUID" },
	{ F_MEMBERS, "{}", NULL, "'members' is not an array" },
	{ F_MEMBERS, "[{\"name\":\"a\"}]", NULL, "members[]: a key is missing (needs 2)" },
	{ F_MEMBERS, "[{\"name\":\"a\",\"addr\":\"x\",\"port\":1}]", NULL, "members[]: unknown key 'port'" },
	{ F_MEMBERS, "[{\"name\":\"a\",\"addr\":\"x\"},{\"name\":\"a\",\"addr\":\"y\"}]", NULL, "member listed twice" },
	{ F_MEMBERS, "[{\"name\":\"a\",\"addr\":\"x y\"}]", NULL, "address is not printable ASCII" },
	{ F_MEMBERS, "[1]", NULL, "members[]: not an object" },
	{ F_CHANNELS, "[{\"id\":2,\"uid\":0,\"gid\":0,\"mode\":\"0600\"},{\"id\":1,\"uid\":0,\"gid\":0,\"mode\":\"0600\"}]", NULL, "channel ids not strictly increasing" },
	{ F_CHANNELS, "[{\"id\":1048576,\"uid\":0,\"gid\":0,\"mode\":\"0600\"}]", NULL, "'id' is above 1048575" },
	{ F_CHANNELS, "[{\"id\":1,\"uid\":-1,\"gid\":0,\"mode\":\"0600\"}]", NULL, "'uid' is negative" },
	{ F_CHANNELS, "[{\"id\":1,\"uid\":0,\"gid\":4294967296,\"mode\":\"0600\"}]", NULL, "'gid' is above 4294967295" },
	{ F_CHANNELS, "[{\"id\":1,\"uid\":0,\"gid\":0,\"mode\":384}]", NULL, "'mode' is not a string" },
	{ F_CHANNELS, "[{\"id\":1,\"uid\":0,\"gid\":0,\"mode\":\"0800\"}]", NULL, "'mode' is not octal" },
	{ F_CHANNELS, "[{\"id\":1,\"uid\":0,\"gid\":0,\"mode\":\"1777\"}]", NULL, "channel mode above 0777" },
	{ F_CHANNELS, "[{\"id\":1,\"uid\":0,\"gid\":0,\"mode\":\"00600\"}]", NULL, "'mode' is not 1 to 4 octal digits" },
	{ F_CHANNELS, "[{\"id\":1,\"uid\":0,\"gid\":0,\"mode\":\"\"}]", NULL, "'mode' is not 1 to 4 octal digits" },
	{ F_CHANNELS, "\"all\"", NULL, "'channels' is not an array" },
};

static void test_def_json_refusals(void **state)
{
	struct imexd_def d, before;
	char err[256], *s;
	size_t i;

	(void)state;
	s = json_with(-1, NULL, NULL);
	assert_int_equal(imexd_def_from_json(s, &d, err, sizeof(err)), 0);
	imexd_def_free(&d);
	free(s);
	for (i = 0; i < sizeof(bad_jsons) / sizeof(bad_jsons[0]); i++) {
		s = json_with(bad_jsons[i].field, bad_jsons[i].value,
			      bad_jsons[i].extra);
		memset(&d, 0x5a, sizeof(d));
		before = d;
		err[0] = '\0';
		if (imexd_def_from_json(s, &d, err, sizeof(err)) != -EINVAL)
			fail_msg("accepted: %s", s);
		if (strcmp(err, bad_jsons[i].err))
			fail_msg("%s:\n got  '%s'\n want '%s'", s, err,
				 bad_jsons[i].err);
		assert_memory_equal(&d, &before, sizeof(d));
		free(s);
	}
	assert_int_equal(imexd_def_from_json("{", &d, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not JSON"));
	assert_int_equal(imexd_def_from_json("[]", &d, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "definition: not an object");
	s = json_with(-1, NULL, NULL);
	strcat(s, " \n{}");		/* json_with() leaves room */
	assert_int_equal(imexd_def_from_json(s, &d, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "text after the JSON document");
	free(s);
}

/* ---- the directory ------------------------------------------------------- */

static void make_def(struct imexd_def *d, uint8_t seed, uint64_t gen)
{
	assert_int_equal(sample_def(d, "job", 3, 5, gen), 0);
	snprintf(d->name, sizeof(d->name), "job%u", seed);
	sample_uuid(d->uuid, seed);
}

static void test_put_load_round_trip(void **state)
{
	struct fixture *f = *state;
	struct imexd_def in[3], *out = NULL;
	char err[256] = "stale";
	size_t n = 0, i, j;

	for (i = 0; i < 3; i++) {
		make_def(&in[i], (uint8_t)(0x30 + i * 0x20), i + 1);
		assert_int_equal(imexd_store_put_def(f->store, &in[i]), 0);
	}
	assert_int_equal(imexd_store_load_defs(f->store, &out, &n, err,
					       sizeof(err)), 3);
	assert_int_equal(n, 3);
	assert_string_equal(err, "");
	for (i = 0; i < 3; i++) {
		for (j = 0; j < 3 && !imexd_def_equal(&in[i], &out[j]); j++)
			;
		assert_true(j < 3);
		imexd_def_free(&in[i]);
	}
	free_defs(out, n);
	/* Files 0600 in a 0700 directory. */
	assert_int_equal(mode_of(f->dir), 0700);
	assert_int_equal(mode_of(f->domains), 0700);
	assert_int_equal(count_prefix(f->domains, ""), 3);
	assert_int_equal(count_prefix(f->domains, "."), 0);
}

static void test_put_replaces_and_remove_forgets(void **state)
{
	struct fixture *f = *state;
	struct imexd_def a, b, *out = NULL;
	char path[4400], uuid[40];
	size_t n = 0;

	make_def(&a, 0x11, 1);
	make_def(&b, 0x11, 2);
	b.channels[0].uid = 42;
	assert_int_equal(imexd_store_put_def(f->store, &a), 0);
	assert_int_equal(imexd_store_put_def(f->store, &b), 0);
	assert_int_equal(imexd_store_load_defs(f->store, &out, &n, NULL, 0), 1);
	assert_true(imexd_def_equal(&out[0], &b));
	free_defs(out, n);

	/* The file is named by the UUID, lower case, and is 0600. */
	snprintf(uuid, sizeof(uuid),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b.uuid[0], b.uuid[1], b.uuid[2], b.uuid[3], b.uuid[4], b.uuid[5],
		 b.uuid[6], b.uuid[7], b.uuid[8], b.uuid[9], b.uuid[10],
		 b.uuid[11], b.uuid[12], b.uuid[13], b.uuid[14], b.uuid[15]);
	snprintf(path, sizeof(path), "%s/%s.json", f->domains, uuid);
	assert_int_equal(mode_of(path), 0600);

	assert_int_equal(imexd_store_remove_def(f->store, b.uuid), 0);
	assert_int_equal(imexd_store_load_defs(f->store, &out, &n, NULL, 0), 0);
	assert_int_equal(n, 0);
	assert_null(out);
	assert_int_equal(imexd_store_remove_def(f->store, b.uuid), 0);
	assert_int_equal(count_prefix(f->domains, ""), 0);
	imexd_def_free(&a);
	imexd_def_free(&b);
}

static void test_put_refuses_an_invalid_def(void **state)
{
	struct fixture *f = *state;
	struct imexd_def d;

	make_def(&d, 0x22, 1);
	strcpy(d.members[1].name, d.members[0].name);
	assert_int_equal(imexd_store_put_def(f->store, &d), -EINVAL);
	memset(d.uuid, 0, 16);
	assert_int_equal(imexd_store_put_def(f->store, &d), -EINVAL);
	assert_int_equal(count_prefix(f->domains, ""), 0);
	imexd_def_free(&d);
}

static void test_node_uuid_is_created_once_and_kept(void **state)
{
	struct fixture *f = *state;
	uint8_t a[16], b[16], c[16], zero[16] = { 0 };
	struct imexd_store *s2;
	char err[256], path[4200], *other;

	assert_int_equal(imexd_store_node_uuid(f->store, a), 0);
	assert_memory_not_equal(a, zero, 16);
	assert_int_equal(a[6] >> 4, 4);			/* random UUID */
	assert_int_equal(a[8] & 0xc0, 0x80);
	assert_int_equal(imexd_store_node_uuid(f->store, b), 0);
	assert_memory_equal(a, b, 16);
	snprintf(path, sizeof(path), "%s/node.json", f->dir);
	assert_int_equal(mode_of(path), 0600);

	/* Another open of the same directory: the same UUID. */
	assert_int_equal(imexd_store_open(&s2, f->dir, err, sizeof(err)), 0);
	assert_int_equal(imexd_store_node_uuid(s2, c), 0);
	assert_memory_equal(a, c, 16);
	imexd_store_close(s2);

	/* Another directory: another UUID. */
	other = make_tmpdir();
	assert_int_equal(imexd_store_open(&s2, other, err, sizeof(err)), 0);
	assert_int_equal(imexd_store_node_uuid(s2, c), 0);
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
		assert_int_equal(imexd_store_node_uuid(s2, u), -EBADMSG);
		imexd_store_close(s2);
		fp = fopen(path, "r");
		buf[fread(buf, 1, sizeof(buf) - 1, fp)] = '\0';
		fclose(fp);
		assert_string_equal(buf, damaged[i]);
	}
	write_file(path, "{ \"uuid\": \"0A0B0C0D-0000-4000-8000-000000000001\" }\n");
	assert_int_equal(imexd_store_open(&s2, f->dir, err, sizeof(err)), 0);
	assert_int_equal(imexd_store_node_uuid(s2, u), 0);
	assert_int_equal(u[0], 0x0a);
	assert_int_equal(u[15], 0x01);
	imexd_store_close(s2);
}

static void test_damaged_files_are_skipped_and_named(void **state)
{
	struct fixture *f = *state;
	struct imexd_def a, b, *out = NULL;
	char path[4400], err[1024], *json;
	size_t n = 0;

	make_def(&a, 0x40, 1);
	make_def(&b, 0x60, 1);
	assert_int_equal(imexd_store_put_def(f->store, &a), 0);
	assert_int_equal(imexd_store_put_def(f->store, &b), 0);

	/* Garbage under a proper name. */
	snprintf(path, sizeof(path),
		 "%s/11111111-2222-4333-8444-555555555555.json", f->domains);
	write_file(path, "{\"version\":1,\"name\":");
	/* A valid definition under another UUID's name. */
	json = imexd_def_to_json(&a);
	snprintf(path, sizeof(path),
		 "%s/99999999-2222-4333-8444-555555555555.json", f->domains);
	write_file(path, json);
	free(json);
	/* Names that are not <uuid>.json. */
	snprintf(path, sizeof(path), "%s/backup.json", f->domains);
	write_file(path, "{}");
	snprintf(path, sizeof(path),
		 "%s/AAAAAAAA-2222-4333-8444-555555555555.json", f->domains);
	write_file(path, "{}");
	/* Ignored without a word: not .json, hidden, temp files. */
	snprintf(path, sizeof(path), "%s/README", f->domains);
	write_file(path, "notes");
	snprintf(path, sizeof(path), "%s/.tmp.x.json.abcdef", f->domains);
	write_file(path, "{");
	snprintf(path, sizeof(path), "%s/.hidden.json", f->domains);
	write_file(path, "{");

	assert_int_equal(imexd_store_load_defs(f->store, &out, &n, err,
					       sizeof(err)), 2);
	assert_int_equal(n, 2);
	assert_true(imexd_def_equal(&out[0], &a) || imexd_def_equal(&out[1], &a));
	assert_true(imexd_def_equal(&out[0], &b) || imexd_def_equal(&out[1], &b));
	free_defs(out, n);
	assert_non_null(strstr(err, "domains/11111111-2222-4333-8444-555555555555.json: skipped: not JSON"));
	assert_non_null(strstr(err, "domains/99999999-2222-4333-8444-555555555555.json: skipped: holds another domain than its name says"));
	assert_non_null(strstr(err, "domains/backup.json: skipped: not named <uuid>.json"));
	assert_non_null(strstr(err, "domains/AAAAAAAA-2222-4333-8444-555555555555.json: skipped: not named as aaaaaaaa-2222-4333-8444-555555555555.json"));
	assert_null(strstr(err, "README"));
	assert_null(strstr(err, "tmp"));
	assert_null(strstr(err, "hidden"));

	/* A tiny error buffer is enough not to overflow. */
	assert_int_equal(imexd_store_load_defs(f->store, &out, &n, err, 10), 2);
	assert_true(strlen(err) < 10);
	free_defs(out, n);
	imexd_def_free(&a);
	imexd_def_free(&b);
}

static void test_open_tightens_modes_and_reports_errors(void **state)
{
	struct fixture *f = *state;
	struct imexd_store *s2;
	char err[512], path[4400];

	chmod(f->domains, 0755);
	chmod(f->dir, 0777);
	assert_int_equal(imexd_store_open(&s2, f->dir, err, sizeof(err)), 0);
	imexd_store_close(s2);
	assert_int_equal(mode_of(f->dir), 0700);
	assert_int_equal(mode_of(f->domains), 0700);

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

static void test_more_than_domains_max_is_cut_and_reported(void **state)
{
	struct fixture *f = *state;
	struct imexd_def d, *out = NULL;
	char err[512];
	size_t n = 0, i;

	make_def(&d, 0x70, 1);
	for (i = 0; i < IMEX_DOMAINS_MAX + 2; i++) {
		d.uuid[14] = (uint8_t)(i >> 8);
		d.uuid[15] = (uint8_t)i;
		assert_int_equal(imexd_store_put_def(f->store, &d), 0);
	}
	assert_int_equal(imexd_store_load_defs(f->store, &out, &n, err,
					       sizeof(err)), IMEX_DOMAINS_MAX);
	assert_non_null(strstr(err, "skipped: more than 256 domains"));
	free_defs(out, n);
	imexd_def_free(&d);
}

/* ---- torn writes ------------------------------------------------------- */

#define KILLS		100
#define KILLS_MAX	2000	/* keep killing until enough landed mid-write */
#define BIG_CHANNELS	1000	/* a ~75 KiB file: a write takes a while */

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
	struct imexd_def v[2], *out = NULL;
	struct imexd_store *s2;
	size_t n = 0, caught = 0, saw[2] = { 0, 0 };
	struct timespec t0, t1;
	long put_us, range_us;
	char err[1024];
	int i, status, ifd;
	pid_t pid;

	assert_int_equal(sample_def(&v[0], "torn", 8, BIG_CHANNELS, 1), 0);
	assert_int_equal(sample_def(&v[1], "torn", 8, BIG_CHANNELS, 2), 0);
	for (i = 0; i < BIG_CHANNELS; i++)
		v[1].channels[i].uid = 7;
	/* Kill within a few write times, whatever this disk's speed. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 4; i++)
		assert_int_equal(imexd_store_put_def(f->store, &v[i & 1]), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	put_us = ((t1.tv_sec - t0.tv_sec) * 1000000 +
		  (t1.tv_nsec - t0.tv_nsec) / 1000) / 4;
	range_us = put_us * 4 > 200 ? put_us * 4 : 200;
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(ifd >= 0);
	assert_true(inotify_add_watch(ifd, f->domains, IN_CREATE) >= 0);
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
				if (imexd_store_put_def(f->store, &v[k & 1]))
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
		caught += count_prefix(f->domains, ".tmp.") > 0;
		/* Only the definition is visible as one, temp file or not. */
		assert_int_equal(imexd_store_load_defs(f->store, &out, &n, err,
						       sizeof(err)), 1);
		if (err[0])
			fail_msg("kill %d: %s", i, err);
		free_defs(out, n);

		/* What a restarted daemon sees: the old or the new version. */
		assert_int_equal(imexd_store_open(&s2, f->dir, err, sizeof(err)), 0);
		assert_int_equal(count_prefix(f->domains, ".tmp."), 0);
		assert_int_equal(imexd_store_load_defs(s2, &out, &n, err,
						       sizeof(err)), 1);
		if (err[0])
			fail_msg("kill %d: %s", i, err);
		if (imexd_def_equal(&out[0], &v[0]))
			saw[0]++;
		else if (imexd_def_equal(&out[0], &v[1]))
			saw[1]++;
		else
			fail_msg("kill %d: neither the old nor the new version", i);
		free_defs(out, n);
		imexd_store_close(s2);
		assert_int_equal(count_prefix(f->domains, ""), 1);
	}
	print_message("%d kills within %ld us (a write takes %ld us): %zu left a temp file; loads saw v1 %zu, v2 %zu times\n",
		      i, range_us, put_us, caught, saw[0], saw[1]);
	/* Many kills did land mid-write, or the test proved nothing. */
	assert_true(caught >= KILLS / 15);
	assert_true(saw[0] > 0 && saw[1] > 0);

	assert_int_equal(count_prefix(f->dir, ".tmp."), 0);
	close(ifd);
	imexd_def_free(&v[0]);
	imexd_def_free(&v[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_def_json_round_trip),
		cmocka_unit_test(test_def_json_refusals),
		cmocka_unit_test_setup_teardown(test_put_load_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_replaces_and_remove_forgets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_refuses_an_invalid_def, setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_uuid_is_created_once_and_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_node_uuid_is_an_error_not_a_new_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_files_are_skipped_and_named, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_tightens_modes_and_reports_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_more_than_domains_max_is_cut_and_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_writer_never_leaves_a_torn_file, setup, teardown),
	};

	return cmocka_run_group_tests_name("imexd store", tests, NULL, NULL);
}
