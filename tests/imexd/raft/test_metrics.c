// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics formatter (imexd/metrics_format.c) and histogram: every
 * family has one HELP and one TYPE line before its samples, state sets
 * list every state, counters end in _total, the histogram's buckets are
 * cumulative and end at +Inf = _count, free channels never go negative,
 * label values are escaped, kernel counters appear only when the module
 * reports them, and errno values map to the documented reasons.
 *
 * `test_metrics --print` writes a full sample to stdout, for
 * `promtool check metrics` (tests/ops/t-metrics.sh).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "metrics.h"

static struct imexd_metrics_domain doms[3];
static struct imexd_metrics_peer peers[2];

static void sample(struct imexd_metrics *m)
{
	memset(m, 0, sizeof(*m));
	memset(doms, 0, sizeof(doms));
	memset(peers, 0, sizeof(peers));
	m->version = "1.2.3";
	m->node = "n1";
	m->attached = true;
	m->max_channels = 100;
	m->role = IMEXD_ROLE_LEADER;
	snprintf(doms[0].name, sizeof(doms[0].name), "job7");
	doms[0].state = IMEX_DOMAIN_READY;
	doms[0].channels = 4;
	doms[0].members[IMEX_MEMBER_SELF] = 1;
	doms[0].members[IMEX_MEMBER_CONNECTED] = 2;
	snprintf(doms[1].name, sizeof(doms[1].name), "q\"uo\\te");
	doms[1].state = IMEX_DOMAIN_DEGRADED;
	doms[1].channels = 1;
	doms[1].members[IMEX_MEMBER_SELF] = 1;
	doms[1].members[IMEX_MEMBER_NEVER_CONNECTED] = 1;
	snprintf(doms[2].name, sizeof(doms[2].name), "d3");
	doms[2].state = IMEX_DOMAIN_READY;
	doms[2].members[IMEX_MEMBER_SELF] = 1;
	m->domains = doms;
	m->ndomains = 3;
	snprintf(peers[0].name, sizeof(peers[0].name), "n2");
	peers[0].connected = true;
	peers[0].reconnects = 3;
	snprintf(peers[1].name, sizeof(peers[1].name), "n3");
	m->peers = peers;
	m->npeers = 2;
	m->kernel.present = true;
	m->kernel.exports = 9;
	m->kernel.imports = 7;
	m->kernel.import_refused[IMEXD_REFUSED_PERMISSION] = 2;
	m->remote_refused[IMEXD_REFUSED_NOT_FOUND] = 5;
	imexd_metrics_hist_add(&m->commit, 0);
	imexd_metrics_hist_add(&m->commit, 3);
	imexd_metrics_hist_add(&m->commit, 3);
	imexd_metrics_hist_add(&m->commit, 700);
	imexd_metrics_hist_add(&m->commit, 60000);
}

static char *format(const struct imexd_metrics *m)
{
	char *out = NULL;
	size_t len = 0;

	assert_int_equal(imexd_metrics_format(m, &out, &len), 0);
	assert_non_null(out);
	assert_int_equal(strlen(out), len);
	return out;
}

static void has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return;
	fail_msg("missing line '%s' in:\n%s", line, text);
}

static void test_values_of_every_family(void **state)
{
	struct imexd_metrics m;
	char *t;

	(void)state;
	sample(&m);
	t = format(&m);
	has_line(t, "imex_up 1");
	has_line(t, "imex_build_info{version=\"1.2.3\",node=\"n1\"} 1");
	has_line(t, "imex_raft_role{role=\"leader\"} 1");
	has_line(t, "imex_raft_role{role=\"voter\"} 0");
	has_line(t, "imex_domains{state=\"ready\"} 2");
	has_line(t, "imex_domains{state=\"degraded\"} 1");
	has_line(t, "imex_domains{state=\"down\"} 0");
	has_line(t, "imex_domain_members{domain=\"job7\",state=\"connected\"} 2");
	has_line(t, "imex_domain_members{domain=\"job7\",state=\"refused\"} 0");
	has_line(t, "imex_domain_members{domain=\"q\\\"uo\\\\te\",state=\"never-connected\"} 1");
	has_line(t, "imex_domain_channels{domain=\"job7\"} 4");
	has_line(t, "imex_channels{state=\"granted\"} 5");
	has_line(t, "imex_channels{state=\"free\"} 95");
	has_line(t, "imex_exports_total 9");
	has_line(t, "imex_imports_total 7");
	has_line(t, "imex_import_refusals_total{reason=\"permission\"} 2");
	has_line(t, "imex_import_refusals_total{reason=\"no_daemon\"} 0");
	has_line(t, "imex_remote_import_refusals_total{reason=\"not_found\"} 5");
	has_line(t, "imex_peer_connected{member=\"n2\"} 1");
	has_line(t, "imex_peer_connected{member=\"n3\"} 0");
	has_line(t, "imex_peer_reconnects_total{member=\"n2\"} 3");
	free(t);
}

static void test_histogram_is_cumulative_in_seconds(void **state)
{
	struct imexd_metrics m;
	char *t;

	(void)state;
	sample(&m);
	t = format(&m);
	has_line(t, "# TYPE imex_commit_latency_seconds histogram");
	has_line(t, "imex_commit_latency_seconds_bucket{le=\"0.001\"} 1");
	has_line(t, "imex_commit_latency_seconds_bucket{le=\"0.002\"} 1");
	has_line(t, "imex_commit_latency_seconds_bucket{le=\"0.005\"} 3");
	has_line(t, "imex_commit_latency_seconds_bucket{le=\"0.500\"} 3");
	has_line(t, "imex_commit_latency_seconds_bucket{le=\"1.000\"} 4");
	has_line(t, "imex_commit_latency_seconds_bucket{le=\"10.000\"} 4");
	has_line(t, "imex_commit_latency_seconds_bucket{le=\"+Inf\"} 5");
	has_line(t, "imex_commit_latency_seconds_count 5");
	has_line(t, "imex_commit_latency_seconds_sum 60.706");
	free(t);
}

/* Every sample's family was introduced by HELP then TYPE, once each. */
static void test_help_and_type_before_samples(void **state)
{
	struct imexd_metrics m;
	char *t, *line, *save = NULL;
	char fams[64][64];
	int nf = 0;

	(void)state;
	sample(&m);
	t = format(&m);
	for (line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		int k;

		if (!strncmp(line, "# HELP ", 7)) {
			assert_int_equal(sscanf(line + 7, "%63s", name), 1);
			for (k = 0; k < nf; k++)
				assert_string_not_equal(fams[k], name);
			assert_true(nf < 64);
			snprintf(fams[nf++], sizeof(fams[0]), "%s", name);
			line = strtok_r(NULL, "\n", &save);
			assert_non_null(line);
			assert_int_equal(strncmp(line, "# TYPE ", 7), 0);
			assert_int_equal(strncmp(line + 7, name, strlen(name)), 0);
			if (strstr(line, " counter"))
				assert_non_null(strstr(name, "_total"));
			continue;
		}
		assert_int_not_equal(line[0], '#');
		assert_int_equal(strncmp(line, "imex_", 5), 0);
		assert_true(nf > 0);
		/* The sample belongs to the last family introduced. */
		assert_int_equal(strncmp(line, fams[nf - 1], strlen(fams[nf - 1])), 0);
	}
	free(t);
}

static void test_free_channels_never_negative(void **state)
{
	struct imexd_metrics m;
	char *t;

	(void)state;
	sample(&m);
	m.max_channels = 2;
	t = format(&m);
	has_line(t, "imex_channels{state=\"free\"} 0");
	free(t);
}

static void test_kernel_counters_only_when_reported(void **state)
{
	struct imexd_metrics m;
	char *t;

	(void)state;
	sample(&m);
	m.kernel.present = false;
	m.attached = false;
	m.ndomains = 0;
	m.npeers = 0;
	t = format(&m);
	assert_null(strstr(t, "imex_exports_total"));
	assert_null(strstr(t, "imex_import_refusals_total"));
	has_line(t, "imex_up 0");
	has_line(t, "imex_remote_import_refusals_total{reason=\"permission\"} 0");
	has_line(t, "imex_domains{state=\"ready\"} 0");
	has_line(t, "imex_channels{state=\"free\"} 100");
	free(t);
}

static void test_refusal_reasons(void **state)
{
	(void)state;
	assert_int_equal(imexd_metrics_refusal_of(EPERM), IMEXD_REFUSED_PERMISSION);
	assert_int_equal(imexd_metrics_refusal_of(ENOENT), IMEXD_REFUSED_NOT_FOUND);
	assert_int_equal(imexd_metrics_refusal_of(EHOSTUNREACH), IMEXD_REFUSED_UNREACHABLE);
	assert_int_equal(imexd_metrics_refusal_of(ETIMEDOUT), IMEXD_REFUSED_TIMEOUT);
	assert_int_equal(imexd_metrics_refusal_of(ENOBUFS), IMEXD_REFUSED_NO_SPACE);
	assert_int_equal(imexd_metrics_refusal_of(EAGAIN), IMEXD_REFUSED_NO_SPACE);
	assert_int_equal(imexd_metrics_refusal_of(ESRCH), IMEXD_REFUSED_NO_DAEMON);
	assert_int_equal(imexd_metrics_refusal_of(ENODEV), IMEXD_REFUSED_REVOKED);
	assert_int_equal(imexd_metrics_refusal_of(EIO), IMEXD_REFUSED_OTHER);
	assert_string_equal(imexd_metrics_refusal_name(IMEXD_REFUSED_N), "other");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_of_every_family),
		cmocka_unit_test(test_histogram_is_cumulative_in_seconds),
		cmocka_unit_test(test_help_and_type_before_samples),
		cmocka_unit_test(test_free_channels_never_negative),
		cmocka_unit_test(test_kernel_counters_only_when_reported),
		cmocka_unit_test(test_refusal_reasons),
	};

	if (argc == 2 && !strcmp(argv[1], "--print")) {
		struct imexd_metrics m;
		char *out = NULL;
		size_t len = 0;

		sample(&m);
		if (imexd_metrics_format(&m, &out, &len))
			return 1;
		fwrite(out, 1, len, stdout);
		free(out);
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
