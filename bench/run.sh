#!/bin/bash
# `make bench`: run every benchmark, print one table, write it as JSON.
#   bench/run.sh [--quick] [--reps N] [--no-cluster] [--only ROWS] [--json FILE]
# (--no-cluster leaves out the 3-VM, Slurm and 18-VM rack benchmarks.)
# Every figure is a ratio against a baseline taken in the same run on the
# same (virtual) machine: absolute times on shared, emulated machines mean
# little.  Goals are printed, never asserted; the exit status is 1 only if
# a benchmark could not run.  --quick (for `make check`): one short
# repetition of the single-VM and simulator benchmarks and a loopback run
# of the cluster programs, to prove they still work; its figures mean
# nothing.  --only ROWS (comma-separated row names, as in bench/report.c:
# channel_resolve,cdi_spec, say) runs only the steps those rows need, to
# measure a change to one path without the rest.  Raw lines and logs:
# bench/results.raw, bench/results.log.
set -u
cd "$(dirname "$0")/.." || exit 2
repo=$(pwd -P)
quick=0 reps=5 cluster=1 json=bench/results.json only=""
export BENCH_ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--reps) reps=$2; shift 2 ;;
	--no-cluster) cluster=0; shift ;;
	--only) only=$2; BENCH_ONLY=$2; shift 2 ;;
	--json) json=$2; shift 2 ;;
	*) echo "usage: bench/run.sh [--quick] [--reps N] [--no-cluster] [--only ROWS] [--json FILE]" >&2; exit 2 ;;
	esac
done
. bench/rows.sh
if [ "$quick" = 1 ]; then
	reps=1 open_iter=2000 resolve_iter=20000 ndom=4 cluster=0
	json=${json/results.json/results-quick.json}
else
	open_iter=20000 resolve_iter=1000000 ndom=64
fi
kver=${IMEX_KVER:-$(tools/kver.sh)} || exit 2
# Absolute: the cluster scripts run from other directories.
case $json in /*) ;; *) json=$repo/$json ;; esac
raw=${json%.json}.raw
log=${json%.json}.log
work=$(mktemp -d "${TMPDIR:-/tmp}/imex-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
: > "$raw"
: > "$log"
failed=0
step() { echo "bench: $*" | tee -a "$log" >&2; }
bad() { echo "bench: FAILED: $*" | tee -a "$log" >&2; failed=1; }

step "building"
{ make -s -C bench all && make -s -C tests all && make -s -C tests/imexd/raft build/sim_agree_fast &&
  make -s -C contrib/slurm all; } >> "$log" 2>&1 ||
	{ bad "build (see $log)"; exit 1; }
{
	echo "meta mode $([ "$quick" = 1 ] && echo quick || echo full)"
	echo "meta repetitions $reps"
	echo "meta kernel $kver"
	echo "meta host_cpus $(nproc)"
	echo "meta commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	[ -z "$only" ] || echo "only $only"
} >> "$raw"

# 144-node create in the node simulator (tests/imexd/raft): simulated time from
# the request at a follower to READY on all 18 members, against the
# simulated RTT; messages against N.  Deterministic: one run is every run.
# The raft count is RAFT frames; "all" adds the forward, the answer and the
# heartbeats that fall before READY.  The create starts just after the
# leader's heartbeat round: the counts are what the create sends.
if want sim_create_time sim_create_msgs sim_create_msgs_all; then
	step "simulator: 144-node create"
	if out=$(tests/imexd/raft/build/sim_agree_fast scale 144 2>&1); then
		echo "$out" >> "$log"
		line=$(printf '%s\n' "$out" | grep '^scale: create over')
		ms=$(printf '%s\n' "$line" | sed -n 's/.* in \([0-9.]*\) ms = .*/\1/p')
		rtt=$(printf '%s\n' "$line" | sed -n 's/.*(RTT \([0-9.]*\) ms).*/\1/p')
		msgs=$(printf '%s\n' "$out" | sed -n 's/.*raft messages \([0-9]*\) .*/\1/p')
		all=$(printf '%s\n' "$out" | sed -n 's/.*all messages \([0-9]*\).*/\1/p')
		if [ -n "$ms" ] && [ -n "$rtt" ] && [ -n "$msgs" ] && [ -n "$all" ]; then
			{ echo "sample sim_create_time $ms $rtt"; echo "sample sim_create_msgs $msgs 144"
			  echo "sample sim_create_msgs_all $all 144"; } >> "$raw"
		else
			bad "cannot read the simulator's output"
		fi
	else
		echo "$out" >> "$log"
		bad "sim_agree_fast scale 144 failed (see $log)"
	fi
fi

# Raft figures in the node simulator: a quiet group of five nodes per seed
# (9 seeds), the daemon's default election timeout (1000 ms), 5 ms one way.
# Commit latency (request at the leader -> the leader counts it committed
# on a majority) and a member's restart -> READY on every member against
# the simulated RTT; the raft messages of a create naming all five, against
# N; the leader killed -> a new leader against the election timeout (the
# median, and the worst of the 9).
if want sim_commit sim_create5_msgs sim_restart sim_failover sim_failover_max; then
	step "simulator: commit latency, restart, leader failover"
	if out=$(tests/imexd/raft/build/sim_agree_fast failover 9 2>&1); then
		echo "$out" >> "$log"
		times=$(printf '%s\n' "$out" | sed -n 's/^failover: .* RTT \([0-9]*\) ms, election timeout \([0-9]*\) ms$/\1 \2/p')
		read -r rtt et <<< "$times"
		runs=$(printf '%s\n' "$out" | sed -n 's/^failover seed [0-9]*: commit \([0-9]*\) ms, create \([0-9]*\) raft msgs, restart to READY \([0-9]*\) ms, new leader \([0-9]*\) ms$/\1 \2 \3 \4/p')
		if [ -n "${rtt:-}" ] && [ -n "${et:-}" ] && [ -n "$runs" ]; then
			printf '%s\n' "$runs" | while read -r c m r e; do
				echo "sample sim_commit $c $rtt"
				echo "sample sim_create5_msgs $m 5"
				echo "sample sim_restart $r $rtt"
				echo "sample sim_failover $e $et"
			done >> "$raw"
			echo "sample sim_failover_max $(printf '%s\n' "$runs" | awk '{print $4}' | sort -n | tail -1) $et" >> "$raw"
		else
			bad "cannot read the simulator's failover output"
		fi
	else
		echo "$out" >> "$log"
		bad "sim_agree_fast failover failed (see $log)"
	fi
fi

if want module_memory cdi_spec channel_open channel_resolve channel_open_busy; then
	step "single VM: memory, CDI, open+close, resolve ($reps repetition(s))"
	if tests/vm/run.sh --kver "$kver" --quiet --mem 1024 --cpus 2 --timeout 900 \
		--module-args "fabric_uuid=11111111-2222-3333-4444-555555555555 fabric_partition=7" \
		--out "$work/vm" -- sh bench/vm-single.sh "$reps" "$open_iter" "$resolve_iter" "$ndom" \
		"${only:-all}" >> "$log" 2>&1; then
		cat "$work/vm/test.log" >> "$log"
	else
		cat "$work/vm/test.log" >> "$log" 2>/dev/null
		bad "the single-VM benchmarks (see $log)"
	fi
	# What a failed run measured before it failed still counts.
	grep -s -e '^sample ' "$work/vm/raw.txt" >> "$raw"
fi

if [ "$cluster" = 1 ]; then
	if want import_latency import_throughput domain_create imexctl_noop \
		domain_create_net raft_fsync domain_create_net_fs daemon_restart imexd_rss; then
		step "3 VMs: create, restart, import, imexd memory ($reps repetition(s))"
		bench/cluster.sh "$reps" "$raw" >> "$log" 2>&1 ||
			bad "the cluster benchmarks (see $log)"
	fi
	# The rack tier itself (tests/cluster/t-rack.sh) with its bench rows:
	# the rows need its state (18 nodes, its domains up, a replace), and
	# one boot of 18 VMs is most of its time.
	if want rack_create_3 rack_create_6 rack_create_12 rack_create_18 \
		rack_create_18_over_3 rack_replace rack_imexd_rss; then
		step "18 VMs (rack): create -> READY for 3..18, replace, leader RSS ($reps repetition(s))"
		tests/cluster/t-rack.sh --bench "$raw" "$reps" >> "$log" 2>&1 ||
			bad "the rack tier (see $log)"
		for n in rack_create_3 rack_create_6 rack_create_12 rack_create_18 \
			rack_create_18_over_3 rack_replace rack_imexd_rss; do
			grep -q "^sample $n " "$raw" || echo "skip $n t-rack.sh --bench failed" >> "$raw"
		done
	fi
	if want slurm_job_start; then
		step "3 VMs under Slurm: sbatch -> first task, with and without imex.so ($reps pair(s))"
		make -s -C tests/libimexctl vm-tools >> "$log" 2>&1 &&
		tests/slurm/t-slurm.sh --bench "$raw" "$reps" >> "$log" 2>&1 ||
			bad "the Slurm start overhead (see $log)"
		grep -q '^\(sample\|skip\) slurm_job_start ' "$raw" ||
			echo "skip slurm_job_start t-slurm.sh --bench failed" >> "$raw"
	fi
else
	# The cluster programs still run, over loopback, so they cannot rot.
	step "cluster benchmarks not run; their programs over loopback"
	bench/imex-bench tcp-server 7900 300 > "$work/srv.log" 2>&1 &
	srv=$!
	sleep 0.5
	{ bench/imex-bench tcp-client 127.0.0.1 7900 300 1 200 &&
	  bench/imex-bench tcp-client 127.0.0.1 7900 300 16 20 &&
	  bench/imex-bench elapsed true; } >> "$log" 2>&1 || bad "the TCP baseline programs"
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	# Every row bench/cluster.sh and t-slurm.sh --bench would write.
	why="cluster not run ($([ "$quick" = 1 ] && echo quick mode || echo --no-cluster))"
	for n in import_latency import_throughput domain_create imexctl_noop \
		domain_create_net raft_fsync domain_create_net_fs daemon_restart imexd_rss \
		rack_create_3 rack_create_6 rack_create_12 rack_create_18 \
		rack_create_18_over_3 rack_replace rack_imexd_rss slurm_job_start; do
		echo "skip $n $why" >> "$raw"
	done
fi

step "results"
bench/imex-bench report "$raw" "$json" | tee -a "$log" || failed=1
echo "bench: JSON in $json, raw lines in $raw, log in $log" >&2
exit "$failed"
