# Issue 3, acceptance 4: 'imexctl domain wait' returns as soon as the state
# is reached (it waits on the events group), and at the timeout exits 1
# with a message naming the state it is in.
. tests/vm/lib.sh
. tests/kmod/common.sh
I=tools/imexctl/imexctl

# A manager that holds on: domains are created by hand so their state can
# be driven step by step.
$NL -f - > "$IMEX_VM_OUT/mgr.log" 2>&1 <<SCRIPT &
attach
set name=w1 uuid=aaaaaaaa-0000-0000-0000-0000000000e1 fabric=$FABRIC members=$NODE,peer2 gen=1
status name=w1 state=degraded view=peer2:5
hold
SCRIPT
mgr=$!
wait_for 10 sh -c "$NL domain name=w1 | grep -q 'state=3 '"

if out=$($I domain wait w1 --timeout 1 2>&1); then fail "wait succeeded on a degraded domain"; fi
echo "$out"
echo "$out" | grep -q "degraded" || fail "timeout message does not say the state: $out"
$I domain wait w1 --state degraded --timeout 5 || fail "wait for degraded"

# Wait with a long timeout; it must return once READY is pushed, long
# before its timeout.
$I domain wait w1 --timeout 600 > "$IMEX_VM_OUT/wait.log" 2>&1 &
waiter=$!
# Blocked in poll() = subscribed and has seen the domain DEGRADED.
wait_for 10 grep -q poll /proc/$waiter/wchan
kill -9 $mgr; wait $mgr 2>/dev/null
$NL -f - > "$IMEX_VM_OUT/mgr2.log" 2>&1 <<SCRIPT &
attach
status name=w1 state=ready view=peer2:2
hold
SCRIPT
mgr=$!
wait_for 10 sh -c "! kill -0 $waiter 2>/dev/null"
wait $waiter || fail "wait did not succeed when the domain became ready: $(cat "$IMEX_VM_OUT/wait.log")"
kill -9 $mgr
