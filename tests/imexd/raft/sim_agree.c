// SPDX-License-Identifier: GPL-2.0
/*
 * The node simulator: whole node cores (imexd/node*.c with peers, agree
 * driving the real libraft through consensus*.c, the reconciler, health and
 * broker) in the world of sim_world.c, driven as the daemon drives one,
 * over simulated connections carrying real encoded frames, under crashes at
 * chosen steps, restarts, long partitions and one-way cuts, a full disk,
 * connection resets and reordering across connections, with random admin
 * requests and the history checker.  Named scenarios reproduce the
 * failures of issue 12 (2, 3, 4, 5), replay seeds the checker once got
 * wrong, and keep bugs found here fixed; two more break the world on
 * purpose (requests crossing a partition, lost disks) and pass only if the
 * check of acknowledgements reports it.
 *
 *   sim_agree scenarios [SEED]     the named scenarios (seed 1 unless SEED;
 *                                  SIM_SCENARIO=TEXT: only names holding TEXT)
 *   sim_agree seeds N [FIRST]      N random seeds from FIRST (default 1)
 *   sim_agree big [SEED]           one 144-node random run
 *   sim_agree scale [N]            one create over N nodes (default 144),
 *                                  18 members, timed to READY everywhere
 *   sim_agree failover [RUNS]      a quiet 5-node group per seed 1..RUNS
 *                                  (default 9): commit latency, a member's
 *                                  restart to READY, leader failover time
 *   IMEX_SEED=N sim_agree          replay seed N (its node count: 3 + N % 16)
 *
 * Every failure prints IMEX_SEED=N; exit status 1 if any check failed.
 * To bisect a failure: SIM_NODES=N forces the node count, SIM_NO_CRASH,
 * SIM_NO_PART, SIM_NO_CUT, SIM_NO_DISKFULL switch a fault off, and
 * SIM_VERBOSE=1 traces applies, kernel steps and statuses, requests,
 * crashes and the nodes' log lines; SIM_VERBOSE=2 every frame delivered
 * too (time, to, from, message type/raft message type, size).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_agree.h"
static unsigned failures;

struct sw_config world_config(unsigned n, unsigned seed)
{
	struct sw_config cfg = {
		.n = n, .seed = seed, .et_ms = (unsigned)ET,
		.latency_ms = 1, .jitter_ms = 3, .break_pm = 2,
		.max_channels = 12,
		.snapshot_threshold = 32, .snapshot_trailing = 8,
		.quiet = true,
	};

	return cfg;
}

struct sw *world(unsigned n, unsigned seed)
{
	struct sw_config cfg = world_config(n, seed);

	return sw_new(&cfg);
}

/* Converged, every node's fabric identity in the table. */
bool converged(struct sw *w)
{
	return sw_converged(w) &&
	       imexd_fsm_node_count(sw_fsm(w, 0)) == sw_n(w);
}

static void set_members(struct req_buf *b, struct sw *w, const unsigned *nodes,
			unsigned n)
{
	unsigned i;

	memset(b->m, 0, sizeof(b->m));
	for (i = 0; i < n; i++)
		snprintf(b->m[i].name, sizeof(b->m[i].name), "%s",
			 sw_name(w, nodes[i]));
	b->r.members = b->m;
	b->r.nmembers = (uint16_t)n;
}

/* uuid 0: the node makes one up. */
void mk_create(struct req_buf *b, struct sw *w, const char *name,
	       uint8_t uuid, const unsigned *nodes, unsigned n,
	       uint32_t count, const uint32_t *ids, uint32_t nids)
{
	memset(b, 0, sizeof(*b));
	b->r.cmd = IMEX_CMD_DOMAIN_CREATE;
	snprintf(b->r.name, IMEX_NAME_MAX, "%s", name);
	b->r.has_uuid = uuid != 0;
	memset(b->r.uuid, uuid, 16);
	set_members(b, w, nodes, n);
	b->r.count = count;
	if (nids)
		memcpy(b->ids, ids, nids * sizeof(*ids));
	b->r.ids = nids ? b->ids : NULL;
	b->r.nids = nids;
	b->r.uid = 1000;
	b->r.gid = 1000;
	b->r.mode = 0600;
}

void mk_simple(struct req_buf *b, uint32_t cmd, const char *name,
	       const char *member)
{
	memset(b, 0, sizeof(*b));
	b->r.cmd = cmd;
	snprintf(b->r.name, IMEX_NAME_MAX, "%s", name);
	if (member)
		snprintf(b->r.member, IMEX_NAME_MAX, "%s", member);
}

static void report(const char *name, unsigned v)
{
	printf("%s: %s\n", name, v ? "FAILED" : "ok");
	if (v)
		failures++;
}

/* SIM_SCENARIO=TEXT runs only the scenarios whose name holds TEXT. */
static bool picked(const char *name)
{
	const char *e = getenv("SIM_SCENARIO");

	return !e || strstr(name, e);
}

#define named(name, run)                                                   \
	do {                                                               \
		if (picked(name))                                          \
			report(name, run);                                 \
	} while (0)

static void scenarios(unsigned seed)
{
	named("failure 2: apply, crash, away 60 s: channel not given away",
	      fail2(seed, SW_CRASH_AFTER_APPLY));
	named("failure 2: crash before the kernel call, away 60 s",
	      fail2(seed + 1, SW_CRASH_BEFORE_KERNEL));
	named("failure 2: crash mid-reconcile, away 60 s",
	      fail2(seed + 2, SW_CRASH_MID_RECONCILE));
	named("failure 3: deleted domain stays deleted after 1 h away",
	      fail3(seed));
	named("failure 4: a vanished submitter's create holds nothing",
	      fail4(seed));
	named("failure 5: evict in a 2|3 partition only on the majority",
	      fail5(seed));
	named("a delete sent to a leader cut off at once is made by the next one",
	      lost_leader(seed));
	named("a member restored from a snapshot reports READY at the new generation",
	      snap_ready(seed));
	named("membership: join a node to a running 4-node group, a domain on it, another leaves",
	      membership(seed));
	named("membership: a node away during a join catches up from the joined leader, NODES_FILE unchanged",
	      away_during_join(seed));
	named("a wrong NODES_FILE on 2 of 5 nodes: refused by group id, no divergence",
	      wrong_nodes_file(seed));
	named("a follower may not forward changes to a domain that does not name it",
	      forward_refused(seed));
	/* A leader counting by its own configuration while another node's
	 * view differed was once reported as a minority commit. */
	named("seed 14614 (9 nodes): no violation",
	      run_seed(14614, 9, 12000, false));
	named("checker self-test: an answer that crossed a 2|3 partition is refused",
	      check_leak(seed));
	named("checker self-test: an answer on 2 of 5 voters' disks is refused",
	      check_lost_disks(seed));
}

/* 3..18 nodes by seed; SIM_NODES=N forces N. */
static unsigned nodes_of(unsigned seed)
{
	const char *e = getenv("SIM_NODES");

	return e ? (unsigned)strtoul(e, NULL, 0) : 3 + seed % 16;
}

int main(int argc, char **argv)
{
	const char *env = getenv("IMEX_SEED");
	clock_t t0 = clock();

	if (env) {
		unsigned s = (unsigned)strtoul(env, NULL, 0);

		failures += run_seed(s, nodes_of(s), 12000, true) != 0;
	} else if (argc > 1 && !strcmp(argv[1], "scenarios")) {
		scenarios(argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 1);
	} else if (argc > 2 && !strcmp(argv[1], "seeds")) {
		unsigned n = (unsigned)strtoul(argv[2], NULL, 0), s, bad = 0;
		unsigned first = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : 1;

		for (s = first; s < first + n; s++)
			bad += run_seed(s, nodes_of(s), 12000, false) != 0;
		printf("%u seeds (%u..%u, 3-18 nodes): %u failed, %.1f s\n", n,
		       first, first + n - 1, bad,
		       (double)(clock() - t0) / CLOCKS_PER_SEC);
		failures += bad;
	} else if (argc > 1 && !strcmp(argv[1], "big")) {
		unsigned s = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 1;

		failures += run_seed(s, 144, 12000, true) != 0;
		printf("144 nodes: %.1f s\n",
		       (double)(clock() - t0) / CLOCKS_PER_SEC);
	} else if (argc > 1 && !strcmp(argv[1], "scale")) {
		unsigned n = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 144;

		if (n < SCALE_MEMBERS || n > SW_NODES_MAX) {
			fprintf(stderr, "scale: %d to %d nodes\n", SCALE_MEMBERS,
				SW_NODES_MAX);
			return 2;
		}
		failures += scale(n, 1);
		printf("scale %u nodes: %.1f s\n", n,
		       (double)(clock() - t0) / CLOCKS_PER_SEC);
	} else if (argc > 1 && !strcmp(argv[1], "failover")) {
		unsigned runs = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 9;

		failures += failover(runs ? runs : 1);
		printf("failover %u runs: %.1f s\n", runs ? runs : 1,
		       (double)(clock() - t0) / CLOCKS_PER_SEC);
	} else {
		fprintf(stderr, "usage: %s scenarios [SEED] | seeds N [FIRST] | big [SEED] | scale [N] | failover [RUNS]\n",
			argv[0]);
		return 2;
	}
	return failures ? 1 : 0;
}
