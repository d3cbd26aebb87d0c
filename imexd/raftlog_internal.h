/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The raft log's internals (formats in raftlog.c), shared by raftlog*.c.
 * Not an interface.
 */
#ifndef IMEXD_RAFTLOG_INTERNAL_H
#define IMEXD_RAFTLOG_INTERNAL_H

#include <zlib.h>

#include "raftlog.h"
#include "errf.h"

#define VERSION		1u
#define META_VERSION	2u
#define META_LEN_V1	32u
#define META_LEN	40u
#define SNAP_HDR	56u
#define LOG_HDR		16u
#define FRAME_HDR	32u
#define ENTRY_HDR	16u
#define FRAME_MAGIC	0x46584d49u	/* "IMXF" */
/* Largest file read back: the log may hold many trailing entries. */
#define LOG_FILE_MAX	((size_t)1 << 40)
#define CONF_SERVERS_MAX 4096u

/* Byte arrays, not strings: no NUL in the first two. */
static const uint8_t meta_magic[8] = { 'I', 'M', 'X', 'R', 'M', 'E', 'T',
				       'A' };
static const uint8_t snap_magic[8] = { 'I', 'M', 'X', 'R', 'S', 'N', 'A',
				       'P' };
static const uint8_t log_magic[8] = { 'I', 'M', 'X', 'R', 'L', 'O', 'G', 0 };

struct imexd_raftlog {
	struct imexd_raftlog_io io;
	raft_term term;
	raft_id vote;
	uint64_t group;
	/* Entries start..start+n-1, each buffer malloc'd, batch NULL. */
	raft_index start;
	struct raft_entry *ents;
	size_t n, cap;
	/* Snapshot: metadata with a decoded configuration we own. */
	bool has_snap;
	struct raft_snapshot_metadata snap;
	struct raft_buffer snap_conf;	/* encoded, malloc'd */
	struct raft_buffer snap_data;	/* malloc'd */
	/* raft-log: bytes of valid content, whether the file exists. */
	uint64_t log_end;
	bool log_exists;
	bool broken;	/* a failed write could not be undone */
};

/* ---- helpers ------------------------------------------------------------- */

static inline void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint32_t crc(const void *p, size_t len)
{
	return (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), p, len);
}


#define DAMAGED "the raft state is damaged: move it aside and let this node rejoin its group"

/* raftlog.c */
int rl_conf_decode(const void *base, size_t len,
		   struct raft_configuration *conf);
void rl_free_entries(struct raft_entry *e, size_t n);
int rl_reserve(struct raft_entry **ents, size_t *cap, size_t want);
bool rl_entry_type_valid(int type);
int rl_log_rewrite(struct imexd_raftlog *l, raft_index from);
raft_index rl_last_index(const struct imexd_raftlog *l);
size_t rl_frame_size(const struct raft_entry *e, size_t n);
size_t rl_frame_encode(uint8_t *p, raft_index first,
		       const struct raft_entry *e, size_t n);
void rl_log_header(uint8_t h[LOG_HDR]);
int rl_raft_errno(int rv);

#endif /* IMEXD_RAFTLOG_INTERNAL_H */
