// SPDX-License-Identifier: GPL-2.0-only
/*
 * CDI spec building without a kernel: naming rules, the lowest cdiVersion
 * for the features used, and the JSON shape read back with json-c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "internal.h"

static int setup(void **state)
{
	struct imexctl *ctx;

	assert_int_equal(imexctl_new(&ctx), 0);
	*state = ctx;
	return 0;
}

static int teardown(void **state)
{
	imexctl_free(*state);
	return 0;
}

static void test_vendor_and_class_names_follow_cdi_rules(void **state)
{
	static const char *const good[] = { "imex.dev", "nvidia.com", "a", "A9", "x_y-z.w" };
	static const char *const bad[] = { "", "1abc", ".x", "-x", "x-", "x.", "a/b", "a b",
					   "a=b", "a:b", "ä" };
	const char *why = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(imexctl_cdi_name_check(IMEXCTL_CDI_NAME_VENDOR, good[i], &why), 0);
		assert_int_equal(imexctl_cdi_name_check(IMEXCTL_CDI_NAME_CLASS, good[i], &why), 0);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_equal(imexctl_cdi_name_check(IMEXCTL_CDI_NAME_VENDOR, bad[i], &why),
				 -EINVAL);
		assert_non_null(why);
	}
	assert_int_equal(imexctl_cdi_name_check(IMEXCTL_CDI_NAME_VENDOR, NULL, &why), -EINVAL);
	assert_int_equal(imexctl_cdi_name_check(IMEXCTL_CDI_NAME_VENDOR,
		"a123456789012345678901234567890123456789012345678901234567890123", &why), -EINVAL);
	assert_string_equal(why, "it is longer than 63 characters");
}

static void test_device_names_and_spec_ids_follow_cdi_rules(void **state)
{
	static const char *const good[] = { "channel0", "0", "all", "a:b", "x.y_z-1",
					    "slurm-1234.0", "9abc" };
	static const char *const bad[] = { "", "-a", "a-", ":a", "a/b", "a b", "..",
					   "a=b", "a@b" };
	const char *why = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(imexctl_cdi_name_check(IMEXCTL_CDI_NAME_DEVICE, good[i], &why), 0);
		assert_int_equal(imexctl_cdi_name_check(IMEXCTL_CDI_NAME_SPEC_ID, good[i], &why), 0);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(imexctl_cdi_name_check(IMEXCTL_CDI_NAME_DEVICE, bad[i], &why),
				 -EINVAL);
		assert_int_equal(imexctl_cdi_name_check(IMEXCTL_CDI_NAME_SPEC_ID, bad[i], &why),
				 -EINVAL);
	}
	assert_int_equal(imexctl_cdi_name_check(IMEXCTL_CDI_NAME_SPEC_ID, "a/b", &why), -EINVAL);
	assert_string_equal(why, "it must not contain '/'");
	assert_int_equal(imexctl_cdi_name_check(99, "a", &why), -EINVAL);
}

/* The version a JSON spec text needs. */
static const char *version_of(const char *text)
{
	struct json_object *spec = json_tokener_parse(text);
	const char *v;

	assert_non_null(spec);
	v = imexctl_cdi_required_version(spec);
	json_object_put(spec);
	return v;
}

#define DEV(name, edits) "{\"name\":\"" name "\",\"containerEdits\":{" edits "}}"
#define NODE "\"deviceNodes\":[{\"path\":\"/dev/x\"}]"
#define SPEC(kind, devs, extra) \
	"{\"cdiVersion\":\"\",\"kind\":\"" kind "\",\"devices\":[" devs "]" extra "}"

static void test_version_is_the_lowest_the_features_need(void **state)
{
	(void)state;
	assert_string_equal(version_of(SPEC("a.b/c", DEV("x", NODE), "")), "0.3.0");
	/* 0.4.0: mount type */
	assert_string_equal(version_of(SPEC("a/c", DEV("x", "\"mounts\":[{\"hostPath\":\"/a\","
			"\"containerPath\":\"/b\",\"type\":\"bind\"}]"), "")), "0.4.0");
	assert_string_equal(version_of(SPEC("a/c", DEV("x", NODE), ",\"containerEdits\":"
			"{\"mounts\":[{\"hostPath\":\"/a\",\"containerPath\":\"/b\",\"type\":\"bind\"}]}")),
			"0.4.0");
	/* 0.5.0: a name starting with a digit; hostPath */
	assert_string_equal(version_of(SPEC("a/c", DEV("0", NODE), "")), "0.5.0");
	assert_string_equal(version_of(SPEC("a/c", DEV("x", "\"deviceNodes\":[{\"path\":\"/a\","
			"\"hostPath\":\"/b\"}]"), "")), "0.5.0");
	/* 0.6.0: annotations (spec or device); a dot in the class */
	assert_string_equal(version_of(SPEC("a/c", DEV("x", NODE), ",\"annotations\":{\"k\":\"v\"}")),
			    "0.6.0");
	assert_string_equal(version_of(SPEC("a/c", "{\"name\":\"x\",\"annotations\":{\"k\":\"v\"},"
			"\"containerEdits\":{" NODE "}}", "")), "0.6.0");
	assert_string_equal(version_of(SPEC("a/c.d", DEV("x", NODE), "")), "0.6.0");
	assert_string_equal(version_of(SPEC("a/c", DEV("x", NODE), ",\"annotations\":{}")), "0.3.0");
	/* 0.7.0: additionalGids, intelRdt */
	assert_string_equal(version_of(SPEC("a/c", DEV("x", "\"additionalGids\":[5]"), "")), "0.7.0");
	assert_string_equal(version_of(SPEC("a/c", DEV("x", NODE), ",\"containerEdits\":"
			"{\"intelRdt\":{\"closID\":\"c\"}}")), "0.7.0");
	assert_string_equal(version_of(SPEC("a/c", DEV("x", "\"additionalGids\":[]"), "")), "0.3.0");
	/* 1.1.0: netDevices; intelRdt.enableMonitoring or schemata */
	assert_string_equal(version_of(SPEC("a/c", DEV("x", "\"netDevices\":[{\"hostInterfaceName\":"
			"\"e\",\"name\":\"n\"}]"), "")), "1.1.0");
	assert_string_equal(version_of(SPEC("a/c", DEV("x", "\"intelRdt\":{\"enableMonitoring\":true}"),
			"")), "1.1.0");
	assert_string_equal(version_of(SPEC("a/c", DEV("x", "\"intelRdt\":{\"schemata\":[\"L3:0=f\"]}"),
			"")), "1.1.0");
	/* Several features: the newest wins. */
	assert_string_equal(version_of(SPEC("a/c.d", DEV("0", "\"additionalGids\":[1]"),
			",\"annotations\":{\"k\":\"v\"}")), "0.7.0");
}

static const struct imexctl_cdi_channel three[] = {
	{ .id = 7, .uid = 1000, .gid = 100, .mode = 0660, .minor = 70 },
	{ .id = 1, .uid = 0, .gid = 0, .mode = 0600, .minor = 1048575 },
	{ .id = 5, .uid = 2000, .gid = 2000, .mode = 0666, .minor = 5 },
};

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	assert_true(json_object_object_get_ex(o, key, &v));
	return v;
}

static void assert_keys(struct json_object *o, const char *const *keys, size_t n)
{
	size_t i;

	assert_int_equal(json_object_object_length(o), n);
	for (i = 0; i < n; i++)
		assert_true(json_object_object_get_ex(o, keys[i], NULL));
}

static void assert_node(struct json_object *node, const struct imexctl_cdi_channel *c,
			uint32_t major)
{
	static const char *const keys[] = { "path", "type", "major", "minor", "fileMode",
					    "uid", "gid" };
	char path[64];

	snprintf(path, sizeof(path), "/dev/imex-channels/channel%u", c->id);
	/* Unknown fields would make runtimes reject the whole spec. */
	assert_keys(node, keys, 7);
	assert_string_equal(json_object_get_string(get(node, "path")), path);
	assert_string_equal(json_object_get_string(get(node, "type")), "c");
	assert_true(json_object_is_type(get(node, "major"), json_type_int));
	assert_int_equal(json_object_get_int64(get(node, "major")), major);
	/* The grant's number, not the id: an old grant's node opens nothing. */
	assert_int_equal(json_object_get_int64(get(node, "minor")), c->minor);
	assert_true(json_object_is_type(get(node, "fileMode"), json_type_int));
	assert_int_equal(json_object_get_int64(get(node, "fileMode")), c->mode);
	assert_int_equal(json_object_get_int64(get(node, "uid")), c->uid);
	assert_int_equal(json_object_get_int64(get(node, "gid")), c->gid);
}

static void test_spec_has_a_device_per_channel_and_all(void **state)
{
	static const char *const top[] = { "cdiVersion", "kind", "devices" };
	static const char *const dev_keys[] = { "name", "containerEdits" };
	const struct imexctl_cdi_channel *sorted[] = { &three[1], &three[2], &three[0] };
	struct json_object *spec, *devs, *dev, *nodes;
	char *json = NULL, name[32];
	size_t i;

	assert_int_equal(imexctl_cdi_spec_build(*state, NULL, 511, three, 3, &json), 0);
	assert_string_equal(imexctl_errmsg(*state), "");
	spec = json_tokener_parse(json);
	assert_non_null(spec);
	assert_keys(spec, top, 3);
	assert_string_equal(json_object_get_string(get(spec, "cdiVersion")), "0.3.0");
	assert_string_equal(json_object_get_string(get(spec, "kind")), "imex.dev/channel");
	devs = get(spec, "devices");
	assert_int_equal(json_object_array_length(devs), 4);
	for (i = 0; i < 3; i++) {
		dev = json_object_array_get_idx(devs, i);
		assert_keys(dev, dev_keys, 2);
		snprintf(name, sizeof(name), "channel%u", sorted[i]->id);
		assert_string_equal(json_object_get_string(get(dev, "name")), name);
		nodes = get(get(dev, "containerEdits"), "deviceNodes");
		assert_int_equal(json_object_array_length(nodes), 1);
		assert_node(json_object_array_get_idx(nodes, 0), sorted[i], 511);
	}
	dev = json_object_array_get_idx(devs, 3);
	assert_string_equal(json_object_get_string(get(dev, "name")), "all");
	nodes = get(get(dev, "containerEdits"), "deviceNodes");
	assert_int_equal(json_object_array_length(nodes), 3);
	for (i = 0; i < 3; i++)
		assert_node(json_object_array_get_idx(nodes, i), sorted[i], 511);
	/* The first key is cdiVersion, as people expect to read it. */
	assert_non_null(strstr(json, "\"cdiVersion\""));
	assert_true(strstr(json, "\"cdiVersion\"") < strstr(json, "\"kind\""));
	assert_int_equal(json[strlen(json) - 1], '\n');
	json_object_put(spec);
	free(json);
}

static void test_spec_options_vendor_class_and_all_name(void **state)
{
	struct imexctl_cdi_opts opts = { .vendor = "example.com", .class_name = "imex.ch",
					 .all_name = "" };
	struct json_object *spec;
	char *json = NULL;

	assert_int_equal(imexctl_cdi_spec_build(*state, &opts, 240, three, 1, &json), 0);
	spec = json_tokener_parse(json);
	assert_string_equal(json_object_get_string(get(spec, "kind")), "example.com/imex.ch");
	/* A dot in the class needs 0.6.0: the generic gate decides, not a constant. */
	assert_string_equal(json_object_get_string(get(spec, "cdiVersion")), "0.6.0");
	assert_int_equal(json_object_array_length(get(spec, "devices")), 1);
	json_object_put(spec);
	free(json);
}

static void test_spec_refuses_bad_input_with_a_message(void **state)
{
	struct imexctl_cdi_opts bad_vendor = { .vendor = "1x" };
	struct imexctl_cdi_opts bad_class = { .class_name = "c-" };
	struct imexctl_cdi_opts clash = { .all_name = "channel5" };
	struct imexctl_cdi_channel dup[] = { { .id = 3 }, { .id = 3 } };
	struct imexctl_cdi_channel range[] = { { .id = IMEXCTL_CHANNELS_MAX } };
	struct imexctl_cdi_channel mode[] = { { .id = 1, .mode = 01777 } };
	struct imexctl_cdi_channel minor[] = { { .id = 1, .minor = IMEX_MINORS } };
	char *json = NULL;

	assert_int_equal(imexctl_cdi_spec_build(*state, &bad_vendor, 1, three, 3, &json), -EINVAL);
	assert_non_null(strstr(imexctl_errmsg(*state), "invalid CDI vendor '1x'"));
	assert_int_equal(imexctl_cdi_spec_build(*state, &bad_class, 1, three, 3, &json), -EINVAL);
	assert_non_null(strstr(imexctl_errmsg(*state), "invalid CDI class 'c-'"));
	assert_int_equal(imexctl_cdi_spec_build(*state, &clash, 1, three, 3, &json), -EINVAL);
	assert_non_null(strstr(imexctl_errmsg(*state), "taken by channel 5"));
	assert_int_equal(imexctl_cdi_spec_build(*state, NULL, 1, dup, 2, &json), -EINVAL);
	assert_non_null(strstr(imexctl_errmsg(*state), "channel 3 is listed twice"));
	assert_int_equal(imexctl_cdi_spec_build(*state, NULL, 1, range, 1, &json), -EINVAL);
	assert_int_equal(imexctl_cdi_spec_build(*state, NULL, 1, mode, 1, &json), -EINVAL);
	assert_int_equal(imexctl_cdi_spec_build(*state, NULL, 1, minor, 1, &json), -EINVAL);
	assert_non_null(strstr(imexctl_errmsg(*state), "channel 1: minor 1048576 is out of range"));
	assert_int_equal(imexctl_cdi_spec_build(*state, NULL, 1, three, 0, &json), -EINVAL);
	assert_non_null(strstr(imexctl_errmsg(*state), "at least one channel"));
	assert_null(json);
}

/*
 * The spec as the json-c tree writer built it before the streaming writer
 * replaced it (same keys, order and values), kept here as the reference
 * the streamed spec must parse to.  @c is sorted by id.
 */
static struct json_object *reference_node(const struct imexctl_cdi_channel *c,
					  uint32_t major)
{
	struct json_object *n = json_object_new_object();
	char path[64];

	snprintf(path, sizeof(path), "/dev/imex-channels/channel%u", c->id);
	json_object_object_add(n, "path", json_object_new_string(path));
	json_object_object_add(n, "type", json_object_new_string("c"));
	json_object_object_add(n, "major", json_object_new_int64(major));
	json_object_object_add(n, "minor", json_object_new_int64(c->minor));
	json_object_object_add(n, "fileMode", json_object_new_int64(c->mode));
	json_object_object_add(n, "uid", json_object_new_int64(c->uid));
	json_object_object_add(n, "gid", json_object_new_int64(c->gid));
	return n;
}

static struct json_object *reference_device(const char *name,
					    const struct imexctl_cdi_channel *c,
					    size_t n, uint32_t major)
{
	struct json_object *dev = json_object_new_object();
	struct json_object *edits = json_object_new_object();
	struct json_object *nodes = json_object_new_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_array_add(nodes, reference_node(&c[i], major));
	json_object_object_add(edits, "deviceNodes", nodes);
	json_object_object_add(dev, "name", json_object_new_string(name));
	json_object_object_add(dev, "containerEdits", edits);
	return dev;
}

static struct json_object *reference_spec(const char *kind, const char *all,
					  const struct imexctl_cdi_channel *c,
					  size_t n, uint32_t major)
{
	struct json_object *spec = json_object_new_object();
	struct json_object *devs = json_object_new_array();
	char name[32];
	size_t i;

	json_object_object_add(spec, "cdiVersion", json_object_new_string(""));
	json_object_object_add(spec, "kind", json_object_new_string(kind));
	json_object_object_add(spec, "devices", devs);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "channel%u", c[i].id);
		json_object_array_add(devs, reference_device(name, &c[i], 1, major));
	}
	if (all[0])
		json_object_array_add(devs, reference_device(all, c, n, major));
	json_object_object_add(spec, "cdiVersion",
			       json_object_new_string(imexctl_cdi_required_version(spec)));
	return spec;
}

/* Equal values, and keys in the same order (compact text of each tree). */
static void assert_same_spec(struct json_object *got, struct json_object *want)
{
	assert_true(json_object_equal(got, want));
	assert_string_equal(json_object_to_json_string_ext(got, JSON_C_TO_STRING_PLAIN),
			    json_object_to_json_string_ext(want, JSON_C_TO_STRING_PLAIN));
}

/* The streamed spec parses to what the tree writer built, at 1, 2, 2048. */
static void test_streamed_spec_parses_to_the_tree_writers(void **state)
{
	static const struct {
		struct imexctl_cdi_opts opts;
		const char *kind, *all;
	} cases[] = {
		{ { 0 }, "imex.dev/channel", "all" },
		{ { .all_name = "" }, "imex.dev/channel", "" },
		/* 0.6.0 (a dot in the class) and 0.5.0 (a digit first) */
		{ { .vendor = "example.com", .class_name = "imex.ch", .all_name = "9all" },
		  "example.com/imex.ch", "9all" },
		{ { .all_name = "0" }, "imex.dev/channel", "0" },
	};
	static const size_t sizes[] = { 1, 2, 2048 };
	struct imexctl_cdi_channel *ch = calloc(2048, sizeof(*ch));
	struct json_object *got, *want;
	unsigned int seed = 7;
	char *json;
	size_t i, k, n;

	assert_non_null(ch);
	for (i = 0; i < 2048; i++)
		ch[i] = (struct imexctl_cdi_channel){
			.id = (uint32_t)(i * 3 + 1), .uid = (uint32_t)rand_r(&seed),
			.gid = (uint32_t)rand_r(&seed), .mode = (uint32_t)rand_r(&seed) % 01000,
			.minor = (uint32_t)rand_r(&seed) % IMEX_MINORS,
		};
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			n = sizes[i];
			json = NULL;
			assert_int_equal(imexctl_cdi_spec_build(*state, &cases[k].opts, 4095,
								ch, n, &json), 0);
			assert_int_equal(json[strlen(json) - 1], '\n');
			got = json_tokener_parse(json);
			assert_non_null(got);
			want = reference_spec(cases[k].kind, cases[k].all, ch, n, 4095);
			assert_same_spec(got, want);
			json_object_put(got);
			json_object_put(want);
			free(json);
		}
	}
	free(ch);
}

/* Random inputs: never crashes, and whatever it accepts is a loadable spec. */
static void test_spec_builder_survives_random_input(void **state)
{
	static const char alphabet[] = "abZ09._-abcdxyz42:/ =";
	const size_t common = sizeof(alphabet) - 5;	/* the last 4 are rarely drawn */
	struct imexctl_cdi_channel ch[16];
	struct imexctl_cdi_opts opts;
	char vendor[12], class_name[12], all[12];
	unsigned int seed = 12345;
	int iter, i, accepted = 0;

	for (iter = 0; iter < 3000; iter++) {
		int n = 1 + rand_r(&seed) % 16;

		for (i = 0; i < 11; i++) {
			size_t span = rand_r(&seed) % 8 ? common : sizeof(alphabet) - 1;

			vendor[i] = alphabet[rand_r(&seed) % span];
			class_name[i] = alphabet[rand_r(&seed) % span];
			all[i] = alphabet[rand_r(&seed) % span];
		}
		vendor[1 + rand_r(&seed) % 10] = '\0';
		class_name[1 + rand_r(&seed) % 10] = '\0';
		all[rand_r(&seed) % 11] = '\0';
		for (i = 0; i < n; i++) {
			/* mostly distinct ids; now and then a duplicate */
			ch[i].id = (uint32_t)(i * 4 + rand_r(&seed) % 5);
			ch[i].uid = (uint32_t)rand_r(&seed);
			ch[i].gid = (uint32_t)rand_r(&seed);
			ch[i].mode = (uint32_t)rand_r(&seed) % 01000;
			ch[i].minor = (uint32_t)rand_r(&seed) % (IMEX_MINORS + 2);
		}
		opts = (struct imexctl_cdi_opts){ .vendor = vendor, .class_name = class_name,
						  .all_name = all };
		char *json = NULL;
		int r = imexctl_cdi_spec_build(*state, &opts, (uint32_t)rand_r(&seed), ch,
					       (size_t)n, &json);

		if (r == 0) {
			struct json_object *spec = json_tokener_parse(json);

			assert_non_null(spec);
			assert_true(json_object_array_length(get(spec, "devices")) >= (size_t)1);
			json_object_put(spec);
			free(json);
			accepted++;
		} else {
			assert_int_equal(r, -EINVAL);
			assert_true(strlen(imexctl_errmsg(*state)) > 0);
		}
	}
	/* Both paths were exercised. */
	assert_true(accepted > 100);
	assert_true(accepted < 3000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vendor_and_class_names_follow_cdi_rules),
		cmocka_unit_test(test_device_names_and_spec_ids_follow_cdi_rules),
		cmocka_unit_test(test_version_is_the_lowest_the_features_need),
		cmocka_unit_test_setup_teardown(test_spec_has_a_device_per_channel_and_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_options_vendor_class_and_all_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_refuses_bad_input_with_a_message, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_builder_survives_random_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_streamed_spec_parses_to_the_tree_writers, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("cdi_spec", tests, NULL, NULL);
}
