# Acceptance 5: a manager killed between PREPARE and COMMIT leaves exactly
# the state there was before; so does a lease that runs out.
. tests/vm/lib.sh
. tests/kmod/common.sh
before=$IMEX_VM_OUT/before.txt after=$IMEX_VM_OUT/after.txt

serve_start
$NL -q create name=base members=$NODE count=2 || fail "create base"
state_snapshot "$before"
serve_stop

# Killed mid-change: the stand-in stops right after PREPARE.
$NL serve crash=prepare > "$IMEX_VM_OUT/crash.log" 2>&1 &
crasher=$!
wait_for 10 grep -q serving "$IMEX_VM_OUT/crash.log"
$NL create name=mid members=$NODE count=3 > "$IMEX_VM_OUT/mid.log" 2>&1 &
waiter=$!
wait_for 10 grep -q prepared "$IMEX_VM_OUT/crash.log"
$NL changes | grep -q 'name=mid' || fail "no prepared change visible"
[ "$($NL channels | grep -c 'chstate=0')" = 3 ] || fail "3 channels should be reserved: $($NL channels)"
kill -9 $crasher
if wait $waiter; then fail "create succeeded although its manager died"; fi
grep -q ENOTCONN "$IMEX_VM_OUT/mid.log" || fail "caller not told: $(cat "$IMEX_VM_OUT/mid.log")"
serve_start
state_snapshot "$after"
diff -u "$before" "$after" || fail "state after the killed change differs from before"
serve_stop

# A lease that runs out while its manager lives on.  The kernel logs each
# expiry, which proves the prepare happened and the lease ran out however
# slow the host: no poll has to catch the change while it is prepared.
lease=$((300 * ${IMEX_TIMEOUT_SCALE:-1}))
$NL -f - > "$IMEX_VM_OUT/lease.log" 2>&1 <<SCRIPT &
attach
status name=base state=ready
prepare change=9900 op=create name=leased uuid=aaaaaaaa-0000-0000-0000-00000000000c fabric=$FABRIC members=$NODE channels=40-41 lease=$lease
prepare change=9901 op=delete name=base lease=$lease
hold
SCRIPT
holder=$!
wait_for 10 sh -c "dmesg | grep -q \"change 9900 on domain 'leased' expired uncommitted\""
wait_for 10 sh -c "dmesg | grep -q \"change 9901 on domain 'base' expired uncommitted\""
kill -0 $holder 2>/dev/null || fail "the manager holding the leases exited: $(cat "$IMEX_VM_OUT/lease.log")"
wait_for 10 sh -c "! $NL changes | grep -q change"
kill -9 $holder; wait $holder 2>/dev/null
serve_start
state_snapshot "$after"
diff -u "$before" "$after" || fail "state after expired leases differs from before"
# A retry of the change that died succeeds.
$NL -q create name=mid members=$NODE count=3 || fail "retry after the killed change"
