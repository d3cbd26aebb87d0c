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
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "peers.h"

#define BACKOFF_MIN_MS		500
#define BACKOFF_MAX_MS		3000
#define HELLO_TIMEOUT_MS	5000
#define LOG_EVERY_MS		60000
#define LOGKEYS_MAX		128
#define NO_TIME			UINT64_MAX

#define LOG_ERR			3
#define LOG_WARNING		4
#define LOG_INFO		6
#define LOG_DEBUG		7

struct peer {
	char name[IMEX_NAME_MAX];
	char addr[IMEXD_ADDR_MAX + 1];	/* what CONNECT dials */
	uint64_t conn;			/* the bound connection, 0 if none */
	bool known;			/* an instance was bound before */
	uint8_t uuid[16];		/* that instance */
	uint64_t epoch;
	bool connecting;		/* a CONNECT is outstanding */
	uint64_t connect_at;		/* next dial, when neither */
	uint32_t backoff;		/* the delay after the next failure */
	bool gone;			/* removed from the group: not a peer */
	bool learnt;			/* known by its HELLO only: not dialled */
	uint64_t group;			/* the bound instance's group id */
};

struct conn {
	uint64_t id;
	char addr[IMEXD_ADDR_MAX + 1];	/* connect string, or peer "ip:port" */
	bool outbound;
	int dialled;			/* outbound: the peer dialled, or -1 */
	int peer;			/* bound: the peer, else -1 */
	uint64_t since;			/* conn_up time (hello timeout) */
	bool has_auth;
	struct imexd_peers_auth auth;
};

struct logkey {
	char kind[16];
	char host[IMEXD_ADDR_MAX + 1];
	char name[IMEX_NAME_MAX];
	uint64_t last;
};

/* The refusal lines about one host in the minute from @start. */
struct loghost {
	char host[IMEXD_ADDR_MAX + 1];
	uint64_t start;
	unsigned count;
};

struct act {
	struct imexd_peers_action a;
	char name[IMEX_NAME_MAX];
	char addr[IMEXD_ADDR_MAX + 1];
	uint8_t uuid[16];
	uint8_t *frame;			/* owned */
	char *text;			/* owned */
};

struct act_ref {
	struct act *act;
};

struct imexd_peers {
	char self[IMEX_NAME_MAX];
	uint8_t self_uuid[16];
	uint64_t epoch;
	uint32_t backoff_min, backoff_max, hello_timeout;
	uint32_t max_channels;
	uint8_t fabric_uuid[16];
	uint32_t partition;
	uint64_t group;			/* this node's Raft group id, 0: none */
	uint64_t claims_refused;	/* HELLOs its certificate did not back */
	bool started, shutting_down;

	struct peer *peers;
	size_t npeers, cap_peers;
	uint16_t default_port;

	struct conn *conns;
	size_t nconns, cap_conns;

	struct logkey logkeys[LOGKEYS_MAX];
	size_t nlogkeys;
	struct loghost loghosts[IMEXD_PEERS_LOG_HOSTS];
	size_t nloghosts;

	struct act_ref *acts;		/* each apart: pointers survive growth */
	size_t nacts, cap_acts, next_act;
};

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
static void acts_gc(struct imexd_peers *p)
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
static void name_copy(char dst[IMEX_NAME_MAX], const char *src)
{
	size_t n = strnlen(src, IMEX_NAME_MAX - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A new zeroed action, or NULL when out of memory (the event is dropped). */
static struct act *act_push(struct imexd_peers *p,
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

static void plog(struct imexd_peers *p, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void plog(struct imexd_peers *p, int level, const char *fmt, ...)
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
	a = act_push(p, IMEXD_PEERS_LOG);
	if (!a) {
		free(text);
		return;
	}
	a->a.level = level;
	a->text = text;
}

/* The host part of "host:port" / "[v6]:port" (its length). */
static size_t host_len(const char *addr)
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
	plog(p, LOG_WARNING, "more refused connections from %s: not logged for up to a minute",
	     h->host);
	return false;
}

/*
 * May a line of @kind about (@addr's host, @name) be logged now?  Once a
 * minute per key, within the host's budget; the tables are bounded, the
 * key table's oldest entry reused.
 */
static bool log_ok(struct imexd_peers *p, uint64_t now, const char *kind,
		   const char *addr, const char *name)
{
	size_t hl = host_len(addr), i, oldest = 0;
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

#define plog_limited(p, now, kind, addr, name, level, ...) do {		\
		if (log_ok(p, now, kind, addr, name))			\
			plog(p, level, __VA_ARGS__);			\
	} while (0)

/* ---- tables --------------------------------------------------------------- */

/* Any entry, removed ones too. */
static int peer_slot(const struct imexd_peers *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->npeers; i++)
		if (!strcmp(p->peers[i].name, name))
			return (int)i;
	return -1;
}

static int peer_find(const struct imexd_peers *p, const char *name)
{
	int i = peer_slot(p, name);

	return i >= 0 && !p->peers[i].gone ? i : -1;
}

static struct conn *conn_find(struct imexd_peers *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->nconns; i++)
		if (p->conns[i].id == id)
			return &p->conns[i];
	return NULL;
}

/* Forget @c (no action). */
static void conn_forget(struct imexd_peers *p, struct conn *c)
{
	size_t i = (size_t)(c - p->conns);

	memmove(&p->conns[i], &p->conns[i + 1],
		(p->nconns - i - 1) * sizeof(*c));
	p->nconns--;
}

static void emit_close(struct imexd_peers *p, uint64_t id)
{
	struct act *a = act_push(p, IMEXD_PEERS_CLOSE);

	if (a)
		a->a.conn = id;
}

/* An action about peer @pe, with the words health shows for it (text). */
static void emit_name_why(struct imexd_peers *p, enum imexd_peers_action_type t,
			  const struct peer *pe, uint64_t conn,
			  const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void emit_name_why(struct imexd_peers *p, enum imexd_peers_action_type t,
			  const struct peer *pe, uint64_t conn,
			  const char *fmt, ...)
{
	struct act *a = act_push(p, t);
	va_list ap;
	int n;

	if (!a)
		return;
	a->a.conn = conn;
	name_copy(a->name, pe->name);
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

static void dial_failed(struct imexd_peers *p, struct peer *pe, uint64_t now)
{
	schedule_dial(p, pe, now, pe->backoff);
}

/* Dial @pe again later if it has no connection and no dial under way. */
static void redial(struct imexd_peers *p, struct peer *pe, uint64_t now)
{
	if (!pe->conn && !pe->connecting)
		dial_failed(p, pe, now);
}

/*
 * @c ends (closed here when @close, else already gone): what it meant for
 * its peer (PEER_DOWN if it was bound; a dial it carried is over).  @c is
 * invalid afterwards.
 */
static void conn_end(struct imexd_peers *p, struct conn *c, uint64_t now,
		     bool close)
{
	int bound = c->peer, dialled = c->dialled;
	uint64_t id = c->id;

	if (close)
		emit_close(p, id);
	conn_forget(p, c);
	if (bound >= 0 && p->peers[bound].conn == id) {
		p->peers[bound].conn = 0;
		emit_name_why(p, IMEXD_PEERS_PEER_DOWN, &p->peers[bound], id,
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
static bool addr_normalize(const char *in, const char *name, uint16_t port,
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
		if (!addr_normalize(r->addr, r->name, port, pe->addr,
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

static void dial_due(struct imexd_peers *p, uint64_t now)
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
		a = act_push(p, IMEXD_PEERS_CONNECT);
		if (!a)
			return;		/* retried at the next timer */
		snprintf(a->addr, sizeof(a->addr), "%s", pe->addr);
		pe->connecting = true;
	}
}

void imexd_peers_start(struct imexd_peers *p, uint64_t now)
{
	size_t i;

	acts_gc(p);
	if (p->started || p->shutting_down)
		return;
	p->started = true;
	for (i = 0; i < p->npeers; i++)
		if (!p->peers[i].gone && !p->peers[i].learnt)
			p->peers[i].connect_at = now;
	dial_due(p, now);
}

void imexd_peers_conn_failed(struct imexd_peers *p, uint64_t now,
			     const char *addr)
{
	size_t i;

	acts_gc(p);
	for (i = 0; i < p->npeers; i++) {
		struct peer *pe = &p->peers[i];

		if (pe->connecting && addr && !strcmp(pe->addr, addr)) {
			if (pe->conn)
				pe->connecting = false;
			else
				dial_failed(p, pe, now);
		}
	}
}

/* ---- connections ----------------------------------------------------------- */

static int send_msg(struct imexd_peers *p, uint64_t conn, struct imexd_msg *m)
{
	struct act *a;
	uint8_t *f;
	size_t len;
	int r;

	memcpy(m->sender_uuid, p->self_uuid, 16);
	m->sender_epoch = p->epoch;
	r = imexd_msg_encode(m, &f, &len);
	if (r)
		return r;
	a = act_push(p, IMEXD_PEERS_SEND);
	if (!a) {
		free(f);
		return -ENOMEM;
	}
	a->a.conn = conn;
	a->frame = f;
	a->a.len = len;
	return 0;
}

static int send_hello(struct imexd_peers *p, uint64_t conn, uint8_t type)
{
	struct imexd_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.u.hello.proto_min = IMEXD_PROTO_VERSION;
	m.u.hello.proto_max = IMEXD_PROTO_VERSION;
	snprintf(m.u.hello.node_name, sizeof(m.u.hello.node_name), "%s",
		 p->self);
	m.u.hello.max_channels = p->max_channels;
	memcpy(m.u.hello.fabric_uuid, p->fabric_uuid, 16);
	m.u.hello.partition = p->partition;
	m.u.hello.group = p->group;
	return send_msg(p, conn, &m);
}

/* Inbound connections waiting for HELLO: from @addr's host, and in all. */
static void count_unbound(const struct imexd_peers *p, const char *addr,
			  unsigned *host, unsigned *all)
{
	size_t hl = host_len(addr), i;

	*host = 0;
	*all = 0;
	for (i = 0; i < p->nconns; i++) {
		const struct conn *c = &p->conns[i];

		if (c->outbound || c->peer >= 0)
			continue;
		(*all)++;
		if (host_len(c->addr) == hl && !memcmp(c->addr, addr, hl))
			(*host)++;
	}
}

/* Has the dial of peer @i come up already?  (Two peers at one address.) */
static bool dial_has_conn(const struct imexd_peers *p, size_t i)
{
	size_t j;

	for (j = 0; j < p->nconns; j++)
		if (p->conns[j].dialled == (int)i && p->conns[j].peer < 0)
			return true;
	return false;
}

void imexd_peers_conn_up(struct imexd_peers *p, uint64_t now, uint64_t conn,
			 const char *addr, bool outbound,
			 const struct imexd_peers_auth *auth)
{
	unsigned host, all;
	struct conn *c;
	int dialled = -1;
	size_t i;

	acts_gc(p);
	if (!addr)
		addr = "";
	if (p->shutting_down || !conn || conn_find(p, conn)) {
		emit_close(p, conn);
		return;
	}
	if (outbound) {
		for (i = 0; i < p->npeers; i++)
			if (p->peers[i].connecting && !dial_has_conn(p, i) &&
			    !strcmp(p->peers[i].addr, addr)) {
				dialled = (int)i;
				break;
			}
		if (dialled < 0) {	/* nothing here dialled it */
			emit_close(p, conn);
			return;
		}
	} else {
		count_unbound(p, addr, &host, &all);
		if (host >= IMEXD_PEERS_UNBOUND_PER_HOST ||
		    all >= IMEXD_PEERS_UNBOUND_MAX) {
			plog_limited(p, now, "unbound", addr, "", LOG_WARNING,
				     "refusing connection from %s: %u connections from that host and %u in all have not said HELLO (at most %u and %u)",
				     addr, host, all, IMEXD_PEERS_UNBOUND_PER_HOST,
				     IMEXD_PEERS_UNBOUND_MAX);
			emit_close(p, conn);
			return;
		}
	}
	if (imexd_grow((void **)&p->conns, &p->cap_conns, p->nconns + 1,
		       sizeof(*p->conns))) {
		plog(p, LOG_ERR, "out of memory for connection %s %s: closing it",
		     outbound ? "to" : "from", addr);
		emit_close(p, conn);
		if (dialled >= 0)
			dial_failed(p, &p->peers[dialled], now);
		return;
	}
	c = &p->conns[p->nconns++];
	memset(c, 0, sizeof(*c));
	c->id = conn;
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	c->outbound = outbound;
	c->dialled = dialled;
	c->peer = -1;
	c->since = now;
	if (auth) {
		c->has_auth = true;
		c->auth = *auth;
		if (c->auth.n_names > IMEXD_PEERS_CERT_NAMES_MAX)
			c->auth.n_names = IMEXD_PEERS_CERT_NAMES_MAX;
	}
	/* The dialling side speaks first. */
	if (outbound && send_hello(p, conn, IMEXD_MSG_HELLO)) {
		plog(p, LOG_ERR, "cannot send HELLO to %s: closing the connection",
		     addr);
		conn_end(p, c, now, true);
	}
}

void imexd_peers_conn_down(struct imexd_peers *p, uint64_t now, uint64_t conn)
{
	struct conn *c;

	acts_gc(p);
	c = conn_find(p, conn);
	if (c)
		conn_end(p, c, now, false);
}

/* Does the verified certificate of @c carry @name?  (No TLS: yes.) */
static bool cert_names(const struct conn *c, const char *name)
{
	unsigned i;

	if (!c->has_auth || !c->auth.tls)
		return true;
	for (i = 0; i < c->auth.n_names; i++)
		if (!strncmp(c->auth.names[i], name, IMEX_NAME_MAX))
			return true;
	return false;
}

/*
 * Is @c the node its HELLO names (its certificate was checked to carry the
 * name)?  With TLS, yes; without, only a connection this node dialled to
 * the node list's address of it: an inbound claim is anyone's.  Only a
 * proven one may change how that member is shown.
 */
static bool proven(const struct conn *c)
{
	return (c->has_auth && c->auth.tls) || c->outbound;
}

/* "'x', 'y'" for the log, or "no node name". */
static void cert_list(const struct conn *c, char *buf, size_t len)
{
	size_t off = 0;
	unsigned i;

	buf[0] = '\0';
	if (!c->auth.n_names) {
		snprintf(buf, len, "no node name");
		return;
	}
	for (i = 0; i < c->auth.n_names && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s'%.*s'",
				 i ? ", " : "", IMEX_NAME_MAX - 1,
				 c->auth.names[i]);

		if (n < 0)
			break;
		off += (size_t)n;
	}
}

/*
 * Which of two bound connections to one peer instance survives: the one
 * opened by the node with the smaller name.  Both ends apply the same
 * rule, so they keep the same connection without talking about it.  Two
 * opened by the same node: that node gave up on the older one, keep the
 * newer.
 */
static bool keep_new(const struct imexd_peers *p, const struct conn *old,
		     const struct conn *new, const char *peer)
{
	const char *old_opener = old->outbound ? p->self : peer;
	const char *new_opener = new->outbound ? p->self : peer;

	if (!strcmp(old_opener, new_opener))
		return true;
	return strcmp(new_opener, old_opener) < 0;
}

static void peer_up(struct imexd_peers *p, struct peer *pe, uint64_t conn,
		    const struct imexd_msg *hello, bool restarted,
		    bool replaced)
{
	struct act *a = act_push(p, IMEXD_PEERS_PEER_UP);

	if (!a)
		return;
	a->a.conn = conn;
	name_copy(a->name, pe->name);
	a->a.epoch = hello->sender_epoch;
	memcpy(a->uuid, hello->sender_uuid, 16);
	a->a.restarted = restarted;
	a->a.replaced = replaced;
	a->a.msg = hello;
}

/*
 * Node @name's HELLO names another Raft group: its log began with another
 * bootstrap entry (a NODES_FILE whose names differed from the group's
 * first one at its first start), which Raft cannot tell from ours at
 * (term 1, index 1).
 */
static void group_refused(struct imexd_peers *p, uint64_t now,
			  const struct conn *c, const char *name, uint64_t group)
{
	plog_limited(p, now, "group", c->addr, name, LOG_ERR,
		     "node '%s' (%s) is in another group (group id %016llx, this node's %016llx): one of the two first started with a NODES_FILE other than the group's first one; refused: give every node the group's first NODES_FILE (the names it first started with; addresses may differ), then move STATE_DIRECTORY/raft away on the nodes of the wrong group and restart them (they catch up from the group)",
		     name, c->addr, (unsigned long long)group,
		     (unsigned long long)p->group);
}

/* A name no configuration here named (so none removed). */
static bool learnable(const struct imexd_peers *p, const char *name)
{
	int i = peer_slot(p, name);

	return i < 0 || p->peers[i].learnt;
}

/*
 * Inbound @c says it is node @name, which is no peer here, and names our
 * group: a node joined while this one was away, leading or catching us up
 * before our log holds its join.  It becomes a peer that is not dialled
 * (it dials us) until the configuration adds it.  A name the
 * configuration removed stays refused.  -1: not learnt (logged).
 */
static int peer_learn(struct imexd_peers *p, uint64_t now,
		      const struct conn *c, const char *name)
{
	struct peer *pe;
	int i = peer_slot(p, name);

	if (i < 0) {
		if (p->npeers >= IMEXD_PEERS_MAX) {
			plog_limited(p, now, "learn", c->addr, name, LOG_WARNING,
				     "peer %s says it is node '%s' of this group, but this node holds %u node names already; refused",
				     c->addr, name, IMEXD_PEERS_MAX);
			return -1;
		}
		if (imexd_grow((void **)&p->peers, &p->cap_peers,
			       p->npeers + 1, sizeof(*p->peers))) {
			plog(p, LOG_ERR, "out of memory for node '%s' (%s): closing its connection",
			     name, c->addr);
			return -1;
		}
		i = (int)p->npeers++;
		pe = &p->peers[i];
		memset(pe, 0, sizeof(*pe));
		snprintf(pe->name, sizeof(pe->name), "%s", name);
		pe->backoff = p->backoff_min;
	}
	pe = &p->peers[i];
	pe->gone = false;
	pe->learnt = true;
	pe->connect_at = NO_TIME;
	plog_limited(p, now, "learnt", c->addr, name, LOG_INFO,
		     "node '%s' (%s) is of this group but not in the configuration this node knows yet (it joined while this node was away): taken as a peer",
		     name, c->addr);
	return i;
}

/*
 * A refusal that retrying soon will not change (protocol, group): an
 * inbound peer gets our HELLO_ACK first so that it can say the same, and
 * our own dial waits the longest backoff.
 */
static void refuse_for_long(struct imexd_peers *p, uint64_t now,
			    struct conn *c, struct peer *pe)
{
	bool outbound = c->outbound;

	if (!outbound)
		send_hello(p, c->id, IMEXD_MSG_HELLO_ACK);
	conn_end(p, c, now, true);
	if (outbound && !pe->conn && !pe->connecting)
		pe->connect_at = now + p->backoff_max;
}

/* A HELLO (inbound) or HELLO_ACK (outbound) on unbound @c. */
static void hello_bind(struct imexd_peers *p, uint64_t now, struct conn *c,
		       const struct imexd_msg *m)
{
	const char *name = m->u.hello.node_name;
	uint64_t id = c->id;
	bool restarted = false, replaced = false, learn;
	struct peer *pe;
	struct conn *old;
	char certs[IMEXD_PEERS_CERT_NAMES_MAX * (IMEX_NAME_MAX + 4)];
	int q;

	if (!strcmp(name, p->self)) {
		plog_limited(p, now, "self", c->addr, name, LOG_WARNING,
			     "peer %s says it is this node ('%s'); refused: check the node list and addresses",
			     c->addr, name);
		conn_end(p, c, now, true);
		return;
	}
	q = peer_find(p, name);
	/* Unknown but of our group (its id is a hash of our first entry). */
	learn = q < 0 && !c->outbound && p->group &&
		m->u.hello.group == p->group &&
		learnable(p, name);
	if (q < 0 && !learn) {
		plog_limited(p, now, "roster", c->addr, name, LOG_WARNING,
			     "peer %s says it is node '%s', which is not in the node list; refused",
			     c->addr, name);
		conn_end(p, c, now, true);
		return;
	}
	if (!cert_names(c, name)) {
		cert_list(c, certs, sizeof(certs));
		plog_limited(p, now, "cert", c->addr, name, LOG_WARNING,
			     "peer %s claims to be '%s' but its certificate names %s; refused",
			     c->addr, name, certs);
		/* Someone else's certificate: the member claimed stays as is. */
		p->claims_refused++;
		conn_end(p, c, now, true);
		return;
	}
	if (learn) {
		q = peer_learn(p, now, c, name);
		if (q < 0) {
			conn_end(p, c, now, true);
			return;
		}
	}
	if (c->outbound && c->dialled != q) {
		plog_limited(p, now, "node-map", c->addr, name, LOG_ERR,
			     "node-map mismatch: %s is node '%s''s address, but node '%s' answered there; refused: fix the node list",
			     c->addr, p->peers[c->dialled].name, name);
		conn_end(p, c, now, true);
		return;
	}
	pe = &p->peers[q];
	if (m->u.hello.proto_max < IMEXD_PROTO_VERSION ||
	    m->u.hello.proto_min > IMEXD_PROTO_VERSION) {
		plog_limited(p, now, "version", c->addr, name, LOG_ERR,
			     "node '%s' (%s) speaks protocol %u..%u, this node %u: upgrade one of them",
			     name, c->addr, m->u.hello.proto_min,
			     m->u.hello.proto_max, IMEXD_PROTO_VERSION);
		if (proven(c))
			emit_name_why(p, IMEXD_PEERS_PEER_VERSION, pe, id,
				      "it speaks protocol %u..%u, this node %u",
				      m->u.hello.proto_min, m->u.hello.proto_max,
				      IMEXD_PROTO_VERSION);
		refuse_for_long(p, now, c, pe);
		return;
	}

	if (p->group && m->u.hello.group && m->u.hello.group != p->group) {
		group_refused(p, now, c, name, m->u.hello.group);
		if (proven(c))
			emit_name_why(p, IMEXD_PEERS_PEER_REFUSED, pe, id,
				      "identity: it is in another group (group id %016llx, this node's %016llx): see its log",
				      (unsigned long long)m->u.hello.group,
				      (unsigned long long)p->group);
		refuse_for_long(p, now, c, pe);
		return;
	}

	/* A new instance: whatever was bound belongs to the old one. */
	if (pe->known && (pe->epoch != m->sender_epoch ||
			  memcmp(pe->uuid, m->sender_uuid, 16))) {
		plog(p, LOG_INFO, "node '%s' restarted (instance %016llx, was %016llx)",
		     name, (unsigned long long)m->sender_epoch,
		     (unsigned long long)pe->epoch);
		restarted = true;
		old = pe->conn ? conn_find(p, pe->conn) : NULL;
		if (old) {
			conn_end(p, old, now, true);
			c = conn_find(p, id);
		}
	} else if (pe->conn) {
		old = conn_find(p, pe->conn);
		if (old && !keep_new(p, old, c, name)) {
			plog(p, LOG_DEBUG,
			     "second connection with node '%s' closed: the one opened by '%s' stays",
			     name, old->outbound ? p->self : name);
			conn_end(p, c, now, true);
			return;
		}
		if (old) {
			/*
			 * Replaced, not lost: no PEER_DOWN, no redial.  But
			 * the peer may have closed it already (it bound the
			 * winner first): what was sent on it may be lost.
			 */
			replaced = true;
			old->peer = -1;
			old->dialled = -1;
			pe->conn = 0;
			emit_close(p, old->id);
			conn_forget(p, old);
			c = conn_find(p, id);
		}
	}
	if (!c->outbound && send_hello(p, id, IMEXD_MSG_HELLO_ACK)) {
		plog(p, LOG_ERR, "cannot answer HELLO from node '%s': closing the connection",
		     name);
		conn_end(p, c, now, true);
		return;
	}
	c->peer = q;
	pe->conn = id;
	pe->known = true;
	memcpy(pe->uuid, m->sender_uuid, 16);
	pe->epoch = m->sender_epoch;
	pe->group = m->u.hello.group;
	pe->backoff = p->backoff_min;
	if (c->dialled == q)
		pe->connecting = false;
	peer_up(p, pe, id, m, restarted, replaced);
}

void imexd_peers_msg(struct imexd_peers *p, uint64_t now, uint64_t conn,
		     const struct imexd_msg *msg)
{
	struct conn *c;
	struct peer *pe;
	struct act *a;
	bool hello;

	acts_gc(p);
	c = conn_find(p, conn);
	if (!c || !msg)
		return;
	hello = msg->type == IMEXD_MSG_HELLO || msg->type == IMEXD_MSG_HELLO_ACK;
	if (hello && (msg->type == IMEXD_MSG_HELLO) == c->outbound) {
		plog_limited(p, now, "direction", c->addr, msg->u.hello.node_name,
			     LOG_WARNING,
			     "%s from %s on a connection %s opened; closing it",
			     imexd_msg_type_name(msg->type), c->addr,
			     c->outbound ? "this node" : "the peer");
		conn_end(p, c, now, true);
		return;
	}
	if (c->peer < 0) {
		if (hello) {
			hello_bind(p, now, c, msg);
			return;
		}
		plog_limited(p, now, "before-hello", c->addr, "", LOG_WARNING,
			     "%s from %s before HELLO: dropped",
			     imexd_msg_type_name(msg->type), c->addr);
		return;
	}
	pe = &p->peers[c->peer];
	if (memcmp(msg->sender_uuid, pe->uuid, 16) ||
	    msg->sender_epoch != pe->epoch) {
		plog_limited(p, now, "instance", c->addr, pe->name, LOG_WARNING,
			     "%s on node '%s''s connection names instance %016llx, not %016llx: closing it",
			     imexd_msg_type_name(msg->type), pe->name,
			     (unsigned long long)msg->sender_epoch,
			     (unsigned long long)pe->epoch);
		conn_end(p, c, now, true);
		return;
	}
	if (hello) {
		if (strcmp(msg->u.hello.node_name, pe->name)) {
			plog_limited(p, now, "rename", c->addr, pe->name,
				     LOG_WARNING,
				     "node '%s' said HELLO again as '%s' on one connection; closing it",
				     pe->name, msg->u.hello.node_name);
			conn_end(p, c, now, true);
		}
		return;
	}
	a = act_push(p, IMEXD_PEERS_MSG);
	if (!a)
		return;
	a->a.conn = conn;
	name_copy(a->name, pe->name);
	a->a.msg = msg;
}

/* ---- time ----------------------------------------------------------------- */

void imexd_peers_timer(struct imexd_peers *p, uint64_t now)
{
	size_t i = 0;

	acts_gc(p);
	while (i < p->nconns) {
		struct conn *c = &p->conns[i];

		if (c->peer < 0 && now - c->since >= p->hello_timeout) {
			plog_limited(p, now, "timeout", c->addr, "", LOG_WARNING,
				     "connection %s %s: no %s within %u ms; closing it",
				     c->outbound ? "to" : "from", c->addr,
				     c->outbound ? "HELLO_ACK" : "HELLO",
				     p->hello_timeout);
			conn_end(p, c, now, true);
			continue;
		}
		i++;
	}
	dial_due(p, now);
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
	acts_gc(p);
	if (p->shutting_down)
		return;
	p->shutting_down = true;
	for (i = 0; i < p->nconns; i++) {
		if (p->conns[i].peer < 0)
			continue;
		memset(&m, 0, sizeof(m));
		m.type = IMEXD_MSG_LEAVE;
		m.u.leave.reason = IMEXD_LEAVE_SHUTDOWN;
		send_msg(p, p->conns[i].id, &m);
	}
}

/* ---- to peers ------------------------------------------------------------- */

int imexd_peers_send(struct imexd_peers *p, const char *name,
		     struct imexd_msg *msg)
{
	int q;

	if (!name || !msg)
		return -EINVAL;
	q = peer_find(p, name);
	if (q < 0 || !p->peers[q].conn)
		return -ENOTCONN;
	return send_msg(p, p->peers[q].conn, msg);
}

bool imexd_peers_connected(const struct imexd_peers *p, const char *name)
{
	return imexd_peers_conn(p, name) != 0;
}

uint64_t imexd_peers_conn(const struct imexd_peers *p, const char *name)
{
	int q = name ? peer_find(p, name) : -1;

	return q < 0 ? 0 : p->peers[q].conn;
}

/* ---- group ------------------------------------------------------------------ */

void imexd_peers_set_group(struct imexd_peers *p, uint64_t now, uint64_t group)
{
	size_t i = 0;

	/* No acts_gc(): the caller may be handling one of our actions. */
	if (group == p->group)
		return;
	p->group = group;
	while (group && i < p->nconns) {
		struct conn *c = &p->conns[i];
		const struct peer *pe = c->peer >= 0 ? &p->peers[c->peer] : NULL;

		if (pe && pe->group && pe->group != group) {
			group_refused(p, now, c, pe->name, pe->group);
			conn_end(p, c, now, true);
			continue;
		}
		i++;
	}
}

uint64_t imexd_peers_group(const struct imexd_peers *p, const char *name)
{
	int q = name ? peer_find(p, name) : -1;

	return q < 0 || !p->peers[q].conn ? 0 : p->peers[q].group;
}

/* ---- membership ------------------------------------------------------------- */

/* A removed peer's place no connection refers to any more, or -1. */
static int reusable_slot(const struct imexd_peers *p)
{
	size_t i, k;

	for (i = 0; i < p->npeers; i++) {
		const struct peer *pe = &p->peers[i];

		if (!pe->gone || pe->conn || pe->connecting)
			continue;
		for (k = 0; k < p->nconns; k++)
			if (p->conns[k].peer == (int)i ||
			    p->conns[k].dialled == (int)i)
				break;
		if (k == p->nconns)
			return (int)i;
	}
	return -1;
}

int imexd_peers_add(struct imexd_peers *p, uint64_t now, const char *name,
		    const char *addr)
{
	char norm[IMEXD_ADDR_MAX + 1];
	struct peer *pe;
	int i;

	/* No acts_gc(): the caller may be handling one of our actions. */
	if (!imexd_name_valid(name) || !strcmp(name, p->self) ||
	    !addr_normalize(addr ? addr : "", name, p->default_port, norm,
			    sizeof(norm)))
		return -EINVAL;
	i = peer_slot(p, name);
	if (i < 0 && (i = reusable_slot(p)) >= 0) {
		pe = &p->peers[i];
		memset(pe, 0, sizeof(*pe));
		snprintf(pe->name, sizeof(pe->name), "%s", name);
		pe->backoff = p->backoff_min;
		pe->gone = true;
	}
	if (i < 0) {
		if (p->npeers >= IMEXD_PEERS_MAX)
			return -ENOSPC;
		if (imexd_grow((void **)&p->peers, &p->cap_peers,
			       p->npeers + 1, sizeof(*p->peers)))
			return -ENOMEM;
		pe = &p->peers[p->npeers++];
		memset(pe, 0, sizeof(*pe));
		snprintf(pe->name, sizeof(pe->name), "%s", name);
		pe->backoff = p->backoff_min;
		pe->gone = true;
	}
	pe = &p->peers[i < 0 ? (int)p->npeers - 1 : i];
	/* A joined node's address: the join's, else the one known. */
	if ((addr && addr[0]) || !pe->addr[0])
		snprintf(pe->addr, sizeof(pe->addr), "%s", norm);
	if (pe->gone || pe->learnt) {
		pe->gone = false;
		pe->learnt = false;
		pe->backoff = p->backoff_min;
		pe->connect_at = p->started ? now : NO_TIME;
		dial_due(p, now);
	}
	return 0;
}

void imexd_peers_remove(struct imexd_peers *p, uint64_t now, const char *name)
{
	int i = peer_find(p, name);
	size_t k;

	if (i < 0)
		return;
	p->peers[i].gone = true;
	p->peers[i].connect_at = NO_TIME;
	for (k = 0; k < p->nconns; k++)
		if (p->conns[k].peer == i) {
			conn_end(p, &p->conns[k], now, true);
			break;
		}
}

size_t imexd_peers_count(const struct imexd_peers *p)
{
	return p->npeers;
}

const char *imexd_peers_name(const struct imexd_peers *p, size_t i)
{
	return i < p->npeers && !p->peers[i].gone ? p->peers[i].name : NULL;
}

uint64_t imexd_peers_claims_refused(const struct imexd_peers *p)
{
	return p->claims_refused;
}
