/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The transport part's tables and the helpers its files share: peers.c
 * (actions, log limits, tables, dialling, time), peers_conn.c (connections
 * and HELLO) and peers_members.c (group and membership).
 */
#ifndef IMEXD_PEERS_INTERNAL_H
#define IMEXD_PEERS_INTERNAL_H

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

/* A new zeroed action, or NULL when out of memory (the event is dropped). */
struct act *peers_act_push(struct imexd_peers *p,
			   enum imexd_peers_action_type type);
/*
 * Called on entry to every event: drained actions go.  Not from
 * imexd_peers_send(), which the caller may call while it handles one.
 */
void peers_acts_gc(struct imexd_peers *p);
/* A peer's name (shorter than IMEX_NAME_MAX) into an action, once per
 * frame: cheaper than snprintf(). */
void peers_name_copy(char dst[IMEX_NAME_MAX], const char *src);
/* A log line (an action). */
void peers_log(struct imexd_peers *p, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * May a line of @kind about (@addr's host, @name) be logged now?  Once a
 * minute per key, within the host's budget; the tables are bounded, the
 * key table's oldest entry reused.
 */
bool peers_log_ok(struct imexd_peers *p, uint64_t now, const char *kind,
		  const char *addr, const char *name);
/* The host part of "host:port" / "[v6]:port" (its length). */
size_t peers_host_len(const char *addr);
/* Any entry, removed ones too. */
int peers_slot(const struct imexd_peers *p, const char *name);
int peers_find(const struct imexd_peers *p, const char *name);
struct conn *peers_conn_find(struct imexd_peers *p, uint64_t id);
/* Forget @c (no action). */
void peers_conn_forget(struct imexd_peers *p, struct conn *c);
void peers_emit_close(struct imexd_peers *p, uint64_t id);
/* An action about peer @pe, with the words health shows for it (text). */
void peers_emit_name_why(struct imexd_peers *p, enum imexd_peers_action_type t,
			 const struct peer *pe, uint64_t conn,
			 const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void peers_dial_failed(struct imexd_peers *p, struct peer *pe, uint64_t now);
/*
 * @c ends (closed here when @close, else already gone): what it meant for
 * its peer (PEER_DOWN if it was bound; a dial it carried is over).  @c is
 * invalid afterwards.
 */
void peers_conn_end(struct imexd_peers *p, struct conn *c, uint64_t now,
		    bool close);
/*
 * "" -> name:port, "host" -> host:port, "v6::addr" -> "[v6::addr]:port",
 * "[v6]" -> "[v6]:port"; false when the result does not fit.
 */
bool peers_addr_normalize(const char *in, const char *name, uint16_t port,
			  char *out, size_t len);
void peers_dial_due(struct imexd_peers *p, uint64_t now);
int peers_send_msg(struct imexd_peers *p, uint64_t conn, struct imexd_msg *m);
/*
 * Node @name's HELLO names another Raft group: its log began with another
 * bootstrap entry (a NODES_FILE whose names differed from the group's
 * first one at its first start), which Raft cannot tell from ours at
 * (term 1, index 1).
 */
void peers_group_refused(struct imexd_peers *p, uint64_t now,
			 const struct conn *c, const char *name, uint64_t group);

/* peers_log() once a minute per (@kind, @addr's host, @name). */
#define plog_limited(p, now, kind, addr, name, level, ...) do {		\
		if (peers_log_ok(p, now, kind, addr, name))		\
			peers_log(p, level, __VA_ARGS__);		\
	} while (0)

#endif /* IMEXD_PEERS_INTERNAL_H */
