// SPDX-License-Identifier: GPL-2.0
/*
 * A model of imex.ko's change semantics, as kmod/change.c implements them:
 * PREPARE checks every invariant and reserves names and channels, COMMIT
 * applies (idempotent over the last IMEX_CHANGE_HISTORY ids), ABORT or an
 * expired lease or the manager going away returns the node to its state
 * before PREPARE.  Also the store: definitions by uuid, written atomically.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

void kmodel_init(struct kmodel *k, const char *name, const uint8_t fabric[16],
		 uint32_t partition, uint32_t max_channels)
{
	uint32_t i;

	memset(k, 0, sizeof(*k));
	snprintf(k->node_name, sizeof(k->node_name), "%s", name);
	memcpy(k->fabric, fabric, 16);
	k->partition = partition;
	k->max_channels = max_channels;
	k->chans = calloc(max_channels, sizeof(*k->chans));
	if (!k->chans)
		abort();
	for (i = 0; i < max_channels; i++)
		k->chans[i].dom = -1;
}

static void kchange_free(struct kchange *c)
{
	free(c->chan);
	free(c->members);
	free(c);
}

static void kdom_destroy(struct kmodel *k, int di)
{
	struct kdom *d = &k->doms[di];
	uint32_t i;

	for (i = 0; i < k->max_channels; i++)
		if (k->chans[i].dom == di) {
			k->chans[i].dom = -1;
			k->chans[i].reserved = false;
			k->chans[i].change = NULL;
		}
	free(d->members);
	memset(d, 0, sizeof(*d));
}

void kmodel_reboot(struct kmodel *k)
{
	struct kchange *c, *n;
	size_t i;

	for (c = k->changes; c; c = n) {
		n = c->next;
		kchange_free(c);
	}
	k->changes = NULL;
	for (i = 0; i < k->ndoms; i++)
		if (k->doms[i].live)
			kdom_destroy(k, (int)i);
	k->hlen = k->hpos = 0;
	k->manager = false;
}

void kmodel_free(struct kmodel *k)
{
	kmodel_reboot(k);
	free(k->doms);
	free(k->chans);
}

int kmodel_find(const struct kmodel *k, const char *name)
{
	size_t i;

	for (i = 0; i < k->ndoms; i++)
		if (k->doms[i].live && !strcmp(k->doms[i].name, name))
			return (int)i;
	return -1;
}

static int kmodel_find_uuid(const struct kmodel *k, const uint8_t uuid[16])
{
	size_t i;

	for (i = 0; i < k->ndoms; i++)
		if (k->doms[i].live && !memcmp(k->doms[i].uuid, uuid, 16))
			return (int)i;
	return -1;
}

static bool kmodel_committed(const struct kmodel *k, uint64_t id)
{
	unsigned int i;

	for (i = 0; i < k->hlen; i++)
		if (k->history[i] == id)
			return true;
	return false;
}

static struct kchange *kmodel_change(const struct kmodel *k, uint64_t id)
{
	struct kchange *c;

	for (c = k->changes; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static void kchange_unlink(struct kmodel *k, struct kchange *c)
{
	struct kchange **pp;

	for (pp = &k->changes; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	if (c->dom >= 0 && k->doms[c->dom].live &&
	    k->doms[c->dom].change == c)
		k->doms[c->dom].change = NULL;
	kchange_free(c);
}

static void kchange_rollback(struct kmodel *k, struct kchange *c)
{
	uint32_t i;

	for (i = 0; i < c->nchan; i++) {
		struct kchan *ch = &k->chans[c->chan[i]];

		if (ch->change != c)
			continue;
		if (ch->reserved) {
			ch->dom = -1;
			ch->reserved = false;
		}
		ch->change = NULL;
	}
	if (c->op == IMEX_CHANGE_CREATE && c->dom >= 0) {
		kdom_destroy(k, c->dom);
		c->dom = -1;
	}
	kchange_unlink(k, c);
}

static int kmembers_check(struct kmodel *k, const struct imexd_member *m,
			  uint16_t n)
{
	uint16_t i, j;
	bool self = false;

	if (!n) {
		snprintf(k->msg, sizeof(k->msg), "the member list is empty");
		return EINVAL;
	}
	if (n > IMEX_MEMBERS_MAX)
		return E2BIG;
	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(m[i].name, m[j].name))
				return EINVAL;
		self |= !strcmp(m[i].name, k->node_name);
	}
	if (!self) {
		snprintf(k->msg, sizeof(k->msg),
			 "this node ('%s') is not a member", k->node_name);
		return EADDRNOTAVAIL;
	}
	return 0;
}

static int kchan_check_free(struct kmodel *k, uint32_t id)
{
	if (id >= k->max_channels) {
		snprintf(k->msg, sizeof(k->msg),
			 "channel %u is out of range: this node has max_channels=%u",
			 id, k->max_channels);
		return ERANGE;
	}
	if (k->chans[id].dom < 0)
		return 0;
	snprintf(k->msg, sizeof(k->msg),
		 k->chans[id].reserved ?
		 "channel %u is reserved by a pending change of domain '%s'" :
		 "channel %u belongs to domain '%s'", id,
		 k->doms[k->chans[id].dom].name);
	return EADDRINUSE;
}

static int kchans_reserve(struct kmodel *k, struct kchange *c, int di,
			  const struct imexd_channel *ch, uint32_t n)
{
	uint32_t i, j;
	int err;

	if (n > IMEX_CHANNELS_PER_MSG)
		return E2BIG;
	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++)
			if (ch[i].id == ch[j].id)
				return EINVAL;
		err = kchan_check_free(k, ch[i].id);
		if (err)
			return err;
	}
	c->chan = calloc(n ? n : 1, sizeof(*c->chan));
	if (!c->chan)
		abort();
	for (i = 0; i < n; i++) {
		struct kchan *kc = &k->chans[ch[i].id];

		kc->dom = di;
		kc->reserved = true;
		kc->change = c;
		kc->uid = ch[i].uid;
		kc->gid = ch[i].gid;
		kc->mode = ch[i].mode;
		c->chan[c->nchan++] = ch[i].id;
	}
	return 0;
}

static struct imexd_member *kmembers_dup(const struct imexd_member *m,
					 uint16_t n)
{
	struct imexd_member *d = malloc((n ? n : 1) * sizeof(*d));

	if (!d)
		abort();
	if (n)
		memcpy(d, m, n * sizeof(*d));
	return d;
}

static int kprepare_create(struct kmodel *k, struct kchange *c,
			   const struct imexd_def *def)
{
	struct kdom *d;
	size_t i;
	int err;

	if (kmodel_find(k, def->name) >= 0) {
		snprintf(k->msg, sizeof(k->msg),
			 "domain '%s' already exists on this node", def->name);
		return EEXIST;
	}
	if (kmodel_find_uuid(k, def->uuid) >= 0)
		return EEXIST;
	if (memcmp(def->fabric_uuid, k->fabric, 16) ||
	    def->partition != k->partition)
		return EXDEV;
	err = kmembers_check(k, def->members, def->nmembers);
	if (err)
		return err;
	for (i = 0; i < k->ndoms; i++)
		if (!k->doms[i].live)
			break;
	if (i == k->ndoms) {
		if (k->ndoms >= IMEX_DOMAINS_MAX)
			return ENOSPC;
		if (k->ndoms == k->doms_cap) {
			k->doms_cap = k->doms_cap ? k->doms_cap * 2 : 8;
			k->doms = realloc(k->doms, k->doms_cap * sizeof(*d));
			if (!k->doms)
				abort();
		}
		memset(&k->doms[k->ndoms], 0, sizeof(*d));
		k->ndoms++;
	}
	/* Check the channels before the domain exists, as the kernel does. */
	for (uint32_t j = 0; j < def->nchannels; j++) {
		err = kchan_check_free(k, def->channels[j].id);
		if (err)
			return err;
	}
	d = &k->doms[i];
	memset(d, 0, sizeof(*d));
	d->live = true;
	snprintf(d->name, sizeof(d->name), "%s", def->name);
	memcpy(d->uuid, def->uuid, 16);
	memcpy(d->fabric, def->fabric_uuid, 16);
	d->partition = def->partition;
	d->members = kmembers_dup(def->members, def->nmembers);
	d->nmembers = def->nmembers;
	d->state = IMEX_DOMAIN_PREPARED;
	d->change = c;
	c->dom = (int)i;
	return kchans_reserve(k, c, (int)i, def->channels, def->nchannels);
}

int kmodel_prepare(struct kmodel *k, uint64_t now, const struct imexd_action *a)
{
	struct kchange *c;
	struct kdom *d;
	uint32_t lease = a->lease_ms ? a->lease_ms : IMEX_LEASE_DEFAULT_MS;
	uint32_t i;
	int di, err = 0;

	k->msg[0] = '\0';
	if (!k->manager)
		return EACCES;
	if (kmodel_change(k, a->change_id) ||
	    kmodel_committed(k, a->change_id)) {
		snprintf(k->msg, sizeof(k->msg),
			 "change %llu was already prepared or committed",
			 (unsigned long long)a->change_id);
		return EEXIST;
	}
	if (lease > IMEX_LEASE_MAX_MS)
		return EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	c->id = a->change_id;
	c->op = a->op;
	c->dom = -1;
	c->expires = now + lease;
	c->next = k->changes;
	k->changes = c;
	if (a->op == IMEX_CHANGE_CREATE) {
		err = kprepare_create(k, c, &a->def);
		goto out;
	}
	di = kmodel_find(k, a->def.name);
	if (di < 0) {
		snprintf(k->msg, sizeof(k->msg), "no domain '%s' on this node",
			 a->def.name);
		err = ENOENT;
		goto out;
	}
	d = &k->doms[di];
	if (memcmp(d->uuid, a->def.uuid, 16)) {
		err = ESTALE;
		goto out;
	}
	if (d->change) {
		snprintf(k->msg, sizeof(k->msg),
			 "domain '%s' already has change %llu in progress",
			 d->name, (unsigned long long)d->change->id);
		err = EBUSY;
		goto out;
	}
	d->change = c;
	c->dom = di;
	switch (a->op) {
	case IMEX_CHANGE_ADD_CHANNELS:
		if (!a->nchans) {
			err = EINVAL;
			break;
		}
		err = kchans_reserve(k, c, di, a->chans, a->nchans);
		break;
	case IMEX_CHANGE_REMOVE_CHANNELS:
		if (!a->nchans) {
			err = EINVAL;
			break;
		}
		for (i = 0; i < a->nchans; i++) {
			uint32_t id = a->chans[i].id;

			if (id >= k->max_channels || k->chans[id].dom != di ||
			    k->chans[id].reserved) {
				snprintf(k->msg, sizeof(k->msg),
					 "channel %u is not granted to domain '%s'",
					 id, d->name);
				err = ENOENT;
				break;
			}
		}
		if (err)
			break;
		c->chan = calloc(a->nchans, sizeof(*c->chan));
		if (!c->chan)
			abort();
		for (i = 0; i < a->nchans; i++) {
			k->chans[a->chans[i].id].change = c;
			c->chan[c->nchan++] = a->chans[i].id;
		}
		break;
	case IMEX_CHANGE_SET_MEMBERS:
		err = kmembers_check(k, a->def.members, a->def.nmembers);
		if (!err) {
			c->members = kmembers_dup(a->def.members,
						  a->def.nmembers);
			c->nmembers = a->def.nmembers;
		}
		break;
	case IMEX_CHANGE_DELETE:
		break;
	default:
		err = EINVAL;
	}
out:
	if (err)
		kchange_rollback(k, c);
	return err;
}

static void kremember(struct kmodel *k, uint64_t id)
{
	k->history[k->hpos] = id;
	k->hpos = (k->hpos + 1) % IMEX_CHANGE_HISTORY;
	if (k->hlen < IMEX_CHANGE_HISTORY)
		k->hlen++;
}

int kmodel_commit(struct kmodel *k, uint64_t id)
{
	struct kchange *c = kmodel_change(k, id);
	struct kdom *d;
	uint32_t i;

	k->msg[0] = '\0';
	if (!k->manager)
		return EACCES;
	if (!c) {
		if (kmodel_committed(k, id))
			return 0;
		snprintf(k->msg, sizeof(k->msg),
			 "no prepared change %llu: it was aborted or its lease expired",
			 (unsigned long long)id);
		return ENOENT;
	}
	d = &k->doms[c->dom];
	switch (c->op) {
	case IMEX_CHANGE_CREATE:
	case IMEX_CHANGE_ADD_CHANNELS:
		for (i = 0; i < c->nchan; i++) {
			k->chans[c->chan[i]].reserved = false;
			k->chans[c->chan[i]].change = NULL;
		}
		if (c->op == IMEX_CHANGE_CREATE)
			d->state = IMEX_DOMAIN_READY;
		break;
	case IMEX_CHANGE_REMOVE_CHANNELS:
		for (i = 0; i < c->nchan; i++) {
			struct kchan *ch = &k->chans[c->chan[i]];

			if (ch->change == c) {
				ch->dom = -1;
				ch->change = NULL;
			}
		}
		break;
	case IMEX_CHANGE_DELETE:
		d->change = NULL;
		kdom_destroy(k, c->dom);
		c->dom = -1;
		break;
	case IMEX_CHANGE_SET_MEMBERS:
		free(d->members);
		d->members = c->members;
		d->nmembers = c->nmembers;
		c->members = NULL;
		break;
	}
	kremember(k, id);
	kchange_unlink(k, c);
	return 0;
}

int kmodel_abort(struct kmodel *k, uint64_t id)
{
	struct kchange *c = kmodel_change(k, id);

	k->msg[0] = '\0';
	if (!k->manager)
		return EACCES;
	if (c) {
		kchange_rollback(k, c);
		return 0;
	}
	return kmodel_committed(k, id) ? EALREADY : 0;
}

int kmodel_status(struct kmodel *k, const struct imexd_domain_status *st)
{
	int di = kmodel_find(k, st->name);
	uint16_t i, j;

	if (!k->manager)
		return EACCES;
	if (di < 0)
		return ENOENT;
	if (k->doms[di].state == IMEX_DOMAIN_PREPARED)
		return EAGAIN;
	if (st->state != IMEX_DOMAIN_READY && st->state != IMEX_DOMAIN_DEGRADED)
		return EINVAL;
	for (i = 0; i < st->nmembers; i++) {
		for (j = 0; j < k->doms[di].nmembers; j++)
			if (!strcmp(st->members[i].name,
				    k->doms[di].members[j].name))
				break;
		if (j == k->doms[di].nmembers)
			return ENOENT;
		if (st->members[i].has_view &&
		    st->nmembers != k->doms[di].nmembers)
			return EINVAL;
	}
	k->doms[di].state = st->state;
	return 0;
}

void kmodel_detach(struct kmodel *k)
{
	size_t i;

	while (k->changes)
		kchange_rollback(k, k->changes);
	for (i = 0; i < k->ndoms; i++)
		if (k->doms[i].live && k->doms[i].state != IMEX_DOMAIN_PREPARED)
			k->doms[i].state = IMEX_DOMAIN_DOWN;
	k->manager = false;
}

uint64_t kmodel_expire(struct kmodel *k, uint64_t now)
{
	struct kchange *c, *n;
	uint64_t next = SIM_NO_TIME;

	for (c = k->changes; c; c = n) {
		n = c->next;
		if (now >= c->expires)
			kchange_rollback(k, c);
		else if (c->expires < next)
			next = c->expires;
	}
	return next;
}

bool kmodel_chan_free(const struct kmodel *k, uint32_t id)
{
	return id < k->max_channels && k->chans[id].dom < 0;
}

size_t kmodel_defs(const struct kmodel *k, struct imexd_def **out)
{
	size_t i, n = 0;
	uint32_t c;

	*out = calloc(k->ndoms ? k->ndoms : 1, sizeof(**out));
	if (!*out)
		abort();
	for (i = 0; i < k->ndoms; i++) {
		const struct kdom *d = &k->doms[i];
		struct imexd_def *def = &(*out)[n];

		if (!d->live || d->state == IMEX_DOMAIN_PREPARED)
			continue;
		snprintf(def->name, sizeof(def->name), "%s", d->name);
		memcpy(def->uuid, d->uuid, 16);
		memcpy(def->fabric_uuid, d->fabric, 16);
		def->partition = d->partition;
		def->members = kmembers_dup(d->members, d->nmembers);
		def->nmembers = d->nmembers;
		def->channels = calloc(k->max_channels, sizeof(*def->channels));
		if (!def->channels)
			abort();
		for (c = 0; c < k->max_channels; c++) {
			const struct kchan *ch = &k->chans[c];

			if (ch->dom != (int)i || ch->reserved)
				continue;
			def->channels[def->nchannels].id = c;
			def->channels[def->nchannels].uid = ch->uid;
			def->channels[def->nchannels].gid = ch->gid;
			def->channels[def->nchannels].mode = ch->mode;
			def->nchannels++;
		}
		n++;
	}
	return n;
}

/*
 * The model's own consistency, and leases: NULL when all is well.  @full
 * also walks every channel (costly: the periodic check does it).
 */
const char *kmodel_check(const struct kmodel *k, uint64_t now, bool full)
{
	const struct kchange *c;
	uint32_t i;

	for (c = k->changes; c; c = c->next) {
		if (c->expires < now)
			return "a prepared change outlived its lease";
		if (c->dom < 0 || !k->doms[c->dom].live)
			return "a prepared change without its domain";
	}
	for (i = 0; full && i < k->max_channels; i++) {
		const struct kchan *ch = &k->chans[i];

		if (ch->dom < 0)
			continue;
		if ((size_t)ch->dom >= k->ndoms || !k->doms[ch->dom].live)
			return "a channel owned by a domain that is gone";
		if (ch->reserved && !ch->change)
			return "a reserved channel without a change";
	}
	return NULL;
}

/* ---- the store ---- */

static void def_copy(struct imexd_def *dst, const struct imexd_def *src)
{
	*dst = *src;
	dst->members = malloc((src->nmembers + 1) * sizeof(*dst->members));
	dst->channels = malloc((src->nchannels + 1) * sizeof(*dst->channels));
	if (!dst->members || !dst->channels)
		abort();
	if (src->nmembers)
		memcpy(dst->members, src->members,
		       src->nmembers * sizeof(*dst->members));
	if (src->nchannels)
		memcpy(dst->channels, src->channels,
		       src->nchannels * sizeof(*dst->channels));
}

static void def_release(struct imexd_def *d)
{
	free(d->members);
	free(d->channels);
	d->members = NULL;
	d->channels = NULL;
}

void store_put(struct store_model *s, const struct imexd_def *def)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (!memcmp(s->defs[i].uuid, def->uuid, 16)) {
			def_release(&s->defs[i]);
			def_copy(&s->defs[i], def);
			return;
		}
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->defs = realloc(s->defs, s->cap * sizeof(*s->defs));
		if (!s->defs)
			abort();
	}
	def_copy(&s->defs[s->n++], def);
}

void store_remove(struct store_model *s, const uint8_t uuid[16])
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (memcmp(s->defs[i].uuid, uuid, 16))
			continue;
		def_release(&s->defs[i]);
		memmove(&s->defs[i], &s->defs[i + 1],
			(s->n - i - 1) * sizeof(*s->defs));
		s->n--;
		return;
	}
}

void store_free(struct store_model *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		def_release(&s->defs[i]);
	free(s->defs);
	memset(s, 0, sizeof(*s));
}
