/* SPDX-License-Identifier: GPL-2.0 */
/*
 * STATE_DIRECTORY/members.json: this node's view of its group's
 * membership (node.h, imexd_node_members), for imexctl node list.  It is
 * what this imexd believes, not an agreed fact: another node may see a
 * newer configuration or another leader.  Replaced atomically
 * (store_file.h) when it changes, at most once a second (the daemon's
 * bound), removed when imexd stops.
 *
 *   {"version": 1, "node": "a", "pid": 1234, "member": true,
 *    "term": 3, "leader": "a", "commit": 12, "applied": 12,
 *    "config_index": 5,
 *    "members": [{"name": "a", "addr": "", "role": "voter",
 *                 "leader": true, "self": true, "connected": null}, ...]}
 *
 * addr "" means the name at the default port; connected is null for self.
 */
#ifndef IMEXD_STORE_MEMBERS_H
#define IMEXD_STORE_MEMBERS_H

#include <stddef.h>

#include "node.h"

#define IMEXD_MEMBERS_FILE	"members.json"
#define IMEXD_MEMBERS_VERSION	1

/* The file's text (malloc'd; NULL: no memory).  Deterministic: the same
 * view gives the same text, so the caller writes only changes. */
char *imexd_members_json(const char *self, long pid,
			 const struct imexd_node_group *g,
			 const struct imexd_node_member *m, size_t n);

/* Replace @dir/members.json with @text; remove it (NULL).  0 or -errno. */
int imexd_members_write(const char *dir, const char *text);

#endif /* IMEXD_STORE_MEMBERS_H */
