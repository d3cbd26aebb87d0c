// SPDX-License-Identifier: GPL-2.0
/*
 * node: this node's view of the group's membership (node.h,
 * imexd_node_members), read from the consensus configuration, the roster
 * (addresses) and peers (connections).  Read only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consensus.h"
#include "node_internal.h"

static int member_cmp(const void *a, const void *b)
{
	const struct imexd_node_member *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* The address peers dial: a join's, else NODES_FILE's, else "". */
static void member_addr(const struct imexd_node *n, const struct imexd_cons *c,
			raft_id id, const char *name, char *out, size_t len)
{
	const char *addr = imexd_cons_addr(c, id);
	int k;

	if (!addr) {
		k = node_roster_index(n, name);
		addr = k >= 0 ? n->roster[k].addr : "";
	}
	snprintf(out, len, "%s", addr);
}

size_t imexd_node_members(const struct imexd_node *n,
			  struct imexd_node_group *g,
			  struct imexd_node_member *m, size_t max)
{
	const struct imexd_cons *c = imexd_agree_cons(n->agree);
	const struct raft_configuration *conf;
	raft_id self, leader;
	size_t k, filled = 0;

	memset(g, 0, sizeof(*g));
	if (!c)
		return 0;
	self = imexd_cons_self(c);
	leader = imexd_cons_leader(c);
	g->member = imexd_cons_role(c, self) >= 0;
	g->term = imexd_cons_term(c);
	g->commit = imexd_cons_commit(c);
	g->applied = imexd_cons_applied(c);
	g->config_index = imexd_cons_members_index(c);
	if (leader && imexd_cons_name(c, leader))
		snprintf(g->leader, sizeof(g->leader), "%s",
			 imexd_cons_name(c, leader));
	conf = imexd_cons_members(c);
	g->n_members = conf->n;
	for (k = 0; k < conf->n && filled < max; k++) {
		const struct raft_server *s = &conf->servers[k];
		const char *name = imexd_cons_name(c, s->id);
		struct imexd_node_member *e = &m[filled++];

		memset(e, 0, sizeof(*e));
		snprintf(e->name, sizeof(e->name), "%s", name ? name : "?");
		if (name)
			member_addr(n, c, s->id, name, e->addr, sizeof(e->addr));
		e->role = s->role;
		e->leader = leader && s->id == leader;
		e->self = s->id == self;
		e->connected = !e->self && name &&
			       imexd_peers_connected(n->peers, name);
	}
	qsort(m, filled, sizeof(*m), member_cmp);
	return filled;
}
