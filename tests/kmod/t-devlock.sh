# Issue 13 item 3: device-node work is not done under the module's lock.
# While a manager grants another domain 4096 channels and revokes them
# again (each DOMAIN_SET 4096 device_add()s or device_del()s: a devtmpfs
# round trip and a uevent each), open()+close() of an unrelated domain's
# channel never waits for that work: the slowest of them stays under a bound
# far below one set's device work (about 3 s here when it held the lock,
# about 0.1 s after).  A DOMAIN_SET still returns only once its nodes exist,
# and revoking and re-granting the same ids back to back never clashes.
. tests/vm/lib.sh
. tests/kmod/common.sh
bound_us=$((1000000 * ${IMEX_TIMEOUT_SCALE:-1}))

# Kernel lines of this test only: t-faultinj, which may run before it in
# the same VM, makes device nodes fail on purpose.
since=$(cut -d' ' -f1 /proc/uptime)
dmesg_here() { dmesg | awk -v t="$since" '{ s = $0; sub(/^\[ */, "", s); if (s + 0 >= t) print }'; }

imex_unload
imex_load $IMEX_TEST_PARAMS max_channels=8192
# 4096 ids in one IMEX_A_CHANNEL_IDS: one message.
BIG="name=big uuid=aaaaaaaa-0000-0000-0000-000000000002 fabric=$FABRIC members=$NODE"
{ echo attach
  echo "set name=quiet uuid=aaaaaaaa-0000-0000-0000-000000000001 fabric=$FABRIC members=$NODE gen=1 channels=1 mode=0666"
  echo "set $BIG gen=1 channels=8191"
  echo "sh touch /tmp/go"
  for i in 1 2 3; do
	echo "set $BIG gen=$((2 * i)) channels=8191 ids=16-4111"
	echo "set $BIG gen=$((2 * i + 1)) channels=8191"
  done
  echo "set $BIG gen=8 channels=8191 ids=16-4111"
  echo "sh touch /tmp/done"
  echo hold; } > /tmp/grants
# The manager stays attached ("hold") so both domains stay usable.
$NL -f /tmp/grants > "$IMEX_VM_OUT/grants.log" 2>&1 &
mgr=$!
trap 'kill $mgr 2>/dev/null' EXIT
wait_for 60 test -e /tmp/go
$CHANOPEN $DEV/channel1 reopen-until /tmp/done > "$IMEX_VM_OUT/reopen.log" 2>&1 ||
	fail "open: $(cat "$IMEX_VM_OUT/reopen.log")"
max=$(sed -n 's/^reopen n=[0-9]* max_us=\([0-9]*\)$/\1/p' "$IMEX_VM_OUT/reopen.log")
[ -n "$max" ] || fail "no figure: $(cat "$IMEX_VM_OUT/reopen.log")"
[ "$max" -le "$bound_us" ] ||
	fail "an open() of domain quiet waited ${max} us (bound ${bound_us}) behind another domain's device work: $(cat "$IMEX_VM_OUT/reopen.log")"
# The last set returned only once every node was there, with its mode.
[ "$(ls $DEV | wc -l)" = 4098 ] || fail "$(ls $DEV | wc -l) nodes once set, not 4098"
[ "$(stat -c %a $DEV/channel4111)" = 600 ] || fail "channel4111 mode $(stat -c %a $DEV/channel4111)"
! dmesg_here | grep -q 'no device node' || fail "a device could not be made: $(dmesg_here | grep 'no device node')"
cat "$IMEX_VM_OUT/reopen.log"
