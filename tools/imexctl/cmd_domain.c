// SPDX-License-Identifier: GPL-2.0-only
/* imexctl domain create|delete|list|show|wait|evict|replace */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "args.h"
#include "print.h"

enum {
	OPT_NODES = OPT_FIRST, OPT_CHANNELS, OPT_CHANNEL, OPT_OWNER, OPT_MODE,
	OPT_UUID, OPT_TIMEOUT, OPT_NO_WAIT, OPT_STATE,
};

static const char create_synopsis[] =
	"NAME --nodes NAME[=ADDR][,...] [--channels N | --channel ID...] [--owner UID:GID] "
	"[--mode MODE] [--uuid UUID] [--timeout SEC] [--no-wait]";
static const char create_help[] =
	"Create a domain on every listed node (this node among them) through the\n"
	"imexd daemons, then wait until every member sees every other (READY).\n\n"
	"  --nodes NAME[=ADDR],...  members: names from imexd's NODES_FILE; an ADDR\n"
	"                           (host[:port]) must match the file's; repeatable\n"
	"  --channels N             grant N channels chosen by the daemons (default 0)\n"
	"  --channel ID             grant channel ID; repeatable (not with --channels)\n"
	"  --owner UID:GID          owner of the channel devices (default 0:0)\n"
	"  --mode MODE              octal mode of the channel devices (default 0600)\n"
	"  --uuid UUID              the domain's UUID (default: chosen by imexd)\n"
	"  --timeout SEC            give up after SEC seconds in all (default 125)\n"
	"  --no-wait                return once created, without waiting for READY\n";
static const char name_synopsis[] = "NAME [--timeout SEC]";
static const char delete_help[] =
	"Delete a domain on every member through the imexd daemons; its channels\n"
	"are revoked.\n\n"
	"  --timeout SEC  give up after SEC seconds (default 125)\n";
static const char show_help[] =
	"Show a domain: its state, members with their state as this node sees them,\n"
	"the From\\To connectivity matrix built from every member's view, and its\n"
	"channels.\n";
static const char list_help[] = "List the domains on this node.\n";
static const char wait_synopsis[] = "NAME [--state ready|degraded] [--timeout SEC]";
static const char wait_help[] =
	"Wait until a domain is READY (--state ready, the default) or at least\n"
	"DEGRADED (--state degraded: usable, some member not connected). The domain\n"
	"need not exist yet. No polling: the wait follows the module's events.\n\n"
	"  --timeout SEC  give up after SEC seconds (default 120; 0 checks once)\n";
static const char evict_synopsis[] = "NAME MEMBER [--timeout SEC]";
static const char evict_help[] =
	"Remove member MEMBER (a node that is gone for good) from a domain on the\n"
	"remaining members, so that changes to the domain can proceed.\n\n"
	"  --timeout SEC  give up after SEC seconds (default 125)\n";
static const char replace_synopsis[] = "NAME OLD NEW [--timeout SEC]";
static const char replace_help[] =
	"Replace member OLD of a domain (a lost node) by NEW, a node of the group\n"
	"that is not a member, in one change: OLD leaves, NEW is granted the\n"
	"domain's channels, the other members keep theirs, their open file\n"
	"descriptors and the imports between them. Then wait until the domain is\n"
	"READY with NEW connected. Refused, with nothing changed, when NEW is in\n"
	"another NVLink partition, holds one of the domain's channels for another\n"
	"domain, or is unreachable. Run it on a member other than OLD.\n\n"
	"  --timeout SEC  give up after SEC seconds in all (default 125)\n";

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int domain_create_parse(int argc, char **argv, struct domain_create_args *a)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, OPT_NODES },
		{ "channels", required_argument, NULL, OPT_CHANNELS },
		{ "channel", required_argument, NULL, OPT_CHANNEL },
		{ "owner", required_argument, NULL, OPT_OWNER },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "uuid", required_argument, NULL, OPT_UUID },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "no-wait", no_argument, NULL, OPT_NO_WAIT },
		CLI_COMMON_OPTS,
		{ 0 }
	};
	struct cli_opts o = CLI_OPTS("domain create", create_synopsis, create_help, opts, argc,
			      argv, &a->json);
	struct imexctl_domain_spec *s = &a->spec;
	const char *why = NULL;
	bool have_count = false;
	int c, r;

	a->timeout_ms = CLI_REQUEST_TIMEOUT_S * 1000;
	while ((c = cli_next_opt(&o)) > 0) {
		switch (c) {
		case OPT_NODES:
			if (parse_nodes(optarg, &a->nodes, &why) < 0)
				return cli_bad_value(&o, "--nodes", optarg, why);
			break;
		case OPT_CHANNELS:
			if (parse_u32(optarg, 0, IMEXCTL_CHANNELS_PER_REQUEST,
				      &s->channel_count, &why) < 0)
				return cli_bad_value(&o, "--channels", optarg, why);
			have_count = true;
			break;
		case OPT_CHANNEL:
			if (cli_opt_channel(&o, &a->ids))
				return EXIT_USAGE;
			break;
		case OPT_OWNER:
			if (parse_owner(optarg, &s->uid, &s->gid, &why) < 0)
				return cli_bad_value(&o, "--owner", optarg, why);
			s->set_owner = true;
			break;
		case OPT_MODE:
			if (parse_mode(optarg, &s->mode, &why) < 0)
				return cli_bad_value(&o, "--mode", optarg, why);
			s->set_mode = true;
			break;
		case OPT_UUID:
			if (parse_uuid(optarg, a->uuid, &why) < 0)
				return cli_bad_value(&o, "--uuid", optarg, why);
			s->uuid = a->uuid;
			break;
		case OPT_TIMEOUT:
			if (parse_timeout(optarg, 1, &a->timeout_ms, &why) < 0)
				return cli_bad_value(&o, "--timeout", optarg, why);
			break;
		case OPT_NO_WAIT:
			a->no_wait = true;
			break;
		}
	}
	r = cli_one_name(&o, c, &s->name, "domain name", "missing domain NAME");
	if (r)
		return r;
	if (!a->nodes.n)
		return cli_usage_error(o.cmd, o.synopsis, "missing --nodes");
	if (have_count && a->ids.n)
		return cli_usage_error(o.cmd, o.synopsis,
				       "give either --channels or --channel, not both");
	s->members = a->nodes.v;
	s->n_members = a->nodes.n;
	s->channel_ids = a->ids.v;
	s->n_channel_ids = a->ids.n;
	return 0;
}

void domain_create_args_free(struct domain_create_args *a)
{
	cli_nodes_free(&a->nodes);
	free(a->ids.v);
	a->ids.v = NULL;
	a->ids.n = 0;
}

/* The domain as it is now, printed or as JSON; @verb for people. */
static int report_domain(struct cli *cli, const char *name, const char *verb)
{
	struct imexctl_domain *d = NULL;
	char uuid[IMEXCTL_UUID_STR_LEN], *ids;

	if (imexctl_domain_get(cli->ctx, name, &d) < 0)
		return cli_lib_fail(cli);
	if (print_is_json()) {
		print_json(NULL, domain_json(d, true));
	} else {
		imexctl_uuid_format(d->uuid, uuid);
		ids = format_ids(d->channel_ids, d->n_channel_ids);
		printf("%s domain %s (uuid %s): %s, %zu member(s), channels: %s\n", verb,
		       d->name, uuid, imexctl_domain_state_name(d->state), d->n_members,
		       ids && ids[0] ? ids : "none");
		free(ids);
	}
	imexctl_domain_free(d);
	return EXIT_OK;
}

static int domain_create(struct cli *cli, int argc, char **argv)
{
	struct domain_create_args a = { .json = cli->json };
	int64_t start = now_ms(), left;
	int r = domain_create_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		goto out;
	if (imexctl_domain_create(cli->ctx, &a.spec, a.timeout_ms) < 0) {
		r = cli_lib_fail(cli);
		goto out;
	}
	if (!a.no_wait) {
		left = a.timeout_ms - (now_ms() - start);
		if (imexctl_domain_wait(cli->ctx, a.spec.name, IMEXCTL_DOMAIN_READY,
					left > 0 ? (int)left : 0, NULL) < 0) {
			r = cli_fail(cli, "created domain %s, but %s", a.spec.name,
				     imexctl_errmsg(cli->ctx));
			goto out;
		}
	}
	r = report_domain(cli, a.spec.name, "created");
out:
	domain_create_args_free(&a);
	return r;
}

static int name_parse(const char *cmd, const char *synopsis, const char *help,
		      bool timeout, int argc, char **argv, struct domain_name_args *a)
{
	static const struct option with_timeout[] = {
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		CLI_COMMON_OPTS,
		{ 0 }
	};
	static const struct option plain[] = { CLI_COMMON_OPTS, { 0 } };
	struct cli_opts o = CLI_OPTS(cmd, synopsis, help, timeout ? with_timeout : plain, argc,
			      argv, &a->json);
	const char *why = NULL;
	int c;

	a->timeout_ms = CLI_REQUEST_TIMEOUT_S * 1000;
	while ((c = cli_next_opt(&o)) > 0) {
		if (c == OPT_TIMEOUT && parse_timeout(optarg, 1, &a->timeout_ms, &why) < 0)
			return cli_bad_value(&o, "--timeout", optarg, why);
	}
	return cli_one_name(&o, c, &a->name, "domain name", "missing domain NAME");
}

int domain_delete_parse(int argc, char **argv, struct domain_name_args *a)
{
	return name_parse("domain delete", name_synopsis, delete_help, true, argc, argv, a);
}

int domain_show_parse(int argc, char **argv, struct domain_name_args *a)
{
	return name_parse("domain show", "NAME", show_help, false, argc, argv, a);
}

static int domain_delete(struct cli *cli, int argc, char **argv)
{
	struct domain_name_args a = { .json = cli->json };
	int r = domain_delete_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_domain_delete(cli->ctx, a.name, a.timeout_ms) < 0)
		return cli_lib_fail(cli);
	print_done("name", a.name, "deleted", "deleted domain %s\n");
	return EXIT_OK;
}

static int domain_show(struct cli *cli, int argc, char **argv)
{
	struct domain_name_args a = { .json = cli->json };
	struct imexctl_domain *d = NULL;
	int r = domain_show_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_domain_get(cli->ctx, a.name, &d) < 0)
		return cli_lib_fail(cli);
	if (print_is_json())
		print_json(NULL, domain_json(d, true));
	else
		domain_print(d);
	imexctl_domain_free(d);
	return EXIT_OK;
}

int domain_list_parse(int argc, char **argv, struct domain_list_args *a)
{
	static const struct option opts[] = { CLI_COMMON_OPTS, { 0 } };
	struct cli_opts o = CLI_OPTS("domain list", "", list_help, opts, argc, argv, &a->json);

	return cli_no_args(&o, cli_next_opt(&o));
}

static int domain_list(struct cli *cli, int argc, char **argv)
{
	struct domain_list_args a = { .json = cli->json };
	struct imexctl_domain *v = NULL;
	struct table *t;
	char uuid[IMEXCTL_UUID_STR_LEN], members[16], channels[16];
	size_t i, n = 0;
	int r = domain_list_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_domain_list(cli->ctx, &v, &n) < 0)
		return cli_lib_fail(cli);
	if (print_is_json()) {
		print_open_array(NULL);
		for (i = 0; i < n; i++)
			print_json(NULL, domain_json(&v[i], false));
		print_close_array();
	} else if (!n) {
		printf("no domains on this node\n");
	} else {
		t = table_new(5, "NAME", "STATE", "MEMBERS", "CHANNELS", "UUID");
		for (i = 0; i < n; i++) {
			imexctl_uuid_format(v[i].uuid, uuid);
			snprintf(members, sizeof(members), "%u", v[i].member_count);
			snprintf(channels, sizeof(channels), "%u", v[i].channel_count);
			table_add(t, v[i].name, imexctl_domain_state_name(v[i].state),
				  members, channels, uuid);
		}
		table_print(t);
		table_free(t);
	}
	imexctl_domain_list_free(v, n);
	return EXIT_OK;
}

int domain_wait_parse(int argc, char **argv, struct domain_wait_args *a)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, OPT_STATE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		CLI_COMMON_OPTS,
		{ 0 }
	};
	struct cli_opts o = CLI_OPTS("domain wait", wait_synopsis, wait_help, opts, argc, argv,
			      &a->json);
	const char *why = NULL;
	int c;

	a->state = IMEXCTL_DOMAIN_READY;
	a->timeout_ms = CLI_WAIT_TIMEOUT_S * 1000;
	while ((c = cli_next_opt(&o)) > 0) {
		if (c == OPT_STATE && parse_state(optarg, &a->state, &why) < 0)
			return cli_bad_value(&o, "--state", optarg, why);
		if (c == OPT_TIMEOUT && parse_timeout(optarg, 0, &a->timeout_ms, &why) < 0)
			return cli_bad_value(&o, "--timeout", optarg, why);
	}
	return cli_one_name(&o, c, &a->name, "domain name", "missing domain NAME");
}

static int domain_wait(struct cli *cli, int argc, char **argv)
{
	struct domain_wait_args a = { .json = cli->json };
	enum imexctl_domain_state st = IMEXCTL_DOMAIN_READY;
	int r = domain_wait_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_domain_wait(cli->ctx, a.name, a.state, a.timeout_ms, &st) < 0)
		return cli_lib_fail(cli);
	print_open_object(NULL);
	print_string(PRINT_ANY, "name", "domain %s", a.name);
	print_string(PRINT_ANY, "state", " is %s\n", imexctl_domain_state_name(st));
	print_close_object();
	return EXIT_OK;
}

/* NAME and @nnames - 1 member names: evict and replace. */
static int member_change_parse(struct cli_opts *o, int *timeout_ms, int nnames,
			       const char *const *missing, const char *const *what,
			       const char **names)
{
	const char *why = NULL;
	char **pos;
	int i, n, r = cli_timeout_parse(o, timeout_ms, &pos, &n);

	if (r)
		return r;
	if (n < nnames)
		return cli_usage_error(o->cmd, o->synopsis, "missing %s", missing[n]);
	if (n > nnames)
		return cli_usage_error(o->cmd, o->synopsis, "unexpected argument '%s'",
				       pos[nnames]);
	for (i = 0; i < nnames; i++) {
		if (parse_name(pos[i], &why) < 0)
			return cli_bad_value(o, what[i], pos[i], why);
		names[i] = pos[i];
	}
	return 0;
}

int domain_evict_parse(int argc, char **argv, struct domain_evict_args *a)
{
	static const char *const missing[] = { "domain NAME", "MEMBER" };
	static const char *const what[] = { "domain name", "member name" };
	struct cli_opts o = CLI_OPTS("domain evict", evict_synopsis, evict_help,
				     cli_timeout_longopts, argc, argv, &a->json);
	const char *names[2] = { "", "" };
	int r = member_change_parse(&o, &a->timeout_ms, 2, missing, what, names);

	if (r)
		return r;
	a->name = names[0];
	a->member = names[1];
	return 0;
}

static int domain_evict(struct cli *cli, int argc, char **argv)
{
	struct domain_evict_args a = { .json = cli->json };
	int r = domain_evict_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_member_evict(cli->ctx, a.name, a.member, a.timeout_ms) < 0)
		return cli_lib_fail(cli);
	if (!print_is_json())
		printf("evicted member %s from domain %s\n", a.member, a.name);
	return print_is_json() ? report_domain(cli, a.name, "") : EXIT_OK;
}

int domain_replace_parse(int argc, char **argv, struct domain_replace_args *a)
{
	static const char *const missing[] = { "domain NAME", "OLD member", "NEW member" };
	static const char *const what[] = { "domain name", "member name", "new member name" };
	struct cli_opts o = CLI_OPTS("domain replace", replace_synopsis, replace_help,
				     cli_timeout_longopts, argc, argv, &a->json);
	const char *names[3] = { "", "", "" };
	int r = member_change_parse(&o, &a->timeout_ms, 3, missing, what, names);

	if (r)
		return r;
	if (!strcmp(names[1], names[2]))
		return cli_usage_error(o.cmd, o.synopsis,
				       "OLD and NEW are both '%s': NEW is the node that takes OLD's place",
				       names[1]);
	a->name = names[0];
	a->member = names[1];
	a->with = names[2];
	return 0;
}

static int domain_replace(struct cli *cli, int argc, char **argv)
{
	struct domain_replace_args a = { .json = cli->json };
	int r = domain_replace_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_member_replace(cli->ctx, a.name, a.member, a.with, a.timeout_ms) < 0)
		return cli_lib_fail(cli);
	if (!print_is_json())
		printf("replaced member %s with %s in domain %s\n", a.member, a.with, a.name);
	return report_domain(cli, a.name, "ready:");
}

static const struct cli_cmd verbs[] = {
	{ "create", domain_create, create_synopsis, "create a domain and wait until it is ready" },
	{ "delete", domain_delete, name_synopsis, "delete a domain on every member" },
	{ "list", domain_list, "", "list the domains on this node" },
	{ "show", domain_show, "NAME", "members, their states and the connectivity matrix" },
	{ "wait", domain_wait, wait_synopsis, "wait until a domain is ready (or degraded)" },
	{ "evict", domain_evict, evict_synopsis, "remove a lost member from a domain" },
	{ "replace", domain_replace, replace_synopsis,
	  "swap a lost member for a spare, the others keeping their channels" },
};

int cmd_domain(struct cli *cli, int argc, char **argv)
{
	return cli_dispatch(cli, "domain", verbs, sizeof(verbs) / sizeof(verbs[0]), argc, argv);
}
