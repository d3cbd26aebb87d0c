// SPDX-License-Identifier: GPL-2.0
/* imexd's log: "<N>"-prefixed lines on stderr, journald's socket, or syslog(3). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>
#include "log.h"

static int log_level = LOG_INFO;
static bool log_syslog;
static int log_journal = -1;	/* -1: not checked yet */

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

/* systemd sets JOURNAL_STREAM=DEV:INODE of the stream it gave as stderr. */
bool imexd_log_stderr_is_journal(void)
{
	unsigned long long dev, ino;
	const char *e;
	struct stat st;
	char *end;

	if (log_journal >= 0)
		return log_journal;
	log_journal = 0;
	e = getenv("JOURNAL_STREAM");
	if (!e || fstat(2, &st))
		return false;
	dev = strtoull(e, &end, 10);
	if (end == e || *end != ':')
		return false;
	e = end + 1;
	ino = strtoull(e, &end, 10);
	if (end == e || *end)
		return false;
	log_journal = (unsigned long long)st.st_dev == dev &&
		      (unsigned long long)st.st_ino == ino;
	return log_journal;
}

static int journal_send(const char *file, int line, const char *func,
			int level, const struct imexd_log_fields *f,
			const char *text)
{
	char prio[16], msg[2100], cfile[300], cline[32], cfunc[100];
	char mid[48], dom[80], node[80], chan[40];
	struct iovec iov[10];
	int n = 0;

#define ADD(buf, ...) do {						\
		snprintf(buf, sizeof(buf), __VA_ARGS__);		\
		iov[n].iov_base = buf;					\
		iov[n++].iov_len = strlen(buf);				\
	} while (0)
	ADD(prio, "PRIORITY=%d", level);
	ADD(msg, "MESSAGE=%s", text);
	iov[n].iov_base = (char *)"SYSLOG_IDENTIFIER=imexd";
	iov[n++].iov_len = strlen("SYSLOG_IDENTIFIER=imexd");
	ADD(cfile, "CODE_FILE=%s", file);
	ADD(cline, "CODE_LINE=%d", line);
	ADD(cfunc, "CODE_FUNC=%s", func);
	if (f && f->msgid)
		ADD(mid, "MESSAGE_ID=%s", f->msgid);
	if (f && f->domain[0])
		ADD(dom, "IMEX_DOMAIN=%s", f->domain);
	if (f && f->node[0])
		ADD(node, "IMEX_NODE=%s", f->node);
	if (f && f->has_channel)
		ADD(chan, "IMEX_CHANNEL=%u", f->channel);
#undef ADD
	return sd_journal_sendv(iov, n);
}

static void log_text(const char *file, int line, const char *func, int level,
		     const struct imexd_log_fields *f, char *text)
{
	size_t n;

	/* One line per call: no control characters (peer-supplied text). */
	for (n = 0; text[n]; n++)
		if ((unsigned char)text[n] < 0x20 || text[n] == 0x7f)
			text[n] = ' ';
	if (log_syslog) {
		syslog(level, "%s", text);
		return;
	}
	if (imexd_log_stderr_is_journal() &&
	    !journal_send(file, line, func, level, f, text))
		return;
	fprintf(stderr, "<%d>%s\n", level, text);
}

static void log_vat(const char *file, int line, const char *func, int level,
		    const struct imexd_log_fields *f, const char *fmt, va_list ap)
{
	char text[2048];

	if (!imexd_log_enabled(level))
		return;
	vsnprintf(text, sizeof(text), fmt, ap);
	log_text(file, line, func, level, f, text);
}

void imexd_log_at(const char *file, int line, const char *func, int level,
		  const struct imexd_log_fields *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vat(file, line, func, level, f, fmt, ap);
	va_end(ap);
}

void imexd_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vat(__FILE__, __LINE__, __func__, level, NULL, fmt, ap);
	va_end(ap);
}
