// SPDX-License-Identifier: GPL-2.0
/*
 * Several commands of one kind in one netlink round trip (see kernel.h):
 * the imports a notification announced, taken with one write of as many
 * IMPORT_ACCEPTs, and the IMPORT_DONEs of one turn of the event loop,
 * written together.  The kernel runs the messages of one write in order
 * and answers each (a reply, an ack or an error), so one sendmsg() and a
 * recvmmsg() or two replace a write and a read per command.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <linux/imex.h>
#include "imex_extack.h"
#include "kernel.h"
#include "kernel_internal.h"
#include "log.h"

/* An answer is a reply (at most ~100 bytes) or an error with its text. */
#define ANSWER_MAX	1024

static uint8_t answer_buf[IMEXD_KERNEL_BATCH][ANSWER_MAX];

/*
 * Called once for each message's answer: @i is the message's index, @nlh
 * the answer (an error or ack is NLMSG_ERROR).
 */
typedef void (*batch_answer_fn)(void *ud, unsigned int i,
				const struct nlmsghdr *nlh);

/*
 * Send @m[0..@n) (consumed) in one write and hand each answer to @on; an
 * answer that never comes (the 10 s receive timeout) is not handed.  0, or
 * -errno with @msg when not every answer came.
 */
static int batch_transact(struct imexd_kernel *k, struct nl_msg **m,
			  unsigned int n, batch_answer_fn on, void *ud,
			  char *msg, size_t msglen)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct iovec iov[IMEXD_KERNEL_BATCH];
	struct mmsghdr mm[IMEXD_KERNEL_BATCH];
	uint32_t seq[IMEXD_KERNEL_BATCH];
	bool answered[IMEXD_KERNEL_BATCH] = { false };
	struct msghdr mh = { 0 };
	int fd = nl_socket_get_fd(k->sk);
	unsigned int i, left = n;
	ssize_t r;

	for (i = 0; i < n; i++) {
		nl_complete_msg(k->sk, m[i]);
		seq[i] = nlmsg_hdr(m[i])->nlmsg_seq;
		iov[i].iov_base = nlmsg_hdr(m[i]);
		iov[i].iov_len = NLMSG_ALIGN(nlmsg_hdr(m[i])->nlmsg_len);
	}
	mh.msg_name = &sa;
	mh.msg_namelen = sizeof(sa);
	mh.msg_iov = iov;
	mh.msg_iovlen = n;
	r = sendmsg(fd, &mh, 0);
	for (i = 0; i < n; i++)
		nlmsg_free(m[i]);
	if (r < 0) {
		kernel_set_msg(msg, msglen, "cannot send to the imex module: %s",
			       strerror(errno));
		return -EIO;
	}
	while (left) {
		int got;

		memset(mm, 0, sizeof(mm));
		for (i = 0; i < left; i++) {
			iov[i] = (struct iovec){ answer_buf[i], ANSWER_MAX };
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		/* Blocks (SO_RCVTIMEO) for the first, takes what else is there. */
		got = recvmmsg(fd, mm, left, MSG_WAITFORONE, NULL);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			kernel_set_msg(msg, msglen, "%s", got < 0 &&
				       (errno == EAGAIN || errno == EWOULDBLOCK) ?
				       "the imex module did not answer in time" :
				       "reading from the imex module failed");
			return got < 0 && errno != EAGAIN &&
			       errno != EWOULDBLOCK ? -EIO : -ETIMEDOUT;
		}
		for (int g = 0; g < got; g++) {
			struct nlmsghdr *nlh = (void *)answer_buf[g];
			int len = (int)mm[g].msg_len;

			for (; nlmsg_ok(nlh, len); nlh = nlmsg_next(nlh, &len)) {
				/* Stale answers (after a timeout) are skipped. */
				for (i = 0; i < n; i++)
					if (seq[i] == nlh->nlmsg_seq)
						break;
				if (i == n || answered[i])
					continue;
				answered[i] = true;
				left--;
				on(ud, i, nlh);
			}
		}
	}
	return 0;
}

/* The errno of an NLMSG_ERROR answer (0: an ack), its text in @msg. */
static int answer_error(const struct nlmsghdr *nlh, char *msg, size_t msglen)
{
	const struct nlmsgerr *e = nlmsg_data(nlh);
	int err;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e))) {
		kernel_set_msg(msg, msglen, "%s", "a short error from the imex module");
		return -EPROTO;
	}
	err = e->error;
	if (err) {
		imex_extack_msg(nlh, msg, msglen);
		if (!msg[0])
			kernel_set_msg(msg, msglen, "%s", strerror(-err));
	}
	return err;
}

/* --- IMPORT_ACCEPT --------------------------------------------------------- */

struct accept_batch {
	const struct imexd_kernel *k;
	struct imexd_import *imps;
	unsigned int n;
	int err;		/* the first error other than ENOENT */
	char *msg;
	size_t msglen;
};

static void on_accept_answer(void *ud, unsigned int i,
			     const struct nlmsghdr *nlh)
{
	struct accept_batch *b = ud;
	struct nlattr *tb[IMEX_A_MAX + 1];
	struct imexd_import *imp = &b->imps[b->n];
	char text[512] = "";
	int r;

	(void)i;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		r = answer_error(nlh, text, sizeof(text));
		if (r && r != -ENOENT && !b->err) {
			b->err = r;
			kernel_set_msg(b->msg, b->msglen, "%s", text);
		}
		return;
	}
	memset(imp, 0, sizeof(*imp));
	if (nlh->nlmsg_type != b->k->family ||
	    genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, IMEX_A_MAX, NULL) ||
	    !tb[IMEX_A_IMPORT_ID] || !tb[IMEX_A_HANDLE_ID] ||
	    !tb[IMEX_A_CHANNEL_ID] ||
	    !kernel_get_uuid(imp->handle_node, tb[IMEX_A_HANDLE_NODE]) ||
	    !kernel_get_uuid(imp->domain_uuid, tb[IMEX_A_DOMAIN_UUID])) {
		if (!b->err) {
			b->err = -EPROTO;
			kernel_set_msg(b->msg, b->msglen, "%s",
				       "the kernel's answer to IMPORT_ACCEPT lacks an attribute");
		}
		return;
	}
	imp->import_id = nla_get_u64(tb[IMEX_A_IMPORT_ID]);
	imp->handle_id = nla_get_u64(tb[IMEX_A_HANDLE_ID]);
	imp->channel_id = nla_get_u32(tb[IMEX_A_CHANNEL_ID]);
	b->n++;
}

int imexd_kernel_import_accept_many(struct imexd_kernel *k,
				    struct imexd_import *imps,
				    unsigned int max, unsigned int *n,
				    char *msg, size_t msglen)
{
	struct accept_batch b = { k, imps, 0, 0, msg, msglen };
	struct nl_msg *m[IMEXD_KERNEL_BATCH];
	unsigned int i;
	int r;

	*n = 0;
	kernel_set_msg(msg, msglen, "%s", "");
	if (max > IMEXD_KERNEL_BATCH)
		max = IMEXD_KERNEL_BATCH;
	imexd_kernel_import_done_flush(k);
	for (i = 0; i < max; i++) {
		m[i] = kernel_msg_new(k, IMEX_CMD_IMPORT_ACCEPT, 0, 0);
		if (!m[i]) {
			while (i--)
				nlmsg_free(m[i]);
			kernel_set_msg(msg, msglen, "%s", "out of memory");
			return -ENOMEM;
		}
	}
	r = batch_transact(k, m, max, on_accept_answer, &b, msg, msglen);
	*n = b.n;
	if (!r)
		r = b.err;
	if (!r && !b.n)
		r = -ENOENT;
	return r;
}

/* --- IMPORT_DONE ------------------------------------------------------------ */

int imexd_kernel_import_done(struct imexd_kernel *k, uint64_t import_id,
			     int error, const uint8_t *desc, uint16_t desc_len,
			     const char *text, char *msg, size_t msglen)
{
	struct nl_msg *m;

	kernel_set_msg(msg, msglen, "%s", "");
	if (k->ndone == IMEXD_KERNEL_BATCH)
		imexd_kernel_import_done_flush(k);
	m = kernel_msg_new(k, IMEX_CMD_IMPORT_DONE, NLM_F_ACK, 0);
	if (m && (nla_put_u64(m, IMEX_A_IMPORT_ID, import_id) ||
		  nla_put_u32(m, IMEX_A_REQ_STATUS, (uint32_t)error) ||
		  (!error && nla_put(m, IMEX_A_DESC, desc_len, desc)) ||
		  (text && text[0] &&
		   nla_put_string(m, IMEX_A_REQ_MESSAGE, text)))) {
		nlmsg_free(m);
		m = NULL;
	}
	if (!m) {
		kernel_set_msg(msg, msglen, "%s", "out of memory building a netlink message");
		return -ENOMEM;
	}
	k->done[k->ndone] = m;
	k->done_id[k->ndone++] = import_id;
	return 0;
}

static void on_done_answer(void *ud, unsigned int i,
			   const struct nlmsghdr *nlh)
{
	const uint64_t *ids = ud;
	char text[512] = "";
	int r;

	if (nlh->nlmsg_type != NLMSG_ERROR)
		return;		/* IMPORT_DONE has no reply but its ack */
	r = answer_error(nlh, text, sizeof(text));
	/* ENOENT: the importer gave up (signal, timeout); nothing to undo. */
	if (r == -ENOENT)
		log_debug("import %" PRIu64 " no longer waits", ids[i]);
	else if (r < 0)
		log_warn("cannot complete import %" PRIu64 ": %s", ids[i], text);
}

void imexd_kernel_import_done_flush(struct imexd_kernel *k)
{
	uint64_t ids[IMEXD_KERNEL_BATCH];
	unsigned int n = k->ndone;
	char msg[512] = "";

	if (!n)
		return;
	memcpy(ids, k->done_id, n * sizeof(ids[0]));
	k->ndone = 0;
	if (batch_transact(k, k->done, n, on_done_answer, ids, msg,
			   sizeof(msg)) < 0)
		log_warn("cannot complete %u import(s) (the first %" PRIu64 "): %s",
			 n, ids[0], msg);
}
