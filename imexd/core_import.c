// SPDX-License-Identifier: GPL-2.0
/*
 * Remote imports, the core's side (see core.h): one IMPORT_REQ and one
 * IMPORT_RESP per import, the exporting node's kernel deciding.
 *
 * Importing node: a kernel import names a handle (node UUID, id); the
 * exporter is the member of the importer's domain whose HELLO carried that
 * UUID.  The import waits in a bounded table until its IMPORT_RESP, the
 * loss of the connection it went out on (EHOSTUNREACH), or
 * IMEX_IMPORT_TIMEOUT_MAX_MS (by then the kernel has given up on it too).
 *
 * Exporting node: an IMPORT_REQ from a member of the domain becomes one
 * IMPORT_CHECK in the kernel, on behalf of that member; the answer goes
 * back on the connection the request came on, if it is still that peer's.
 *
 * Ends: an export a peer imported ends -> EXPORT_REVOKE to each member of
 * its domain (held for a member that is away until it binds again; dropped
 * once it is lost or restarted, as it then drops our exports by itself).
 * The importer revokes by the sender's node UUID: nothing else is touched.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core_internal.h"

static void uuid_fmt(const uint8_t u[16], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	int i, k = 0;

	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[k++] = '-';
		out[k++] = hex[u[i] >> 4];
		out[k++] = hex[u[i] & 15];
	}
	out[k] = '\0';
}

static void *core_grow(void *arr, size_t *cap, size_t elem)
{
	size_t n = *cap ? *cap * 2 : 16;
	void *p = realloc(arr, n * elem);

	if (!p)
		abort();		/* as everywhere in the core */
	*cap = n;
	return p;
}

static void core_imp_done(struct imexd_core *core, uint64_t import_id,
			  int error, const uint8_t *desc, uint16_t desc_len,
			  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void core_imp_done(struct imexd_core *core, uint64_t import_id,
			  int error, const uint8_t *desc, uint16_t desc_len,
			  const char *fmt, ...)
{
	struct imexd_action *a = core_act(core, IMEXD_ACT_IMPORT_DONE);
	va_list ap;

	a->import_id = import_id;
	a->error = error;
	if (!error && desc && desc_len <= IMEX_DESC_MAX) {
		memcpy(a->desc, desc, desc_len);
		a->desc_len = desc_len;
	}
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(a->text, IMEX_MESSAGE_MAX, fmt, ap);
		va_end(ap);
	}
}

static void core_revoke_act(struct imexd_core *core, const uint8_t node[16],
			    const uint64_t *handle_id, uint8_t reason)
{
	struct imexd_action *a = core_act(core, IMEXD_ACT_IMPORT_REVOKE);

	memcpy(a->node_uuid, node, 16);
	if (handle_id) {
		a->has_handle = true;
		a->handle_id = *handle_id;
	}
	a->reason = reason;
}

static void core_imp_remove(struct imexd_core *core, size_t i)
{
	memmove(&core->imps[i], &core->imps[i + 1],
		(core->nimps - i - 1) * sizeof(core->imps[0]));
	core->nimps--;
}

/* The live domain @uuid with @p (a peer index) among its members, or NULL. */
static const struct core_domain *core_imp_domain(const struct imexd_core *core,
						 const uint8_t uuid[16], int p)
{
	const struct core_domain *d = core_dom_find(core, uuid);

	if (!d || d->kind != DOM_LIVE || !d->in_kernel)
		return NULL;
	if (p >= 0 && core_def_member(&d->def, core->peers[p].name) < 0)
		return NULL;
	return d;
}

/* ---- importing node ---- */

/* The member of @d whose instance has @uuid: peer index, or -1. */
static int core_imp_exporter(const struct imexd_core *core,
			     const struct core_domain *d, const uint8_t uuid[16],
			     bool *unknown_member)
{
	uint16_t m;

	*unknown_member = false;
	for (m = 0; m < d->def.nmembers; m++) {
		int p = d->midx[m];

		if (p < 0)
			continue;
		if (!core->peers[p].known)
			*unknown_member = true;
		else if (!memcmp(core->peers[p].uuid, uuid, 16))
			return p;
	}
	return -1;
}

/* A known peer (any domain) with @uuid, for the error message; or -1. */
static int core_imp_any_peer(const struct imexd_core *core,
			     const uint8_t uuid[16])
{
	size_t i;

	for (i = 0; i < core->npeers; i++)
		if (core->peers[i].known && !memcmp(core->peers[i].uuid, uuid, 16))
			return (int)i;
	return -1;
}

void core_imp_kernel(struct imexd_core *core, const struct imexd_import *imp)
{
	const struct core_domain *d;
	struct core_import *ci;
	struct imexd_msg m;
	char u[37], du[37];
	bool unknown;
	int p;

	uuid_fmt(imp->handle_node, u);
	if (core->shutting_down) {
		core_imp_done(core, imp->import_id, ENOTCONN, NULL, 0,
			      "imexd is shutting down");
		return;
	}
	d = core_imp_domain(core, imp->domain_uuid, -1);
	if (!d) {
		uuid_fmt(imp->domain_uuid, du);
		core_imp_done(core, imp->import_id, EHOSTUNREACH, NULL, 0,
			      "imexd does not hold domain %s yet: retry", du);
		return;
	}
	if (!memcmp(imp->handle_node, core->cfg.node_uuid, 16)) {
		core_imp_done(core, imp->import_id, EINVAL, NULL, 0,
			      "handle %s:%llu is this node's own", u,
			      (unsigned long long)imp->handle_id);
		return;
	}
	p = core_imp_exporter(core, d, imp->handle_node, &unknown);
	if (p < 0 && (core_imp_any_peer(core, imp->handle_node) >= 0 ||
		      !unknown)) {
		int q = core_imp_any_peer(core, imp->handle_node);

		core_log(core, IMEXD_LOG_INFO,
			 "import %llu refused: node %s%s%s%s is not a member of domain '%s'",
			 (unsigned long long)imp->import_id, u,
			 q >= 0 ? " ('" : "", q >= 0 ? core->peers[q].name : "",
			 q >= 0 ? "')" : "", d->def.name);
		core_imp_done(core, imp->import_id, EPERM, NULL, 0,
			      "node %s is not a member of domain %s", u,
			      d->def.name);
		return;
	}
	if (p < 0 || !core_peer_usable(core, p)) {
		core_log(core, IMEXD_LOG_INFO,
			 "import %llu refused: exporting node %s%s%s%s is not connected",
			 (unsigned long long)imp->import_id, u,
			 p >= 0 ? " ('" : "", p >= 0 ? core->peers[p].name : "",
			 p >= 0 ? "')" : "");
		core_imp_done(core, imp->import_id, EHOSTUNREACH, NULL, 0,
			      "node %s is not connected", u);
		return;
	}
	if (core->nimps >= (size_t)IMEX_IMPORTS_PENDING_MAX) {
		core_imp_done(core, imp->import_id, ENOBUFS, NULL, 0,
			      "%u remote imports already waiting",
			      IMEX_IMPORTS_PENDING_MAX);
		return;
	}
	if (core->nimps == core->imps_cap)
		core->imps = core_grow(core->imps, &core->imps_cap,
				       sizeof(*core->imps));
	ci = &core->imps[core->nimps++];
	ci->import_id = imp->import_id;
	ci->peer = p;
	ci->conn = core->peers[p].conn;
	ci->deadline = core->now + IMEX_IMPORT_TIMEOUT_MAX_MS;
	core_msg_init(core, &m, IMEXD_MSG_IMPORT_REQ, imp->domain_uuid);
	m.u.import_req.tag = imp->import_id;
	m.u.import_req.handle_id = imp->handle_id;
	m.u.import_req.channel_id = imp->channel_id;
	core_send_peer(core, p, &m);
}

static void core_imp_resp_in(struct imexd_core *core, int p,
			     const struct imexd_msg *msg)
{
	const uint64_t tag = msg->u.import_resp.tag;
	size_t i;

	for (i = 0; i < core->nimps; i++)
		if (core->imps[i].import_id == tag && core->imps[i].peer == p)
			break;
	if (i == core->nimps) {
		core_log(core, IMEXD_LOG_DEBUG,
			 "IMPORT_RESP %llu from node '%s' answers nothing waiting: dropped",
			 (unsigned long long)tag, core->peers[p].name);
		return;
	}
	core_imp_remove(core, i);
	if (msg->u.import_resp.status)
		core_imp_done(core, tag, msg->u.import_resp.status, NULL, 0,
			      "node %s: %s", core->peers[p].name,
			      strerror(msg->u.import_resp.status));
	else
		core_imp_done(core, tag, 0, msg->u.import_resp.desc,
			      msg->u.import_resp.desc_len, NULL);
}

/* ---- exporting node ---- */

static void core_imp_resp_send(struct imexd_core *core, uint64_t conn,
			       const uint8_t domain_uuid[16], uint64_t tag,
			       int error, const uint8_t *desc,
			       uint16_t desc_len)
{
	struct imexd_msg m;

	core_msg_init(core, &m, IMEXD_MSG_IMPORT_RESP, domain_uuid);
	m.u.import_resp.tag = tag;
	if (!error && (!desc || !desc_len || desc_len > IMEX_DESC_MAX))
		error = EPROTO;		/* the kernel gave no usable descriptor */
	m.u.import_resp.status = error;
	if (!error) {
		memcpy(m.u.import_resp.desc, desc, desc_len);
		m.u.import_resp.desc_len = desc_len;
	}
	core_send_conn(core, conn, &m);
}

static void core_imp_req_in(struct imexd_core *core, int p, uint64_t conn,
			    const struct imexd_msg *msg)
{
	const struct core_domain *d = core_imp_domain(core, msg->domain_uuid, p);
	struct imexd_action *a;
	struct core_check *ck;

	if (!d) {
		core_log_once(core, "import-non-member", core->peers[p].name,
			      core->peers[p].epoch, IMEXD_LOG_WARN,
			      "IMPORT_REQ from node '%s' for a domain it shares with no one here: refused (EPERM)",
			      core->peers[p].name);
		core_imp_resp_send(core, conn, msg->domain_uuid,
				   msg->u.import_req.tag, EPERM, NULL, 0);
		return;
	}
	if (core->nchecks >= CORE_CHECKS_MAX) {
		core_imp_resp_send(core, conn, msg->domain_uuid,
				   msg->u.import_req.tag, ENOBUFS, NULL, 0);
		return;
	}
	if (core->nchecks == core->checks_cap)
		core->checks = core_grow(core->checks, &core->checks_cap,
					 sizeof(*core->checks));
	ck = &core->checks[core->nchecks++];
	ck->op_id = core_new_id(core);
	ck->peer = p;
	ck->conn = conn;
	ck->tag = msg->u.import_req.tag;
	memcpy(ck->domain_uuid, msg->domain_uuid, 16);
	a = core_act(core, IMEXD_ACT_IMPORT_CHECK);
	a->op_id = ck->op_id;
	a->handle_id = msg->u.import_req.handle_id;
	memcpy(a->domain_uuid, msg->domain_uuid, 16);
	a->has_domain = true;
	a->channel_id = msg->u.import_req.channel_id;
	snprintf(a->peer, sizeof(a->peer), "%s", core->peers[p].name);
}

void core_imp_checked(struct imexd_core *core, uint64_t op_id, int error,
		      const uint8_t *desc, uint16_t desc_len)
{
	struct core_check ck;
	size_t i;

	for (i = 0; i < core->nchecks; i++)
		if (core->checks[i].op_id == op_id)
			break;
	if (i == core->nchecks)
		return;
	ck = core->checks[i];
	memmove(&core->checks[i], &core->checks[i + 1],
		(core->nchecks - i - 1) * sizeof(ck));
	core->nchecks--;
	/* The asker's connection went away meanwhile: nobody to tell. */
	if (core->shutting_down || core->peers[ck.peer].conn != ck.conn)
		return;
	core_imp_resp_send(core, ck.conn, ck.domain_uuid, ck.tag, error, desc,
			   desc_len);
}

static void core_revoke_hold(struct imexd_core *core, int p,
			     const uint8_t domain_uuid[16], uint64_t handle_id)
{
	struct core_revoke *r;

	if (core->nrevokes >= CORE_REVOKES_MAX) {
		core_log_once(core, "revokes-full", core->peers[p].name,
			      core->peers[p].epoch, IMEXD_LOG_WARN,
			      "more than %u ends of exports wait for absent peers: node '%s' may keep imports of ended exports until it is lost or restarted",
			      CORE_REVOKES_MAX, core->peers[p].name);
		return;
	}
	if (core->nrevokes == core->revokes_cap)
		core->revokes = core_grow(core->revokes, &core->revokes_cap,
					  sizeof(*core->revokes));
	r = &core->revokes[core->nrevokes++];
	r->peer = p;
	memcpy(r->domain_uuid, domain_uuid, 16);
	r->handle_id = handle_id;
}

static void core_revoke_send(struct imexd_core *core, int p,
			     const uint8_t domain_uuid[16], uint64_t handle_id)
{
	struct imexd_msg m;

	core_msg_init(core, &m, IMEXD_MSG_EXPORT_REVOKE, domain_uuid);
	m.u.export_revoke.handle_id = handle_id;
	core_send_peer(core, p, &m);
}

void core_imp_export_del(struct imexd_core *core, uint64_t handle_id,
			 const uint8_t domain_uuid[16])
{
	const struct core_domain *d = core_imp_domain(core, domain_uuid, -1);
	uint16_t m;

	if (!d || core->shutting_down)
		return;		/* a gone domain took its imports along */
	for (m = 0; m < d->def.nmembers; m++) {
		int p = d->midx[m];

		if (p < 0 || !core->peers[p].known)
			continue;	/* us, or none of our exports there */
		if (core_peer_usable(core, p))
			core_revoke_send(core, p, domain_uuid, handle_id);
		else
			core_revoke_hold(core, p, domain_uuid, handle_id);
	}
}

/* Drop (and with @send, send) what is held for peer @p. */
static void core_revokes_flush(struct imexd_core *core, int p, bool send)
{
	size_t i = 0, k = 0;

	for (i = 0; i < core->nrevokes; i++) {
		const struct core_revoke *r = &core->revokes[i];

		if (r->peer != p) {
			core->revokes[k++] = *r;
			continue;
		}
		if (send)
			core_revoke_send(core, p, r->domain_uuid, r->handle_id);
	}
	core->nrevokes = k;
}

/* ---- messages and peer events ---- */

void core_imp_msg(struct imexd_core *core, int p, const struct imexd_msg *msg)
{
	switch (msg->type) {
	case IMEXD_MSG_IMPORT_REQ:
		core_imp_req_in(core, p, core->peers[p].conn, msg);
		break;
	case IMEXD_MSG_IMPORT_RESP:
		core_imp_resp_in(core, p, msg);
		break;
	case IMEXD_MSG_EXPORT_REVOKE:
		if (!core_imp_domain(core, msg->domain_uuid, p)) {
			core_log_once(core, "revoke-non-member",
				      core->peers[p].name, core->peers[p].epoch,
				      IMEXD_LOG_WARN,
				      "EXPORT_REVOKE from node '%s' for a domain it shares with no one here: dropped",
				      core->peers[p].name);
			break;
		}
		core_revoke_act(core, core->peers[p].uuid,
				&msg->u.export_revoke.handle_id,
				IMEX_REVOKE_UNEXPORTED);
		break;
	}
}

/* Imports sent on @conn will never be answered. */
void core_imp_conn_lost(struct imexd_core *core, int p, uint64_t conn)
{
	size_t i = 0;

	while (i < core->nimps) {
		const struct core_import ci = core->imps[i];

		if (ci.conn != conn) {
			i++;
			continue;
		}
		core_imp_remove(core, i);
		core_imp_done(core, ci.import_id, EHOSTUNREACH, NULL, 0,
			      "connection to node %s lost", core->peers[p].name);
	}
}

void core_imp_peer_bound(struct imexd_core *core, int p)
{
	core_revokes_flush(core, p, true);
}

/* Does any import, check or held revocation refer to peer @p? */
bool core_imp_uses_peer(const struct imexd_core *core, int p)
{
	size_t i;

	for (i = 0; i < core->nimps; i++)
		if (core->imps[i].peer == p)
			return true;
	for (i = 0; i < core->nchecks; i++)
		if (core->checks[i].peer == p)
			return true;
	for (i = 0; i < core->nrevokes; i++)
		if (core->revokes[i].peer == p)
			return true;
	return false;
}

void core_imp_peer_lost(struct imexd_core *core, int p)
{
	core_revokes_flush(core, p, false);
	if (!core->peers[p].known)
		return;
	core_log(core, IMEXD_LOG_WARN,
		 "node '%s' lost past its grace time: revoking the imports of its exports",
		 core->peers[p].name);
	core_revoke_act(core, core->peers[p].uuid, NULL, IMEX_REVOKE_NODE_LOST);
}

void core_imp_peer_restarted(struct imexd_core *core, int p,
			     const uint8_t old_uuid[16])
{
	core_revokes_flush(core, p, false);
	core_revoke_act(core, old_uuid, NULL, IMEX_REVOKE_NODE_RESTARTED);
}

void core_imp_timer(struct imexd_core *core)
{
	size_t i = 0;

	while (i < core->nimps) {
		const struct core_import ci = core->imps[i];

		if (core->now < ci.deadline) {
			i++;
			continue;
		}
		core_imp_remove(core, i);
		core_log(core, IMEXD_LOG_WARN,
			 "node '%s' did not answer import %llu in %u ms",
			 core->peers[ci.peer].name,
			 (unsigned long long)ci.import_id,
			 IMEX_IMPORT_TIMEOUT_MAX_MS);
		core_imp_done(core, ci.import_id, ETIMEDOUT, NULL, 0,
			      "node %s did not answer",
			      core->peers[ci.peer].name);
	}
}

uint64_t core_imp_deadline(const struct imexd_core *core)
{
	uint64_t t = CORE_NO_TIME;
	size_t i;

	for (i = 0; i < core->nimps; i++)
		t = CORE_MIN(t, core->imps[i].deadline);
	return t;
}

void core_imp_shutdown(struct imexd_core *core)
{
	while (core->nimps) {
		const struct core_import ci = core->imps[--core->nimps];

		core_imp_done(core, ci.import_id, ENOTCONN, NULL, 0,
			      "imexd is shutting down");
	}
	core->nchecks = 0;
	core->nrevokes = 0;
}

void core_imp_free_all(struct imexd_core *core)
{
	free(core->imps);
	free(core->checks);
	free(core->revokes);
}
