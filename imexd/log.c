// SPDX-License-Identifier: GPL-2.0
/* imexd's log: "<N>"-prefixed lines on stderr, or syslog(3). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "log.h"

static int log_level = LOG_INFO;
static bool log_syslog;

void imexd_log_set_level(int level)
{
	if (level < LOG_EMERG)
		level = LOG_EMERG;
	if (level > LOG_DEBUG)
		level = LOG_DEBUG;
	log_level = level;
}

int imexd_log_get_level(void)
{
	return log_level;
}

void imexd_log_use_syslog(bool on)
{
	if (on && !log_syslog)
		openlog("imexd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	else if (!on && log_syslog)
		closelog();
	log_syslog = on;
}

bool imexd_log_enabled(int level)
{
	return level <= log_level;
}

const char *imexd_log_level_name(int level)
{
	switch (level) {
	case LOG_EMERG:
	case LOG_ALERT:
	case LOG_CRIT:
	case LOG_ERR:
		return "err";
	case LOG_WARNING:
		return "warn";
	case LOG_NOTICE:
	case LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

void imexd_log(int level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	size_t n;

	if (!imexd_log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One line per call: no control characters (peer-supplied text). */
	for (n = 0; line[n]; n++)
		if ((unsigned char)line[n] < 0x20 || line[n] == 0x7f)
			line[n] = ' ';
	if (log_syslog) {
		syslog(level, "%s", line);
		return;
	}
	fprintf(stderr, "<%d>%s\n", level, line);
}
