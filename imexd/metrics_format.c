// SPDX-License-Identifier: GPL-2.0
/*
 * A metrics snapshot in the Prometheus text exposition format (version
 * 0.0.4): every family with its HELP and TYPE line, state sets as one gauge
 * per state (0 included, so a query never meets a missing series), counters
 * ending in _total, time in seconds.  See metrics.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "imex_names.h"
#include "metrics.h"

/* The kernel's counters map onto the reasons by position. */
_Static_assert(IMEXD_REFUSED_OTHER - IMEXD_REFUSED_PERMISSION ==
	       IMEX_A_STATS_REFUSED_OTHER - IMEX_A_STATS_REFUSED_PERMISSION,
	       "refusal reasons follow IMEX_A_STATS_REFUSED_*");

static const char *const roles[IMEXD_ROLE_N] = {
	[IMEXD_ROLE_NONE] = "none",
	[IMEXD_ROLE_LEADER] = "leader",
	[IMEXD_ROLE_VOTER] = "voter",
	[IMEXD_ROLE_STANDBY] = "standby",
	[IMEXD_ROLE_SPARE] = "spare",
};

static const char *const refusals[IMEXD_REFUSED_N] = {
	[IMEXD_REFUSED_PERMISSION] = "permission",
	[IMEXD_REFUSED_NOT_FOUND] = "not_found",
	[IMEXD_REFUSED_UNREACHABLE] = "unreachable",
	[IMEXD_REFUSED_TIMEOUT] = "timeout",
	[IMEXD_REFUSED_NO_SPACE] = "no_space",
	[IMEXD_REFUSED_NO_DAEMON] = "no_daemon",
	[IMEXD_REFUSED_REVOKED] = "revoked",
	[IMEXD_REFUSED_OTHER] = "other",
};

const char *imexd_metrics_refusal_name(enum imexd_metrics_refusal r)
{
	return (unsigned)r < IMEXD_REFUSED_N ? refusals[r] : "other";
}

enum imexd_metrics_refusal imexd_metrics_refusal_of(int error)
{
	switch (error) {
	case EPERM:
	case EACCES:
		return IMEXD_REFUSED_PERMISSION;
	case ENOENT:
		return IMEXD_REFUSED_NOT_FOUND;
	case EHOSTUNREACH:
		return IMEXD_REFUSED_UNREACHABLE;
	case ETIMEDOUT:
		return IMEXD_REFUSED_TIMEOUT;
	case ENOBUFS:
	case ENOSPC:
	case EAGAIN:		/* the broker's tables full */
		return IMEXD_REFUSED_NO_SPACE;
	case ESRCH:
		return IMEXD_REFUSED_NO_DAEMON;
	case ENODEV:
		return IMEXD_REFUSED_REVOKED;
	default:
		return IMEXD_REFUSED_OTHER;
	}
}

/* A label value: backslash, double quote and newline escaped. */
static void put_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Milliseconds as seconds, exactly (no floating point). */
static void put_seconds(FILE *f, uint64_t ms)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64, ms / 1000, ms % 1000);
}

static void domains(FILE *f, const struct imexd_metrics *m)
{
	uint32_t s;
	size_t i;

	family(f, "imex_domains", "gauge",
	       "Domains this node holds, by state.");
	for (s = IMEX_DOMAIN_DOWN; s < __IMEX_DOMAIN_STATE_MAX; s++) {
		size_t n = 0;

		for (i = 0; i < m->ndomains; i++)
			n += m->domains[i].state == s;
		fprintf(f, "imex_domains{state=\"%s\"} %zu\n", imex_domain_state_name(s), n);
	}
	family(f, "imex_domain_members", "gauge",
	       "Members of a domain, by their state as this node sees them.");
	for (i = 0; i < m->ndomains; i++)
		for (s = 0; s < __IMEX_MEMBER_STATE_MAX; s++) {
			fputs("imex_domain_members{domain=\"", f);
			put_label(f, m->domains[i].name);
			fprintf(f, "\",state=\"%s\"} %" PRIu32 "\n",
				imex_member_state_name(s), m->domains[i].members[s]);
		}
	family(f, "imex_domain_channels", "gauge",
	       "Channel ids a domain holds (imexctl's channel_count).");
	for (i = 0; i < m->ndomains; i++) {
		fputs("imex_domain_channels{domain=\"", f);
		put_label(f, m->domains[i].name);
		fprintf(f, "\"} %" PRIu32 "\n", m->domains[i].channels);
	}
}

static void channels(FILE *f, const struct imexd_metrics *m)
{
	uint64_t granted = 0;

	for (size_t i = 0; i < m->ndomains; i++)
		granted += m->domains[i].channels;
	family(f, "imex_channels", "gauge",
	       "The node's channel ids: held by a domain (granted), or free.");
	fprintf(f, "imex_channels{state=\"granted\"} %" PRIu64 "\n", granted);
	fprintf(f, "imex_channels{state=\"free\"} %" PRIu64 "\n",
		granted < m->max_channels ? m->max_channels - granted : 0);
}

static void refusal_family(FILE *f, const char *name, const char *help,
			   const uint64_t *v)
{
	family(f, name, "counter", help);
	for (int r = 0; r < IMEXD_REFUSED_N; r++)
		fprintf(f, "%s{reason=\"%s\"} %" PRIu64 "\n", name, refusals[r],
			v[r]);
}

static void transfers(FILE *f, const struct imexd_metrics *m)
{
	if (m->kernel.present) {
		family(f, "imex_exports_total", "counter",
		       "Memory exports made on this node since the module loaded.");
		fprintf(f, "imex_exports_total %" PRIu64 "\n", m->kernel.exports);
		family(f, "imex_imports_total", "counter",
		       "Imports completed on this node since the module loaded.");
		fprintf(f, "imex_imports_total %" PRIu64 "\n", m->kernel.imports);
		refusal_family(f, "imex_import_refusals_total",
			       "Imports on this node the kernel refused, by reason.",
			       m->kernel.import_refused);
	}
	refusal_family(f, "imex_remote_import_refusals_total",
		       "Imports of this node's exports by other nodes that imexd refused, by reason.",
		       m->remote_refused);
}

static void commit_latency(FILE *f, const struct imexd_metrics_hist *h)
{
	const char *n = "imex_commit_latency_seconds";
	uint64_t cum = 0;

	family(f, n, "histogram",
	       "Time from submitting a change on the leader to its commit.");
	for (int b = 0; b < IMEXD_METRICS_HIST_BUCKETS; b++) {
		cum += h->bucket[b];
		fprintf(f, "%s_bucket{le=\"", n);
		put_seconds(f, imexd_metrics_hist_le_ms[b]);
		fprintf(f, "\"} %" PRIu64 "\n", cum);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", n, h->count);
	fprintf(f, "%s_sum ", n);
	put_seconds(f, h->sum_ms);
	fprintf(f, "\n%s_count %" PRIu64 "\n", n, h->count);
}

static void peers(FILE *f, const struct imexd_metrics *m)
{
	size_t i;

	family(f, "imex_peer_connected", "gauge",
	       "1 while the connection to a peer is up.");
	for (i = 0; i < m->npeers; i++) {
		fputs("imex_peer_connected{member=\"", f);
		put_label(f, m->peers[i].name);
		fprintf(f, "\"} %d\n", m->peers[i].connected);
	}
	family(f, "imex_peer_reconnects_total", "counter",
	       "Times a peer connected again after its connection was lost.");
	for (i = 0; i < m->npeers; i++) {
		fputs("imex_peer_reconnects_total{member=\"", f);
		put_label(f, m->peers[i].name);
		fprintf(f, "\"} %" PRIu64 "\n", m->peers[i].reconnects);
	}
}

int imexd_metrics_format(const struct imexd_metrics *m, char **out,
			 size_t *len)
{
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	family(f, "imex_up", "gauge",
	       "1 while imexd runs and manages this node's kernel module.");
	fprintf(f, "imex_up %d\n", m->attached);
	family(f, "imex_build_info", "gauge", "imexd's version, always 1.");
	fputs("imex_build_info{version=\"", f);
	put_label(f, m->version ? m->version : "");
	fputs("\",node=\"", f);
	put_label(f, m->node ? m->node : "");
	fputs("\"} 1\n", f);
	family(f, "imex_raft_role", "gauge",
	       "This node's role in the agreement group: 1 for the current one.");
	for (int r = 0; r < IMEXD_ROLE_N; r++)
		fprintf(f, "imex_raft_role{role=\"%s\"} %d\n", roles[r],
			m->role == (enum imexd_metrics_role)r);
	domains(f, m);
	channels(f, m);
	transfers(f, m);
	commit_latency(f, &m->commit);
	peers(f, m);
	if (ferror(f)) {
		fclose(f);
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	if (fclose(f)) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}
