// SPDX-License-Identifier: GPL-2.0
/*
 * report RAW JSON_OUT: read the raw lines of a run
 *
 *   sample NAME MEASURED BASELINE      one repetition (or slice) of a benchmark
 *   skip NAME REASON...                why a benchmark did not run
 *   meta KEY VALUE...                  run facts for the JSON (mode, ...)
 *   only NAME[,NAME...]                the rows the run was asked for; the
 *                                      others are reported as not selected
 *
 * print the table and write the same as JSON.  Measured and baseline are
 * the medians of the samples (repetitions, or slices of one); the ratio is
 * the median of the per-sample ratios (each pair was taken back to back, so
 * load drift between samples cancels in it), printed with the smallest and
 * largest per-sample ratio beside it (measured, for the rows without a
 * ratio), so a noisy row shows as noisy.  Goals are printed, never asserted:
 * the exit status is 1 only when a benchmark left neither a sample nor a
 * reason, i.e. when the benchmark machinery itself is broken.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>

#include "bench.h"

/* INFO: a figure shown beside the others, with no goal of its own. */
enum goal_kind { RATIO_LE, RATIO_GE, ABS_LE, INFO };

static const struct def {
	const char *name, *label, *unit, *baseline;
	enum goal_kind kind;
	double goal;
	const char *goal_text;
} defs[] = {
	{ "channel_open", "channel open+close", "ns", "/dev/null open+close",
	  RATIO_LE, 1.10, "<= 1.10x" },
	{ "channel_open_busy", "open+close, neighbour granted 4096", "ns",
	  "same, neighbour stopped", RATIO_LE, 2, "<= 2x" },
	{ "channel_resolve", "channel fd resolve (kernel API)", "ns", "fget+fput",
	  RATIO_LE, 1.5, "<= 1.5x" },
	{ "import_latency", "remote import latency", "us", "TCP req/resp, 1 client",
	  RATIO_LE, 1.5, "<= 1.5x" },
	{ "import_throughput", "import throughput, 16 importers", "1/s",
	  "TCP req/resp/s, 16 clients", RATIO_GE, 0.8, ">= 0.8x" },
	{ "domain_create", "domain create -> READY (3 VMs)", "us", "TCP RTT",
	  RATIO_LE, 6, "<= 6 RTT" },
	{ "imexctl_noop", "imexctl node show (no-op call)", "us", "TCP RTT",
	  INFO, 0, "-" },
	{ "domain_create_net", "create -> READY, less imexctl start", "us",
	  "TCP RTT", RATIO_LE, 6, "<= 6 RTT" },
	{ "raft_fsync", "raft log append (write+fdatasync)", "us", "TCP RTT",
	  INFO, 0, "-" },
	{ "domain_create_net_fs", "same, less the 2 fsyncs on its path", "us",
	  "TCP RTT", RATIO_LE, 6, "<= 6 RTT" },
	{ "daemon_restart", "daemon restart -> READY again", "us", "TCP RTT",
	  RATIO_LE, 4, "<= 4 RTT" },
	{ "sim_create_time", "144-node create (sim): time", "ms", "simulated RTT",
	  RATIO_LE, 4, "<= 4 RTT" },
	{ "sim_create_msgs", "144-node create (sim): raft msgs", "msgs", "N",
	  RATIO_LE, 6, "<= 6 N" },
	{ "sim_create_msgs_all", "144-node create (sim): all msgs", "msgs", "N",
	  RATIO_LE, 6, "<= 6 N" },
	{ "sim_commit", "commit latency (sim, 5 nodes)", "ms",
	  "simulated RTT", RATIO_LE, 1, "<= 1 RTT" },
	{ "sim_create5_msgs", "5-node create (sim): raft msgs", "msgs", "N",
	  INFO, 0, "-" },
	{ "sim_restart", "member restart -> READY (sim)", "ms",
	  "simulated RTT", RATIO_LE, 4, "<= 4 RTT" },
	{ "sim_failover", "leader failover (sim, 5 nodes)", "ms",
	  "election timeout", RATIO_LE, 2, "<= 2 ET" },
	{ "sim_failover_max", "leader failover (sim): worst of 9", "ms",
	  "election timeout", RATIO_LE, 2, "<= 2 ET" },
	{ "cdi_spec", "CDI spec, 2048 channels", "us", "write+fsync+rename",
	  RATIO_LE, 2, "<= 2x" },
	{ "module_memory", "module memory, 2048 ch/64 domains", "KiB",
	  "KiB in use, nothing granted", ABS_LE, 1024, "<= 1024 KiB extra" },
	{ "imexd_rss", "imexd RSS, READY 3-node domain", "KiB", "-",
	  ABS_LE, 8192, "<= 8192 KiB" },
	{ "rack_create_3", "create -> READY, 3 of 18 (rack)", "us", "TCP RTT",
	  RATIO_LE, 6, "<= 6 RTT" },
	{ "rack_create_6", "create -> READY, 6 of 18 (rack)", "us", "TCP RTT",
	  RATIO_LE, 6, "<= 6 RTT" },
	{ "rack_create_12", "create -> READY, 12 of 18 (rack)", "us", "TCP RTT",
	  RATIO_LE, 6, "<= 6 RTT" },
	{ "rack_create_18", "create -> READY, 18 of 18 (rack)", "us", "TCP RTT",
	  RATIO_LE, 6, "<= 6 RTT" },
	/* The log fan-out: log2 18 / log2 3 = 2.6. */
	{ "rack_create_18_over_3", "create 18 members / 3 (rack)", "us",
	  "create of 3", RATIO_LE, 2.6, "<= 2.6x (log fan-out)" },
	{ "rack_replace", "replace -> READY, 8 members (rack)", "us", "TCP RTT",
	  RATIO_LE, 6, "<= 6 RTT" },
	{ "rack_imexd_rss", "imexd RSS, leader of 18, 5 domains", "KiB", "-",
	  ABS_LE, 8192, "<= 8192 KiB" },
	{ "slurm_job_start", "Slurm sbatch -> first task (3 VMs)", "ms",
	  "same, no imex.so", RATIO_LE, 1.5, "<= 1.5x" },
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))
#define MAX_SAMPLES 256

struct row {
	double m[MAX_SAMPLES], b[MAX_SAMPLES], r[MAX_SAMPLES];
	int n;
	char skip[256];
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts @v: v[0] and v[n - 1] are then the smallest and the largest. */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int find(const char *name)
{
	for (size_t i = 0; i < NDEFS; i++)
		if (!strcmp(defs[i].name, name))
			return (int)i;
	die("unknown benchmark '%s' in the raw results", name);
}

/* Every row but those in the comma-separated @names is not selected. */
static void only(struct row *rows, char *names)
{
	bool wanted[NDEFS] = { false };
	char *save = NULL;

	for (char *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save))
		wanted[find(n)] = true;
	for (size_t i = 0; i < NDEFS; i++)
		if (!wanted[i])
			snprintf(rows[i].skip, sizeof(rows[i].skip), "not selected (--only)");
}

static void read_raw(const char *path, struct row *rows, json_object *meta)
{
	char line[1024], name[128];
	FILE *f = fopen(path, "r");

	if (!f)
		die("cannot read %s", path);
	while (fgets(line, sizeof(line), f)) {
		double m, b;
		int off = 0;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "sample %127s %lf %lf", name, &m, &b) == 3) {
			struct row *r = &rows[find(name)];

			if (r->n < MAX_SAMPLES) {
				r->m[r->n] = m;
				r->b[r->n] = b;
				r->r[r->n] = b ? m / b : NAN;
				r->n++;
			}
		} else if (sscanf(line, "skip %127s %n", name, &off) == 1 && off) {
			snprintf(rows[find(name)].skip, sizeof(rows[0].skip), "%s",
				 line + off);
		} else if (sscanf(line, "only %127s", name) == 1) {
			only(rows, name);
		} else if (sscanf(line, "meta %127s %n", name, &off) == 1 && off) {
			json_object_object_add(meta, name,
					       json_object_new_string(line + off));
		}
		/* Anything else is commentary from the runs. */
	}
	fclose(f);
}

int cmd_report(int argc, char **argv)
{
	struct row *rows = calloc(NDEFS, sizeof(*rows));
	json_object *top = json_object_new_object(), *list = json_object_new_array();
	json_object *meta = json_object_new_object();
	char stamp[64];
	time_t now = time(NULL);
	int missing = 0;

	if (argc != 2)
		die("usage: report RAW_FILE JSON_OUT");
	if (!rows)
		die("out of memory");
	read_raw(argv[0], rows, meta);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	printf("%-37s %12s %12s %8s %-17s  %-18s %s\n", "benchmark", "measured",
	       "baseline", "ratio", " (min..max)", "goal", "met?");
	for (size_t i = 0; i < NDEFS; i++) {
		const struct def *d = &defs[i];
		struct row *r = &rows[i];
		json_object *o = json_object_new_object();
		double m, b, ratio, lo, hi;
		char mb[32], bb[32], rb[32], sb[48];
		int met;

		json_object_object_add(o, "name", json_object_new_string(d->name));
		json_object_object_add(o, "label", json_object_new_string(d->label));
		json_object_object_add(o, "unit", json_object_new_string(d->unit));
		json_object_object_add(o, "baseline_is", json_object_new_string(d->baseline));
		json_object_object_add(o, "goal", json_object_new_string(d->goal_text));
		json_object_array_add(list, o);
		if (!r->n) {
			const char *why = r->skip[0] ? r->skip : "no result: it failed, see the log";

			missing += !r->skip[0];
			printf("%-37s skipped (%s)\n", d->label, why);
			json_object_object_add(o, "skipped", json_object_new_string(why));
			continue;
		}
		m = median(r->m, r->n);
		b = median(r->b, r->n);
		ratio = d->kind == ABS_LE ? NAN : median(r->r, r->n);
		/* The spread of what the goal is checked on (median sorted it). */
		lo = d->kind == ABS_LE ? r->m[0] : r->r[0];
		hi = d->kind == ABS_LE ? r->m[r->n - 1] : r->r[r->n - 1];
		met = d->kind == ABS_LE ? m <= d->goal :
		      d->kind == RATIO_LE ? ratio <= d->goal :
		      d->kind == RATIO_GE ? ratio >= d->goal : 1;
		snprintf(mb, sizeof(mb), "%.4g %s", m, d->unit);
		if (d->kind == ABS_LE && !b)
			snprintf(bb, sizeof(bb), "-");
		else
			snprintf(bb, sizeof(bb), "%.4g", b);
		if (isnan(ratio))
			snprintf(rb, sizeof(rb), "-");
		else
			snprintf(rb, sizeof(rb), "%.3g", ratio);
		snprintf(sb, sizeof(sb), " (%.3g..%.3g)", lo, hi);
		printf("%-37s %12s %12s %8s %-17s  %-18s %s\n", d->label, mb, bb, rb,
		       sb, d->goal_text, met ? "yes" : "NO");
		json_object_object_add(o, "measured", json_object_new_double(m));
		json_object_object_add(o, "baseline", json_object_new_double(b));
		json_object_object_add(o, "ratio", isnan(ratio) ? NULL :
				       json_object_new_double(ratio));
		json_object_object_add(o, "met", d->kind == INFO ? NULL :
				       json_object_new_boolean(met));
		json_object_object_add(o, "samples", json_object_new_int(r->n));
		json_object_object_add(o, d->kind == ABS_LE ? "measured_min" : "ratio_min",
				       json_object_new_double(lo));
		json_object_object_add(o, d->kind == ABS_LE ? "measured_max" : "ratio_max",
				       json_object_new_double(hi));
	}
	printf("measured, baseline: medians of the samples (repetitions, or slices of them); ratio: median of the per-sample ratios, (min..max) of them (of measured where there is no ratio)\n");
	json_object_object_add(top, "generated", json_object_new_string(stamp));
	json_object_object_add(top, "run", meta);
	json_object_object_add(top, "ratio_is",
			       json_object_new_string("median of per-sample measured/baseline"));
	json_object_object_add(top, "results", list);
	if (json_object_to_file_ext(argv[1], top, JSON_C_TO_STRING_PRETTY |
				    JSON_C_TO_STRING_NOSLASHESCAPE))
		die("cannot write %s", argv[1]);
	json_object_put(top);
	free(rows);
	if (missing)
		fprintf(stderr, "imex-bench: %d benchmark(s) left no result and no reason\n",
			missing);
	return missing ? 1 : 0;
}
