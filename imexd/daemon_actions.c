// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's side of the node core's actions: sending frames, kernel
 * steps, request completions and imports (do_action()), and the health
 * bookkeeping behind the logs and STATUS=.  See daemon.c.
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

void update_status(struct daemon *d)
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

	imex_uuid_format(a->def->uuid, u);
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
		/* Queued: the DONEs of one loop turn go in one write (on_prepare). */
		r = imexd_kernel_import_done(d->kernel, a->import_id, a->error,
					     a->desc, a->desc_len,
					     a->text ? a->text : "", msg,
					     sizeof(msg));
		if (r < 0)
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
		imex_uuid_format(a->node_uuid, u);
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

void do_action(struct daemon *d, const struct imexd_node_action *a)
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
