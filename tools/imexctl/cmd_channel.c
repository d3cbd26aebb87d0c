// SPDX-License-Identifier: GPL-2.0-only
/* imexctl channel list|set|alloc|free */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "args.h"
#include "print.h"

enum { OPT_DOMAIN = OPT_FIRST, OPT_OWNER, OPT_MODE, OPT_COUNT, OPT_CHANNEL, OPT_TIMEOUT };

static const char list_synopsis[] = "[--domain NAME]";
static const char list_help[] =
	"List the channels granted on this node, with their domain, state, owner,\n"
	"mode and how many times each device is open.\n\n"
	"  --domain NAME  only this domain's channels\n";
static const char set_synopsis[] = "DOMAIN/ID [--owner UID:GID] [--mode MODE]";
static const char set_help[] =
	"Change the owner or mode of a channel's device node on this node. Open\n"
	"file descriptors stay open.\n\n"
	"  --owner UID:GID  new owner (numeric)\n"
	"  --mode MODE      new octal mode, at most 0777\n";
static const char alloc_synopsis[] =
	"--domain NAME [--count N | --channel ID...] [--timeout SEC]";
static const char alloc_help[] =
	"Grant more channels to a domain on every member, through the imexd daemons,\n"
	"and print the ids granted.\n\n"
	"  --domain NAME  the domain\n"
	"  --count N      how many channels, chosen by the daemons (default 1)\n"
	"  --channel ID   grant exactly this channel; repeatable (not with --count)\n"
	"  --timeout SEC  give up after SEC seconds (default 125)\n";
static const char free_synopsis[] = "DOMAIN/ID... [--timeout SEC]";
static const char free_help[] =
	"Revoke channels from a domain on every member, through the imexd daemons.\n"
	"Open file descriptors of a revoked channel stop working.\n\n"
	"  --timeout SEC  give up after SEC seconds (default 125)\n";

static const struct option domain_opt = { "domain", required_argument, NULL, OPT_FIRST };

int channel_list_parse(int argc, char **argv, struct channel_list_args *a)
{
	return cli_one_opt_parse("channel list", list_synopsis, list_help, argc, argv,
				 &a->json, &domain_opt, parse_name, &a->domain);
}

static struct json_object *channel_json(const struct imexctl_channel *ch)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_int64(ch->id));
	json_object_object_add(o, "domain", json_object_new_string(ch->domain));
	json_object_object_add(o, "domain_uuid", json_uuid(ch->domain_uuid));
	json_object_object_add(o, "state",
			       json_object_new_string(imexctl_channel_state_name(ch->state)));
	json_object_object_add(o, "uid", json_object_new_int64(ch->uid));
	json_object_object_add(o, "gid", json_object_new_int64(ch->gid));
	json_object_object_add(o, "mode", json_mode(ch->mode));
	json_object_object_add(o, "open_count", json_object_new_int64(ch->open_count));
	json_object_object_add(o, "minor", json_object_new_int64(ch->minor));
	return o;
}

static int channel_list(struct cli *cli, int argc, char **argv)
{
	struct channel_list_args a = { .json = cli->json };
	struct imexctl_channel *v = NULL;
	struct table *t;
	char id[16], owner[32], mode[8], open[16], minor[16];
	size_t i, n = 0;
	int r = channel_list_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_channel_list(cli->ctx, a.domain, &v, &n) < 0)
		return cli_lib_fail(cli);
	if (print_is_json()) {
		print_open_array(NULL);
		for (i = 0; i < n; i++)
			print_json(NULL, channel_json(&v[i]));
		print_close_array();
	} else if (!n) {
		printf("no channels%s%s on this node\n", a.domain ? " in domain " : "",
		       a.domain ? a.domain : "");
	} else {
		t = table_new(7, "ID", "DOMAIN", "STATE", "OWNER", "MODE", "OPEN", "MINOR");
		for (i = 0; i < n; i++) {
			snprintf(id, sizeof(id), "%u", v[i].id);
			snprintf(owner, sizeof(owner), "%u:%u", v[i].uid, v[i].gid);
			snprintf(mode, sizeof(mode), "%04o", v[i].mode & 07777);
			snprintf(open, sizeof(open), "%u", v[i].open_count);
			snprintf(minor, sizeof(minor), "%u", v[i].minor);
			table_add(t, id, v[i].domain, imexctl_channel_state_name(v[i].state),
				  owner, mode, open, minor);
		}
		table_print(t);
		table_free(t);
	}
	free(v);
	return EXIT_OK;
}

int channel_set_parse(int argc, char **argv, struct channel_set_args *a)
{
	static const struct option opts[] = {
		{ "owner", required_argument, NULL, OPT_OWNER },
		{ "mode", required_argument, NULL, OPT_MODE },
		CLI_COMMON_OPTS,
		{ 0 }
	};
	struct cli_opts o = CLI_OPTS("channel set", set_synopsis, set_help, opts, argc, argv,
			      &a->json);
	struct imexctl_channel_change *ch = &a->change;
	const char *why = NULL;
	char *ref = NULL;
	int c, r;

	while ((c = cli_next_opt(&o)) > 0) {
		switch (c) {
		case OPT_OWNER:
			if (parse_owner(optarg, &ch->uid, &ch->gid, &why) < 0)
				return cli_bad_value(&o, "--owner", optarg, why);
			ch->set_owner = true;
			break;
		case OPT_MODE:
			if (parse_mode(optarg, &ch->mode, &why) < 0)
				return cli_bad_value(&o, "--mode", optarg, why);
			ch->set_mode = true;
			break;
		}
	}
	r = cli_one_arg(&o, c, &ref, "missing DOMAIN/ID");
	if (r)
		return r;
	if (parse_channel_ref(ref, a->domain, sizeof(a->domain), &a->id, &why) < 0)
		return cli_bad_value(&o, "channel", ref, why);
	if (!ch->set_owner && !ch->set_mode)
		return cli_usage_error(o.cmd, o.synopsis, "nothing to change: give --owner or --mode");
	return 0;
}

static int channel_set(struct cli *cli, int argc, char **argv)
{
	struct channel_set_args a = { .json = cli->json };
	struct imexctl_channel ch;
	int r = channel_set_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	if (imexctl_channel_set(cli->ctx, a.domain, a.id, &a.change) < 0)
		return cli_lib_fail(cli);
	if (imexctl_channel_get(cli->ctx, a.id, &ch) < 0)
		return cli_lib_fail(cli);
	if (print_is_json()) {
		print_json(NULL, channel_json(&ch));
	} else {
		printf("channel %s/%u: owner %u:%u, mode %04o\n", ch.domain, ch.id, ch.uid,
		       ch.gid, ch.mode & 07777);
	}
	return EXIT_OK;
}

int channel_alloc_parse(int argc, char **argv, struct channel_alloc_args *a)
{
	static const struct option opts[] = {
		{ "domain", required_argument, NULL, OPT_DOMAIN },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "channel", required_argument, NULL, OPT_CHANNEL },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		CLI_COMMON_OPTS,
		{ 0 }
	};
	struct cli_opts o = CLI_OPTS("channel alloc", alloc_synopsis, alloc_help, opts, argc, argv,
			      &a->json);
	const char *why = NULL;
	bool have_count = false;
	int c, r;

	a->count = 1;
	a->timeout_ms = CLI_REQUEST_TIMEOUT_S * 1000;
	while ((c = cli_next_opt(&o)) > 0) {
		switch (c) {
		case OPT_DOMAIN:
			if (cli_opt_domain(&o, &a->domain))
				return EXIT_USAGE;
			break;
		case OPT_COUNT:
			if (parse_u32(optarg, 1, IMEXCTL_CHANNELS_PER_REQUEST, &a->count, &why) < 0)
				return cli_bad_value(&o, "--count", optarg, why);
			have_count = true;
			break;
		case OPT_CHANNEL:
			if (cli_opt_channel(&o, &a->ids))
				return EXIT_USAGE;
			break;
		case OPT_TIMEOUT:
			if (parse_timeout(optarg, 1, &a->timeout_ms, &why) < 0)
				return cli_bad_value(&o, "--timeout", optarg, why);
			break;
		}
	}
	r = cli_no_args_need(&o, c, a->domain, "missing --domain");
	if (r)
		return r;
	if (have_count && a->ids.n)
		return cli_usage_error(o.cmd, o.synopsis, "give either --count or --channel, not both");
	return 0;
}

static void print_ids(const char *domain, const char *verb, const uint32_t *ids, size_t n)
{
	char *s;

	if (print_is_json()) {
		print_open_object(NULL);
		print_string(PRINT_JSON, "domain", NULL, domain);
		print_json("channels", json_ids(ids, n));
		print_close_object();
		return;
	}
	s = format_ids(ids, n);
	printf("%s channel(s) %s %s domain %s\n", verb, s && s[0] ? s : "(none)",
	       strcmp(verb, "granted") ? "from" : "to", domain);
	free(s);
}

static int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int channel_alloc(struct cli *cli, int argc, char **argv)
{
	struct channel_alloc_args a = { .json = cli->json };
	uint32_t *got = NULL;
	size_t n = 0;
	int r = channel_alloc_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		goto out;
	if (imexctl_channel_alloc(cli->ctx, a.domain, a.count, a.ids.v, a.ids.n,
				  a.timeout_ms, &got, &n) < 0) {
		r = cli_lib_fail(cli);
		goto out;
	}
	if (n)
		qsort(got, n, sizeof(*got), by_value);
	print_ids(a.domain, "granted", got, n);
	r = EXIT_OK;
out:
	free(got);
	free(a.ids.v);
	return r;
}

int channel_free_parse(int argc, char **argv, struct channel_free_args *a)
{
	struct cli_opts o = CLI_OPTS("channel free", free_synopsis, free_help,
				     cli_timeout_longopts, argc, argv, &a->json);
	char domain[IMEXCTL_NAME_MAX];
	const char *why = NULL;
	uint32_t id;
	char **pos;
	int i, n, r = cli_timeout_parse(&o, &a->timeout_ms, &pos, &n);

	if (r)
		return r;
	if (n < 1)
		return cli_usage_error(o.cmd, o.synopsis, "missing DOMAIN/ID");
	for (i = 0; i < n; i++) {
		if (parse_channel_ref(pos[i], domain, sizeof(domain), &id, &why) < 0 ||
		    cli_ids_add(&a->ids, id, &why) < 0)
			return cli_bad_value(&o, "channel", pos[i], why);
		if (i && strcmp(domain, a->domain))
			return cli_usage_error(o.cmd, o.synopsis,
					       "channels of one domain per call ('%s' and '%s')",
					       a->domain, domain);
		memcpy(a->domain, domain, sizeof(domain));
	}
	return 0;
}

static int channel_free(struct cli *cli, int argc, char **argv)
{
	struct channel_free_args a = { .json = cli->json };
	int r = channel_free_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r == CLI_GO) {
		if (imexctl_channel_free(cli->ctx, a.domain, a.ids.v, a.ids.n, a.timeout_ms) < 0) {
			r = cli_lib_fail(cli);
		} else {
			qsort(a.ids.v, a.ids.n, sizeof(*a.ids.v), by_value);
			print_ids(a.domain, "revoked", a.ids.v, a.ids.n);
			r = EXIT_OK;
		}
	}
	free(a.ids.v);
	return r;
}

static const struct cli_cmd verbs[] = {
	{ "list", channel_list, list_synopsis, "list channels, their owners and open counts" },
	{ "set", channel_set, set_synopsis, "change a channel device's owner or mode" },
	{ "alloc", channel_alloc, alloc_synopsis, "grant more channels to a domain" },
	{ "free", channel_free, free_synopsis, "revoke channels from a domain" },
};

int cmd_channel(struct cli *cli, int argc, char **argv)
{
	return cli_dispatch(cli, "channel", verbs, sizeof(verbs) / sizeof(verbs[0]), argc, argv);
}
