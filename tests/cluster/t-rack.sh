#!/bin/bash
# The rack tier (issue 16): 18 VMs on one switch, every one in NODES_FILE,
# so the Raft group is all 18: imexd picks 5 voters, the rest standbys.
#   a. one domain over all 18 nodes, READY on every node;
#   b. four domains over overlapping node sets, created at the same moment
#      from four different nodes: all READY, and on every node the
#      channels of the domains it is in are disjoint;
#   c. the leader and one other voter powered off at once: the rest keep a
#      majority, standbys are promoted until 'imexctl node list' shows 5
#      voters again, neither dead node among them; a create still succeeds;
#   d. a member of a running 8-node domain powered off while the seven
#      survivors hold channel fds and one survivor imports another's
#      export; 'domain replace' onto a spare: READY again on all 8, each
#      held fd itself still answers (taken from its holder), the import was
#      not revoked and a new one works, and the spare opens the channel.
# Timings are printed as '# ... took X s'.  Bench rows (bench/report.c):
#   tests/cluster/t-rack.sh [--bench RAW [REPS]]
# appends create -> READY for 3, 6, 12 and 18 members, replace -> READY
# (both against the TCP RTT between two nodes, measured in the same run)
# and the leader's imexd RSS to RAW, REPS repetitions (default 3); the
# tier alone measures each once and prints the figures.
cd "$(dirname "$0")/../.." || exit 2
# Guest memory: 192 MiB boots and runs (an idle node uses ~35 MiB);
# 256 leaves room.
CLUSTER_MEM=${CLUSTER_MEM:-256}
# qemu's translation cache defaults to 1 GiB a VM and fills as the
# guests run: 18 of them would take most of the host's memory.
export IMEX_VM_TB_MB=${IMEX_VM_TB_MB:-128}
# 18 nodes stay up for the whole tier.
CLUSTER_VM_TIMEOUT=${CLUSTER_VM_TIMEOUT:-3600}
. tests/cluster/cluster.sh
raw="" reps=1
if [ "${1:-}" = --bench ]; then
	raw=$2 reps=${3:-3}
	[ -n "$raw" ] || { echo "usage: t-rack.sh [--bench RAW [REPS]]" >&2; exit 2; }
fi
I=tools/imexctl/imexctl
N="sh tests/cluster/node.sh"
S="sh tests/cluster/share.sh"
B=bench/imex-bench
# Every create and replace is paired with a round trip it measures.
[ -x "$B" ] || { echo "t-rack: $B is missing: run 'make check-rack', which builds it" >&2; exit 2; }
RACK_N=18
VOTERS=5
# Under emulation 18 guests share 2 host CPUs (a load of 20 and more):
# heartbeats every second, ten missed before a peer counts as lost; with
# five, members flapped to DEGRADED under load alone.  imexd logs as
# deployed (info): at debug every action is a synchronous write to the
# 9p share.
CONF="LOG_LEVEL=info HEARTBEAT_INTERVAL_MS=1000 HEARTBEAT_MISS_COUNT=10"
NODE_RUN_TIMEOUT=$((300 * ${IMEX_VM_TIMEOUT_SCALE:-1}))
W=$((120 * ${IMEX_VM_TIMEOUT_SCALE:-1}))	# a bound for a state to be reached

took() { echo "# $1 took $(echo "$(cluster_now) - $2" | bc) s"; }
names() { local i s=""; for i in "$@"; do s+=${s:+,}node$i; done; echo "$s"; }
emit() { [ -z "$raw" ] || echo "$*" >> "$raw"; }
# value KEY TEXT: the number after KEY in TEXT.
value() { printf '%s\n' "$2" | sed -n "s/^$1 \([0-9.]*\)$/\1/p" | tail -n 1; }
# ready_on SECS NAME I...: NAME READY on every node I (in parallel).
ready_on() {
	local secs=$1 name=$2 i pids=() bad=""
	shift 2
	for i in "$@"; do
		node_run "$i" $N wait-state "$name" ready "$secs" > /dev/null &
		pids+=($!)
	done
	for i in "$@"; do
		wait "${pids[0]}" || bad+=" node$i"
		pids=("${pids[@]:1}")
	done
	[ -z "$bad" ] || { echo "# $name not READY on:$bad"; return 1; }
}
# run_all CMD I...: CMD (node.sh) on every node I in parallel; all succeed.
run_all() {
	local cmd=$1 i pids=() bad=""
	shift
	for i in "$@"; do
		node_run "$i" "$cmd" > "$cluster_dir/n$i/run_all.out" 2>&1 &
		pids+=($!)
	done
	for i in "$@"; do
		wait "${pids[0]}" || { bad+=" node$i"; cat "$cluster_dir/n$i/run_all.out"; }
		pids=("${pids[@]:1}")
	done
	[ -z "$bad" ] || { echo "# '$cmd' failed on:$bad"; return 1; }
}
voters_of() { # I: the voters node I lists, one a line
	node_run "$1" "$I node list --state-dir \$IMEX_VM_OUT/state" |
		awk 'f && $3 == "voter" { print $1 } /^NAME/ { f = 1 }'
}
leader_of() { # I: the leader node I lists
	node_run "$1" "$I node list --state-dir \$IMEX_VM_OUT/state" |
		awk 'f && $4 == "yes" { print $1 } /^NAME/ { f = 1 }'
}
rss_of() { # I: imexd's VmRSS on node I, KiB
	node_run "$1" "awk '/^VmRSS:/ { print \$2 }' /proc/\$(cat \$IMEX_VM_OUT/node/imexd.pid)/status"
}

ALL=$(seq 1 $RACK_N)
tier0=$(cluster_now)
cluster_init $RACK_N || exit 1
t0=$(cluster_now)
node_boot $ALL || { t_fail "boot of $RACK_N nodes"; t_done; exit 1; }
took "boot of $RACK_N nodes ($CLUSTER_MEM MiB each)" "$t0"
t0=$(cluster_now)
t_check "imexd attached on all $RACK_N nodes" run_all "$N start $CONF" $ALL
took "imexd start on $RACK_N nodes" "$t0"
t0=$(cluster_now)
t_check "node1: node list shows $VOTERS voters" node_run 1 $N voters $VOTERS $W
took "the group's $VOTERS voters chosen" "$t0"
echo "# host: $(cut -d' ' -f1-3 /proc/loadavg) load, $(free -m | awk '/^Mem:/ { print $3 }') MiB used"

# --- a. one domain over all 18 ---------------------------------------------
t0=$(cluster_now)
t_check "create rack over all $RACK_N nodes (from node1)" \
	node_run 1 $I domain create rack --nodes "$(names $ALL)" --channels 1 --timeout $W
took "create -> READY over $RACK_N nodes (imexctl)" "$t0"
t_check "rack READY on every node" ready_on 60 rack $ALL

# --- b. four concurrent domains over overlapping sets ----------------------
SET_A=$(seq 1 9)
SET_B=$(seq 5 13)
SET_C=$(seq 10 18)
SET_D=$(seq 1 2 17)
t0=$(cluster_now)
pids=()
j=0
for d in A B C D; do
	set_var=SET_$d
	from=$(( (j * 5) % RACK_N + 2 ))	# nodes 2, 7, 12 and 17
	node_run $from $I domain create "job$d" --nodes "$(names ${!set_var})" \
		--channels 2 --timeout $W > "$cluster_dir/job$d.out" 2>&1 &
	pids+=($!)
	j=$((j + 1))
done
j=0
for d in A B C D; do
	wait "${pids[$j]}"
	rc=$?
	cat "$cluster_dir/job$d.out"
	[ $rc = 0 ] && t_ok "create job$d (at once with three others)" ||
		t_fail "create job$d: rc $rc"
	j=$((j + 1))
done
took "four concurrent creates -> READY" "$t0"
for d in A B C D; do
	set_var=SET_$d
	# shellcheck disable=SC2086 # the sets are lists of numbers
	t_check "job$d READY on each of its nodes" ready_on 30 "job$d" ${!set_var}
done
dis_bad=""
pids=()
for i in $ALL; do
	doms="rack"
	for d in A B C D; do
		set_var=SET_$d
		echo " ${!set_var//$'\n'/ } " | grep -q " $i " && doms+=" job$d"
	done
	node_run "$i" $N channels-disjoint $doms > "$cluster_dir/n$i/disjoint" 2>&1 &
	pids+=($!)
done
for i in $ALL; do
	wait "${pids[0]}" || { dis_bad+=" node$i"; cat "$cluster_dir/n$i/disjoint"; }
	pids=("${pids[@]:1}")
done
[ -z "$dis_bad" ] && t_ok "every node: its domains' channels are disjoint" ||
	t_fail "channels shared between domains on:$dis_bad"
node_run 5 $N channels-disjoint rack jobA jobB jobD

# --- bench: create -> READY against N, the RTT, the leader's RSS ----------
# The RTT: node RTT_C asks node RTT_S (both moved to live nodes in c).
RTT_S=1 RTT_C=2
rtt_server() {
	node_run "$RTT_S" "setsid $B tcp-server 7900 300 > \$IMEX_VM_OUT/tcp-server.log 2>&1 < /dev/null &"
}
rtt_server
# tcp_rtt: the TCP request/response time between the two now, in us.  The
# load of 18 guests drifts by tenfold within a minute: each create is
# paired with an RTT taken just before it.
tcp_rtt() {
	local out
	out=$(node_run "$RTT_C" "$B tcp-client 192.0.2.$RTT_S 7900 300 1 50") ||
		echo "# tcp rtt: $out" >&2
	value rtt_us "$out"
}
for r in $(seq "$reps"); do
	line="# repetition $r: create -> READY"
	t3=""
	for n in 3 6 12 18; do
		rtt=$(tcp_rtt)
		[ -n "$rtt" ] || { t_fail "no TCP RTT between node$RTT_C and node$RTT_S"; continue; }
		# shellcheck disable=SC2046 # the members' numbers
		out=$(node_run 1 "$B create b$n-$r $(names $(seq 1 $n)) $W") ||
			echo "# create b$n-$r: $out"
		us=$(value create_us "$out")
		[ -n "$us" ] || { t_fail "bench create over $n nodes"; continue; }
		emit "sample rack_create_$n $us $rtt"
		[ $n = 3 ] && t3=$us
		[ $n = 18 ] && [ -n "$t3" ] && emit "sample rack_create_18_over_3 $us $t3"
		line+=" N=$n $(echo "scale=1; $us / $rtt" | bc) RTT ($us us, RTT $rtt us)"
		node_run 1 $I domain delete "b$n-$r" --timeout $W > /dev/null ||
			t_fail "delete b$n-$r"
	done
	echo "$line"
done
lname=$(leader_of 1)
L=${lname#node}
kib=$(rss_of "$L")
echo "# imexd RSS on the leader ($lname; $RACK_N nodes, 5 domains up): $kib KiB (goal <= 8192)"
[ -n "$kib" ] && emit "sample rack_imexd_rss $kib 0"

# --- c. two voters off at once: the leader and one other -------------------
mapfile -t voters < <(voters_of 1)
lname=$(leader_of 1)
other=""
for v in "${voters[@]}"; do [ "$v" != "$lname" ] && { other=$v; break; }; done
echo "# voters: ${voters[*]}; leader $lname; powering off $lname and $other"
case "$lname $other" in
node*" "node*)
	K1=${lname#node} K2=${other#node}
	;;
*)
	t_fail "node1 knows no leader or second voter ('$lname' '$other')"
	t_done
	exit 1
	;;
esac
t0=$(cluster_now)
node_kill "$K1" "$K2"
LIVE=()
for i in $ALL; do [ "$i" != "$K1" ] && [ "$i" != "$K2" ] && LIVE+=("$i"); done
P=${LIVE[0]}
if [ "$RTT_S" = "$K1" ] || [ "$RTT_S" = "$K2" ] || [ "$RTT_C" = "$K1" ] || [ "$RTT_C" = "$K2" ]; then
	RTT_S=${LIVE[2]} RTT_C=${LIVE[3]}
	rtt_server
fi
t_check "node$P: $VOTERS voters again, neither node$K1 nor node$K2" \
	node_run "$P" $N voters $VOTERS $((2 * W)) "node$K1" "node$K2"
took "two voters off -> $VOTERS voters again" "$t0"
node_run "$P" "$I node list --state-dir \$IMEX_VM_OUT/state"
t0=$(cluster_now)
t_check "create after the loss (from node$P, over live nodes)" \
	node_run "$P" $I domain create after --nodes "$(names "${LIVE[@]:0:6}")" --channels 1 --timeout $W
took "create -> READY with two voters off" "$t0"

# --- d. replace a dead member of a running 8-node domain ------------------
MEM=("${LIVE[@]:0:8}")
SURV=("${MEM[@]:0:7}")
OLD=${MEM[7]}
SPARE=${LIVE[8]}
EX=${SURV[0]} IM=${SURV[1]}
CH=100
echo "# rep: members $(names "${MEM[@]}"); node$OLD is powered off and replaced by node$SPARE"
t_check "create rep (8 members, channel $CH)" \
	node_run "$EX" $I domain create rep --nodes "$(names "${MEM[@]}")" --channel $CH --timeout $W
t_check "rep READY on all 8" ready_on 30 rep "${MEM[@]}"
t_check "the seven survivors hold channel $CH open" run_all "$N hold $CH 60" "${SURV[@]}"
H=$(node_run "$EX" $S export erep $CH --desc rep-mem) &&
	t_ok "node$EX: export on channel $CH: $H" || t_fail "node$EX: export: $H"
t_check "node$IM: holds an import of node$EX's export" \
	node_run "$IM" $S import-bg irep $CH "$H" --wait-revoke 3600
t_check "the survivors' held fds answer before" run_all "$N check-held $CH rep" "${SURV[@]}"
t0=$(cluster_now)
node_kill "$OLD"
t_check "node$EX: rep DEGRADED" node_run "$EX" $N wait-state rep degraded $W
took "member off -> DEGRADED" "$t0"
rtt=$(tcp_rtt)
t0=$(cluster_now)
out=$(node_run "$EX" "$B elapsed $I domain replace rep node$OLD node$SPARE --timeout $W")
rc=$?
echo "$out"
[ $rc = 0 ] && t_ok "replace node$OLD by node$SPARE in rep" || t_fail "replace: rc $rc"
took "domain replace (imexctl, returns at READY)" "$t0"
us=$(value elapsed_us "$out")
[ -n "$us" ] && [ -n "${rtt:-}" ] && {
	emit "sample rack_replace $us $rtt"
	echo "# replace -> READY: $us us = $(echo "scale=1; $us / $rtt" | bc) RTT (RTT $rtt us)"
}
NEWMEM=("${SURV[@]}" "$SPARE")
t_check "rep READY on all 8 after the replace" ready_on 30 rep "${NEWMEM[@]}"
t_check "node$EX: rep lists node$SPARE, not node$OLD" \
	node_run "$EX" "$I --json domain show rep | grep -q '\"node$SPARE\"' &&
		! $I --json domain show rep | grep -q '\"node$OLD\"'"
t_check "the seven survivors' held fds still answer (never revoked)" \
	run_all "$N check-held $CH rep" "${SURV[@]}"
t_check "node$IM: the import of node$EX's export is still held (not revoked)" \
	node_run "$IM" $S running irep
t_check "node$IM: a new import of node$EX's export works" \
	node_run "$IM" tools/imex-share/imex-share -c $CH import "$H" --expect ok
t_check "node$SPARE: opens channel $CH of rep" \
	node_run "$SPARE" "tests/kmod/chanopen /dev/imex-channels/channel$CH info | grep -q '^info domain=rep channel=$CH '"
t_check "node$IM: no revocation line from the held import" \
	node_run "$IM" "! grep -q revoked \$IMEX_VM_OUT/share/irep.out"

# Further replace samples (bench): the spare and another live node swap.
cur=$SPARE alt=${LIVE[9]}
for r in $(seq 2 "$reps"); do
	rtt=$(tcp_rtt)
	out=$(node_run "$EX" "$B elapsed $I domain replace rep node$cur node$alt --timeout $W") ||
		{ t_fail "replace node$cur by node$alt: $out"; break; }
	us=$(value elapsed_us "$out")
	[ -z "$us" ] || emit "sample rack_replace $us $rtt"
	t=$cur cur=$alt alt=$t
done

took "the rack tier (before the power-off)" "$tier0"
t_done
