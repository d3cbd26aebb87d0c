/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Expansion of Slurm host lists ("n[1-3,07],login", "r[1-2]-g[01-02]") without
 * libslurm: a SPANK plugin runs inside slurmd/slurmstepd, whose internal
 * copy of Slurm's code must not meet a second one.
 */
#ifndef IMEX_SLURM_HOSTLIST_H
#define IMEX_SLURM_HOSTLIST_H

#include <stddef.h>

/*
 * Expand @list into at most @max host names.  On success *hosts is an array
 * of *n strings in list order, duplicates dropped (release with
 * hostlist_free()).  -EINVAL for a malformed list (unbalanced brackets, a
 * range going down, an empty name), -E2BIG for more than @max hosts,
 * -ENOMEM.
 */
int hostlist_expand(const char *list, size_t max, char ***hosts, size_t *n);
void hostlist_free(char **hosts, size_t n);

#endif
