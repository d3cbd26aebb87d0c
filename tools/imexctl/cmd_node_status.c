// SPDX-License-Identifier: GPL-2.0-only
/*
 * imexctl node status: ready (0), degraded (1), not running (3) or
 * unknown (4), with one line saying why.  Reads the kernel (is imexd
 * attached? the domains' states) and imexd's members.json (the group's
 * leader and which voters this node reaches).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "args.h"
#include "node_status.h"
#include "print.h"

const char node_status_synopsis[] = "[--state-dir DIR]";
static const char status_help[] =
	"Probe this node: exit 0 if imexd runs and every domain is READY with an\n"
	"agreement leader and a quorum of voters reachable; 1 if imexd runs but\n"
	"something is degraded; 3 if imexd does not run (or the module is not\n"
	"loaded); 4 if it cannot tell (e.g. not root).  Prints one line (or a\n"
	"JSON object) saying which and why.  For systemd ExecStartPost=,\n"
	"Kubernetes exec probes and Slurm's HealthCheckProgram.\n\n"
	"  --state-dir DIR  imexd's state directory (default: STATE_DIRECTORY\n"
	"                   of " CLI_IMEXD_CONF ", else " CLI_STATE_DIR_DEFAULT ")\n";

static const struct option state_dir_opt = { "state-dir", required_argument, NULL, OPT_FIRST };

int node_status_parse(int argc, char **argv, struct node_status_args *a)
{
	return cli_one_opt_parse("node status", node_status_synopsis, status_help,
				 argc, argv, &a->json, &state_dir_opt, parse_state_dir,
				 &a->state_dir);
}

__attribute__((format(printf, 4, 5)))
static void verdict(struct node_status_out *out, int code, const char *word,
		    const char *fmt, ...)
{
	va_list ap;

	out->code = code;
	out->word = word;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
}

/* Permission trouble means "cannot tell", anything else from the kernel
 * after NODE_GET worked too. */
void node_status_judge(const struct node_status_in *in, struct node_status_out *out)
{
	const struct cli_group *g = in->group;
	const char *first = NULL;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (in->node_err == -ENODEV) {
		verdict(out, STATUS_NOT_RUNNING, "not running",
			"the imex module is not loaded");
		return;
	}
	if (in->node_err) {
		verdict(out, STATUS_UNKNOWN, "unknown", "cannot ask the imex module: %s",
			in->node_errmsg);
		return;
	}
	if (!in->manager_pid) {
		verdict(out, STATUS_NOT_RUNNING, "not running",
			"imexd is not attached to the imex module");
		return;
	}
	if (in->list_err) {
		verdict(out, STATUS_UNKNOWN, "unknown", "cannot list the domains: %s",
			in->list_errmsg);
		return;
	}
	for (i = 0; i < in->ndoms; i++) {
		if (in->doms[i].state == IMEXCTL_DOMAIN_READY)
			continue;
		if (!first)
			first = in->doms[i].name;
		out->not_ready++;
	}
	if (in->group_err) {
		verdict(out, STATUS_UNKNOWN, "unknown", "imexd (pid %u) runs, but %s: %s",
			in->manager_pid, in->group_path,
			in->group_err == -EINVAL ? in->group_why :
			in->group_err == -ENOENT ? "not written (another --state-dir?)" :
			strerror(-in->group_err));
		return;
	}
	if (g->pid != in->manager_pid) {
		verdict(out, STATUS_UNKNOWN, "unknown",
			"%s was written by pid %lu, but imexd runs as pid %u: stale, or another STATE_DIRECTORY",
			in->group_path, g->pid, in->manager_pid);
		return;
	}
	for (i = 0; i < g->n; i++) {
		if (strcmp(g->m[i].role, "voter"))
			continue;
		out->voters++;
		if (g->m[i].self || g->m[i].connected)
			out->voters_up++;
	}
	if (!g->member) {
		verdict(out, STATUS_DEGRADED, "degraded",
			"imexd (pid %u) runs, but this node waits to be joined to the group",
			in->manager_pid);
		return;
	}
	if (out->voters && out->voters_up <= out->voters / 2) {
		verdict(out, STATUS_DEGRADED, "degraded",
			"no quorum: this node reaches %zu of the group's %zu voters",
			out->voters_up, out->voters);
		return;
	}
	if (!g->leader[0]) {
		verdict(out, STATUS_DEGRADED, "degraded",
			"no agreement leader known to this node");
		return;
	}
	if (out->not_ready) {
		verdict(out, STATUS_DEGRADED, "degraded",
			"%zu of %zu domain(s) not READY (first: %s)",
			out->not_ready, in->ndoms, first);
		return;
	}
	verdict(out, STATUS_READY, "ready",
		"imexd (pid %u) runs, %zu domain(s) READY, leader %s, %zu of %zu voters reached",
		in->manager_pid, in->ndoms, g->leader, out->voters_up, out->voters);
}

/* "WORD: reason", or the verdict with what it was drawn from. */
static void status_print(const struct node_status_in *in, const struct node_status_out *out)
{
	size_t i;

	print_open_object(NULL);
	print_string(PRINT_ANY, "status", "%s: ", out->word);
	print_int(PRINT_JSON, "exit_code", NULL, out->code);
	print_string(PRINT_ANY, "reason", "%s\n", out->reason);
	print_opt_uint("imexd_pid", in->manager_pid, in->manager_pid);
	print_uint(PRINT_JSON, "domains", NULL, (unsigned int)in->ndoms);
	print_open_array("domains_not_ready");
	for (i = 0; i < in->ndoms; i++)
		if (in->doms[i].state != IMEXCTL_DOMAIN_READY)
			print_string(PRINT_JSON, NULL, NULL, in->doms[i].name);
	print_close_array();
	print_string(PRINT_JSON, "leader", NULL,
		     in->group && in->group->leader[0] ? in->group->leader : NULL);
	print_uint(PRINT_JSON, "voters", NULL, (unsigned int)out->voters);
	print_uint(PRINT_JSON, "voters_reached", NULL, (unsigned int)out->voters_up);
	print_close_object();
}

int node_status(struct cli *cli, int argc, char **argv)
{
	struct node_status_args a = { .json = cli->json };
	struct node_status_in in = { 0 };
	struct node_status_out out;
	struct imexctl_domain *doms = NULL;
	struct imexctl_node node;
	char dir[4096], path[4200];
	struct cli_group g = { 0 };
	char *text;
	int r = node_status_parse(argc, argv, &a);

	if (r)
		return r == CLI_HELP ? EXIT_OK : r;
	cli_members_path(a.state_dir, dir, sizeof(dir), path, sizeof(path));
	if (!cli_ctx(cli))
		return STATUS_UNKNOWN;
	print_mode(a.json);
	in.node_err = imexctl_node_get(cli->ctx, &node);
	in.node_errmsg = imexctl_errmsg(cli->ctx);
	in.manager_pid = in.node_err ? 0 : node.manager_pid;
	if (!in.node_err && in.manager_pid) {
		in.list_err = imexctl_domain_list(cli->ctx, &doms, &in.ndoms);
		in.list_errmsg = imexctl_errmsg(cli->ctx);
		in.doms = doms;
		in.group_path = path;
		text = cli_read_text(path);
		if (!text)
			in.group_err = -errno;
		else if (cli_group_parse(text, &g, &in.group_why) < 0)
			in.group_err = -EINVAL;
		else
			in.group = &g;
		free(text);
	}
	node_status_judge(&in, &out);
	status_print(&in, &out);
	if (doms)
		imexctl_domain_list_free(doms, in.ndoms);
	cli_group_free(&g);
	return out.code;
}
