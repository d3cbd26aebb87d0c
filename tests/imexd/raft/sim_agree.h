/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node simulator's shared pieces (see sim_agree.c): the world it
 * builds, request builders, the answered request and the scenarios that
 * sim_agree.c's main() runs.  Each scenario returns its violations.
 */
#ifndef SIM_AGREE_H
#define SIM_AGREE_H

#include <linux/imex.h>

#include "sim_world.h"
#include "node_internal.h"

#define ET ((uint64_t)100)	/* election timeout (simulated ms) */
#define NAMES 6			/* domain names d0..d5 */
#define SCALE_MEMBERS 18		/* the scale run's domain */

/* A request with its arrays in the caller's storage. */
struct req_buf {
	struct imexd_request r;
	struct imexd_member m[SCALE_MEMBERS];
	uint32_t ids[8];
};

#define EXPECT(w, x)                                                       \
	do {                                                               \
		if (!(x))                                                  \
			sw_violation(w, "%s:%d: expected %s", __FILE__,    \
				     __LINE__, #x);                        \
	} while (0)

/* sim_agree.c */
struct sw_config world_config(unsigned n, unsigned seed);
struct sw *world(unsigned n, unsigned seed);
bool converged(struct sw *w);
void mk_create(struct req_buf *b, struct sw *w, const char *name,
	       uint8_t uuid, const unsigned *nodes, unsigned n,
	       uint32_t count, const uint32_t *ids, uint32_t nids);
void mk_simple(struct req_buf *b, uint32_t cmd, const char *name,
	       const char *member);

/* sim_agree_seeds.c */
unsigned run_seed(unsigned seed, unsigned n, uint64_t ms, bool print);

/* sim_agree_fail.c */
struct sw_req *request(struct sw *w, unsigned node, struct req_buf *b);
unsigned leader_or_0(struct sw *w);
unsigned fail2(unsigned seed, enum sw_crash_point p);
unsigned fail3(unsigned seed);
unsigned fail4(unsigned seed);
unsigned lost_leader(unsigned seed);
unsigned forward_refused(unsigned seed);
unsigned fail5(unsigned seed);
unsigned snap_ready(unsigned seed);
unsigned check_leak(unsigned seed);
unsigned check_lost_disks(unsigned seed);

/* sim_agree_members.c */
unsigned membership(unsigned seed);
unsigned away_during_join(unsigned seed);
unsigned wrong_nodes_file(unsigned seed);

/* sim_agree_scale.c */
unsigned scale(unsigned n, unsigned seed);
unsigned failover(unsigned runs);

#endif
