// SPDX-License-Identifier: GPL-2.0
/*
 * The protocol core's entry points: every event from the caller lands here,
 * is handed to the part that owns it, and ends with a flush that turns what
 * changed (peer views, domain health, wanted connections) into actions.
 * Also here: the action queue, id minting, the routing of kernel results,
 * the outcome memory and the log dedupe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core_internal.h"

/* splitmix64's finaliser: ids and uuids derive from cfg through it. */
static uint64_t core_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t core_hash_bytes(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static void core_timing_defaults(struct imexd_core_cfg *c)
{
	if (!c->heartbeat_ms)
		c->heartbeat_ms = 1000;
	if (!c->miss_count)
		c->miss_count = 3;
	if (!c->step_timeout_ms)
		c->step_timeout_ms = 5000;
	if (!c->lease_ms)
		c->lease_ms = 15000;
	if (c->lease_ms > IMEX_LEASE_MAX_MS)
		c->lease_ms = IMEX_LEASE_MAX_MS;
}

void imexd_core_set_timing(struct imexd_core *core, uint32_t heartbeat_ms,
			   uint32_t miss_count, int64_t grace_ms,
			   uint32_t step_timeout_ms, uint32_t lease_ms)
{
	struct imexd_core_cfg *c = &core->cfg;

	c->heartbeat_ms = heartbeat_ms;
	c->miss_count = miss_count;
	c->grace_ms = grace_ms;
	c->step_timeout_ms = step_timeout_ms;
	c->lease_ms = lease_ms;
	core_timing_defaults(c);
}

struct imexd_core *imexd_core_new(const struct imexd_core_cfg *cfg)
{
	struct imexd_core *core = calloc(1, sizeof(*core));
	struct imexd_core_cfg *c;

	if (!core)
		return NULL;
	core->cfg = *cfg;
	c = &core->cfg;
	c->node_name[sizeof(c->node_name) - 1] = '\0';
	/* Zero means "the default" for everything that cannot be zero. */
	core_timing_defaults(c);
	if (!c->backoff_min_ms)
		c->backoff_min_ms = 500;
	if (!c->backoff_max_ms)
		c->backoff_max_ms = 3000;
	if (c->backoff_max_ms < c->backoff_min_ms)
		c->backoff_max_ms = c->backoff_min_ms;
	if (!c->default_port)
		c->default_port = IMEXD_DEFAULT_PORT;
	if (!c->max_channels)
		c->max_channels = 2048;
	if (!c->tombstone_ms)
		c->tombstone_ms = CORE_TOMBSTONE_MS;
	/*
	 * Change ids: a base unique to this node and instance, plus a counter.
	 * The kernel refuses a re-used id, and a restarted daemon must not
	 * collide with what its previous instance left in peers' memories.
	 */
	core->id_base = core_mix(core_hash_bytes(c->node_uuid, 16,
						 0xcbf29ce484222325ULL) ^
				 core_mix(c->epoch));
	core->id_base &= ~0xffffffULL;
	return core;
}

void imexd_core_free(struct imexd_core *core)
{
	struct imexd_action a;
	size_t i;

	if (!core)
		return;
	while (imexd_core_next_action(core, &a))
		imexd_action_free(&a);
	free(core->acts);
	core_cc_free_all(core);
	core_pc_free_all(core);
	core_dom_free_all(core);
	core_peer_free_all(core);
	core_imp_free_all(core);
	free(core->kops);
	for (i = 0; i < core->nreqs; i++) {
		free(core->reqs[i].req.members);
		free(core->reqs[i].req.ids);
	}
	free(core->reqs);
	free(core);
}

/* ---- actions ---- */

struct imexd_action *core_act(struct imexd_core *core,
			      enum imexd_action_type type)
{
	struct imexd_action *a;

	if (core->acts_head && core->acts_head == core->nacts)
		core->acts_head = core->nacts = 0;
	if (core->nacts == core->acts_cap) {
		size_t cap = core->acts_cap ? core->acts_cap * 2 : 64;
		struct imexd_action *n;

		/* Reclaim the popped front before growing. */
		if (core->acts_head) {
			memmove(core->acts, core->acts + core->acts_head,
				(core->nacts - core->acts_head) * sizeof(*n));
			core->nacts -= core->acts_head;
			core->acts_head = 0;
		}
		if (core->nacts == core->acts_cap) {
			n = realloc(core->acts, cap * sizeof(*n));
			if (!n)
				abort();	/* no way to report it: fail loud */
			core->acts = n;
			core->acts_cap = cap;
		}
	}
	a = &core->acts[core->nacts++];
	memset(a, 0, sizeof(*a));
	a->type = type;
	return a;
}

bool imexd_core_next_action(struct imexd_core *core, struct imexd_action *a)
{
	if (core->acts_head >= core->nacts)
		return false;
	*a = core->acts[core->acts_head++];
	if (core->acts_head == core->nacts)
		core->acts_head = core->nacts = 0;
	return true;
}

void imexd_action_free(struct imexd_action *a)
{
	if (!a)
		return;
	imexd_msg_free(&a->msg);
	imexd_def_free(&a->def);
	free(a->chans);
	a->chans = NULL;
	a->nchans = 0;
	free(a->status.members);
	a->status.members = NULL;
	a->status.nmembers = 0;
}

/* For log lines: the codec's names, with "?" for a type it does not know. */
const char *core_msg_name(uint8_t type)
{
	const char *name = imexd_msg_type_name(type);

	return strcmp(name, "UNKNOWN") ? name : "?";
}

void core_msg_init(const struct imexd_core *core, struct imexd_msg *msg,
		   uint8_t type, const uint8_t domain_uuid[16])
{
	memset(msg, 0, sizeof(*msg));
	msg->type = type;
	if (domain_uuid)
		memcpy(msg->domain_uuid, domain_uuid, 16);
	memcpy(msg->sender_uuid, core->cfg.node_uuid, 16);
	msg->sender_epoch = core->cfg.epoch;
}

static void core_vlog(struct imexd_core *core, int level, const char *fmt,
		      va_list ap)
{
	struct imexd_action *a = core_act(core, IMEXD_ACT_LOG);

	a->level = level;
	vsnprintf(a->text, sizeof(a->text), fmt, ap);
}

void core_log(struct imexd_core *core, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	core_vlog(core, level, fmt, ap);
	va_end(ap);
}

/*
 * A misbehaving or stale peer can send thousands of messages; one line per
 * (reason, peer, instance) says everything the operator needs.
 */
void core_log_once(struct imexd_core *core, const char *reason,
		   const char *who, uint64_t epoch, int level,
		   const char *fmt, ...)
{
	uint64_t key = core_hash_bytes(reason, strlen(reason),
				       0xcbf29ce484222325ULL);
	va_list ap;
	size_t i;

	key = core_hash_bytes(who, strlen(who), key);
	key = core_mix(key ^ epoch);
	for (i = 0; i < core->nlogonce; i++)
		if (core->logonce[i] == key)
			return;
	core->logonce[core->logonce_pos] = key;
	core->logonce_pos = (core->logonce_pos + 1) % CORE_LOGONCE;
	if (core->nlogonce < CORE_LOGONCE)
		core->nlogonce++;
	va_start(ap, fmt);
	core_vlog(core, level, fmt, ap);
	va_end(ap);
}

void core_request_done(struct imexd_core *core, uint64_t req_id, int error,
		       const char *fmt, ...)
{
	struct imexd_action *a = core_act(core, IMEXD_ACT_REQUEST_DONE);
	va_list ap;

	a->req_id = req_id;
	a->error = error;
	va_start(ap, fmt);
	/* The kernel carries at most IMEX_MESSAGE_MAX bytes to the caller. */
	vsnprintf(a->text, IMEX_MESSAGE_MAX, fmt, ap);
	va_end(ap);
	core_log(core, error ? IMEXD_LOG_WARN : IMEXD_LOG_INFO,
		 "request %llu: %s%s%s", (unsigned long long)req_id,
		 error ? strerror(error) : "done", a->text[0] ? ": " : "",
		 a->text);
}

void core_kernel_prepare(struct imexd_core *core, uint64_t op_id,
			 uint64_t change_id, uint8_t op, uint32_t lease_ms,
			 const struct imexd_def *def,
			 const struct imexd_channel *delta, uint32_t ndelta)
{
	struct imexd_action *a = core_act(core, IMEXD_ACT_KERNEL_PREPARE);

	a->op_id = op_id;
	a->change_id = change_id;
	a->op = op;
	a->lease_ms = lease_ms;
	if (imexd_def_copy(&a->def, def))
		abort();
	if (ndelta) {
		a->chans = malloc(ndelta * sizeof(*a->chans));
		if (!a->chans)
			abort();
		memcpy(a->chans, delta, ndelta * sizeof(*a->chans));
		a->nchans = ndelta;
	}
}

void core_kernel_simple(struct imexd_core *core, enum imexd_action_type type,
			uint64_t op_id, uint64_t change_id)
{
	struct imexd_action *a = core_act(core, type);

	a->op_id = op_id;
	a->change_id = change_id;
}

/* ---- ids ---- */

uint64_t core_new_id(struct imexd_core *core)
{
	uint64_t id;

	do {
		id = core->id_base + ++core->counter;
	} while (!id);
	return id;
}

void core_new_uuid(struct imexd_core *core, uint8_t uuid[16])
{
	uint64_t a = core_mix(core->id_base ^ ++core->counter);
	uint64_t b = core_mix(a ^ core->cfg.epoch);
	int i;

	for (i = 0; i < 8; i++) {
		uuid[i] = a >> (56 - 8 * i);
		uuid[8 + i] = b >> (56 - 8 * i);
	}
	uuid[6] = (uuid[6] & 0x0f) | 0x40;	/* version 4 layout */
	uuid[8] = (uuid[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
}

/* ---- kernel operations in flight ---- */

uint64_t core_kop_add(struct imexd_core *core, enum core_kop_kind kind,
		      uint64_t change_id, const uint8_t uuid[16])
{
	struct core_kop *k;

	if (core->nkops == core->kops_cap) {
		size_t cap = core->kops_cap ? core->kops_cap * 2 : 16;

		k = realloc(core->kops, cap * sizeof(*k));
		if (!k)
			abort();
		core->kops = k;
		core->kops_cap = cap;
	}
	k = &core->kops[core->nkops++];
	k->op_id = ++core->counter;
	k->kind = kind;
	k->change_id = change_id;
	memcpy(k->uuid, uuid, 16);
	return k->op_id;
}

/* ---- outcome memory: answers OUTCOME_QUERY from members in doubt ---- */

void core_outcome_put(struct imexd_core *core, uint64_t change_id,
		      uint8_t outcome)
{
	size_t i;

	for (i = 0; i < core->noutcomes; i++) {
		if (core->outcomes[i].change_id == change_id) {
			core->outcomes[i].outcome = outcome;
			return;
		}
	}
	core->outcomes[core->outcome_pos].change_id = change_id;
	core->outcomes[core->outcome_pos].outcome = outcome;
	core->outcome_pos = (core->outcome_pos + 1) % CORE_OUTCOMES;
	if (core->noutcomes < CORE_OUTCOMES)
		core->noutcomes++;
}

uint8_t core_outcome_get(const struct imexd_core *core, uint64_t change_id)
{
	size_t i;

	for (i = 0; i < core->noutcomes; i++)
		if (core->outcomes[i].change_id == change_id)
			return core->outcomes[i].outcome;
	return IMEXD_OUTCOME_UNKNOWN;
}

/* ---- entry points ---- */

static void core_req_pump(struct imexd_core *core);

/* Turn what the event changed into actions: connections, views, health. */
static void core_after(struct imexd_core *core)
{
	if (core->nreqs)
		core_req_pump(core);
	core_peer_flush(core);
	core_dom_flush(core);
}

bool core_quarantined(const struct imexd_core *core)
{
	size_t i;

	if (core->now < core->quarantine_min)
		return true;
	if (core->now >= core->quarantine_max)
		return false;
	for (i = 0; i < core->npeers; i++)
		if (core->peers[i].q_need)
			return true;
	return false;
}

void imexd_core_start(struct imexd_core *core, uint64_t now,
		      const struct imexd_def *kernel, size_t nkernel,
		      const struct imexd_def *stored, size_t nstored)
{
	core->now = now;
	if (core->started)
		return;
	core->started = true;
	/*
	 * What this node had prepared before it (re)started is gone from the
	 * kernel and from memory, and a commit of it may have happened since.
	 * Until it has heard from every member of the domains it stored (their
	 * SYNCs come before their first heartbeat), and at least for a
	 * heartbeat timeout and a backoff (time for the coordinator of an
	 * in-doubt create to reconnect), it takes part in no change: else it
	 * could grant a channel to one domain that a missed commit gave to
	 * another.  2 x lease bounds the wait when a member stays away.
	 */
	core->quarantine_min = now + (uint64_t)core->cfg.miss_count *
			       core->cfg.heartbeat_ms + core->cfg.backoff_max_ms;
	core->quarantine_max = CORE_MAX(core->quarantine_min,
					now + 2ull * core->cfg.lease_ms);
	core_log(core, IMEXD_LOG_INFO,
		 "starting as '%s' (epoch %016llx): %zu domains in the kernel, %zu stored",
		 core->cfg.node_name, (unsigned long long)core->cfg.epoch,
		 nkernel, nstored);
	core_dom_start(core, kernel, nkernel, stored, nstored);
	core_dom_quarantine_peers(core);
	core->wanted_dirty = true;
	core_after(core);
}

void imexd_core_conn_up(struct imexd_core *core, uint64_t now, uint64_t conn,
			const char *addr, bool outbound)
{
	core->now = now;
	core_peer_conn_up(core, conn, addr ? addr : "", outbound);
	core_after(core);
}

void imexd_core_conn_failed(struct imexd_core *core, uint64_t now,
			    const char *addr)
{
	core->now = now;
	core_peer_conn_failed(core, addr ? addr : "");
	core_after(core);
}

void imexd_core_conn_down(struct imexd_core *core, uint64_t now,
			  uint64_t conn)
{
	core->now = now;
	core_peer_conn_down(core, conn);
	core_after(core);
}

void imexd_core_msg(struct imexd_core *core, uint64_t now, uint64_t conn,
		    const struct imexd_msg *msg)
{
	core->now = now;
	core_peer_msg(core, conn, msg);
	core_after(core);
}

static int core_req_copy(struct imexd_request *dst,
			 const struct imexd_request *src)
{
	*dst = *src;
	dst->members = NULL;
	dst->ids = NULL;
	if (src->nmembers) {
		dst->members = malloc(src->nmembers * sizeof(*dst->members));
		if (!dst->members)
			return -ENOMEM;
		memcpy(dst->members, src->members,
		       src->nmembers * sizeof(*dst->members));
	}
	if (src->nids) {
		dst->ids = malloc(src->nids * sizeof(*dst->ids));
		if (!dst->ids) {
			free(dst->members);
			return -ENOMEM;
		}
		memcpy(dst->ids, src->ids, src->nids * sizeof(*dst->ids));
	}
	return 0;
}

/*
 * Requests on a domain that already has a change coordinated here wait
 * their turn rather than fail: a scheduler allocating channels for many
 * jobs at once should not have to retry.
 */
static bool core_req_blocked(const struct imexd_core *core,
			     const char *name)
{
	size_t i;

	for (i = 0; i < core->ncc; i++)
		if (!core->cc[i]->done && !strcmp(core->cc[i]->name, name))
			return true;
	return false;
}

static void core_req_pump(struct imexd_core *core)
{
	size_t i = 0;

	if (core_quarantined(core))
		return;
	while (i < core->nreqs) {
		struct core_pending_req pr = core->reqs[i];

		if (core_req_blocked(core, pr.req.name)) {
			i++;
			continue;
		}
		memmove(&core->reqs[i], &core->reqs[i + 1],
			(core->nreqs - i - 1) * sizeof(core->reqs[0]));
		core->nreqs--;
		core_cc_request(core, &pr.req);
		free(pr.req.members);
		free(pr.req.ids);
	}
}

void imexd_core_request(struct imexd_core *core, uint64_t now,
			const struct imexd_request *req)
{
	struct core_pending_req *pr;

	core->now = now;
	if (core->shutting_down || !core->started) {
		core_request_done(core, req->req_id, ESHUTDOWN,
				  "imexd is %s: retry once it runs",
				  core->shutting_down ? "shutting down" :
				  "starting");
		core_after(core);
		return;
	}
	if (core->nreqs == core->reqs_cap) {
		size_t cap = core->reqs_cap ? core->reqs_cap * 2 : 8;

		pr = realloc(core->reqs, cap * sizeof(*pr));
		if (!pr) {
			core_request_done(core, req->req_id, ENOMEM,
					  "imexd is out of memory");
			return;
		}
		core->reqs = pr;
		core->reqs_cap = cap;
	}
	pr = &core->reqs[core->nreqs];
	if (core_req_copy(&pr->req, req)) {
		core_request_done(core, req->req_id, ENOMEM,
				  "imexd is out of memory");
		return;
	}
	pr->arrived = now;
	core->nreqs++;
	core_req_pump(core);
	core_after(core);
}

void imexd_core_kernel_done(struct imexd_core *core, uint64_t now,
			    uint64_t op_id, int error, const char *message)
{
	struct core_kop k;
	size_t i;

	core->now = now;
	if (error < 0)
		error = -error;
	for (i = 0; i < core->nkops; i++)
		if (core->kops[i].op_id == op_id)
			break;
	if (i == core->nkops) {
		core_log(core, IMEXD_LOG_DEBUG,
			 "kernel result for unknown operation %llu ignored",
			 (unsigned long long)op_id);
		return;
	}
	k = core->kops[i];
	memmove(&core->kops[i], &core->kops[i + 1],
		(core->nkops - i - 1) * sizeof(k));
	core->nkops--;
	if (!message)
		message = "";
	switch (k.kind) {
	case KOP_COORD_PREPARE:
	case KOP_COORD_COMMIT:
	case KOP_COORD_ABORT:
		core_cc_kernel_done(core, &k, error, message);
		break;
	case KOP_PART_PREPARE:
	case KOP_PART_COMMIT:
	case KOP_PART_ABORT:
		core_pc_kernel_done(core, &k, error, message);
		break;
	case KOP_ADOPT_PREPARE:
	case KOP_ADOPT_COMMIT:
		core_dom_adopt_done(core, &k, error, message);
		break;
	case KOP_FIRE_AND_FORGET:
		if (error)
			core_log(core, IMEXD_LOG_DEBUG,
				 "kernel: change %llu: %s",
				 (unsigned long long)k.change_id, message);
		break;
	}
	core_req_pump(core);
	core_after(core);
}

void imexd_core_import(struct imexd_core *core, uint64_t now,
		       const struct imexd_import *imp)
{
	core->now = now;
	core_imp_kernel(core, imp);
	core_after(core);
}

void imexd_core_import_checked(struct imexd_core *core, uint64_t now,
			       uint64_t op_id, int error, const uint8_t *desc,
			       uint16_t desc_len)
{
	core->now = now;
	core_imp_checked(core, op_id, error < 0 ? -error : error, desc,
			 desc_len);
	core_after(core);
}

void imexd_core_export_del(struct imexd_core *core, uint64_t now,
			   uint64_t handle_id, const uint8_t domain_uuid[16],
			   uint32_t channel_id)
{
	(void)channel_id;	/* the handle id names the export */
	core->now = now;
	core_imp_export_del(core, handle_id, domain_uuid);
	core_after(core);
}

void imexd_core_timer(struct imexd_core *core, uint64_t now)
{
	core->now = now;
	if (!core->started)
		return;
	core_peer_timer(core);
	core_cc_timer(core);
	core_pc_timer(core);
	core_dom_timer(core);
	core_imp_timer(core);
	core_req_pump(core);
	core_after(core);
}

void imexd_core_shutdown(struct imexd_core *core, uint64_t now)
{
	core->now = now;
	if (core->shutting_down)
		return;
	core_log(core, IMEXD_LOG_INFO, "shutting down: telling peers");
	core_cc_shutdown(core);
	core_imp_shutdown(core);
	while (core->nreqs) {
		struct core_pending_req *pr = &core->reqs[--core->nreqs];

		core_request_done(core, pr->req.req_id, ESHUTDOWN,
				  "imexd is shutting down: retry once it runs again");
		free(pr->req.members);
		free(pr->req.ids);
	}
	core_peer_shutdown(core);
	core->shutting_down = true;
}

uint64_t imexd_core_next_deadline(const struct imexd_core *core)
{
	uint64_t t;

	if (!core->started || core->shutting_down)
		return CORE_NO_TIME;
	t = core_peer_deadline(core);
	t = CORE_MIN(t, core_cc_deadline(core));
	t = CORE_MIN(t, core_pc_deadline(core));
	t = CORE_MIN(t, core_dom_deadline(core));
	t = CORE_MIN(t, core_status_deadline(core));
	t = CORE_MIN(t, core_imp_deadline(core));
	if (core->nreqs && core_quarantined(core))
		t = CORE_MIN(t, core->now < core->quarantine_min ?
			     core->quarantine_min : core->quarantine_max);
	return t;
}

/* ---- read-only views ---- */

size_t imexd_core_domains(const struct imexd_core *core,
			  const struct imexd_def **defs)
{
	size_t i, n = 0;

	for (i = 0; i < core->ndoms; i++) {
		if (core->doms[i]->kind != DOM_LIVE || !core->doms[i]->in_kernel)
			continue;
		if (defs)
			defs[n] = &core->doms[i]->def;
		n++;
	}
	return n;
}

bool imexd_core_domain_ready(const struct imexd_core *core,
			     const uint8_t uuid[16])
{
	const struct core_domain *d = core_dom_find(core, uuid);

	if (!d || d->kind != DOM_LIVE || !d->in_kernel || !d->npushed)
		return false;
	return d->pushed[0] == IMEX_DOMAIN_READY;
}

uint8_t imexd_core_peer_state(const struct imexd_core *core,
			      const char *node_name)
{
	int p;

	if (!strcmp(node_name, core->cfg.node_name))
		return IMEX_MEMBER_SELF;
	p = core_peer_find(core, node_name);
	return p < 0 ? IMEX_MEMBER_UNKNOWN : core->peers[p].state;
}
