// SPDX-License-Identifier: GPL-2.0
/*
 * agree: the action queue (and what its actions own until the next
 * input) and requests (made, finished, quorum text).  See agree.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree_internal.h"

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
int ag_cmd_encode(const struct imexd_cmd *cmd, uint8_t **out, size_t *len,
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
