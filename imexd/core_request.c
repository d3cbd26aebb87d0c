// SPDX-License-Identifier: GPL-2.0
/*
 * From an administrator's request to a change the coordinator can run:
 * the checks against what this node holds, the members to involve, the
 * definition after the change (generation + 1, or 1 for a create), the
 * channels picked when they were asked for by count (the lowest ids free
 * here and in every member's FREE answer), and the message the caller
 * reads when it is done.  The phases themselves are core_change.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core_internal.h"

void core_cc_release(struct core_cchange *cc)
{
	free(cc->ids);
	free(cc->members);
	imexd_def_free(&cc->newdef);
	free(cc->delta);
	free(cc->targets);
	free(cc->freebits);
	free(cc);
}

void core_cc_free_all(struct imexd_core *core)
{
	size_t i;

	for (i = 0; i < core->ncc; i++)
		core_cc_release(core->cc[i]);
	free(core->cc);
	core->cc = NULL;
	core->ncc = 0;
}

const char *core_cc_what(const struct core_cchange *cc)
{
	switch (cc->cmd) {
	case IMEX_CMD_DOMAIN_CREATE:	return "create";
	case IMEX_CMD_DOMAIN_DELETE:	return "delete";
	case IMEX_CMD_CHANNEL_ALLOC:	return "channel alloc";
	case IMEX_CMD_CHANNEL_FREE:	return "channel free";
	default:			return "evict";
	}
}

static int core_cc_targets(struct imexd_core *core, struct core_cchange *cc,
			   const struct imexd_def *def)
{
	uint16_t m, n = 0;

	free(cc->targets);
	cc->targets = calloc(def->nmembers ? def->nmembers : 1,
			     sizeof(*cc->targets));
	if (!cc->targets)
		return -ENOMEM;
	for (m = 0; m < def->nmembers; m++) {
		int p;

		if (!strcmp(def->members[m].name, core->cfg.node_name))
			continue;
		p = core_peer_get(core, def->members[m].name,
				  def->members[m].addr);
		cc->targets[n].peer = p;
		core_peer_connect_now(core, p);
		n++;
	}
	cc->ntargets = n;
	core->wanted_dirty = true;
	return 0;
}

/*
 * The definition after the change, from what this node holds now (it may
 * have moved on since the request arrived).  0, or an errno with @msg.
 */
int core_cc_build(struct imexd_core *core, struct core_cchange *cc,
			 char *msg, size_t len)
{
	struct core_domain *d = NULL;
	struct imexd_def nd;
	uint32_t i, n;

	imexd_def_free(&cc->newdef);
	if (cc->cmd != IMEX_CMD_DOMAIN_CREATE) {
		d = core_dom_find(core, cc->uuid);
		if (!d || d->kind != DOM_LIVE || !d->in_kernel) {
			snprintf(msg, len, "domain '%s' is gone from this node",
				 cc->name);
			return ENOENT;
		}
		if (imexd_def_copy(&nd, &d->def))
			return ENOMEM;
		nd.generation++;
	} else {
		memset(&nd, 0, sizeof(nd));
		snprintf(nd.name, sizeof(nd.name), "%s", cc->name);
		memcpy(nd.uuid, cc->uuid, 16);
		nd.generation = 1;
		memcpy(nd.fabric_uuid, core->cfg.fabric_uuid, 16);
		nd.partition = core->cfg.partition;
		nd.members = malloc(cc->nmembers * sizeof(*nd.members));
		if (!nd.members)
			return ENOMEM;
		memcpy(nd.members, cc->members,
		       cc->nmembers * sizeof(*nd.members));
		nd.nmembers = cc->nmembers;
	}
	switch (cc->op) {
	case IMEX_CHANGE_DELETE:
		nd.flags |= IMEXD_DEF_DELETED;
		break;
	case IMEX_CHANGE_SET_MEMBERS: {
		int m = core_def_member(&nd, cc->member);

		if (m < 0) {
			imexd_def_free(&nd);
			snprintf(msg, len, "'%s' is not a member of domain '%s'",
				 cc->member, cc->name);
			return ENOENT;
		}
		memmove(&nd.members[m], &nd.members[m + 1],
			(nd.nmembers - m - 1) * sizeof(*nd.members));
		nd.nmembers--;
		break;
	}
	case IMEX_CHANGE_REMOVE_CHANNELS:
		for (i = 0; i < cc->ndelta; i++) {
			if (core_def_channel(&nd, cc->delta[i].id) < 0) {
				snprintf(msg, len,
					 "channel %u is not granted to domain '%s'",
					 cc->delta[i].id, cc->name);
				imexd_def_free(&nd);
				return ENOENT;
			}
		}
		for (i = 0, n = 0; i < nd.nchannels; i++) {
			uint32_t k;
			bool drop = false;

			for (k = 0; k < cc->ndelta && !drop; k++)
				drop = cc->delta[k].id == nd.channels[i].id;
			if (!drop)
				nd.channels[n++] = nd.channels[i];
		}
		nd.nchannels = n;
		break;
	case IMEX_CHANGE_CREATE:
	case IMEX_CHANGE_ADD_CHANNELS: {
		struct imexd_channel *ch;

		for (i = 0; i < cc->ndelta; i++) {
			if (cc->delta[i].id >= core->cfg.max_channels) {
				snprintf(msg, len,
					 "channel %u is out of range: max_channels is %u",
					 cc->delta[i].id, core->cfg.max_channels);
				imexd_def_free(&nd);
				return ERANGE;
			}
			if (core_def_channel(&nd, cc->delta[i].id) >= 0) {
				snprintf(msg, len,
					 "channel %u is already granted to domain '%s'",
					 cc->delta[i].id, cc->name);
				imexd_def_free(&nd);
				return EEXIST;
			}
		}
		ch = realloc(nd.channels, (nd.nchannels + cc->ndelta + 1) *
			     sizeof(*ch));
		if (!ch) {
			imexd_def_free(&nd);
			return ENOMEM;
		}
		if (cc->ndelta)
			memcpy(ch + nd.nchannels, cc->delta,
			       cc->ndelta * sizeof(*ch));
		nd.channels = ch;
		nd.nchannels += cc->ndelta;
		core_def_sort(&nd);
		break;
	}
	}
	cc->newdef = nd;
	return 0;
}

/* Pick the @count lowest channels free here and on every member. */
int core_cc_pick(struct imexd_core *core, struct core_cchange *cc,
			char *msg, size_t len)
{
	uint8_t *own = core_free_bits(core);
	uint32_t nbits = core->cfg.max_channels, id, n = 0, avail = 0;
	uint32_t *ids;
	int err = 0;

	for (id = 0; id < nbits; id++)
		if ((own[id / 8] & cc->freebits[id / 8]) & (1u << (id % 8)))
			avail++;
	if (avail < cc->count) {
		snprintf(msg, len,
			 "%u channels asked for, but only %u are free on every member of domain '%s'",
			 cc->count, avail, cc->name);
		free(own);
		return ENOSPC;
	}
	ids = malloc(cc->count * sizeof(*ids));
	if (!ids) {
		free(own);
		return ENOMEM;
	}
	for (id = 0; id < nbits && n < cc->count; id++)
		if ((own[id / 8] & cc->freebits[id / 8]) & (1u << (id % 8)))
			ids[n++] = id;
	free(cc->delta);
	if (core_channels_from_ids(ids, n, cc->uid, cc->gid, cc->mode,
				   &cc->delta))
		err = ENOMEM;
	cc->ndelta = err ? 0 : n;
	free(ids);
	free(own);
	return err;
}

void core_cc_success(struct imexd_core *core, struct core_cchange *cc,
			    const char *late)
{
	char ids[160], msg[640];	/* cut to IMEX_MESSAGE_MAX when sent */

	switch (cc->cmd) {
	case IMEX_CMD_DOMAIN_CREATE:
		core_format_ids(ids, sizeof(ids), cc->newdef.channels,
				cc->newdef.nchannels);
		snprintf(msg, sizeof(msg),
			 "domain '%s' created on %u nodes, channels %s%s",
			 cc->name, cc->newdef.nmembers, ids, late);
		break;
	case IMEX_CMD_DOMAIN_DELETE:
		snprintf(msg, sizeof(msg), "domain '%s' deleted on %u nodes%s",
			 cc->name, cc->newdef.nmembers, late);
		break;
	case IMEX_CMD_CHANNEL_ALLOC:
		core_format_ids(ids, sizeof(ids), cc->delta, cc->ndelta);
		snprintf(msg, sizeof(msg),
			 "channels %s granted to domain '%s'%s", ids, cc->name,
			 late);
		break;
	case IMEX_CMD_CHANNEL_FREE:
		core_format_ids(ids, sizeof(ids), cc->delta, cc->ndelta);
		snprintf(msg, sizeof(msg), "channels %s freed from domain '%s'%s",
			 ids, cc->name, late);
		break;
	default:
		snprintf(msg, sizeof(msg), "node '%s' evicted from domain '%s'%s",
			 cc->member, cc->name, late);
		break;
	}
	core_cc_finish(core, cc, 0, msg);
}

void core_cc_request(struct imexd_core *core, const struct imexd_request *r)
{
	struct core_domain *d = NULL;
	struct core_cchange *cc;
	struct imexd_def tmp;
	int err = 0;

	if (r->cmd != IMEX_CMD_DOMAIN_CREATE) {
		d = core_dom_find_name(core, r->name);
		if (!d || !d->in_kernel) {
			core_request_done(core, r->req_id, ENOENT,
					  "no domain '%s' on this node: see 'imexctl domain list'",
					  r->name);
			return;
		}
	} else if (core_dom_find_name(core, r->name)) {
		core_request_done(core, r->req_id, EEXIST,
				  "domain '%s' already exists on this node",
				  r->name);
		return;
	}
	cc = calloc(1, sizeof(*cc));
	if (!cc) {
		core_request_done(core, r->req_id, ENOMEM, "imexd is out of memory");
		return;
	}
	cc->id = core_new_id(core);
	cc->req_id = r->req_id;
	cc->cmd = r->cmd;
	snprintf(cc->name, sizeof(cc->name), "%s", r->name);
	snprintf(cc->member, sizeof(cc->member), "%s", r->member);
	cc->uid = r->uid;
	cc->gid = r->gid;
	cc->mode = r->mode;
	cc->phase = CP_CONNECT;
	cc->deadline = core->now + core->cfg.step_timeout_ms;
	if (d)
		memcpy(cc->uuid, d->def.uuid, 16);

	switch (r->cmd) {
	case IMEX_CMD_DOMAIN_CREATE:
		cc->op = IMEX_CHANGE_CREATE;
		if (r->has_uuid)
			memcpy(cc->uuid, r->uuid, 16);
		else
			core_new_uuid(core, cc->uuid);
		if (core_dom_find(core, cc->uuid)) {
			core_request_done(core, r->req_id, EEXIST,
					  "domain UUID of '%s' is already in use here",
					  r->name);
			core_cc_release(cc);
			return;
		}
		memset(&tmp, 0, sizeof(tmp));
		tmp.members = r->members;
		tmp.nmembers = r->nmembers;
		if (!r->nmembers || r->nmembers > IMEX_MEMBERS_MAX ||
		    core_def_member(&tmp, core->cfg.node_name) < 0) {
			core_request_done(core, r->req_id, EADDRNOTAVAIL,
					  "this node ('%s') is not a member of domain '%s'",
					  core->cfg.node_name, r->name);
			core_cc_release(cc);
			return;
		}
		cc->members = malloc(r->nmembers * sizeof(*cc->members));
		if (!cc->members)
			err = ENOMEM;
		else
			memcpy(cc->members, r->members,
			       r->nmembers * sizeof(*cc->members));
		cc->nmembers = r->nmembers;
		break;
	case IMEX_CMD_DOMAIN_DELETE:
		cc->op = IMEX_CHANGE_DELETE;
		break;
	case IMEX_CMD_CHANNEL_ALLOC:
		cc->op = IMEX_CHANGE_ADD_CHANNELS;
		if (!r->nids && !r->count) {
			core_request_done(core, r->req_id, EINVAL,
					  "give a channel count or a channel list");
			core_cc_release(cc);
			return;
		}
		break;
	case IMEX_CMD_CHANNEL_FREE:
		cc->op = IMEX_CHANGE_REMOVE_CHANNELS;
		if (!r->nids) {
			core_request_done(core, r->req_id, EINVAL,
					  "name the channels to free");
			core_cc_release(cc);
			return;
		}
		break;
	case IMEX_CMD_MEMBER_EVICT:
		cc->op = IMEX_CHANGE_SET_MEMBERS;
		if (!strcmp(r->member, core->cfg.node_name) ||
		    core_def_member(&d->def, r->member) < 0) {
			core_request_done(core, r->req_id,
					  strcmp(r->member, core->cfg.node_name) ?
					  ENOENT : EINVAL,
					  strcmp(r->member, core->cfg.node_name) ?
					  "'%s' is not a member of domain '%s'" :
					  "this node ('%s') cannot evict itself from '%s': delete the domain instead",
					  r->member, r->name);
			core_cc_release(cc);
			return;
		}
		core_pc_evicting(core, cc->uuid, r->member);
		break;
	default:
		core_request_done(core, r->req_id, EOPNOTSUPP,
				  "request %u is not a domain change", r->cmd);
		core_cc_release(cc);
		return;
	}
	if (!err && r->nids) {
		struct imexd_def s = { .nchannels = 0 };

		err = core_channels_from_ids(r->ids, r->nids, r->uid, r->gid,
					     r->mode, &s.channels) ? ENOMEM : 0;
		s.nchannels = r->nids;
		core_def_sort(&s);
		cc->delta = s.channels;
		cc->ndelta = s.nchannels;
	} else if (!err && r->count && (cc->op == IMEX_CHANGE_CREATE ||
					cc->op == IMEX_CHANGE_ADD_CHANNELS)) {
		cc->count = r->count;
		cc->freebits = malloc((core->cfg.max_channels + 7) / 8 + 1);
		if (!cc->freebits)
			err = ENOMEM;
		else
			memset(cc->freebits, 0xff,
			       (core->cfg.max_channels + 7) / 8 + 1);
	}
	if (!err) {
		char msg[IMEXD_MESSAGE_MAX + 1];

		/* Validate against what we hold, and learn the members. */
		err = core_cc_build(core, cc, msg, sizeof(msg));
		if (err) {
			core_request_done(core, r->req_id, err, "%s", msg);
			core_cc_release(cc);
			return;
		}
		err = core_cc_targets(core, cc, &cc->newdef);
	}
	if (err) {
		core_request_done(core, r->req_id, err, "imexd is out of memory");
		core_cc_release(cc);
		return;
	}
	if (core->ncc == core->cc_cap) {
		size_t cap = core->cc_cap ? core->cc_cap * 2 : 8;
		struct core_cchange **n = realloc(core->cc,
						  cap * sizeof(struct core_cchange *));

		if (!n)
			abort();
		core->cc = n;
		core->cc_cap = cap;
	}
	core->cc[core->ncc++] = cc;
	core_log(core, IMEXD_LOG_INFO,
		 "request %llu: %s of domain '%s' over %u nodes (change %016llx)",
		 (unsigned long long)r->req_id, core_cc_what(cc), cc->name,
		 cc->ntargets + 1, (unsigned long long)cc->id);
	core_cc_advance(core, cc);
}
