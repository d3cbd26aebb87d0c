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

#include "daemon_internal.h"

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* CLOCK_REALTIME minus now_ms(), for the times health's reasons show. */
int64_t wall_offset_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 -
	       (int64_t)now_ms();
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

void drain(struct daemon *d)
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

int on_more(sd_event_source *s, void *ud)
{
	(void)s;
	drain(ud);
	return 0;
}

int on_timer(sd_event_source *s, uint64_t usec, void *ud)
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
int on_metrics(sd_event_source *s, uint64_t usec, void *ud)
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

const struct imexd_net_ops net_ops = {
	.conn_up = on_conn_up,
	.conn_failed = on_conn_failed,
	.conn_down = on_conn_down,
	.msg = on_msg,
};

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

int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si,
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

int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si,
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

int on_sigusr1(sd_event_source *s, const struct signalfd_siginfo *si,
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
