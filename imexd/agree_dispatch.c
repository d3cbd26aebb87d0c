// SPDX-License-Identifier: GPL-2.0
/*
 * agree: requests dispatched to the raft server (commands, membership
 * changes, replacing unreachable voters), forwarded again, expired.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree_internal.h"
#include "msgid.h"

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
 * replace its two names (a repeat finds it done and answers success), a
 * repeated delete, evict, free, join or leave that finds nothing to do
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
