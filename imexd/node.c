// SPDX-License-Identifier: GPL-2.0
/*
 * The node dispatcher (node.h): every event goes to the part it concerns;
 * the parts' actions become other parts' inputs or actions for the caller.
 * agree refuses input while it has actions not yet drained, so every call
 * into it is followed at once by draining it (ag_drain); what its actions
 * would feed back into it (a FORWARD that could not be sent) waits in a
 * small list until the drain is over.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/imex.h>

#include "agree.h"
#include "grow.h"
#include "msgid.h"
#include "node_internal.h"

/* ---- the caller's action queue ------------------------------------------ */

static struct node_out *out_push(struct imexd_node *n,
				 enum imexd_node_action_type type)
{
	struct node_out *o;

	if (n->out_head && n->out_head == n->n_out)
		n->out_head = n->n_out = 0;
	if (imexd_grow((void **)&n->out, &n->cap_out, n->n_out + 1,
		       sizeof(*n->out)))
		return NULL;
	o = &n->out[n->n_out++];
	memset(o, 0, sizeof(*o));
	o->a.type = type;
	return o;
}

void node_out_release(struct node_out *o)
{
	free(o->frame);
	free(o->text);
	free(o->ids);
	free(o->addr);
	free(o->peer);
	imexd_def_free(&o->def);
	free(o->st_members);
	/* What a second release would free again; an entry is cleared
	 * whole when pushed (released once per action: keep it cheap). */
	o->frame = NULL;
	o->text = NULL;
	o->ids = NULL;
	o->addr = NULL;
	o->peer = NULL;
	o->st_members = NULL;
}

static void node_vlog(struct imexd_node *n, const struct imexd_log_fields *f,
		      int level, const char *fmt, va_list ap)
{
	struct node_out *o = out_push(n, IMEXD_NODE_LOG);

	if (!o)
		return;
	if (vasprintf(&o->text, fmt, ap) < 0)
		o->text = NULL;
	if (!o->text) {
		n->n_out--;
		return;
	}
	o->a.level = level;
	if (f)
		o->a.fields = *f;
}

void node_log_f(struct imexd_node *n, const struct imexd_log_fields *f,
		int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	node_vlog(n, f, level, fmt, ap);
	va_end(ap);
}

void node_log(struct imexd_node *n, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	node_vlog(n, NULL, level, fmt, ap);
	va_end(ap);
}

static char *dup_str(const char *s)
{
	return strdup(s ? s : "");
}

/* Pointers of @o into its own storage, once it sits at its final place. */
static void out_fix(struct node_out *o)
{
	o->a.frame = o->frame;
	o->a.text = o->text;
	o->a.ids = o->ids;
	o->a.addr = o->addr;
	o->a.peer = o->peer;
	o->a.def = o->has_def ? &o->def : NULL;
	if (o->has_status) {
		o->st.members = o->st_members;
		o->a.status = &o->st;
	}
	o->a.desc = o->desc_len ? o->desc : NULL;
}

bool imexd_node_next(struct imexd_node *n, struct imexd_node_action *a)
{
	node_out_release(&n->cur);
	if (n->out_head >= n->n_out) {
		n->out_head = n->n_out = 0;
		return false;
	}
	n->cur = n->out[n->out_head++];
	out_fix(&n->cur);
	*a = n->cur.a;
	return true;
}

/* ---- roster --------------------------------------------------------------- */

static int roster_find(const struct imexd_node *n, const char *name)
{
	size_t i;

	for (i = 0; i < n->n_roster; i++)
		if (!strcmp(n->roster[i].name, name))
			return (int)i;
	return -1;
}

/* "host:port" with the default port added when there is none. */
static void addr_norm(const struct imexd_node *n, const char *in, char *out,
		      size_t len)
{
	const char *colon = strrchr(in, ':');
	bool v6 = in[0] == '[';

	if ((colon && (!v6 || colon > strchr(in, ']'))) || !in[0])
		snprintf(out, len, "%s", in);
	else
		snprintf(out, len, "%s:%u", in, (unsigned)n->cfg.default_port);
}

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
	o = out_push(n, IMEXD_NODE_REQUEST_DONE);

	if (!o)
		return;
	o->a.req_id = aa->tag;
	o->a.index = aa->index;
	o->a.error = aa->error;
	o->text = dup_str(aa->message);
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
	struct node_out *o = out_push(n, aa->step == IMEXD_REC_REMOVE ?
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
		o = out_push(n, IMEXD_NODE_CONNECT);
		if (o)
			o->addr = dup_str(pa->addr);
		break;
	case IMEXD_PEERS_CLOSE:
		o = out_push(n, IMEXD_NODE_CLOSE);
		if (o)
			o->a.conn = pa->conn;
		break;
	case IMEXD_PEERS_SEND:
		o = out_push(n, IMEXD_NODE_SEND);
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
		o = out_push(n, IMEXD_NODE_CONN_BOUND);
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
		o = out_push(n, IMEXD_NODE_IMPORT_DONE);
		break;
	case IMEXD_BROKER_CHECK:
		o = out_push(n, IMEXD_NODE_IMPORT_CHECK);
		break;
	case IMEXD_BROKER_REVOKE:
		o = out_push(n, IMEXD_NODE_IMPORT_REVOKE);
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
		o->text = dup_str(ba->text);
	if (ba->to)
		o->peer = dup_str(ba->to);
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

/* ---- life ----------------------------------------------------------------- */

int imexd_node_new(const struct imexd_node_config *cfg,
		   struct imexd_node **out, char *err, size_t errlen)
{
	struct imexd_node *n;
	int rv;

	*out = NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->cfg = *cfg;
	n->cfg.roster = NULL;
	if (!n->cfg.default_port)
		n->cfg.default_port = IMEXD_DEFAULT_PORT;
	rv = node_roster_init(n, cfg, err, errlen);
	if (!rv)
		rv = node_parts_new(n, err, errlen);
	if (rv) {
		imexd_node_free(n);
		return rv;
	}
	*out = n;
	return 0;
}

void imexd_node_free(struct imexd_node *n)
{
	size_t i;

	if (!n)
		return;
	imexd_peers_free(n->peers);
	imexd_agree_free(n->agree);
	imexd_health_free(n->health);
	imexd_broker_free(n->broker);
	for (i = n->out_head; i < n->n_out; i++)
		node_out_release(&n->out[i]);
	node_out_release(&n->cur);
	free(n->out);
	free(n->roster);
	free(n->hellos);
	free(n->names);
	node_kernel_set(n, NULL, 0);
	for (i = 0; i < n->n_parked; i++)
		node_out_release(&n->parked[i].o);
	free(n->parked);
	free(n->unsent);
	free(n->dom_sig);
	free(n);
}

int imexd_node_start(struct imexd_node *n, uint64_t now,
		     const struct imexd_def *kernel, size_t nkernel)
{
	int rv;

	n->now = now;
	n->started = now;
	rv = node_kernel_set(n, kernel, nkernel);
	if (rv)
		return rv;
	if (n->outside)
		node_log(n, IMEXD_LOG_INFO,
			 "this node '%s' is not in NODES_FILE: it waits until a node of the group runs 'imexctl node join %s'",
			 n->cfg.name, n->cfg.name);
	rv = imexd_agree_start(n->agree, now, kernel, nkernel);
	node_ag(n, rv, "start");
	if (rv)
		return rv;
	imexd_peers_start(n->peers, now);
	n->domains_dirty = true;
	node_pump(n);
	return 0;
}

void imexd_node_set_wall(struct imexd_node *n, int64_t wall_minus_now)
{
	imexd_health_set_wall(n->health, wall_minus_now);
}

/* No leader known: why, for the reason of every domain not READY. */
static void node_quorum(struct imexd_node *n)
{
	char q[IMEXD_REASON_MAX] = "";

	if (!n->leader[0])
		imexd_agree_quorum(n->agree, n->now, q, sizeof(q));
	imexd_health_set_quorum(n->health, n->now, q);
}

void imexd_node_timer(struct imexd_node *n, uint64_t now)
{
	n->now = now;
	if (imexd_agree_timeout(n->agree) <= now)
		node_ag(n, imexd_agree_tick(n->agree, now), "timer");
	if (imexd_peers_deadline(n->peers) <= now)
		imexd_peers_timer(n->peers, now);
	if (imexd_health_deadline(n->health) <= now)
		imexd_health_timer(n->health, now);
	if (imexd_broker_deadline(n->broker) <= now)
		imexd_broker_timer(n->broker, now);
	node_joins_expire(n);
	node_quorum(n);
	node_pump(n);
	node_parked_release(n);
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t imexd_node_deadline(const struct imexd_node *n)
{
	uint64_t t = imexd_agree_timeout(n->agree);

	t = min64(t, imexd_peers_deadline(n->peers));
	t = min64(t, imexd_health_deadline(n->health));
	t = min64(t, node_parked_deadline(n));
	t = min64(t, node_joins_deadline(n));
	return min64(t, imexd_broker_deadline(n->broker));
}

void imexd_node_set_timing(struct imexd_node *n, uint32_t heartbeat_ms,
			   uint32_t miss_count, int64_t grace_ms)
{
	imexd_health_set_timing(n->health, heartbeat_ms, miss_count,
				grace_ms);
}

void imexd_node_shutdown(struct imexd_node *n, uint64_t now)
{
	n->now = now;
	imexd_peers_shutdown(n->peers, now);
	imexd_broker_shutdown(n->broker, now);
	node_pump(n);
}

/* ---- transport events ----------------------------------------------------- */

void imexd_node_conn_up(struct imexd_node *n, uint64_t now, uint64_t conn,
			const char *addr, bool outbound,
			const struct imexd_peers_auth *auth)
{
	n->now = now;
	imexd_peers_conn_up(n->peers, now, conn, addr, outbound, auth);
	node_pump(n);
}

void imexd_node_conn_failed(struct imexd_node *n, uint64_t now,
			    const char *addr)
{
	n->now = now;
	imexd_peers_conn_failed(n->peers, now, addr);
	node_pump(n);
}

void imexd_node_conn_down(struct imexd_node *n, uint64_t now, uint64_t conn)
{
	n->now = now;
	imexd_peers_conn_down(n->peers, now, conn);
	node_pump(n);
}

void imexd_node_msg(struct imexd_node *n, uint64_t now, uint64_t conn,
		    const struct imexd_msg *msg)
{
	n->now = now;
	imexd_peers_msg(n->peers, now, conn, msg);
	node_pump(n);
}

/* ---- kernel and imports --------------------------------------------------- */

void imexd_node_kernel_done(struct imexd_node *n, uint64_t now, int error,
			    const char *message,
			    const struct imexd_def *kernel, size_t nkernel)
{
	n->now = now;
	if (!n->kernel_busy) {
		node_log(n, IMEXD_LOG_ERR,
			 "a kernel step's result came with no step running (a bug in imexd: please report it)");
		node_pump(n);
		return;
	}
	n->kernel_busy = false;
	if (error)
		node_log(n, IMEXD_LOG_WARN, "kernel step refused: %s (%s)",
			 message && message[0] ? message : strerror(error),
			 strerror(error));
	if (node_kernel_set(n, kernel, nkernel))
		node_log(n, IMEXD_LOG_ERR,
			 "out of memory keeping the kernel's domains");
	node_applied_refresh(n);
	node_ag(n, imexd_agree_kernel_done(n->agree, now, error, kernel,
					   nkernel), "a kernel step");
	/* Health's status for what the kernel now holds goes first: the
	 * kernel shows a fresh domain, or one a member joined, DEGRADED until
	 * its manager says what it is, and the caller reads the state as soon
	 * as the answer comes. */
	node_pump(n);
	node_parked_release(n);
}

void imexd_node_import(struct imexd_node *n, uint64_t now,
		       const struct imexd_import *imp)
{
	n->now = now;
	imexd_broker_import(n->broker, now, node_fsm(n), imp);
	node_pump(n);
}

void imexd_node_import_checked(struct imexd_node *n, uint64_t now,
			       uint64_t op_id, int error, const uint8_t *desc,
			       uint16_t desc_len)
{
	n->now = now;
	imexd_broker_checked(n->broker, now, op_id, error, desc, desc_len);
	node_pump(n);
}

void imexd_node_export_del(struct imexd_node *n, uint64_t now,
			   uint64_t handle_id, const uint8_t domain_uuid[16],
			   uint32_t channel_id)
{
	n->now = now;
	imexd_broker_export_del(n->broker, now, node_fsm(n), handle_id,
				domain_uuid, channel_id);
	node_pump(n);
}

/* ---- views ---------------------------------------------------------------- */

size_t imexd_node_domains(const struct imexd_node *n,
			  const struct imexd_def **defs, size_t max)
{
	const struct imexd_fsm *fsm = node_fsm(n);
	const struct imexd_def *d;
	size_t pos = 0, k = 0;

	if (!fsm)
		return 0;
	while ((d = imexd_fsm_domain_of(fsm, n->cfg.name, &pos))) {
		if (defs && k < max)
			defs[k] = d;
		k++;
	}
	return k;
}

bool imexd_node_domain_ready(const struct imexd_node *n,
			     const uint8_t uuid[16])
{
	return imexd_health_ready(n->health, uuid);
}

uint8_t imexd_node_peer_state(const struct imexd_node *n, const char *name)
{
	return imexd_health_peer_state(n->health, name);
}

const struct imexd_fsm *imexd_node_fsm(const struct imexd_node *n)
{
	return node_fsm(n);
}

const char *imexd_node_leader(const struct imexd_node *n)
{
	return n->leader[0] ? n->leader : NULL;
}

const struct imexd_agree *imexd_node_agree(const struct imexd_node *n)
{
	return n->agree;
}

const struct imexd_broker *imexd_node_broker(const struct imexd_node *n)
{
	return n->broker;
}

void imexd_node_set_applied_hook(struct imexd_node *n,
				 imexd_node_applied_fn *fn, void *ctx)
{
	n->applied_fn = fn;
	n->applied_ctx = ctx;
}

/* Used by node_req.c. */
void node_addr_norm(const struct imexd_node *n, const char *in, char *out,
		    size_t len)
{
	addr_norm(n, in, out, len);
}

int node_roster_index(const struct imexd_node *n, const char *name)
{
	return roster_find(n, name);
}

struct node_out *node_out_push(struct imexd_node *n,
			       enum imexd_node_action_type type)
{
	return out_push(n, type);
}
