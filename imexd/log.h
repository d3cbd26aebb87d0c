/* SPDX-License-Identifier: GPL-2.0 */
/*
 * imexd's log: one line per call on stderr, each prefixed with "<N>" (the
 * syslog level) so journald files it at the right priority, or through
 * syslog(3) once the daemon has detached from its terminal (no -f).  When
 * stderr is journald's stream (JOURNAL_STREAM names it), each line goes to
 * journald's native socket instead, with its fields (logfields.h): the
 * domain, node and channel it concerns and its MESSAGE_ID.  Lines above
 * the configured level (LOG_LEVEL) are dropped.
 */
#ifndef IMEXD_LOG_H
#define IMEXD_LOG_H

#include <stdbool.h>
#include <syslog.h>
#include "logfields.h"
#include "msgid.h"

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

/* One line with fields (NULL: none) from source line @file:@line. */
void imexd_log_at(const char *file, int line, const char *func, int level,
		  const struct imexd_log_fields *f, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

#define IMEXD_LOG_AT(level, f, ...) \
	imexd_log_at(__FILE__, __LINE__, __func__, level, f, __VA_ARGS__)
#define log_err(...)	IMEXD_LOG_AT(LOG_ERR, NULL, __VA_ARGS__)
#define log_warn(...)	IMEXD_LOG_AT(LOG_WARNING, NULL, __VA_ARGS__)
#define log_info(...)	IMEXD_LOG_AT(LOG_INFO, NULL, __VA_ARGS__)
#define log_debug(...)	IMEXD_LOG_AT(LOG_DEBUG, NULL, __VA_ARGS__)
/* A line of kind @msgid about domain @dom and node @node (NULL: none). */
#define log_domain(level, msgid, dom, node, ...) do {			\
		struct imexd_log_fields lf_;				\
		imexd_log_fields_set(&lf_, msgid, dom, node);		\
		IMEXD_LOG_AT(level, &lf_, __VA_ARGS__);			\
	} while (0)

/* Is stderr journald's stream (JOURNAL_STREAM)?  Checked once, at start. */
bool imexd_log_stderr_is_journal(void);

/* The syslog name of @level ("err", "warn", "info", "debug"). */
const char *imexd_log_level_name(int level);

#endif /* IMEXD_LOG_H */
