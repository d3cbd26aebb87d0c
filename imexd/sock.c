// SPDX-License-Identifier: GPL-2.0
/* Socket helpers for imexd's peer connections (sock.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include "sock.h"

void imexd_sock_name(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(s4->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			/* An IPv4 peer on the dual-stack listener. */
			inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], ip, sizeof(ip));
			snprintf(buf, len, "%s:%u", ip, ntohs(s6->sin6_port));
			return;
		}
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(s6->sin6_port));
	} else {
		snprintf(buf, len, "(family %u)", sa->sa_family);
	}
}

int imexd_sock_split_addr(const char *addr, uint16_t default_port, char *host,
			  size_t hostlen, uint16_t *port)
{
	const char *h = addr, *p = NULL, *colon;
	size_t hl;

	*port = default_port;
	if (!addr || !*addr)
		return -EINVAL;
	if (addr[0] == '[') {
		const char *end = strchr(addr, ']');

		if (!end || end == addr + 1)
			return -EINVAL;
		h = addr + 1;
		hl = (size_t)(end - h);
		if (end[1] == ':')
			p = end + 2;
		else if (end[1])
			return -EINVAL;
	} else {
		colon = strchr(addr, ':');
		if (colon && !strchr(colon + 1, ':')) {
			hl = (size_t)(colon - addr);
			p = colon + 1;
		} else {
			hl = strlen(addr);	/* no port, or a bare IPv6 address */
		}
	}
	if (!hl || hl >= hostlen)
		return -EINVAL;
	for (size_t i = 0; i < hl; i++)
		if (h[i] <= ' ' || h[i] >= 0x7f || h[i] == '/')
			return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = 0;
	if (p) {
		unsigned long v = 0;

		if (!*p || strlen(p) > 5)
			return -EINVAL;
		for (; *p; p++) {
			if (*p < '0' || *p > '9')
				return -EINVAL;
			v = v * 10 + (unsigned long)(*p - '0');
		}
		if (!v || v > 65535)
			return -EINVAL;
		*port = (uint16_t)v;
	}
	return 0;
}

void imexd_sock_tune(int fd)
{
	int one = 1, idle = 30, intvl = 10, cnt = 3;
	unsigned int user_timeout = 60000;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	/* Unacknowledged data for a minute: the peer is gone. */
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout,
		   sizeof(user_timeout));
}

int imexd_sock_listen(const char *address, uint16_t port, char *err,
		      size_t errlen)
{
	union {
		struct sockaddr sa;
		struct sockaddr_in s4;
		struct sockaddr_in6 s6;
	} u;
	socklen_t salen;
	char host[INET6_ADDRSTRLEN + 2];
	int fd, one = 1, zero = 0, r;
	size_t hl;

	memset(&u, 0, sizeof(u));
	snprintf(host, sizeof(host), "%s", address);
	hl = strlen(host);
	if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = 0;
	}
	if (!strcmp(host, "*")) {
		u.s6.sin6_family = AF_INET6;
		u.s6.sin6_addr = in6addr_any;
		u.s6.sin6_port = htons(port);
		salen = sizeof(u.s6);
		fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0 && errno == EAFNOSUPPORT) {
			/* No IPv6 here: IPv4 only. */
			memset(&u, 0, sizeof(u));
			u.s4.sin_family = AF_INET;
			u.s4.sin_addr.s_addr = htonl(INADDR_ANY);
			u.s4.sin_port = htons(port);
			salen = sizeof(u.s4);
			fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		} else if (fd >= 0) {
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		}
	} else if (inet_pton(AF_INET, host, &u.s4.sin_addr) == 1) {
		u.s4.sin_family = AF_INET;
		u.s4.sin_port = htons(port);
		salen = sizeof(u.s4);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	} else if (inet_pton(AF_INET6, host, &u.s6.sin6_addr) == 1) {
		u.s6.sin6_family = AF_INET6;
		u.s6.sin6_port = htons(port);
		salen = sizeof(u.s6);
		fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd >= 0)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	} else {
		snprintf(err, errlen, "LISTEN_ADDRESS=%s is not '*', an IPv4 or an IPv6 address: fix imexd.conf",
			 address);
		return -EINVAL;
	}
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot create the listening socket: %s",
			 strerror(errno));
		return r;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, &u.sa, salen) < 0) {
		r = -errno;
		if (r == -EADDRINUSE)
			snprintf(err, errlen, "cannot listen on %s port %u: the port is in use (another imexd, or another service): stop it or set LISTEN_PORT",
				 address, port);
		else if (r == -EADDRNOTAVAIL)
			snprintf(err, errlen, "cannot listen on %s port %u: this node has no such address: fix LISTEN_ADDRESS",
				 address, port);
		else
			snprintf(err, errlen, "cannot listen on %s port %u: %s",
				 address, port, strerror(-r));
		close(fd);
		return r;
	}
	if (listen(fd, 128) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot listen on %s port %u: %s", address,
			 port, strerror(-r));
		close(fd);
		return r;
	}
	return fd;
}
