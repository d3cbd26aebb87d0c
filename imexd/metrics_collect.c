// SPDX-License-Identifier: GPL-2.0
/*
 * A metrics snapshot of this node (metrics.h): the kernel's view (node-get
 * with its counters, every domain with its state, channels and member
 * states: what `imexctl --json` shows) and the node core's (role, peers,
 * commit latency, the broker's refusals).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <raft.h>
#include <linux/imex.h>
#include "agree.h"
#include "broker.h"
#include "kernel.h"
#include "kernel_internal.h"
#include "metrics_collect.h"

struct doms {
	struct imexd_metrics_domain *v;
	size_t n;
	int err;
};

static int on_node(struct nl_msg *msg, void *arg)
{
	struct imexd_metrics *m = arg;
	struct nlattr *tb[IMEX_A_MAX + 1], *st[IMEX_A_STATS_MAX + 1];

	if (kernel_parse(msg, tb))
		return NL_SKIP;
	if (tb[IMEX_A_MAX_CHANNELS])
		m->max_channels = nla_get_u32(tb[IMEX_A_MAX_CHANNELS]);
	if (!tb[IMEX_A_STATS] ||
	    nla_parse_nested(st, IMEX_A_STATS_MAX, tb[IMEX_A_STATS], NULL))
		return NL_OK;
	m->kernel.present = true;
	for (int a = IMEX_A_STATS_EXPORTS; a < IMEX_A_STATS_PAD; a++) {
		uint64_t v;

		if (!st[a] || nla_len(st[a]) != sizeof(uint64_t))
			continue;
		v = nla_get_u64(st[a]);
		if (a == IMEX_A_STATS_EXPORTS)
			m->kernel.exports = v;
		else if (a == IMEX_A_STATS_IMPORTS)
			m->kernel.imports = v;
		else
			m->kernel.import_refused[a - IMEX_A_STATS_REFUSED_PERMISSION] = v;
	}
	return NL_OK;
}

/* One domain of the dump, members from its do reply (on_members). */
static int on_domain(struct nl_msg *msg, void *arg)
{
	struct doms *d = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];
	struct imexd_metrics_domain *e;

	if (kernel_parse(msg, tb) || !tb[IMEX_A_DOMAIN_NAME])
		return NL_SKIP;
	if (d->n == IMEX_DOMAINS_MAX) {
		d->err = -E2BIG;
		return NL_SKIP;
	}
	e = &d->v[d->n++];
	memset(e, 0, sizeof(*e));
	kernel_get_str(e->name, sizeof(e->name), tb[IMEX_A_DOMAIN_NAME]);
	if (tb[IMEX_A_DOMAIN_STATE])
		e->state = nla_get_u32(tb[IMEX_A_DOMAIN_STATE]);
	if (tb[IMEX_A_CHANNEL_COUNT])
		e->channels = nla_get_u32(tb[IMEX_A_CHANNEL_COUNT]);
	return NL_OK;
}

static int on_members(struct nl_msg *msg, void *arg)
{
	struct imexd_metrics_domain *e = arg;
	struct nlattr *tb[IMEX_A_MAX + 1], *a;
	int rem;

	if (kernel_parse(msg, tb) || !tb[IMEX_A_MEMBERS])
		return NL_SKIP;
	memset(e->members, 0, sizeof(e->members));
	nla_for_each_nested(a, tb[IMEX_A_MEMBERS], rem) {
		struct nlattr *mt[IMEX_A_MEMBER_MAX + 1];
		uint32_t s = IMEX_MEMBER_UNKNOWN;

		if (nla_parse_nested(mt, IMEX_A_MEMBER_MAX, a, NULL))
			continue;
		if (mt[IMEX_A_MEMBER_STATE])
			s = nla_get_u32(mt[IMEX_A_MEMBER_STATE]);
		e->members[s < __IMEX_MEMBER_STATE_MAX ? s : IMEX_MEMBER_UNKNOWN]++;
	}
	return NL_OK;
}

static int read_kernel(struct imexd_kernel *k, struct imexd_metrics_state *st,
		       struct imexd_metrics *m, char *msg, size_t msglen)
{
	struct doms d = { .v = st->domains };
	bool intr = false;
	int r;

	r = kernel_transact(k, kernel_msg_new(k, IMEX_CMD_NODE_GET, 0, 0),
			    on_node, m, NULL, msg, msglen);
	if (r)
		return r;
	r = kernel_transact(k, kernel_msg_new(k, IMEX_CMD_DOMAIN_GET, NLM_F_DUMP, 0),
			    on_domain, &d, &intr, msg, msglen);
	if (!r && d.err)
		r = d.err;
	if (r)
		return r;
	for (size_t i = 0; i < d.n; i++) {
		struct nl_msg *q = kernel_msg_new(k, IMEX_CMD_DOMAIN_GET, 0, 0);

		if (q && nla_put_string(q, IMEX_A_DOMAIN_NAME, d.v[i].name)) {
			nlmsg_free(q);
			q = NULL;
		}
		r = kernel_transact(k, q, on_members, &d.v[i], NULL, msg, msglen);
		if (r == -ENOENT)	/* deleted meanwhile: the next round */
			continue;
		if (r)
			return r;
	}
	m->domains = d.v;
	m->ndomains = d.n;
	return 0;
}

static enum imexd_metrics_role role_of(const struct imexd_node_member *me)
{
	if (me->leader)
		return IMEXD_ROLE_LEADER;
	switch (me->role) {
	case RAFT_VOTER:
		return IMEXD_ROLE_VOTER;
	case RAFT_STANDBY:
		return IMEXD_ROLE_STANDBY;
	case RAFT_SPARE:
		return IMEXD_ROLE_SPARE;
	default:
		return IMEXD_ROLE_NONE;
	}
}

/*
 * Peers from the group's members; a reconnect is a peer seen connected
 * after it was seen not connected (sampled at each collection).
 */
static void read_peers(const struct imexd_node *core,
		       struct imexd_metrics_state *st, struct imexd_metrics *m)
{
	struct imexd_node_group g;
	size_t n, np = 0;

	n = imexd_node_members(core, &g, st->members, IMEXD_METRICS_PEERS_MAX);
	m->role = IMEXD_ROLE_NONE;
	for (size_t i = 0; i < n; i++) {
		const struct imexd_node_member *e = &st->members[i];
		struct imexd_metrics_track *p = &st->next[np];
		const struct imexd_metrics_track *old = NULL;

		if (e->self) {
			if (g.member)
				m->role = role_of(e);
			continue;
		}
		for (size_t j = 0; j < st->npeers; j++)
			if (!strcmp(st->peers[j].name, e->name))
				old = &st->peers[j];
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", e->name);
		p->connected = e->connected;
		p->ever_up = e->connected || (old && old->ever_up);
		p->reconnects = old ? old->reconnects : 0;
		if (e->connected && old && !old->connected && old->ever_up)
			p->reconnects++;
		np++;
	}
	memcpy(st->peers, st->next, np * sizeof(*st->peers));
	st->npeers = np;
	for (size_t i = 0; i < np; i++) {
		snprintf(st->out[i].name, sizeof(st->out[i].name), "%s",
			 st->peers[i].name);
		st->out[i].connected = st->peers[i].connected;
		st->out[i].reconnects = st->peers[i].reconnects;
	}
	m->peers = st->out;
	m->npeers = np;
}

int imexd_metrics_state_init(struct imexd_metrics_state *st)
{
	memset(st, 0, sizeof(*st));
	st->domains = calloc(IMEX_DOMAINS_MAX, sizeof(*st->domains));
	st->members = calloc(IMEXD_METRICS_PEERS_MAX, sizeof(*st->members));
	st->peers = calloc(IMEXD_METRICS_PEERS_MAX, sizeof(*st->peers));
	st->next = calloc(IMEXD_METRICS_PEERS_MAX, sizeof(*st->next));
	st->out = calloc(IMEXD_METRICS_PEERS_MAX, sizeof(*st->out));
	if (!st->domains || !st->members || !st->peers || !st->next || !st->out) {
		imexd_metrics_state_free(st);
		return -ENOMEM;
	}
	return 0;
}

void imexd_metrics_state_free(struct imexd_metrics_state *st)
{
	free(st->domains);
	free(st->members);
	free(st->peers);
	free(st->next);
	free(st->out);
	memset(st, 0, sizeof(*st));
}

int imexd_metrics_collect(struct imexd_kernel *k,
			  const struct imexd_node *core, bool attached,
			  struct imexd_metrics_state *st,
			  struct imexd_metrics *m, char *msg, size_t msglen)
{
	const struct imexd_agree *ag;
	const struct imexd_broker *b;
	int r;

	m->attached = attached;
	r = read_kernel(k, st, m, msg, msglen);
	if (r)
		return r;
	if (!core)
		return 0;
	read_peers(core, st, m);
	ag = imexd_node_agree(core);
	if (ag)
		m->commit = *imexd_agree_commit_latency(ag);
	b = imexd_node_broker(core);
	if (b)
		memcpy(m->remote_refused, imexd_broker_refusals(b),
		       sizeof(m->remote_refused));
	return 0;
}
