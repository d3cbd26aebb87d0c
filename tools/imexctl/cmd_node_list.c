// SPDX-License-Identifier: GPL-2.0-only
/*
 * imexctl node list: the group's membership as the local imexd sees it.
 *
 * The kernel does not know the group, so imexd keeps its view in
 * STATE_DIRECTORY/members.json (replaced atomically when it changes, at
 * most once a second; removed when it stops).  This reads that file; the
 * kernel says whether imexd runs and as which pid, so a file left by an
 * imexd that was killed is not shown as the live view.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "args.h"
#include "node_list.h"
#include "print.h"

const char node_list_synopsis[] = "[--state-dir DIR]";
static const char list_help[] =
	"List the nodes of this NVLink domain's group as the local imexd sees\n"
	"them: name, address, role (voter, standby or spare), the leader, and\n"
	"whether this node is connected to each now; with this node's term,\n"
	"leader, commit and applied index.  Another node may see a newer view.\n"
	"Reads imexd's STATE_DIRECTORY/" CLI_MEMBERS_FILE " (root only).\n\n"
	"  --state-dir DIR  imexd's state directory (default: STATE_DIRECTORY\n"
	"                   of " CLI_IMEXD_CONF ", else " CLI_STATE_DIR_DEFAULT ")\n";

int parse_state_dir(const char *s, const char **why)
{
	*why = "an empty path";
	return s[0] ? 0 : -1;
}

static const struct option state_dir_opt = { "state-dir", required_argument, NULL, OPT_FIRST };

int node_list_parse(int argc, char **argv, struct node_list_args *a)
{
	return cli_one_opt_parse("node list", node_list_synopsis, list_help, argc, argv,
				 &a->json, &state_dir_opt, parse_state_dir, &a->state_dir);
}

/* STATE_DIRECTORY of imexd.conf (KEY=VALUE lines, '#' comments), else the
 * default.  imexd itself refuses a file it cannot parse. */
void cli_state_dir(const char *conf, char *dir, size_t len)
{
	FILE *f = fopen(conf, "re");
	char line[4096], *s, *e;

	snprintf(dir, len, "%s", CLI_STATE_DIR_DEFAULT);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		s = line + strspn(line, " \t");
		if (strncmp(s, "STATE_DIRECTORY", 15))
			continue;
		s += 15;
		s += strspn(s, " \t");
		if (*s++ != '=')
			continue;
		s += strspn(s, " \t");
		e = s + strlen(s);
		while (e > s && strchr(" \t\r\n", e[-1]))
			e--;
		*e = '\0';
		if (*s)
			snprintf(dir, len, "%s", s);
	}
	fclose(f);
}

static const char *jstr(json_object *o, const char *k, bool null_ok, bool *ok)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v) ||
	    (v ? !json_object_is_type(v, json_type_string) : !null_ok)) {
		*ok = false;
		return "";
	}
	return v ? json_object_get_string(v) : NULL;
}

static uint64_t juint(json_object *o, const char *k, bool *ok)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v) ||
	    !json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0) {
		*ok = false;
		return 0;
	}
	return json_object_get_uint64(v);
}

/* true, false or (@null_ok) null as -1. */
static int jbool(json_object *o, const char *k, bool null_ok, bool *ok)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v) ||
	    (v ? !json_object_is_type(v, json_type_boolean) : !null_ok)) {
		*ok = false;
		return 0;
	}
	return v ? json_object_get_boolean(v) : -1;
}

static bool copy(char *dst, size_t len, const char *s)
{
	if (!s)
		s = "";
	if (strlen(s) >= len)
		return false;
	memcpy(dst, s, strlen(s) + 1);
	return true;
}

static bool member_parse(json_object *o, struct cli_group_member *m)
{
	bool ok = json_object_is_type(o, json_type_object);
	int c;

	if (!ok)
		return false;
	ok = copy(m->name, sizeof(m->name), jstr(o, "name", false, &ok)) && ok;
	ok = copy(m->addr, sizeof(m->addr), jstr(o, "addr", false, &ok)) && ok;
	ok = copy(m->role, sizeof(m->role), jstr(o, "role", false, &ok)) && ok;
	m->leader = jbool(o, "leader", false, &ok) > 0;
	m->self = jbool(o, "self", false, &ok) > 0;
	c = jbool(o, "connected", true, &ok);
	m->has_connected = c >= 0;
	m->connected = c > 0;
	return ok && m->name[0];
}

int cli_group_parse(const char *text, struct cli_group *g, const char **why)
{
	json_object *o = json_tokener_parse(text), *arr;
	bool ok;
	size_t i, n;

	memset(g, 0, sizeof(*g));
	*why = "not the JSON object imexd writes";
	if (!o || !json_object_is_type(o, json_type_object))
		goto bad;
	ok = true;
	if (juint(o, "version", &ok) != CLI_MEMBERS_VERSION) {
		*why = "a version of the file this imexctl does not know";
		goto bad;
	}
	ok = copy(g->node, sizeof(g->node), jstr(o, "node", false, &ok)) && ok;
	g->pid = (unsigned long)juint(o, "pid", &ok);
	g->member = jbool(o, "member", false, &ok) > 0;
	g->term = juint(o, "term", &ok);
	ok = copy(g->leader, sizeof(g->leader), jstr(o, "leader", true, &ok)) && ok;
	g->commit = juint(o, "commit", &ok);
	g->applied = juint(o, "applied", &ok);
	g->config_index = juint(o, "config_index", &ok);
	if (!ok || !json_object_object_get_ex(o, "members", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		goto bad;
	n = json_object_array_length(arr);
	g->m = n ? calloc(n, sizeof(*g->m)) : NULL;
	if (n && !g->m) {
		*why = "out of memory";
		goto bad;
	}
	for (i = 0; i < n; i++) {
		if (!member_parse(json_object_array_get_idx(arr, i), &g->m[i]))
			goto bad;
	}
	g->n = n;
	json_object_put(o);
	return 0;
bad:
	json_object_put(o);
	cli_group_free(g);
	return -EINVAL;
}

void cli_group_free(struct cli_group *g)
{
	free(g->m);
	g->m = NULL;
	g->n = 0;
}

void cli_group_print(const struct cli_group *g, const char *stale)
{
	struct table *t;
	char idx[64];
	size_t i;

	printf("node:     %s (this node's view: imexd pid %lu)\n", g->node, g->pid);
	if (stale)
		printf("note:     %s\n", stale);
	if (!g->member)
		printf("member:   no: this node waits to be joined: run 'imexctl node join %s' on a node of the group\n",
		       g->node);
	printf("term:     %" PRIu64 "\n", g->term);
	printf("leader:   %s\n", g->leader[0] ? g->leader : "(not known to this node)");
	snprintf(idx, sizeof(idx), "%" PRIu64 ", applied %" PRIu64, g->commit, g->applied);
	printf("commit:   %s\n", idx);
	if (!g->n)
		return;
	printf("\n");
	t = table_new(5, "NAME", "ADDRESS", "ROLE", "LEADER", "CONNECTED");
	for (i = 0; i < g->n; i++) {
		const struct cli_group_member *m = &g->m[i];

		table_add(t, m->name, m->addr[0] ? m->addr : m->name, m->role,
			  m->leader ? "yes" : "-",
			  m->self ? "(self)" : m->connected ? "yes" : "no");
	}
	table_print(t);
	table_free(t);
}

struct json_object *cli_group_json(const struct cli_group *g, bool stale)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	size_t i;

	json_object_object_add(o, "node", json_object_new_string(g->node));
	json_object_object_add(o, "pid", json_object_new_int64((int64_t)g->pid));
	json_object_object_add(o, "stale", json_object_new_boolean(stale));
	json_object_object_add(o, "member", json_object_new_boolean(g->member));
	json_object_object_add(o, "term", json_object_new_uint64(g->term));
	json_object_object_add(o, "leader", g->leader[0] ?
			       json_object_new_string(g->leader) : NULL);
	json_object_object_add(o, "commit", json_object_new_uint64(g->commit));
	json_object_object_add(o, "applied", json_object_new_uint64(g->applied));
	json_object_object_add(o, "config_index", json_object_new_uint64(g->config_index));
	for (i = 0; i < g->n; i++) {
		const struct cli_group_member *m = &g->m[i];
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "name", json_object_new_string(m->name));
		json_object_object_add(e, "addr", json_object_new_string(m->addr[0] ?
							m->addr : m->name));
		json_object_object_add(e, "role", json_object_new_string(m->role));
		json_object_object_add(e, "leader", json_object_new_boolean(m->leader));
		json_object_object_add(e, "self", json_object_new_boolean(m->self));
		json_object_object_add(e, "connected", m->has_connected ?
				       json_object_new_boolean(m->connected) : NULL);
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "members", arr);
	return o;
}

/* The file's text, or NULL with errno set. */
char *cli_read_text(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;
	int e;

	if (!f)
		return NULL;
	buf = malloc(CLI_MEMBERS_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		errno = ENOMEM;
		return NULL;
	}
	n = fread(buf, 1, CLI_MEMBERS_FILE_MAX + 1, f);
	e = ferror(f) ? EIO : n > CLI_MEMBERS_FILE_MAX ? EFBIG : 0;
	fclose(f);
	if (e) {
		free(buf);
		errno = e;
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

void cli_members_path(const char *state_dir, char *dir, size_t dlen, char *path,
		      size_t plen)
{
	if (state_dir)
		snprintf(dir, dlen, "%s", state_dir);
	else
		cli_state_dir(CLI_IMEXD_CONF, dir, dlen);
	snprintf(path, plen, "%s/%s", dir, CLI_MEMBERS_FILE);
}

int node_list(struct cli *cli, int argc, char **argv)
{
	struct node_list_args a = { .json = cli->json };
	char dir[4096], path[4200], stale[256] = "";
	struct imexctl_node node;
	struct cli_group g;
	const char *why;
	char *text;
	int r = node_list_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	if (r != CLI_GO)
		return r;
	cli_members_path(a.state_dir, dir, sizeof(dir), path, sizeof(path));
	if (imexctl_node_get(cli->ctx, &node) < 0)
		return cli_lib_fail(cli);
	if (!node.manager_pid)
		return cli_fail(cli, "imexd is not running on this node (not attached to the imex module): start it with 'systemctl start imexd'");
	text = cli_read_text(path);
	if (!text && errno == ENOENT)
		return cli_fail(cli, "imexd (pid %u) has not written %s: it writes it within a second of starting; is its STATE_DIRECTORY %s (--state-dir)?",
				node.manager_pid, path, dir);
	if (!text)
		return cli_fail(cli, "cannot read %s: %s%s", path, strerror(errno),
				errno == EACCES ? " (imexd's state directory is root's)" : "");
	r = cli_group_parse(text, &g, &why);
	free(text);
	if (r < 0)
		return cli_fail(cli, "%s: %s", path, why);
	if (g.pid != node.manager_pid)
		snprintf(stale, sizeof(stale),
			 "written by pid %lu, but imexd runs as pid %u: maybe stale, or another STATE_DIRECTORY",
			 g.pid, node.manager_pid);
	if (print_is_json())
		print_json(NULL, cli_group_json(&g, stale[0]));
	else
		cli_group_print(&g, stale[0] ? stale : NULL);
	cli_group_free(&g);
	return EXIT_OK;
}
