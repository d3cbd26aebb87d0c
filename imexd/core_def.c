// SPDX-License-Identifier: GPL-2.0
/*
 * Domain definitions as values: deep copy and free, comparison, member and
 * channel lookup, and the channel difference between two generations (what
 * a change or an adoption must do to the kernel).  Copy and free are the
 * codec's (wire_def.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core_internal.h"

bool core_members_same(const struct imexd_def *a, const struct imexd_def *b)
{
	uint16_t i;

	if (a->nmembers != b->nmembers)
		return false;
	for (i = 0; i < a->nmembers; i++)
		if (strcmp(a->members[i].name, b->members[i].name) ||
		    strcmp(a->members[i].addr, b->members[i].addr))
			return false;
	return true;
}

/* Same content, generation aside. */
bool core_def_same(const struct imexd_def *a, const struct imexd_def *b)
{
	uint32_t i;

	if (strcmp(a->name, b->name) || memcmp(a->uuid, b->uuid, 16) ||
	    (a->flags & IMEXD_DEF_DELETED) != (b->flags & IMEXD_DEF_DELETED) ||
	    memcmp(a->fabric_uuid, b->fabric_uuid, 16) ||
	    a->partition != b->partition || !core_members_same(a, b) ||
	    a->nchannels != b->nchannels)
		return false;
	for (i = 0; i < a->nchannels; i++)
		if (a->channels[i].id != b->channels[i].id ||
		    a->channels[i].uid != b->channels[i].uid ||
		    a->channels[i].gid != b->channels[i].gid ||
		    a->channels[i].mode != b->channels[i].mode)
			return false;
	return true;
}

int core_def_member(const struct imexd_def *def, const char *name)
{
	uint16_t i;

	for (i = 0; i < def->nmembers; i++)
		if (!strcmp(def->members[i].name, name))
			return i;
	return -1;
}

/* Binary search: channels are kept sorted by id. */
int core_def_channel(const struct imexd_def *def, uint32_t id)
{
	uint32_t lo = 0, hi = def->nchannels;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (def->channels[mid].id == id)
			return (int)mid;
		if (def->channels[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int core_chan_cmp(const void *a, const void *b)
{
	const struct imexd_channel *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Sort channels and drop duplicate ids (the first entry wins). */
void core_def_sort(struct imexd_def *def)
{
	uint32_t i, n = 0;

	if (def->nchannels < 2)
		return;
	qsort(def->channels, def->nchannels, sizeof(*def->channels),
	      core_chan_cmp);
	for (i = 0; i < def->nchannels; i++)
		if (!n || def->channels[n - 1].id != def->channels[i].id)
			def->channels[n++] = def->channels[i];
	def->nchannels = n;
}

/* The channels of @a that @b lacks, sorted (malloc'd; *n may be 0). */
int core_chan_diff(const struct imexd_def *a, const struct imexd_def *b,
		   struct imexd_channel **out, uint32_t *n)
{
	uint32_t i, j = 0, k = 0;

	*out = NULL;
	*n = 0;
	if (!a->nchannels)
		return 0;
	*out = malloc(a->nchannels * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < a->nchannels; i++) {
		while (j < b->nchannels && b->channels[j].id < a->channels[i].id)
			j++;
		if (j < b->nchannels && b->channels[j].id == a->channels[i].id)
			continue;
		(*out)[k++] = a->channels[i];
	}
	*n = k;
	if (!k) {
		free(*out);
		*out = NULL;
	}
	return 0;
}

/* A content hash: breaks ties between equal generations deterministically. */
uint32_t core_def_hash(const struct imexd_def *def)
{
	uint32_t h = 2166136261u;
	const uint8_t *p;
	size_t i, n;
	uint16_t m;
	uint32_t c;

#define MIX(ptr, len) do {					\
		p = (const uint8_t *)(ptr);			\
		n = (len);					\
		for (i = 0; i < n; i++)				\
			h = (h ^ p[i]) * 16777619u;		\
	} while (0)
	MIX(def->uuid, 16);
	MIX(&def->flags, 1);
	for (m = 0; m < def->nmembers; m++)
		MIX(def->members[m].name, strlen(def->members[m].name));
	for (c = 0; c < def->nchannels; c++)
		MIX(&def->channels[c].id, sizeof(uint32_t));
#undef MIX
	return h;
}

/* "0-3,7,9-10", cut with "..." when it does not fit. */
void core_format_ids(char *buf, size_t len, const struct imexd_channel *ch,
		     uint32_t n)
{
	size_t off = 0;
	uint32_t i = 0;

	if (!len)
		return;
	buf[0] = '\0';
	if (!n) {
		snprintf(buf, len, "none");
		return;
	}
	while (i < n) {
		uint32_t j = i;
		int w;

		while (j + 1 < n && ch[j + 1].id == ch[j].id + 1)
			j++;
		if (j == i)
			w = snprintf(buf + off, len - off, "%s%u",
				     off ? "," : "", ch[i].id);
		else
			w = snprintf(buf + off, len - off, "%s%u-%u",
				     off ? "," : "", ch[i].id, ch[j].id);
		if (w < 0 || (size_t)w >= len - off) {
			if (len > 4)
				snprintf(buf + (off < len - 4 ? off : len - 4),
					 4, "...");
			return;
		}
		off += w;
		i = j + 1;
	}
}

int core_channels_from_ids(const uint32_t *ids, uint32_t n, uint32_t uid,
			   uint32_t gid, uint32_t mode,
			   struct imexd_channel **out)
{
	uint32_t i;

	*out = NULL;
	if (!n)
		return 0;
	*out = calloc(n, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		(*out)[i].id = ids[i];
		(*out)[i].uid = uid;
		(*out)[i].gid = gid;
		(*out)[i].mode = mode;
	}
	return 0;
}
