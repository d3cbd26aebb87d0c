/* SPDX-License-Identifier: GPL-2.0 */
/*
 * raftwire's internals, shared by raftwire.c (rules, encoder) and
 * raftwire_decode.c (decoder).  Not an interface.
 */
#ifndef IMEXD_RAFTWIRE_INTERNAL_H
#define IMEXD_RAFTWIRE_INTERNAL_H

#include "bytes.h"
#include "raftwire.h"

#define ENTRY_HDR_LEN	13	/* u64 term, u8 type, u32 len */
#define SERVER_MIN_LEN	11	/* u64 id, u8 role, u8 len, >= 1 byte */

/* raftwire.c */
bool rw_addr_ok(const char *s, size_t n);
int rw_bad(const char **why, int err, const char *what);
int rw_check_msg(const struct raft_message *m, const char **why);

#endif /* IMEXD_RAFTWIRE_INTERNAL_H */
