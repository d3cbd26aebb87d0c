/* SPDX-License-Identifier: GPL-2.0 */
/*
 * imexd's metrics in the Prometheus text format (Documentation/metrics.md).
 *
 *   metrics_format.c  the snapshot below -> text (pure: no clock, no files)
 *   metrics_hist.c    the commit-latency histogram (pure)
 *   metrics_collect.c fill a snapshot from the kernel and the node core
 *   metrics_file.c    write it atomically into the node exporter's textfile
 *                     directory (METRICS_TEXTFILE_DIR), at most once a
 *                     second when it changed, at least every 15 s
 */
#ifndef IMEXD_METRICS_H
#define IMEXD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/imex.h>

#define IMEXD_METRICS_FILE		"imexd.prom"
#define IMEXD_METRICS_MIN_MS		1000	/* at most one write a second */
#define IMEXD_METRICS_REFRESH_MS	15000	/* rewritten at least this often */
/* Peers listed (one series each): a table a roster can grow is bounded. */
#define IMEXD_METRICS_PEERS_MAX		IMEX_MEMBERS_MAX

/* Commit latency, submit to commit on the leader: bucket bounds in ms. */
#define IMEXD_METRICS_HIST_BUCKETS	12
extern const uint32_t imexd_metrics_hist_le_ms[IMEXD_METRICS_HIST_BUCKETS];

struct imexd_metrics_hist {
	uint64_t bucket[IMEXD_METRICS_HIST_BUCKETS];	/* not cumulative */
	uint64_t count;
	uint64_t sum_ms;
};

void imexd_metrics_hist_add(struct imexd_metrics_hist *h, uint64_t ms);

/*
 * Why an import was refused: the kernel's (IMEX_A_STATS, in the order of
 * IMEX_A_STATS_REFUSED_*) and the broker's.
 */
enum imexd_metrics_refusal {
	IMEXD_REFUSED_PERMISSION,	/* EPERM, EACCES: other domain or channel */
	IMEXD_REFUSED_NOT_FOUND,	/* ENOENT: no such export */
	IMEXD_REFUSED_UNREACHABLE,	/* EHOSTUNREACH: exporter not reachable */
	IMEXD_REFUSED_TIMEOUT,		/* ETIMEDOUT */
	IMEXD_REFUSED_NO_SPACE,		/* ENOBUFS, ENOSPC, EAGAIN: a table full */
	IMEXD_REFUSED_NO_DAEMON,	/* ESRCH: no imexd attached */
	IMEXD_REFUSED_REVOKED,		/* ENODEV: the channel was revoked */
	IMEXD_REFUSED_OTHER,
	IMEXD_REFUSED_N
};

/* The label value of a refusal reason ("permission", ...). */
const char *imexd_metrics_refusal_name(enum imexd_metrics_refusal r);
/* The reason of a positive errno. */
enum imexd_metrics_refusal imexd_metrics_refusal_of(int error);

struct imexd_metrics_domain {
	char name[IMEX_NAME_MAX];
	uint32_t state;			/* enum imex_domain_state */
	uint32_t channels;		/* granted */
	uint32_t members[__IMEX_MEMBER_STATE_MAX];	/* by enum imex_member_state */
};

struct imexd_metrics_peer {
	char name[IMEX_NAME_MAX];
	bool connected;
	uint64_t reconnects;		/* connected again after a loss */
};

enum imexd_metrics_role {
	IMEXD_ROLE_NONE,		/* not in the group (yet) */
	IMEXD_ROLE_LEADER,
	IMEXD_ROLE_VOTER,
	IMEXD_ROLE_STANDBY,
	IMEXD_ROLE_SPARE,
	IMEXD_ROLE_N
};

/* Kernel counters (IMEX_A_STATS), absent on a module without them. */
struct imexd_metrics_kstats {
	bool present;
	uint64_t exports;
	uint64_t imports;
	uint64_t import_refused[IMEXD_REFUSED_N];
};

struct imexd_metrics {
	const char *version;
	const char *node;
	bool attached;			/* imexd is the kernel's manager */
	uint32_t max_channels;		/* the node's channel ids */
	enum imexd_metrics_role role;
	struct imexd_metrics_kstats kernel;
	uint64_t remote_refused[IMEXD_REFUSED_N];	/* by the broker */
	struct imexd_metrics_hist commit;
	size_t ndomains;
	const struct imexd_metrics_domain *domains;
	size_t npeers;
	const struct imexd_metrics_peer *peers;
};

/*
 * The text of @m (HELP and TYPE lines, one family after another), NUL
 * terminated, in a malloc'd *@out (free()) of *@len bytes.  0 or -ENOMEM.
 * Domain and peer names are escaped as label values require.
 */
int imexd_metrics_format(const struct imexd_metrics *m, char **out,
			 size_t *len);

#endif /* IMEXD_METRICS_H */
