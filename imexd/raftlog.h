/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Durable storage of one libraft server driven through raft_step(): the
 * current term and vote, the entry log, the latest snapshot.  Pure: no
 * clock, no sockets; every byte goes through a small I/O table, so the
 * daemon uses a directory and the simulator a memory disk it can crash
 * and fill (below).
 *
 * Files (names inside the state directory's raft/ subdirectory):
 *
 *   raft-meta      term + vote + group id, replaced atomically (temp,
 *                  fsync, rename, fsync dir) before
 *                  imexd_raftlog_set_term_vote() or _set_group() returns.
 *   raft-snapshot  snapshot metadata (index, term, configuration and its
 *                  index) + the FSM blob, replaced atomically.
 *   raft-log       a header, then frames appended and fdatasync'ed, one
 *                  per imexd_raftlog_append() call.  A frame holds a first
 *                  index and its entries; a frame at index i replaces every
 *                  entry from i on (a conflicting suffix is truncated by
 *                  the next frame itself, never by an in-place ftruncate
 *                  that a crash could half do).  Compaction rewrites the
 *                  file atomically with only the kept entries.
 *
 * Every frame and file carries a CRC32 (zlib).  On load, the last frame may
 * be torn (a crash mid-append: it never returned, so nothing claimed it):
 * it is dropped, the file cut back, and a note says so.  Any other damage
 * refuses the load with a message naming the file and byte offset.
 *
 * Errors are negative errno values.  A write error (ENOSPC, EIO, ...) is
 * always returned; after a failed call the in-memory view is what it was
 * before the call, and nothing the call wrote is claimed: a torn frame is cut
 * from the file before returning, and if even that fails the log refuses
 * every further write (-EIO) until it is reopened (reopening re-reads
 * what the disk really holds).
 *
 * Out-of-memory policy: a failed allocation returns -ENOMEM and changes
 * nothing (not in memory, not on disk); the daemon treats it as fatal for
 * the current event only.
 *
 * Not thread-safe: one owner calls everything.
 */
#ifndef IMEXD_RAFTLOG_H
#define IMEXD_RAFTLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <raft.h>

/* Largest entry payload accepted (append refuses larger: -EFBIG). */
#define IMEXD_RAFT_ENTRY_MAX		(1u << 20)
/* Most entries in one append call (-E2BIG beyond). */
#define IMEXD_RAFTLOG_BATCH_MAX		1024u
/* Largest snapshot FSM blob (-EFBIG beyond). */
#define IMEXD_RAFTLOG_SNAPSHOT_MAX	(256u << 20)
/* Largest encoded configuration in a snapshot (-EFBIG beyond). */
#define IMEXD_RAFTLOG_CONF_MAX		(1u << 20)
/* Room for a message or a note (file name + offset + what to do). */
#define IMEXD_RAFTLOG_MSG_MAX		512

#define IMEXD_RAFTLOG_META	"raft-meta"
#define IMEXD_RAFTLOG_SNAPSHOT	"raft-snapshot"
#define IMEXD_RAFTLOG_LOG	"raft-log"

/*
 * The I/O the log needs, by file name (one of the three above).  Each
 * returns 0 or -errno.  raftlog never calls two at once.
 *
 * read:     whole file, at most @max bytes (-EFBIG if larger), into a
 *           malloc'd buffer the caller frees; -ENOENT if absent.
 * replace:  atomically and durably replace (or create) the file.
 * write:    write @len bytes at @off (creating the file), not durable yet.
 * truncate: cut the file to @len bytes, not durable yet.
 * sync:     make the file's data and size durable (fdatasync).
 * close:    release @ctx (imexd_raftlog_close() calls it); may be NULL.
 * where:    text naming the storage in messages (a directory path).
 */
struct imexd_raftlog_io {
	int (*read)(void *ctx, const char *name, size_t max, uint8_t **buf,
		    size_t *len);
	int (*replace)(void *ctx, const char *name, const void *data,
		       size_t len);
	int (*write)(void *ctx, const char *name, uint64_t off,
		     const void *data, size_t len);
	int (*truncate)(void *ctx, const char *name, uint64_t len);
	int (*sync)(void *ctx, const char *name);
	void (*close)(void *ctx);
	void *ctx;
	const char *where;
};

/*
 * The directory backend: @dir is created (0700) if missing and must be
 * owned by this user; stale temp files of a dead writer are removed.
 * Fills @io (its close() frees what this allocates).  0 or -errno with a
 * message naming @dir in @err.
 */
int imexd_raftlog_dir_io(struct imexd_raftlog_io *io, const char *dir,
			 char *err, size_t errlen);

/*
 * The memory backend, for the simulator and tests.  A memory disk outlives
 * the logs opened on it (its io's close() does nothing): to simulate a
 * node's crash, close the log (or just drop it: imexd_raftlog_close()),
 * call imexd_raftlog_mem_crash(), and open a new log on the same disk.
 *
 * Each file has a durable content (what replace() and sync() made
 * durable) and a current one (what reads see).  A crash keeps the
 * durable content plus, when @keep > 0, up to @keep bytes of the unsynced
 * tail of the current content (a torn write: the simulator passes a
 * seeded random value to exercise torn frames; 0 loses all unsynced data).
 *
 * imexd_raftlog_mem_set_limit() caps the sum of current file sizes:
 * a write that would pass it writes what fits and returns -ENOSPC, a
 * replace that would pass it writes nothing and returns -ENOSPC (a full
 * disk); 0 means no limit.  imexd_raftlog_mem_fail_next() makes the next
 * @count write/truncate/sync/replace calls fail with @err (e.g. -EIO)
 * before doing anything.
 *
 * imexd_raftlog_mem_new() returns NULL on out of memory.
 */
struct imexd_raftlog_mem;

struct imexd_raftlog_mem *imexd_raftlog_mem_new(void);
void imexd_raftlog_mem_free(struct imexd_raftlog_mem *mem);
void imexd_raftlog_mem_io(struct imexd_raftlog_mem *mem,
			  struct imexd_raftlog_io *io);
void imexd_raftlog_mem_crash(struct imexd_raftlog_mem *mem, size_t keep);
void imexd_raftlog_mem_set_limit(struct imexd_raftlog_mem *mem, size_t bytes);
void imexd_raftlog_mem_fail_next(struct imexd_raftlog_mem *mem, int err,
				 unsigned count);
/* Bytes now used (current content of all files). */
size_t imexd_raftlog_mem_used(const struct imexd_raftlog_mem *mem);

struct imexd_raftlog;

/*
 * Load what @io holds (all absent: a fresh server, term 0).  The log takes
 * @io (copied; its close() runs at imexd_raftlog_close(), and also here on
 * failure).  A torn last frame is dropped and cut from the file (then
 * @note, if given, says which file, offset and how many bytes; otherwise
 * @note is ""), and a log left inconsistent by a crash between storing a
 * snapshot and compacting is rewritten.  Damage anywhere else, or state
 * that libraft would reject (entries without a term, a gap between the
 * snapshot and the log, a configuration entry that does not decode), fails
 * with -EBADMSG and a message naming the file and offset in @err.
 */
int imexd_raftlog_open(struct imexd_raftlog **log,
		       const struct imexd_raftlog_io *io, char *note,
		       size_t notelen, char *err, size_t errlen);
/* Free everything and close the io; NULL is a no-op. */
void imexd_raftlog_close(struct imexd_raftlog *log);

/* ---- what is stored (views, valid until the next modifying call) --------- */

/* The stored current term (0 for a fresh server) and vote (0: none). */
raft_term imexd_raftlog_term(const struct imexd_raftlog *log);
raft_id imexd_raftlog_vote(const struct imexd_raftlog *log);
/* The stored group id (consensus.h), 0: none stored yet.  It outlives
 * the entries a snapshot compacts (entry 1 among them). */
uint64_t imexd_raftlog_group(const struct imexd_raftlog *log);
/* Index of the first entry held (snapshot index + 1 - trailing kept). */
raft_index imexd_raftlog_start_index(const struct imexd_raftlog *log);
/* Index of the last entry held, or of the snapshot if there is none; 0 for
 * an empty server. */
raft_index imexd_raftlog_last_index(const struct imexd_raftlog *log);
/* Term of the entry at @index (the snapshot's term at its index), 0 if
 * unknown. */
raft_term imexd_raftlog_term_of(const struct imexd_raftlog *log,
				raft_index index);
/* The entry at @index, or NULL outside [start, last].  Its batch is NULL
 * and its buffer belongs to the log: copy what must outlive the view. */
const struct raft_entry *imexd_raftlog_entry(const struct imexd_raftlog *log,
					     raft_index index);
/* The snapshot metadata, or NULL if none; @data (if given) is set to the
 * FSM blob (the log's memory). */
const struct raft_snapshot_metadata *
imexd_raftlog_snapshot(const struct imexd_raftlog *log,
		       struct raft_buffer *data);

/* ---- writes (durable when they return 0) --------------------------------- */

/*
 * Persist term and vote (RAFT_UPDATE_CURRENT_TERM / _VOTED_FOR): durable
 * before it returns, so the caller may send what depends on it.  The term
 * never goes back (-EINVAL).
 */
int imexd_raftlog_set_term_vote(struct imexd_raftlog *log, raft_term term,
				raft_id vote);

/*
 * Persist the group id (not 0), durable before it returns.  Set once:
 * a different id than the one stored is refused (-EINVAL), the same one
 * is a no-op.
 */
int imexd_raftlog_set_group(struct imexd_raftlog *log, uint64_t group);

/*
 * Persist @n entries as indexes @index.. (RAFT_UPDATE_ENTRIES), first
 * dropping every entry at @index and after.  @index must lie in
 * [start index, last index + 1] and above the snapshot index; terms must
 * be non-zero and not decrease along the log; types are RAFT_COMMAND,
 * RAFT_BARRIER or RAFT_CHANGE (a RAFT_CHANGE must decode as a
 * configuration); else -EINVAL.  An entry over IMEXD_RAFT_ENTRY_MAX bytes
 * gives -EFBIG, more than IMEXD_RAFTLOG_BATCH_MAX entries -E2BIG.  @n may be
 * 0 (truncation only).  The entries are copied and no pointer into them
 * is kept: the caller keeps ownership of @entries and their batches (and
 * frees them as raft_step()'s contract says).  Durable on return 0; on
 * error nothing changed.  The log grows by each call's frame until the
 * next snapshot compacts it (replaced entries included).
 */
int imexd_raftlog_append(struct imexd_raftlog *log, raft_index index,
			 const struct raft_entry *entries, unsigned n);

/*
 * Persist a snapshot this server took (before stepping RAFT_SNAPSHOT):
 * @meta->index must be held in the log with term @meta->term (-EINVAL);
 * then entries up to @meta->index - @trailing are compacted away, as
 * libraft does with the same trailing count.  @meta and @data are copied.
 * The snapshot is stored first; if compacting then fails, the error is
 * returned, the snapshot is stored and loads, and the log keeps all its
 * entries (consistent; the next snapshot compacts).
 */
int imexd_raftlog_snapshot_take(struct imexd_raftlog *log,
				const struct raft_snapshot_metadata *meta,
				const void *data, size_t len,
				unsigned trailing);

/*
 * Persist a snapshot installed from the leader (RAFT_UPDATE_SNAPSHOT with
 * offset 0 and last set: one chunk): every entry is dropped, the log
 * restarts at @meta->index + 1 (what libraft assumes).  @meta->index must be
 * above the current snapshot's (-EINVAL).  Same failure rule as take; a
 * crash between the two steps is repaired on load.
 */
int imexd_raftlog_snapshot_install(struct imexd_raftlog *log,
				   const struct raft_snapshot_metadata *meta,
				   const void *data, size_t len);

/* ---- RAFT_START ---------------------------------------------------------- */

/*
 * Fill @ev as a RAFT_START event (type and start fields; time and the rest
 * are the caller's) with copies of what is stored, allocated with
 * raft_malloc() the way raft_step() expects: the snapshot metadata (whose
 * configuration raft_step() takes over), the entries array and one batch
 * holding their data.  -ENOMEM leaves @ev untouched.
 *
 * After raft_step(), call imexd_raftlog_start_done(@ev, rv) with its return
 * value.  On success it frees the entries (raft_step() in this version
 * keeps only their terms) and the metadata struct.  On failure raft_step()
 * may already have freed the entries (it does when restoring fails), so
 * they are left alone (a bounded leak on a path the daemon treats as
 * fatal) and only the metadata struct is freed.
 */
int imexd_raftlog_start(const struct imexd_raftlog *log,
			struct raft_event *ev);
void imexd_raftlog_start_done(struct raft_event *ev, int rv);

#endif /* IMEXD_RAFTLOG_H */
