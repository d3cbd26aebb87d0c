/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Optional mutual TLS between imexd peers (TLS=yes), with OpenSSL.
 *
 * TLS 1.3 only.  Both sides present a certificate signed by TLS_CA_FILE and
 * both verify the other's; a peer whose certificate does not verify never
 * reaches the protocol core.  A certificate names its node by a
 * subjectAltName DNS entry (never the subject CN, never a wildcard): this
 * node's own must name NODE_NAME, and net.c binds each connection to the
 * name the peer's HELLO claims only if its certificate carries that name
 * (imexd_tls_peer_names()).
 *
 * imexd_tls_reload() (SIGUSR1) loads the files into a new SSL_CTX that new
 * connections use; connections already up keep the context they started
 * with (OpenSSL reference-counts it).
 *
 * A connection runs non-blocking over the caller's socket: every call
 * returns at once and says whether it waits for the socket to become
 * readable or writable.
 */
#ifndef IMEXD_TLS_H
#define IMEXD_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define IMEXD_TLS_RELOAD_MIN_MS	5000	/* SIGUSR1 throttle */

struct imexd_tls;
struct imexd_tls_conn;
struct imexd_peers_auth;

/*
 * Load the CA, certificate and key; the certificate must name @node_name.
 * Returns 0 with *@tls set, or -errno with a message naming the file and
 * what to do in @err.
 */
int imexd_tls_new(struct imexd_tls **tls, const char *node_name,
		  const char *ca_file, const char *cert_file,
		  const char *key_file, char *err, size_t errlen);
void imexd_tls_free(struct imexd_tls *tls);

/*
 * Re-read the files (new paths if given non-NULL) into a new context for
 * new connections; the certificate must still name this node.  At most once per IMEXD_TLS_RELOAD_MIN_MS: -EAGAIN when
 * called sooner (at @now_ms, monotonic).  On any error the old context
 * stays in use and @err says why.  0 on success.
 */
int imexd_tls_reload(struct imexd_tls *tls, uint64_t now_ms,
		     const char *ca_file, const char *cert_file,
		     const char *key_file, char *err, size_t errlen);

/* One line about the loaded certificate (subject, expiry) for the log. */
void imexd_tls_describe(const struct imexd_tls *tls, char *buf, size_t len);

/* A TLS session over the connected socket @fd; NULL when out of memory. */
struct imexd_tls_conn *imexd_tls_conn_new(struct imexd_tls *tls, int fd,
					  bool server);
void imexd_tls_conn_free(struct imexd_tls_conn *tc);

/*
 * Results of the calls below: > 0 progress (bytes, or 1 for a finished
 * handshake), 0 the peer closed the session, IMEXD_TLS_WANT_READ /
 * IMEXD_TLS_WANT_WRITE to retry once the socket is ready that way,
 * IMEXD_TLS_ERROR with @err (where given) filled in.
 */
enum {
	IMEXD_TLS_WANT_READ = -1,
	IMEXD_TLS_WANT_WRITE = -2,
	IMEXD_TLS_ERROR = -3,
};

int imexd_tls_handshake(struct imexd_tls_conn *tc, char *err, size_t errlen);
ssize_t imexd_tls_read(struct imexd_tls_conn *tc, void *buf, size_t len,
		       char *err, size_t errlen);
ssize_t imexd_tls_write(struct imexd_tls_conn *tc, const void *buf,
			size_t len, char *err, size_t errlen);
/* Decrypted bytes buffered inside the session (read them before polling). */
bool imexd_tls_pending(const struct imexd_tls_conn *tc);
/*
 * Does the verified peer certificate name node @name?  When not, @names
 * gets the names it does carry, for the log.
 */
bool imexd_tls_peer_names(const struct imexd_tls_conn *tc, const char *name,
			  char *names, size_t len);
/*
 * What the verified peer certificate proves (peers.h): tls = true and the
 * subjectAltName DNS entries that are valid node names (imexd_name_valid()),
 * exactly as written, in certificate order, each once, at most
 * IMEXD_PEERS_CERT_NAMES_MAX (further ones are ignored).  Call after the
 * handshake finished.
 */
void imexd_tls_peer_auth(const struct imexd_tls_conn *tc,
			 struct imexd_peers_auth *auth);
/* The verified peer certificate's subject, for the log. */
void imexd_tls_peer_name(const struct imexd_tls_conn *tc, char *buf,
			 size_t len);

#endif /* IMEXD_TLS_H */
