#!/bin/bash
# Host side of the 3-VM benchmarks (one cluster boot, tests/cluster/):
#   bench/cluster.sh REPS RAW_FILE
# appends raw result lines (see bench/report.c) to RAW_FILE.  Every figure
# is paired with the TCP request/response baseline between the same VMs,
# measured in the same repetition (bench/net.c says why it is the right
# baseline).  Node 1 coordinates and exports; node 2 imports and restarts.
cd "$(dirname "$0")/.." || exit 2
. tests/cluster/cluster.sh
reps=$1 raw=$2
I=tools/imexctl/imexctl
# imexd as deployed (LOG_LEVEL=info), not node.sh's debug default: at debug
# every action is a synchronous log write to the 9p share, which measured
# about 5 ms of each import and halved the throughput.
N="sh tests/cluster/node.sh"
START="$N start LOG_LEVEL=info"
B=bench/imex-bench
SHARE=tools/imex-share/imex-share
NODES="node1=192.0.2.1,node2=192.0.2.2,node3=192.0.2.3"
PORT=7900
SIZE=300	# bytes each way, about an import request and its answer
RTT_COUNT=${BENCH_RTT_COUNT:-500}
TPUT_COUNT=${BENCH_TPUT_COUNT:-100}
failed=0

emit() { echo "$*" >> "$raw"; }
. bench/rows.sh	# want ROW...: BENCH_ONLY, from bench/run.sh --only
# value KEY TEXT: the number after KEY in TEXT.
value() { printf '%s\n' "$2" | sed -n "s/^$1 \([0-9.]*\)$/\1/p" | tail -n 1; }
bad() { echo "bench/cluster: $*" >&2; failed=1; }
# ok_imports TEXT: imex-share's summary says no import failed.
ok_imports() {
	printf '%s\n' "$1" | grep -q ' imports, 0 errors' && return 0
	bad "imports failed: $(printf '%s\n' "$1" | tail -n 2)"
	return 1
}

cluster_init 3 || exit 1
node_boot 1 2 3 || exit 1
for i in 1 2 3; do node_run "$i" $START || { bad "node$i: imexd did not start"; exit 1; }; done
node_run 1 "setsid $B tcp-server $PORT $SIZE > \$IMEX_VM_OUT/tcp-server.log 2>&1 < /dev/null &"
# The domain the restart, import and memory figures use (channel 7 on all).
node_run 1 $I domain create bench --nodes "$NODES" --channel 7 --timeout 60 ||
	{ bad "creating the domain 'bench' failed"; exit 1; }

share=0
if [ -x "$SHARE" ]; then
	node_run 1 "setsid $SHARE -c 7 export --hold --handle-file \$IMEX_VM_OUT/handle > \$IMEX_VM_OUT/export.log 2>&1 < /dev/null &"
	handle=$(node_run 1 "for i in \$(seq 100); do [ -s \$IMEX_VM_OUT/handle ] && break; sleep 0.1; done; head -n 1 \$IMEX_VM_OUT/handle")
	[ -n "$handle" ] && share=1 || bad "imex-share export gave no handle"
else
	emit "skip import_latency imex-share not built"
	emit "skip import_throughput imex-share not built"
fi

for r in $(seq "$reps"); do
	out=$(node_run 2 "$B tcp-client 192.0.2.1 $PORT $SIZE 1 $RTT_COUNT") || bad "tcp rtt: $out"
	rtt=$(value rtt_us "$out")
	out=$(node_run 2 "$B tcp-client 192.0.2.1 $PORT $SIZE 16 $TPUT_COUNT") || bad "tcp 16 clients: $out"
	per_s=$(value per_s "$out")
	echo "# repetition $r: TCP RTT $rtt us, $per_s req/s with 16 clients"
	[ -n "$rtt" ] && [ -n "$per_s" ] || { bad "no TCP baseline in repetition $r"; continue; }

	if want raft_fsync imexctl_noop domain_create domain_create_net domain_create_net_fs daemon_restart; then
		# One durable append where imexd keeps its raft log (the state
		# directory: in these VMs on the out share, so the host's disk): a
		# create waits for two of them in a row, the leader's (before it
		# sends the entry) and then a follower's (before it answers).
		out=$(node_run 1 "$B fsync \$IMEX_VM_OUT/state 50") || bad "fsync: $out"
		fs=$(value fsync_us "$out")
		[ -z "$fs" ] || emit "sample raft_fsync $fs $rtt"

		# A no-op imexctl call (start, netlink, exit): under emulation most
		# of a command's time; shown on its own and taken off the create.
		out=$(node_run 1 "$B elapsed $I node show") || bad "imexctl node show: $out"
		noop=$(value elapsed_us "$out")
		[ -z "$noop" ] || emit "sample imexctl_noop $noop $rtt"

		# domain create, end to end: the CLI asks, the request goes to the
		# raft leader, a majority stores it, every member's kernel takes it,
		# the CLI returns once the domain is READY.  A distributed change
		# cannot beat its rounds of messages, so the TCP RTT between the same
		# VMs is its unit: the ratio counts RTTs (fsyncs included).
		out=$(node_run 1 "$B elapsed $I domain create c$r --nodes $NODES --channels 1 --timeout 60") ||
			bad "create c$r: $out"
		us=$(value elapsed_us "$out")
		[ -z "$us" ] || emit "sample domain_create $us $rtt"
		node_run 1 $I domain delete "c$r" --timeout 60 > /dev/null || bad "delete c$r"
		# The same create timed inside one process, from the request handed
		# to the kernel to READY: the command less imexctl's start and exit.
		# (The command's time less the no-op call's, two process timings
		# taken apart, swings by more than the create itself under load.)
		out=$(node_run 1 "$B create n$r node1,node2,node3 60") || bad "create n$r: $out"
		net=$(value create_us "$out")
		[ -z "$net" ] || emit "sample domain_create_net $net $rtt"
		[ -z "$net" ] || [ -z "$fs" ] ||
			emit "sample domain_create_net_fs $(echo "$net - 2 * $fs" | bc) $rtt"
		node_run 1 $I domain delete "n$r" --timeout 60 > /dev/null || bad "delete n$r"

		# Daemon restart: stop node2's imexd (kernel state stays), start it
		# again; time from its attachment to 'bench' READY on node2.
		node_run 2 $N stop > /dev/null || bad "node2: stopping imexd"
		out=$(node_run 2 "$B up-ready bench 0 60 > \$IMEX_VM_OUT/up-ready.txt 2>&1 & w=\$!; $START || exit 1; wait \$w; cat \$IMEX_VM_OUT/up-ready.txt") ||
			bad "node2 restart: $out"
		us=$(value up_ready_us "$out")
		[ -z "$us" ] || emit "sample daemon_restart $us $rtt"
	fi

	# One import from node2 of node1's export: an upcall to node2's
	# daemon, one exchange with node1's daemon and kernel, and back; the
	# TCP exchange of the same size is the floor of that path.
	if [ "$share" = 1 ] && want import_latency import_throughput; then
		out=$(node_run 2 "$SHARE -c 7 import $handle --repeat 200") || bad "import: $out"
		us=$(printf '%s\n' "$out" | sed -n 's/.* \([0-9.][0-9.]*\) us\/import.*/\1/p' | tail -n 1)
		ok_imports "$out" || us=""
		[ -z "$us" ] || emit "sample import_latency $us $rtt"
		out=$(node_run 2 "$SHARE -c 7 import $handle --repeat 100 --threads 16") || bad "import x16: $out"
		ps=$(printf '%s\n' "$out" | sed -n 's/.*[^0-9.]\([0-9.][0-9.]*\) *imports\/s.*/\1/p' | tail -n 1)
		ok_imports "$out" || ps=""
		[ -z "$ps" ] || emit "sample import_throughput $ps $per_s"
	fi

	# imexd's resident memory on the coordinator, domain READY.
	kib=$(node_run 1 "awk '/^VmRSS:/ { print \$2 }' /proc/\$(cat \$IMEX_VM_OUT/node/imexd.pid)/status")
	[ -n "$kib" ] && emit "sample imexd_rss $kib 0" || bad "no imexd RSS"
done
for i in 1 2 3; do
	echo "# node$i imexd RSS: $(node_run "$i" "grep VmRSS /proc/\$(cat \$IMEX_VM_OUT/node/imexd.pid)/status")"
done
cluster_fini
exit "$failed"
