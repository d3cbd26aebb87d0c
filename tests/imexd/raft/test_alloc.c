// SPDX-License-Identifier: GPL-2.0
/*
 * Allocations: counted, and failed on demand.
 *
 * The Makefile links the programs using this with --wrap=malloc,calloc,realloc:
 * every allocation of the sources under test (or the test) is counted, and
 * while fail_at >= 0 the fail_at-th one returns NULL.
 */
#include <stddef.h>

#include "test_alloc.h"

static long fail_at = -1;
long allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static int inject(void)
{
	long k = allocs++;

	return fail_at >= 0 && k == fail_at;
}

void *__wrap_malloc(size_t n)
{
	return inject() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return inject() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return inject() ? NULL : __real_realloc(p, n);
}

void arm(long k)
{
	allocs = 0;
	fail_at = k;
}

void disarm(void)
{
	fail_at = -1;
}
