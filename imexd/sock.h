/* SPDX-License-Identifier: GPL-2.0 */
/* Socket helpers for imexd's peer connections: addresses and options. */
#ifndef IMEXD_SOCK_H
#define IMEXD_SOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * Split "host[:port]", "[v6]:port" or a bare IPv6 address into @host and
 * *@port (@default_port when none is given).  0 or -EINVAL.
 */
int imexd_sock_split_addr(const char *addr, uint16_t default_port, char *host,
			  size_t hostlen, uint16_t *port);

/* "ip:port" or "[ip6]:port" (IPv4-mapped IPv6 shown as IPv4). */
void imexd_sock_name(const struct sockaddr *sa, char *buf, size_t len);

/* TCP_NODELAY, keepalive (30 s idle, 3 probes 10 s apart), user timeout. */
void imexd_sock_tune(int fd);

/*
 * A non-blocking listening TCP socket on @address ("*": every address,
 * IPv6 and IPv4; else an IPv4 or IPv6 address) and @port.  The fd, or
 * -errno with what to do in @err.
 */
int imexd_sock_listen(const char *address, uint16_t port, char *err,
		      size_t errlen);

#endif /* IMEXD_SOCK_H */
