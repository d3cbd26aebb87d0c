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
#include "net_internal.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* At most 10 warnings about misbehaving peers per minute. */
bool ratelimit_ok(struct ratelimit *rl)
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

struct conn *conn_find(const struct imexd_net *net, uint64_t id)
{
	for (struct conn *c = net->conns; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

/* --- connection lifetime ------------------------------------------------- */

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *ud);
static int on_conn_timer(sd_event_source *s, uint64_t usec, void *ud);

struct conn *conn_alloc(struct imexd_net *net, bool outbound)
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
void conn_destroy(struct conn *c)
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
void conn_drop(struct conn *c)
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

int conn_set_timer(struct conn *c, uint64_t ms)
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

void conn_update_events(struct conn *c)
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
		/* A corked queue is the uncork's to write: no epoll_ctl() pair. */
		if ((c->out_len && !c->flush_due) || c->read_wants_write)
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

int conn_watch(struct conn *c)
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
void conn_established(struct conn *c)
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
	struct imexd_net *net = c->net;

	(void)s;
	(void)fd;
	(void)revents;
	/* What the frames of one read make the owner send goes out together. */
	imexd_net_cork(net);
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
	imexd_net_uncork(net);
	return 0;
}

int on_conn_defer(sd_event_source *s, void *ud)
{
	struct conn *c = ud;
	struct imexd_net *net = c->net;

	(void)s;
	imexd_net_cork(net);
	if (c->state == C_UP && conn_read(c) == 0)
		conn_update_events(c);
	imexd_net_uncork(net);
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
