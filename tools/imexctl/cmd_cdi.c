// SPDX-License-Identifier: GPL-2.0-only
/* imexctl cdi generate|remove|list */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "args.h"
#include "print.h"

enum {
	OPT_DOMAIN = OPT_FIRST, OPT_CHANNEL, OPT_ID, OPT_VENDOR, OPT_CLASS, OPT_DIR,
	OPT_STDOUT, OPT_NO_OVERWRITE, OPT_ALL_NAME,
};

static const char gen_synopsis[] =
	"--domain NAME [--channel ID...] --id ID [--vendor V] [--class C] "
	"[--dir DIR | --stdout] [--no-overwrite] [--all-name NAME]";
static const char gen_help[] =
	"Write a transient CDI spec for channels of a domain granted on this node:\n"
	"DIR/VENDOR-CLASS_ID.json with a device \"channel<N>\" per channel and a device\n"
	"\"all\" with every one, for 'podman run --device VENDOR/CLASS=NAME'. The\n"
	"file is replaced atomically; readers never see a partial spec.\n\n"
	"  --domain NAME    the domain\n"
	"  --channel ID     include this channel; repeatable (default: all granted)\n"
	"  --id ID          the spec's id, e.g. a job or claim id (required unless\n"
	"                   --stdout); letters, digits, '_', '.', ':', '-'\n"
	"  --vendor V       CDI vendor (default imex.dev)\n"
	"  --class C        CDI class (default channel)\n"
	"  --dir DIR        spec directory (default /var/run/cdi, created if missing)\n"
	"  --stdout         print the spec instead of writing it\n"
	"  --no-overwrite   fail if a spec with this id exists (default: replace it)\n"
	"  --all-name NAME  name of the all-channels device (default all; \"\" for none)\n";
static const char remove_synopsis[] = "--id ID [--dir DIR] [--vendor V] [--class C]";
static const char remove_help[] =
	"Remove the transient CDI spec ID written by 'imexctl cdi generate'.\n";
static const char list_synopsis[] = "[--dir DIR] [--vendor V] [--class C]";
static const char list_help[] =
	"List the transient CDI specs named VENDOR-CLASS_ID.json in DIR.\n";

static int check_cdi_name(const struct cli_opts *o, const char *opt,
			  enum imexctl_cdi_name kind, const char *name)
{
	const char *why = NULL;

	if (imexctl_cdi_name_check(kind, name, &why) < 0)
		return cli_bad_value(o, opt, name, why ? why : "invalid name");
	return 0;
}

/* --vendor/--class/--dir/--id shared by the three verbs; 1 if not ours. */
static int common_opt(const struct cli_opts *o, int c, struct imexctl_cdi_opts *opts,
		      const char **id)
{
	switch (c) {
	case OPT_VENDOR:
		opts->vendor = optarg;
		return check_cdi_name(o, "--vendor", IMEXCTL_CDI_NAME_VENDOR, optarg);
	case OPT_CLASS:
		opts->class_name = optarg;
		return check_cdi_name(o, "--class", IMEXCTL_CDI_NAME_CLASS, optarg);
	case OPT_DIR:
		opts->dir = optarg;
		return optarg[0] ? 0 : cli_bad_value(o, "--dir", optarg, "empty directory");
	case OPT_ID:
		*id = optarg;
		return check_cdi_name(o, "--id", IMEXCTL_CDI_NAME_SPEC_ID, optarg);
	}
	return 1;
}

#define CDI_COMMON_OPTS \
	{ "vendor", required_argument, NULL, OPT_VENDOR }, \
	{ "class", required_argument, NULL, OPT_CLASS }, \
	{ "dir", required_argument, NULL, OPT_DIR }

int cdi_generate_parse(int argc, char **argv, struct cdi_generate_args *a)
{
	static const struct option opts[] = {
		{ "domain", required_argument, NULL, OPT_DOMAIN },
		{ "channel", required_argument, NULL, OPT_CHANNEL },
		{ "id", required_argument, NULL, OPT_ID },
		{ "stdout", no_argument, NULL, OPT_STDOUT },
		{ "no-overwrite", no_argument, NULL, OPT_NO_OVERWRITE },
		{ "all-name", required_argument, NULL, OPT_ALL_NAME },
		CDI_COMMON_OPTS,
		CLI_COMMON_OPTS,
		{ 0 }
	};
	struct cli_opts o = CLI_OPTS("cdi generate", gen_synopsis, gen_help, opts, argc, argv,
			      &a->json);
	int c, r;

	while ((c = cli_next_opt(&o)) > 0) {
		r = common_opt(&o, c, &a->opts, &a->id);
		if (r != 1) {
			if (r)
				return r;
			continue;
		}
		switch (c) {
		case OPT_DOMAIN:
			if (cli_opt_domain(&o, &a->domain))
				return EXIT_USAGE;
			break;
		case OPT_CHANNEL:
			if (cli_opt_channel(&o, &a->ids))
				return EXIT_USAGE;
			break;
		case OPT_STDOUT:
			a->to_stdout = true;
			break;
		case OPT_NO_OVERWRITE:
			a->opts.no_overwrite = true;
			break;
		case OPT_ALL_NAME:
			if (optarg[0] && check_cdi_name(&o, "--all-name", IMEXCTL_CDI_NAME_DEVICE,
							optarg))
				return EXIT_USAGE;
			a->opts.all_name = optarg;
			break;
		}
	}
	r = cli_no_args_need(&o, c, a->domain, "missing --domain");
	if (r)
		return r;
	if (a->to_stdout && a->opts.dir)
		return cli_usage_error(o.cmd, o.synopsis, "give either --dir or --stdout, not both");
	if (!a->to_stdout && !a->id)
		return cli_usage_error(o.cmd, o.synopsis, "missing --id");
	return 0;
}

/* {"id", "path", "kind", "cdiVersion", "devices": ["vendor/class=name", ...]} */
static struct json_object *spec_summary(const char *id, const char *path,
					struct json_object *spec)
{
	struct json_object *o = json_object_new_object(), *devs = NULL, *kind = NULL,
			   *ver = NULL, *list, *name;
	const char *k;
	size_t i;
	char fq[256];

	json_object_object_get_ex(spec, "kind", &kind);
	json_object_object_get_ex(spec, "cdiVersion", &ver);
	json_object_object_get_ex(spec, "devices", &devs);
	k = kind ? json_object_get_string(kind) : "";
	if (id)
		json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "kind", json_object_new_string(k));
	json_object_object_add(o, "cdiVersion", ver ? json_object_get(ver) : NULL);
	list = json_object_new_array();
	for (i = 0; devs && json_object_is_type(devs, json_type_array) &&
		    i < json_object_array_length(devs); i++) {
		name = NULL;
		json_object_object_get_ex(json_object_array_get_idx(devs, i), "name", &name);
		snprintf(fq, sizeof(fq), "%s=%s", k, name ? json_object_get_string(name) : "");
		json_object_array_add(list, json_object_new_string(fq));
	}
	json_object_object_add(o, "devices", list);
	return o;
}

static void summary_print(struct json_object *sum, const char *verb)
{
	struct json_object *v = NULL, *devs = NULL;
	size_t i;

	json_object_object_get_ex(sum, "path", &v);
	printf("%s %s", verb, json_object_get_string(v));
	v = NULL;
	json_object_object_get_ex(sum, "cdiVersion", &v);
	printf(" (cdiVersion %s)\n", v ? json_object_get_string(v) : "?");
	json_object_object_get_ex(sum, "devices", &devs);
	for (i = 0; devs && i < json_object_array_length(devs); i++)
		printf("  --device %s\n", json_object_get_string(json_object_array_get_idx(devs, i)));
}

static int cdi_generate(struct cli *cli, int argc, char **argv)
{
	struct cdi_generate_args a = { .json = cli->json };
	struct json_object *spec, *sum;
	char *json = NULL, *path = NULL;
	int r = cdi_generate_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		goto out;
	if (imexctl_cdi_spec(cli->ctx, a.domain, a.ids.v, a.ids.n, &a.opts, &json) < 0) {
		r = cli_lib_fail(cli);
		goto out;
	}
	if (a.to_stdout) {
		fputs(json, stdout);
		r = EXIT_OK;
		goto out;
	}
	if (imexctl_cdi_write(cli->ctx, a.id, json, &a.opts, &path) < 0) {
		r = cli_lib_fail(cli);
		goto out;
	}
	spec = json_tokener_parse(json);
	sum = spec_summary(a.id, path, spec);
	if (!print_is_json())
		summary_print(sum, "wrote");
	print_json(NULL, sum);
	json_object_put(spec);
	r = EXIT_OK;
out:
	free(json);
	free(path);
	free(a.ids.v);
	return r;
}

int cdi_remove_parse(int argc, char **argv, struct cdi_remove_args *a)
{
	static const struct option opts[] = {
		{ "id", required_argument, NULL, OPT_ID },
		CDI_COMMON_OPTS,
		CLI_COMMON_OPTS,
		{ 0 }
	};
	struct cli_opts o = CLI_OPTS("cdi remove", remove_synopsis, remove_help, opts, argc, argv,
			      &a->json);
	int c, r;

	while ((c = cli_next_opt(&o)) > 0) {
		r = common_opt(&o, c, &a->opts, &a->id);
		if (r == EXIT_USAGE)
			return EXIT_USAGE;
	}
	return cli_no_args_need(&o, c, a->id, "missing --id");
}

static int cdi_remove(struct cli *cli, int argc, char **argv)
{
	struct cdi_remove_args a = { .json = cli->json };
	int r = cdi_remove_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_cdi_remove(cli->ctx, a.id, &a.opts) < 0)
		return cli_lib_fail(cli);
	print_done("id", a.id, "removed", "removed CDI spec %s\n");
	return EXIT_OK;
}

int cdi_list_parse(int argc, char **argv, struct cdi_list_args *a)
{
	static const struct option opts[] = { CDI_COMMON_OPTS, CLI_COMMON_OPTS, { 0 } };
	struct cli_opts o = CLI_OPTS("cdi list", list_synopsis, list_help, opts, argc, argv,
			      &a->json);
	const char *unused = NULL;
	int c;

	while ((c = cli_next_opt(&o)) > 0) {
		if (common_opt(&o, c, &a->opts, &unused) == EXIT_USAGE)
			return EXIT_USAGE;
	}
	return cli_no_args(&o, c);
}

static int cdi_list(struct cli *cli, int argc, char **argv)
{
	struct cdi_list_args a = { .json = cli->json };
	struct imexctl_cdi_entry *v = NULL;
	struct json_object *spec, *sum, *ver, *devs;
	struct table *t = NULL;
	char ndev[16];
	size_t i, n = 0;
	int r = cdi_list_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_cdi_list(cli->ctx, &a.opts, &v, &n) < 0)
		return cli_lib_fail(cli);
	print_open_array(NULL);
	if (!print_is_json() && n)
		t = table_new(4, "ID", "CDIVERSION", "DEVICES", "PATH");
	for (i = 0; i < n; i++) {
		spec = json_object_from_file(v[i].path);
		sum = spec_summary(v[i].id, v[i].path, spec);
		if (!spec)
			json_object_object_add(sum, "error", json_object_new_string("not valid JSON"));
		ver = devs = NULL;
		json_object_object_get_ex(sum, "cdiVersion", &ver);
		json_object_object_get_ex(sum, "devices", &devs);
		snprintf(ndev, sizeof(ndev), "%zu", json_object_array_length(devs));
		table_add(t, v[i].id, ver ? json_object_get_string(ver) : "invalid",
			  spec ? ndev : "-", v[i].path);
		print_json(NULL, sum);
		json_object_put(spec);
	}
	print_close_array();
	if (t)
		table_print(t);
	else if (!print_is_json())
		printf("no CDI specs from imexctl in %s\n", a.opts.dir ? a.opts.dir : IMEXCTL_CDI_DIR);
	table_free(t);
	imexctl_cdi_list_free(v, n);
	return EXIT_OK;
}

static const struct cli_cmd verbs[] = {
	{ "generate", cdi_generate, gen_synopsis, "write a CDI spec for a domain's channels" },
	{ "remove", cdi_remove, remove_synopsis, "remove a CDI spec written by generate" },
	{ "list", cdi_list, list_synopsis, "list the CDI specs written by generate" },
};

int cmd_cdi(struct cli *cli, int argc, char **argv)
{
	return cli_dispatch(cli, "cdi", verbs, sizeof(verbs) / sizeof(verbs[0]), argc, argv);
}
