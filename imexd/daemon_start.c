// SPDX-License-Identifier: GPL-2.0
/*
 * Starting and stopping the daemon: the event loop and its sources, the
 * kernel attachment, the roster, the raft log, the node core and metrics;
 * imexd_daemon_run().  See daemon.c.
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
		imex_uuid_format(d->node_uuid, u);
		imex_uuid_format(d->node.uuid, ku);
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
	if (r >= 0)
		r = sd_event_source_set_prepare(d->notify_src, on_prepare);
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

	imex_uuid_format(d->node_uuid, u);
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
