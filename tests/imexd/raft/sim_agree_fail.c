// SPDX-License-Identifier: GPL-2.0
/*
 * The node simulator's named failure scenarios (see sim_agree.c): the
 * failures of issue 12, a lost leader, a refused forward, a restore from
 * a snapshot, and the checker's self-tests; request() answers a request
 * as a client of imexd would, repeating it after a lost answer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_agree.h"

static struct sw_req *waiting;

static bool req_done(struct sw *w)
{
	(void)w;
	return waiting->done;
}

/* Doing it twice leaves the same outcome (imexd forwards these again
 * after a lost leader, ag_leader_moved()). */
static bool repeatable(uint32_t cmd)
{
	switch (cmd) {
	case IMEX_CMD_DOMAIN_CREATE:
	case IMEX_CMD_DOMAIN_DELETE:
	case IMEX_CMD_MEMBER_EVICT:
	case IMEX_CMD_CHANNEL_FREE:
	case IMEX_CMD_NODE_JOIN:
	case IMEX_CMD_NODE_LEAVE:
		return true;
	}
	return false;
}

/* A repeat's refusal that says the attempt before it made the change
 * (the same reading imexd gives a repeat after a lost leader). */
static bool made_before(uint32_t cmd, int error)
{
	switch (cmd) {
	case IMEX_CMD_DOMAIN_DELETE:
	case IMEX_CMD_MEMBER_EVICT:
	case IMEX_CMD_CHANNEL_FREE:
	case IMEX_CMD_NODE_LEAVE:
		return error == ENOENT;
	case IMEX_CMD_NODE_JOIN:
		return error == EALREADY;
	}
	return false;
}

/* The answer of a repeat read as the lost attempt's: a copy, so that the
 * history check still sees the repeat as it was answered. */
static struct sw_req made;

/* A reset is heard within the world's latency and jitter (1 + 3 ms). */
#define BREAK_HEARD_MS 10

/* The last request's answer may have been lost to a random reset. */
static bool answer_lost;

/*
 * A request at a node, answered.  The world resets connections at random
 * (break_pm): a reset can lose a forwarded request or its answer, and
 * the node then answers, at its timeout, that the leader did not answer
 * and the change may or may not have been made.  Then do what that
 * answer asks, if doing it twice is safe: submit it again (a create
 * finds itself made; a delete, evict, free, leave or join that finds
 * nothing to do was made by the lost attempt).
 */
struct sw_req *request(struct sw *w, unsigned node, struct req_buf *b)
{
	unsigned long breaks;
	unsigned tries;

	answer_lost = false;
	for (tries = 0; tries < 3; tries++) {
		/* A reset just before is heard late: sends until then are
		 * lost too. */
		breaks = sw_stats(w)->breaks;
		if (breaks && sw_stats(w)->last_break + BREAK_HEARD_MS >= sw_now(w))
			breaks--;
		waiting = sw_request(w, node, &b->r);
		if (!waiting) {
			sw_violation(w, "%s is down", sw_name(w, node));
			return NULL;
		}
		sw_run_pred(w, 20 * ET, req_done);
		if (getenv("SIM_VERBOSE"))
			printf("  request %u at %s: %d %s\n", b->r.cmd,
			       sw_name(w, node), waiting->error,
			       waiting->message);
		/* Or imexd sent it again itself (a leader change, a
		 * replaced connection) and says so. */
		if ((tries || strstr(waiting->message, "may have made it")) &&
		    waiting->done && made_before(b->r.cmd, waiting->error)) {
			made = *waiting;
			made.error = 0;
			snprintf(made.message, sizeof(made.message),
				 "made by the attempt whose answer was lost");
			return &made;
		}
		answer_lost = waiting->done && waiting->error == ETIMEDOUT &&
			      strstr(waiting->message,
				     "did not answer in time") &&
			      sw_stats(w)->breaks != breaks;
		if (!answer_lost || !repeatable(b->r.cmd))
			break;
	}
	return waiting;
}

/* Failure 2: a member applies a create (or is about to run its kernel
 * step), crashes and stays away far longer than the old quarantine; a
 * second create naming it must not get the same channel there. */
unsigned leader_or_0(struct sw *w)
{
	int l = sw_leader(w);

	EXPECT(w, l >= 0);
	return l < 0 ? 0 : (unsigned)l;
}

unsigned fail2(unsigned seed, enum sw_crash_point p)
{
	struct sw *w = world(3, seed);
	unsigned l, x, ab[2], cb[2];
	struct sw_req *a, *b;
	struct req_buf rb;
	unsigned v;

	sw_run_pred(w, 50 * ET, converged);
	l = leader_or_0(w);
	x = (l + 1) % 3;	/* the member that crashes */
	ab[0] = (l + 2) % 3;
	ab[1] = x;
	cb[0] = l;
	cb[1] = x;
	sw_arm(w, x, p);
	mk_create(&rb, w, "A", 0xa1, ab, 2, 1, NULL, 0);
	a = request(w, l, &rb);
	sw_crash(w, x);
	sw_run_for(w, 600 * ET); /* 60 s: ten times the old quarantine */
	mk_create(&rb, w, "B", 0xb1, cb, 2, 1, NULL, 0);
	b = request(w, l, &rb);
	EXPECT(w, a && a->done && !a->error && a->def.nchannels == 1);
	EXPECT(w, b && b->done && !b->error && b->def.nchannels == 1);
	if (a && b && a->def.nchannels && b->def.nchannels)
		EXPECT(w, !sw_has_channel(&b->def, a->def.channels[0].id));
	sw_restart(w, x);
	v = sw_check_final(w);
	sw_free(w);
	return v;
}

/* Failure 3: a domain deleted while a member is away stays deleted when
 * the member returns more than an hour later. */
unsigned fail3(unsigned seed)
{
	struct sw *w = world(3, seed);
	unsigned all[] = { 0, 1, 2 };
	const struct imexd_def *k;
	struct sw_req *r;
	struct req_buf rb;
	size_t nk;
	unsigned v, l, x;

	sw_run_pred(w, 50 * ET, converged);
	l = leader_or_0(w);
	x = (l + 1) % 3;
	mk_create(&rb, w, "A", 0xa3, all, 3, 2, NULL, 0);
	r = request(w, l, &rb);
	EXPECT(w, r && !r->error);
	sw_run_pred(w, 50 * ET, converged);
	k = sw_kernel(w, x, &nk);
	EXPECT(w, nk == 1 && !strcmp(k[0].name, "A"));
	sw_crash(w, x);
	mk_simple(&rb, IMEX_CMD_DOMAIN_DELETE, "A", NULL);
	r = request(w, l, &rb);
	EXPECT(w, r && !r->error);
	sw_run_for(w, 3700ull * 1000); /* past the old one-hour tombstone */
	sw_restart(w, x);
	sw_check_final(w);
	(void)sw_kernel(w, x, &nk);
	EXPECT(w, nk == 0);
	EXPECT(w, !imexd_fsm_domain(sw_fsm(w, x), "A"));
	v = sw_violations(w);
	sw_free(w);
	return v;
}

/* Failure 4: a create entered at a leader cut off from everyone, which
 * then vanishes, holds nothing: the same channels go to another domain. */
unsigned fail4(unsigned seed)
{
	struct sw *w = world(3, seed);
	unsigned all[] = { 0, 1, 2 };
	uint32_t ids[] = { 1, 0 };
	bool side[3] = { false, false, false };
	struct sw_req *c, *d;
	struct req_buf rb;
	int l;
	unsigned v, o;

	sw_run_pred(w, 50 * ET, converged);
	l = sw_leader(w);
	EXPECT(w, l >= 0);
	if (l < 0)
		l = 0;
	side[l] = true;
	sw_partition(w, side);
	mk_create(&rb, w, "C", 0xc4, all, 3, 0, ids, 2);
	c = request(w, (unsigned)l, &rb);
	EXPECT(w, c && c->done && c->error == ETIMEDOUT &&
		  strstr(c->message, "no quorum"));
	sw_crash(w, (unsigned)l);
	sw_heal(w);
	o = ((unsigned)l + 1) % 3;
	sw_run_for(w, 20 * ET);
	mk_create(&rb, w, "D", 0xd4, all, 3, 0, ids, 2);
	d = request(w, o, &rb);
	EXPECT(w, d && d->done && !d->error && d->def.nchannels == 2);
	sw_run_for(w, 100 * ET);
	sw_restart(w, (unsigned)l);
	sw_check_final(w);
	EXPECT(w, !imexd_fsm_domain(sw_fsm(w, (unsigned)l), "C"));
	v = sw_violations(w);
	sw_free(w);
	return v;
}

/*
 * A delete forwarded to the leader just as the leader is cut off (as when
 * it is powered off: its connections stay up for a while) goes again to
 * the next leader and is made there, instead of waiting out its timeout.
 */
unsigned lost_leader(unsigned seed)
{
	struct sw *w = world(5, seed);
	unsigned all[] = { 0, 1, 2, 3, 4 };
	bool side[5] = { false, false, false, false, false };
	struct sw_req *r;
	struct req_buf rb;
	unsigned f, v;
	int l;

	sw_run_pred(w, 50 * ET, converged);
	mk_create(&rb, w, "A", 0xa6, all, 5, 1, NULL, 0);
	r = request(w, 0, &rb);
	EXPECT(w, r && !r->error);
	sw_run_pred(w, 50 * ET, converged);
	l = sw_leader(w);
	EXPECT(w, l >= 0);
	if (l < 0)
		l = 0;
	f = ((unsigned)l + 1) % 5;
	side[l] = true;
	sw_partition(w, side);
	mk_simple(&rb, IMEX_CMD_DOMAIN_DELETE, "A", NULL);
	r = request(w, f, &rb);
	EXPECT(w, r && r->done && !r->error);
	sw_heal(w);
	sw_run_for(w, 50 * ET);
	sw_check_final(w);
	v = sw_violations(w);
	sw_free(w);
	return v;
}

/* A follower's forwarded request is served only when its own kernel could
 * have asked it: a domain naming it, a change to a domain naming it (a peer
 * with a valid certificate for its name speaks for no other node). */
unsigned forward_refused(unsigned seed)
{
	struct sw *w = world(3, seed);
	const struct imexd_def *d;
	struct req_buf rb;
	struct sw_req *r;
	unsigned ly[2], l, y, x, v;

	sw_run_pred(w, 50 * ET, converged);
	l = leader_or_0(w);
	y = (l + 1) % 3;
	x = (l + 2) % 3;
	ly[0] = l;
	ly[1] = y;
	mk_create(&rb, w, "A", 0xa7, ly, 2, 1, NULL, 0);
	r = request(w, l, &rb);
	EXPECT(w, r && !r->error);
	/* x is no member of A: each change it forwards is refused. */
	mk_simple(&rb, IMEX_CMD_DOMAIN_DELETE, "A", NULL);
	r = request(w, x, &rb);
	EXPECT(w, r && r->error == EACCES &&
		  strstr(r->message, "may not change domain A, which does not name it"));
	mk_simple(&rb, IMEX_CMD_CHANNEL_ALLOC, "A", NULL);
	rb.r.count = 1;
	r = request(w, x, &rb);
	EXPECT(w, r && r->error == EACCES);
	mk_simple(&rb, IMEX_CMD_MEMBER_EVICT, "A", sw_name(w, y));
	r = request(w, x, &rb);
	EXPECT(w, r && r->error == EACCES);
	mk_create(&rb, w, "B", 0xb7, ly, 2, 1, NULL, 0);
	r = request(w, x, &rb);
	EXPECT(w, r && r->error == EACCES &&
		  strstr(r->message, "may not create domain B"));
	/* y, a member and a follower, may. */
	mk_simple(&rb, IMEX_CMD_CHANNEL_ALLOC, "A", NULL);
	rb.r.count = 1;
	r = request(w, y, &rb);
	if (r && (answer_lost || r->error == EAGAIN)) {
		/* Twice would be two channels: check, then retry (EAGAIN:
		 * a replaced connection may have lost the forward). */
		sw_run_pred(w, 50 * ET, converged);
		d = imexd_fsm_domain(sw_fsm(w, l), "A");
		if (d && d->nchannels == 1)
			r = request(w, y, &rb);
	}
	EXPECT(w, r && (!r->error || answer_lost || r->error == EAGAIN));
	sw_run_pred(w, 50 * ET, converged);
	d = imexd_fsm_domain(sw_fsm(w, l), "A");
	EXPECT(w, d && d->nchannels == 2 && d->nmembers == 2);
	EXPECT(w, !imexd_fsm_domain(sw_fsm(w, l), "B"));
	v = sw_check_final(w);
	sw_free(w);
	return v;
}

/* Failure 5: during a 2|3 partition only the majority can evict; the
 * minority's evict fails and says there is no quorum. */
unsigned fail5(unsigned seed)
{
	struct sw *w = world(5, seed);
	unsigned all[] = { 0, 1, 2, 3, 4 };
	bool side[5] = { true, true, false, false, false };
	const struct imexd_def *d;
	struct sw_req *mi, *ma, *r;
	struct req_buf rb;
	size_t nk;
	unsigned v;

	sw_run_pred(w, 50 * ET, converged);
	mk_create(&rb, w, "A", 0xa5, all, 5, 1, NULL, 0);
	r = request(w, 2, &rb);
	EXPECT(w, r && !r->error);
	sw_run_pred(w, 50 * ET, converged);
	sw_partition(w, side);
	sw_run_for(w, 20 * ET);
	mk_simple(&rb, IMEX_CMD_MEMBER_EVICT, "A", sw_name(w, 2));
	mi = request(w, 0, &rb);
	mk_simple(&rb, IMEX_CMD_MEMBER_EVICT, "A", sw_name(w, 0));
	ma = request(w, 3, &rb);
	EXPECT(w, mi && mi->done && mi->error && strstr(mi->message, "no quorum"));
	EXPECT(w, ma && ma->done && !ma->error);
	if (mi && mi->error)
		printf("  minority evict: %s\n", mi->message);
	sw_run_for(w, 10 * ET);
	sw_check_final(w);
	d = imexd_fsm_domain(sw_fsm(w, 1), "A");
	EXPECT(w, d && d->nmembers == 4 && !imexd_def_has_member(d, "n000") &&
		  imexd_def_has_member(d, "n002"));
	(void)sw_kernel(w, 0, &nk);
	EXPECT(w, nk == 0);
	v = sw_violations(w);
	sw_free(w);
	return v;
}

/* Does node i's log end with its snapshot? */
static bool snapshot_last(struct sw *w, unsigned i)
{
	const struct imexd_raftlog *log = sw_log(w, i);
	const struct raft_snapshot_metadata *sm =
		log ? imexd_raftlog_snapshot(log, NULL) : NULL;

	return sm && sm->index == imexd_raftlog_last_index(log);
}

/* A member away while a domain naming it changes past the leader's
 * snapshot, which is the leader's last entry, catches up by installing
 * the snapshot and applies no entry: its health must still learn the new
 * generation, and READY follows (it once kept the old one: DEGRADED). */
unsigned snap_ready(unsigned seed)
{
	struct sw *w = world(3, seed);
	unsigned all[] = { 0, 1, 2 }, l, x, k;
	uint32_t id = 5;
	struct req_buf rb;
	struct sw_req *r;
	unsigned v;

	sw_run_pred(w, 50 * ET, converged);
	l = leader_or_0(w);
	x = (l + 1) % 3;
	mk_create(&rb, w, "A", 0x5a, all, 3, 1, NULL, 0);
	r = request(w, l, &rb);
	EXPECT(w, r && !r->error);
	sw_run_pred(w, 50 * ET, converged);
	sw_crash(w, x);
	for (k = 0; k < 80 && (k < 33 || !snapshot_last(w, l)); k++) {
		mk_simple(&rb, k % 2 ? IMEX_CMD_CHANNEL_FREE :
			  IMEX_CMD_CHANNEL_ALLOC, "A", NULL);
		rb.r.ids = &id;
		rb.r.nids = 1;
		r = request(w, l, &rb);
		EXPECT(w, r && !r->error);
	}
	EXPECT(w, snapshot_last(w, l));
	sw_restart(w, x);
	v = sw_check_final(w);
	sw_free(w);
	return v;
}

/* ---- checker self-tests: the world is broken on purpose ------------------ */

/* The check of acknowledgements must fail: the scenario passes (0) only
 * if it reported at least one acknowledgement. */
static unsigned reported(struct sw *w)
{
	unsigned long bad = sw_stats(w)->bad_acks;

	printf("  acknowledgements refused by the check: %lu\n", bad);
	sw_free(w);
	return bad ? 0 : 1;
}

/* The network lets a request and its answer (FORWARD, REPLY) through a
 * 2|3 partition, raft messages not: a minority node's create is committed
 * by the majority and answered on the minority side. */
unsigned check_leak(unsigned seed)
{
	struct sw_config cfg = world_config(5, seed);
	unsigned all[] = { 0, 1, 2, 3, 4 }, l, m, k;
	bool side[5];
	struct req_buf rb;
	struct sw_req *r;
	struct sw *w;

	cfg.selftest = true;
	cfg.leak_requests = true;
	/* The premise needs the answer: no random resets. */
	cfg.break_pm = 0;
	w = sw_new(&cfg);
	sw_run_pred(w, 50 * ET, converged);
	l = leader_or_0(w);
	m = (l + 1) % 5;	/* with (l + 2) % 5, the minority */
	for (k = 0; k < 5; k++)
		side[k] = k != m && k != (l + 2) % 5;
	sw_partition(w, side);
	/* At once, while m still knows the leader. */
	mk_create(&rb, w, "L", 0x1e, all, 5, 1, NULL, 0);
	r = request(w, m, &rb);
	EXPECT(w, r && r->done && !r->error);
	return reported(w);
}

static bool l_applied_z(struct sw *w)
{
	return imexd_fsm_domain(sw_fsm(w, (unsigned)sw_leader(w)),
				"Z") != NULL;
}

/* Five voters; a follower's create is committed, and before the leader's
 * answer reaches it the disks of the three other voters are lost: the
 * answer arrives when the entry is on two of the five disks. */
unsigned check_lost_disks(unsigned seed)
{
	struct sw_config cfg = world_config(5, seed);
	unsigned all[] = { 0, 1, 2, 3, 4 }, l, f, k;
	struct req_buf rb;
	struct sw_req *r;
	uint64_t end;
	struct sw *w;

	cfg.selftest = true;
	/* The premise needs the answer: no random resets. */
	cfg.break_pm = 0;
	w = sw_new(&cfg);
	sw_run_pred(w, 50 * ET, converged);
	l = leader_or_0(w);
	f = (l + 1) % 5;
	mk_create(&rb, w, "Z", 0x2e, all, 5, 1, NULL, 0);
	r = sw_request(w, f, &rb.r);
	EXPECT(w, r != NULL);
	/* Millisecond steps: the answer takes at least one. */
	for (end = sw_now(w) + 20 * ET; sw_now(w) < end && !l_applied_z(w); )
		sw_run_for(w, 1);
	EXPECT(w, l_applied_z(w) && r && !r->done);
	for (k = 0; k < 5; k++)
		if (k != l && k != f)
			sw_disk_lose(w, k);
	for (end = sw_now(w) + 20 * ET; r && sw_now(w) < end && !r->done; )
		sw_run_for(w, 1);
	EXPECT(w, r && r->done && !r->error);
	return reported(w);
}
