// SPDX-License-Identifier: GPL-2.0
/* Error messages into a caller's buffer (errf.h); pure, so core. */
#include <stdarg.h>
#include <stdio.h>

#include "errf.h"

int imexd_errf(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}
