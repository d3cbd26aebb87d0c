// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile imexd peer for tests/imexd/vm/pair-guest.sh: it speaks the peer
 * protocol (wire.h, raftwire.h) to a real imexd, optionally over mutual TLS
 * with a certificate of its own, and reports what the daemon did.
 *
 *   hostile [--tls CA CERT KEY] HOST:PORT STEP...
 *
 * Steps, in order, on one connection:
 *   hello NAME          say HELLO as node NAME (this imexd's protocol)
 *   raft TERM ID        a RAFT frame: RequestVote, term TERM, candidate ID
 *   import UUID HANDLE  IMPORT_REQ for domain UUID (8-4-4-4-12 hex)
 *   bigraft             a RAFT frame header announcing a 2 MiB body
 *   refused             then wait (10 s at most) for the daemon to close
 *                       the connection without a HELLO_ACK or any answer
 * or alone:
 *   junk N PREFIX       N connections one after the other, each saying
 *                       HELLO as PREFIX<i> and refused (as "refused")
 *
 * Prints one line per outcome.  Exit 0 when every "refused" held, 1 when
 * the daemon answered (HELLO_ACK, IMPORT_RESP, anything), 2 for a local
 * problem, 3 when the connection stayed open.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "imex_uuid.h"
#include "raftwire.h"
#include "wire.h"

#define WAIT_MS		10000
#define BIG_BODY	(2u << 20)

static SSL_CTX *ctx;
static uint8_t uuid[16];
static uint64_t epoch;

struct peer {
	int fd;
	SSL *ssl;
	bool gone;		/* the daemon hung up while we were sending */
};

static void die(const char *what)
{
	fprintf(stderr, "hostile: %s\n", what);
	ERR_print_errors_fp(stderr);
	exit(2);
}

static void tls_init(const char *ca, const char *cert, const char *key)
{
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
	    SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
		die("cannot load the TLS credentials");
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
}

static int dial(const char *hostport, struct peer *p)
{
	char host[256], *port;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;

	snprintf(host, sizeof(host), "%s", hostport);
	port = strrchr(host, ':');
	if (!port)
		die("address must be HOST:PORT");
	*port++ = '\0';
	if (getaddrinfo(host, port, &hints, &ai))
		die("cannot resolve the address");
	p->fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (p->fd < 0 || connect(p->fd, ai->ai_addr, ai->ai_addrlen)) {
		fprintf(stderr, "hostile: cannot connect to %s: %m\n", hostport);
		exit(2);
	}
	freeaddrinfo(ai);
	p->ssl = NULL;
	p->gone = false;
	if (!ctx)
		return 0;
	p->ssl = SSL_new(ctx);
	if (!p->ssl || SSL_set_fd(p->ssl, p->fd) != 1)
		die("SSL_new");
	if (SSL_connect(p->ssl) != 1)
		die("TLS handshake failed");
	return 0;
}

static void hang_up(struct peer *p)
{
	if (p->ssl)
		SSL_free(p->ssl);
	close(p->fd);
}

/* A send the daemon cut short is its answer: "refused" reports it. */
static void put(struct peer *p, const void *buf, size_t len)
{
	if (p->gone)
		return;
	if (p->ssl ? SSL_write(p->ssl, buf, (int)len) != (int)len :
	    write(p->fd, buf, len) != (ssize_t)len)
		p->gone = true;
}

static void send_msg(struct peer *p, struct imexd_msg *m)
{
	uint8_t *f;
	size_t len;

	memcpy(m->sender_uuid, uuid, 16);
	m->sender_epoch = epoch;
	if (imexd_msg_encode(m, &f, &len))
		die("cannot encode a message");
	put(p, f, len);
	free(f);
}

static void send_hello(struct peer *p, const char *name)
{
	struct imexd_msg m = { .type = IMEXD_MSG_HELLO };

	m.u.hello.proto_min = IMEXD_PROTO_VERSION;
	m.u.hello.proto_max = IMEXD_PROTO_VERSION;
	snprintf(m.u.hello.node_name, sizeof(m.u.hello.node_name), "%s", name);
	send_msg(p, &m);
}

static void send_vote(struct peer *p, uint64_t term, uint64_t id)
{
	struct raft_message rm = { .type = RAFT_REQUEST_VOTE };
	struct imexd_msg m = { .type = IMEXD_MSG_RAFT };
	uint8_t *data;
	size_t len;

	rm.request_vote.version = IMEXD_RAFTWIRE_V_REQUEST_VOTE;
	rm.request_vote.term = term;
	rm.request_vote.candidate_id = id;
	rm.request_vote.last_log_index = 1000000;
	rm.request_vote.last_log_term = term;
	rm.request_vote.disrupt_leader = true;
	if (imexd_raftwire_encode(&rm, &data, &len))
		die("cannot encode a RequestVote");
	m.u.raft.len = (uint32_t)len;
	m.u.raft.data = data;
	send_msg(p, &m);
	free(data);
}

static void send_import(struct peer *p, const char *domain, uint64_t handle)
{
	struct imexd_msg m = { .type = IMEXD_MSG_IMPORT_REQ };

	if (imex_uuid_parse(domain, strlen(domain), m.domain_uuid))
		die("bad domain UUID");
	m.u.import_req.tag = 1;
	m.u.import_req.handle_id = handle;
	m.u.import_req.channel_id = 0;
	send_msg(p, &m);
}

/* Only the header: the daemon must judge the frame before the body. */
static void send_big_raft(struct peer *p)
{
	uint8_t h[IMEXD_HEADER_LEN] = { 0x49, 0x4d, 0x45, 0x58,
					IMEXD_FRAME_VERSION, IMEXD_MSG_RAFT };

	h[8] = (uint8_t)(BIG_BODY >> 24);
	h[9] = (uint8_t)(BIG_BODY >> 16);
	h[10] = (uint8_t)(BIG_BODY >> 8);
	h[11] = (uint8_t)BIG_BODY;
	memcpy(h + 28, uuid, 16);
	put(p, h, sizeof(h));
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Wait for the daemon to hang up: 0 closed with nothing said, 1 it sent a
 * frame (printed), 3 still open after WAIT_MS.
 */
static int expect_refused(struct peer *p, const char *what, bool quiet)
{
	uint8_t buf[4096];
	size_t have = 0;
	struct timespec t0;
	long left;

	if (p->gone) {
		if (!quiet)
			printf("%s: closed by the daemon while sending, nothing answered\n",
			       what);
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
		int n;

		if (!p->ssl || !SSL_pending(p->ssl)) {
			left = WAIT_MS - ms_since(&t0);
			if (left <= 0 || poll(&pfd, 1, (int)left) == 0) {
				printf("%s: still open after %d ms\n", what, WAIT_MS);
				return 3;
			}
		}
		n = p->ssl ? SSL_read(p->ssl, buf + have, (int)(sizeof(buf) - have)) :
		    (int)read(p->fd, buf + have, sizeof(buf) - have);
		if (n <= 0) {
			if (p->ssl && n < 0 &&
			    SSL_get_error(p->ssl, n) == SSL_ERROR_WANT_READ)
				continue;
			if (!quiet)
				printf("%s: closed by the daemon, nothing answered\n",
				       what);
			return 0;
		}
		have += (size_t)n;
		if (have >= IMEXD_HEADER_LEN) {
			printf("%s: the daemon answered with a %s frame\n", what,
			       imexd_msg_type_name(buf[5]));
			return 1;
		}
	}
}

static int junk(const char *addr, unsigned n, const char *prefix)
{
	unsigned i, refused = 0;
	char name[IMEX_NAME_MAX];

	for (i = 0; i < n; i++) {
		struct peer p;

		dial(addr, &p);
		snprintf(name, sizeof(name), "%s%u", prefix, i);
		send_hello(&p, name);
		if (!expect_refused(&p, name, true))
			refused++;
		hang_up(&p);
	}
	printf("junk: %u of %u names refused\n", refused, n);
	return refused == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct peer p;
	int i = 1, rc = 0, r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (getrandom(uuid, sizeof(uuid), 0) != sizeof(uuid) ||
	    getrandom(&epoch, sizeof(epoch), 0) != sizeof(epoch))
		die("getrandom");
	if (argc > 4 && !strcmp(argv[1], "--tls")) {
		tls_init(argv[2], argv[3], argv[4]);
		i = 5;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: hostile [--tls CA CERT KEY] HOST:PORT STEP...\n");
		return 2;
	}
	if (!strcmp(argv[i + 1], "junk")) {
		if (argc - i != 4)
			die("junk N PREFIX");
		return junk(argv[i], (unsigned)strtoul(argv[i + 2], NULL, 10),
			    argv[i + 3]);
	}
	dial(argv[i], &p);
	for (i++; i < argc; i++) {
		const char *s = argv[i];

		if (!strcmp(s, "hello") && i + 1 < argc) {
			send_hello(&p, argv[++i]);
		} else if (!strcmp(s, "raft") && i + 2 < argc) {
			send_vote(&p, strtoull(argv[i + 1], NULL, 10),
				  strtoull(argv[i + 2], NULL, 10));
			i += 2;
		} else if (!strcmp(s, "import") && i + 2 < argc) {
			send_import(&p, argv[i + 1],
				    strtoull(argv[i + 2], NULL, 10));
			i += 2;
		} else if (!strcmp(s, "bigraft")) {
			send_big_raft(&p);
		} else if (!strcmp(s, "refused")) {
			r = expect_refused(&p, "connection", false);
			if (r)
				rc = r;
		} else {
			fprintf(stderr, "hostile: unknown step '%s'\n", s);
			return 2;
		}
	}
	hang_up(&p);
	return rc;
}
