// SPDX-License-Identifier: GPL-2.0
/*
 * The replicated state machine (fsm.h): what each command does to the
 * tables.
 *
 * Every command first builds what it will change, allocating everything
 * it needs (the new definition, the copy for the result), and only then
 * touches the table, with steps that cannot fail: so a refusal or an
 * allocation failure leaves the table as it was.  Nothing depends on
 * anything but the table and the command (no clock, no local node, no
 * hash order): the tables are kept sorted by name.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fsm_internal.h"

/* ---- commands ------------------------------------------------------------- */

/*
 * The last step of every domain command: @nd (owned, complete) replaces
 * the domain at @pos (or goes in there when @insert), and a copy and @ids
 * (owned) go to @res.  0 or -ENOMEM, with @nd and @ids freed either way.
 */
static int commit(struct imexd_fsm *fsm, size_t pos, bool insert,
		  struct imexd_def *nd, uint32_t *ids, uint32_t nids,
		  struct imexd_fsm_result *res)
{
	if (imexd_def_copy(&res->def, nd) ||
	    (insert && imexd_grow((void **)&fsm->domains, &fsm->domains_cap,
				fsm->ndomains + 1, sizeof(*fsm->domains)))) {
		imexd_def_free(&res->def);
		imexd_def_free(nd);
		free(ids);
		return -ENOMEM;
	}
	if (insert) {
		memmove(&fsm->domains[pos + 1], &fsm->domains[pos],
			(fsm->ndomains - pos) * sizeof(*fsm->domains));
		fsm->ndomains++;
	} else {
		imexd_def_free(&fsm->domains[pos]);
	}
	fsm->domains[pos] = *nd;
	res->ids = ids;
	res->nids = nids;
	return 0;
}

/* The domain a command names, or a refusal. */
static struct imexd_def *named(struct imexd_fsm *fsm, const char *name,
			       size_t *pos, struct imexd_fsm_result *res)
{
	bool found;

	*pos = fsm_dom_pos(fsm, name, &found);
	if (!found)
		fsm_refuse(res, ENOENT, "no domain '%s': see 'imexctl domain list'",
		       name);
	return found ? &fsm->domains[*pos] : NULL;
}

/*
 * A leave: the table step comes before the raft configuration change, so
 * the log orders it against every create.  The first NODE_LEAVE marks the
 * node leaving (refused while a domain names it; a create naming a
 * leaving node is refused); once the node is out of the configuration, a
 * second one drops its identity.
 */
static int node_forget(struct imexd_fsm *fsm, const char *name,
		       struct imexd_fsm_result *res)
{
	bool found;
	size_t pos = fsm_node_pos(fsm, name, &found), p = 0;
	const struct imexd_def *d;

	if (!found)
		return 0;
	d = imexd_fsm_domain_of(fsm, name, &p);
	if (d && !fsm->nodes[pos].leaving)
		return fsm_refuse(res, EBUSY,
			      "node '%s' is a member of domain '%s': delete the domain or evict the node from it first; not removed",
			      name, d->name);
	if (d)
		return fsm_refuse(res, EBUSY,
			      "node '%s' left the group but domain '%s' names it: delete the domain or evict the node",
			      name, d->name);
	if (!fsm->nodes[pos].leaving) {
		fsm->nodes[pos].leaving = true;
		return 0;
	}
	memmove(&fsm->nodes[pos], &fsm->nodes[pos + 1],
		(fsm->nnodes - pos - 1) * sizeof(*fsm->nodes));
	fsm->nnodes--;
	return 0;
}

static int node_set(struct imexd_fsm *fsm, const struct imexd_fsm_node *n,
		    struct imexd_fsm_result *res)
{
	bool found;
	size_t pos = fsm_node_pos(fsm, n->name, &found), p = 0;
	const struct imexd_fsm_node *o;
	const struct imexd_def *d;
	const char *what;
	bool leaving;

	if (!found) {
		if (fsm->nnodes >= IMEXD_FSM_NODES_MAX)
			return fsm_refuse(res, ENOSPC,
				      "the NVLink domain already has %u nodes, the most it may: node '%s' cannot join",
				      (unsigned int)IMEXD_FSM_NODES_MAX, n->name);
		if (imexd_grow((void **)&fsm->nodes, &fsm->nodes_cap,
			     fsm->nnodes + 1, sizeof(*fsm->nodes)))
			return -ENOMEM;
		memmove(&fsm->nodes[pos + 1], &fsm->nodes[pos],
			(fsm->nnodes - pos) * sizeof(*fsm->nodes));
		fsm->nnodes++;
		fsm->nodes[pos] = *n;
		fsm->nodes[pos].leaving = false;
		return 0;
	}
	o = &fsm->nodes[pos];
	if (memcmp(o->uuid, n->uuid, 16))
		what = "node UUID";
	else if (memcmp(o->fabric_uuid, n->fabric_uuid, 16) ||
		 o->partition != n->partition)
		what = "fabric identity";
	else if (o->max_channels != n->max_channels)
		what = "max_channels";
	else
		return 0;		/* the same report again */
	d = imexd_fsm_domain_of(fsm, n->name, &p);
	if (d)
		return fsm_refuse(res, EBUSY,
			      "node '%s' is a member of domain '%s': its %s cannot change until no domain names it",
			      n->name, d->name, what);
	leaving = o->leaving;
	fsm->nodes[pos] = *n;
	fsm->nodes[pos].leaving = leaving;
	return 0;
}

/* Refuse (true) a node that is leaving or has no fabric identity. */
static bool node_unusable(const struct imexd_fsm_node *k,
			  struct imexd_fsm_result *res)
{
	if (k->leaving)
		fsm_refuse(res, EHOSTUNREACH,
		       "node '%s' is leaving the NVLink domain", k->name);
	else if (fsm_zero16(k->fabric_uuid))
		fsm_refuse(res, EXDEV,
		       "node '%s' has no fabric identity: set it there with 'imexctl node set-fabric'",
		       k->name);
	return res->error;
}

/* The members of a new domain: known, with one fabric. */
static int check_new_members(const struct imexd_fsm *fsm,
			     const struct imexd_member *m, uint16_t n,
			     struct imexd_def *nd, struct imexd_fsm_result *res)
{
	const struct imexd_fsm_node *first = NULL;
	uint16_t i;

	for (i = 0; i < n; i++) {
		const struct imexd_fsm_node *k = imexd_fsm_node(fsm, m[i].name);

		if (!k)
			return fsm_refuse(res, EHOSTUNREACH,
				      "node '%s' has not joined the NVLink domain: check that imexd runs there",
				      m[i].name);
		if (node_unusable(k, res))
			return 0;
		if (!first) {
			first = k;
		} else if (memcmp(k->fabric_uuid, first->fabric_uuid, 16) ||
			   k->partition != first->partition) {
			return fsm_refuse(res, EXDEV,
				      "nodes '%s' and '%s' are not in one NVLink partition: compare 'imexctl node show' on both",
				      first->name, k->name);
		}
	}
	if (!first)	/* imexd_cmd_check() saw to it: at least one */
		return fsm_refuse(res, EINVAL, "a domain needs at least one member");
	memcpy(nd->fabric_uuid, first->fabric_uuid, 16);
	nd->partition = first->partition;
	return 0;
}

/* Refuse a new domain on a node of @s that holds IMEX_DOMAINS_MAX. */
static int check_room(const struct imexd_fsm *fsm, const struct node_set *s,
		      const struct imexd_member *m, uint16_t n,
		      struct imexd_fsm_result *res)
{
	size_t *held = calloc(fsm->nnodes, sizeof(*held)), i;
	uint16_t j;

	if (!held)
		return -ENOMEM;
	for (i = 0; i < fsm->ndomains; i++) {
		const struct imexd_def *d = &fsm->domains[i];

		for (j = 0; j < d->nmembers; j++) {
			long k = fsm_node_find(fsm, d->members[j].name);

			if (s->in[k])
				held[k]++;
		}
	}
	for (j = 0; j < n && !res->error; j++) {
		long k = fsm_node_find(fsm, m[j].name);

		if (held[k] >= IMEX_DOMAINS_MAX)
			fsm_refuse(res, ENOSPC,
			       "node '%s' already holds %zu domains, the most it may",
			       m[j].name, held[k]);
	}
	free(held);
	return 0;
}

/*
 * The same create again: its UUID and members.  A request forwarded to a
 * leader that was then lost is forwarded again to the next one; if the
 * first copy was committed after all, the second finds it made.
 */
static bool same_create(const struct imexd_def *d, const struct imexd_cmd *cmd)
{
	uint16_t i;

	if (memcmp(d->uuid, cmd->u.create.uuid, sizeof(d->uuid)) ||
	    d->nmembers != cmd->u.create.nmembers)
		return false;
	for (i = 0; i < cmd->u.create.nmembers; i++)
		if (fsm_def_member(d, cmd->u.create.members[i].name) < 0)
			return false;
	return true;
}

/* Answer a repeated create with the domain as it is; nothing changes. */
static int made_already(const struct imexd_def *d,
			struct imexd_fsm_result *res)
{
	uint32_t i;

	if (imexd_def_copy(&res->def, d))
		return -ENOMEM;
	if (d->nchannels) {
		res->ids = calloc(d->nchannels, sizeof(*res->ids));
		if (!res->ids) {
			imexd_def_free(&res->def);
			return -ENOMEM;
		}
	}
	for (i = 0; i < d->nchannels; i++)
		res->ids[i] = d->channels[i].id;
	res->nids = d->nchannels;
	return 0;
}

static int create(struct imexd_fsm *fsm, uint64_t index,
		  const struct imexd_cmd *cmd, struct imexd_fsm_result *res)
{
	const struct imexd_cmd_channels *ch = &cmd->u.create.ch;
	const struct imexd_def *other;
	struct imexd_def nd = { .generation = index };
	struct node_set s;
	uint32_t *ids, nids;
	size_t pos;
	bool found;
	int err;

	pos = fsm_dom_pos(fsm, cmd->u.create.name, &found);
	if (found && same_create(&fsm->domains[pos], cmd))
		return made_already(&fsm->domains[pos], res);
	if (found)
		return fsm_refuse(res, EEXIST, "domain '%s' already exists",
			      cmd->u.create.name);
	other = imexd_fsm_domain_by_uuid(fsm, cmd->u.create.uuid);
	if (other)
		return fsm_refuse(res, EEXIST,
			      "domain UUID of '%s' is already in use by domain '%s'",
			      cmd->u.create.name, other->name);
	check_new_members(fsm, cmd->u.create.members, cmd->u.create.nmembers,
			  &nd, res);
	if (res->error)
		return 0;	/* refused */
	if (fsm_node_set_make(fsm, cmd->u.create.members, cmd->u.create.nmembers,
			  &s))
		return -ENOMEM;
	err = check_room(fsm, &s, cmd->u.create.members, cmd->u.create.nmembers,
			 res);
	if (!err && !res->error)
		err = fsm_pick(fsm, &s, cmd->u.create.name, NULL, ch, &ids, &nids,
			   res);
	free(s.in);
	if (err || res->error)
		return err;
	memcpy(nd.name, cmd->u.create.name, sizeof(nd.name));
	memcpy(nd.uuid, cmd->u.create.uuid, 16);
	nd.nmembers = cmd->u.create.nmembers;
	nd.members = calloc(nd.nmembers, sizeof(*nd.members));
	if (!nd.members ||
	    fsm_merge_channels(&nd, ids, nids, ch, &nd.channels, &nd.nchannels)) {
		free(nd.members);
		free(ids);
		return -ENOMEM;
	}
	memcpy(nd.members, cmd->u.create.members,
	       nd.nmembers * sizeof(*nd.members));
	return commit(fsm, pos, true, &nd, ids, nids, res);
}

static int alloc(struct imexd_fsm *fsm, uint64_t index,
		 const struct imexd_cmd *cmd, struct imexd_fsm_result *res)
{
	const struct imexd_cmd_channels *ch = &cmd->u.alloc.ch;
	struct imexd_def *d, nd;
	struct node_set s;
	uint32_t *ids, nids;
	size_t pos;
	int err;

	d = named(fsm, cmd->u.alloc.name, &pos, res);
	if (!d)
		return 0;
	if (fsm_node_set_make(fsm, d->members, d->nmembers, &s))
		return -ENOMEM;
	err = fsm_pick(fsm, &s, d->name, d, ch, &ids, &nids, res);
	free(s.in);
	if (err || res->error)
		return err;
	nd = *d;
	nd.generation = index;
	nd.members = calloc(nd.nmembers, sizeof(*nd.members));
	if (!nd.members ||
	    fsm_merge_channels(d, ids, nids, ch, &nd.channels, &nd.nchannels)) {
		free(nd.members);
		free(ids);
		return -ENOMEM;
	}
	memcpy(nd.members, d->members, nd.nmembers * sizeof(*nd.members));
	return commit(fsm, pos, false, &nd, ids, nids, res);
}

static int free_channels(struct imexd_fsm *fsm, uint64_t index,
			 const struct imexd_cmd *cmd,
			 struct imexd_fsm_result *res)
{
	const uint32_t *want = cmd->u.free.ids;
	uint32_t i, k = 0, n = cmd->u.free.nids, *ids;
	struct imexd_def *d, nd;
	size_t pos;

	d = named(fsm, cmd->u.free.name, &pos, res);
	if (!d)
		return 0;
	for (i = 0; i < n; i++)
		if (!imexd_def_has_channel(d, want[i]))
			return fsm_refuse(res, ENOENT,
				      "channel %u is not granted to domain '%s'",
				      want[i], d->name);
	if (imexd_def_copy(&nd, d))
		return -ENOMEM;
	ids = calloc(n, sizeof(*ids));
	if (!ids) {
		imexd_def_free(&nd);
		return -ENOMEM;
	}
	memcpy(ids, want, n * sizeof(*ids));
	/* Both lists are increasing: one pass drops the freed ids. */
	for (i = 0, n = 0; i < nd.nchannels; i++) {
		while (k < cmd->u.free.nids && want[k] < nd.channels[i].id)
			k++;
		if (k < cmd->u.free.nids && want[k] == nd.channels[i].id)
			continue;
		nd.channels[n++] = nd.channels[i];
	}
	nd.nchannels = n;
	nd.generation = index;
	return commit(fsm, pos, false, &nd, ids, cmd->u.free.nids, res);
}

static int evict(struct imexd_fsm *fsm, uint64_t index,
		 const struct imexd_cmd *cmd, struct imexd_fsm_result *res)
{
	struct imexd_def *d, nd;
	size_t pos;
	long m;

	d = named(fsm, cmd->u.evict.name, &pos, res);
	if (!d)
		return 0;
	m = fsm_def_member(d, cmd->u.evict.member);
	if (m < 0)
		return fsm_refuse(res, ENOENT, "'%s' is not a member of domain '%s'",
			      cmd->u.evict.member, d->name);
	if (d->nmembers == 1)
		return fsm_refuse(res, EINVAL,
			      "'%s' is the last member of domain '%s': delete the domain instead",
			      cmd->u.evict.member, d->name);
	if (imexd_def_copy(&nd, d))
		return -ENOMEM;
	memmove(&nd.members[m], &nd.members[m + 1],
		(nd.nmembers - m - 1) * sizeof(*nd.members));
	nd.nmembers--;
	nd.generation = index;
	return commit(fsm, pos, false, &nd, NULL, 0, res);
}

/* May node @k take a place in @d: its partition, room and @d's channels. */
static int check_spare(const struct imexd_fsm *fsm, const struct imexd_def *d,
		       const struct imexd_fsm_node *k,
		       struct imexd_fsm_result *res)
{
	size_t i, held = 0;
	uint32_t c;

	if (node_unusable(k, res))
		return 0;
	if (memcmp(k->fabric_uuid, d->fabric_uuid, 16))
		return fsm_refuse(res, EXDEV,
			      "node '%s' is in another NVLink domain (fabric UUID) than domain '%s': pick a spare of its fabric",
			      k->name, d->name);
	if (k->partition != d->partition)
		return fsm_refuse(res, EXDEV,
			      "node '%s' is in NVLink partition %u, domain '%s' in partition %u: pick a spare of partition %u",
			      k->name, k->partition, d->name, d->partition,
			      d->partition);
	for (i = 0; i < fsm->ndomains; i++) {
		const struct imexd_def *o = &fsm->domains[i];

		if (fsm_def_member(o, k->name) < 0)
			continue;
		held++;
		for (c = 0; c < d->nchannels; c++)
			if (imexd_def_has_channel(o, d->channels[c].id))
				return fsm_refuse(res, EADDRINUSE,
					      "channel %u is held on node '%s' by domain '%s': free it there, or pick another spare",
					      d->channels[c].id, k->name,
					      o->name);
	}
	if (held >= IMEX_DOMAINS_MAX)
		return fsm_refuse(res, ENOSPC,
			      "node '%s' already holds %zu domains, the most it may",
			      k->name, held);
	for (c = 0; c < d->nchannels; c++)
		if (d->channels[c].id >= k->max_channels)
			return fsm_refuse(res, ERANGE,
				      "channel %u of domain '%s' is out of range on node '%s' (max_channels=%u): pick another spare",
				      d->channels[c].id, d->name, k->name,
				      k->max_channels);
	return 0;
}

/*
 * One member leaves, a node of the group takes its place (same position)
 * and holds the domain's channels from this entry on.  The other members
 * keep the channel set as it is: nothing of theirs is revoked.
 */
static int replace(struct imexd_fsm *fsm, uint64_t index,
		   const struct imexd_cmd *cmd, struct imexd_fsm_result *res)
{
	const char *old = cmd->u.replace.member, *new = cmd->u.replace.with;
	const struct imexd_fsm_node *k;
	struct imexd_def *d, nd;
	size_t pos;
	long m;

	d = named(fsm, cmd->u.replace.name, &pos, res);
	if (!d)
		return 0;
	if (!strcmp(old, new))
		return fsm_refuse(res, EINVAL,
			      "'%s' cannot replace itself in domain '%s': name a spare as the new member",
			      old, d->name);
	m = fsm_def_member(d, old);
	/* Done already (by this request's first copy, forwarded again after
	 * its leader was lost): the domain as it is; nothing changes. */
	if (fsm_def_member(d, new) >= 0 && m < 0)
		return imexd_def_copy(&res->def, d) ? -ENOMEM : 0;
	if (fsm_def_member(d, new) >= 0)
		return fsm_refuse(res, EEXIST,
			      "'%s' is a member of domain '%s' already: pick a spare that is not",
			      new, d->name);
	if (m < 0)
		return fsm_refuse(res, ENOENT, "'%s' is not a member of domain '%s'",
			      old, d->name);
	k = imexd_fsm_node(fsm, new);
	if (!k)
		return fsm_refuse(res, EINVAL,
			      "node '%s' is not in the group: join it with 'imexctl node join' and check that imexd runs there",
			      new);
	if (check_spare(fsm, d, k, res) || res->error)
		return 0;
	if (imexd_def_copy(&nd, d))
		return -ENOMEM;
	memset(&nd.members[m], 0, sizeof(nd.members[m]));
	snprintf(nd.members[m].name, sizeof(nd.members[m].name), "%s", new);
	nd.generation = index;
	return commit(fsm, pos, false, &nd, NULL, 0, res);
}

static int delete(struct imexd_fsm *fsm, uint64_t index,
		  const struct imexd_cmd *cmd, struct imexd_fsm_result *res)
{
	struct imexd_def *d;
	size_t pos;

	d = named(fsm, cmd->u.del.name, &pos, res);
	if (!d)
		return 0;
	if (imexd_def_copy(&res->def, d))
		return -ENOMEM;
	res->def.flags |= IMEXD_DEF_DELETED;
	res->def.generation = index;
	imexd_def_free(d);
	memmove(&fsm->domains[pos], &fsm->domains[pos + 1],
		(fsm->ndomains - pos - 1) * sizeof(*fsm->domains));
	fsm->ndomains--;
	return 0;
}

/* The bounds users meet first, in the kernel's words (errors-kernel.md). */
static bool refuse_bounds(const struct imexd_cmd *cmd,
			  struct imexd_fsm_result *res)
{
	const struct imexd_cmd_channels *ch =
		cmd->type == IMEXD_CMD_DOMAIN_CREATE ? &cmd->u.create.ch :
		cmd->type == IMEXD_CMD_CHANNEL_ALLOC ? &cmd->u.alloc.ch : NULL;
	uint32_t n = ch ? (ch->nids > ch->count ? ch->nids : ch->count) :
		     cmd->type == IMEXD_CMD_CHANNEL_FREE ? cmd->u.free.nids : 0;

	if (cmd->type == IMEXD_CMD_DOMAIN_CREATE &&
	    cmd->u.create.nmembers > IMEX_MEMBERS_MAX)
		fsm_refuse(res, E2BIG, "%u members is more than the %u a domain may have",
		       (unsigned int)cmd->u.create.nmembers,
		       (unsigned int)IMEX_MEMBERS_MAX);
	else if (n > IMEX_CHANNEL_IDS_MAX)
		fsm_refuse(res, E2BIG,
		       "%u channels in one request is more than the %u allowed: split it",
		       n, (unsigned int)IMEX_CHANNEL_IDS_MAX);
	return res->error;
}

int imexd_fsm_apply(struct imexd_fsm *fsm, uint64_t index,
		    const struct imexd_cmd *cmd, struct imexd_fsm_result *res)
{
	const char *why = NULL;
	int err;

	if (!fsm || !cmd || !res)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	if (index <= fsm->last_index)
		return -EINVAL;
	if (refuse_bounds(cmd, res)) {
		err = 0;
	} else if (imexd_cmd_check(cmd, &why)) {
		err = fsm_refuse_check(res, imexd_cmd_check(cmd, NULL), why);
	} else {
		switch (cmd->type) {
		case IMEXD_CMD_NODE_SET:
			err = node_set(fsm, &cmd->u.node_set, res);
			break;
		case IMEXD_CMD_DOMAIN_CREATE:
			err = create(fsm, index, cmd, res);
			break;
		case IMEXD_CMD_DOMAIN_DELETE:
			err = delete(fsm, index, cmd, res);
			break;
		case IMEXD_CMD_CHANNEL_ALLOC:
			err = alloc(fsm, index, cmd, res);
			break;
		case IMEXD_CMD_CHANNEL_FREE:
			err = free_channels(fsm, index, cmd, res);
			break;
		case IMEXD_CMD_NODE_JOIN:
			err = fsm_refuse(res, EINVAL, "a node join is not a table command");
			break;
		case IMEXD_CMD_NODE_LEAVE:
			err = node_forget(fsm, cmd->u.node.name, res);
			break;
		case IMEXD_CMD_MEMBER_REPLACE:
			err = replace(fsm, index, cmd, res);
			break;
		default:
			err = evict(fsm, index, cmd, res);
			break;
		}
	}
	if (err) {
		imexd_fsm_result_free(res);
		return err;
	}
	fsm->last_index = index;
	return 0;
}
