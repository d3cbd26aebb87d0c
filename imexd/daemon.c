// SPDX-License-Identifier: GPL-2.0
/*
 * The imexd daemon: the sd-event loop and the glue between the protocol
 * core and the outside world.  See daemon.h.
 *
 * Every callback turns its event into one call on the node core, then
 * drain() carries out the actions it queued, in order, and re-arms the one
 * timer at imexd_node_deadline().  Kernel actions are synchronous and their
 * results go straight back into the core; the core is never inside a call
 * while drain() runs, so feeding it from there is safe.  drain() does not
 * nest: events raised while it runs are picked up by its loop.
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
#include "kernel.h"
#include "log.h"
#include "metrics.h"
#include "metrics_pub.h"
#include "net.h"
#include "nodelist.h"
#include "raftlog.h"
#include "store.h"
#include "tls.h"

#define DRAIN_BATCH	20000	/* actions before other events get a turn */
#define STOP_POLL_MS	20

struct dom_seen {
	char name[IMEX_NAME_MAX];
	uint32_t state;
};

struct daemon {
	sd_event *ev;
	const struct imexd_daemon_opts *opts;
	struct imexd_config cfg;
	struct imexd_store *store;
	struct imexd_kernel *kernel;
	struct imexd_kernel_node node;
	struct imexd_tls *tls;
	struct imexd_net *net;
	struct imexd_raftlog *rlog;
	struct imexd_roster_node *roster;
	size_t n_roster;
	struct imexd_node *core;
	struct imexd_members_pub *members;	/* members.json */
	struct imexd_metrics_pub *metrics;	/* imexd.prom; NULL: off */
	sd_event_source *metrics_timer;
	bool clean_exit;
	uint8_t node_uuid[16];
	uint64_t epoch;

	sd_event_source *timer;
	sd_event_source *notify_src;
	sd_event_source *more;		/* drain() continues here */
	sd_event_source *accept_more;	/* accept_imports() continues here */
	sd_event_source *sweep;		/* every queue, now and then */
	uint64_t sweep_retry_ms;	/* after a failed accept; 0: none */
	bool accept_failed;		/* since the sweep began */
	sd_event_source *stop_timer;
	bool draining;
	bool stopping;
	bool ready;
	uint64_t stop_deadline;

	/* For STATUS=. */
	struct dom_seen *doms;
	size_t ndoms;
	bool status_dirty;
	char status[512];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* CLOCK_REALTIME minus now_ms(), for the times health's reasons show. */
static int64_t wall_offset_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 -
	       (int64_t)now_ms();
}

/* --- health bookkeeping (logs and STATUS=) ------------------------------- */

/*
 * The health last pushed for each domain, for STATUS= (the core itself logs
 * every peer and domain state change).
 */
static void note_domain(struct daemon *d, const struct imexd_domain_status *st)
{
	size_t i;

	for (i = 0; i < d->ndoms; i++)
		if (!strcmp(d->doms[i].name, st->name))
			break;
	if (i == d->ndoms) {
		if (d->ndoms == 2UL * IMEX_DOMAINS_MAX)
			d->ndoms = 0;	/* stale names: start over */
		i = d->ndoms++;
		snprintf(d->doms[i].name, sizeof(d->doms[i].name), "%s", st->name);
	}
	d->doms[i].state = st->state;
	d->status_dirty = true;
}

static uint32_t domain_seen_state(const struct daemon *d, const char *name)
{
	for (size_t i = 0; i < d->ndoms; i++)
		if (!strcmp(d->doms[i].name, name))
			return d->doms[i].state;
	return IMEX_DOMAIN_DOWN;
}

/* STATUS=: how many domains, which are not ready, whom they wait for. */
#define STATUS_NAMES	6	/* peers named in STATUS= */

static bool listed(const char (*names)[IMEX_NAME_MAX], size_t n,
		   const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

static void update_status(struct daemon *d)
{
	const struct imexd_def **defs = NULL;
	char line[sizeof(d->status)], waiting[STATUS_NAMES * (IMEX_NAME_MAX + 2) + 8] = "";
	char names[STATUS_NAMES][IMEX_NAME_MAX];
	size_t n, degraded = 0, nwait = 0;
	bool more = false;

	if (!d->status_dirty || !d->ready || d->stopping)
		return;
	d->status_dirty = false;
	n = imexd_node_domains(d->core, NULL, 0);
	if (n) {
		defs = calloc(n, sizeof(const struct imexd_def *));
		if (!defs)
			return;
		n = imexd_node_domains(d->core, defs, n);
	}
	for (size_t i = 0; i < n; i++) {
		if (domain_seen_state(d, defs[i]->name) == IMEX_DOMAIN_READY)
			continue;
		degraded++;
		for (uint16_t m = 0; m < defs[i]->nmembers; m++) {
			const char *name = defs[i]->members[m].name;

			if (!strcmp(name, d->cfg.node_name) ||
			    imexd_node_peer_state(d->core, name) == IMEX_MEMBER_CONNECTED ||
			    listed(names, nwait, name))
				continue;
			if (nwait == STATUS_NAMES) {
				more = true;
				continue;
			}
			snprintf(names[nwait++], IMEX_NAME_MAX, "%s", name);
		}
	}
	for (size_t i = 0; i < nwait; i++) {
		size_t len = strlen(waiting);

		snprintf(waiting + len, sizeof(waiting) - len, "%s%s",
			 i ? ", " : "", names[i]);
	}
	if (more) {
		size_t len = strlen(waiting);

		snprintf(waiting + len, sizeof(waiting) - len, ", ...");
	}
	free(defs);
	if (!n)
		snprintf(line, sizeof(line), "Managing node %s: no domains",
			 d->cfg.node_name);
	else if (!degraded)
		snprintf(line, sizeof(line), "Managing %zu domain(s): all ready", n);
	else if (nwait)
		snprintf(line, sizeof(line), "Managing %zu domain(s), %zu not ready: waiting for %s",
			 n, degraded, waiting);
	else
		snprintf(line, sizeof(line), "Managing %zu domain(s), %zu not ready",
			 n, degraded);
	if (strcmp(line, d->status)) {
		snprintf(d->status, sizeof(d->status), "%s", line);
		sd_notifyf(0, "STATUS=%s", line);
	}
}

/* --- actions ------------------------------------------------------------- */

static void do_send(struct daemon *d, const struct imexd_node_action *a)
{
	int r = imexd_net_send(d->net, a->conn, a->frame, a->len);

	if (r == -ENOBUFS)
		imexd_node_conn_down(d->core, now_ms(), a->conn);
	else if (r < 0)
		log_debug("%zu bytes for connection %" PRIu64 " dropped: %s",
			  a->len, a->conn, strerror(-r));
}

/* A kernel step, then the kernel's domains as they are now. */
static void do_kernel(struct daemon *d, const struct imexd_node_action *a)
{
	struct imexd_def *kdefs = NULL;
	char msg[512] = "", rmsg[512] = "", u[37];
	size_t nk = 0, i;
	int r;

	imexd_uuid_str(a->def->uuid, u);
	if (a->type == IMEXD_NODE_KERNEL_SET)
		r = imexd_kernel_domain_set(d->kernel, a->def, msg, sizeof(msg));
	else
		r = imexd_kernel_domain_remove(d->kernel, a->def->name,
					       a->def->uuid, msg, sizeof(msg));
	if (r < 0)
		log_domain(LOG_WARNING, IMEXD_MSGID_DOMAIN_KERNEL_REFUSED,
			   a->def->name, NULL,
			   "the kernel refused to %s domain %s (%s) generation %" PRIu64 ": %s",
			   a->type == IMEXD_NODE_KERNEL_SET ? "set" : "remove",
			   a->def->name, u, a->def->generation, msg);
	else
		log_domain(LOG_INFO, IMEXD_MSGID_DOMAIN_KERNEL, a->def->name,
			   NULL, "domain %s (%s): %s generation %" PRIu64 " in the kernel",
			   a->def->name, u,
			   a->type == IMEXD_NODE_KERNEL_SET ? "holds" : "removed at",
			   a->def->generation);
	if (imexd_kernel_read_domains(d->kernel, &kdefs, &nk, rmsg,
				      sizeof(rmsg)) < 0) {
		log_err("cannot read the domains the kernel holds: %s", rmsg);
		kdefs = NULL;
		nk = 0;
	}
	imexd_node_kernel_done(d->core, now_ms(), -r, r < 0 ? msg : NULL,
			       kdefs, nk);
	for (i = 0; i < nk; i++)
		imexd_def_free(&kdefs[i]);
	free(kdefs);
}

/* REQUEST_DONE: the channels granted or freed, owners from the domain. */
static void do_request_done(struct daemon *d,
			    const struct imexd_node_action *a)
{
	struct imexd_channel *chans = NULL;
	char msg[512] = "";
	uint32_t i, j;
	int r;

	if (a->nids) {
		chans = calloc(a->nids, sizeof(*chans));
		if (!chans) {
			log_err("out of memory answering request %" PRIu64,
				a->req_id);
			return;
		}
		for (i = 0; i < a->nids; i++) {
			chans[i].id = a->ids[i];
			for (j = 0; a->def && j < a->def->nchannels; j++)
				if (a->def->channels[j].id == a->ids[i])
					chans[i] = a->def->channels[j];
		}
	}
	r = imexd_kernel_req_done(d->kernel, a->req_id, a->error,
				  a->text ? a->text : "",
				  a->def ? a->def->uuid : NULL, chans, a->nids,
				  msg, sizeof(msg));
	free(chans);
	if (r < 0)
		log_warn("cannot complete request %" PRIu64 ": %s", a->req_id,
			 msg);
}

static const char *revoke_reason_name(uint8_t reason)
{
	switch (reason) {
	case IMEX_REVOKE_UNEXPORTED:	return "unexported";
	case IMEX_REVOKE_NODE_LOST:	return "node lost";
	case IMEX_REVOKE_NODE_RESTARTED: return "node restarted";
	case IMEX_REVOKE_CHANNEL_GONE:	return "channel gone";
	case IMEX_REVOKE_DAEMON_LOST:	return "imexd lost";
	default:			return "unknown reason";
	}
}

static void do_import(struct daemon *d, const struct imexd_node_action *a)
{
	uint8_t desc[IMEX_DESC_MAX];
	uint16_t desc_len = 0;
	char msg[512] = "", u[37];
	uint32_t count = 0;
	int r;

	switch (a->type) {
	case IMEXD_NODE_IMPORT_DONE:
		r = imexd_kernel_import_done(d->kernel, a->import_id, a->error,
					     a->desc, a->desc_len,
					     a->text ? a->text : "", msg,
					     sizeof(msg));
		/* ENOENT: the importer gave up (signal, timeout); nothing to undo. */
		if (r == -ENOENT)
			log_debug("import %" PRIu64 " no longer waits", a->import_id);
		else if (r < 0)
			log_warn("cannot complete import %" PRIu64 ": %s",
				 a->import_id, msg);
		break;
	case IMEXD_NODE_IMPORT_CHECK:
		r = imexd_kernel_import_check(d->kernel, a->handle_id,
					      a->domain_uuid, a->channel_id,
					      a->peer, desc, &desc_len, msg,
					      sizeof(msg));
		if (r < 0 && r != -ENOENT && r != -EPERM)
			log_warn("cannot check the import of handle %" PRIu64 " for node '%s': %s",
				 a->handle_id, a->peer, msg);
		imexd_node_import_checked(d->core, now_ms(), a->op_id, -r,
					  desc, desc_len);
		break;
	case IMEXD_NODE_IMPORT_REVOKE:
		r = imexd_kernel_import_revoke(d->kernel, a->node_uuid,
					       a->has_handle ? &a->handle_id : NULL,
					       a->has_domain ? a->domain_uuid : NULL,
					       a->reason, &count, msg, sizeof(msg));
		imexd_uuid_str(a->node_uuid, u);
		if (r < 0)
			log_warn("cannot revoke imports of node %s (%s): %s",
				 u, revoke_reason_name(a->reason), msg);
		else if (count)
			log_domain(LOG_INFO, IMEXD_MSGID_IMPORTS_REVOKED, NULL,
				   NULL, "revoked %u import(s) of node %s's exports: %s",
				   count, u, revoke_reason_name(a->reason));
		break;
	default:
		break;
	}
}

/*
 * Tests only: IMEXD_TEST_FAULT=kill-before-kernel makes this daemon die as
 * by kill -9 the moment it would first change its kernel (a committed
 * domain not yet applied here), so a test can stop a node between the log
 * and the kernel deterministically.
 */
static void test_fault(const struct imexd_node_action *a)
{
	static const char *fault;

	if (!fault) {
		fault = getenv("IMEXD_TEST_FAULT");
		if (!fault)
			fault = "";
	}
	if (strcmp(fault, "kill-before-kernel"))
		return;
	if (a->type == IMEXD_NODE_KERNEL_SET ||
	    a->type == IMEXD_NODE_KERNEL_REMOVE) {
		log_warn("IMEXD_TEST_FAULT: dying before the kernel takes domain %s",
			 a->def->name);
		raise(SIGKILL);
	}
}

static void do_action(struct daemon *d, const struct imexd_node_action *a)
{
	char msg[512] = "";
	int r;

	test_fault(a);
	imexd_log_action(a);
	switch (a->type) {
	case IMEXD_NODE_CONNECT:
		if (imexd_net_connect(d->net, a->addr) < 0)
			imexd_node_conn_failed(d->core, now_ms(), a->addr);
		break;
	case IMEXD_NODE_CLOSE:
		imexd_net_close(d->net, a->conn);
		break;
	case IMEXD_NODE_SEND:
		do_send(d, a);
		break;
	case IMEXD_NODE_CONN_BOUND:
		imexd_net_conn_bind(d->net, a->conn);
		break;
	case IMEXD_NODE_KERNEL_SET:
	case IMEXD_NODE_KERNEL_REMOVE:
		do_kernel(d, a);
		d->status_dirty = true;
		break;
	case IMEXD_NODE_KERNEL_STATUS:
		r = imexd_kernel_set_status(d->kernel, a->status, msg, sizeof(msg));
		if (r < 0)
			log_domain(LOG_WARNING, IMEXD_MSGID_DOMAIN_HEALTH_FAILED,
				   a->status->name, NULL,
				   "cannot push the health of domain %s to the kernel: %s",
				   a->status->name, msg);
		else
			note_domain(d, a->status);
		break;
	case IMEXD_NODE_REQUEST_DONE:
		do_request_done(d, a);
		break;
	case IMEXD_NODE_LOG:
		imexd_log_at(__FILE__, __LINE__, __func__, a->level,
			     a->fields.msgid ? &a->fields : NULL, "%s",
			     a->text);
		break;
	case IMEXD_NODE_IMPORT_DONE:
	case IMEXD_NODE_IMPORT_CHECK:
	case IMEXD_NODE_IMPORT_REVOKE:
		do_import(d, a);
		break;
	}
}

static void arm_timer(struct daemon *d)
{
	uint64_t when = imexd_node_deadline(d->core);

	if (when == UINT64_MAX || d->stopping) {
		sd_event_source_set_enabled(d->timer, SD_EVENT_OFF);
		return;
	}
	sd_event_source_set_time(d->timer, when * 1000);
	sd_event_source_set_enabled(d->timer, SD_EVENT_ONESHOT);
}

static void drain(struct daemon *d)
{
	struct imexd_node_action a;
	unsigned n = 0;

	if (d->draining || !d->core)
		return;
	d->draining = true;
	while (imexd_node_next(d->core, &a)) {
		do_action(d, &a);
		if (++n == DRAIN_BATCH) {
			/* Let sockets and signals have a turn; come back. */
			sd_event_source_set_enabled(d->more, SD_EVENT_ONESHOT);
			break;
		}
	}
	d->draining = false;
	arm_timer(d);
	update_status(d);
	imexd_members_pub_update(d->members);
}

static int on_more(sd_event_source *s, void *ud)
{
	(void)s;
	drain(ud);
	return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *ud)
{
	struct daemon *d = ud;

	(void)s;
	(void)usec;
	imexd_node_set_wall(d->core, wall_offset_ms());
	imexd_node_timer(d->core, now_ms());
	drain(d);
	return 0;
}

/* Metrics: a snapshot every IMEXD_METRICS_MIN_MS, written when changed. */
static int on_metrics(sd_event_source *s, uint64_t usec, void *ud)
{
	struct daemon *d = ud;

	imexd_metrics_pub_tick(d->metrics, now_ms(), d->kernel, d->core,
			       d->ready && !d->stopping);
	sd_event_source_set_time(s, usec + IMEXD_METRICS_MIN_MS * 1000ULL);
	return 0;
}

/* --- peers --------------------------------------------------------------- */

static void on_conn_up(void *data, uint64_t conn, const char *addr,
		       bool outbound)
{
	struct daemon *d = data;

	struct imexd_peers_auth auth;

	imexd_node_conn_up(d->core, now_ms(), conn, addr, outbound,
			   imexd_net_conn_auth(d->net, conn, &auth) ? NULL :
			   &auth);
	drain(d);
}

static void on_conn_failed(void *data, const char *addr)
{
	struct daemon *d = data;

	imexd_node_conn_failed(d->core, now_ms(), addr);
	drain(d);
}

static void on_conn_down(void *data, uint64_t conn)
{
	struct daemon *d = data;

	imexd_node_conn_down(d->core, now_ms(), conn);
	drain(d);
}

static void on_msg(void *data, uint64_t conn, const struct imexd_msg *msg)
{
	struct daemon *d = data;

	imexd_node_msg(d->core, now_ms(), conn, msg);
	drain(d);
}

static const struct imexd_net_ops net_ops = {
	.conn_up = on_conn_up,
	.conn_failed = on_conn_failed,
	.conn_down = on_conn_down,
	.msg = on_msg,
};

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
		imexd_uuid_str(req.uuid, u);
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
 * none is left.  True if the batch ran out, so more may wait.
 */
#define ACCEPT_BATCH	1024

static bool accept_imports(struct daemon *d, unsigned int max)
{
	unsigned int i;
	char msg[512];
	int r;

	if (max > ACCEPT_BATCH)
		max = ACCEPT_BATCH;
	for (i = 0; i < max; i++) {
		struct imexd_import imp;

		r = imexd_kernel_import_accept(d->kernel, &imp, msg, sizeof(msg));
		if (r == -ENOENT)
			return false;
		if (r < 0) {
			log_err("cannot take imports from the imex module: %s", msg);
			sweep_soon(d);
			return false;
		}
		imexd_node_import(d->core, now_ms(), &imp);
		drain(d);
	}
	return i == ACCEPT_BATCH;
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

static int on_accept_more(sd_event_source *s, void *ud)
{
	struct daemon *d = ud;

	(void)s;
	if (!d->stopping && accept_everything(d))
		sd_event_source_set_enabled(d->accept_more, SD_EVENT_ONESHOT);
	return 0;
}

/* The rest of a long queue comes deferred, after the other sources. */
static void accept_all(struct daemon *d)
{
	accept_requests(d);
	if (accept_everything(d))
		sd_event_source_set_enabled(d->accept_more, SD_EVENT_ONESHOT);
}

/*
 * Every queue now and then, whatever the notifications said: an accept
 * that failed, or an end of export whose notification the kernel could
 * not allocate, would otherwise wait for the next notification of its
 * kind.  Soon after a failure (backing off while failures repeat), else
 * every SWEEP_MS.
 */
#define SWEEP_MS	10000ULL
#define SWEEP_RETRY_MS	200ULL

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

static int on_sweep(sd_event_source *s, uint64_t usec, void *ud)
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

static int on_notify(sd_event_source *s, int fd, uint32_t revents, void *ud)
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
	if (seen.requests)
		accept_requests(d);
	more = seen.imports && accept_imports(d, seen.imports);
	if (seen.export_ends && accept_export_ends(d))
		more = true;
	if (more)
		sd_event_source_set_enabled(d->accept_more, SD_EVENT_ONESHOT);
	return 0;
}

/* --- signals ------------------------------------------------------------- */

static int on_stop_poll(sd_event_source *s, uint64_t usec, void *ud)
{
	struct daemon *d = ud;
	size_t left = imexd_net_pending_output(d->net);

	(void)usec;
	if (!left || now_ms() >= d->stop_deadline) {
		if (left)
			log_warn("stopping with %zu bytes not sent to peers", left);
		sd_event_exit(d->ev, 0);
		return 0;
	}
	sd_event_source_set_time_relative(s, STOP_POLL_MS * 1000ULL);
	sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si,
		      void *ud)
{
	struct daemon *d = ud;

	(void)s;
	if (d->stopping) {
		log_info("second %s: stopping now", strsignal((int)si->ssi_signo));
		sd_event_exit(d->ev, 0);
		return 0;
	}
	log_info("%s: stopping (domains stay in the kernel and in %s)",
		 strsignal((int)si->ssi_signo), d->cfg.state_directory);
	sd_notify(0, "STOPPING=1\nSTATUS=Stopping: telling peers");
	imexd_node_shutdown(d->core, now_ms());
	drain(d);
	d->stopping = true;
	sd_event_source_set_enabled(d->timer, SD_EVENT_OFF);
	imexd_net_stop_listening(d->net);
	d->stop_deadline = now_ms() + IMEXD_STOP_FLUSH_MS;
	if (sd_event_add_time_relative(d->ev, &d->stop_timer, CLOCK_MONOTONIC, 0,
				       1000, on_stop_poll, d) < 0)
		sd_event_exit(d->ev, 0);
	return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si,
		     void *ud)
{
	struct daemon *d = ud;
	char err[1024] = "";

	(void)s;
	(void)si;
	sd_notify(0, "RELOADING=1");
	if (imexd_daemon_reread_config(&d->cfg, d->opts->config_path,
				       d->opts->config_explicit, err,
				       sizeof(err)) < 0)
		log_err("SIGHUP: %s: keeping the running configuration; fix the file and send SIGHUP again",
			err);
	else
		log_info("SIGHUP: configuration %s re-read", d->opts->config_path);
	if (d->core)
		imexd_node_set_timing(d->core, d->cfg.heartbeat_interval_ms,
				      d->cfg.heartbeat_miss_count,
				      d->cfg.disconnected_grace_s < 0 ? -1 :
				      d->cfg.disconnected_grace_s * 1000);
	sd_notify(0, "READY=1");
	return 0;
}

static int on_sigusr1(sd_event_source *s, const struct signalfd_siginfo *si,
		      void *ud)
{
	struct daemon *d = ud;
	struct imexd_config file;
	const char *ca = NULL, *cert = NULL, *key = NULL;
	char err[1024] = "", desc[512];
	int r;

	(void)s;
	(void)si;
	if (!d->tls) {
		log_info("SIGUSR1: TLS is off (TLS=no): nothing to reload");
		return 0;
	}
	/* Take the file names from the file as it is now, if it parses. */
	if (imexd_daemon_load_config(&file, d->opts->config_path,
				     d->opts->config_explicit, err,
				     sizeof(err)) == 0 && file.tls) {
		ca = file.tls_ca_file;
		cert = file.tls_cert_file;
		key = file.tls_key_file;
	} else if (err[0]) {
		log_warn("SIGUSR1: %s: reloading the TLS files named at start", err);
	}
	err[0] = 0;
	r = imexd_tls_reload(d->tls, now_ms(), ca, cert, key, err, sizeof(err));
	if (r == -EAGAIN) {
		log_warn("SIGUSR1: %s", err);
		return 0;
	}
	if (r < 0) {
		log_err("SIGUSR1: %s: new connections keep using the previous credentials",
			err);
		return 0;
	}
	if (ca) {
		snprintf(d->cfg.tls_ca_file, sizeof(d->cfg.tls_ca_file), "%s", ca);
		snprintf(d->cfg.tls_cert_file, sizeof(d->cfg.tls_cert_file), "%s", cert);
		snprintf(d->cfg.tls_key_file, sizeof(d->cfg.tls_key_file), "%s", key);
	}
	imexd_tls_describe(d->tls, desc, sizeof(desc));
	log_info("SIGUSR1: TLS credentials reloaded (%s); connections already up keep theirs",
		 desc);
	return 0;
}

/* --- start and stop ------------------------------------------------------ */

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_err("%s", line);
	sd_notifyf(0, "STATUS=Failed: %s", line);
	return -1;
}

static int random_epoch(uint64_t *epoch)
{
	do {
		if (getrandom(epoch, sizeof(*epoch), 0) != (ssize_t)sizeof(*epoch))
			return -errno;
	} while (!*epoch);
	return 0;
}

static void free_defs(struct imexd_def *defs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		imexd_def_free(&defs[i]);
	free(defs);
}

/* The kernel: attach, name the node, listen for requests. */
static int start_kernel(struct daemon *d)
{
	char msg[1024] = "", u[37], ku[37];
	int r;

	sd_notify(0, "STATUS=Attaching to the imex module");
	r = imexd_kernel_open(&d->kernel, msg, sizeof(msg));
	if (r < 0)
		return fail("%s", msg);
	r = imexd_kernel_attach(d->kernel, msg, sizeof(msg));
	if (r < 0)
		return fail("%s", msg);
	r = imexd_kernel_node_get(d->kernel, &d->node, msg, sizeof(msg));
	if (r < 0)
		return fail("cannot read the node from the imex module: %s", msg);
	r = imexd_kernel_node_set(d->kernel, d->cfg.node_name, d->node_uuid, msg,
				  sizeof(msg));
	if (r == -EBUSY) {
		imexd_uuid_str(d->node_uuid, u);
		imexd_uuid_str(d->node.uuid, ku);
		if (strcmp(d->node.name, d->cfg.node_name))
			return fail("the imex module knows this node as '%s', NODE_NAME is '%s', and %u domain(s) exist: set NODE_NAME=%s in %s or delete the domains",
				    d->node.name, d->cfg.node_name, d->node.ndomains,
				    d->node.name, d->opts->config_path);
		return fail("the imex module knows this node as UUID %s, but %s/node.json holds %s, and %u domain(s) exist: restore the state directory (STATE_DIRECTORY) or delete the domains",
			    ku, d->cfg.state_directory, u, d->node.ndomains);
	}
	if (r < 0)
		return fail("cannot set the node's name and UUID in the imex module: %s",
			    msg);
	if (!d->node.has_fabric)
		log_warn("this node has no fabric identity yet: domains cannot be created until it is set ('imexctl node set-fabric' or the fabric_uuid/fabric_partition module parameters), then restart imexd");
	r = imexd_kernel_subscribe(d->kernel, msg, sizeof(msg));
	if (r < 0)
		return fail("%s", msg);
	r = sd_event_add_io(d->ev, &d->notify_src,
			    imexd_kernel_notify_fd(d->kernel), EPOLLIN,
			    on_notify, d);
	if (r < 0)
		return fail("cannot watch the kernel's notifications: %s",
			    strerror(-r));
	return 0;
}

/* The roster: NODES_FILE, or this node alone. */
static int load_roster(struct daemon *d)
{
	struct imexd_member *m = NULL;
	char err[1024] = "";
	size_t n = 0, i;
	int r;

	if (!d->cfg.nodes_file[0])
		return 0;
	r = imexd_daemon_load_nodes(d->cfg.nodes_file, &m, &n, err,
				    sizeof(err));
	if (r < 0)
		return fail("%s", err);
	d->roster = calloc(n ? n : 1, sizeof(*d->roster));
	if (!d->roster) {
		free(m);
		return fail("out of memory");
	}
	for (i = 0; i < n; i++) {
		snprintf(d->roster[i].name, sizeof(d->roster[i].name), "%s",
			 m[i].name);
		snprintf(d->roster[i].addr, sizeof(d->roster[i].addr), "%s",
			 m[i].addr);
	}
	d->n_roster = n;
	free(m);
	log_info("NODES_FILE %s: %zu node(s) in this NVLink domain",
		 d->cfg.nodes_file, n);
	return 0;
}

/* The raft log under STATE_DIRECTORY/raft. */
static int open_raftlog(struct daemon *d)
{
	struct imexd_raftlog_io io;
	char dir[PATH_MAX + 8], err[1024] = "", note[512] = "";
	int r;

	snprintf(dir, sizeof(dir), "%s/raft", d->cfg.state_directory);
	r = imexd_raftlog_dir_io(&io, dir, err, sizeof(err));
	if (r < 0)
		return fail("%s", err);
	r = imexd_raftlog_open(&d->rlog, &io, note, sizeof(note), err,
			       sizeof(err));
	if (r < 0)
		return fail("%s: the raft log is damaged: in a group, move %s aside to have this node start empty and catch up from its peers (an older copy would forget the votes it gave); a single node has no peers: restore it from a backup",
			    err, dir);
	if (note[0])
		log_warn("%s", note);
	return 0;
}

static int start_core(struct daemon *d)
{
	struct imexd_def *kdefs = NULL;
	struct imexd_node_config nc;
	char msg[1024] = "";
	size_t nk = 0;
	int r;

	r = load_roster(d);
	if (!r)
		r = open_raftlog(d);
	if (r < 0)
		return r;
	r = imexd_kernel_read_domains(d->kernel, &kdefs, &nk, msg, sizeof(msg));
	if (r < 0)
		return fail("cannot read the domains the kernel holds: %s", msg);

	memset(&nc, 0, sizeof(nc));
	snprintf(nc.name, sizeof(nc.name), "%s", d->cfg.node_name);
	memcpy(nc.node_uuid, d->node_uuid, 16);
	nc.epoch = d->epoch;
	nc.max_channels = d->node.max_channels;
	memcpy(nc.fabric_uuid, d->node.fabric_uuid, 16);
	nc.partition = d->node.partition;
	nc.roster = d->roster;
	nc.n_roster = d->n_roster;
	nc.default_port = d->cfg.listen_port;
	nc.log = d->rlog;
	nc.heartbeat_ms = d->cfg.heartbeat_interval_ms;
	nc.miss_count = d->cfg.heartbeat_miss_count;
	nc.grace_ms = d->cfg.disconnected_grace_s < 0 ? -1 :
		      d->cfg.disconnected_grace_s * 1000;
	nc.election_timeout_ms = d->cfg.election_timeout_ms;
	nc.seed = (unsigned)d->epoch;
	msg[0] = 0;
	r = imexd_node_new(&nc, &d->core, msg, sizeof(msg));
	if (r < 0) {
		free_defs(kdefs, nk);
		return fail("%s", r == -ENOMEM ? "out of memory" : msg);
	}
	log_info("%zu domain(s) in the kernel; raft log in %s/raft", nk,
		 d->cfg.state_directory);
	imexd_node_set_wall(d->core, wall_offset_ms());
	r = imexd_node_start(d->core, now_ms(), kdefs, nk);
	free_defs(kdefs, nk);
	if (r < 0) {
		drain(d);	/* what the core logged about it */
		return fail("cannot start the agreement from %s/raft: %s",
			    d->cfg.state_directory,
			    r == -ESTALE ? "NODES_FILE does not match the group stored there (see above)" :
			    strerror(-r));
	}
	drain(d);
	return 0;
}

static int start_metrics(struct daemon *d)
{
	int r = imexd_metrics_pub_new(&d->cfg, IMEXD_VERSION, &d->metrics);

	if (r < 0)
		return fail("metrics: cannot write into METRICS_TEXTFILE_DIR %s: %s",
			    d->cfg.metrics_textfile_dir, strerror(-r));
	if (!d->metrics)
		return 0;
	r = sd_event_add_time_relative(d->ev, &d->metrics_timer,
				       CLOCK_MONOTONIC, 0, 100000, on_metrics, d);
	if (r >= 0)
		r = sd_event_source_set_enabled(d->metrics_timer, SD_EVENT_ON);
	if (r < 0)
		return fail("cannot create the metrics timer: %s", strerror(-r));
	return 0;
}

static int start(struct daemon *d)
{
	char err[1024] = "", u[37];
	struct imexd_net_cfg ncfg;
	int r;

	r = random_epoch(&d->epoch);
	if (r < 0)
		return fail("cannot get random bytes: %s", strerror(-r));
	r = imexd_store_open(&d->store, d->cfg.state_directory, err, sizeof(err));
	if (r < 0)
		return fail("state directory %s: %s: create it (mode 0700) or set STATE_DIRECTORY",
			    d->cfg.state_directory, err[0] ? err : strerror(-r));
	r = imexd_store_node_uuid(d->store, d->node_uuid, err, sizeof(err));
	if (r < 0)
		return fail("cannot read or create this node's UUID in %s/node.json: %s: if the file is damaged, restore it from a backup (a new UUID makes this node a stranger to its domains)",
			    d->cfg.state_directory, err[0] ? err : strerror(-r));
	r = start_kernel(d);
	if (r < 0)
		return r;
	/* members.json at once: imexctl node status compares its pid with
	 * the kernel's manager pid as soon as we are attached. */
	d->members = imexd_members_pub_new(d->ev, d->cfg.state_directory,
					   d->cfg.node_name,
					   (long)d->node.manager_pid);
	imexd_members_pub_update(d->members);
	if (d->cfg.tls) {
		char desc[512];

		r = imexd_tls_new(&d->tls, d->cfg.node_name,
				  d->cfg.tls_ca_file, d->cfg.tls_cert_file,
				  d->cfg.tls_key_file, err, sizeof(err));
		if (r < 0)
			return fail("%s", err);
		imexd_tls_describe(d->tls, desc, sizeof(desc));
		log_info("TLS 1.3 with mutual authentication: %s", desc);
	}
	memset(&ncfg, 0, sizeof(ncfg));
	ncfg.listen_address = d->cfg.listen_address;
	ncfg.listen_port = d->cfg.listen_port;
	ncfg.default_port = d->cfg.listen_port;
	ncfg.tls = d->tls;
	r = imexd_net_new(&d->net, d->ev, &ncfg, &net_ops, d, err, sizeof(err));
	if (r < 0)
		return fail("%s", err);
	r = start_core(d);
	if (r < 0)
		return r;

	imexd_uuid_str(d->node_uuid, u);
	log_info("imexd %s: node %s (%s), epoch %016" PRIx64 ", listening on %s port %u%s, max_channels %u",
		 IMEXD_VERSION, d->cfg.node_name, u, d->epoch,
		 d->cfg.listen_address, d->cfg.listen_port,
		 d->tls ? " (TLS)" : "", d->node.max_channels);
	d->ready = true;
	d->status_dirty = true;
	imexd_members_pub_set_core(d->members, d->core);
	imexd_members_pub_update(d->members);
	r = start_metrics(d);
	if (r < 0)
		return r;
	sd_notify(0, "READY=1");
	update_status(d);
	if (d->opts->ready_fd >= 0) {
		/* Detached (no -f): the parent exits now; log to syslog. */
		ssize_t w = write(d->opts->ready_fd, "1", 1);
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		(void)w;
		close(d->opts->ready_fd);
		imexd_log_use_syslog(true);
		if (null >= 0) {
			dup2(null, STDERR_FILENO);
			close(null);
		}
	}
	/* Requests queued before we attached, or while we started. */
	accept_all(d);
	return 0;
}

static void stop(struct daemon *d)
{
	char msg[512];

	if (d->kernel && d->ready &&
	    imexd_kernel_detach(d->kernel, msg, sizeof(msg)) < 0)
		log_debug("detach: %s", msg);
	sd_event_source_disable_unref(d->metrics_timer);
	imexd_metrics_pub_free(d->metrics, d->clean_exit);
	imexd_members_pub_free(d->members);
	imexd_node_free(d->core);
	imexd_raftlog_close(d->rlog);
	free(d->roster);
	imexd_net_free(d->net);
	imexd_tls_free(d->tls);
	sd_event_source_disable_unref(d->notify_src);
	imexd_kernel_close(d->kernel);
	imexd_store_close(d->store);
	sd_event_source_disable_unref(d->timer);
	sd_event_source_disable_unref(d->more);
	sd_event_source_disable_unref(d->accept_more);
	sd_event_source_disable_unref(d->sweep);
	sd_event_source_disable_unref(d->stop_timer);
	free(d->doms);
}

static int setup_loop(struct daemon *d)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1 };
	sigset_t mask;
	int r;

	/* sd-event wants the signals blocked; worker threads inherit it. */
	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&mask, sigs[i]);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	r = sd_event_default(&d->ev);
	if (r < 0)
		return fail("cannot create the event loop: %s", strerror(-r));
	if (sd_event_add_signal(d->ev, NULL, SIGTERM, on_sigterm, d) < 0 ||
	    sd_event_add_signal(d->ev, NULL, SIGINT, on_sigterm, d) < 0 ||
	    sd_event_add_signal(d->ev, NULL, SIGHUP, on_sighup, d) < 0 ||
	    sd_event_add_signal(d->ev, NULL, SIGUSR1, on_sigusr1, d) < 0)
		return fail("cannot watch signals");
	r = sd_event_add_time(d->ev, &d->timer, CLOCK_MONOTONIC, UINT64_MAX,
			      1000, on_timer, d);
	if (r >= 0)
		r = sd_event_source_set_enabled(d->timer, SD_EVENT_OFF);
	if (r >= 0)
		r = sd_event_add_defer(d->ev, &d->more, on_more, d);
	if (r >= 0)
		r = sd_event_source_set_enabled(d->more, SD_EVENT_OFF);
	if (r >= 0)
		r = sd_event_add_defer(d->ev, &d->accept_more, on_accept_more, d);
	if (r >= 0)
		r = sd_event_source_set_enabled(d->accept_more, SD_EVENT_OFF);
	if (r >= 0)
		r = sd_event_add_time_relative(d->ev, &d->sweep, CLOCK_MONOTONIC,
					       SWEEP_MS * 1000, 100000, on_sweep, d);
	if (r < 0)
		return fail("cannot create timers: %s", strerror(-r));
	return 0;
}

int imexd_daemon_run(const struct imexd_config *cfg,
		     const struct imexd_daemon_opts *opts)
{
	struct daemon d;
	int r;

	memset(&d, 0, sizeof(d));
	d.cfg = *cfg;
	d.opts = opts;
	imexd_log_set_level(cfg->log_level);
	d.doms = calloc(2UL * IMEX_DOMAINS_MAX, sizeof(*d.doms));
	if (!d.doms) {
		log_err("out of memory");
		return 1;
	}
	r = setup_loop(&d);
	if (r == 0)
		r = start(&d);
	if (r == 0) {
		r = sd_event_loop(d.ev);
		if (r < 0)
			log_err("the event loop failed: %s", strerror(-r));
	}
	d.clean_exit = r == 0;
	stop(&d);
	sd_event_unref(d.ev);
	if (r == 0)
		log_info("stopped");
	return r == 0 ? 0 : 1;
}
