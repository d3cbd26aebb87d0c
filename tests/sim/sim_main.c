// SPDX-License-Identifier: GPL-2.0
/*
 * imex-sim: run seeded scenarios of the imexd protocol core.
 *
 *   imex-sim --seeds 1000 [--first 1] [--min-nodes 3] [--max-nodes 18]
 *   imex-sim --seed 42 [-v]          replay one seed (-v: every log line)
 *   imex-sim --scale [--nodes 144]   one fault-free create over all nodes
 *
 * Each seed fixes everything: the cluster size, delays, fault rates, the
 * workload and the faults.  A failure prints the seed, the step and the
 * invariant; the same command with --seed replays it exactly.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sim.h"

struct opts {
	uint64_t seed, first, count;
	bool one, scale, faults;
	int verbose;
	int min_nodes, max_nodes, nodes;
	uint64_t chaos_ms, quiesce_ms;
};

static void params_for(const struct opts *o, uint64_t seed,
		       struct sim_params *p)
{
	struct sim_rng r;

	rng_seed(&r, seed ^ 0x5eedf00dULL);
	memset(p, 0, sizeof(*p));
	p->seed = seed;
	p->nodes = o->nodes ? o->nodes :
		   (int)rng_range(&r, o->min_nodes, o->max_nodes);
	p->faults = o->faults;
	p->verbose = o->verbose;
	p->chaos_ms = o->chaos_ms;
	p->quiesce_ms = o->quiesce_ms;
	p->delay_min = rng_range(&r, 1, 3);
	p->delay_max = p->delay_min + rng_range(&r, 0, 20);
	p->kdelay_max = rng_chance(&r, 0.5) ? 0 : rng_range(&r, 1, 5);
	if (o->faults) {
		p->p_drop = rng_chance(&r, 0.5) ? rng_range(&r, 1, 40) / 10000.0 : 0;
		p->p_dup = rng_chance(&r, 0.5) ? rng_range(&r, 1, 40) / 10000.0 : 0;
		p->p_reorder = rng_chance(&r, 0.5) ?
			       rng_range(&r, 1, 40) / 10000.0 : 0;
	}
	p->max_channels = rng_chance(&r, 0.5) ? 32 : 64;
	p->load_gap_ms = rng_range(&r, 200, 1500);
	p->fault_gap_ms = rng_range(&r, 400, 3000);
}

static void print_stats(const struct sim *s)
{
	int e;

	printf("  %llu events, %llu messages (%llu dropped, %llu duplicated), %llu requests: %llu ok, %llu failed, %llu refused by the kernel's own checks\n",
	       (unsigned long long)s->st.events,
	       (unsigned long long)s->st.msgs_total,
	       (unsigned long long)s->st.drops, (unsigned long long)s->st.dups,
	       (unsigned long long)s->st.requests,
	       (unsigned long long)s->st.req_ok,
	       (unsigned long long)s->st.req_err,
	       (unsigned long long)s->st.req_local_refused);
	printf("  faults: %llu daemon restarts, %llu reboots, %llu partitions/cuts, %llu resets; %llu peer restarts seen\n",
	       (unsigned long long)s->st.restarts,
	       (unsigned long long)s->st.reboots,
	       (unsigned long long)s->st.partitions,
	       (unsigned long long)s->st.resets,
	       (unsigned long long)s->st.peer_restarted);
	printf("  request errors:");
	for (e = 1; e < 160; e++)
		if (s->st.errors[e])
			printf(" %s=%llu", strerrorname_np(e) ? strerrorname_np(e) : "?",
			       (unsigned long long)s->st.errors[e]);
	printf("\n  run hash %016llx\n", (unsigned long long)s->hash);
}

static bool run_seed(const struct opts *o, uint64_t seed, bool stats)
{
	struct sim_params p;
	struct sim s;
	bool ok;
	int i;

	params_for(o, seed, &p);
	sim_init(&s, &p);
	s.chaos = p.faults;
	for (i = 0; i < s.n; i++)
		sim_node_start(&s, i);
	sim_push(&s, 300, EV_LOAD, -1, 0, 0, NULL);
	if (p.faults)
		sim_push(&s, 1000, EV_FAULT, -1, 0, 0, NULL);
	sim_push(&s, 250, EV_CHECK, -1, 0, 0, NULL);
	sim_push(&s, p.chaos_ms, EV_HEAL, -1, 0, 0, NULL);
	sim_run_until(&s, p.chaos_ms + p.quiesce_ms);
	if (!s.failure[0])
		check_quiescent(&s);
	ok = !s.failure[0];
	if (!ok) {
		printf("FAIL seed %llu (%d nodes): step %llu at %llu ms: %s\n",
		       (unsigned long long)seed, p.nodes,
		       (unsigned long long)s.fail_step,
		       (unsigned long long)s.fail_time, s.failure);
		printf("  replay: imex-sim --seed %llu%s --min-nodes %d --max-nodes %d -v\n",
		       (unsigned long long)seed, o->faults ? "" : " --no-faults",
		       o->min_nodes, o->max_nodes);
	}
	if (stats) {
		printf("seed %llu: %d nodes, delay %u-%u ms, kernel delay <= %u ms, drop %.4f dup %.4f reorder %.4f, %u channels: %s\n",
		       (unsigned long long)seed, p.nodes, p.delay_min,
		       p.delay_max, p.kdelay_max, p.p_drop, p.p_dup,
		       p.p_reorder, p.max_channels, ok ? "passed" : "FAILED");
		print_stats(&s);
	}
	sim_free(&s);
	return ok;
}

static bool all_ready(struct sim *s, const uint8_t uuid[16])
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!s->nodes[i].up ||
		    !imexd_core_domain_ready(s->nodes[i].core, uuid))
			return false;
	return true;
}

/* One domain over every node, no faults: how many round trips, messages. */
static bool run_scale(const struct opts *o)
{
	static const uint8_t proto[] = {
		IMEXD_MSG_QUERY_FREE, IMEXD_MSG_FREE, IMEXD_MSG_PREPARE,
		IMEXD_MSG_VOTE, IMEXD_MSG_COMMIT, IMEXD_MSG_ACK,
	};
	static const char *const names[IMEXD_MSG_TYPE_MAX + 1] = {
		"", "HELLO", "HELLO_ACK", "HEARTBEAT", "QUERY_FREE", "FREE",
		"PREPARE", "VOTE", "COMMIT", "ABORT", "ACK", "OUTCOME_QUERY",
		"OUTCOME", "SYNC", "LEAVE",
	};
	struct imexd_member *members;
	struct imexd_request r;
	struct sim_params p;
	uint64_t before, t0, rtt, protocol = 0, all = 0;
	uint8_t uuid[16];
	const struct imexd_def *defs[4];
	struct sim s;
	bool ok;
	size_t k;
	int i;

	memset(&p, 0, sizeof(p));
	p.seed = o->seed;
	p.scale = true;
	p.nodes = o->nodes ? o->nodes : 144;
	p.delay_min = p.delay_max = 1;
	p.max_channels = 2048;
	p.chaos_ms = 0;
	p.verbose = o->verbose;
	rtt = 2 * (uint64_t)p.delay_min;
	sim_init(&s, &p);
	s.quiet = true;
	for (i = 0; i < s.n; i++)
		sim_node_start(&s, i);
	/* Past the start-up quarantine (a heartbeat timeout + a backoff). */
	sim_run_until(&s, 7000);
	members = calloc(s.n, sizeof(*members));
	if (!members)
		abort();
	for (i = 0; i < s.n; i++) {
		snprintf(members[i].name, sizeof(members[i].name), "%s",
			 s.nodes[i].name);
		snprintf(members[i].addr, sizeof(members[i].addr), "%s",
			 s.nodes[i].addr);
	}
	memset(&r, 0, sizeof(r));
	r.req_id = ++s.next_req_id;
	r.cmd = IMEX_CMD_DOMAIN_CREATE;
	snprintf(r.name, sizeof(r.name), "rack");
	r.members = members;
	r.nmembers = (uint16_t)s.n;
	r.count = 4;
	r.mode = 0600;
	before = s.st.msgs_total;
	s.tracking = true;
	s.track_req = r.req_id;
	s.track_start = t0 = s.now;
	sim_request(&s, 0, &r);
	while (s.tracking && !s.failure[0] && sim_step(&s))
		;
	free(members);
	ok = !s.failure[0] && s.reqs[0].done && !s.reqs[0].error;
	printf("scale: create over %d nodes (one-way delay %u ms, RTT %llu ms): %s in %llu ms = %.1f RTT\n",
	       s.n, p.delay_min, (unsigned long long)rtt,
	       ok ? "done" : "FAILED", (unsigned long long)(s.track_done - t0),
	       (double)(s.track_done - t0) / (double)rtt);
	printf("  messages until REQUEST_DONE:");
	for (k = 1; k <= IMEXD_MSG_TYPE_MAX; k++) {
		if (s.track_msgs[k])
			printf(" %s=%llu", names[k],
			       (unsigned long long)s.track_msgs[k]);
		all += s.track_msgs[k];
	}
	for (k = 0; k < sizeof(proto); k++)
		protocol += s.track_msgs[proto[k]];
	printf("\n  two-phase messages %llu (%.2f per node; goal <= 6), all messages %llu (%.2f per node)\n",
	       (unsigned long long)protocol, (double)protocol / s.n,
	       (unsigned long long)all, (double)all / s.n);
	if (!ok) {
		printf("  %s\n", s.failure);
		sim_free(&s);
		return false;
	}
	if (imexd_core_domains(s.nodes[0].core, defs) != 1) {
		printf("  the coordinator does not hold the domain\n");
		sim_free(&s);
		return false;
	}
	memcpy(uuid, defs[0]->uuid, 16);
	while (!all_ready(&s, uuid) && s.now < t0 + 60000 && !s.failure[0])
		sim_run_until(&s, s.now + 10);
	printf("  READY on all %d nodes after %llu ms; %llu messages from the request on (full mesh: %d connections)\n",
	       s.n, (unsigned long long)(s.now - t0),
	       (unsigned long long)(s.st.msgs_total - before),
	       s.n * (s.n - 1) / 2);
	ok = all_ready(&s, uuid);
	sim_run_until(&s, s.now + 5000);
	if (!s.failure[0])
		check_quiescent(&s);
	if (s.failure[0]) {
		printf("  FAIL: %s\n", s.failure);
		ok = false;
	}
	printf("scale: %s\n", ok ? "passed" : "FAILED");
	sim_free(&s);
	return ok;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: imex-sim [--seeds N [--first F] | --seed S] [--min-nodes A] [--max-nodes B]\n"
		"                [--nodes N] [--no-faults] [--chaos-ms T] [--quiesce-ms T] [-v]\n"
		"       imex-sim --scale [--nodes 144] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "seeds", required_argument, NULL, 'n' },
		{ "first", required_argument, NULL, 'f' },
		{ "min-nodes", required_argument, NULL, 'a' },
		{ "max-nodes", required_argument, NULL, 'b' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "no-faults", no_argument, NULL, 'F' },
		{ "chaos-ms", required_argument, NULL, 'c' },
		{ "quiesce-ms", required_argument, NULL, 'q' },
		{ "scale", no_argument, NULL, 'S' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.first = 1, .count = 100, .faults = true, .min_nodes = 3,
		.max_nodes = 18, .chaos_ms = 40000, .quiesce_ms = 60000,
	};
	uint64_t i, passed = 0, failed = 0;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);	/* a crash keeps what was said */
	while ((c = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			o.seed = strtoull(optarg, NULL, 0);
			o.one = true;
			break;
		case 'n':
			o.count = strtoull(optarg, NULL, 0);
			break;
		case 'f':
			o.first = strtoull(optarg, NULL, 0);
			break;
		case 'a':
			o.min_nodes = atoi(optarg);
			break;
		case 'b':
			o.max_nodes = atoi(optarg);
			break;
		case 'N':
			o.nodes = atoi(optarg);
			break;
		case 'F':
			o.faults = false;
			break;
		case 'c':
			o.chaos_ms = strtoull(optarg, NULL, 0);
			break;
		case 'q':
			o.quiesce_ms = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			o.scale = true;
			break;
		case 'v':
			o.verbose++;
			break;
		default:
			usage();
		}
	}
	if (o.min_nodes < 2 || o.max_nodes < o.min_nodes ||
	    o.max_nodes > SIM_MAX_NODES || o.nodes > SIM_MAX_NODES)
		usage();
	if (o.scale)
		return run_scale(&o) ? 0 : 1;
	if (o.one)
		return run_seed(&o, o.seed, true) ? 0 : 1;
	printf("imex-sim: seeds %llu..%llu, %d-%d nodes, faults %s\n",
	       (unsigned long long)o.first,
	       (unsigned long long)(o.first + o.count - 1), o.min_nodes,
	       o.max_nodes, o.faults ? "on" : "off");
	for (i = 0; i < o.count; i++) {
		if (run_seed(&o, o.first + i, false))
			passed++;
		else
			failed++;
	}
	printf("%llu passed, %llu failed\n", (unsigned long long)passed,
	       (unsigned long long)failed);
	return failed ? 1 : 0;
}
