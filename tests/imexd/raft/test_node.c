// SPDX-License-Identifier: GPL-2.0
/*
 * node (the dispatcher), one node, no roster: the order of what it asks of
 * the kernel and the caller.  The kernel shows a domain it has just been
 * given READY until its manager pushes a status, and imexctl reads the
 * state as soon as its request is answered: the first status must reach
 * the kernel before the answer.
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
#include <linux/imex.h>

#include "node.h"
#include "raftlog.h"

struct fix {
	struct imexd_raftlog_mem *mem;
	struct imexd_raftlog *log;
	struct imexd_node *n;
	uint64_t now;
	struct imexd_def kernel[4];	/* what the simulated kernel holds */
	size_t nkernel;
	int set_pending;		/* a KERNEL_SET not answered yet */
	/* order seen: first index of each action type after the request */
	int seq, status_at, done_at, done_error;
	unsigned ndone, nbusy, nunreach;	/* answers: all, EBUSY, EHOSTUNREACH */
	char done_text[512];		/* the last answer's */
};

/* Drain; a KERNEL_SET is answered at once with the kernel holding it. */
static void drain(struct fix *f)
{
	struct imexd_node_action a;

	for (;;) {
		if (!imexd_node_next(f->n, &a)) {
			if (!f->set_pending)
				return;
			f->set_pending = 0;
			imexd_node_kernel_done(f->n, f->now, 0, "", f->kernel,
					       f->nkernel);
			continue;
		}
		f->seq++;
		switch (a.type) {
		case IMEXD_NODE_KERNEL_SET:
			assert_true(f->nkernel < 4);
			assert_int_equal(imexd_def_copy(&f->kernel[f->nkernel++],
							a.def), 0);
			f->set_pending = 1;
			break;
		case IMEXD_NODE_KERNEL_STATUS:
			if (!f->status_at)
				f->status_at = f->seq;
			break;
		case IMEXD_NODE_LOG:
			if (getenv("TEST_VERBOSE"))
				printf("# %s\n", a.text);
			break;
		case IMEXD_NODE_REQUEST_DONE:
			if (getenv("TEST_VERBOSE"))
				printf("# done %d: %s\n", a.error, a.text);
			f->done_at = f->seq;
			f->done_error = a.error;
			snprintf(f->done_text, sizeof(f->done_text), "%s",
				 a.text ? a.text : "");
			f->ndone++;
			f->nbusy += a.error == EBUSY;
			f->nunreach += a.error == EHOSTUNREACH;
			break;
		default:
			break;
		}
	}
}

/* Timers until nothing is due within @ms. */
static void run_for(struct fix *f, uint64_t ms)
{
	uint64_t end = f->now + ms, t;

	drain(f);
	while ((t = imexd_node_deadline(f->n)) <= end) {
		if (t > f->now)
			f->now = t;
		imexd_node_timer(f->n, f->now);
		drain(f);
	}
	f->now = end;
}

static void status_before_answer(void **state)
{
	struct imexd_node_config cfg = { .name = "a", .epoch = 7,
					 .max_channels = 64 };
	struct imexd_raftlog_io io;
	struct imexd_member m = { .name = "a" };
	struct imexd_request r = { .req_id = 1, .cmd = IMEX_CMD_DOMAIN_CREATE,
				   .name = "d1", .nmembers = 1, .members = &m,
				   .count = 1, .mode = 0600 };
	char err[256], note[256];
	struct fix f = { .now = 1000 };
	size_t i;

	(void)state;
	cfg.node_uuid[0] = 1;
	cfg.fabric_uuid[0] = 0x11;
	cfg.partition = 7;
	f.mem = imexd_raftlog_mem_new();
	assert_non_null(f.mem);
	imexd_raftlog_mem_io(f.mem, &io);
	assert_int_equal(imexd_raftlog_open(&f.log, &io, note, sizeof(note), err,
					    sizeof(err)), 0);
	cfg.log = f.log;
	assert_int_equal(imexd_node_new(&cfg, &f.n, err, sizeof(err)), 0);
	assert_int_equal(imexd_node_start(f.n, f.now, NULL, 0), 0);
	run_for(&f, 5000);	/* a one-member group elects itself */

	f.seq = 0;
	imexd_node_request(f.n, f.now, &r);
	run_for(&f, 100);
	assert_int_equal(f.nkernel, 1);
	assert_int_equal(f.done_error, 0);
	assert_true(f.done_at > 0);
	assert_true(f.status_at > 0);
	assert_true(f.status_at < f.done_at);

	imexd_node_free(f.n);
	imexd_raftlog_close(f.log);
	imexd_raftlog_mem_free(f.mem);
	for (i = 0; i < f.nkernel; i++)
		imexd_def_free(&f.kernel[i]);
}

/* A node with a fresh log and @roster, started and run for 5 s. */
static void start_node(struct fix *f, const char *name,
		       const struct imexd_roster_node *roster, size_t n)
{
	struct imexd_node_config cfg = { .epoch = 7, .max_channels = 64,
					 .roster = roster, .n_roster = n };
	struct imexd_raftlog_io io;
	char err[256], note[256];

	snprintf(cfg.name, sizeof(cfg.name), "%s", name);
	cfg.node_uuid[0] = 1;
	cfg.fabric_uuid[0] = 0x11;
	f->now = 1000;
	f->mem = imexd_raftlog_mem_new();
	assert_non_null(f->mem);
	imexd_raftlog_mem_io(f->mem, &io);
	assert_int_equal(imexd_raftlog_open(&f->log, &io, note, sizeof(note),
					    err, sizeof(err)), 0);
	cfg.log = f->log;
	assert_int_equal(imexd_node_new(&cfg, &f->n, err, sizeof(err)), 0);
	assert_int_equal(imexd_node_start(f->n, f->now, NULL, 0), 0);
	run_for(f, 5000);
}

/*
 * Joins waiting for their node's HELLO: at most IMEXD_NODE_JOINS_MAX; the
 * next is refused at once (EBUSY); at the request timeout every waiting
 * one is refused (EHOSTUNREACH) and the table is free again.
 */
static void joins_waiting_bounded(void **state)
{
	struct imexd_request r = { .cmd = IMEX_CMD_NODE_JOIN };
	struct fix f = { 0 };
	unsigned i;

	(void)state;
	start_node(&f, "a", NULL, 0);
	for (i = 0; i <= IMEXD_NODE_JOINS_MAX; i++) {
		r.req_id = 10 + i;
		snprintf(r.member, sizeof(r.member), "j%u", i);
		snprintf(r.addr, sizeof(r.addr), "192.0.2.%u", i + 1);
		imexd_node_request(f.n, f.now, &r);
		drain(&f);
	}
	assert_int_equal(f.ndone, 1);
	assert_int_equal(f.nbusy, 1);
	run_for(&f, (uint64_t)10 * 60 * 1000);
	assert_int_equal(f.ndone, IMEXD_NODE_JOINS_MAX + 1);
	assert_int_equal(f.nunreach, IMEXD_NODE_JOINS_MAX);
	r.req_id = 100;
	snprintf(r.member, sizeof(r.member), "late");
	imexd_node_request(f.n, f.now, &r);
	drain(&f);
	assert_int_equal(f.nbusy, 1);	/* room again: waits */
	imexd_node_free(f.n);
	imexd_raftlog_close(f.log);
	imexd_raftlog_mem_free(f.mem);
}

static void stop_node(struct fix *f)
{
	size_t i;

	imexd_node_free(f->n);
	imexd_raftlog_close(f->log);
	imexd_raftlog_mem_free(f->mem);
	for (i = 0; i < f->nkernel; i++)
		imexd_def_free(&f->kernel[i]);
}

/* Alone: a one-member group, this node its voter and leader. */
static void members_alone(void **state)
{
	struct imexd_node_member m[4];
	struct imexd_node_group g;
	struct fix f = { 0 };

	(void)state;
	start_node(&f, "a", NULL, 0);
	assert_int_equal(imexd_node_members(f.n, &g, m, 4), 1);
	assert_true(g.member);
	assert_int_equal(g.n_members, 1);
	assert_string_equal(g.leader, "a");
	assert_true(g.term >= 1);
	assert_true(g.commit >= 1);
	assert_true(g.applied >= 1);
	assert_true(g.config_index >= 1);
	assert_string_equal(m[0].name, "a");
	assert_int_equal(m[0].role, RAFT_VOTER);
	assert_true(m[0].leader);
	assert_true(m[0].self);
	assert_false(m[0].connected);
	stop_node(&f);
}

/* Four names: three voters and a standby, sorted, with the roster's
 * addresses; no peer up, so no leader and nothing connected.  @max bounds
 * what is filled, n_members still counts all. */
static void members_roster(void **state)
{
	static const struct imexd_roster_node roster[] = {
		{ "d", "10.0.0.4:50100" }, { "b", "" },
		{ "a", "10.0.0.1" }, { "c", "" },
	};
	struct imexd_node_member m[4];
	struct imexd_node_group g;
	struct fix f = { 0 };
	size_t i;

	(void)state;
	start_node(&f, "a", roster, 4);
	assert_int_equal(imexd_node_members(f.n, &g, m, 4), 4);
	assert_true(g.member);
	assert_int_equal(g.n_members, 4);
	assert_string_equal(g.leader, "");
	for (i = 0; i < 4; i++) {
		assert_int_equal(m[i].name[0], (char)('a' + i));
		assert_int_equal(m[i].role, i < 3 ? RAFT_VOTER : RAFT_STANDBY);
		assert_false(m[i].leader);
		assert_int_equal(m[i].self, i == 0);
		assert_false(m[i].connected);
	}
	assert_string_equal(m[0].addr, "10.0.0.1");
	assert_string_equal(m[1].addr, "");
	assert_string_equal(m[3].addr, "10.0.0.4:50100");
	assert_int_equal(imexd_node_members(f.n, &g, m, 2), 2);
	assert_int_equal(g.n_members, 4);
	stop_node(&f);
}

/* Outside its roster: no configuration yet, waits to be joined. */
static void members_outside(void **state)
{
	static const struct imexd_roster_node roster[] = { { "a", "" }, { "b", "" } };
	struct imexd_node_member m[4];
	struct imexd_node_group g;
	struct fix f = { 0 };

	(void)state;
	start_node(&f, "z", roster, 2);
	assert_int_equal(imexd_node_members(f.n, &g, m, 4), 0);
	assert_false(g.member);
	assert_int_equal(g.n_members, 0);
	assert_string_equal(g.leader, "");
	stop_node(&f);
}

/*
 * A replace's new member is checked where the request enters, before
 * anything is proposed: not in the group (EINVAL), or in it but never
 * connected here (EHOSTUNREACH, saying for how long); no leader needed.
 */
static void replace_spare_checked_here(void **state)
{
	static const struct imexd_roster_node roster[] = { { "a", "" }, { "b", "" } };
	struct imexd_request r = { .req_id = 5, .cmd = IMEX_CMD_MEMBER_REPLACE,
				   .name = "d1", .member = "c", .with = "zz" };
	struct fix f = { 0 };

	(void)state;
	start_node(&f, "a", roster, 2);
	imexd_node_request(f.n, f.now, &r);
	drain(&f);
	assert_int_equal(f.ndone, 1);
	assert_int_equal(f.done_error, EINVAL);
	assert_string_equal(f.done_text,
			    "node 'zz' is not in the group: join it with 'imexctl node join zz' first");
	snprintf(r.with, sizeof(r.with), "b");
	imexd_node_request(f.n, f.now, &r);
	drain(&f);
	assert_int_equal(f.ndone, 2);
	assert_int_equal(f.done_error, EHOSTUNREACH);
	assert_string_equal(f.done_text,
			    "node 'b' is unreachable: not connected since imexd started here 5 s ago; power it on or check imexd there");
	stop_node(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(status_before_answer),
		cmocka_unit_test(joins_waiting_bounded),
		cmocka_unit_test(members_alone),
		cmocka_unit_test(members_roster),
		cmocka_unit_test(members_outside),
		cmocka_unit_test(replace_spare_checked_here),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
