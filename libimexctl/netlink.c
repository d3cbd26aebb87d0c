// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Generic netlink plumbing on the context socket: family resolution, message
 * building, and doit/dump exchanges that keep the kernel's extended ack.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/socket.h>

#include "imex_extack.h"
#include "internal.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* Replies up to this size are read whole (a 160-member DOMAIN_GET with views is ~80 KiB). */
#define IMEXCTL_RCVBUF (1 << 20)

/*
 * Read buffer: the kernel sizes each dump part to the largest read so far,
 * at most 32 KiB; libnl's default, 16 KiB, made a 2048-channel dump 17
 * parts, each two reads (peek, then read).  Larger replies still fit:
 * peeking tells libnl their size.
 */
#define IMEXCTL_MSGBUF 32768

/*
 * Only lengths and termination are checked here; meaning is the caller's.
 * Not const because nla_parse() takes a non-const pointer; never written.
 */
static struct nla_policy imex_policy[IMEX_A_MAX + 1] = {
	[IMEX_A_NODE_NAME] = { .type = NLA_STRING },
	[IMEX_A_NODE_UUID] = { .minlen = IMEX_UUID_LEN },
	[IMEX_A_FABRIC_UUID] = { .minlen = IMEX_UUID_LEN },
	[IMEX_A_FABRIC_PARTITION] = { .type = NLA_U32 },
	[IMEX_A_MAX_CHANNELS] = { .type = NLA_U32 },
	[IMEX_A_CHRDEV_MAJOR] = { .type = NLA_U32 },
	[IMEX_A_MANAGER_PID] = { .type = NLA_U32 },
	[IMEX_A_DOMAIN_COUNT] = { .type = NLA_U32 },
	[IMEX_A_GENERATION] = { .type = NLA_U32 },
	[IMEX_A_DOMAIN_NAME] = { .type = NLA_STRING },
	[IMEX_A_DOMAIN_UUID] = { .minlen = IMEX_UUID_LEN },
	[IMEX_A_DOMAIN_STATE] = { .type = NLA_U32 },
	[IMEX_A_MEMBER_COUNT] = { .type = NLA_U32 },
	[IMEX_A_MEMBER_SELF] = { .type = NLA_U32 },
	[IMEX_A_MEMBERS] = { .type = NLA_NESTED },
	[IMEX_A_MEMBER_NAME] = { .type = NLA_STRING },
	[IMEX_A_CHANNEL_COUNT] = { .type = NLA_U32 },
	[IMEX_A_CHANNELS] = { .type = NLA_NESTED },
	[IMEX_A_CHANNEL_ID] = { .type = NLA_U32 },
	[IMEX_A_CHANNEL_UID] = { .type = NLA_U32 },
	[IMEX_A_CHANNEL_GID] = { .type = NLA_U32 },
	[IMEX_A_CHANNEL_MODE] = { .type = NLA_U32 },
	[IMEX_A_CHANNEL_STATE] = { .type = NLA_U32 },
	[IMEX_A_CHANNEL_OPEN_COUNT] = { .type = NLA_U32 },
	[IMEX_A_REQ_ID] = { .type = NLA_U64 },
	[IMEX_A_REQ_CMD] = { .type = NLA_U32 },
	[IMEX_A_REQ_STATUS] = { .type = NLA_U32 },
	[IMEX_A_REQ_MESSAGE] = { .type = NLA_STRING },
	[IMEX_A_REQ_ATTRS] = { .type = NLA_NESTED },
	[IMEX_A_IMPORT_COUNT] = { .type = NLA_U32 },
	[IMEX_A_EXPORT_COUNT] = { .type = NLA_U32 },
	[IMEX_A_CHANNEL_MINOR] = { .type = NLA_U32 },
	[IMEX_A_DOMAIN_GENERATION] = { .type = NLA_U64 },
	[IMEX_A_DOMAIN_REASON] = { .type = NLA_STRING },
	[IMEX_A_STATS] = { .type = NLA_NESTED },
};

static int nlerr_to_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_NOMEM: return ENOMEM;
	case NLE_PERM: return EPERM;
	case NLE_NOACCESS: return EACCES;
	case NLE_AGAIN: return EAGAIN;
	case NLE_BUSY: return EBUSY;
	case NLE_EXIST: return EEXIST;
	case NLE_INVAL: return EINVAL;
	case NLE_RANGE: return ERANGE;
	case NLE_MSGSIZE: return EMSGSIZE;
	case NLE_OPNOTSUPP: return EOPNOTSUPP;
	case NLE_OBJ_NOTFOUND: return ENOENT;
	case NLE_PROTO_MISMATCH: return EPROTONOSUPPORT;
	case NLE_AF_NOSUPPORT: return EAFNOSUPPORT;
	default: return EIO;
	}
}

static int not_loaded(struct imexctl *ctx)
{
	return imexctl_err(ctx, -ENODEV,
			   "the imex kernel module is not loaded: load it with 'imexctl module load'");
}

void imexctl_nl_enable_ext_ack(struct nl_sock *sk)
{
	int one = 1;

	/* libnl 3.7 has no nl_socket_set_ext_ack(); this is all it would do.
	 * Best effort: without it errors just lose their text. */
	(void)setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK,
			 &one, sizeof(one));
}

int imexctl_nl_open(struct imexctl *ctx, struct nl_sock **skp, int *family,
		    int *events_grp)
{
	struct nl_sock *sk;
	int r;

	sk = nl_socket_alloc();
	if (!sk)
		return imexctl_err(ctx, -ENOMEM, "out of memory opening a netlink socket");
	r = genl_connect(sk);
	if (r < 0) {
		r = -nlerr_to_errno(r);
		nl_socket_free(sk);
		return imexctl_err(ctx, r, "cannot open a generic netlink socket: %s",
				   strerror(-r));
	}
	imexctl_nl_enable_ext_ack(sk);
	nl_socket_enable_msg_peek(sk);
	(void)nl_socket_set_buffer_size(sk, IMEXCTL_RCVBUF, 0);
	(void)nl_socket_set_msg_buf_size(sk, IMEXCTL_MSGBUF);

	r = genl_ctrl_resolve(sk, IMEX_GENL_NAME);
	if (r < 0) {
		nl_socket_free(sk);
		if (r == -NLE_OBJ_NOTFOUND)
			return not_loaded(ctx);
		r = -nlerr_to_errno(r);
		return imexctl_err(ctx, r, "cannot look up the '%s' netlink family: %s",
				   IMEX_GENL_NAME, strerror(-r));
	}
	*family = r;

	if (events_grp) {
		r = genl_ctrl_resolve_grp(sk, IMEX_GENL_NAME, IMEX_MCGRP_EVENTS);
		if (r < 0) {
			nl_socket_free(sk);
			r = -nlerr_to_errno(r);
			return imexctl_err(ctx, r,
					   "the loaded imex module has no '%s' multicast group: update the module",
					   IMEX_MCGRP_EVENTS);
		}
		*events_grp = r;
	}
	*skp = sk;
	return 0;
}

int imexctl_nl_connect(struct imexctl *ctx)
{
	if (ctx->sk)
		return 0;
	return imexctl_nl_open(ctx, &ctx->sk, &ctx->family, NULL);
}

struct nl_msg *imexctl_nl_msg(struct imexctl *ctx, uint8_t cmd, int flags,
			      size_t size)
{
	struct nl_msg *msg;

	msg = size ? nlmsg_alloc_size(size) : nlmsg_alloc();
	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, ctx->family, 0, flags,
			 cmd, IMEX_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

int imexctl_nl_parse(struct nl_msg *msg, struct nlattr **tb)
{
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, IMEX_A_MAX, imex_policy) < 0)
		return -EPROTO;
	return 0;
}

/* Channel ids as IMEX_A_CHANNELS: a nested array of IMEX_A_CHANNEL_ENTRY_ID. */
int imexctl_nl_put_array_u32(struct nl_msg *msg, int attr, const uint32_t *ids,
			     size_t n)
{
	struct nlattr *arr, *entry;
	size_t i;

	arr = nla_nest_start(msg, attr);
	if (!arr)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		/* Entry types are 1-based indexes; the kernel ignores them. */
		entry = nla_nest_start(msg, (int)(i + 1));
		if (!entry || nla_put_u32(msg, IMEX_A_CHANNEL_ENTRY_ID, ids[i]) < 0)
			return -EMSGSIZE;
		nla_nest_end(msg, entry);
	}
	nla_nest_end(msg, arr);
	return 0;
}

struct exchange {
	imexctl_parse_fn parse;
	void *arg;
	int err;		/* from an NLMSG_ERROR */
	int parse_err;
	bool done;
	bool intr;		/* NLM_F_DUMP_INTR: a change raced the dump */
	char extack[IMEX_MESSAGE_MAX];
};

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct exchange *x = arg;
	int r;

	if (nlmsg_hdr(msg)->nlmsg_flags & NLM_F_DUMP_INTR)
		x->intr = true;
	if (x->parse && !x->parse_err) {
		r = x->parse(msg, x->arg);
		if (r < 0)
			x->parse_err = r;
	}
	/* Never NL_STOP: the rest of this buffer would be dropped. */
	return NL_OK;
}

static int on_done(struct nl_msg *msg, void *arg)
{
	struct exchange *x = arg;

	(void)msg;
	x->done = true;
	return NL_STOP;
}

static int on_dump_intr(struct nl_msg *msg, void *arg)
{
	struct exchange *x = arg;

	(void)msg;
	x->intr = true;
	return NL_OK;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct exchange *x = arg;
	const struct nlmsghdr *nlh;

	(void)nla;
	/* libnl passes the payload; the header with the TLV flags is before it. */
	nlh = (const struct nlmsghdr *)((const char *)e - NLMSG_HDRLEN);
	imex_extack_msg(nlh, x->extack, sizeof(x->extack));
	x->err = e->error < 0 ? e->error : -EPROTO;
	x->done = true;
	return NL_STOP;
}

static int exchange(struct imexctl *ctx, struct nl_msg *msg,
		    imexctl_parse_fn parse, void *arg, const char *what,
		    bool *intr)
{
	struct exchange x = { .parse = parse, .arg = arg };
	struct nl_cb *cb;
	int r;

	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(msg);
		return imexctl_err(ctx, -ENOMEM, "%s: out of memory", what);
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &x);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, &x);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_done, &x);
	nl_cb_set(cb, NL_CB_DUMP_INTR, NL_CB_CUSTOM, on_dump_intr, &x);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &x);

	r = nl_send_auto(ctx->sk, msg);
	nlmsg_free(msg);
	if (r < 0) {
		nl_cb_put(cb);
		r = -nlerr_to_errno(r);
		return imexctl_err(ctx, r, "%s: cannot send to the imex module: %s",
				   what, strerror(-r));
	}
	while (!x.done) {
		r = nl_recvmsgs(ctx->sk, cb);
		/* The callbacks set x.done; an error after it is the kernel's. */
		// cppcheck-suppress knownConditionTrueFalse
		if (r < 0 && !x.done) {
			nl_cb_put(cb);
			/* The socket may hold half a reply now: start afresh. */
			nl_socket_free(ctx->sk);
			ctx->sk = NULL;
			r = -nlerr_to_errno(r);
			return imexctl_err(ctx, r, "%s: reading the imex module's reply failed: %s",
					   what, strerror(-r));
		}
	}
	nl_cb_put(cb);

	if (intr)
		*intr = x.intr;
	if (x.err)
		return imexctl_err_kernel(ctx, x.err, x.extack, what);
	if (x.parse_err == -EPROTO)
		return imexctl_err(ctx, -EPROTO,
				   "%s: malformed reply from the imex module: module and imexctl versions differ?",
				   what);
	if (x.parse_err)
		return imexctl_err(ctx, x.parse_err, "%s: %s", what,
				   strerror(-x.parse_err));
	return 0;
}

int imexctl_nl_exchange(struct imexctl *ctx, struct nl_msg *msg,
			imexctl_parse_fn parse, void *arg, const char *what)
{
	return exchange(ctx, msg, parse, arg, what, NULL);
}

#define DUMP_ATTEMPTS 5

int imexctl_nl_dump(struct imexctl *ctx, uint8_t cmd,
		    int (*fill)(struct nl_msg *msg, const void *farg),
		    const void *farg, imexctl_parse_fn parse,
		    void (*reset)(void *arg), void *arg, const char *what)
{
	struct nl_msg *msg;
	bool intr = false;
	int attempt, r;

	for (attempt = 0; attempt < DUMP_ATTEMPTS; attempt++) {
		if (attempt)
			reset(arg);
		msg = imexctl_nl_msg(ctx, cmd, NLM_F_DUMP, 0);
		if (!msg)
			return imexctl_err(ctx, -ENOMEM, "%s: out of memory", what);
		if (fill) {
			r = fill(msg, farg);
			if (r < 0) {
				nlmsg_free(msg);
				return imexctl_err(ctx, r, "%s: request too large", what);
			}
		}
		r = exchange(ctx, msg, parse, arg, what, &intr);
		if (r < 0 || !intr)
			return r;
	}
	return imexctl_err(ctx, -EAGAIN,
			   "%s: the list kept changing while being read: retry", what);
}
