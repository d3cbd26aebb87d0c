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
# complete one on every member.
cd "$(dirname "$0")/../.." || exit 2
. tests/cluster/cluster.sh
I=tools/imexctl/imexctl
N="sh tests/cluster/node.sh"
NODES="node1=192.0.2.1,node2=192.0.2.2,node3=192.0.2.3"

cluster_init 3 || exit 1
node_boot 1 2 3 || exit 1
for i in 1 2 3; do t_check "node$i: imexd attached" node_run $i $N start; done

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

# Power node3 off: the others see DEGRADED within the detection time
# (3 missed heartbeats of 250 ms), and channels on live nodes stay open.
t_check "node1: hold channel0 open" node_run 1 $N hold 0
t0=$(cluster_now)
node_kill 3
t_check "node1: job1 DEGRADED" node_run 1 $N wait-state job1 degraded 10
echo "# node3 off -> DEGRADED on node1 took $(echo "$(cluster_now) - $t0" | bc) s"
t_check "node2: job1 DEGRADED" node_run 2 $N wait-state job1 degraded 10
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

t_done
