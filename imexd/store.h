/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state directory: this node's UUID and the committed definitions of
 * its domains, as JSON files written atomically (temp file in the same
 * directory, fsync, rename, fsync of the directory), so a crash leaves
 * either the old or the new file, never a torn one.
 *
 *   STATE_DIRECTORY/node.json            {"uuid": "..."}
 *   STATE_DIRECTORY/domains/<uuid>.json  one domain definition
 */
#ifndef IMEXD_STORE_H
#define IMEXD_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "wire.h"

struct imexd_store;

/* Create the directories (0700) if missing. 0 or -errno with @err. */
int imexd_store_open(struct imexd_store **store, const char *dir, char *err,
		     size_t errlen);
void imexd_store_close(struct imexd_store *store);

/* This node's UUID, created (random) and stored on first use. */
int imexd_store_node_uuid(struct imexd_store *store, uint8_t uuid[16]);

int imexd_store_put_def(struct imexd_store *store, const struct imexd_def *def);
int imexd_store_remove_def(struct imexd_store *store, const uint8_t uuid[16]);

/*
 * Every stored definition (malloc'd array of defs; free each with
 * imexd_def_free, then the array).  A file that does not parse is skipped
 * and named in @err (the rest still load); returns the count or -errno.
 */
int imexd_store_load_defs(struct imexd_store *store, struct imexd_def **defs,
			  size_t *n, char *err, size_t errlen);

/* JSON <-> definition, also used by tests and tools. */
char *imexd_def_to_json(const struct imexd_def *def);
int imexd_def_from_json(const char *json, struct imexd_def *def, char *err,
			size_t errlen);

#endif /* IMEXD_STORE_H */
