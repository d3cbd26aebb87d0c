#!/bin/bash
# Issue 12, acceptance 2 on 5 VMs: the rack split 2|3 by blackhole routes
# inside the VMs.  The minority {node1,node2} cannot evict or create (each
# command fails within its timeout saying "no quorum"); the majority
# {node3,node4,node5} evicts node1 and node2 from the domain and creates
# another.  After healing every node agrees: the evicted nodes drop the
# domain from their kernels, the new domain is on its members only, and
# each kernel's definition is the same.  A node powered off while a domain
# naming it is deleted drops that domain when it boots and its imexd starts.
# Issue 16: 'domain replace' refuses a spare in another NVLink partition,
# one holding a channel of the domain for another domain, and one powered
# off, changing nothing; then swaps a powered-off member for a spare while
# a survivor holds the domain's channel open.
cd "$(dirname "$0")/../.." || exit 2
. tests/cluster/cluster.sh
I=tools/imexctl/imexctl
N="sh tests/cluster/node.sh"
ALL=node1,node2,node3,node4,node5
MAJ=node3,node4,node5
MIN="1 2"
MAJN="3 4 5"

phase_t0=$(cluster_now)
phase() { # report the time the phase that ends here took
	local t=$(cluster_now)
	echo "# $1 took $(echo "$t - $phase_t0" | bc) s"
	phase_t0=$t
}

# routes add|del: blackhole each side's view of the other.
routes() {
	local i j
	for i in $MIN; do for j in $MAJN; do
		node_run $i ip route "$1" blackhole "192.0.2.$j/32" || return 1
		node_run $j ip route "$1" blackhole "192.0.2.$i/32" || return 1
	done; done
}

# same_def NAME NODES...: the domain as each node's kernel holds it is one.
same_def() {
	local name=$1 i d first=
	shift
	for i in "$@"; do
		d=$(node_run $i $N def "$name") || return 1
		echo "# node$i: $name: $d"
		[ -z "$first" ] && first=$d
		[ "$d" = "$first" ] || return 1
	done
	[ "$first" != none ]
}

CLUSTER_FABRIC_UUID=$(echo "$CLUSTER_FABRIC" | sed -n 's/.*fabric_uuid=\([^ ]*\).*/\1/p')
cluster_init 5 || exit 1
node_boot 1 2 3 4 5 || exit 1
for i in 1 2 3 4 5; do t_check "node$i: imexd attached" node_run $i $N start; done
t_check "create big over all five" \
	node_run 1 $I domain create big --nodes $ALL --channels 2 --timeout 60
phase "boot, start, create"

t_check "partition {node1,node2} | {node3,node4,node5}" routes add
for i in 1 3; do
	t_check "node$i: big DEGRADED" node_run $i $N wait-state big degraded 10
done
phase "partition -> DEGRADED"

# The minority: every mutation fails within its timeout, saying why.
out=$(node_run 1 $I domain evict big node3 --timeout 20 2>&1)
rc=$?
echo "$out"
[ $rc != 0 ] && echo "$out" | grep -q "no quorum" &&
	t_ok "minority: evict fails with no quorum" || t_fail "minority evict: rc=$rc"
out=$(node_run 2 $I domain create minor --nodes node1,node2 --channels 1 --timeout 20 2>&1)
rc=$?
echo "$out"
[ $rc != 0 ] && echo "$out" | grep -q "no quorum" &&
	t_ok "minority: create fails with no quorum" || t_fail "minority create: rc=$rc"
phase "minority refused"

# The majority: evicts the other side and creates a domain of its own.
t_check "majority: evict node1" node_run 3 $I domain evict big node1 --timeout 30
t_check "majority: evict node2" node_run 4 $I domain evict big node2 --timeout 30
t_check "majority: big READY with node3-5" node_run 5 $N wait-state big ready 30
t_check "majority: create major" \
	node_run 5 $I domain create major --nodes $MAJ --channels 1 --timeout 30
phase "majority evict x2 + create"

t_check "heal" routes del
for i in $MIN; do
	t_check "node$i: big dropped from its kernel" node_run $i $N wait-state big gone 30
	t_check "node$i: minor never made, major not its" \
		node_run $i "$N def minor | grep -qx none && $N def major | grep -qx none"
done
t_check "big: one definition on node3-5" same_def big $MAJN
t_check "major: one definition on node3-5" same_def major $MAJN
phase "heal -> agreement"

# node5 powered off while major (which names it) is deleted: the others
# delete it; node5 boots with a fresh kernel and its imexd's log still
# naming major; once it has caught up (big READY) major is not there.
node_kill 5
t_check "delete major while node5 is off" node_run 3 $I domain delete major --timeout 30
node_boot 5 || exit 1
t_check "node5: imexd attached after boot" node_run 5 $N start
t_check "node5: big READY again" node_run 5 $N wait-state big ready 30
t_check "node5: major dropped" node_run 5 $N wait-state major gone 5
phase "power-off delete -> dropped on boot"

# refused NODE TEXT CMD...: CMD exits 1 on NODE saying TEXT; big unchanged.
refused() {
	local i=$1 text=$2 out rc
	shift 2
	out=$(node_run "$i" "$@" 2>&1)
	rc=$?
	echo "$out"
	[ "$rc" = 1 ] && echo "$out" | grep -qF -- "$text" &&
		[ "$(node_run 3 $N def big)" = "$def0" ]
}

# big is node3-5.  node2 moves to NVLink partition 8; node1 holds big's
# first channel in a domain of its own.
def0=$(node_run 3 $N def big)
ch=$(echo "$def0" | sed -n 's/.*channels=\([0-9]*\).*/\1/p')
t_check "big holds a channel ($ch)" test -n "$ch"
t_check "node3: holds big's channel $ch open" node_run 3 $N hold "$ch"
t_check "node2: moved to NVLink partition 8" node_run 2 \
	"$N stop && $I node set-fabric ${CLUSTER_FABRIC_UUID} 8 && $N start &&
	 $N log-wait 30 'fabric identity (partition 8)'"
t_check "replace refused: node2 is in another partition" \
	refused 3 "node 'node2' is in NVLink partition 8, domain 'big' in partition 7" \
	$I domain replace big node4 node2 --timeout 30
t_check "node1: other holds channel $ch" \
	node_run 1 $I domain create other --nodes node1 --channel "$ch" --timeout 30
t_check "replace refused: node1 holds channel $ch for other" \
	refused 3 "channel $ch is held on node 'node1' by domain 'other'" \
	$I domain replace big node4 node1 --timeout 30
# Powered off: refused once the node the request entered, or the leader,
# sees it gone (a bounded number of tries: each one is refused either way,
# for the partition until then).
node_kill 2
ok=
for try in $(seq 1 40); do
	if refused 3 "node 'node2' is unreachable" \
		$I domain replace big node4 node2 --timeout 30; then
		ok=1
		break
	fi
done
t_check "replace refused: node2 powered off (try $try)" test -n "$ok"
phase "replace refusals"

node_kill 4
t_check "node3: big DEGRADED without node4" node_run 3 $N wait-state big degraded 30
t_check "node1: other deleted" node_run 1 $I domain delete other --timeout 30
out=$(node_run 3 $I domain replace big node4 node1 --timeout 90 2>&1)
rc=$?
echo "$out"
t_check "replace node4 by node1: exit 0, READY" test "$rc" = 0
t_check "replace said so" grep -q "replaced member node4 with node1 in domain big" <<< "$out"
t_check "node3: the held fd of channel $ch still works" node_run 3 $N held "$ch"
t_check "node1: big READY" node_run 1 $N wait-state big ready 30
t_check "node1: opens channel $ch" node_run 1 "tests/kmod/chanopen /dev/imex-channels/channel$ch info"
t_check "big: one definition on node1, node3, node5" same_def big 1 3 5
t_check "big: node4 out, node1 in" \
	node_run 5 "$N def big | grep -q 'member=node1' && ! $N def big | grep -q 'member=node4'"
phase "replace a powered-off member"

t_done
