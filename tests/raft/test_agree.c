// SPDX-License-Identifier: GPL-2.0
/*
 * The agreement part on its own: which stored logs a node starts from;
 * the group's membership (node join and leave) on a small in-test network
 * of agree parts (messages delivered in order after 1 ms, kernel steps done
 * at once); a peer's forwarded NODE_SET may report only its own identity,
 * a leader holds a bounded number of one peer's requests, and the lines
 * about messages dropped from a peer are rate-limited.  The cluster
 * behaviour under faults is the simulator's (sim_agree).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agree.h"
#include "metrics.h"
#include "raftwire.h"

/* Start a node of @roster on @disk; returns imexd_agree_start()'s value and
 * copies the LOG lines it queued into @logs. */
static int start_on(struct imexd_raftlog_mem *disk, const char *const *roster,
		    unsigned n, char *logs, size_t len)
{
	struct imexd_agree_config cfg = {
		.roster = roster, .n_roster = n, .self = "a",
	};
	struct imexd_raftlog_io io;
	struct imexd_raftlog *log = NULL;
	struct imexd_agree_action act;
	struct imexd_agree *ag = NULL;
	char note[256], err[256];
	int rv;

	imexd_raftlog_mem_io(disk, &io);
	assert_int_equal(imexd_raftlog_open(&log, &io, note, sizeof(note), err,
					    sizeof(err)), 0);
	snprintf(cfg.identity.name, sizeof(cfg.identity.name), "a");
	cfg.identity.uuid[0] = 1;
	cfg.identity.max_channels = 8;
	cfg.log = log;
	assert_int_equal(imexd_agree_new(&cfg, &ag), 0);
	rv = imexd_agree_start(ag, 1000, NULL, 0);
	logs[0] = '\0';
	while (imexd_agree_next(ag, &act))
		if (act.type == IMEXD_AGREE_LOG)
			snprintf(logs + strlen(logs), len - strlen(logs),
				 "%s\n", act.message);
	imexd_agree_free(ag);
	imexd_raftlog_close(log);
	return rv;
}

/* The log's configuration, not NODES_FILE, says who is in the group: a
 * changed NODES_FILE starts.  A log whose raft ids are roster positions
 * (an older imexd) is refused and the line names the group. */
static void test_which_logs_start(void **state)
{
	static const char *const abc[] = { "a", "b", "c" };
	static const char *const abd[] = { "a", "b", "d" };
	struct imexd_raftlog_mem *disk = imexd_raftlog_mem_new();
	struct raft_configuration conf;
	struct imexd_raftlog_io io;
	struct imexd_raftlog *log = NULL;
	struct raft_entry e;
	char logs[2048], note[256], err[256];
	unsigned i;

	(void)state;
	assert_non_null(disk);
	assert_int_equal(start_on(disk, abc, 3, logs, sizeof(logs)), 0);
	assert_int_equal(start_on(disk, (const char *const[]){ "c", "a", "b" },
				  3, logs, sizeof(logs)), 0);
	assert_int_equal(start_on(disk, abd, 3, logs, sizeof(logs)), 0);
	imexd_raftlog_mem_free(disk);

	/* An entry 1 with ids 1, 2, 3. */
	disk = imexd_raftlog_mem_new();
	assert_non_null(disk);
	imexd_raftlog_mem_io(disk, &io);
	assert_int_equal(imexd_raftlog_open(&log, &io, note, sizeof(note), err,
					    sizeof(err)), 0);
	raft_configuration_init(&conf);
	for (i = 0; i < 3; i++)
		assert_int_equal(raft_configuration_add(&conf, i + 1, abc[i],
							RAFT_VOTER), 0);
	memset(&e, 0, sizeof(e));
	e.term = 1;
	e.type = RAFT_CHANGE;
	assert_int_equal(raft_configuration_encode(&conf, &e.buf), 0);
	raft_configuration_close(&conf);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 1, 0), 0);
	assert_int_equal(imexd_raftlog_append(log, 1, &e, 1), 0);
	raft_free(e.buf.base);
	imexd_raftlog_close(log);
	assert_int_equal(start_on(disk, abc, 3, logs, sizeof(logs)), -ESTALE);
	assert_non_null(strstr(logs, "formed by nodes a, b, c"));
	imexd_raftlog_mem_free(disk);
}

/* ---- a small network of agree parts -------------------------------------- */

#define NN 5
#define ET ((uint64_t)1000)

static const uint8_t fabric[16] = { 0xfa, 0xb1 };

struct tmsg {
	enum imexd_agree_action_type type;
	unsigned from, to;
	uint64_t at, tag, index;
	uint8_t *data;
	size_t len;
	int error;
	char message[300];
};

struct tdone {
	bool done;
	int error;
	char message[300];
};

struct tnode {
	char name[8];
	struct imexd_raftlog_mem *disk;
	struct imexd_raftlog *log;
	struct imexd_agree *ag;
	struct imexd_def *kernel;
	size_t nk;
	const uint8_t *hello_fabric;	/* its HELLO's; NULL: fabric */
	unsigned leaving_lines, removed_lines;
	unsigned dropped;	/* SET steps whose kernel list had a member more */
};

struct tnet {
	uint64_t now;
	unsigned n_roster;
	struct tnode nodes[NN];
	struct tmsg *q;
	size_t nq, capq;
	struct tdone done[16];
};

static unsigned node_of(struct tnet *t, const char *name)
{
	unsigned i;

	for (i = 0; i < NN; i++)
		if (!strcmp(t->nodes[i].name, name))
			return i;
	fail_msg("no node %s", name);
	return 0;
}

static void kernel_step(struct tnode *nd, const struct imexd_agree_action *act)
{
	size_t i;

	for (i = 0; i < nd->nk; i++)
		if (!strcmp(nd->kernel[i].name, act->def->name))
			break;
	if (i < nd->nk) {
		imexd_def_free(&nd->kernel[i]);
		nd->kernel[i] = nd->kernel[--nd->nk];
	}
	if (act->step == IMEXD_REC_SET) {
		nd->kernel = realloc(nd->kernel, (nd->nk + 1) * sizeof(*nd->kernel));
		assert_non_null(nd->kernel);
		memset(&nd->kernel[nd->nk], 0, sizeof(*nd->kernel));
		assert_int_equal(imexd_def_copy(&nd->kernel[nd->nk], act->def), 0);
		nd->nk++;
	}
}

/* Drain node i's actions: messages queue up, kernel steps are done. */
static void drain(struct tnet *t, unsigned i, int rv)
{
	struct tnode *nd = &t->nodes[i];
	struct imexd_agree_action act;
	uint64_t checks[8];
	unsigned nchecks = 0, k, c;
	char checked[8][8];
	bool kdone = false;

	assert_int_equal(rv, 0);
	while (imexd_agree_next(nd->ag, &act)) {
		struct tmsg *m;

		switch (act.type) {
		case IMEXD_AGREE_SEND:
		case IMEXD_AGREE_FORWARD:
		case IMEXD_AGREE_REPLY:
			if (t->nq == t->capq) {
				t->capq = t->capq ? 2 * t->capq : 64;
				t->q = realloc(t->q, t->capq * sizeof(*t->q));
				assert_non_null(t->q);
			}
			m = &t->q[t->nq++];
			memset(m, 0, sizeof(*m));
			m->type = act.type;
			m->from = i;
			m->to = node_of(t, act.to);
			m->at = t->now + 1;
			m->tag = act.tag;
			m->index = act.index;
			m->error = act.error;
			snprintf(m->message, sizeof(m->message), "%s", act.message);
			m->len = act.len;
			m->data = malloc(act.len ? act.len : 1);
			assert_non_null(m->data);
			if (act.len)
				memcpy(m->data, act.data, act.len);
			break;
		case IMEXD_AGREE_DONE:
			assert_true(act.tag < 16);
			t->done[act.tag].done = true;
			t->done[act.tag].error = act.error;
			snprintf(t->done[act.tag].message,
				 sizeof(t->done[act.tag].message), "%s",
				 act.message);
			break;
		case IMEXD_AGREE_KERNEL:
			if (act.was && act.was->nmembers > act.def->nmembers)
				nd->dropped++;
			kernel_step(nd, &act);
			kdone = true;
			break;
		case IMEXD_AGREE_LOG:
			if (strstr(act.message, "this node is leaving the group"))
				nd->leaving_lines++;
			if (strstr(act.message, "removed from the group by entry"))
				nd->removed_lines++;
			break;
		case IMEXD_AGREE_JOIN_CHECK:
			/* The joining node's HELLO: one of the net's running
			 * nodes answers; any other name never does. */
			assert_true(nchecks < 8);
			checks[nchecks] = act.tag;
			snprintf(checked[nchecks++], 8, "%s", act.to);
			break;
		default:
			break;
		}
	}
	if (kdone)
		drain(t, i, imexd_agree_kernel_done(nd->ag, t->now, 0,
						    nd->kernel, nd->nk));
	for (k = 0; k < nchecks; k++)
		for (c = 0; c < NN; c++)
			if (!strcmp(t->nodes[c].name, checked[k]) &&
			    t->nodes[c].ag)
				drain(t, i, imexd_agree_join_checked(
					nd->ag, t->now, checks[k],
					t->nodes[c].hello_fabric ?
					t->nodes[c].hello_fabric : fabric,
					0, 0));
}

static void node_start(struct tnet *t, unsigned i)
{
	static const char *roster[NN] = { "n0", "n1", "n2", "n3", "n4" };
	struct tnode *nd = &t->nodes[i];
	struct imexd_agree_config cfg = {
		.roster = roster, .n_roster = t->n_roster, .self = nd->name,
		.election_timeout_ms = (unsigned)ET, .seed = 7 + i,
	};
	struct imexd_raftlog_io io;
	char note[256], err[256];

	imexd_raftlog_mem_io(nd->disk, &io);
	assert_int_equal(imexd_raftlog_open(&nd->log, &io, note, sizeof(note),
					    err, sizeof(err)), 0);
	snprintf(cfg.identity.name, sizeof(cfg.identity.name), "%s", nd->name);
	cfg.identity.uuid[0] = (uint8_t)(i + 1);
	memcpy(cfg.identity.fabric_uuid, fabric, 16);
	cfg.identity.max_channels = 8;
	cfg.log = nd->log;
	assert_int_equal(imexd_agree_new(&cfg, &nd->ag), 0);
	drain(t, i, imexd_agree_start(nd->ag, t->now, nd->kernel, nd->nk));
}

static void node_stop(struct tnet *t, unsigned i)
{
	struct tnode *nd = &t->nodes[i];

	imexd_agree_free(nd->ag);
	imexd_raftlog_close(nd->log);
	nd->ag = NULL;
	nd->log = NULL;
}

static struct tnet *net_new(unsigned n_roster)
{
	struct tnet *t = calloc(1, sizeof(*t));
	unsigned i;

	assert_non_null(t);
	t->now = 1000;
	t->n_roster = n_roster;
	for (i = 0; i < NN; i++) {
		snprintf(t->nodes[i].name, sizeof(t->nodes[i].name), "n%u", i);
		t->nodes[i].disk = imexd_raftlog_mem_new();
		assert_non_null(t->nodes[i].disk);
	}
	for (i = 0; i < NN; i++)
		node_start(t, i);
	return t;
}

static void net_free(struct tnet *t)
{
	unsigned i;
	size_t k;

	for (i = 0; i < NN; i++) {
		if (t->nodes[i].ag)
			node_stop(t, i);
		for (k = 0; k < t->nodes[i].nk; k++)
			imexd_def_free(&t->nodes[i].kernel[k]);
		free(t->nodes[i].kernel);
		imexd_raftlog_mem_free(t->nodes[i].disk);
	}
	for (k = 0; k < t->nq; k++)
		free(t->q[k].data);
	free(t->q);
	free(t);
}

static void deliver(struct tnet *t, struct tmsg *m)
{
	struct tnode *nd = &t->nodes[m->to];
	const char *from = t->nodes[m->from].name;
	struct imexd_def def;

	if (!nd->ag)
		return;
	switch (m->type) {
	case IMEXD_AGREE_SEND:
		drain(t, m->to, imexd_agree_receive(nd->ag, t->now, from,
						    m->data, m->len));
		break;
	case IMEXD_AGREE_FORWARD:
		drain(t, m->to, imexd_agree_forwarded(nd->ag, t->now, from,
						      m->tag, m->data, m->len));
		break;
	default:
		memset(&def, 0, sizeof(def));
		drain(t, m->to, imexd_agree_reply(nd->ag, t->now, from, m->tag,
						  m->error, m->message, &def,
						  m->index, NULL, 0));
		break;
	}
}

/* Run for ms: messages in order, timers when due. */
static void run_for(struct tnet *t, uint64_t ms)
{
	uint64_t end = t->now + ms;

	while (t->now < end) {
		uint64_t next = end;
		unsigned i;

		for (i = 0; i < NN; i++)
			if (t->nodes[i].ag &&
			    imexd_agree_timeout(t->nodes[i].ag) < next)
				next = imexd_agree_timeout(t->nodes[i].ag);
		if (t->nq && t->q[0].at < next)
			next = t->q[0].at;
		if (next > t->now)
			t->now = next;
		while (t->nq && t->q[0].at <= t->now) {
			struct tmsg m = t->q[0];

			memmove(t->q, t->q + 1, --t->nq * sizeof(*t->q));
			deliver(t, &m);
			free(m.data);
		}
		for (i = 0; i < NN; i++)
			if (t->nodes[i].ag &&
			    imexd_agree_timeout(t->nodes[i].ag) <= t->now)
				drain(t, i, imexd_agree_tick(t->nodes[i].ag,
							     t->now));
	}
}

static const struct imexd_cons *cons_of(struct tnet *t, unsigned i)
{
	return imexd_agree_cons(t->nodes[i].ag);
}

static int role_at(struct tnet *t, unsigned at, const char *name)
{
	return imexd_cons_role(cons_of(t, at), imexd_cons_name_id(name));
}

static unsigned leader_of(struct tnet *t)
{
	unsigned i;

	for (i = 0; i < NN; i++)
		if (t->nodes[i].ag && cons_of(t, i) &&
		    imexd_cons_state(cons_of(t, i)) == RAFT_LEADER)
			return i;
	return NN;
}

/* Let a group of @n settle (10 election timeouts): its leader's index. */
static unsigned settled_leader(struct tnet *t, unsigned n)
{
	unsigned l;

	run_for(t, 10 * ET);
	l = leader_of(t);
	assert_true(l < n);
	return l;
}

/* Run until request tag is done (at most limit ms). */
static void wait_done(struct tnet *t, uint64_t tag, uint64_t limit)
{
	uint64_t end = t->now + limit;

	while (!t->done[tag].done && t->now < end)
		run_for(t, 10);
	assert_true(t->done[tag].done);
}

static void request_node(struct tnet *t, unsigned at, uint64_t tag,
			 uint8_t type, const char *name, const char *addr,
			 const uint8_t fab[16])
{
	struct imexd_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.type = type;
	snprintf(cmd.u.node.name, sizeof(cmd.u.node.name), "%s", name);
	snprintf(cmd.u.node.addr, sizeof(cmd.u.node.addr), "%s", addr);
	if (fab)
		memcpy(cmd.u.node.fabric_uuid, fab, 16);
	t->done[tag].done = false;
	drain(t, at, imexd_agree_request(t->nodes[at].ag, t->now, &cmd, tag));
}

static void request_create(struct tnet *t, unsigned at, uint64_t tag,
			   const char *name, const char *const *members,
			   uint16_t n)
{
	struct imexd_member m[4];
	struct imexd_cmd cmd;
	uint16_t i;

	memset(&cmd, 0, sizeof(cmd));
	memset(m, 0, sizeof(m));
	cmd.type = IMEXD_CMD_DOMAIN_CREATE;
	snprintf(cmd.u.create.name, sizeof(cmd.u.create.name), "%s", name);
	cmd.u.create.uuid[0] = 0xd0;
	cmd.u.create.uuid[1] = (uint8_t)tag;
	for (i = 0; i < n; i++)
		snprintf(m[i].name, sizeof(m[i].name), "%s", members[i]);
	cmd.u.create.members = m;
	cmd.u.create.nmembers = n;
	cmd.u.create.ch.count = 1;
	cmd.u.create.ch.mode = 0600;
	t->done[tag].done = false;
	drain(t, at, imexd_agree_request(t->nodes[at].ag, t->now, &cmd, tag));
}

/*
 * n4 is outside NODES_FILE (n0..n3): it waits, never forms a group.  A
 * join asked on a follower reaches the leader; a join with another
 * fabric identity is refused and says both; n4 then takes part (it
 * reports its identity, a domain naming it is made and reaches its
 * kernel).  A leave of a node a domain names is refused and names the
 * domain; a leave of another node removes it.  Every node restarts: the
 * membership is the log's, though NODES_FILE still lacks n4.
 */
static void test_join_and_leave(void **state)
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
static void test_leave_leader_lost(void **state)
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
static void test_forwarded_join_checked_by_leader(void **state)
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
static void test_leave_of_the_leader_hands_over(void **state)
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

/* Log lines of node i's pending actions that contain `text`. */
static unsigned count_logs(struct tnet *t, unsigned i, const char *text)
{
	struct imexd_agree_action act;
	unsigned n = 0;

	while (imexd_agree_next(t->nodes[i].ag, &act))
		if (act.type == IMEXD_AGREE_LOG && strstr(act.message, text))
			n++;
	return n;
}

/*
 * A node outside the group (or a bad raft message) sending again and
 * again: one line a minute per name, not one per message.
 */
static void test_dropped_lines_limited_per_name(void **state)
{
	static const uint8_t junk[4] = { 1, 2, 3, 4 };
	struct tnet *t = net_new(3);
	unsigned k, lines = 0, raft = 0;

	(void)state;
	run_for(t, 10 * ET);
	for (k = 0; k < 100; k++) {
		assert_int_equal(imexd_agree_forwarded(t->nodes[0].ag, t->now,
						       "n4", k + 1, junk, 4), 0);
		lines += count_logs(t, 0, "request from n4 dropped");
		assert_int_equal(imexd_agree_receive(t->nodes[0].ag, t->now,
						     "n1", junk, 4), 0);
		raft += count_logs(t, 0, "raft message from n1 dropped");
	}
	assert_int_equal(lines, 1);
	assert_int_equal(raft, 1);
	t->now += 60000;
	assert_int_equal(imexd_agree_forwarded(t->nodes[0].ag, t->now, "n4",
					       200, junk, 4), 0);
	assert_int_equal(count_logs(t, 0, "request from n4 dropped"), 1);
	assert_int_equal(imexd_agree_forwarded(t->nodes[0].ag, t->now, "n3",
					       201, junk, 4), 0);
	assert_int_equal(count_logs(t, 0, "request from n3 dropped"), 1);
	net_free(t);
}

/*
 * A create naming a node and a leave of that node at once: the leave's
 * table step (marking the node leaving) and the create are ordered by the
 * log, so either the create is refused or the leave is; never a domain
 * naming a node out of the group.
 */
static void test_create_and_leave_at_once(void **state)
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
static void test_kernel_step_names_members_dropped(void **state)
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
 * A hostile peer of the group, not a member of domain d, forwards a
 * replace that would put it in d's place of a member: the leader refuses
 * it (EACCES) and d keeps its members.
 */
static void test_forwarded_replace_by_a_non_member_refused(void **state)
{
	struct tnet *t = net_new(3);
	const struct imexd_def *d;
	struct imexd_cmd cmd;
	const char *m[2];
	unsigned l, o, x;

	(void)state;
	l = settled_leader(t, 3);
	o = (l + 1) % 3;
	x = (l + 2) % 3;
	m[0] = t->nodes[l].name;
	m[1] = t->nodes[o].name;
	request_create(t, l, 1, "d", m, 2);
	wait_done(t, 1, 5 * ET);
	assert_int_equal(t->done[1].error, 0);
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = IMEXD_CMD_MEMBER_REPLACE;
	snprintf(cmd.u.replace.name, sizeof(cmd.u.replace.name), "d");
	snprintf(cmd.u.replace.member, sizeof(cmd.u.replace.member), "%s", m[1]);
	snprintf(cmd.u.replace.with, sizeof(cmd.u.replace.with), "%s",
		 t->nodes[x].name);
	t->done[2].done = false;
	drain(t, x, imexd_agree_request(t->nodes[x].ag, t->now, &cmd, 2));
	wait_done(t, 2, 5 * ET);
	printf("  replace from %s: %d '%s'\n", t->nodes[x].name,
	       t->done[2].error, t->done[2].message);
	assert_int_equal(t->done[2].error, EACCES);
	assert_non_null(strstr(t->done[2].message,
			       "may not change domain d, which does not name it"));
	d = imexd_fsm_domain(imexd_agree_fsm(t->nodes[l].ag), "d");
	assert_non_null(d);
	assert_true(imexd_def_has_member(d, m[1]));
	assert_false(imexd_def_has_member(d, t->nodes[x].name));
	net_free(t);
}

/* Drop the forwards queued from node @from: lost with a connection. */
static unsigned drop_forwards(struct tnet *t, unsigned from)
{
	size_t k = 0;
	unsigned n = 0;

	while (k < t->nq) {
		if (t->q[k].type != IMEXD_AGREE_FORWARD ||
		    t->q[k].from != from) {
			k++;
			continue;
		}
		free(t->q[k].data);
		memmove(&t->q[k], &t->q[k + 1],
			(t->nq - k - 1) * sizeof(*t->q));
		t->nq--;
		n++;
	}
	return n;
}

/*
 * The transport replaced the follower's connection to the leader (both
 * dialled at once) after a forward went on it: the create goes again and
 * is made; a channel allocation, which twice would be two, is answered
 * EAGAIN at once rather than at its timeout.  Another peer's replaced
 * connection changes nothing.
 */
static void test_forwards_again_on_replaced_connection(void **state)
{
	struct tnet *t = net_new(3);
	struct imexd_cmd cmd;
	const char *m[2];
	unsigned l, f, o;

	(void)state;
	l = settled_leader(t, 3);
	f = (l + 1) % 3;
	o = (l + 2) % 3;
	m[0] = t->nodes[l].name;
	m[1] = t->nodes[f].name;
	request_create(t, f, 1, "A", m, 2);
	assert_int_equal(drop_forwards(t, f), 1);
	drain(t, f, imexd_agree_peer_replaced(t->nodes[f].ag, t->now,
					      t->nodes[o].name));
	assert_int_equal(drop_forwards(t, f), 0);
	drain(t, f, imexd_agree_peer_replaced(t->nodes[f].ag, t->now,
					      t->nodes[l].name));
	assert_false(t->done[1].done);
	wait_done(t, 1, 5 * ET);
	assert_int_equal(t->done[1].error, 0);
	assert_non_null(imexd_fsm_domain(imexd_agree_fsm(t->nodes[l].ag), "A"));

	memset(&cmd, 0, sizeof(cmd));
	cmd.type = IMEXD_CMD_CHANNEL_ALLOC;
	snprintf(cmd.u.alloc.name, sizeof(cmd.u.alloc.name), "A");
	cmd.u.alloc.ch.count = 1;
	cmd.u.alloc.ch.mode = 0600;
	t->done[2].done = false;
	drain(t, f, imexd_agree_request(t->nodes[f].ag, t->now, &cmd, 2));
	assert_int_equal(drop_forwards(t, f), 1);
	drain(t, f, imexd_agree_peer_replaced(t->nodes[f].ag, t->now,
					      t->nodes[l].name));
	assert_true(t->done[2].done);
	assert_int_equal(t->done[2].error, EAGAIN);
	assert_non_null(strstr(t->done[2].message,
			       "connection to the leader was replaced"));
	assert_int_equal(drop_forwards(t, f), 0);
	net_free(t);
}

/*
 * Voters n0..n2, one powered off a moment ago: a leave of another voter
 * would leave a configuration that needs the off one.  Refused at once
 * (EBUSY), the message names the unreachable voter; nothing changed.
 */
static void test_leave_refused_names_unreachable_voter(void **state)
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

/* A forwarded NODE_SET may report only the sender's own identity. */
static void test_forwarded_identity_of_another_node_refused(void **state)
{
	static const char *const abc[] = { "a", "b", "c" };
	struct imexd_raftlog_mem *disk = imexd_raftlog_mem_new();
	struct imexd_agree_config cfg = {
		.roster = abc, .n_roster = 3, .self = "a",
	};
	struct imexd_cmd c = { .type = IMEXD_CMD_NODE_SET };
	struct imexd_raftlog *log = NULL;
	struct imexd_agree_action act;
	struct imexd_agree *ag = NULL;
	struct imexd_raftlog_io io;
	char note[256], err[256];
	unsigned replies = 0, logs = 0;
	uint64_t tag;
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_non_null(disk);
	imexd_raftlog_mem_io(disk, &io);
	assert_int_equal(imexd_raftlog_open(&log, &io, note, sizeof(note), err,
					    sizeof(err)), 0);
	snprintf(cfg.identity.name, sizeof(cfg.identity.name), "a");
	cfg.identity.uuid[0] = 1;
	cfg.identity.max_channels = 8;
	cfg.log = log;
	assert_int_equal(imexd_agree_new(&cfg, &ag), 0);
	assert_int_equal(imexd_agree_start(ag, 1000, NULL, 0), 0);
	while (imexd_agree_next(ag, &act))
		;

	/* b reports c's identity (twice: the second is not logged again). */
	snprintf(c.u.node_set.name, sizeof(c.u.node_set.name), "c");
	c.u.node_set.uuid[0] = 9;
	c.u.node_set.max_channels = 8;
	assert_int_equal(imexd_cmd_encode(&c, &buf, &len, NULL), 0);
	for (tag = 7; tag <= 8; tag++) {
		assert_int_equal(imexd_agree_forwarded(ag, 2000 + tag, "b", tag,
						       buf, len), 0);
		while (imexd_agree_next(ag, &act)) {
			if (act.type == IMEXD_AGREE_LOG) {
				assert_string_equal(act.message,
						    "request from b refused: node b may not report node c's identity");
				logs++;
			}
			if (act.type != IMEXD_AGREE_REPLY)
				continue;
			assert_int_equal(act.error, EACCES);
			assert_int_equal(act.tag, tag);
			assert_string_equal(act.to, "b");
			replies++;
		}
	}
	free(buf);
	assert_int_equal(replies, 2);
	assert_int_equal(logs, 1);

	/* Its own: not refused (it waits for a leader). */
	snprintf(c.u.node_set.name, sizeof(c.u.node_set.name), "b");
	assert_int_equal(imexd_cmd_encode(&c, &buf, &len, NULL), 0);
	assert_int_equal(imexd_agree_forwarded(ag, 2002, "b", 9, buf, len), 0);
	free(buf);
	while (imexd_agree_next(ag, &act))
		assert_false(act.type == IMEXD_AGREE_REPLY && act.error == EACCES);
	imexd_agree_free(ag);
	imexd_raftlog_close(log);
	imexd_raftlog_mem_free(disk);
}

/* Grant every RequestVote (pre-vote and vote) that @act carries to "b". */
static void grant(const struct imexd_agree_action *act, uint8_t **out,
		  size_t *len)
{
	struct raft_message m, res = { .type = RAFT_REQUEST_VOTE_RESULT };

	*out = NULL;
	if (act->type != IMEXD_AGREE_SEND || strcmp(act->to, "b") ||
	    imexd_raftwire_decode(act->data, act->len,
				  imexd_cons_name_id("a"), "a", &m, NULL))
		return;
	if (m.type == RAFT_REQUEST_VOTE) {
		res.request_vote_result.version =
			IMEXD_RAFTWIRE_V_REQUEST_VOTE_RESULT;
		res.request_vote_result.term = m.request_vote.term;
		res.request_vote_result.vote_granted = true;
		res.request_vote_result.pre_vote = m.request_vote.pre_vote;
		res.request_vote_result.features = IMEXD_RAFTWIRE_FEATURES;
		assert_int_equal(imexd_raftwire_encode(&res, out, len), 0);
	}
	imexd_raftwire_free(&m);
}

/*
 * A leader holds a forwarded request until it is applied: one peer may
 * have IMEXD_AGREE_SERVE_PER_PEER there at once, the next is answered
 * EBUSY; another peer's still get in.
 */
static void test_served_requests_per_peer_bounded(void **state)
{
	static const char *const abc[] = { "a", "b", "c" };
	struct imexd_raftlog_mem *disk = imexd_raftlog_mem_new();
	struct imexd_agree_config cfg = {
		.roster = abc, .n_roster = 3, .self = "a",
	};
	struct imexd_cmd c = { .type = IMEXD_CMD_NODE_SET };
	struct imexd_raftlog *log = NULL;
	struct imexd_agree_action act;
	struct imexd_agree *ag = NULL;
	struct imexd_raftlog_io io;
	char note[256], err[256];
	unsigned busy = 0, rounds;
	uint8_t *buf, *vote;
	uint64_t now = 1000, tag;
	size_t len, vlen;

	(void)state;
	assert_non_null(disk);
	imexd_raftlog_mem_io(disk, &io);
	assert_int_equal(imexd_raftlog_open(&log, &io, note, sizeof(note), err,
					    sizeof(err)), 0);
	snprintf(cfg.identity.name, sizeof(cfg.identity.name), "a");
	cfg.identity.uuid[0] = 1;
	cfg.identity.max_channels = 8;
	cfg.log = log;
	assert_int_equal(imexd_agree_new(&cfg, &ag), 0);
	assert_int_equal(imexd_agree_start(ag, now, NULL, 0), 0);
	/* b grants a's pre-vote and vote: a leads (c never answers). */
	for (rounds = 0; rounds < 100; rounds++) {
		vote = NULL;
		while (imexd_agree_next(ag, &act))
			if (!vote)
				grant(&act, &vote, &vlen);
		if (imexd_cons_leader(imexd_agree_cons(ag)) ==
		    imexd_cons_self(imexd_agree_cons(ag)))
			break;
		if (vote) {
			assert_int_equal(imexd_agree_receive(ag, now, "b", vote,
							     vlen), 0);
			free(vote);
			continue;
		}
		now = imexd_agree_timeout(ag);
		assert_int_equal(imexd_agree_tick(ag, now), 0);
	}
	assert_int_equal(imexd_cons_leader(imexd_agree_cons(ag)),
			 imexd_cons_self(imexd_agree_cons(ag)));

	/* b's own identity, again and again: held until it commits. */
	snprintf(c.u.node_set.name, sizeof(c.u.node_set.name), "b");
	c.u.node_set.uuid[0] = 2;
	c.u.node_set.max_channels = 8;
	assert_int_equal(imexd_cmd_encode(&c, &buf, &len, NULL), 0);
	for (tag = 1; tag <= IMEXD_AGREE_SERVE_PER_PEER + 1; tag++) {
		assert_int_equal(imexd_agree_forwarded(ag, now, "b", tag, buf,
						       len), 0);
		while (imexd_agree_next(ag, &act)) {
			if (act.type != IMEXD_AGREE_REPLY)
				continue;
			assert_int_equal(act.error, EBUSY);
			assert_int_equal(act.tag, IMEXD_AGREE_SERVE_PER_PEER + 1);
			assert_non_null(strstr(act.message,
					       "requests in progress here"));
			busy++;
		}
	}
	assert_int_equal(busy, 1);
	free(buf);
	/* c's is taken. */
	snprintf(c.u.node_set.name, sizeof(c.u.node_set.name), "c");
	assert_int_equal(imexd_cmd_encode(&c, &buf, &len, NULL), 0);
	assert_int_equal(imexd_agree_forwarded(ag, now, "c", 1, buf, len), 0);
	free(buf);
	while (imexd_agree_next(ag, &act))
		assert_int_not_equal(act.type, IMEXD_AGREE_REPLY);
	imexd_agree_free(ag);
	imexd_raftlog_close(log);
	imexd_raftlog_mem_free(disk);
}

/* Drain @ag; the LOG lines into @last (the newest), counted. */
static unsigned drain_logs(struct imexd_agree *ag, char *last, size_t len)
{
	struct imexd_agree_action act;
	unsigned n = 0;

	while (imexd_agree_next(ag, &act)) {
		if (act.type != IMEXD_AGREE_LOG)
			continue;
		snprintf(last, len, "%s", act.message);
		n++;
	}
	return n;
}

/*
 * A bound peer can send raft messages that do not decode without end, and
 * anyone (a bug) messages from outside the roster: each kind of line comes
 * at most once a minute, the next one says how many were held back.
 */
static void test_dropped_message_lines_rate_limited(void **state)
{
	static const char *const abc[] = { "a", "b", "c" };
	static const uint8_t junk[] = { 0xff, 0xff, 0xff };
	struct imexd_raftlog_mem *disk = imexd_raftlog_mem_new();
	struct imexd_agree_config cfg = {
		.roster = abc, .n_roster = 3, .self = "a",
	};
	struct imexd_cmd c = { .type = IMEXD_CMD_NODE_SET };
	struct imexd_raftlog *log = NULL;
	struct imexd_agree *ag = NULL;
	struct imexd_raftlog_io io;
	char note[256], err[256], last[512] = "";
	unsigned lines = 0, i;
	uint64_t now = 1000;
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_non_null(disk);
	imexd_raftlog_mem_io(disk, &io);
	assert_int_equal(imexd_raftlog_open(&log, &io, note, sizeof(note), err,
					    sizeof(err)), 0);
	snprintf(cfg.identity.name, sizeof(cfg.identity.name), "a");
	cfg.identity.uuid[0] = 1;
	cfg.identity.max_channels = 8;
	cfg.log = log;
	assert_int_equal(imexd_agree_new(&cfg, &ag), 0);
	assert_int_equal(imexd_agree_start(ag, now, NULL, 0), 0);
	drain_logs(ag, last, sizeof(last));

	/* 10000 undecodable messages from b over 59 s: one line. */
	for (i = 0; i < 10000; i++) {
		assert_int_equal(imexd_agree_receive(ag, now + i * 59000 / 10000,
						     "b", junk, sizeof(junk)), 0);
		lines += drain_logs(ag, last, sizeof(last));
	}
	assert_int_equal(lines, 1);
	/* A minute after the first: one more, with the count held back. */
	assert_int_equal(imexd_agree_receive(ag, now + 60000, "b", junk,
					     sizeof(junk)), 0);
	assert_int_equal(drain_logs(ag, last, sizeof(last)), 1);
	assert_non_null(strstr(last, "raft message from b dropped: "));
	assert_non_null(strstr(last, "(and 9999 more like it since the last such line)"));

	/* Undecodable raft messages and requests from z, outside the group:
	 * one line each (the limit is per kind of line and sending node). */
	snprintf(c.u.node_set.name, sizeof(c.u.node_set.name), "z");
	c.u.node_set.uuid[0] = 9;
	c.u.node_set.max_channels = 8;
	assert_int_equal(imexd_cmd_encode(&c, &buf, &len, NULL), 0);
	lines = 0;
	for (i = 0; i < 1000; i++) {
		assert_int_equal(imexd_agree_receive(ag, now + 60000 + i, "z",
						     junk, sizeof(junk)), 0);
		lines += drain_logs(ag, last, sizeof(last));
		assert_int_equal(imexd_agree_forwarded(ag, now + 60000 + i, "z",
						       i + 1, buf, len), 0);
		lines += drain_logs(ag, last, sizeof(last));
	}
	free(buf);
	assert_int_equal(lines, 2);
	assert_string_equal(last, "request from z dropped: not a node of the group");

	imexd_agree_free(ag);
	imexd_raftlog_close(log);
	imexd_raftlog_mem_free(disk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_which_logs_start),
		cmocka_unit_test(test_join_and_leave),
		cmocka_unit_test(test_leave_leader_lost),
		cmocka_unit_test(test_forwarded_identity_of_another_node_refused),
		cmocka_unit_test(test_forwards_again_on_replaced_connection),
		cmocka_unit_test(test_served_requests_per_peer_bounded),
		cmocka_unit_test(test_dropped_message_lines_rate_limited),
		cmocka_unit_test(test_leave_refused_names_unreachable_voter),
		cmocka_unit_test(test_create_and_leave_at_once),
		cmocka_unit_test(test_forwarded_join_checked_by_leader),
		cmocka_unit_test(test_leave_of_the_leader_hands_over),
		cmocka_unit_test(test_dropped_lines_limited_per_name),
		cmocka_unit_test(test_kernel_step_names_members_dropped),
		cmocka_unit_test(test_forwarded_replace_by_a_non_member_refused),
	};

	return cmocka_run_group_tests_name("agree", tests, NULL, NULL);
}
