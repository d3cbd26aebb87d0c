// SPDX-License-Identifier: GPL-2.0
/* A seeded xorshift generator for the random tests: one seed replays a run. */
#include "test_rng.h"

uint64_t rng;

uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

uint32_t rndn(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}
