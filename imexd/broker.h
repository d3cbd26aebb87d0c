/* SPDX-License-Identifier: GPL-2.0 */
/*
 * broker: the node core's import broker.  Brokers remote imports between
 * the daemons of a domain's members: one IMPORT_REQ and one IMPORT_RESP
 * per import, the exporting node's kernel deciding.  Pure: no sockets,
 * clock or threads.
 *
 * Who is who comes from the committed table (the fsm), never from a claim
 * on the wire: a handle's node UUID maps to the roster node that reported
 * it through the log (NODE_SET), and a peer's messages count only for
 * domains the table says it is a member of.  Peer names are the ones the
 * transport authenticated.
 *
 * Importing node: a kernel import (imexd_broker_import) names a handle
 * (node UUID, id) and the importer's channel.  The exporter must be
 * another member of the importer's domain: else IMPORT_DONE with ENOENT
 * ("handle's node is not a member of domain 'x'").  The request waits in a
 * bounded table (IMEXD_BROKER_IMPORTS_MAX: past it EAGAIN at once) until
 * its IMPORT_RESP, the loss of the exporter (EHOSTUNREACH), or
 * IMEX_IMPORT_TIMEOUT_MAX_MS (ETIMEDOUT).  An IMPORT_RESP whose tag is not
 * waiting, or that comes from another peer than the one asked, is dropped.
 *
 * Exporting node: an IMPORT_REQ from a member of the domain becomes one
 * CHECK for the kernel (bounded: IMEXD_BROKER_CHECKS_MAX, past it the
 * request is answered EAGAIN); its answer (imexd_broker_checked) goes back
 * to that peer.  An IMPORT_REQ from a non-member is answered EACCES and
 * logged (rate-limited).
 *
 * Ends: an export a peer imported ended (imexd_broker_export_del) ->
 * EXPORT_REVOKE to each other member of its domain; held for a member that
 * is not connected (bounded: IMEXD_BROKER_REVOKES_MAX, oldest dropped
 * first, logged) until it is up again, dropped once it is lost or
 * restarted (it then drops our exports by itself).  An EXPORT_REVOKE from
 * member X becomes REVOKE(X's node UUID, handle, domain).  A peer lost
 * (health: DISCONNECTED) or restarted becomes REVOKE(its node UUID) for
 * every import of ours from it.
 *
 * Out-of-memory policy: a failed allocation fails the one import or check
 * that needed it (ENOMEM to the kernel or peer); nothing is left half made.
 */
#ifndef IMEXD_BROKER_H
#define IMEXD_BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fsm.h"
#include "logfields.h"
#include "wire.h"

#define IMEXD_BROKER_IMPORTS_MAX	4096
#define IMEXD_BROKER_CHECKS_MAX		4096
#define IMEXD_BROKER_REVOKES_MAX	4096

struct imexd_broker;

/* A remote import, as accepted from the kernel (IMEX_CMD_IMPORT_ACCEPT). */
struct imexd_import {
	uint64_t import_id;
	uint8_t handle_node[16];
	uint64_t handle_id;
	uint8_t domain_uuid[16];	/* the importer's channel */
	uint32_t channel_id;
};

enum imexd_broker_action_type {
	IMEXD_BROKER_SEND = 1,		/* to, msg */
	IMEXD_BROKER_DONE,		/* import_id, error, desc, text */
	IMEXD_BROKER_CHECK,		/* op_id, handle_id, domain_uuid,
					 * channel_id, to (the importer):
					 * answer imexd_broker_checked() */
	IMEXD_BROKER_REVOKE,		/* node_uuid, handle_id if has_handle,
					 * domain_uuid if has_domain, reason */
	IMEXD_BROKER_LOG,		/* level, text */
};

/* Pointers stay valid until the next call into the part. */
struct imexd_broker_action {
	enum imexd_broker_action_type type;
	struct imexd_log_fields fields;	/* LOG: msgid NULL: none */
	const char *to;
	struct imexd_msg *msg;		/* the caller may fill header fields */
	uint64_t import_id;
	uint64_t op_id;
	int error;			/* 0 or a positive errno */
	const uint8_t *desc;
	uint16_t desc_len;
	uint64_t handle_id;
	bool has_handle;
	bool has_domain;
	uint8_t node_uuid[16];
	uint8_t domain_uuid[16];
	uint32_t channel_id;
	uint8_t reason;			/* enum imex_revoke_reason */
	int level;
	const char *text;
};

int imexd_broker_new(const char *self, struct imexd_broker **out);
void imexd_broker_free(struct imexd_broker *b);

/* @fsm: the committed table now (read only, for this call). */
void imexd_broker_import(struct imexd_broker *b, uint64_t now,
			 const struct imexd_fsm *fsm,
			 const struct imexd_import *imp);
void imexd_broker_checked(struct imexd_broker *b, uint64_t now,
			  uint64_t op_id, int error, const uint8_t *desc,
			  uint16_t desc_len);
void imexd_broker_export_del(struct imexd_broker *b, uint64_t now,
			     const struct imexd_fsm *fsm, uint64_t handle_id,
			     const uint8_t domain_uuid[16],
			     uint32_t channel_id);
/* IMPORT_REQ, IMPORT_RESP or EXPORT_REVOKE from authenticated @from. */
void imexd_broker_msg(struct imexd_broker *b, uint64_t now,
		      const struct imexd_fsm *fsm, const char *from,
		      const struct imexd_msg *msg);
void imexd_broker_peer_up(struct imexd_broker *b, uint64_t now,
			  const char *name, bool restarted,
			  const struct imexd_fsm *fsm);
void imexd_broker_peer_down(struct imexd_broker *b, uint64_t now,
			    const char *name);
/*
 * Node @name left domain @d (replaced), which still names this node:
 * REVOKE(its node UUID, @d) for our imports from it through @d only.
 */
void imexd_broker_member_gone(struct imexd_broker *b, uint64_t now,
			      const char *name, const struct imexd_def *d,
			      const struct imexd_fsm *fsm);
void imexd_broker_peer_lost(struct imexd_broker *b, uint64_t now,
			    const char *name, const struct imexd_fsm *fsm);
void imexd_broker_timer(struct imexd_broker *b, uint64_t now);
/* When imexd_broker_timer() is wanted (absolute ms); UINT64_MAX: never. */
uint64_t imexd_broker_deadline(const struct imexd_broker *b);
/* SIGTERM: every waiting import ends (ESHUTDOWN). */
void imexd_broker_shutdown(struct imexd_broker *b, uint64_t now);

bool imexd_broker_next(struct imexd_broker *b, struct imexd_broker_action *a);
/*
 * Peers' imports of this node's exports answered with an error, by reason
 * (IMEXD_REFUSED_N counters indexed by enum imexd_metrics_refusal).
 */
const uint64_t *imexd_broker_refusals(const struct imexd_broker *b);

#endif /* IMEXD_BROKER_H */
