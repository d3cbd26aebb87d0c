/* SPDX-License-Identifier: GPL-2.0 */
/* imex-bench: shared helpers of the benchmark subcommands. */
#ifndef IMEX_BENCH_H
#define IMEX_BENCH_H

#include <stdint.h>
#include <stdio.h>

uint64_t now_ns(void);
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
unsigned long arg_ul(const char *s, const char *what);
/* One raw result line: the report reads these (see report.c). */
void sample(const char *name, double measured, double baseline);

int cmd_openclose(int argc, char **argv);
int cmd_openclose_busy(int argc, char **argv);
int cmd_resolve(int argc, char **argv);
int cmd_cdi(int argc, char **argv);
int cmd_tcp_server(int argc, char **argv);
int cmd_tcp_client(int argc, char **argv);
int cmd_elapsed(int argc, char **argv);
int cmd_up_ready(int argc, char **argv);
int cmd_fsync(int argc, char **argv);
int cmd_create(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
