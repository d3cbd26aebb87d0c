// SPDX-License-Identifier: GPL-2.0
/*
 * Cluster-side programs: the TCP request/response baseline (server and
 * client), a timer for whole commands, a create timed in-process, the
 * restart-to-READY timer and the cost of one durable append where imexd
 * keeps its raft log.
 *
 * The TCP pair is the baseline of every cluster row: one request of SIZE
 * bytes answered by SIZE bytes on an established connection with
 * TCP_NODELAY, between the same two VMs, is the least any protocol
 * between two daemons can cost per exchange (a remote import is one such
 * exchange between the daemons plus the local kernel upcalls; a domain
 * create is a few).  With THREADS connections at once it is the most
 * exchanges per second that path can carry under the same concurrency.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <imexctl.h>

#include "bench.h"

static int io_all(int fd, char *buf, size_t len, int writing)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = writing ? write(fd, buf + off, len - off) :
				      read(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += n;
	}
	return 0;
}

static size_t msg_size;

static void *serve_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char *buf = malloc(msg_size);

	while (buf && !io_all(fd, buf, msg_size, 0) &&
	       !io_all(fd, buf, msg_size, 1))
		;
	free(buf);
	close(fd);
	return NULL;
}

static void nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int cmd_tcp_server(int argc, char **argv)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	int one = 1, s;

	if (argc != 2)
		die("usage: tcp-server PORT SIZE");
	a.sin6_port = htons(arg_ul(argv[0], "PORT"));
	msg_size = arg_ul(argv[1], "SIZE");
	s = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 64))
		die("listen on port %s: %s", argv[0], strerror(errno));
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		pthread_t t;
		int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0)
			continue;
		nodelay(c);
		if (pthread_create(&t, NULL, serve_conn, (void *)(intptr_t)c))
			close(c);
		else
			pthread_detach(t);
	}
}

struct client {
	const char *host, *port;
	unsigned long count;
	pthread_barrier_t *go;
	int fd;
};

static void *client_run(void *arg)
{
	struct client *c = arg;
	char *buf = calloc(1, msg_size);

	pthread_barrier_wait(c->go);
	for (unsigned long i = 0; buf && i < c->count; i++)
		if (io_all(c->fd, buf, msg_size, 1) || io_all(c->fd, buf, msg_size, 0))
			die("request/response to %s:%s failed", c->host, c->port);
	free(buf);
	return NULL;
}

static int dial(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	int fd, r = getaddrinfo(host, port, &hints, &ai);

	if (r)
		die("%s:%s: %s", host, port, gai_strerror(r));
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen))
		die("connect %s:%s: %s", host, port, strerror(errno));
	freeaddrinfo(ai);
	nodelay(fd);
	return fd;
}

/*
 * Prints "rtt_us X" (mean time of one exchange) with one thread, and
 * "per_s X" (exchanges per second, all threads) with several.  Connections
 * are set up before the clock starts: an import also reuses the daemons'
 * established connection.
 */
int cmd_tcp_client(int argc, char **argv)
{
	unsigned long threads;
	struct client *c;
	pthread_barrier_t go;
	pthread_t *t;
	uint64_t t0, dt;

	if (argc != 5)
		die("usage: tcp-client HOST PORT SIZE THREADS COUNT");
	msg_size = arg_ul(argv[2], "SIZE");
	threads = arg_ul(argv[3], "THREADS");
	if (!threads || threads > 1024)
		die("THREADS must be 1..1024");
	c = calloc(threads, sizeof(*c));
	t = calloc(threads, sizeof(*t));
	if (!c || !t)
		die("out of memory");
	pthread_barrier_init(&go, NULL, threads + 1);
	for (unsigned long i = 0; i < threads; i++) {
		c[i] = (struct client){ .host = argv[0], .port = argv[1],
					.count = arg_ul(argv[4], "COUNT"), .go = &go };
		c[i].fd = dial(argv[0], argv[1]);
		if (pthread_create(&t[i], NULL, client_run, &c[i]))
			die("pthread_create failed");
	}
	pthread_barrier_wait(&go);
	t0 = now_ns();
	for (unsigned long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	dt = now_ns() - t0;
	if (threads == 1)
		printf("rtt_us %.3f\n", dt / 1e3 / c[0].count);
	else
		printf("per_s %.1f\n", threads * c[0].count / (dt / 1e9));
	for (unsigned long i = 0; i < threads; i++)
		close(c[i].fd);
	free(c);
	free(t);
	return 0;
}

/* Run a command (its output on stderr); print "elapsed_us X", pass its status on. */
int cmd_elapsed(int argc, char **argv)
{
	uint64_t t0 = now_ns();
	int status;
	pid_t pid;

	if (argc < 1)
		die("usage: elapsed COMMAND [ARG...]");
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		dup2(2, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid: %s", strerror(errno));
	printf("elapsed_us %.1f\n", (now_ns() - t0) / 1e3);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/*
 * Restart to READY: waits until a manager other than OLD_PID is attached to
 * the module (the daemon is up: it has re-read the kernel's state), then
 * until DOMAIN is READY on this node again; prints "up_ready_us X", the
 * time between the two.  Attachment is polled every millisecond (there is
 * no event for it); READY is awaited on the kernel's events.
 */
int cmd_up_ready(int argc, char **argv)
{
	struct imexctl *ctx;
	struct imexctl_node node;
	unsigned long old, timeout;
	uint64_t t_up, end;
	int r;

	if (argc != 3)
		die("usage: up-ready DOMAIN OLD_PID TIMEOUT_S");
	old = arg_ul(argv[1], "OLD_PID");
	timeout = arg_ul(argv[2], "TIMEOUT_S");
	if (imexctl_new(&ctx) < 0)
		die("imexctl_new failed");
	end = now_ns() + timeout * 1000000000ull;
	for (;;) {
		if (imexctl_node_get(ctx, &node) < 0)
			die("node get: %s", imexctl_errmsg(ctx));
		if (node.manager_pid && node.manager_pid != old)
			break;
		if (now_ns() > end)
			die("no daemon attached in %lu s", timeout);
		usleep(1000);
	}
	t_up = now_ns();
	r = imexctl_domain_wait(ctx, argv[0], IMEXCTL_DOMAIN_READY,
				(int)(timeout * 1000), NULL);
	if (r < 0)
		die("%s not READY: %s", argv[0], imexctl_errmsg(ctx));
	printf("up_ready_us %.1f\n", (now_ns() - t_up) / 1e3);
	imexctl_free(ctx);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * One durable append as imexd's raft log does it (disk_file.c: write at
 * the end, then fdatasync), COUNT times on a file in DIR; prints
 * "fsync_us X", the median.  A create waits for such appends on the
 * leader and on a follower, one after the other: this is the part of its
 * time that is the disk, not the network.
 */
int cmd_fsync(int argc, char **argv)
{
	char path[4096], rec[128];
	unsigned long count;
	uint64_t *t, median;
	int fd;

	if (argc != 2)
		die("usage: fsync DIR COUNT");
	count = arg_ul(argv[1], "COUNT");
	if (!count || count > 100000)
		die("COUNT must be 1..100000");
	t = calloc(count, sizeof(*t));
	if (!t)
		die("out of memory");
	snprintf(path, sizeof(path), "%s/imex-bench-fsync.%d", argv[0], (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	memset(rec, 'r', sizeof(rec));
	for (unsigned long i = 0; i < count; i++) {
		uint64_t t0 = now_ns();

		if (io_all(fd, rec, sizeof(rec), 1) || fdatasync(fd) < 0)
			die("%s: %s", path, strerror(errno));
		t[i] = now_ns() - t0;
	}
	close(fd);
	unlink(path);
	qsort(t, count, sizeof(*t), cmp_u64);
	median = t[count / 2];
	printf("fsync_us %.1f\n", (double)median / 1e3);
	free(t);
	return 0;
}

/*
 * A create timed from inside one process: "create_us X" from the request
 * handed to the kernel to DOMAIN READY on this node (which is READY only
 * once every member has said it holds the domain), channel count 1,
 * members named in NODES (comma-separated names; addresses from
 * NODES_FILE).  What `imexctl domain create` costs less its start and
 * exit, measured as one span rather than as a difference of two noisy
 * process timings.
 */
int cmd_create(int argc, char **argv)
{
	struct imexctl_member_spec m[64];
	struct imexctl_domain_spec spec = { 0 };
	struct imexctl *ctx;
	char *names, *save = NULL, *tok;
	unsigned long timeout;
	uint64_t t0;
	size_t n = 0;

	if (argc != 3)
		die("usage: create NAME NODES TIMEOUT_S");
	timeout = arg_ul(argv[2], "TIMEOUT_S");
	names = strdup(argv[1]);
	if (!names)
		die("out of memory");
	for (tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == sizeof(m) / sizeof(m[0]))
			die("at most %zu members", sizeof(m) / sizeof(m[0]));
		m[n++] = (struct imexctl_member_spec){ .name = tok };
	}
	spec.name = argv[0];
	spec.members = m;
	spec.n_members = n;
	spec.channel_count = 1;
	if (imexctl_new(&ctx) < 0)
		die("imexctl_new failed");
	t0 = now_ns();
	if (imexctl_domain_create(ctx, &spec, (int)(timeout * 1000)) < 0)
		die("create %s: %s", argv[0], imexctl_errmsg(ctx));
	if (imexctl_domain_wait(ctx, argv[0], IMEXCTL_DOMAIN_READY,
				(int)(timeout * 1000), NULL) < 0)
		die("%s not READY: %s", argv[0], imexctl_errmsg(ctx));
	printf("create_us %.1f\n", (now_ns() - t0) / 1e3);
	imexctl_free(ctx);
	free(names);
	return 0;
}
