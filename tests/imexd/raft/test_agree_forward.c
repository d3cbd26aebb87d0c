// SPDX-License-Identifier: GPL-2.0
/*
 * Requests forwarded by peers to the agreement part: a replace by a
 * non-member refused, forwards sent again on a replaced connection, a
 * NODE_SET reporting another node refused, a bounded number of one
 * peer's requests held.  See test_agree.c.
 */
#include "test_agree.h"

/*
 * A hostile peer of the group, not a member of domain d, forwards a
 * replace that would put it in d's place of a member: the leader refuses
 * it (EACCES) and d keeps its members.
 */
void test_forwarded_replace_by_a_non_member_refused(void **state)
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
void test_forwards_again_on_replaced_connection(void **state)
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

/* A forwarded NODE_SET may report only the sender's own identity. */
void test_forwarded_identity_of_another_node_refused(void **state)
{
	static const char *const abc[] = { "a", "b", "c" };
	struct imexd_raftlog_mem *disk = imexd_raftlog_mem_new();
	struct imexd_agree_config cfg = {
		.roster = abc, .n_roster = 3, .self = "a",
	};
	struct imexd_cmd c = { .type = IMEXD_CMD_NODE_SET };
	struct imexd_raftlog *log = NULL;
	struct imexd_agree_action act;
	struct imexd_agree *ag;
	unsigned replies = 0, logs = 0;
	uint64_t tag;
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_non_null(disk);
	ag = agree_on(disk, &cfg, &log);
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
void test_served_requests_per_peer_bounded(void **state)
{
	static const char *const abc[] = { "a", "b", "c" };
	struct imexd_raftlog_mem *disk = imexd_raftlog_mem_new();
	struct imexd_agree_config cfg = {
		.roster = abc, .n_roster = 3, .self = "a",
	};
	struct imexd_cmd c = { .type = IMEXD_CMD_NODE_SET };
	struct imexd_raftlog *log = NULL;
	struct imexd_agree_action act;
	struct imexd_agree *ag;
	unsigned busy = 0, rounds;
	uint8_t *buf, *vote;
	uint64_t now = 1000, tag;
	size_t len, vlen;

	(void)state;
	assert_non_null(disk);
	ag = agree_on(disk, &cfg, &log);
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
