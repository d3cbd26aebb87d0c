// SPDX-License-Identifier: GPL-2.0
/*
 * The node dispatcher's pump (see node.c): the actions of agree, peers,
 * health and the broker become other parts' inputs or actions for the
 * caller, until no part has anything left.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/imex.h>

#include "agree.h"
#include "msgid.h"
#include "node_internal.h"

/* ---- agree ---------------------------------------------------------------- */

static void send_msg(struct imexd_node *n, const char *to, struct imexd_msg *m,
		     const char *what)
{
	int rv = imexd_peers_send(n->peers, to, m);

	if (rv && rv != -ENOTCONN)
		node_log(n, IMEXD_LOG_ERR, "cannot send %s to node '%s': %s",
			 what, to, strerror(-rv));
}

static void on_agree_done(struct imexd_node *n,
			  const struct imexd_agree_action *aa)
{
	struct node_out *o;

	node_join_done(n, aa->tag);
	o = node_out_push(n, IMEXD_NODE_REQUEST_DONE);

	if (!o)
		return;
	o->a.req_id = aa->tag;
	o->a.index = aa->index;
	o->a.error = aa->error;
	o->text = node_dup_str(aa->message);
	if (aa->def && aa->def->name[0] &&
	    !imexd_def_copy(&o->def, aa->def))
		o->has_def = true;
	if (aa->nids) {
		o->ids = malloc(aa->nids * sizeof(*o->ids));
		if (o->ids) {
			memcpy(o->ids, aa->ids, aa->nids * sizeof(*o->ids));
			o->a.nids = aa->nids;
		}
	}
	if (!aa->error && aa->index && o->has_def &&
	    imexd_def_has_member(&o->def, n->cfg.name))
		node_park(n, o, aa->index);
}

/*
 * The kernel is about to drop members of a domain that still names this
 * node (a replace or an evict): our imports of their exports through that
 * domain go, as if they were lost; nothing else is revoked.  Judged from
 * the kernel's list, not the log entry, so a replayed log revokes nothing
 * twice and a snapshot that skipped the entry still revokes.
 */
static void node_members_gone(struct imexd_node *n,
			      const struct imexd_agree_action *aa)
{
	size_t i;

	if (aa->step != IMEXD_REC_SET || !aa->was || !aa->def)
		return;
	for (i = 0; i < aa->was->nmembers; i++) {
		const char *name = aa->was->members[i].name;

		if (strcmp(name, n->cfg.name) &&
		    !imexd_def_has_member(aa->def, name))
			imexd_broker_member_gone(n->broker, n->now, name,
						 aa->def, node_fsm(n));
	}
}

static void on_agree_kernel(struct imexd_node *n,
			    const struct imexd_agree_action *aa)
{
	struct node_out *o = node_out_push(n, aa->step == IMEXD_REC_REMOVE ?
					   IMEXD_NODE_KERNEL_REMOVE :
					   IMEXD_NODE_KERNEL_SET);

	if (!o || imexd_def_copy(&o->def, aa->def)) {
		if (o)
			n->n_out--;
		/* The step never ran: say so, agree retries next round. */
		n->kernel_lost = true;
		return;
	}
	o->has_def = true;
	n->kernel_busy = true;
	node_members_gone(n, aa);
}

static void on_agree(struct imexd_node *n, const struct imexd_agree_action *aa)
{
	struct imexd_msg m;

	memset(&m, 0, sizeof(m));
	switch (aa->type) {
	case IMEXD_AGREE_SEND:
		m.type = IMEXD_MSG_RAFT;
		m.u.raft.len = (uint32_t)aa->len;
		m.u.raft.data = (uint8_t *)aa->data;
		send_msg(n, aa->to, &m, "raft traffic");
		break;
	case IMEXD_AGREE_FORWARD:
		m.type = IMEXD_MSG_FORWARD;
		m.u.forward.tag = aa->tag;
		m.u.forward.len = (uint32_t)aa->len;
		m.u.forward.cmd = (uint8_t *)aa->data;
		if (imexd_peers_send(n->peers, aa->to, &m))
			node_unsent_add(n, aa->to, aa->tag);
		break;
	case IMEXD_AGREE_REPLY:
		m.type = IMEXD_MSG_REPLY;
		m.u.reply.tag = aa->tag;
		m.u.reply.error = aa->error;
		snprintf(m.u.reply.message, sizeof(m.u.reply.message), "%s",
			 aa->message ? aa->message : "");
		m.u.reply.index = aa->index;
		if (aa->def && aa->def->name[0]) {
			m.u.reply.has_def = true;
			m.u.reply.def = *aa->def;
			memcpy(m.domain_uuid, aa->def->uuid, 16);
		}
		m.u.reply.nids = aa->nids;
		m.u.reply.ids = (uint32_t *)aa->ids;
		send_msg(n, aa->to, &m, "a request's answer");
		break;
	case IMEXD_AGREE_DONE:
		on_agree_done(n, aa);
		break;
	case IMEXD_AGREE_KERNEL:
		on_agree_kernel(n, aa);
		break;
	case IMEXD_AGREE_APPLIED:
		n->domains_dirty = true;
		if (n->applied_fn)
			n->applied_fn(n->applied_ctx, aa->index, aa->data,
				      aa->len);
		node_log(n, IMEXD_LOG_DEBUG, "applied entry %llu: %s",
			 (unsigned long long)aa->index,
			 aa->error ? aa->message : "ok");
		break;
	case IMEXD_AGREE_LOG:
		node_log_f(n, &aa->fields, aa->level, "%s", aa->message);
		break;
	case IMEXD_AGREE_JOIN_CHECK:
		node_join_check(n, aa->to, aa->message, aa->tag);
		break;
	case IMEXD_AGREE_STATE:
		if ((aa->leader ? aa->leader : "")[0] != n->leader[0] ||
		    strcmp(aa->leader ? aa->leader : "", n->leader))
			node_log(n, IMEXD_LOG_INFO,
				 "raft: term %llu, %s%s",
				 (unsigned long long)aa->term,
				 aa->leader ? "leader " : "no leader known",
				 aa->leader ? aa->leader : "");
		snprintf(n->leader, sizeof(n->leader), "%s",
			 aa->leader ? aa->leader : "");
		break;
	}
}

/* After every call into agree: drain it, then feed back what waits. */
void node_ag(struct imexd_node *n, int rv, const char *what)
{
	const struct imexd_fsm *fsm;
	struct imexd_agree_action aa;

	if (rv < 0)
		node_log(n, IMEXD_LOG_ERR, "agreement: %s failed: %s", what,
			 strerror(-rv));
	if (n->in_agree)
		return;
	n->in_agree = true;
	while (imexd_agree_next(n->agree, &aa))
		on_agree(n, &aa);
	n->in_agree = false;
	/* A restored snapshot changes the table without an APPLIED. */
	fsm = node_fsm(n);
	if (fsm && imexd_fsm_last_index(fsm) != n->fsm_index) {
		n->fsm_index = imexd_fsm_last_index(fsm);
		n->domains_dirty = true;
	}
	node_members_sync(n);
	node_unsent_flush(n);
	node_checks_answer(n);
	if (n->kernel_lost) {
		n->kernel_lost = false;
		node_ag(n, imexd_agree_kernel_done(n->agree, n->now, ENOMEM,
						   n->kernel, n->n_kernel),
			"a kernel step");
	}
}

/* ---- the parts' other actions --------------------------------------------- */

static void on_peers(struct imexd_node *n, const struct imexd_peers_action *pa)
{
	struct imexd_log_fields lf;
	struct node_out *o;

	switch (pa->type) {
	case IMEXD_PEERS_CONNECT:
		o = node_out_push(n, IMEXD_NODE_CONNECT);
		if (o)
			o->addr = node_dup_str(pa->addr);
		break;
	case IMEXD_PEERS_CLOSE:
		o = node_out_push(n, IMEXD_NODE_CLOSE);
		if (o)
			o->a.conn = pa->conn;
		break;
	case IMEXD_PEERS_SEND:
		o = node_out_push(n, IMEXD_NODE_SEND);
		if (!o)
			break;
		o->a.conn = pa->conn;
		o->frame = malloc(pa->len);
		if (!o->frame) {
			n->n_out--;
			break;
		}
		memcpy(o->frame, pa->frame, pa->len);
		o->a.len = pa->len;
		break;
	case IMEXD_PEERS_PEER_UP:
		o = node_out_push(n, IMEXD_NODE_CONN_BOUND);
		if (o)
			o->a.conn = imexd_peers_conn(n->peers, pa->name);
		if (pa->restarted) {
			imexd_log_fields_set(&lf, IMEXD_MSGID_MEMBER_RESTARTED,
					     NULL, pa->name);
			node_log_f(n, &lf, IMEXD_LOG_INFO,
				   "node '%s' restarted (a new instance): what it had exported is gone",
				   pa->name);
		}
		imexd_health_peer_up(n->health, n->now, pa->name);
		imexd_broker_peer_up(n->broker, n->now, pa->name,
				     pa->restarted, node_fsm(n));
		node_hello(n, pa->name, pa->msg);
		node_ag(n, imexd_agree_peer_up(n->agree, n->now, pa->name),
			"a node's connection");
		if (pa->replaced)
			node_ag(n, imexd_agree_peer_replaced(n->agree, n->now,
							     pa->name),
				"a node's replaced connection");
		break;
	case IMEXD_PEERS_PEER_DOWN:
		node_peer_down(n, pa->name);
		imexd_health_peer_down_why(n->health, n->now, pa->name,
					   pa->text);
		imexd_broker_peer_down(n->broker, n->now, pa->name);
		break;
	case IMEXD_PEERS_PEER_VERSION:
		imexd_health_peer_version_why(n->health, n->now, pa->name,
					      pa->text);
		break;
	case IMEXD_PEERS_PEER_REFUSED:
		imexd_health_peer_refused(n->health, n->now, pa->name,
					  pa->text);
		break;
	case IMEXD_PEERS_MSG:
		node_route(n, pa->name, pa->msg);
		break;
	case IMEXD_PEERS_LOG:
		node_log(n, pa->level, "%s", pa->text);
		break;
	}
}

static void on_health(struct imexd_node *n,
		      const struct imexd_health_action *ha)
{
	switch (ha->type) {
	case IMEXD_HEALTH_SEND:
		send_msg(n, ha->to, ha->msg, "a heartbeat");
		break;
	case IMEXD_HEALTH_STATUS:
		node_status_out(n, ha->status);
		break;
	case IMEXD_HEALTH_PEER_LOST:
		imexd_broker_peer_lost(n->broker, n->now, ha->to, node_fsm(n));
		/* Back (heartbeats on the connection it kept) before the
		 * verdict was drained: its imports went, new ones may come. */
		if (imexd_health_peer_state(n->health, ha->to) ==
		    IMEX_MEMBER_CONNECTED &&
		    imexd_peers_connected(n->peers, ha->to))
			imexd_broker_peer_up(n->broker, n->now, ha->to, false,
					     node_fsm(n));
		break;
	case IMEXD_HEALTH_LOG:
		node_log_f(n, &ha->fields, ha->level, "%s", ha->text);
		break;
	}
}

static void on_broker(struct imexd_node *n,
		      const struct imexd_broker_action *ba)
{
	struct node_out *o;

	switch (ba->type) {
	case IMEXD_BROKER_SEND:
		send_msg(n, ba->to, ba->msg, "an import message");
		return;
	case IMEXD_BROKER_LOG:
		node_log_f(n, &ba->fields, ba->level, "%s", ba->text);
		return;
	case IMEXD_BROKER_DONE:
		o = node_out_push(n, IMEXD_NODE_IMPORT_DONE);
		break;
	case IMEXD_BROKER_CHECK:
		o = node_out_push(n, IMEXD_NODE_IMPORT_CHECK);
		break;
	case IMEXD_BROKER_REVOKE:
		o = node_out_push(n, IMEXD_NODE_IMPORT_REVOKE);
		break;
	default:
		return;
	}
	if (!o)
		return;
	o->a.import_id = ba->import_id;
	o->a.op_id = ba->op_id;
	o->a.error = ba->error;
	o->a.handle_id = ba->handle_id;
	o->a.has_handle = ba->has_handle;
	o->a.has_domain = ba->has_domain;
	memcpy(o->a.node_uuid, ba->node_uuid, 16);
	memcpy(o->a.domain_uuid, ba->domain_uuid, 16);
	o->a.channel_id = ba->channel_id;
	o->a.reason = ba->reason;
	if (ba->desc_len && ba->desc_len <= sizeof(o->desc)) {
		memcpy(o->desc, ba->desc, ba->desc_len);
		o->desc_len = ba->desc_len;
		o->a.desc_len = ba->desc_len;
	}
	if (ba->text)
		o->text = node_dup_str(ba->text);
	if (ba->to)
		o->peer = node_dup_str(ba->to);
}

/* Drain every part until none has anything left. */
void node_pump(struct imexd_node *n)
{
	struct imexd_peers_action pa;
	struct imexd_health_action ha;
	struct imexd_broker_action ba;
	bool more;

	do {
		more = false;
		node_ag(n, 0, NULL);
		/* Sent in HELLO; peers of another group are refused. */
		imexd_peers_set_group(n->peers, n->now,
				      imexd_agree_group(n->agree));
		while (imexd_peers_next(n->peers, &pa)) {
			on_peers(n, &pa);
			more = true;
		}
		/* After a kernel step under way: health's first heartbeats
		 * for a new domain then carry what the kernel holds. */
		if (n->domains_dirty && !n->kernel_busy) {
			n->domains_dirty = false;
			node_domains_refresh(n);
			more = true;
		}
		while (imexd_health_next(n->health, &ha)) {
			on_health(n, &ha);
			more = true;
		}
		while (imexd_broker_next(n->broker, &ba)) {
			on_broker(n, &ba);
			more = true;
		}
		if (!more && n->n_parked) {
			size_t before = n->n_parked;

			node_parked_release(n);
			more = n->n_parked != before;
		}
	} while (more);
}
