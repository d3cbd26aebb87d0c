# Issue 13 item 1: a device number names one grant, not a channel id.  A
# node made for a grant (as a container runtime makes one from a CDI spec)
# reaches nothing once that grant ends, even when the same channel id is
# granted to another domain; an fd of the ended grant resolves to nothing
# through the in-kernel API.  CHANNEL_GET reports the grant's number.
. tests/vm/lib.sh
. tests/kmod/common.sh
ENXIO=6

insmod tests/kmod/kapi/imex_kapi_test.ko || fail "cannot load imex_kapi_test.ko"
trap 'kill $held 2>/dev/null; rmmod imex_kapi_test 2>/dev/null' EXIT
held=
serve_start
$NL -q create name=job1 members=$NODE channels=5 mode=0666 || fail "create job1"
# The container's node: the device number the first grant was given.
set -- $(stat -c '%t %T' $DEV/channel5)
old_major=$((0x$1)) old_minor=$((0x$2))
mknod /tmp/job1-ch5 c $old_major $old_minor || fail "mknod"
$CHANOPEN /tmp/job1-ch5 info | grep -q "domain=job1 channel=5" || fail "job1's own node does not open"
# An fd of job1, held across the end of its grant and the next one.
$CHANOPEN /tmp/job1-ch5 wait-file /tmp/regranted kapi info > "$IMEX_VM_OUT/held.log" 2>&1 &
held=$!
wait_for 5 grep -q '^open' "$IMEX_VM_OUT/held.log"

$NL -q delete name=job1 || fail "delete job1"
$NL -q create name=job2 members=$NODE channels=5 mode=0666 || fail "create job2"
$CHANOPEN $DEV/channel5 info | grep -q "domain=job2 channel=5" || fail "job2's node does not open"

# The old node and the old fd reach nothing of job2.
$CHANOPEN /tmp/job1-ch5 info > "$IMEX_VM_OUT/old-node.log" 2>&1
rc=$?
[ $rc = $ENXIO ] || fail "job1's node opened channel 5 of job2 (exit $rc): $(cat "$IMEX_VM_OUT/old-node.log")"
touch /tmp/regranted
wait $held
grep -q 'kapi errno=ENODEV' "$IMEX_VM_OUT/held.log" || fail "job1's fd resolved after its grant ended: $(cat "$IMEX_VM_OUT/held.log")"
grep -q 'info errno=ENODEV' "$IMEX_VM_OUT/held.log" || fail "job1's fd answered info: $(cat "$IMEX_VM_OUT/held.log")"

# CHANNEL_GET and the node agree on job2's number; a change of owner keeps it.
set -- $(stat -c '%t %T' $DEV/channel5)
new="$((0x$1)):$((0x$2))"
[ "$new" != "$old_major:$old_minor" ] || fail "job2 got job1's device number $new"
$NL channel id=5 | grep -q " devnum=$new\( \|$\)" || fail "CHANNEL_GET: $($NL channel id=5), node $new"
$NL -q channel-set id=5 mode=0600 || fail "channel-set"
[ "$(stat -c '%a %t:%T' $DEV/channel5)" = "600 $(printf '%x:%x' $((0x$1)) $((0x$2)))" ] ||
	fail "after channel-set: $(stat -c '%a %t:%T' $DEV/channel5)"
$CHANOPEN /tmp/job1-ch5; [ $? = $ENXIO ] || fail "job1's node opens after channel-set"
$NL -q delete name=job2 || fail "delete job2"
