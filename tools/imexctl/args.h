/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The parse step of every verb: argv in, a filled struct out, no kernel
 * access.  Each *_parse() returns 0, EXIT_USAGE (message printed) or
 * CLI_HELP (usage printed to stdout).  The execute step lives next to it
 * in cmd_<object>.c.
 */
#ifndef IMEXCTL_ARGS_H
#define IMEXCTL_ARGS_H

#include <getopt.h>

#include "cli.h"

/* Options every verb has; getopt values above any character. */
enum {
	OPT_JSON = 0x100,
	OPT_FIRST,			/* verbs number theirs from here */
};

#define CLI_COMMON_OPTS \
	{ "json", no_argument, NULL, OPT_JSON }, \
	{ "help", no_argument, NULL, 'h' }

#define OPT_END 0
#define OPT_FAIL (-2)

struct cli_opts {
	const char *cmd;		/* "domain create", for messages */
	const char *synopsis;
	const char *help;
	const struct option *longopts;
	int argc;
	char **argv;
	bool *json;
	bool started;
};

#define CLI_OPTS(c, syn, hlp, opts, ac, av, js) { \
	.cmd = (c), .synopsis = (syn), .help = (hlp), .longopts = (opts), \
	.argc = (ac), .argv = (av), .json = (js) }

/* Next option value, OPT_END, OPT_FAIL (usage printed) or CLI_HELP. */
int cli_next_opt(struct cli_opts *o);
/* The positional arguments left after the options. */
int cli_positional(const struct cli_opts *o, char ***args);
/* A usage error about option value @arg: "invalid --opt 'arg': why". */
int cli_bad_value(const struct cli_opts *o, const char *opt, const char *arg,
		  const char *why);
/*
 * The end of an option loop that stopped at @c: 0 to go on, CLI_HELP or
 * EXIT_USAGE.  cli_no_args() then refuses any positional argument;
 * cli_one_arg() wants exactly one (@missing is the error without), and
 * cli_one_name() one that is a name (@kind says which, in errors).
 * @missing is a whole message, so that check-messages.sh sees it.
 */
int cli_opts_end(int c);
int cli_no_args(const struct cli_opts *o, int c);
/* cli_no_args(), and the error @missing without the option's value @val. */
int cli_no_args_need(const struct cli_opts *o, int c, const void *val, const char *missing)
	__attribute__((format(printf, 4, 0)));
int cli_one_arg(const struct cli_opts *o, int c, char **arg, const char *missing)
	__attribute__((format(printf, 4, 0)));
int cli_one_name(const struct cli_opts *o, int c, const char **name, const char *kind,
		 const char *missing)
	__attribute__((format(printf, 5, 0)));

/* optarg of --domain NAME, or of --channel ID (one more in @ids): 0 or EXIT_USAGE. */
int cli_opt_domain(const struct cli_opts *o, const char **domain);
int cli_opt_channel(const struct cli_opts *o, struct cli_ids *ids);

/*
 * A verb with --json, one option @opt taking a VALUE and no argument:
 * @check (0, or -1 and a why) vets VALUE, which lands in *@value.
 */
int cli_one_opt_parse(const char *cmd, const char *synopsis, const char *help,
		      int argc, char **argv, bool *json, const struct option *opt,
		      int (*check)(const char *s, const char **why),
		      const char **value);

/*
 * A verb whose only option is --timeout SEC (default
 * CLI_REQUEST_TIMEOUT_S): give it cli_timeout_longopts.  0 with its
 * positional arguments in *@pos (*@n of them), EXIT_USAGE or CLI_HELP.
 */
extern const struct option cli_timeout_longopts[];
/* Only the options: 0, EXIT_USAGE or CLI_HELP, as cli_opts_end() takes. */
int cli_timeout_opts(struct cli_opts *o, int *timeout_ms);
int cli_timeout_parse(struct cli_opts *o, int *timeout_ms, char ***pos, int *n);

struct module_load_args {
	struct imexctl_module_params params;
	bool json;
};

struct module_simple_args {
	bool json;
};

struct node_set_fabric_args {
	uint8_t uuid[IMEXCTL_UUID_LEN];
	uint32_t partition;
	bool json;
};

struct node_set_name_args {
	const char *name;
	bool json;
};

struct node_member_args {
	char *name;		/* NAME of NAME[=ADDR], in argv */
	const char *addr;	/* NULL: the name */
	int timeout_ms;
	bool json;
};

struct domain_create_args {
	struct imexctl_domain_spec spec;
	struct cli_nodes nodes;
	struct cli_ids ids;
	uint8_t uuid[IMEXCTL_UUID_LEN];
	int timeout_ms;
	bool no_wait;
	bool json;
};

struct domain_name_args {		/* delete, show */
	const char *name;
	int timeout_ms;
	bool json;
};

struct domain_wait_args {
	const char *name;
	enum imexctl_domain_state state;
	int timeout_ms;
	bool json;
};

struct domain_evict_args {
	const char *name;
	const char *member;
	int timeout_ms;
	bool json;
};

struct domain_replace_args {
	const char *name;
	const char *member;
	const char *with;
	int timeout_ms;
	bool json;
};

struct domain_list_args {
	bool json;
};

struct channel_list_args {
	const char *domain;
	bool json;
};

struct channel_set_args {
	char domain[IMEXCTL_NAME_MAX];
	uint32_t id;
	struct imexctl_channel_change change;
	bool json;
};

struct channel_alloc_args {
	const char *domain;
	uint32_t count;
	struct cli_ids ids;
	int timeout_ms;
	bool json;
};

struct channel_free_args {
	char domain[IMEXCTL_NAME_MAX];
	struct cli_ids ids;
	int timeout_ms;
	bool json;
};

struct cdi_generate_args {
	const char *domain;
	struct cli_ids ids;
	const char *id;
	struct imexctl_cdi_opts opts;
	bool to_stdout;
	bool json;
};

struct cdi_remove_args {
	const char *id;
	struct imexctl_cdi_opts opts;
	bool json;
};

struct cdi_list_args {
	struct imexctl_cdi_opts opts;
	bool json;
};

struct tls_args {			/* init-ca, issue */
	const char *dir;
	char **nodes;
	size_t nnodes;
	uint32_t days;
	bool json;
};

struct monitor_args {
	const char *domain;	/* NULL: every event */
	bool json;
};

int module_load_parse(int argc, char **argv, struct module_load_args *a);
int module_simple_parse(const char *cmd, int argc, char **argv,
			struct module_simple_args *a);
int node_show_parse(int argc, char **argv, struct module_simple_args *a);
int node_set_fabric_parse(int argc, char **argv, struct node_set_fabric_args *a);
int node_set_name_parse(int argc, char **argv, struct node_set_name_args *a);
int node_join_parse(int argc, char **argv, struct node_member_args *a);
int node_leave_parse(int argc, char **argv, struct node_member_args *a);
int domain_create_parse(int argc, char **argv, struct domain_create_args *a);
void domain_create_args_free(struct domain_create_args *a);
int domain_delete_parse(int argc, char **argv, struct domain_name_args *a);
int domain_show_parse(int argc, char **argv, struct domain_name_args *a);
int domain_list_parse(int argc, char **argv, struct domain_list_args *a);
int domain_wait_parse(int argc, char **argv, struct domain_wait_args *a);
int domain_evict_parse(int argc, char **argv, struct domain_evict_args *a);
int domain_replace_parse(int argc, char **argv, struct domain_replace_args *a);
int channel_list_parse(int argc, char **argv, struct channel_list_args *a);
int channel_set_parse(int argc, char **argv, struct channel_set_args *a);
int channel_alloc_parse(int argc, char **argv, struct channel_alloc_args *a);
int channel_free_parse(int argc, char **argv, struct channel_free_args *a);
int cdi_generate_parse(int argc, char **argv, struct cdi_generate_args *a);
int cdi_remove_parse(int argc, char **argv, struct cdi_remove_args *a);
int cdi_list_parse(int argc, char **argv, struct cdi_list_args *a);
int tls_init_ca_parse(int argc, char **argv, struct tls_args *a);
int tls_issue_parse(int argc, char **argv, struct tls_args *a);
int monitor_parse(int argc, char **argv, struct monitor_args *a);

#endif /* IMEXCTL_ARGS_H */
