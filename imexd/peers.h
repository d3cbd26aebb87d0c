/* SPDX-License-Identifier: GPL-2.0 */
/*
 * peers: the transport part of the node core.  It owns the roster's peers
 * and the connections to them: dials every roster peer (reconnect with
 * backoff), runs the HELLO exchange, binds a connection to the peer name
 * it proved, keeps at most one connection per peer, and hands the other
 * parts only messages that arrived on a bound connection, with the
 * authenticated name.  Pure: no sockets, clock or threads; the caller names
 * connections with uint64_t ids and carries out the actions.
 *
 * Who may be a peer: roster names (NODES_FILE) and names the raft
 * configuration added (imexd_peers_add), other than self, and a name no
 * configuration here named whose inbound HELLO carries this node's
 * (non-zero) group id: a node joined while this one was away, which leads
 * or catches it up before its log holds the join.  Such a name is learnt
 * (within IMEXD_PEERS_MAX, not dialled until the configuration adds it).
 * A HELLO naming anything else, or self, is refused: the connection is
 * closed and one line is logged per (host, name) at most once a minute, so
 * no peer can grow a table here past IMEXD_PEERS_MAX.  Refusal lines about one remote host are
 * at most IMEXD_PEERS_LOG_PER_HOST a minute (then one line says the rest
 * are not logged), for at most IMEXD_PEERS_LOG_HOSTS hosts a minute: a host
 * cycling through junk names cannot flood the log.  Unbound connections are bounded: at most
 * IMEXD_PEERS_UNBOUND_PER_HOST inbound ones per remote host and
 * IMEXD_PEERS_UNBOUND_MAX inbound ones in all (outbound ones are this
 * node's dials, one per peer at most); past either the new connection is
 * closed at once (logged as above).  An unbound connection that sends no HELLO within
 * hello_timeout_ms is closed.
 *
 * Authentication: with TLS (struct imexd_peers_auth.tls) a HELLO's name,
 * learnt ones included, must be one of the names the peer certificate
 * carries (its
 * subjectAltName DNS entries, extracted by the caller after the handshake
 * verified the chain).  A claim the certificate does not carry is refused
 * and logged at warning level with both: "peer 10.0.0.7:41234 claims to be
 * 'b' but its certificate names 'x'; refused".  Without TLS the claim is
 * taken as is (the documented limit: any host that can reach the port can
 * claim a roster name).
 *
 * Duplicates: when a peer is reachable over two bound connections (both
 * dialled at once), the one opened by the node with the smaller name
 * survives; the other is closed.  When the survivor is the newer one,
 * PEER_UP is repeated with its conn (restarted = false) and no PEER_DOWN.
 * A HELLO with a new epoch for a known name is a new instance of that
 * peer: PEER_UP carries restarted = true (after PEER_DOWN if the old
 * instance's connection was still bound).
 *
 * Versions: HELLO carries the protocol range; a peer whose range does not
 * overlap ours is reported (PEER_VERSION) and closed; no messages pass.
 *
 * Groups: HELLO carries the sender's Raft group id (consensus.h), 0 when it
 * has none yet.  A peer whose id is set and differs from ours is of
 * another group: its connection is closed before it binds (inbound: after
 * our HELLO_ACK, so it can say the same), nothing it sent is handed on,
 * and one line a minute per (host, name) at error level says what to do;
 * it is redialled only after the longest backoff.  A peer with no group
 * (waiting to be joined, or an older log) binds.  When our id is set
 * later (imexd_peers_set_group), bound peers of another id are closed.
 *
 * Out-of-memory policy: a failed allocation drops the event that needed it
 * (the connection is closed if it was mid-HELLO) and logs it; nothing half
 * done stays.
 */
#ifndef IMEXD_PEERS_H
#define IMEXD_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define IMEXD_PEERS_UNBOUND_PER_HOST	8
#define IMEXD_PEERS_UNBOUND_MAX		64
#define IMEXD_PEERS_CERT_NAMES_MAX	8
#define IMEXD_PEERS_LOG_PER_HOST	10
#define IMEXD_PEERS_LOG_HOSTS		32

struct imexd_peers;

/* One roster node. */
struct imexd_roster_node {
	char name[IMEX_NAME_MAX];
	char addr[IMEXD_ADDR_MAX + 1];	/* host:port; "" = the name, default port */
};

/* Zero in any timing field means its default. */
struct imexd_peers_config {
	const char *self;
	uint8_t self_uuid[16];
	uint64_t epoch;			/* this instance; nonzero */
	const struct imexd_roster_node *roster;	/* may include self */
	size_t n_roster;
	uint16_t default_port;		/* for addresses without one */
	uint32_t backoff_min_ms;	/* default 500 */
	uint32_t backoff_max_ms;	/* default 3000 */
	uint32_t hello_timeout_ms;	/* default 5000 */
	/* HELLO contents besides name and proto range. */
	uint32_t max_channels;
	uint8_t fabric_uuid[16];
	uint32_t partition;
};

/* What the transport proved about a connection's far end. */
struct imexd_peers_auth {
	bool tls;			/* a verified certificate chain */
	unsigned n_names;
	char names[IMEXD_PEERS_CERT_NAMES_MAX][IMEX_NAME_MAX];
};

enum imexd_peers_action_type {
	IMEXD_PEERS_CONNECT = 1,	/* addr */
	IMEXD_PEERS_CLOSE,		/* conn */
	IMEXD_PEERS_SEND,		/* conn, frame (encoded message) */
	IMEXD_PEERS_PEER_UP,		/* conn (to imexd_net_conn_bind()), name,
					 * epoch, uuid, restarted, replaced,
					 * msg (HELLO) */
	IMEXD_PEERS_PEER_DOWN,		/* name: its bound connection ended;
					 * text: how */
	IMEXD_PEERS_PEER_VERSION,	/* name: no common protocol version;
					 * text: the versions */
	IMEXD_PEERS_PEER_REFUSED,	/* name: its HELLO was refused (another
					 * group), on a connection proven to
					 * be it (TLS, or dialled by this
					 * node); text: why */
	IMEXD_PEERS_MSG,		/* name, msg (not HELLO/HELLO_ACK) */
	IMEXD_PEERS_LOG,		/* level, text */
};

/*
 * Pointers stay valid until the next call into the part (other than
 * imexd_peers_send(), imexd_peers_next() and the queries, which keep
 * them).  msg (MSG, PEER_UP) is the message given to imexd_peers_msg(),
 * not a copy: drain the actions before freeing it.
 */
struct imexd_peers_action {
	enum imexd_peers_action_type type;
	uint64_t conn;
	const char *addr;
	const uint8_t *frame;
	size_t len;
	const char *name;
	uint64_t epoch;
	const uint8_t *uuid;
	bool restarted;
	/* PEER_UP: it replaced a bound connection to the same instance
	 * (both ends dialled at once); what was sent on that may be lost. */
	bool replaced;
	const struct imexd_msg *msg;	/* MSG: the message; PEER_UP: HELLO */
	int level;
	const char *text;
};

/* 0, -EINVAL (self not a valid name, roster entry invalid), -ENOMEM. */
int imexd_peers_new(const struct imexd_peers_config *cfg,
		    struct imexd_peers **out);
void imexd_peers_free(struct imexd_peers *p);

/* Begin dialling every roster peer. */
void imexd_peers_start(struct imexd_peers *p, uint64_t now);
/* @auth may be NULL (no TLS). */
void imexd_peers_conn_up(struct imexd_peers *p, uint64_t now, uint64_t conn,
			 const char *addr, bool outbound,
			 const struct imexd_peers_auth *auth);
void imexd_peers_conn_failed(struct imexd_peers *p, uint64_t now,
			     const char *addr);
void imexd_peers_conn_down(struct imexd_peers *p, uint64_t now,
			   uint64_t conn);
/* A decoded message from @conn (stays the caller's). */
void imexd_peers_msg(struct imexd_peers *p, uint64_t now, uint64_t conn,
		     const struct imexd_msg *msg);
void imexd_peers_timer(struct imexd_peers *p, uint64_t now);
uint64_t imexd_peers_deadline(const struct imexd_peers *p);
/* SIGTERM: send LEAVE on every bound connection; no more dialling. */
void imexd_peers_shutdown(struct imexd_peers *p, uint64_t now);

/*
 * Send @msg to peer @name over its bound connection (the header's sender
 * uuid and epoch are filled in here).  0, -ENOTCONN (no bound connection:
 * dropped), -EINVAL (would not encode), -ENOMEM.
 */
int imexd_peers_send(struct imexd_peers *p, const char *name,
		     struct imexd_msg *msg);
bool imexd_peers_connected(const struct imexd_peers *p, const char *name);
/* The bound connection of @name, 0 if none. */
uint64_t imexd_peers_conn(const struct imexd_peers *p, const char *name);

bool imexd_peers_next(struct imexd_peers *p, struct imexd_peers_action *a);

/* This node's Raft group id (0: none yet), sent in every HELLO from now
 * on; bound peers whose HELLO named another one are closed. */
void imexd_peers_set_group(struct imexd_peers *p, uint64_t now,
			   uint64_t group);
/* The group id the bound peer @name said in its HELLO (0: none, or not
 * bound). */
uint64_t imexd_peers_group(const struct imexd_peers *p, const char *name);

/*
 * Membership (the raft configuration adds and removes nodes): a node
 * added is a peer like a roster one (dialled at addr, or as the roster
 * gives it when addr is NULL or ""); a removed one is not a peer any more
 * (its connection is closed, its HELLO refused, no dial).  At most
 * IMEXD_PEERS_MAX names are held at once: a removed peer's place is
 * reused once no connection refers to it.  -EINVAL (bad name or address,
 * self), -ENOSPC, -ENOMEM.
 */
#define IMEXD_PEERS_MAX 1024
int imexd_peers_add(struct imexd_peers *p, uint64_t now, const char *name,
		    const char *addr);
void imexd_peers_remove(struct imexd_peers *p, uint64_t now, const char *name);
/*
 * HELLOs refused because the certificate does not carry the claimed name:
 * someone else's, so logged and counted, and the member claimed is left
 * as it is (no PEER_REFUSED).
 */
uint64_t imexd_peers_claims_refused(const struct imexd_peers *p);

/* The peers by slot, 0..count-1: a name, or NULL for a removed one. */
size_t imexd_peers_count(const struct imexd_peers *p);
const char *imexd_peers_name(const struct imexd_peers *p, size_t i);

#endif /* IMEXD_PEERS_H */
