/* SPDX-License-Identifier: GPL-2.0 */
/* Error messages into a caller's buffer, for the core and the daemon. */
#ifndef IMEXD_ERRF_H
#define IMEXD_ERRF_H

#include <stddef.h>

/* Print @fmt into @err (if not NULL), cut at @errlen; returns @ret. */
int imexd_errf(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
