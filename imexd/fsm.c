// SPDX-License-Identifier: GPL-2.0
/*
 * The replicated state machine (fsm.h): the node and domain tables, their
 * lookups, refusals, and picking channels free on a set of nodes.  What
 * each command does to the tables is in fsm_apply.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fsm_internal.h"

struct imexd_fsm *imexd_fsm_new(void)
{
	return calloc(1, sizeof(struct imexd_fsm));
}

void imexd_fsm_free(struct imexd_fsm *fsm)
{
	size_t i;

	if (!fsm)
		return;
	for (i = 0; i < fsm->ndomains; i++)
		imexd_def_free(&fsm->domains[i]);
	free(fsm->domains);
	free(fsm->nodes);
	free(fsm);
}

void imexd_fsm_result_free(struct imexd_fsm_result *res)
{
	if (!res)
		return;
	imexd_def_free(&res->def);
	free(res->ids);
	memset(res, 0, sizeof(*res));
}

uint64_t imexd_fsm_last_index(const struct imexd_fsm *fsm)
{
	return fsm->last_index;
}

/* ---- lookups ------------------------------------------------------------ */

/*
 * Where @name is, or would go (*@found false), in @n records of @size bytes
 * at @base sorted by the name at offset @off: the node and domain tables.
 */
static size_t name_pos(const void *base, size_t n, size_t size, size_t off,
		       const char *name, bool *found)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp((const char *)base + mid * size + off, name);

		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

size_t fsm_node_pos(const struct imexd_fsm *fsm, const char *name,
		    bool *found)
{
	return name_pos(fsm->nodes, fsm->nnodes, sizeof(*fsm->nodes),
			offsetof(struct imexd_fsm_node, name), name, found);
}

long fsm_node_find(const struct imexd_fsm *fsm, const char *name)
{
	bool found;
	size_t i = fsm_node_pos(fsm, name, &found);

	return found ? (long)i : -1;
}

size_t fsm_dom_pos(const struct imexd_fsm *fsm, const char *name,
		   bool *found)
{
	return name_pos(fsm->domains, fsm->ndomains, sizeof(*fsm->domains),
			offsetof(struct imexd_def, name), name, found);
}

static struct imexd_def *dom_find(const struct imexd_fsm *fsm, const char *name)
{
	bool found;
	size_t i = fsm_dom_pos(fsm, name, &found);

	return found ? &fsm->domains[i] : NULL;
}

const struct imexd_def *imexd_fsm_domain(const struct imexd_fsm *fsm,
					 const char *name)
{
	return name ? dom_find(fsm, name) : NULL;
}

const struct imexd_def *imexd_fsm_domain_by_uuid(const struct imexd_fsm *fsm,
						 const uint8_t uuid[16])
{
	size_t i;

	for (i = 0; i < fsm->ndomains; i++)
		if (!memcmp(fsm->domains[i].uuid, uuid, 16))
			return &fsm->domains[i];
	return NULL;
}

size_t imexd_fsm_domain_count(const struct imexd_fsm *fsm)
{
	return fsm->ndomains;
}

const struct imexd_def *imexd_fsm_domain_at(const struct imexd_fsm *fsm,
					    size_t i)
{
	return i < fsm->ndomains ? &fsm->domains[i] : NULL;
}

long fsm_def_member(const struct imexd_def *d, const char *name)
{
	uint16_t m;

	for (m = 0; m < d->nmembers; m++)
		if (!strcmp(d->members[m].name, name))
			return m;
	return -1;
}

const struct imexd_def *imexd_fsm_domain_of(const struct imexd_fsm *fsm,
					    const char *node, size_t *pos)
{
	while (*pos < fsm->ndomains) {
		const struct imexd_def *d = &fsm->domains[(*pos)++];

		if (fsm_def_member(d, node) >= 0)
			return d;
	}
	return NULL;
}

const struct imexd_fsm_node *imexd_fsm_node(const struct imexd_fsm *fsm,
					    const char *name)
{
	long i = name ? fsm_node_find(fsm, name) : -1;

	return i < 0 ? NULL : &fsm->nodes[i];
}

size_t imexd_fsm_node_count(const struct imexd_fsm *fsm)
{
	return fsm->nnodes;
}

const struct imexd_fsm_node *imexd_fsm_node_at(const struct imexd_fsm *fsm,
					       size_t i)
{
	return i < fsm->nnodes ? &fsm->nodes[i] : NULL;
}

/* ---- results -------------------------------------------------------------- */

int fsm_refuse(struct imexd_fsm_result *res, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->message, sizeof(res->message), fmt, ap);
	va_end(ap);
	res->error = err;
	return 0;
}

/* A command that fails imexd_cmd_check(): say which rule, as the kernel would. */
int fsm_refuse_check(struct imexd_fsm_result *res, int err, const char *why)
{
	return fsm_refuse(res, err == -E2BIG ? E2BIG : EINVAL,
		      "malformed command refused: %s", why);
}

/* ---- channels on a set of nodes ------------------------------------------ */

int fsm_node_set_make(const struct imexd_fsm *fsm,
		      const struct imexd_member *m, uint16_t n,
		      struct node_set *s)
{
	uint16_t i;

	if (!m)
		return -EINVAL;		/* imexd_cmd_check() saw to it */
	s->in = calloc(fsm->nnodes ? fsm->nnodes : 1, sizeof(*s->in));
	if (!s->in)
		return -ENOMEM;
	s->limit = IMEX_CHANNELS_MAX;
	s->limit_node = NULL;
	for (i = 0; i < n; i++) {
		long k = fsm_node_find(fsm, m[i].name);

		s->in[k] = true;
		if (fsm->nodes[k].max_channels < s->limit || !s->limit_node) {
			s->limit = fsm->nodes[k].max_channels;
			s->limit_node = fsm->nodes[k].name;
		}
	}
	return 0;
}

/* The first member of @d in @s, or -1. */
static long names_any(const struct imexd_fsm *fsm, const struct imexd_def *d,
		      const struct node_set *s)
{
	uint16_t m;

	for (m = 0; m < d->nmembers; m++)
		if (s->in[fsm_node_find(fsm, d->members[m].name)])
			return m;
	return -1;
}

/* Bit i set: channel i < s->limit is held on some node of @s. */
static uint8_t *taken_map(const struct imexd_fsm *fsm, const struct node_set *s)
{
	uint8_t *map = calloc(s->limit / 8 + 1, 1);
	size_t i;
	uint32_t c;

	if (!map)
		return NULL;
	for (i = 0; i < fsm->ndomains; i++) {
		const struct imexd_def *d = &fsm->domains[i];

		if (names_any(fsm, d, s) < 0)
			continue;
		for (c = 0; c < d->nchannels; c++)
			if (d->channels[c].id < s->limit)
				map[d->channels[c].id / 8] |=
					(uint8_t)(1u << (d->channels[c].id % 8));
	}
	return map;
}

static bool taken(const uint8_t *map, uint32_t id)
{
	return map[id / 8] & (1u << (id % 8));
}

/*
 * The channels @ch asks for on the nodes of @s, for domain @name (@self:
 * the domain, for an alloc): *@out (ids, increasing; owned) and *@n, or a
 * refusal in @res.  0, or -ENOMEM.
 */
int fsm_pick(const struct imexd_fsm *fsm, const struct node_set *s,
	     const char *name, const struct imexd_def *self,
	     const struct imexd_cmd_channels *ch, uint32_t **out,
	     uint32_t *n, struct imexd_fsm_result *res)
{
	uint32_t want = ch->nids ? ch->nids : ch->count, i, id, avail = 0;
	uint8_t *map;
	uint32_t *ids;

	*out = NULL;
	*n = 0;
	if (!want)
		return 0;
	if (!ch->nids && ch->count > s->limit)
		return fsm_refuse(res, ERANGE,
			      "%u channels asked for; node '%s' has max_channels=%u",
			      ch->count, s->limit_node, s->limit);
	for (i = 0; i < ch->nids; i++) {
		if (ch->ids[i] >= s->limit)
			return fsm_refuse(res, ERANGE,
				      "channel %u is out of range: node '%s' has max_channels=%u",
				      ch->ids[i], s->limit_node, s->limit);
		if (self && imexd_def_has_channel(self, ch->ids[i]))
			return fsm_refuse(res, EEXIST,
				      "channel %u is already granted to domain '%s'",
				      ch->ids[i], name);
	}
	map = taken_map(fsm, s);
	ids = map ? calloc(want, sizeof(*ids)) : NULL;
	if (!ids) {
		free(map);
		return -ENOMEM;
	}
	for (i = 0; i < ch->nids; i++) {
		size_t k;

		ids[i] = ch->ids[i];
		if (!taken(map, ids[i]))
			continue;
		for (k = 0; k < fsm->ndomains; k++) {
			const struct imexd_def *d = &fsm->domains[k];
			long m = names_any(fsm, d, s);

			if (m < 0 || !imexd_def_has_channel(d, ids[i]))
				continue;
			fsm_refuse(res, EADDRINUSE,
			       "channel %u belongs to domain '%s' on node '%s': use other ids ('imexctl channel list' there)",
			       ids[i], d->name, d->members[m].name);
			break;
		}
		free(map);
		free(ids);
		return 0;
	}
	for (id = 0; !ch->nids && id < s->limit && avail < want; id++)
		if (!taken(map, id))
			ids[avail++] = id;
	free(map);
	if (!ch->nids && avail < want) {
		free(ids);
		return fsm_refuse(res, ENOSPC,
			      "%u channels asked for, but only %u are free on every member of domain '%s'",
			      want, avail, name);
	}
	*out = ids;
	*n = want;
	return 0;
}

/* @d's channels plus @ids (owner from @ch), sorted, into *@out. */
int fsm_merge_channels(const struct imexd_def *d, const uint32_t *ids,
		       uint32_t n, const struct imexd_cmd_channels *ch,
		       struct imexd_channel **out, uint32_t *nout)
{
	uint32_t total = d->nchannels + n, a = 0, b = 0, k = 0;
	struct imexd_channel *c = calloc(total ? total : 1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	while (a < d->nchannels || b < n) {
		if (b == n || (a < d->nchannels && d->channels[a].id < ids[b])) {
			c[k++] = d->channels[a++];
			continue;
		}
		c[k].id = ids[b++];
		c[k].uid = ch->uid;
		c[k].gid = ch->gid;
		c[k++].mode = ch->mode;
	}
	*out = c;
	*nout = total;
	return 0;
}
