// SPDX-License-Identifier: GPL-2.0
/*
 * The node dispatcher (node.h): every event goes to the part it concerns;
 * the parts' actions become other parts' inputs or actions for the caller.
 * agree refuses input while it has actions not yet drained, so every call
 * into it is followed at once by draining it (ag_drain); what its actions
 * would feed back into it (a FORWARD that could not be sent) waits in a
 * small list until the drain is over.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/imex.h>

#include "agree.h"
#include "grow.h"
#include "msgid.h"
#include "node_internal.h"

/* ---- the caller's action queue ------------------------------------------ */

struct node_out *node_out_push(struct imexd_node *n,
			       enum imexd_node_action_type type)
{
	struct node_out *o;

	if (n->out_head && n->out_head == n->n_out)
		n->out_head = n->n_out = 0;
	if (imexd_grow((void **)&n->out, &n->cap_out, n->n_out + 1,
		       sizeof(*n->out)))
		return NULL;
	o = &n->out[n->n_out++];
	memset(o, 0, sizeof(*o));
	o->a.type = type;
	return o;
}

void node_out_release(struct node_out *o)
{
	free(o->frame);
	free(o->text);
	free(o->ids);
	free(o->addr);
	free(o->peer);
	imexd_def_free(&o->def);
	free(o->st_members);
	/* What a second release would free again; an entry is cleared
	 * whole when pushed (released once per action: keep it cheap). */
	o->frame = NULL;
	o->text = NULL;
	o->ids = NULL;
	o->addr = NULL;
	o->peer = NULL;
	o->st_members = NULL;
}

static void node_vlog(struct imexd_node *n, const struct imexd_log_fields *f,
		      int level, const char *fmt, va_list ap)
{
	struct node_out *o = node_out_push(n, IMEXD_NODE_LOG);

	if (!o)
		return;
	if (vasprintf(&o->text, fmt, ap) < 0)
		o->text = NULL;
	if (!o->text) {
		n->n_out--;
		return;
	}
	o->a.level = level;
	if (f)
		o->a.fields = *f;
}

void node_log_f(struct imexd_node *n, const struct imexd_log_fields *f,
		int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	node_vlog(n, f, level, fmt, ap);
	va_end(ap);
}

void node_log(struct imexd_node *n, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	node_vlog(n, NULL, level, fmt, ap);
	va_end(ap);
}

char *node_dup_str(const char *s)
{
	return strdup(s ? s : "");
}

/* Pointers of @o into its own storage, once it sits at its final place. */
static void out_fix(struct node_out *o)
{
	o->a.frame = o->frame;
	o->a.text = o->text;
	o->a.ids = o->ids;
	o->a.addr = o->addr;
	o->a.peer = o->peer;
	o->a.def = o->has_def ? &o->def : NULL;
	if (o->has_status) {
		o->st.members = o->st_members;
		o->a.status = &o->st;
	}
	o->a.desc = o->desc_len ? o->desc : NULL;
}

bool imexd_node_next(struct imexd_node *n, struct imexd_node_action *a)
{
	node_out_release(&n->cur);
	if (n->out_head >= n->n_out) {
		n->out_head = n->n_out = 0;
		return false;
	}
	n->cur = n->out[n->out_head++];
	out_fix(&n->cur);
	*a = n->cur.a;
	return true;
}

/* ---- roster --------------------------------------------------------------- */

int node_name_find(const void *base, size_t count, size_t size, size_t off,
		   const char *name)
{
	const char *p = (const char *)base + off;
	size_t i;

	for (i = 0; i < count; i++, p += size)
		if (!strcmp(p, name))
			return (int)i;
	return -1;
}

int node_roster_index(const struct imexd_node *n, const char *name)
{
	return node_find(n->roster, n->n_roster, name);
}

/* "host:port" with the default port added when there is none. */
void node_addr_norm(const struct imexd_node *n, const char *in, char *out,
		    size_t len)
{
	const char *colon = strrchr(in, ':');
	bool v6 = in[0] == '[';

	if ((colon && (!v6 || colon > strchr(in, ']'))) || !in[0])
		snprintf(out, len, "%s", in);
	else
		snprintf(out, len, "%s:%u", in, (unsigned)n->cfg.default_port);
}

/* ---- life ----------------------------------------------------------------- */

int imexd_node_new(const struct imexd_node_config *cfg,
		   struct imexd_node **out, char *err, size_t errlen)
{
	struct imexd_node *n;
	int rv;

	*out = NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->cfg = *cfg;
	n->cfg.roster = NULL;
	if (!n->cfg.default_port)
		n->cfg.default_port = IMEXD_DEFAULT_PORT;
	rv = node_roster_init(n, cfg, err, errlen);
	if (!rv)
		rv = node_parts_new(n, err, errlen);
	if (rv) {
		imexd_node_free(n);
		return rv;
	}
	*out = n;
	return 0;
}

void imexd_node_free(struct imexd_node *n)
{
	size_t i;

	if (!n)
		return;
	imexd_peers_free(n->peers);
	imexd_agree_free(n->agree);
	imexd_health_free(n->health);
	imexd_broker_free(n->broker);
	for (i = n->out_head; i < n->n_out; i++)
		node_out_release(&n->out[i]);
	node_out_release(&n->cur);
	free(n->out);
	free(n->roster);
	free(n->hellos);
	free(n->names);
	node_kernel_set(n, NULL, 0);
	for (i = 0; i < n->n_parked; i++)
		node_out_release(&n->parked[i].o);
	free(n->parked);
	free(n->unsent);
	free(n->dom_sig);
	free(n);
}

int imexd_node_start(struct imexd_node *n, uint64_t now,
		     const struct imexd_def *kernel, size_t nkernel)
{
	int rv;

	n->now = now;
	n->started = now;
	rv = node_kernel_set(n, kernel, nkernel);
	if (rv)
		return rv;
	if (n->outside)
		node_log(n, IMEXD_LOG_INFO,
			 "this node '%s' is not in NODES_FILE: it waits until a node of the group runs 'imexctl node join %s'",
			 n->cfg.name, n->cfg.name);
	rv = imexd_agree_start(n->agree, now, kernel, nkernel);
	node_ag(n, rv, "start");
	if (rv)
		return rv;
	imexd_peers_start(n->peers, now);
	n->domains_dirty = true;
	node_pump(n);
	return 0;
}

void imexd_node_set_wall(struct imexd_node *n, int64_t wall_minus_now)
{
	imexd_health_set_wall(n->health, wall_minus_now);
}

/* No leader known: why, for the reason of every domain not READY. */
static void node_quorum(struct imexd_node *n)
{
	char q[IMEXD_REASON_MAX] = "";

	if (!n->leader[0])
		imexd_agree_quorum(n->agree, n->now, q, sizeof(q));
	imexd_health_set_quorum(n->health, n->now, q);
}

void imexd_node_timer(struct imexd_node *n, uint64_t now)
{
	n->now = now;
	if (imexd_agree_timeout(n->agree) <= now)
		node_ag(n, imexd_agree_tick(n->agree, now), "timer");
	if (imexd_peers_deadline(n->peers) <= now)
		imexd_peers_timer(n->peers, now);
	if (imexd_health_deadline(n->health) <= now)
		imexd_health_timer(n->health, now);
	if (imexd_broker_deadline(n->broker) <= now)
		imexd_broker_timer(n->broker, now);
	node_joins_expire(n);
	node_quorum(n);
	node_pump(n);
	node_parked_release(n);
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t imexd_node_deadline(const struct imexd_node *n)
{
	uint64_t t = imexd_agree_timeout(n->agree);

	t = min64(t, imexd_peers_deadline(n->peers));
	t = min64(t, imexd_health_deadline(n->health));
	t = min64(t, node_parked_deadline(n));
	t = min64(t, node_joins_deadline(n));
	return min64(t, imexd_broker_deadline(n->broker));
}

void imexd_node_set_timing(struct imexd_node *n, uint32_t heartbeat_ms,
			   uint32_t miss_count, int64_t grace_ms)
{
	imexd_health_set_timing(n->health, heartbeat_ms, miss_count,
				grace_ms);
}

void imexd_node_shutdown(struct imexd_node *n, uint64_t now)
{
	n->now = now;
	imexd_peers_shutdown(n->peers, now);
	imexd_broker_shutdown(n->broker, now);
	node_pump(n);
}

/* ---- transport events ----------------------------------------------------- */

void imexd_node_conn_up(struct imexd_node *n, uint64_t now, uint64_t conn,
			const char *addr, bool outbound,
			const struct imexd_peers_auth *auth)
{
	n->now = now;
	imexd_peers_conn_up(n->peers, now, conn, addr, outbound, auth);
	node_pump(n);
}

void imexd_node_conn_failed(struct imexd_node *n, uint64_t now,
			    const char *addr)
{
	n->now = now;
	imexd_peers_conn_failed(n->peers, now, addr);
	node_pump(n);
}

void imexd_node_conn_down(struct imexd_node *n, uint64_t now, uint64_t conn)
{
	n->now = now;
	imexd_peers_conn_down(n->peers, now, conn);
	node_pump(n);
}

void imexd_node_msg(struct imexd_node *n, uint64_t now, uint64_t conn,
		    const struct imexd_msg *msg)
{
	n->now = now;
	imexd_peers_msg(n->peers, now, conn, msg);
	node_pump(n);
}

/* ---- kernel and imports --------------------------------------------------- */

void imexd_node_kernel_done(struct imexd_node *n, uint64_t now, int error,
			    const char *message,
			    const struct imexd_def *kernel, size_t nkernel)
{
	n->now = now;
	if (!n->kernel_busy) {
		node_log(n, IMEXD_LOG_ERR,
			 "a kernel step's result came with no step running (a bug in imexd: please report it)");
		node_pump(n);
		return;
	}
	n->kernel_busy = false;
	if (error)
		node_log(n, IMEXD_LOG_WARN, "kernel step refused: %s (%s)",
			 message && message[0] ? message : strerror(error),
			 strerror(error));
	if (node_kernel_set(n, kernel, nkernel))
		node_log(n, IMEXD_LOG_ERR,
			 "out of memory keeping the kernel's domains");
	node_applied_refresh(n);
	node_ag(n, imexd_agree_kernel_done(n->agree, now, error, kernel,
					   nkernel), "a kernel step");
	/* Health's status for what the kernel now holds goes first: the
	 * kernel shows a fresh domain, or one a member joined, DEGRADED until
	 * its manager says what it is, and the caller reads the state as soon
	 * as the answer comes. */
	node_pump(n);
	node_parked_release(n);
}

void imexd_node_import(struct imexd_node *n, uint64_t now,
		       const struct imexd_import *imp)
{
	n->now = now;
	imexd_broker_import(n->broker, now, node_fsm(n), imp);
	node_pump(n);
}

void imexd_node_import_checked(struct imexd_node *n, uint64_t now,
			       uint64_t op_id, int error, const uint8_t *desc,
			       uint16_t desc_len)
{
	n->now = now;
	imexd_broker_checked(n->broker, now, op_id, error, desc, desc_len);
	node_pump(n);
}

void imexd_node_export_del(struct imexd_node *n, uint64_t now,
			   uint64_t handle_id, const uint8_t domain_uuid[16],
			   uint32_t channel_id)
{
	n->now = now;
	imexd_broker_export_del(n->broker, now, node_fsm(n), handle_id,
				domain_uuid, channel_id);
	node_pump(n);
}

/* ---- views ---------------------------------------------------------------- */

size_t imexd_node_domains(const struct imexd_node *n,
			  const struct imexd_def **defs, size_t max)
{
	const struct imexd_fsm *fsm = node_fsm(n);
	const struct imexd_def *d;
	size_t pos = 0, k = 0;

	if (!fsm)
		return 0;
	while ((d = imexd_fsm_domain_of(fsm, n->cfg.name, &pos))) {
		if (defs && k < max)
			defs[k] = d;
		k++;
	}
	return k;
}

bool imexd_node_domain_ready(const struct imexd_node *n,
			     const uint8_t uuid[16])
{
	return imexd_health_ready(n->health, uuid);
}

uint8_t imexd_node_peer_state(const struct imexd_node *n, const char *name)
{
	return imexd_health_peer_state(n->health, name);
}

const struct imexd_fsm *imexd_node_fsm(const struct imexd_node *n)
{
	return node_fsm(n);
}

const char *imexd_node_leader(const struct imexd_node *n)
{
	return n->leader[0] ? n->leader : NULL;
}

const struct imexd_agree *imexd_node_agree(const struct imexd_node *n)
{
	return n->agree;
}

const struct imexd_broker *imexd_node_broker(const struct imexd_node *n)
{
	return n->broker;
}

void imexd_node_set_applied_hook(struct imexd_node *n,
				 imexd_node_applied_fn *fn, void *ctx)
{
	n->applied_fn = fn;
	n->applied_ctx = ctx;
}
