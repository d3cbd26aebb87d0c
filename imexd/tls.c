// SPDX-License-Identifier: GPL-2.0
/* Mutual TLS 1.3 between imexd peers, non-blocking, with OpenSSL. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include "peers.h"
#include "tls.h"
#include "wire.h"

/*
 * A node is named by a subjectAltName DNS entry, compared exactly.  Never by
 * the subject CN: RFC 6125 retired that, and CAs put free text there (an
 * old certificate with CN=a and no SAN must not silently name node a).  No
 * wildcards: one certificate, one node.
 */
#define NAME_FLAGS	(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | \
			 X509_CHECK_FLAG_NO_WILDCARDS)

struct imexd_tls {
	SSL_CTX *ctx;			/* for new connections */
	char ca[4096], cert[4096], key[4096];
	char node[256];			/* this node's name */
	uint64_t last_reload_ms;
	bool reloaded;
	char desc[512];
};

struct imexd_tls_conn {
	SSL *ssl;
};

/* The OpenSSL error queue as one line, emptied. */
static void ssl_errors(char *buf, size_t len)
{
	unsigned long e;
	size_t off = 0;

	if (!len)
		return;
	buf[0] = 0;
	while ((e = ERR_get_error()) != 0) {
		char one[256];

		ERR_error_string_n(e, one, sizeof(one));
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? "; " : "", one);
	}
	if (!buf[0])
		snprintf(buf, len, "no further detail from OpenSSL");
}

/* Does @x name node @name (a DNS subjectAltName equal to it)? */
static bool cert_names(X509 *x, const char *name)
{
	char *matched = NULL;
	bool ok;

	if (X509_check_host(x, name, strlen(name), NAME_FLAGS, &matched) != 1)
		return false;
	/* OpenSSL compares without case; node names are case-sensitive. */
	ok = matched && !strcmp(matched, name);
	OPENSSL_free(matched);
	return ok;
}

/* The DNS names @x carries, "a, b", for messages. */
static void cert_dns_names(X509 *x, char *buf, size_t len)
{
	GENERAL_NAMES *gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL,
					       NULL);
	size_t off = 0;
	int i, j;

	if (!len)
		return;
	buf[0] = 0;
	for (i = 0; gens && i < sk_GENERAL_NAME_num(gens); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, i);
		const unsigned char *d;
		int n;

		if (g->type != GEN_DNS)
			continue;
		d = ASN1_STRING_get0_data(g->d.dNSName);
		n = ASN1_STRING_length(g->d.dNSName);
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s'",
						off ? ", " : "");
		/* The peer's bytes: printable ASCII, else \xHH. */
		for (j = 0; d && j < n && j < 64 && off < len; j++) {
			if (d[j] >= 0x20 && d[j] < 0x7f && d[j] != '\\')
				off += (size_t)snprintf(buf + off, len - off,
							"%c", d[j]);
			else
				off += (size_t)snprintf(buf + off, len - off,
							"\\x%02x", d[j]);
		}
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "'");
	}
	GENERAL_NAMES_free(gens);
	if (!buf[0])
		snprintf(buf, len, "no node name (no subjectAltName DNS entry)");
}

static void describe_cert(SSL_CTX *ctx, char *buf, size_t len)
{
	X509 *x = SSL_CTX_get0_certificate(ctx);
	char subject[256] = "?", until[64] = "?";
	BIO *bio;

	if (!x) {
		snprintf(buf, len, "no certificate");
		return;
	}
	X509_NAME_oneline(X509_get_subject_name(x), subject, sizeof(subject));
	bio = BIO_new(BIO_s_mem());
	if (bio) {
		int n;

		if (ASN1_TIME_print(bio, X509_get0_notAfter(x))) {
			n = BIO_read(bio, until, sizeof(until) - 1);
			until[n > 0 ? n : 0] = 0;
		}
		BIO_free(bio);
	}
	snprintf(buf, len, "certificate %s, valid until %s", subject, until);
}

static SSL_CTX *ctx_load(const char *node, const char *ca, const char *cert,
			 const char *key, char *err, size_t errlen)
{
	STACK_OF(X509_NAME) *names;
	char detail[512];
	X509 *own;
	SSL_CTX *ctx;

	ERR_clear_error();
	ctx = SSL_CTX_new(TLS_method());
	if (!ctx) {
		ssl_errors(detail, sizeof(detail));
		snprintf(err, errlen, "TLS: cannot create a context: %s", detail);
		return NULL;
	}
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION)) {
		ssl_errors(detail, sizeof(detail));
		snprintf(err, errlen, "TLS: this OpenSSL cannot do TLS 1.3 only: %s",
			 detail);
		goto fail;
	}
	/* Every connection verifies its peer in full: no resumption. */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
			 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		ssl_errors(detail, sizeof(detail));
		snprintf(err, errlen, "TLS_CERT_FILE %s: cannot load the certificate (%s): check the path and that it is PEM",
			 cert, detail);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		ssl_errors(detail, sizeof(detail));
		snprintf(err, errlen, "TLS_KEY_FILE %s: cannot load the private key (%s): check the path and that it is an unencrypted PEM key",
			 key, detail);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		ssl_errors(detail, sizeof(detail));
		snprintf(err, errlen, "TLS_KEY_FILE %s does not belong to TLS_CERT_FILE %s: install the matching pair",
			 key, cert);
		goto fail;
	}
	own = SSL_CTX_get0_certificate(ctx);
	if (!own || !cert_names(own, node)) {
		if (own)
			cert_dns_names(own, detail, sizeof(detail));
		snprintf(err, errlen, "TLS_CERT_FILE %s names %s, not this node '%s': issue one for it (imexctl tls issue DIR %s)",
			 cert, own ? detail : "nothing", node, node);
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		ssl_errors(detail, sizeof(detail));
		snprintf(err, errlen, "TLS_CA_FILE %s: cannot load the CA certificate (%s): check the path and that it is PEM",
			 ca, detail);
		goto fail;
	}
	names = SSL_load_client_CA_file(ca);
	if (names)
		SSL_CTX_set_client_CA_list(ctx, names);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
			   NULL);
	SSL_CTX_set_verify_depth(ctx, 8);
	ERR_clear_error();
	return ctx;
fail:
	SSL_CTX_free(ctx);
	ERR_clear_error();
	return NULL;
}

static int copy_path(char *dst, size_t len, const char *src)
{
	if (!src || !*src || strlen(src) >= len)
		return -EINVAL;
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

int imexd_tls_new(struct imexd_tls **out, const char *node_name,
		  const char *ca_file, const char *cert_file,
		  const char *key_file, char *err, size_t errlen)
{
	struct imexd_tls *tls;

	*out = NULL;
	tls = calloc(1, sizeof(*tls));
	if (!tls) {
		snprintf(err, errlen, "TLS: out of memory");
		return -ENOMEM;
	}
	if (copy_path(tls->ca, sizeof(tls->ca), ca_file) ||
	    copy_path(tls->cert, sizeof(tls->cert), cert_file) ||
	    copy_path(tls->key, sizeof(tls->key), key_file)) {
		snprintf(err, errlen, "TLS=yes needs TLS_CA_FILE, TLS_CERT_FILE and TLS_KEY_FILE");
		free(tls);
		return -EINVAL;
	}
	if (copy_path(tls->node, sizeof(tls->node), node_name)) {
		snprintf(err, errlen, "TLS=yes needs NODE_NAME");
		free(tls);
		return -EINVAL;
	}
	tls->ctx = ctx_load(tls->node, tls->ca, tls->cert, tls->key, err,
			    errlen);
	if (!tls->ctx) {
		free(tls);
		return -EINVAL;
	}
	describe_cert(tls->ctx, tls->desc, sizeof(tls->desc));
	*out = tls;
	return 0;
}

void imexd_tls_free(struct imexd_tls *tls)
{
	if (!tls)
		return;
	SSL_CTX_free(tls->ctx);
	free(tls);
}

int imexd_tls_reload(struct imexd_tls *tls, uint64_t now_ms,
		     const char *ca_file, const char *cert_file,
		     const char *key_file, char *err, size_t errlen)
{
	const char *ca = ca_file && *ca_file ? ca_file : tls->ca;
	const char *cert = cert_file && *cert_file ? cert_file : tls->cert;
	const char *key = key_file && *key_file ? key_file : tls->key;
	SSL_CTX *ctx;

	if (tls->reloaded && now_ms < tls->last_reload_ms + IMEXD_TLS_RELOAD_MIN_MS) {
		snprintf(err, errlen, "TLS credentials were reloaded less than %d s ago: send SIGUSR1 again later",
			 IMEXD_TLS_RELOAD_MIN_MS / 1000);
		return -EAGAIN;
	}
	tls->reloaded = true;
	tls->last_reload_ms = now_ms;
	if (strlen(ca) >= sizeof(tls->ca) || strlen(cert) >= sizeof(tls->cert) ||
	    strlen(key) >= sizeof(tls->key)) {
		snprintf(err, errlen, "TLS: a file name is too long");
		return -ENAMETOOLONG;
	}
	ctx = ctx_load(tls->node, ca, cert, key, err, errlen);
	if (!ctx)
		return -EINVAL;
	/* Sessions already up hold their own reference to the old context. */
	SSL_CTX_free(tls->ctx);
	tls->ctx = ctx;
	if (ca != tls->ca)
		memmove(tls->ca, ca, strlen(ca) + 1);
	if (cert != tls->cert)
		memmove(tls->cert, cert, strlen(cert) + 1);
	if (key != tls->key)
		memmove(tls->key, key, strlen(key) + 1);
	describe_cert(tls->ctx, tls->desc, sizeof(tls->desc));
	return 0;
}

void imexd_tls_describe(const struct imexd_tls *tls, char *buf, size_t len)
{
	snprintf(buf, len, "%s", tls->desc);
}

struct imexd_tls_conn *imexd_tls_conn_new(struct imexd_tls *tls, int fd,
					  bool server)
{
	struct imexd_tls_conn *tc = calloc(1, sizeof(*tc));

	if (!tc)
		return NULL;
	ERR_clear_error();
	tc->ssl = SSL_new(tls->ctx);
	if (!tc->ssl || SSL_set_fd(tc->ssl, fd) != 1) {
		SSL_free(tc->ssl);
		free(tc);
		ERR_clear_error();
		return NULL;
	}
	if (server)
		SSL_set_accept_state(tc->ssl);
	else
		SSL_set_connect_state(tc->ssl);
	return tc;
}

void imexd_tls_conn_free(struct imexd_tls_conn *tc)
{
	if (!tc)
		return;
	/* No close_notify: the socket is closed right after, never reused. */
	SSL_free(tc->ssl);
	free(tc);
}

/* Map an SSL_* return value; fills @err on a hard error. */
static int ssl_result(struct imexd_tls_conn *tc, int r, char *err,
		      size_t errlen)
{
	char detail[512];
	long vr;

	switch (SSL_get_error(tc->ssl, r)) {
	case SSL_ERROR_WANT_READ:
		return IMEXD_TLS_WANT_READ;
	case SSL_ERROR_WANT_WRITE:
		return IMEXD_TLS_WANT_WRITE;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	case SSL_ERROR_SYSCALL:
		if (err && errlen)
			snprintf(err, errlen, "TLS: %s",
				 errno ? strerror(errno) : "the peer closed the connection");
		ERR_clear_error();
		return IMEXD_TLS_ERROR;
	default:
		ssl_errors(detail, sizeof(detail));
		vr = SSL_get_verify_result(tc->ssl);
		if (err && errlen && vr != X509_V_OK)
			snprintf(err, errlen, "TLS: the peer's certificate does not verify against TLS_CA_FILE: %s",
				 X509_verify_cert_error_string(vr));
		else if (err && errlen)
			snprintf(err, errlen, "TLS: %s", detail);
		return IMEXD_TLS_ERROR;
	}
}

int imexd_tls_handshake(struct imexd_tls_conn *tc, char *err, size_t errlen)
{
	int r;

	ERR_clear_error();
	errno = 0;
	r = SSL_do_handshake(tc->ssl);
	if (r == 1) {
		/* FAIL_IF_NO_PEER_CERT makes this hold; check it anyway. */
		X509 *peer = SSL_get1_peer_certificate(tc->ssl);

		if (!peer || SSL_get_verify_result(tc->ssl) != X509_V_OK) {
			X509_free(peer);
			snprintf(err, errlen, "TLS: the peer presented no verified certificate");
			return IMEXD_TLS_ERROR;
		}
		X509_free(peer);
		return 1;
	}
	r = ssl_result(tc, r, err, errlen);
	if (r == 0) {
		snprintf(err, errlen, "TLS: the peer closed the connection during the handshake");
		return IMEXD_TLS_ERROR;
	}
	return r;
}

ssize_t imexd_tls_read(struct imexd_tls_conn *tc, void *buf, size_t len,
		       char *err, size_t errlen)
{
	size_t got = 0;
	int r;

	ERR_clear_error();
	errno = 0;
	r = SSL_read_ex(tc->ssl, buf, len, &got);
	if (r == 1)
		return (ssize_t)got;
	return ssl_result(tc, r, err, errlen);
}

ssize_t imexd_tls_write(struct imexd_tls_conn *tc, const void *buf,
			size_t len, char *err, size_t errlen)
{
	size_t put = 0;
	int r;

	ERR_clear_error();
	errno = 0;
	r = SSL_write_ex(tc->ssl, buf, len, &put);
	if (r == 1)
		return (ssize_t)put;
	r = ssl_result(tc, r, err, errlen);
	if (r == 0) {
		if (err && errlen)
			snprintf(err, errlen, "TLS: the peer closed the session");
		return IMEXD_TLS_ERROR;
	}
	return r;
}

bool imexd_tls_pending(const struct imexd_tls_conn *tc)
{
	return SSL_has_pending(tc->ssl) == 1;
}

void imexd_tls_peer_name(const struct imexd_tls_conn *tc, char *buf,
			 size_t len)
{
	X509 *peer = SSL_get1_peer_certificate(tc->ssl);

	if (!len)
		return;
	if (!peer) {
		snprintf(buf, len, "(no certificate)");
		return;
	}
	X509_NAME_oneline(X509_get_subject_name(peer), buf, (int)len);
	X509_free(peer);
}

bool imexd_tls_peer_names(const struct imexd_tls_conn *tc, const char *name,
			  char *names, size_t len)
{
	X509 *peer = SSL_get1_peer_certificate(tc->ssl);
	bool ok;

	if (!peer) {
		snprintf(names, len, "nothing (no certificate)");
		return false;
	}
	ok = cert_names(peer, name);
	if (!ok)
		cert_dns_names(peer, names, len);
	X509_free(peer);
	return ok;
}

/* Add @g's DNS name to @auth if it is a node name not there yet. */
static void auth_add(struct imexd_peers_auth *auth, const GENERAL_NAME *g)
{
	const unsigned char *d;
	char name[IMEX_NAME_MAX];
	unsigned i;
	int n;

	if (g->type != GEN_DNS)
		return;
	d = ASN1_STRING_get0_data(g->d.dNSName);
	n = ASN1_STRING_length(g->d.dNSName);
	/* An embedded NUL would make a shorter name than the CA signed. */
	if (!d || n <= 0 || n >= IMEX_NAME_MAX || memchr(d, 0, (size_t)n))
		return;
	memcpy(name, d, (size_t)n);
	name[n] = 0;
	if (!imexd_name_valid(name))
		return;
	for (i = 0; i < auth->n_names; i++)
		if (!strcmp(auth->names[i], name))
			return;
	memcpy(auth->names[auth->n_names++], name, (size_t)n + 1);
}

void imexd_tls_peer_auth(const struct imexd_tls_conn *tc,
			 struct imexd_peers_auth *auth)
{
	X509 *peer = SSL_get1_peer_certificate(tc->ssl);
	GENERAL_NAMES *gens;
	int i;

	memset(auth, 0, sizeof(*auth));
	auth->tls = true;
	if (!peer)
		return;
	gens = X509_get_ext_d2i(peer, NID_subject_alt_name, NULL, NULL);
	for (i = 0; gens && i < sk_GENERAL_NAME_num(gens) &&
	     auth->n_names < IMEXD_PEERS_CERT_NAMES_MAX; i++)
		auth_add(auth, sk_GENERAL_NAME_value(gens, i));
	GENERAL_NAMES_free(gens);
	X509_free(peer);
}
