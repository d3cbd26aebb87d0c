// SPDX-License-Identifier: GPL-2.0-only
/* imexctl module load|unload|status */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "args.h"
#include "print.h"

enum { OPT_MAX_CHANNELS = OPT_FIRST, OPT_FABRIC, OPT_NODE_NAME, OPT_MODULE_PATH };

static const char load_synopsis[] =
	"[--max-channels N] [--fabric UUID:PARTITION] [--node-name NAME] [--module-path FILE]";
static const char load_help[] =
	"Load the imex kernel module (modprobe.d options apply). Loading a module\n"
	"that is already loaded succeeds, unless it was loaded with other values.\n\n"
	"  --max-channels N        channels this node supports (1..1048576; default 2048)\n"
	"  --fabric UUID:PARTITION NVLink cluster UUID and partition (clique) id\n"
	"  --node-name NAME        this node's name in domain member lists\n"
	"                          (default: the host name)\n"
	"  --module-path FILE      insert this imex.ko instead of the installed module\n";

int module_load_parse(int argc, char **argv, struct module_load_args *a)
{
	static const struct option opts[] = {
		{ "max-channels", required_argument, NULL, OPT_MAX_CHANNELS },
		{ "fabric", required_argument, NULL, OPT_FABRIC },
		{ "node-name", required_argument, NULL, OPT_NODE_NAME },
		{ "module-path", required_argument, NULL, OPT_MODULE_PATH },
		CLI_COMMON_OPTS,
		{ 0 }
	};
	struct cli_opts o = CLI_OPTS("module load", load_synopsis, load_help, opts, argc, argv, &a->json);
	const char *why = NULL;
	int c;

	while ((c = cli_next_opt(&o)) > 0) {
		switch (c) {
		case OPT_MAX_CHANNELS:
			if (parse_u32(optarg, 1, IMEXCTL_CHANNELS_MAX, &a->params.max_channels, &why) < 0)
				return cli_bad_value(&o, "--max-channels", optarg, why);
			break;
		case OPT_FABRIC:
			if (parse_fabric(optarg, a->params.fabric_uuid,
					 &a->params.fabric_partition, &why) < 0)
				return cli_bad_value(&o, "--fabric", optarg, why);
			a->params.has_fabric = true;
			break;
		case OPT_NODE_NAME:
			if (parse_name(optarg, &why) < 0)
				return cli_bad_value(&o, "--node-name", optarg, why);
			a->params.node_name = optarg;
			break;
		case OPT_MODULE_PATH:
			if (!optarg[0])
				return cli_bad_value(&o, "--module-path", optarg, "empty path");
			a->params.path = optarg;
			break;
		}
	}
	return cli_no_args(&o, c);
}

int module_simple_parse(const char *cmd, int argc, char **argv,
			struct module_simple_args *a)
{
	static const struct option opts[] = { CLI_COMMON_OPTS, { 0 } };
	struct cli_opts o = CLI_OPTS(cmd, "", "", opts, argc, argv, &a->json);

	if (!strcmp(cmd, "module unload"))
		o.help = "Unload the imex kernel module. Succeeds if it is not loaded; refused\n"
			 "while a channel device is open.\n";
	else if (!strcmp(cmd, "module status"))
		o.help = "Say whether the imex module is loaded, its reference count, character\n"
			 "device major and parameters.\n";
	else
		o.help = "Show this node's name, UUID, fabric, channel limit, device major, the\n"
			 "attached imexd and the number of domains.\n";
	return cli_no_args(&o, cli_next_opt(&o));
}

/* load and unload say nothing to people; {"loaded": ...} to scripts. */
static void print_loaded(bool loaded)
{
	print_open_object(NULL);
	print_bool(PRINT_JSON, "loaded", NULL, loaded);
	print_close_object();
}

static int module_load(struct cli *cli, int argc, char **argv)
{
	struct module_load_args a = { .json = cli->json };
	int r = module_load_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_module_load(cli->ctx, &a.params) < 0)
		return cli_lib_fail(cli);
	print_loaded(true);
	return EXIT_OK;
}

static int module_unload(struct cli *cli, int argc, char **argv)
{
	struct module_simple_args a = { .json = cli->json };
	int r = module_simple_parse("module unload", argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_module_unload(cli->ctx) < 0)
		return cli_lib_fail(cli);
	print_loaded(false);
	return EXIT_OK;
}

static void status_json(const struct imexctl_module_status *st)
{
	print_open_object(NULL);
	print_bool(PRINT_JSON, "loaded", NULL, st->loaded);
	if (st->loaded) {
		print_string(PRINT_JSON, "state", NULL, st->state);
		if (st->refcount < 0)
			print_null("refcount");
		else
			print_int(PRINT_JSON, "refcount", NULL, st->refcount);
		print_string(PRINT_JSON, "version", NULL, st->version[0] ? st->version : NULL);
		print_string(PRINT_JSON, "srcversion", NULL,
			     st->srcversion[0] ? st->srcversion : NULL);
		print_opt_uint("major", st->has_major, st->major);
		print_open_object("parameters");
		print_opt_uint("max_channels", st->has_max_channels, st->max_channels);
		print_string(PRINT_JSON, "fabric_uuid", NULL,
			     st->fabric_uuid[0] ? st->fabric_uuid : NULL);
		print_opt_uint("fabric_partition", st->fabric_uuid[0] && st->has_fabric_partition,
			       st->fabric_partition);
		print_string(PRINT_JSON, "node_name", NULL, st->node_name[0] ? st->node_name : NULL);
		print_close_object();
	}
	print_close_object();
}

static void status_print(const struct imexctl_module_status *st)
{
	if (!st->loaded) {
		printf("module imex is not loaded (load it with 'imexctl module load')\n");
		return;
	}
	printf("module:            imex (%s", st->state);
	if (st->refcount >= 0)
		printf(", refcount %d", st->refcount);
	printf(")\n");
	if (st->version[0])
		printf("version:           %s\n", st->version);
	if (st->has_major)
		printf("major:             %u\n", st->major);
	if (st->has_max_channels)
		printf("max_channels:      %u\n", st->max_channels);
	if (st->has_fabric_uuid && st->fabric_uuid[0])
		printf("fabric:            %s partition %u\n", st->fabric_uuid,
		       st->has_fabric_partition ? st->fabric_partition : 0);
	else if (st->has_fabric_uuid)
		printf("fabric:            (not set by parameters)\n");
	if (st->has_node_name)
		printf("node_name:         %s\n", st->node_name[0] ? st->node_name : "(host name)");
}

static int module_status(struct cli *cli, int argc, char **argv)
{
	struct module_simple_args a = { .json = cli->json };
	struct imexctl_module_status st;
	int r = module_simple_parse("module status", argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_module_status(cli->ctx, &st) < 0)
		return cli_lib_fail(cli);
	if (print_is_json())
		status_json(&st);
	else
		status_print(&st);
	return EXIT_OK;
}

static const struct cli_cmd verbs[] = {
	{ "load", module_load, load_synopsis, "load the module (idempotent)" },
	{ "unload", module_unload, "", "unload the module (idempotent)" },
	{ "status", module_status, "", "whether it is loaded, and its parameters" },
};

int cmd_module(struct cli *cli, int argc, char **argv)
{
	return cli_dispatch(cli, "module", verbs, sizeof(verbs) / sizeof(verbs[0]), argc, argv);
}
