/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one growth helper of imexd's core parts.
 *
 * Out-of-memory policy of the parts (each header says what it means for
 * its callers): a failed allocation changes nothing that was there before
 * and is returned as -ENOMEM; the caller fails the one event that needed
 * the memory, never the daemon.
 */
#ifndef IMEXD_GROW_H
#define IMEXD_GROW_H

#include <stddef.h>

/*
 * Make room for @need elements of @size bytes in *@arr, whose capacity is
 * *@cap elements (doubling, from 8).  0, or -ENOMEM with *@arr and *@cap
 * unchanged.
 */
int imexd_grow(void **arr, size_t *cap, size_t need, size_t size);

#endif /* IMEXD_GROW_H */
