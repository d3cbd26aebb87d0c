/* SPDX-License-Identifier: GPL-2.0 */
/*
 * imexd's peer connections on sd-event: the TCP listener, outbound
 * connects (host names resolved off the loop), framing, per-connection
 * output queues, optional TLS, and the bounds that keep a misbehaving or
 * hostile peer from growing anything without limit:
 *
 *   - a frame header that can never be valid (imexd_frame_len() < 0) or
 *     announces more than IMEXD_HEADER_LEN + IMEXD_BODY_MAX (a RAFT frame
 *     on a connection the owner bound with imexd_net_conn_bind(): up to
 *     IMEXD_RAFT_BODY_MAX): logged, closed;
 *   - a frame that does not decode: logged, closed;
 *   - output queued for a peer that does not read: beyond
 *     IMEXD_NET_OUTQ_MAX bytes (IMEXD_NET_OUTQ_BOUND_MAX on a bound
 *     connection, room for one snapshot) the connection is dropped;
 *   - IMEXD_NET_PENDING_MAX inbound connections that have not completed
 *     HELLO, IMEXD_NET_PENDING_PER_HOST of them from one source address (so
 *     one host cannot take every slot; further ones are closed at once),
 *     IMEXD_NET_CONNS_MAX connections in all;
 *   - HELLO (and the TLS handshake) within IMEXD_NET_HELLO_TIMEOUT_MS;
 *     outbound connects within the same bound.
 *
 * Identity: a connection is bound to the node name of the first HELLO or
 * HELLO_ACK on it.  With TLS that name must be one the peer's certificate
 * carries (tls.h), else the connection is refused and logged with both
 * names; a later HELLO naming anything else closes it.  Nothing from a
 * refused connection reaches the owner, so every message the owner gets
 * on a connection comes from the node its (first) HELLO named.
 *
 * Connections are named by uint64_t ids that are never reused.  Events reach
 * the owner only from the event loop through struct imexd_net_ops, never
 * from inside an imexd_net_* call, so the owner may call back into the net
 * from a callback.
 */
#ifndef IMEXD_NET_H
#define IMEXD_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include "wire.h"

#define IMEXD_NET_OUTQ_MAX		(8u << 20)
#define IMEXD_NET_OUTQ_BOUND_MAX	(IMEXD_NET_OUTQ_MAX + IMEXD_HEADER_LEN + \
					 IMEXD_RAFT_BODY_MAX)
#define IMEXD_NET_PENDING_MAX		64
#define IMEXD_NET_PENDING_PER_HOST	8
#define IMEXD_NET_CONNS_MAX		1024
#define IMEXD_NET_HELLO_TIMEOUT_MS	10000
#define IMEXD_NET_CLOSE_LINGER_MS	2000	/* flush before a CLOSE */

struct imexd_tls;
struct imexd_net;
struct imexd_peers_auth;

struct imexd_net_ops {
	/* A connection is usable (TLS verified where on).  @addr: for an
	 * outbound one the string given to imexd_net_connect(), for an
	 * inbound one the peer's "ip:port". */
	void (*conn_up)(void *data, uint64_t conn, const char *addr,
			bool outbound);
	/* An outbound connect failed before conn_up. */
	void (*conn_failed)(void *data, const char *addr);
	/* A connection that was up is gone (not after imexd_net_close()). */
	void (*conn_down)(void *data, uint64_t conn);
	/* One decoded message; @msg is freed after the call returns. */
	void (*msg)(void *data, uint64_t conn, const struct imexd_msg *msg);
};

struct imexd_net_cfg {
	const char *listen_address;	/* "*", an IPv4 or IPv6 address */
	uint16_t listen_port;
	uint16_t default_port;		/* for addresses without a port */
	struct imexd_tls *tls;		/* NULL: plain TCP */
};

/* Listen and get ready.  0, or -errno with what to do in @err. */
int imexd_net_new(struct imexd_net **net, sd_event *ev,
		  const struct imexd_net_cfg *cfg,
		  const struct imexd_net_ops *ops, void *data, char *err,
		  size_t errlen);
/* Close every connection (no callbacks) and the listener. */
void imexd_net_free(struct imexd_net *net);

/*
 * Start connecting to "host[:port]" or "[v6addr]:port".  0: the outcome
 * comes later through conn_up or conn_failed.  -errno (bad address, too
 * many connections): nothing more is reported.
 */
int imexd_net_connect(struct imexd_net *net, const char *addr);

/*
 * Queue a frame (copied).  0; -ENOTCONN for an unknown connection;
 * -ENOBUFS when the peer's queue would pass IMEXD_NET_OUTQ_MAX: the
 * connection has then been closed, and conn_down is NOT called (the caller
 * reports it).
 */
int imexd_net_send(struct imexd_net *net, uint64_t conn, const uint8_t *frame,
		   size_t len);

/*
 * Between imexd_net_cork() and the matching imexd_net_uncork() (they nest),
 * imexd_net_send() only queues; the uncork writes each connection's queue
 * at once.  The frames of one batch (the imports one notification named,
 * the answers to the requests one read brought) then cost one send() per
 * peer, not one each.  Frames keep their order; errors surface as after
 * any send, from the connection's next event.
 */
void imexd_net_cork(struct imexd_net *net);
void imexd_net_uncork(struct imexd_net *net);

/*
 * What the transport proved about @conn's far end, for
 * imexd_peers_conn_up(): with TLS tls = true and the node names its
 * verified certificate carries (imexd_tls_peer_auth()), without TLS
 * tls = false and no names.  0, or -ENOTCONN when @conn is not up.
 */
int imexd_net_conn_auth(const struct imexd_net *net, uint64_t conn,
			struct imexd_peers_auth *auth);

/*
 * The owner vouches for @conn (its peer proved a roster name): from now on
 * it may send RAFT frames above IMEXD_BODY_MAX, up to IMEXD_RAFT_BODY_MAX,
 * and its output queue may hold IMEXD_NET_OUTQ_BOUND_MAX bytes.  Unknown
 * ids are ignored.
 */
void imexd_net_conn_bind(struct imexd_net *net, uint64_t conn);

/* Close, after flushing what is queued (bounded); no conn_down follows. */
void imexd_net_close(struct imexd_net *net, uint64_t conn);

/* Bytes queued on all connections (for a bounded flush at shutdown). */
size_t imexd_net_pending_output(const struct imexd_net *net);

/* The port the listener is bound to (0 when not listening); lets a
 * listen_port of 0 pick a free one. */
uint16_t imexd_net_listen_port(const struct imexd_net *net);

/* Stop accepting connections (shutdown). */
void imexd_net_stop_listening(struct imexd_net *net);

/* The TLS context for new connections changed (or not). */
void imexd_net_set_tls(struct imexd_net *net, struct imexd_tls *tls);

/* Counts for STATUS= lines: connections up, and all. */
void imexd_net_counts(const struct imexd_net *net, unsigned *up,
		      unsigned *total);

/*
 * HELLOs refused because the TLS certificate does not carry the claimed
 * name.  Such a connection is someone else's: it is logged (rate-limited)
 * and counted, and the member it claimed to be is left as it was.
 */
uint64_t imexd_net_claims_refused(const struct imexd_net *net);

#endif /* IMEXD_NET_H */
