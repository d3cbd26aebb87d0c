// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's request queues: its notifications, the accepts of requests,
 * imports and ends of export they announce, and the sweep of every queue
 * now and then.  See daemon.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include "daemon.h"
#include "daemon_members.h"
#include "describe.h"
#include "imex_uuid.h"
#include "kernel.h"
#include "log.h"
#include "metrics.h"
#include "metrics_pub.h"
#include "net.h"
#include "nodelist.h"
#include "raftlog.h"
#include "store.h"
#include "tls.h"

#include "daemon_internal.h"

/* --- requests ------------------------------------------------------------ */

static void sweep_soon(struct daemon *d);

static void accept_requests(struct daemon *d)
{
	/* Each wakeup takes everything waiting, bounded by the kernel's cap. */
	for (int i = 0; i < 2 * IMEX_REQS_MAX; i++) {
		struct imexd_log_fields lf;
		struct imexd_request req;
		char msg[512] = "", u[37];
		int r;

		r = imexd_kernel_accept(d->kernel, &req, msg, sizeof(msg));
		if (r == -ENOENT)
			return;
		if ((r == -EBADMSG || r == -ENOMEM) && req.req_id) {
			log_warn("request %" PRIu64 " refused: %s", req.req_id, msg);
			imexd_kernel_req_done(d->kernel, req.req_id,
					      r == -ENOMEM ? ENOMEM : EINVAL, msg,
					      NULL, NULL, 0, NULL, 0);
			continue;
		}
		if (r < 0) {
			log_err("cannot take requests from the imex module: %s", msg);
			sweep_soon(d);
			return;
		}
		imex_uuid_format(req.uuid, u);
		imexd_log_fields_set(&lf, IMEXD_MSGID_REQUEST, req.name,
				     req.member);
		/* A channel request for one channel names it. */
		lf.has_channel = req.nids == 1;
		lf.channel = req.nids == 1 ? req.ids[0] : 0;
		IMEXD_LOG_AT(LOG_INFO, &lf, "request %" PRIu64 ": %s %s%s%s",
			     req.req_id, imexd_kernel_cmd_name(req.cmd),
			     req.name[0] ? req.name : req.member,
			     req.has_uuid ? " uuid " : "",
			     req.has_uuid ? u : "");
		imexd_node_request(d->core, now_ms(), &req);
		imexd_kernel_request_release(&req);
		drain(d);
	}
}

/*
 * Remote imports and ends of exports, in bounded batches (a full queue of
 * ends is IMEX_EXPORT_ENDS_MAX records).  An import's notification comes
 * with it (no notification, no import: the process gets the error), so
 * @max accepts take every import @max notifications named, and no empty
 * queue is asked again.  Ends of exports have no such promise: taken until
 * none is left.  True if the batch ran out, so more may wait.  Imports
 * come IMEXD_KERNEL_BATCH to a netlink round trip.
 */
#define ACCEPT_BATCH	1024

static bool accept_imports(struct daemon *d, unsigned int max)
{
	struct imexd_import imps[IMEXD_KERNEL_BATCH];
	unsigned int done = 0, want, n, i;
	char msg[512];
	int r;

	if (max > ACCEPT_BATCH)
		max = ACCEPT_BATCH;
	while (done < max) {
		want = max - done < IMEXD_KERNEL_BATCH ? max - done :
		       IMEXD_KERNEL_BATCH;
		r = imexd_kernel_import_accept_many(d->kernel, imps, want, &n,
						    msg, sizeof(msg));
		/* Taken is taken: each goes its way, even if a later one failed. */
		for (i = 0; i < n; i++) {
			imexd_node_import(d->core, now_ms(), &imps[i]);
			drain(d);
		}
		done += n;
		if (r == -ENOENT)
			return false;
		if (r < 0) {
			log_err("cannot take imports from the imex module: %s", msg);
			sweep_soon(d);
			return false;
		}
		if (n < want)
			return false;	/* the queue ran dry */
	}
	return done == ACCEPT_BATCH;
}

static bool accept_export_ends(struct daemon *d)
{
	char msg[512];
	int i, r;

	for (i = 0; i < ACCEPT_BATCH; i++) {
		uint8_t dom[16];
		uint64_t handle;
		uint32_t chan;

		r = imexd_kernel_export_del_accept(d->kernel, &handle, dom, &chan,
						   msg, sizeof(msg));
		if (r == -ENOENT)
			return false;
		if (r < 0) {
			log_err("cannot take the ends of exports from the imex module: %s",
				msg);
			sweep_soon(d);
			return false;
		}
		imexd_node_export_del(d->core, now_ms(), handle, dom, chan);
		drain(d);
	}
	return true;
}

/* Every queue until it is empty (a start, a lost notification). */
static bool accept_everything(struct daemon *d)
{
	return accept_imports(d, ACCEPT_BATCH) || accept_export_ends(d);
}

int on_accept_more(sd_event_source *s, void *ud)
{
	struct daemon *d = ud;

	(void)s;
	imexd_net_cork(d->net);
	if (!d->stopping && accept_everything(d))
		sd_event_source_set_enabled(d->accept_more, SD_EVENT_ONESHOT);
	imexd_net_uncork(d->net);
	return 0;
}

/*
 * The rest of a long queue comes deferred, after the other sources.  The
 * imports taken together go to their exporters together (one write per
 * peer: imexd_net_cork()).
 */
void accept_all(struct daemon *d)
{
	imexd_net_cork(d->net);
	accept_requests(d);
	if (accept_everything(d))
		sd_event_source_set_enabled(d->accept_more, SD_EVENT_ONESHOT);
	imexd_net_uncork(d->net);
}

/*
 * Every queue now and then, whatever the notifications said: an accept
 * that failed, or an end of export whose notification the kernel could
 * not allocate, would otherwise wait for the next notification of its
 * kind.  Soon after a failure (backing off while failures repeat), else
 * every SWEEP_MS (daemon_internal.h).
 */
static void sweep_at(struct daemon *d, uint64_t ms)
{
	if (!d->sweep)
		return;
	sd_event_source_set_time_relative(d->sweep, ms * 1000);
	sd_event_source_set_enabled(d->sweep, SD_EVENT_ONESHOT);
}

static void sweep_soon(struct daemon *d)
{
	uint64_t ms = d->sweep_retry_ms ? 2 * d->sweep_retry_ms : SWEEP_RETRY_MS;

	d->accept_failed = true;
	d->sweep_retry_ms = ms < SWEEP_MS ? ms : SWEEP_MS;
	sweep_at(d, d->sweep_retry_ms);
}

int on_sweep(sd_event_source *s, uint64_t usec, void *ud)
{
	struct daemon *d = ud;

	(void)s;
	(void)usec;
	if (d->stopping || !d->core)
		return 0;
	sweep_at(d, SWEEP_MS);
	d->accept_failed = false;
	accept_all(d);
	if (!d->accept_failed)
		d->sweep_retry_ms = 0;
	return 0;
}

/*
 * Before each wait of the event loop: the import completions the last
 * callback queued go to the kernel in one write (kernel_batch.c), all the
 * answers one read brought, say, not one write each.
 */
int on_prepare(sd_event_source *s, void *ud)
{
	struct daemon *d = ud;

	(void)s;
	imexd_kernel_import_done_flush(d->kernel);
	return 0;
}

int on_notify(sd_event_source *s, int fd, uint32_t revents, void *ud)
{
	struct daemon *d = ud;
	struct imexd_notified seen;
	bool more;

	(void)s;
	(void)fd;
	(void)revents;
	imexd_kernel_notify_drain(d->kernel, &seen);
	if (d->stopping)
		return 0;
	if (seen.lost) {
		accept_all(d);
		return 0;
	}
	imexd_net_cork(d->net);
	if (seen.requests)
		accept_requests(d);
	more = seen.imports && accept_imports(d, seen.imports);
	if (seen.export_ends && accept_export_ends(d))
		more = true;
	imexd_net_uncork(d->net);
	if (more)
		sd_event_source_set_enabled(d->accept_more, SD_EVENT_ONESHOT);
	return 0;
}
