/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The imexd peer protocol on the wire: framed, versioned binary messages.
 *
 * Frame (all integers big-endian):
 *
 *   offset size
 *   0      4    magic 0x494d4558 ("IMEX")
 *   4      1    framing version (IMEXD_FRAME_VERSION)
 *   5      1    type (enum imexd_msg_type)
 *   6      2    flags, zero
 *   8      4    body length in bytes, at most IMEXD_BODY_MAX (RAFT: at
 *               most IMEXD_RAFT_BODY_MAX)
 *   12     16   domain UUID (all-zero for node-level messages)
 *   28     16   sender node UUID
 *   44     8    sender instance epoch (random, chosen at every daemon start)
 *   52     ...  body, laid out per type (below)
 *
 * Body fields in order; "str" is a u8 length then that many bytes (no NUL),
 * "names" must satisfy the name rule of the uAPI, "addr" is printable ASCII;
 * "def" is a domain definition:
 *   str name, u64 generation, u8 flags (IMEXD_DEF_DELETED: a tombstone),
 *   u8 fabric_uuid[16], u32 partition,
 *   u16 nmembers, nmembers × { str name, str addr },
 *   u32 nchannels, nchannels × { u32 id, u32 uid, u32 gid, u16 mode }
 *   (members unique, channel ids strictly increasing).
 *
 *   HELLO, HELLO_ACK   u16 proto_min, u16 proto_max, str node_name,
 *                      u32 max_channels, u8 fabric_uuid[16], u32 partition,
 *                      u64 group (the sender's Raft group id, 0: none yet;
 *                      protocol 3: absent in an older peer's HELLO, which
 *                      decodes with group 0)
 *   HEARTBEAT          u32 seq, u16 n, n × { str peer_name, u8 state }
 *                      (the sender's view of its peers: enum imex_member_state),
 *                      u16 ngens, ngens × { u8 uuid[16], u64 generation }
 *                      (the domains the sender's kernel holds; protocol 2)
 *   LEAVE              u8 reason (IMEXD_LEAVE_*)
 *   IMPORT_REQ         u64 tag (the importer's import id), u64 handle_id,
 *                      u32 channel_id (the importer's channel; its domain
 *                      is the header's)
 *   IMPORT_RESP        u64 tag, i32 status (0 or a positive errno),
 *                      u16 desc_len, desc_len bytes (1..IMEX_DESC_MAX when
 *                      status is 0, else none)
 *   EXPORT_REVOKE      u64 handle_id (an export of the sender that ended;
 *                      its domain is the header's)
 *   RAFT               u32 len, len bytes (a raftwire frame, raftwire.h;
 *                      1..IMEXD_RAFT_DATA_MAX)
 *   FORWARD            u64 tag, u32 len, len bytes (an encoded fsm command
 *                      for the leader; 1..IMEXD_RAFT_ENTRY_MAX, raftlog.h,
 *                      and the body within IMEXD_BODY_MAX)
 *   REPLY              u64 tag (the FORWARD's), i32 error (0 or a positive
 *                      errno), str message, u64 index (the command's log
 *                      index), u8 has_def (0 or 1), then a def when has_def
 *                      (domain UUID in the header), u32 nids, nids × u32 id
 *                      (the channels granted or freed: strictly increasing,
 *                      below IMEX_CHANNELS_MAX)
 *
 * IMPORT_REQ, IMPORT_RESP and EXPORT_REVOKE need a non-zero domain UUID.
 * The def of REPLY has no UUID of its own on the wire: decoding sets
 * def.uuid from the header, and encoding refuses a def.uuid that differs
 * from domain_uuid (or is all-zero).  "addr" may be empty (the kernel does
 * not require one); a REPLY message is printable ASCII.  Errors (REPLY,
 * IMPORT_RESP) are 0 or a positive errno up to 4095; HELLO needs
 * proto_min <= proto_max and max_channels <= IMEX_CHANNELS_MAX; HEARTBEAT
 * peer names are unique, its gens at most IMEX_DOMAINS_MAX with non-zero,
 * unique UUIDs; def flags other than IMEXD_DEF_DELETED are refused.  A
 * REPLY without a def decodes with a zeroed def (whatever def the encoder
 * was given is not sent).
 *
 * The version byte is the framing version, IMEXD_FRAME_VERSION (1), which
 * stays as it is when the protocol changes: every frame, HELLO/HELLO_ACK
 * included, is framed as version 1 so that an older peer can read a newer
 * one's proto range and report VERSION_MISMATCH.  The protocol version
 * (IMEXD_PROTO_VERSION) travels in HELLO: 2 added RAFT, FORWARD, REPLY and
 * the HEARTBEAT gens, which a version 1 peer cannot decode, and dropped the
 * two-phase messages (types 4 to 13), which now decode as unknown types.
 * 3 added the HELLO's group: a HELLO without it still decodes, so an older
 * peer's range is read and reported (an older peer cannot decode ours).
 * 4 added the log command MEMBER_REPLACE (fsm.h), which a version 3
 * daemon cannot apply: in one group with it, it would skip the entry and
 * its table would disagree with the others'; nothing else changed.
 *
 * Only RAFT may carry a body above IMEXD_BODY_MAX (a snapshot); the
 * transport accepts one only on a connection bound to a peer (net.h).
 *
 * A decoder refuses, changing nothing: a short or long frame, a bad magic,
 * an unknown version or type, non-zero flags, a body whose fields do not
 * consume it exactly, out-of-range enums, bad names, duplicate members,
 * unsorted or out-of-range channels, counts above the bounds below.
 */
#ifndef IMEXD_WIRE_H
#define IMEXD_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/imex.h>

#define IMEXD_MAGIC		0x494d4558u
#define IMEXD_FRAME_VERSION	1
#define IMEXD_PROTO_VERSION	4
/*
 * Member states a HEARTBEAT view carries: those protocol 3 started with.
 * Later states (IMEX_MEMBER_REFUSED) travel as DISCONNECTED, so a peer
 * still on protocol 3 keeps accepting the heartbeats.
 */
#define IMEXD_WIRE_MEMBER_STATE_MAX	IMEX_MEMBER_VERSION_MISMATCH
#define IMEXD_HEADER_LEN	52
#define IMEXD_BODY_MAX		(1u << 20)
/* IMEXD_RAFTWIRE_FRAME_MAX (raftwire.h; checked at build time in wire.c). */
#define IMEXD_RAFT_DATA_MAX	((64u << 20) + (1u << 20))
#define IMEXD_RAFT_BODY_MAX	(IMEXD_RAFT_DATA_MAX + 4)
#define IMEXD_ADDR_MAX		255
#define IMEXD_MESSAGE_MAX	255
#define IMEXD_DEFAULT_PORT	50100

enum imexd_msg_type {
	IMEXD_MSG_HELLO = 1,
	IMEXD_MSG_HELLO_ACK,
	IMEXD_MSG_HEARTBEAT,
	/* 4..13 were the two-phase protocol's: refused as unknown types. */
	IMEXD_MSG_LEAVE = 14,
	IMEXD_MSG_IMPORT_REQ,
	IMEXD_MSG_IMPORT_RESP,
	IMEXD_MSG_EXPORT_REVOKE,
	IMEXD_MSG_RAFT,
	IMEXD_MSG_FORWARD,
	IMEXD_MSG_REPLY,

	IMEXD_MSG_TYPE_MAX = IMEXD_MSG_REPLY
};

enum { IMEXD_LEAVE_SHUTDOWN = 1 };
#define IMEXD_DEF_DELETED	0x01

struct imexd_member {
	char name[IMEX_NAME_MAX];
	char addr[IMEXD_ADDR_MAX + 1];
};

struct imexd_channel {
	uint32_t id;
	uint32_t uid;
	uint32_t gid;
	uint16_t mode;
};

/* A domain definition, as agreed by all its members. */
struct imexd_def {
	char name[IMEX_NAME_MAX];
	uint8_t uuid[16];
	uint64_t generation;		/* bumped by every committed change */
	uint8_t flags;			/* IMEXD_DEF_* */
	uint8_t fabric_uuid[16];
	uint32_t partition;
	uint16_t nmembers;
	struct imexd_member *members;	/* owned: imexd_def_free() */
	uint32_t nchannels;
	struct imexd_channel *channels;	/* owned, sorted by id */
};

struct imexd_peer_view {
	char name[IMEX_NAME_MAX];
	uint8_t state;			/* enum imex_member_state */
};

/* A domain the sender's kernel holds, at this generation. */
struct imexd_peer_gen {
	uint8_t uuid[16];
	uint64_t generation;
};

/* A decoded message.  Pointers are owned by it: imexd_msg_free(). */
struct imexd_msg {
	uint8_t type;			/* enum imexd_msg_type */
	uint8_t domain_uuid[16];
	uint8_t sender_uuid[16];
	uint64_t sender_epoch;
	union {
		struct {
			uint16_t proto_min, proto_max;
			char node_name[IMEX_NAME_MAX];
			uint32_t max_channels;
			uint8_t fabric_uuid[16];
			uint32_t partition;
			uint64_t group;		/* Raft group id, 0: none */
		} hello;			/* HELLO, HELLO_ACK */
		struct {
			uint32_t seq;
			uint16_t n;
			struct imexd_peer_view *peers;
			uint16_t ngens;
			struct imexd_peer_gen *gens;
		} heartbeat;
		struct {
			uint8_t reason;
		} leave;
		struct {
			uint64_t tag;
			uint64_t handle_id;
			uint32_t channel_id;
		} import_req;
		struct {
			uint64_t tag;
			int32_t status;
			uint16_t desc_len;
			uint8_t desc[IMEX_DESC_MAX];
		} import_resp;
		struct {
			uint64_t handle_id;
		} export_revoke;
		struct {
			uint32_t len;
			uint8_t *data;	/* a raftwire frame */
		} raft;
		struct {
			uint64_t tag;
			uint32_t len;
			uint8_t *cmd;	/* an encoded fsm command */
		} forward;
		struct {
			uint64_t tag;
			int32_t error;
			char message[IMEXD_MESSAGE_MAX + 1];
			uint64_t index;
			bool has_def;
			struct imexd_def def;
			uint32_t nids;	/* channels granted or freed */
			uint32_t *ids;
		} reply;
	} u;
};

/*
 * Encode @msg into a newly allocated frame (*out, *len; free() it).
 * Returns 0, -EINVAL for a message that would not decode, -ENOMEM.
 */
int imexd_msg_encode(const struct imexd_msg *msg, uint8_t **out, size_t *len);

/*
 * How many bytes the frame starting at @buf needs in total, once at least
 * IMEXD_HEADER_LEN bytes are there: > 0 the frame length, -EBADMSG for a
 * header that can never be valid (magic, version, flags, a length above
 * IMEXD_BODY_MAX, or IMEXD_RAFT_BODY_MAX for a RAFT frame), so the
 * connection can be dropped before the body arrives.  With fewer than
 * IMEXD_HEADER_LEN bytes: 0 (read more), or already -EBADMSG when the bytes
 * that are there are wrong.
 */
long imexd_frame_len(const uint8_t *buf, size_t len);

/*
 * Decode exactly one frame of @len bytes.  Returns 0 and fills @msg,
 * or -EBADMSG / -EPROTO / -E2BIG / -ENOMEM, with @msg untouched-free
 * (nothing to free).  @why, if not NULL, gets a static description of the
 * first problem, for a log line.  -EPROTO: an unknown version or type (a
 * newer peer); -E2BIG: a count or length above the bounds; -EBADMSG: the
 * rest.
 */
int imexd_msg_decode(const uint8_t *buf, size_t len, struct imexd_msg *msg,
		     const char **why);

void imexd_msg_free(struct imexd_msg *msg);
void imexd_def_free(struct imexd_def *def);
int imexd_def_copy(struct imexd_def *dst, const struct imexd_def *src);
/*
 * *@dst (*@ndst defs) becomes a deep copy of the @n defs at @src (NULL
 * when @n is 0), the defs it held freed.  -ENOMEM: *@dst stays as it was.
 */
int imexd_defs_replace(struct imexd_def **dst, size_t *ndst,
		       const struct imexd_def *src, size_t n);
/* Does @def hold channel @id?  Its channels are sorted by id. */
bool imexd_def_has_channel(const struct imexd_def *def, uint32_t id);
/* Does @def name @node among its members? */
bool imexd_def_has_member(const struct imexd_def *def, const char *node);
/* Same content (generation included)? */
int imexd_def_equal(const struct imexd_def *a, const struct imexd_def *b);
const char *imexd_msg_type_name(uint8_t type);

/* The uAPI name rule: [A-Za-z0-9][A-Za-z0-9_.-]*, shorter than IMEX_NAME_MAX. */
bool imexd_name_valid(const char *name);

/*
 * Could @def go on the wire (and into the store)?  The checks the decoder
 * makes on a def, the UUID included (non-zero).  Returns 0, or -EINVAL /
 * -E2BIG with a static reason in @why (if not NULL).
 */
int imexd_def_check(const struct imexd_def *def, const char **why);

#endif /* IMEXD_WIRE_H */
