#!/bin/bash
# Issue 4 on a 3-VM cluster: create from node1 returns once all three
# kernels hold the domain READY; every node shows the same members and an
# all-connected matrix; a powered-off node makes the others DEGRADED within
# the detection time while open channels stay open; it comes back READY by
# itself; a create naming a dead node fails naming it; a dead node can be
# evicted; a coordinator killed between PREPARE and COMMIT leaves no
# reservation after the lease and a retry succeeds; concurrent creates
# asking for the same channel end with one owner per channel.
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
out=$(node_run 1 $I domain create job2 --nodes "$NODES" --channels 1 --timeout 30 2>&1)
rc=$?
echo "$out"
[ $rc = 1 ] && echo "$out" | grep -q node3 && t_ok "create naming dead node3 fails naming it" ||
	t_fail "create with a dead member: rc=$rc"

# node3 comes back: fresh boot, module loaded, daemon started; no manual step.
t0=$(cluster_now)
node_boot 3 || exit 1
t_check "node3: imexd attached after reboot" node_run 3 $N start
t_check "node3: job1 re-created and READY" node_run 3 $N wait-state job1 ready 60
t_check "node1: job1 READY again" node_run 1 $N wait-state job1 ready 60
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

# The coordinator dies between PREPARE and COMMIT (kill -9 at its first
# commit): no node keeps the reservation once the lease (5 s) is over, and
# a retry succeeds.
node_run 1 $N stop
t_check "node1: imexd that dies before commit" node_run 1 $N start env:IMEXD_TEST_FAULT=kill-before-commit
if node_run 1 $I domain create job3 --nodes "$NODES" --channel 60 --timeout 30; then
	t_fail "create succeeded although its coordinator died"
else
	t_ok "create fails when its coordinator dies mid-change"
fi
t_check "node1: the coordinator is dead" node_run 1 $N dead
for i in 1 2 3; do
	t_check "node$i: no reservation left after the lease" node_run $i $N no-changes 20
	t_check "node$i: job3 does not exist" node_run $i $N wait-state job3 gone 1
	t_check "node$i: channel 60 is free" node_run $i "! tests/kmod/imex-nl channel id=60"
done
t_check "node1: imexd restarted" node_run 1 $N start
t_check "retry of the create succeeds" \
	node_run 1 $I domain create job3 --nodes "$NODES" --channel 60 --timeout 60

t_done
