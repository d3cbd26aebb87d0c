// SPDX-License-Identifier: GPL-2.0
/*
 * The node simulator's timed runs (see sim_agree.c): one create over many
 * nodes (scale) and a quiet 5-node group's commit latency, restart to
 * READY and leader failover (failover).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_agree.h"

/* ---- scale --------------------------------------------------------------- */

static struct sw_req *scale_req;
static unsigned scale_members[SCALE_MEMBERS];

/* The create answered, and READY at its generation pushed on each of
 * @nodes (NULL: nodes 0..n-1). */
static bool req_ready(struct sw *w, const unsigned *nodes, unsigned n)
{
	unsigned k;

	if (!scale_req->done || scale_req->error)
		return scale_req->done;
	for (k = 0; k < n; k++) {
		const struct sw_status *st = sw_status_of(w, nodes ? nodes[k] : k,
							  scale_req->def.uuid);

		if (!st || st->state != IMEX_DOMAIN_READY ||
		    st->generation != scale_req->def.generation)
			return false;
	}
	return true;
}

/* ... on every member. */
static bool scale_ready(struct sw *w)
{
	return req_ready(w, scale_members, SCALE_MEMBERS);
}

/* A quiet network: a fixed latency, the daemon's default election timeout
 * and heartbeat, no resets. */
static struct sw_config quiet_config(unsigned n, unsigned seed)
{
	struct sw_config cfg = world_config(n, seed);

	cfg.et_ms = 1000;
	cfg.latency_ms = 5;
	cfg.jitter_ms = 0;
	cfg.break_pm = 0;
	cfg.heartbeat_ms = 1000;
	return cfg;
}

/* Just after the leader's heartbeat round and its answers: a create then
 * counts the messages it sends, not a round that falls due meanwhile. */
static void quiet_round(struct sw *w, unsigned l, uint64_t rtt)
{
	sw_run_until(w, imexd_cons_timeout(sw_cons(w, l)) + 2 * rtt);
}

/*
 * N nodes converge; then one create naming 18 of them (the follower it
 * enters at among them) runs to READY on every member, on a quiet network
 * with a fixed latency, the daemon's default election timeout and no
 * faults.  Figures in simulated time and frames delivered.
 */
unsigned scale(unsigned n, unsigned seed)
{
	struct sw_config cfg = quiet_config(n, seed);
	const struct sw_stats *st;
	unsigned long raft0, all0;
	struct req_buf rb;
	uint64_t t0, rtt;
	unsigned l, f, k, v;
	struct sw *w;

	rtt = 2ull * cfg.latency_ms;
	w = sw_new(&cfg);
	st = sw_stats(w);
	if (!sw_run_pred(w, 600ull * 1000, converged)) {
		sw_violation(w, "%u nodes did not converge", n);
		sw_free(w);
		return 1;
	}
	sw_run_for(w, 5000);	/* quiet: past the first heartbeats */
	l = leader_or_0(w);
	quiet_round(w, l, rtt);
	f = (l + 1) % n;
	for (k = 0; k < SCALE_MEMBERS; k++)
		scale_members[k] = (f + k * (n / SCALE_MEMBERS ? n / SCALE_MEMBERS : 1)) % n;
	mk_create(&rb, w, "scale", 0, scale_members, SCALE_MEMBERS, 1, NULL, 0);
	raft0 = st->raft_msgs;
	all0 = st->delivered;
	t0 = sw_now(w);
	scale_req = sw_request(w, f, &rb.r);
	while (scale_req && !scale_ready(w) && sw_now(w) < t0 + 60000)
		sw_run_for(w, 1);
	if (!scale_req || !scale_ready(w) || scale_req->error) {
		sw_violation(w, "the create over %u nodes did not reach READY on every member: %s",
			     n, scale_req ? scale_req->message : "node down");
	} else {
		uint64_t ms = sw_now(w) - t0;

		printf("scale: create over %u nodes in %llu ms = %.1f RTT (RTT %llu ms)\n",
		       n, (unsigned long long)ms, (double)ms / (double)rtt,
		       (unsigned long long)rtt);
		printf("scale: raft messages %lu (per create), all messages %lu\n",
		       st->raft_msgs - raft0, st->delivered - all0);
	}
	v = sw_violations(w);
	sw_free(w);
	return v;
}

/* ---- failover ------------------------------------------------------------ */

#define FO_NODES 5

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool fo_ready(struct sw *w)
{
	return req_ready(w, NULL, FO_NODES);
}

/* Median and largest of @n samples (sorted in place), in units of @unit. */
static void fo_print(const char *what, uint64_t *v, unsigned n, double unit,
		     const char *unit_name)
{
	uint64_t mid, max;

	qsort(v, n, sizeof(*v), cmp_u64);
	mid = v[n / 2];
	max = v[n - 1];
	printf("%s: median %.2f %s, max %.2f %s (%u runs)\n", what,
	       (double)mid / unit, unit_name, (double)max / unit, unit_name, n);
}

/*
 * A quiet group of five nodes with the daemon's default election timeout
 * and a fixed latency, once per seed: a create of a domain of all five
 * entered at the leader (time until the leader counts it committed on a
 * majority; raft messages until READY everywhere), a member
 * restarted (time from the daemon up until the domain is READY on every
 * member again), then the leader killed (time until another node is
 * leader).  Figures in simulated time.
 */
unsigned failover(unsigned runs)
{
	uint64_t commit[64], restart[64], elect[64], msgs[64];
	unsigned all[FO_NODES] = { 0, 1, 2, 3, 4 }, s, n = 0, v = 0;
	uint64_t rtt = 0, et = 0;

	if (runs > 64)
		runs = 64;
	for (s = 1; s <= runs; s++) {
		struct sw_config cfg = quiet_config(FO_NODES, s);
		const struct imexd_cons *c;
		uint64_t t0, last;
		unsigned long raft0;
		struct req_buf rb;
		raft_term term;
		unsigned l, x;
		struct sw *w;
		int nl;

		rtt = 2ull * cfg.latency_ms;
		et = cfg.et_ms;
		w = sw_new(&cfg);
		if (!sw_run_pred(w, 600ull * 1000, converged)) {
			sw_violation(w, "%u nodes did not converge", FO_NODES);
			v += sw_violations(w);
			sw_free(w);
			continue;
		}
		sw_run_for(w, 5000);
		l = leader_or_0(w);
		c = sw_cons(w, l);
		quiet_round(w, l, rtt);
		last = imexd_raftlog_last_index(sw_log(w, l));
		mk_create(&rb, w, "fo", 0, all, FO_NODES, 1, NULL, 0);
		t0 = sw_now(w);
		raft0 = sw_stats(w)->raft_msgs;
		scale_req = sw_request(w, l, &rb.r);
		while (imexd_cons_commit(c) <= last && sw_now(w) < t0 + 60000)
			sw_run_for(w, 1);
		commit[n] = sw_now(w) - t0;
		while (scale_req && !fo_ready(w) && sw_now(w) < t0 + 60000)
			sw_run_for(w, 1);
		EXPECT(w, scale_req && fo_ready(w) && !scale_req->error);
		msgs[n] = sw_stats(w)->raft_msgs - raft0;
		sw_run_for(w, 5000);

		x = (l + 1) % FO_NODES;
		sw_crash(w, x);
		sw_restart(w, x);
		t0 = sw_now(w);
		while (!fo_ready(w) && sw_now(w) < t0 + 60000)
			sw_run_for(w, 1);
		EXPECT(w, fo_ready(w));
		restart[n] = sw_now(w) - t0;
		sw_run_for(w, 5000);

		l = leader_or_0(w);
		term = imexd_cons_term(sw_cons(w, l));
		sw_crash(w, l);
		t0 = sw_now(w);
		for (;;) {
			nl = sw_leader(w);
			if ((nl >= 0 && imexd_cons_term(sw_cons(w, (unsigned)nl)) > term) ||
			    sw_now(w) >= t0 + 60000)
				break;
			sw_run_for(w, 1);
		}
		EXPECT(w, nl >= 0 && (unsigned)nl != l);
		elect[n] = sw_now(w) - t0;
		printf("failover seed %u: commit %llu ms, create %llu raft msgs, restart to READY %llu ms, new leader %llu ms\n",
		       s, (unsigned long long)commit[n],
		       (unsigned long long)msgs[n],
		       (unsigned long long)restart[n],
		       (unsigned long long)elect[n]);
		n++;
		sw_restart(w, l);
		v += sw_check_final(w);
		sw_free(w);
	}
	if (!n)
		return v + 1;
	fo_print("commit: request at the leader to committed on a majority",
		 commit, n, (double)rtt, "RTT");
	fo_print("create: raft messages, request to READY everywhere", msgs, n,
		 1.0, "msgs");
	fo_print("restart: daemon up to READY on every member", restart, n,
		 (double)rtt, "RTT");
	fo_print("failover: leader killed to a new leader", elect, n,
		 (double)et, "ET");
	printf("failover: %u nodes, RTT %llu ms, election timeout %llu ms\n",
	       (unsigned)FO_NODES, (unsigned long long)rtt,
	       (unsigned long long)et);
	return v;
}
