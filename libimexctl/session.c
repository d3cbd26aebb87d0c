// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A socket subscribed to the "events" group, for calls that must see
 * notifications: requests (their IMEX_CMD_REQ_DONE) and waits.  It is
 * subscribed before anything is sent so no notification can be missed, and
 * read with poll() against a deadline: no sleeping, no polling loop.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include <linux/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/socket.h>

#include "imex_extack.h"
#include "internal.h"

int64_t imexctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t imexctl_deadline(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : imexctl_now_ms() + timeout_ms;
}

/* Replies and notifications interleave: the handler sorts them out. */
static int seq_any(struct nl_msg *msg, void *arg)
{
	(void)msg;
	(void)arg;
	return NL_OK;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct imexctl_session *s = arg;

	if (s->on_msg)
		s->on_msg(s, msg, s->arg);
	return NL_OK;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct imexctl_session *s = arg;
	const struct nlmsgerr *e = nlmsg_data(nlmsg_hdr(msg));

	if (e->msg.nlmsg_seq == s->seq)
		s->acked = true;
	return NL_OK;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct imexctl_session *s = arg;
	const struct nlmsghdr *nlh;

	(void)nla;
	if (e->msg.nlmsg_seq != s->seq)
		return NL_SKIP;
	nlh = (const struct nlmsghdr *)((const char *)e - NLMSG_HDRLEN);
	imex_extack_msg(nlh, s->extack, sizeof(s->extack));
	s->err = e->error < 0 ? e->error : -EPROTO;
	s->acked = true;
	/* NL_SKIP, not NL_STOP: later messages in the buffer still count. */
	return NL_SKIP;
}

int imexctl_session_open(struct imexctl *ctx, struct imexctl_session *s,
			 imexctl_session_fn on_msg, void *arg)
{
	int grp, r;

	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->on_msg = on_msg;
	s->arg = arg;

	r = imexctl_nl_open(ctx, &s->sk, &s->family, &grp);
	if (r < 0)
		return r;
	ctx->family = s->family;

	s->cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!s->cb) {
		r = imexctl_err(ctx, -ENOMEM, "out of memory");
		goto fail;
	}
	nl_cb_set(s->cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, seq_any, NULL);
	nl_cb_set(s->cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, s);
	nl_cb_set(s->cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, s);
	nl_cb_err(s->cb, NL_CB_CUSTOM, on_error, s);

	r = nl_socket_add_membership(s->sk, grp);
	if (r < 0) {
		r = imexctl_err(ctx, -EACCES,
				"cannot subscribe to imex's '%s' notifications",
				IMEX_MCGRP_EVENTS);
		goto fail;
	}
	if (nl_socket_set_nonblocking(s->sk) < 0) {
		r = imexctl_err(ctx, -EIO, "cannot make the netlink socket non-blocking");
		goto fail;
	}
	return 0;
fail:
	imexctl_session_close(s);
	return r;
}

int imexctl_session_send(struct imexctl_session *s, struct nl_msg *msg)
{
	int r;

	s->acked = false;
	s->err = 0;
	s->extack[0] = '\0';
	r = nl_send_auto(s->sk, msg);
	if (r < 0)
		return imexctl_err(s->ctx, -EIO, "cannot send to the imex module");
	s->seq = nlmsg_hdr(msg)->nlmsg_seq;
	return 0;
}

/*
 * Wait for something to read until @deadline (CLOCK_MONOTONIC ms, < 0: no
 * limit), then handle what arrived.  Returns 0 (call again after checking
 * your condition), -ETIMEDOUT, or another negative errno.
 */
int imexctl_session_read(struct imexctl_session *s, int64_t deadline)
{
	struct pollfd pfd = { .fd = nl_socket_get_fd(s->sk), .events = POLLIN };
	int64_t left = -1;
	int r;

	if (deadline >= 0) {
		left = deadline - imexctl_now_ms();
		if (left < 0)
			left = 0;
	}
	r = poll(&pfd, 1, left > INT32_MAX ? INT32_MAX : (int)left);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (r == 0)
		return -ETIMEDOUT;

	errno = 0;
	r = nl_recvmsgs(s->sk, s->cb);
	if (r >= 0 || r == -NLE_AGAIN)
		return 0;
	if (errno == ENOBUFS) {
		/* The kernel dropped notifications for us; callers re-check. */
		s->overrun = true;
		return 0;
	}
	return -EIO;
}

void imexctl_session_close(struct imexctl_session *s)
{
	if (s->cb)
		nl_cb_put(s->cb);
	if (s->sk)
		nl_socket_free(s->sk);
	s->cb = NULL;
	s->sk = NULL;
}
