// SPDX-License-Identifier: GPL-2.0
/*
 * imex-bench: the measuring programs of `make bench`, one subcommand per
 * job.  Each measuring subcommand prints raw lines
 *
 *   sample NAME MEASURED BASELINE
 *
 * where MEASURED and BASELINE were taken in the same process, back to back,
 * on the same machine; bench/run.sh collects them and "report" turns them
 * into the table.  What each benchmark measures, and why its baseline is the
 * right one, is written where it is measured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
} cmds[] = {
	{ "openclose", cmd_openclose, "openclose CHANNEL_PATH ITER REPS" },
	{ "openclose-busy", cmd_openclose_busy,
	  "openclose-busy CHANNEL_PATH ITER REPS LOADER_PID" },
	{ "resolve", cmd_resolve, "resolve CHANNEL_PATH ITER REPS" },
	{ "cdi", cmd_cdi, "cdi DOMAIN DIR REPS" },
	{ "tcp-server", cmd_tcp_server, "tcp-server PORT SIZE" },
	{ "tcp-client", cmd_tcp_client, "tcp-client HOST PORT SIZE THREADS COUNT" },
	{ "elapsed", cmd_elapsed, "elapsed COMMAND [ARG...]" },
	{ "up-ready", cmd_up_ready, "up-ready DOMAIN OLD_PID TIMEOUT_S" },
	{ "fsync", cmd_fsync, "fsync DIR COUNT" },
	{ "create", cmd_create, "create NAME NODES TIMEOUT_S" },
	{ "report", cmd_report, "report RAW_FILE JSON_OUT" },
};

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("imex-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

unsigned long arg_ul(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end)
		die("%s: '%s' is not a number", what, s);
	return v;
}

void sample(const char *name, double measured, double baseline)
{
	printf("sample %s %.6g %.6g\n", name, measured, baseline);
	fflush(stdout);
}

static void usage(void)
{
	fputs("usage: imex-bench SUBCOMMAND ARGS...\n", stderr);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(stderr, "  %s\n", cmds[i].usage);
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 2, argv + 2);
	usage();
}
