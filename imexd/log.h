/* SPDX-License-Identifier: GPL-2.0 */
/*
 * imexd's log: one line per call on stderr, each prefixed with "<N>" (the
 * syslog level) so journald files it at the right priority, or through
 * syslog(3) once the daemon has detached from its terminal (no -f).  Lines
 * above the configured level (LOG_LEVEL) are dropped.
 */
#ifndef IMEXD_LOG_H
#define IMEXD_LOG_H

#include <stdbool.h>
#include <syslog.h>

/* Lines at @level or more important are written; default LOG_INFO. */
void imexd_log_set_level(int level);
int imexd_log_get_level(void);
/* Send lines to syslog(3) instead of stderr (after daemonizing). */
void imexd_log_use_syslog(bool on);
/* Is a line at @level written at all? (To skip building costly text.) */
bool imexd_log_enabled(int level);

/* Write one line at @level (LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG). */
void imexd_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...)	imexd_log(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	imexd_log(LOG_WARNING, __VA_ARGS__)
#define log_info(...)	imexd_log(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	imexd_log(LOG_DEBUG, __VA_ARGS__)

/* The syslog name of @level ("err", "warn", "info", "debug"). */
const char *imexd_log_level_name(int level);

#endif /* IMEXD_LOG_H */
