// SPDX-License-Identifier: GPL-2.0
/*
 * The imexd peer protocol codec (wire.h).
 *
 * Decoding is done in two steps that share their rules with encoding: a
 * structural pass reads the fields, bounds-checking every read and every
 * count before it allocates (wire_dec.c), then wire_check_msg() validates
 * the decoded message with the very function the encoder runs on its input.  So whatever the
 * encoder accepts decodes, and whatever decodes re-encodes to the same bytes.
 *
 * Nothing here keeps state between calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "raftlog.h"
#include "raftwire.h"
#include "wire_internal.h"

#define ERRNO_WIRE_MAX		4095	/* like the kernel's MAX_ERRNO */
#define MODE_MAX		0777

_Static_assert(IMEXD_RAFT_DATA_MAX == IMEXD_RAFTWIRE_FRAME_MAX,
	       "wire.h's RAFT bound is raftwire's frame bound");
_Static_assert(IMEXD_RAFT_BODY_MAX > IMEXD_BODY_MAX,
	       "only RAFT bodies go above IMEXD_BODY_MAX");

static const uint8_t zero_uuid[16];

/* ---- string rules ------------------------------------------------------ */

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* @n bytes of @s (no NUL among them) against the uAPI name rule. */
static bool name_bytes_ok(const char *s, size_t n)
{
	size_t i;

	if (n < 1 || n >= IMEX_NAME_MAX || !is_alnum(s[0]))
		return false;
	for (i = 1; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
			return false;
	return true;
}

/* Printable ASCII without the space (addr) or with it (text). */
static bool print_bytes_ok(const char *s, size_t n, char lowest)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < lowest || s[i] > '~')
			return false;
	return true;
}

const char *wire_str_problem(enum str_kind kind, const char *s, size_t n)
{
	switch (kind) {
	case STR_NAME:
		if (n >= IMEX_NAME_MAX)
			return "name longer than IMEX_NAME_MAX - 1";
		return name_bytes_ok(s, n) ? NULL :
		       "name is not [A-Za-z0-9][A-Za-z0-9_.-]*";
	case STR_ADDR:
		if (n > IMEXD_ADDR_MAX)
			return "address longer than IMEXD_ADDR_MAX";
		return print_bytes_ok(s, n, '!') ? NULL :
		       "address is not printable ASCII";
	case STR_TEXT:
		if (n > IMEXD_MESSAGE_MAX)
			return "message longer than IMEXD_MESSAGE_MAX";
		return print_bytes_ok(s, n, ' ') ? NULL :
		       "message is not printable ASCII";
	}
	return "unknown string kind";
}

/* A NUL-terminated string in a field of @cap bytes (encoder side). */
static const char *field_problem(enum str_kind kind, const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	if (n == cap)
		return "string field is not terminated";
	return wire_str_problem(kind, s, n);
}

bool imexd_name_valid(const char *name)
{
	return name && name_bytes_ok(name, strnlen(name, IMEX_NAME_MAX));
}

/* ---- validation shared by encoder and decoder --------------------------- */

static int bad(const char **why, int err, const char *what)
{
	if (why)
		*why = what;
	return err;
}

static int check_members(const struct imexd_def *d, const char **why)
{
	uint16_t i, j;

	if (d->nmembers > IMEX_MEMBERS_MAX)
		return bad(why, -E2BIG, "more members than IMEX_MEMBERS_MAX");
	if (d->nmembers && !d->members)
		return bad(why, -EBADMSG, "member count without members");
	for (i = 0; i < d->nmembers; i++) {
		const struct imexd_member *m = &d->members[i];
		const char *p;

		p = field_problem(STR_NAME, m->name, sizeof(m->name));
		if (!p)
			p = field_problem(STR_ADDR, m->addr, sizeof(m->addr));
		if (p)
			return bad(why, -EBADMSG, p);
		for (j = 0; j < i; j++)
			if (!strcmp(d->members[j].name, m->name))
				return bad(why, -EBADMSG, "member listed twice");
	}
	return 0;
}

static int check_channels(const struct imexd_def *d, const char **why)
{
	uint32_t i;

	if (d->nchannels > IMEX_CHANNELS_MAX)
		return bad(why, -E2BIG, "more channels than IMEX_CHANNELS_MAX");
	if (d->nchannels && !d->channels)
		return bad(why, -EBADMSG, "channel count without channels");
	for (i = 0; i < d->nchannels; i++) {
		const struct imexd_channel *c = &d->channels[i];

		if (c->id >= IMEX_CHANNELS_MAX)
			return bad(why, -EBADMSG, "channel id >= IMEX_CHANNELS_MAX");
		if (i && c->id <= d->channels[i - 1].id)
			return bad(why, -EBADMSG,
				   "channel ids not strictly increasing");
		if (c->mode > MODE_MAX)
			return bad(why, -EBADMSG, "channel mode above 0777");
	}
	return 0;
}

/* The def rules, uuid apart (the wire carries it in the header). */
static int check_def_body(const struct imexd_def *d, const char **why)
{
	const char *p = field_problem(STR_NAME, d->name, sizeof(d->name));
	int err;

	if (p)
		return bad(why, -EBADMSG, p);
	if (d->flags & ~IMEXD_DEF_DELETED)
		return bad(why, -EBADMSG, "unknown definition flags");
	err = check_members(d, why);
	return err ? err : check_channels(d, why);
}

int imexd_def_check(const struct imexd_def *def, const char **why)
{
	int err;

	if (!def)
		return bad(why, -EINVAL, "no definition");
	if (!memcmp(def->uuid, zero_uuid, sizeof(zero_uuid)))
		return bad(why, -EINVAL, "domain UUID is all-zero");
	err = check_def_body(def, why);
	return err == -EBADMSG ? -EINVAL : err;
}

static int check_err(int32_t error, const char **why)
{
	if (error < 0 || error > ERRNO_WIRE_MAX)
		return bad(why, -EBADMSG, "error is not 0 or a positive errno");
	return 0;
}

static int check_hello(const struct imexd_msg *m, const char **why)
{
	const char *p = field_problem(STR_NAME, m->u.hello.node_name,
				      sizeof(m->u.hello.node_name));

	if (p)
		return bad(why, -EBADMSG, p);
	if (m->u.hello.proto_min > m->u.hello.proto_max)
		return bad(why, -EBADMSG, "proto_min above proto_max");
	if (m->u.hello.max_channels > IMEX_CHANNELS_MAX)
		return bad(why, -E2BIG, "max_channels above IMEX_CHANNELS_MAX");
	return 0;
}

/* HEARTBEAT's gens: bounded, each a real domain, each once. */
static int check_gens(const struct imexd_msg *m, const char **why)
{
	const struct imexd_peer_gen *g = m->u.heartbeat.gens;
	uint16_t i, j;

	if (m->u.heartbeat.ngens > IMEX_DOMAINS_MAX)
		return bad(why, -E2BIG, "more domains than IMEX_DOMAINS_MAX");
	if (m->u.heartbeat.ngens && !g)
		return bad(why, -EBADMSG, "domain count without domains");
	for (i = 0; i < m->u.heartbeat.ngens; i++) {
		if (!memcmp(g[i].uuid, zero_uuid, sizeof(zero_uuid)))
			return bad(why, -EBADMSG, "domain UUID is all-zero");
		for (j = 0; j < i; j++)
			if (!memcmp(g[j].uuid, g[i].uuid, sizeof(g[i].uuid)))
				return bad(why, -EBADMSG, "domain listed twice");
	}
	return 0;
}

static int check_heartbeat(const struct imexd_msg *m, const char **why)
{
	const struct imexd_peer_view *v = m->u.heartbeat.peers;
	uint16_t i, j;

	if (m->u.heartbeat.n > IMEX_MEMBERS_MAX)
		return bad(why, -E2BIG, "more peers than IMEX_MEMBERS_MAX");
	if (m->u.heartbeat.n && !v)
		return bad(why, -EBADMSG, "peer count without peers");
	for (i = 0; i < m->u.heartbeat.n; i++) {
		const char *p = field_problem(STR_NAME, v[i].name,
					      sizeof(v[i].name));

		if (p)
			return bad(why, -EBADMSG, p);
		if (v[i].state > IMEXD_WIRE_MEMBER_STATE_MAX)
			return bad(why, -EBADMSG, "peer state out of range");
		for (j = 0; j < i; j++)
			if (!strcmp(v[j].name, v[i].name))
				return bad(why, -EBADMSG, "peer listed twice");
	}
	return check_gens(m, why);
}

/* REPLY's def: its uuid is the header's. */
static int check_msg_def(const struct imexd_msg *m, const struct imexd_def *d,
			 const char **why)
{
	if (!memcmp(m->domain_uuid, zero_uuid, sizeof(zero_uuid)))
		return bad(why, -EBADMSG, "definition without a domain UUID");
	if (memcmp(d->uuid, m->domain_uuid, sizeof(d->uuid)))
		return bad(why, -EBADMSG,
			   "definition UUID differs from the header's");
	return check_def_body(d, why);
}

/* IMPORT_REQ, IMPORT_RESP, EXPORT_REVOKE: about one domain's channel. */
static int check_import(const struct imexd_msg *m, const char **why)
{
	uint16_t n = m->u.import_resp.desc_len;

	if (!memcmp(m->domain_uuid, zero_uuid, sizeof(zero_uuid)))
		return bad(why, -EBADMSG, "import message without a domain UUID");
	switch (m->type) {
	case IMEXD_MSG_IMPORT_REQ:
		if (m->u.import_req.channel_id >= IMEX_CHANNELS_MAX)
			return bad(why, -EBADMSG, "channel id >= IMEX_CHANNELS_MAX");
		return 0;
	case IMEXD_MSG_IMPORT_RESP:
		if (n > IMEX_DESC_MAX)
			return bad(why, -E2BIG, "descriptor longer than IMEX_DESC_MAX");
		if (!m->u.import_resp.status && !n)
			return bad(why, -EBADMSG, "success without a descriptor");
		if (m->u.import_resp.status && n)
			return bad(why, -EBADMSG, "a descriptor with an error");
		return check_err(m->u.import_resp.status, why);
	}
	return 0;
}

/* RAFT and FORWARD: opaque bytes for raftwire and the fsm, bounded. */
static int check_blob(uint32_t len, const uint8_t *p, uint32_t max,
		      const char **why)
{
	if (!len)
		return bad(why, -EBADMSG, "empty payload");
	if (len > max)
		return bad(why, -E2BIG, max == IMEXD_RAFT_DATA_MAX ?
			   "raft frame longer than IMEXD_RAFTWIRE_FRAME_MAX" :
			   "command longer than IMEXD_RAFT_ENTRY_MAX");
	if (!p)
		return bad(why, -EBADMSG, "payload length without payload");
	return 0;
}

/* Channel ids: strictly increasing, each a channel there can be. */
static int check_ids(const uint32_t *ids, uint32_t n, const char **why)
{
	uint32_t i;

	if (n > IMEX_CHANNELS_MAX)
		return bad(why, -E2BIG, "more channel ids than IMEX_CHANNELS_MAX");
	if (n && !ids)
		return bad(why, -EBADMSG, "channel id count without ids");
	for (i = 0; i < n; i++) {
		if (ids[i] >= IMEX_CHANNELS_MAX)
			return bad(why, -EBADMSG, "channel id >= IMEX_CHANNELS_MAX");
		if (i && ids[i] <= ids[i - 1])
			return bad(why, -EBADMSG,
				   "channel ids not strictly increasing");
	}
	return 0;
}

static int check_reply(const struct imexd_msg *m, const char **why)
{
	const char *p = field_problem(STR_TEXT, m->u.reply.message,
				      sizeof(m->u.reply.message));
	int err;

	if (p)
		return bad(why, -EBADMSG, p);
	err = check_err(m->u.reply.error, why);
	if (!err && m->u.reply.has_def)
		err = check_msg_def(m, &m->u.reply.def, why);
	return err ? err : check_ids(m->u.reply.ids, m->u.reply.nids, why);
}

int wire_check_msg(const struct imexd_msg *m, const char **why)
{
	switch (m->type) {
	case IMEXD_MSG_HELLO:
	case IMEXD_MSG_HELLO_ACK:
		return check_hello(m, why);
	case IMEXD_MSG_HEARTBEAT:
		return check_heartbeat(m, why);
	case IMEXD_MSG_LEAVE:
		if (m->u.leave.reason != IMEXD_LEAVE_SHUTDOWN)
			return bad(why, -EBADMSG, "leave reason out of range");
		return 0;
	case IMEXD_MSG_IMPORT_REQ:
	case IMEXD_MSG_IMPORT_RESP:
	case IMEXD_MSG_EXPORT_REVOKE:
		return check_import(m, why);
	case IMEXD_MSG_RAFT:
		return check_blob(m->u.raft.len, m->u.raft.data,
				  IMEXD_RAFT_DATA_MAX, why);
	case IMEXD_MSG_FORWARD:
		return check_blob(m->u.forward.len, m->u.forward.cmd,
				  IMEXD_RAFT_ENTRY_MAX, why);
	case IMEXD_MSG_REPLY:
		return check_reply(m, why);
	}
	return bad(why, -EPROTO, "unknown message type");
}

/* ---- encoder ------------------------------------------------------------ */

/* Only called on validated fields: NUL-terminated, at most 255 bytes. */
static void wr_str(struct imexd_wr *w, const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	wr_u8(w, (uint8_t)n);
	wr_bytes(w, s, n);
}

static void wr_def(struct imexd_wr *w, const struct imexd_def *d)
{
	uint32_t i;

	wr_str(w, d->name, sizeof(d->name));
	wr_u64(w, d->generation);
	wr_u8(w, d->flags);
	wr_bytes(w, d->fabric_uuid, sizeof(d->fabric_uuid));
	wr_u32(w, d->partition);
	wr_u16(w, d->nmembers);
	for (i = 0; i < d->nmembers; i++) {
		wr_str(w, d->members[i].name, sizeof(d->members[i].name));
		wr_str(w, d->members[i].addr, sizeof(d->members[i].addr));
	}
	wr_u32(w, d->nchannels);
	for (i = 0; i < d->nchannels; i++) {
		wr_u32(w, d->channels[i].id);
		wr_u32(w, d->channels[i].uid);
		wr_u32(w, d->channels[i].gid);
		wr_u16(w, d->channels[i].mode);
	}
}

static void wr_hello(struct imexd_wr *w, const struct imexd_msg *m)
{
	wr_u16(w, m->u.hello.proto_min);
	wr_u16(w, m->u.hello.proto_max);
	wr_str(w, m->u.hello.node_name, sizeof(m->u.hello.node_name));
	wr_u32(w, m->u.hello.max_channels);
	wr_bytes(w, m->u.hello.fabric_uuid, sizeof(m->u.hello.fabric_uuid));
	wr_u32(w, m->u.hello.partition);
	wr_u64(w, m->u.hello.group);
}

static void wr_heartbeat(struct imexd_wr *w, const struct imexd_msg *m)
{
	uint16_t i;

	wr_u32(w, m->u.heartbeat.seq);
	wr_u16(w, m->u.heartbeat.n);
	for (i = 0; i < m->u.heartbeat.n; i++) {
		wr_str(w, m->u.heartbeat.peers[i].name,
		       sizeof(m->u.heartbeat.peers[i].name));
		wr_u8(w, m->u.heartbeat.peers[i].state);
	}
	wr_u16(w, m->u.heartbeat.ngens);
	for (i = 0; i < m->u.heartbeat.ngens; i++) {
		wr_bytes(w, m->u.heartbeat.gens[i].uuid,
			 sizeof(m->u.heartbeat.gens[i].uuid));
		wr_u64(w, m->u.heartbeat.gens[i].generation);
	}
}

static void wr_body(struct imexd_wr *w, const struct imexd_msg *m)
{
	uint32_t i;

	switch (m->type) {
	case IMEXD_MSG_HELLO:
	case IMEXD_MSG_HELLO_ACK:
		wr_hello(w, m);
		break;
	case IMEXD_MSG_HEARTBEAT:
		wr_heartbeat(w, m);
		break;
	case IMEXD_MSG_LEAVE:
		wr_u8(w, m->u.leave.reason);
		break;
	case IMEXD_MSG_IMPORT_REQ:
		wr_u64(w, m->u.import_req.tag);
		wr_u64(w, m->u.import_req.handle_id);
		wr_u32(w, m->u.import_req.channel_id);
		break;
	case IMEXD_MSG_IMPORT_RESP:
		wr_u64(w, m->u.import_resp.tag);
		wr_u32(w, (uint32_t)m->u.import_resp.status);
		wr_u16(w, m->u.import_resp.desc_len);
		wr_bytes(w, m->u.import_resp.desc, m->u.import_resp.desc_len);
		break;
	case IMEXD_MSG_EXPORT_REVOKE:
		wr_u64(w, m->u.export_revoke.handle_id);
		break;
	case IMEXD_MSG_RAFT:
		wr_u32(w, m->u.raft.len);
		wr_bytes(w, m->u.raft.data, m->u.raft.len);
		break;
	case IMEXD_MSG_FORWARD:
		wr_u64(w, m->u.forward.tag);
		wr_u32(w, m->u.forward.len);
		wr_bytes(w, m->u.forward.cmd, m->u.forward.len);
		break;
	case IMEXD_MSG_REPLY:
		wr_u64(w, m->u.reply.tag);
		wr_u32(w, (uint32_t)m->u.reply.error);
		wr_str(w, m->u.reply.message, sizeof(m->u.reply.message));
		wr_u64(w, m->u.reply.index);
		wr_u8(w, m->u.reply.has_def);
		if (m->u.reply.has_def)
			wr_def(w, &m->u.reply.def);
		wr_u32(w, m->u.reply.nids);
		for (i = 0; i < m->u.reply.nids; i++)
			wr_u32(w, m->u.reply.ids[i]);
		break;
	}
}

size_t wire_body_max(uint8_t type)
{
	return type == IMEXD_MSG_RAFT ? IMEXD_RAFT_BODY_MAX : IMEXD_BODY_MAX;
}

static void wr_header(struct imexd_wr *w, const struct imexd_msg *m,
		      uint32_t body)
{
	wr_u32(w, IMEXD_MAGIC);
	wr_u8(w, IMEXD_FRAME_VERSION);
	wr_u8(w, m->type);
	wr_u16(w, 0);
	wr_u32(w, body);
	wr_bytes(w, m->domain_uuid, sizeof(m->domain_uuid));
	wr_bytes(w, m->sender_uuid, sizeof(m->sender_uuid));
	wr_u64(w, m->sender_epoch);
}

int imexd_msg_encode(const struct imexd_msg *msg, uint8_t **out, size_t *len)
{
	struct imexd_wr w = { NULL, 0 };
	size_t body;

	if (!msg || !out || !len || wire_check_msg(msg, NULL))
		return -EINVAL;
	/* Validated counts bound the body to tens of MiB: no overflow. */
	wr_body(&w, msg);
	if (w.len > wire_body_max(msg->type))
		return -EINVAL;
	body = w.len;
	w.buf = malloc(IMEXD_HEADER_LEN + body);
	if (!w.buf)
		return -ENOMEM;
	w.len = 0;
	wr_header(&w, msg, (uint32_t)body);
	wr_body(&w, msg);
	*out = w.buf;
	*len = w.len;
	return 0;
}

