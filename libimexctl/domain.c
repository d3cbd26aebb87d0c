// SPDX-License-Identifier: LGPL-2.1-or-later
/* Domains: reading them (DOMAIN_GET) and the create/delete/evict/replace requests. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "internal.h"

/* Not const: nla_parse_nested() takes a non-const pointer; never written. */
static struct nla_policy member_policy[IMEX_A_MEMBER_MAX + 1] = {
	[IMEX_A_MEMBER_ENTRY_NAME] = { .type = NLA_STRING },
	[IMEX_A_MEMBER_ADDR] = { .type = NLA_STRING },
	[IMEX_A_MEMBER_STATE] = { .type = NLA_U32 },
	[IMEX_A_MEMBER_REASON] = { .type = NLA_STRING },
	[IMEX_A_MEMBER_SINCE] = { .type = NLA_U64 },
};

/*
 * Reasons and since, kept out of the public structs (their size is ABI):
 * a table keyed by the members array a domain from imexctl_domain_get()
 * owns.  A domain built by its caller, or a list entry (no members), is
 * not in it and has none.  Lookups are rare (printing a domain).
 */
struct member_extra {
	char *reason;
	uint64_t since;
};

struct domain_extra {
	struct domain_extra *next;
	const struct imexctl_member *key;
	size_t n;
	char *reason;
	struct member_extra m[];
};

static pthread_mutex_t extra_lock = PTHREAD_MUTEX_INITIALIZER;
static struct domain_extra *extra_table;

static void extra_free(struct domain_extra *x)
{
	size_t i;

	if (!x)
		return;
	for (i = 0; i < x->n; i++)
		free(x->m[i].reason);
	free(x->reason);
	free(x);
}

/* Take @x (keyed by its members array) into the table. */
static void extra_add(struct domain_extra *x)
{
	pthread_mutex_lock(&extra_lock);
	x->next = extra_table;
	extra_table = x;
	pthread_mutex_unlock(&extra_lock);
}

static void extra_drop(const struct imexctl_member *key)
{
	struct domain_extra **pp, *x = NULL;

	if (!key)
		return;
	pthread_mutex_lock(&extra_lock);
	for (pp = &extra_table; *pp; pp = &(*pp)->next) {
		if ((*pp)->key == key) {
			x = *pp;
			*pp = x->next;
			break;
		}
	}
	pthread_mutex_unlock(&extra_lock);
	extra_free(x);
}

/* The caller holds extra_lock. */
static const struct domain_extra *extra_find(const struct imexctl_domain *d)
{
	const struct domain_extra *x;

	if (!d || !d->members)
		return NULL;
	for (x = extra_table; x; x = x->next)
		if (x->key == d->members && x->n == d->n_members)
			return x;
	return NULL;
}

static int parse_member(struct nlattr *entry, struct imexctl_member *m,
			struct member_extra *x)
{
	struct nlattr *tb[IMEX_A_MEMBER_MAX + 1];

	if (nla_parse_nested(tb, IMEX_A_MEMBER_MAX, entry, member_policy) < 0 ||
	    !tb[IMEX_A_MEMBER_ENTRY_NAME])
		return -EPROTO;
	nla_strlcpy(m->name, tb[IMEX_A_MEMBER_ENTRY_NAME], sizeof(m->name));
	if (tb[IMEX_A_MEMBER_ADDR])
		nla_strlcpy(m->addr, tb[IMEX_A_MEMBER_ADDR], sizeof(m->addr));
	m->state = tb[IMEX_A_MEMBER_STATE] ?
		   nla_get_u32(tb[IMEX_A_MEMBER_STATE]) : IMEX_MEMBER_UNKNOWN;
	if (tb[IMEX_A_MEMBER_VIEW] && nla_len(tb[IMEX_A_MEMBER_VIEW]) > 0) {
		m->n_view = (size_t)nla_len(tb[IMEX_A_MEMBER_VIEW]);
		m->view = malloc(m->n_view);
		if (!m->view)
			return -ENOMEM;
		memcpy(m->view, nla_data(tb[IMEX_A_MEMBER_VIEW]), m->n_view);
	}
	if (tb[IMEX_A_MEMBER_REASON] && nla_len(tb[IMEX_A_MEMBER_REASON]) > 0) {
		x->reason = strndup(nla_data(tb[IMEX_A_MEMBER_REASON]),
				    (size_t)nla_len(tb[IMEX_A_MEMBER_REASON]));
		if (!x->reason)
			return -ENOMEM;
	}
	if (tb[IMEX_A_MEMBER_SINCE])
		x->since = nla_get_u64(tb[IMEX_A_MEMBER_SINCE]);
	return 0;
}

static size_t count_nested(struct nlattr *arr)
{
	struct nlattr *entry;
	size_t n = 0;
	int rem;

	nla_for_each_nested(entry, arr, rem)
		n++;
	return n;
}

/* @reason: the domain's IMEX_A_DOMAIN_REASON, or NULL. */
static int parse_members(struct nlattr *arr, struct nlattr *reason,
			 struct imexctl_domain *d)
{
	struct domain_extra *x;
	struct nlattr *entry;
	size_t n = count_nested(arr);
	int rem, r;

	if (n == 0)
		return 0;
	d->members = calloc(n, sizeof(*d->members));
	x = calloc(1, sizeof(*x) + n * sizeof(x->m[0]));
	if (!d->members || !x) {
		free(x);
		return -ENOMEM;
	}
	x->key = d->members;
	nla_for_each_nested(entry, arr, rem) {
		r = parse_member(entry, &d->members[d->n_members], &x->m[d->n_members]);
		d->n_members++;
		x->n = d->n_members;
		if (r < 0) {
			extra_free(x);
			return r;
		}
	}
	if (reason && nla_len(reason) > 0) {
		x->reason = strndup(nla_data(reason), (size_t)nla_len(reason));
		if (!x->reason) {
			extra_free(x);
			return -ENOMEM;
		}
	}
	extra_add(x);
	return 0;
}

static int parse_ids(struct nlattr *a, struct imexctl_domain *d)
{
	size_t len = (size_t)nla_len(a);

	if (len % sizeof(uint32_t))
		return -EPROTO;
	if (!len)
		return 0;
	d->channel_ids = malloc(len);
	if (!d->channel_ids)
		return -ENOMEM;
	/* memcpy: the attribute payload need not be aligned for u32 loads. */
	memcpy(d->channel_ids, nla_data(a), len);
	d->n_channel_ids = len / sizeof(uint32_t);
	return 0;
}

int imexctl_domain_parse(struct nl_msg *msg, struct imexctl_domain *d,
			 bool full)
{
	struct nlattr *tb[IMEX_A_MAX + 1];
	int r;

	memset(d, 0, sizeof(*d));
	d->member_self = UINT32_MAX;
	if (imexctl_nl_parse(msg, tb) < 0 || !tb[IMEX_A_DOMAIN_NAME])
		return -EPROTO;

	nla_strlcpy(d->name, tb[IMEX_A_DOMAIN_NAME], sizeof(d->name));
	if (tb[IMEX_A_DOMAIN_UUID])
		memcpy(d->uuid, nla_data(tb[IMEX_A_DOMAIN_UUID]), IMEX_UUID_LEN);
	if (tb[IMEX_A_FABRIC_UUID] && tb[IMEX_A_FABRIC_PARTITION]) {
		d->has_fabric = true;
		memcpy(d->fabric_uuid, nla_data(tb[IMEX_A_FABRIC_UUID]), IMEX_UUID_LEN);
		d->fabric_partition = nla_get_u32(tb[IMEX_A_FABRIC_PARTITION]);
	}
	if (tb[IMEX_A_DOMAIN_STATE])
		d->state = nla_get_u32(tb[IMEX_A_DOMAIN_STATE]);
	if (tb[IMEX_A_MEMBER_COUNT])
		d->member_count = nla_get_u32(tb[IMEX_A_MEMBER_COUNT]);
	if (tb[IMEX_A_CHANNEL_COUNT])
		d->channel_count = nla_get_u32(tb[IMEX_A_CHANNEL_COUNT]);
	if (tb[IMEX_A_MEMBER_SELF])
		d->member_self = nla_get_u32(tb[IMEX_A_MEMBER_SELF]);
	if (tb[IMEX_A_GENERATION])
		d->generation = nla_get_u32(tb[IMEX_A_GENERATION]);
	if (!full)
		return 0;

	r = 0;
	if (tb[IMEX_A_MEMBERS])
		r = parse_members(tb[IMEX_A_MEMBERS], tb[IMEX_A_DOMAIN_REASON], d);
	if (r == 0 && tb[IMEX_A_CHANNEL_IDS])
		r = parse_ids(tb[IMEX_A_CHANNEL_IDS], d);
	if (r < 0)
		imexctl_domain_clear(d);
	return r;
}

void imexctl_domain_clear(struct imexctl_domain *d)
{
	size_t i;

	extra_drop(d->members);
	for (i = 0; i < d->n_members; i++)
		free(d->members[i].view);
	free(d->members);
	free(d->channel_ids);
	d->members = NULL;
	d->n_members = 0;
	d->channel_ids = NULL;
	d->n_channel_ids = 0;
}

IMEXCTL_API const char *imexctl_domain_reason(const struct imexctl_domain *domain)
{
	const struct domain_extra *x;
	const char *r;

	pthread_mutex_lock(&extra_lock);
	x = extra_find(domain);
	r = x ? x->reason : NULL;
	pthread_mutex_unlock(&extra_lock);
	return r;
}

IMEXCTL_API const char *imexctl_member_reason(const struct imexctl_domain *domain,
					      size_t i)
{
	const struct domain_extra *x;
	const char *r;

	pthread_mutex_lock(&extra_lock);
	x = extra_find(domain);
	r = x && i < x->n ? x->m[i].reason : NULL;
	pthread_mutex_unlock(&extra_lock);
	return r;
}

IMEXCTL_API uint64_t imexctl_member_since(const struct imexctl_domain *domain,
					  size_t i)
{
	const struct domain_extra *x;
	uint64_t since;

	pthread_mutex_lock(&extra_lock);
	x = extra_find(domain);
	since = x && i < x->n ? x->m[i].since : 0;
	pthread_mutex_unlock(&extra_lock);
	return since;
}

IMEXCTL_API void imexctl_domain_free(struct imexctl_domain *domain)
{
	if (!domain)
		return;
	imexctl_domain_clear(domain);
	free(domain);
}

IMEXCTL_API void imexctl_domain_list_free(struct imexctl_domain *domains, size_t n)
{
	size_t i;

	for (i = 0; domains && i < n; i++)
		imexctl_domain_clear(&domains[i]);
	free(domains);
}

struct domain_vec {
	struct imexctl_domain *v;
	size_t n, cap;
};

static int add_domain(struct nl_msg *msg, void *arg)
{
	struct domain_vec *dv = arg;
	struct imexctl_domain *nv;
	int r;

	if (dv->n == dv->cap) {
		size_t cap = dv->cap ? dv->cap * 2 : 16;

		nv = realloc(dv->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		dv->v = nv;
		dv->cap = cap;
	}
	r = imexctl_domain_parse(msg, &dv->v[dv->n], false);
	if (r == 0)
		dv->n++;
	return r;
}

static void reset_domains(void *arg)
{
	struct domain_vec *dv = arg;

	dv->n = 0;
}

IMEXCTL_API int imexctl_domain_list(struct imexctl *ctx,
				    struct imexctl_domain **domains, size_t *n)
{
	struct domain_vec dv = { 0 };
	int r;

	imexctl_err_clear(ctx);
	r = imexctl_nl_connect(ctx);
	if (r < 0)
		return r;
	r = imexctl_nl_dump(ctx, IMEX_CMD_DOMAIN_GET, NULL, NULL, add_domain,
			    reset_domains, &dv, "listing domains");
	if (r < 0) {
		free(dv.v);
		return r;
	}
	*domains = dv.v;
	*n = dv.n;
	return 0;
}

struct domain_one {
	struct imexctl_domain *d;
	bool got;
};

static int got_domain(struct nl_msg *msg, void *arg)
{
	struct domain_one *o = arg;

	if (o->got)
		return 0;
	o->got = true;
	return imexctl_domain_parse(msg, o->d, true);
}

static int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int all_channel_ids(struct imexctl *ctx, struct imexctl_domain *d)
{
	struct imexctl_channel *ch = NULL;
	uint32_t *ids;
	size_t i, n = 0;
	int r;

	r = imexctl_channel_list(ctx, d->name, &ch, &n);
	if (r < 0)
		return r;
	ids = calloc(n ? n : 1, sizeof(*ids));
	if (!ids) {
		free(ch);
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
		ids[i] = ch[i].id;
	free(ch);
	qsort(ids, n, sizeof(*ids), by_value);
	free(d->channel_ids);
	d->channel_ids = ids;
	d->n_channel_ids = n;
	return 0;
}

IMEXCTL_API int imexctl_domain_get(struct imexctl *ctx, const char *name,
				   struct imexctl_domain **domain)
{
	struct domain_one o = { 0 };
	struct nl_msg *msg;
	char what[96];
	int r;

	imexctl_err_clear(ctx);
	if (!imexctl_name_valid(name))
		return imexctl_err(ctx, -EINVAL,
				   "invalid domain name '%s': use letters, digits, '_', '.', '-', starting with a letter or digit, at most %d characters",
				   name ? name : "", IMEX_NAME_MAX - 1);
	r = imexctl_nl_connect(ctx);
	if (r < 0)
		return r;
	o.d = calloc(1, sizeof(*o.d));
	msg = imexctl_nl_msg(ctx, IMEX_CMD_DOMAIN_GET, 0, 0);
	if (!o.d || !msg || nla_put_string(msg, IMEX_A_DOMAIN_NAME, name) < 0) {
		free(o.d);
		nlmsg_free(msg);
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	}
	snprintf(what, sizeof(what), "domain %s", name);
	r = imexctl_nl_exchange(ctx, msg, got_domain, &o, what);
	if (r == 0 && !o.got)
		r = imexctl_err(ctx, -EPROTO, "domain %s: the imex module sent no reply", name);
	if (r == -ENOENT)
		imexctl_err(ctx, r, "domain %s does not exist on this node: see 'imexctl domain list'",
			    name);
	/* The reply carries at most IMEX_CHANNEL_IDS_MAX ids: list the rest. */
	if (r == 0 && o.d->channel_count > o.d->n_channel_ids)
		r = all_channel_ids(ctx, o.d);
	if (r < 0) {
		imexctl_domain_free(o.d);
		return r;
	}
	*domain = o.d;
	return 0;
}

/* ---- requests -------------------------------------------------------- */

static int check_spec(struct imexctl *ctx, const struct imexctl_domain_spec *spec)
{
	size_t i, j;

	if (!imexctl_name_valid(spec->name))
		return imexctl_err(ctx, -EINVAL,
				   "invalid domain name '%s': use letters, digits, '_', '.', '-', starting with a letter or digit, at most %d characters",
				   spec->name ? spec->name : "", IMEX_NAME_MAX - 1);
	if (spec->n_members < 1 || spec->n_members > IMEX_MEMBERS_MAX || !spec->members)
		return imexctl_err(ctx, -EINVAL,
				   "domain %s: give between 1 and %d members", spec->name,
				   IMEX_MEMBERS_MAX);
	for (i = 0; i < spec->n_members; i++) {
		const struct imexctl_member_spec *m = &spec->members[i];

		if (!imexctl_name_valid(m->name))
			return imexctl_err(ctx, -EINVAL, "domain %s: invalid member name '%s'",
					   spec->name, m->name ? m->name : "");
		if (m->addr && strlen(m->addr) >= IMEX_ADDR_MAX)
			return imexctl_err(ctx, -EINVAL,
					   "domain %s: member %s's address is not shorter than %d characters",
					   spec->name, m->name, IMEX_ADDR_MAX);
		for (j = 0; j < i; j++)
			if (!strcmp(spec->members[j].name, m->name))
				return imexctl_err(ctx, -EINVAL,
						   "domain %s: member %s is listed twice",
						   spec->name, m->name);
	}
	if (spec->n_channel_ids > IMEX_CHANNELS_PER_MSG ||
	    spec->channel_count > IMEX_CHANNELS_PER_MSG)
		return imexctl_err(ctx, -EINVAL,
				   "domain %s: at most %d channels per request", spec->name,
				   IMEX_CHANNELS_PER_MSG);
	for (i = 0; i < spec->n_channel_ids; i++)
		if (spec->channel_ids[i] >= IMEX_CHANNELS_MAX)
			return imexctl_err(ctx, -EINVAL, "domain %s: channel %u is out of range",
					   spec->name, spec->channel_ids[i]);
	if (spec->set_mode && spec->mode > 0777)
		return imexctl_err(ctx, -EINVAL, "domain %s: mode %o is more than permission bits (0777)",
				   spec->name, spec->mode);
	return 0;
}

static int fill_create(struct nl_msg *msg, const void *arg)
{
	const struct imexctl_domain_spec *spec = arg;
	struct nlattr *arr, *entry;
	size_t i;

	if (nla_put_string(msg, IMEX_A_DOMAIN_NAME, spec->name) < 0)
		return -EMSGSIZE;
	if (spec->uuid && nla_put(msg, IMEX_A_DOMAIN_UUID, IMEX_UUID_LEN, spec->uuid) < 0)
		return -EMSGSIZE;
	arr = nla_nest_start(msg, IMEX_A_MEMBERS);
	if (!arr)
		return -EMSGSIZE;
	for (i = 0; i < spec->n_members; i++) {
		entry = nla_nest_start(msg, (int)(i + 1));
		if (!entry ||
		    nla_put_string(msg, IMEX_A_MEMBER_ENTRY_NAME, spec->members[i].name) < 0 ||
		    (spec->members[i].addr && spec->members[i].addr[0] &&
		     nla_put_string(msg, IMEX_A_MEMBER_ADDR, spec->members[i].addr) < 0))
			return -EMSGSIZE;
		nla_nest_end(msg, entry);
	}
	nla_nest_end(msg, arr);
	if (spec->n_channel_ids) {
		if (imexctl_nl_put_array_u32(msg, IMEX_A_CHANNELS, spec->channel_ids,
					     spec->n_channel_ids) < 0)
			return -EMSGSIZE;
	} else if (spec->channel_count &&
		   nla_put_u32(msg, IMEX_A_CHANNEL_COUNT, spec->channel_count) < 0) {
		return -EMSGSIZE;
	}
	if (spec->set_owner &&
	    (nla_put_u32(msg, IMEX_A_CHANNEL_UID, spec->uid) < 0 ||
	     nla_put_u32(msg, IMEX_A_CHANNEL_GID, spec->gid) < 0))
		return -EMSGSIZE;
	if (spec->set_mode && nla_put_u32(msg, IMEX_A_CHANNEL_MODE, spec->mode) < 0)
		return -EMSGSIZE;
	return 0;
}

IMEXCTL_API int imexctl_domain_create(struct imexctl *ctx,
				      const struct imexctl_domain_spec *spec,
				      int timeout_ms)
{
	char what[96];
	size_t size;
	int r;

	imexctl_err_clear(ctx);
	if (!spec)
		return imexctl_err(ctx, -EINVAL, "creating a domain: no specification given");
	r = check_spec(ctx, spec);
	if (r < 0)
		return r;
	snprintf(what, sizeof(what), "creating domain %s", spec->name);
	size = 4096 + spec->n_members * (IMEX_NAME_MAX + IMEX_ADDR_MAX + 16) +
	       spec->n_channel_ids * 16;
	return imexctl_request(ctx, IMEX_CMD_DOMAIN_CREATE, fill_create, spec,
			       size, what, timeout_ms);
}

static int fill_name(struct nl_msg *msg, const void *arg)
{
	return nla_put_string(msg, IMEX_A_DOMAIN_NAME, arg) < 0 ? -EMSGSIZE : 0;
}

IMEXCTL_API int imexctl_domain_delete(struct imexctl *ctx, const char *name,
				      int timeout_ms)
{
	char what[96];

	imexctl_err_clear(ctx);
	if (!imexctl_name_valid(name))
		return imexctl_err(ctx, -EINVAL, "invalid domain name '%s'", name ? name : "");
	snprintf(what, sizeof(what), "deleting domain %s", name);
	return imexctl_request(ctx, IMEX_CMD_DOMAIN_DELETE, fill_name, name, 0,
			       what, timeout_ms);
}

struct evict {
	const char *domain;
	const char *member;
};

static int fill_evict(struct nl_msg *msg, const void *arg)
{
	const struct evict *e = arg;

	if (nla_put_string(msg, IMEX_A_DOMAIN_NAME, e->domain) < 0 ||
	    nla_put_string(msg, IMEX_A_MEMBER_NAME, e->member) < 0)
		return -EMSGSIZE;
	return 0;
}

IMEXCTL_API int imexctl_member_evict(struct imexctl *ctx, const char *domain,
				     const char *member, int timeout_ms)
{
	struct evict e = { domain, member };
	char what[160];

	imexctl_err_clear(ctx);
	if (!imexctl_name_valid(domain))
		return imexctl_err(ctx, -EINVAL, "invalid domain name '%s'", domain ? domain : "");
	if (!imexctl_name_valid(member))
		return imexctl_err(ctx, -EINVAL, "invalid member name '%s'", member ? member : "");
	snprintf(what, sizeof(what), "evicting member %s from domain %s", member, domain);
	return imexctl_request(ctx, IMEX_CMD_MEMBER_EVICT, fill_evict, &e, 0, what,
			       timeout_ms);
}

struct replace {
	const char *domain;
	const char *member;
	const char *with;
};

static int fill_replace(struct nl_msg *msg, const void *arg)
{
	const struct replace *e = arg;

	if (nla_put_string(msg, IMEX_A_DOMAIN_NAME, e->domain) < 0 ||
	    nla_put_string(msg, IMEX_A_MEMBER_NAME, e->member) < 0 ||
	    nla_put_string(msg, IMEX_A_MEMBER_NEW_NAME, e->with) < 0)
		return -EMSGSIZE;
	return 0;
}

IMEXCTL_API int imexctl_member_replace(struct imexctl *ctx, const char *domain,
				       const char *member, const char *with,
				       int timeout_ms)
{
	struct replace e = { domain, member, with };
	int64_t start = imexctl_now_ms(), left;
	char what[224], msg[IMEXCTL_ERRMSG_MAX];
	int r;

	imexctl_err_clear(ctx);
	if (!imexctl_name_valid(domain))
		return imexctl_err(ctx, -EINVAL, "invalid domain name '%s'", domain ? domain : "");
	if (!imexctl_name_valid(member))
		return imexctl_err(ctx, -EINVAL, "invalid member name '%s'", member ? member : "");
	if (!imexctl_name_valid(with))
		return imexctl_err(ctx, -EINVAL, "invalid new member name '%s'", with ? with : "");
	if (timeout_ms < 0)
		timeout_ms = IMEXCTL_REQUEST_TIMEOUT_MS;
	snprintf(what, sizeof(what), "replacing member %s with %s in domain %s",
		 member, with, domain);
	r = imexctl_request(ctx, IMEX_CMD_MEMBER_REPLACE, fill_replace, &e, 0,
			    what, timeout_ms);
	if (r < 0)
		return r;
	left = timeout_ms - (imexctl_now_ms() - start);
	r = imexctl_wait_ready(ctx, domain, IMEXCTL_DOMAIN_READY, with,
			       left > 0 ? (int)left : 0, NULL);
	if (r < 0) {
		snprintf(msg, sizeof(msg), "%s", imexctl_errmsg(ctx));
		return imexctl_err(ctx, r, "replaced member %s with %s in domain %s, but %s",
				   member, with, domain, msg);
	}
	return 0;
}
