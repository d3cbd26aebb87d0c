// SPDX-License-Identifier: GPL-2.0
/*
 * The node's counters since load, reported in node-get (IMEX_A_STATS) for
 * imexd's metrics: exports made, imports completed, imports refused by
 * errno class.  Lock-free (atomics): bumped where the outcome is known.
 */
#include <linux/atomic.h>
#include <linux/errno.h>
#include <net/netlink.h>
#include "imex.h"

#define IMEX_STATS_REFUSED_N \
	(IMEX_A_STATS_REFUSED_OTHER - IMEX_A_STATS_REFUSED_PERMISSION + 1)

static atomic64_t imex_stat_exports = ATOMIC64_INIT(0);
static atomic64_t imex_stat_imports = ATOMIC64_INIT(0);
static atomic64_t imex_stat_refused[IMEX_STATS_REFUSED_N];

void imex_stats_export(void)
{
	atomic64_inc(&imex_stat_exports);
}

static int imex_stats_class(int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return IMEX_A_STATS_REFUSED_PERMISSION;
	case -ENOENT:
		return IMEX_A_STATS_REFUSED_NOT_FOUND;
	case -EHOSTUNREACH:
		return IMEX_A_STATS_REFUSED_UNREACHABLE;
	case -ETIMEDOUT:
		return IMEX_A_STATS_REFUSED_TIMEOUT;
	case -ENOBUFS:
	case -ENOSPC:
	case -EAGAIN:
		return IMEX_A_STATS_REFUSED_NO_SPACE;
	case -ESRCH:
		return IMEX_A_STATS_REFUSED_NO_DAEMON;
	case -ENODEV:
		return IMEX_A_STATS_REFUSED_REVOKED;
	default:
		return IMEX_A_STATS_REFUSED_OTHER;
	}
}

/*
 * 0: a new import held (not one the fd already had, nor one revoked as it
 * arrived); else the -errno its caller gets.  A signal is no refusal.
 */
void imex_stats_import(int err)
{
	if (!err)
		atomic64_inc(&imex_stat_imports);
	else if (err != -EINTR)
		atomic64_inc(&imex_stat_refused[imex_stats_class(err) -
						IMEX_A_STATS_REFUSED_PERMISSION]);
}

int imex_put_stats(struct sk_buff *skb)
{
	struct nlattr *nest = nla_nest_start(skb, IMEX_A_STATS);
	int i;

	if (!nest ||
	    nla_put_u64_64bit(skb, IMEX_A_STATS_EXPORTS,
			      atomic64_read(&imex_stat_exports), IMEX_A_STATS_PAD) ||
	    nla_put_u64_64bit(skb, IMEX_A_STATS_IMPORTS,
			      atomic64_read(&imex_stat_imports), IMEX_A_STATS_PAD))
		return -EMSGSIZE;
	for (i = 0; i < IMEX_STATS_REFUSED_N; i++)
		if (nla_put_u64_64bit(skb, IMEX_A_STATS_REFUSED_PERMISSION + i,
				      atomic64_read(&imex_stat_refused[i]),
				      IMEX_A_STATS_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}
