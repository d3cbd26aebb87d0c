#!/bin/bash
# Issue 4 on a 3-VM cluster, against the Raft-based daemon: create from
# node1 returns once all three kernels hold the domain READY; every node
# shows the same members and an all-connected matrix; a powered-off node
# makes the others DEGRADED within the detection time while open channels
# stay open; it comes back READY by itself; a create naming a dead node is
# committed (the majority has it) but never READY: it fails by its timeout
# naming the node, and the domain stays (until deleted) and turns READY
# once the node is back; a dead node can be evicted; concurrent creates
# asking for the same channel end with one owner per channel; a member
# that dies before its kernel takes a committed create converges once it
# is back; a kill -9 of the Raft leader during a create leaves no domain or a
# complete one on every member.  Then group membership: node4, which
# NODES_FILE does not name, waits; its join is refused while its fabric
# identity differs, and made by 'imexctl node join' once it matches; a
# domain naming it turns READY with its kernel holding the channels; its
# leave is refused while that domain names it and made once it is gone,
# after which a create naming it is refused.  'imexctl node list' shows
# node4 waiting, then as a standby after its join, and not after its leave.
# Issue 15, acceptance 1: 'imexctl monitor --json' on node1 records domain
# 'watch' created, READY, DEGRADED with node3's reason while node3 is off,
# READY once it is back, and deleted, in that order.
cd "$(dirname "$0")/../.." || exit 2
. tests/cluster/cluster.sh
I=tools/imexctl/imexctl
N="sh tests/cluster/node.sh"
NODES="node1=192.0.2.1,node2=192.0.2.2,node3=192.0.2.3"

cluster_init 4 || exit 1
# The group is node1..node3; node4 is outside it until it is joined.
for i in 1 2 3 4; do
	for j in 1 2 3; do echo "node$j=192.0.2.$j"; done > "$cluster_dir/n$i/nodes"
done
node_boot 1 2 3 || exit 1
for i in 1 2 3; do t_check "node$i: imexd attached" node_run $i $N start; done
t_check "node1: imexctl monitor --json listening" node_run 1 $N monitor-start

t0=$(cluster_now)
t_check "create job1 from node1 (waits for READY)" \
	node_run 1 $I domain create job1 --nodes "$NODES" --channels 2 --timeout 60
echo "# create -> READY took $(echo "$(cluster_now) - $t0" | bc) s"
for i in 1 2 3; do
	t_check "node$i: job1 READY right after create returns" node_run $i $N wait-state job1 ready 0.1
	t_check "node$i: all-connected matrix" node_run $i $N matrix-connected job1
	t_check "node$i: channel devices 0 and 1" node_run $i test -c /dev/imex-channels/channel1
done
node_run 1 $I domain show job1
t_check "create watch (the monitor's domain)" \
	node_run 1 $I domain create watch --nodes "$NODES" --channel 90 --timeout 60
t_check "node1: monitor saw watch created" node_run 1 $N monitor-wait 30 watch new
t_check "node1: monitor saw watch READY" node_run 1 $N monitor-wait 30 watch ready

# Power node3 off: the others see DEGRADED within the detection time
# (3 missed heartbeats of 250 ms), and channels on live nodes stay open.
t_check "node1: hold channel0 open" node_run 1 $N hold 0
t0=$(cluster_now)
node_kill 3
t_check "node1: job1 DEGRADED" node_run 1 $N wait-state job1 degraded 10
echo "# node3 off -> DEGRADED on node1 took $(echo "$(cluster_now) - $t0" | bc) s"
t_check "node2: job1 DEGRADED" node_run 2 $N wait-state job1 degraded 10
t_check "node1: monitor saw watch DEGRADED with node3's reason" \
	node_run 1 $N monitor-wait 30 watch degraded node3
t_check "node1: the held channel still works" node_run 1 $N held 0
t_check "node2: channel still opens" node_run 2 tests/kmod/chanopen /dev/imex-channels/channel0 info
# The create is committed by node1 and node2 (a majority) and held by their
# kernels, but node3 cannot report it: never READY, so the command fails by
# its timeout and its message names node3 as not connected.  The domain
# stays: the log has it, and it is deleted only by "domain delete".
out=$(node_run 1 $I domain create job2 --nodes "$NODES" --channels 1 --timeout 10 2>&1)
rc=$?
echo "$out"
[ $rc = 1 ] && echo "$out" | grep -q "not connected: node3" &&
	t_ok "create naming dead node3 fails by its timeout naming it" ||
	t_fail "create with a dead member: rc=$rc"
t_check "node2: job2 committed there, DEGRADED" node_run 2 $N wait-state job2 degraded 1

# node3 comes back: fresh boot, module loaded, daemon started; no manual step.
t0=$(cluster_now)
node_boot 3 || exit 1
t_check "node3: imexd attached after reboot" node_run 3 $N start
t_check "node3: job1 re-created and READY" node_run 3 $N wait-state job1 ready 60
t_check "node1: job1 READY again" node_run 1 $N wait-state job1 ready 60
t_check "node1: monitor saw watch READY again" node_run 1 $N monitor-wait 60 watch ready
t_check "delete watch" node_run 1 $I domain delete watch --timeout 30
t_check "node1: monitor saw watch deleted" node_run 1 $N monitor-wait 30 watch deleted
t_check "node1: monitor stops on SIGINT; its record of watch is in order" \
	node_run 1 $N monitor-stop watch node3
t_check "node3: job2 (created while it was off) READY" node_run 3 $N wait-state job2 ready 30
echo "# node3 boot -> READY took $(echo "$(cluster_now) - $t0" | bc) s"

# Eviction of a dead member.
node_kill 3
t_check "node1: job1 DEGRADED again" node_run 1 $N wait-state job1 degraded 10
t_check "evict node3 from job1" node_run 1 $I domain evict job1 node3 --timeout 30
t_check "node2: job1 READY with two members" node_run 2 $N wait-state job1 ready 30
t_check "node2: member list is node1,node2" \
	node_run 2 "$I --json domain show job1 | grep -q '\"member_count\": 2'"
node_boot 3 || exit 1
t_check "node3: imexd attached" node_run 3 $N start
t_check "node3: learns it was evicted (job1 gone)" node_run 3 $N wait-state job1 gone 60

# Concurrent creates from two coordinators asking for the same channel.
node_run 1 $I domain create race1 --nodes "$NODES" --channel 50 --timeout 60 > "$cluster_dir/race1" 2>&1 &
r1=$!
node_run 2 $I domain create race2 --nodes "$NODES" --channel 50 --timeout 60 > "$cluster_dir/race2" 2>&1 &
r2=$!
wait $r1; rc1=$?
wait $r2; rc2=$?
cat "$cluster_dir/race1" "$cluster_dir/race2"
[ $((rc1 + rc2)) = 1 ] && t_ok "exactly one of two racing creates succeeded" ||
	t_fail "racing creates: race1 exited $rc1, race2 exited $rc2"
winner=race1
[ $rc2 = 0 ] && winner=race2
for i in 1 2 3; do
	t_check "node$i: channel 50 belongs to $winner alone" \
		node_run $i "tests/kmod/imex-nl channels | grep ' channel=50 ' | grep -q ' name=$winner '"
done

# A member dies (as by kill -9) before its kernel takes a committed create:
# the others hold it, the create cannot be READY; once the member's imexd
# is back, its kernel converges from the log and the domain is READY on all.
node_run 3 $N stop
t_check "node3: imexd that dies before its kernel takes a change" \
	node_run 3 $N start env:IMEXD_TEST_FAULT=kill-before-kernel
out=$(node_run 1 $I domain create job3 --nodes "$NODES" --channel 60 --timeout 5 2>&1)
rc=$?
echo "$out"
[ $rc != 0 ] && echo "$out" | grep -q node3 &&
	t_ok "create fails naming node3, which died before its kernel took it" ||
	t_fail "create with a member dying mid-apply: rc=$rc"
t_check "node3: its imexd is dead" node_run 3 $N dead
t_check "node3: its kernel does not hold job3" node_run 3 $N wait-state job3 gone 1
for i in 1 2; do
	t_check "node$i: job3 committed, channel 60 is its" \
		node_run $i "tests/kmod/imex-nl channel id=60 | grep -q ' name=job3 '"
done
t0=$(cluster_now)
t_check "node3: imexd restarted" node_run 3 $N start
for i in 1 2 3; do
	t_check "node$i: job3 READY" node_run $i $N wait-state job3 ready 30
done
echo "# restart -> job3 READY on all took $(echo "$(cluster_now) - $t0" | bc) s"

# kill -9 of the Raft leader in the middle of a create that entered at a
# follower.  Then a create from the third node that succeeds is a barrier:
# it is committed after any entry of job4 that survives, so past it job4
# is settled, and it must be all or nothing: READY on every member, or on
# none.
lname=$(node_run 2 $N leader)
case $lname in node[123]) ;; *) t_fail "node2 knows no leader ('$lname')"; t_done; exit 1 ;; esac
L=${lname#node}
F=$((L % 3 + 1))
B=$((F % 3 + 1))
echo "# leader node$L; the create enters at node$F; the barrier at node$B"
node_run $F "$I domain create job4 --nodes $NODES --channels 1 --timeout 10" > /dev/null 2>&1 &
cpid=$!
node_run $L $N kill9
wait $cpid
echo "# the create at node$F answered rc $?"
t_check "node$L: imexd restarted after kill -9" node_run $L $N start
t_check "node$B: create job5 (the barrier)" \
	node_run $B $I domain create job5 --nodes "$NODES" --channels 1 --timeout 30
# job5 READY: every kernel holds the log up to it, so job4 is there or not.
n4=0
for i in 1 2 3; do
	node_run $i tests/kmod/imex-nl domain name=job4 > /dev/null && n4=$((n4 + 1))
done
[ $n4 = 0 ] || [ $n4 = 3 ] && t_ok "job4 after kill -9 of the leader: on $n4 of 3 nodes (none or all)" ||
	t_fail "job4 after kill -9 of the leader: on $n4 of 3 nodes"
if [ $n4 = 3 ]; then
	for i in 1 2 3; do
		t_check "node$i: job4 READY" node_run $i $N wait-state job4 ready 10
	done
fi

# --- group membership: node4 joins and leaves ------------------------------
t0=$(cluster_now)
node_boot 4 || exit 1
OTHER_FABRIC="11111111-2222-3333-4444-555555555555 8"
t_check "node4: fabric set to another partition" node_run 4 $I node set-fabric $OTHER_FABRIC
t_check "node4: imexd attached" node_run 4 $N start
t_check "node4: not in NODES_FILE, it waits to be joined" \
	node_run 4 'grep -q "it waits until a node of the group runs" "$IMEX_VM_OUT/imexd.log"'
t_check "node4: node list says it waits to be joined" node_run 4 $N waits-to-join 10
out=$(node_run 1 $I node join node4=192.0.2.4 --timeout 30 2>&1)
rc=$?
echo "$out"
[ $rc = 1 ] && echo "$out" | grep -q "reports fabric .* partition 8, .* partition 7: not joined" &&
	t_ok "join of node4 with another fabric identity is refused" ||
	t_fail "join of a node of another partition: rc=$rc"
t_check "node4: imexd stopped" node_run 4 $N stop
t_check "node4: fabric set to the group's" \
	node_run 4 $I node set-fabric 11111111-2222-3333-4444-555555555555 7
t_check "node4: imexd attached again" node_run 4 $N start
t_check "node1: join node4" node_run 1 $I node join node4=192.0.2.4 --timeout 60
t_check "node1: node list shows node4 as standby" node_run 1 $N member node4 standby 10
t_check "node4: node list shows itself as standby" node_run 4 $N member node4 standby 30
out=$(node_run 1 $I node join node4 --timeout 10 2>&1)
echo "$out"
echo "$out" | grep -q "already a node of this NVLink domain" &&
	t_ok "a second join of node4 says it is in the group" || t_fail "second join: $out"
t_check "node2: create job6 naming node4" \
	node_run 2 $I domain create job6 --nodes node1,node2,node4 --channels 2 --timeout 60
t_check "node4: job6 READY" node_run 4 $N wait-state job6 ready 30
d1=$(node_run 1 $N def job6)
d4=$(node_run 4 $N def job6)
echo "# job6 on node1: $d1"
[ "$d1" = "$d4" ] && case $d4 in *"channels="[0-9]*) true ;; *) false ;; esac &&
	t_ok "node4's kernel holds job6 as node1's does, with its channels" ||
	t_fail "job6 on node4 differs: $d4"
out=$(node_run 3 $I node leave node4 --timeout 30 2>&1)
rc=$?
echo "$out"
[ $rc = 1 ] && echo "$out" | grep -q "node 'node4' is a member of domain 'job6': delete the domain or evict the node from it first" &&
	t_ok "leave of node4 refused while job6 names it" || t_fail "leave while a domain names node4: rc=$rc"
t_check "delete job6" node_run 1 $I domain delete job6 --timeout 30
t_check "node4: job6 gone" node_run 4 $N wait-state job6 gone 30
t_check "node3: leave node4" node_run 3 $I node leave node4 --timeout 60
t_check "node3: node list no longer shows node4" node_run 3 $N member node4 gone 10
out=$(node_run 1 $I domain create job7 --nodes node1,node4 --channels 1 --timeout 30 2>&1)
rc=$?
echo "$out"
[ $rc = 1 ] && echo "$out" | grep -q "node 'node4' is not a node of this NVLink domain" &&
	t_ok "create naming node4 after its leave is refused" || t_fail "create naming a node that left: rc=$rc"
echo "# node4: boot, refused join, join, domain, leave took $(echo "$(cluster_now) - $t0" | bc) s"

t_done
