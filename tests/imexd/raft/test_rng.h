/* SPDX-License-Identifier: GPL-2.0 */
/* A seeded xorshift generator (test_rng.c) for the random tests. */
#ifndef IMEX_TEST_RNG_H
#define IMEX_TEST_RNG_H

#include <stdint.h>

extern uint64_t rng;	/* the state: set it to a nonzero seed */

uint64_t rnd(void);
uint32_t rndn(uint32_t n);	/* below @n; 0 when @n is 0 */

#endif
