/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the codec's encoder side (wire.c) shares with its decoder
 * (wire_dec.c): the fixed sizes and the rules both run.
 */
#ifndef IMEXD_WIRE_INTERNAL_H
#define IMEXD_WIRE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define CHANNEL_WIRE_LEN	14	/* u32 id, u32 uid, u32 gid, u16 mode */
#define GEN_WIRE_LEN		24	/* u8 uuid[16], u64 generation */

enum str_kind { STR_NAME, STR_ADDR, STR_TEXT };

/* NULL when @n bytes at @s are a valid string of @kind, else why not. */
const char *wire_str_problem(enum str_kind kind, const char *s, size_t n);
/* The most a body of @type may hold. */
size_t wire_body_max(uint8_t type);
/* 0, or a negative errno with what is wrong in *@why. */
int wire_check_msg(const struct imexd_msg *m, const char **why);

#endif
