// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * imexctl_cdi_spec(): the channels of a domain from the kernel, for
 * imexctl_cdi_spec_build() (cdi_spec.c).  One dump, read straight into
 * what the spec needs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "internal.h"

/*
 * The dump of a domain's channels, read straight into what the spec needs
 * (not imexctl_channel_list(): its full records copy a domain name per
 * channel and are sorted again), with the major the messages carry.
 */
struct collected {
	const char			*domain;
	struct imexctl_cdi_channel	*v;
	size_t				n, cap;
	uint32_t			major;
	bool				have_major;
};

/*
 * The attributes of one channel that the spec needs, each checked as the
 * policy of imexctl_nl_parse() checks it (a u32 has 4 bytes, a string its
 * NUL).  Walked once with libnl's iterator, not nla_parse(): its table
 * clear and per-attribute policy call were half of a 2048-channel dump's
 * time in user space, for 7 of the message's attributes.
 */
struct chan_attrs {
	const char	*domain;
	uint32_t	id, state, uid, gid, mode, minor, major;
	bool		has_id, has_state, has_minor, has_major;
};

static int chan_attr(struct chan_attrs *c, const struct nlattr *a)
{
	int type = nla_type(a), len;
	const char *data;
	uint32_t v;

	switch (type) {
	case IMEX_A_DOMAIN_NAME:
		data = nla_data(a);
		len = nla_len(a);
		if (len <= 0 || data[len - 1])
			return -EPROTO;
		c->domain = data;
		return 0;
	case IMEX_A_CHANNEL_ID: case IMEX_A_CHANNEL_STATE:
	case IMEX_A_CHANNEL_UID: case IMEX_A_CHANNEL_GID:
	case IMEX_A_CHANNEL_MODE: case IMEX_A_CHANNEL_MINOR:
	case IMEX_A_CHRDEV_MAJOR:
		break;
	default:
		return 0;	/* not in the spec: not even looked at */
	}
	if (nla_len(a) < (int)sizeof(v))
		return -EPROTO;
	v = nla_get_u32((struct nlattr *)a);
	switch (type) {
	case IMEX_A_CHANNEL_ID: c->id = v; c->has_id = true; break;
	case IMEX_A_CHANNEL_STATE: c->state = v; c->has_state = true; break;
	case IMEX_A_CHANNEL_UID: c->uid = v; break;
	case IMEX_A_CHANNEL_GID: c->gid = v; break;
	case IMEX_A_CHANNEL_MODE: c->mode = v; break;
	case IMEX_A_CHANNEL_MINOR: c->minor = v; c->has_minor = true; break;
	default: c->major = v; c->has_major = true; break;
	}
	return 0;
}

static int chan_attrs_parse(struct nl_msg *msg, struct chan_attrs *c)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh;
	struct nlattr *a;
	int rem;

	/* Defaults as imexctl_channel_parse() has them, for older modules. */
	*c = (struct chan_attrs){ .mode = 0600 };
	if (!genlmsg_valid_hdr(nlh, 0))
		return -EPROTO;
	gh = nlmsg_data(nlh);
	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), rem)
		if (chan_attr(c, a))
			return -EPROTO;
	/* An attribute that overruns the message is malformed, not its end. */
	if (rem >= NLA_HDRLEN)
		return -EPROTO;
	return c->has_id ? 0 : -EPROTO;
}

/* Room for one more channel in @c: 0, or -ENOMEM. */
static int collected_room(struct collected *c)
{
	size_t cap = c->cap ? c->cap * 2 : 256;
	void *nv;

	if (c->n < c->cap)
		return 0;
	nv = reallocarray(c->v, cap, sizeof(*c->v));
	if (!nv)
		return -ENOMEM;
	c->v = nv;
	c->cap = cap;
	return 0;
}

static int collect_one(struct nl_msg *msg, void *arg)
{
	struct collected *c = arg;
	struct chan_attrs a;

	if (chan_attrs_parse(msg, &a))
		return -EPROTO;
	/*
	 * The kernel filtered by domain; checked again, as before, as another
	 * domain's channel in the spec would hand it to the wrong workload.
	 * Only granted channels have a node.
	 */
	if (!a.domain || strcmp(a.domain, c->domain) || !a.has_state ||
	    a.state != IMEX_CHANNEL_GRANTED)
		return 0;
	if (collected_room(c) < 0)
		return -ENOMEM;
	/* Modules before per-grant device numbers used the id as the minor. */
	c->v[c->n++] = (struct imexctl_cdi_channel){
		.id = a.id, .uid = a.uid, .gid = a.gid, .mode = a.mode,
		.minor = a.has_minor ? a.minor : a.id,
	};
	if (a.has_major) {
		c->major = a.major;
		c->have_major = true;
	}
	return 0;
}

static void collect_reset(void *arg)
{
	struct collected *c = arg;

	c->n = 0;
	c->have_major = false;
}

static int collect_filter(struct nl_msg *msg, const void *domain)
{
	return nla_put_string(msg, IMEX_A_DOMAIN_NAME, domain) < 0 ? -EMSGSIZE : 0;
}

/* Keep only @ids (each must be there), in place. */
static int keep_ids(struct imexctl *ctx, const char *domain, struct collected *c,
		    const uint32_t *ids, size_t n_ids)
{
	size_t i, j, n = 0;

	for (i = 0; i < c->n; i++) {
		for (j = 0; j < n_ids && ids[j] != c->v[i].id; j++)
			;
		if (j < n_ids)
			c->v[n++] = c->v[i];
	}
	c->n = n;
	for (j = 0; j < n_ids; j++) {
		for (i = 0; i < n && c->v[i].id != ids[j]; i++)
			;
		if (i == n)
			return imexctl_err(ctx, -ENOENT,
					   "channel %u is not granted to domain %s on this node: see 'imexctl channel list --domain %s'",
					   ids[j], domain, domain);
	}
	return 0;
}

/* Fill @c from the kernel: every granted channel of @domain, or exactly @ids. */
static int collect(struct imexctl *ctx, const char *domain, const uint32_t *ids,
		   size_t n_ids, struct collected *c)
{
	struct imexctl_domain *d = NULL;
	char what[96];
	int r;

	/* imexctl_domain_get() says what a valid name is, before any netlink. */
	if (!imexctl_name_valid(domain))
		return imexctl_domain_get(ctx, domain, &d);
	r = imexctl_nl_connect(ctx);
	if (r < 0)
		return r;
	snprintf(what, sizeof(what), "listing the channels of domain %s", domain);
	r = imexctl_nl_dump(ctx, IMEX_CMD_CHANNEL_GET, collect_filter, domain,
			    collect_one, collect_reset, c, what);
	if (r < 0)
		return r;
	if (!c->n) {
		/* No channel names the domain: fail clearly if it does not exist. */
		r = imexctl_domain_get(ctx, domain, &d);
		if (r < 0)
			return r;
		imexctl_domain_free(d);
	}
	if (n_ids) {
		r = keep_ids(ctx, domain, c, ids, n_ids);
		if (r < 0)
			return r;
	}
	if (!c->n)
		return imexctl_err(ctx, -ENOENT,
				   "domain %s has no granted channels on this node: grant some with 'imexctl channel alloc --domain %s'",
				   domain, domain);
	return 0;
}

static int chrdev_major(struct imexctl *ctx, uint32_t *major)
{
	struct imexctl_node node;
	int r;

	if (imexctl_proc_devices_major(IMEXCTL_PROC_DEVICES, IMEX_CHRDEV_NAME, major) == 0)
		return 0;
	r = imexctl_node_get(ctx, &node);
	if (r < 0)
		return r;
	*major = node.major;
	return 0;
}

IMEXCTL_API int imexctl_cdi_spec(struct imexctl *ctx, const char *domain,
				 const uint32_t *ids, size_t n_ids,
				 const struct imexctl_cdi_opts *opts, char **json)
{
	struct collected c = { .domain = domain };
	int r;

	imexctl_err_clear(ctx);
	r = imexctl_cdi_opts_check(ctx, opts);
	if (r < 0)
		return r;
	r = collect(ctx, domain, ids, n_ids, &c);
	/* Modules that do not send the major with each channel. */
	if (r == 0 && !c.have_major)
		r = chrdev_major(ctx, &c.major);
	if (r == 0)
		r = imexctl_cdi_spec_build(ctx, opts, c.major, c.v, c.n, json);
	free(c.v);
	return r;
}
