/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Node list files: one node per line, as operators keep them for
 * nvidia-imex (nodes_config.cfg), so existing files can be reused.
 * A line is a host name ("gpu-node-07" or "gpu-node-07.rack2.example"),
 * which names the node and is also its address, or NAME=ADDR where ADDR is
 * a host name or an IP address, optionally with :PORT ([v6]:PORT for IPv6).
 * A bare IP address is refused with a message asking for NAME=ADDR, since
 * imex needs each node's name.  '#' starts a comment; blank lines are
 * skipped; duplicates (name or address) and more than IMEX_MEMBERS_MAX
 * entries are errors naming file:line.
 */
#ifndef IMEXD_NODELIST_H
#define IMEXD_NODELIST_H

#include <stddef.h>
#include "wire.h"

/* Returns 0 with a malloc'd array in *out (free()), or -EINVAL + @err. */
int imexd_nodelist_parse(const char *path, const char *text, size_t len,
			 struct imexd_member **out, size_t *n, char *err,
			 size_t errlen);

/* Parse one "NAME=ADDR" or "HOSTNAME" entry (the CLI's --nodes items). */
int imexd_nodelist_entry(const char *entry, struct imexd_member *m,
			 char *err, size_t errlen);

#endif /* IMEXD_NODELIST_H */
