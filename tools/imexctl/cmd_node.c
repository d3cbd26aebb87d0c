// SPDX-License-Identifier: GPL-2.0-only
/* imexctl node show|set-fabric|set-name|join|leave (list: cmd_node_list.c) */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "args.h"
#include "print.h"
#include "node_list.h"
#include "node_status.h"

static const char fabric_synopsis[] = "UUID PARTITION";
static const char fabric_help[] =
	"Set this node's NVLink fabric identity: the cluster UUID and partition\n"
	"(clique) id that the fabric manager reports for its GPUs. Refused while\n"
	"any domain exists on the node.\n";
static const char name_synopsis[] = "NAME";
static const char name_help[] =
	"Set the name this node has in domain member lists. Refused while any\n"
	"domain exists on the node.\n";

static const char join_synopsis[] = "NAME[=ADDR[:PORT]] [--timeout SEC]";
static const char join_help[] =
	"Add node NAME to this NVLink domain's group, so domains may name it. Run\n"
	"it on a node of the group; imexd must run on NAME, with the same cluster\n"
	"UUID and partition (a node of another NVLink domain is refused). ADDR is\n"
	"where the daemons reach it (default: the name, imexd's port).\n\n"
	"  --timeout SEC  give up after SEC seconds (default 125)\n";
static const char leave_synopsis[] = "NAME [--timeout SEC]";
static const char leave_help[] =
	"Remove node NAME from this NVLink domain's group. Refused while a domain\n"
	"names it: delete the domain, or evict the node from it, first.\n\n"
	"  --timeout SEC  give up after SEC seconds (default 125)\n";

/* join: NAME[=ADDR]; leave: NAME. */
static int node_member_parse(const char *cmd, const char *synopsis, const char *help,
			     bool join, int argc, char **argv, struct node_member_args *a)
{
	struct cli_opts o = CLI_OPTS(cmd, synopsis, help, cli_timeout_longopts, argc, argv,
				     &a->json);
	const char *why = NULL;
	char *eq;
	int r = cli_timeout_opts(&o, &a->timeout_ms);

	r = cli_one_arg(&o, r, &a->name, "missing node NAME");
	if (r)
		return r;
	eq = join ? strchr(a->name, '=') : NULL;
	if (eq) {
		*eq = '\0';
		a->addr = eq + 1;
		if (parse_addr(a->addr, &why) < 0)
			return cli_bad_value(&o, "ADDR", a->addr, why);
	}
	if (parse_name(a->name, &why) < 0)
		return cli_bad_value(&o, "node name", a->name, why);
	return 0;
}

int node_join_parse(int argc, char **argv, struct node_member_args *a)
{
	return node_member_parse("node join", join_synopsis, join_help, true, argc, argv, a);
}

int node_leave_parse(int argc, char **argv, struct node_member_args *a)
{
	return node_member_parse("node leave", leave_synopsis, leave_help, false, argc, argv,
				 a);
}

int node_show_parse(int argc, char **argv, struct module_simple_args *a)
{
	return module_simple_parse("node show", argc, argv, a);
}

int node_set_fabric_parse(int argc, char **argv, struct node_set_fabric_args *a)
{
	static const struct option opts[] = { CLI_COMMON_OPTS, { 0 } };
	struct cli_opts o = CLI_OPTS("node set-fabric", fabric_synopsis, fabric_help, opts,
			      argc, argv, &a->json);
	const char *why = NULL;
	char **pos;
	int n, r = cli_opts_end(cli_next_opt(&o));

	if (r)
		return r;
	n = cli_positional(&o, &pos);
	if (n < 2)
		return cli_usage_error(o.cmd, o.synopsis, "missing %s", n ? "PARTITION" : "UUID");
	if (n > 2)
		return cli_usage_error(o.cmd, o.synopsis, "unexpected argument '%s'", pos[2]);
	if (parse_uuid(pos[0], a->uuid, &why) < 0)
		return cli_bad_value(&o, "UUID", pos[0], why);
	if (imexctl_uuid_is_null(a->uuid))
		return cli_bad_value(&o, "UUID", pos[0],
				     "the all-zero cluster UUID means no NVLink fabric");
	if (parse_u32(pos[1], 0, UINT32_MAX, &a->partition, &why) < 0)
		return cli_bad_value(&o, "PARTITION", pos[1], why);
	return 0;
}

int node_set_name_parse(int argc, char **argv, struct node_set_name_args *a)
{
	static const struct option opts[] = { CLI_COMMON_OPTS, { 0 } };
	struct cli_opts o = CLI_OPTS("node set-name", name_synopsis, name_help, opts, argc, argv,
			      &a->json);

	return cli_one_name(&o, cli_next_opt(&o), &a->name, "NAME", "missing NAME");
}

static void node_json(const struct imexctl_node *n)
{
	print_open_object(NULL);
	print_string(PRINT_JSON, "name", NULL, n->name[0] ? n->name : NULL);
	print_json("uuid", json_uuid(n->uuid));
	print_json("fabric", json_fabric(n->has_fabric, n->fabric_uuid, n->fabric_partition));
	print_uint(PRINT_JSON, "max_channels", NULL, n->max_channels);
	print_uint(PRINT_JSON, "major", NULL, n->major);
	print_opt_uint("manager_pid", n->manager_pid, n->manager_pid);
	print_uint(PRINT_JSON, "domain_count", NULL, n->domain_count);
	print_uint(PRINT_JSON, "generation", NULL, n->generation);
	print_close_object();
}

static void node_print(const struct imexctl_node *n)
{
	char uuid[IMEXCTL_UUID_STR_LEN];

	printf("name:          %s\n", n->name[0] ? n->name :
	       "(not set: imexd sets it when it attaches, or 'imexctl node set-name NAME')");
	imexctl_uuid_format(n->uuid, uuid);
	printf("uuid:          %s\n", imexctl_uuid_is_null(n->uuid) ?
	       "(not set: imexd sets it when it attaches)" : uuid);
	if (n->has_fabric) {
		imexctl_uuid_format(n->fabric_uuid, uuid);
		printf("fabric:        %s partition %u\n", uuid, n->fabric_partition);
	} else {
		printf("fabric:        (not set: 'imexctl node set-fabric UUID PARTITION')\n");
	}
	printf("max channels:  %u\n", n->max_channels);
	printf("major:         %u\n", n->major);
	if (n->manager_pid)
		printf("imexd:         attached, pid %u\n", n->manager_pid);
	else
		printf("imexd:         not attached (start it with 'systemctl start imexd')\n");
	printf("domains:       %u\n", n->domain_count);
	printf("generation:    %u\n", n->generation);
}

static int show_node(struct cli *cli)
{
	struct imexctl_node n;

	if (imexctl_node_get(cli->ctx, &n) < 0)
		return cli_lib_fail(cli);
	if (print_is_json())
		node_json(&n);
	else
		node_print(&n);
	return EXIT_OK;
}

static int node_show(struct cli *cli, int argc, char **argv)
{
	struct module_simple_args a = { .json = cli->json };
	int r = node_show_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	return show_node(cli);
}

static int node_set_fabric(struct cli *cli, int argc, char **argv)
{
	struct node_set_fabric_args a = { .json = cli->json };
	int r = node_set_fabric_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_node_set_fabric(cli->ctx, a.uuid, a.partition) < 0)
		return cli_lib_fail(cli);
	return print_is_json() ? show_node(cli) : EXIT_OK;
}

static int node_set_name(struct cli *cli, int argc, char **argv)
{
	struct node_set_name_args a = { .json = cli->json };
	int r = node_set_name_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_node_set_name(cli->ctx, a.name) < 0)
		return cli_lib_fail(cli);
	return print_is_json() ? show_node(cli) : EXIT_OK;
}

/* {"node", ["addr",] "member"}, or "node NAME joined/left ...". */
static void print_member(const struct node_member_args *a, bool member)
{
	print_open_object(NULL);
	print_string(PRINT_ANY, "node", "node %s ", a->name);
	if (member)
		print_string(PRINT_JSON, "addr", NULL, a->addr);
	print_bool(PRINT_JSON, "member", NULL, member);
	print_string(PRINT_TEXT, NULL, "%s this NVLink domain's group\n",
		     member ? "joined" : "left");
	print_close_object();
}

static int node_join(struct cli *cli, int argc, char **argv)
{
	struct node_member_args a = { .json = cli->json };
	int r = node_join_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_node_join(cli->ctx, a.name, a.addr, a.timeout_ms) < 0)
		return cli_lib_fail(cli);
	print_member(&a, true);
	return EXIT_OK;
}

static int node_leave(struct cli *cli, int argc, char **argv)
{
	struct node_member_args a = { .json = cli->json };
	int r = node_leave_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_node_leave(cli->ctx, a.name, a.timeout_ms) < 0)
		return cli_lib_fail(cli);
	print_member(&a, false);
	return EXIT_OK;
}

static const struct cli_cmd verbs[] = {
	{ "show", node_show, "", "this node's identity, fabric and daemon" },
	{ "set-fabric", node_set_fabric, fabric_synopsis, "set the NVLink cluster UUID and partition" },
	{ "set-name", node_set_name, name_synopsis, "set this node's name in member lists" },
	{ "join", node_join, join_synopsis, "add a node to this NVLink domain's group" },
	{ "leave", node_leave, leave_synopsis, "remove a node from the group" },
	{ "list", node_list, node_list_synopsis, "the group's nodes, as this node sees them" },
	{ "status", node_status, node_status_synopsis,
	  "probe: exit 0 ready, 1 degraded, 3 not running, 4 unknown" },
};

int cmd_node(struct cli *cli, int argc, char **argv)
{
	return cli_dispatch(cli, "node", verbs, sizeof(verbs) / sizeof(verbs[0]), argc, argv);
}
