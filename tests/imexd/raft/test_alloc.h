/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Allocations counted, and failed on demand (test_alloc.c), for the test
 * programs the Makefile links with --wrap=malloc,calloc,realloc.
 */
#ifndef IMEX_TEST_ALLOC_H
#define IMEX_TEST_ALLOC_H

extern long allocs;	/* allocations since the last arm() */

void arm(long k);	/* fail the k-th allocation from now (0 = the next) */
void disarm(void);

#endif
