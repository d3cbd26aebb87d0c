// SPDX-License-Identifier: GPL-2.0
/*
 * Reading from the imex module: the domains it holds, as definitions for
 * the core's start, and the administrators' requests (REQ_ACCEPT).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <linux/imex.h>
#include "kernel.h"
#include "kernel_internal.h"

#define DUMP_RETRIES	5

/* --- domains ------------------------------------------------------------- */

struct name_list {
	char (*names)[IMEX_NAME_MAX];
	size_t n, cap;
	int err;
};

static int on_domain_name(struct nl_msg *m, void *arg)
{
	struct name_list *l = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (kernel_parse(m, tb) || !tb[IMEX_A_DOMAIN_NAME])
		return NL_SKIP;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		void *p;

		if (cap > IMEX_DOMAINS_MAX * 2UL) {
			l->err = -E2BIG;
			return NL_SKIP;
		}
		p = realloc(l->names, cap * sizeof(*l->names));
		if (!p) {
			l->err = -ENOMEM;
			return NL_SKIP;
		}
		l->names = p;
		l->cap = cap;
	}
	kernel_get_str(l->names[l->n++], IMEX_NAME_MAX, tb[IMEX_A_DOMAIN_NAME]);
	return NL_OK;
}

static int on_domain(struct nl_msg *m, void *arg)
{
	struct imexd_def *d = arg;
	struct nlattr *tb[IMEX_A_MAX + 1], *e;
	int rem;
	size_t n;

	if (kernel_parse(m, tb) || !tb[IMEX_A_DOMAIN_NAME])
		return NL_SKIP;
	kernel_get_str(d->name, sizeof(d->name), tb[IMEX_A_DOMAIN_NAME]);
	kernel_get_uuid(d->uuid, tb[IMEX_A_DOMAIN_UUID]);
	kernel_get_uuid(d->fabric_uuid, tb[IMEX_A_FABRIC_UUID]);
	if (tb[IMEX_A_FABRIC_PARTITION])
		d->partition = nla_get_u32(tb[IMEX_A_FABRIC_PARTITION]);
	/* What the last DOMAIN_SET gave: the generation this node holds. */
	if (tb[IMEX_A_DOMAIN_GENERATION] &&
	    nla_len(tb[IMEX_A_DOMAIN_GENERATION]) == sizeof(uint64_t))
		d->generation = nla_get_u64(tb[IMEX_A_DOMAIN_GENERATION]);
	if (!tb[IMEX_A_MEMBERS])
		return NL_OK;
	n = kernel_nest_count(tb[IMEX_A_MEMBERS]);
	if (!n || n > IMEX_MEMBERS_MAX)
		return NL_SKIP;
	free(d->members);
	d->members = calloc(n, sizeof(*d->members));
	if (!d->members)
		return NL_SKIP;
	d->nmembers = 0;
	nla_for_each_nested(e, tb[IMEX_A_MEMBERS], rem) {
		struct nlattr *mt[IMEX_A_MEMBER_MAX + 1];
		struct imexd_member *mb = &d->members[d->nmembers];

		/* n counted the same entries just above. */
		// cppcheck-suppress unsignedLessThanZero
		if (d->nmembers >= n ||
		    nla_parse_nested(mt, IMEX_A_MEMBER_MAX, e, NULL) ||
		    !mt[IMEX_A_MEMBER_ENTRY_NAME])
			continue;
		kernel_get_str(mb->name, sizeof(mb->name), mt[IMEX_A_MEMBER_ENTRY_NAME]);
		if (mt[IMEX_A_MEMBER_ADDR])
			kernel_get_str(mb->addr, sizeof(mb->addr), mt[IMEX_A_MEMBER_ADDR]);
		d->nmembers++;
	}
	return NL_OK;
}

struct chan_sink {
	struct imexd_def *defs;
	size_t ndefs;
	uint32_t *caps;
	int err;
};

static int on_channel(struct nl_msg *m, void *arg)
{
	struct chan_sink *s = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];
	uint8_t uuid[16];
	struct imexd_def *d = NULL;
	struct imexd_channel *ch;
	size_t i;

	if (kernel_parse(m, tb) || !tb[IMEX_A_CHANNEL_ID] ||
	    !kernel_get_uuid(uuid, tb[IMEX_A_DOMAIN_UUID]))
		return NL_SKIP;
	if (tb[IMEX_A_CHANNEL_STATE] &&
	    nla_get_u32(tb[IMEX_A_CHANNEL_STATE]) != IMEX_CHANNEL_GRANTED)
		return NL_OK;
	for (i = 0; i < s->ndefs; i++) {
		if (!memcmp(s->defs[i].uuid, uuid, 16)) {
			d = &s->defs[i];
			break;
		}
	}
	if (!d)
		return NL_OK;
	if (d->nchannels == s->caps[i]) {
		uint32_t cap = s->caps[i] ? s->caps[i] * 2 : 64;
		void *p;

		if (cap > IMEX_CHANNELS_MAX) {
			s->err = -E2BIG;
			return NL_SKIP;
		}
		p = realloc(d->channels, cap * sizeof(*d->channels));
		if (!p) {
			s->err = -ENOMEM;
			return NL_SKIP;
		}
		d->channels = p;
		s->caps[i] = cap;
	}
	ch = &d->channels[d->nchannels++];
	ch->id = nla_get_u32(tb[IMEX_A_CHANNEL_ID]);
	ch->uid = tb[IMEX_A_CHANNEL_UID] ? nla_get_u32(tb[IMEX_A_CHANNEL_UID]) : 0;
	ch->gid = tb[IMEX_A_CHANNEL_GID] ? nla_get_u32(tb[IMEX_A_CHANNEL_GID]) : 0;
	ch->mode = (uint16_t)(tb[IMEX_A_CHANNEL_MODE] ?
			      nla_get_u32(tb[IMEX_A_CHANNEL_MODE]) : 0600);
	return NL_OK;
}

static int chan_cmp(const void *a, const void *b)
{
	const struct imexd_channel *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void defs_free(struct imexd_def *defs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		imexd_def_free(&defs[i]);
	free(defs);
}

/* One attempt; -EAGAIN when a dump raced a change. */
static int read_domains_once(struct imexd_kernel *k, struct imexd_def **out,
			     size_t *nout, char *msg, size_t msglen)
{
	struct name_list names = { 0 };
	struct chan_sink sink = { 0 };
	struct imexd_def *defs = NULL;
	size_t n = 0;
	bool intr = false;
	int r;

	r = kernel_transact(k, kernel_msg_new(k, IMEX_CMD_DOMAIN_GET, NLM_F_DUMP, 0),
		     on_domain_name, &names, &intr, msg, msglen);
	if (!r && names.err)
		r = names.err;
	if (r)
		goto out;
	if (intr) {
		r = -EAGAIN;
		goto out;
	}
	if (names.n) {
		defs = calloc(names.n, sizeof(*defs));
		sink.caps = calloc(names.n, sizeof(*sink.caps));
		if (!defs || !sink.caps) {
			r = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < names.n; i++) {
		struct nl_msg *m = kernel_msg_new(k, IMEX_CMD_DOMAIN_GET, 0, 0);

		if (m && nla_put_string(m, IMEX_A_DOMAIN_NAME, names.names[i])) {
			nlmsg_free(m);
			m = NULL;
		}
		r = kernel_transact(k, m, on_domain, &defs[n], NULL, msg, msglen);
		if (r == -ENOENT) {	/* deleted meanwhile */
			r = -EAGAIN;
			goto out;
		}
		if (r)
			goto out;
		if (!defs[n].nmembers) {
			snprintf(msg, msglen, "domain '%s': the kernel's member list could not be read",
				 names.names[i]);
			imexd_def_free(&defs[n]);
			r = -EPROTO;
			goto out;
		}
		n++;
	}
	sink.defs = defs;
	sink.ndefs = n;
	if (n) {
		r = kernel_transact(k, kernel_msg_new(k, IMEX_CMD_CHANNEL_GET, NLM_F_DUMP, 0),
			     on_channel, &sink, &intr, msg, msglen);
		if (!r && sink.err)
			r = sink.err;
		if (!r && intr)
			r = -EAGAIN;
		if (r)
			goto out;
	}
	for (size_t i = 0; i < n; i++)
		qsort(defs[i].channels, defs[i].nchannels,
		      sizeof(*defs[i].channels), chan_cmp);
	*out = defs;
	*nout = n;
	defs = NULL;
	n = 0;
out:
	if (r == -ENOMEM)
		snprintf(msg, msglen, "out of memory reading the kernel's domains");
	defs_free(defs, n);
	free(sink.caps);
	free(names.names);
	return r;
}

int imexd_kernel_read_domains(struct imexd_kernel *k, struct imexd_def **defs,
			      size_t *n, char *msg, size_t msglen)
{
	int r = -EAGAIN;

	*defs = NULL;
	*n = 0;
	for (int i = 0; i < DUMP_RETRIES && r == -EAGAIN; i++)
		r = read_domains_once(k, defs, n, msg, msglen);
	if (r == -EAGAIN)
		snprintf(msg, msglen, "the kernel's domains kept changing while they were read: retry");
	return r;
}

/* --- requests ------------------------------------------------------------ */

struct accepted {
	struct imexd_request *req;
	int err;		/* -EBADMSG with why */
	char why[256];
	bool got;
};

static int req_members(struct accepted *a, struct nlattr *attr)
{
	struct imexd_request *req = a->req;
	struct nlattr *e;
	int rem;
	size_t n = kernel_nest_count(attr);

	if (!n || n > IMEX_MEMBERS_MAX) {
		snprintf(a->why, sizeof(a->why), "%zu members: a domain has 1 to %d",
			 n, IMEX_MEMBERS_MAX);
		return -EBADMSG;
	}
	req->members = calloc(n, sizeof(*req->members));
	if (!req->members)
		return -ENOMEM;
	nla_for_each_nested(e, attr, rem) {
		struct nlattr *mt[IMEX_A_MEMBER_MAX + 1];
		struct imexd_member *mb = &req->members[req->nmembers];

		if (nla_parse_nested(mt, IMEX_A_MEMBER_MAX, e, NULL) ||
		    !mt[IMEX_A_MEMBER_ENTRY_NAME]) {
			snprintf(a->why, sizeof(a->why), "member entry %u has no name",
				 (unsigned int)req->nmembers + 1);
			return -EBADMSG;
		}
		kernel_get_str(mb->name, sizeof(mb->name), mt[IMEX_A_MEMBER_ENTRY_NAME]);
		/* No address: NODES_FILE gives it (the node checks one that
		 * is given against it). */
		if (mt[IMEX_A_MEMBER_ADDR] && nla_len(mt[IMEX_A_MEMBER_ADDR]) > 1)
			kernel_get_str(mb->addr, sizeof(mb->addr), mt[IMEX_A_MEMBER_ADDR]);
		req->nmembers++;
	}
	return 0;
}

static int req_channels(struct accepted *a, struct nlattr *attr)
{
	struct imexd_request *req = a->req;
	struct nlattr *e;
	int rem;
	size_t n = kernel_nest_count(attr);

	if (n > IMEX_CHANNELS_MAX) {
		snprintf(a->why, sizeof(a->why), "%zu channels in one request: at most %u",
			 n, IMEX_CHANNELS_MAX);
		return -EBADMSG;
	}
	if (!n)
		return 0;
	req->ids = calloc(n, sizeof(*req->ids));
	if (!req->ids)
		return -ENOMEM;
	nla_for_each_nested(e, attr, rem) {
		struct nlattr *ct[IMEX_A_CHANNEL_ENTRY_MAX + 1];

		if (nla_parse_nested(ct, IMEX_A_CHANNEL_ENTRY_MAX, e, NULL) ||
		    !ct[IMEX_A_CHANNEL_ENTRY_ID]) {
			snprintf(a->why, sizeof(a->why), "channel entry %u has no id",
				 req->nids + 1);
			return -EBADMSG;
		}
		req->ids[req->nids++] = nla_get_u32(ct[IMEX_A_CHANNEL_ENTRY_ID]);
	}
	return 0;
}

static int on_accept(struct nl_msg *m, void *arg)
{
	struct accepted *a = arg;
	struct imexd_request *req = a->req;
	struct nlattr *tb[IMEX_A_MAX + 1], *rt[IMEX_A_MAX + 1];
	int r;

	if (a->got || kernel_parse(m, tb) || !tb[IMEX_A_REQ_ID])
		return NL_SKIP;
	a->got = true;
	req->req_id = nla_get_u64(tb[IMEX_A_REQ_ID]);
	req->cmd = tb[IMEX_A_REQ_CMD] ? nla_get_u32(tb[IMEX_A_REQ_CMD]) : 0;
	req->mode = 0600;
	if (!tb[IMEX_A_REQ_ATTRS] ||
	    nla_parse_nested(rt, IMEX_A_MAX, tb[IMEX_A_REQ_ATTRS], NULL)) {
		snprintf(a->why, sizeof(a->why), "the request's attributes do not parse");
		a->err = -EBADMSG;
		return NL_OK;
	}
	if (req->cmd == IMEX_CMD_NODE_JOIN || req->cmd == IMEX_CMD_NODE_LEAVE) {
		/* Group membership: a node, no domain. */
		if (!rt[IMEX_A_MEMBER_NAME]) {
			snprintf(a->why, sizeof(a->why), "the request names no node");
			a->err = -EBADMSG;
			return NL_OK;
		}
	} else if (!rt[IMEX_A_DOMAIN_NAME]) {
		snprintf(a->why, sizeof(a->why), "the request names no domain");
		a->err = -EBADMSG;
		return NL_OK;
	}
	if (rt[IMEX_A_DOMAIN_NAME])
		kernel_get_str(req->name, sizeof(req->name), rt[IMEX_A_DOMAIN_NAME]);
	if (rt[IMEX_A_NODE_ADDR])
		kernel_get_str(req->addr, sizeof(req->addr), rt[IMEX_A_NODE_ADDR]);
	req->has_uuid = kernel_get_uuid(req->uuid, rt[IMEX_A_DOMAIN_UUID]);
	if (rt[IMEX_A_CHANNEL_COUNT])
		req->count = nla_get_u32(rt[IMEX_A_CHANNEL_COUNT]);
	if (rt[IMEX_A_CHANNEL_UID])
		req->uid = nla_get_u32(rt[IMEX_A_CHANNEL_UID]);
	if (rt[IMEX_A_CHANNEL_GID])
		req->gid = nla_get_u32(rt[IMEX_A_CHANNEL_GID]);
	if (rt[IMEX_A_CHANNEL_MODE])
		req->mode = nla_get_u32(rt[IMEX_A_CHANNEL_MODE]) & 0777;
	if (rt[IMEX_A_MEMBER_NAME])
		kernel_get_str(req->member, sizeof(req->member), rt[IMEX_A_MEMBER_NAME]);
	if (rt[IMEX_A_MEMBER_NEW_NAME])
		kernel_get_str(req->with, sizeof(req->with), rt[IMEX_A_MEMBER_NEW_NAME]);
	r = 0;
	if (rt[IMEX_A_MEMBERS])
		r = req_members(a, rt[IMEX_A_MEMBERS]);
	if (!r && rt[IMEX_A_CHANNELS])
		r = req_channels(a, rt[IMEX_A_CHANNELS]);
	if (r == -ENOMEM)
		snprintf(a->why, sizeof(a->why), "imexd ran out of memory taking the request");
	a->err = r;
	return NL_OK;
}

void imexd_kernel_request_release(struct imexd_request *req)
{
	free(req->members);
	free(req->ids);
	req->members = NULL;
	req->ids = NULL;
	req->nmembers = 0;
	req->nids = 0;
}

int imexd_kernel_accept(struct imexd_kernel *k, struct imexd_request *req,
			char *msg, size_t msglen)
{
	struct accepted a = { .req = req };
	int r;

	memset(req, 0, sizeof(*req));
	r = kernel_transact(k, kernel_msg_new(k, IMEX_CMD_REQ_ACCEPT, 0, 0), on_accept, &a,
		     NULL, msg, msglen);
	if (!r && !a.got) {
		kernel_set_msg(msg, msglen, "%s", "the kernel's answer to REQ_ACCEPT carries no request");
		r = -EPROTO;
	}
	if (!r && a.err) {
		snprintf(msg, msglen, "%s", a.why);
		r = a.err == -ENOMEM ? -ENOMEM : -EBADMSG;
	}
	if (r) {
		uint64_t id = req->req_id;

		imexd_kernel_request_release(req);
		memset(req, 0, sizeof(*req));
		req->req_id = id;	/* for completing a bad request */
	}
	return r;
}
