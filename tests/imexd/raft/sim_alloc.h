/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Allocation helpers of the in-memory worlds (harness_raft.c and
 * sim_world*.c): out of memory aborts the run, there is nothing to
 * recover in a test.
 */
#ifndef SIM_ALLOC_H
#define SIM_ALLOC_H

#include <stdlib.h>
#include <string.h>

/* @p with room for element @n (of @sz bytes), doubling *@cap. */
static inline void *xgrow(void *p, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 16;
	p = realloc(p, *cap * sz);
	if (!p)
		abort();
	return p;
}

/* A copy of @len bytes at @p (a valid pointer even when @len is 0). */
static inline void *xdup(const void *p, size_t len)
{
	void *d = malloc(len ? len : 1);

	if (!d)
		abort();
	if (len)
		memcpy(d, p, len);
	return d;
}

#endif /* SIM_ALLOC_H */
