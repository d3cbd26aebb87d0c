// SPDX-License-Identifier: GPL-2.0
/*
 * The agreement part on its own: a node refuses to start from a raft log
 * whose group another NODES_FILE formed (the ids would count votes for the
 * wrong nodes), says which nodes formed it, and starts with the right one;
 * a peer's forwarded NODE_SET may report only its own identity, a
 * leader holds a bounded number of one peer's requests, and the lines
 * about messages dropped from a peer are rate-limited.
 * The cluster behaviour is the simulator's (sim_agree).
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

static void test_a_log_of_another_group_is_refused(void **state)
{
	static const char *const abc[] = { "a", "b", "c" };
	static const char *const abd[] = { "a", "b", "d" };
	static const char *const zabc[] = { "0", "a", "b", "c" };
	struct imexd_raftlog_mem *disk = imexd_raftlog_mem_new();
	char logs[2048];

	(void)state;
	assert_non_null(disk);
	/* First start: the group a, b, c is written to the log. */
	assert_int_equal(start_on(disk, abc, 3, logs, sizeof(logs)), 0);
	/* Same group, any order: fine. */
	assert_int_equal(start_on(disk, (const char *const[]){ "c", "a", "b" },
				  3, logs, sizeof(logs)), 0);
	/* c replaced by d: refused, and the line names the stored group. */
	assert_int_equal(start_on(disk, abd, 3, logs, sizeof(logs)), -ESTALE);
	assert_non_null(strstr(logs, "formed by nodes a, b, c"));
	assert_non_null(strstr(logs, "NODES_FILE"));
	/* A node added in front shifts every id: refused too. */
	assert_int_equal(start_on(disk, zabc, 4, logs, sizeof(logs)), -ESTALE);
	imexd_raftlog_mem_free(disk);
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
	    imexd_raftwire_decode(act->data, act->len, 1, "a", &m, NULL))
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
		if (imexd_cons_leader(imexd_agree_cons(ag)) == 1)
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
	assert_int_equal(imexd_cons_leader(imexd_agree_cons(ag)), 1);

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

	/* Raft messages and requests from outside the roster: one line each. */
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
	assert_string_equal(last, "request from z dropped: not a peer in the roster");

	imexd_agree_free(ag);
	imexd_raftlog_close(log);
	imexd_raftlog_mem_free(disk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_log_of_another_group_is_refused),
		cmocka_unit_test(test_forwarded_identity_of_another_node_refused),
		cmocka_unit_test(test_served_requests_per_peer_bounded),
		cmocka_unit_test(test_dropped_message_lines_rate_limited),
	};

	return cmocka_run_group_tests_name("agree", tests, NULL, NULL);
}
