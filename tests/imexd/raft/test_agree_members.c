// SPDX-License-Identifier: GPL-2.0
/*
 * The agreement part's membership on the in-test network: joins and
 * leaves, a lost leader during a leave, a forwarded join checked by the
 * leader, the leader's own leave, a create racing a leave, the kernel
 * step of a dropped member, a leave refused for an unreachable voter.
 * See test_agree.c.
 */
#include "test_agree.h"

/*
 * n4 is outside NODES_FILE (n0..n3): it waits, never forms a group.  A
 * join asked on a follower reaches the leader; a join with another
 * fabric identity is refused and says both; n4 then takes part (it
 * reports its identity, a domain naming it is made and reaches its
 * kernel).  A leave of a node a domain names is refused and names the
 * domain; a leave of another node removes it.  Every node restarts: the
 * membership is the log's, though NODES_FILE still lacks n4.
 */
void test_join_and_leave(void **state)
{
	static const uint8_t other[16] = { 0x07 };
	static const char *const m24[] = { "n2", "n4" };
	struct tnet *t = net_new(4);
	unsigned l, f, i, gone;

	(void)state;
	l = settled_leader(t, 4);
	assert_non_null(cons_of(t, 4));
	assert_int_equal(role_at(t, 4, "n4"), -1);
	assert_int_equal(imexd_cons_term(cons_of(t, 4)), 0);
	assert_int_equal(role_at(t, l, "n4"), -1);
	f = (l + 1) % 4;

	/* Another fabric (in n4's own HELLO): refused, nothing changes. */
	t->nodes[4].hello_fabric = other;
	request_node(t, f, 1, IMEXD_CMD_NODE_JOIN, "n4", "", fabric);
	wait_done(t, 1, 5 * ET);
	t->nodes[4].hello_fabric = NULL;
	assert_int_equal(t->done[1].error, EXDEV);
	assert_non_null(strstr(t->done[1].message, "node 'n4' reports fabric 07000000-"));
	assert_non_null(strstr(t->done[1].message, "not joined"));
	assert_int_equal(role_at(t, l, "n4"), -1);

	/* The same fabric: joined as standby, promoted to keep 5 voters. */
	request_node(t, f, 2, IMEXD_CMD_NODE_JOIN, "n4", "192.0.2.4", fabric);
	wait_done(t, 2, 5 * ET);
	assert_int_equal(t->done[2].error, 0);
	run_for(t, 3 * ET);
	l = leader_of(t);
	assert_true(l < NN);
	assert_int_equal(role_at(t, l, "n4"), RAFT_VOTER);
	assert_string_equal(imexd_cons_addr(cons_of(t, l),
					    imexd_cons_name_id("n4")), "192.0.2.4");
	assert_non_null(imexd_fsm_node(imexd_agree_fsm(t->nodes[4].ag), "n4"));
	/* Joined twice: refused. */
	request_node(t, 4, 3, IMEXD_CMD_NODE_JOIN, "n4", "", fabric);
	wait_done(t, 3, 5 * ET);
	assert_int_equal(t->done[3].error, EALREADY);

	/* A domain naming n4 reaches n4's kernel. */
	request_create(t, 4, 4, "d1", m24, 2);
	wait_done(t, 4, 5 * ET);
	assert_int_equal(t->done[4].error, 0);
	{
		/* Its commit is in the leader's latency histogram. */
		const struct imexd_metrics_hist *h =
			imexd_agree_commit_latency(t->nodes[leader_of(t)].ag);
		uint64_t sum = 0;

		assert_true(h->count >= 1);
		for (int b = 0; b < IMEXD_METRICS_HIST_BUCKETS; b++)
			sum += h->bucket[b];
		assert_true(sum <= h->count);
	}
	run_for(t, ET);
	assert_int_equal(t->nodes[4].nk, 1);
	assert_string_equal(t->nodes[4].kernel[0].name, "d1");

	/* Leave of a node d1 names: refused, the message names d1. */
	request_node(t, 0, 5, IMEXD_CMD_NODE_LEAVE, "n2", "", NULL);
	wait_done(t, 5, 5 * ET);
	assert_int_equal(t->done[5].error, EBUSY);
	assert_non_null(strstr(t->done[5].message, "domain 'd1'"));
	l = leader_of(t);
	assert_true(role_at(t, l, "n2") >= 0);

	/* Leave of a node no domain names (not the leader). */
	gone = l == 1 ? 3 : 1;
	{
		char name[8];

		snprintf(name, sizeof(name), "n%u", gone);
		request_node(t, 4, 6, IMEXD_CMD_NODE_LEAVE, name, "", NULL);
		wait_done(t, 6, 5 * ET);
		assert_int_equal(t->done[6].error, 0);
		run_for(t, 3 * ET);
		/* It was told, once, in its own log. */
		assert_int_equal(t->nodes[gone].leaving_lines, 1);
		assert_int_equal(t->nodes[gone].removed_lines, 0);
		assert_int_equal(t->nodes[l == 0 ? 2 : 0].leaving_lines, 0);
		l = leader_of(t);
		assert_int_equal(role_at(t, l, name), -1);
		assert_int_equal(imexd_cons_members(cons_of(t, l))->n, 4);
		/* Out of the table too: no domain can name it. */
		assert_null(imexd_fsm_node(imexd_agree_fsm(t->nodes[l].ag), name));
		/* Not a member: a second leave says so. */
		request_node(t, 0 == gone ? 2 : 0, 7, IMEXD_CMD_NODE_LEAVE,
			     name, "", NULL);
		wait_done(t, 7, 5 * ET);
		assert_int_equal(t->done[7].error, ENOENT);
	}
	node_stop(t, gone);

	/* Everyone restarts from storage: n4 is still in, gone still out. */
	for (i = 0; i < NN; i++)
		if (t->nodes[i].ag)
			node_stop(t, i);
	for (i = 0; i < NN; i++)
		if (i != gone)
			node_start(t, i);
	l = settled_leader(t, NN);
	assert_true(l != gone);
	assert_int_equal(imexd_cons_members(cons_of(t, l))->n, 4);
	assert_true(role_at(t, l, "n4") >= 0);
	assert_int_equal(role_at(t, l, t->nodes[gone].name), -1);
	request_create(t, 4, 8, "d2", m24, 2);
	wait_done(t, 8, 5 * ET);
	assert_int_equal(t->done[8].error, 0);
	net_free(t);
}

/* Node i powers off: its queued messages are lost with it. */
static void power_off(struct tnet *t, unsigned i)
{
	size_t k, j = 0;

	node_stop(t, i);
	for (k = 0; k < t->nq; k++) {
		if (t->q[k].from == i)
			free(t->q[k].data);
		else
			t->q[j++] = t->q[k];
	}
	t->nq = j;
}

/*
 * A leave asked on a follower; its leader powers off after the node is
 * out of the configuration and before the table step is everywhere.  The
 * follower forwards the leave again to the new leader, which finishes the
 * table step (or finds it done): the node ends out of both.
 */
void test_leave_leader_lost(void **state)
{
	struct tnet *t = net_new(5);
	unsigned l, f, v, nl, out_for = 0, ms;
	char name[8];

	(void)state;
	l = settled_leader(t, NN);
	f = (l + 1) % NN;
	v = (l + 2) % NN;
	snprintf(name, sizeof(name), "n%u", v);
	request_node(t, f, 1, IMEXD_CMD_NODE_LEAVE, name, "", NULL);
	for (ms = 0; ms < 100 && out_for < 2; ms++) {
		run_for(t, 1);
		out_for = role_at(t, l, name) == -1 ? out_for + 1 : 0;
	}
	assert_int_equal(out_for, 2);
	assert_false(t->done[1].done);
	power_off(t, l);
	wait_done(t, 1, 10 * ET);
	if (t->done[1].error)
		assert_non_null(strstr(t->done[1].message,
				       "the lost leader may have made it"));
	assert_true(t->done[1].error == 0 || t->done[1].error == ENOENT);
	run_for(t, 3 * ET);
	nl = leader_of(t);
	assert_true(nl < NN && nl != l);
	assert_int_equal(role_at(t, nl, name), -1);
	assert_null(imexd_fsm_node(imexd_agree_fsm(t->nodes[nl].ag), name));
	net_free(t);
}

static void forward_node(struct tnet *t, unsigned l, const char *from,
			 uint64_t tag, uint8_t type, const char *name)
{
	struct imexd_cmd cmd;
	uint8_t *buf;
	size_t len;

	memset(&cmd, 0, sizeof(cmd));
	cmd.type = type;
	snprintf(cmd.u.node.name, sizeof(cmd.u.node.name), "%s", name);
	if (type == IMEXD_CMD_NODE_JOIN) {
		snprintf(cmd.u.node.addr, sizeof(cmd.u.node.addr), "203.0.113.9:1");
		memcpy(cmd.u.node.fabric_uuid, fabric, 16);
	}
	assert_int_equal(imexd_cmd_encode(&cmd, &buf, &len, NULL), 0);
	drain(t, l, imexd_agree_forwarded(t->nodes[l].ag, t->now, from, tag,
					  buf, len));
	free(buf);
}

/*
 * A member forwards a NODE_JOIN of a node that never said HELLO, with a
 * copied fabric identity: the leader checks the node itself (JOIN_CHECK)
 * and, with no HELLO, never adds it.  A forwarded join of a waiting node
 * takes the fabric identity of that node's own HELLO, not the request's.
 * A forwarded leave from a member is carried out (root on a member
 * administers the group).
 */
void test_forwarded_join_checked_by_leader(void **state)
{
	static const uint8_t other[16] = { 0x07 };
	struct tnet *t = net_new(4);
	unsigned l, s, victim;

	(void)state;
	l = settled_leader(t, 4);
	s = (l + 1) % 4;
	victim = (l + 2) % 4;
	forward_node(t, l, t->nodes[s].name, 901, IMEXD_CMD_NODE_JOIN, "rogue");
	run_for(t, 3 * ET);
	l = leader_of(t);
	assert_int_equal(role_at(t, l, "rogue"), -1);
	/* n4 waits to be joined, its HELLO says another fabric. */
	t->nodes[4].hello_fabric = other;
	forward_node(t, l, t->nodes[s].name, 902, IMEXD_CMD_NODE_JOIN, "n4");
	run_for(t, 3 * ET);
	l = leader_of(t);
	assert_int_equal(role_at(t, l, "n4"), -1);
	t->nodes[4].hello_fabric = NULL;
	forward_node(t, l, t->nodes[s].name, 903, IMEXD_CMD_NODE_JOIN, "n4");
	run_for(t, 3 * ET);
	l = leader_of(t);
	assert_true(role_at(t, l, "n4") >= 0);
	forward_node(t, l, t->nodes[s].name, 904, IMEXD_CMD_NODE_LEAVE,
		     t->nodes[victim].name);
	run_for(t, 5 * ET);
	l = leader_of(t);
	assert_int_equal(role_at(t, l, t->nodes[victim].name), -1);
	assert_int_equal(role_at(t, l, "rogue"), -1);
	net_free(t);
}

/*
 * A leave of the leader, asked on the leader, in a group of two (one
 * voter): it promotes the other node, hands it leadership, and the leave
 * goes on to the new leader, which carries it out.
 */
void test_leave_of_the_leader_hands_over(void **state)
{
	struct tnet *t = net_new(2);
	unsigned l, nl;

	(void)state;
	l = settled_leader(t, 2);
	request_node(t, l, 1, IMEXD_CMD_NODE_LEAVE, t->nodes[l].name, "",
		     NULL);
	wait_done(t, 1, 5 * ET);
	printf("  %d '%s'\n", t->done[1].error, t->done[1].message);
	assert_int_equal(t->done[1].error, 0);
	run_for(t, ET);
	nl = leader_of(t);
	assert_int_equal(nl, 1 - l);
	assert_int_equal(role_at(t, nl, t->nodes[l].name), -1);
	assert_null(imexd_fsm_node(imexd_agree_fsm(t->nodes[nl].ag),
				   t->nodes[l].name));
	assert_int_equal(t->nodes[l].leaving_lines, 1);
	net_free(t);
}

/*
 * A create naming a node and a leave of that node at once: the leave's
 * table step (marking the node leaving) and the create are ordered by the
 * log, so either the create is refused or the leave is; never a domain
 * naming a node out of the group.
 */
void test_create_and_leave_at_once(void **state)
{
	struct tnet *t = net_new(4);
	const char *m[2];
	unsigned l, f, victim;

	(void)state;
	l = settled_leader(t, 4);
	f = (l + 1) % 4;
	victim = (l + 2) % 4;
	m[0] = t->nodes[f].name;
	m[1] = t->nodes[victim].name;
	request_create(t, f, 10, "race", m, 2);
	request_node(t, l, 11, IMEXD_CMD_NODE_LEAVE, t->nodes[victim].name,
		     "", NULL);
	wait_done(t, 10, 5 * ET);
	wait_done(t, 11, 5 * ET);
	l = leader_of(t);
	printf("  create: %d '%s'\n  leave: %d '%s'\n  victim role %d, domain %s\n",
	       t->done[10].error, t->done[10].message, t->done[11].error,
	       t->done[11].message, role_at(t, l, t->nodes[victim].name),
	       imexd_fsm_domain(imexd_agree_fsm(t->nodes[l].ag), "race") ?
	       "exists" : "absent");
	assert_true(!t->done[10].error != !t->done[11].error);
	assert_false(!t->done[10].error &&
		     role_at(t, l, t->nodes[victim].name) < 0);
	assert_false(!t->done[11].error &&
		     imexd_fsm_domain(imexd_agree_fsm(t->nodes[l].ag), "race"));
	net_free(t);
}

/*
 * An evicted member leaves the kernel's list of the others: their SET
 * step carries the kernel's list before it (the imports of its exports go
 * on that), once; a restart that replays the log finds the kernel's list
 * already without it and reports nothing again.
 */
void test_kernel_step_names_members_dropped(void **state)
{
	static const char *const m[3] = { "n0", "n1", "n2" };
	struct tnet *t = net_new(3);
	struct imexd_cmd cmd;
	unsigned l, i;

	(void)state;
	l = settled_leader(t, 3);
	request_create(t, l, 1, "d", m, 3);
	wait_done(t, 1, 5 * ET);
	assert_int_equal(t->done[1].error, 0);
	run_for(t, 2 * ET);
	for (i = 0; i < 3; i++)
		assert_int_equal(t->nodes[i].dropped, 0);
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = IMEXD_CMD_MEMBER_EVICT;
	snprintf(cmd.u.evict.name, sizeof(cmd.u.evict.name), "d");
	snprintf(cmd.u.evict.member, sizeof(cmd.u.evict.member), "n2");
	t->done[2].done = false;
	drain(t, l, imexd_agree_request(t->nodes[l].ag, t->now, &cmd, 2));
	wait_done(t, 2, 5 * ET);
	assert_int_equal(t->done[2].error, 0);
	run_for(t, 2 * ET);
	assert_int_equal(t->nodes[0].dropped, 1);
	assert_int_equal(t->nodes[1].dropped, 1);
	node_stop(t, 0);
	node_start(t, 0);
	run_for(t, 10 * ET);
	assert_int_equal(t->nodes[0].dropped, 1);
	net_free(t);
}

/*
 * Voters n0..n2, one powered off a moment ago: a leave of another voter
 * would leave a configuration that needs the off one.  Refused at once
 * (EBUSY), the message names the unreachable voter; nothing changed.
 */
void test_leave_refused_names_unreachable_voter(void **state)
{
	struct tnet *t = net_new(3);
	unsigned l, b, c;

	(void)state;
	l = settled_leader(t, 3);
	b = (l + 1) % 3;
	c = (l + 2) % 3;
	power_off(t, c);
	run_for(t, ET);
	request_node(t, l, 1, IMEXD_CMD_NODE_LEAVE, t->nodes[b].name, "",
		     NULL);
	wait_done(t, 1, ET);
	printf("  %d '%s'\n", t->done[1].error, t->done[1].message);
	assert_int_equal(t->done[1].error, EBUSY);
	assert_non_null(strstr(t->done[1].message, t->nodes[c].name));
	assert_non_null(strstr(t->done[1].message, "unreachable"));
	assert_int_equal(role_at(t, l, t->nodes[b].name), RAFT_VOTER);
	net_free(t);
}
