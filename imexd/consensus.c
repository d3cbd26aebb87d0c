// SPDX-License-Identifier: GPL-2.0
/*
 * consensus: one raft server driven through raft_step().  See consensus.h
 * for the contract.  The server keeps its own copy of the log because
 * raft_step() hands entries out once (to be persisted) and later only
 * names indexes: outgoing AppendEntries, committed entries to apply and
 * snapshots are filled from this copy, as libraft's legacy layer does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "consensus.h"

struct cons_entry {
	raft_term term;
	enum raft_entry_type type;
	void *buf;
	size_t len;
};

/* An entries write handed out and not yet reported durable. */
struct cons_write {
	raft_index first;
	unsigned n;
	raft_term *terms;
	bool bootstrap; /* raft already counts it stored */
};

struct cons_tag {
	uint64_t tag;
	raft_index index;
	raft_term term;
};

struct cons_scratch {
	void *p;
	bool conf; /* p is a struct raft_configuration to close */
};

/* A node this server can name: the roster's and every configuration's. */
struct cons_peer {
	raft_id id;
	char *name;
	char *addr;     /* from a join entry ("name=addr"); NULL: none */
	uint64_t heard; /* last message from it */
	bool roster;
};

struct cons_snap {
	bool have;
	struct raft_snapshot_metadata meta; /* configuration owned */
	void *data;
	size_t len;
};

struct imexd_cons {
	struct raft raft;
	bool started;
	bool self_in_roster;
	uint64_t group; /* group id, 0: none yet */
	char **names; /* the roster (n), sorted: the bootstrap entry's order */
	raft_id self;
	struct cons_peer *peers; /* sorted by id; bounded by ROSTER_MAX */
	size_t n_peers, cap_peers;
	raft_index known_conf[2]; /* configuration indexes peers were learnt at */
	unsigned n, et, k, snap_threshold, snap_trailing;

	struct cons_entry *log;
	size_t log_n, log_cap;
	raft_index log_start; /* index of log[0] */

	struct cons_snap snap;
	struct cons_snap install; /* received, being persisted */
	bool installing;
	bool taking;
	struct raft_snapshot_metadata take_meta;

	raft_index applied;

	struct cons_write *writes;
	size_t n_writes, cap_writes;

	struct cons_tag *tags;
	size_t n_tags, cap_tags;

	struct imexd_cons_action *actions;
	size_t n_actions, cap_actions, next_action;
	struct cons_scratch *scratch;
	size_t n_scratch, cap_scratch;

	struct raft_event *events; /* follow-up events (configurations) */
	size_t n_events, cap_events;

	/* Upkeep (leader). */
	raft_id promoting;
	uint64_t promote_backoff;
	uint64_t self_leaving_until;	/* a leave of this leader: no demotion */

	/* Last reported status. */
	int rep_state;
	raft_term rep_term;
	raft_id rep_leader;

	bool refused; /* the last raft_step() failed: inputs still ours */
	raft_index pushed; /* commit index last sent to followers at once */
};

unsigned imexd_cons_voters(unsigned n)
{
	unsigned v = n < IMEXD_CONS_VOTERS_MAX ? n : IMEXD_CONS_VOTERS_MAX;

	/* Odd: an even count tolerates no more failures than one less. */
	return n ? (v - 1) | 1 : 0;
}

/* Grow *arr (element size sz) to hold one more than *n. */
static int grow(void **arr, size_t *cap, size_t n, size_t sz)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	p = realloc(*arr, ncap * sz);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

#define GROW(c, arr, n, cap) \
	grow((void **)&(c)->arr, &(c)->cap, (c)->n, sizeof(*(c)->arr))

static int cmp_name(const void *a, const void *b)
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
static void group_from(struct imexd_cons *c, raft_index index,
		       const struct raft_entry *e)
{
	if (!c->group && index == 1 && e->type == RAFT_CHANGE && e->term == 1)
		c->group = imexd_cons_group_id(e->buf.base, e->buf.len);
}

static struct cons_peer *peer_find(const struct imexd_cons *c, raft_id id)
{
	size_t lo = 0, hi = c->n_peers;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->peers[mid].id == id)
			return &c->peers[mid];
		if (c->peers[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

raft_id imexd_cons_id(const struct imexd_cons *c, const char *name)
{
	raft_id id = imexd_cons_name_id(name);
	const struct cons_peer *p = peer_find(c, id);

	return p && !strcmp(p->name, name) ? id : 0;
}

const char *imexd_cons_name(const struct imexd_cons *c, raft_id id)
{
	const struct cons_peer *p = peer_find(c, id);

	return p ? p->name : NULL;
}

const char *imexd_cons_addr(const struct imexd_cons *c, raft_id id)
{
	const struct cons_peer *p = peer_find(c, id);

	return p ? p->addr : NULL;
}

uint64_t imexd_cons_heard(const struct imexd_cons *c, raft_id id)
{
	const struct cons_peer *p = peer_find(c, id);

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

static bool is_member(const struct imexd_cons *c, raft_id id)
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
static int peer_add(struct imexd_cons *c, raft_id id, const char *address,
		    bool roster)
{
	const char *eq = strchr(address, '=');
	size_t len = eq ? (size_t)(eq - address) : strlen(address);
	struct cons_peer *p = peer_find(c, id);
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
	return peer_add(c, id, name, false) ? 0 : id;
}

/* Learn the names of a new configuration (the leader's is the authority;
 * an id that names two nodes is ignored here and refused at join). */
static int peers_learn(struct imexd_cons *c)
{
	const struct raft_configuration *conf = &c->raft.configuration;
	unsigned i;

	if (c->known_conf[0] == c->raft.configuration_committed_index &&
	    c->known_conf[1] == c->raft.configuration_uncommitted_index &&
	    c->known_conf[0])
		return 0;
	for (i = 0; i < conf->n; i++) {
		int rv = peer_add(c, conf->servers[i].id,
				  conf->servers[i].address, false);

		if (rv == -ENOMEM)
			return rv;
	}
	c->known_conf[0] = c->raft.configuration_committed_index;
	c->known_conf[1] = c->raft.configuration_uncommitted_index;
	return 0;
}

static int conf_copy(const struct raft_configuration *src,
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

static void snap_clear(struct cons_snap *s)
{
	if (s->have) {
		raft_configuration_close(&s->meta.configuration);
		free(s->data);
	}
	memset(s, 0, sizeof(*s));
}

/* ---- scratch and actions ---- */

static void scratch_free(struct imexd_cons *c)
{
	size_t i;

	for (i = 0; i < c->n_scratch; i++) {
		if (c->scratch[i].conf)
			raft_configuration_close(c->scratch[i].p);
		free(c->scratch[i].p);
	}
	c->n_scratch = 0;
}

/* Keep p until the next input call; frees p on failure. */
static int scratch_add(struct imexd_cons *c, void *p, bool conf)
{
	if (GROW(c, scratch, n_scratch, cap_scratch)) {
		if (conf)
			raft_configuration_close(p);
		free(p);
		return -ENOMEM;
	}
	c->scratch[c->n_scratch].p = p;
	c->scratch[c->n_scratch++].conf = conf;
	return 0;
}

static void *scratch_dup(struct imexd_cons *c, const void *p, size_t len)
{
	void *d = malloc(len ? len : 1);

	if (!d)
		return NULL;
	if (len)
		memcpy(d, p, len);
	return scratch_add(c, d, false) ? NULL : d;
}

static struct imexd_cons_action *push(struct imexd_cons *c,
				      enum imexd_cons_action_type type)
{
	struct imexd_cons_action *a;

	if (GROW(c, actions, n_actions, cap_actions))
		return NULL;
	a = &c->actions[c->n_actions++];
	memset(a, 0, sizeof(*a));
	a->type = type;
	return a;
}

bool imexd_cons_next(struct imexd_cons *c, struct imexd_cons_action *a)
{
	if (c->next_action >= c->n_actions)
		return false;
	*a = c->actions[c->next_action++];
	return true;
}

/* Every input call starts here: the previous call's actions must have
 * been drained, their memory goes now. */
static int begin(struct imexd_cons *c)
{
	if (c->next_action < c->n_actions || c->taking)
		return -EBUSY;
	c->n_actions = 0;
	c->next_action = 0;
	scratch_free(c);
	return 0;
}

/* ---- log copy ---- */

static raft_index log_last(const struct imexd_cons *c)
{
	return c->log_start + c->log_n - 1;
}

static const struct cons_entry *log_get(const struct imexd_cons *c,
					raft_index i)
{
	if (i < c->log_start || i > log_last(c))
		return NULL;
	return &c->log[i - c->log_start];
}

static raft_term log_term(const struct imexd_cons *c, raft_index i)
{
	const struct cons_entry *e = log_get(c, i);

	if (e)
		return e->term;
	if (c->snap.have && c->snap.meta.index == i)
		return c->snap.meta.term;
	return 0;
}

static void log_truncate(struct imexd_cons *c, raft_index from)
{
	while (c->log_n > 0 && log_last(c) >= from)
		free(c->log[--c->log_n].buf);
}

/* Drop entries up to and including upto. */
static void log_compact(struct imexd_cons *c, raft_index upto)
{
	size_t drop, i;

	if (upto < c->log_start)
		return;
	drop = upto - c->log_start + 1;
	if (drop > c->log_n)
		drop = c->log_n;
	for (i = 0; i < drop; i++)
		free(c->log[i].buf);
	memmove(c->log, c->log + drop, (c->log_n - drop) * sizeof(*c->log));
	c->log_n -= drop;
	c->log_start += drop;
}

static int log_append(struct imexd_cons *c, const struct raft_entry *e)
{
	struct cons_entry *d;

	if (GROW(c, log, log_n, log_cap))
		return -ENOMEM;
	d = &c->log[c->log_n];
	d->buf = malloc(e->buf.len ? e->buf.len : 1);
	if (!d->buf)
		return -ENOMEM;
	if (e->buf.len)
		memcpy(d->buf, e->buf.base, e->buf.len);
	d->len = e->buf.len;
	d->term = e->term;
	d->type = e->type;
	c->log_n++;
	return 0;
}

/* n entries from index as raft_entry structs in scratch memory. */
static struct raft_entry *entries_out(struct imexd_cons *c, raft_index index,
				      unsigned n)
{
	struct raft_entry *out;
	unsigned i;

	out = calloc(n ? n : 1, sizeof(*out));
	if (!out || scratch_add(c, out, false))
		return NULL;
	for (i = 0; i < n; i++) {
		const struct cons_entry *e = log_get(c, index + i);

		if (!e)
			return NULL;
		out[i].term = e->term;
		out[i].type = e->type;
		out[i].buf.len = e->len;
		out[i].buf.base = scratch_dup(c, e->buf, e->len);
		if (!out[i].buf.base)
			return NULL;
	}
	return out;
}

/* ---- raft_step and its update ---- */

static int map_err(int rv)
{
	switch (rv) {
	case 0:
		return 0;
	case RAFT_NOMEM:
		return -ENOMEM;
	case RAFT_NOTLEADER:
	case RAFT_LEADERSHIPLOST:
		return -IMEXD_CONS_ENOTLEADER;
	case RAFT_CANTCHANGE:
	case RAFT_BUSY:
		return -EBUSY;
	case RAFT_NOSPACE:
		return -ENOSPC;
	case RAFT_MALFORMED:
	case RAFT_INVALID:
		return -EINVAL;
	default:
		return -EIO;
	}
}

static int queue_event(struct imexd_cons *c, const struct raft_event *ev)
{
	if (GROW(c, events, n_events, cap_events))
		return -ENOMEM;
	c->events[c->n_events++] = *ev;
	return 0;
}

static int on_entries(struct imexd_cons *c, const struct raft_update *u)
{
	struct imexd_cons_action *a;
	struct cons_write *w;
	unsigned i;
	int rv = 0;

	log_truncate(c, u->entries.index);
	if (u->entries.n)
		group_from(c, u->entries.index, &u->entries.batch[0]);
	for (i = 0; i < u->entries.n && !rv; i++)
		rv = log_append(c, &u->entries.batch[i]);
	/* The batch is ours now, copied or not. */
	raft_free(u->entries.batch[0].batch);
	if (rv)
		return rv;
	if (GROW(c, writes, n_writes, cap_writes))
		return -ENOMEM;
	w = &c->writes[c->n_writes];
	w->terms = malloc(u->entries.n * sizeof(*w->terms));
	if (!w->terms)
		return -ENOMEM;
	for (i = 0; i < u->entries.n; i++)
		w->terms[i] = u->entries.batch[i].term;
	w->first = u->entries.index;
	w->n = u->entries.n;
	w->bootstrap = false;
	c->n_writes++;
	a = push(c, IMEXD_CONS_PERSIST_ENTRIES);
	if (!a)
		return -ENOMEM;
	a->entries.index = u->entries.index;
	a->entries.n = u->entries.n;
	a->entries.entries = entries_out(c, u->entries.index, u->entries.n);
	return a->entries.entries ? 0 : -ENOMEM;
}

static int on_install(struct imexd_cons *c, const struct raft_update *u)
{
	struct imexd_cons_action *a;

	/* raft gives us the chunk; the configuration goes back to it with
	 * RAFT_PERSISTED_SNAPSHOT. */
	snap_clear(&c->install);
	c->install.have = true;
	c->install.meta = u->snapshot.metadata;
	c->install.data = u->snapshot.chunk.base;
	c->install.len = u->snapshot.chunk.len;
	c->installing = true;
	log_truncate(c, c->log_start);
	c->log_start = u->snapshot.metadata.index + 1;
	a = push(c, IMEXD_CONS_PERSIST_SNAPSHOT);
	if (!a)
		return -ENOMEM;
	a->snapshot.metadata = &c->install.meta;
	a->snapshot.data = c->install.data;
	a->snapshot.len = c->install.len;
	return 0;
}

static int on_message(struct imexd_cons *c, const struct raft_message *m)
{
	struct imexd_cons_action *a;
	struct raft_message *out;

	out = malloc(sizeof(*out));
	if (!out || scratch_add(c, out, false))
		return -ENOMEM;
	*out = *m;
	out->server_id = c->self;
	out->server_address = c->raft.address;
	/*
	 * libraft 0.22.1 answers a pre-vote request of a lower term with the
	 * request's term, so the candidate never learns ours: a node with a
	 * higher term and an older log then refuses it for good, and when its
	 * vote is needed the group never elects (found by the agreement
	 * simulator).  Answer a refusal with our term, as etcd does: the
	 * candidate adopts it and asks again.
	 */
	if (m->type == RAFT_REQUEST_VOTE_RESULT &&
	    m->request_vote_result.pre_vote &&
	    !m->request_vote_result.vote_granted &&
	    m->request_vote_result.term < c->raft.current_term)
		out->request_vote_result.term = c->raft.current_term;
	if (m->type == RAFT_APPEND_ENTRIES) {
		struct raft_append_entries *ae = &out->append_entries;

		ae->entries = NULL;
		if (ae->n_entries) {
			ae->entries = entries_out(c, ae->prev_log_index + 1,
						  ae->n_entries);
			if (!ae->entries)
				return -ENOMEM;
		}
	} else if (m->type == RAFT_INSTALL_SNAPSHOT) {
		struct raft_install_snapshot *is = &out->install_snapshot;
		struct raft_configuration *conf;

		if (!c->snap.have)
			return -EIO;
		conf = malloc(sizeof(*conf));
		if (!conf)
			return -ENOMEM;
		if (conf_copy(&c->snap.meta.configuration, conf)) {
			free(conf);
			return -ENOMEM;
		}
		if (scratch_add(c, conf, true))
			return -ENOMEM;
		is->last_index = c->snap.meta.index;
		is->last_term = c->snap.meta.term;
		is->conf = *conf;
		is->conf_index = c->snap.meta.configuration_index;
		is->data.len = c->snap.len;
		is->data.base = scratch_dup(c, c->snap.data, c->snap.len);
		if (!is->data.base)
			return -ENOMEM;
	}
	a = push(c, IMEXD_CONS_SEND);
	if (!a)
		return -ENOMEM;
	a->send.to = m->server_id;
	a->send.to_name = imexd_cons_name(c, m->server_id);
	a->send.msg = out;
	return 0;
}

/* Tags of entries up to index are settled: applied with the same term,
 * or dropped. */
static int settle_tags(struct imexd_cons *c, raft_index index,
		       raft_term term, struct imexd_cons_action *apply)
{
	size_t i = 0;

	while (i < c->n_tags) {
		struct cons_tag *t = &c->tags[i];

		if (t->index > index) {
			i++;
			continue;
		}
		if (apply && t->index == index && t->term == term) {
			apply->apply.tag = t->tag;
		} else {
			struct imexd_cons_action *a;

			a = push(c, IMEXD_CONS_DROPPED);
			if (!a)
				return -ENOMEM;
			a->dropped.tag = t->tag;
			a->dropped.index = t->index;
		}
		c->tags[i] = c->tags[--c->n_tags];
	}
	return 0;
}

/* A configuration entry committed: CHANGED, with the tag of a change
 * submitted here. */
static int changed(struct imexd_cons *c, raft_index i, raft_term term)
{
	struct imexd_cons_action *a = push(c, IMEXD_CONS_CHANGED);

	if (!a)
		return -ENOMEM;
	a->apply.index = i;
	a->apply.term = term;
	return settle_tags(c, i, term, a);
}

static int apply_committed(struct imexd_cons *c)
{
	raft_index commit = raft_commit_index(&c->raft);

	while (c->applied < commit) {
		raft_index i = c->applied + 1;
		const struct cons_entry *e = log_get(c, i);
		struct imexd_cons_action *a;
		struct raft_event ev;
		struct raft_buffer b;
		int rv;

		if (!e)
			break; /* a snapshot is being installed */
		switch (e->type) {
		case RAFT_COMMAND:
			a = push(c, IMEXD_CONS_APPLY);
			if (!a)
				return -ENOMEM;
			a->apply.index = i;
			a->apply.term = e->term;
			a->apply.len = e->len;
			a->apply.data = scratch_dup(c, e->buf, e->len);
			if (!a->apply.data)
				return -ENOMEM;
			rv = settle_tags(c, i, e->term, a);
			break;
		case RAFT_CHANGE:
			memset(&ev, 0, sizeof(ev));
			ev.type = RAFT_CONFIGURATION;
			ev.configuration.index = i;
			b.base = e->buf;
			b.len = e->len;
			rv = raft_configuration_decode(&b, &ev.configuration.conf);
			if (rv)
				return map_err(rv);
			if (c->raft.configuration_uncommitted_index != i &&
			    i > c->raft.configuration_committed_index) {
				/* libraft 0.22.1 ignores the commit of a
				 * configuration while a later one is pending
				 * (replicationApplyConfigurationChange()), so a
				 * rollback of the later one would restore an
				 * older configuration than the committed one
				 * (a split brain).  Record it as committed. */
				raft_configuration_close(&c->raft.configuration_committed);
				c->raft.configuration_committed = ev.configuration.conf;
				c->raft.configuration_committed_index = i;
				rv = changed(c, i, e->term);
				break;
			}
			rv = queue_event(c, &ev);
			if (rv) {
				raft_configuration_close(&ev.configuration.conf);
				return rv;
			}
			rv = changed(c, i, e->term);
			break;
		default:
			rv = settle_tags(c, i, 0, NULL);
			break;
		}
		if (rv)
			return rv;
		c->applied = i;
	}
	return 0;
}

static int report_state(struct imexd_cons *c)
{
	struct imexd_cons_action *a;
	raft_id leader = imexd_cons_leader(c);
	int st = raft_state(&c->raft);

	if (st == c->rep_state && leader == c->rep_leader &&
	    c->raft.current_term == c->rep_term)
		return 0;
	if (st == RAFT_LEADER && c->rep_state != RAFT_LEADER) {
		unsigned i;

		/* Everybody gets a fresh start on a new leader. */
		for (i = 0; i < c->n_peers; i++)
			c->peers[i].heard = c->raft.now;
		c->promoting = 0;
	}
	c->rep_state = st;
	c->rep_leader = leader;
	c->rep_term = c->raft.current_term;
	a = push(c, IMEXD_CONS_STATE);
	if (!a)
		return -ENOMEM;
	a->state.state = st;
	a->state.term = c->rep_term;
	a->state.leader = leader;
	a->state.leader_name = imexd_cons_name(c, leader);
	return 0;
}

static int step_one(struct imexd_cons *c, struct raft_event *ev)
{
	struct raft_update u;
	unsigned i;
	int rv;

	ev->capacity = 0;
	memset(ev->reserved, 0, sizeof(ev->reserved));
	rv = raft_step(&c->raft, ev, &u);
	c->refused = rv != 0;
	if (rv)
		return map_err(rv);
	if (u.flags & (RAFT_UPDATE_CURRENT_TERM | RAFT_UPDATE_VOTED_FOR)) {
		struct imexd_cons_action *a;

		a = push(c, IMEXD_CONS_PERSIST_TERM_VOTE);
		if (!a)
			return -ENOMEM;
		a->term_vote.term = c->raft.current_term;
		a->term_vote.voted_for = c->raft.voted_for;
	}
	if (u.flags & RAFT_UPDATE_ENTRIES) {
		rv = on_entries(c, &u);
		if (rv)
			return rv;
	}
	if (u.flags & RAFT_UPDATE_SNAPSHOT) {
		rv = on_install(c, &u);
		if (rv)
			return rv;
	}
	/* Before messages: they may go to a node just added. */
	rv = peers_learn(c);
	if (rv)
		return rv;
	if (u.flags & RAFT_UPDATE_MESSAGES) {
		for (i = 0; i < u.messages.n; i++) {
			rv = on_message(c, &u.messages.batch[i]);
			if (rv)
				return rv;
		}
	}
	if (u.flags & RAFT_UPDATE_COMMIT_INDEX) {
		rv = apply_committed(c);
		if (rv)
			return rv;
	}
	rv = peers_learn(c);
	return rv ? rv : report_state(c);
}

/* Step ev, then the configuration events it led to. */
static int step(struct imexd_cons *c, uint64_t now, struct raft_event *ev)
{
	size_t i;
	int rv;

	ev->time = now;
	rv = step_one(c, ev);
	if (rv)
		return rv;
	for (i = 0; !rv && i < c->n_events; i++) {
		/* A copy: stepping may grow (move) the array. */
		struct raft_event e = c->events[i];

		e.time = now;
		rv = step_one(c, &e); /* raft takes the configuration */
	}
	for (; i < c->n_events; i++)
		raft_configuration_close(&c->events[i].configuration.conf);
	c->n_events = 0;
	c->refused = false;
	return rv;
}

static int broadcast(struct imexd_cons *c, uint64_t now);

/* Whether the actions from @from on send every other server that keeps a
 * log (voters and standbys) an AppendEntries. */
static bool all_appended(const struct imexd_cons *c, size_t from)
{
	const struct raft_configuration *conf = &c->raft.configuration;
	unsigned i;
	size_t k;

	for (i = 0; i < conf->n; i++) {
		const struct raft_server *s = &conf->servers[i];

		if (s->id == c->self || s->role == RAFT_SPARE)
			continue;
		for (k = from; k < c->n_actions; k++)
			if (c->actions[k].type == IMEXD_CONS_SEND &&
			    c->actions[k].send.to == s->id &&
			    c->actions[k].send.msg->type == RAFT_APPEND_ENTRIES)
				break;
		if (k == c->n_actions)
			return false;
	}
	return true;
}

/* Remember @tag for the entry just submitted (room was grown before). */
static raft_index tag_last(struct imexd_cons *c, uint64_t tag)
{
	struct cons_tag *t = &c->tags[c->n_tags++];

	t->tag = tag;
	t->index = raft_last_index(&c->raft);
	t->term = c->raft.current_term;
	return t->index;
}

static int submit_entry(struct imexd_cons *c, uint64_t now,
			enum raft_entry_type type, const void *data,
			size_t len)
{
	struct raft_event ev;
	struct raft_entry e;
	size_t from = c->n_actions;
	int rv;

	e.term = c->raft.current_term;
	e.type = type;
	e.buf.len = len;
	e.buf.base = raft_malloc(len ? len : 1);
	if (!e.buf.base)
		return -ENOMEM;
	if (len)
		memcpy(e.buf.base, data, len);
	e.batch = e.buf.base;
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_SUBMIT;
	ev.submit.entries = &e;
	ev.submit.n = 1;
	/* Refused: the batch is still ours.  Accepted: on_entries frees it. */
	rv = step(c, now, &ev);
	if (rv && c->refused)
		raft_free(e.batch);
	/*
	 * libraft sends a new entry at once only to followers it has in
	 * pipeline mode; one in probe mode gets it with its next heartbeat,
	 * up to a heartbeat timeout later.  Its leader drops a follower to
	 * probe mode whenever a tick finds no answer from it since the tick
	 * before (not since an election timeout), which an idle group's
	 * timing often gives.  A follower the step left out gets the entry
	 * now (broadcast: an AppendEntries to every follower).
	 */
	if (!rv && raft_state(&c->raft) == RAFT_LEADER && !all_appended(c, from))
		rv = broadcast(c, now);
	return rv;
}

/* ---- voter upkeep ---- */

static int change_role(struct imexd_cons *c, uint64_t now, raft_id id,
		       int role)
{
	struct raft_configuration conf;
	struct raft_buffer buf;
	unsigned i;
	int rv;

	if (conf_copy(&c->raft.configuration, &conf))
		return -ENOMEM;
	for (i = 0; i < conf.n; i++)
		if (conf.servers[i].id == id)
			conf.servers[i].role = role;
	rv = raft_configuration_encode(&conf, &buf);
	raft_configuration_close(&conf);
	if (rv)
		return map_err(rv);
	rv = submit_entry(c, now, RAFT_CHANGE, buf.base, buf.len);
	raft_free(buf.base);
	return rv;
}

static bool leader_ready(const struct imexd_cons *c)
{
	raft_index ci = raft_commit_index(&c->raft);

	return ci > 0 && log_term(c, ci) == c->raft.current_term;
}

/*
 * Whether the voters left once `gone` stops voting include a majority
 * heard from within an election timeout: a change that loses it never
 * commits, and the uncommitted change blocks every later one.
 */
static bool keeps_quorum(const struct imexd_cons *c, uint64_t now,
			 raft_id gone)
{
	const struct raft_configuration *conf = &c->raft.configuration;
	unsigned i, voters = 0, up = 0;

	for (i = 0; i < conf->n; i++) {
		const struct raft_server *s = &conf->servers[i];

		if (s->role != RAFT_VOTER || s->id == gone)
			continue;
		voters++;
		if (s->id == c->self || now - imexd_cons_heard(c, s->id) < c->et)
			up++;
	}
	return up >= voters / 2 + 1;
}

/* A standby heard from within an election timeout, 0 if none. */
static raft_id reachable_standby(const struct imexd_cons *c, uint64_t now)
{
	const struct raft_configuration *conf = &c->raft.configuration;
	unsigned i;

	for (i = 0; i < conf->n; i++)
		if (conf->servers[i].role == RAFT_STANDBY &&
		    now - imexd_cons_heard(c, conf->servers[i].id) < c->et)
			return conf->servers[i].id;
	return 0;
}

/* Promote standby: at once when caught up, else after a catch-up round
 * that upkeep follows. */
static int promote(struct imexd_cons *c, uint64_t now, raft_id standby)
{
	struct raft_event ev;
	raft_index match;

	if (raft_match_index(&c->raft, standby, &match) == 0 &&
	    match == raft_last_index(&c->raft))
		return change_role(c, now, standby, RAFT_VOTER);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_CATCH_UP;
	ev.catch_up.server_id = standby;
	c->promoting = standby;
	return step(c, now, &ev);
}

static int upkeep(struct imexd_cons *c, uint64_t now)
{
	const struct raft_configuration *conf = &c->raft.configuration;
	uint64_t lost_after = (uint64_t)c->k * c->et;
	raft_id lost = 0, standby = 0, oldest = 0;
	uint64_t oldest_heard = UINT64_MAX;
	unsigned i, voters = 0;
	int status;

	if (raft_state(&c->raft) != RAFT_LEADER)
		return 0;
	if (!leader_ready(c)) {
		/* Commit an entry of this term before any change. */
		if (log_term(c, log_last(c)) == c->raft.current_term)
			return 0;
		return submit_entry(c, now, RAFT_BARRIER, "\0\0\0\0\0\0\0\0", 8);
	}
	if (c->promoting) {
		if (raft_catch_up(&c->raft, c->promoting, &status) ||
		    status == RAFT_CATCH_UP_ABORTED) {
			c->promoting = 0;
			c->promote_backoff = now + c->et;
			return 0;
		}
		if (status != RAFT_CATCH_UP_FINISHED)
			return 0;
		if (c->raft.configuration_uncommitted_index ||
		    c->raft.leader_state.promotee_id)
			return 0;
		standby = c->promoting;
		c->promoting = 0;
		return change_role(c, now, standby, RAFT_VOTER);
	}
	if (c->raft.configuration_uncommitted_index ||
	    c->raft.leader_state.promotee_id)
		return 0;
	for (i = 0; i < conf->n; i++) {
		const struct raft_server *s = &conf->servers[i];
		uint64_t heard;

		heard = s->id == c->self ? now : imexd_cons_heard(c, s->id);
		if (s->role == RAFT_VOTER) {
			voters++;
			if (s->id != c->self && now - heard > lost_after && !lost)
				lost = s->id;
			if (s->id != c->self && heard <= oldest_heard) {
				oldest_heard = heard;
				oldest = s->id;
			}
		} else if (s->role == RAFT_STANDBY && !standby &&
			   now - heard < c->et) {
			standby = s->id;
		}
	}
	if (voters > imexd_cons_voters(conf->n) && (lost || oldest) &&
	    now >= c->self_leaving_until &&
	    keeps_quorum(c, now, lost ? lost : oldest))
		return change_role(c, now, lost ? lost : oldest, RAFT_STANDBY);
	if ((lost || voters < imexd_cons_voters(conf->n)) && standby &&
	    now >= c->promote_backoff)
		return promote(c, now, standby);
	return 0;
}

/* ---- snapshots ---- */

/*
 * The configuration a snapshot at c->applied carries: the last
 * configuration entry at or below it still in the log copy (committed,
 * since applied), else raft's committed one.  raft's own record can lag
 * behind the log (libraft 0.22.1 skips commits it does not expect, and
 * restart treats the last stored one as uncommitted); a snapshot with an
 * older configuration than the entries it replaces makes a restarted node
 * count votes against replaced voters (found by the agreement simulator).
 */
static int snapshot_conf(const struct imexd_cons *c,
			 struct raft_configuration *conf, raft_index *index)
{
	raft_index i;

	for (i = c->applied; i >= c->log_start && i > 0; i--) {
		const struct cons_entry *e = log_get(c, i);
		struct raft_buffer b;

		if (!e || e->type != RAFT_CHANGE)
			continue;
		if (i <= c->raft.configuration_committed_index)
			break;
		b.base = e->buf;
		b.len = e->len;
		if (raft_configuration_decode(&b, conf))
			return -ENOMEM;
		*index = i;
		return 0;
	}
	*index = c->raft.configuration_committed_index;
	return conf_copy(&c->raft.configuration_committed, conf);
}

static int maybe_take_snapshot(struct imexd_cons *c)
{
	struct imexd_cons_action *a;
	raft_index base = c->snap.have ? c->snap.meta.index : 0;

	/* Not past what is stored here: raft forgets the terms of entries a
	 * snapshot covers, and a write still in flight needs them. */
	if (!c->snap_threshold || c->taking || c->installing ||
	    c->applied != raft_commit_index(&c->raft) ||
	    c->applied > c->raft.last_stored ||
	    c->applied - base < c->snap_threshold ||
	    !log_get(c, c->applied))
		return 0;
	memset(&c->take_meta, 0, sizeof(c->take_meta));
	if (snapshot_conf(c, &c->take_meta.configuration,
			  &c->take_meta.configuration_index))
		return -ENOMEM;
	c->take_meta.index = c->applied;
	c->take_meta.term = log_term(c, c->applied);
	c->taking = true;
	a = push(c, IMEXD_CONS_TAKE_SNAPSHOT);
	if (!a)
		return -ENOMEM;
	a->snapshot.metadata = &c->take_meta;
	return 0;
}

/*
 * libraft 0.22.1 tells the followers a new commit index only with the
 * next AppendEntries it sends them, a heartbeat timeout later when no
 * entry follows, and every member of a new domain waits for it (and a
 * node back from a restart, to apply its log).  Send it at once, as
 * etcd's leader does when its commit index moves: a timeout
 * step with a zero heartbeat timeout sends every follower an
 * AppendEntries now (and resets their heartbeat clocks).  That step also
 * runs the leader's quorum check: it is made to count every server heard
 * from within the last election timeout, so it can neither step down nor
 * give up on a follower the regular check would keep, and the check's
 * timer is put back afterwards, so the regular check is not moved.
 */
static int broadcast(struct imexd_cons *c, uint64_t now)
{
	raft_time start = c->raft.election_timer_start;
	unsigned hb = c->raft.heartbeat_timeout;
	struct raft_event ev;
	int rv;

	c->pushed = raft_commit_index(&c->raft);
	c->raft.election_timer_start = now >= c->et ? now - c->et + 1 : 0;
	raft_set_heartbeat_timeout(&c->raft, 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_TIMEOUT;
	rv = step(c, now, &ev);
	raft_set_heartbeat_timeout(&c->raft, hb);
	if (raft_state(&c->raft) == RAFT_LEADER)
		c->raft.election_timer_start = start;
	return rv;
}

static int push_commit(struct imexd_cons *c, uint64_t now)
{
	if (raft_state(&c->raft) != RAFT_LEADER ||
	    raft_commit_index(&c->raft) <= c->pushed)
		return 0;
	return broadcast(c, now);
}

/* Common tail of every input: the commit index out, leader upkeep and
 * snapshots. */
static int finish(struct imexd_cons *c, uint64_t now, int rv)
{
	if (!rv)
		rv = push_commit(c, now);
	if (!rv)
		rv = upkeep(c, now);
	if (!rv)
		rv = maybe_take_snapshot(c);
	return rv;
}

/* ---- public ---- */

int imexd_cons_new(const struct imexd_cons_config *cfg, struct imexd_cons **out)
{
	struct imexd_cons *c;
	unsigned i;

	if (!cfg->roster || !cfg->n_roster || cfg->n_roster > IMEXD_CONS_ROSTER_MAX ||
	    !cfg->self)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->names = calloc(cfg->n_roster, sizeof(*c->names));
	if (!c->names)
		goto nomem;
	for (i = 0; i < cfg->n_roster; i++) {
		if (!cfg->roster[i] || !cfg->roster[i][0])
			goto inval;
		c->names[i] = strdup(cfg->roster[i]);
		if (!c->names[i])
			goto nomem;
		c->n++;
	}
	qsort(c->names, c->n, sizeof(*c->names), cmp_name);
	for (i = 1; i < c->n; i++)
		if (!strcmp(c->names[i - 1], c->names[i]))
			goto inval;
	/* Two names of one id would count one node's vote for another. */
	for (i = 0; i < c->n; i++) {
		int rv = peer_add(c, imexd_cons_name_id(c->names[i]),
				  c->names[i], true);

		if (rv == -ENOMEM)
			goto nomem;
		if (rv || strchr(c->names[i], '='))
			goto inval;
		if (!strcmp(c->names[i], cfg->self))
			c->self_in_roster = true;
	}
	if (!cfg->self[0] || strchr(cfg->self, '='))
		goto inval;
	c->self = imexd_cons_name_id(cfg->self);
	switch (peer_add(c, c->self, cfg->self, false)) {
	case 0:
		break;
	case -ENOMEM:
		goto nomem;
	default:
		goto inval;
	}
	c->et = cfg->election_timeout_ms ? cfg->election_timeout_ms : 1000;
	c->k = cfg->lost_voter_timeouts ? cfg->lost_voter_timeouts : 10;
	c->snap_threshold = cfg->snapshot_threshold;
	c->snap_trailing = cfg->snapshot_trailing;
	c->log_start = 1;
	c->rep_state = -1;
	if (raft_init(&c->raft, NULL, NULL, c->self, imexd_cons_name(c, c->self)))
		goto nomem;
	/* libraft formats a diagnostic line for every message and timeout
	 * into its tracer, which prints only under LIBRAFT_TRACE; without a
	 * tracer it formats nothing (imexd logs from the actions). */
	c->raft.tracer = NULL;
	raft_seed(&c->raft, cfg->seed ? cfg->seed : (unsigned)c->self);
	raft_set_election_timeout(&c->raft, c->et);
	raft_set_heartbeat_timeout(&c->raft, cfg->heartbeat_timeout_ms ?
				   cfg->heartbeat_timeout_ms :
				   (c->et / 10 ? c->et / 10 : 1));
	raft_set_pre_vote(&c->raft, true);
	*out = c;
	return 0;
inval:
	imexd_cons_free(c);
	return -EINVAL;
nomem:
	imexd_cons_free(c);
	return -ENOMEM;
}

void imexd_cons_free(struct imexd_cons *c)
{
	size_t i;

	if (!c)
		return;
	if (c->raft.address)
		raft_close(&c->raft, NULL);
	scratch_free(c);
	free(c->scratch);
	free(c->actions);
	for (i = 0; i < c->n_events; i++)
		raft_configuration_close(&c->events[i].configuration.conf);
	free(c->events);
	log_truncate(c, c->log_start);
	free(c->log);
	for (i = 0; i < c->n_writes; i++)
		free(c->writes[i].terms);
	free(c->writes);
	free(c->tags);
	snap_clear(&c->snap);
	if (c->installing) {
		raft_configuration_close(&c->install.meta.configuration);
		free(c->install.data);
	}
	if (c->taking)
		raft_configuration_close(&c->take_meta.configuration);
	for (i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->names);
	for (i = 0; i < c->n_peers; i++) {
		free(c->peers[i].name);
		free(c->peers[i].addr);
	}
	free(c->peers);
	free(c);
}

/*
 * The initial configuration entry of the roster (term 1, index 1).  Never
 * one voter unless the roster is this node alone: a node whose NODES_FILE
 * wrongly names it and one other would otherwise lead a group of its own.
 * Two voters need the other name's vote, which a node of another group
 * refuses (votes only from its members); upkeep may demote one later.
 */
static int bootstrap_entry(const struct imexd_cons *c, struct raft_buffer *buf)
{
	struct raft_configuration conf;
	unsigned i, v = c->n == 2 ? 2 : imexd_cons_voters(c->n);
	int rv = 0;

	raft_configuration_init(&conf);
	for (i = 0; i < c->n && !rv; i++)
		rv = raft_configuration_add(&conf, imexd_cons_name_id(c->names[i]),
					    c->names[i],
					    i < v ? RAFT_VOTER : RAFT_STANDBY);
	if (!rv)
		rv = raft_configuration_encode(&conf, buf);
	raft_configuration_close(&conf);
	return map_err(rv);
}

int imexd_cons_start(struct imexd_cons *c, uint64_t now,
		     const struct imexd_cons_start *st)
{
	struct raft_snapshot_metadata meta, *pmeta = NULL;
	struct raft_entry boot, *ents = NULL;
	const struct raft_entry *src = st->entries;
	struct raft_buffer bbuf = { 0 };
	struct imexd_cons_action *a;
	struct raft_event ev;
	unsigned i, n = st->n_entries;
	raft_index start = st->start_index;
	raft_term term = st->term;
	size_t total = 0;
	uint8_t *cur, *batch = NULL;
	/* A node outside the roster waits to be joined: it never forms a
	 * group of its own. */
	bool boot_needed = !st->snapshot && !n && c->self_in_roster;
	int rv;

	rv = begin(c);
	if (rv)
		return rv;
	if (c->started)
		return -EALREADY;
	if (boot_needed) {
		rv = bootstrap_entry(c, &bbuf);
		if (rv)
			return rv;
		boot.term = 1;
		boot.type = RAFT_CHANGE;
		boot.buf = bbuf;
		boot.batch = NULL;
		src = &boot;
		n = 1;
		start = 1;
		if (term < 1) {
			term = 1;
			a = push(c, IMEXD_CONS_PERSIST_TERM_VOTE);
			if (!a)
				goto nomem;
			a->term_vote.term = 1;
			a->term_vote.voted_for = st->voted_for;
		}
	} else if (!st->snapshot && n && start != 1) {
		return -EINVAL;
	}
	if (st->snapshot) {
		c->snap.have = true;
		c->snap.meta = *st->snapshot;
		if (conf_copy(&st->snapshot->configuration,
			      &c->snap.meta.configuration)) {
			c->snap.have = false;
			goto nomem;
		}
		c->snap.data = malloc(st->snapshot_len ? st->snapshot_len : 1);
		if (!c->snap.data)
			goto nomem;
		if (st->snapshot_len)
			memcpy(c->snap.data, st->snapshot_data, st->snapshot_len);
		c->snap.len = st->snapshot_len;
		c->applied = st->snapshot->index;
		meta = *st->snapshot;
		if (conf_copy(&st->snapshot->configuration, &meta.configuration))
			goto nomem;
		pmeta = &meta; /* raft takes meta.configuration */
	}
	c->group = st->group;
	if (n)
		group_from(c, start, &src[0]);
	c->log_start = start;
	for (i = 0; i < n; i++) {
		rv = log_append(c, &src[i]);
		if (rv)
			goto out;
		total += src[i].buf.len;
	}
	if (n) {
		ents = raft_malloc(n * sizeof(*ents));
		batch = raft_malloc(total ? total : 1);
		if (!ents || !batch) {
			raft_free(ents);
			raft_free(batch);
			ents = NULL;
			goto nomem;
		}
		cur = batch;
		for (i = 0; i < n; i++) {
			ents[i] = src[i];
			ents[i].buf.base = cur;
			ents[i].batch = batch;
			if (src[i].buf.len)
				memcpy(cur, src[i].buf.base, src[i].buf.len);
			cur += src[i].buf.len;
		}
	}
	if (boot_needed) {
		struct cons_write *w;

		if (GROW(c, writes, n_writes, cap_writes))
			goto nomem_ents;
		w = &c->writes[c->n_writes];
		w->terms = malloc(sizeof(*w->terms));
		if (!w->terms)
			goto nomem_ents;
		w->terms[0] = 1;
		w->first = 1;
		w->n = 1;
		w->bootstrap = true;
		c->n_writes++;
		a = push(c, IMEXD_CONS_PERSIST_ENTRIES);
		if (!a)
			goto nomem_ents;
		a->entries.index = 1;
		a->entries.n = 1;
		a->entries.entries = entries_out(c, 1, 1);
		if (!a->entries.entries)
			goto nomem_ents;
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_START;
	ev.start.term = term;
	ev.start.voted_for = st->voted_for;
	ev.start.metadata = pmeta;
	ev.start.start_index = start;
	ev.start.entries = ents;
	ev.start.n_entries = n;
	pmeta = NULL;
	rv = step(c, now, &ev);
	/* Refused: raft has freed the entries already. */
	if (ents && !(rv && c->refused)) {
		raft_free(batch);
		raft_free(ents);
	}
	ents = NULL;
	if (!rv)
		c->started = true;
	rv = finish(c, now, rv);
	goto out;
nomem_ents:
	if (ents) {
		raft_free(batch);
		raft_free(ents);
	}
nomem:
	rv = -ENOMEM;
	if (pmeta)
		raft_configuration_close(&pmeta->configuration);
out:
	raft_free(bbuf.base);
	return rv;
}

/*
 * libraft rejects an AppendEntries whose previous entry lies inside this
 * node's snapshot (its terms are forgotten), and the leader, whose own
 * snapshot is older, retries below it for ever.  Entries up to our
 * snapshot are committed, so every leader of a term we accept holds them
 * unchanged: start the message at our snapshot instead.
 */
static void skip_snapshotted(struct imexd_cons *c, struct raft_append_entries *ae)
{
	raft_index si = c->snap.have ? c->snap.meta.index : 0;
	unsigned k;

	if (!si || ae->prev_log_index >= si || ae->term < c->raft.current_term)
		return;
	k = (unsigned)(si - ae->prev_log_index);
	if (k > ae->n_entries)
		k = ae->n_entries;
	/* An entry at the snapshot's index must be the snapshot's. */
	if (k && ae->prev_log_index + k == si &&
	    ae->entries[k - 1].term != c->snap.meta.term)
		return;
	if (k == ae->n_entries && ae->n_entries)
		raft_free(ae->entries[0].batch); /* nothing left for raft */
	ae->entries = k == ae->n_entries ? NULL : ae->entries + k;
	ae->n_entries -= k;
	ae->prev_log_index = si;
	ae->prev_log_term = c->snap.meta.term;
}

int imexd_cons_receive(struct imexd_cons *c, uint64_t now, raft_id from,
		       struct raft_message *msg)
{
	struct raft_message local;
	struct raft_event ev;
	int rv = begin(c);

	if (!rv && (!c->started || !imexd_cons_name(c, from) || from == c->self))
		rv = -EINVAL;
	/*
	 * Votes count only among members: a node outside the group (never
	 * joined, removed, or one that formed a group of its own from a
	 * wrong NODES_FILE) gets none here and starts no election, so it
	 * can never lead members.  Leader traffic is taken from any node the
	 * transport delivered: a member that missed a join must still catch
	 * up from the joined node when it leads.
	 */
	if (!rv && !is_member(c, from) && is_member(c, c->self) &&
	    (msg->type == RAFT_REQUEST_VOTE || msg->type == RAFT_TIMEOUT_NOW))
		rv = 1;
	/* raft would keep a second snapshot's buffers without using them;
	 * the leader sends it again later. */
	if (!rv && c->installing && msg->type == RAFT_INSTALL_SNAPSHOT)
		rv = 1;
	if (rv) {
		/* Ownership passes even on refusal. */
		if (msg->type == RAFT_APPEND_ENTRIES &&
		    msg->append_entries.n_entries)
			raft_free(msg->append_entries.entries[0].batch);
		if (msg->type == RAFT_INSTALL_SNAPSHOT) {
			raft_configuration_close(&msg->install_snapshot.conf);
			raft_free(msg->install_snapshot.data.base);
		}
		return rv > 0 ? 0 : rv;
	}
	peer_find(c, from)->heard = now;
	msg->server_id = from;
	msg->server_address = imexd_cons_name(c, from);
	local = *msg;
	if (local.type == RAFT_APPEND_ENTRIES)
		skip_snapshotted(c, &local.append_entries);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_RECEIVE;
	ev.receive.message = &local;
	return finish(c, now, step(c, now, &ev));
}

int imexd_cons_tick(struct imexd_cons *c, uint64_t now)
{
	struct raft_event ev;
	int rv = begin(c);

	if (rv)
		return rv;
	if (!c->started)
		return -EINVAL;
	if (now < raft_timeout(&c->raft))
		return finish(c, now, 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_TIMEOUT;
	return finish(c, now, step(c, now, &ev));
}

int imexd_cons_heartbeat(struct imexd_cons *c, uint64_t now)
{
	int rv = begin(c);

	if (rv)
		return rv;
	if (!c->started)
		return -EINVAL;
	if (raft_state(&c->raft) != RAFT_LEADER)
		return finish(c, now, 0);
	return finish(c, now, broadcast(c, now));
}

int imexd_cons_persisted(struct imexd_cons *c, uint64_t now, raft_index last)
{
	struct cons_write w;
	struct raft_event ev;
	unsigned m = 0;
	int rv = begin(c);

	if (rv)
		return rv;
	if (!c->n_writes || c->writes[0].first + c->writes[0].n - 1 != last)
		return -EINVAL;
	w = c->writes[0];
	memmove(c->writes, c->writes + 1, --c->n_writes * sizeof(*c->writes));
	/* Only the prefix still in the log counts: a newer leader may have
	 * replaced the rest meanwhile. */
	while (m < w.n && (w.first + m < c->log_start ||
			   log_term(c, w.first + m) == w.terms[m]))
		m++;
	free(w.terms);
	if (w.bootstrap || !m || c->installing ||
	    w.first + m - 1 <= c->raft.last_stored ||
	    raft_state(&c->raft) == RAFT_CANDIDATE)
		return finish(c, now, 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_PERSISTED_ENTRIES;
	ev.persisted_entries.index = w.first + m - 1;
	return finish(c, now, step(c, now, &ev));
}

int imexd_cons_snapshot_persisted(struct imexd_cons *c, uint64_t now)
{
	struct imexd_cons_action *a;
	struct raft_configuration keep;
	struct raft_event ev;
	int rv = begin(c);

	if (rv)
		return rv;
	if (!c->installing)
		return -EINVAL;
	if (conf_copy(&c->install.meta.configuration, &keep))
		return -ENOMEM;
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_PERSISTED_SNAPSHOT;
	ev.persisted_snapshot.metadata = c->install.meta; /* raft takes conf */
	ev.persisted_snapshot.offset = 0;
	ev.persisted_snapshot.last = true;
	snap_clear(&c->snap);
	c->snap = c->install;
	c->snap.meta.configuration = keep;
	memset(&c->install, 0, sizeof(c->install));
	c->installing = false;
	/* Writes handed out before the snapshot no longer count. */
	while (c->n_writes)
		free(c->writes[--c->n_writes].terms);
	log_truncate(c, c->log_start);
	c->log_start = c->snap.meta.index + 1;
	c->applied = c->snap.meta.index;
	rv = settle_tags(c, c->snap.meta.index, 0, NULL);
	if (rv)
		return rv;
	a = push(c, IMEXD_CONS_RESTORE);
	if (!a)
		return -ENOMEM;
	a->snapshot.metadata = &c->snap.meta;
	a->snapshot.data = c->snap.data;
	a->snapshot.len = c->snap.len;
	return finish(c, now, step(c, now, &ev));
}

int imexd_cons_snapshot_taken(struct imexd_cons *c, uint64_t now,
			      const void *data, size_t len)
{
	struct raft_event ev;
	void *copy;
	bool taking = c->taking;
	int rv;

	c->taking = false;
	rv = begin(c);
	c->taking = taking;
	if (rv)
		return rv;
	if (!c->taking)
		return -EINVAL;
	copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, data, len);
	memset(&ev, 0, sizeof(ev));
	ev.type = RAFT_SNAPSHOT;
	ev.snapshot.metadata = c->take_meta; /* raft takes the configuration */
	ev.snapshot.trailing = c->snap_trailing;
	snap_clear(&c->snap);
	c->snap.have = true;
	c->snap.meta = c->take_meta;
	c->snap.data = copy;
	c->snap.len = len;
	c->taking = false;
	if (conf_copy(&ev.snapshot.metadata.configuration,
		      &c->snap.meta.configuration)) {
		raft_configuration_close(&ev.snapshot.metadata.configuration);
		snap_clear(&c->snap);
		return -ENOMEM;
	}
	/* Keep at least what raft keeps (trailing entries). */
	if (c->snap.meta.index > (raft_index)c->snap_trailing + 1)
		log_compact(c, c->snap.meta.index - c->snap_trailing - 1);
	return finish(c, now, step(c, now, &ev));
}

int imexd_cons_submit(struct imexd_cons *c, uint64_t now, const void *data,
		      size_t len, uint64_t tag, raft_index *index,
		      raft_id *leader)
{
	int rv = begin(c);

	*leader = imexd_cons_leader(c);
	if (rv)
		return rv;
	if (!c->started || !tag)
		return -EINVAL;
	if (raft_state(&c->raft) != RAFT_LEADER)
		return -IMEXD_CONS_ENOTLEADER;
	if (GROW(c, tags, n_tags, cap_tags))
		return -ENOMEM;
	rv = submit_entry(c, now, RAFT_COMMAND, data, len);
	if (rv)
		return finish(c, now, rv);
	*index = tag_last(c, tag);
	return finish(c, now, 0);
}

uint64_t imexd_cons_timeout(const struct imexd_cons *c)
{
	return raft_timeout(&c->raft);
}

enum raft_state imexd_cons_state(const struct imexd_cons *c)
{
	return (enum raft_state)c->raft.state;
}

raft_id imexd_cons_leader(const struct imexd_cons *c)
{
	if (c->raft.state == RAFT_LEADER)
		return c->self;
	if (c->raft.state == RAFT_FOLLOWER)
		return c->raft.follower_state.current_leader.id;
	return 0;
}

raft_term imexd_cons_term(const struct imexd_cons *c)
{
	return c->raft.current_term;
}

raft_index imexd_cons_applied(const struct imexd_cons *c)
{
	return c->applied;
}

raft_index imexd_cons_commit(const struct imexd_cons *c)
{
	return raft_commit_index(&c->raft);
}

int imexd_cons_role(const struct imexd_cons *c, raft_id id)
{
	unsigned i;

	for (i = 0; i < c->raft.configuration.n; i++)
		if (c->raft.configuration.servers[i].id == id)
			return c->raft.configuration.servers[i].role;
	return -1;
}

raft_id imexd_cons_self(const struct imexd_cons *c)
{
	return c->self;
}

/*
 * A leave of the leader: hand leadership to an up-to-date voter heard
 * from lately (the caller retries and forwards the leave to it); with no
 * other voter, promote a reachable standby first (upkeep demotes nobody
 * meanwhile).  -EBUSY while under way, -EDEADLK when nobody can take over.
 */
static int leave_self(struct imexd_cons *c, uint64_t now)
{
	const struct raft_configuration *conf = &c->raft.configuration;
	raft_id to = 0, standby;
	struct raft_event ev;
	raft_index match;
	unsigned i;
	int rv;

	if (c->raft.leader_state.transferee)
		return -EBUSY;
	for (i = 0; i < conf->n && !to; i++) {
		const struct raft_server *s = &conf->servers[i];

		if (s->role == RAFT_VOTER && s->id != c->self &&
		    now - imexd_cons_heard(c, s->id) < c->et &&
		    raft_match_index(&c->raft, s->id, &match) == 0 &&
		    match == raft_last_index(&c->raft))
			to = s->id;
	}
	if (to) {
		memset(&ev, 0, sizeof(ev));
		ev.type = RAFT_TRANSFER;
		ev.transfer.server_id = to;
		rv = finish(c, now, step(c, now, &ev));
		return rv ? rv : -EBUSY;
	}
	standby = reachable_standby(c, now);
	if (!standby)
		return -EDEADLK;
	c->self_leaving_until = now + 3 * (uint64_t)c->et;
	rv = finish(c, now, promote(c, now, standby));
	return rv ? rv : -EBUSY;
}

int imexd_cons_can_remove(struct imexd_cons *c, uint64_t now,
			  const char *name)
{
	raft_id id = imexd_cons_name_id(name);

	if (raft_state(&c->raft) != RAFT_LEADER)
		return -IMEXD_CONS_ENOTLEADER;
	if (!is_member(c, id))
		return -ENOENT;
	if (id == c->self)
		return -EDEADLK;
	if (!keeps_quorum(c, now, id) && !reachable_standby(c, now))
		return -EHOSTUNREACH;
	return 0;
}

/*
 * Membership.  One change at a time, on a leader that committed an entry
 * of its term, never while upkeep promotes a node.
 */
int imexd_cons_change(struct imexd_cons *c, uint64_t now,
		      const char *address, bool add, uint64_t tag,
		      raft_index *index, raft_id *leader)
{
	struct raft_configuration conf;
	const struct cons_peer *p;
	const char *eq = address ? strchr(address, '=') : NULL;
	size_t len = eq ? (size_t)(eq - address) : (address ? strlen(address) : 0);
	char name[IMEXD_CONS_NAME_MAX];
	struct raft_buffer buf;
	raft_id id;
	unsigned i;
	int rv = begin(c);

	*leader = imexd_cons_leader(c);
	if (rv)
		return rv;
	if (!c->started || !tag || !len || len >= sizeof(name))
		return -EINVAL;
	memcpy(name, address, len);
	name[len] = '\0';
	if (raft_state(&c->raft) != RAFT_LEADER)
		return -IMEXD_CONS_ENOTLEADER;
	if (!leader_ready(c) || c->promoting ||
	    c->raft.configuration_uncommitted_index ||
	    c->raft.leader_state.promotee_id)
		return -EBUSY;
	id = imexd_cons_name_id(name);
	p = peer_find(c, id);
	if (p && strcmp(p->name, name))
		return -EEXIST; /* another node's id */
	if (add ? is_member(c, id) : !is_member(c, id))
		return add ? -EALREADY : -ENOENT;
	if (!add && id == c->self)
		return leave_self(c, now);
	if (!add && !keeps_quorum(c, now, id)) {
		raft_id standby = reachable_standby(c, now);

		/* A voter more first; the caller retries. */
		if (!standby)
			return -EHOSTUNREACH;
		rv = finish(c, now, promote(c, now, standby));
		return rv ? rv : -EBUSY;
	}
	if (add && c->raft.configuration.n >= IMEXD_CONS_ROSTER_MAX)
		return -ENOSPC;
	if (GROW(c, tags, n_tags, cap_tags))
		return -ENOMEM;
	if (conf_copy(&c->raft.configuration, &conf))
		return -ENOMEM;
	if (add) {
		rv = raft_configuration_add(&conf, id, address, RAFT_STANDBY);
	} else {
		for (i = 0; i < conf.n && conf.servers[i].id != id; i++)
			;
		raft_free(conf.servers[i].address);
		memmove(conf.servers + i, conf.servers + i + 1,
			(conf.n - i - 1) * sizeof(*conf.servers));
		conf.n--;
	}
	if (!rv)
		rv = raft_configuration_encode(&conf, &buf);
	raft_configuration_close(&conf);
	if (rv)
		return map_err(rv);
	rv = submit_entry(c, now, RAFT_CHANGE, buf.base, buf.len);
	raft_free(buf.base);
	if (rv)
		return finish(c, now, rv);
	*index = tag_last(c, tag);
	return finish(c, now, 0);
}
