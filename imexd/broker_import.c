// SPDX-License-Identifier: GPL-2.0
/*
 * broker: an import's round trip (see broker.h).  The importing node asks
 * the exporter (IMPORT_REQ) and waits for its answer; the exporting node
 * has its kernel check the request and answers (IMPORT_RESP), and sends
 * or holds the ends of its exports (EXPORT_REVOKE).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "broker_internal.h"
#include "grow.h"
#include "imex_uuid.h"
#include "metrics.h"
#include "msgid.h"

/* ---- importing node ---- */

void imexd_broker_import(struct imexd_broker *b, uint64_t now,
			 const struct imexd_fsm *fsm,
			 const struct imexd_import *imp)
{
	const struct imexd_def *d;
	const char *peer, *known;
	struct brk_import *im;
	struct imexd_msg *m;
	char u[37], du[37];
	bool many;

	brk_begin(b);
	imex_uuid_format(imp->handle_node, u);
	if (b->shut) {
		brk_done(b, imp->import_id, ESHUTDOWN, NULL, 0,
			 "imexd is shutting down");
		return;
	}
	d = brk_domain(b, fsm, imp->domain_uuid, NULL);
	if (!d) {
		imex_uuid_format(imp->domain_uuid, du);
		brk_done(b, imp->import_id, ENOENT, NULL, 0,
			 "domain %s is not one of this node's", du);
		return;
	}
	peer = brk_exporter(b, fsm, d, imp->handle_node, &many);
	if (!peer) {
		known = brk_node_name(fsm, imp->handle_node);
		brk_fields(b, IMEXD_MSGID_IMPORT_REFUSED, d->name, known);
		brk_log(b, LOG_INFO,
			"import %llu refused: node %s%s%s%s is %s of domain '%s'",
			(unsigned long long)imp->import_id, u,
			known ? " ('" : "", known ? known : "",
			known ? "')" : "",
			many ? "reported by more than one member" :
			"not another member", d->name);
		brk_done(b, imp->import_id, ENOENT, NULL, 0,
			 "handle's node %s is not a member of domain '%s'",
			 u, d->name);
		return;
	}
	if (!brk_is_up(b, peer)) {
		brk_done(b, imp->import_id, EHOSTUNREACH, NULL, 0,
			 "node %s is not connected", peer);
		return;
	}
	if (b->nimps >= IMEXD_BROKER_IMPORTS_MAX) {
		brk_done(b, imp->import_id, EAGAIN, NULL, 0,
			 "%u remote imports already waiting: retry",
			 IMEXD_BROKER_IMPORTS_MAX);
		return;
	}
	if (imexd_grow((void **)&b->imps, &b->imps_cap, b->nimps + 1,
		       sizeof(*b->imps))) {
		brk_done(b, imp->import_id, ENOMEM, NULL, 0,
			 "imexd is out of memory");
		return;
	}
	m = brk_send(b, peer, IMEXD_MSG_IMPORT_REQ, imp->domain_uuid);
	if (!m)
		return;		/* not even room to answer: the kernel times out */
	m->u.import_req.tag = imp->import_id;
	m->u.import_req.handle_id = imp->handle_id;
	m->u.import_req.channel_id = imp->channel_id;
	im = &b->imps[b->nimps++];
	memset(im, 0, sizeof(*im));
	im->import_id = imp->import_id;
	snprintf(im->peer, sizeof(im->peer), "%s", peer);
	memcpy(im->domain_uuid, imp->domain_uuid, 16);
	im->deadline = now + IMEX_IMPORT_TIMEOUT_MAX_MS;
	im->end = BRK_WAITING;
}

void brk_resp_in(struct imexd_broker *b, uint64_t now,
		 const char *from, const struct imexd_msg *msg)
{
	const uint64_t tag = msg->u.import_resp.tag;
	struct brk_import im;
	int status;
	size_t i;

	for (i = 0; i < b->nimps; i++)
		if (b->imps[i].import_id == tag &&
		    b->imps[i].end == BRK_WAITING &&
		    !memcmp(b->imps[i].domain_uuid, msg->domain_uuid, 16))
			break;
	if (i == b->nimps) {
		brk_log_limited(b, now, BRK_LIM_RESP_STRAY, LOG_INFO,
				"IMPORT_RESP %llu from node '%s' answers no import waiting here: dropped",
				(unsigned long long)tag, from);
		return;
	}
	if (strcmp(b->imps[i].peer, from)) {
		brk_log_limited(b, now, BRK_LIM_RESP_WRONG_PEER, LOG_WARNING,
				"IMPORT_RESP %llu from node '%s' answers a request made to node '%s': dropped",
				(unsigned long long)tag, from,
				b->imps[i].peer);
		return;
	}
	im = b->imps[i];
	brk_imp_remove(b, i);
	status = msg->u.import_resp.status;
	if (status < 0 || status > BRK_ERRNO_MAX ||
	    (!status && (!msg->u.import_resp.desc_len ||
			 msg->u.import_resp.desc_len > IMEX_DESC_MAX)))
		status = EPROTO;
	if (status)
		brk_done(b, im.import_id, status, NULL, 0, "node %s: %s",
			 from, strerror(status));
	else
		brk_done(b, im.import_id, 0, msg->u.import_resp.desc,
			 msg->u.import_resp.desc_len, "%s", "");
}

/* ---- exporting node ---- */

static void brk_resp_send(struct imexd_broker *b, const char *to,
			  const uint8_t domain_uuid[16], uint64_t tag,
			  int error, const uint8_t *desc, uint16_t desc_len)
{
	struct imexd_msg *m;

	if (error < 0 || error > BRK_ERRNO_MAX)
		error = EPROTO;
	if (!error && (!desc || !desc_len || desc_len > IMEX_DESC_MAX))
		error = EPROTO;		/* the kernel gave no usable descriptor */
	if (error)
		b->refused[imexd_metrics_refusal_of(error)]++;
	m = brk_send(b, to, IMEXD_MSG_IMPORT_RESP, domain_uuid);
	if (!m)
		return;
	m->u.import_resp.tag = tag;
	m->u.import_resp.status = error;
	if (!error) {
		memcpy(m->u.import_resp.desc, desc, desc_len);
		m->u.import_resp.desc_len = desc_len;
	}
}

void brk_req_in(struct imexd_broker *b, uint64_t now,
		const struct imexd_fsm *fsm, const char *from,
		const struct imexd_msg *msg)
{
	const uint64_t tag = msg->u.import_req.tag;
	struct brk_check *ck;
	struct brk_act *e;
	char du[37];

	if (b->shut) {
		brk_resp_send(b, from, msg->domain_uuid, tag, ESHUTDOWN,
			      NULL, 0);
		return;
	}
	if (!brk_domain(b, fsm, msg->domain_uuid, from)) {
		imex_uuid_format(msg->domain_uuid, du);
		brk_fields(b, IMEXD_MSGID_IMPORT_REFUSED, NULL, from);
		brk_log_limited(b, now, BRK_LIM_REQ_REFUSED, LOG_WARNING,
				"IMPORT_REQ from node '%s' for domain %s, which does not name both it and this node: refused (EACCES)",
				from, du);
		brk_resp_send(b, from, msg->domain_uuid, tag, EACCES, NULL, 0);
		return;
	}
	if (b->nchecks >= IMEXD_BROKER_CHECKS_MAX) {
		brk_log_limited(b, now, BRK_LIM_CHECKS_FULL, LOG_WARNING,
				"%u imports already being checked: IMPORT_REQ %llu from node '%s' answered EAGAIN",
				IMEXD_BROKER_CHECKS_MAX,
				(unsigned long long)tag, from);
		brk_resp_send(b, from, msg->domain_uuid, tag, EAGAIN, NULL, 0);
		return;
	}
	if (imexd_grow((void **)&b->checks, &b->checks_cap, b->nchecks + 1,
		       sizeof(*b->checks))) {
		brk_resp_send(b, from, msg->domain_uuid, tag, ENOMEM, NULL, 0);
		return;
	}
	e = brk_push(b, IMEXD_BROKER_CHECK);
	if (!e)
		return;		/* the importer times out */
	ck = &b->checks[b->nchecks++];
	memset(ck, 0, sizeof(*ck));
	ck->op_id = ++b->next_op;
	snprintf(ck->peer, sizeof(ck->peer), "%s", from);
	memcpy(ck->domain_uuid, msg->domain_uuid, 16);
	ck->tag = tag;
	ck->deadline = now + IMEX_IMPORT_TIMEOUT_MAX_MS;
	e->a.op_id = ck->op_id;
	e->a.handle_id = msg->u.import_req.handle_id;
	e->a.has_handle = true;
	memcpy(e->a.domain_uuid, msg->domain_uuid, 16);
	e->a.has_domain = true;
	e->a.channel_id = msg->u.import_req.channel_id;
	snprintf(e->to, sizeof(e->to), "%s", from);
}

void imexd_broker_checked(struct imexd_broker *b, uint64_t now,
			  uint64_t op_id, int error, const uint8_t *desc,
			  uint16_t desc_len)
{
	struct brk_check ck;
	size_t i;

	(void)now;
	brk_begin(b);
	for (i = 0; i < b->nchecks; i++)
		if (b->checks[i].op_id == op_id)
			break;
	if (i == b->nchecks)
		return;		/* expired, or its peer went at shutdown */
	ck = b->checks[i];
	memmove(&b->checks[i], &b->checks[i + 1],
		(b->nchecks - i - 1) * sizeof(ck));
	b->nchecks--;
	/* The asker's connection went meanwhile: it failed the import. */
	if (ck.orphan || !brk_is_up(b, ck.peer))
		return;
	brk_resp_send(b, ck.peer, ck.domain_uuid, ck.tag, error, desc,
		      desc_len);
}

static bool brk_revoke_send(struct imexd_broker *b, const char *to,
			    const uint8_t domain_uuid[16], uint64_t handle_id)
{
	struct imexd_msg *m = brk_send(b, to, IMEXD_MSG_EXPORT_REVOKE,
				       domain_uuid);

	if (m)
		m->u.export_revoke.handle_id = handle_id;
	return m != NULL;
}

static void brk_revoke_hold(struct imexd_broker *b, uint64_t now,
			    const char *peer, const uint8_t domain_uuid[16],
			    uint64_t handle_id)
{
	struct brk_revoke *r;
	char du[37];
	size_t i;

	for (i = 0; i < b->nrevs; i++) {
		r = &b->revs[i];
		if (r->handle_id == handle_id && !strcmp(r->peer, peer) &&
		    !memcmp(r->domain_uuid, domain_uuid, 16))
			return;		/* held already */
	}
	if (b->nrevs >= IMEXD_BROKER_REVOKES_MAX) {
		r = &b->revs[0];
		imex_uuid_format(r->domain_uuid, du);
		brk_log_limited(b, now, BRK_LIM_HOLD_FULL, LOG_WARNING,
				"%u ends of exports wait for absent peers: the oldest (export %llu of domain %s, for node '%s') is dropped; that node keeps its import until it is lost or restarted",
				IMEXD_BROKER_REVOKES_MAX,
				(unsigned long long)r->handle_id, du,
				r->peer);
		memmove(&b->revs[0], &b->revs[1],
			(b->nrevs - 1) * sizeof(b->revs[0]));
		b->nrevs--;
	}
	if (imexd_grow((void **)&b->revs, &b->revs_cap, b->nrevs + 1,
		       sizeof(*b->revs))) {
		brk_log(b, LOG_ERR,
			"out of memory: the end of export %llu is not held for node '%s'",
			(unsigned long long)handle_id, peer);
		return;
	}
	r = &b->revs[b->nrevs++];
	memset(r, 0, sizeof(*r));
	snprintf(r->peer, sizeof(r->peer), "%s", peer);
	memcpy(r->domain_uuid, domain_uuid, 16);
	r->handle_id = handle_id;
}

void imexd_broker_export_del(struct imexd_broker *b, uint64_t now,
			     const struct imexd_fsm *fsm, uint64_t handle_id,
			     const uint8_t domain_uuid[16],
			     uint32_t channel_id)
{
	const struct imexd_def *d;
	uint16_t m;

	(void)channel_id;	/* EXPORT_REVOKE names the handle only */
	brk_begin(b);
	d = brk_domain(b, fsm, domain_uuid, NULL);
	if (b->shut || !d)
		return;		/* a gone domain took its imports along */
	for (m = 0; m < d->nmembers; m++) {
		const char *name = d->members[m].name;

		if (!strcmp(name, b->self))
			continue;
		if (brk_is_up(b, name))
			brk_revoke_send(b, name, domain_uuid, handle_id);
		else
			brk_revoke_hold(b, now, name, domain_uuid, handle_id);
	}
}

/* Send (@send) or drop what is held for peer @name, in order. */
void brk_revokes_flush(struct imexd_broker *b, const char *name,
		       bool send)
{
	size_t i, k = 0;

	for (i = 0; i < b->nrevs; i++) {
		const struct brk_revoke *r = &b->revs[i];

		if (strcmp(r->peer, name)) {
			b->revs[k++] = *r;
			continue;
		}
		if (send && !brk_revoke_send(b, name, r->domain_uuid,
					     r->handle_id))
			b->revs[k++] = *r;	/* no room: next time up */
	}
	b->nrevs = k;
}
