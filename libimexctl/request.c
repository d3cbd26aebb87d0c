// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Requests: commands the kernel queues for imexd and answers at once with
 * IMEX_A_REQ_ID; the outcome comes later as IMEX_CMD_REQ_DONE on the events
 * group.  The REQ_DONE may overtake the reply carrying the id (imexd can be
 * that fast), so DONEs seen before the id is known are kept and matched.
 * A DONE also says which channels were granted or freed: that list, from
 * our own DONE, is what a request reports, not a before/after comparison
 * that a concurrent change would blur.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "internal.h"

/* How long the kernel may take to accept or refuse a request. */
#define ACK_TIMEOUT_MS 5000

static void match_early(struct imexctl_req_state *st)
{
	size_t i, n = st->n_early < IMEX_REQS_MAX ? st->n_early : IMEX_REQS_MAX;

	// cppcheck-suppress knownConditionTrueFalse ; filled by on_msg()
	for (i = 0; i < n; i++) {
		if (st->early[i].id == st->id) {
			st->done = st->early[i];
			st->early[i].ids = NULL;	/* now owned by done */
			st->early[i].n_ids = 0;
			st->finished = true;
			return;
		}
	}
}

/* The IMEX_A_CHANNEL_IDS of a DONE, @a, copied into @d. */
static void take_ids(struct imexctl_req_done *d, const struct nlattr *a)
{
	size_t len;

	d->ids_err = -EPROTO;
	if (!a)
		return;
	len = (size_t)nla_len(a);
	if (len % sizeof(uint32_t) ||
	    len / sizeof(uint32_t) > IMEX_CHANNEL_IDS_MAX)
		return;
	d->ids_err = 0;
	if (!len)
		return;
	d->ids = malloc(len);
	if (!d->ids) {
		d->ids_err = -ENOMEM;
		return;
	}
	memcpy(d->ids, nla_data(a), len);
	d->n_ids = len / sizeof(uint32_t);
}

void imexctl_req_on_msg(struct imexctl_session *s, struct nl_msg *msg, void *arg)
{
	struct imexctl_req_state *st = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];
	struct imexctl_req_done d = { 0 }, *slot;
	uint8_t cmd = genlmsg_hdr(nlmsg_hdr(msg))->cmd;

	if (imexctl_nl_parse(msg, tb) < 0 || !tb[IMEX_A_REQ_ID])
		return;

	if (cmd == IMEX_CMD_REQ_DONE) {
		d.id = nla_get_u64(tb[IMEX_A_REQ_ID]);
		/* Once our id is known, other requests' DONEs are not kept. */
		if (st->have_id && (d.id != st->id || st->finished))
			return;
		d.status = tb[IMEX_A_REQ_STATUS] ?
			   nla_get_u32(tb[IMEX_A_REQ_STATUS]) : EPROTO;
		if (tb[IMEX_A_REQ_MESSAGE])
			nla_strlcpy(d.message, tb[IMEX_A_REQ_MESSAGE],
				    sizeof(d.message));
		if (st->want_ids && !d.status)
			take_ids(&d, tb[IMEX_A_CHANNEL_IDS]);
		if (st->have_id) {
			st->done = d;
			st->finished = true;
		} else {
			slot = &st->early[st->n_early++ % IMEX_REQS_MAX];
			free(slot->ids);
			*slot = d;
		}
		return;
	}

	/* The unicast reply to our command. */
	if (nlmsg_hdr(msg)->nlmsg_seq == s->seq && !st->have_id) {
		st->id = nla_get_u64(tb[IMEX_A_REQ_ID]);
		st->have_id = true;
		match_early(st);
	}
}

void imexctl_req_state_free(struct imexctl_req_state *st)
{
	size_t i;

	if (!st)
		return;
	free(st->done.ids);
	for (i = 0; i < IMEX_REQS_MAX; i++)
		free(st->early[i].ids);
	free(st);
}

/* Group membership: no domain to look at afterwards. */
static bool node_request(uint8_t cmd)
{
	return cmd == IMEX_CMD_NODE_JOIN || cmd == IMEX_CMD_NODE_LEAVE;
}

static int request_failed(struct imexctl *ctx, uint8_t cmd, const char *what,
			  const struct imexctl_req_done *d)
{
	int err = (d->status > 0 && d->status < 4096) ? -(int)d->status : -EPROTO;

	if (d->message[0])
		return imexctl_err(ctx, err, "%s: %s", what, d->message);
	switch (-err) {
	case ETIMEDOUT:
		if (node_request(cmd))
			return imexctl_err(ctx, err,
					   "%s: imexd did not complete the request in time: see 'journalctl -u imexd', then run the same command again (it says whether the change was made)",
					   what);
		return imexctl_err(ctx, err,
				   "%s: imexd did not complete the request in time: check the other members with 'imexctl domain show' and 'journalctl -u imexd'",
				   what);
	case ENOTCONN:
		return imexctl_err(ctx, err,
				   "%s: imexd stopped before completing the request: check 'systemctl status imexd' and retry",
				   what);
	default:
		return imexctl_err_kernel(ctx, err, NULL, what);
	}
}

/* The ids of a successful request's DONE into *@ids, *@n_ids. */
static int done_ids(struct imexctl *ctx, const char *what,
		    struct imexctl_req_done *d, uint32_t **ids, size_t *n_ids)
{
	if (d->ids_err == -ENOMEM)
		return imexctl_err(ctx, -ENOMEM, "%s: done, but out of memory for the ids",
				   what);
	if (d->ids_err)
		return imexctl_err(ctx, -EPROTO,
				   "%s: imexd completed the request without listing the channels: imexd and imexctl versions differ? see 'imexctl channel list'",
				   what);
	*ids = d->ids;
	*n_ids = d->n_ids;
	d->ids = NULL;
	return 0;
}

int imexctl_request(struct imexctl *ctx, uint8_t cmd, imexctl_fill_fn fill,
		    const void *arg, size_t size, const char *what,
		    int timeout_ms)
{
	return imexctl_request_ids(ctx, cmd, fill, arg, size, what, timeout_ms,
				   NULL, NULL);
}

int imexctl_request_ids(struct imexctl *ctx, uint8_t cmd, imexctl_fill_fn fill,
			const void *arg, size_t size, const char *what,
			int timeout_ms, uint32_t **ids, size_t *n_ids)
{
	struct imexctl_session s;
	struct imexctl_req_state *st;
	struct nl_msg *msg;
	int64_t deadline, ack_deadline;
	int r;

	if (timeout_ms < 0)
		timeout_ms = IMEXCTL_REQUEST_TIMEOUT_MS;

	if (ids) {
		*ids = NULL;
		*n_ids = 0;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return imexctl_err(ctx, -ENOMEM, "%s: out of memory", what);
	st->want_ids = ids != NULL;

	/* Subscribed before sending: the outcome cannot slip past us. */
	r = imexctl_session_open(ctx, &s, imexctl_req_on_msg, st);
	if (r < 0)
		goto out_free;

	msg = imexctl_nl_msg(ctx, cmd, 0, size);
	if (!msg) {
		r = imexctl_err(ctx, -ENOMEM, "%s: out of memory", what);
		goto out;
	}
	r = fill(msg, arg);
	if (r < 0) {
		nlmsg_free(msg);
		r = imexctl_err(ctx, r, "%s: request too large for one message", what);
		goto out;
	}
	deadline = imexctl_deadline(timeout_ms);
	ack_deadline = imexctl_deadline(ACK_TIMEOUT_MS);
	r = imexctl_session_send(&s, msg);
	nlmsg_free(msg);
	if (r < 0)
		goto out;

	for (;;) {
		if (s.acked && s.err) {
			if (s.err == -ESRCH)
				r = imexctl_err(ctx, -ESRCH,
						"%s: imexd is not running on this node: start it with 'systemctl start imexd'",
						what);
			else
				r = imexctl_err_kernel(ctx, s.err, s.extack, what);
			goto out;
		}
		if (s.acked && !st->have_id) {
			r = imexctl_err(ctx, -EPROTO,
					"%s: the imex module accepted the request without a request id: module and imexctl versions differ?",
					what);
			goto out;
		}
		if (st->finished) {
			if (st->done.status)
				r = request_failed(ctx, cmd, what, &st->done);
			else
				r = ids ? done_ids(ctx, what, &st->done, ids, n_ids) : 0;
			goto out;
		}
		/* The kernel's own answer is awaited even past a short timeout:
		 * its refusals (no imexd, bad fabric, ...) are immediate. */
		r = imexctl_session_read(&s, s.acked ? deadline :
					 (deadline > ack_deadline ? deadline : ack_deadline));
		if (r == -ETIMEDOUT && node_request(cmd)) {
			r = imexctl_err(ctx, -ETIMEDOUT,
					"%s: no outcome from imexd within %d s (request %" PRIu64 "); it may still complete: run the same command again later, it says whether the change was made",
					what, (timeout_ms + 999) / 1000, st->id);
			goto out;
		}
		if (r == -ETIMEDOUT) {
			r = imexctl_err(ctx, -ETIMEDOUT,
					"%s: no outcome from imexd within %d s (request %" PRIu64 ")%s; it may still complete: check 'imexctl domain list'",
					what, (timeout_ms + 999) / 1000, st->id,
					s.overrun ? ", notifications were lost (socket overrun)" : "");
			goto out;
		}
		if (r < 0) {
			r = imexctl_err(ctx, r, "%s: reading from the imex module failed: %s",
					what, strerror(-r));
			goto out;
		}
	}
out:
	imexctl_session_close(&s);
out_free:
	imexctl_req_state_free(st);
	if (r == 0)
		imexctl_err_clear(ctx);
	return r;
}
