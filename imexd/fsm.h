/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The replicated state machine of one NVLink domain: its node table (each
 * node's fabric identity) and its domain table (struct imexd_def).  Raft
 * orders the commands; every node applies the same commands in the same
 * order and gets the same table, byte for byte (imexd_fsm_snapshot()).
 * Pure: no I/O, clock, randomness or threads.
 *
 * Command encoding (a Raft log entry is exactly one encoded command; all
 * integers big-endian, "str" a u8 length then that many bytes, no NUL):
 *
 *   u8 version (IMEXD_CMD_VERSION), u8 type (enum imexd_cmd_type), then
 *   NODE_SET       str node, u8 node_uuid[16], u8 fabric_uuid[16],
 *                  u32 partition, u32 max_channels
 *   DOMAIN_CREATE  str name, u8 uuid[16], u16 nmembers,
 *                  nmembers x { str name, str addr },
 *                  u32 count, u32 nids, nids x u32 id,
 *                  u32 uid, u32 gid, u16 mode
 *   DOMAIN_DELETE  str name
 *   CHANNEL_ALLOC  str name, u32 count, u32 nids, nids x u32 id,
 *                  u32 uid, u32 gid, u16 mode
 *   CHANNEL_FREE   str name, u32 nids, nids x u32 id
 *   MEMBER_EVICT   str name, str member
 *   MEMBER_REPLACE str name, str member, str with   (type 7: added after
 *                  the others, same version; a daemon that predates it
 *                  refuses the entry as an unknown type, so every daemon
 *                  of the group must know it before one is asked)
 *
 * Rules the codec enforces (encode refuses what decode refuses, so every
 * encoding decodes and re-encodes to the same bytes): names by
 * imexd_name_valid(), addresses printable ASCII up to IMEXD_ADDR_MAX,
 * members unique and 1..IMEX_MEMBERS_MAX, channel ids strictly increasing
 * and below IMEX_CHANNELS_MAX, count and nids each at most
 * IMEX_CHANNEL_IDS_MAX and not both non-zero, mode at most 0777, a
 * non-zero domain and node UUID, max_channels 1..IMEX_CHANNELS_MAX.
 * Anything else, an unknown version or type, or a buffer not consumed
 * exactly, is refused.  The state machine applies the same rules again
 * (a command built in memory need not have been through the codec), plus
 * the rules that depend on the table.
 *
 * Snapshot encoding: u32 magic IMEXD_FSM_MAGIC, u8 version
 * (IMEXD_FSM_SNAP_VERSION), u32 nnodes, nnodes x { str name,
 * u8 uuid[16], u8 fabric_uuid[16], u32 partition, u32 max_channels,
 * u8 leaving (version 2 on; version 1, still read, has none) }
 * (sorted by name), u32 ndomains, ndomains x { str name, u8 uuid[16],
 * u64 generation, u8 fabric_uuid[16], u32 partition, u16 nmembers,
 * nmembers x { str name, str addr }, u32 nchannels, nchannels x
 * { u32 id, u32 uid, u32 gid, u16 mode } } (sorted by name).
 *
 * Ownership: struct imexd_fsm and struct imexd_cmd own what their pointers
 * point to (imexd_fsm_free(), imexd_cmd_free()); pointers the queries
 * return point into the fsm and stay valid until its next apply or
 * restore.  A result owns its definition and ids (imexd_fsm_result_free()).
 *
 * Out of memory: a failed allocation returns -ENOMEM and changes nothing
 * (the table, the result, the output buffer); the daemon treats it as
 * fatal for the current event only, and must apply the same entry again
 * before any later one.
 */
#ifndef IMEXD_FSM_H
#define IMEXD_FSM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define IMEXD_CMD_VERSION	1
#define IMEXD_FSM_MAGIC		0x494d4653u	/* "IMFS" */
#define IMEXD_FSM_SNAP_VERSION	2
#define IMEXD_FSM_NODES_MAX	1024		/* nodes in one NVLink domain */

enum imexd_cmd_type {
	IMEXD_CMD_NODE_SET = 1,
	IMEXD_CMD_DOMAIN_CREATE,
	IMEXD_CMD_DOMAIN_DELETE,
	IMEXD_CMD_CHANNEL_ALLOC,
	IMEXD_CMD_CHANNEL_FREE,
	IMEXD_CMD_MEMBER_EVICT,
	IMEXD_CMD_MEMBER_REPLACE,

	IMEXD_CMD_TYPE_MAX = IMEXD_CMD_MEMBER_REPLACE,

	/* Requests that change the raft configuration: they travel as
	 * commands (FORWARD).  A join is never logged; a leave is logged
	 * after its configuration entry committed, and drops the node's
	 * identity from the table (refused while a domain names it). */
	IMEXD_CMD_NODE_JOIN = 16,
	IMEXD_CMD_NODE_LEAVE,
};

/* A node's fabric identity, as it reported it (NODE_SET). */
struct imexd_fsm_node {
	char name[IMEX_NAME_MAX];
	uint8_t uuid[16];		/* non-zero */
	uint8_t fabric_uuid[16];	/* all-zero: no fabric identity yet */
	uint32_t partition;
	uint32_t max_channels;		/* 1..IMEX_CHANNELS_MAX */
	bool leaving;			/* table only: a leave is under way */
};

/*
 * Channels asked for: by @count (the lowest ids free on every member) or
 * by @ids (strictly increasing); at most one of count and nids non-zero.
 */
struct imexd_cmd_channels {
	uint32_t count;
	uint32_t nids;
	uint32_t *ids;			/* owned */
	uint32_t uid, gid;
	uint16_t mode;			/* at most 0777 */
};

/* One command: a tagged union.  Pointers owned: imexd_cmd_free(). */
struct imexd_cmd {
	uint8_t type;			/* enum imexd_cmd_type */
	union {
		struct imexd_fsm_node node_set;
		struct {
			char name[IMEX_NAME_MAX];
			uint8_t uuid[16];
			uint16_t nmembers;
			struct imexd_member *members;	/* owned */
			struct imexd_cmd_channels ch;
		} create;
		struct {
			char name[IMEX_NAME_MAX];
		} del;
		struct {
			char name[IMEX_NAME_MAX];
			struct imexd_cmd_channels ch;
		} alloc;
		struct {
			char name[IMEX_NAME_MAX];
			uint32_t nids;
			uint32_t *ids;			/* owned */
		} free;
		struct {
			char name[IMEX_NAME_MAX];
			char member[IMEX_NAME_MAX];
		} evict;
		/* @member leaves, @with takes its place and channels. */
		struct {
			char name[IMEX_NAME_MAX];
			char member[IMEX_NAME_MAX];
			char with[IMEX_NAME_MAX];
		} replace;
		/* NODE_JOIN (all), NODE_LEAVE (name only): addr "" when the
		 * node's address is its name; fabric identity as the node
		 * reported it in its HELLO (the node layer fills it in). */
		struct {
			char name[IMEX_NAME_MAX];
			char addr[IMEXD_ADDR_MAX + 1];
			uint8_t fabric_uuid[16];
			uint32_t partition;
		} node;
	} u;
};

/*
 * Encode @cmd into a newly allocated buffer (*out, *len; free() it).
 * Returns 0, -EINVAL (with a static reason in @why if not NULL) for a
 * command that would not decode, or -ENOMEM.
 */
int imexd_cmd_encode(const struct imexd_cmd *cmd, uint8_t **out, size_t *len,
		     const char **why);

/*
 * Decode exactly @len bytes into @cmd.  Returns 0, or -EPROTO (unknown
 * version or type), -E2BIG (a count above its bound), -EBADMSG (the rest),
 * -ENOMEM; on error @cmd holds nothing to free and @why (if not NULL) a
 * static reason.  Nothing is allocated before its count is checked against
 * its bound and the bytes left.
 */
int imexd_cmd_decode(const uint8_t *buf, size_t len, struct imexd_cmd *cmd,
		     const char **why);

/*
 * Could @cmd be encoded?  The codec's rules (above): 0, or -EINVAL /
 * -E2BIG with a static reason in @why (if not NULL).
 */
int imexd_cmd_check(const struct imexd_cmd *cmd, const char **why);

/* Free what @cmd owns (not @cmd itself); NULL is fine. */
void imexd_cmd_free(struct imexd_cmd *cmd);

/* "NODE_SET", "DOMAIN_CREATE", ...; "UNKNOWN" for anything else. */
const char *imexd_cmd_type_name(uint8_t type);

/* The state machine.  Opaque: use the functions below. */
struct imexd_fsm;

/* The outcome of one applied command. */
struct imexd_fsm_result {
	/*
	 * 0: applied.  Else a positive errno and nothing changed; @message
	 * names the object and the way out, for the caller.
	 */
	int error;
	char message[IMEXD_MESSAGE_MAX + 1];
	/*
	 * Domain commands that succeeded: the domain as it is after the
	 * change (owned); after DOMAIN_DELETE, as it was, with
	 * IMEXD_DEF_DELETED set and the generation of the delete.  Else
	 * empty (zeroed).
	 */
	struct imexd_def def;
	/*
	 * CREATE, ALLOC, FREE that succeeded: the channel ids granted or
	 * freed, increasing (owned).
	 */
	uint32_t nids;
	uint32_t *ids;
};

/* A new, empty state machine; NULL when out of memory. */
struct imexd_fsm *imexd_fsm_new(void);

/* Free @fsm and everything it owns; NULL is fine. */
void imexd_fsm_free(struct imexd_fsm *fsm);

/*
 * Apply the command of log entry @index (above every index applied or
 * restored before).  Returns 0 with the outcome in @res (which the caller
 * frees with imexd_fsm_result_free(), whatever the outcome), -ENOMEM with
 * nothing changed and @res empty, or -EINVAL for an @index not above the
 * last one (a caller bug; nothing changed).  A domain's generation is the
 * index of the entry that last changed it.  A refused command changes the
 * table in nothing, but counts as applied (imexd_fsm_last_index()).
 */
int imexd_fsm_apply(struct imexd_fsm *fsm, uint64_t index,
		    const struct imexd_cmd *cmd, struct imexd_fsm_result *res);

/* Free what @res owns and zero it; NULL is fine. */
void imexd_fsm_result_free(struct imexd_fsm_result *res);

/* The index last applied or restored (0 for a new fsm). */
uint64_t imexd_fsm_last_index(const struct imexd_fsm *fsm);

/* Domain by name or UUID; NULL when there is none. */
const struct imexd_def *imexd_fsm_domain(const struct imexd_fsm *fsm,
					 const char *name);
const struct imexd_def *imexd_fsm_domain_by_uuid(const struct imexd_fsm *fsm,
						 const uint8_t uuid[16]);

/* How many domains; the @i-th in name order (NULL past the end). */
size_t imexd_fsm_domain_count(const struct imexd_fsm *fsm);
const struct imexd_def *imexd_fsm_domain_at(const struct imexd_fsm *fsm,
					    size_t i);

/*
 * The next domain naming node @node as a member, in name order, starting
 * at position *@pos (start with 0; it is advanced); NULL when no more:
 *   for (pos = 0; (d = imexd_fsm_domain_of(fsm, node, &pos)); ) ...
 */
const struct imexd_def *imexd_fsm_domain_of(const struct imexd_fsm *fsm,
					    const char *node, size_t *pos);

/* The node table: by name (NULL if it never reported), count, @i-th. */
const struct imexd_fsm_node *imexd_fsm_node(const struct imexd_fsm *fsm,
					    const char *name);
size_t imexd_fsm_node_count(const struct imexd_fsm *fsm);
const struct imexd_fsm_node *imexd_fsm_node_at(const struct imexd_fsm *fsm,
					       size_t i);

/*
 * The whole table as one newly allocated blob (*out, *len; free() it):
 * equal tables give equal bytes.  0 or -ENOMEM.
 */
int imexd_fsm_snapshot(const struct imexd_fsm *fsm, uint8_t **out,
		       size_t *len);

/*
 * Replace the table by the one in @buf (a snapshot taken at log index
 * @index).  Everything is checked (the codec's rules, the order, every
 * member known with the domain's fabric identity, channels below each
 * member's max_channels and in one domain per node, domains per node,
 * generations not above @index); on any problem the fsm is left
 * unchanged.  Returns 0, -EBADMSG / -E2BIG / -EPROTO with a static reason
 * in @why (if not NULL), or -ENOMEM.
 */
int imexd_fsm_restore(struct imexd_fsm *fsm, uint64_t index,
		      const uint8_t *buf, size_t len, const char **why);

#endif /* IMEXD_FSM_H */
