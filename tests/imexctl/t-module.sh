# Issue 3, acceptance 2: imexctl loads the installed module through libkmod
# (modprobe.d options honoured), reports it, and unloads it, refusing while
# a channel is open.
. tests/vm/lib.sh
. tests/kmod/common.sh
I=tools/imexctl/imexctl

imex_unload
[ -f "/lib/modules/$(uname -r)/extra/imex.ko" ] || fail "imex.ko is not installed in extra/"
$I module status | grep -q "not loaded" || fail "status of an unloaded module: $($I module status)"
echo "options imex max_channels=96" > /etc/modprobe.d/imex-test.conf
$I module load --fabric "$FABRIC" || fail "module load"
[ "$(cat /sys/module/imex/parameters/max_channels)" = 96 ] || fail "modprobe.d option not applied"
$I module load --fabric "$FABRIC" || fail "a second load of the same module must succeed"
$I --json module status | grep -q '"max_channels": 96' || fail "status: $($I --json module status)"
$I node show | grep -q "partition $FABRIC_PART" || fail "fabric from load: $($I node show)"
rm /etc/modprobe.d/imex-test.conf

serve_start
$I domain create m1 --nodes "$NODE" --channels 1 --timeout 20 || fail "create"
$CHANOPEN $DEV/channel0 hold > "$IMEX_VM_OUT/hold.log" 2>&1 &
holder=$!
wait_for 5 grep -q '^open' "$IMEX_VM_OUT/hold.log"
serve_stop
if out=$($I module unload 2>&1); then fail "unloaded with a channel open"; fi
echo "$out"
echo "$out" | grep -q "channel(s) 0 (domain m1" || fail "unload refusal does not name the open channel: $out"
kill $holder; wait $holder
$I module unload || fail "unload"
! grep -q '^imex ' /proc/modules || fail "still loaded"
$I module unload || fail "a second unload must succeed"
$I module load --fabric "$FABRIC" || fail "reload"
