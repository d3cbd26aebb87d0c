// SPDX-License-Identifier: GPL-2.0
/*
 * The raft log (imexd/raftlog.h): what is written loads back exactly, on a
 * real directory and on the memory disk; torn tails are dropped, damage
 * elsewhere refuses to load; every write error is returned and claims
 * nothing; a power cut at any I/O call of any operation loads either the
 * old or the new state; the loaded state starts a real libraft server.
 */
#include "test_raftlog.h"
/* ---- fixtures ------------------------------------------------------------ */

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

void hook_reset(struct hook *h)
{
	h->calls = 0;
	h->fail_at = -1;
	h->fail_err = 0;
	h->cut = false;
	h->dead = false;
	h->fail_undo = false;
}

void disk_init(struct disk *d, bool mem)
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

void disk_fini(struct disk *d)
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
int disk_try_open(struct disk *d, struct imexd_raftlog **log)
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

struct imexd_raftlog *disk_open(struct disk *d)
{
	struct imexd_raftlog *log = NULL;
	int ret = disk_try_open(d, &log);

	if (ret)
		fail_msg("open: %d: %s", ret, d->err);
	return log;
}

struct imexd_raftlog *reopen(struct disk *d, struct imexd_raftlog *log)
{
	imexd_raftlog_close(log);
	hook_reset(&d->hook);
	return disk_open(d);
}

void path_of(const struct disk *d, const char *name, char *p, size_t n)
{
	snprintf(p, n, "%s/%s", d->dir, name);
}

off_t file_size(const struct disk *d, const char *name)
{
	struct stat st;
	char p[512];

	path_of(d, name, p, sizeof(p));
	assert_int_equal(stat(p, &st), 0);
	return st.st_size;
}

void file_flip(const struct disk *d, const char *name, off_t off)
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

void file_cut(const struct disk *d, const char *name, off_t len)
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

void conf_of(unsigned n, struct raft_configuration *c)
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
uint8_t payload[IMEXD_RAFT_ENTRY_MAX + 1];

struct raft_entry cmd(raft_term term, size_t len, unsigned seed)
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
void bootstrap(struct imexd_raftlog *log)
{
	struct raft_entry e = { .term = 1, .type = RAFT_CHANGE };

	e.buf = conf_buf(3);
	assert_int_equal(imexd_raftlog_set_term_vote(log, 1, 0), 0);
	assert_int_equal(imexd_raftlog_append(log, 1, &e, 1), 0);
	raft_free(e.buf.base);
}

/* Append @n commands of @term at @index, of sizes 0, 1, 2, ... bytes. */
int append_cmds(struct imexd_raftlog *log, raft_index index,
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
struct fp fingerprint(const struct imexd_raftlog *log)
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

bool fp_eq(const struct fp *a, const struct fp *b)
{
	return a->term == b->term && a->vote == b->vote &&
	       a->start == b->start && a->last == b->last &&
	       a->ents == b->ents && a->snap == b->snap &&
	       a->sindex == b->sindex && a->sterm == b->sterm &&
	       a->sconf_index == b->sconf_index &&
	       a->sconf_n == b->sconf_n && a->sdata == b->sdata;
}

void assert_fp(const struct fp *a, const struct fp *b)
{
	if (!fp_eq(a, b))
		fail_msg("state differs: term %llu/%llu vote %llu/%llu start %llu/%llu last %llu/%llu ents %x/%x snap %llu/%llu",
			 a->term, b->term, a->vote, b->vote, a->start,
			 b->start, a->last, b->last, a->ents, b->ents,
			 a->sindex, b->sindex);
}

/* Reopening yields exactly what the open log holds. */
struct imexd_raftlog *assert_reopen_same(struct disk *d,
					 struct imexd_raftlog *log)
{
	struct fp before = fingerprint(log), after;

	log = reopen(d, log);
	after = fingerprint(log);
	assert_fp(&before, &after);
	assert_string_equal(d->note, "");
	return log;
}

void take(struct imexd_raftlog *log, raft_index index,
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

int install(struct imexd_raftlog *log, raft_index index,
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
