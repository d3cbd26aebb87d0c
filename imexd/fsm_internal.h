/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by fsm.c (the tables, lookups, channels), fsm_apply.c (the
 * commands), fsm_cmd.c (the command codec) and fsm_snap.c (snapshot and
 * restore); nothing else includes it.
 */
#ifndef IMEXD_FSM_INTERNAL_H
#define IMEXD_FSM_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "bytes_wr.h"
#include "fsm.h"
#include "grow.h"

#define FSM_MODE_MAX	0777

struct imexd_fsm {
	uint64_t last_index;
	struct imexd_fsm_node *nodes;	/* sorted by name */
	size_t nnodes, nodes_cap;
	struct imexd_def *domains;	/* sorted by name; flags always 0 */
	size_t ndomains, domains_cap;
};

/*
 * The nodes a command is about (a domain's members, all in the node
 * table), as flags by node index, and the smallest max_channels of them.
 */
struct node_set {
	bool *in;
	uint32_t limit;
	const char *limit_node;
};

/* fsm.c: lookups, refusals, channels on a set of nodes (for fsm_apply.c). */
size_t fsm_node_pos(const struct imexd_fsm *fsm, const char *name,
		    bool *found);
size_t fsm_dom_pos(const struct imexd_fsm *fsm, const char *name,
		   bool *found);
long fsm_def_member(const struct imexd_def *d, const char *name);
__attribute__((format(printf, 3, 4)))
int fsm_refuse(struct imexd_fsm_result *res, int err, const char *fmt, ...);
int fsm_refuse_check(struct imexd_fsm_result *res, int err, const char *why);
int fsm_node_set_make(const struct imexd_fsm *fsm,
		      const struct imexd_member *m, uint16_t n,
		      struct node_set *s);
int fsm_pick(const struct imexd_fsm *fsm, const struct node_set *s,
	     const char *name, const struct imexd_def *self,
	     const struct imexd_cmd_channels *ch, uint32_t **out,
	     uint32_t *n, struct imexd_fsm_result *res);
int fsm_merge_channels(const struct imexd_def *d, const uint32_t *ids,
		       uint32_t n, const struct imexd_cmd_channels *ch,
		       struct imexd_channel **out, uint32_t *nout);

/* Index of node @name in @fsm, or -1. */
long fsm_node_find(const struct imexd_fsm *fsm, const char *name);

/* Is @a all zero bytes? */
bool fsm_zero16(const uint8_t a[16]);

/* Printable ASCII without the space, up to IMEXD_ADDR_MAX (may be empty). */
bool fsm_addr_valid(const char *addr);

/* Only for checked strings: NUL-terminated within @cap, at most 255. */
static inline void wr_str(struct imexd_wr *w, const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	wr_be(w, n, 1);
	wr_bytes(w, s, n);
}

/* ---- bounds-checked big-endian reader ----------------------------------- */

struct fsm_rd {
	const uint8_t *p;
	size_t left;
	int err;		/* first error, then every read fails */
	const char *why;
};

static inline bool rd_fail(struct fsm_rd *r, int err, const char *why)
{
	if (!r->err) {
		r->err = err;
		r->why = why;
	}
	return false;
}

/* rd_fail() for functions that return the error. */
static inline int rd_error(struct fsm_rd *r, int err, const char *why)
{
	rd_fail(r, err, why);
	return r->err;
}

static inline bool rd_bytes(struct fsm_rd *r, void *out, size_t n)
{
	if (r->err)
		return false;
	if (r->left < n)
		return rd_fail(r, -EBADMSG, "truncated");
	if (n)
		memcpy(out, r->p, n);
	r->p += n;
	r->left -= n;
	return true;
}

static inline uint64_t rd_be(struct fsm_rd *r, unsigned int bytes)
{
	uint8_t b[8] = { 0 };
	uint64_t v = 0;
	unsigned int i;

	if (!rd_bytes(r, b, bytes))
		return 0;
	for (i = 0; i < bytes; i++)
		v = v << 8 | b[i];
	return v;
}

/*
 * A str into @out (@cap bytes, NUL-terminated): a name (valid by the
 * uAPI rule) when @name, else an address.
 */
static inline bool rd_str(struct fsm_rd *r, char *out, size_t cap, bool name)
{
	size_t n = (size_t)rd_be(r, 1);

	if (r->err)
		return false;
	if (n >= cap)
		return rd_fail(r, -EBADMSG, "string longer than its field");
	if (!rd_bytes(r, out, n))
		return false;
	out[n] = '\0';
	if (strlen(out) != n)
		return rd_fail(r, -EBADMSG, "NUL inside a string");
	if (name ? !imexd_name_valid(out) : !fsm_addr_valid(out))
		return rd_fail(r, -EBADMSG, name ?
			       "name is not [A-Za-z0-9][A-Za-z0-9_.-]*" :
			       "address is not printable ASCII");
	return true;
}

/*
 * Would @n elements of at least @min bytes each fit what is left?  Checked
 * before allocating for them.
 */
static inline bool rd_room(struct fsm_rd *r, uint64_t n, size_t min)
{
	if (r->err)
		return false;
	if (n > r->left / min)
		return rd_fail(r, -EBADMSG, "count larger than the bytes left");
	return true;
}

/* Member lists on the wire, shared by the command codec and the snapshot. */
void fsm_wr_members(struct imexd_wr *w, const struct imexd_member *m,
		    uint16_t n);
int fsm_rd_members(struct fsm_rd *r, struct imexd_member **out, uint16_t *n);

/*
 * The member-list rules of a domain (1..IMEX_MEMBERS_MAX, valid unique
 * names, printable addresses): 0, or -EINVAL / -E2BIG and @why.
 */
int fsm_check_members(const struct imexd_member *m, uint16_t n,
		      const char **why);

#endif /* IMEXD_FSM_INTERNAL_H */
