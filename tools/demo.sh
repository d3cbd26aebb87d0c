#!/bin/bash
# make demo: three VMs (Debian's kernel under QEMU) on one virtual switch,
# each with imex.ko and imexd, walk through an IMEX domain's life.  Every
# step says what it does, shows it, and checks it: the demo exits 1 at the
# first step that does not do what it says (the nodes' logs are kept in
# build/demo/), 130 when interrupted, 2 when something it needs is missing.
# The VMs, the switch and the temporary directory go away in every case.
#
# Nodes are driven through tests/cluster/cluster.sh (the cluster tests'
# harness); commands shown as "nodeI# ..." run as root in node I.
cd "$(dirname "$0")/.." || exit 2
repo=$(pwd -P)

NODES="node1=192.0.2.1,node2=192.0.2.2,node3=192.0.2.3"
DOMAIN=demo
NODE_SH="sh tests/cluster/node.sh"
SHARE=tools/imex-share/imex-share
HANDLE_RE='^[0-9A-Fa-f-]{36}:[0-9]+$'
# Bounds: generous for a loaded 2-core machine; a step past one fails.
CREATE_TIMEOUT=60 DEGRADED_TIMEOUT=20 READY_TIMEOUT=90

t_start=$(date +%s.%N)
step_no=0 step_title="" ticker="" status=0 interrupted=0
runs=()

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
step() {
	step_no=$((step_no + 1)) step_title=$1
	printf '\n[%5ss] %d. %s\n' "$(since "$t_start")" "$step_no" "$1"
}
say() { printf '    %s\n' "$*"; }
indent() { sed 's/^/      /'; }
fail() {
	printf '    FAILED: %s\n' "$*"
	status=1
	exit 1
}

# progress_start WHAT [NODE...]: while a long wait runs in the foreground,
# print every 5 s how long it has taken, and which of the NODEs being
# booted are up (one line rewritten in place on a terminal, a line each
# time otherwise).
progress_start() {
	local what=$1
	shift
	(
		s=$(date +%s)
		while sleep 5; do
			line=$(printf '      ... %s: %ds%s' "$what" $(($(date +%s) - s)) "$(booting_status "$@")")
			if [ -t 1 ]; then printf '\r\033[K%s' "$line"; else printf '%s\n' "$line"; fi
		done
	) &
	ticker=$!
}
progress_stop() {
	[ -n "$ticker" ] || return 0
	kill "$ticker" 2>/dev/null
	wait "$ticker" 2>/dev/null
	ticker=""
	[ -t 1 ] && printf '\r\033[K'
	return 0
}

# on [--wait WHAT] I CMD: show CMD, run it in node I (with progress lines
# while it runs, given --wait), show its output indented and keep it in
# $on_out; return its status.
on() {
	local what="" i rc
	[ "$1" != --wait ] || { what=$2; shift 2; }
	i=$1
	shift
	printf '    node%s# %s\n' "$i" "$*"
	[ -z "$what" ] || progress_start "$what"
	on_out=$(node_run "$i" "$*" 2>&1)
	rc=$?
	progress_stop
	[ -z "$on_out" ] || printf '%s\n' "$on_out" | indent
	return $rc
}

# wait_until SECS CMD...: bounded wait for CMD to succeed (host side).
wait_until() {
	local end
	end=$(awk -v n="$(now)" -v s="$1" 'BEGIN { printf "%d", n + s }')
	shift
	until "$@" 2> /dev/null; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# quiet I CMD: run CMD in node I for a check; its output goes to $qout.
quiet() {
	local i=$1
	shift
	qout=$(node_run "$i" "$*" 2>&1)
}

# quiet_all CMD: run CMD in node1, node2 and node3 at once; node I's
# output goes to ${qouts[I]}, its status to ${qrcs[I]}.
quiet_all() {
	local i
	for i in 1 2 3; do
		node_run "$i" "$*" > "$cluster_dir/n$i/q.out" 2>&1 &
		runs[i]=$!
	done
	for i in 1 2 3; do
		wait "${runs[i]}"
		qrcs[i]=$?
		unset "runs[i]"
		qouts[i]=$(cat "$cluster_dir/n$i/q.out")
	done
}

booting_status() {
	local i s=""
	for i in "$@"; do
		if [ -e "$cluster_dir/n$i/rpc/ready" ]; then s+=" node$i:up"; else s+=" node$i:booting"; fi
	done
	echo "$s"
}

# boot I...: boot nodes, with progress, and wait for their agents.
boot() {
	local t0 rc
	t0=$(now)
	progress_start "booting" "$@"
	node_boot "$@"
	rc=$?
	progress_stop
	[ $rc = 0 ] || fail "VM boot failed (see above)"
	say "booted $(printf 'node%s ' "$@")in $(since "$t0") s"
}

# Keep the logs of a failed run: the temporary directory goes away.
save_logs() {
	local dest i f
	dest=$repo/build/demo/failed-$(date +%Y%m%d-%H%M%S)
	mkdir -p "$dest" || return
	for i in 1 2 3; do
		for f in run.log console.log test.log dmesg.txt imexd.log share.log; do
			[ ! -f "$cluster_dir/n$i/$f" ] || cp "$cluster_dir/n$i/$f" "$dest/node$i-$f"
		done
	done
	echo "demo: logs of every node kept in $dest"
}

# Stop every VM still up: a clean power-off through its agent, bounded,
# then a hard one.  A VM still booting has no agent yet: it is stopped at
# once.
stop_all() {
	local i pid k end
	for i in "${!node_pid[@]}"; do
		if [ -e "$cluster_dir/n$i/rpc/ready" ]; then
			k=$(cat "$cluster_dir/n$i/k")
			echo exit > "$cluster_dir/n$i/rpc/cmd.$k.tmp" &&
				mv "$cluster_dir/n$i/rpc/cmd.$k.tmp" "$cluster_dir/n$i/rpc/cmd.$k"
		else
			hard_stop "$i"
		fi
	done
	end=$(($(date +%s) + 30))
	for i in "${!node_pid[@]}"; do
		pid=${node_pid[$i]}
		while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do sleep 0.1; done
		if kill -0 "$pid" 2>/dev/null; then
			echo "demo: node$i did not power off in 30 s; stopping its VM"
			hard_stop "$i"
		else
			wait "$pid" 2>/dev/null
			unset "node_pid[$i]"
		fi
	done
}

# hard_stop I: kill node I's qemu, and its tests/vm/run.sh (which stops
# the qemu it may have started by then).
hard_stop() {
	[ ! -s "$cluster_dir/n$1/qemu.pid" ] || kill -9 "$(cat "$cluster_dir/n$1/qemu.pid")" 2> /dev/null
	kill -TERM "${node_pid[$1]}" 2> /dev/null
	wait "${node_pid[$1]}" 2> /dev/null
	unset "node_pid[$1]"
}

cleanup() {
	local rc=$?
	[ "$status" != 0 ] || status=$rc
	[ "$interrupted" = 0 ] || status=130
	trap - EXIT INT TERM HUP
	progress_stop
	# node_run calls of an interrupted quiet_all: they would poll on.
	for pid in "${runs[@]}"; do kill "$pid" 2> /dev/null; done
	[ "$step_no" != 0 ] || exit "$status"
	if [ -n "${cluster_dir:-}" ] && [ -d "$cluster_dir" ]; then
		if [ "$status" != 0 ]; then
			echo
			echo "demo: stopping the VMs..."
			stop_all
			[ "$interrupted" = 1 ] || save_logs
		fi
		[ ! -f "$cluster_dir/switch.pid" ] || kill "$(cat "$cluster_dir/switch.pid")" 2>/dev/null
		rm -rf "$cluster_dir"
	fi
	echo
	if [ "$status" = 0 ]; then
		echo "demo: all $step_no steps passed in $(since "$t_start") s"
	elif [ "$interrupted" = 1 ]; then
		echo "demo: interrupted during step $step_no ($step_title) after $(since "$t_start") s; everything was stopped"
	else
		echo "demo: FAILED at step $step_no ($step_title) after $(since "$t_start") s"
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'interrupted=1; exit 130' INT TERM HUP

# What the demo needs, before it starts anything.
for f in kmod/imex.ko imexd/imexd tools/imexctl/imexctl "$SHARE" tests/kmod/imex-nl tests/kmod/chanopen; do
	[ -e "$f" ] || { echo "demo: $f is missing: run 'make all' (or 'make demo', which builds first)"; exit 2; }
done
for c in vde_switch qemu-system-x86_64 podman busybox; do
	command -v "$c" > /dev/null || { echo "demo: $c not found: run 'make deps' (tools/install-deps.sh)"; exit 2; }
done

. tests/cluster/cluster.sh
echo "imex demo: 3 VMs, one IMEX domain, channels in a container, a shared handle, a node lost and back"

step "Boot 3 VMs on one virtual switch; imex.ko loaded with the fabric identity"
cluster_init 3 || fail "cannot set up the cluster directory and switch"
trap cleanup EXIT
say "switch: vde_switch at $cluster_dir/switch; node1..3 at 192.0.2.1..3"
say "module: modprobe imex $CLUSTER_FABRIC (on each node)"
boot 1 2 3
fabric=${CLUSTER_FABRIC#fabric_uuid=}
fabric="${fabric%% *} partition ${CLUSTER_FABRIC##*=}"
quiet_all "imexctl node show"
for i in 1 2 3; do
	[ "${qrcs[i]}" = 0 ] || fail "node$i: imexctl node show: ${qouts[i]}"
	f=$(printf '%s\n' "${qouts[i]}" | sed -n 's/^fabric: *//p')
	say "node$i: fabric $f"
	[ "$f" = "$fabric" ] || fail "node$i has fabric '$f', expected '$fabric'"
done
on 1 imexctl node show || fail "imexctl node show"

step "Start imexd on each node (no systemd in the VMs: the cluster tests' way)"
t0=$(now)
# imexd's default timing (the cluster tests use a faster one): a member is
# lost after 3 missed heartbeats, 1 s apart.
START="$NODE_SH start HEARTBEAT_INTERVAL_MS=1000 HEARTBEAT_MISS_COUNT=3"
say "each node runs: $START"
say "(imexd -f with that configuration; returns once imexd is the module's manager)"
progress_start "starting imexd"
quiet_all "$START && imexctl node show"
progress_stop
for i in 1 2 3; do
	[ "${qrcs[i]}" = 0 ] || fail "node$i: imexd did not attach: ${qouts[i]}"
	say "node$i: $(printf '%s\n' "${qouts[i]}" | grep '^imexd:' | tr -s ' ')"
done
say "all attached in $(since "$t0") s"

step "Create domain '$DOMAIN' from node1 over all 3 nodes, 4 channels"
t0=$(now)
on --wait "waiting for READY on every member" 1 imexctl domain create "$DOMAIN" \
	--nodes "$NODES" --channels 4 --timeout "$CREATE_TIMEOUT" ||
	fail "domain create failed"
say "create returned (READY on every member) in $(since "$t0") s"
quiet_all "imexctl domain wait $DOMAIN --timeout 10 > /dev/null && ls /dev/imex-channels"
for i in 1 2 3; do
	[ "${qrcs[i]}" = 0 ] || fail "node$i: $DOMAIN not READY or no channel devices: ${qouts[i]}"
	chans=$(printf '%s\n' "${qouts[i]}" | paste -sd ' ')
	say "node$i: READY, /dev/imex-channels: $chans"
	[ "$chans" = "channel0 channel1 channel2 channel3" ] ||
		fail "node$i: expected channel0..channel3"
done

step "Show the domain: members and connectivity matrix"
on 1 imexctl domain show "$DOMAIN" || fail "domain show"
quiet_all "$NODE_SH matrix-connected $DOMAIN"
for i in 1 2 3; do
	[ "${qrcs[i]}" = 0 ] || fail "node$i: the matrix is not all-connected: ${qouts[i]}"
done
say "every node sees every other (checked on node1, node2 and node3)"

step "A container on node2 gets channel2 through CDI and podman"
on 2 imexctl cdi generate --domain "$DOMAIN" --channel 2 --id demo-job || fail "cdi generate"
# A busybox root file system, in node2's share (the host's busybox is static).
mkdir -p "$cluster_dir/n2/rootfs/bin"
cp "$(command -v busybox)" "$cluster_dir/n2/rootfs/bin/busybox"
for a in sh ls; do ln -sf busybox "$cluster_dir/n2/rootfs/bin/$a"; done
t0=$(now)
on --wait "podman run" 2 podman run --rm --network none --device imex.dev/channel=channel2 \
	--rootfs /run/imex-vm/out/rootfs /bin/sh -c \
	"'ls -l /dev/imex-channels && exec 3</dev/imex-channels/channel2 && echo opened /dev/imex-channels/channel2'" ||
	fail "podman run failed"
printf '%s\n' "$on_out" | grep -q '^opened /dev/imex-channels/channel2$' ||
	fail "the container could not open channel2"
n=$(printf '%s\n' "$on_out" | grep -c ' channel[0-9]*$')
[ "$n" = 1 ] || fail "the container sees $n channel devices, expected only channel2"
say "the container holds exactly channel2 (podman run took $(since "$t0") s)"
on 2 imexctl cdi remove --id demo-job || fail "cdi remove"

step "Export on node1 (channel0), import on node3 (channel0 ok, channel1 EPERM)"
o=/run/imex-vm/out
on 1 "setsid $SHARE -c 0 export --desc 'demo buffer' --hold --handle-file $o/handle \
> $o/share.log 2>&1 < /dev/null & echo \$! > $o/share.pid" || fail "cannot start the exporter"
# The exporter writes the handle file once the export exists.
wait_until 20 grep -Eq "$HANDLE_RE" "$cluster_dir/n1/handle" ||
	fail "no handle from the exporter after 20 s: $(cat "$cluster_dir/n1/share.log")"
h=$(grep -Em1 "$HANDLE_RE" "$cluster_dir/n1/handle")
say "exporter (pid $(cat "$cluster_dir/n1/share.pid"), holding the export) printed:"
indent < "$cluster_dir/n1/share.log"
on 3 "$SHARE" -c 0 import "$h" --expect ok || fail "the import through channel0 was not accepted"
on 3 "$SHARE" -c 1 import "$h" --expect EPERM ||
	fail "the import through channel1 was not refused with EPERM"
quiet 1 "p=\$(cat $o/share.pid); kill -TERM \$p && timeout 10 sh -c \"while kill -0 \$p; do sleep 0.1; done\" 2>/dev/null" ||
	fail "the exporter did not exit on SIGTERM: $qout"
say "exporter stopped (SIGTERM)"

step "Power node3 off: the domain goes DEGRADED; boot it again: READY"
t0=$(now)
node_kill 3
say "node3 powered off (its VM killed: no clean shutdown)"
# 'imexctl domain wait --state degraded' also accepts READY: wait for the
# state itself.
on 1 "$NODE_SH wait-state $DOMAIN degraded $DEGRADED_TIMEOUT" ||
	fail "$DOMAIN did not go DEGRADED on node1 in ${DEGRADED_TIMEOUT}s"
say "DEGRADED on node1 $(since "$t0") s after node3 went away"
on 1 imexctl domain show "$DOMAIN" || fail "domain show"
t0=$(now)
boot 3
t1=$(now)
on --wait "starting imexd" 3 "$START" || fail "node3: imexd did not attach"
on --wait "waiting for READY" 3 imexctl domain wait "$DOMAIN" --timeout "$READY_TIMEOUT" ||
	fail "node3: $DOMAIN not READY after its reboot"
on 1 imexctl domain wait "$DOMAIN" --timeout "$READY_TIMEOUT" || fail "node1: $DOMAIN not READY again"
say "READY again on node1 and node3 $(since "$t1") s after node3 was up ($(since "$t0") s with its boot)"

step "Shut down: delete the domain, stop imexd, unload imex.ko, power off"
on 1 imexctl domain delete "$DOMAIN" || fail "domain delete"
quiet_all "$NODE_SH stop && modprobe -r imex && ! grep -q '^imex ' /proc/modules"
for i in 1 2 3; do
	[ "${qrcs[i]}" = 0 ] || fail "node$i: stopping imexd or unloading imex.ko failed: ${qouts[i]}"
	say "node$i: imexd stopped, imex.ko unloaded"
done
t0=$(now)
for i in 1 2 3; do
	node_halt "$i" ||
		fail "node$i's VM reported a problem at power-off (status $?; its logs are kept, see below)"
done
say "VMs powered off in $(since "$t0") s"
kill "$(cat "$cluster_dir/switch.pid")" 2>/dev/null
rm -rf "$cluster_dir"
say "switch stopped, $cluster_dir removed"
