// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A listener on the "events" group that hands out one decoded event per
 * call.  The socket is read with plain recv(), one datagram at a time, so
 * that a full receive buffer (ENOBUFS) becomes an event of its own rather
 * than an error, and a datagram that does not decode is skipped with a
 * message while the ones after it still arrive.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/socket.h>

#include "internal.h"

/* A notification is at most a few pages; anything larger is refused. */
#define MONITOR_MSG_MAX		(1 << 20)
#define MONITOR_BUF_START	(64 << 10)

struct imexctl_monitor {
	struct imexctl *ctx;
	struct nl_sock *sk;		/* NULL when opened on a bare fd */
	int fd;
	int family;
	uint8_t *buf;			/* the datagram being handed out */
	size_t size, len, off;
	struct imexctl_event ev;
	struct imexctl_event_member members[IMEX_MEMBERS_MAX];
};

/* NULL when out of memory. */
static struct imexctl_monitor *monitor_alloc(struct imexctl *ctx)
{
	struct imexctl_monitor *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->buf = malloc(MONITOR_BUF_START);
	if (!m->buf) {
		free(m);
		return NULL;
	}
	m->ctx = ctx;
	m->fd = -1;
	m->size = MONITOR_BUF_START;
	return m;
}

int imexctl_monitor_open_fd(struct imexctl *ctx, int fd, int family,
			    struct imexctl_monitor **mon)
{
	*mon = monitor_alloc(ctx);
	if (!*mon)
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	(*mon)->fd = fd;
	(*mon)->family = family;
	return 0;
}

IMEXCTL_API int imexctl_monitor_open(struct imexctl *ctx,
				     struct imexctl_monitor **mon)
{
	struct imexctl_monitor *m;
	int grp, r;

	imexctl_err_clear(ctx);
	*mon = NULL;
	m = monitor_alloc(ctx);
	if (!m)
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	r = imexctl_nl_open(ctx, &m->sk, &m->family, &grp);
	if (r < 0)
		goto fail;
	if (nl_socket_add_membership(m->sk, grp) < 0) {
		r = imexctl_err(ctx, -EACCES,
				"cannot subscribe to imex's '%s' notifications",
				IMEX_MCGRP_EVENTS);
		goto fail;
	}
	m->fd = nl_socket_get_fd(m->sk);
	*mon = m;
	return 0;
fail:
	imexctl_monitor_free(m);
	return r;
}

IMEXCTL_API int imexctl_monitor_fd(const struct imexctl_monitor *mon)
{
	return mon->fd;
}

IMEXCTL_API void imexctl_monitor_free(struct imexctl_monitor *mon)
{
	if (!mon)
		return;
	if (mon->sk)
		nl_socket_free(mon->sk);
	else if (mon->fd >= 0)
		close(mon->fd);
	free(mon->buf);
	free(mon);
}

static int lost(struct imexctl_monitor *m, const struct imexctl_event **event)
{
	memset(&m->ev, 0, sizeof(m->ev));
	m->ev.kind = IMEXCTL_EVENT_LOST;
	*event = &m->ev;
	return 1;
}

/* Read the next datagram into m->buf: 1 read, 0 none waiting, 2 lost, < 0. */
static int read_datagram(struct imexctl_monitor *m)
{
	struct sockaddr_nl sa;
	socklen_t salen = sizeof(sa);
	uint8_t *nb;
	ssize_t n;

	m->len = m->off = 0;
	n = recv(m->fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
	if (n >= 0 && (size_t)n > m->size && (size_t)n <= MONITOR_MSG_MAX) {
		nb = realloc(m->buf, (size_t)n);
		if (!nb)
			return imexctl_err(m->ctx, -ENOMEM, "out of memory");
		m->buf = nb;
		m->size = (size_t)n;
	}
	if (n >= 0) {
		memset(&sa, 0, sizeof(sa));
		n = recvfrom(m->fd, m->buf, m->size, MSG_TRUNC | MSG_DONTWAIT,
			     (struct sockaddr *)&sa, &salen);
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		if (errno == ENOBUFS)
			return 2;
		return imexctl_err(m->ctx, -EIO, "reading imex's notifications failed: %s",
				   strerror(errno));
	}
	if ((size_t)n > m->size)
		return imexctl_err(m->ctx, -EPROTO,
				   "a notification from the imex module of %zd bytes is larger than %d: skipped",
				   n, MONITOR_MSG_MAX);
	/* Only the kernel (port 0) speaks on this socket. */
	if (salen >= sizeof(sa) && sa.nl_family == AF_NETLINK && sa.nl_pid != 0)
		return 1;
	m->len = (size_t)n;
	return 1;
}

IMEXCTL_API int imexctl_monitor_next(struct imexctl_monitor *m,
				     const struct imexctl_event **event)
{
	const struct nlmsghdr *nlh;
	size_t left;
	int r;

	imexctl_err_clear(m->ctx);
	*event = NULL;
	for (;;) {
		if (m->off >= m->len) {
			r = read_datagram(m);
			if (r == 2)
				return lost(m, event);
			if (r <= 0)
				return r;
			continue;
		}
		left = m->len - m->off;
		nlh = (const struct nlmsghdr *)(m->buf + m->off);
		if (left < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN ||
		    nlh->nlmsg_len > left) {
			m->off = m->len;
			return imexctl_err(m->ctx, -EPROTO,
					   "a truncated notification from the imex module (%zu bytes left, message of %u): skipped",
					   left, left < NLMSG_HDRLEN ? 0 : nlh->nlmsg_len);
		}
		m->off += NLMSG_ALIGN(nlh->nlmsg_len) < left ?
			  NLMSG_ALIGN(nlh->nlmsg_len) : left;
		if (nlh->nlmsg_type != m->family)
			continue;	/* NOOP, DONE, errors: not events */
		r = imexctl_event_decode(m->ctx, nlh, &m->ev, m->members,
					 ARRAY_SIZE(m->members));
		if (r < 0)
			return r;
		*event = &m->ev;
		return 1;
	}
}
