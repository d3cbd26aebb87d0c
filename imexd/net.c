// SPDX-License-Identifier: GPL-2.0
/*
 * imexd's peer connections: listener, outbound connects, framing, output
 * queues and TLS, on sd-event.  See net.h for the bounds.
 *
 * A connection lives through RESOLVING (outbound, a host name being looked
 * up) → CONNECTING (outbound, TCP handshake) → TLS (the TLS handshake, when
 * on) → UP (reported to the owner) → CLOSING (the owner closed it; what is
 * queued is flushed, bounded by IMEXD_NET_CLOSE_LINGER_MS) → freed.
 *
 * Host names are looked up off the loop (resolve.c); every address found is
 * tried in turn.  Socket helpers are in sock.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include "log.h"
#include "net.h"
#include "peers.h"
#include "resolve.h"
#include "sock.h"
#include "tls.h"

#define FRAME_MAX	((size_t)IMEXD_HEADER_LEN + IMEXD_BODY_MAX)
#define RAFT_FRAME_MAX	((size_t)IMEXD_HEADER_LEN + IMEXD_RAFT_BODY_MAX)
#define IN_INITIAL	(16u << 10)
#define READ_BUDGET	(256u << 10)	/* bytes per connection per wakeup */
#define ACCEPT_BUDGET	32		/* accepts per wakeup */
#define HOST_MAX	256

enum conn_state { C_RESOLVING, C_CONNECTING, C_TLS, C_UP, C_CLOSING };

struct conn {
	struct conn *prev, *next;
	struct imexd_net *net;
	uint64_t id;
	int fd;
	enum conn_state state;
	bool outbound;
	bool reported;			/* conn_up delivered */
	bool greeted;			/* HELLO or HELLO_ACK received */
	bool bound;			/* imexd_net_conn_bind(): RAFT frames */
	char name[IMEX_NAME_MAX];	/* the node it said HELLO as */
	bool read_wants_write;		/* TLS read waits for EPOLLOUT */
	bool write_wants_read;		/* TLS write waits for EPOLLIN */
	uint32_t hs_events;		/* what the TLS handshake waits for */
	char addr[IMEXD_ADDR_MAX + 1];	/* connect string or peer ip:port */
	char peer[80];			/* the socket address, for the log */
	char host[HOST_MAX];
	uint16_t port;
	struct addrinfo *ai_list, *ai_next;
	int last_error;
	sd_event_source *io, *timer, *defer;
	struct imexd_tls_conn *tls;
	uint8_t *in;
	size_t in_len, in_cap;
	uint8_t *out;
	size_t out_off, out_len, out_cap;
};

struct ratelimit {
	uint64_t start_ms;
	unsigned count;
	unsigned suppressed;
};

struct imexd_net {
	sd_event *ev;
	const struct imexd_net_ops *ops;
	void *data;
	struct imexd_tls *tls;
	uint16_t default_port;
	int listen_fd;
	sd_event_source *listen_src;
	struct conn *conns;
	unsigned nconns;
	uint64_t next_id;
	struct imexd_resolver *resolver;
	struct ratelimit rl;
	uint64_t claims_refused;	/* HELLOs its certificate does not back */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* At most 10 warnings about misbehaving peers per minute. */
static bool ratelimit_ok(struct ratelimit *rl)
{
	uint64_t now = now_ms();

	if (now - rl->start_ms >= 60000) {
		if (rl->suppressed)
			log_warn("%u more warnings about peer connections were suppressed",
				 rl->suppressed);
		rl->start_ms = now;
		rl->count = 0;
		rl->suppressed = 0;
	}
	if (rl->count < 10) {
		rl->count++;
		return true;
	}
	rl->suppressed++;
	return false;
}

#define peer_warn(net, ...) do {				\
		if (ratelimit_ok(&(net)->rl))			\
			log_warn(__VA_ARGS__);			\
	} while (0)

static struct conn *conn_find(const struct imexd_net *net, uint64_t id)
{
	for (struct conn *c = net->conns; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

/* --- connection lifetime ------------------------------------------------- */

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *ud);
static int on_conn_timer(sd_event_source *s, uint64_t usec, void *ud);

static struct conn *conn_alloc(struct imexd_net *net, bool outbound)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->net = net;
	c->id = ++net->next_id;
	c->fd = -1;
	c->outbound = outbound;
	c->next = net->conns;
	if (net->conns)
		net->conns->prev = c;
	net->conns = c;
	net->nconns++;
	return c;
}

/* Free everything; no callbacks. */
static void conn_destroy(struct conn *c)
{
	struct imexd_net *net = c->net;

	if (c->prev)
		c->prev->next = c->next;
	else
		net->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	net->nconns--;
	if (c->state == C_RESOLVING)
		imexd_resolver_cancel(net->resolver, c->id);
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->timer);
	sd_event_source_disable_unref(c->defer);
	imexd_tls_conn_free(c->tls);
	if (c->fd >= 0)
		close(c->fd);
	if (c->ai_list)
		freeaddrinfo(c->ai_list);
	free(c->in);
	free(c->out);
	free(c);
}

/* The net gives up on @c: tell the owner what it knew of it. */
static void conn_drop(struct conn *c)
{
	struct imexd_net *net = c->net;
	bool reported = c->reported, outbound = c->outbound;
	uint64_t id = c->id;
	char addr[sizeof(c->addr)];

	memcpy(addr, c->addr, sizeof(addr));
	conn_destroy(c);
	if (reported)
		net->ops->conn_down(net->data, id);
	else if (outbound)
		net->ops->conn_failed(net->data, addr);
}

static int conn_set_timer(struct conn *c, uint64_t ms)
{
	int r;

	if (!c->timer)
		return sd_event_add_time_relative(c->net->ev, &c->timer,
						  CLOCK_MONOTONIC, ms * 1000,
						  10 * 1000ULL, on_conn_timer, c);
	r = sd_event_source_set_time_relative(c->timer, ms * 1000);
	if (r >= 0)
		r = sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
	return r;
}

static void conn_update_events(struct conn *c)
{
	uint32_t ev = 0;

	switch (c->state) {
	case C_RESOLVING:
		return;
	case C_CONNECTING:
		ev = EPOLLOUT;
		break;
	case C_TLS:
		ev = c->hs_events ? c->hs_events : EPOLLIN;
		break;
	case C_UP:
		ev = EPOLLIN;
		if (c->out_len || c->read_wants_write)
			ev |= EPOLLOUT;
		break;
	case C_CLOSING:
		ev = EPOLLOUT;
		if (c->write_wants_read)
			ev |= EPOLLIN;
		break;
	}
	if (c->io)
		sd_event_source_set_io_events(c->io, ev);
}

static int conn_watch(struct conn *c)
{
	int r = sd_event_add_io(c->net->ev, &c->io, c->fd, EPOLLOUT,
				on_conn_io, c);

	if (r < 0)
		return r;
	conn_update_events(c);
	return 0;
}

/* conn_up for the owner; false if @c is gone afterwards. */
static bool conn_report_up(struct conn *c)
{
	struct imexd_net *net = c->net;
	uint64_t id = c->id;
	char addr[sizeof(c->addr)];

	memcpy(addr, c->addr, sizeof(addr));
	c->reported = true;
	log_debug("connection %" PRIu64 " %s %s is up%s", id,
		  c->outbound ? "to" : "from", c->peer, c->tls ? " (TLS)" : "");
	net->ops->conn_up(net->data, id, addr, c->outbound);
	return conn_find(net, id) != NULL;
}

/* --- TLS handshake ------------------------------------------------------- */

static void conn_tls_step(struct conn *c)
{
	char err[512] = "";
	int r = imexd_tls_handshake(c->tls, err, sizeof(err));

	if (r == 1) {
		char who[256];

		imexd_tls_peer_name(c->tls, who, sizeof(who));
		log_debug("TLS with %s: peer certificate %s", c->peer, who);
		c->state = C_UP;
		c->hs_events = 0;
		conn_update_events(c);
		conn_report_up(c);
		return;
	}
	if (r == IMEXD_TLS_WANT_READ || r == IMEXD_TLS_WANT_WRITE) {
		c->hs_events = r == IMEXD_TLS_WANT_READ ? EPOLLIN : EPOLLOUT;
		conn_update_events(c);
		return;
	}
	peer_warn(c->net, "refusing %s %s: %s", c->outbound ? "connection to" :
		  "connection from", c->peer, err);
	conn_drop(c);
}

/* The socket is connected: TLS or straight up. */
static void conn_established(struct conn *c)
{
	imexd_sock_tune(c->fd);
	if (c->net->tls) {
		c->tls = imexd_tls_conn_new(c->net->tls, c->fd, !c->outbound);
		if (!c->tls) {
			log_err("TLS: out of memory for a connection with %s", c->peer);
			conn_drop(c);
			return;
		}
		c->state = C_TLS;
		conn_tls_step(c);
		return;
	}
	c->state = C_UP;
	conn_update_events(c);
	conn_report_up(c);
}

/* --- outbound ------------------------------------------------------------ */

/* Start a TCP connect to @sa.  0 (in progress) or -errno. */
static int conn_start_connect(struct conn *c, const struct sockaddr *sa,
			      socklen_t salen)
{
	int fd, r;

	imexd_sock_name(sa, c->peer, sizeof(c->peer));
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    IPPROTO_TCP);
	if (fd < 0)
		return -errno;
	if (connect(fd, sa, salen) < 0 && errno != EINPROGRESS) {
		r = -errno;
		close(fd);
		return r;
	}
	c->fd = fd;
	c->state = C_CONNECTING;
	r = conn_watch(c);
	if (r < 0) {
		close(fd);
		c->fd = -1;
		return r;
	}
	return 0;
}

/* Try the next resolved address; drops @c when none is left. */
static void conn_try_next(struct conn *c)
{
	while (c->ai_next) {
		struct addrinfo *ai = c->ai_next;
		int r;

		c->ai_next = ai->ai_next;
		r = conn_start_connect(c, ai->ai_addr, ai->ai_addrlen);
		if (!r)
			return;
		c->last_error = -r;
	}
	log_debug("cannot connect to %s: %s", c->addr,
		  strerror(c->last_error ? c->last_error : EHOSTUNREACH));
	conn_drop(c);
}

static void conn_connected(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (!err) {
		conn_established(c);
		return;
	}
	log_debug("connect to %s (%s) failed: %s", c->addr, c->peer,
		  strerror(err));
	c->last_error = err;
	c->io = sd_event_source_disable_unref(c->io);
	close(c->fd);
	c->fd = -1;
	conn_try_next(c);
}

static void on_resolved(void *data, uint64_t tag, int error, const char *why,
			struct addrinfo *res)
{
	struct imexd_net *net = data;
	struct conn *c = conn_find(net, tag);

	if (!c || c->state != C_RESOLVING) {
		if (res)
			freeaddrinfo(res);
		return;
	}
	if (error) {
		log_warn("cannot look up %s (peer %s): %s: check the member address and DNS",
			 c->host, c->addr, why);
		conn_drop(c);
		return;
	}
	c->ai_list = c->ai_next = res;
	conn_try_next(c);
}

int imexd_net_connect(struct imexd_net *net, const char *addr)
{
	union {
		struct sockaddr sa;
		struct sockaddr_in s4;
		struct sockaddr_in6 s6;
	} u;
	struct conn *c;
	char host[HOST_MAX];
	uint16_t port;
	int r;

	if (strlen(addr) > IMEXD_ADDR_MAX ||
	    imexd_sock_split_addr(addr, net->default_port, host, sizeof(host),
				  &port) < 0) {
		log_warn("cannot connect to '%s': not host[:port] or [IPv6]:port: fix the member address",
			 addr);
		return -EINVAL;
	}
	if (net->nconns >= IMEXD_NET_CONNS_MAX) {
		peer_warn(net, "cannot connect to %s: %u connections are open, the most imexd keeps",
			  addr, net->nconns);
		return -EMFILE;
	}
	c = conn_alloc(net, true);
	if (!c)
		return -ENOMEM;
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	snprintf(c->host, sizeof(c->host), "%s", host);
	c->port = port;
	r = conn_set_timer(c, IMEXD_NET_HELLO_TIMEOUT_MS);
	if (r < 0)
		goto fail;

	memset(&u, 0, sizeof(u));
	if (inet_pton(AF_INET, host, &u.s4.sin_addr) == 1) {
		u.s4.sin_family = AF_INET;
		u.s4.sin_port = htons(port);
		r = conn_start_connect(c, &u.sa, sizeof(u.s4));
		if (r < 0)
			goto fail;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &u.s6.sin6_addr) == 1) {
		u.s6.sin6_family = AF_INET6;
		u.s6.sin6_port = htons(port);
		r = conn_start_connect(c, &u.sa, sizeof(u.s6));
		if (r < 0)
			goto fail;
		return 0;
	}

	/* A host name: look it up off the loop. */
	snprintf(c->peer, sizeof(c->peer), "%.60s:%u", host, port);
	c->state = C_RESOLVING;
	r = imexd_resolver_start(net->resolver, c->id, host, port);
	if (r < 0)
		goto fail;
	return 0;
fail:
	log_debug("cannot connect to %s: %s", addr, strerror(-r));
	conn_destroy(c);
	return r;
}

/* --- input --------------------------------------------------------------- */

/* The largest frame @c may send: a snapshot only once the owner vouched. */
static size_t conn_frame_max(const struct conn *c)
{
	return c->bound ? RAFT_FRAME_MAX : FRAME_MAX;
}

void imexd_net_conn_bind(struct imexd_net *net, uint64_t conn)
{
	struct conn *c = conn_find(net, conn);

	if (c)
		c->bound = true;
}

static int conn_in_reserve(struct conn *c, size_t need)
{
	size_t cap = c->in_cap ? c->in_cap : IN_INITIAL;
	size_t max = conn_frame_max(c);
	uint8_t *p;

	if (need > max)
		return -EMSGSIZE;
	if (c->in_cap >= need && c->in)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > max)
		cap = max;
	p = realloc(c->in, cap);
	if (!p)
		return -ENOMEM;
	c->in = p;
	c->in_cap = cap;
	return 0;
}

/*
 * Bind @c to the node name its HELLO or HELLO_ACK claims: with TLS only a
 * name the peer's certificate carries, and never a second name on one
 * connection.  False (the caller drops @c) when refused.
 */
static bool conn_bind_name(struct conn *c, const char *claim)
{
	char names[256];

	if (c->name[0]) {
		if (!strcmp(c->name, claim))
			return true;
		peer_warn(c->net, "closing connection %s %s: it said HELLO as node '%s' and now claims to be '%s'",
			  c->outbound ? "to" : "from", c->peer, c->name, claim);
		return false;
	}
	if (c->tls && !imexd_tls_peer_names(c->tls, claim, names, sizeof(names))) {
		peer_warn(c->net, "refusing connection %s %s: it claims to be node '%s' but its certificate names %s",
			  c->outbound ? "to" : "from", c->peer, claim, names);
		/* Someone else's certificate: the claimed member stays as it is. */
		c->net->claims_refused++;
		return false;
	}
	snprintf(c->name, sizeof(c->name), "%s", claim);
	return true;
}

/*
 * Hand every complete frame to the owner.  Returns 0, or -1 when @c is gone
 * (dropped here, or closed by the owner from a callback).
 */
static int conn_parse(struct conn *c)
{
	struct imexd_net *net = c->net;
	uint64_t id = c->id;
	size_t off = 0;

	while (c->state == C_UP && c->in_len > off) {
		const uint8_t *f = c->in + off;
		/* Judged from the first byte on: a stranger is dropped fast. */
		long flen = imexd_frame_len(f, c->in_len - off);
		struct imexd_msg msg;
		const char *why = NULL;
		int r;

		if (flen == 0)
			break;		/* the header is not complete yet */
		if (flen < IMEXD_HEADER_LEN || (size_t)flen > conn_frame_max(c)) {
			peer_warn(net, "closing connection %s %s: %s",
				  c->outbound ? "to" : "from", c->peer,
				  flen < 0 ? "not an imexd frame header (another protocol, or a corrupt stream)" :
				  "a raft frame above IMEXD_BODY_MAX before the peer proved its name");
			conn_drop(c);
			return -1;
		}
		if (c->in_len - off < (size_t)flen) {
			if (conn_in_reserve(c, (size_t)flen) < 0) {
				log_err("out of memory for a %ld-byte frame from %s",
					flen, c->peer);
				conn_drop(c);
				return -1;
			}
			break;
		}
		memset(&msg, 0, sizeof(msg));
		r = imexd_msg_decode(f, (size_t)flen, &msg, &why);
		if (r < 0) {
			peer_warn(net, "closing connection %s %s: a frame that does not decode (%s): %s",
				  c->outbound ? "to" : "from", c->peer,
				  why ? why : "no detail", strerror(-r));
			conn_drop(c);
			return -1;
		}
		off += (size_t)flen;
		if (msg.type == IMEXD_MSG_HELLO || msg.type == IMEXD_MSG_HELLO_ACK) {
			if (!conn_bind_name(c, msg.u.hello.node_name)) {
				imexd_msg_free(&msg);
				conn_drop(c);
				return -1;
			}
			if (!c->greeted && c->timer)
				sd_event_source_set_enabled(c->timer, SD_EVENT_OFF);
			c->greeted = true;
		}
		net->ops->msg(net->data, id, &msg);
		imexd_msg_free(&msg);
		if (!conn_find(net, id))
			return -1;
	}
	if (off) {
		memmove(c->in, c->in + off, c->in_len - off);
		c->in_len -= off;
	}
	/* Give back the room a large frame needed. */
	if (c->in_cap > 4UL * IN_INITIAL && c->in_len <= IN_INITIAL) {
		uint8_t *p = realloc(c->in, IN_INITIAL);

		if (p) {
			c->in = p;
			c->in_cap = IN_INITIAL;
		}
	}
	return 0;
}

/* bytes > 0, 0 at EOF, -EAGAIN, IMEXD_TLS_WANT_WRITE, or -errno. */
static ssize_t conn_recv(struct conn *c, void *buf, size_t len, char *err,
			 size_t errlen)
{
	ssize_t n;

	if (c->tls) {
		n = imexd_tls_read(c->tls, buf, len, err, errlen);
		if (n == IMEXD_TLS_WANT_READ)
			return -EAGAIN;
		if (n == IMEXD_TLS_ERROR)
			return -EPROTO;
		return n;
	}
	n = recv(c->fd, buf, len, MSG_DONTWAIT);
	if (n < 0) {
		n = -errno;
		if (n == -EWOULDBLOCK || n == -EINTR)
			return -EAGAIN;
		snprintf(err, errlen, "%s", strerror(errno));
	}
	return n;
}

static int on_conn_defer(sd_event_source *s, void *ud);

/* Read and dispatch, within a budget.  0, or -1 when @c is gone. */
static int conn_read(struct conn *c)
{
	size_t budget = READ_BUDGET;
	char err[512] = "";

	c->read_wants_write = false;
	while (budget) {
		size_t room;
		ssize_t n;

		size_t max = conn_frame_max(c);

		if (conn_in_reserve(c, c->in_len + 4096 > max ? max :
				    c->in_len + 4096) < 0) {
			log_err("out of memory reading from %s", c->peer);
			conn_drop(c);
			return -1;
		}
		room = c->in_cap - c->in_len;
		if (!room)
			break;	/* cannot happen: frames are parsed as they complete */
		if (room > budget)
			room = budget;
		n = conn_recv(c, c->in + c->in_len, room, err, sizeof(err));
		if (n > 0) {
			c->in_len += (size_t)n;
			budget -= (size_t)n;
			if (conn_parse(c) < 0)
				return -1;
			if (c->state != C_UP)
				return 0;
			/*
			 * A short read emptied the socket: no second recv()
			 * to hear EAGAIN; epoll wakes us for what comes next.
			 * (TLS may hold more decrypted bytes: read on.)
			 */
			if (!c->tls && (size_t)n < room)
				return 0;
			continue;
		}
		if (n == 0) {
			log_debug("connection %s %s closed by the peer",
				  c->outbound ? "to" : "from", c->peer);
			conn_drop(c);
			return -1;
		}
		if (n == -EAGAIN)
			return 0;
		if (n == IMEXD_TLS_WANT_WRITE) {
			c->read_wants_write = true;
			return 0;
		}
		log_info("connection %s %s failed: %s", c->outbound ? "to" : "from",
			 c->peer, err[0] ? err : strerror((int)-n));
		conn_drop(c);
		return -1;
	}
	/* Budget spent: come back after the other sources had their turn
	 * (TLS may hold decrypted bytes that epoll cannot see). */
	if (!c->defer) {
		if (sd_event_add_defer(c->net->ev, &c->defer, on_conn_defer, c) < 0)
			c->defer = NULL;
	} else {
		sd_event_source_set_enabled(c->defer, SD_EVENT_ONESHOT);
	}
	return 0;
}

/* --- output -------------------------------------------------------------- */

static ssize_t conn_xmit(struct conn *c, const void *buf, size_t len,
			 char *err, size_t errlen)
{
	ssize_t n;

	if (c->tls) {
		n = imexd_tls_write(c->tls, buf, len, err, errlen);
		if (n == IMEXD_TLS_WANT_WRITE)
			return -EAGAIN;
		if (n == IMEXD_TLS_ERROR)
			return -EPROTO;
		return n;	/* > 0 or IMEXD_TLS_WANT_READ */
	}
	n = send(c->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0) {
		n = -errno;
		if (n == -EWOULDBLOCK || n == -EINTR)
			return -EAGAIN;
		snprintf(err, errlen, "%s", strerror(errno));
	}
	return n;
}

/* Write what is queued.  0, or -errno with @err. */
static int conn_flush(struct conn *c, char *err, size_t errlen)
{
	c->write_wants_read = false;
	while (c->out_len) {
		ssize_t n = conn_xmit(c, c->out + c->out_off, c->out_len, err,
				      errlen);

		if (n > 0) {
			c->out_off += (size_t)n;
			c->out_len -= (size_t)n;
			continue;
		}
		if (n == -EAGAIN)
			return 0;
		if (n == IMEXD_TLS_WANT_READ) {
			c->write_wants_read = true;
			return 0;
		}
		return n ? (int)n : -EPIPE;
	}
	c->out_off = 0;
	if (c->out_cap > (256u << 10)) {
		free(c->out);
		c->out = NULL;
		c->out_cap = 0;
	}
	return 0;
}

/* A bound peer may be sent a snapshot on top of the usual queue. */
static size_t conn_outq_max(const struct conn *c)
{
	return c->bound ? IMEXD_NET_OUTQ_BOUND_MAX : IMEXD_NET_OUTQ_MAX;
}

static int conn_queue(struct conn *c, const uint8_t *buf, size_t len)
{
	size_t need, max = conn_outq_max(c);

	if (len > max || c->out_len + len > max)
		return -ENOBUFS;
	need = c->out_len + len;
	if (c->out_off && c->out_off + need > c->out_cap) {
		memmove(c->out, c->out + c->out_off, c->out_len);
		c->out_off = 0;
	}
	if (c->out_off + need > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		uint8_t *p;

		while (cap < c->out_off + need)
			cap *= 2;
		p = realloc(c->out, cap);
		if (!p)
			return -ENOMEM;
		c->out = p;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_off + c->out_len, buf, len);
	c->out_len += len;
	return 0;
}

int imexd_net_send(struct imexd_net *net, uint64_t conn, const uint8_t *frame,
		   size_t len)
{
	struct conn *c = conn_find(net, conn);
	char err[512];
	bool idle;
	int r;

	if (!c || c->state != C_UP)
		return -ENOTCONN;
	idle = !c->out_len;
	r = conn_queue(c, frame, len);
	if (r == -ENOBUFS) {
		peer_warn(net, "disconnecting %s: it does not read (%zu bytes queued, at most %zu)",
			  c->peer, c->out_len + len, conn_outq_max(c));
		conn_destroy(c);
		return -ENOBUFS;
	}
	if (r < 0) {
		log_err("out of memory queueing %zu bytes for %s", len, c->peer);
		conn_destroy(c);
		return -ENOBUFS;
	}
	/*
	 * Nothing was waiting: write now, not after a trip through epoll
	 * (an import's request and answer are each one frame).  What is not
	 * written, or fails, is left to conn_io(), which reports the error.
	 */
	if (idle)
		(void)conn_flush(c, err, sizeof(err));
	conn_update_events(c);
	return 0;
}

int imexd_net_conn_auth(const struct imexd_net *net, uint64_t conn,
			struct imexd_peers_auth *auth)
{
	const struct conn *c = conn_find(net, conn);

	memset(auth, 0, sizeof(*auth));
	if (!c || c->state != C_UP)
		return -ENOTCONN;
	if (c->tls)
		imexd_tls_peer_auth(c->tls, auth);
	return 0;
}

void imexd_net_close(struct imexd_net *net, uint64_t conn)
{
	struct conn *c = conn_find(net, conn);

	if (!c)
		return;
	log_debug("closing connection %" PRIu64 " (%s)", conn, c->peer);
	if (c->state != C_UP || !c->out_len) {
		conn_destroy(c);
		return;
	}
	c->state = C_CLOSING;
	if (conn_set_timer(c, IMEXD_NET_CLOSE_LINGER_MS) < 0) {
		conn_destroy(c);
		return;
	}
	conn_update_events(c);
}

/* --- events -------------------------------------------------------------- */

static void conn_io(struct conn *c)
{
	char err[512] = "";
	int r;

	if (c->out_len) {
		r = conn_flush(c, err, sizeof(err));
		if (r < 0) {
			if (c->state == C_CLOSING) {
				conn_destroy(c);
				return;
			}
			log_info("connection %s %s failed while writing: %s",
				 c->outbound ? "to" : "from", c->peer,
				 err[0] ? err : strerror(-r));
			conn_drop(c);
			return;
		}
	}
	if (c->state == C_CLOSING) {
		if (!c->out_len)
			conn_destroy(c);
		else
			conn_update_events(c);
		return;
	}
	if (conn_read(c) < 0)
		return;
	conn_update_events(c);
}

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *ud)
{
	struct conn *c = ud;

	(void)s;
	(void)fd;
	(void)revents;
	switch (c->state) {
	case C_RESOLVING:
		break;
	case C_CONNECTING:
		conn_connected(c);
		break;
	case C_TLS:
		conn_tls_step(c);
		break;
	case C_UP:
	case C_CLOSING:
		conn_io(c);
		break;
	}
	return 0;
}

static int on_conn_defer(sd_event_source *s, void *ud)
{
	struct conn *c = ud;

	(void)s;
	if (c->state == C_UP && conn_read(c) == 0)
		conn_update_events(c);
	return 0;
}

static int on_conn_timer(sd_event_source *s, uint64_t usec, void *ud)
{
	struct conn *c = ud;

	(void)s;
	(void)usec;
	if (c->state == C_CLOSING) {
		log_debug("dropping %zu unsent bytes for %s", c->out_len, c->peer);
		conn_destroy(c);
		return 0;
	}
	if (c->greeted)
		return 0;
	if (c->outbound && !c->reported)
		log_debug("connect to %s (%s) timed out", c->addr, c->peer);
	else
		peer_warn(c->net, "closing connection %s %s: no HELLO within %u s",
			  c->outbound ? "to" : "from", c->peer,
			  IMEXD_NET_HELLO_TIMEOUT_MS / 1000);
	conn_drop(c);
	return 0;
}

/* The host part of "ip:port" or "[v6]:port": its length. */
static size_t peer_host_len(const char *peer)
{
	const char *colon = strrchr(peer, ':');

	return colon ? (size_t)(colon - peer) : strlen(peer);
}

/* Inbound connections without HELLO: in all, and from @peer's host. */
static unsigned pending_inbound(const struct imexd_net *net, const char *peer,
				unsigned *same_host)
{
	size_t hlen = peer_host_len(peer);
	unsigned n = 0;

	*same_host = 0;
	for (const struct conn *c = net->conns; c; c = c->next) {
		if (c->outbound || c->greeted || c->state == C_CLOSING)
			continue;
		n++;
		if (peer_host_len(c->peer) == hlen &&
		    !memcmp(c->peer, peer, hlen))
			(*same_host)++;
	}
	return n;
}

static void accept_one(struct imexd_net *net, int fd,
		       const struct sockaddr *sa)
{
	struct conn *c;
	char peer[80];
	unsigned same;

	imexd_sock_name(sa, peer, sizeof(peer));
	if (net->nconns >= IMEXD_NET_CONNS_MAX) {
		peer_warn(net, "refusing connection from %s: %u connections are open, the most imexd keeps",
			  peer, net->nconns);
		close(fd);
		return;
	}
	if (pending_inbound(net, peer, &same) >= IMEXD_NET_PENDING_MAX) {
		peer_warn(net, "refusing connection from %s: %u connections have not said HELLO yet",
			  peer, IMEXD_NET_PENDING_MAX);
		close(fd);
		return;
	}
	if (same >= IMEXD_NET_PENDING_PER_HOST) {
		peer_warn(net, "refusing connection from %s: %u connections from that host have not said HELLO yet",
			  peer, same);
		close(fd);
		return;
	}
	c = conn_alloc(net, false);
	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	snprintf(c->addr, sizeof(c->addr), "%s", peer);
	c->state = C_CONNECTING;	/* until conn_established() */
	if (conn_set_timer(c, IMEXD_NET_HELLO_TIMEOUT_MS) < 0 ||
	    conn_watch(c) < 0) {
		conn_destroy(c);
		return;
	}
	log_debug("connection from %s", peer);
	conn_established(c);
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *ud)
{
	struct imexd_net *net = ud;

	(void)s;
	(void)revents;
	for (int i = 0; i < ACCEPT_BUDGET; i++) {
		union {
			struct sockaddr sa;
			struct sockaddr_storage ss;
		} u;
		socklen_t len = sizeof(u);
		int cfd = accept4(fd, &u.sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				peer_warn(net, "cannot accept connections: %s: raise LimitNOFILE or memory",
					  strerror(errno));
			break;
		}
		accept_one(net, cfd, &u.sa);
	}
	return 0;
}

/* --- setup --------------------------------------------------------------- */

int imexd_net_new(struct imexd_net **out, sd_event *ev,
		  const struct imexd_net_cfg *cfg,
		  const struct imexd_net_ops *ops, void *data, char *err,
		  size_t errlen)
{
	struct imexd_net *net;
	int r;

	*out = NULL;
	net = calloc(1, sizeof(*net));
	if (!net) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	net->ev = sd_event_ref(ev);
	net->ops = ops;
	net->data = data;
	net->tls = cfg->tls;
	net->default_port = cfg->default_port ? cfg->default_port :
			    IMEXD_DEFAULT_PORT;
	net->listen_fd = -1;
	r = imexd_resolver_new(&net->resolver, ev, on_resolved, net);
	if (r < 0) {
		snprintf(err, errlen, "cannot set up host name look-ups: %s",
			 strerror(-r));
		goto fail;
	}
	r = imexd_sock_listen(cfg->listen_address, cfg->listen_port, err,
			      errlen);
	if (r < 0)
		goto fail;
	net->listen_fd = r;
	r = sd_event_add_io(ev, &net->listen_src, net->listen_fd, EPOLLIN,
			    on_accept, net);
	if (r < 0) {
		snprintf(err, errlen, "cannot watch the listening socket: %s",
			 strerror(-r));
		goto fail;
	}
	*out = net;
	return 0;
fail:
	imexd_net_free(net);
	return r;
}

void imexd_net_free(struct imexd_net *net)
{
	if (!net)
		return;
	/* The head has no prev: conn_destroy() moves net->conns on. */
	while (net->conns)
		conn_destroy(net->conns); /* NOLINT(clang-analyzer-unix.Malloc) */
	imexd_resolver_free(net->resolver);
	imexd_net_stop_listening(net);
	sd_event_unref(net->ev);
	free(net);
}

size_t imexd_net_pending_output(const struct imexd_net *net)
{
	size_t n = 0;

	for (const struct conn *c = net->conns; c; c = c->next)
		n += c->out_len;
	return n;
}

uint16_t imexd_net_listen_port(const struct imexd_net *net)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = sizeof(ss);

	if (net->listen_fd < 0 ||
	    getsockname(net->listen_fd, (struct sockaddr *)&ss, &len) < 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

void imexd_net_stop_listening(struct imexd_net *net)
{
	net->listen_src = sd_event_source_disable_unref(net->listen_src);
	if (net->listen_fd >= 0)
		close(net->listen_fd);
	net->listen_fd = -1;
}

void imexd_net_set_tls(struct imexd_net *net, struct imexd_tls *tls)
{
	net->tls = tls;
}

void imexd_net_counts(const struct imexd_net *net, unsigned *up,
		      unsigned *total)
{
	unsigned n = 0;

	for (const struct conn *c = net->conns; c; c = c->next)
		if (c->state == C_UP)
			n++;
	*up = n;
	*total = net->nconns;
}

uint64_t imexd_net_claims_refused(const struct imexd_net *net)
{
	return net->claims_refused;
}
