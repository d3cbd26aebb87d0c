// SPDX-License-Identifier: GPL-2.0
/*
 * The imexd daemon: the sd-event loop and the glue between the protocol
 * core and the outside world.  See daemon.h.
 *
 * Every callback turns its event into one call on the core, then drain()
 * carries out the actions the core queued, in order, and re-arms the one
 * timer at imexd_core_next_deadline().  Kernel actions are synchronous and
 * their results go straight back into the core; the core is never inside a
 * call while drain() runs, so feeding it from there is safe.  drain() does
 * not nest: events raised while it runs are picked up by its loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include "core.h"
#include "daemon.h"
#include "describe.h"
#include "kernel.h"
#include "log.h"
#include "net.h"
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
	struct imexd_core *core;
	uint8_t node_uuid[16];
	uint64_t epoch;

	sd_event_source *timer;
	sd_event_source *notify_src;
	sd_event_source *more;		/* drain() continues here */
	sd_event_source *accept_more;	/* accept_imports() continues here */
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
	n = imexd_core_domains(d->core, NULL);
	if (n) {
		defs = calloc(n, sizeof(const struct imexd_def *));
		if (!defs)
			return;
		n = imexd_core_domains(d->core, defs);
	}
	for (size_t i = 0; i < n; i++) {
		if (domain_seen_state(d, defs[i]->name) == IMEX_DOMAIN_READY)
			continue;
		degraded++;
		for (uint16_t m = 0; m < defs[i]->nmembers; m++) {
			const char *name = defs[i]->members[m].name;

			if (!strcmp(name, d->cfg.node_name) ||
			    imexd_core_peer_state(d->core, name) == IMEX_MEMBER_CONNECTED ||
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

static void do_send(struct daemon *d, const struct imexd_action *a)
{
	uint8_t *frame = NULL;
	size_t len = 0;
	int r;

	r = imexd_msg_encode(&a->msg, &frame, &len);
	if (r < 0) {
		log_err("cannot encode %s for connection %" PRIu64 ": %s (a bug in imexd: please report it)",
			imexd_msg_type_name(a->msg.type), a->conn, strerror(-r));
		return;
	}
	r = imexd_net_send(d->net, a->conn, frame, len);
	free(frame);
	if (r == -ENOBUFS)
		imexd_core_conn_down(d->core, now_ms(), a->conn);
	else if (r < 0)
		log_debug("%s for connection %" PRIu64 " dropped: %s",
			  imexd_msg_type_name(a->msg.type), a->conn, strerror(-r));
}

static void do_kernel(struct daemon *d, const struct imexd_action *a)
{
	char msg[512] = "";
	int r = 0;

	switch (a->type) {
	case IMEXD_ACT_KERNEL_PREPARE:
		r = imexd_kernel_prepare(d->kernel, a->change_id, a->op,
					 a->lease_ms, &a->def, a->chans,
					 a->nchans, msg, sizeof(msg));
		break;
	case IMEXD_ACT_KERNEL_COMMIT:
		r = imexd_kernel_commit(d->kernel, a->change_id, msg, sizeof(msg));
		break;
	case IMEXD_ACT_KERNEL_ABORT:
		r = imexd_kernel_abort(d->kernel, a->change_id, msg, sizeof(msg));
		break;
	default:
		return;
	}
	if (r < 0)
		log_debug("kernel %s of change %" PRIu64 " refused: %s (%s)",
			  imexd_action_name(a->type), a->change_id, msg,
			  strerror(-r));
	imexd_core_kernel_done(d->core, now_ms(), a->op_id, -r,
			       r < 0 ? msg : NULL);
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

static void do_import(struct daemon *d, const struct imexd_action *a)
{
	uint8_t desc[IMEX_DESC_MAX];
	uint16_t desc_len = 0;
	char msg[512] = "", u[37];
	uint32_t count = 0;
	int r;

	switch (a->type) {
	case IMEXD_ACT_IMPORT_DONE:
		r = imexd_kernel_import_done(d->kernel, a->import_id, a->error,
					     a->desc, a->desc_len, a->text, msg,
					     sizeof(msg));
		/* ENOENT: the importer gave up (signal, timeout); nothing to undo. */
		if (r == -ENOENT)
			log_debug("import %" PRIu64 " no longer waits", a->import_id);
		else if (r < 0)
			log_warn("cannot complete import %" PRIu64 ": %s",
				 a->import_id, msg);
		break;
	case IMEXD_ACT_IMPORT_CHECK:
		r = imexd_kernel_import_check(d->kernel, a->handle_id,
					      a->domain_uuid, a->channel_id,
					      a->peer, desc, &desc_len, msg,
					      sizeof(msg));
		if (r < 0 && r != -ENOENT && r != -EPERM)
			log_warn("cannot check the import of handle %" PRIu64 " for node '%s': %s",
				 a->handle_id, a->peer, msg);
		imexd_core_import_checked(d->core, now_ms(), a->op_id, -r,
					  desc, desc_len);
		break;
	case IMEXD_ACT_IMPORT_REVOKE:
		r = imexd_kernel_import_revoke(d->kernel, a->node_uuid,
					       a->has_handle ? &a->handle_id : NULL,
					       a->has_domain ? a->domain_uuid : NULL,
					       a->reason, &count, msg, sizeof(msg));
		imexd_uuid_str(a->node_uuid, u);
		if (r < 0)
			log_warn("cannot revoke imports of node %s (%s): %s",
				 u, revoke_reason_name(a->reason), msg);
		else if (count)
			log_info("revoked %u import(s) of node %s's exports: %s",
				 count, u, revoke_reason_name(a->reason));
		break;
	default:
		break;
	}
}

/*
 * Tests only: IMEXD_TEST_FAULT=kill-before-commit makes this daemon die as
 * by kill -9 the moment it would first commit anything (send COMMIT or
 * apply one), so a test can leave a coordinator dead between PREPARE and
 * COMMIT deterministically.
 */
static void test_fault(const struct imexd_action *a)
{
	static const char *fault;

	if (!fault) {
		fault = getenv("IMEXD_TEST_FAULT");
		if (!fault)
			fault = "";
	}
	if (strcmp(fault, "kill-before-commit"))
		return;
	if (a->type == IMEXD_ACT_KERNEL_COMMIT ||
	    (a->type == IMEXD_ACT_SEND && a->msg.type == IMEXD_MSG_COMMIT)) {
		log_warn("IMEXD_TEST_FAULT: dying before commit of change %" PRIu64,
			 a->change_id ? a->change_id : a->msg.u.change.change_id);
		raise(SIGKILL);
	}
}

static void do_action(struct daemon *d, const struct imexd_action *a)
{
	char msg[512] = "";
	char u[37];
	int r;

	test_fault(a);
	imexd_log_action(a);
	switch (a->type) {
	case IMEXD_ACT_CONNECT:
		if (imexd_net_connect(d->net, a->addr) < 0)
			imexd_core_conn_failed(d->core, now_ms(), a->addr);
		break;
	case IMEXD_ACT_CLOSE:
		imexd_net_close(d->net, a->conn);
		break;
	case IMEXD_ACT_SEND:
		do_send(d, a);
		break;
	case IMEXD_ACT_KERNEL_PREPARE:
	case IMEXD_ACT_KERNEL_COMMIT:
	case IMEXD_ACT_KERNEL_ABORT:
		do_kernel(d, a);
		break;
	case IMEXD_ACT_KERNEL_STATUS:
		r = imexd_kernel_set_status(d->kernel, &a->status, msg, sizeof(msg));
		if (r < 0)
			log_warn("cannot push the health of domain %s to the kernel: %s",
				 a->status.name, msg);
		else
			note_domain(d, &a->status);
		break;
	case IMEXD_ACT_REQUEST_DONE:
		/* With its result when the core gives one: the domain's
		 * UUID (create), the channels granted or freed. */
		r = imexd_kernel_req_done(d->kernel, a->req_id, a->error, a->text,
					  a->def.uuid, a->chans, a->nchans,
					  msg, sizeof(msg));
		if (r < 0)
			log_warn("cannot complete request %" PRIu64 ": %s",
				 a->req_id, msg);
		break;
	case IMEXD_ACT_STORE_DEF:
		r = imexd_store_put_def(d->store, &a->def);
		if (r < 0)
			log_err("cannot save domain %s in %s: %s: check the disk and the directory's permissions; the domain will not be re-created after a reboot until it is saved",
				a->def.name, d->cfg.state_directory, strerror(-r));
		d->status_dirty = true;
		break;
	case IMEXD_ACT_STORE_REMOVE:
		r = imexd_store_remove_def(d->store, a->def.uuid);
		if (r < 0) {
			imexd_uuid_str(a->def.uuid, u);
			log_err("cannot remove domain %s from %s: %s: remove %s/domains/%s.json by hand",
				u, d->cfg.state_directory, strerror(-r),
				d->cfg.state_directory, u);
		}
		d->status_dirty = true;
		break;
	case IMEXD_ACT_PEER_RESTARTED:
		log_info("peer %s restarted (a new instance): what it had exported is gone",
			 a->peer);
		break;
	case IMEXD_ACT_LOG:
		imexd_log(a->level, "%s", a->text);
		break;
	case IMEXD_ACT_IMPORT_DONE:
	case IMEXD_ACT_IMPORT_CHECK:
	case IMEXD_ACT_IMPORT_REVOKE:
		do_import(d, a);
		break;
	}
}

static void arm_timer(struct daemon *d)
{
	uint64_t when = imexd_core_next_deadline(d->core);

	if (when == UINT64_MAX || d->stopping) {
		sd_event_source_set_enabled(d->timer, SD_EVENT_OFF);
		return;
	}
	sd_event_source_set_time(d->timer, when * 1000);
	sd_event_source_set_enabled(d->timer, SD_EVENT_ONESHOT);
}

static void drain(struct daemon *d)
{
	struct imexd_action a;
	unsigned n = 0;

	if (d->draining || !d->core)
		return;
	d->draining = true;
	while (imexd_core_next_action(d->core, &a)) {
		do_action(d, &a);
		imexd_action_free(&a);
		if (++n == DRAIN_BATCH) {
			/* Let sockets and signals have a turn; come back. */
			sd_event_source_set_enabled(d->more, SD_EVENT_ONESHOT);
			break;
		}
	}
	d->draining = false;
	arm_timer(d);
	update_status(d);
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
	imexd_core_timer(d->core, now_ms());
	drain(d);
	return 0;
}

/* --- peers --------------------------------------------------------------- */

static void on_conn_up(void *data, uint64_t conn, const char *addr,
		       bool outbound)
{
	struct daemon *d = data;

	imexd_core_conn_up(d->core, now_ms(), conn, addr, outbound);
	drain(d);
}

static void on_conn_failed(void *data, const char *addr)
{
	struct daemon *d = data;

	imexd_core_conn_failed(d->core, now_ms(), addr);
	drain(d);
}

static void on_conn_down(void *data, uint64_t conn)
{
	struct daemon *d = data;

	imexd_core_conn_down(d->core, now_ms(), conn);
	drain(d);
}

static void on_msg(void *data, uint64_t conn, const struct imexd_msg *msg)
{
	struct daemon *d = data;

	imexd_core_msg(d->core, now_ms(), conn, msg);
	drain(d);
}

static const struct imexd_net_ops net_ops = {
	.conn_up = on_conn_up,
	.conn_failed = on_conn_failed,
	.conn_down = on_conn_down,
	.msg = on_msg,
};

/* --- requests ------------------------------------------------------------ */

static void accept_requests(struct daemon *d)
{
	/* Each wakeup takes everything waiting, bounded by the kernel's cap. */
	for (int i = 0; i < 2 * IMEX_REQS_MAX; i++) {
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
			return;
		}
		imexd_uuid_str(req.uuid, u);
		log_info("request %" PRIu64 ": %s %s%s%s", req.req_id,
			 imexd_kernel_cmd_name(req.cmd), req.name,
			 req.has_uuid ? " uuid " : "", req.has_uuid ? u : "");
		imexd_core_request(d->core, now_ms(), &req);
		imexd_kernel_request_release(&req);
		drain(d);
	}
}

/*
 * Remote imports and ends of exports: take what waits, in bounded batches
 * (a full queue of ends is IMEX_EXPORT_ENDS_MAX records); true if more may wait.
 */
#define ACCEPT_BATCH	1024

static bool accept_imports(struct daemon *d)
{
	char msg[512];
	int i, r;

	for (i = 0; i < ACCEPT_BATCH; i++) {
		struct imexd_import imp;

		r = imexd_kernel_import_accept(d->kernel, &imp, msg, sizeof(msg));
		if (r == -ENOENT)
			break;
		if (r < 0) {
			log_err("cannot take imports from the imex module: %s", msg);
			break;
		}
		imexd_core_import(d->core, now_ms(), &imp);
		drain(d);
	}
	if (i == ACCEPT_BATCH)
		return true;
	for (i = 0; i < ACCEPT_BATCH; i++) {
		uint8_t dom[16];
		uint64_t handle;
		uint32_t chan;

		r = imexd_kernel_export_del_accept(d->kernel, &handle, dom, &chan,
						   msg, sizeof(msg));
		if (r == -ENOENT)
			break;
		if (r < 0) {
			log_err("cannot take the ends of exports from the imex module: %s",
				msg);
			break;
		}
		imexd_core_export_del(d->core, now_ms(), handle, dom, chan);
		drain(d);
	}
	return i == ACCEPT_BATCH;
}

static int on_accept_more(sd_event_source *s, void *ud)
{
	struct daemon *d = ud;

	(void)s;
	if (!d->stopping && accept_imports(d))
		sd_event_source_set_enabled(d->accept_more, SD_EVENT_ONESHOT);
	return 0;
}

static int on_notify(sd_event_source *s, int fd, uint32_t revents, void *ud)
{
	struct daemon *d = ud;

	(void)s;
	(void)fd;
	(void)revents;
	/* Content aside: lost multicasts (an overrun) are covered by draining
	 * every queue until it is empty. */
	imexd_kernel_notify_drain(d->kernel);
	if (d->stopping)
		return 0;
	accept_requests(d);
	if (accept_imports(d))
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
	imexd_core_shutdown(d->core, now_ms());
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
		imexd_core_set_timing(d->core, d->cfg.heartbeat_interval_ms,
				      d->cfg.heartbeat_miss_count,
				      d->cfg.disconnected_grace_s < 0 ? -1 :
				      d->cfg.disconnected_grace_s * 1000,
				      d->cfg.change_step_timeout_ms,
				      d->cfg.change_lease_ms);
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

static int start_core(struct daemon *d)
{
	struct imexd_def *kdefs = NULL, *sdefs = NULL;
	size_t nk = 0, ns = 0;
	struct imexd_core_cfg cc;
	char msg[1024] = "";
	int r;

	r = imexd_kernel_read_domains(d->kernel, &kdefs, &nk, msg, sizeof(msg));
	if (r < 0)
		return fail("cannot read the domains the kernel holds: %s", msg);
	msg[0] = 0;
	r = imexd_store_load_defs(d->store, &sdefs, &ns, msg, sizeof(msg));
	if (r < 0) {
		free_defs(kdefs, nk);
		return fail("cannot read the stored domains in %s: %s: check the directory's permissions",
			    d->cfg.state_directory, msg[0] ? msg : strerror(-r));
	}
	if (msg[0])
		log_warn("some stored domains in %s were skipped: %s",
			 d->cfg.state_directory, msg);

	memset(&cc, 0, sizeof(cc));
	snprintf(cc.node_name, sizeof(cc.node_name), "%s", d->cfg.node_name);
	memcpy(cc.node_uuid, d->node_uuid, 16);
	cc.epoch = d->epoch;
	cc.max_channels = d->node.max_channels;
	memcpy(cc.fabric_uuid, d->node.fabric_uuid, 16);
	cc.partition = d->node.partition;
	cc.heartbeat_ms = d->cfg.heartbeat_interval_ms;
	cc.miss_count = d->cfg.heartbeat_miss_count;
	cc.grace_ms = d->cfg.disconnected_grace_s < 0 ? -1 :
		      d->cfg.disconnected_grace_s * 1000;
	cc.step_timeout_ms = d->cfg.change_step_timeout_ms;
	cc.lease_ms = d->cfg.change_lease_ms;
	cc.default_port = d->cfg.listen_port;
	d->core = imexd_core_new(&cc);
	if (!d->core) {
		free_defs(kdefs, nk);
		free_defs(sdefs, ns);
		return fail("out of memory");
	}
	log_info("%zu domain(s) in the kernel, %zu stored in %s", nk, ns,
		 d->cfg.state_directory);
	imexd_core_start(d->core, now_ms(), kdefs, nk, sdefs, ns);
	free_defs(kdefs, nk);
	free_defs(sdefs, ns);
	drain(d);
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
	r = imexd_store_node_uuid(d->store, d->node_uuid);
	if (r < 0)
		return fail("cannot read or create this node's UUID in %s/node.json: %s: if the file is damaged, restore it from a backup (a new UUID makes this node a stranger to its domains)",
			    d->cfg.state_directory, strerror(-r));
	r = start_kernel(d);
	if (r < 0)
		return r;
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
	accept_requests(d);
	if (accept_imports(d))
		sd_event_source_set_enabled(d->accept_more, SD_EVENT_ONESHOT);
	return 0;
}

static void stop(struct daemon *d)
{
	char msg[512];

	if (d->kernel && d->ready &&
	    imexd_kernel_detach(d->kernel, msg, sizeof(msg)) < 0)
		log_debug("detach: %s", msg);
	imexd_core_free(d->core);
	imexd_net_free(d->net);
	imexd_tls_free(d->tls);
	sd_event_source_disable_unref(d->notify_src);
	imexd_kernel_close(d->kernel);
	imexd_store_close(d->store);
	sd_event_source_disable_unref(d->timer);
	sd_event_source_disable_unref(d->more);
	sd_event_source_disable_unref(d->accept_more);
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
	stop(&d);
	sd_event_unref(d.ev);
	if (r == 0)
		log_info("stopped");
	return r == 0 ? 0 : 1;
}
