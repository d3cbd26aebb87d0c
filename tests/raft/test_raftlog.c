// SPDX-License-Identifier: GPL-2.0
/*
 * The raft log (imexd/raftlog.h): what is written loads back exactly, on a
 * real directory and on the memory disk; torn tails are dropped, damage
 * elsewhere refuses to load; every write error is returned and claims
 * nothing; a power cut at any I/O call of any operation loads either the
 * old or the new state; the loaded state starts a real libraft server.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "raftlog.h"

/* ---- fixtures ------------------------------------------------------------ */

/* A test's disk: a temp directory or a memory disk, and an I/O hook. */
struct hook {
	struct imexd_raftlog_io inner;
	int calls;	/* replace/write/truncate/sync calls so far */
	int fail_at;	/* that call fails (-1: none) ... */
	int fail_err;	/* ... with this */
	bool cut;	/* ... after doing its I/O, and every later call fails */
	bool dead;
	bool fail_undo;	/* truncate and sync fail too */
};

struct disk {
	char dir[256];
	struct imexd_raftlog_mem *mem;
	struct hook hook;
	char err[IMEXD_RAFTLOG_MSG_MAX];
	char note[IMEXD_RAFTLOG_MSG_MAX];
};

static int hook_fault(struct hook *h, bool *after)
{
	int n = h->calls++;

	*after = false;
	if (h->dead)
		return -EIO;
	if (n != h->fail_at)
		return 0;
	if (h->cut) {
		*after = true;
		h->dead = true;
		return -EIO;
	}
	return h->fail_err;
}

static int hook_read(void *ctx, const char *name, size_t max, uint8_t **buf,
		     size_t *len)
{
	struct hook *h = ctx;

	return h->inner.read(h->inner.ctx, name, max, buf, len);
}

static int hook_replace(void *ctx, const char *name, const void *data,
			size_t len)
{
	struct hook *h = ctx;
	bool after;
	int ret = hook_fault(h, &after);

	if (ret && !after)
		return ret;
	if (after)
		h->inner.replace(h->inner.ctx, name, data, len);
	return ret ? ret : h->inner.replace(h->inner.ctx, name, data, len);
}

static int hook_write(void *ctx, const char *name, uint64_t off,
		      const void *data, size_t len)
{
	struct hook *h = ctx;
	bool after;
	int ret = hook_fault(h, &after);

	if (ret && !after) {
		/* A full disk takes part of the write first. */
		h->inner.write(h->inner.ctx, name, off, data, len / 2);
		return ret;
	}
	if (after)
		h->inner.write(h->inner.ctx, name, off, data, len);
	return ret ? ret : h->inner.write(h->inner.ctx, name, off, data, len);
}

static int hook_truncate(void *ctx, const char *name, uint64_t len)
{
	struct hook *h = ctx;
	bool after;
	int ret = hook_fault(h, &after);

	if (h->fail_undo)
		return -EIO;
	if (ret && !after)
		return ret;
	if (after)
		h->inner.truncate(h->inner.ctx, name, len);
	return ret ? ret : h->inner.truncate(h->inner.ctx, name, len);
}

static int hook_sync(void *ctx, const char *name)
{
	struct hook *h = ctx;
	bool after;
	int ret = hook_fault(h, &after);

	if (h->fail_undo && h->calls > h->fail_at + 1)
		return -EIO;
	if (ret && !after)
		return ret;
	if (after)
		h->inner.sync(h->inner.ctx, name);
	return ret ? ret : h->inner.sync(h->inner.ctx, name);
}

static void hook_close(void *ctx)
{
	struct hook *h = ctx;

	if (h->inner.close)
		h->inner.close(h->inner.ctx);
}

static void hook_reset(struct hook *h)
{
	h->calls = 0;
	h->fail_at = -1;
	h->fail_err = 0;
	h->cut = false;
	h->dead = false;
	h->fail_undo = false;
}

static void disk_init(struct disk *d, bool mem)
{
	memset(d, 0, sizeof(*d));
	hook_reset(&d->hook);
	if (mem) {
		d->mem = imexd_raftlog_mem_new();
		assert_non_null(d->mem);
		return;
	}
	snprintf(d->dir, sizeof(d->dir), "%s/raftlog.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(d->dir));
}

static void disk_fini(struct disk *d)
{
	DIR *dd;
	struct dirent *de;
	char p[512];

	if (d->mem) {
		imexd_raftlog_mem_free(d->mem);
		return;
	}
	dd = opendir(d->dir);
	assert_non_null(dd);
	while ((de = readdir(dd))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] ||
		    (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		snprintf(p, sizeof(p), "%s/%s", d->dir, de->d_name);
		unlink(p);
	}
	closedir(dd);
	rmdir(d->dir);
}

/* Open the log on @d through its hook; -errno as the open returns. */
static int disk_try_open(struct disk *d, struct imexd_raftlog **log)
{
	struct imexd_raftlog_io io;
	int ret;

	if (d->mem) {
		imexd_raftlog_mem_io(d->mem, &d->hook.inner);
	} else {
		ret = imexd_raftlog_dir_io(&d->hook.inner, d->dir, d->err,
					   sizeof(d->err));
		assert_int_equal(ret, 0);
	}
	io = (struct imexd_raftlog_io){
		.read = hook_read, .replace = hook_replace,
		.write = hook_write, .truncate = hook_truncate,
		.sync = hook_sync, .close = hook_close, .ctx = &d->hook,
		.where = d->hook.inner.where,
	};
	d->err[0] = '\0';
	return imexd_raftlog_open(log, &io, d->note, sizeof(d->note), d->err,
				  sizeof(d->err));
}

static struct imexd_raftlog *disk_open(struct disk *d)
{
	struct imexd_raftlog *log = NULL;
	int ret = disk_try_open(d, &log);

	if (ret)
		fail_msg("open: %d: %s", ret, d->err);
	return log;
}

static struct imexd_raftlog *reopen(struct disk *d, struct imexd_raftlog *log)
{
	imexd_raftlog_close(log);
	hook_reset(&d->hook);
	return disk_open(d);
}

static void path_of(const struct disk *d, const char *name, char *p, size_t n)
{
	snprintf(p, n, "%s/%s", d->dir, name);
}

static off_t file_size(const struct disk *d, const char *name)
{
	struct stat st;
	char p[512];

	path_of(d, name, p, sizeof(p));
	assert_int_equal(stat(p, &st), 0);
	return st.st_size;
}

static void file_flip(const struct disk *d, const char *name, off_t off)
{
	char p[512];
	uint8_t c;
	int fd;

	path_of(d, name, p, sizeof(p));
	fd = open(p, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &c, 1, off), 1);
	c ^= 0x40;
	assert_int_equal(pwrite(fd, &c, 1, off), 1);
	close(fd);
}

static void file_cut(const struct disk *d, const char *name, off_t len)
{
	char p[512];

	path_of(d, name, p, sizeof(p));
	assert_int_equal(truncate(p, len), 0);
}

/* ---- entries ------------------------------------------------------------- */

/* The configuration entry's payload: servers 1..@n, voters. */
static struct raft_buffer conf_buf(unsigned n)
{
	struct raft_configuration c;
	struct raft_buffer b;
	char addr[16];

	raft_configuration_init(&c);
	for (unsigned i = 1; i <= n; i++) {
		snprintf(addr, sizeof(addr), "n%u", i);
		assert_int_equal(raft_configuration_add(&c, i, addr,
							RAFT_VOTER), 0);
	}
	assert_int_equal(raft_configuration_encode(&c, &b), 0);
	raft_configuration_close(&c);
	return b;
}

static void conf_of(unsigned n, struct raft_configuration *c)
{
	char addr[16];

	raft_configuration_init(c);
	for (unsigned i = 1; i <= n; i++) {
		snprintf(addr, sizeof(addr), "n%u", i);
		assert_int_equal(raft_configuration_add(c, i, addr,
							RAFT_VOTER), 0);
	}
}

/* Deterministic command payloads: entry @index of term @term, @len bytes. */
static uint8_t payload[IMEXD_RAFT_ENTRY_MAX + 1];

static struct raft_entry cmd(raft_term term, size_t len, unsigned seed)
{
	struct raft_entry e = { .term = term, .type = RAFT_COMMAND };
	uint8_t *p = malloc(len ? len : 1);

	assert_non_null(p);
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)((size_t)seed * 31 + i * 7);
	e.buf.base = p;
	e.buf.len = len;
	return e;
}

static void free_ents(struct raft_entry *e, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (e[i].type == RAFT_CHANGE)
			raft_free(e[i].buf.base);
		else
			free(e[i].buf.base);
	}
}

/* Append the bootstrap configuration (3 servers) at 1 in term 1. */
static void bootstrap(struct imexd_raftlog *log)
{
	struct raft_entry e = { .term = 1, .type = RAFT_CHANGE };

	e.buf = conf_buf(3);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 1, 0), 0);
	assert_int_equal(imexd_raftlog_append(log, 1, &e, 1), 0);
	raft_free(e.buf.base);
}

/* Append @n commands of @term at @index, of sizes 0, 1, 2, ... bytes. */
static int append_cmds(struct imexd_raftlog *log, raft_index index,
		       raft_term term, unsigned n)
{
	struct raft_entry e[16];
	int ret;

	assert_true(n <= 16);
	for (unsigned i = 0; i < n; i++)
		e[i] = cmd(term, (index + i) % 5 * 13, (unsigned)(index + i));
	ret = imexd_raftlog_append(log, index, e, n);
	free_ents(e, n);
	return ret;
}

/* Everything the log holds, as numbers to compare. */
struct fp {
	raft_term term;
	raft_id vote;
	raft_index start, last;
	uint32_t ents;
	bool snap;
	raft_index sindex, sconf_index;
	raft_term sterm;
	unsigned sconf_n;
	uint32_t sdata;
};

static struct fp fingerprint(const struct imexd_raftlog *log)
{
	const struct raft_snapshot_metadata *m;
	struct raft_buffer data;
	struct fp f = { 0 };
	uLong c = crc32(0, Z_NULL, 0);

	f.term = imexd_raftlog_term(log);
	f.vote = imexd_raftlog_vote(log);
	f.start = imexd_raftlog_start_index(log);
	f.last = imexd_raftlog_last_index(log);
	for (raft_index i = f.start; i <= f.last; i++) {
		const struct raft_entry *e = imexd_raftlog_entry(log, i);
		uint8_t h[16] = { 0 };

		if (!e)
			continue;	/* last may be the snapshot's */
		memcpy(h, &e->term, 8);
		h[8] = (uint8_t)e->type;
		memcpy(h + 9, &e->buf.len, 4);
		c = crc32(c, h, sizeof(h));
		c = crc32_z(c, e->buf.base, e->buf.len);
	}
	f.ents = (uint32_t)c;
	m = imexd_raftlog_snapshot(log, &data);
	if (m) {
		f.snap = true;
		f.sindex = m->index;
		f.sterm = m->term;
		f.sconf_index = m->configuration_index;
		f.sconf_n = m->configuration.n;
		f.sdata = (uint32_t)crc32_z(crc32(0, Z_NULL, 0), data.base,
					    data.len);
	}
	return f;
}

static bool fp_eq(const struct fp *a, const struct fp *b)
{
	return a->term == b->term && a->vote == b->vote &&
	       a->start == b->start && a->last == b->last &&
	       a->ents == b->ents && a->snap == b->snap &&
	       a->sindex == b->sindex && a->sterm == b->sterm &&
	       a->sconf_index == b->sconf_index &&
	       a->sconf_n == b->sconf_n && a->sdata == b->sdata;
}

static void assert_fp(const struct fp *a, const struct fp *b)
{
	if (!fp_eq(a, b))
		fail_msg("state differs: term %llu/%llu vote %llu/%llu start %llu/%llu last %llu/%llu ents %x/%x snap %llu/%llu",
			 a->term, b->term, a->vote, b->vote, a->start,
			 b->start, a->last, b->last, a->ents, b->ents,
			 a->sindex, b->sindex);
}

/* Reopening yields exactly what the open log holds. */
static struct imexd_raftlog *assert_reopen_same(struct disk *d,
						struct imexd_raftlog *log)
{
	struct fp before = fingerprint(log), after;

	log = reopen(d, log);
	after = fingerprint(log);
	assert_fp(&before, &after);
	assert_string_equal(d->note, "");
	return log;
}

static void take(struct imexd_raftlog *log, raft_index index,
		 unsigned trailing, int expect)
{
	struct raft_snapshot_metadata m = {
		.index = index, .term = imexd_raftlog_term_of(log, index),
		.configuration_index = 1,
	};
	char data[64];

	snprintf(data, sizeof(data), "fsm at %llu", index);
	conf_of(3, &m.configuration);
	assert_int_equal(imexd_raftlog_snapshot_take(log, &m, data,
						     strlen(data), trailing),
			 expect);
	raft_configuration_close(&m.configuration);
}

static int install(struct imexd_raftlog *log, raft_index index,
		   raft_term term)
{
	struct raft_snapshot_metadata m = {
		.index = index, .term = term, .configuration_index = index - 1,
	};
	int ret;

	conf_of(5, &m.configuration);
	ret = imexd_raftlog_snapshot_install(log, &m, "installed", 9);
	raft_configuration_close(&m.configuration);
	return ret;
}

/* ---- tests --------------------------------------------------------------- */

static void test_fresh_state_is_empty(void **state)
{
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	assert_int_equal(imexd_raftlog_term(log), 0);
	assert_int_equal(imexd_raftlog_vote(log), 0);
	assert_int_equal(imexd_raftlog_start_index(log), 1);
	assert_int_equal(imexd_raftlog_last_index(log), 0);
	assert_null(imexd_raftlog_snapshot(log, NULL));
	assert_null(imexd_raftlog_entry(log, 1));
	imexd_raftlog_close(log);
	disk_fini(&d);
}

static void test_term_and_vote_are_durable_and_never_go_back(void **state)
{
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 7, 2), 0);
	log = reopen(&d, log);
	assert_int_equal(imexd_raftlog_term(log), 7);
	assert_int_equal(imexd_raftlog_vote(log), 2);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 6, 0), -EINVAL);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 8, 0), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_term(log), 8);
	assert_int_equal(imexd_raftlog_vote(log), 0);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

/* A raft-meta file as imexd wrote it before the group id (version 1). */
static void write_meta_v1(const struct disk *d, raft_term term, raft_id vote)
{
	uint8_t b[32] = { 'I', 'M', 'X', 'R', 'M', 'E', 'T', 'A', 1 };
	char p[512];
	uint32_t c;
	FILE *f;
	int i;

	for (i = 0; i < 8; i++) {
		b[16 + i] = (uint8_t)(term >> (8 * i));
		b[24 + i] = (uint8_t)(vote >> (8 * i));
	}
	c = (uint32_t)crc32(crc32(0, Z_NULL, 0), b + 16, 16);
	for (i = 0; i < 4; i++)
		b[12 + i] = (uint8_t)(c >> (8 * i));
	path_of(d, IMEXD_RAFTLOG_META, p, sizeof(p));
	f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, sizeof(b), f), sizeof(b));
	assert_int_equal(fclose(f), 0);
}

static void test_group_is_durable_set_once_and_outlives_compaction(void **state)
{
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	assert_int_equal(imexd_raftlog_group(log), 0);
	assert_int_equal(imexd_raftlog_set_group(log, 0), -EINVAL);
	/* Before any term: a node waiting to be joined adopts a group. */
	assert_int_equal(imexd_raftlog_set_group(log, 0x1234abcd5678ef00ULL), 0);
	log = reopen(&d, log);
	assert_int_equal(imexd_raftlog_group(log), 0x1234abcd5678ef00ULL);
	assert_int_equal(imexd_raftlog_term(log), 0);
	assert_int_equal(imexd_raftlog_set_group(log, 0x1234abcd5678ef00ULL), 0);
	assert_int_equal(imexd_raftlog_set_group(log, 7), -EINVAL);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 1, 0), 0);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 9), 0);
	take(log, 8, 0, 0);	/* entry 1 compacted away */
	assert_null(imexd_raftlog_entry(log, 1));
	assert_int_equal(imexd_raftlog_set_term_vote(log, 3, 2), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_group(log), 0x1234abcd5678ef00ULL);
	assert_int_equal(imexd_raftlog_term(log), 3);
	assert_int_equal(imexd_raftlog_vote(log), 2);
	imexd_raftlog_close(log);

	/* An older imexd's raft-meta loads, with no group yet. */
	write_meta_v1(&d, 5, 9);
	log = disk_open(&d);
	assert_int_equal(imexd_raftlog_term(log), 5);
	assert_int_equal(imexd_raftlog_vote(log), 9);
	assert_int_equal(imexd_raftlog_group(log), 0);
	assert_int_equal(imexd_raftlog_set_group(log, 42), 0);
	log = reopen(&d, log);
	assert_int_equal(imexd_raftlog_group(log), 42);
	assert_int_equal(imexd_raftlog_term(log), 5);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

static void test_entries_load_back_byte_for_byte(void **state)
{
	const struct raft_entry *e;
	struct imexd_raftlog *log;
	struct raft_entry big;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	log = assert_reopen_same(&d, log);
	assert_int_equal(append_cmds(log, 2, 1, 5), 0);
	log = assert_reopen_same(&d, log);
	big = cmd(2, IMEXD_RAFT_ENTRY_MAX, 99);
	assert_int_equal(imexd_raftlog_append(log, 7, &big, 1), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_last_index(log), 7);
	e = imexd_raftlog_entry(log, 7);
	assert_non_null(e);
	assert_int_equal(e->term, 2);
	assert_int_equal(e->type, RAFT_COMMAND);
	assert_int_equal(e->buf.len, IMEXD_RAFT_ENTRY_MAX);
	assert_memory_equal(e->buf.base, big.buf.base, big.buf.len);
	assert_null(e->batch);
	assert_int_equal(imexd_raftlog_entry(log, 1)->type, RAFT_CHANGE);
	assert_int_equal(imexd_raftlog_entry(log, 2)->buf.len, 2 % 5 * 13);
	free(big.buf.base);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

static void test_append_replaces_the_conflicting_suffix(void **state)
{
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 8), 0);	/* 2..9 */
	assert_int_equal(imexd_raftlog_set_term_vote(log, 3, 0), 0);
	assert_int_equal(append_cmds(log, 5, 3, 2), 0);	/* 5..6 of term 3 */
	assert_int_equal(imexd_raftlog_last_index(log), 6);
	assert_int_equal(imexd_raftlog_term_of(log, 4), 1);
	assert_int_equal(imexd_raftlog_term_of(log, 5), 3);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_last_index(log), 6);
	/* Truncation alone (no entries) is a frame too. */
	assert_int_equal(imexd_raftlog_append(log, 4, NULL, 0), 0);
	assert_int_equal(imexd_raftlog_last_index(log), 3);
	log = assert_reopen_same(&d, log);
	assert_int_equal(append_cmds(log, 4, 3, 3), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_last_index(log), 6);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

static void test_append_refuses_bad_input_and_changes_nothing(void **state)
{
	struct raft_entry e[IMEXD_RAFTLOG_BATCH_MAX + 1];
	struct imexd_raftlog *log;
	struct raft_entry big, junk;
	struct fp before, now;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	/* The first entry must be the bootstrap configuration. */
	assert_int_equal(append_cmds(log, 1, 1, 1), -EINVAL);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 2, 3), 0);
	before = fingerprint(log);
	assert_int_equal(append_cmds(log, 6, 2, 1), -EINVAL);	/* gap */
	assert_int_equal(append_cmds(log, 0, 2, 1), -EINVAL);
	now = fingerprint(log);
	assert_fp(&before, &now);
	assert_int_equal(append_cmds(log, 4, 0, 1), -EINVAL);	/* term 0 */
	big = cmd(2, IMEXD_RAFT_ENTRY_MAX + 1, 1);
	assert_int_equal(imexd_raftlog_append(log, 4, &big, 1), -EFBIG);
	free(big.buf.base);
	for (unsigned i = 0; i <= IMEXD_RAFTLOG_BATCH_MAX; i++)
		e[i] = (struct raft_entry){ .term = 2, .type = RAFT_BARRIER };
	assert_int_equal(imexd_raftlog_append(log, 4, e,
					      IMEXD_RAFTLOG_BATCH_MAX + 1),
			 -E2BIG);
	junk = (struct raft_entry){ .term = 2, .type = RAFT_CHANGE,
				    .buf = { .base = payload, .len = 5 } };
	memset(payload, 0xff, 5);
	assert_int_equal(imexd_raftlog_append(log, 4, &junk, 1), -EINVAL);
	junk.type = 9;
	assert_int_equal(imexd_raftlog_append(log, 4, &junk, 1), -EINVAL);
	/* The term never decreases along the log. */
	assert_int_equal(imexd_raftlog_set_term_vote(log, 4, 0), 0);
	assert_int_equal(append_cmds(log, 4, 4, 1), 0);
	assert_int_equal(append_cmds(log, 5, 3, 1), -EINVAL);
	assert_int_equal(imexd_raftlog_append(log, 5, NULL, 0), 0);
	before = fingerprint(log);
	log = reopen(&d, log);
	now = fingerprint(log);
	assert_fp(&before, &now);
	/* A full batch is fine. */
	for (unsigned i = 0; i < IMEXD_RAFTLOG_BATCH_MAX; i++)
		e[i].term = 4;
	assert_int_equal(imexd_raftlog_append(log, 5, e,
					      IMEXD_RAFTLOG_BATCH_MAX), 0);
	log = assert_reopen_same(&d, log);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

static void test_torn_last_frame_is_dropped_with_a_note(void **state)
{
	struct imexd_raftlog *log;
	struct fp before, now;
	off_t mid, end;
	struct disk d;
	char p[512];
	int fd;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 3), 0);
	before = fingerprint(log);
	mid = file_size(&d, IMEXD_RAFTLOG_LOG);
	assert_int_equal(append_cmds(log, 5, 1, 4), 0);
	end = file_size(&d, IMEXD_RAFTLOG_LOG);
	imexd_raftlog_close(log);

	/* Cut inside the last frame: its payload, then its header. */
	file_cut(&d, IMEXD_RAFTLOG_LOG, end - 3);
	log = disk_open(&d);
	now = fingerprint(log);
	assert_fp(&before, &now);
	assert_non_null(strstr(d.note, "raft-log: dropped"));
	assert_int_equal(file_size(&d, IMEXD_RAFTLOG_LOG), mid);
	/* Appending after the cut, then reopening, is clean. */
	assert_int_equal(append_cmds(log, 5, 1, 4), 0);
	log = assert_reopen_same(&d, log);
	imexd_raftlog_close(log);
	file_cut(&d, IMEXD_RAFTLOG_LOG, mid + 10);
	log = disk_open(&d);
	now = fingerprint(log);
	assert_fp(&before, &now);
	assert_string_not_equal(d.note, "");

	/* Size grew but the data never came (zeroes). */
	assert_int_equal(append_cmds(log, 5, 1, 4), 0);
	imexd_raftlog_close(log);
	end = file_size(&d, IMEXD_RAFTLOG_LOG);
	path_of(&d, IMEXD_RAFTLOG_LOG, p, sizeof(p));
	fd = open(p, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, end + 4096), 0);
	close(fd);
	log = disk_open(&d);
	assert_int_equal(imexd_raftlog_last_index(log), 8);
	assert_string_not_equal(d.note, "");
	assert_int_equal(file_size(&d, IMEXD_RAFTLOG_LOG), end);

	/* A bad checksum in the last frame only: torn as well. */
	imexd_raftlog_close(log);
	file_flip(&d, IMEXD_RAFTLOG_LOG, end - 2);
	log = disk_open(&d);
	now = fingerprint(log);
	assert_fp(&before, &now);
	assert_string_not_equal(d.note, "");
	imexd_raftlog_close(log);
	disk_fini(&d);
}

static void test_damage_before_the_last_frame_refuses_to_load(void **state)
{
	struct imexd_raftlog *log = NULL;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 3), 0);
	assert_int_equal(append_cmds(log, 5, 1, 3), 0);
	imexd_raftlog_close(log);

	/* The first frame (offset 16): its payload, then its header. */
	file_flip(&d, IMEXD_RAFTLOG_LOG, 16 + 32 + 20);
	assert_int_equal(disk_try_open(&d, &log), -EBADMSG);
	assert_non_null(strstr(d.err, "raft-log: offset 16: bad frame checksum"));
	assert_non_null(strstr(d.err, d.dir));
	file_flip(&d, IMEXD_RAFTLOG_LOG, 16 + 32 + 20);
	file_flip(&d, IMEXD_RAFTLOG_LOG, 16 + 9);
	assert_int_equal(disk_try_open(&d, &log), -EBADMSG);
	assert_non_null(strstr(d.err, "raft-log: offset 16: bad frame header"));
	file_flip(&d, IMEXD_RAFTLOG_LOG, 16 + 9);
	file_flip(&d, IMEXD_RAFTLOG_LOG, 3);
	assert_int_equal(disk_try_open(&d, &log), -EBADMSG);
	assert_non_null(strstr(d.err, "raft-log: offset 0"));
	file_flip(&d, IMEXD_RAFTLOG_LOG, 3);

	/* Term and vote, and the snapshot. */
	file_flip(&d, IMEXD_RAFTLOG_META, 20);
	assert_int_equal(disk_try_open(&d, &log), -EBADMSG);
	assert_non_null(strstr(d.err, "raft-meta: offset 0"));
	file_flip(&d, IMEXD_RAFTLOG_META, 20);
	log = disk_open(&d);
	take(log, 6, 2, 0);
	imexd_raftlog_close(log);
	file_flip(&d, IMEXD_RAFTLOG_SNAPSHOT, 60);
	assert_int_equal(disk_try_open(&d, &log), -EBADMSG);
	assert_non_null(strstr(d.err, "raft-snapshot"));
	file_flip(&d, IMEXD_RAFTLOG_SNAPSHOT, 60);
	log = disk_open(&d);
	assert_int_equal(imexd_raftlog_last_index(log), 7);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

/* Run @op once with the @k-th I/O call failing with @err. */
typedef int (*op_fn)(struct imexd_raftlog *log);

static int op_term(struct imexd_raftlog *log)
{
	return imexd_raftlog_set_term_vote(log, 5, 3);
}

static int op_append(struct imexd_raftlog *log)
{
	return append_cmds(log, 4, 2, 3);
}

static int op_truncate_append(struct imexd_raftlog *log)
{
	return append_cmds(log, 3, 3, 2);
}

static int op_first_append(struct imexd_raftlog *log)
{
	return append_cmds(log, 6, 2, 2);
}

static int op_take(struct imexd_raftlog *log)
{
	take(log, 4, 1, imexd_raftlog_snapshot(log, NULL) ? -EINVAL : 0);
	return 0;
}

static int take_at_5(struct imexd_raftlog *log, unsigned trailing)
{
	struct raft_snapshot_metadata m = {
		.index = 5, .term = 2, .configuration_index = 1,
	};
	int ret;

	conf_of(3, &m.configuration);
	ret = imexd_raftlog_snapshot_take(log, &m, "snap", 4, trailing);
	raft_configuration_close(&m.configuration);
	return ret;
}

static int op_take_ret(struct imexd_raftlog *log)
{
	return take_at_5(log, 1);
}

/* What a take leaves when its compaction did not happen. */
static int op_take_uncompacted(struct imexd_raftlog *log)
{
	return take_at_5(log, 100);
}

static int op_install(struct imexd_raftlog *log)
{
	return install(log, 40, 3);
}

/* @alt: a third state a crash may leave (a stored snapshot whose
 * compaction did not run), or NULL. */
static const struct { const char *name; op_fn fn, alt; } ops[] = {
	{ "set_term_vote", op_term, NULL },
	{ "append", op_append, NULL },
	{ "append over a suffix", op_truncate_append, NULL },
	{ "append after a snapshot", op_first_append, NULL },
	{ "snapshot take", op_take_ret, op_take_uncompacted },
	{ "snapshot install", op_install, NULL },
};

/* The state every fault test starts from: term 2, entries 1..5, and for the
 * "after a snapshot" op a snapshot at 4 keeping 1 (log 4..5). */
static struct imexd_raftlog *base_state(struct disk *d, size_t op)
{
	struct imexd_raftlog *log = disk_open(d);

	bootstrap(log);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 2, 1), 0);
	assert_int_equal(append_cmds(log, 2, 2, 4), 0);
	if (ops[op].fn == op_first_append)
		assert_int_equal(op_take(log), 0);
	if (ops[op].fn == op_term)
		assert_int_equal(imexd_raftlog_set_term_vote(log, 3, 0), 0);
	return reopen(d, log);
}

/* The state @fn leaves (from op @op's base) when nothing fails. */
static struct fp expected_after(size_t op, op_fn fn, bool mem)
{
	struct imexd_raftlog *log;
	struct disk d;
	struct fp f;

	disk_init(&d, mem);
	log = base_state(&d, op);
	assert_int_equal(fn(log), 0);
	f = fingerprint(log);
	log = assert_reopen_same(&d, log);
	imexd_raftlog_close(log);
	disk_fini(&d);
	return f;
}

static void test_every_write_error_is_returned_and_claims_nothing(void **state)
{
	static const int errs[] = { -ENOSPC, -EIO };
	unsigned runs = 0;

	(void)state;
	for (size_t op = 0; op < sizeof(ops) / sizeof(ops[0]); op++) {
		for (size_t e = 0; e < 2; e++) {
			for (int k = 0;; k++) {
				struct imexd_raftlog *log;
				struct fp before, now;
				struct disk d;
				int ret;

				disk_init(&d, false);
				log = base_state(&d, op);
				before = fingerprint(log);
				d.hook.fail_at = k;
				d.hook.fail_err = errs[e];
				ret = ops[op].fn(log);
				if (d.hook.calls <= k) {	/* past the last call */
					assert_int_equal(ret, 0);
					imexd_raftlog_close(log);
					disk_fini(&d);
					break;
				}
				runs++;
				if (ret != errs[e])
					fail_msg("%s: call %d failing with %d returned %d",
						 ops[op].name, k, errs[e], ret);
				now = fingerprint(log);
				/* A take that stored its snapshot but could not
				 * compact keeps every entry and says so. */
				if (!fp_eq(&before, &now)) {
					assert_true(ops[op].fn == op_take_ret ||
						    ops[op].fn == op_install);
					assert_true(now.snap);
					assert_int_equal(now.start, before.start);
				}
				log = reopen(&d, log);
				/* The failed call's bytes were cut, not left
				 * for the next load to find torn. */
				assert_string_equal(d.note, "");
				if (ops[op].fn != op_install) {
					struct fp again = fingerprint(log);

					assert_fp(&now, &again);
				}
				/* The log still takes writes. */
				assert_int_equal(imexd_raftlog_set_term_vote(log, 9, 0), 0);
				imexd_raftlog_close(log);
				disk_fini(&d);
			}
		}
	}
	print_message("%u failed I/O calls checked\n", runs);
}

static void test_a_failed_undo_stops_all_writes_until_reopened(void **state)
{
	struct imexd_raftlog *log;
	struct fp before, now;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	before = fingerprint(log);
	d.hook.fail_at = d.hook.calls;	/* the frame's write */
	d.hook.fail_err = -ENOSPC;
	d.hook.fail_undo = true;
	assert_int_equal(append_cmds(log, 2, 1, 2), -ENOSPC);
	hook_reset(&d.hook);
	assert_int_equal(append_cmds(log, 2, 1, 2), -EIO);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 4, 0), -EIO);
	now = fingerprint(log);
	assert_fp(&before, &now);
	/* Reopening drops the half frame as a torn tail. */
	log = reopen(&d, log);
	now = fingerprint(log);
	assert_fp(&before, &now);
	assert_string_not_equal(d.note, "");
	assert_int_equal(append_cmds(log, 2, 1, 2), 0);
	log = assert_reopen_same(&d, log);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

/*
 * A power cut at each I/O call of each operation, on the memory disk, with
 * torn writes of several sizes: the state loads, and is the old or the new.
 */
static void test_a_crash_at_any_step_loads_the_old_or_the_new_state(void **state)
{
	static const size_t keeps[] = { 0, 1, 7, 33, 100, SIZE_MAX };
	unsigned runs = 0;

	(void)state;
	for (size_t op = 0; op < sizeof(ops) / sizeof(ops[0]); op++) {
		struct fp want = expected_after(op, ops[op].fn, true);
		struct fp alt = ops[op].alt ?
				expected_after(op, ops[op].alt, true) : want;

		for (int k = 0;; k++) {
			bool done = false;

			for (size_t i = 0; i < sizeof(keeps) / sizeof(keeps[0]); i++) {
				struct imexd_raftlog *log;
				struct fp before, now;
				struct disk d;
				int ret;

				disk_init(&d, true);
				log = base_state(&d, op);
				before = fingerprint(log);
				d.hook.fail_at = k;
				d.hook.cut = true;
				ret = ops[op].fn(log);
				done = d.hook.calls <= k;
				runs++;
				imexd_raftlog_close(log);
				imexd_raftlog_mem_crash(d.mem, keeps[i]);
				log = reopen(&d, NULL);
				now = fingerprint(log);
				if (!fp_eq(&now, &want) &&
				    !(ret && (fp_eq(&now, &before) ||
					      fp_eq(&now, &alt))))
					fail_msg("%s: cut at call %d keeping %zu: neither the old nor the new state (ret %d)",
						 ops[op].name, k, keeps[i], ret);
				imexd_raftlog_close(log);
				disk_fini(&d);
			}
			if (done)
				break;
		}
	}
	print_message("%u power cuts checked\n", runs);
}

static void test_snapshot_take_compacts_and_keeps_trailing(void **state)
{
	const struct raft_snapshot_metadata *m;
	struct imexd_raftlog *log;
	struct raft_buffer data;
	off_t before;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 9), 0);	/* 1..10 */
	before = file_size(&d, IMEXD_RAFTLOG_LOG);
	take(log, 8, 3, 0);
	assert_int_equal(imexd_raftlog_start_index(log), 6);
	assert_int_equal(imexd_raftlog_last_index(log), 10);
	assert_null(imexd_raftlog_entry(log, 5));
	assert_non_null(imexd_raftlog_entry(log, 6));
	assert_true(file_size(&d, IMEXD_RAFTLOG_LOG) < before);
	log = assert_reopen_same(&d, log);
	m = imexd_raftlog_snapshot(log, &data);
	assert_non_null(m);
	assert_int_equal(m->index, 8);
	assert_int_equal(m->term, 1);
	assert_int_equal(m->configuration_index, 1);
	assert_int_equal(m->configuration.n, 3);
	assert_string_equal(m->configuration.servers[2].address, "n3");
	assert_int_equal(data.len, strlen("fsm at 8"));
	assert_memory_equal(data.base, "fsm at 8", data.len);
	/* Not held, or not above the current snapshot: refused. */
	take(log, 5, 0, -EINVAL);
	take(log, 8, 0, -EINVAL);
	/* Trailing 0 drops the snapshot's own entry; appends continue. */
	take(log, 10, 0, 0);
	assert_int_equal(imexd_raftlog_start_index(log), 11);
	assert_int_equal(imexd_raftlog_last_index(log), 10);
	assert_int_equal(imexd_raftlog_term_of(log, 10), 1);
	log = assert_reopen_same(&d, log);
	assert_int_equal(append_cmds(log, 11, 1, 2), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(append_cmds(log, 10, 1, 1), -EINVAL);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

static void test_snapshot_install_restarts_the_log(void **state)
{
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	disk_init(&d, false);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 4), 0);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 3, 0), 0);
	assert_int_equal(install(log, 20, 3), 0);
	assert_int_equal(imexd_raftlog_start_index(log), 21);
	assert_int_equal(imexd_raftlog_last_index(log), 20);
	assert_int_equal(imexd_raftlog_term_of(log, 20), 3);
	assert_null(imexd_raftlog_entry(log, 5));
	log = assert_reopen_same(&d, log);
	assert_int_equal(install(log, 20, 3), -EINVAL);
	assert_int_equal(append_cmds(log, 21, 3, 2), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_snapshot(log, NULL)->configuration.n, 5);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

static void test_install_interrupted_before_the_log_reset_is_repaired(void **state)
{
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	disk_init(&d, true);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 4), 0);
	/* The snapshot is stored; rewriting the log fails. */
	d.hook.fail_at = d.hook.calls + 1;
	d.hook.fail_err = -EIO;
	assert_int_equal(install(log, 3, 2), -EIO);
	assert_int_equal(append_cmds(log, 6, 1, 1), -EIO);
	/* Entry 3 has term 1, the snapshot term 2: the log goes. */
	log = reopen(&d, log);
	assert_int_equal(imexd_raftlog_start_index(log), 4);
	assert_int_equal(imexd_raftlog_last_index(log), 3);
	assert_null(imexd_raftlog_entry(log, 4));
	log = assert_reopen_same(&d, log);
	/* The repair is on disk: what follows the snapshot stays. */
	assert_int_equal(imexd_raftlog_set_term_vote(log, 2, 0), 0);
	assert_int_equal(append_cmds(log, 4, 2, 2), 0);
	log = assert_reopen_same(&d, log);
	assert_int_equal(imexd_raftlog_last_index(log), 5);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

static void test_memory_disk_fills_crashes_and_refuses_nothing_twice(void **state)
{
	struct imexd_raftlog *log;
	struct fp before, now;
	size_t used;
	struct disk d;

	(void)state;
	disk_init(&d, true);
	log = disk_open(&d);
	bootstrap(log);
	assert_int_equal(append_cmds(log, 2, 1, 2), 0);
	before = fingerprint(log);
	used = imexd_raftlog_mem_used(d.mem);
	imexd_raftlog_mem_set_limit(d.mem, used + 40);
	assert_int_equal(append_cmds(log, 4, 1, 5), -ENOSPC);
	assert_int_equal(imexd_raftlog_mem_used(d.mem), used);
	now = fingerprint(log);
	assert_fp(&before, &now);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 2, 0), 0);
	/* An injected EIO on the sync. */
	imexd_raftlog_mem_set_limit(d.mem, 0);
	imexd_raftlog_mem_fail_next(d.mem, -EIO, 1);
	before = fingerprint(log);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 3, 0), -EIO);
	now = fingerprint(log);
	assert_fp(&before, &now);
	log = assert_reopen_same(&d, log);
	assert_int_equal(append_cmds(log, 4, 2, 5), 0);
	log = assert_reopen_same(&d, log);
	/* What was never synced is lost in a crash; what was, stays. */
	before = fingerprint(log);
	imexd_raftlog_close(log);
	imexd_raftlog_mem_crash(d.mem, 0);
	log = reopen(&d, NULL);
	now = fingerprint(log);
	assert_fp(&before, &now);
	imexd_raftlog_close(log);
	disk_fini(&d);
}

/* Reopen after every step of a seeded random history equals the live log. */
static void test_random_history_reloads_exactly(void **state)
{
	const char *env = getenv("RAFTLOG_SEED");
	unsigned seed = (unsigned)getpid();
	struct imexd_raftlog *log;
	struct disk d;

	(void)state;
	if (env)
		seed = (unsigned)strtoul(env, NULL, 0);
	print_message("random history seed %u (RAFTLOG_SEED=%u replays)\n",
		      seed, seed);
	srandom(seed);
	disk_init(&d, true);
	log = disk_open(&d);
	bootstrap(log);
	for (int step = 0; step < 300; step++) {
		raft_index start = imexd_raftlog_start_index(log);
		raft_index last = imexd_raftlog_last_index(log);
		raft_term term = imexd_raftlog_term(log);
		const struct raft_snapshot_metadata *m =
			imexd_raftlog_snapshot(log, NULL);
		raft_index low = m && m->index + 1 > start ? m->index + 1 : start;
		long r = random() % 10;

		if (low < 2)
			low = 2;	/* entry 1 stays the bootstrap configuration */

		if (r == 0) {
			assert_int_equal(imexd_raftlog_set_term_vote(log, term + 1,
					 (raft_id)(random() % 4)), 0);
		} else if (r < 7) {
			raft_index at = low + (raft_index)random() %
					(last + 2 - low);

			assert_int_equal(append_cmds(log, at, term,
						     (unsigned)(random() % 6)), 0);
		} else if (r < 9 && last >= low && last > 1) {
			take(log, last - (raft_index)random() % (last - low + 1),
			     (unsigned)(random() % 4), 0);
		} else if (r == 9) {
			assert_int_equal(install(log, last + 1 + (raft_index)(random() % 3),
						 term), 0);
		}
		log = assert_reopen_same(&d, log);
	}
	imexd_raftlog_close(log);
	disk_fini(&d);
}

/* What open loads is what raft_step(RAFT_START) takes, with no leak. */
static void test_loaded_state_starts_a_raft_server(void **state)
{
	struct imexd_raftlog *log;
	struct raft_update update;
	struct raft_event ev;
	struct raft r;
	struct disk d;
	int rv;

	(void)state;
	for (int with_snap = 0; with_snap < 2; with_snap++) {
		disk_init(&d, true);
		log = disk_open(&d);
		bootstrap(log);
		assert_int_equal(imexd_raftlog_set_term_vote(log, 2, 2), 0);
		assert_int_equal(append_cmds(log, 2, 2, 6), 0);
		if (with_snap)
			take(log, 5, 2, 0);
		log = reopen(&d, log);

		assert_int_equal(raft_init(&r, NULL, NULL, 1, "n1"), 0);
		memset(&ev, 0, sizeof(ev));
		assert_int_equal(imexd_raftlog_start(log, &ev), 0);
		assert_int_equal(ev.type, RAFT_START);
		assert_int_equal(ev.start.n_entries,
				 with_snap ? 4 : 7);
		assert_int_equal(ev.start.start_index, with_snap ? 4 : 1);
		ev.time = 0;
		rv = raft_step(&r, &ev, &update);
		imexd_raftlog_start_done(&ev, rv);
		assert_int_equal(rv, 0);
		assert_int_equal(raft_current_term(&r), 2);
		assert_int_equal(raft_voted_for(&r), 2);
		assert_int_equal(raft_last_index(&r), 7);
		assert_int_equal(raft_state(&r), RAFT_FOLLOWER);
		raft_close(&r, NULL);
		imexd_raftlog_close(log);
		disk_fini(&d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_state_is_empty),
		cmocka_unit_test(test_term_and_vote_are_durable_and_never_go_back),
		cmocka_unit_test(test_group_is_durable_set_once_and_outlives_compaction),
		cmocka_unit_test(test_entries_load_back_byte_for_byte),
		cmocka_unit_test(test_append_replaces_the_conflicting_suffix),
		cmocka_unit_test(test_append_refuses_bad_input_and_changes_nothing),
		cmocka_unit_test(test_torn_last_frame_is_dropped_with_a_note),
		cmocka_unit_test(test_damage_before_the_last_frame_refuses_to_load),
		cmocka_unit_test(test_every_write_error_is_returned_and_claims_nothing),
		cmocka_unit_test(test_a_failed_undo_stops_all_writes_until_reopened),
		cmocka_unit_test(test_a_crash_at_any_step_loads_the_old_or_the_new_state),
		cmocka_unit_test(test_snapshot_take_compacts_and_keeps_trailing),
		cmocka_unit_test(test_snapshot_install_restarts_the_log),
		cmocka_unit_test(test_install_interrupted_before_the_log_reset_is_repaired),
		cmocka_unit_test(test_memory_disk_fills_crashes_and_refuses_nothing_twice),
		cmocka_unit_test(test_random_history_reloads_exactly),
		cmocka_unit_test(test_loaded_state_starts_a_raft_server),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
