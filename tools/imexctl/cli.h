/* SPDX-License-Identifier: GPL-2.0-only */
/* imexctl: what the object files share. */
#ifndef IMEXCTL_CLI_H
#define IMEXCTL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <imexctl.h>

/* Exit statuses: documented in imexctl(8). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* refused or failed */
	EXIT_USAGE = 2,		/* bad command line; nothing was done */
};

/* Not an exit status: a parse step saw --help and printed the usage. */
#define CLI_HELP (-1)

/* A request's default timeout: longer than the kernel's own 120 s. */
#define CLI_REQUEST_TIMEOUT_S (IMEXCTL_REQUEST_TIMEOUT_MS / 1000)
#define CLI_WAIT_TIMEOUT_S 120
#define CLI_TIMEOUT_MAX_S 2147483	/* INT_MAX milliseconds */

struct cli {
	bool json;
	struct imexctl *ctx;		/* made on first use by cli_ctx() */
};

/* One verb of an object, or one object of imexctl. */
struct cli_cmd {
	const char *name;
	int (*run)(struct cli *cli, int argc, char **argv);
	const char *synopsis;		/* arguments after the name */
	const char *description;
};

/* Not an exit status: cli_start() made the context, the verb goes on. */
#define CLI_GO (-3)

/* cli.c */
/*
 * A verb's start, after its parse step returned @parsed: CLI_GO, with the
 * library context made and print.h's mode set from @json, or the exit status.
 */
int cli_start(struct cli *cli, int parsed, bool json);
int cli_main(int argc, char **argv);
int cli_dispatch(struct cli *cli, const char *object,
		 const struct cli_cmd *verbs, size_t n, int argc, char **argv);
struct imexctl *cli_ctx(struct cli *cli);
int cli_fail(struct cli *cli, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int cli_lib_fail(struct cli *cli);
int cli_usage_error(const char *cmd, const char *synopsis, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cli_help(const char *cmd, const char *synopsis, const char *text);

/* parse.c: strict; each returns 0 or -EINVAL/-ERANGE and sets *why. */
int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *val,
	      const char **why);
int parse_uuid(const char *s, uint8_t uuid[IMEXCTL_UUID_LEN], const char **why);
int parse_fabric(const char *s, uint8_t uuid[IMEXCTL_UUID_LEN],
		 uint32_t *partition, const char **why);
int parse_owner(const char *s, uint32_t *uid, uint32_t *gid, const char **why);
int parse_mode(const char *s, uint32_t *mode, const char **why);
int parse_name(const char *s, const char **why);
/* host[:port], [IPv6][:port] or a bare IPv6 address */
int parse_addr(const char *s, const char **why);
int parse_channel_ref(const char *s, char *domain, size_t size, uint32_t *id,
		      const char **why);
int parse_timeout(const char *s, uint32_t min_s, int *ms, const char **why);
int parse_state(const char *s, enum imexctl_domain_state *state,
		const char **why);

struct cli_nodes {
	struct imexctl_member_spec *v;
	size_t n;
	char **bufs;			/* storage for the name=addr splits */
	size_t n_bufs;
};
int parse_nodes(const char *s, struct cli_nodes *nodes, const char **why);
void cli_nodes_free(struct cli_nodes *nodes);

struct cli_ids {
	uint32_t *v;
	size_t n;
};
int cli_ids_add(struct cli_ids *ids, uint32_t id, const char **why);

/* output.c */
struct json_object;
struct table;
struct table *table_new(size_t cols, ...);
void table_add(struct table *t, ...);
struct table *table_new_v(size_t cols, const char *const *hdr);
void table_add_v(struct table *t, const char *const *cells);
void table_print(struct table *t);
void table_free(struct table *t);
void json_print(struct json_object *obj);
char *text_escape(const char *s);
char *format_ids(const uint32_t *ids, size_t n);
struct json_object *json_uuid(const uint8_t uuid[IMEXCTL_UUID_LEN]);
struct json_object *json_fabric(bool has, const uint8_t uuid[IMEXCTL_UUID_LEN],
				uint32_t partition);
struct json_object *json_ids(const uint32_t *ids, size_t n);
struct json_object *json_mode(uint32_t mode);
void format_iso8601(uint64_t ms, bool millis, char *buf, size_t len);

/* The objects: cmd_*.c */
int cmd_module(struct cli *cli, int argc, char **argv);
int cmd_node(struct cli *cli, int argc, char **argv);
int cmd_domain(struct cli *cli, int argc, char **argv);
int cmd_channel(struct cli *cli, int argc, char **argv);
int cmd_cdi(struct cli *cli, int argc, char **argv);
int cmd_tls(struct cli *cli, int argc, char **argv);
int cmd_monitor(struct cli *cli, int argc, char **argv);

/* cmd_domain_show.c */
struct json_object *domain_json(const struct imexctl_domain *d, bool full);
void domain_print(const struct imexctl_domain *d);

#endif /* IMEXCTL_CLI_H */
