/* SPDX-License-Identifier: GPL-2.0 */
/*
 * imexd.prom for the node exporter's textfile collector (metrics_file.c):
 * replaced atomically (temporary file in the same directory, rename), at
 * most once a second (IMEXD_METRICS_MIN_MS) when the text changed, and at
 * least every IMEXD_METRICS_REFRESH_MS so that its mtime shows imexd is
 * alive.  Removed on a clean exit: no file means no daemon.
 */
#ifndef IMEXD_METRICS_FILE_H
#define IMEXD_METRICS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "metrics.h"

struct imexd_metrics_file;

/* For DIR/imexd.prom.  0, -ENOMEM or -ENAMETOOLONG. */
int imexd_metrics_file_new(const char *dir, struct imexd_metrics_file **f);
const char *imexd_metrics_file_path(const struct imexd_metrics_file *f);
/* Whether @text is to be written at @now (ms, monotonic). */
bool imexd_metrics_file_due(const struct imexd_metrics_file *f, uint64_t now,
			    const char *text, size_t len);
/*
 * Write @text if due: 1 written, 0 not due, -errno (logged once until a
 * write succeeds again).
 */
int imexd_metrics_file_put(struct imexd_metrics_file *f, uint64_t now,
			   const char *text, size_t len);
/* @remove: unlink the file if this process wrote it. */
void imexd_metrics_file_free(struct imexd_metrics_file *f, bool remove);

#endif /* IMEXD_METRICS_FILE_H */
