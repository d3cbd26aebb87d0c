// SPDX-License-Identifier: GPL-2.0
/*
 * The command codec of the state machine (fsm.h): one command is one Raft
 * log entry.  As in wire.c, decoding reads the fields with every read and
 * count bounds-checked before anything is allocated, then validates the
 * result with imexd_cmd_check(), the function the encoder runs on its
 * input: whatever encodes decodes, and re-encodes to the same bytes.
 */
#include <stdlib.h>

#include "fsm_internal.h"

static int bad(const char **why, int err, const char *what)
{
	if (why)
		*why = what;
	return err;
}

bool fsm_addr_valid(const char *addr)
{
	size_t i, n = strnlen(addr, IMEXD_ADDR_MAX + 1);

	if (n > IMEXD_ADDR_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (addr[i] < '!' || addr[i] > '~')
			return false;
	return true;
}

bool fsm_zero16(const uint8_t a[16])
{
	static const uint8_t zero[16];

	return !memcmp(a, zero, sizeof(zero));
}

/* A name field: terminated within its array and valid. */
static bool name_ok(const char *s)
{
	return strnlen(s, IMEX_NAME_MAX) < IMEX_NAME_MAX && imexd_name_valid(s);
}

int fsm_check_members(const struct imexd_member *m, uint16_t n,
		      const char **why)
{
	uint16_t i, j;

	if (!n)
		return bad(why, -EINVAL, "a domain needs at least one member");
	if (n > IMEX_MEMBERS_MAX)
		return bad(why, -E2BIG, "more members than IMEX_MEMBERS_MAX");
	if (!m)
		return bad(why, -EINVAL, "member count without members");
	for (i = 0; i < n; i++) {
		if (!name_ok(m[i].name))
			return bad(why, -EINVAL,
				   "member name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
		if (strnlen(m[i].addr, sizeof(m[i].addr)) == sizeof(m[i].addr) ||
		    !fsm_addr_valid(m[i].addr))
			return bad(why, -EINVAL, "member address is not printable ASCII");
		for (j = 0; j < i; j++)
			if (!strcmp(m[j].name, m[i].name))
				return bad(why, -EINVAL, "member listed twice");
	}
	return 0;
}

static int check_ids(const uint32_t *ids, uint32_t n, const char **why)
{
	uint32_t i;

	if (n > IMEX_CHANNEL_IDS_MAX)
		return bad(why, -E2BIG, "more channel ids than IMEX_CHANNEL_IDS_MAX");
	if (n && !ids)
		return bad(why, -EINVAL, "id count without ids");
	for (i = 0; i < n; i++) {
		if (ids[i] >= IMEX_CHANNELS_MAX)
			return bad(why, -EINVAL, "channel id >= IMEX_CHANNELS_MAX");
		if (i && ids[i] <= ids[i - 1])
			return bad(why, -EINVAL, "channel ids not strictly increasing");
	}
	return 0;
}

static int check_channels(const struct imexd_cmd_channels *ch, const char **why)
{
	if (ch->count > IMEX_CHANNEL_IDS_MAX)
		return bad(why, -E2BIG, "channel count above IMEX_CHANNEL_IDS_MAX");
	if (ch->count && ch->nids)
		return bad(why, -EINVAL, "both a channel count and channel ids");
	if (ch->mode > FSM_MODE_MAX)
		return bad(why, -EINVAL, "channel mode above 0777");
	return check_ids(ch->ids, ch->nids, why);
}

int imexd_cmd_check(const struct imexd_cmd *c, const char **why)
{
	const struct imexd_fsm_node *n;

	if (!c)
		return bad(why, -EINVAL, "no command");
	switch (c->type) {
	case IMEXD_CMD_NODE_SET:
		n = &c->u.node_set;
		if (!name_ok(n->name))
			return bad(why, -EINVAL, "node name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
		if (fsm_zero16(n->uuid))
			return bad(why, -EINVAL, "node UUID is all-zero");
		if (!n->max_channels || n->max_channels > IMEX_CHANNELS_MAX)
			return bad(why, -EINVAL, "max_channels not in 1..IMEX_CHANNELS_MAX");
		return 0;
	case IMEXD_CMD_DOMAIN_CREATE: {
		int err;

		if (!name_ok(c->u.create.name))
			return bad(why, -EINVAL, "domain name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
		if (fsm_zero16(c->u.create.uuid))
			return bad(why, -EINVAL, "domain UUID is all-zero");
		err = fsm_check_members(c->u.create.members,
					c->u.create.nmembers, why);
		return err ? err : check_channels(&c->u.create.ch, why);
	}
	case IMEXD_CMD_DOMAIN_DELETE:
		break;
	case IMEXD_CMD_CHANNEL_ALLOC:
		if (!c->u.alloc.ch.count && !c->u.alloc.ch.nids)
			return bad(why, -EINVAL, "neither a channel count nor channel ids");
		if (!name_ok(c->u.alloc.name))
			break;
		return check_channels(&c->u.alloc.ch, why);
	case IMEXD_CMD_CHANNEL_FREE:
		if (!c->u.free.nids)
			return bad(why, -EINVAL, "no channel ids to free");
		if (!name_ok(c->u.free.name))
			break;
		return check_ids(c->u.free.ids, c->u.free.nids, why);
	case IMEXD_CMD_MEMBER_EVICT:
		if (!name_ok(c->u.evict.member))
			return bad(why, -EINVAL, "member name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
		break;
	case IMEXD_CMD_MEMBER_REPLACE:
		if (!name_ok(c->u.replace.member))
			return bad(why, -EINVAL, "member name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
		if (!name_ok(c->u.replace.with))
			return bad(why, -EINVAL, "new member name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
		break;
	case IMEXD_CMD_NODE_JOIN:
	case IMEXD_CMD_NODE_LEAVE:
		if (!name_ok(c->u.node.name))
			return bad(why, -EINVAL, "node name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
		if (!fsm_addr_valid(c->u.node.addr))
			return bad(why, -EINVAL, "node address is not printable ASCII");
		return 0;
	default:
		return bad(why, -EINVAL, "unknown command type");
	}
	/* The name is the first field of every domain command. */
	if (!name_ok(c->u.del.name))
		return bad(why, -EINVAL, "domain name is not [A-Za-z0-9][A-Za-z0-9_.-]*");
	return 0;
}

void imexd_cmd_free(struct imexd_cmd *c)
{
	if (!c)
		return;
	switch (c->type) {
	case IMEXD_CMD_DOMAIN_CREATE:
		free(c->u.create.members);
		free(c->u.create.ch.ids);
		c->u.create.members = NULL;
		c->u.create.nmembers = 0;
		c->u.create.ch.ids = NULL;
		c->u.create.ch.nids = 0;
		break;
	case IMEXD_CMD_CHANNEL_ALLOC:
		free(c->u.alloc.ch.ids);
		c->u.alloc.ch.ids = NULL;
		c->u.alloc.ch.nids = 0;
		break;
	case IMEXD_CMD_CHANNEL_FREE:
		free(c->u.free.ids);
		c->u.free.ids = NULL;
		c->u.free.nids = 0;
		break;
	}
}

const char *imexd_cmd_type_name(uint8_t type)
{
	static const char *const names[] = {
		[IMEXD_CMD_NODE_SET] = "NODE_SET",
		[IMEXD_CMD_DOMAIN_CREATE] = "DOMAIN_CREATE",
		[IMEXD_CMD_DOMAIN_DELETE] = "DOMAIN_DELETE",
		[IMEXD_CMD_CHANNEL_ALLOC] = "CHANNEL_ALLOC",
		[IMEXD_CMD_CHANNEL_FREE] = "CHANNEL_FREE",
		[IMEXD_CMD_MEMBER_EVICT] = "MEMBER_EVICT",
		[IMEXD_CMD_MEMBER_REPLACE] = "MEMBER_REPLACE",
		[IMEXD_CMD_NODE_JOIN] = "NODE_JOIN",
		[IMEXD_CMD_NODE_LEAVE] = "NODE_LEAVE",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "UNKNOWN";
}

/* ---- encoder -------------------------------------------------------------- */

void fsm_wr_members(struct imexd_wr *w, const struct imexd_member *m, uint16_t n)
{
	uint16_t i;

	wr_be(w, n, 2);
	for (i = 0; i < n; i++) {
		wr_str(w, m[i].name, sizeof(m[i].name));
		wr_str(w, m[i].addr, sizeof(m[i].addr));
	}
}

static void wr_ids(struct imexd_wr *w, const uint32_t *ids, uint32_t n)
{
	uint32_t i;

	wr_be(w, n, 4);
	for (i = 0; i < n; i++)
		wr_be(w, ids[i], 4);
}

static void wr_channels(struct imexd_wr *w, const struct imexd_cmd_channels *ch)
{
	wr_be(w, ch->count, 4);
	wr_ids(w, ch->ids, ch->nids);
	wr_be(w, ch->uid, 4);
	wr_be(w, ch->gid, 4);
	wr_be(w, ch->mode, 2);
}

static void wr_cmd(struct imexd_wr *w, const void *arg)
{
	const struct imexd_cmd *c = arg;
	const struct imexd_fsm_node *n = &c->u.node_set;

	wr_be(w, IMEXD_CMD_VERSION, 1);
	wr_be(w, c->type, 1);
	switch (c->type) {
	case IMEXD_CMD_NODE_SET:
		wr_str(w, n->name, sizeof(n->name));
		wr_bytes(w, n->uuid, 16);
		wr_bytes(w, n->fabric_uuid, 16);
		wr_be(w, n->partition, 4);
		wr_be(w, n->max_channels, 4);
		break;
	case IMEXD_CMD_DOMAIN_CREATE:
		wr_str(w, c->u.create.name, IMEX_NAME_MAX);
		wr_bytes(w, c->u.create.uuid, 16);
		fsm_wr_members(w, c->u.create.members, c->u.create.nmembers);
		wr_channels(w, &c->u.create.ch);
		break;
	case IMEXD_CMD_DOMAIN_DELETE:
		wr_str(w, c->u.del.name, IMEX_NAME_MAX);
		break;
	case IMEXD_CMD_CHANNEL_ALLOC:
		wr_str(w, c->u.alloc.name, IMEX_NAME_MAX);
		wr_channels(w, &c->u.alloc.ch);
		break;
	case IMEXD_CMD_CHANNEL_FREE:
		wr_str(w, c->u.free.name, IMEX_NAME_MAX);
		wr_ids(w, c->u.free.ids, c->u.free.nids);
		break;
	case IMEXD_CMD_MEMBER_EVICT:
		wr_str(w, c->u.evict.name, IMEX_NAME_MAX);
		wr_str(w, c->u.evict.member, IMEX_NAME_MAX);
		break;
	case IMEXD_CMD_MEMBER_REPLACE:
		wr_str(w, c->u.replace.name, IMEX_NAME_MAX);
		wr_str(w, c->u.replace.member, IMEX_NAME_MAX);
		wr_str(w, c->u.replace.with, IMEX_NAME_MAX);
		break;
	case IMEXD_CMD_NODE_JOIN:
	case IMEXD_CMD_NODE_LEAVE:
		wr_str(w, c->u.node.name, IMEX_NAME_MAX);
		wr_str(w, c->u.node.addr, sizeof(c->u.node.addr));
		wr_bytes(w, c->u.node.fabric_uuid, 16);
		wr_be(w, c->u.node.partition, 4);
		break;
	}
}

int imexd_cmd_encode(const struct imexd_cmd *cmd, uint8_t **out, size_t *len,
		     const char **why)
{
	int err = imexd_cmd_check(cmd, why);

	if (err)
		return err == -E2BIG ? -EINVAL : err;
	if (!out || !len)
		return bad(why, -EINVAL, "nowhere to put the encoding");
	return wr_encode(wr_cmd, cmd, out, len);
}

/* ---- decoder -------------------------------------------------------------- */

/* The smallest encoded member: two one-byte lengths and a one-byte name. */
#define MEMBER_MIN_LEN	3

int fsm_rd_members(struct fsm_rd *r, struct imexd_member **out, uint16_t *n)
{
	uint16_t i, cnt = (uint16_t)rd_be(r, 2);
	struct imexd_member *m;

	*out = NULL;
	*n = 0;
	if (r->err)
		return r->err;
	if (cnt > IMEX_MEMBERS_MAX)
		return rd_error(r, -E2BIG, "more members than IMEX_MEMBERS_MAX");
	if (!rd_room(r, cnt, MEMBER_MIN_LEN))
		return r->err;
	if (!cnt)
		return 0;
	m = calloc(cnt, sizeof(*m));
	if (!m)
		return rd_error(r, -ENOMEM, "out of memory");
	for (i = 0; i < cnt; i++)
		if (!rd_str(r, m[i].name, sizeof(m[i].name), true) ||
		    !rd_str(r, m[i].addr, sizeof(m[i].addr), false))
			break;
	if (r->err) {
		free(m);
		return r->err;
	}
	*out = m;
	*n = cnt;
	return 0;
}

static int rd_ids(struct fsm_rd *r, uint32_t **out, uint32_t *n)
{
	uint32_t i, cnt = (uint32_t)rd_be(r, 4);
	uint32_t *ids;

	*out = NULL;
	*n = 0;
	if (r->err)
		return r->err;
	if (cnt > IMEX_CHANNEL_IDS_MAX)
		return rd_error(r, -E2BIG, "more channel ids than IMEX_CHANNEL_IDS_MAX");
	if (!rd_room(r, cnt, 4))
		return r->err;
	if (!cnt)
		return 0;
	ids = calloc(cnt, sizeof(*ids));
	if (!ids)
		return rd_error(r, -ENOMEM, "out of memory");
	for (i = 0; i < cnt; i++)
		ids[i] = (uint32_t)rd_be(r, 4);
	*out = ids;
	*n = cnt;
	return 0;
}

static void rd_channels(struct fsm_rd *r, struct imexd_cmd_channels *ch)
{
	ch->count = (uint32_t)rd_be(r, 4);
	if (!r->err && ch->count > IMEX_CHANNEL_IDS_MAX) {
		rd_fail(r, -E2BIG, "channel count above IMEX_CHANNEL_IDS_MAX");
		return;
	}
	if (rd_ids(r, &ch->ids, &ch->nids))
		return;
	ch->uid = (uint32_t)rd_be(r, 4);
	ch->gid = (uint32_t)rd_be(r, 4);
	ch->mode = (uint16_t)rd_be(r, 2);
}

static void rd_cmd(struct fsm_rd *r, struct imexd_cmd *c)
{
	struct imexd_fsm_node *n = &c->u.node_set;

	switch (c->type) {
	case IMEXD_CMD_NODE_SET:
		rd_str(r, n->name, sizeof(n->name), true);
		rd_bytes(r, n->uuid, 16);
		rd_bytes(r, n->fabric_uuid, 16);
		n->partition = (uint32_t)rd_be(r, 4);
		n->max_channels = (uint32_t)rd_be(r, 4);
		break;
	case IMEXD_CMD_DOMAIN_CREATE:
		rd_str(r, c->u.create.name, IMEX_NAME_MAX, true);
		rd_bytes(r, c->u.create.uuid, 16);
		if (!fsm_rd_members(r, &c->u.create.members,
				    &c->u.create.nmembers))
			rd_channels(r, &c->u.create.ch);
		break;
	case IMEXD_CMD_DOMAIN_DELETE:
		rd_str(r, c->u.del.name, IMEX_NAME_MAX, true);
		break;
	case IMEXD_CMD_CHANNEL_ALLOC:
		rd_str(r, c->u.alloc.name, IMEX_NAME_MAX, true);
		rd_channels(r, &c->u.alloc.ch);
		break;
	case IMEXD_CMD_CHANNEL_FREE:
		rd_str(r, c->u.free.name, IMEX_NAME_MAX, true);
		rd_ids(r, &c->u.free.ids, &c->u.free.nids);
		break;
	case IMEXD_CMD_MEMBER_EVICT:
		rd_str(r, c->u.evict.name, IMEX_NAME_MAX, true);
		rd_str(r, c->u.evict.member, IMEX_NAME_MAX, true);
		break;
	case IMEXD_CMD_MEMBER_REPLACE:
		rd_str(r, c->u.replace.name, IMEX_NAME_MAX, true);
		rd_str(r, c->u.replace.member, IMEX_NAME_MAX, true);
		rd_str(r, c->u.replace.with, IMEX_NAME_MAX, true);
		break;
	case IMEXD_CMD_NODE_JOIN:
	case IMEXD_CMD_NODE_LEAVE:
		rd_str(r, c->u.node.name, IMEX_NAME_MAX, true);
		rd_str(r, c->u.node.addr, sizeof(c->u.node.addr), false);
		rd_bytes(r, c->u.node.fabric_uuid, 16);
		c->u.node.partition = (uint32_t)rd_be(r, 4);
		break;
	}
}

int imexd_cmd_decode(const uint8_t *buf, size_t len, struct imexd_cmd *cmd,
		     const char **why)
{
	struct fsm_rd r = { buf, len, 0, NULL };
	uint8_t version;
	int err;

	if (!cmd || (!buf && len))
		return bad(why, -EINVAL, "no buffer or no command");
	memset(cmd, 0, sizeof(*cmd));
	version = (uint8_t)rd_be(&r, 1);
	cmd->type = (uint8_t)rd_be(&r, 1);
	if (!r.err && version != IMEXD_CMD_VERSION)
		rd_fail(&r, -EPROTO, "unknown command version");
	if (!r.err && (cmd->type < IMEXD_CMD_NODE_SET ||
		       cmd->type > IMEXD_CMD_TYPE_MAX) &&
	    cmd->type != IMEXD_CMD_NODE_JOIN && cmd->type != IMEXD_CMD_NODE_LEAVE)
		rd_fail(&r, -EPROTO, "unknown command type");
	rd_cmd(&r, cmd);
	if (!r.err && r.left)
		rd_fail(&r, -EBADMSG, "bytes after the command");
	err = r.err;
	if (!err) {
		err = imexd_cmd_check(cmd, &r.why);
		if (err == -EINVAL)
			err = -EBADMSG;
	}
	if (err) {
		imexd_cmd_free(cmd);
		memset(cmd, 0, sizeof(*cmd));
		return bad(why, err, r.why);
	}
	return 0;
}
