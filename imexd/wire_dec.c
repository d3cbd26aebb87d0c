// SPDX-License-Identifier: GPL-2.0
/*
 * The imexd peer protocol codec (wire.h): the decoder.  A structural pass
 * bounds-checks every read and every count before it allocates, then
 * wire_check_msg() (wire.c) validates the result with the encoder's rules.
 *
 * Nothing here keeps state between calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "raftlog.h"
#include "wire_internal.h"

/* ---- decoder ------------------------------------------------------------ */

/* A str into a field of @cap (> 255 for addresses and messages) bytes. */
static void rd_str(struct imexd_rd *r, enum str_kind kind, char *dst,
		   size_t cap)
{
	size_t n = rd_u8(r);
	const uint8_t *p = rd_take(r, n);
	const char *why;

	if (!p)
		return;
	/* Checked on the raw bytes, so a NUL cannot hide a tail. */
	why = wire_str_problem(kind, (const char *)p, n);
	if (why || n >= cap) {
		rd_fail(r, -EBADMSG, why ? why : "string too long");
		return;
	}
	memcpy(dst, p, n);
	dst[n] = '\0';
}

/*
 * A zeroed array of @n (> 0) entries of @size bytes, each @wire bytes on
 * the wire (0: not checked here); NULL with the error set when @n is above
 * @max (@too_many) or above what the body holds, or without memory.
 */
static void *rd_array(struct imexd_rd *r, uint32_t n, uint32_t max,
		      size_t wire, size_t size, const char *too_many)
{
	void *v;

	if (n > max) {
		rd_fail(r, -E2BIG, too_many);
		return NULL;
	}
	/* The count must fit what is left before anything is allocated. */
	if (wire && n > rd_left(r) / wire) {
		rd_fail(r, -EBADMSG, "body shorter than its fields");
		return NULL;
	}
	v = calloc(n, size);
	if (!v)
		rd_fail(r, -ENOMEM, "out of memory");
	return v;
}

static void rd_members(struct imexd_rd *r, struct imexd_def *d)
{
	uint16_t i;

	d->nmembers = rd_u16(r);
	if (r->err || !d->nmembers)
		return;
	d->members = rd_array(r, d->nmembers, IMEX_MEMBERS_MAX, 0,
			      sizeof(*d->members),
			      "more members than IMEX_MEMBERS_MAX");
	if (!d->members)
		return;
	for (i = 0; i < d->nmembers && !r->err; i++) {
		rd_str(r, STR_NAME, d->members[i].name,
		       sizeof(d->members[i].name));
		rd_str(r, STR_ADDR, d->members[i].addr,
		       sizeof(d->members[i].addr));
	}
}

static void rd_channels(struct imexd_rd *r, struct imexd_def *d)
{
	uint32_t i;

	d->nchannels = rd_u32(r);
	if (r->err || !d->nchannels)
		return;
	d->channels = rd_array(r, d->nchannels, IMEX_CHANNELS_MAX,
			       CHANNEL_WIRE_LEN, sizeof(*d->channels),
			       "more channels than IMEX_CHANNELS_MAX");
	if (!d->channels)
		return;
	for (i = 0; i < d->nchannels; i++) {
		d->channels[i].id = rd_u32(r);
		d->channels[i].uid = rd_u32(r);
		d->channels[i].gid = rd_u32(r);
		d->channels[i].mode = rd_u16(r);
	}
}

static void rd_def(struct imexd_rd *r, struct imexd_def *d, const uint8_t *uuid)
{
	memcpy(d->uuid, uuid, sizeof(d->uuid));
	rd_str(r, STR_NAME, d->name, sizeof(d->name));
	d->generation = rd_u64(r);
	d->flags = rd_u8(r);
	rd_bytes(r, d->fabric_uuid, sizeof(d->fabric_uuid));
	d->partition = rd_u32(r);
	rd_members(r, d);
	rd_channels(r, d);
}

static void rd_hello(struct imexd_rd *r, struct imexd_msg *m)
{
	m->u.hello.proto_min = rd_u16(r);
	m->u.hello.proto_max = rd_u16(r);
	rd_str(r, STR_NAME, m->u.hello.node_name, sizeof(m->u.hello.node_name));
	m->u.hello.max_channels = rd_u32(r);
	rd_bytes(r, m->u.hello.fabric_uuid, sizeof(m->u.hello.fabric_uuid));
	m->u.hello.partition = rd_u32(r);
	/* Protocol 2 ends here: its range must still be readable. */
	if (!r->err && r->off < r->len)
		m->u.hello.group = rd_u64(r);
}

static void rd_views(struct imexd_rd *r, struct imexd_msg *m)
{
	struct imexd_peer_view *v;
	uint16_t i;

	m->u.heartbeat.n = rd_u16(r);
	if (r->err || !m->u.heartbeat.n)
		return;
	v = rd_array(r, m->u.heartbeat.n, IMEX_MEMBERS_MAX, 0, sizeof(*v),
		     "more peers than IMEX_MEMBERS_MAX");
	m->u.heartbeat.peers = v;
	if (!v)
		return;
	for (i = 0; i < m->u.heartbeat.n && !r->err; i++) {
		rd_str(r, STR_NAME, v[i].name, sizeof(v[i].name));
		v[i].state = rd_u8(r);
	}
}

static void rd_gens(struct imexd_rd *r, struct imexd_msg *m)
{
	struct imexd_peer_gen *g;
	uint16_t i;

	m->u.heartbeat.ngens = rd_u16(r);
	if (r->err || !m->u.heartbeat.ngens)
		return;
	g = rd_array(r, m->u.heartbeat.ngens, IMEX_DOMAINS_MAX, GEN_WIRE_LEN,
		     sizeof(*g), "more domains than IMEX_DOMAINS_MAX");
	m->u.heartbeat.gens = g;
	if (!g)
		return;
	for (i = 0; i < m->u.heartbeat.ngens; i++) {
		rd_bytes(r, g[i].uuid, sizeof(g[i].uuid));
		g[i].generation = rd_u64(r);
	}
}

static void rd_heartbeat(struct imexd_rd *r, struct imexd_msg *m)
{
	m->u.heartbeat.seq = rd_u32(r);
	rd_views(r, m);
	rd_gens(r, m);
}

/* u32 len, then len bytes (1..@max) into a new buffer at *@out. */
static void rd_blob(struct imexd_rd *r, uint32_t *len, uint8_t **out,
		    uint32_t max)
{
	*len = rd_u32(r);
	if (r->err)
		return;
	if (!*len) {
		rd_fail(r, -EBADMSG, "empty payload");
		return;
	}
	if (*len > max) {
		rd_fail(r, -E2BIG, max == IMEXD_RAFT_DATA_MAX ?
			"raft frame longer than IMEXD_RAFTWIRE_FRAME_MAX" :
			"command longer than IMEXD_RAFT_ENTRY_MAX");
		return;
	}
	if (*len > rd_left(r)) {
		rd_fail(r, -EBADMSG, "body shorter than its fields");
		return;
	}
	*out = malloc(*len);
	if (!*out) {
		rd_fail(r, -ENOMEM, "out of memory");
		return;
	}
	rd_bytes(r, *out, *len);
}

static void rd_ids(struct imexd_rd *r, struct imexd_msg *m)
{
	uint32_t i, n = rd_u32(r);

	if (r->err || !n)
		return;
	m->u.reply.ids = rd_array(r, n, IMEX_CHANNELS_MAX, 4,
				  sizeof(*m->u.reply.ids),
				  "more channel ids than IMEX_CHANNELS_MAX");
	if (!m->u.reply.ids)
		return;
	m->u.reply.nids = n;
	for (i = 0; i < n; i++)
		m->u.reply.ids[i] = rd_u32(r);
}

static void rd_reply(struct imexd_rd *r, struct imexd_msg *m)
{
	uint8_t has_def;

	m->u.reply.tag = rd_u64(r);
	m->u.reply.error = (int32_t)rd_u32(r);
	rd_str(r, STR_TEXT, m->u.reply.message, sizeof(m->u.reply.message));
	m->u.reply.index = rd_u64(r);
	has_def = rd_u8(r);
	if (r->err)
		return;
	if (has_def > 1) {
		rd_fail(r, -EBADMSG, "has_def is not 0 or 1");
		return;
	}
	m->u.reply.has_def = has_def;
	if (has_def)
		rd_def(r, &m->u.reply.def, m->domain_uuid);
	rd_ids(r, m);
}

static void rd_import_resp(struct imexd_rd *r, struct imexd_msg *m)
{
	m->u.import_resp.tag = rd_u64(r);
	m->u.import_resp.status = (int32_t)rd_u32(r);
	m->u.import_resp.desc_len = rd_u16(r);
	if (r->err)
		return;
	if (m->u.import_resp.desc_len > IMEX_DESC_MAX) {
		rd_fail(r, -E2BIG, "descriptor longer than IMEX_DESC_MAX");
		return;
	}
	rd_bytes(r, m->u.import_resp.desc, m->u.import_resp.desc_len);
}

static void rd_body(struct imexd_rd *r, struct imexd_msg *m)
{
	switch (m->type) {
	case IMEXD_MSG_HELLO:
	case IMEXD_MSG_HELLO_ACK:
		rd_hello(r, m);
		break;
	case IMEXD_MSG_HEARTBEAT:
		rd_heartbeat(r, m);
		break;
	case IMEXD_MSG_LEAVE:
		m->u.leave.reason = rd_u8(r);
		break;
	case IMEXD_MSG_IMPORT_REQ:
		m->u.import_req.tag = rd_u64(r);
		m->u.import_req.handle_id = rd_u64(r);
		m->u.import_req.channel_id = rd_u32(r);
		break;
	case IMEXD_MSG_IMPORT_RESP:
		rd_import_resp(r, m);
		break;
	case IMEXD_MSG_EXPORT_REVOKE:
		m->u.export_revoke.handle_id = rd_u64(r);
		break;
	case IMEXD_MSG_RAFT:
		rd_blob(r, &m->u.raft.len, &m->u.raft.data, IMEXD_RAFT_DATA_MAX);
		break;
	case IMEXD_MSG_FORWARD:
		m->u.forward.tag = rd_u64(r);
		rd_blob(r, &m->u.forward.len, &m->u.forward.cmd,
			IMEXD_RAFT_ENTRY_MAX);
		break;
	case IMEXD_MSG_REPLY:
		rd_reply(r, m);
		break;
	}
}

long imexd_frame_len(const uint8_t *buf, size_t len)
{
	static const uint8_t magic[4] = { 'I', 'M', 'E', 'X' };
	size_t i;

	if (!buf)
		return len ? -EBADMSG : 0;
	/* Refuse as early as the bytes allow: a stranger is dropped fast. */
	for (i = 0; i < len && i < sizeof(magic); i++)
		if (buf[i] != magic[i])
			return -EBADMSG;
	if (len > 4 && buf[4] != IMEXD_FRAME_VERSION)
		return -EBADMSG;
	if ((len > 6 && buf[6]) || (len > 7 && buf[7]))
		return -EBADMSG;
	if (len < 12)
		return 0;
	if (get_be(buf + 8, 4) > wire_body_max(buf[5]))
		return -EBADMSG;
	if (len < IMEXD_HEADER_LEN)
		return 0;
	return (long)(IMEXD_HEADER_LEN + get_be(buf + 8, 4));
}

static int rd_error(struct imexd_rd *r, int err, const char *why)
{
	rd_fail(r, err, why);
	return r->err;
}

static int rd_header(struct imexd_rd *r, struct imexd_msg *m)
{
	uint32_t body;

	if (r->len < IMEXD_HEADER_LEN)
		return rd_error(r, -EBADMSG, "truncated header");
	if (rd_u32(r) != IMEXD_MAGIC)
		return rd_error(r, -EBADMSG, "bad magic");
	if (rd_u8(r) != IMEXD_FRAME_VERSION)
		return rd_error(r, -EPROTO, "unsupported protocol version");
	m->type = rd_u8(r);
	if (rd_u16(r))
		return rd_error(r, -EBADMSG, "non-zero header flags");
	body = rd_u32(r);
	if (body > wire_body_max(m->type))
		return rd_error(r, -E2BIG, m->type == IMEXD_MSG_RAFT ?
				"body longer than IMEXD_RAFT_BODY_MAX" :
				"body longer than IMEXD_BODY_MAX");
	if (body != r->len - IMEXD_HEADER_LEN)
		return rd_error(r, -EBADMSG,
				"frame length differs from the header's");
	/* Types between HEARTBEAT and LEAVE were the two-phase protocol's. */
	if (m->type < IMEXD_MSG_HELLO || m->type > IMEXD_MSG_TYPE_MAX ||
	    (m->type > IMEXD_MSG_HEARTBEAT && m->type < IMEXD_MSG_LEAVE))
		return rd_error(r, -EPROTO, "unknown message type");
	rd_bytes(r, m->domain_uuid, sizeof(m->domain_uuid));
	rd_bytes(r, m->sender_uuid, sizeof(m->sender_uuid));
	m->sender_epoch = rd_u64(r);
	return r->err;
}

int imexd_msg_decode(const uint8_t *buf, size_t len, struct imexd_msg *msg,
		     const char **why)
{
	struct imexd_rd r = {
		.p = buf, .len = buf ? len : 0,
		.short_why = "body shorter than its fields",
	};
	struct imexd_msg m;
	int err;

	memset(&m, 0, sizeof(m));
	if (!rd_header(&r, &m)) {
		rd_body(&r, &m);
		if (!r.err && r.off != r.len)
			rd_fail(&r, -EBADMSG, "body longer than its fields");
	}
	err = r.err;
	if (!err)
		err = wire_check_msg(&m, &r.why);
	if (err) {
		imexd_msg_free(&m);
		if (why)
			*why = r.why;
		return err;
	}
	*msg = m;
	if (why)
		*why = NULL;
	return 0;
}
