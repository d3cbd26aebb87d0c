// SPDX-License-Identifier: GPL-2.0-only
/*
 * imexctl [--json] OBJECT VERB ...: the object table, the verb dispatcher,
 * option iteration and the three ways out (ok, failed, usage).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "print.h"

#define IMEXCTL_VERSION "1.0.0"

static const struct cli_cmd objects[] = {
	{ "module", cmd_module, "load|unload|status ...", "load, unload and describe the imex kernel module" },
	{ "node", cmd_node, "show|set-fabric|set-name|join|leave ...", "this node's identity, fabric and group" },
	{ "domain", cmd_domain, "create|delete|list|show|wait|evict|replace ...", "IMEX domains and their members" },
	{ "channel", cmd_channel, "list|set|alloc|free ...", "channels granted to domains" },
	{ "cdi", cmd_cdi, "generate|remove|list ...", "Container Device Interface specs for channels" },
	{ "tls", cmd_tls, "init-ca|issue ...", "a cluster CA and node certificates for imexd's TLS" },
	{ "monitor", cmd_monitor, "[--json] [--domain NAME]", "follow events (domains, members, channels) as they happen" },
};

static void top_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: imexctl [--json] OBJECT VERB [ARGS...]\n\nObjects:\n");
	for (i = 0; i < sizeof(objects) / sizeof(objects[0]); i++)
		fprintf(f, "  %-8s %s\n", objects[i].name, objects[i].description);
	fprintf(f, "\nOptions:\n"
		   "  --json     machine-readable output (also accepted after the verb)\n"
		   "  --version  print the version\n"
		   "  -h, --help this text; 'imexctl OBJECT --help' for an object's verbs\n"
		   "\nExit status: 0 ok, 1 refused or failed, 2 usage error.\n");
}

struct imexctl *cli_ctx(struct cli *cli)
{
	int r;

	if (cli->ctx)
		return cli->ctx;
	r = imexctl_new(&cli->ctx);
	if (r < 0) {
		fprintf(stderr, "imexctl: %s\n", strerror(-r));
		return NULL;
	}
	return cli->ctx;
}

int cli_fail(struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	(void)cli;
	fputs("imexctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_FAIL;
}

int cli_lib_fail(struct cli *cli)
{
	return cli_fail(cli, "%s", imexctl_errmsg(cli->ctx));
}

int cli_usage_error(const char *cmd, const char *synopsis, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "imexctl %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: imexctl %s %s\nTry 'imexctl %s --help'.\n", cmd,
		synopsis, cmd);
	return EXIT_USAGE;
}

void cli_help(const char *cmd, const char *synopsis, const char *text)
{
	printf("usage: imexctl %s %s\n\n%s", cmd, synopsis, text);
}

int cli_next_opt(struct cli_opts *o)
{
	int c;

	if (!o->started) {
		optind = 0;	/* glibc: full re-initialisation */
		opterr = 0;
		o->started = true;
	}
	for (;;) {
		c = getopt_long(o->argc, o->argv, ":h", o->longopts, NULL);
		switch (c) {
		case -1:
			return OPT_END;
		case OPT_JSON:
			*o->json = true;
			continue;
		case 'h':
			cli_help(o->cmd, o->synopsis, o->help);
			return CLI_HELP;
		case ':':
			cli_usage_error(o->cmd, o->synopsis, "option '%s' needs a value",
					o->argv[optind - 1]);
			return OPT_FAIL;
		case '?':
			if (optopt)
				cli_usage_error(o->cmd, o->synopsis, "unknown option '-%c'", optopt);
			else
				cli_usage_error(o->cmd, o->synopsis, "unknown option '%s'",
						o->argv[optind - 1]);
			return OPT_FAIL;
		default:
			return c;
		}
	}
}

int cli_positional(const struct cli_opts *o, char ***args)
{
	*args = o->argv + optind;
	return o->argc - optind;
}

int cli_bad_value(const struct cli_opts *o, const char *opt, const char *arg,
		  const char *why)
{
	return cli_usage_error(o->cmd, o->synopsis, "invalid %s '%s': %s", opt, arg, why);
}

int cli_opts_end(int c)
{
	if (c == OPT_END)
		return 0;
	return c == CLI_HELP ? CLI_HELP : EXIT_USAGE;
}

int cli_no_args(const struct cli_opts *o, int c)
{
	char **pos;
	int r = cli_opts_end(c);

	if (r)
		return r;
	if (cli_positional(o, &pos) > 0)
		return cli_usage_error(o->cmd, o->synopsis, "unexpected argument '%s'", pos[0]);
	return 0;
}

int cli_no_args_need(const struct cli_opts *o, int c, const void *val, const char *missing)
{
	int r = cli_no_args(o, c);

	if (!r && !val)
		r = cli_usage_error(o->cmd, o->synopsis, "%s", missing);
	return r;
}

int cli_one_arg(const struct cli_opts *o, int c, char **arg, const char *missing)
{
	char **pos;
	int n, r = cli_opts_end(c);

	if (r)
		return r;
	n = cli_positional(o, &pos);
	if (n < 1)
		return cli_usage_error(o->cmd, o->synopsis, "%s", missing);
	if (n > 1)
		return cli_usage_error(o->cmd, o->synopsis, "unexpected argument '%s'", pos[1]);
	*arg = pos[0];
	return 0;
}

int cli_one_name(const struct cli_opts *o, int c, const char **name, const char *kind,
		 const char *missing)
{
	const char *why = NULL;
	char *arg = NULL;
	int r = cli_one_arg(o, c, &arg, missing);

	if (r)
		return r;
	if (parse_name(arg, &why) < 0)
		return cli_bad_value(o, kind, arg, why);
	*name = arg;
	return 0;
}

int cli_opt_domain(const struct cli_opts *o, const char **domain)
{
	const char *why = NULL;

	if (parse_name(optarg, &why) < 0)
		return cli_bad_value(o, "--domain", optarg, why);
	*domain = optarg;
	return 0;
}

int cli_opt_channel(const struct cli_opts *o, struct cli_ids *ids)
{
	const char *why = NULL;
	uint32_t id;

	if (parse_u32(optarg, 0, IMEXCTL_CHANNELS_MAX - 1, &id, &why) < 0 ||
	    cli_ids_add(ids, id, &why) < 0)
		return cli_bad_value(o, "--channel", optarg, why);
	return 0;
}

int cli_start(struct cli *cli, int parsed, bool json)
{
	if (parsed)
		return parsed == CLI_HELP ? EXIT_OK : parsed;
	if (!cli_ctx(cli))
		return EXIT_FAIL;
	print_mode(json);
	return CLI_GO;
}

int cli_one_opt_parse(const char *cmd, const char *synopsis, const char *help,
		      int argc, char **argv, bool *json, const struct option *opt,
		      int (*check)(const char *s, const char **why),
		      const char **value)
{
	const struct option opts[] = {
		*opt,
		CLI_COMMON_OPTS,
		{ 0 }
	};
	struct cli_opts o = CLI_OPTS(cmd, synopsis, help, opts, argc, argv, json);
	const char *why = NULL;
	char flag[64];
	int c;

	snprintf(flag, sizeof(flag), "--%s", opt->name);
	while ((c = cli_next_opt(&o)) > 0) {
		if (c == opt->val) {
			if (check(optarg, &why) < 0)
				return cli_bad_value(&o, flag, optarg, why);
			*value = optarg;
		}
	}
	return cli_no_args(&o, c);
}

enum { OPT_TIMEOUT_ONLY = OPT_FIRST };

const struct option cli_timeout_longopts[] = {
	{ "timeout", required_argument, NULL, OPT_TIMEOUT_ONLY },
	CLI_COMMON_OPTS,
	{ 0 }
};

int cli_timeout_opts(struct cli_opts *o, int *timeout_ms)
{
	const char *why = NULL;
	int c;

	*timeout_ms = CLI_REQUEST_TIMEOUT_S * 1000;
	while ((c = cli_next_opt(o)) > 0) {
		if (c == OPT_TIMEOUT_ONLY && parse_timeout(optarg, 1, timeout_ms, &why) < 0)
			return cli_bad_value(o, "--timeout", optarg, why);
	}
	return cli_opts_end(c);
}

int cli_timeout_parse(struct cli_opts *o, int *timeout_ms, char ***pos, int *n)
{
	int r = cli_timeout_opts(o, timeout_ms);

	if (r)
		return r;
	*n = cli_positional(o, pos);
	return 0;
}

static void object_usage(FILE *f, const char *object, const struct cli_cmd *verbs,
			 size_t n)
{
	size_t i;

	fprintf(f, "usage: imexctl %s VERB [ARGS...]\n\nVerbs:\n", object);
	for (i = 0; i < n; i++)
		fprintf(f, "  %s %s %s\n      %s\n", object, verbs[i].name,
			verbs[i].synopsis, verbs[i].description);
	fprintf(f, "\n'imexctl %s VERB --help' describes a verb.\n", object);
}

/* argv[0] is the object, argv[1] the verb. */
int cli_dispatch(struct cli *cli, const char *object,
		 const struct cli_cmd *verbs, size_t n, int argc, char **argv)
{
	size_t i;

	/* "imexctl domain --json list" is meant as much as the other places. */
	while (argc >= 2 && !strcmp(argv[1], "--json")) {
		cli->json = true;
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	if (argc < 2) {
		fprintf(stderr, "imexctl %s: missing verb\n", object);
		object_usage(stderr, object, verbs, n);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		object_usage(stdout, object, verbs, n);
		return EXIT_OK;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].run(cli, argc - 1, argv + 1);
	fprintf(stderr, "imexctl %s: unknown verb '%s'\n", object, argv[1]);
	object_usage(stderr, object, verbs, n);
	return EXIT_USAGE;
}

int cli_main(int argc, char **argv)
{
	struct cli cli = { 0 };
	int i, r = EXIT_USAGE;
	size_t j;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j")) {
			cli.json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			top_usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(argv[i], "--version")) {
			printf("imexctl %s\n", IMEXCTL_VERSION);
			return EXIT_OK;
		} else {
			fprintf(stderr, "imexctl: unknown option '%s'\n", argv[i]);
			top_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i == argc) {
		fprintf(stderr, "imexctl: missing object\n");
		top_usage(stderr);
		return EXIT_USAGE;
	}
	for (j = 0; j < sizeof(objects) / sizeof(objects[0]); j++)
		if (!strcmp(argv[i], objects[j].name))
			break;
	if (j == sizeof(objects) / sizeof(objects[0])) {
		fprintf(stderr, "imexctl: unknown object '%s'\n", argv[i]);
		top_usage(stderr);
		return EXIT_USAGE;
	}
	r = objects[j].run(&cli, argc - i, argv + i);
	imexctl_free(cli.ctx);
	fflush(stdout);
	return r;
}
