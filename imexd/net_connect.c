// SPDX-License-Identifier: GPL-2.0
/*
 * imexd's peer connections made and taken: outbound connects over every
 * address a host name resolves to, and the listener's accepts with their
 * per-host bound.  See net.c.
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

void conn_connected(struct conn *c)
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

void on_resolved(void *data, uint64_t tag, int error, const char *why,
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
	socklen_t salen = 0;
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

	/* A numeric address: connect at once. */
	memset(&u, 0, sizeof(u));
	if (inet_pton(AF_INET, host, &u.s4.sin_addr) == 1) {
		u.s4.sin_family = AF_INET;
		u.s4.sin_port = htons(port);
		salen = sizeof(u.s4);
	} else if (inet_pton(AF_INET6, host, &u.s6.sin6_addr) == 1) {
		u.s6.sin6_family = AF_INET6;
		u.s6.sin6_port = htons(port);
		salen = sizeof(u.s6);
	}
	if (salen) {
		r = conn_start_connect(c, &u.sa, salen);
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

int on_accept(sd_event_source *s, int fd, uint32_t revents, void *ud)
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
