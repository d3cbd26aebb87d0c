// SPDX-License-Identifier: GPL-2.0
/*
 * agree: the action queue (and what its actions own until the next
 * input) and requests (submit, forward, serve, expire).  See agree.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree_internal.h"
#include "msgid.h"

/* ---- growth and scratch -------------------------------------------------- */

int ag_keep(struct imexd_agree *a, void *p, bool def)
{
	if (imexd_grow((void **)&a->scratch, &a->cap_scratch, a->n_scratch + 1,
		 sizeof(*a->scratch))) {
		if (def)
			imexd_def_free(p);
		free(p);
		return -ENOMEM;
	}
	a->scratch[a->n_scratch].p = p;
	a->scratch[a->n_scratch++].def = def;
	return 0;
}

void ag_scratch_free(struct imexd_agree *a)
{
	size_t i;

	for (i = 0; i < a->n_scratch; i++) {
		if (a->scratch[i].def)
			imexd_def_free(a->scratch[i].p);
		free(a->scratch[i].p);
	}
	a->n_scratch = 0;
}

struct imexd_agree_action *ag_push(struct imexd_agree *a,
				       enum imexd_agree_action_type type)
{
	struct imexd_agree_action *act;

	if (imexd_grow((void **)&a->acts, &a->cap_acts, a->n_acts + 1, sizeof(*a->acts)))
		return NULL;
	act = &a->acts[a->n_acts++];
	memset(act, 0, sizeof(*act));
	act->type = type;
	act->message = "";
	return act;
}

const char *ag_str(struct imexd_agree *a, const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d || ag_keep(a, d, false))
		return NULL;
	return d;
}

const void *ag_dup(struct imexd_agree *a, const void *p, size_t len)
{
	void *d = malloc(len ? len : 1);

	if (!d)
		return NULL;
	if (len)
		memcpy(d, p, len);
	if (ag_keep(a, d, false))
		return NULL;
	return d;
}

const struct imexd_def *ag_def(struct imexd_agree *a,
				    const struct imexd_def *def)
{
	struct imexd_def *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (def && def->name[0] && imexd_def_copy(d, def)) {
		free(d);
		return NULL;
	}
	if (ag_keep(a, d, true))
		return NULL;
	return d;
}

static int ag_vlog(struct imexd_agree *a, const struct imexd_log_fields *f,
		   int level, const char *fmt, va_list ap)
{
	struct imexd_agree_action *act;
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	act = ag_push(a, IMEXD_AGREE_LOG);
	if (!act)
		return -ENOMEM;
	act->level = level;
	if (f)
		act->fields = *f;
	act->message = ag_str(a, buf);
	return act->message ? 0 : -ENOMEM;
}

__attribute__((format(printf, 3, 4)))
int ag_log(struct imexd_agree *a, int level, const char *fmt, ...)
{
	va_list ap;
	int rv;

	va_start(ap, fmt);
	rv = ag_vlog(a, NULL, level, fmt, ap);
	va_end(ap);
	return rv;
}

__attribute__((format(printf, 4, 5)))
int ag_log_f(struct imexd_agree *a, const struct imexd_log_fields *f,
	     int level, const char *fmt, ...)
{
	va_list ap;
	int rv;

	va_start(ap, fmt);
	rv = ag_vlog(a, f, level, fmt, ap);
	va_end(ap);
	return rv;
}

#define AG_LOG_INTERVAL_MS	60000

int ag_log_limited(struct imexd_agree *a, uint64_t now, const char *what,
		   const char *name, int level, const char *fmt, ...)
{
	struct ag_logkey *k = NULL, *old = &a->logkeys[0];
	char buf[512];
	size_t i, len;
	va_list ap;

	for (i = 0; i < AG_LOGKEYS_MAX && !k; i++) {
		if (!strcmp(a->logkeys[i].what, what) &&
		    !strcmp(a->logkeys[i].name, name))
			k = &a->logkeys[i];
		else if (a->logkeys[i].at < old->at)
			old = &a->logkeys[i];
	}
	if (k && k->at && now >= k->at && now - k->at < AG_LOG_INTERVAL_MS) {
		if (k->skipped < UINT32_MAX)
			k->skipped++;
		return 0;
	}
	if (!k) {
		k = old;
		snprintf(k->what, sizeof(k->what), "%s", what);
		snprintf(k->name, sizeof(k->name), "%s", name);
		k->skipped = 0;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	len = strlen(buf);
	if (k->skipped)
		snprintf(buf + len, sizeof(buf) - len,
			 " (and %u more like it since the last such line)",
			 (unsigned int)k->skipped);
	k->at = now ? now : 1;
	k->skipped = 0;
	return ag_log(a, level, "%s", buf);
}

/* Every input starts here: the previous actions must have been drained. */
int ag_begin(struct imexd_agree *a)
{
	if (a->next_act < a->n_acts)
		return -EBUSY;
	a->n_acts = 0;
	a->next_act = 0;
	ag_scratch_free(a);
	return 0;
}

bool imexd_agree_next(struct imexd_agree *a, struct imexd_agree_action *act)
{
	if (a->next_act >= a->n_acts)
		return false;
	*act = a->acts[a->next_act++];
	return true;
}

/* ---- requests ------------------------------------------------------------ */

struct ag_req *ag_req_by_id(struct imexd_agree *a, uint64_t id)
{
	size_t i;

	for (i = 0; i < a->n_reqs; i++)
		if (a->reqs[i].id == id)
			return &a->reqs[i];
	return NULL;
}

void ag_req_del(struct imexd_agree *a, struct ag_req *r)
{
	free(r->cmd);
	r->cmd = NULL;
	if (r != &a->reqs[a->n_reqs - 1]) {
		*r = a->reqs[a->n_reqs - 1];
		a->reqs[a->n_reqs - 1].cmd = NULL;
	}
	a->n_reqs--;
}

/* The request's end: DONE, REPLY or a log line; then it is gone. */
int ag_req_finish(struct imexd_agree *a, struct ag_req *r, int error,
		      const char *message, const struct imexd_def *def,
		      uint64_t index, const uint32_t *ids, uint32_t nids)
{
	struct imexd_agree_action *act;
	int rv = 0;

	if (r->kind == REQ_IDENTITY) {
		if (error == EBUSY)
			a->identity_refused = true;
		if (error)
			rv = ag_log(a, 4, "reporting this node's fabric identity failed: %s",
				   message);
		else
			rv = ag_log(a, 6, "the group holds this node's fabric identity (partition %u)",
				    (unsigned int)a->cfg.identity.partition);
		ag_req_del(a, r);
		return rv;
	}
	act = ag_push(a, r->kind == REQ_LOCAL ? IMEXD_AGREE_DONE :
					       IMEXD_AGREE_REPLY);
	if (!act) {
		ag_req_del(a, r);
		return -ENOMEM;
	}
	act->tag = r->tag;
	act->error = error;
	act->index = index;
	act->message = ag_str(a, message);
	act->def = ag_def(a, def);
	act->nids = ids ? nids : 0;
	act->ids = act->nids ? ag_dup(a, ids, act->nids * sizeof(*ids)) : NULL;
	if (r->kind == REQ_SERVE)
		act->to = ag_str(a, r->peer);
	if (!act->message || !act->def || (r->kind == REQ_SERVE && !act->to) ||
	    (act->nids && !act->ids))
		rv = -ENOMEM;
	ag_req_del(a, r);
	return rv;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;

	return p < q ? -1 : p > q;
}

/* Sorted, duplicates dropped, into a new array (*out; NULL for none). */
static int ids_norm(const uint32_t *ids, uint32_t n, uint32_t **out,
		    uint32_t *nout)
{
	uint32_t i, m = 0;
	uint32_t *v;

	*out = NULL;
	*nout = 0;
	if (!n || !ids)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, ids, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_u32);
	for (i = 0; i < n; i++)
		if (!m || v[m - 1] != v[i])
			v[m++] = v[i];
	*out = v;
	*nout = m;
	return 0;
}

/* Encode @cmd with its channel ids normalized. */
static int cmd_encode(const struct imexd_cmd *cmd, uint8_t **out, size_t *len,
		      const char **why)
{
	struct imexd_cmd c = *cmd;
	uint32_t *ids = NULL, *nids = NULL;
	int rv;

	if (c.type == IMEXD_CMD_DOMAIN_CREATE) {
		ids = c.u.create.ch.ids;
		nids = &c.u.create.ch.nids;
	} else if (c.type == IMEXD_CMD_CHANNEL_ALLOC) {
		ids = c.u.alloc.ch.ids;
		nids = &c.u.alloc.ch.nids;
	} else if (c.type == IMEXD_CMD_CHANNEL_FREE) {
		ids = c.u.free.ids;
		nids = &c.u.free.nids;
	}
	if (nids) {
		uint32_t *v;

		rv = ids_norm(ids, *nids, &v, nids);
		if (rv)
			return rv;
		if (c.type == IMEXD_CMD_DOMAIN_CREATE)
			c.u.create.ch.ids = v;
		else if (c.type == IMEXD_CMD_CHANNEL_ALLOC)
			c.u.alloc.ch.ids = v;
		else
			c.u.free.ids = v;
		rv = imexd_cmd_encode(&c, out, len, why);
		free(v);
		return rv;
	}
	return imexd_cmd_encode(&c, out, len, why);
}

struct ag_req *ag_req_new(struct imexd_agree *a, uint64_t now,
			      enum req_kind kind, uint64_t tag, uint8_t *cmd,
			      size_t len)
{
	struct ag_req *r;

	if (imexd_grow((void **)&a->reqs, &a->cap_reqs, a->n_reqs + 1, sizeof(*a->reqs)))
		return NULL;
	r = &a->reqs[a->n_reqs++];
	memset(r, 0, sizeof(*r));
	r->id = a->next_id++;
	r->tag = tag;
	r->kind = kind;
	r->state = REQ_WAIT;
	r->cmd = cmd;
	r->len = len;
	r->type = len > 1 ? cmd[1] : 0;
	r->deadline = now + a->cfg.request_timeout_ms;
	return r;
}

/* "no quorum: 2 of 5 voters reachable (n3, n4, n5 unreachable)", or ""
 * when every voter was heard from lately. */
void ag_quorum_text(struct imexd_agree *a, uint64_t now, char *buf,
			size_t size)
{
	const struct raft_configuration *conf;
	char lost[100] = "";
	unsigned i, voters = 0, up = 0;
	size_t off = 0;
	raft_id id;

	buf[0] = '\0';
	if (!a->cons)
		return;
	conf = imexd_cons_members(a->cons);
	for (i = 0; i < conf->n; i++) {
		id = conf->servers[i].id;
		if (conf->servers[i].role != RAFT_VOTER)
			continue;
		voters++;
		if (id == imexd_cons_self(a->cons) ||
		    imexd_cons_heard(a->cons, id) + 2 * a->et >= now) {
			up++;
			continue;
		}
		if (off < sizeof(lost))
			off += (size_t)snprintf(lost + off, sizeof(lost) - off,
					"%s%s", off ? ", " : "",
					imexd_cons_name(a->cons, id));
	}
	if (up < voters / 2 + 1)
		snprintf(buf, size, "no quorum: %u of %u voters reachable (%s unreachable)",
			 up, voters, lost);
}

void imexd_agree_quorum(struct imexd_agree *a, uint64_t now, char *buf,
			size_t size)
{
	ag_quorum_text(a, now, buf, size);
}

/* ---- requests: dispatch and expiry --------------------------------------- */

/*
 * A create naming a node whose identity (NODE_SET) the table does not
 * hold yet: every node reports it once it knows a leader, so right after
 * the group starts a create may come first.  The leader waits for it
 * (retrying every tenth of an election timeout) while two election
 * timeouts of the request's time are left, then submits anyway and the
 * table answers why.
 */
static bool create_waits_for_join(struct imexd_agree *a, uint64_t now,
				  struct ag_req *r)
{
	struct imexd_cmd cmd;
	bool wait = false;
	uint16_t i;

	if (r->type != IMEXD_CMD_DOMAIN_CREATE || now + 2 * a->et >= r->deadline ||
	    imexd_cmd_decode(r->cmd, r->len, &cmd, NULL))
		return false;
	for (i = 0; i < cmd.u.create.nmembers && !wait; i++)
		wait = !imexd_fsm_node(a->fsm, cmd.u.create.members[i].name);
	imexd_cmd_free(&cmd);
	if (wait)
		r->retry_at = now + a->et / 10 + 1;
	return wait;
}

static void uuid_text(const uint8_t u[16], char out[37])
{
	size_t i, o = 0;

	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		o += (size_t)snprintf(out + o, 3, "%02x", u[i]);
	}
	out[o] = '\0';
}

/* What a refused membership change tells the administrator. */
static const char *change_refused(int err, bool join)
{
	switch (err) {
	case -EALREADY:
		return "is already a node of this NVLink domain";
	case -ENOENT:
		return "is not a node of this NVLink domain";
	case -EEXIST:
		return "has the raft id of another node (its name hashes alike): give it another name";
	case -EDEADLK:
		return "leads the group and no other node can take over (none is reachable): not removed";
	case -ENOSPC:
		return "cannot join: the NVLink domain has the most nodes it may have";
	case -EBUSY:
		return "was not changed: another node join or leave is under way; retry";
	default:
		return join ? "could not be joined" : "could not be removed";
	}
}

/* "n2, n3": the voters other than this node and `gone` not heard from
 * within an election timeout. */
static void unreachable_voters(struct imexd_agree *a, uint64_t now,
			       raft_id gone, char *buf, size_t size)
{
	const struct raft_configuration *conf = imexd_cons_members(a->cons);
	size_t off = 0;
	unsigned i;
	raft_id id;

	buf[0] = '\0';
	for (i = 0; i < conf->n && off < size; i++) {
		id = conf->servers[i].id;
		if (conf->servers[i].role != RAFT_VOTER || id == gone ||
		    id == imexd_cons_self(a->cons) ||
		    now - imexd_cons_heard(a->cons, id) < a->et)
			continue;
		off += (size_t)snprintf(buf + off, size - off, "%s%s",
					off ? ", " : "",
					imexd_cons_name(a->cons, id));
	}
}

/*
 * A join or leave on the leader: a joining node must report this node's
 * fabric identity; a leaving node must be named by no domain.  A leave
 * first marks the node leaving in the table (a command: the log orders
 * it against creates naming the node).  Then one configuration change,
 * tagged with the request (CHANGED answers it), and for a leave the
 * table step that drops the identity.  1: not the leader after all
 * (forward it); 2: the leave's table step is next.
 */
static int member_change(struct imexd_agree *a, uint64_t now, struct ag_req *r)
{
	const struct imexd_fsm_node *me = &a->cfg.identity;
	const struct imexd_fsm_node *k;
	char text[2 * IMEXD_MESSAGE_MAX];	/* cut to IMEXD_MESSAGE_MAX */
	char address[IMEX_NAME_MAX + IMEXD_ADDR_MAX + 2];
	bool join = r->type == IMEXD_CMD_NODE_JOIN;
	const struct imexd_def *d;
	struct imexd_log_fields lf;
	struct imexd_cmd cmd;
	raft_index index;
	raft_id leader;
	size_t pos = 0;
	int rv;

	rv = imexd_cmd_decode(r->cmd, r->len, &cmd, NULL);
	if (rv == -ENOMEM)
		return rv;
	if (rv)
		return ag_req_finish(a, r, EINVAL, "invalid request", NULL, 0,
				     NULL, 0);
	if (join && !r->checked) {
		struct imexd_agree_action *act;

		/* Never the request's identity: the node's own HELLO here. */
		if (r->checking)
			return 0;
		act = ag_push(a, IMEXD_AGREE_JOIN_CHECK);
		if (!act)
			return -ENOMEM;
		act->to = ag_str(a, cmd.u.node.name);
		act->message = ag_str(a, cmd.u.node.addr);
		act->tag = r->id;
		r->checking = true;
		return act->to && act->message ? 0 : -ENOMEM;
	}
	if (join && r->check_error) {
		snprintf(text, sizeof(text),
			 "node '%s' did not connect to the leader %s: check that imexd runs there and that the leader reaches it%s%.64s; not joined",
			 cmd.u.node.name, a->self,
			 cmd.u.node.addr[0] ? " at " : "", cmd.u.node.addr);
		text[IMEXD_MESSAGE_MAX] = '\0';
		return ag_req_finish(a, r, r->check_error, text, NULL, 0, NULL,
				     0);
	}
	if (join && (memcmp(r->fabric_uuid, me->fabric_uuid, 16) ||
		     r->partition != me->partition)) {
		char theirs[37], ours[37];

		uuid_text(r->fabric_uuid, theirs);
		uuid_text(me->fabric_uuid, ours);
		snprintf(text, sizeof(text),
			 "node '%s' reports fabric %s partition %u, this NVLink domain is fabric %s partition %u: not joined",
			 cmd.u.node.name, theirs, (unsigned int)r->partition,
			 ours, (unsigned int)me->partition);
		text[IMEXD_MESSAGE_MAX] = '\0';
		return ag_req_finish(a, r, EXDEV, text, NULL, 0, NULL, 0);
	}
	d = join ? NULL : imexd_fsm_domain_of(a->fsm, cmd.u.node.name, &pos);
	if (d) {
		snprintf(text, sizeof(text),
			 "node '%s' is a member of domain '%s': delete the domain or evict the node from it first; not removed",
			 cmd.u.node.name, d->name);
		text[IMEXD_MESSAGE_MAX] = '\0';
		return ag_req_finish(a, r, EBUSY, text, NULL, 0, NULL, 0);
	}
	k = join ? NULL : imexd_fsm_node(a->fsm, cmd.u.node.name);
	if (k && !k->leaving &&
	    !imexd_cons_can_remove(a->cons, now, cmd.u.node.name))
		return 2;	/* the table step first: marks it leaving */
	snprintf(address, sizeof(address), "%s%s%s", cmd.u.node.name,
		 cmd.u.node.addr[0] ? "=" : "", cmd.u.node.addr);
	rv = imexd_cons_change(a->cons, now, address, join, r->id, &index,
			       &leader);
	if (!rv) {
		r->state = REQ_SUBMITTED;
		imexd_log_fields_set(&lf, IMEXD_MSGID_NODE_CHANGE, NULL,
				     cmd.u.node.name);
		rv = ag_log_f(a, &lf, 6, "%s node %s (entry %llu)",
			    join ? "adding" : "removing", address,
			    (unsigned long long)index);
		return rv ? rv : ag_pump(a, now);
	}
	if (rv == -ENOMEM)
		return rv;
	if (rv == -IMEXD_CONS_ENOTLEADER)
		return 1;
	if (rv == -ENOENT && !join &&
	    imexd_fsm_node(a->fsm, cmd.u.node.name)) {
		/* Out of the configuration, still in the table: a leave
		 * whose leader was lost between its two steps. */
		r->left = true;
		return 2;
	}
	if (rv == -EBUSY && now + 2 * a->et < r->deadline) {
		/* A promotion or a hand-over may be under way: drain it. */
		r->retry_at = now + a->et / 10 + 1;
		return ag_pump(a, now);
	}
	if (rv == -EHOSTUNREACH) {
		char lost[100];

		unreachable_voters(a, now,
				   imexd_cons_name_id(cmd.u.node.name), lost,
				   sizeof(lost));
		snprintf(text, sizeof(text),
			 "node '%s' not removed: the voters left would need %s (unreachable); bring it back or wait until it is replaced, then retry",
			 cmd.u.node.name, lost);
		text[IMEXD_MESSAGE_MAX] = '\0';
		return ag_req_finish(a, r, EBUSY, text, NULL, 0, NULL, 0);
	}
	snprintf(text, sizeof(text), "node '%s' %s", cmd.u.node.name,
		 change_refused(rv, join));
	text[IMEXD_MESSAGE_MAX] = '\0';
	return ag_req_finish(a, r, -rv, text, NULL, 0, NULL, 0);
}

/*
 * A replace's new member as the leader sees it, before the entry is
 * proposed: a voter or standby it has had no raft message from for two
 * election timeouts is off or cut off (the node the request entered
 * checked its own connection; a follower hears no other follower).
 * True with the reason in @text.
 */
static bool replace_unreachable(struct imexd_agree *a, uint64_t now,
				const struct ag_req *r, char *text, size_t len)
{
	const struct raft_configuration *conf = imexd_cons_members(a->cons);
	struct imexd_cmd cmd;
	uint64_t heard;
	raft_id id;
	unsigned i;
	bool lost = false;

	if (r->type != IMEXD_CMD_MEMBER_REPLACE ||
	    imexd_cmd_decode(r->cmd, r->len, &cmd, NULL))
		return false;
	id = imexd_cons_id(a->cons, cmd.u.replace.with);
	for (i = 0; id && i < conf->n; i++) {
		if (conf->servers[i].id != id ||
		    id == imexd_cons_self(a->cons) ||
		    (conf->servers[i].role != RAFT_VOTER &&
		     conf->servers[i].role != RAFT_STANDBY))
			continue;
		heard = imexd_cons_heard(a->cons, id);
		if (heard + 2 * a->et >= now)
			break;
		lost = true;
		if (heard)
			snprintf(text, len,
				 "node '%s' is unreachable: the leader (%s) has not heard from it for %llu s; power it on or check imexd there",
				 cmd.u.replace.with, a->self,
				 (unsigned long long)((now - heard) / 1000));
		else
			snprintf(text, len,
				 "node '%s' is unreachable: the leader (%s) has not heard from it since it started; power it on or check imexd there",
				 cmd.u.replace.with, a->self);
	}
	imexd_cmd_free(&cmd);
	return lost;
}

static int dispatch_one(struct imexd_agree *a, uint64_t now, struct ag_req *r)
{
	struct imexd_agree_action *act;
	raft_id leader = imexd_cons_leader(a->cons);

	r->retry_at = 0; /* with no leader: at the next input */
	raft_index index;
	const char *name;
	int rv;

	if (leader == imexd_cons_self(a->cons) &&
	    (r->type == IMEXD_CMD_NODE_JOIN ||
	     (r->type == IMEXD_CMD_NODE_LEAVE && !r->left))) {
		rv = member_change(a, now, r);
		if (rv <= 0)
			return rv;
		leader = imexd_cons_leader(a->cons);
	}
	if (leader == imexd_cons_self(a->cons)) {
		char text[IMEXD_MESSAGE_MAX + 1];

		if (create_waits_for_join(a, now, r))
			return 0;
		if (replace_unreachable(a, now, r, text, sizeof(text)))
			return ag_req_finish(a, r, EHOSTUNREACH, text, NULL, 0,
					     NULL, 0);
		rv = imexd_cons_submit(a->cons, now, r->cmd, r->len, r->id,
				       &index, &leader);
		if (!rv) {
			r->state = REQ_SUBMITTED;
			r->submitted_at = now;
			return ag_pump(a, now);
		}
		if (rv != -IMEXD_CONS_ENOTLEADER)
			return ag_req_finish(a, r, -rv,
					  "the leader could not take the change: it was not made",
					  NULL, 0, NULL, 0);
	}
	if (r->kind == REQ_SERVE)
		return ag_req_finish(a, r, IMEXD_CONS_ENOTLEADER,
				  "not the leader", NULL, 0, NULL, 0);
	name = leader ? imexd_cons_name(a->cons, leader) : NULL;
	if (!name)
		return 0;
	act = ag_push(a, IMEXD_AGREE_FORWARD);
	if (!act)
		return -ENOMEM;
	act->to = ag_str(a, name);
	act->tag = r->id;
	act->data = ag_dup(a, r->cmd, r->len);
	act->len = r->len;
	snprintf(r->peer, sizeof(r->peer), "%s", name);
	r->state = REQ_FORWARDED;
	return act->to && act->data ? 0 : -ENOMEM;
}

/*
 * A new leader is known: requests forwarded to another node may never be
 * answered (a leader powered off leaves its connection open for a while).
 * Forward them again, to the new leader, if doing one twice leaves the
 * same outcome: a create carries its UUID (a repeat finds it made), a
 * repeated delete, evict, replace, free, join or leave that finds nothing
 * to do (a replace: the old member gone, ENOENT)
 * says the lost leader may have done it (imexd_agree_reply), and a leave
 * found out of the configuration but still in the table finishes its
 * table step (member_change).  Any other change may or
 * may not have been made by the lost leader: say so now rather than at the
 * request's timeout.
 */
int ag_leader_moved(struct imexd_agree *a, const char *leader)
{
	return ag_forwards_again(a, leader, false,
				 "leadership changed before the change was answered; it may or may not have been made: check and retry");
}

/*
 * What ag_leader_moved() does, for the requests forwarded to node @peer
 * (@to_peer) or to any other node than @peer; @why answers those that
 * cannot go again.
 */
int ag_forwards_again(struct imexd_agree *a, const char *peer, bool to_peer,
		      const char *why)
{
	size_t i = 0;
	int rv;

	while (i < a->n_reqs) {
		struct ag_req *r = &a->reqs[i];

		if (r->state != REQ_FORWARDED ||
		    !strcmp(r->peer, peer) != to_peer) {
			i++;
			continue;
		}
		switch (r->type) {
		case IMEXD_CMD_NODE_SET:
		case IMEXD_CMD_DOMAIN_CREATE:
		case IMEXD_CMD_DOMAIN_DELETE:
		case IMEXD_CMD_MEMBER_EVICT:
		case IMEXD_CMD_MEMBER_REPLACE:
		case IMEXD_CMD_CHANNEL_FREE:
		case IMEXD_CMD_NODE_JOIN:
		case IMEXD_CMD_NODE_LEAVE:
			r->state = REQ_WAIT;
			r->retry_at = 0;
			r->repeated = true;
			i++;
			continue;
		}
		rv = ag_req_finish(a, r, EAGAIN, why, NULL, 0, NULL, 0);
		if (rv)
			return rv;
	}
	return 0;
}

int ag_dispatch(struct imexd_agree *a, uint64_t now)
{
	uint64_t *ids;
	size_t i, n = 0;
	int rv = 0;

	if (!a->n_reqs || !a->cons)
		return 0;
	/* Requests finish (and move) while dispatching: go by id. */
	ids = malloc(a->n_reqs * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < a->n_reqs; i++)
		if (a->reqs[i].state == REQ_WAIT && a->reqs[i].retry_at <= now)
			ids[n++] = a->reqs[i].id;
	for (i = 0; i < n && !rv && a->cons; i++) {
		struct ag_req *r = ag_req_by_id(a, ids[i]);

		if (r && r->state == REQ_WAIT)
			rv = dispatch_one(a, now, r);
	}
	free(ids);
	return rv;
}

int ag_expire(struct imexd_agree *a, uint64_t now)
{
	char text[IMEXD_MESSAGE_MAX + 1], q[160];
	size_t i = 0;
	int rv;

	while (i < a->n_reqs) {
		struct ag_req *r = &a->reqs[i];

		if (r->deadline > now) {
			i++;
			continue;
		}
		if (r->kind == REQ_SERVE) {
			ag_req_del(a, r);
			continue;
		}
		ag_quorum_text(a, now, q, sizeof(q));
		if (!a->cons)
			snprintf(text, sizeof(text),
				 "this node's raft server is down (state directory write failed): the %s was not made",
				 imexd_cmd_type_name(r->type));
		else if (r->state == REQ_WAIT)
			snprintf(text, sizeof(text), "%s%sno leader reachable: the %s was not made",
				 q, q[0] ? "; " : "", imexd_cmd_type_name(r->type));
		else if (r->state == REQ_FORWARDED)
			/* A follower hears only the leader: no count here. */
			snprintf(text, sizeof(text), "the leader (%s) did not answer in time: the %s may or may not have been made; check and retry",
				 r->peer, imexd_cmd_type_name(r->type));
		else if (q[0])
			snprintf(text, sizeof(text), "%s: the %s may or may not have been made; check and retry",
				 q, imexd_cmd_type_name(r->type));
		else
			snprintf(text, sizeof(text), "timed out waiting for the %s to commit: it may or may not have been made; check and retry",
				 imexd_cmd_type_name(r->type));
		rv = ag_req_finish(a, r, ETIMEDOUT, text, NULL, 0, NULL, 0);
		if (rv)
			return rv;
	}
	return 0;
}

int imexd_agree_request(struct imexd_agree *a, uint64_t now,
			const struct imexd_cmd *cmd, uint64_t tag)
{
	struct imexd_agree_action *act;
	const char *why = NULL;
	char text[IMEXD_MESSAGE_MAX + 1];
	uint8_t *buf;
	size_t len;
	int rv = ag_begin(a);

	if (rv)
		return rv;
	rv = cmd_encode(cmd, &buf, &len, &why);
	if (rv == -ENOMEM)
		return rv;
	if (rv) {
		act = ag_push(a, IMEXD_AGREE_DONE);
		if (!act)
			return -ENOMEM;
		snprintf(text, sizeof(text), "invalid request: %s",
			 why ? why : strerror(-rv));
		act->tag = tag;
		act->error = -rv;
		act->message = ag_str(a, text);
		act->def = ag_def(a, NULL);
		return act->message && act->def ? 0 : -ENOMEM;
	}
	if (!ag_req_new(a, now, REQ_LOCAL, tag, buf, len)) {
		free(buf);
		return -ENOMEM;
	}
	return ag_settle(a, now);
}

/*
 * May peer @from ask for @c?  Only what its own kernel could ask: its own
 * fabric identity, a domain that names it, a change to a domain that names
 * it (a domain the table does not hold is the fsm's to refuse).  True, or
 * false with the reason in @why.
 */
static bool forward_allowed(const struct imexd_agree *a, const char *from,
			    const struct imexd_cmd *c, char *why, size_t len)
{
	const struct imexd_def *d;
	const char *name;
	uint16_t i;

	switch (c->type) {
	case IMEXD_CMD_NODE_SET:
		if (!strcmp(c->u.node_set.name, from))
			return true;
		snprintf(why, len, "node %s may not report node %s's identity",
			 from, c->u.node_set.name);
		return false;
	case IMEXD_CMD_DOMAIN_CREATE:
		for (i = 0; i < c->u.create.nmembers; i++)
			if (!strcmp(c->u.create.members[i].name, from))
				return true;
		snprintf(why, len, "node %s may not create domain %s, which does not name it",
			 from, c->u.create.name);
		return false;
	case IMEXD_CMD_DOMAIN_DELETE:
		name = c->u.del.name;
		break;
	case IMEXD_CMD_CHANNEL_ALLOC:
		name = c->u.alloc.name;
		break;
	case IMEXD_CMD_CHANNEL_FREE:
		name = c->u.free.name;
		break;
	case IMEXD_CMD_MEMBER_EVICT:
		name = c->u.evict.name;
		break;
	case IMEXD_CMD_MEMBER_REPLACE:
		name = c->u.replace.name;
		break;
	default:
		/* A node join or leave: the administrator of any node of the
		 * group may ask one (a joining node still needs the group's
		 * TLS certificate). */
		return true;
	}
	d = a->fsm ? imexd_fsm_domain(a->fsm, name) : NULL;
	if (!d || imexd_def_has_member(d, from))
		return true;
	snprintf(why, len, "node %s may not change domain %s, which does not name it",
		 from, name);
	return false;
}

_Static_assert(IMEXD_AGREE_SERVE_PER_PEER == 2 * IMEX_REQS_MAX,
	       "IMEXD_AGREE_SERVE_PER_PEER: twice what one kernel queues");

/* A peer's own kernel never asks what is refused: one line a minute. */
static int refusal_log(struct imexd_agree *a, uint64_t now, const char *from,
		       const char *why)
{
	return ag_log_limited(a, now, "refused", from, 4,
			      "request from %s refused: %s", from, why);
}

/* REPLY to a forwarded request that is not kept. */
static int reply_now(struct imexd_agree *a, const char *from, uint64_t tag,
		     int error, const char *message)
{
	struct imexd_agree_action *act = ag_push(a, IMEXD_AGREE_REPLY);

	if (!act)
		return -ENOMEM;
	act->tag = tag;
	act->error = error;
	act->message = ag_str(a, message);
	act->def = ag_def(a, NULL);
	act->to = ag_str(a, from);
	return act->message && act->def && act->to ? 0 : -ENOMEM;
}

int imexd_agree_forwarded(struct imexd_agree *a, uint64_t now,
			  const char *from, uint64_t tag,
			  const uint8_t *cmd, size_t len)
{
	char refused[IMEXD_MESSAGE_MAX + 1] = "";
	struct imexd_cmd c;
	const char *why = NULL;
	struct ag_req *r;
	uint8_t *buf;
	size_t i, held = 0;
	int rv = ag_begin(a);

	if (rv)
		return rv;
	/* From a node of the group (or, while the server is down, of the
	 * roster). */
	for (i = 0; !a->cons && i < a->cfg.n_roster; i++)
		if (!strcmp(a->roster[i], from))
			break;
	if (!strcmp(from, a->self) ||
	    (a->cons ? imexd_cons_role(a->cons, imexd_cons_id(a->cons, from)) < 0 :
		       i == a->cfg.n_roster))
		return ag_log_limited(a, now, "stranger", from, 4,
				      "request from %s dropped: not a node of the group",
				      from);
	/* A duplicate of a request being served is the same request. */
	for (i = 0; i < a->n_reqs; i++) {
		if (a->reqs[i].kind != REQ_SERVE ||
		    strcmp(a->reqs[i].peer, from))
			continue;
		if (a->reqs[i].tag == tag)
			return 0;
		held++;
	}
	if (held >= IMEXD_AGREE_SERVE_PER_PEER) {
		snprintf(refused, sizeof(refused),
			 "node %s has %zu requests in progress here, the most one node may have",
			 from, held);
		rv = refusal_log(a, now, from, refused);
		return rv ? rv : reply_now(a, from, tag, EBUSY, refused);
	}
	rv = imexd_cmd_decode(cmd, len, &c, &why);
	if (rv == -ENOMEM)
		return rv;
	if (!rv) {
		forward_allowed(a, from, &c, refused, sizeof(refused));
		imexd_cmd_free(&c);
	}
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, cmd, len);
	r = ag_req_new(a, now, REQ_SERVE, tag, buf, len);
	if (!r) {
		free(buf);
		return -ENOMEM;
	}
	snprintf(r->peer, sizeof(r->peer), "%s", from);
	if (rv) {
		char text[IMEXD_MESSAGE_MAX + 1];

		snprintf(text, sizeof(text), "invalid request: %s", why);
		rv = ag_req_finish(a, r, EINVAL, text, NULL, 0, NULL, 0);
		return rv ? rv : ag_settle(a, now);
	}
	if (refused[0]) {
		rv = refusal_log(a, now, from, refused);
		if (!rv)
			rv = ag_req_finish(a, r, EACCES, refused, NULL, 0,
					   NULL, 0);
		return rv ? rv : ag_settle(a, now);
	}
	return ag_settle(a, now);
}

int imexd_agree_join_checked(struct imexd_agree *a, uint64_t now,
			     uint64_t tag, const uint8_t fabric_uuid[16],
			     uint32_t partition, int error)
{
	struct ag_req *r;
	int rv = ag_begin(a);

	if (rv)
		return rv;
	r = ag_req_by_id(a, tag);
	if (r && r->type == IMEXD_CMD_NODE_JOIN && r->checking &&
	    !r->checked) {
		r->checked = true;
		r->check_error = error;
		if (fabric_uuid)
			memcpy(r->fabric_uuid, fabric_uuid, 16);
		r->partition = partition;
		r->retry_at = 0;
	}
	return ag_settle(a, now);
}

int imexd_agree_reply(struct imexd_agree *a, uint64_t now, const char *from,
		      uint64_t tag, int error, const char *message,
		      const struct imexd_def *def, uint64_t index,
		      const uint32_t *ids, uint32_t nids)
{
	struct ag_req *r;
	int rv = ag_begin(a);

	if (rv)
		return rv;
	r = ag_req_by_id(a, tag);
	if (r && r->state == REQ_FORWARDED && !strcmp(r->peer, from)) {
		if (error == IMEXD_CONS_ENOTLEADER && !index) {
			/* Never submitted there: find the leader again. */
			r->state = REQ_WAIT;
			r->retry_at = now + a->et / 10 + 1;
		} else if (r->repeated && (error == ENOENT ||
					   (error == EALREADY &&
					    r->type == IMEXD_CMD_NODE_JOIN))) {
			char text[IMEXD_MESSAGE_MAX + 1];

			/* The lost leader's copy may have done it. */
			snprintf(text, sizeof(text), "%s (the request went again to the new leader; the lost leader may have made it)",
				 message ? message : "");
			rv = ag_req_finish(a, r, error, text, def, index, ids,
					   nids);
		} else {
			rv = ag_req_finish(a, r, error, message ? message : "",
					def, index, ids, nids);
		}
	}
	return rv ? rv : ag_settle(a, now);
}
