// SPDX-License-Identifier: GPL-2.0
/* Single-node benchmarks: channel open+close, fd resolve, CDI spec write. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <imexctl.h>

#include "bench.h"
#include "../tests/kmod/kapi/imex_kapi_test.h"

/* Slices per repetition of the in-process loops (see cmd_openclose). */
#define CHUNKS 10

/* ITER and REPS (argv[1], argv[2]): ITER per slice, REPS in *@reps. */
static unsigned long iter_reps(char **argv, unsigned long *reps)
{
	unsigned long iter = arg_ul(argv[1], "ITER");

	*reps = arg_ul(argv[2], "REPS");
	return iter / CHUNKS + 1;
}

/*
 * The directory of channel device @path, opened O_PATH (or -1, errno set),
 * and in *@name (to free) the device's name in it.
 */
static int channel_dir(const char *path, char **name)
{
	char *base = strdup(path), *dir = strdup(path);
	int fd, e;

	*name = base ? strdup(basename(base)) : NULL;
	if (!*name || !dir)
		die("out of memory");
	fd = open(dirname(dir), O_PATH | O_DIRECTORY | O_CLOEXEC);
	e = errno;
	free(base);
	free(dir);
	errno = e;
	return fd;
}

static uint64_t open_loop(int dir, const char *name, unsigned long iter)
{
	uint64_t t0 = now_ns();

	for (unsigned long i = 0; i < iter; i++) {
		int fd = openat(dir, name, O_RDWR | O_CLOEXEC);

		if (fd < 0)
			die("open %s: %s", name, strerror(errno));
		close(fd);
	}
	return now_ns() - t0;
}

/*
 * channel_open: open(O_RDWR)+close of a granted channel device, per pair.
 * Baseline: the same loop on /dev/null, a character device whose open does
 * nothing, so the difference is what imex.ko adds to the VFS's cost of
 * opening a char device: the module reference the VFS takes for a modular
 * driver, imex_lock, the lookup of the grant by minor (stale nodes), its
 * state checks (revoked grant, usable domain), the channel reference and
 * open count, and their release (an fd's export/import state is made on
 * its first use, not here).
 * Both names are opened relative to their directory's fd, so the path walk
 * is one component in both.  The two loops alternate in each repetition,
 * first one then the other, in CHUNKS slices of ITER/CHUNKS, each a
 * sample, so a pause of the virtual CPU spoils one slice, not the figure.
 */
int cmd_openclose(int argc, char **argv)
{
	unsigned long iter, reps;
	char *name;
	int chdir_fd, devdir;

	if (argc != 3)
		die("usage: openclose CHANNEL_PATH ITER REPS");
	iter = iter_reps(argv, &reps);
	chdir_fd = channel_dir(argv[0], &name);
	devdir = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (chdir_fd < 0 || devdir < 0)
		die("cannot open the device directories: %s", strerror(errno));
	open_loop(chdir_fd, name, iter / 10 + 1);	/* warm caches */
	open_loop(devdir, "null", iter / 10 + 1);
	for (unsigned long r = 0; r < reps * CHUNKS; r++) {
		uint64_t ch, nul;

		if (r % 2) {
			nul = open_loop(devdir, "null", iter);
			ch = open_loop(chdir_fd, name, iter);
		} else {
			ch = open_loop(chdir_fd, name, iter);
			nul = open_loop(devdir, "null", iter);
		}
		sample("channel_open", (double)ch / iter, (double)nul / iter);
	}
	free(name);
	return 0;
}

/* Whether process @pid is stopped (state T), per /proc/PID/stat. */
static int stopped(pid_t pid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("loader %d is gone: %s", (int)pid, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		die("cannot read %s", path);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'T';
}

/* Stop @pid and wait (at most 60 s) until it is back in user space, stopped. */
static void pause_loader(pid_t pid)
{
	uint64_t deadline = now_ns() + 60000000000ull;

	if (kill(pid, SIGSTOP))
		die("SIGSTOP %d: %s", (int)pid, strerror(errno));
	while (!stopped(pid)) {
		if (now_ns() > deadline)
			die("loader %d did not stop within 60 s", (int)pid);
		usleep(1000);
	}
}

/*
 * channel_open_busy: open(O_RDWR)+close of a channel of one domain while
 * another domain is being granted and revoked 4096 channels at a time (the
 * process LOADER_PID, a manager doing that in a loop: each commit is 4096
 * device_add()s or device_del()s).  Baseline: the same loop on the same
 * channel with the loader stopped (SIGSTOP, and only once it is back in user
 * space, so no commit of it is running): the ratio is what a neighbour's
 * large grant costs an unrelated open(), 1.0 when none of the device work
 * is done under the lock every open() takes.  Idle and busy slices
 * alternate, sliced as cmd_openclose is.
 */
int cmd_openclose_busy(int argc, char **argv)
{
	unsigned long iter, reps;
	char *name;
	pid_t loader;
	int dir;

	if (argc != 4)
		die("usage: openclose-busy CHANNEL_PATH ITER REPS LOADER_PID");
	iter = iter_reps(argv, &reps);
	loader = (pid_t)arg_ul(argv[3], "LOADER_PID");
	dir = channel_dir(argv[0], &name);
	if (dir < 0)
		die("cannot open the device directory: %s", strerror(errno));
	open_loop(dir, name, iter / 10 + 1);	/* warm caches */
	for (unsigned long r = 0; r < reps * CHUNKS; r++) {
		uint64_t busy, idle;

		if (r % 2) {
			pause_loader(loader);
			idle = open_loop(dir, name, iter);
			kill(loader, SIGCONT);
			busy = open_loop(dir, name, iter);
		} else {
			busy = open_loop(dir, name, iter);
			pause_loader(loader);
			idle = open_loop(dir, name, iter);
			kill(loader, SIGCONT);
		}
		sample("channel_open_busy", (double)busy / iter,
		       (double)idle / iter);
	}
	close(dir);
	free(name);
	return 0;
}

/*
 * channel_resolve: imex_channel_fget + imex_channel_ident + fput per call,
 * the path a driver takes to check a channel fd within one call, timed in
 * the kernel by the test module imex_kapi_test (IMEX_KAPI_BENCH).
 * Baseline: fget+fput of the same fd in the same ioctl: resolving an fd
 * can never be cheaper than taking and dropping the file reference (the
 * resolve path takes exactly that one), so the ratio is what the channel
 * check and the identity read add.  Sliced as cmd_openclose is.
 */
int cmd_resolve(int argc, char **argv)
{
	unsigned long iter, reps;
	int fd, dev;

	if (argc != 3)
		die("usage: resolve CHANNEL_PATH ITER REPS");
	iter = iter_reps(argv, &reps);
	fd = open(argv[0], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open %s: %s", argv[0], strerror(errno));
	dev = open("/dev/imex-kapi-test", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		die("open /dev/imex-kapi-test: %s (is imex_kapi_test.ko loaded?)",
		    strerror(errno));
	for (unsigned long r = 0; r < reps * CHUNKS; r++) {
		struct imex_kapi_bench b = { .fd = fd, .iterations = iter };

		if (ioctl(dev, IMEX_KAPI_BENCH, &b))
			die("IMEX_KAPI_BENCH: %s", strerror(errno));
		sample("channel_resolve", (double)b.resolve_ns / iter,
		       (double)b.fget_ns / iter);
	}
	close(dev);
	close(fd);
	return 0;
}

static char *read_file(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st))
		die("read %s: %s", path, strerror(errno));
	buf = malloc(st.st_size + 1);
	if (!buf || read(fd, buf, st.st_size) != st.st_size)
		die("read %s: short read", path);
	close(fd);
	*len = st.st_size;
	return buf;
}

/* The baseline: the plainest safe replacement of a file's contents. */
static void write_fsync_rename(const char *dir, const char *buf, size_t len)
{
	char tmp[4096], dst[4096];
	size_t off = 0;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.baseline.tmp", dir);
	snprintf(dst, sizeof(dst), "%s/baseline.json", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("open %s: %s", tmp, strerror(errno));
	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n <= 0)
			die("write %s: %s", tmp, strerror(errno));
		off += n;
	}
	if (fsync(fd) || close(fd) || rename(tmp, dst))
		die("fsync/rename %s: %s", tmp, strerror(errno));
}

/*
 * Where imexctl_cdi_generate()'s time goes, for the log only (not a row):
 * the dump (imexctl_cdi_spec() of one channel: the whole domain is dumped,
 * one channel kept), with its user and system CPU time, and the dump with
 * the build (imexctl_cdi_spec() of all), and the write of that spec alone
 * (imexctl_cdi_write()).  Medians of 5 runs (CPU times: means), in us.
 */
static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double cpu_us(const struct timeval *tv)
{
	return tv->tv_sec * 1e6 + tv->tv_usec;
}

#define CDI_PARTS_RUNS 5

static void cdi_breakdown(struct imexctl *ctx, const char *domain,
			  const struct imexctl_cdi_opts *opts)
{
	double dump[CDI_PARTS_RUNS] = { 0 }, spec[CDI_PARTS_RUNS] = { 0 };
	double wr[CDI_PARTS_RUNS] = { 0 }, user = 0, sys = 0;
	const unsigned int n = CDI_PARTS_RUNS;
	struct imexctl_channel *ch = NULL;
	size_t nch;
	uint32_t one;

	if (imexctl_channel_list(ctx, domain, &ch, &nch) < 0 || !nch)
		return;
	one = ch[0].id;
	free(ch);
	for (unsigned int r = 0; r < n; r++) {
		struct rusage ru0, ru1;
		char *json = NULL;
		uint64_t t0;

		getrusage(RUSAGE_SELF, &ru0);
		t0 = now_ns();
		if (imexctl_cdi_spec(ctx, domain, &one, 1, NULL, &json) < 0)
			die("cdi spec: %s", imexctl_errmsg(ctx));
		dump[r] = (now_ns() - t0) / 1e3;
		getrusage(RUSAGE_SELF, &ru1);
		user += cpu_us(&ru1.ru_utime) - cpu_us(&ru0.ru_utime);
		sys += cpu_us(&ru1.ru_stime) - cpu_us(&ru0.ru_stime);
		free(json);
		t0 = now_ns();
		if (imexctl_cdi_spec(ctx, domain, NULL, 0, NULL, &json) < 0)
			die("cdi spec: %s", imexctl_errmsg(ctx));
		spec[r] = (now_ns() - t0) / 1e3;
		t0 = now_ns();
		if (imexctl_cdi_write(ctx, "bench", json, opts, NULL) < 0)
			die("cdi write: %s", imexctl_errmsg(ctx));
		wr[r] = (now_ns() - t0) / 1e3;
		free(json);
	}
	qsort(dump, n, sizeof(*dump), by_value);
	qsort(spec, n, sizeof(*spec), by_value);
	qsort(wr, n, sizeof(*wr), by_value);
	fprintf(stderr, "cdi: breakdown (median us): dump %.0f (cpu: user %.0f, sys %.0f), dump+build %.0f, write %.0f\n",
		dump[n / 2], user / n, sys / n, spec[n / 2], wr[n / 2]);
}

/*
 * cdi_spec: imexctl_cdi_generate() for every channel of DOMAIN (2048 in
 * `make bench`): dump the channels from the kernel, build the JSON spec,
 * write it atomically (temp file, fsync, rename, fsync of the directory).
 * Baseline: writing the very bytes it produced with write+fsync+rename in
 * the same directory, the least any atomic writer of that spec must do, so
 * the ratio is the cost of asking the kernel and building the JSON.
 */
int cmd_cdi(int argc, char **argv)
{
	struct imexctl_cdi_opts opts = { 0 };
	struct imexctl *ctx;
	unsigned long reps;
	char *path = NULL, *buf;
	size_t len;

	if (argc != 3)
		die("usage: cdi DOMAIN DIR REPS");
	opts.dir = argv[1];
	reps = arg_ul(argv[2], "REPS");
	if (imexctl_new(&ctx) < 0)
		die("imexctl_new failed");
	/* One untimed run: creates the directory and gives the bytes. */
	if (imexctl_cdi_generate(ctx, argv[0], NULL, 0, "bench", &opts, &path) < 0)
		die("cdi generate: %s", imexctl_errmsg(ctx));
	buf = read_file(path, &len);
	write_fsync_rename(argv[1], buf, len);
	for (unsigned long r = 0; r < reps; r++) {
		uint64_t t0, gen, base;

		t0 = now_ns();
		if (imexctl_cdi_generate(ctx, argv[0], NULL, 0, "bench", &opts, NULL) < 0)
			die("cdi generate: %s", imexctl_errmsg(ctx));
		gen = now_ns() - t0;
		t0 = now_ns();
		write_fsync_rename(argv[1], buf, len);
		base = now_ns() - t0;
		sample("cdi_spec", gen / 1e3, base / 1e3);
	}
	fprintf(stderr, "cdi: spec of %zu bytes\n", len);
	cdi_breakdown(ctx, argv[0], &opts);
	free(buf);
	free(path);
	imexctl_free(ctx);
	return 0;
}
