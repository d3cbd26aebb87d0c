// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshot and restore of the state machine (fsm.h).  The snapshot is the
 * tables in their (sorted) order, so equal tables give equal bytes.  A
 * restore decodes into new tables, checks every invariant the commands
 * keep, and only then replaces the old ones: a bad blob changes nothing.
 */
#include <stdlib.h>

#include "fsm_internal.h"

#define NODE_MIN_LEN	42	/* str(1+1) + 16 + 16 + 4 + 4 */
#define DOMAIN_MIN_LEN	55	/* str(2) + 16 + 8 + 16 + 4 + u16 + member 3 + u32 */
#define CHANNEL_LEN	14	/* u32 id, u32 uid, u32 gid, u16 mode */
#define DOMAINS_MAX	((uint64_t)IMEXD_FSM_NODES_MAX * IMEX_DOMAINS_MAX)

static void wr_snap(struct imexd_wr *w, const void *arg)
{
	const struct imexd_fsm *fsm = arg;
	size_t i;
	uint32_t c;

	wr_be(w, IMEXD_FSM_MAGIC, 4);
	wr_be(w, IMEXD_FSM_SNAP_VERSION, 1);
	wr_be(w, fsm->nnodes, 4);
	for (i = 0; i < fsm->nnodes; i++) {
		const struct imexd_fsm_node *n = &fsm->nodes[i];

		wr_str(w, n->name, sizeof(n->name));
		wr_bytes(w, n->uuid, 16);
		wr_bytes(w, n->fabric_uuid, 16);
		wr_be(w, n->partition, 4);
		wr_be(w, n->max_channels, 4);
		wr_be(w, n->leaving, 1);
	}
	wr_be(w, fsm->ndomains, 4);
	for (i = 0; i < fsm->ndomains; i++) {
		const struct imexd_def *d = &fsm->domains[i];

		wr_str(w, d->name, sizeof(d->name));
		wr_bytes(w, d->uuid, 16);
		wr_be(w, d->generation, 8);
		wr_bytes(w, d->fabric_uuid, 16);
		wr_be(w, d->partition, 4);
		fsm_wr_members(w, d->members, d->nmembers);
		wr_be(w, d->nchannels, 4);
		for (c = 0; c < d->nchannels; c++) {
			wr_be(w, d->channels[c].id, 4);
			wr_be(w, d->channels[c].uid, 4);
			wr_be(w, d->channels[c].gid, 4);
			wr_be(w, d->channels[c].mode, 2);
		}
	}
}

int imexd_fsm_snapshot(const struct imexd_fsm *fsm, uint8_t **out, size_t *len)
{
	return wr_encode(wr_snap, fsm, out, len);
}

/* ---- restore ------------------------------------------------------------- */

struct tables {
	struct imexd_fsm_node *nodes;
	size_t nnodes;
	struct imexd_def *domains;
	size_t ndomains;
};

static void tables_free(struct tables *t)
{
	size_t i;

	for (i = 0; i < t->ndomains; i++)
		imexd_def_free(&t->domains[i]);
	free(t->domains);
	free(t->nodes);
}

static void rd_nodes(struct fsm_rd *r, struct tables *t, unsigned version)
{
	uint64_t n = rd_be(r, 4), i;

	if (!r->err && n > IMEXD_FSM_NODES_MAX)
		rd_fail(r, -E2BIG, "more nodes than IMEXD_FSM_NODES_MAX");
	if (!rd_room(r, n, NODE_MIN_LEN) || !n)
		return;
	t->nodes = calloc(n, sizeof(*t->nodes));
	if (!t->nodes) {
		rd_fail(r, -ENOMEM, "out of memory");
		return;
	}
	t->nnodes = n;
	for (i = 0; i < n && !r->err; i++) {
		struct imexd_fsm_node *k = &t->nodes[i];

		rd_str(r, k->name, sizeof(k->name), true);
		rd_bytes(r, k->uuid, 16);
		rd_bytes(r, k->fabric_uuid, 16);
		k->partition = (uint32_t)rd_be(r, 4);
		k->max_channels = (uint32_t)rd_be(r, 4);
		if (version >= 2) {
			uint64_t leaving = rd_be(r, 1);

			if (leaving > 1 && !r->err)
				rd_fail(r, -EBADMSG, "node leaving flag not 0 or 1");
			k->leaving = leaving == 1;
		}
		if (r->err)
			break;
		if (i && strcmp(t->nodes[i - 1].name, k->name) >= 0)
			rd_fail(r, -EBADMSG, "nodes not sorted by name");
		else if (fsm_zero16(k->uuid))
			rd_fail(r, -EBADMSG, "node UUID is all-zero");
		else if (!k->max_channels || k->max_channels > IMEX_CHANNELS_MAX)
			rd_fail(r, -EBADMSG, "max_channels not in 1..IMEX_CHANNELS_MAX");
	}
}

static void rd_channels(struct fsm_rd *r, struct imexd_def *d)
{
	uint64_t n = rd_be(r, 4), i;

	if (!r->err && n > IMEX_CHANNELS_MAX)
		rd_fail(r, -E2BIG, "more channels than IMEX_CHANNELS_MAX");
	if (!rd_room(r, n, CHANNEL_LEN) || !n)
		return;
	d->channels = calloc(n, sizeof(*d->channels));
	if (!d->channels) {
		rd_fail(r, -ENOMEM, "out of memory");
		return;
	}
	d->nchannels = (uint32_t)n;
	for (i = 0; i < n; i++) {
		d->channels[i].id = (uint32_t)rd_be(r, 4);
		d->channels[i].uid = (uint32_t)rd_be(r, 4);
		d->channels[i].gid = (uint32_t)rd_be(r, 4);
		d->channels[i].mode = (uint16_t)rd_be(r, 2);
	}
}

static long node_index(const struct tables *t, const char *name)
{
	size_t lo = 0, hi = t->nnodes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->nodes[mid].name, name);

		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* One domain against the rules that need no other domain. */
static void check_domain(struct fsm_rd *r, const struct tables *t,
			 const struct imexd_def *d, uint64_t index)
{
	const char *why = NULL;
	uint16_t m;

	if (fsm_check_members(d->members, d->nmembers, &why) ||
	    imexd_def_check(d, &why)) {
		rd_fail(r, -EBADMSG, why);
		return;
	}
	if (!d->generation || d->generation > index) {
		rd_fail(r, -EBADMSG, "generation not in 1..the snapshot's index");
		return;
	}
	for (m = 0; m < d->nmembers; m++) {
		long i = node_index(t, d->members[m].name);
		const struct imexd_fsm_node *k = i < 0 ? NULL : &t->nodes[i];

		if (!k) {
			rd_fail(r, -EBADMSG, "member not in the node table");
			return;
		}
		if (fsm_zero16(k->fabric_uuid) ||
		    memcmp(k->fabric_uuid, d->fabric_uuid, 16) ||
		    k->partition != d->partition) {
			rd_fail(r, -EBADMSG, "member not in the domain's fabric");
			return;
		}
		if (d->nchannels &&
		    d->channels[d->nchannels - 1].id >= k->max_channels) {
			rd_fail(r, -EBADMSG, "channel above a member's max_channels");
			return;
		}
	}
}

static void rd_domains(struct fsm_rd *r, struct tables *t, uint64_t index)
{
	uint64_t n = rd_be(r, 4), i;

	if (!r->err && n > DOMAINS_MAX)
		rd_fail(r, -E2BIG, "more domains than nodes x IMEX_DOMAINS_MAX");
	if (!rd_room(r, n, DOMAIN_MIN_LEN) || !n)
		return;
	t->domains = calloc(n, sizeof(*t->domains));
	if (!t->domains) {
		rd_fail(r, -ENOMEM, "out of memory");
		return;
	}
	for (i = 0; i < n && !r->err; i++) {
		struct imexd_def *d = &t->domains[i];

		t->ndomains = i + 1;	/* owned from here on */
		rd_str(r, d->name, sizeof(d->name), true);
		rd_bytes(r, d->uuid, 16);
		d->generation = rd_be(r, 8);
		rd_bytes(r, d->fabric_uuid, 16);
		d->partition = (uint32_t)rd_be(r, 4);
		if (fsm_rd_members(r, &d->members, &d->nmembers))
			break;
		rd_channels(r, d);
		if (r->err)
			break;
		if (i && strcmp(t->domains[i - 1].name, d->name) >= 0)
			rd_fail(r, -EBADMSG, "domains not sorted by name");
		else
			check_domain(r, t, d, index);
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_uuid(const void *a, const void *b)
{
	return memcmp(*(const uint8_t *const *)a, *(const uint8_t *const *)b, 16);
}

/*
 * The rules across domains: UUIDs unique, at most IMEX_DOMAINS_MAX
 * domains per node, no channel in two domains on one node.  Members are
 * known nodes here (check_domain()).  Per node, the domains naming it
 * are listed in @doms from @first[k] (counting sort), so each node's
 * channels are gathered from its own domains only.
 */
static int check_across(const struct tables *t, const char **why)
{
	const uint8_t **uuids = calloc(t->ndomains + 1, sizeof(*uuids));
	size_t *first = calloc(t->nnodes + 2, sizeof(*first));
	size_t *chans = calloc(t->nnodes + 1, sizeof(*chans));
	size_t i, k, n, most = 0, nrefs = 0;
	uint32_t *ids = NULL, c;
	size_t *doms = NULL;
	int err = -ENOMEM;
	uint16_t m;

	if (!uuids || !first || !chans)
		goto out;
	err = -EBADMSG;
	for (i = 0; i < t->ndomains; i++)
		uuids[i] = t->domains[i].uuid;
	qsort(uuids, t->ndomains, sizeof(*uuids), cmp_uuid);
	for (i = 1; i < t->ndomains; i++) {
		if (!memcmp(uuids[i - 1], uuids[i], 16)) {
			*why = "two domains with one UUID";
			goto out;
		}
	}
	/* first[k + 1]: how many domains name node k, then the offsets. */
	for (i = 0; i < t->ndomains; i++) {
		const struct imexd_def *d = &t->domains[i];

		for (m = 0; m < d->nmembers; m++) {
			k = (size_t)node_index(t, d->members[m].name);
			first[k + 1]++;
			chans[k] += d->nchannels;
			if (chans[k] > most)
				most = chans[k];
			nrefs++;
		}
	}
	for (k = 0; k < t->nnodes; k++) {
		if (first[k + 1] > IMEX_DOMAINS_MAX) {
			*why = "a node in more than IMEX_DOMAINS_MAX domains";
			goto out;
		}
		first[k + 1] += first[k];
	}
	err = -ENOMEM;
	ids = calloc(most + 1, sizeof(*ids));
	doms = calloc(nrefs + 1, sizeof(*doms));
	if (!ids || !doms)
		goto out;
	memset(chans, 0, (t->nnodes + 1) * sizeof(*chans));	/* fill level */
	for (i = 0; i < t->ndomains; i++) {
		const struct imexd_def *d = &t->domains[i];

		for (m = 0; m < d->nmembers; m++) {
			k = (size_t)node_index(t, d->members[m].name);
			doms[first[k] + chans[k]++] = i;
		}
	}
	err = 0;
	for (k = 0; k < t->nnodes && !err; k++) {
		if (first[k + 1] - first[k] < 2)
			continue;
		for (i = first[k], n = 0; i < first[k + 1]; i++) {
			const struct imexd_def *d = &t->domains[doms[i]];

			for (c = 0; c < d->nchannels; c++)
				ids[n++] = d->channels[c].id;
		}
		qsort(ids, n, sizeof(*ids), cmp_u32);
		for (i = 1; i < n; i++) {
			if (ids[i - 1] == ids[i]) {
				*why = "a channel in two domains on one node";
				err = -EBADMSG;
				break;
			}
		}
	}
out:
	free(doms);
	free(ids);
	free(chans);
	free(first);
	free(uuids);
	return err;
}

int imexd_fsm_restore(struct imexd_fsm *fsm, uint64_t index,
		      const uint8_t *buf, size_t len, const char **why)
{
	struct fsm_rd r = { buf, len, 0, NULL };
	struct tables t = { NULL, 0, NULL, 0 };
	const char *w = NULL;
	unsigned version;
	int err;

	if (!fsm || (!buf && len))
		return -EINVAL;
	if (rd_be(&r, 4) != IMEXD_FSM_MAGIC && !r.err)
		rd_fail(&r, -EBADMSG, "not a state machine snapshot");
	version = (unsigned)rd_be(&r, 1);
	if ((version < 1 || version > IMEXD_FSM_SNAP_VERSION) && !r.err)
		rd_fail(&r, -EPROTO, "unknown snapshot version");
	rd_nodes(&r, &t, version);
	rd_domains(&r, &t, index);
	if (!r.err && r.left)
		rd_fail(&r, -EBADMSG, "bytes after the snapshot");
	err = r.err;
	w = r.why;
	if (!err)
		err = check_across(&t, &w);
	if (err) {
		tables_free(&t);
		if (why)
			*why = err == -ENOMEM ? "out of memory" : w;
		return err;
	}
	for (len = 0; len < fsm->ndomains; len++)
		imexd_def_free(&fsm->domains[len]);
	free(fsm->domains);
	free(fsm->nodes);
	fsm->nodes = t.nodes;
	fsm->nnodes = fsm->nodes_cap = t.nnodes;
	fsm->domains = t.domains;
	fsm->ndomains = fsm->domains_cap = t.ndomains;
	fsm->last_index = index;
	return 0;
}
