/* SPDX-License-Identifier: GPL-2.0 */
/*
 * imex-sim: N imexd cores in one process, on a simulated network, kernel
 * and disk, driven by one seeded PRNG and a discrete-event queue in virtual
 * milliseconds.  Same seed, same run, same output.
 *
 *   sim_main.c    arguments, seed loop, the 144-node scale run, summary
 *   sim_world.c   PRNG, event queue, nodes (start, crash, restart, reboot),
 *                 the wiring of each core's actions
 *   sim_net.c     connections, delays, partitions, message faults, codec
 *   sim_kernel.c  a model of imex.ko's change semantics, and the store
 *   sim_load.c    the workload (requests) and the fault schedule
 *   sim_check.c   invariants
 */
#ifndef IMEX_SIM_H
#define IMEX_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "core.h"

#define SIM_NO_TIME	UINT64_MAX
#define SIM_MAX_NODES	160
#define SIM_PORT	50100
#define SIM_MAX_T(a, b)	((a) > (b) ? (a) : (b))

struct sim_rng {
	uint64_t s[4];
};

void rng_seed(struct sim_rng *r, uint64_t seed);
uint64_t rng_next(struct sim_rng *r);
uint32_t rng_below(struct sim_rng *r, uint32_t n);	/* [0, n) */
uint32_t rng_range(struct sim_rng *r, uint32_t lo, uint32_t hi);	/* [lo, hi] */
bool rng_chance(struct sim_rng *r, double p);

/* ---- kernel model (sim_kernel.c) ---- */

struct kchange;

struct kdom {
	char name[IMEX_NAME_MAX];
	uint8_t uuid[16];
	uint8_t fabric[16];
	uint32_t partition;
	uint16_t nmembers;
	struct imexd_member *members;
	uint32_t state;			/* enum imex_domain_state */
	struct kchange *change;
	bool live;			/* false: slot free */
};

struct kchan {
	int dom;			/* kdom index, -1 free */
	bool reserved;
	struct kchange *change;
	uint32_t uid, gid, mode;
};

struct kchange {
	uint64_t id;
	uint8_t op;
	int dom;
	uint64_t expires;
	uint32_t nchan;
	uint32_t *chan;
	uint16_t nmembers;
	struct imexd_member *members;
	struct kchange *next;
};

struct kmodel {
	char node_name[IMEX_NAME_MAX];
	uint8_t fabric[16];
	uint32_t partition;
	uint32_t max_channels;
	struct kdom *doms;
	size_t ndoms, doms_cap;
	struct kchan *chans;
	struct kchange *changes;
	uint64_t history[IMEX_CHANGE_HISTORY];
	unsigned int hlen, hpos;
	bool manager;
	char msg[IMEX_MESSAGE_MAX];
};

void kmodel_init(struct kmodel *k, const char *name, const uint8_t fabric[16],
		 uint32_t partition, uint32_t max_channels);
void kmodel_free(struct kmodel *k);
void kmodel_reboot(struct kmodel *k);
int kmodel_prepare(struct kmodel *k, uint64_t now,
		   const struct imexd_action *a);
int kmodel_commit(struct kmodel *k, uint64_t id);
int kmodel_abort(struct kmodel *k, uint64_t id);
int kmodel_status(struct kmodel *k, const struct imexd_domain_status *st);
void kmodel_detach(struct kmodel *k);
/* Roll back what expired by @now; the earliest expiry left, or NO_TIME. */
uint64_t kmodel_expire(struct kmodel *k, uint64_t now);
int kmodel_find(const struct kmodel *k, const char *name);
/* Committed domains as definitions (generation 0): for a daemon start. */
size_t kmodel_defs(const struct kmodel *k, struct imexd_def **out);
bool kmodel_chan_free(const struct kmodel *k, uint32_t id);
const char *kmodel_check(const struct kmodel *k, uint64_t now, bool full);

struct store_model {
	struct imexd_def *defs;
	size_t n, cap;
};

void store_put(struct store_model *s, const struct imexd_def *def);
void store_remove(struct store_model *s, const uint8_t uuid[16]);
void store_free(struct store_model *s);

/* ---- the world (sim_world.c) ---- */

enum ev_type {
	EV_TIMER = 1,
	EV_CONN_UP,
	EV_CONN_FAILED,
	EV_FIN,
	EV_DELIVER,
	EV_KDONE,
	EV_KEXPIRE,
	EV_LOAD,
	EV_FAULT,
	EV_RESTART,
	EV_HEAL,
	EV_CHECK,
	EV_CUT_END,
};

struct sim_ev {
	uint64_t t;
	uint64_t seq;
	uint8_t type;
	int node;
	uint32_t inc;			/* node incarnation it belongs to */
	uint64_t a, b;
	int err;
	void *p;			/* EV_DELIVER: struct sim_pkt */
};

struct sim_pkt {
	uint64_t conn;
	int to;
	uint8_t *frame;			/* encoded, when the codec is linked */
	size_t len;
	struct imexd_msg msg;		/* otherwise a deep copy */
};

struct sim_conn {
	uint64_t id;
	int node[2];			/* 0 dialled 1 */
	uint32_t inc[2];
	bool open[2];			/* that end is up and not closed */
	bool up[2];			/* conn_up delivered to that end */
	uint64_t last[2];		/* last arrival time towards end i */
	bool dead;
};

struct sim_req {
	uint64_t id;
	int node;
	uint32_t inc;
	uint32_t cmd;
	char name[IMEX_NAME_MAX];
	uint64_t issued;
	bool done;
	int error;
};

struct sim_node {
	int idx;
	char name[IMEX_NAME_MAX];
	char addr[64];
	struct imexd_core *core;
	struct imexd_core_cfg cfg;
	uint32_t inc;
	bool up;			/* daemon running */
	bool powered;			/* machine up (kernel alive) */
	uint64_t timer_at;
	uint64_t last_timer;
	uint32_t same_timer;
	uint64_t kexpire_at;
	struct kmodel kernel;
	struct store_model store;
	uint64_t next_req;
	uint64_t down_since;
};

struct sim_stats {
	uint64_t events;
	uint64_t msgs[IMEXD_MSG_TYPE_MAX + 1];
	uint64_t msgs_total;
	uint64_t requests, req_ok, req_err, req_local_refused;
	uint64_t errors[160];
	uint64_t restarts, reboots, partitions, resets, drops, dups;
	uint64_t status_refused;
	uint64_t peer_restarted;
};

struct sim_params {
	uint64_t seed;
	int nodes;
	bool faults;
	int verbose;
	uint64_t chaos_ms;
	uint64_t quiesce_ms;
	uint32_t delay_min, delay_max;	/* one-way, ms */
	uint32_t kdelay_max;		/* kernel answer delay, ms */
	double p_drop, p_dup, p_reorder;
	uint32_t max_channels;
	uint32_t load_gap_ms;		/* mean gap between requests */
	uint32_t fault_gap_ms;		/* mean gap between faults */
	bool scale;			/* the 144-node create */
};

struct sim_cut {
	int a, b;			/* -1 in b: all of group */
	uint64_t until;
};

struct sim {
	struct sim_params prm;
	struct sim_rng rng;
	uint64_t now;
	uint64_t seq;
	struct sim_ev *heap;
	size_t nheap, heap_cap;
	struct sim_node *nodes;
	int n;
	struct sim_conn *conns;
	size_t nconns, conns_cap;
	uint64_t next_conn;
	struct sim_req *reqs;
	size_t nreqs, reqs_cap;
	uint64_t next_req_id;
	bool *cut;			/* n*n: link cut */
	uint64_t *bad_since;		/* n*n: when the pair last went bad */
	uint64_t *good_since;		/* n*n: when the pair last became good */
	uint16_t *owner;		/* scratch: channel -> domain, checks */
	bool chaos;
	bool quiet;			/* workload and faults stopped */
	uint64_t name_counter;
	struct sim_stats st;
	char failure[512];
	uint64_t fail_step, fail_time;
	uint64_t hash;			/* of the whole run, for replay checks */
	/* scale run */
	uint64_t track_req;
	uint64_t track_start, track_done;
	uint64_t track_msgs[IMEXD_MSG_TYPE_MAX + 1];
	bool tracking;
};

void sim_init(struct sim *s, const struct sim_params *prm);
void sim_free(struct sim *s);
void sim_push(struct sim *s, uint64_t t, uint8_t type, int node, uint64_t a,
	      uint64_t b, void *p);
bool sim_step(struct sim *s);		/* false: queue empty */
void sim_run_until(struct sim *s, uint64_t t);
void sim_node_start(struct sim *s, int i);
void sim_node_crash(struct sim *s, int i, bool reboot);
void sim_conn_reset(struct sim *s, size_t ci);
bool sim_link_ok(const struct sim *s, int a, int b);
void sim_set_cut(struct sim *s, int a, int b, bool cut);
void sim_fail(struct sim *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sim_request(struct sim *s, int node, const struct imexd_request *r);
int sim_node_by_addr(const struct sim *s, const char *addr);

void sim_drain(struct sim *s, int i);

/* ---- the network (sim_net.c) ---- */
void pkt_free(struct sim_pkt *p);
void sim_node_pairs(struct sim *s, int i);
void sim_connect(struct sim *s, int i, const char *addr);
void sim_conn_up(struct sim *s, const struct sim_ev *e);
void sim_close(struct sim *s, int i, uint64_t id);
void sim_fin(struct sim *s, const struct sim_ev *e);
void sim_send(struct sim *s, int i, struct imexd_action *a);
void sim_deliver(struct sim *s, const struct sim_ev *e);

/* ---- workload and faults (sim_load.c) ---- */
void load_event(struct sim *s);
void fault_event(struct sim *s);
void load_heal_all(struct sim *s);

/* ---- invariants (sim_check.c) ---- */
void check_node(struct sim *s, int i, bool full);
void check_ready(struct sim *s);
void check_quiescent(struct sim *s);

#endif /* IMEX_SIM_H */
