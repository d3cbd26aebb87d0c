/* SPDX-License-Identifier: GPL-2.0-only */
/* imexctl node list: imexd's members.json, read and shown (cmd_node_list.c). */
#ifndef IMEXCTL_NODE_LIST_H
#define IMEXCTL_NODE_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/imex.h>

#include "cli.h"

/* As imexd: imexd/config.h and imexd/store_members.h. */
#define CLI_IMEXD_CONF		"/etc/imex/imexd.conf"
#define CLI_STATE_DIR_DEFAULT	"/var/lib/imexd"
#define CLI_MEMBERS_FILE	"members.json"
#define CLI_MEMBERS_VERSION	1
#define CLI_MEMBERS_FILE_MAX	(4 << 20)	/* 1024 nodes take ~200 KiB */

struct node_list_args {
	const char *state_dir;		/* NULL: from imexd.conf */
	bool json;
};

struct cli_group_member {
	char name[IMEX_NAME_MAX];
	char addr[256];			/* "": the name */
	char role[16];			/* voter, standby, spare */
	bool leader, self;
	bool has_connected, connected;	/* none for self */
};

struct cli_group {
	char node[IMEX_NAME_MAX];
	unsigned long pid;
	bool member;
	uint64_t term, commit, applied, config_index;
	char leader[IMEX_NAME_MAX];	/* "": not known */
	struct cli_group_member *m;
	size_t n;
};

extern const char node_list_synopsis[];
int node_list_parse(int argc, char **argv, struct node_list_args *a);
/* --state-dir's check: not empty. */
int parse_state_dir(const char *s, const char **why);
int node_list(struct cli *cli, int argc, char **argv);
void cli_state_dir(const char *conf, char *dir, size_t len);
/* 0, or -EINVAL with *why. */
int cli_group_parse(const char *text, struct cli_group *g, const char **why);
void cli_group_free(struct cli_group *g);
/* @dir: --state-dir's @state_dir, else imexd.conf's; @path: its members.json. */
void cli_members_path(const char *state_dir, char *dir, size_t dlen, char *path,
		      size_t plen);
/* members.json's text (at most CLI_MEMBERS_FILE_MAX), or NULL with errno. */
char *cli_read_text(const char *path);
/* @stale: a note on why the view may be old, or NULL. */
void cli_group_print(const struct cli_group *g, const char *stale);
struct json_object *cli_group_json(const struct cli_group *g, bool stale);

#endif /* IMEXCTL_NODE_LIST_H */
