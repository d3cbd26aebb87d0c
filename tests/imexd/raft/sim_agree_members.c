// SPDX-License-Identifier: GPL-2.0
/*
 * The node simulator's membership scenarios (see sim_agree.c): a node
 * joining a running group, a node away during a join, and a wrong
 * NODES_FILE on some nodes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_agree.h"

static const struct imexd_cons *cons_at(struct sw *w, unsigned i)
{
	return sw_up(w, i) ? imexd_agree_cons(imexd_node_agree(sw_node(w, i))) :
			     NULL;
}

/* Whether a running node other than `gone` still holds a HELLO of it. */
static bool hello_kept(struct sw *w, unsigned gone)
{
	unsigned i;
	size_t k;

	for (i = 0; i < sw_n(w); i++) {
		const struct imexd_node *n = sw_up(w, i) ? sw_node(w, i) : NULL;

		for (k = 0; n && i != gone && k < n->n_hellos; k++)
			if (!strcmp(n->hellos[k].name, sw_name(w, gone)))
				return true;
	}
	return false;
}

/* The group of NODES_FILE (the first four nodes) runs: one leader among
 * them, their identities in its table. */
static bool four_up(struct sw *w)
{
	int l = sw_leader(w);

	return l >= 0 && l < 4 &&
	       imexd_fsm_node_count(sw_fsm(w, (unsigned)l)) == 4;
}

/* n004 is a member and its table holds every member's identity. */
static bool joined(struct sw *w)
{
	const struct imexd_cons *c = cons_at(w, 4);

	return c && imexd_cons_role(c, imexd_cons_self(c)) >= 0 &&
	       imexd_fsm_node(sw_fsm(w, 4), "n004") &&
	       imexd_fsm_node_count(sw_fsm(w, 4)) == 5;
}

/* Domain joined_create READY at its generation on n004. */
static const struct sw_req *joined_create;

static bool ready_on_4(struct sw *w)
{
	const struct sw_status *st;

	if (!joined_create->done || joined_create->error)
		return joined_create->done;
	st = sw_status_of(w, 4, joined_create->def.uuid);
	return st && st->state == IMEX_DOMAIN_READY &&
	       st->generation == joined_create->def.generation;
}

static void mk_node(struct req_buf *b, uint32_t cmd, struct sw *w,
		    unsigned node, bool addr)
{
	memset(b, 0, sizeof(*b));
	b->r.cmd = cmd;
	snprintf(b->r.member, sizeof(b->r.member), "%s", sw_name(w, node));
	if (addr)
		snprintf(b->r.addr, sizeof(b->r.addr), "%s:%u",
			 sw_name(w, node), (unsigned int)IMEXD_DEFAULT_PORT);
}

/*
 * Membership: n000..n003 form the group (NODES_FILE); n004 runs with the
 * same file, outside it, and waits.  It is joined at a follower, a domain
 * naming it is made and reaches READY on it; a node no domain names (not
 * the leader) leaves and goes away for good; a leave of a node a domain
 * names is refused; more changes commit; the history check is clean.
 */
unsigned membership(unsigned seed)
{
	struct sw_config cfg = world_config(5, seed);
	unsigned l, f, gone, v, m[2];
	struct sw_req *r;
	struct req_buf rb;
	struct sw *w;

	cfg.n_roster = 4;
	w = sw_new(&cfg);
	EXPECT(w, sw_run_pred(w, 50 * ET, four_up));
	l = leader_or_0(w);
	EXPECT(w, imexd_cons_role(cons_at(w, l), imexd_cons_name_id("n004")) < 0);
	EXPECT(w, imexd_cons_term(cons_at(w, 4)) == 0);
	f = (l + 1) % 4;
	mk_node(&rb, IMEX_CMD_NODE_JOIN, w, 4, true);
	r = request(w, f, &rb);
	EXPECT(w, r && r->done && !r->error);
	EXPECT(w, sw_run_pred(w, 20 * ET, joined));
	/* It took the group's id, and stored it. */
	l = leader_or_0(w);
	EXPECT(w, imexd_cons_group(cons_at(w, 4)) &&
		  imexd_cons_group(cons_at(w, 4)) ==
		  imexd_cons_group(cons_at(w, l)));
	EXPECT(w, imexd_raftlog_group(sw_log(w, 4)) ==
		  imexd_cons_group(cons_at(w, l)));
	m[0] = 4;
	m[1] = f;
	mk_create(&rb, w, "J", 0x4a, m, 2, 2, NULL, 0);
	joined_create = r = request(w, 4, &rb);
	EXPECT(w, r && r->done && !r->error && r->def.nchannels == 2);
	EXPECT(w, r && sw_run_pred(w, 20 * ET, ready_on_4));
	/* A leave of a node J names: refused, naming J. */
	mk_node(&rb, IMEX_CMD_NODE_LEAVE, w, f, false);
	r = request(w, 4, &rb);
	EXPECT(w, r && r->done && r->error == EBUSY &&
		  strstr(r->message, "domain 'J'"));
	/* A node no domain names leaves, and goes. */
	l = leader_or_0(w);
	for (gone = 0; gone < 4 && (gone == l || gone == f); gone++)
		;
	mk_node(&rb, IMEX_CMD_NODE_LEAVE, w, gone, false);
	r = request(w, 4, &rb);
	EXPECT(w, r && r->done && !r->error);
	sw_retire(w, gone);
	l = leader_or_0(w);
	EXPECT(w, imexd_cons_role(cons_at(w, l),
				  imexd_cons_name_id(sw_name(w, gone))) < 0);
	EXPECT(w, imexd_cons_members(cons_at(w, l))->n == 4);
	sw_run_for(w, 2 * ET);
	EXPECT(w, !hello_kept(w, gone));	/* its HELLO went with it */
	mk_create(&rb, w, "K", 0x4b, m, 2, 1, NULL, 0);
	r = request(w, f, &rb);
	EXPECT(w, r && r->done && !r->error);
	v = sw_check_final(w);
	sw_free(w);
	return v;
}

/* The node away during the join holds it: n004 is a member in its log
 * and its identity is in its table. */
static unsigned away_node;

static bool away_caught_up(struct sw *w)
{
	const struct imexd_cons *c = cons_at(w, away_node);

	return c && imexd_cons_role(c, imexd_cons_name_id("n004")) >= 0 &&
	       imexd_fsm_node(sw_fsm(w, away_node), "n004");
}

static bool n004_leads(struct sw *w)
{
	return sw_leader(w) == 4;
}

/* The leader made n004 a voter (the group of five wants five). */
static bool n004_votes(struct sw *w)
{
	int l = sw_leader(w);

	return l >= 0 && imexd_cons_role(cons_at(w, (unsigned)l),
					 imexd_cons_name_id("n004")) ==
			 RAFT_VOTER;
}

/*
 * A node away during a join comes back while the joined node leads, with
 * NODES_FILE unchanged (the group's four): it does not know n004, but
 * n004's HELLO carries the group's id, so it binds n004 and catches up
 * from it.  Once n004 votes, the other members are cut from each other
 * and from it, so only n004 can gather a majority (of pre-votes too), and
 * only n004 can catch the node up.
 */
unsigned away_during_join(unsigned seed)
{
	struct sw_config cfg = world_config(5, seed);
	struct req_buf rb;
	struct sw_req *r;
	unsigned l, i, j;
	struct sw *w;

	cfg.n_roster = 4;
	w = sw_new(&cfg);
	EXPECT(w, sw_run_pred(w, 50 * ET, four_up));
	l = leader_or_0(w);
	away_node = (l + 1) % 4;
	sw_crash(w, away_node);
	/* Long enough silent that the leader would not pick it to promote
	 * (a catch-up of a node that is down runs for 50 timeouts). */
	sw_run_for(w, 2 * ET);
	l = leader_or_0(w);
	mk_node(&rb, IMEX_CMD_NODE_JOIN, w, 4, true);
	r = request(w, l, &rb);
	EXPECT(w, r && r->done && !r->error);
	EXPECT(w, sw_run_pred(w, 20 * ET, joined));
	EXPECT(w, sw_run_pred(w, 100 * ET, n004_votes));
	for (i = 0; i < 4; i++)
		for (j = 0; j < 4; j++)
			if (i != j)
				sw_cut(w, i, j, true);
	EXPECT(w, sw_run_pred(w, 100 * ET, n004_leads));
	sw_restart(w, away_node);
	EXPECT(w, sw_run_pred(w, 50 * ET, away_caught_up));
	EXPECT(w, sw_bound(w, away_node, 4));
	EXPECT(w, imexd_cons_role(cons_at(w, away_node),
				  imexd_cons_name_id("n004")) >= 0);
	i = sw_check_final(w);
	sw_free(w);
	return i;
}

/* ---- a wrong NODES_FILE ---------------------------------------------------- */

#define WRONG_LINE "is in another group"

/* n000..n002 run the group (n003, n004 of its five are elsewhere): a
 * leader among them, their three identities in its table. */
static bool three_up(struct sw *w)
{
	int l = sw_leader(w);

	return l >= 0 && l < 3 &&
	       imexd_fsm_node_count(sw_fsm(w, (unsigned)l)) == 3;
}

/*
 * n000..n004 form the group, but n003 and n004 first start with a
 * NODES_FILE naming only n001..n004 (voters n001..n003).  Their bootstrap
 * entry differs from the others' at (term 1, index 1), which Raft cannot
 * see, and n001, n002 are voters of both: without the group id n003 wins
 * a vote of theirs.  With it the majority n000..n002 elects and commits;
 * no node of the group binds n003 or n004 (so takes no Raft message from
 * them), neither ever leads or joins the table, every node that meets
 * one of the other group logs the mismatch, and the history check finds
 * no divergence.
 */
unsigned wrong_nodes_file(unsigned seed)
{
	struct sw_config cfg = world_config(5, seed);
	unsigned i, j, step, m[3] = { 0, 1, 2 };
	struct sw_req *r;
	struct req_buf rb;
	struct sw *w;
	int l;

	cfg.other_mask = (1u << 3) | (1u << 4);
	cfg.other_first = 1;
	cfg.other_n = 4;
	cfg.watch = WRONG_LINE;
	w = sw_new(&cfg);
	EXPECT(w, sw_run_pred(w, 50 * ET, three_up));
	mk_create(&rb, w, "G", 0x47, m, 3, 2, NULL, 0);
	r = request(w, leader_or_0(w), &rb);
	EXPECT(w, r && r->done && !r->error && r->def.nchannels == 2);
	mk_create(&rb, w, "H", 0x48, m, 2, 1, NULL, 0);
	r = request(w, 1, &rb);
	EXPECT(w, r && r->done && !r->error);
	for (step = 0; step < 100; step++) {
		sw_run_for(w, ET / 2);
		l = sw_leader(w);
		EXPECT(w, l < 3);
		for (i = 3; i < 5; i++) {
			const struct imexd_cons *c = cons_at(w, i);

			EXPECT(w, !c || imexd_cons_state(c) != RAFT_LEADER);
			/* Nothing past its own bootstrap entry. */
			EXPECT(w, !c || imexd_cons_applied(c) <= 1);
		}
	}
	for (i = 0; i < 5; i++) {
		for (j = 0; j < 5; j++)
			if ((i < 3) != (j < 3))
				EXPECT(w, !sw_bound(w, i, j));
		/* n000 is in no roster of theirs: refused as such. */
		EXPECT(w, i == 0 || sw_watched(w, i) >= 1);
	}
	/* Once a minute per peer at most (the run is shorter). */
	for (i = 0; i < 3; i++)
		EXPECT(w, sw_watched(w, i) <= 2 * 2);
	l = (int)leader_or_0(w);
	EXPECT(w, imexd_fsm_node_count(sw_fsm(w, (unsigned)l)) == 3);
	EXPECT(w, !imexd_fsm_node(sw_fsm(w, (unsigned)l), "n003"));
	if (getenv("SIM_VERBOSE"))
		for (i = 0; i < 5; i++)
			printf("  %s: %u lines '%s'\n", sw_name(w, i),
			       sw_watched(w, i), WRONG_LINE);
	sw_retire(w, 3);
	sw_retire(w, 4);
	i = sw_check_final(w);
	sw_free(w);
	return i;
}
