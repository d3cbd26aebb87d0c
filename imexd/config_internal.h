/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between imexd.conf's parser (config.c) and its file reader
 * (config_file.c, daemon side): where the parser is, for messages.
 */
#ifndef IMEXD_CONFIG_INTERNAL_H
#define IMEXD_CONFIG_INTERNAL_H

#include <stddef.h>

/* Where the parser is, for messages. */
struct pos {
	const char *path;
	unsigned int line;
	char *err;
	size_t errlen;
};

/* Put "@path[:LINE]: what" in @p's err; returns -EINVAL. */
int __attribute__((format(printf, 2, 3)))
imexd_config_fail(const struct pos *p, const char *fmt, ...);

#endif
