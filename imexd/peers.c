// SPDX-License-Identifier: GPL-2.0
/*
 * peers: the roster's peers and the connections to them (peers.h).
 *
 * A peer is a roster node other than self, one the raft configuration
 * added, or one learnt from an inbound HELLO carrying our group id (a node
 * joined while this one was away).  A connection is "unbound" until a
 * HELLO (inbound) or HELLO_ACK (outbound) on it proves a peer's name, then
 * "bound" to that peer; only bound connections carry messages to the other
 * parts.  The tables are bounded: peers by IMEXD_PEERS_MAX, bound connections
 * by the peers (a duplicate is resolved as it binds), outbound unbound ones
 * by one dial per peer, inbound unbound ones by IMEXD_PEERS_UNBOUND_*.
 *
 * Refusal log lines are rate-limited per (kind, host, name) through a small
 * table of recent keys (LOGKEYS_MAX, the oldest entry reused), and per host
 * (IMEXD_PEERS_LOG_PER_HOST a minute, for IMEXD_PEERS_LOG_HOSTS hosts), so
 * a hostile host can neither flood the log, even with a new name each
 * time, nor grow memory here.
 *
 * This file: actions, log limits, the tables, dialling and time;
 * peers_conn.c the connections and HELLO, peers_members.c the group id and
 * membership, peers_internal.h what they share.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "peers_internal.h"

/* ---- actions -------------------------------------------------------------- */

static void act_release(struct act *a)
{
	free(a->frame);
	free(a->text);
	free(a);
}

/*
 * Called on entry to every event: drained actions go.  Not from
 * imexd_peers_send(), which the caller may call while it handles one.
 */
void peers_acts_gc(struct imexd_peers *p)
{
	size_t i;

	if (!p->next_act)
		return;
	for (i = 0; i < p->next_act; i++)
		act_release(p->acts[i].act);
	memmove(p->acts, p->acts + p->next_act,
		(p->nacts - p->next_act) * sizeof(*p->acts));
	p->nacts -= p->next_act;
	p->next_act = 0;
}

/* A peer's name (shorter than IMEX_NAME_MAX) into an action, once per
 * frame: cheaper than snprintf(). */
void peers_name_copy(char dst[IMEX_NAME_MAX], const char *src)
{
	size_t n = strnlen(src, IMEX_NAME_MAX - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A new zeroed action, or NULL when out of memory (the event is dropped). */
struct act *peers_act_push(struct imexd_peers *p,
				  enum imexd_peers_action_type type)
{
	struct act *a;

	if (imexd_grow((void **)&p->acts, &p->cap_acts, p->nacts + 1,
		       sizeof(*p->acts)))
		return NULL;
	/* Not calloc: one per frame, and the string buffers need only their
	 * first byte cleared. */
	a = malloc(sizeof(*a));
	if (!a)
		return NULL;
	memset(&a->a, 0, sizeof(a->a));
	a->name[0] = '\0';
	a->addr[0] = '\0';
	memset(a->uuid, 0, sizeof(a->uuid));
	a->frame = NULL;
	a->text = NULL;
	p->acts[p->nacts++].act = a;
	a->a.type = type;
	return a;
}

bool imexd_peers_next(struct imexd_peers *p, struct imexd_peers_action *out)
{
	struct act *a;

	if (p->next_act >= p->nacts)
		return false;
	a = p->acts[p->next_act++].act;
	*out = a->a;
	/* The strings live in the entry, which stays until the next event. */
	out->name = a->name[0] ? a->name : NULL;
	out->addr = a->addr[0] ? a->addr : NULL;
	out->uuid = out->type == IMEXD_PEERS_PEER_UP ? a->uuid : NULL;
	out->frame = a->frame;
	out->text = a->text;
	return true;
}

void peers_log(struct imexd_peers *p, int level, const char *fmt, ...)
{
	struct act *a;
	va_list ap;
	char *text;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	a = peers_act_push(p, IMEXD_PEERS_LOG);
	if (!a) {
		free(text);
		return;
	}
	a->a.level = level;
	a->text = text;
}

/* The host part of "host:port" / "[v6]:port" (its length). */
size_t peers_host_len(const char *addr)
{
	const char *colon = strrchr(addr, ':');

	return colon ? (size_t)(colon - addr) : strlen(addr);
}

/*
 * Charge one line to the host @addr[0..@hl): true while it has had fewer
 * than IMEXD_PEERS_LOG_PER_HOST this minute.  The one past says so.  A host
 * not in the full table takes the entry whose minute is over, if any.
 */
static bool host_budget(struct imexd_peers *p, uint64_t now, const char *addr,
			size_t hl)
{
	struct loghost *h = NULL;
	size_t i, oldest = 0;

	for (i = 0; i < p->nloghosts; i++) {
		struct loghost *e = &p->loghosts[i];

		if (strlen(e->host) == hl && !memcmp(e->host, addr, hl)) {
			h = e;
			break;
		}
		if (e->start < p->loghosts[oldest].start)
			oldest = i;
	}
	if (!h) {
		if (p->nloghosts < IMEXD_PEERS_LOG_HOSTS)
			oldest = p->nloghosts++;
		else if (now - p->loghosts[oldest].start < LOG_EVERY_MS)
			return false;
		h = &p->loghosts[oldest];
		memcpy(h->host, addr, hl);
		h->host[hl] = '\0';
		h->start = now;
		h->count = 0;
	}
	if (now - h->start >= LOG_EVERY_MS) {
		h->start = now;
		h->count = 0;
	}
	if (h->count > IMEXD_PEERS_LOG_PER_HOST)
		return false;
	if (++h->count <= IMEXD_PEERS_LOG_PER_HOST)
		return true;
	peers_log(p, LOG_WARNING, "more refused connections from %s: not logged for up to a minute",
		  h->host);
	return false;
}

/*
 * May a line of @kind about (@addr's host, @name) be logged now?  Once a
 * minute per key, within the host's budget; the tables are bounded, the
 * key table's oldest entry reused.
 */
bool peers_log_ok(struct imexd_peers *p, uint64_t now, const char *kind,
			 const char *addr, const char *name)
{
	size_t hl = peers_host_len(addr), i, oldest = 0;
	struct logkey *k;

	if (hl > IMEXD_ADDR_MAX)
		hl = IMEXD_ADDR_MAX;
	for (i = 0; i < p->nlogkeys; i++) {
		k = &p->logkeys[i];
		if (!strcmp(k->kind, kind) && !strcmp(k->name, name) &&
		    strlen(k->host) == hl && !memcmp(k->host, addr, hl)) {
			if (now - k->last < LOG_EVERY_MS)
				return false;
			k->last = now;
			return host_budget(p, now, addr, hl);
		}
		if (k->last < p->logkeys[oldest].last)
			oldest = i;
	}
	if (p->nlogkeys < LOGKEYS_MAX)
		oldest = p->nlogkeys++;
	k = &p->logkeys[oldest];
	snprintf(k->kind, sizeof(k->kind), "%s", kind);
	memcpy(k->host, addr, hl);
	k->host[hl] = '\0';
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->last = now;
	return host_budget(p, now, addr, hl);
}

/* ---- tables --------------------------------------------------------------- */

/* Any entry, removed ones too. */
int peers_slot(const struct imexd_peers *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->npeers; i++)
		if (!strcmp(p->peers[i].name, name))
			return (int)i;
	return -1;
}

int peers_find(const struct imexd_peers *p, const char *name)
{
	int i = peers_slot(p, name);

	return i >= 0 && !p->peers[i].gone ? i : -1;
}

struct conn *peers_conn_find(struct imexd_peers *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->nconns; i++)
		if (p->conns[i].id == id)
			return &p->conns[i];
	return NULL;
}

/* Forget @c (no action). */
void peers_conn_forget(struct imexd_peers *p, struct conn *c)
{
	size_t i = (size_t)(c - p->conns);

	memmove(&p->conns[i], &p->conns[i + 1],
		(p->nconns - i - 1) * sizeof(*c));
	p->nconns--;
}

void peers_emit_close(struct imexd_peers *p, uint64_t id)
{
	struct act *a = peers_act_push(p, IMEXD_PEERS_CLOSE);

	if (a)
		a->a.conn = id;
}

void peers_emit_name_why(struct imexd_peers *p, enum imexd_peers_action_type t,
			 const struct peer *pe, uint64_t conn,
			 const char *fmt, ...)
{
	struct act *a = peers_act_push(p, t);
	va_list ap;
	int n;

	if (!a)
		return;
	a->a.conn = conn;
	peers_name_copy(a->name, pe->name);
	va_start(ap, fmt);
	n = vasprintf(&a->text, fmt, ap);
	va_end(ap);
	if (n < 0)
		a->text = NULL;	/* the action goes without its words */
}

/* The next dial of @pe after a failure: capped exponential backoff. */
static void schedule_dial(struct imexd_peers *p, struct peer *pe, uint64_t now,
			  uint32_t delay)
{
	uint64_t next = (uint64_t)pe->backoff * 2;

	pe->connecting = false;
	pe->connect_at = pe->gone || pe->learnt ? NO_TIME : now + delay;
	pe->backoff = next > p->backoff_max ? p->backoff_max : (uint32_t)next;
}

void peers_dial_failed(struct imexd_peers *p, struct peer *pe, uint64_t now)
{
	schedule_dial(p, pe, now, pe->backoff);
}

/* Dial @pe again later if it has no connection and no dial under way. */
static void redial(struct imexd_peers *p, struct peer *pe, uint64_t now)
{
	if (!pe->conn && !pe->connecting)
		peers_dial_failed(p, pe, now);
}

/*
 * @c ends (closed here when @close, else already gone): what it meant for
 * its peer (PEER_DOWN if it was bound; a dial it carried is over).  @c is
 * invalid afterwards.
 */
void peers_conn_end(struct imexd_peers *p, struct conn *c, uint64_t now,
			   bool close)
{
	int bound = c->peer, dialled = c->dialled;
	uint64_t id = c->id;

	if (close)
		peers_emit_close(p, id);
	peers_conn_forget(p, c);
	if (bound >= 0 && p->peers[bound].conn == id) {
		p->peers[bound].conn = 0;
		peers_emit_name_why(p, IMEXD_PEERS_PEER_DOWN, &p->peers[bound], id,
				    "%s", close ? "connection closed by this node" :
						  "connection closed by the peer");
	} else {
		bound = -1;
	}
	if (dialled >= 0)
		p->peers[dialled].connecting = false;
	if (bound >= 0 && bound != dialled)
		redial(p, &p->peers[bound], now);
	if (dialled >= 0)
		redial(p, &p->peers[dialled], now);
}

/* ---- lifetime ------------------------------------------------------------- */

/*
 * "" -> name:port, "host" -> host:port, "v6::addr" -> "[v6::addr]:port",
 * "[v6]" -> "[v6]:port"; false when the result does not fit.
 */
bool peers_addr_normalize(const char *in, const char *name, uint16_t port,
				 char *out, size_t len)
{
	const char *colon = strrchr(in, ':');
	int n;

	if (!in[0])
		n = snprintf(out, len, "%s:%u", name, port);
	else if (in[0] == '[' ? !strstr(in, "]:") : !colon)
		n = snprintf(out, len, "%s:%u", in, port);
	else if (in[0] != '[' && strchr(in, ':') != colon)
		n = snprintf(out, len, "[%s]:%u", in, port);
	else
		n = snprintf(out, len, "%s", in);
	return n > 0 && (size_t)n < len;
}

static bool addr_ok(const char *a)
{
	size_t n = strnlen(a, IMEXD_ADDR_MAX + 1), i;

	if (n > IMEXD_ADDR_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (a[i] <= ' ' || a[i] > '~')
			return false;
	return true;
}

int imexd_peers_new(const struct imexd_peers_config *cfg,
		    struct imexd_peers **out)
{
	uint16_t port;
	struct imexd_peers *p;
	size_t i, j;

	if (!cfg || !out || !imexd_name_valid(cfg->self) || !cfg->epoch ||
	    (cfg->n_roster && !cfg->roster))
		return -EINVAL;
	for (i = 0; i < cfg->n_roster; i++) {
		const struct imexd_roster_node *r = &cfg->roster[i];

		if (!imexd_name_valid(r->name) || !addr_ok(r->addr))
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (!strcmp(cfg->roster[j].name, r->name))
				return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (cfg->n_roster) {
		p->peers = calloc(cfg->n_roster, sizeof(*p->peers));
		if (!p->peers) {
			free(p);
			return -ENOMEM;
		}
		p->cap_peers = cfg->n_roster;
	}
	p->default_port = cfg->default_port ? cfg->default_port :
			  IMEXD_DEFAULT_PORT;
	snprintf(p->self, sizeof(p->self), "%s", cfg->self);
	memcpy(p->self_uuid, cfg->self_uuid, 16);
	p->epoch = cfg->epoch;
	p->backoff_min = cfg->backoff_min_ms ? cfg->backoff_min_ms : BACKOFF_MIN_MS;
	p->backoff_max = cfg->backoff_max_ms ? cfg->backoff_max_ms : BACKOFF_MAX_MS;
	if (p->backoff_max < p->backoff_min)
		p->backoff_max = p->backoff_min;
	p->hello_timeout = cfg->hello_timeout_ms ? cfg->hello_timeout_ms :
			   HELLO_TIMEOUT_MS;
	p->max_channels = cfg->max_channels;
	memcpy(p->fabric_uuid, cfg->fabric_uuid, 16);
	p->partition = cfg->partition;
	port = cfg->default_port ? cfg->default_port : IMEXD_DEFAULT_PORT;
	for (i = 0; i < cfg->n_roster; i++) {
		const struct imexd_roster_node *r = &cfg->roster[i];
		struct peer *pe;

		if (!strcmp(r->name, p->self))
			continue;
		pe = &p->peers[p->npeers++];
		snprintf(pe->name, sizeof(pe->name), "%s", r->name);
		if (!peers_addr_normalize(r->addr, r->name, port, pe->addr,
					  sizeof(pe->addr))) {
			imexd_peers_free(p);
			return -EINVAL;
		}
		pe->backoff = p->backoff_min;
		pe->connect_at = NO_TIME;
	}
	*out = p;
	return 0;
}

void imexd_peers_free(struct imexd_peers *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nacts; i++)
		act_release(p->acts[i].act);
	free(p->acts);
	free(p->conns);
	free(p->peers);
	free(p);
}

/* ---- dialling -------------------------------------------------------------- */

void peers_dial_due(struct imexd_peers *p, uint64_t now)
{
	size_t i;

	if (!p->started || p->shutting_down)
		return;
	for (i = 0; i < p->npeers; i++) {
		struct peer *pe = &p->peers[i];
		struct act *a;

		if (pe->gone || pe->learnt || pe->conn || pe->connecting ||
		    now < pe->connect_at)
			continue;
		a = peers_act_push(p, IMEXD_PEERS_CONNECT);
		if (!a)
			return;		/* retried at the next timer */
		snprintf(a->addr, sizeof(a->addr), "%s", pe->addr);
		pe->connecting = true;
	}
}

void imexd_peers_start(struct imexd_peers *p, uint64_t now)
{
	size_t i;

	peers_acts_gc(p);
	if (p->started || p->shutting_down)
		return;
	p->started = true;
	for (i = 0; i < p->npeers; i++)
		if (!p->peers[i].gone && !p->peers[i].learnt)
			p->peers[i].connect_at = now;
	peers_dial_due(p, now);
}

void imexd_peers_conn_failed(struct imexd_peers *p, uint64_t now,
			     const char *addr)
{
	size_t i;

	peers_acts_gc(p);
	for (i = 0; i < p->npeers; i++) {
		struct peer *pe = &p->peers[i];

		if (pe->connecting && addr && !strcmp(pe->addr, addr)) {
			if (pe->conn)
				pe->connecting = false;
			else
				peers_dial_failed(p, pe, now);
		}
	}
}

/* ---- time ----------------------------------------------------------------- */

void imexd_peers_timer(struct imexd_peers *p, uint64_t now)
{
	size_t i = 0;

	peers_acts_gc(p);
	while (i < p->nconns) {
		struct conn *c = &p->conns[i];

		if (c->peer < 0 && now - c->since >= p->hello_timeout) {
			plog_limited(p, now, "timeout", c->addr, "", LOG_WARNING,
				     "connection %s %s: no %s within %u ms; closing it",
				     c->outbound ? "to" : "from", c->addr,
				     c->outbound ? "HELLO_ACK" : "HELLO",
				     p->hello_timeout);
			peers_conn_end(p, c, now, true);
			continue;
		}
		i++;
	}
	peers_dial_due(p, now);
}

uint64_t imexd_peers_deadline(const struct imexd_peers *p)
{
	uint64_t t = NO_TIME;
	size_t i;

	for (i = 0; i < p->nconns; i++) {
		const struct conn *c = &p->conns[i];

		if (c->peer < 0 && c->since + p->hello_timeout < t)
			t = c->since + p->hello_timeout;
	}
	if (!p->started || p->shutting_down)
		return t;
	for (i = 0; i < p->npeers; i++) {
		const struct peer *pe = &p->peers[i];

		if (!pe->conn && !pe->connecting && pe->connect_at < t)
			t = pe->connect_at;
	}
	return t;
}

void imexd_peers_shutdown(struct imexd_peers *p, uint64_t now)
{
	struct imexd_msg m;
	size_t i;

	(void)now;
	peers_acts_gc(p);
	if (p->shutting_down)
		return;
	p->shutting_down = true;
	for (i = 0; i < p->nconns; i++) {
		if (p->conns[i].peer < 0)
			continue;
		memset(&m, 0, sizeof(m));
		m.type = IMEXD_MSG_LEAVE;
		m.u.leave.reason = IMEXD_LEAVE_SHUTDOWN;
		peers_send_msg(p, p->conns[i].id, &m);
	}
}
