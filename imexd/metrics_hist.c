// SPDX-License-Identifier: GPL-2.0
/* The commit-latency histogram (see metrics.h): pure counting. */
#include "metrics.h"

/* 1 ms to 10 s: a LAN commit takes milliseconds, a slow disk or a lost
 * peer's election seconds. */
const uint32_t imexd_metrics_hist_le_ms[IMEXD_METRICS_HIST_BUCKETS] = {
	1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000,
};

void imexd_metrics_hist_add(struct imexd_metrics_hist *h, uint64_t ms)
{
	for (int b = 0; b < IMEXD_METRICS_HIST_BUCKETS; b++)
		if (ms <= imexd_metrics_hist_le_ms[b]) {
			h->bucket[b]++;
			break;
		}
	h->count++;
	h->sum_ms += ms;
}
