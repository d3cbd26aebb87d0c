// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"

int imexd_grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 8;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (n > SIZE_MAX / size)
		return -ENOMEM;
	p = realloc(*arr, n * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}
