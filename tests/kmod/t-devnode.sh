# Acceptance 4: a channel's device node carries the grant's owner and mode,
# opens only while its domain is usable, and disappears on revoke; a holder
# of the fd sees POLLHUP|POLLERR and its ioctls fail with ENODEV.  The
# module cannot be unloaded while a channel is open.
. tests/vm/lib.sh
. tests/kmod/common.sh

as_uid() { uid=$1; shift; setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"; }
EACCES=13 ENXIO=6 ENOLINK=67 ENOENT=2

serve_start
$NL -q create name=dv members=$NODE channels=3-4 uid=1000 gid=1000 mode=0600 || fail "create"
# The node carries the grant's device number (not the id), as CHANNEL_GET says.
devnum3=$($NL channel id=3 | sed -n 's/.* devnum=\([0-9]*:[0-9]*\).*/\1/p')
[ "$(stat -c '%A %u %g' $DEV/channel3) $((0x$(stat -c %t $DEV/channel3))):$((0x$(stat -c %T $DEV/channel3)))" = "crw------- 1000 1000 $devnum3" ] ||
	fail "channel3 node: $(stat -c '%A %u %g %t %T' $DEV/channel3), CHANNEL_GET: $($NL channel id=3)"
[ ! -e $DEV/channel5 ] || fail "channel5 exists without a grant"

as_uid 1000 $CHANOPEN $DEV/channel3 info | grep -q "info domain=dv channel=3 state=2" || fail "owner cannot open channel3"
as_uid 1001 $CHANOPEN $DEV/channel3; [ $? = $EACCES ] || fail "uid 1001 opened a 0600 channel of uid 1000"
$NL -q channel-set id=4 mode=0666 || fail "channel-set"
[ "$(stat -c '%a' $DEV/channel4)" = 666 ] || fail "mode after channel-set: $(stat -c '%a' $DEV/channel4)"
as_uid 1001 $CHANOPEN $DEV/channel4 || fail "0666 channel not openable by uid 1001"

# Hold channel3 open across the manager's absence and the revoke.
$CHANOPEN $DEV/channel3 hold > "$IMEX_VM_OUT/holder.log" 2>&1 &
holder=$!
wait_for 5 grep -q '^open' "$IMEX_VM_OUT/holder.log"
$NL channel id=3 | grep -q ' open=1' || fail "open count not 1: $($NL channel id=3)"
if modprobe -r imex 2>/dev/null; then fail "module unloaded with a channel open"; fi
kill $holder; wait $holder 2>/dev/null

# Manager gone: the domain is DOWN and cannot be opened; open fds stay valid.
$CHANOPEN $DEV/channel3 wait-revoke 60000 > "$IMEX_VM_OUT/waiter.log" 2>&1 &
waiter=$!
wait_for 5 grep -q '^open' "$IMEX_VM_OUT/waiter.log"
serve_stop
$NL domain name=dv | grep -q 'state=1 ' || fail "domain not DOWN without manager"
$CHANOPEN $DEV/channel3; [ $? = $ENOLINK ] || fail "opened a channel of a DOWN domain"
serve_start
$CHANOPEN $DEV/channel3 info | grep -q 'state=2' || fail "not usable again after the manager returned"

# Revoke: the node goes, the holder is told, its ioctls fail.
$NL -q free name=dv channels=3 || fail "free"
wait $waiter || fail "holder did not see the revocation: $(cat "$IMEX_VM_OUT/waiter.log")"
grep -q 'info errno=ENODEV' "$IMEX_VM_OUT/waiter.log" || fail "ioctl after revoke: $(cat "$IMEX_VM_OUT/waiter.log")"
[ ! -e $DEV/channel3 ] || fail "channel3 node still present after revoke"

# A hand-made node cannot reach a channel that is not granted.
mknod /tmp/fake3 c "${devnum3%:*}" "${devnum3#*:}"
$CHANOPEN /tmp/fake3; [ $? = $ENXIO ] || fail "revoked channel opened through mknod"
major=$($NL node-get | sed 's/.*major=\([0-9]*\).*/\1/')
mknod /tmp/fake9 c "$major" 9
$CHANOPEN /tmp/fake9; [ $? = $ENXIO ] || fail "ungranted channel opened through mknod"
serve_stop
