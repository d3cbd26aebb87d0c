/* SPDX-License-Identifier: GPL-2.0 */
/*
 * raftwire: libraft 0.22.1's struct raft_message on the wire, carried in one
 * imexd peer message (the peer protocol's frame names the sender; the raft
 * message itself does not).
 *
 * Encoding (all integers big-endian; "u8 flags" bits other than the named
 * ones are zero):
 *
 *   offset size
 *   0      1    IMEXD_RAFTWIRE_VERSION
 *   1      1    type (enum raft_message_type, 1..6)
 *   2      1    the message struct's version field: exactly what libraft
 *               0.22.1 sends for the type (IMEXD_RAFTWIRE_V_*)
 *   3      1    zero
 *   4      ...  body, per type:
 *
 *   REQUEST_VOTE          u64 term, u64 candidate_id, u64 last_log_index,
 *                         u64 last_log_term,
 *                         u8 flags (1: disrupt_leader, 2: pre_vote)
 *   REQUEST_VOTE_RESULT   u64 term, u8 flags (1: vote_granted, 2: pre_vote),
 *                         u16 features, u16 capacity
 *   APPEND_ENTRIES        u64 term, u64 prev_log_index, u64 prev_log_term,
 *                         u64 leader_commit, u32 n,
 *                         n x { u64 term, u8 type, u32 len },
 *                         then the n entries' data, one after the other
 *   APPEND_ENTRIES_RESULT u64 term, u64 rejected, u64 last_log_index,
 *                         u16 features, u16 capacity
 *   INSTALL_SNAPSHOT      u64 term, u64 last_index, u64 last_term,
 *                         u64 conf_index, u16 n,
 *                         n x { u64 id, u8 role, u8 len, len bytes address },
 *                         u32 data_len, data_len bytes
 *   TIMEOUT_NOW           u64 term, u64 last_log_index, u64 last_log_term
 *
 * What makes a message valid (the encoder refuses -EINVAL / -E2BIG, the
 * decoder -EBADMSG / -E2BIG, with the same checks):
 * - every term and index is at most IMEXD_RAFTWIRE_INDEX_MAX (2^63 - 1), so
 *   no index plus a count wraps, except AppendEntriesResult's last_log_index
 *   (any value: libraft 0.22.1 leaves it uninitialised in the reply to a
 *   stale term); every message term is >= 1;
 * - RequestVote: candidate_id != 0 and, when decoding, equal to the sender;
 *   last_log_term <= term;
 * - AppendEntries: prev_log_term == 0 exactly when prev_log_index == 0 (raft
 *   asserts it), prev_log_term <= term; n <= IMEXD_RAFTWIRE_ENTRIES_MAX;
 *   each entry's type is COMMAND, BARRIER or CHANGE, its term between
 *   max(prev_log_term, 1) and the message's term and not below the previous
 *   entry's, its data at most IMEXD_RAFTWIRE_ENTRY_MAX bytes, all data at
 *   most IMEXD_RAFTWIRE_APPEND_MAX; a CHANGE entry's data is exactly
 *   libraft's configuration encoding (raft_configuration_encode()) of a
 *   valid configuration (below) -- libraft decodes it without bounds checks;
 * - InstallSnapshot: 1 <= last_term <= term, last_index >= 1, conf_index <=
 *   last_index, a valid configuration, data at most
 *   IMEXD_RAFTWIRE_SNAPSHOT_MAX bytes (libraft 0.22.1 sends a snapshot in one
 *   message: this is the bound of the whole FSM snapshot);
 * - a valid configuration: 1..IMEXD_RAFT_SERVERS_MAX servers, ids non-zero
 *   and unique, role RAFT_STANDBY, RAFT_VOTER or RAFT_SPARE, addresses
 *   1..IMEXD_RAFTWIRE_ADDR_MAX bytes of printable ASCII without space, unique;
 * - features: only MESSAGE__FEATURE_CAPACITY (1), the one 0.22.1 knows.
 * A frame is consumed exactly; trailing bytes are refused.
 *
 * Ownership (libraft 0.22.1, src/recv*.c, src/replication.c):
 * - A decoded message is allocated with raft_malloc(): entries array, one
 *   data batch shared by all entries (entries[i].batch, each entry's data
 *   8-byte aligned in it, as libraft's own transport does), configuration
 *   (raft_configuration_close() frees it), snapshot data.
 * - After raft_step(RAFT_RECEIVE) returned 0, raft owns the AppendEntries
 *   batch (it frees it, or hands it out in update->entries: whoever persists
 *   update->entries then frees update->entries.batch[0].batch, as
 *   test/lib/cluster.c does) and the InstallSnapshot configuration and data
 *   (freed, or handed out in update->snapshot).  update->entries.batch
 *   points INTO the message's entries array: consume the update first, then
 *   call imexd_raftwire_release(), which frees only the entries array.
 * - After raft_step() failed, libraft 0.22.1 has freed the batch on some
 *   paths and not on others (out of memory in recvUpdateLeader()): release()
 *   is still the call (a leak beats a double free).
 * - libraft 0.22.1 leaks an InstallSnapshot received while it is already
 *   installing one (replicationInstallSnapshot() returns 0 and keeps
 *   nothing): the caller should not step such a message (raft->snapshot
 *   .installing) but imexd_raftwire_free() it.
 * - A message never handed to raft: imexd_raftwire_free() frees everything.
 * - Outgoing AppendEntries/InstallSnapshot from raft_step() carry no entries,
 *   data or configuration: the sender fills them from its log and snapshot
 *   (as test/lib/cluster.c does) before encoding.
 *
 * Out of memory: a failed allocation returns -ENOMEM and changes nothing
 * (no output, nothing to free); the daemon treats it as fatal for the
 * current event only.
 *
 * Nothing here keeps state between calls; nothing is logged.
 */
#ifndef IMEXD_RAFTWIRE_H
#define IMEXD_RAFTWIRE_H

#include <stddef.h>
#include <stdint.h>
#include <raft.h>

/* The struct layouts and versions below are libraft 0.22.1's. */
_Static_assert(RAFT_VERSION_NUMBER == 2201,
	       "raftwire encodes libraft 0.22.1's messages: review raft.h");

#define IMEXD_RAFTWIRE_VERSION		1
#define IMEXD_RAFTWIRE_HEADER_LEN	4

/* The version field of each message as libraft 0.22.1 sends it. */
#define IMEXD_RAFTWIRE_V_REQUEST_VOTE		2
#define IMEXD_RAFTWIRE_V_REQUEST_VOTE_RESULT	2
#define IMEXD_RAFTWIRE_V_APPEND_ENTRIES		0
#define IMEXD_RAFTWIRE_V_APPEND_ENTRIES_RESULT	2
#define IMEXD_RAFTWIRE_V_INSTALL_SNAPSHOT	0
#define IMEXD_RAFTWIRE_V_TIMEOUT_NOW		0
#define IMEXD_RAFTWIRE_FEATURES		1u	/* MESSAGE__FEATURE_CAPACITY */

/* Bounds (each refused above, with a test). */
#define IMEXD_RAFT_SERVERS_MAX		1024
#define IMEXD_RAFTWIRE_INDEX_MAX	0x7fffffffffffffffULL
#define IMEXD_RAFTWIRE_ADDR_MAX		255		/* bytes, no NUL */
#define IMEXD_RAFTWIRE_ENTRIES_MAX	256		/* per AppendEntries */
#define IMEXD_RAFTWIRE_ENTRY_MAX	(1u << 20)	/* data of one entry */
#define IMEXD_RAFTWIRE_APPEND_MAX	(4u << 20)	/* all entries' data */
#define IMEXD_RAFTWIRE_SNAPSHOT_MAX	(64u << 20)	/* snapshot data */
/*
 * No valid message encodes longer (checked at build time in raftwire.c):
 * the snapshot data plus at most 1024 servers x 265 bytes and the fixed
 * fields, or the entries' data plus 256 x 13 bytes of entry headers.
 */
#define IMEXD_RAFTWIRE_FRAME_MAX	(IMEXD_RAFTWIRE_SNAPSHOT_MAX + (1u << 20))

/*
 * Encode @msg (server_id and server_address are not encoded) into a newly
 * allocated buffer (*out, *len; free() it).  Returns 0, -EINVAL for a
 * message that is not valid (above), -E2BIG for one above a bound, -ENOMEM.
 */
int imexd_raftwire_encode(const struct raft_message *msg, uint8_t **out,
			  size_t *len);

/*
 * Decode exactly one encoded message of @len bytes, received from server
 * @from (the raft id the authenticated peer connection maps to) whose
 * address is @from_address (borrowed: stored in msg->server_address, not
 * copied; raft copies what it keeps, so it must outlive raft_step() only).
 * Returns 0 and fills @msg, or -EINVAL (@from is 0 or @from_address NULL),
 * -EBADMSG, -EPROTO (an unknown format version or message type), -E2BIG
 * (a count or length above the bounds), -ENOMEM; on error @msg is left
 * untouched and nothing is to be freed.  @why, if not NULL, gets a static
 * description of the first problem, for a log line (NULL on success).
 */
int imexd_raftwire_decode(const uint8_t *buf, size_t len, raft_id from,
			  const char *from_address, struct raft_message *msg,
			  const char **why);

/* Free everything a decoded message owns (one that raft never saw). */
void imexd_raftwire_free(struct raft_message *msg);

/*
 * After raft_step(RAFT_RECEIVE, msg) and after its update was consumed:
 * free what raft did not take (the AppendEntries entries array).
 */
void imexd_raftwire_release(struct raft_message *msg);

/*
 * How many of @entries[0..@n) fit, in order, in one AppendEntries
 * (IMEXD_RAFTWIRE_ENTRIES_MAX, IMEXD_RAFTWIRE_APPEND_MAX); 0 when the first
 * alone is too big.  A leader sends that many and leaves the rest to the
 * next AppendEntries.
 */
unsigned imexd_raftwire_entries_fit(const struct raft_entry *entries,
				    unsigned n);

/*
 * Is @len bytes at @buf libraft's encoding of a valid configuration (the
 * data of a RAFT_CHANGE entry)?  0, or -EBADMSG / -E2BIG / -ENOMEM with a
 * static reason in @why (if not NULL).  For entries read from elsewhere
 * (the log on disk) before libraft decodes them.
 */
int imexd_raftwire_conf_check(const void *buf, size_t len, const char **why);

#endif /* IMEXD_RAFTWIRE_H */
