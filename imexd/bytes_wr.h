/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The big-endian writer of the peer codecs (wire.c, raftwire*.c) and of the
 * state machine's commands and snapshots (fsm_cmd.c, fsm_snap.c).
 *
 * The writer only counts while buf is NULL: the same code measures a frame,
 * then fills the buffer allocated to that size (wr_encode()).
 */
#ifndef IMEXD_BYTES_WR_H
#define IMEXD_BYTES_WR_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct imexd_wr {
	uint8_t *buf;	/* NULL: count only */
	size_t len;
};

static inline void wr_bytes(struct imexd_wr *w, const void *p, size_t n)
{
	if (w->buf && n)
		memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static inline void wr_be(struct imexd_wr *w, uint64_t v, unsigned int bytes)
{
	unsigned int i;

	/* Through a local pointer: a byte store through w->buf could alias
	 * w->len and w->buf, which would be reloaded for every byte. */
	if (w->buf) {
		uint8_t *p = w->buf + w->len;

		for (i = 0; i < bytes; i++)
			p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	}
	w->len += bytes;
}

static inline void wr_u8(struct imexd_wr *w, uint8_t v)
{
	wr_be(w, v, 1);
}

static inline void wr_u16(struct imexd_wr *w, uint16_t v)
{
	wr_be(w, v, 2);
}

static inline void wr_u32(struct imexd_wr *w, uint32_t v)
{
	wr_be(w, v, 4);
}

static inline void wr_u64(struct imexd_wr *w, uint64_t v)
{
	wr_be(w, v, 8);
}

/*
 * Run @fill on @arg twice, to measure and then to fill a new buffer:
 * *@out (free() it) of *@len bytes.  0 or -ENOMEM.
 */
static inline int wr_encode(void (*fill)(struct imexd_wr *w, const void *arg),
			    const void *arg, uint8_t **out, size_t *len)
{
	struct imexd_wr w = { NULL, 0 };

	fill(&w, arg);
	w.buf = malloc(w.len);
	if (!w.buf)
		return -ENOMEM;
	w.len = 0;
	fill(&w, arg);
	*out = w.buf;
	*len = w.len;
	return 0;
}

#endif /* IMEXD_BYTES_WR_H */
