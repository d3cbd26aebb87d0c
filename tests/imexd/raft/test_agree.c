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
#include "test_agree.h"
/* Node "a" (uuid 1, 8 channels) of @cfg's roster on @disk: its log opened
 * into *@log, its agree part made (not started). */
struct imexd_agree *agree_on(struct imexd_raftlog_mem *disk,
			     struct imexd_agree_config *cfg,
			     struct imexd_raftlog **log)
{
	struct imexd_agree *ag = NULL;
	struct imexd_raftlog_io io;
	char note[256], err[256];

	imexd_raftlog_mem_io(disk, &io);
	assert_int_equal(imexd_raftlog_open(log, &io, note, sizeof(note), err,
					    sizeof(err)), 0);
	snprintf(cfg->identity.name, sizeof(cfg->identity.name), "a");
	cfg->identity.uuid[0] = 1;
	cfg->identity.max_channels = 8;
	cfg->log = *log;
	assert_int_equal(imexd_agree_new(cfg, &ag), 0);
	return ag;
}

/* Start a node of @roster on @disk; returns imexd_agree_start()'s value and
 * copies the LOG lines it queued into @logs. */
static int start_on(struct imexd_raftlog_mem *disk, const char *const *roster,
		    unsigned n, char *logs, size_t len)
{
	struct imexd_agree_config cfg = {
		.roster = roster, .n_roster = n, .self = "a",
	};
	struct imexd_raftlog *log = NULL;
	struct imexd_agree_action act;
	struct imexd_agree *ag;
	int rv;

	ag = agree_on(disk, &cfg, &log);
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

const uint8_t fabric[16] = { 0xfa, 0xb1 };

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
void drain(struct tnet *t, unsigned i, int rv)
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

void node_start(struct tnet *t, unsigned i)
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

void node_stop(struct tnet *t, unsigned i)
{
	struct tnode *nd = &t->nodes[i];

	imexd_agree_free(nd->ag);
	imexd_raftlog_close(nd->log);
	nd->ag = NULL;
	nd->log = NULL;
}

struct tnet *net_new(unsigned n_roster)
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

void net_free(struct tnet *t)
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
void run_for(struct tnet *t, uint64_t ms)
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

const struct imexd_cons *cons_of(struct tnet *t, unsigned i)
{
	return imexd_agree_cons(t->nodes[i].ag);
}

int role_at(struct tnet *t, unsigned at, const char *name)
{
	return imexd_cons_role(cons_of(t, at), imexd_cons_name_id(name));
}

unsigned leader_of(struct tnet *t)
{
	unsigned i;

	for (i = 0; i < NN; i++)
		if (t->nodes[i].ag && cons_of(t, i) &&
		    imexd_cons_state(cons_of(t, i)) == RAFT_LEADER)
			return i;
	return NN;
}

/* Let a group of @n settle (10 election timeouts): its leader's index. */
unsigned settled_leader(struct tnet *t, unsigned n)
{
	unsigned l;

	run_for(t, 10 * ET);
	l = leader_of(t);
	assert_true(l < n);
	return l;
}

/* Run until request tag is done (at most limit ms). */
void wait_done(struct tnet *t, uint64_t tag, uint64_t limit)
{
	uint64_t end = t->now + limit;

	while (!t->done[tag].done && t->now < end)
		run_for(t, 10);
	assert_true(t->done[tag].done);
}

void request_node(struct tnet *t, unsigned at, uint64_t tag,
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

void request_create(struct tnet *t, unsigned at, uint64_t tag,
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
