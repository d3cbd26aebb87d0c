// SPDX-License-Identifier: GPL-2.0
/*
 * agree: requests in: this node's kernel's, a peer's forwarded ones (and
 * what a peer may ask), checked joins and the replies to forwards.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree_internal.h"

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
	rv = ag_cmd_encode(cmd, &buf, &len, &why);
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
