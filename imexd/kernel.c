// SPDX-License-Identifier: GPL-2.0
/*
 * imexd's side of the imex generic netlink family (see kernel.h): the
 * sockets and the synchronous command plumbing, the node and the manager
 * attachment.  kernel_read.c reads domains and requests, kernel_change.c
 * applies changes and health.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <linux/imex.h>
#include "imex_extack.h"
#include "kernel.h"
#include "kernel_internal.h"
#include "log.h"

#define SOCK_BUF	(4 << 20)
#define RECV_TIMEOUT_S	10

/* One command's progress, shared with the libnl callbacks. */
struct txn {
	uint32_t seq;
	int err;		/* -1 waiting; else 0 or a positive errno */
	bool intr;		/* a dump raced a change */
	bool reply_ends;	/* no ack asked for: the answer ends it */
	char msg[512];
	nl_recvmsg_msg_cb_t valid;
	void *arg;
};

const uint8_t kernel_zero16[16];

const char *imexd_kernel_cmd_name(uint32_t cmd)
{
	switch (cmd) {
	case IMEX_CMD_DOMAIN_CREATE:	return "create domain";
	case IMEX_CMD_DOMAIN_DELETE:	return "delete domain";
	case IMEX_CMD_CHANNEL_ALLOC:	return "allocate channels";
	case IMEX_CMD_CHANNEL_FREE:	return "free channels";
	case IMEX_CMD_MEMBER_EVICT:	return "evict member";
	case IMEX_CMD_MEMBER_REPLACE:	return "replace member";
	case IMEX_CMD_NODE_JOIN:	return "join node";
	case IMEX_CMD_NODE_LEAVE:	return "remove node";
	default:			return "unknown request";
	}
}

/* --- plumbing ------------------------------------------------------------ */

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct txn *t = arg;

	(void)nla;
	if (e->msg.nlmsg_seq != t->seq)
		return NL_SKIP;
	t->err = -e->error;
	imex_extack_msg((struct nlmsghdr *)((char *)e - NLMSG_HDRLEN), t->msg,
			sizeof(t->msg));
	return NL_STOP;
}

static int on_ack(struct nl_msg *m, void *arg)
{
	struct txn *t = arg;

	if (nlmsg_hdr(m)->nlmsg_seq != t->seq)
		return NL_SKIP;
	t->err = 0;
	return NL_STOP;
}

static int on_finish(struct nl_msg *m, void *arg)
{
	return on_ack(m, arg);
}

static int on_intr(struct nl_msg *m, void *arg)
{
	(void)m;
	((struct txn *)arg)->intr = true;
	return NL_OK;
}

/* Our own sequence check: stale answers (after a timeout) are skipped. */
static int on_seq(struct nl_msg *m, void *arg)
{
	struct txn *t = arg;

	return nlmsg_hdr(m)->nlmsg_seq == t->seq ? NL_OK : NL_SKIP;
}

static int on_valid(struct nl_msg *m, void *arg)
{
	struct txn *t = arg;
	int r = t->valid ? t->valid(m, t->arg) : NL_OK;

	if (!t->reply_ends)
		return r;
	t->err = 0;
	return NL_STOP;
}

void kernel_set_msg(char *msg, size_t msglen, const char *fmt,
		    const char *detail)
{
	if (msg && msglen)
		snprintf(msg, msglen, fmt, detail);
}

struct nl_msg *kernel_msg_new(struct imexd_kernel *k, uint8_t cmd, int flags,
			      size_t size)
{
	struct nl_msg *m = nlmsg_alloc_size(size < 4096 ? 4096 : size);

	if (!m)
		return NULL;
	if (!genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, k->family, 0, flags, cmd,
			 IMEX_GENL_VERSION)) {
		nlmsg_free(m);
		return NULL;
	}
	return m;
}

/*
 * Send @m (consumed) and read the answers through @valid until the ack, the
 * end of a dump or an error.  0 or -errno, with the kernel's message.
 */
static int transact(struct imexd_kernel *k, struct nl_msg *m,
		    nl_recvmsg_msg_cb_t valid, void *arg, bool reply_ends,
		    bool *intr, char *msg, size_t msglen)
{
	struct txn t = { .err = -1, .valid = valid, .arg = arg,
			 .reply_ends = reply_ends };
	struct nl_cb *cb;
	int r;

	if (msg && msglen)
		msg[0] = 0;
	/* Queued IMPORT_DONEs go first: commands keep the order they were made. */
	imexd_kernel_import_done_flush(k);
	if (!m) {
		kernel_set_msg(msg, msglen, "%s", "out of memory building a netlink message");
		return -ENOMEM;
	}
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(m);
		kernel_set_msg(msg, msglen, "%s", "out of memory");
		return -ENOMEM;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &t);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &t);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, &t);
	nl_cb_set(cb, NL_CB_DUMP_INTR, NL_CB_CUSTOM, on_intr, &t);
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, on_seq, &t);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &t);

	if (!reply_ends)
		nlmsg_hdr(m)->nlmsg_flags |= NLM_F_ACK;
	r = nl_send_auto(k->sk, m);
	t.seq = nlmsg_hdr(m)->nlmsg_seq;
	nlmsg_free(m);
	if (r < 0) {
		nl_cb_put(cb);
		kernel_set_msg(msg, msglen, "cannot send to the imex module: %s",
			nl_geterror(r));
		return r == -NLE_MSGSIZE ? -EMSGSIZE : -EIO;
	}
	while (t.err == -1) {
		r = nl_recvmsgs(k->sk, cb);
		/* The callbacks set t.err. */
		// cppcheck-suppress knownConditionTrueFalse
		if (r < 0 && t.err == -1) {
			nl_cb_put(cb);
			if (r == -NLE_AGAIN) {
				kernel_set_msg(msg, msglen, "%s",
					"the imex module did not answer in time");
				return -ETIMEDOUT;
			}
			kernel_set_msg(msg, msglen, "reading from the imex module: %s",
				nl_geterror(r));
			return -EIO;
		}
	}
	nl_cb_put(cb);
	if (intr)
		*intr = t.intr;
	if (t.err && msg && msglen)
		snprintf(msg, msglen, "%s", t.msg[0] ? t.msg : strerror(t.err));
	return -t.err;
}

int kernel_transact(struct imexd_kernel *k, struct nl_msg *m,
		    nl_recvmsg_msg_cb_t valid, void *arg, bool *intr,
		    char *msg, size_t msglen)
{
	return transact(k, m, valid, arg, false, intr, msg, msglen);
}

int kernel_transact_reply(struct imexd_kernel *k, struct nl_msg *m,
			  nl_recvmsg_msg_cb_t valid, void *arg,
			  char *msg, size_t msglen)
{
	return transact(k, m, valid, arg, true, NULL, msg, msglen);
}

static void sock_buffers(struct nl_sock *sk)
{
	int fd = nl_socket_get_fd(sk), size = SOCK_BUF;

	/* FORCE needs CAP_NET_ADMIN, which imexd has; else what rmem_max allows. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	/*
	 * One read per message, no MSG_PEEK first: the module's largest
	 * answer (a domain of 160 members and 16,000 channel ids, some
	 * 190 KB) is far below this buffer; a dump's are at most 32 KiB.
	 */
	nl_socket_set_msg_buf_size(sk, 1 << 20);
	nl_socket_disable_msg_peek(sk);
}

static struct nl_sock *sock_open(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	int one = 1;

	if (!sk)
		return NULL;
	if (genl_connect(sk)) {
		nl_socket_free(sk);
		return NULL;
	}
	/* libnl 3.7 has no helper for extended acks. */
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one,
		   sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one,
		   sizeof(one));
	return sk;
}

int imexd_kernel_open(struct imexd_kernel **out, char *msg, size_t msglen)
{
	struct imexd_kernel *k;
	struct timeval tv = { .tv_sec = RECV_TIMEOUT_S };
	int r;

	*out = NULL;
	k = calloc(1, sizeof(*k));
	if (!k) {
		kernel_set_msg(msg, msglen, "%s", "out of memory");
		return -ENOMEM;
	}
	k->sk = sock_open();
	k->ntf = sock_open();
	if (!k->sk || !k->ntf) {
		kernel_set_msg(msg, msglen, "%s", "cannot open a generic netlink socket");
		r = -EIO;
		goto fail;
	}
	sock_buffers(k->sk);
	/* Room for many notifications: an overrun costs a pass over all queues. */
	sock_buffers(k->ntf);
	setsockopt(nl_socket_get_fd(k->sk), SOL_SOCKET, SO_RCVTIMEO, &tv,
		   sizeof(tv));
	k->family = genl_ctrl_resolve(k->sk, IMEX_GENL_NAME);
	if (k->family < 0) {
		kernel_set_msg(msg, msglen, "%s",
			"the imex module is not loaded: run 'imexctl module load'");
		r = -ENOENT;
		goto fail;
	}
	k->grp_manager = genl_ctrl_resolve_grp(k->sk, IMEX_GENL_NAME,
					       IMEX_MCGRP_MANAGER);
	if (k->grp_manager < 0) {
		kernel_set_msg(msg, msglen, "%s",
			"the imex module has no \"manager\" multicast group: imexd and imex.ko do not match; install matching versions");
		r = -EPROTO;
		goto fail;
	}
	/*
	 * From here on transact() asks for an ack only where no reply ends
	 * the command: an ack after a reply (libnl's default) costs the kernel
	 * a message and us a read, left for the next command to skip.  (Not
	 * before: genl_ctrl_resolve() waits for the acks it asked for.)
	 */
	nl_socket_disable_auto_ack(k->sk);
	nl_socket_disable_seq_check(k->ntf);
	nl_socket_set_nonblocking(k->ntf);
	*out = k;
	return 0;
fail:
	imexd_kernel_close(k);
	return r;
}

void imexd_kernel_close(struct imexd_kernel *k)
{
	if (!k)
		return;
	if (k->sk)
		imexd_kernel_import_done_flush(k);
	if (k->ntf)
		nl_socket_free(k->ntf);
	if (k->sk)
		nl_socket_free(k->sk);
	free(k);
}

/* --- node ---------------------------------------------------------------- */

size_t kernel_nest_count(const struct nlattr *attr)
{
	const struct nlattr *e;
	size_t n = 0;
	int rem;

	nla_for_each_nested(e, attr, rem)
		n++;
	return n;
}

int kernel_parse(struct nl_msg *m, struct nlattr **tb)
{
	return genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL);
}

void kernel_get_str(char *dst, size_t len, const struct nlattr *a)
{
	int n = nla_len(a);

	if (n <= 0) {
		dst[0] = 0;
		return;
	}
	snprintf(dst, len, "%.*s", n, (const char *)nla_data(a));
}

bool kernel_get_uuid(uint8_t dst[16], const struct nlattr *a)
{
	if (!a || nla_len(a) != 16)
		return false;
	memcpy(dst, nla_data(a), 16);
	return true;
}

static int on_node(struct nl_msg *m, void *arg)
{
	struct imexd_kernel_node *n = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (kernel_parse(m, tb))
		return NL_SKIP;
	if (tb[IMEX_A_NODE_NAME])
		kernel_get_str(n->name, sizeof(n->name), tb[IMEX_A_NODE_NAME]);
	kernel_get_uuid(n->uuid, tb[IMEX_A_NODE_UUID]);
	n->has_fabric = kernel_get_uuid(n->fabric_uuid, tb[IMEX_A_FABRIC_UUID]) &&
			tb[IMEX_A_FABRIC_PARTITION];
	if (tb[IMEX_A_FABRIC_PARTITION])
		n->partition = nla_get_u32(tb[IMEX_A_FABRIC_PARTITION]);
	if (tb[IMEX_A_MAX_CHANNELS])
		n->max_channels = nla_get_u32(tb[IMEX_A_MAX_CHANNELS]);
	if (tb[IMEX_A_MANAGER_PID])
		n->manager_pid = nla_get_u32(tb[IMEX_A_MANAGER_PID]);
	if (tb[IMEX_A_DOMAIN_COUNT])
		n->ndomains = nla_get_u32(tb[IMEX_A_DOMAIN_COUNT]);
	return NL_OK;
}

int imexd_kernel_node_get(struct imexd_kernel *k,
			  struct imexd_kernel_node *node, char *msg,
			  size_t msglen)
{
	memset(node, 0, sizeof(*node));
	return kernel_transact(k, kernel_msg_new(k, IMEX_CMD_NODE_GET, 0, 0), on_node, node,
			NULL, msg, msglen);
}

int imexd_kernel_attach(struct imexd_kernel *k, char *msg, size_t msglen)
{
	struct imexd_kernel_node node;
	char detail[512];
	int r;

	r = kernel_transact(k, kernel_msg_new(k, IMEX_CMD_MANAGER_ATTACH, 0, 0), NULL, NULL,
		     NULL, detail, sizeof(detail));
	if (!r)
		return 0;
	if (r == -EALREADY) {
		if (imexd_kernel_node_get(k, &node, NULL, 0) == 0 &&
		    node.manager_pid)
			snprintf(msg, msglen,
				 "another imexd (pid %u) is already managing this node: stop it first ('systemctl stop imexd', or kill %u)",
				 node.manager_pid, node.manager_pid);
		else
			snprintf(msg, msglen,
				 "another imexd is already managing this node: stop it first (%s)",
				 detail);
	} else if (r == -EPERM || r == -EACCES) {
		snprintf(msg, msglen,
			 "imexd needs CAP_SYS_ADMIN and CAP_NET_ADMIN to manage the node: run it as root (%s)",
			 detail);
	} else {
		snprintf(msg, msglen, "cannot attach to the imex module: %s",
			 detail);
	}
	return r;
}

int imexd_kernel_detach(struct imexd_kernel *k, char *msg, size_t msglen)
{
	return kernel_transact(k, kernel_msg_new(k, IMEX_CMD_MANAGER_DETACH, 0, 0), NULL, NULL,
			NULL, msg, msglen);
}

int imexd_kernel_node_set(struct imexd_kernel *k, const char *name,
			  const uint8_t uuid[16], char *msg, size_t msglen)
{
	struct nl_msg *m = kernel_msg_new(k, IMEX_CMD_NODE_SET, 0, 0);

	if (m && (nla_put_string(m, IMEX_A_NODE_NAME, name) ||
		  nla_put(m, IMEX_A_NODE_UUID, 16, uuid))) {
		nlmsg_free(m);
		m = NULL;
	}
	return kernel_transact(k, m, NULL, NULL, NULL, msg, msglen);
}

int imexd_kernel_subscribe(struct imexd_kernel *k, char *msg, size_t msglen)
{
	int r = nl_socket_add_membership(k->ntf, k->grp_manager);

	if (r < 0) {
		kernel_set_msg(msg, msglen,
			"cannot join the imex \"manager\" group (%s): imexd needs CAP_SYS_ADMIN",
			nl_geterror(r));
		return r == -NLE_PERM ? -EPERM : -EIO;
	}
	return 0;
}

int imexd_kernel_notify_fd(const struct imexd_kernel *k)
{
	return nl_socket_get_fd(k->ntf);
}

/* Notifications are a header and one attribute; longer is not ours. */
#define NOTIFY_MSG_MAX	512
#define NOTIFY_BATCH	32

void imexd_kernel_notify_drain(struct imexd_kernel *k,
			       struct imexd_notified *seen)
{
	static uint8_t buf[NOTIFY_BATCH][NOTIFY_MSG_MAX];
	struct mmsghdr mm[NOTIFY_BATCH];
	struct iovec iov[NOTIFY_BATCH];
	int fd = nl_socket_get_fd(k->ntf);

	memset(seen, 0, sizeof(*seen));
	/* One recvmmsg() a batch; a short batch means the socket is empty. */
	for (int round = 0; round < 8; round++) {
		int n;

		memset(mm, 0, sizeof(mm));
		for (int i = 0; i < NOTIFY_BATCH; i++) {
			iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		n = recvmmsg(fd, mm, NOTIFY_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0 && errno == ENOBUFS) {
			seen->lost = true;	/* overrun: which, unknown */
			continue;
		}
		if (n <= 0)
			return;
		for (int i = 0; i < n; i++) {
			if (mm[i].msg_hdr.msg_flags & MSG_TRUNC)
				seen->lost = true;
			imexd_kernel_notify_count((uint16_t)k->family, buf[i],
						  mm[i].msg_len, seen);
		}
		if (n < NOTIFY_BATCH)
			return;
	}
	/* More may wait: read as if some were lost. */
	seen->lost = true;
}
