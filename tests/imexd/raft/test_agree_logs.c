// SPDX-License-Identifier: GPL-2.0
/*
 * The agreement part's log lines about dropped messages: limited per
 * name and rate-limited.  See test_agree.c.
 */
#include "test_agree.h"

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
void test_dropped_lines_limited_per_name(void **state)
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
void test_dropped_message_lines_rate_limited(void **state)
{
	static const char *const abc[] = { "a", "b", "c" };
	static const uint8_t junk[] = { 0xff, 0xff, 0xff };
	struct imexd_raftlog_mem *disk = imexd_raftlog_mem_new();
	struct imexd_agree_config cfg = {
		.roster = abc, .n_roster = 3, .self = "a",
	};
	struct imexd_cmd c = { .type = IMEXD_CMD_NODE_SET };
	struct imexd_raftlog *log = NULL;
	struct imexd_agree *ag;
	char last[512] = "";
	unsigned lines = 0, i;
	uint64_t now = 1000;
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_non_null(disk);
	ag = agree_on(disk, &cfg, &log);
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
