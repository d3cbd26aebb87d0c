// SPDX-License-Identifier: GPL-2.0
/*
 * imexd's peer connections, bytes in and out: reading and framing input
 * (the HELLO's name bound to the certificate), output queues and their
 * flush, through TLS when on.  See net.c.
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

/*
 * imexd_tls_read() or imexd_tls_write()'s result as conn_recv() and
 * conn_xmit() return it: @again (what that direction waits for) is -EAGAIN.
 */
static ssize_t tls_result(ssize_t n, ssize_t again)
{
	if (n == again)
		return -EAGAIN;
	if (n == IMEXD_TLS_ERROR)
		return -EPROTO;
	return n;
}

/* recv() or send()'s result: -EAGAIN when it would block, -errno with @err. */
static ssize_t sock_result(ssize_t n, char *err, size_t errlen)
{
	if (n < 0) {
		n = -errno;
		if (n == -EWOULDBLOCK || n == -EINTR)
			return -EAGAIN;
		snprintf(err, errlen, "%s", strerror(errno));
	}
	return n;
}

/* bytes > 0, 0 at EOF, -EAGAIN, IMEXD_TLS_WANT_WRITE, or -errno. */
static ssize_t conn_recv(struct conn *c, void *buf, size_t len, char *err,
			 size_t errlen)
{
	if (c->tls)
		return tls_result(imexd_tls_read(c->tls, buf, len, err, errlen),
				  IMEXD_TLS_WANT_READ);
	return sock_result(recv(c->fd, buf, len, MSG_DONTWAIT), err, errlen);
}


/* Read and dispatch, within a budget.  0, or -1 when @c is gone. */
int conn_read(struct conn *c)
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

/* bytes > 0, -EAGAIN, IMEXD_TLS_WANT_READ, or -errno. */
static ssize_t conn_xmit(struct conn *c, const void *buf, size_t len,
			 char *err, size_t errlen)
{
	if (c->tls)
		return tls_result(imexd_tls_write(c->tls, buf, len, err, errlen),
				  IMEXD_TLS_WANT_WRITE);
	return sock_result(send(c->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL),
			   err, errlen);
}

/* Write what is queued.  0, or -errno with @err. */
int conn_flush(struct conn *c, char *err, size_t errlen)
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
	/* Corked: the uncork writes it, with what else the batch queues. */
	if (net->cork) {
		c->flush_due |= idle;	/* else EPOLLOUT is armed already */
		return 0;
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

void imexd_net_cork(struct imexd_net *net)
{
	if (net)
		net->cork++;
}

/* As imexd_net_send() for each connection the corked sends queued on. */
void imexd_net_uncork(struct imexd_net *net)
{
	char err[512];
	struct conn *c;

	if (!net || !net->cork || --net->cork)
		return;
	for (c = net->conns; c; c = c->next) {
		if (!c->flush_due)
			continue;
		c->flush_due = false;
		if (c->state != C_UP)
			continue;
		(void)conn_flush(c, err, sizeof(err));
		conn_update_events(c);
	}
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
