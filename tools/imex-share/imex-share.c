// SPDX-License-Identifier: GPL-2.0
/*
 * imex-share: export descriptors through an IMEX channel, or import one by
 * its handle, from the shell: for tests, demos and quick checks of the
 * channel boundary.  See usage() for the interface.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <uuid/uuid.h>
#include <linux/imex.h>

#define PROG "imex-share"

static const char *dev_path;
static char dev_buf[64];

static void usage(FILE *out)
{
	fputs("usage: " PROG " [--dev PATH | -c N] export [--desc TEXT] [--count N] [--hold]\n"
	      "                 [--handle-file FILE]\n"
	      "       " PROG " [--dev PATH | -c N] import HANDLE [--timeout MS]\n"
	      "                 [--expect ok|ERRNAME] [--repeat N [--threads K]]\n"
	      "                 [--wait-revoke SEC]\n"
	      "\n"
	      "  -c, --channel N      use /dev/imex-channels/channelN\n"
	      "  -d, --dev PATH       use the channel device at PATH\n"
	      "export: print one handle per line, UUID:ID; --hold keeps the exports\n"
	      "  until SIGTERM or SIGINT (closing the channel ends them).\n"
	      "import: print the descriptor of HANDLE (UUID:ID).  --expect exits 0\n"
	      "  iff the outcome is the one named; --repeat imports and unimports N\n"
	      "  times and prints the rate; --wait-revoke waits up to SEC seconds for\n"
	      "  the import to be revoked (exit 3 if it is not).\n", out);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static unsigned long parse_num(const char *opt, const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || *s == '-' || v > max)
		die("%s '%s': give a whole number up to %lu", opt, s, max);
	return v;
}

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

static int errno_by_name(const char *name)
{
	for (int e = 1; e < 256; e++) {
		const char *n = strerrorname_np(e);

		if (n && !strcmp(n, name))
			return e;
	}
	die("--expect '%s': give ok or an errno name such as EPERM", name);
}

static void set_channel(const char *n)
{
	snprintf(dev_buf, sizeof(dev_buf), "/dev/" IMEX_DEVDIR "/channel%lu",
		 parse_num("-c", n, IMEX_CHANNELS_MAX - 1));
	dev_path = dev_buf;
}

static int open_dev(void)
{
	int fd;

	if (!dev_path)
		die("no channel: give -c N or --dev PATH");
	fd = open(dev_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("cannot open %s: %s (%s)", dev_path, strerror(errno),
		    errname(errno));
	return fd;
}

static void format_handle(const struct imex_handle *h, char *buf, size_t len)
{
	char u[37];

	uuid_unparse_lower(h->node_uuid, u);
	snprintf(buf, len, "%s:%" PRIu64, u, (uint64_t)h->id);
}

static int parse_handle(const char *s, struct imex_handle *h)
{
	char u[37];
	const char *colon = strchr(s, ':');
	char *end;

	if (!colon || colon - s != 36)
		return -1;
	memcpy(u, s, 36);
	u[36] = 0;
	if (uuid_parse(u, h->node_uuid))
		return -1;
	errno = 0;
	h->id = strtoull(colon + 1, &end, 10);
	if (errno || !colon[1] || *end || colon[1] == '-')
		return -1;
	return 0;
}

/* --- export ---------------------------------------------------------------- */

static int write_handles(const char *file, const char *text)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", file, (int)getpid()) >=
	    (int)sizeof(tmp))
		die("--handle-file '%s': path too long", file);
	f = fopen(tmp, "w");
	if (!f)
		die("cannot write %s: %s", tmp, strerror(errno));
	if (fputs(text, f) == EOF || fflush(f) || fsync(fileno(f))) {
		fclose(f);
		unlink(tmp);
		die("cannot write %s: %s", tmp, strerror(errno));
	}
	if (fclose(f) || rename(tmp, file)) {
		unlink(tmp);
		die("cannot write %s: %s", file, strerror(errno));
	}
	return 0;
}

static int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "desc", required_argument, NULL, 'D' },
		{ "count", required_argument, NULL, 'n' },
		{ "hold", no_argument, NULL, 'H' },
		{ "handle-file", required_argument, NULL, 'f' },
		{ "dev", required_argument, NULL, 'd' },
		{ "channel", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *text = NULL, *file = NULL;
	unsigned long count = 1;
	bool hold = false;
	char *lines, line[96];
	size_t used = 0, room;
	sigset_t set;
	int fd, o, sig;

	optind = 0;	/* 0: GNU getopt starts afresh, in its default order */
	while ((o = getopt_long(argc, argv, "c:d:h", opts, NULL)) != -1) {
		switch (o) {
		case 'D': text = optarg; break;
		case 'n': count = parse_num("--count", optarg, IMEX_EXPORTS_PER_DOMAIN); break;
		case 'H': hold = true; break;
		case 'f': file = optarg; break;
		case 'c': set_channel(optarg); break;
		case 'd': dev_path = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc)
		die("export: unexpected argument '%s'", argv[optind]);
	if (!count)
		die("--count 0: export at least one descriptor");
	if (text && strlen(text) + (count > 1 ? 6 : 0) > IMEX_DESC_MAX)
		die("--desc is %zu bytes: a descriptor holds at most %d",
		    strlen(text), IMEX_DESC_MAX);

	/* Block them now so --hold cannot lose a signal sent right after the handles. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (hold)
		sigprocmask(SIG_BLOCK, &set, NULL);

	fd = open_dev();
	room = count * sizeof(line);
	lines = calloc(1, room);
	if (!lines)
		die("out of memory");
	for (unsigned long i = 0; i < count; i++) {
		struct imex_export_arg ea;
		int n;

		memset(&ea, 0, sizeof(ea));
		if (!text)
			n = snprintf((char *)ea.desc, sizeof(ea.desc), PROG ":%d:%lu",
				     (int)getpid(), i);
		else if (count > 1)
			n = snprintf((char *)ea.desc, sizeof(ea.desc), "%s:%lu", text, i);
		else
			n = snprintf((char *)ea.desc, sizeof(ea.desc), "%s", text);
		ea.desc_len = n > IMEX_DESC_MAX ? IMEX_DESC_MAX : (unsigned int)n;
		if (!ea.desc_len)
			die("--desc is empty: a descriptor needs at least one byte");
		if (ioctl(fd, IMEX_IOC_EXPORT, &ea))
			die("export %lu of %lu on %s: %s (%s)", i + 1, count, dev_path,
			    strerror(errno), errname(errno));
		format_handle(&ea.handle, line, sizeof(line));
		printf("%s\n", line);
		fflush(stdout);
		used += (size_t)snprintf(lines + used, room - used, "%s\n", line);
	}
	if (file)
		write_handles(file, lines);
	free(lines);
	if (hold) {
		while (sigwait(&set, &sig))
			;
	}
	close(fd);
	return 0;
}

/* --- import ---------------------------------------------------------------- */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int do_import(int fd, const struct imex_handle *h, unsigned int timeout_ms,
		     struct imex_import_arg *ia)
{
	memset(ia, 0, sizeof(*ia));
	ia->handle = *h;
	ia->timeout_ms = timeout_ms;
	return ioctl(fd, IMEX_IOC_IMPORT, ia) ? errno : 0;
}

struct worker {
	pthread_t tid;
	const struct imex_handle *h;
	unsigned int timeout_ms;
	unsigned long n;
	unsigned long errors;
	int first_err;
};

static void *repeat_worker(void *arg)
{
	struct worker *w = arg;
	struct imex_import_arg ia;
	int fd = open_dev();

	for (unsigned long i = 0; i < w->n; i++) {
		int e = do_import(fd, w->h, w->timeout_ms, &ia);

		if (!e && ioctl(fd, IMEX_IOC_UNIMPORT, w->h))
			e = errno;
		if (e) {
			if (!w->errors)
				w->first_err = e;
			w->errors++;
		}
	}
	close(fd);
	return NULL;
}

static int cmd_repeat(const struct imex_handle *h, const char *hs,
		      unsigned int timeout_ms, unsigned long n, unsigned long k)
{
	struct worker *w = calloc(k, sizeof(*w));
	unsigned long total = 0, errors = 0;
	long long t0, us;

	if (!w)
		die("out of memory");
	t0 = now_us();
	for (unsigned long i = 0; i < k; i++) {
		w[i].h = h;
		w[i].timeout_ms = timeout_ms;
		w[i].n = n;
		if (k == 1)
			repeat_worker(&w[i]);
		else if (pthread_create(&w[i].tid, NULL, repeat_worker, &w[i]))
			die("cannot start thread %lu", i + 1);
	}
	for (unsigned long i = 0; i < k; i++) {
		if (k > 1)
			pthread_join(w[i].tid, NULL);
		total += w[i].n;
		errors += w[i].errors;
		if (w[i].errors)
			fprintf(stderr, PROG ": import %s: %s (%s), %lu times in thread %lu\n",
				hs, strerror(w[i].first_err), errname(w[i].first_err),
				w[i].errors, i + 1);
	}
	us = now_us() - t0;
	if (us < 1)
		us = 1;
	printf("%lu imports, %lu errors, %lld ms, %.1f us/import", total, errors,
	       us / 1000, (double)us / (double)total);
	if (k > 1)
		printf(", %.0f imports/s", (double)total * 1e6 / (double)us);
	printf("\n");
	free(w);
	return errors ? 1 : 0;
}

static const char *reason_name(uint32_t r)
{
	static const char *const names[] = {
		[IMEX_REVOKE_UNEXPORTED] = "unexported",
		[IMEX_REVOKE_NODE_LOST] = "node-lost",
		[IMEX_REVOKE_NODE_RESTARTED] = "node-restarted",
		[IMEX_REVOKE_CHANNEL_GONE] = "channel-gone",
		[IMEX_REVOKE_DAEMON_LOST] = "daemon-lost",
	};

	return r < sizeof(names) / sizeof(names[0]) ? names[r] : "unknown";
}

static int wait_revoke(int fd, const char *hs, unsigned long secs)
{
	struct pollfd p = { .fd = fd, .events = POLLPRI };
	struct imex_revoked_entry e;
	struct imex_revoked_arg ra;
	long long t0 = now_us();
	long long deadline = t0 + (long long)secs * 1000000;
	char eh[96];

	for (;;) {
		long long left = deadline - now_us();
		int r;

		if (left <= 0)
			break;
		r = poll(&p, 1, (int)((left + 999) / 1000));
		if (r < 0 && errno == EINTR)
			break;
		if (r < 0)
			die("poll: %s", strerror(errno));
		if (!r)
			break;
		memset(&ra, 0, sizeof(ra));
		ra.entries = (uintptr_t)&e;
		ra.count = 1;
		if (ioctl(fd, IMEX_IOC_REVOKED, &ra)) {
			if (errno != ENODEV)
				die("reading revoked imports: %s (%s)", strerror(errno),
				    errname(errno));
			/* The channel itself went: its imports with it. */
			printf("revoked %s reason %s after %lld ms\n", hs,
			       reason_name(IMEX_REVOKE_CHANNEL_GONE),
			       (now_us() - t0) / 1000);
			return 0;
		}
		if (ra.count) {
			format_handle(&e.handle, eh, sizeof(eh));
			printf("revoked %s reason %s after %lld ms\n", eh,
			       reason_name(e.reason), (now_us() - t0) / 1000);
			return 0;
		}
	}
	printf("not revoked after %lu s\n", secs);
	return 3;
}

static int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "expect", required_argument, NULL, 'e' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "threads", required_argument, NULL, 'T' },
		{ "wait-revoke", required_argument, NULL, 'w' },
		{ "dev", required_argument, NULL, 'd' },
		{ "channel", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *expect = NULL, *hs = NULL;
	unsigned long repeat = 0, threads = 1, wait_secs = 0;
	unsigned int timeout_ms = 0;
	bool wait = false;
	struct imex_import_arg ia;
	struct imex_handle h;
	struct sigaction sa;
	int fd, o, e, want = 0;

	optind = 0;	/* 0: GNU getopt starts afresh, in its default order */
	while ((o = getopt_long(argc, argv, "c:d:h", opts, NULL)) != -1) {
		switch (o) {
		case 't':
			timeout_ms = (unsigned int)parse_num("--timeout", optarg,
							     IMEX_IMPORT_TIMEOUT_MAX_MS);
			break;
		case 'e': expect = optarg; break;
		case 'r': repeat = parse_num("--repeat", optarg, 100000000); break;
		case 'T': threads = parse_num("--threads", optarg, 1024); break;
		case 'w':
			wait_secs = parse_num("--wait-revoke", optarg, 86400);
			wait = true;
			break;
		case 'c': set_channel(optarg); break;
		case 'd': dev_path = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 1 != argc)
		die("import: give exactly one handle (UUID:ID)");
	hs = argv[optind];
	memset(&h, 0, sizeof(h));
	if (parse_handle(hs, &h))
		die("'%s' is not a handle: give UUID:ID as export prints it", hs);
	if (expect && strcmp(expect, "ok"))
		want = errno_by_name(expect);
	if (!threads)
		die("--threads 0: give at least one");
	if (threads > 1 && !repeat)
		die("--threads needs --repeat");
	if (repeat && (expect || wait))
		die("--repeat does not combine with --expect or --wait-revoke");
	if (repeat)
		return cmd_repeat(&h, hs, timeout_ms, repeat, threads);

	/* No SA_RESTART: a signal must end a blocking import with EINTR. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	fd = open_dev();
	e = do_import(fd, &h, timeout_ms, &ia);
	if (expect) {
		printf("import: %s\n", e ? errname(e) : "ok");
		if (e != want) {
			fprintf(stderr, PROG ": import %s: expected %s\n", hs, expect);
			close(fd);
			return 1;
		}
	} else if (e) {
		fprintf(stderr, PROG ": import %s: %s (%s)\n", hs, strerror(e),
			errname(e));
		close(fd);
		return 1;
	} else {
		fwrite(ia.desc, 1, ia.desc_len, stdout);
		printf("\n");
	}
	fflush(stdout);
	if (wait && !e) {
		int r = wait_revoke(fd, hs, wait_secs);

		close(fd);
		return r;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "channel", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int o;

	while ((o = getopt_long(argc, argv, "+c:d:h", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
			dev_path = optarg;
			break;
		case 'c':
			set_channel(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[optind], "export"))
		return cmd_export(argc - optind, argv + optind);
	if (!strcmp(argv[optind], "import"))
		return cmd_import(argc - optind, argv + optind);
	die("unknown command '%s': use export or import (see --help)", argv[optind]);
}
