# Host-side library for cluster tests (bash): several VMs, each with its own
# kernel, imex.ko and daemon, on one vde_switch (a local unix socket: no
# host networking).  Node I is "nodeI" at 192.0.2.I.  Commands run in a
# node through its agent (tests/cluster/agent.sh) over the node's out
# share; a node keeps its out directory, and so its imexd state directory,
# across power cycles.
#
#   cluster_init N          switch + per-node directories
#   node_boot I...          boot nodes (in parallel) and wait for their
#                           agents (one bound for all: NODE_BOOT_TIMEOUT
#                           plus a quarter of it for each further node)
#   node_run I CMD          run CMD (sh -c) in node I; prints its output,
#                           returns its status; bounded by NODE_RUN_TIMEOUT
#   node_kill I...          power nodes off at once (SIGKILL of their qemu)
#   node_halt I             stop node I's agent: a clean power-off
#   cluster_fini            halt every node still up, stop the switch
#   t_ok/t_fail/t_done      as tests/vm/lib.sh, on the host

CLUSTER_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
CLUSTER_FABRIC="fabric_uuid=11111111-2222-3333-4444-555555555555 fabric_partition=7"
# A slow (debug) kernel stretches every bound, as in the guest (run.sh).
NODE_RUN_TIMEOUT=${NODE_RUN_TIMEOUT:-$((120 * ${IMEX_VM_TIMEOUT_SCALE:-1}))}
# A boot's bound, for one node; node_boot gives each further node booting
# at once a share of it (under emulation they share the host's CPUs).
NODE_BOOT_TIMEOUT=${NODE_BOOT_TIMEOUT:-$((120 * ${IMEX_VM_TIMEOUT_SCALE:-1}))}
# Guest memory (MiB) of each node.
CLUSTER_MEM=${CLUSTER_MEM:-512}
# A node's whole life, after which run.sh kills its VM (a hang's bound).
CLUSTER_VM_TIMEOUT=${CLUSTER_VM_TIMEOUT:-1800}
declare -A node_pid
t_passed=0 t_failed=0

cluster_now() { date +%s.%N; }

cluster_init() {
	cluster_n=$1
	cluster_dir=$(mktemp -d "${TMPDIR:-/tmp}/imex-cluster.XXXXXX")
	vde_switch -d -s "$cluster_dir/switch" -p "$cluster_dir/switch.pid" \
		> "$cluster_dir/switch.log" 2>&1 ||
		{ echo "cluster: vde_switch failed: $(cat "$cluster_dir/switch.log")" >&2; return 1; }
	# It creates its control socket after it has detached.
	_wait_file 5 "$cluster_dir/switch/ctl" ||
		{ echo "cluster: vde_switch did not start" >&2; return 1; }
	trap cluster_fini EXIT
	for i in $(seq 1 "$cluster_n"); do mkdir -p "$cluster_dir/n$i"; done
	# The NVLink domain's node list, in every node's out share (NODES_FILE).
	for i in $(seq 1 "$cluster_n"); do
		for j in $(seq 1 "$cluster_n"); do echo "node$j=192.0.2.$j"; done \
			> "$cluster_dir/n$i/nodes"
	done
}

# _wait_file SECS FILE: bounded wait for a file the guest writes.
_wait_file() {
	local end=$(( $(date +%s) + $1 ))
	while [ ! -e "$2" ]; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.05
	done
}

node_boot() {
	local i out end
	for i in "$@"; do
		out=$cluster_dir/n$i
		rm -rf "$out/rpc" "$out/qemu.pid"
		echo 1 > "$out/k"
		IMEX_VM_QEMU_ARGS="-pidfile $out/qemu.pid" \
		"$CLUSTER_REPO/tests/vm/run.sh" --quiet --timeout "$CLUSTER_VM_TIMEOUT" --mem "$CLUSTER_MEM" \
			--hostname "node$i" --vde "$cluster_dir/switch" --ip "192.0.2.$i/24" \
			--module-args "$CLUSTER_FABRIC" --out "$out" \
			-- sh tests/cluster/agent.sh > "$out/run.log" 2>&1 &
		node_pid[$i]=$!
	done
	end=$(( $(date +%s) + NODE_BOOT_TIMEOUT * ($# + 3) / 4 ))
	for i in "$@"; do
		out=$cluster_dir/n$i
		if ! _wait_file $((end - $(date +%s))) "$out/rpc/ready"; then
			echo "cluster: node$i did not come up: $(tail -5 "$out/run.log")" >&2
			return 1
		fi
	done
}

# The command counter lives in a file: node_run may run in a subshell (&).
node_run() {
	local i=$1 rpc=$cluster_dir/n$1/rpc k
	k=$(cat "$cluster_dir/n$i/k")
	echo $((k + 1)) > "$cluster_dir/n$i/k"
	shift
	printf '%s\n' "$*" > "$rpc/cmd.$k.tmp"
	mv "$rpc/cmd.$k.tmp" "$rpc/cmd.$k"
	if ! _wait_file "$NODE_RUN_TIMEOUT" "$rpc/rc.$k"; then
		echo "cluster: node$i: no answer in ${NODE_RUN_TIMEOUT}s to: $*" >&2
		return 124
	fi
	cat "$rpc/out.$k"
	return "$(cat "$rpc/rc.$k")"
}

node_kill() {
	local i
	for i in "$@"; do kill -9 "$(cat "$cluster_dir/n$i/qemu.pid")" 2>/dev/null; done
	for i in "$@"; do
		wait "${node_pid[$i]}" 2>/dev/null
		unset "node_pid[$i]"
	done
}

node_halt() {
	local k rpc=$cluster_dir/n$1/rpc
	k=$(cat "$cluster_dir/n$1/k")
	echo exit > "$rpc/cmd.$k.tmp" && mv "$rpc/cmd.$k.tmp" "$rpc/cmd.$k"
	wait "${node_pid[$1]}"
	local rc=$?
	unset "node_pid[$1]"
	return $rc
}

# Every node is told first and then waited for: the power-offs overlap.
cluster_fini() {
	local i k rpc rc
	for i in "${!node_pid[@]}"; do
		rpc=$cluster_dir/n$i/rpc
		k=$(cat "$cluster_dir/n$i/k")
		echo exit > "$rpc/cmd.$k.tmp" && mv "$rpc/cmd.$k.tmp" "$rpc/cmd.$k"
	done
	for i in "${!node_pid[@]}"; do
		wait "${node_pid[$i]}"
		rc=$?
		unset "node_pid[$i]"
		[ $rc = 0 ] || echo "cluster: node$i ended with status $rc (see $cluster_dir/n$i/run.log)" >&2
	done
	[ -f "$cluster_dir/switch.pid" ] && kill "$(cat "$cluster_dir/switch.pid")" 2>/dev/null
	trap - EXIT
}

t_ok() { t_passed=$((t_passed + 1)); echo "ok $((t_passed + t_failed)) - $*"; }
t_fail() { t_failed=$((t_failed + 1)); echo "not ok $((t_passed + t_failed)) - $*"; }
t_check() { local d=$1; shift; if "$@"; then t_ok "$d"; else t_fail "$d"; fi; }
t_done() {
	cluster_fini
	echo "$t_passed passed, $t_failed failed"
	[ "$t_failed" -eq 0 ]
}
