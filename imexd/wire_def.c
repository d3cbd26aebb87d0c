// SPDX-License-Identifier: GPL-2.0
/*
 * Ownership helpers for the wire types (wire.h): free, deep copy and
 * comparison of definitions and decoded messages.  The codec is in wire.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

void imexd_def_free(struct imexd_def *def)
{
	if (!def)
		return;
	free(def->members);
	free(def->channels);
	def->members = NULL;
	def->channels = NULL;
	def->nmembers = 0;
	def->nchannels = 0;
}

void imexd_msg_free(struct imexd_msg *msg)
{
	if (!msg)
		return;
	switch (msg->type) {
	case IMEXD_MSG_HEARTBEAT:
		free(msg->u.heartbeat.peers);
		msg->u.heartbeat.peers = NULL;
		msg->u.heartbeat.n = 0;
		free(msg->u.heartbeat.gens);
		msg->u.heartbeat.gens = NULL;
		msg->u.heartbeat.ngens = 0;
		break;
	case IMEXD_MSG_RAFT:
		free(msg->u.raft.data);
		msg->u.raft.data = NULL;
		msg->u.raft.len = 0;
		break;
	case IMEXD_MSG_FORWARD:
		free(msg->u.forward.cmd);
		msg->u.forward.cmd = NULL;
		msg->u.forward.len = 0;
		break;
	case IMEXD_MSG_REPLY:
		imexd_def_free(&msg->u.reply.def);
		msg->u.reply.has_def = false;
		free(msg->u.reply.ids);
		msg->u.reply.ids = NULL;
		msg->u.reply.nids = 0;
		break;
	}
}

int imexd_def_copy(struct imexd_def *dst, const struct imexd_def *src)
{
	struct imexd_def t;

	if (!dst || !src || (src->nmembers && !src->members) ||
	    (src->nchannels && !src->channels))
		return -EINVAL;
	t = *src;
	t.members = NULL;
	t.channels = NULL;
	/* calloc checks the multiplication; memcpy then copies that size. */
	if (src->nmembers) {
		t.members = calloc(src->nmembers, sizeof(*t.members));
		if (!t.members)
			return -ENOMEM;
		memcpy(t.members, src->members,
		       src->nmembers * sizeof(*t.members));
	}
	if (src->nchannels) {
		t.channels = calloc(src->nchannels, sizeof(*t.channels));
		if (!t.channels) {
			free(t.members);
			return -ENOMEM;
		}
		memcpy(t.channels, src->channels,
		       src->nchannels * sizeof(*t.channels));
	}
	*dst = t;
	return 0;
}

int imexd_defs_replace(struct imexd_def **dst, size_t *ndst,
		       const struct imexd_def *src, size_t n)
{
	struct imexd_def *copy = NULL;
	size_t i;

	if (n) {
		copy = calloc(n, sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		for (i = 0; i < n; i++)
			if (imexd_def_copy(&copy[i], &src[i])) {
				while (i--)
					imexd_def_free(&copy[i]);
				free(copy);
				return -ENOMEM;
			}
	}
	for (i = 0; i < *ndst; i++)
		imexd_def_free(&(*dst)[i]);
	free(*dst);
	*dst = copy;
	*ndst = n;
	return 0;
}

bool imexd_def_has_channel(const struct imexd_def *def, uint32_t id)
{
	size_t lo = 0, hi = def->nchannels;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (def->channels[mid].id == id)
			return true;
		if (def->channels[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

bool imexd_def_has_member(const struct imexd_def *def, const char *node)
{
	uint16_t i;

	for (i = 0; i < def->nmembers; i++)
		if (!strncmp(def->members[i].name, node, IMEX_NAME_MAX))
			return true;
	return false;
}

static bool channel_equal(const struct imexd_channel *a,
			  const struct imexd_channel *b)
{
	/* Field by field: the struct has padding. */
	return a->id == b->id && a->uid == b->uid && a->gid == b->gid &&
	       a->mode == b->mode;
}

static bool members_equal(const struct imexd_def *a, const struct imexd_def *b)
{
	uint16_t i;

	for (i = 0; i < a->nmembers; i++)
		if (strncmp(a->members[i].name, b->members[i].name,
			    sizeof(a->members[i].name)) ||
		    strncmp(a->members[i].addr, b->members[i].addr,
			    sizeof(a->members[i].addr)))
			return false;
	return true;
}

int imexd_def_equal(const struct imexd_def *a, const struct imexd_def *b)
{
	uint32_t i;

	if (!a || !b)
		return a == b;
	if (strncmp(a->name, b->name, sizeof(a->name)) ||
	    memcmp(a->uuid, b->uuid, sizeof(a->uuid)) ||
	    a->generation != b->generation || a->flags != b->flags ||
	    memcmp(a->fabric_uuid, b->fabric_uuid, sizeof(a->fabric_uuid)) ||
	    a->partition != b->partition || a->nmembers != b->nmembers ||
	    a->nchannels != b->nchannels)
		return 0;
	if (a->nmembers && (!a->members || !b->members))
		return a->members == b->members;
	if (!members_equal(a, b))
		return 0;
	if (a->nchannels && (!a->channels || !b->channels))
		return a->channels == b->channels;
	for (i = 0; i < a->nchannels; i++)
		if (!channel_equal(&a->channels[i], &b->channels[i]))
			return 0;
	return 1;
}

const char *imexd_msg_type_name(uint8_t type)
{
	static const char *const names[] = {
		[IMEXD_MSG_HELLO] = "HELLO",
		[IMEXD_MSG_HELLO_ACK] = "HELLO_ACK",
		[IMEXD_MSG_HEARTBEAT] = "HEARTBEAT",
		[IMEXD_MSG_LEAVE] = "LEAVE",
		[IMEXD_MSG_IMPORT_REQ] = "IMPORT_REQ",
		[IMEXD_MSG_IMPORT_RESP] = "IMPORT_RESP",
		[IMEXD_MSG_EXPORT_REVOKE] = "EXPORT_REVOKE",
		[IMEXD_MSG_RAFT] = "RAFT",
		[IMEXD_MSG_FORWARD] = "FORWARD",
		[IMEXD_MSG_REPLY] = "REPLY",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "UNKNOWN";
}
