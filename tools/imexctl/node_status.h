/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * imexctl node status: a probe whose exit status says whether this node
 * serves IMEX (cmd_node_status.c).  The verdict is a pure function of what
 * was read, so every state is testable without a kernel.
 */
#ifndef IMEXCTL_NODE_STATUS_H
#define IMEXCTL_NODE_STATUS_H

#include "node_list.h"

/* Exit statuses of the probe (LSB init-script "status" codes; 2 stays a
 * usage error as for every imexctl command). */
enum {
	STATUS_READY = 0,
	STATUS_DEGRADED = 1,
	STATUS_NOT_RUNNING = 3,
	STATUS_UNKNOWN = 4,
};

struct node_status_args {
	const char *state_dir;		/* NULL: from imexd.conf */
	bool json;
};

struct node_status_in {
	int node_err;			/* NODE_GET: 0 or -errno */
	const char *node_errmsg;
	uint32_t manager_pid;		/* 0: no imexd attached */
	int list_err;			/* domain list: 0 or -errno */
	const char *list_errmsg;
	const struct imexctl_domain *doms;
	size_t ndoms;
	int group_err;			/* members.json: 0, -errno */
	const char *group_path;
	const char *group_why;		/* -EINVAL: what is wrong with it */
	const struct cli_group *group;	/* when group_err is 0 */
};

struct node_status_out {
	int code;			/* STATUS_* */
	const char *word;		/* "ready", "degraded", ... */
	char reason[512];
	size_t not_ready;		/* domains not READY */
	size_t voters, voters_up;	/* of the group, self included */
};

int node_status_parse(int argc, char **argv, struct node_status_args *a);
void node_status_judge(const struct node_status_in *in,
		       struct node_status_out *out);
int node_status(struct cli *cli, int argc, char **argv);
extern const char node_status_synopsis[];

#endif /* IMEXCTL_NODE_STATUS_H */
