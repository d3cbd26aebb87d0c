// SPDX-License-Identifier: GPL-2.0-only
/*
 * Transient CDI spec files: atomic replacement (a concurrent reader only
 * ever sees a complete spec), mode 0644 whatever the umask, no-overwrite,
 * removal and listing.  Works in a temporary directory; no kernel.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "internal.h"
#include "test_util.h"

struct fixture {
	struct imexctl *ctx;
	char *dir;
	struct imexctl_cdi_opts opts;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(imexctl_new(&f->ctx), 0);
	f->dir = make_tmpdir();
	assert_non_null(f->dir);
	f->opts.dir = f->dir;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	rm_tree(f->dir);
	free(f->dir);
	imexctl_free(f->ctx);
	free(f);
	return 0;
}

/* A valid spec for channels [0, n): big n, big file. */
static char *spec_text(struct imexctl *ctx, size_t n)
{
	struct imexctl_cdi_channel *ch = calloc(n, sizeof(*ch));
	char *json = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		ch[i] = (struct imexctl_cdi_channel){ .id = (uint32_t)i, .mode = 0600 };
	assert_int_equal(imexctl_cdi_spec_build(ctx, NULL, 500, ch, n, &json), 0);
	free(ch);
	return json;
}

static void test_write_is_0644_whatever_the_umask(void **state)
{
	struct fixture *f = *state;
	char *json = spec_text(f->ctx, 2), *path = NULL, *back, expect[512];
	struct stat st;
	mode_t old = umask(077);

	assert_int_equal(imexctl_cdi_write(f->ctx, "job7", json, &f->opts, &path), 0);
	umask(old);
	snprintf(expect, sizeof(expect), "%s/imex.dev-channel_job7.json", f->dir);
	assert_string_equal(path, expect);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	back = read_file(path);
	assert_string_equal(back, json);
	/* Nothing else left behind: no temp file. */
	assert_int_equal(count_entries(f->dir), 1);
	free(back);
	free(path);
	free(json);
}

static void test_write_creates_missing_directories_0755(void **state)
{
	struct fixture *f = *state;
	char *json = spec_text(f->ctx, 1), sub[512], top[512];
	struct imexctl_cdi_opts opts = { 0 };
	struct stat st;

	snprintf(top, sizeof(top), "%s/run", f->dir);
	snprintf(sub, sizeof(sub), "%s/run/cdi", f->dir);
	opts.dir = sub;
	assert_int_equal(imexctl_cdi_write(f->ctx, "x", json, &opts, NULL), 0);
	assert_int_equal(stat(sub, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0755);
	assert_int_equal(count_entries(sub), 1);
	assert_int_equal(imexctl_cdi_remove(f->ctx, "x", &opts), 0);
	rmdir(sub);
	rmdir(top);
	free(json);
}

static void test_overwrite_is_the_default_and_can_be_refused(void **state)
{
	struct fixture *f = *state;
	char *one = spec_text(f->ctx, 1), *two = spec_text(f->ctx, 2), *path = NULL, *back;
	struct imexctl_cdi_opts strict = f->opts;

	assert_int_equal(imexctl_cdi_write(f->ctx, "j", one, &f->opts, &path), 0);
	assert_int_equal(imexctl_cdi_write(f->ctx, "j", two, &f->opts, NULL), 0);
	back = read_file(path);
	assert_string_equal(back, two);
	free(back);

	strict.no_overwrite = true;
	assert_int_equal(imexctl_cdi_write(f->ctx, "j", one, &strict, NULL), -EEXIST);
	assert_non_null(strstr(imexctl_errmsg(f->ctx), "already exists"));
	back = read_file(path);
	assert_string_equal(back, two);
	assert_int_equal(count_entries(f->dir), 1);
	/* A new id is fine with no_overwrite. */
	assert_int_equal(imexctl_cdi_write(f->ctx, "k", one, &strict, NULL), 0);
	assert_int_equal(count_entries(f->dir), 2);
	free(back);
	free(path);
	free(one);
	free(two);
}

static void test_write_refuses_bad_ids_and_names(void **state)
{
	struct fixture *f = *state;
	struct imexctl_cdi_opts bad = f->opts;
	char *json = spec_text(f->ctx, 1);

	assert_int_equal(imexctl_cdi_write(f->ctx, "../evil", json, &f->opts, NULL), -EINVAL);
	assert_non_null(strstr(imexctl_errmsg(f->ctx), "invalid CDI spec id '../evil'"));
	assert_int_equal(imexctl_cdi_write(f->ctx, "a/b", json, &f->opts, NULL), -EINVAL);
	assert_int_equal(imexctl_cdi_write(f->ctx, "", json, &f->opts, NULL), -EINVAL);
	bad.vendor = "-x";
	assert_int_equal(imexctl_cdi_write(f->ctx, "ok", json, &bad, NULL), -EINVAL);
	assert_non_null(strstr(imexctl_errmsg(f->ctx), "vendor"));
	assert_int_equal(count_entries(f->dir), 0);
	free(json);
}

struct race {
	const char *path;
	const char *a, *b;
	atomic_bool stop;
	atomic_bool written;
	long reads, partial, missing;
};

static void *reader(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->stop)) {
		/* Sampled before the open: once written, the path must stay. */
		bool written = atomic_load(&r->written);
		char *text = read_file(r->path);

		if (!text) {
			if (written)
				r->missing++;
			continue;
		}
		r->reads++;
		if (strcmp(text, r->a) && strcmp(text, r->b))
			r->partial++;
		free(text);
	}
	return NULL;
}

static void test_concurrent_reader_never_sees_a_partial_spec(void **state)
{
	struct fixture *f = *state;
	char *small = spec_text(f->ctx, 1), *big = spec_text(f->ctx, 3000), *path = NULL;
	struct race r = { 0 };
	pthread_t t;
	int i;

	assert_true(strlen(big) > 500000);	/* several write() calls' worth */
	assert_int_equal(imexctl_cdi_spec_path(f->ctx, &f->opts, "race", &path), 0);
	r.path = path;
	r.a = small;
	r.b = big;
	assert_int_equal(pthread_create(&t, NULL, reader, &r), 0);
	for (i = 0; i < 300; i++) {
		assert_int_equal(imexctl_cdi_write(f->ctx, "race", i % 2 ? big : small,
						   &f->opts, NULL), 0);
		atomic_store(&r.written, true);
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	print_message("reader: %ld complete reads, %ld partial, %ld missing\n",
		      r.reads, r.partial, r.missing);
	assert_true(r.reads > 0);
	assert_int_equal(r.partial, 0);
	assert_int_equal(r.missing, 0);
	assert_int_equal(count_entries(f->dir), 1);
	free(path);
	free(small);
	free(big);
}

static void test_remove_and_remove_again(void **state)
{
	struct fixture *f = *state;
	char *json = spec_text(f->ctx, 1);

	assert_int_equal(imexctl_cdi_write(f->ctx, "gone", json, &f->opts, NULL), 0);
	assert_int_equal(imexctl_cdi_remove(f->ctx, "gone", &f->opts), 0);
	assert_int_equal(count_entries(f->dir), 0);
	assert_int_equal(imexctl_cdi_remove(f->ctx, "gone", &f->opts), -ENOENT);
	assert_non_null(strstr(imexctl_errmsg(f->ctx), "no CDI spec with id 'gone'"));
	assert_non_null(strstr(imexctl_errmsg(f->ctx), "imexctl cdi list"));
	assert_int_equal(imexctl_cdi_remove(f->ctx, "../x", &f->opts), -EINVAL);
	free(json);
}

static void touch(const char *dir, const char *name)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fclose(fp);
}

static void test_list_finds_only_our_specs_sorted(void **state)
{
	struct fixture *f = *state;
	struct imexctl_cdi_opts other = f->opts, missing = { .dir = "/nonexistent/imexctl" };
	struct imexctl_cdi_entry *e = NULL;
	char *json = spec_text(f->ctx, 1), expect[512];
	size_t n = 99;

	assert_int_equal(imexctl_cdi_write(f->ctx, "b", json, &f->opts, NULL), 0);
	assert_int_equal(imexctl_cdi_write(f->ctx, "a", json, &f->opts, NULL), 0);
	assert_int_equal(imexctl_cdi_write(f->ctx, "c.1", json, &f->opts, NULL), 0);
	other.vendor = "example.com";
	assert_int_equal(imexctl_cdi_write(f->ctx, "z", json, &other, NULL), 0);
	touch(f->dir, "imex.dev-channel_x.yaml");
	touch(f->dir, ".imex.dev-channel_y.json.123.tmp");
	touch(f->dir, "imex.dev-channel_-bad.json");
	touch(f->dir, "imex.dev-channel_.json");
	touch(f->dir, "imex.dev-channel.json");

	assert_int_equal(imexctl_cdi_list(f->ctx, &f->opts, &e, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(e[0].id, "a");
	assert_string_equal(e[1].id, "b");
	assert_string_equal(e[2].id, "c.1");
	snprintf(expect, sizeof(expect), "%s/imex.dev-channel_c.1.json", f->dir);
	assert_string_equal(e[2].path, expect);
	imexctl_cdi_list_free(e, n);

	assert_int_equal(imexctl_cdi_list(f->ctx, &other, &e, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(e[0].id, "z");
	imexctl_cdi_list_free(e, n);

	/* No directory yet: nothing written, an empty list. */
	assert_int_equal(imexctl_cdi_list(f->ctx, &missing, &e, &n), 0);
	assert_int_equal(n, 0);
	assert_null(e);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_is_0644_whatever_the_umask, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_creates_missing_directories_0755, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overwrite_is_the_default_and_can_be_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_refuses_bad_ids_and_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_reader_never_sees_a_partial_spec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_and_remove_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_finds_only_our_specs_sorted, setup, teardown),
	};

	return cmocka_run_group_tests_name("cdi_file", tests, NULL, NULL);
}
