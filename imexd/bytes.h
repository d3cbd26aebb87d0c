/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The big-endian writer (bytes_wr.h) and bounds-checked reader of the peer
 * codecs (wire.c, raftwire*.c).
 *
 * The reader never reads past len; its first failure sticks (err, why) and
 * every later read gives 0 or NULL, so a decoder reads a whole structure and
 * looks at err once.  A read past the end fails with -EBADMSG and the
 * codec's own reason, short_why.  What a codec makes of the rest (exact
 * consumption, its other reasons) stays in the codec.
 *
 * imexd/fsm_internal.h has a reader of its own with the same function
 * names (and this writer): a file includes one or the other.
 */
#ifndef IMEXD_BYTES_H
#define IMEXD_BYTES_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bytes_wr.h"

/* ---- reader ------------------------------------------------------------- */

/* @bytes (at most 8) big-endian bytes at @p; 0 for a NULL @p. */
static inline uint64_t get_be(const uint8_t *p, unsigned int bytes)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; p && i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

struct imexd_rd {
	const uint8_t *p;
	size_t len;
	size_t off;
	int err;		/* first error, then every read fails */
	const char *why;
	const char *short_why;	/* the reason for a read past the end */
};

static inline void rd_fail(struct imexd_rd *r, int err, const char *why)
{
	if (!r->err) {
		r->err = err;
		r->why = why;
	}
}

/* Bytes not read yet; 0 once a read failed. */
static inline size_t rd_left(const struct imexd_rd *r)
{
	return r->err ? 0 : r->len - r->off;
}

/* The next @n bytes, or NULL (and the reader failed). */
static inline const uint8_t *rd_take(struct imexd_rd *r, size_t n)
{
	const uint8_t *p;

	if (r->err)
		return NULL;
	if (n > r->len - r->off) {
		rd_fail(r, -EBADMSG, r->short_why);
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

static inline uint64_t rd_be(struct imexd_rd *r, unsigned int bytes)
{
	return get_be(rd_take(r, bytes), bytes);
}

static inline uint8_t rd_u8(struct imexd_rd *r)
{
	return (uint8_t)rd_be(r, 1);
}

static inline uint16_t rd_u16(struct imexd_rd *r)
{
	return (uint16_t)rd_be(r, 2);
}

static inline uint32_t rd_u32(struct imexd_rd *r)
{
	return (uint32_t)rd_be(r, 4);
}

static inline uint64_t rd_u64(struct imexd_rd *r)
{
	return rd_be(r, 8);
}

/* @n bytes into @dst; @dst untouched when they are not there. */
static inline void rd_bytes(struct imexd_rd *r, void *dst, size_t n)
{
	const uint8_t *p = rd_take(r, n);

	if (p && n)
		memcpy(dst, p, n);
}

#endif /* IMEXD_BYTES_H */
