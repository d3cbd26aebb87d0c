// SPDX-License-Identifier: GPL-2.0
/*
 * consensus: node ids and names, the group id, the peers this server can
 * name and configuration helpers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "consensus_internal.h"

unsigned imexd_cons_voters(unsigned n)
{
	unsigned v = n < IMEXD_CONS_VOTERS_MAX ? n : IMEXD_CONS_VOTERS_MAX;

	/* Odd: an even count tolerates no more failures than one less. */
	return n ? (v - 1) | 1 : 0;
}

int cons_cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

raft_id imexd_cons_name_id(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 */

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 0x100000001b3ULL;
	h &= 0x7fffffffffffffffULL;
	return h ? h : 1;
}

uint64_t imexd_cons_group_id(const void *entry, size_t len)
{
	const uint8_t *p = entry;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 */
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h ? h : 1;
}

uint64_t imexd_cons_group(const struct imexd_cons *c)
{
	return c->group;
}

int imexd_cons_set_group(struct imexd_cons *c, uint64_t group)
{
	if (!group)
		return -EINVAL;
	if (c->group && c->group != group)
		return -EEXIST;
	c->group = group;
	return 0;
}

/* Entry 1 is the group's bootstrap entry: its id when none is known. */
void cons_group_from(struct imexd_cons *c, raft_index index,
		     const struct raft_entry *e)
{
	if (!c->group && index == 1 && e->type == RAFT_CHANGE && e->term == 1)
		c->group = imexd_cons_group_id(e->buf.base, e->buf.len);
}

static int peer_cmp(const void *key, const void *elem)
{
	raft_id id = *(const raft_id *)key;
	raft_id e = ((const struct cons_peer *)elem)->id;

	return id < e ? -1 : id > e;
}

struct cons_peer *cons_peer_find(const struct imexd_cons *c, raft_id id)
{
	/* bsearch() wants a non-NULL array even when it is empty. */
	return c->n_peers ? bsearch(&id, c->peers, c->n_peers,
				    sizeof(*c->peers), peer_cmp) : NULL;
}

raft_id imexd_cons_id(const struct imexd_cons *c, const char *name)
{
	raft_id id = imexd_cons_name_id(name);
	const struct cons_peer *p = cons_peer_find(c, id);

	return p && !strcmp(p->name, name) ? id : 0;
}

const char *imexd_cons_name(const struct imexd_cons *c, raft_id id)
{
	const struct cons_peer *p = cons_peer_find(c, id);

	return p ? p->name : NULL;
}

const char *imexd_cons_addr(const struct imexd_cons *c, raft_id id)
{
	const struct cons_peer *p = cons_peer_find(c, id);

	return p ? p->addr : NULL;
}

uint64_t imexd_cons_heard(const struct imexd_cons *c, raft_id id)
{
	const struct cons_peer *p = cons_peer_find(c, id);

	return p ? p->heard : 0;
}

const struct raft_configuration *imexd_cons_members(const struct imexd_cons *c)
{
	return &c->raft.configuration;
}

raft_index imexd_cons_members_index(const struct imexd_cons *c)
{
	return c->raft.configuration_uncommitted_index ?
	       c->raft.configuration_uncommitted_index :
	       c->raft.configuration_committed_index;
}

static bool conf_has(const struct raft_configuration *conf, raft_id id)
{
	unsigned i;

	for (i = 0; i < conf->n; i++)
		if (conf->servers[i].id == id)
			return true;
	return false;
}

bool cons_is_member(const struct imexd_cons *c, raft_id id)
{
	return conf_has(&c->raft.configuration, id);
}

/* Forget learnt names that are in no configuration and not the roster's,
 * to make room. */
static void peers_prune(struct imexd_cons *c)
{
	size_t i, j = 0;

	for (i = 0; i < c->n_peers; i++) {
		struct cons_peer *p = &c->peers[i];

		if (p->roster || p->id == c->self ||
		    conf_has(&c->raft.configuration, p->id) ||
		    conf_has(&c->raft.configuration_committed, p->id)) {
			c->peers[j++] = *p;
			continue;
		}
		free(p->name);
		free(p->addr);
	}
	c->n_peers = j;
}

/*
 * Add a node (address "name" or "name=addr").  -EEXIST: its id names
 * another node (a hash collision); -ENOSPC: the table is full.
 */
int cons_peer_add(struct imexd_cons *c, raft_id id, const char *address,
		  bool roster)
{
	const char *eq = strchr(address, '=');
	size_t len = eq ? (size_t)(eq - address) : strlen(address);
	struct cons_peer *p = cons_peer_find(c, id);
	size_t i;

	if (p) {
		if (strlen(p->name) != len || strncmp(p->name, address, len))
			return -EEXIST;
		p->roster |= roster;
		if (eq && (!p->addr || strcmp(p->addr, eq + 1))) {
			char *a = strdup(eq + 1);

			if (!a)
				return -ENOMEM;
			free(p->addr);
			p->addr = a;
		}
		return 0;
	}
	if (c->n_peers >= IMEXD_CONS_ROSTER_MAX)
		peers_prune(c);
	if (c->n_peers >= IMEXD_CONS_ROSTER_MAX)
		return -ENOSPC;
	if (GROW(c, peers, n_peers, cap_peers))
		return -ENOMEM;
	for (i = c->n_peers; i > 0 && c->peers[i - 1].id > id; i--)
		;
	memmove(c->peers + i + 1, c->peers + i,
		(c->n_peers - i) * sizeof(*c->peers));
	p = &c->peers[i];
	memset(p, 0, sizeof(*p));
	c->n_peers++;
	p->id = id;
	p->roster = roster;
	p->heard = c->raft.now;
	p->name = strndup(address, len);
	p->addr = eq ? strdup(eq + 1) : NULL;
	return p->name && (p->addr || !eq) ? 0 : -ENOMEM;
}

raft_id imexd_cons_learn(struct imexd_cons *c, const char *name)
{
	raft_id id;

	if (!name || !name[0] || strchr(name, '=') ||
	    strlen(name) >= IMEXD_CONS_NAME_MAX)
		return 0;
	id = imexd_cons_name_id(name);
	return cons_peer_add(c, id, name, false) ? 0 : id;
}

/* Learn the names of a new configuration (the leader's is the authority;
 * an id that names two nodes is ignored here and refused at join). */
int cons_peers_learn(struct imexd_cons *c)
{
	const struct raft_configuration *conf = &c->raft.configuration;
	unsigned i;

	if (c->known_conf[0] == c->raft.configuration_committed_index &&
	    c->known_conf[1] == c->raft.configuration_uncommitted_index &&
	    c->known_conf[0])
		return 0;
	for (i = 0; i < conf->n; i++) {
		int rv = cons_peer_add(c, conf->servers[i].id,
				  conf->servers[i].address, false);

		if (rv == -ENOMEM)
			return rv;
	}
	c->known_conf[0] = c->raft.configuration_committed_index;
	c->known_conf[1] = c->raft.configuration_uncommitted_index;
	return 0;
}

int cons_conf_copy(const struct raft_configuration *src,
		   struct raft_configuration *dst)
{
	unsigned i;

	raft_configuration_init(dst);
	for (i = 0; i < src->n; i++) {
		if (raft_configuration_add(dst, src->servers[i].id,
					   src->servers[i].address,
					   src->servers[i].role)) {
			raft_configuration_close(dst);
			return -ENOMEM;
		}
	}
	return 0;
}

void cons_snap_clear(struct cons_snap *s)
{
	if (s->have) {
		raft_configuration_close(&s->meta.configuration);
		free(s->data);
	}
	memset(s, 0, sizeof(*s));
}
