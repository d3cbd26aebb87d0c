/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What imexd's connection files share: a connection, the net itself, and
 * the helpers each file calls in the others: net.c (lifetime, TLS
 * handshake, events, setup), net_connect.c (outbound connects, accepts),
 * net_io.c (input, framing, output).
 */
#ifndef IMEXD_NET_INTERNAL_H
#define IMEXD_NET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netdb.h>
#include <systemd/sd-event.h>
#include "log.h"
#include "net.h"
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
	bool flush_due;			/* queued while corked: write at uncork */
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
	unsigned cork;			/* imexd_net_cork() depth */
};

#define peer_warn(net, ...) do {				\
		if (ratelimit_ok(&(net)->rl))			\
			log_warn(__VA_ARGS__);			\
	} while (0)

/* net.c */
bool ratelimit_ok(struct ratelimit *rl);
struct conn *conn_find(const struct imexd_net *net, uint64_t id);
struct conn *conn_alloc(struct imexd_net *net, bool outbound);
void conn_destroy(struct conn *c);
void conn_drop(struct conn *c);
int conn_set_timer(struct conn *c, uint64_t ms);
void conn_update_events(struct conn *c);
int conn_watch(struct conn *c);
void conn_established(struct conn *c);
int on_conn_defer(sd_event_source *s, void *ud);

/* net_connect.c */
void conn_connected(struct conn *c);
void on_resolved(void *data, uint64_t tag, int error, const char *why,
		 struct addrinfo *res);
int on_accept(sd_event_source *s, int fd, uint32_t revents, void *ud);

/* net_io.c */
int conn_read(struct conn *c);
int conn_flush(struct conn *c, char *err, size_t errlen);

#endif /* IMEXD_NET_INTERNAL_H */
