// SPDX-License-Identifier: GPL-2.0-only
/* imexctl module load|unload|status */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "args.h"

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
	char **pos;
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
	if (c != OPT_END)
		return c == CLI_HELP ? CLI_HELP : EXIT_USAGE;
	if (cli_positional(&o, &pos) > 0)
		return cli_usage_error(o.cmd, o.synopsis, "unexpected argument '%s'", pos[0]);
	return 0;
}

int module_simple_parse(const char *cmd, int argc, char **argv,
			struct module_simple_args *a)
{
	static const struct option opts[] = { CLI_COMMON_OPTS, { 0 } };
	struct cli_opts o = CLI_OPTS(cmd, "", "", opts, argc, argv, &a->json);
	char **pos;
	int c;

	if (!strcmp(cmd, "module unload"))
		o.help = "Unload the imex kernel module. Succeeds if it is not loaded; refused\n"
			 "while a channel device is open.\n";
	else if (!strcmp(cmd, "module status"))
		o.help = "Say whether the imex module is loaded, its reference count, character\n"
			 "device major and parameters.\n";
	else
		o.help = "Show this node's name, UUID, fabric, channel limit, device major, the\n"
			 "attached imexd and the number of domains.\n";
	c = cli_next_opt(&o);
	if (c != OPT_END)
		return c == CLI_HELP ? CLI_HELP : EXIT_USAGE;
	if (cli_positional(&o, &pos) > 0)
		return cli_usage_error(o.cmd, o.synopsis, "unexpected argument '%s'", pos[0]);
	return 0;
}

static int module_load(struct cli *cli, int argc, char **argv)
{
	struct module_load_args a = { .json = cli->json };
	struct json_object *o;
	int r = module_load_parse(argc, argv, &a);

	if (r)
		return r == CLI_HELP ? EXIT_OK : r;
	if (!cli_ctx(cli))
		return EXIT_FAIL;
	if (imexctl_module_load(cli->ctx, &a.params) < 0)
		return cli_lib_fail(cli);
	if (a.json) {
		o = json_object_new_object();
		json_object_object_add(o, "loaded", json_object_new_boolean(1));
		json_print(o);
		json_object_put(o);
	}
	return EXIT_OK;
}

static int module_unload(struct cli *cli, int argc, char **argv)
{
	struct module_simple_args a = { .json = cli->json };
	struct json_object *o;
	int r = module_simple_parse("module unload", argc, argv, &a);

	if (r)
		return r == CLI_HELP ? EXIT_OK : r;
	if (!cli_ctx(cli))
		return EXIT_FAIL;
	if (imexctl_module_unload(cli->ctx) < 0)
		return cli_lib_fail(cli);
	if (a.json) {
		o = json_object_new_object();
		json_object_object_add(o, "loaded", json_object_new_boolean(0));
		json_print(o);
		json_object_put(o);
	}
	return EXIT_OK;
}

static void status_json(const struct imexctl_module_status *st)
{
	struct json_object *o = json_object_new_object(), *p;

	json_object_object_add(o, "loaded", json_object_new_boolean(st->loaded));
	if (st->loaded) {
		json_object_object_add(o, "state", json_object_new_string(st->state));
		json_object_object_add(o, "refcount", st->refcount < 0 ? NULL :
				       json_object_new_int(st->refcount));
		json_object_object_add(o, "version", st->version[0] ?
				       json_object_new_string(st->version) : NULL);
		json_object_object_add(o, "srcversion", st->srcversion[0] ?
				       json_object_new_string(st->srcversion) : NULL);
		json_object_object_add(o, "major", st->has_major ?
				       json_object_new_int64(st->major) : NULL);
		p = json_object_new_object();
		json_object_object_add(p, "max_channels", st->has_max_channels ?
				       json_object_new_int64(st->max_channels) : NULL);
		json_object_object_add(p, "fabric_uuid", st->fabric_uuid[0] ?
				       json_object_new_string(st->fabric_uuid) : NULL);
		json_object_object_add(p, "fabric_partition", st->fabric_uuid[0] && st->has_fabric_partition ?
				       json_object_new_int64(st->fabric_partition) : NULL);
		json_object_object_add(p, "node_name", st->node_name[0] ?
				       json_object_new_string(st->node_name) : NULL);
		json_object_object_add(o, "parameters", p);
	}
	json_print(o);
	json_object_put(o);
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

	if (r)
		return r == CLI_HELP ? EXIT_OK : r;
	if (!cli_ctx(cli))
		return EXIT_FAIL;
	if (imexctl_module_status(cli->ctx, &st) < 0)
		return cli_lib_fail(cli);
	if (a.json)
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
