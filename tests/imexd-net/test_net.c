// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of imexd's connection layer (imexd/net.c, imexd/tls.c) on a real
 * sd-event loop over loopback TCP: framing, host name look-ups off the loop,
 * the bounds against hostile peers, and mutual TLS 1.3 (a peer with a
 * certificate from another CA is refused), and the node names a peer's
 * certificate proves (imexd_net_conn_auth()).
 *
 *   test_net CERTDIR    (CERTDIR made by gen-certs.sh)
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>
#include <openssl/ssl.h>
#include "log.h"
#include "net.h"
#include "peers.h"
#include "sock.h"
#include "tls.h"

static int passed, failed;

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", passed + failed + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		passed++;
	else
		failed++;
}

struct side {
	const char *name;
	unsigned up, failed, down, msgs;
	uint64_t last_conn;
	bool last_outbound;
	uint8_t last_type;
	uint32_t last_raft_len;
	char last_addr[300];
	/* test_bounds: messages on one watched connection; an answer of
	 * echo_len bytes to every other message, through echo_net. */
	uint64_t up_conn;	/* the newest connection up */
	uint64_t watch_conn;
	unsigned watch_msgs;
	struct imexd_net *echo_net;
	const uint8_t *echo;
	size_t echo_len, echo_peak;
	unsigned echo_refused;
};

static void on_up(void *data, uint64_t conn, const char *addr, bool outbound)
{
	struct side *s = data;

	s->up++;
	s->last_conn = conn;
	s->up_conn = conn;
	s->last_outbound = outbound;
	snprintf(s->last_addr, sizeof(s->last_addr), "%s", addr);
}

static void on_failed(void *data, const char *addr)
{
	struct side *s = data;

	s->failed++;
	snprintf(s->last_addr, sizeof(s->last_addr), "%s", addr);
}

static void on_down(void *data, uint64_t conn)
{
	struct side *s = data;

	(void)conn;
	s->down++;
}

static void on_msg(void *data, uint64_t conn, const struct imexd_msg *msg)
{
	struct side *s = data;

	s->msgs++;
	s->last_conn = conn;
	s->last_type = msg->type;
	if (msg->type == IMEXD_MSG_RAFT)
		s->last_raft_len = msg->u.raft.len;
	if (s->watch_conn && conn == s->watch_conn)
		s->watch_msgs++;
	else if (s->echo_net) {
		size_t q;

		if (imexd_net_send(s->echo_net, conn, s->echo, s->echo_len) == -ENOBUFS)
			s->echo_refused++;
		q = imexd_net_pending_output(s->echo_net);
		if (q > s->echo_peak)
			s->echo_peak = q;
	}
}

static const struct imexd_net_ops ops = {
	.conn_up = on_up,
	.conn_failed = on_failed,
	.conn_down = on_down,
	.msg = on_msg,
};

static sd_event *ev;

/* Run the loop until *@counter reaches @want or @ms pass. */
static bool run_until(const unsigned *counter, unsigned want, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (*counter >= want)
			return true;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return false;
		sd_event_run(ev, 50 * 1000ULL);
	}
}

static void run_for(int ms)
{
	unsigned never = 0;

	run_until(&never, 1, ms);
}

static int hello(uint8_t type, const char *name, uint8_t **frame, size_t *len)
{
	struct imexd_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.sender_uuid[0] = 1;
	m.sender_epoch = 42;
	m.u.hello.proto_min = 1;
	m.u.hello.proto_max = 1;
	snprintf(m.u.hello.node_name, sizeof(m.u.hello.node_name), "%s", name);
	m.u.hello.max_channels = 2048;
	return imexd_msg_encode(&m, frame, len);
}

static struct imexd_net *mknet(struct side *s, uint16_t port,
			       struct imexd_tls *tls)
{
	struct imexd_net_cfg cfg = {
		.listen_address = "127.0.0.1",
		.listen_port = port,
		.default_port = port,
		.tls = tls,
	};
	struct imexd_net *net = NULL;
	char err[512];

	if (imexd_net_new(&net, ev, &cfg, &ops, s, err, sizeof(err)) < 0) {
		fprintf(stderr, "net: %s\n", err);
		exit(2);
	}
	return net;
}

/* "127.0.0.1:PORT" of @net's listener. */
static const char *addr_of(struct imexd_net *net, char *buf, size_t len)
{
	snprintf(buf, len, "127.0.0.1:%u", imexd_net_listen_port(net));
	return buf;
}

/* A port nobody listens on: bound (so nobody else gets it) but not
 * listening, so a connect is refused.  The caller closes the fd. */
static int closed_port(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		perror("closed port");
		exit(2);
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* A TCP connection to 127.0.0.1:@port from the loopback address @src
 * (NULL: any), so that tests can play several hosts. */
static int raw_connect_from(const char *src, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sockaddr_in b = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && src && (inet_pton(AF_INET, src, &b.sin_addr) != 1 ||
			       bind(fd, (struct sockaddr *)&b, sizeof(b)) < 0)) {
		perror("raw bind");
		exit(2);
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("raw connect");
		exit(2);
	}
	return fd;
}

static int raw_connect(uint16_t port)
{
	return raw_connect_from(NULL, port);
}

/* Has the server closed @fd?  (Reads without blocking.) */
static bool raw_closed(int fd)
{
	char b[256];
	ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static void test_split(void)
{
	char host[256];
	uint16_t port;

	check(!imexd_sock_split_addr("node1", 50100, host, sizeof(host), &port) &&
	      !strcmp(host, "node1") && port == 50100, "split: host alone");
	check(!imexd_sock_split_addr("10.0.0.1:7", 1, host, sizeof(host), &port) &&
	      !strcmp(host, "10.0.0.1") && port == 7, "split: ipv4:port");
	check(!imexd_sock_split_addr("[fe80::1]:9", 1, host, sizeof(host), &port) &&
	      !strcmp(host, "fe80::1") && port == 9, "split: [v6]:port");
	check(!imexd_sock_split_addr("fe80::1", 5, host, sizeof(host), &port) &&
	      !strcmp(host, "fe80::1") && port == 5, "split: bare v6");
	check(imexd_sock_split_addr("h:0", 1, host, sizeof(host), &port) < 0 &&
	      imexd_sock_split_addr("h:65536", 1, host, sizeof(host), &port) < 0 &&
	      imexd_sock_split_addr("h:x", 1, host, sizeof(host), &port) < 0 &&
	      imexd_sock_split_addr("", 1, host, sizeof(host), &port) < 0 &&
	      imexd_sock_split_addr("a b", 1, host, sizeof(host), &port) < 0 &&
	      imexd_sock_split_addr("[::1", 1, host, sizeof(host), &port) < 0,
	      "split: bad addresses refused");
}

static void test_plain(void)
{
	struct side a = { .name = "a" }, b = { .name = "b" };
	struct imexd_net *na = mknet(&a, 0, NULL), *nb = mknet(&b, 0, NULL);
	uint16_t pb = imexd_net_listen_port(nb), pz;
	char ab[64], host[80], refused[64];
	int zfd = closed_port(&pz);
	uint8_t *f;
	size_t len;
	int fds[70], n;

	addr_of(nb, ab, sizeof(ab));
	snprintf(host, sizeof(host), "localhost:%u", pb);
	snprintf(refused, sizeof(refused), "127.0.0.1:%u", pz);
	check(pb != 0 && imexd_net_connect(na, ab) == 0, "connect starts");
	check(run_until(&a.up, 1, 3000) && run_until(&b.up, 1, 3000) &&
	      a.last_outbound && !b.last_outbound &&
	      !strcmp(a.last_addr, ab),
	      "both sides up; outbound addr is the connect string (%s)", a.last_addr);
	hello(IMEXD_MSG_HELLO, "a", &f, &len);
	check(imexd_net_send(na, a.last_conn, f, len) == 0, "send HELLO");
	free(f);
	check(run_until(&b.msgs, 1, 3000) && b.last_type == IMEXD_MSG_HELLO,
	      "HELLO arrives decoded");
	hello(IMEXD_MSG_HELLO_ACK, "b", &f, &len);
	imexd_net_send(nb, b.last_conn, f, len);
	free(f);
	check(run_until(&a.msgs, 1, 3000) && a.last_type == IMEXD_MSG_HELLO_ACK,
	      "HELLO_ACK arrives back");

	/* A look-up through a worker thread. */
	check(imexd_net_connect(na, host) == 0 &&
	      run_until(&a.up, 2, 5000), "host name resolved off the loop and connected");
	check(imexd_net_connect(na, refused) == 0 &&
	      run_until(&a.failed, 1, 3000) && !strcmp(a.last_addr, refused),
	      "refused connect reported as conn_failed");
	close(zfd);
	check(imexd_net_connect(na, "no-such-host.invalid:1") == 0 &&
	      run_until(&a.failed, 2, 10000), "unresolvable host reported as conn_failed");
	check(imexd_net_connect(na, "bad host") == -EINVAL, "a bad address is refused at once");

	/* A stranger: junk instead of a frame header. */
	n = raw_connect(pb);
	run_until(&b.up, 3, 3000);
	if (write(n, "GET / HTTP/1.0\r\n\r\n", 18) != 18)
		perror("write");
	run_for(300);
	check(raw_closed(n), "a non-imexd stream is closed");
	close(n);

	/* Too many connections without HELLO. */
	unsigned before = b.up;

	/* From ten hosts: fewer than IMEXD_NET_PENDING_PER_HOST each. */
	for (int i = 0; i < 70; i++) {
		char src[32];

		snprintf(src, sizeof(src), "127.0.1.%d", i % 10 + 1);
		fds[i] = raw_connect_from(src, pb);
	}
	run_for(500);
	n = 0;
	for (int i = 0; i < 70; i++)
		n += raw_closed(fds[i]);
	/* b.up moved in the callbacks. */
	// cppcheck-suppress duplicateExpression
	check(n >= 70 - IMEXD_NET_PENDING_MAX && b.up - before <= IMEXD_NET_PENDING_MAX,
	      "at most %d connections wait for HELLO (%d of 70 refused)",
	      IMEXD_NET_PENDING_MAX, n);
	for (int i = 0; i < 70; i++)
		close(fds[i]);
	run_for(300);

	/* A peer that does not read loses its connection. */
	int slow = raw_connect(pb);
	unsigned downs = b.down;
	uint8_t *big;
	int r = 0, sends = 0;

	run_until(&b.up, b.up + 1, 3000);
	big = calloc(1, 1 << 20);
	hello(IMEXD_MSG_HELLO, "b", &f, &len);
	memcpy(big, f, len);	/* content does not matter for queueing */
	free(f);
	while (sends < 64 && (r = imexd_net_send(nb, b.last_conn, big, 1 << 20)) == 0) {
		sends++;
		run_for(20);
	}
	free(big);
	check(r == -ENOBUFS && sends <= 20,
	      "a peer that does not read is disconnected (after %d MiB queued)", sends);
	check(b.down == downs, "... and conn_down is left to the caller");
	close(slow);

	imexd_net_free(na);
	imexd_net_free(nb);
}

/* Run the loop until the server has closed @fd, for at most @ms. */
static bool run_until_closed(int fd, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (raw_closed(fd))
			return true;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return false;
		sd_event_run(ev, 20 * 1000ULL);
	}
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A peer that writes HELLO frames as fast as the socket takes them. */
struct flooder {
	int fd;
	volatile bool stop;
	volatile unsigned long frames;
	pthread_t thread;
};

static void *flood(void *arg)
{
	struct flooder *fl = arg;
	uint8_t *f, buf[64 << 10];
	size_t len, n = 0;

	hello(IMEXD_MSG_HELLO, "flood", &f, &len);
	while (n + len <= sizeof(buf)) {
		memcpy(buf + n, f, len);
		n += len;
	}
	free(f);
	while (!fl->stop) {
		ssize_t w = send(fl->fd, buf, n, MSG_NOSIGNAL);

		if (w <= 0)
			break;
		fl->frames += (unsigned long)w / len;
	}
	return NULL;
}

static void test_bounds(void)
{
	struct side a = { .name = "a" }, b = { .name = "b" };
	struct imexd_net *nb = mknet(&b, 0, NULL), *na = mknet(&a, 0, NULL);
	uint16_t pb = imexd_net_listen_port(nb);
	int fds[IMEXD_NET_PENDING_PER_HOST + 1], fd, other;
	unsigned msgs, ups, downs;
	struct flooder fl = { 0 };
	uint8_t *f, *big;
	char ab[64];
	size_t len;
	bool ok;

	/* Frame size: a header announcing more than IMEXD_BODY_MAX. */
	hello(IMEXD_MSG_HELLO, "x", &f, &len);
	put_be32(f + 8, IMEXD_BODY_MAX + 1);
	fd = raw_connect(pb);
	msgs = b.msgs;
	if (write(fd, f, IMEXD_HEADER_LEN) != IMEXD_HEADER_LEN)
		perror("write");
	check(run_until_closed(fd, 3000) && b.msgs == msgs,
	      "bounds: a frame header announcing %u body bytes closes the connection",
	      IMEXD_BODY_MAX + 1);
	close(fd);
	/* ... while exactly IMEXD_BODY_MAX waits for the body. */
	put_be32(f + 8, IMEXD_BODY_MAX);
	fd = raw_connect(pb);
	if (write(fd, f, IMEXD_HEADER_LEN) != IMEXD_HEADER_LEN)
		perror("write");
	check(!run_until_closed(fd, 300) && b.msgs == msgs,
	      "bounds: a header announcing IMEXD_BODY_MAX waits for its body");
	close(fd);
	free(f);

	/* Connections per host that have not said HELLO. */
	ups = b.up;
	downs = b.down;
	run_until(&b.down, downs + 2, 3000);
	downs = b.down;
	for (int i = 0; i < IMEXD_NET_PENDING_PER_HOST; i++)
		fds[i] = raw_connect_from("127.0.0.2", pb);
	check(run_until(&b.up, ups + IMEXD_NET_PENDING_PER_HOST, 3000),
	      "bounds: %d connections from one host wait for HELLO",
	      IMEXD_NET_PENDING_PER_HOST);
	fds[IMEXD_NET_PENDING_PER_HOST] = raw_connect_from("127.0.0.2", pb);
	check(run_until_closed(fds[IMEXD_NET_PENDING_PER_HOST], 3000) &&
	      b.up == ups + IMEXD_NET_PENDING_PER_HOST,
	      "bounds: the next one from that host is closed at once");
	other = raw_connect_from("127.0.0.3", pb);
	check(run_until(&b.up, ups + IMEXD_NET_PENDING_PER_HOST + 1, 3000) &&
	      !raw_closed(other), "bounds: ... while another host still gets in");
	for (int i = 0; i <= IMEXD_NET_PENDING_PER_HOST; i++)
		close(fds[i]);
	close(other);
	check(run_until(&b.down, downs + IMEXD_NET_PENDING_PER_HOST + 1, 3000),
	      "bounds: closed connections are released");

	/* One peer floods frames; another peer is still heard. */
	fl.fd = raw_connect_from("127.0.0.4", pb);
	if (pthread_create(&fl.thread, NULL, flood, &fl)) {
		perror("pthread_create");
		exit(2);
	}
	msgs = b.msgs;
	ok = run_until(&b.msgs, msgs + 10000, 10000);
	check(ok, "bounds: a flooding peer's frames are decoded (%u)", b.msgs - msgs);
	addr_of(nb, ab, sizeof(ab));
	ups = b.up;
	check(imexd_net_connect(na, ab) == 0 && run_until(&a.up, 1, 3000) &&
	      run_until(&b.up, ups + 1, 3000),
	      "bounds: another peer connects during the flood");
	/* b's fields are read by the callbacks nb was given &b for. */
	b.watch_conn = b.up_conn; /* cppcheck-suppress unreadVariable */
	hello(IMEXD_MSG_HELLO, "a", &f, &len);
	for (unsigned i = 1; i <= 3; i++) {
		imexd_net_send(na, a.last_conn, f, len);
		check(run_until(&b.watch_msgs, i, 3000),
		      "bounds: the other peer's frame %u arrives during the flood (%lu flood frames sent)",
		      i, fl.frames);
	}
	free(f);
	/* Every flood frame asks for an answer the flooder never reads. */
	big = calloc(1, 64 << 10);
	b.echo_net = nb;
	b.echo = big;		/* cppcheck-suppress unreadVariable */
	b.echo_len = 64 << 10;	/* cppcheck-suppress unreadVariable */
	check(run_until(&b.echo_refused, 1, 20000),
	      "bounds: answers to a peer that does not read are refused past IMEXD_NET_OUTQ_MAX");
	check(b.echo_peak <= IMEXD_NET_OUTQ_MAX,
	      "bounds: queued output stayed within %u bytes (peak %zu)",
	      IMEXD_NET_OUTQ_MAX, b.echo_peak);
	b.echo_net = NULL;	/* cppcheck-suppress redundantAssignment */
	fl.stop = true;
	shutdown(fl.fd, SHUT_RDWR);
	pthread_join(fl.thread, NULL);
	close(fl.fd);
	free(big);
	msgs = b.watch_msgs;
	hello(IMEXD_MSG_HELLO, "a", &f, &len);
	imexd_net_send(na, a.last_conn, f, len);
	free(f);
	check(run_until(&b.watch_msgs, msgs + 1, 3000),
	      "bounds: the other peer is still served after the flooder is dropped");

	imexd_net_free(na);
	imexd_net_free(nb);
}

/* A RAFT frame carrying @n bytes (a body of @n + 4). */
static void raft_frame(uint32_t n, uint8_t **frame, size_t *len)
{
	struct imexd_msg m;

	memset(&m, 0, sizeof(m));
	m.type = IMEXD_MSG_RAFT;
	m.sender_uuid[0] = 1;
	m.sender_epoch = 42;
	m.u.raft.len = n;
	m.u.raft.data = calloc(1, n);
	if (!m.u.raft.data || imexd_msg_encode(&m, frame, len)) {
		fprintf(stderr, "cannot encode a RAFT frame of %u bytes\n", n);
		exit(2);
	}
	free(m.u.raft.data);
}

/* A frame header of @type announcing @body bytes, on a raw socket. */
static void raw_header(int fd, uint8_t type, uint32_t body)
{
	uint8_t *f;
	size_t len;

	hello(IMEXD_MSG_HELLO, "x", &f, &len);
	f[5] = type;
	put_be32(f + 8, body);
	if (write(fd, f, IMEXD_HEADER_LEN) != IMEXD_HEADER_LEN)
		perror("write");
	free(f);
}

/*
 * RAFT frames above IMEXD_BODY_MAX (snapshots) pass only on a connection
 * the owner bound; before that the 1 MiB bound holds.
 */
static void test_raft_bound(void)
{
	struct side a = { .name = "a" }, b = { .name = "b" };
	struct imexd_net *na = mknet(&a, 0, NULL), *nb = mknet(&b, 0, NULL);
	uint16_t pb = imexd_net_listen_port(nb);
	unsigned msgs, downs, ups;
	uint8_t *f;
	size_t len;
	char ab[64];
	int fd;

	addr_of(nb, ab, sizeof(ab));
	check(imexd_net_connect(na, ab) == 0 && run_until(&a.up, 1, 3000) &&
	      run_until(&b.up, 1, 3000), "raft: connected");
	/* Unbound: a RAFT body of exactly IMEXD_BODY_MAX passes ... */
	raft_frame(IMEXD_BODY_MAX - 4, &f, &len);
	check(imexd_net_send(na, a.up_conn, f, len) == 0 &&
	      run_until(&b.msgs, 1, 5000) && b.last_type == IMEXD_MSG_RAFT &&
	      b.last_raft_len == IMEXD_BODY_MAX - 4,
	      "raft: unbound, a RAFT body of IMEXD_BODY_MAX is delivered");
	free(f);
	/* ... one byte more closes the connection, nothing delivered. */
	raft_frame(IMEXD_BODY_MAX - 3, &f, &len);
	msgs = b.msgs;
	downs = b.down;
	check(imexd_net_send(na, a.up_conn, f, len) == 0 &&
	      run_until(&b.down, downs + 1, 5000) && run_until(&a.down, 1, 5000) &&
	      b.msgs == msgs,
	      "raft: unbound, a RAFT body of IMEXD_BODY_MAX + 1 closes the connection undelivered");
	free(f);
	ups = b.up;
	fd = raw_connect(pb);
	run_until(&b.up, ups + 1, 3000);
	raw_header(fd, IMEXD_MSG_RAFT, IMEXD_BODY_MAX + 1);
	check(run_until_closed(fd, 3000) && b.msgs == msgs,
	      "raft: unbound, a header announcing IMEXD_BODY_MAX + 1 closes at once");
	close(fd);

	/* Bound on both ends: a 20 MiB snapshot frame passes, past the usual
	 * output queue bound too. */
	ups = b.up;
	check(imexd_net_connect(na, ab) == 0 && run_until(&a.up, 2, 3000) &&
	      run_until(&b.up, ups + 1, 3000), "raft: reconnected");
	imexd_net_conn_bind(na, a.up_conn);
	imexd_net_conn_bind(nb, b.up_conn);
	imexd_net_conn_bind(nb, 999999);	/* unknown: ignored */
	raft_frame(20u << 20, &f, &len);
	msgs = b.msgs;
	check(imexd_net_send(na, a.up_conn, f, len) == 0 &&
	      run_until(&b.msgs, msgs + 1, 20000) &&
	      b.last_type == IMEXD_MSG_RAFT && b.last_raft_len == 20u << 20,
	      "raft: bound, a 20 MiB RAFT frame is delivered");
	free(f);
	/* Bound, but above IMEXD_RAFT_BODY_MAX: closed. */
	ups = b.up;
	fd = raw_connect(pb);
	check(run_until(&b.up, ups + 1, 3000), "raft: a raw connection is up");
	imexd_net_conn_bind(nb, b.up_conn);
	raw_header(fd, IMEXD_MSG_RAFT, IMEXD_RAFT_BODY_MAX);
	check(!run_until_closed(fd, 300),
	      "raft: bound, a header announcing IMEXD_RAFT_BODY_MAX waits for its body");
	close(fd);
	ups = b.up;
	fd = raw_connect(pb);
	run_until(&b.up, ups + 1, 3000);
	imexd_net_conn_bind(nb, b.up_conn);
	raw_header(fd, IMEXD_MSG_RAFT, IMEXD_RAFT_BODY_MAX + 1);
	check(run_until_closed(fd, 3000),
	      "raft: bound, a header announcing IMEXD_RAFT_BODY_MAX + 1 closes the connection");
	close(fd);
	ups = b.up;
	fd = raw_connect(pb);
	run_until(&b.up, ups + 1, 3000);
	imexd_net_conn_bind(nb, b.up_conn);
	raw_header(fd, IMEXD_MSG_FORWARD, IMEXD_BODY_MAX + 1);
	check(run_until_closed(fd, 3000),
	      "raft: bound, other types still stop at IMEXD_BODY_MAX");
	close(fd);

	imexd_net_free(na);
	imexd_net_free(nb);
}

/* A context from DIR/FILE.pem and .key, for node @node. */
static struct imexd_tls *mktls(const char *dir, const char *name,
			       const char *node)
{
	char ca[512], cert[512], key[512], err[1024];
	struct imexd_tls *tls = NULL;

	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(cert, sizeof(cert), "%s/%s.pem", dir, name);
	snprintf(key, sizeof(key), "%s/%s.key", dir, name);
	if (imexd_tls_new(&tls, node, ca, cert, key, err, sizeof(err)) < 0) {
		fprintf(stderr, "tls %s: %s\n", name, err);
		exit(2);
	}
	return tls;
}

static void test_tls(const char *dir)
{
	struct side a = { .name = "a" }, b = { .name = "b" }, r = { .name = "r" };
	struct imexd_tls *ta = mktls(dir, "a", "a"), *tb = mktls(dir, "b", "b");
	struct imexd_tls *tr = NULL;
	struct imexd_net *na = mknet(&a, 0, ta), *nb = mknet(&b, 0, tb);
	struct imexd_net *nr, *np;
	char ca[512], cert[512], key[512], err[1024], ab[64], ar[64];
	uint8_t *f;
	size_t len;
	int e;

	addr_of(nb, ab, sizeof(ab));
	check(imexd_net_connect(na, ab) == 0 &&
	      run_until(&a.up, 1, 5000) && run_until(&b.up, 1, 5000),
	      "TLS: both sides up after the mutual handshake");
	hello(IMEXD_MSG_HELLO, "a", &f, &len);
	imexd_net_send(na, a.last_conn, f, len);
	free(f);
	check(run_until(&b.msgs, 1, 3000) && b.last_type == IMEXD_MSG_HELLO,
	      "TLS: HELLO arrives");

	/* A node whose certificate another CA signed. */
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(cert, sizeof(cert), "%s/rogue.pem", dir);
	snprintf(key, sizeof(key), "%s/rogue.key", dir);
	e = imexd_tls_new(&tr, "rogue", ca, cert, key, err, sizeof(err));
	check(e == 0, "TLS: rogue context loads (%s)", e ? err : "ok");
	nr = mknet(&r, 0, tr);
	addr_of(nr, ar, sizeof(ar));
	unsigned bup = b.up;

	/* TLS 1.3: the client finishes before the server has checked it, so
	 * the rogue side may see "up" briefly; the server must never. */
	check(imexd_net_connect(nr, ab) == 0 &&
	      (run_until(&r.failed, 1, 5000) || run_until(&r.down, 1, 5000)),
	      "TLS: a client with a certificate from another CA is dropped");
	run_for(300);
	check(b.up == bup, "TLS: ... and never reaches the server's owner");
	unsigned afail = a.failed, aup = a.up, rup = r.up;

	check(imexd_net_connect(na, ar) == 0 &&
	      run_until(&a.failed, afail + 1, 5000) && a.up == aup,
	      "TLS: a server with a certificate from another CA is refused (conn_failed)");
	run_for(300);
	check(r.up == rup, "TLS: ... and the rogue server's owner never sees us");

	/* A plain TCP peer talking to a TLS server. */
	struct side p = { .name = "p" };

	np = mknet(&p, 0, NULL);
	check(imexd_net_connect(np, ab) == 0 &&
	      run_until(&p.up, 1, 3000), "plain client connects at the TCP level");
	hello(IMEXD_MSG_HELLO, "p", &f, &len);
	imexd_net_send(np, p.last_conn, f, len);
	free(f);
	check(run_until(&p.down, 1, 5000) && b.up == bup && b.msgs == 1,
	      "TLS: a plain-TCP peer is dropped, nothing reaches the owner");

	/* Reload: once, then throttled. */
	e = imexd_tls_reload(tb, 1000000, NULL, NULL, NULL, err, sizeof(err));
	check(e == 0, "TLS reload works (%s)", e ? err : "ok");
	e = imexd_tls_reload(tb, 1000000 + 100, NULL, NULL, NULL, err, sizeof(err));
	check(e == -EAGAIN, "TLS reload within 5 s is throttled");
	e = imexd_tls_reload(tb, 1000000 + 6000, ca, cert, "/nonexistent", err, sizeof(err));
	check(e < 0 && strstr(err, "TLS_"), "TLS reload of a bad file keeps the old context (%s)", err);
	check(imexd_net_connect(na, ab) == 0 &&
	      run_until(&a.up, 2, 5000), "TLS: new connections after reloads still verify");

	imexd_net_free(na);
	imexd_net_free(nb);
	imexd_net_free(nr);
	imexd_net_free(np);
	imexd_tls_free(ta);
	imexd_tls_free(tb);
	imexd_tls_free(tr);
}

/* A frame of @type with only the header fields set (HEARTBEAT, IMPORT_REQ,
 * EXPORT_REVOKE... decode with all-zero bodies). */
static void send_plain(struct imexd_net *net, uint64_t conn, uint8_t type)
{
	struct imexd_msg m;
	uint8_t *f = NULL;
	size_t len;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.sender_uuid[0] = 1;
	m.sender_epoch = 42;
	m.domain_uuid[0] = 9;
	if (type == IMEXD_MSG_IMPORT_REQ)
		m.u.import_req.handle_id = 7;
	if (imexd_msg_encode(&m, &f, &len) < 0) {
		fprintf(stderr, "cannot encode message type %u\n", type);
		exit(2);
	}
	imexd_net_send(net, conn, f, len);
	free(f);
}

static void send_hello(struct imexd_net *net, uint64_t conn, uint8_t type,
		       const char *name)
{
	uint8_t *f;
	size_t len;

	hello(type, name, &f, &len);
	imexd_net_send(net, conn, f, len);
	free(f);
}

/*
 * With TLS a connection is bound to the name its certificate carries: a HELLO
 * (or HELLO_ACK) claiming another name is refused with nothing behind it
 * reaching the owner, and a connection cannot change names later.
 */
static void test_tls_names(const char *dir)
{
	struct side a = { .name = "a" }, x = { .name = "x" };
	struct imexd_tls *ta = mktls(dir, "a", "a"), *tb = mktls(dir, "b", "b");
	struct imexd_net *na = mknet(&a, 0, ta), *nx = mknet(&x, 0, tb);
	char aa[64], ax[64];
	unsigned msgs, down, xdown;

	addr_of(na, aa, sizeof(aa));
	addr_of(nx, ax, sizeof(ax));

	/* b's certificate, claiming to be a (an existing member), then
	 * domain and import traffic pipelined behind the HELLO. */
	msgs = a.msgs;
	down = a.down;
	xdown = x.down;
	check(imexd_net_connect(nx, aa) == 0 && run_until(&x.up, 1, 5000),
	      "TLS names: b's certificate connects");
	send_hello(nx, x.up_conn, IMEXD_MSG_HELLO, "a");
	send_plain(nx, x.up_conn, IMEXD_MSG_HEARTBEAT);
	send_plain(nx, x.up_conn, IMEXD_MSG_EXPORT_REVOKE);
	send_plain(nx, x.up_conn, IMEXD_MSG_IMPORT_REQ);
	check(run_until(&x.down, xdown + 1, 5000) &&
	      run_until(&a.down, down + 1, 5000),
	      "TLS names: a HELLO claiming 'a' with b's certificate is refused (connection closed)");
	check(a.msgs == msgs,
	      "TLS names: ... and nothing it sent reaches the owner (%u messages)",
	      a.msgs - msgs);
	check(imexd_net_claims_refused(na) == 1,
	      "TLS names: ... and it is counted (%llu), not reported as 'a'",
	      (unsigned long long)imexd_net_claims_refused(na));

	/* Names are case-sensitive; OpenSSL's match is not. */
	msgs = a.msgs;
	xdown = x.down;
	check(imexd_net_connect(nx, aa) == 0 && run_until(&x.up, 2, 5000),
	      "TLS names: b connects again");
	send_hello(nx, x.up_conn, IMEXD_MSG_HELLO, "B");
	check(run_until(&x.down, xdown + 1, 5000) && a.msgs == msgs,
	      "TLS names: a HELLO claiming 'B' with b's certificate is refused");

	/* The same certificate under its own name works... */
	msgs = a.msgs;
	check(imexd_net_connect(nx, aa) == 0 && run_until(&x.up, 3, 5000),
	      "TLS names: b connects again");
	send_hello(nx, x.up_conn, IMEXD_MSG_HELLO, "b");
	send_plain(nx, x.up_conn, IMEXD_MSG_HEARTBEAT);
	check(run_until(&a.msgs, msgs + 2, 5000) && a.last_type == IMEXD_MSG_HEARTBEAT,
	      "TLS names: a HELLO claiming 'b' with b's certificate is accepted, traffic follows");
	/* ... but it cannot take another name on that connection. */
	msgs = a.msgs;
	xdown = x.down;
	send_hello(nx, x.up_conn, IMEXD_MSG_HELLO, "a");
	send_plain(nx, x.up_conn, IMEXD_MSG_IMPORT_REQ);
	check(run_until(&x.down, xdown + 1, 5000) && a.msgs == msgs,
	      "TLS names: a second HELLO naming 'a' on b's connection closes it, nothing reaches the owner");

	/* Outbound: the node we dial answers HELLO_ACK under a name its
	 * certificate does not carry. */
	msgs = a.msgs;
	xdown = x.down;
	check(imexd_net_connect(na, ax) == 0 && run_until(&x.up, 4, 5000),
	      "TLS names: a dials b");
	send_hello(nx, x.up_conn, IMEXD_MSG_HELLO_ACK, "c");
	check(run_until(&x.down, xdown + 1, 5000) && a.msgs == msgs,
	      "TLS names: a HELLO_ACK claiming 'c' from b's certificate is refused");

	/* This node's own certificate must name it, at start and reload. */
	struct imexd_tls *t = NULL;
	char ca[512], cert[512], key[512], err[1024];
	int e;

	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(cert, sizeof(cert), "%s/b.pem", dir);
	snprintf(key, sizeof(key), "%s/b.key", dir);
	e = imexd_tls_new(&t, "a", ca, cert, key, err, sizeof(err));
	check(e == -EINVAL && !t && strstr(err, "names 'b', not this node 'a'"),
	      "TLS names: node a refuses to start with b's certificate (%s)", err);
	snprintf(cert, sizeof(cert), "%s/cnonly.pem", dir);
	snprintf(key, sizeof(key), "%s/cnonly.key", dir);
	e = imexd_tls_new(&t, "a", ca, cert, key, err, sizeof(err));
	check(e == -EINVAL && !t && strstr(err, "no subjectAltName"),
	      "TLS names: a certificate with CN=a and no subjectAltName does not name node a (%s)",
	      err);
	snprintf(cert, sizeof(cert), "%s/b.pem", dir);
	snprintf(key, sizeof(key), "%s/b.key", dir);
	e = imexd_tls_reload(ta, 1000000, ca, cert, key, err, sizeof(err));
	check(e == -EINVAL && strstr(err, "not this node 'a'"),
	      "TLS names: reloading b's certificate on node a is refused (%s)", err);

	imexd_net_free(na);
	imexd_net_free(nx);
	imexd_tls_free(ta);
	imexd_tls_free(tb);
}

/* "tls:n1,n2" or "plain:" for what @net proved about @conn. */
static const char *auth_str(const struct imexd_net *net, uint64_t conn,
			    char *buf, size_t len)
{
	struct imexd_peers_auth au;
	size_t off;

	if (imexd_net_conn_auth(net, conn, &au) < 0)
		return "(not up)";
	off = (size_t)snprintf(buf, len, "%s:", au.tls ? "tls" : "plain");
	for (unsigned i = 0; i < au.n_names && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i ? "," : "", au.names[i]);
	return buf;
}

/*
 * A TLS client outside imexd presenting DIR/NAME.pem (one imexd would not
 * load), handshaking with 127.0.0.1:@port while the loop runs.
 */
static SSL *raw_tls_connect(const char *dir, const char *name, uint16_t port,
			    SSL_CTX **ctxp, int *fdp)
{
	char ca[512], cert[512], key[512];
	struct timespec t0, t;
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl;
	int fd;

	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(cert, sizeof(cert), "%s/%s.pem", dir, name);
	snprintf(key, sizeof(key), "%s/%s.key", dir, name);
	if (!ctx || SSL_CTX_use_certificate_file(ctx, cert, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		fprintf(stderr, "raw TLS client: cannot load %s\n", cert);
		exit(2);
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	fd = raw_connect(port);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	ssl = SSL_new(ctx);
	if (!ssl || SSL_set_fd(ssl, fd) != 1) {
		fprintf(stderr, "raw TLS client: out of memory\n");
		exit(2);
	}
	*ctxp = ctx;
	*fdp = fd;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int r = SSL_connect(ssl), e;

		if (r == 1)
			return ssl;
		e = SSL_get_error(ssl, r);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) ||
		    t.tv_sec - t0.tv_sec > 5) {
			SSL_free(ssl);
			return NULL;
		}
		sd_event_run(ev, 10 * 1000ULL);
	}
}

/*
 * The names a peer's certificate carries reach the owner, on both ends:
 * its subjectAltName DNS entries that are node names, at most
 * IMEXD_PEERS_CERT_NAMES_MAX; none without TLS.
 */
static void test_tls_auth(const char *dir)
{
	struct side a = { .name = "a" }, b = { .name = "b" }, m = { .name = "m" };
	struct side n = { .name = "n" }, p = { .name = "p" }, q = { .name = "q" };
	struct imexd_tls *ta = mktls(dir, "a", "a"), *tb = mktls(dir, "b", "b");
	struct imexd_tls *tm = mktls(dir, "two", "m2");
	struct imexd_tls *tn = mktls(dir, "many", "n5");
	struct imexd_net *na = mknet(&a, 0, ta), *nb = mknet(&b, 0, tb);
	struct imexd_net *nm = mknet(&m, 0, tm), *nn = mknet(&n, 0, tn);
	struct imexd_net *np = mknet(&p, 0, NULL), *nq = mknet(&q, 0, NULL);
	char addr[64], s1[640], s2[640];
	SSL_CTX *ctx;
	SSL *ssl;
	int fd;

	check(imexd_net_connect(na, addr_of(nb, addr, sizeof(addr))) == 0 &&
	      run_until(&a.up, 1, 5000) && run_until(&b.up, 1, 5000) &&
	      !strcmp(auth_str(na, a.up_conn, s1, sizeof(s1)), "tls:b") &&
	      !strcmp(auth_str(nb, b.up_conn, s2, sizeof(s2)), "tls:a"),
	      "TLS auth: a sees %s, b sees %s", s1, s2);
	check(imexd_net_connect(na, addr_of(nm, addr, sizeof(addr))) == 0 &&
	      run_until(&a.up, 2, 5000) && run_until(&m.up, 1, 5000) &&
	      !strcmp(auth_str(na, a.up_conn, s1, sizeof(s1)), "tls:m1,m2") &&
	      !strcmp(auth_str(nm, m.up_conn, s2, sizeof(s2)), "tls:a"),
	      "TLS auth: a certificate with two names: a sees %s, it sees %s",
	      s1, s2);
	check(imexd_net_connect(nn, addr_of(na, addr, sizeof(addr))) == 0 &&
	      run_until(&n.up, 1, 5000) && run_until(&a.up, 3, 5000) &&
	      !strcmp(auth_str(na, a.up_conn, s1, sizeof(s1)),
		      "tls:n0,n1,n2,n3,n4,n5,n6,n7") &&
	      !strcmp(auth_str(nn, n.up_conn, s2, sizeof(s2)), "tls:a"),
	      "TLS auth: at most %d names, each once, no IP, wildcard or invalid name: a sees %s, it sees %s",
	      IMEXD_PEERS_CERT_NAMES_MAX, s1, s2);

	/* CN=a but no subjectAltName: verified, yet it names no node. */
	ssl = raw_tls_connect(dir, "cnonly", imexd_net_listen_port(na), &ctx, &fd);
	check(ssl && run_until(&a.up, 4, 5000) &&
	      !strcmp(auth_str(na, a.up_conn, s1, sizeof(s1)), "tls:"),
	      "TLS auth: a certificate without subjectAltName names nothing (%s)",
	      s1);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);

	check(imexd_net_connect(np, addr_of(nq, addr, sizeof(addr))) == 0 &&
	      run_until(&p.up, 1, 3000) && run_until(&q.up, 1, 3000) &&
	      !strcmp(auth_str(np, p.up_conn, s1, sizeof(s1)), "plain:") &&
	      !strcmp(auth_str(nq, q.up_conn, s2, sizeof(s2)), "plain:"),
	      "plain auth: no TLS, no names (%s, %s)", s1, s2);
	check(!strcmp(auth_str(np, 999999, s1, sizeof(s1)), "(not up)"),
	      "auth of an unknown connection: -ENOTCONN");

	imexd_net_free(na);
	imexd_net_free(nb);
	imexd_net_free(nm);
	imexd_net_free(nn);
	imexd_net_free(np);
	imexd_net_free(nq);
	imexd_tls_free(ta);
	imexd_tls_free(tb);
	imexd_tls_free(tm);
	imexd_tls_free(tn);
}

int main(int argc, char **argv)
{
	sigset_t mask;

	if (argc != 2) {
		fprintf(stderr, "usage: test_net CERTDIR\n");
		return 2;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGPIPE);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	imexd_log_set_level(getenv("DEBUG") ? LOG_DEBUG : LOG_ERR);
	if (sd_event_new(&ev) < 0)
		return 2;
	test_split();
	test_plain();
	test_bounds();
	test_raft_bound();
	test_tls(argv[1]);
	test_tls_names(argv[1]);
	test_tls_auth(argv[1]);
	sd_event_unref(ev);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
