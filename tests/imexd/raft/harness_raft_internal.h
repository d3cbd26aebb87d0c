/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-memory consensus cluster's internals, shared by harness_raft.c
 * (state machine, messages, disks, nodes, faults) and harness_raft_run.c
 * (the event loop and the calls tests make on a running cluster).  Not
 * an interface: tests use harness_raft.h.
 */
#ifndef HARNESS_RAFT_INTERNAL_H
#define HARNESS_RAFT_INTERNAL_H

#include <stdio.h>
#include <stdlib.h>

#include "harness_raft.h"
#include "sim_alloc.h"

#define CHECK(x)                                                          \
	do {                                                              \
		if (!(x)) {                                               \
			fprintf(stderr, "harness: %s:%d: %s (seed %u)\n", \
				__FILE__, __LINE__, #x, h->seed);         \
			abort();                                          \
		}                                                         \
	} while (0)

struct hr_cmd {
	raft_index index;
	raft_term term;
	size_t len;
	uint8_t *data;
};

struct hr_list {
	struct hr_cmd *v;
	size_t n, cap;
};

struct hr_dentry {
	raft_term term;
	enum raft_entry_type type;
	size_t len;
	uint8_t *buf;
};

struct hr_write {
	uint64_t due;
	bool snapshot;
	raft_index index;
	struct hr_dentry *ents; /* entries write */
	unsigned n;
	struct raft_snapshot_metadata meta; /* snapshot write */
	uint8_t *data;
	size_t len;
};

struct hr_node {
	struct imexd_cons *cons;
	bool up;
	unsigned restarts;
	/* disk */
	raft_term term;
	raft_id vote;
	struct hr_dentry *log;
	size_t log_n;
	raft_index log_start;
	bool snap;
	struct raft_snapshot_metadata snap_meta;
	uint8_t *snap_data;
	size_t snap_len;
	/* writes in flight, FIFO */
	struct hr_write *w;
	size_t n_w, cap_w;
	/* state machine */
	struct hr_list fsm;
};

struct hr_msg {
	uint64_t due, seq;
	raft_id from, to;
	struct raft_message m;
};

struct hr_ack {
	uint64_t tag;
	raft_id node;
	size_t len;
	uint8_t *data;
	bool acked, dropped;
	bool change; /* a membership change (no command) */
};

struct hr {
	struct hr_config cfg;
	char *names[HR_NODES_MAX];
	struct hr_node nodes[HR_NODES_MAX];
	uint64_t now, seq, rng;
	unsigned seed;
	bool cut[HR_NODES_MAX][HR_NODES_MAX];
	struct hr_msg *msgs;
	size_t n_msgs, cap_msgs;
	struct hr_list chosen; /* index -> command, first applied anywhere */
	struct hr_ack *acks;
	size_t n_acks, cap_acks;
	unsigned n_acked, n_dropped, violations, restores;
	uint64_t next_tag;
};

/* harness_raft.c */
struct hr_node *node(struct hr *h, raft_id id);
void msg_free(struct raft_message *m);
void drain(struct hr *h, raft_id id);
void input_done(struct hr *h, raft_id id, int rv);
void write_complete(struct hr *h, raft_id id);

#endif /* HARNESS_RAFT_INTERNAL_H */
