/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host name look-ups that never block the event loop: getaddrinfo() runs in
 * short-lived worker threads (at most IMEXD_RESOLVERS_MAX at once, further
 * look-ups wait in a queue) that hand their result back through a pipe the
 * loop watches.  (libsystemd's sd-resolve would do the same, but it is not
 * part of libsystemd's public API.)
 */
#ifndef IMEXD_RESOLVE_H
#define IMEXD_RESOLVE_H

#include <stdint.h>
#include <netdb.h>
#include <systemd/sd-event.h>

#define IMEXD_RESOLVERS_MAX	8

struct imexd_resolver;

/*
 * A finished look-up, called from the loop: @error is 0 with @res (the
 * callee owns it: freeaddrinfo()), or a negative errno with @why.
 */
typedef void (*imexd_resolved_fn)(void *data, uint64_t tag, int error,
				  const char *why, struct addrinfo *res);

int imexd_resolver_new(struct imexd_resolver **r, sd_event *ev,
		       imexd_resolved_fn fn, void *data);
/*
 * Free the resolver; no callbacks after this.  Workers still running clean
 * up after themselves.
 */
void imexd_resolver_free(struct imexd_resolver *r);

/* Look up @host for a TCP connection to @port.  0 or -errno. */
int imexd_resolver_start(struct imexd_resolver *r, uint64_t tag,
			 const char *host, uint16_t port);
/* Forget a queued look-up (one already running is reported anyway). */
void imexd_resolver_cancel(struct imexd_resolver *r, uint64_t tag);

#endif /* IMEXD_RESOLVE_H */
