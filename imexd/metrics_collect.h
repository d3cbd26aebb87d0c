/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Filling a metrics snapshot (metrics.h) from the kernel and the node
 * core, in the daemon.  The state keeps what one snapshot needs between
 * collections (the peers' reconnect counts) and the snapshot's storage;
 * every table in it is bounded (IMEX_DOMAINS_MAX, IMEXD_METRICS_PEERS_MAX).
 */
#ifndef IMEXD_METRICS_COLLECT_H
#define IMEXD_METRICS_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include "metrics.h"
#include "node.h"

struct imexd_kernel;

struct imexd_metrics_track {
	char name[IMEX_NAME_MAX];
	bool connected;		/* at the last collection */
	bool ever_up;
	uint64_t reconnects;
};

struct imexd_metrics_state {
	struct imexd_metrics_domain *domains;	/* IMEX_DOMAINS_MAX */
	struct imexd_node_member *members;	/* IMEXD_METRICS_PEERS_MAX */
	struct imexd_metrics_track *peers, *next;
	size_t npeers;
	struct imexd_metrics_peer *out;		/* the snapshot's peers */
};

/* 0 or -ENOMEM. */
int imexd_metrics_state_init(struct imexd_metrics_state *st);
void imexd_metrics_state_free(struct imexd_metrics_state *st);

/*
 * Fill @m (version and node name are the caller's) from kernel @k and
 * @core (NULL before it runs).  @m points into @st until the next call.
 * 0, or -errno with @msg when the kernel could not be read.
 */
int imexd_metrics_collect(struct imexd_kernel *k,
			  const struct imexd_node *core, bool attached,
			  struct imexd_metrics_state *st,
			  struct imexd_metrics *m, char *msg, size_t msglen);

#endif /* IMEXD_METRICS_COLLECT_H */
