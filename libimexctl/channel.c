// SPDX-License-Identifier: LGPL-2.1-or-later
/* Channels: reading them, changing owner/mode, and the alloc/free requests. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "internal.h"

int imexctl_channel_parse(struct nl_msg *msg, struct imexctl_channel *c)
{
	struct nlattr *tb[IMEX_A_MAX + 1];

	memset(c, 0, sizeof(*c));
	if (imexctl_nl_parse(msg, tb) < 0 || !tb[IMEX_A_CHANNEL_ID])
		return -EPROTO;
	c->id = nla_get_u32(tb[IMEX_A_CHANNEL_ID]);
	if (tb[IMEX_A_DOMAIN_NAME])
		nla_strlcpy(c->domain, tb[IMEX_A_DOMAIN_NAME], sizeof(c->domain));
	if (tb[IMEX_A_DOMAIN_UUID])
		memcpy(c->domain_uuid, nla_data(tb[IMEX_A_DOMAIN_UUID]), IMEX_UUID_LEN);
	if (tb[IMEX_A_CHANNEL_STATE])
		c->state = nla_get_u32(tb[IMEX_A_CHANNEL_STATE]);
	if (tb[IMEX_A_CHANNEL_UID])
		c->uid = nla_get_u32(tb[IMEX_A_CHANNEL_UID]);
	if (tb[IMEX_A_CHANNEL_GID])
		c->gid = nla_get_u32(tb[IMEX_A_CHANNEL_GID]);
	c->mode = tb[IMEX_A_CHANNEL_MODE] ? nla_get_u32(tb[IMEX_A_CHANNEL_MODE]) : 0600;
	if (tb[IMEX_A_CHANNEL_OPEN_COUNT])
		c->open_count = nla_get_u32(tb[IMEX_A_CHANNEL_OPEN_COUNT]);
	/* Modules before per-grant device numbers used the id as the minor. */
	c->minor = tb[IMEX_A_CHANNEL_MINOR] ? nla_get_u32(tb[IMEX_A_CHANNEL_MINOR]) : c->id;
	return 0;
}

struct channel_vec {
	struct imexctl_channel *v;
	size_t n, cap;
};

static int add_channel(struct nl_msg *msg, void *arg)
{
	struct channel_vec *cv = arg;
	int r;

	if (cv->n == cv->cap) {
		size_t cap = cv->cap ? cv->cap * 2 : 64;
		struct imexctl_channel *nv = realloc(cv->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		cv->v = nv;
		cv->cap = cap;
	}
	r = imexctl_channel_parse(msg, &cv->v[cv->n]);
	if (r == 0)
		cv->n++;
	return r;
}

static void reset_channels(void *arg)
{
	((struct channel_vec *)arg)->n = 0;
}

static int fill_filter(struct nl_msg *msg, const void *arg)
{
	if (arg && nla_put_string(msg, IMEX_A_DOMAIN_NAME, arg) < 0)
		return -EMSGSIZE;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct imexctl_channel *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

IMEXCTL_API int imexctl_channel_list(struct imexctl *ctx, const char *domain,
				     struct imexctl_channel **channels, size_t *n)
{
	struct channel_vec cv = { 0 };
	char what[96];
	int r;

	imexctl_err_clear(ctx);
	if (domain && !imexctl_name_valid(domain))
		return imexctl_err(ctx, -EINVAL, "invalid domain name '%s'", domain);
	r = imexctl_nl_connect(ctx);
	if (r < 0)
		return r;
	if (domain)
		snprintf(what, sizeof(what), "listing the channels of domain %s", domain);
	else
		snprintf(what, sizeof(what), "listing channels");
	r = imexctl_nl_dump(ctx, IMEX_CMD_CHANNEL_GET, fill_filter, domain,
			    add_channel, reset_channels, &cv, what);
	if (r < 0) {
		free(cv.v);
		return r;
	}
	if (cv.n)
		qsort(cv.v, cv.n, sizeof(*cv.v), by_id);
	*channels = cv.v;
	*n = cv.n;
	return 0;
}

struct channel_one {
	struct imexctl_channel *c;
	bool got;
};

static int got_channel(struct nl_msg *msg, void *arg)
{
	struct channel_one *o = arg;

	if (o->got)
		return 0;
	o->got = true;
	return imexctl_channel_parse(msg, o->c);
}

IMEXCTL_API int imexctl_channel_get(struct imexctl *ctx, uint32_t id,
				    struct imexctl_channel *channel)
{
	struct channel_one o = { .c = channel };
	struct nl_msg *msg;
	char what[64];
	int r;

	imexctl_err_clear(ctx);
	r = imexctl_nl_connect(ctx);
	if (r < 0)
		return r;
	msg = imexctl_nl_msg(ctx, IMEX_CMD_CHANNEL_GET, 0, 0);
	if (!msg || nla_put_u32(msg, IMEX_A_CHANNEL_ID, id) < 0) {
		nlmsg_free(msg);
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	}
	snprintf(what, sizeof(what), "channel %u", id);
	r = imexctl_nl_exchange(ctx, msg, got_channel, &o, what);
	if (r == 0 && !o.got)
		r = imexctl_err(ctx, -EPROTO, "channel %u: the imex module sent no reply", id);
	if (r == -ENOENT)
		imexctl_err(ctx, r, "channel %u is not granted to any domain on this node: see 'imexctl channel list'",
			    id);
	return r;
}

IMEXCTL_API int imexctl_channel_set(struct imexctl *ctx, const char *domain,
				    uint32_t id,
				    const struct imexctl_channel_change *change)
{
	struct imexctl_channel cur;
	struct nl_msg *msg;
	char what[128];
	int r;

	imexctl_err_clear(ctx);
	if (!change || (!change->set_owner && !change->set_mode))
		return imexctl_err(ctx, -EINVAL, "channel %u: nothing to change: give an owner or a mode", id);
	if (change->set_mode && change->mode > 0777)
		return imexctl_err(ctx, -EINVAL, "channel %u: mode %o is more than permission bits (0777)",
				   id, change->mode);
	if (domain) {
		if (!imexctl_name_valid(domain))
			return imexctl_err(ctx, -EINVAL, "invalid domain name '%s'", domain);
		r = imexctl_channel_get(ctx, id, &cur);
		if (r == -ENOENT || (r == 0 && strcmp(cur.domain, domain)))
			return imexctl_err(ctx, -ENOENT,
					   "channel %u is not granted to domain %s: see 'imexctl channel list --domain %s'",
					   id, domain, domain);
		if (r < 0)
			return r;
	}
	r = imexctl_nl_connect(ctx);
	if (r < 0)
		return r;
	msg = imexctl_nl_msg(ctx, IMEX_CMD_CHANNEL_SET, 0, 0);
	if (!msg || nla_put_u32(msg, IMEX_A_CHANNEL_ID, id) < 0 ||
	    (change->set_owner &&
	     (nla_put_u32(msg, IMEX_A_CHANNEL_UID, change->uid) < 0 ||
	      nla_put_u32(msg, IMEX_A_CHANNEL_GID, change->gid) < 0)) ||
	    (change->set_mode && nla_put_u32(msg, IMEX_A_CHANNEL_MODE, change->mode) < 0)) {
		nlmsg_free(msg);
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	}
	snprintf(what, sizeof(what), "changing channel %u", id);
	r = imexctl_nl_exchange(ctx, msg, NULL, NULL, what);
	if (r == -ENOENT)
		imexctl_err(ctx, r, "channel %u is not granted to any domain on this node: see 'imexctl channel list'",
			    id);
	return r;
}

/* ---- requests -------------------------------------------------------- */

struct channels_req {
	const char *domain;
	uint32_t count;
	const uint32_t *ids;
	size_t n_ids;
};

static int fill_channels(struct nl_msg *msg, const void *arg)
{
	const struct channels_req *q = arg;

	if (nla_put_string(msg, IMEX_A_DOMAIN_NAME, q->domain) < 0)
		return -EMSGSIZE;
	if (q->n_ids)
		return imexctl_nl_put_array_u32(msg, IMEX_A_CHANNELS, q->ids, q->n_ids);
	return nla_put_u32(msg, IMEX_A_CHANNEL_COUNT, q->count) < 0 ? -EMSGSIZE : 0;
}

static int check_ids(struct imexctl *ctx, const char *domain,
		     const uint32_t *ids, size_t n)
{
	size_t i;

	if (!imexctl_name_valid(domain))
		return imexctl_err(ctx, -EINVAL, "invalid domain name '%s'", domain ? domain : "");
	if (n > IMEX_CHANNELS_PER_MSG)
		return imexctl_err(ctx, -EINVAL, "domain %s: at most %d channels per request",
				   domain, IMEX_CHANNELS_PER_MSG);
	for (i = 0; i < n; i++)
		if (ids[i] >= IMEX_CHANNELS_MAX)
			return imexctl_err(ctx, -EINVAL, "domain %s: channel %u is out of range",
					   domain, ids[i]);
	return 0;
}

IMEXCTL_API int imexctl_channel_alloc(struct imexctl *ctx, const char *domain,
				      uint32_t count, const uint32_t *ids,
				      size_t n_ids, int timeout_ms,
				      uint32_t **allocated, size_t *n_allocated)
{
	struct channels_req q = { domain, count, ids, n_ids };
	char what[96];
	size_t n = 0;
	int r;

	imexctl_err_clear(ctx);
	r = check_ids(ctx, domain, ids, n_ids);
	if (r < 0)
		return r;
	if (!n_ids && (count < 1 || count > IMEX_CHANNELS_PER_MSG))
		return imexctl_err(ctx, -EINVAL, "domain %s: ask for 1 to %d channels",
				   domain, IMEX_CHANNELS_PER_MSG);
	snprintf(what, sizeof(what), "granting channels to domain %s", domain);
	/* The ids come from our own REQ_DONE: a concurrent change to the
	 * domain cannot add its channels to them. */
	if (allocated) {
		r = imexctl_request_ids(ctx, IMEX_CMD_CHANNEL_ALLOC, fill_channels,
					&q, 4096 + n_ids * 16, what, timeout_ms,
					allocated, &n);
		if (n_allocated)
			*n_allocated = n;
		return r;
	}
	return imexctl_request(ctx, IMEX_CMD_CHANNEL_ALLOC, fill_channels, &q,
			       4096 + n_ids * 16, what, timeout_ms);
}

IMEXCTL_API int imexctl_channel_free(struct imexctl *ctx, const char *domain,
				     const uint32_t *ids, size_t n_ids,
				     int timeout_ms)
{
	struct channels_req q = { domain, 0, ids, n_ids };
	char what[96];
	int r;

	imexctl_err_clear(ctx);
	r = check_ids(ctx, domain, ids, n_ids);
	if (r < 0)
		return r;
	if (!n_ids || !ids)
		return imexctl_err(ctx, -EINVAL, "domain %s: name the channels to revoke", domain);
	snprintf(what, sizeof(what), "revoking channels from domain %s", domain);
	return imexctl_request(ctx, IMEX_CMD_CHANNEL_FREE, fill_channels, &q,
			       4096 + n_ids * 16, what, timeout_ms);
}
