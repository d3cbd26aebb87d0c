// SPDX-License-Identifier: GPL-2.0
/*
 * imexd's connection layer against hostile peers: a header announcing too
 * large a body, one host's connections waiting for HELLO, a flood, output
 * nobody reads; and the larger bound RAFT frames have (see test_net.c).
 */
#include "test_net.h"

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

void test_bounds(void)
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

/* A raw connection to @nb (side @b, port @pb) that @nb has bound; *@up
 * (if asked) says whether it came up. */
static int raw_bound(struct side *b, struct imexd_net *nb, uint16_t pb, bool *up)
{
	unsigned ups = b->up;
	int fd = raw_connect(pb);
	bool ok = run_until(&b->up, ups + 1, 3000);

	if (up)
		*up = ok;
	imexd_net_conn_bind(nb, b->up_conn);
	return fd;
}

/*
 * RAFT frames above IMEXD_BODY_MAX (snapshots) pass only on a connection
 * the owner bound; before that the 1 MiB bound holds.
 */
void test_raft_bound(void)
{
	struct side a = { .name = "a" }, b = { .name = "b" };
	struct imexd_net *na = mknet(&a, 0, NULL), *nb = mknet(&b, 0, NULL);
	uint16_t pb = imexd_net_listen_port(nb);
	unsigned msgs, downs, ups;
	uint8_t *f;
	size_t len;
	char ab[64];
	bool up;
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
	fd = raw_bound(&b, nb, pb, &up);
	check(up, "raft: a raw connection is up");
	raw_header(fd, IMEXD_MSG_RAFT, IMEXD_RAFT_BODY_MAX);
	check(!run_until_closed(fd, 300),
	      "raft: bound, a header announcing IMEXD_RAFT_BODY_MAX waits for its body");
	close(fd);
	fd = raw_bound(&b, nb, pb, NULL);
	raw_header(fd, IMEXD_MSG_RAFT, IMEXD_RAFT_BODY_MAX + 1);
	check(run_until_closed(fd, 3000),
	      "raft: bound, a header announcing IMEXD_RAFT_BODY_MAX + 1 closes the connection");
	close(fd);
	fd = raw_bound(&b, nb, pb, NULL);
	raw_header(fd, IMEXD_MSG_FORWARD, IMEXD_BODY_MAX + 1);
	check(run_until_closed(fd, 3000),
	      "raft: bound, other types still stop at IMEXD_BODY_MAX");
	close(fd);

	imexd_net_free(na);
	imexd_net_free(nb);
}

