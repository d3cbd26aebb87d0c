// SPDX-License-Identifier: GPL-2.0
/*
 * broker: the node core's import broker (see broker.h).
 *
 * Three tables, each bounded and kept in arrival order: the imports this
 * node waits on (importer side), the checks its kernel makes for peers
 * (exporter side), and the ends of exports held for members that are
 * away.  Peers are the names the transport authenticated; a node's UUID
 * and a domain's members come from the fsm only.
 *
 * An import that ends for any reason but its answer (peer gone, timeout,
 * shutdown) is marked and reaped in one pass, so an event that ends many
 * never allocates per import; should an action not fit, the mark stays
 * and imexd_broker_deadline() asks for a timer at once.
 *
 * An import's round trip itself is in broker_import.c; what the two files
 * share is in broker_internal.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "broker_internal.h"
#include "grow.h"
#include "imex_uuid.h"
#include "metrics.h"
#include "msgid.h"

/* ---- actions ---- */

/* Every input starts here: what the caller drained goes, the rest stays. */
void brk_begin(struct imexd_broker *b)
{
	if (!b->next_act)
		return;
	memmove(b->acts, &b->acts[b->next_act],
		(b->nacts - b->next_act) * sizeof(*b->acts));
	b->nacts -= b->next_act;
	b->next_act = 0;
}

struct brk_act *brk_push(struct imexd_broker *b,
			 enum imexd_broker_action_type type)
{
	struct brk_act *e;

	if (imexd_grow((void **)&b->acts, &b->acts_cap, b->nacts + 1,
		       sizeof(*b->acts)))
		return NULL;
	e = &b->acts[b->nacts++];
	memset(e, 0, sizeof(*e));
	e->a.type = type;
	return e;
}

/* Fields for the next log line (brk_log, brk_log_limited) only. */
void brk_fields(struct imexd_broker *b, const char *msgid,
		const char *domain, const char *node)
{
	imexd_log_fields_set(&b->next_fields, msgid, domain, node);
}

static void brk_vtext(struct brk_act *e, const char *fmt, va_list ap)
{
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
}

/* A log line with the fields set for it; NULL when it does not fit. */
__attribute__((format(printf, 3, 0)))
static struct brk_act *brk_vlog(struct imexd_broker *b, int level,
				const char *fmt, va_list ap)
{
	struct brk_act *e = brk_push(b, IMEXD_BROKER_LOG);

	if (e)
		e->a.fields = b->next_fields;
	memset(&b->next_fields, 0, sizeof(b->next_fields));
	if (!e)
		return NULL;
	e->a.level = level;
	brk_vtext(e, fmt, ap);
	return e;
}

__attribute__((format(printf, 3, 4)))
void brk_log(struct imexd_broker *b, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	brk_vlog(b, level, fmt, ap);
	va_end(ap);
}

/* At most one line of kind @kind a minute; the next says how many went. */
__attribute__((format(printf, 5, 6)))
void brk_log_limited(struct imexd_broker *b, uint64_t now,
		     enum brk_limited kind, int level,
		     const char *fmt, ...)
{
	struct brk_limit *l = &b->lim[kind];
	struct brk_act *e;
	size_t len;
	va_list ap;

	if (l->used && now >= l->last && now - l->last < BRK_LOG_INTERVAL_MS) {
		memset(&b->next_fields, 0, sizeof(b->next_fields));
		l->skipped++;
		return;
	}
	va_start(ap, fmt);
	e = brk_vlog(b, level, fmt, ap);
	va_end(ap);
	if (!e)
		return;
	len = strlen(e->text);
	if (l->skipped)
		snprintf(e->text + len, sizeof(e->text) - len,
			 " (%u more like it in the last minute)", l->skipped);
	l->used = true;
	l->last = now;
	l->skipped = 0;
}

__attribute__((format(printf, 6, 7)))
bool brk_done(struct imexd_broker *b, uint64_t import_id, int error,
	      const uint8_t *desc, uint16_t desc_len,
	      const char *fmt, ...)
{
	struct brk_act *e = brk_push(b, IMEXD_BROKER_DONE);
	va_list ap;

	if (!e)
		return false;
	e->a.import_id = import_id;
	e->a.error = error;
	if (!error && desc && desc_len <= IMEX_DESC_MAX) {
		memcpy(e->desc, desc, desc_len);
		e->a.desc_len = desc_len;
	}
	va_start(ap, fmt);
	brk_vtext(e, fmt, ap);
	va_end(ap);
	return true;
}

struct imexd_msg *brk_send(struct imexd_broker *b, const char *to,
			   uint8_t type, const uint8_t domain_uuid[16])
{
	struct brk_act *e = brk_push(b, IMEXD_BROKER_SEND);

	if (!e)
		return NULL;
	snprintf(e->to, sizeof(e->to), "%s", to);
	e->msg.type = type;
	memcpy(e->msg.domain_uuid, domain_uuid, 16);
	return &e->msg;
}

static void brk_revoke_act(struct imexd_broker *b, const uint8_t node[16],
			   const uint64_t *handle_id,
			   const uint8_t *domain_uuid, uint8_t reason)
{
	struct brk_act *e = brk_push(b, IMEXD_BROKER_REVOKE);

	if (!e)
		return;
	memcpy(e->a.node_uuid, node, 16);
	if (handle_id) {
		e->a.has_handle = true;
		e->a.handle_id = *handle_id;
	}
	if (domain_uuid) {
		e->a.has_domain = true;
		memcpy(e->a.domain_uuid, domain_uuid, 16);
	}
	e->a.reason = reason;
}

bool imexd_broker_next(struct imexd_broker *b, struct imexd_broker_action *a)
{
	struct brk_act *e;

	if (b->next_act >= b->nacts)
		return false;
	e = &b->acts[b->next_act++];
	*a = e->a;
	a->to = e->to[0] ? e->to : NULL;
	a->msg = e->a.type == IMEXD_BROKER_SEND ? &e->msg : NULL;
	a->desc = e->a.desc_len ? e->desc : NULL;
	a->text = e->a.type == IMEXD_BROKER_DONE ||
		  e->a.type == IMEXD_BROKER_LOG ? e->text : NULL;
	return true;
}

/* ---- who is who ---- */

bool brk_is_up(const struct imexd_broker *b, const char *name)
{
	size_t i;

	for (i = 0; i < b->nup; i++)
		if (!strcmp(b->up[i], name))
			return true;
	return false;
}

static void brk_set_up(struct imexd_broker *b, const char *name, bool up)
{
	size_t i;

	for (i = 0; i < b->nup; i++)
		if (!strcmp(b->up[i], name))
			break;
	if (!up) {
		if (i < b->nup) {
			memmove(&b->up[i], &b->up[i + 1],
				(b->nup - i - 1) * sizeof(b->up[0]));
			b->nup--;
		}
		return;
	}
	if (i < b->nup)
		return;
	/* The transport binds roster names only; the roster is bounded. */
	if (b->nup >= IMEXD_FSM_NODES_MAX ||
	    imexd_grow((void **)&b->up, &b->up_cap, b->nup + 1,
		       sizeof(b->up[0]))) {
		brk_log(b, LOG_ERR,
			"broker: cannot track node '%s' as connected: ends of exports for it are held until it is lost",
			name);
		return;
	}
	snprintf(b->up[b->nup++], IMEX_NAME_MAX, "%s", name);
}

/*
 * The committed domain @uuid if it names this node and @peer (NULL: only
 * this node) as members; else NULL.
 */
const struct imexd_def *brk_domain(const struct imexd_broker *b,
				   const struct imexd_fsm *fsm,
				   const uint8_t uuid[16],
				   const char *peer)
{
	const struct imexd_def *d;

	d = fsm ? imexd_fsm_domain_by_uuid(fsm, uuid) : NULL;
	if (!d || (d->flags & IMEXD_DEF_DELETED) ||
	    !imexd_def_has_member(d, b->self))
		return NULL;
	if (peer && (!strcmp(peer, b->self) || !imexd_def_has_member(d, peer)))
		return NULL;
	return d;
}

/*
 * The member of @d other than this node whose reported node UUID is
 * @uuid; NULL when none, or when more than one reports it (*@many).
 */
const char *brk_exporter(const struct imexd_broker *b,
			 const struct imexd_fsm *fsm,
			 const struct imexd_def *d,
			 const uint8_t uuid[16], bool *many)
{
	const char *hit = NULL;
	uint16_t m;

	*many = false;
	for (m = 0; m < d->nmembers; m++) {
		const char *name = d->members[m].name;
		const struct imexd_fsm_node *n = imexd_fsm_node(fsm, name);

		if (!n || memcmp(n->uuid, uuid, 16) || !strcmp(name, b->self))
			continue;
		if (hit) {
			*many = true;
			return NULL;
		}
		hit = name;
	}
	return hit;
}

/* The first node of the table that reported @uuid, for messages; or NULL. */
const char *brk_node_name(const struct imexd_fsm *fsm,
			  const uint8_t uuid[16])
{
	size_t i, n = imexd_fsm_node_count(fsm);

	for (i = 0; i < n; i++) {
		const struct imexd_fsm_node *node = imexd_fsm_node_at(fsm, i);

		if (!memcmp(node->uuid, uuid, 16))
			return node->name;
	}
	return NULL;
}

/* ---- ending imports ---- */

void brk_imp_remove(struct imexd_broker *b, size_t i)
{
	memmove(&b->imps[i], &b->imps[i + 1],
		(b->nimps - i - 1) * sizeof(b->imps[0]));
	b->nimps--;
}

/* IMPORT_DONE for import @im, which ended or timed out at @now. */
static bool brk_imp_end(struct imexd_broker *b, uint64_t now,
			const struct brk_import *im)
{
	switch (im->end) {
	case BRK_WAITING:
		if (now < im->deadline)
			return false;
		brk_log(b, LOG_WARNING,
			"node '%s' did not answer import %llu in %u ms",
			im->peer, (unsigned long long)im->import_id,
			IMEX_IMPORT_TIMEOUT_MAX_MS);
		return brk_done(b, im->import_id, ETIMEDOUT, NULL, 0,
				"node %s did not answer in %u ms", im->peer,
				IMEX_IMPORT_TIMEOUT_MAX_MS);
	case BRK_END_DOWN:
		return brk_done(b, im->import_id, EHOSTUNREACH, NULL, 0,
				"connection to node %s lost before it answered",
				im->peer);
	case BRK_END_LOST:
		return brk_done(b, im->import_id, EHOSTUNREACH, NULL, 0,
				"node %s lost", im->peer);
	case BRK_END_RESTARTED:
		return brk_done(b, im->import_id, EHOSTUNREACH, NULL, 0,
				"node %s restarted before it answered",
				im->peer);
	case BRK_END_SHUTDOWN:
	default:
		return brk_done(b, im->import_id, ESHUTDOWN, NULL, 0,
				"imexd is shutting down");
	}
}

/* Tell the kernel of every import that ended; forget expired checks. */
static void brk_reap(struct imexd_broker *b, uint64_t now)
{
	size_t i, k = 0;

	for (i = 0; i < b->nimps; i++)
		if (!brk_imp_end(b, now, &b->imps[i]))
			b->imps[k++] = b->imps[i];
	b->nimps = k;
	for (i = 0, k = 0; i < b->nchecks; i++)
		if (now < b->checks[i].deadline)
			b->checks[k++] = b->checks[i];
	b->nchecks = k;
}

/* Peer @name's connection went (@end): its answers can no longer come. */
static void brk_peer_gone(struct imexd_broker *b, const char *name,
			  enum brk_end end)
{
	size_t i;

	for (i = 0; i < b->nimps; i++)
		if (b->imps[i].end == BRK_WAITING &&
		    !strcmp(b->imps[i].peer, name))
			b->imps[i].end = end;
	for (i = 0; i < b->nchecks; i++)
		if (!strcmp(b->checks[i].peer, name))
			b->checks[i].orphan = true;
}

/* ---- messages and peer events ---- */

static void brk_export_revoke_in(struct imexd_broker *b, uint64_t now,
				 const struct imexd_fsm *fsm, const char *from,
				 const struct imexd_msg *msg)
{
	const struct imexd_fsm_node *node = NULL;
	char du[37];

	if (brk_domain(b, fsm, msg->domain_uuid, from))
		node = imexd_fsm_node(fsm, from);
	if (!node) {
		imex_uuid_format(msg->domain_uuid, du);
		brk_log_limited(b, now, BRK_LIM_REVOKE_REFUSED, LOG_WARNING,
				"EXPORT_REVOKE from node '%s' for domain %s, which does not name both it and this node: ignored",
				from, du);
		return;
	}
	brk_revoke_act(b, node->uuid, &msg->u.export_revoke.handle_id,
		       msg->domain_uuid, IMEX_REVOKE_UNEXPORTED);
}

void imexd_broker_msg(struct imexd_broker *b, uint64_t now,
		      const struct imexd_fsm *fsm, const char *from,
		      const struct imexd_msg *msg)
{
	brk_begin(b);
	switch (msg->type) {
	case IMEXD_MSG_IMPORT_REQ:
		brk_req_in(b, now, fsm, from, msg);
		break;
	case IMEXD_MSG_IMPORT_RESP:
		brk_resp_in(b, now, from, msg);
		break;
	case IMEXD_MSG_EXPORT_REVOKE:
		brk_export_revoke_in(b, now, fsm, from, msg);
		break;
	default:
		brk_log_limited(b, now, BRK_LIM_MSG_TYPE, LOG_WARNING,
				"broker: %s from node '%s' is not for it: dropped",
				imexd_msg_type_name(msg->type), from);
		break;
	}
}

/* REVOKE every import of ours from @name's node (as the table knows it). */
static void brk_revoke_node(struct imexd_broker *b,
			    const struct imexd_fsm *fsm, const char *name,
			    uint8_t reason, const char *why)
{
	const struct imexd_fsm_node *node = fsm ? imexd_fsm_node(fsm, name) :
					    NULL;

	if (!node)
		return;		/* never reported: nothing imported from it */
	brk_log(b, LOG_WARNING,
		"node '%s' %s: revoking the imports of its exports", name, why);
	brk_revoke_act(b, node->uuid, NULL, NULL, reason);
}

void imexd_broker_peer_up(struct imexd_broker *b, uint64_t now,
			  const char *name, bool restarted,
			  const struct imexd_fsm *fsm)
{
	brk_begin(b);
	if (restarted) {
		/* The new instance dropped our exports and its requests. */
		brk_peer_gone(b, name, BRK_END_RESTARTED);
		brk_revokes_flush(b, name, false);
		brk_reap(b, now);
		brk_revoke_node(b, fsm, name, IMEX_REVOKE_NODE_RESTARTED,
				"restarted");
	}
	brk_set_up(b, name, true);
	if (!restarted)
		brk_revokes_flush(b, name, true);
}

void imexd_broker_peer_down(struct imexd_broker *b, uint64_t now,
			    const char *name)
{
	brk_begin(b);
	brk_set_up(b, name, false);
	brk_peer_gone(b, name, BRK_END_DOWN);
	brk_reap(b, now);
}

void imexd_broker_peer_lost(struct imexd_broker *b, uint64_t now,
			    const char *name, const struct imexd_fsm *fsm)
{
	brk_begin(b);
	brk_set_up(b, name, false);
	brk_peer_gone(b, name, BRK_END_LOST);
	brk_revokes_flush(b, name, false);
	brk_reap(b, now);
	brk_revoke_node(b, fsm, name, IMEX_REVOKE_NODE_LOST,
			"lost past its grace time");
}

void imexd_broker_member_gone(struct imexd_broker *b, uint64_t now,
			      const char *name, const struct imexd_def *d,
			      const struct imexd_fsm *fsm)
{
	const struct imexd_fsm_node *node = fsm ? imexd_fsm_node(fsm, name) :
					    NULL;

	(void)now;
	brk_begin(b);
	if (!node || !d)
		return;
	brk_log(b, LOG_INFO,
		"node '%s' left domain '%s': revoking the imports of its exports there",
		name, d->name);
	brk_revoke_act(b, node->uuid, NULL, d->uuid, IMEX_REVOKE_NODE_LOST);
}

void imexd_broker_timer(struct imexd_broker *b, uint64_t now)
{
	brk_begin(b);
	brk_reap(b, now);
}

uint64_t imexd_broker_deadline(const struct imexd_broker *b)
{
	uint64_t t = BRK_NO_TIME;
	size_t i;

	for (i = 0; i < b->nimps; i++) {
		if (b->imps[i].end != BRK_WAITING)
			return 0;	/* ended, its DONE did not fit: now */
		if (b->imps[i].deadline < t)
			t = b->imps[i].deadline;
	}
	for (i = 0; i < b->nchecks; i++)
		if (b->checks[i].deadline < t)
			t = b->checks[i].deadline;
	return t;
}

void imexd_broker_shutdown(struct imexd_broker *b, uint64_t now)
{
	size_t i;

	brk_begin(b);
	b->shut = true;
	for (i = 0; i < b->nimps; i++)
		if (b->imps[i].end == BRK_WAITING)
			b->imps[i].end = BRK_END_SHUTDOWN;
	b->nchecks = 0;
	b->nrevs = 0;
	brk_reap(b, now);
}

/* ---- life ---- */

int imexd_broker_new(const char *self, struct imexd_broker **out)
{
	struct imexd_broker *b;

	*out = NULL;
	if (!self || !imexd_name_valid(self))
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	if (imexd_grow((void **)&b->acts, &b->acts_cap, BRK_ACTS_MIN,
		       sizeof(*b->acts))) {
		free(b);
		return -ENOMEM;
	}
	snprintf(b->self, sizeof(b->self), "%s", self);
	*out = b;
	return 0;
}

void imexd_broker_free(struct imexd_broker *b)
{
	if (!b)
		return;
	free(b->imps);
	free(b->checks);
	free(b->revs);
	free(b->up);
	free(b->acts);
	free(b);
}

const uint64_t *imexd_broker_refusals(const struct imexd_broker *b)
{
	return b->refused;
}
