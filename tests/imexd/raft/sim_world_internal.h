/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated world's internals, shared by sim_world.c (network,
 * kernel, nodes, event loop) and sim_check.c (convergence and the
 * history check).  Not an interface: tests use sim_world.h.
 */
#ifndef SIM_WORLD_INTERNAL_H
#define SIM_WORLD_INTERNAL_H

#include "sim_alloc.h"
#include "sim_world.h"

#define CHECK(x)                                                          \
	do {                                                              \
		if (!(x)) {                                               \
			fprintf(stderr, "sim: %s:%d: %s (IMEX_SEED=%u)\n",\
				__FILE__, __LINE__, #x, w->cfg.seed);     \
			abort();                                          \
		}                                                         \
	} while (0)

/* A network event: a connection's end opened (UP), a dial that failed
 * (FAILED), a connection's end closed (DOWN), or a frame (MSG). */
enum { EV_UP = 1, EV_FAILED, EV_DOWN, EV_MSG };

struct sw_ev {
	uint64_t due, seq;
	int kind;
	unsigned to, inst;	/* node and its instance it is for */
	uint64_t conn;
	bool outbound;
	uint8_t *frame;
	size_t len;
	char addr[32];
};

/* A simulated TCP connection: dialled by node a, accepted by node b (at
 * their instances ia, ib); frames in each direction keep their order. */
struct sw_conn {
	unsigned a, b, ia, ib;
	bool dead;
	bool open[2];		/* UP delivered at a (0), b (1) */
	uint64_t last_due[2];	/* the latest frame due at a (0), b (1) */
};

struct sw_node {
	struct sw *w;
	unsigned idx;
	char name[16];
	struct imexd_raftlog_mem *disk;
	struct imexd_raftlog *log;
	/* While down: the log as it was when the node went down, which is
	 * what its disk durably holds (an append returns after the sync). */
	struct imexd_raftlog *dead;
	struct imexd_node *node;
	/* imexd_node_deadline() after its last input (only an input moves
	 * it): the event loop reads this, not every node's timers a step. */
	uint64_t deadline;
	bool up, full;
	bool retired;		/* left the group: stays down */
	enum sw_crash_point arm;
	unsigned restarts;	/* also the instance */
	unsigned watched;	/* log lines holding cfg.watch */
	unsigned bound[SW_NODES_MAX];	/* connections bound, by peer */
	struct imexd_def *k;
	size_t nk;
	struct sw_status *st;
	size_t nst;
};

struct sw_chosen {
	uint8_t *data;
	size_t len;
};

/* Voters of a configuration (bit i: node i) and the log index it takes
 * effect at. */
#define SW_MASK_WORDS ((SW_NODES_MAX + 63) / 64)
struct sw_conf {
	uint64_t at;
	uint64_t voters[SW_MASK_WORDS];
};

/* Who was first seen committing an index (the leader that committed it,
 * or a node with the same log up to it if the leader stopped first), the
 * entry's term there, and the configurations that node's log held from
 * the one in effect at the index to its last entry (confs[conf0..]). */
struct sw_commit {
	bool set;
	unsigned by;
	uint64_t term;
	size_t conf0, nconf;
};

struct sw {
	struct sw_config cfg;
	uint64_t now, rng, seq, same;
	bool trace_msgs;	/* SIM_VERBOSE=2: every frame delivered */
	const char *names[SW_NODES_MAX];
	struct sw_node nodes[SW_NODES_MAX];
	bool cut[SW_NODES_MAX][SW_NODES_MAX];
	bool side[SW_NODES_MAX];
	unsigned epoch, epochs;
	struct sw_ev *evs;	/* a heap by (due, seq) */
	size_t n_evs, cap_evs;
	struct sw_conn *conns;	/* by connection id - 1 */
	size_t n_conns, cap_conns;
	struct imexd_roster_node *roster;
	struct sw_chosen *chosen;	/* by index */
	size_t n_chosen;
	struct sw_commit *commits;	/* by index */
	size_t n_commits;
	uint64_t committed;		/* highest index seen committed */
	struct sw_conf *confs;
	size_t n_confs, cap_confs;
	struct sw_req **reqs;
	size_t n_reqs, cap_reqs;
	unsigned violations;
	struct sw_stats st;
};

/* sim_world.c: the event heap (ev_new() then ev_push()), and a node's
 * actions carried out as the daemon does. */
struct sw_ev *ev_new(struct sw *w, int kind, unsigned to, uint64_t due);
void ev_push(struct sw *w);
void drain(struct sw *w, unsigned i);

/* sim_world_net.c: connections, frames and their delivery. */
struct sw_conn *conn_of(struct sw *w, uint64_t id);
int conn_end(const struct sw_conn *c, unsigned i, unsigned inst);
void conn_kill(struct sw *w, uint64_t id, int quiet);
void addr_of(char *out, size_t len, unsigned i, unsigned port);
void net_connect(struct sw *w, unsigned i, const char *addr);
void net_send(struct sw *w, unsigned i, const struct imexd_node_action *a);
void deliver(struct sw *w, struct sw_ev *e);

/* sim_world_kernel.c: the simulated kernel. */
void kernel_status(struct sw *w, unsigned i,
		   const struct imexd_domain_status *st);
bool applied_line(const char *text);
void kernel_action(struct sw *w, unsigned i,
		   const struct imexd_node_action *a);

/* sim_check.c: commits as they are seen (after every input of node i,
 * and when i applies @index), and the check of an acknowledgement. */
void sw_seen_commit(struct sw *w, unsigned i, uint64_t index);
void sw_check_ack(struct sw *w, const struct sw_req *r);

#endif /* SIM_WORLD_INTERNAL_H */
