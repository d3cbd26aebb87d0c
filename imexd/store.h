/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state directory's node identity: this node's UUID, as a JSON file
 * written atomically (temp file in the same directory, fsync, rename,
 * fsync of the directory), so a crash leaves either the old or the new
 * file, never a torn one.  The domains live in the raft log (raftlog.h,
 * STATE_DIRECTORY/raft).
 *
 *   STATE_DIRECTORY/node.json            {"uuid": "..."}
 */
#ifndef IMEXD_STORE_H
#define IMEXD_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "wire.h"

#define IMEXD_STORE_NODE_FILE	"node.json"

/*
 * node.json's text (store.c, no I/O, in libimexd-core.a).  Parse: 0, or
 * -EBADMSG with what is wrong in @err.  Text: malloc'd (free()), NULL when
 * out of memory.
 */
int imexd_store_node_parse(const char *text, size_t len, uint8_t uuid[16],
			   char *err, size_t errlen);
char *imexd_store_node_text(const uint8_t uuid[16]);

/* The directory itself (store_dir.c, the daemon's). */
struct imexd_store;

/* Create the directory (0700) if missing. 0 or -errno with @err. */
int imexd_store_open(struct imexd_store **store, const char *dir, char *err,
		     size_t errlen);
void imexd_store_close(struct imexd_store *store);

/* This node's UUID, created (random) and stored on first use.  0 or
 * -errno; a damaged file gives -EBADMSG with what is wrong in @err. */
int imexd_store_node_uuid(struct imexd_store *store, uint8_t uuid[16],
			  char *err, size_t errlen);

#endif /* IMEXD_STORE_H */
