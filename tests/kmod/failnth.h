/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection for one operation (tests/kmod/t-faultinj.sh): writing N
 * to /proc/thread-self/fail-nth makes the Nth fault site this thread then
 * reaches fail (an allocation under failslab, a user copy under
 * fail_usercopy, ...; CONFIG_FAULT_INJECTION, debug kernel only).  Armed
 * right before the operation's system calls and disarmed right after, so
 * the sweep N = 1, 2, ... fails each allocation of the operation in turn;
 * it has reached the end once an armed fault is not used.
 */
#ifndef IMEX_FAILNTH_H
#define IMEX_FAILNTH_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failnth_fd = -1;

/* Opened before arming: the open itself allocates. */
static inline int failnth_open(void)
{
	if (failnth_fd < 0)
		failnth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	return failnth_fd;
}

static inline int failnth_arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (failnth_open() < 0 || pwrite(failnth_fd, buf, (size_t)len, 0) != len)
		return -1;
	return 0;
}

/*
 * Disarm; true if the armed fault was used.  Reading and writing the file
 * copy to and from user space, which counts down too: a read that faults
 * means one site was left (unused), and a write of 0 that faults has
 * brought the count to 0 itself, so it is written until it takes.
 */
static inline bool failnth_disarm(void)
{
	char buf[16] = "";
	ssize_t r = pread(failnth_fd, buf, sizeof(buf) - 1, 0);
	bool used = r > 0 && strtoul(buf, NULL, 10) == 0;

	for (int i = 0; i < 3 && pwrite(failnth_fd, "0", 1, 0) != 1; i++)
		;
	return used;
}

#endif
