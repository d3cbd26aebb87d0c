// SPDX-License-Identifier: GPL-2.0
/*
 * imexd's connection layer over mutual TLS 1.3: a peer from another CA is
 * refused, and a peer speaks only for the node names its certificate
 * proves (imexd_net_conn_auth()) (see test_net.c).
 */
#include "test_net.h"

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

void test_tls(const char *dir)
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
void test_tls_names(const char *dir)
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
void test_tls_auth(const char *dir)
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
