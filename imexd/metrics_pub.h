/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's metrics publisher (metrics_pub.c): on each tick (every
 * IMEXD_METRICS_MIN_MS) a snapshot is collected, formatted and handed to
 * the textfile writer, which writes it when it changed or is due.
 */
#ifndef IMEXD_METRICS_PUB_H
#define IMEXD_METRICS_PUB_H

#include <stdbool.h>
#include <stdint.h>
#include "config.h"
#include "node.h"

struct imexd_kernel;
struct imexd_metrics_pub;

/*
 * From METRICS_TEXTFILE_DIR: *@out NULL when off (empty, or the default
 * directory absent: logged at info).  0, or -errno.
 */
int imexd_metrics_pub_new(const struct imexd_config *cfg, const char *version,
			  struct imexd_metrics_pub **out);
void imexd_metrics_pub_tick(struct imexd_metrics_pub *p, uint64_t now,
			    struct imexd_kernel *k,
			    const struct imexd_node *core, bool attached);
/* @clean: a clean exit, the file is removed (no file: no daemon). */
void imexd_metrics_pub_free(struct imexd_metrics_pub *p, bool clean);

#endif /* IMEXD_METRICS_PUB_H */
