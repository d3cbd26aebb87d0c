# A driver's revocation callback (imex_channel_notify_register()) is called
# exactly once, in process context, with imex_channel_ident() already
# failing, when the grant ends (channel freed, domain deleted) or the domain
# goes DOWN (manager gone); registering on a channel that is not usable
# fails; unregistering stops a pending callback; and the driver can unload
# while revocations call its callbacks.
. tests/vm/lib.sh
. tests/kmod/common.sh

W=tests/kmod/kapiwatch

# called SLOT N: the slot's callback has run N times.
called() {
	$W get "$1" | grep -q " calls=$2 "
}

# expect SLOT PATTERN: the slot's report matches.
expect() {
	$W get "$1" | grep -q -- "$2" || fail "slot $1: want '$2', have '$($W get "$1")'"
}

insmod tests/kmod/kapi/imex_kapi_test.ko || fail "cannot load imex_kapi_test.ko"
serve_start

# The grant ends: a channel freed, then the domain deleted.
$NL -q create name=cb1 members=$NODE channels=1-3 || fail "create cb1"
$W add 0 $DEV/channel1 | grep -q "error=OK calls=0 ident=OK" || fail "register: $($W get 0)"
$W add 1 $DEV/channel2 | grep -q "error=OK" || fail "register 1"
$W add 2 $DEV/channel2 | grep -q "error=OK" || fail "register 2 (a second on one channel)"
$W add 3 $DEV/channel3 | grep -q "error=OK" || fail "register 3"
$W rearm 0 | grep -q "error=EBUSY" || fail "registered twice: $($W get 0)"
# Unregistering before the grant ends stops the callback for good.
$W del 3 | grep -q "calls=0 .* stopped$" || fail "unregistering an armed callback"
$NL -q free name=cb1 channels=1 || fail "free channel 1"
wait_for 10 called 0 1
expect 0 "calls=1 ident=ENODEV cb_ident=ENODEV cb_register=ENODEV$"
called 1 0 || fail "freeing channel 1 called channel 2's callback"
$W rearm 0 | grep -q "error=ENODEV calls=1 " || fail "registered on a revoked channel: $($W get 0)"
$NL -q delete name=cb1 || fail "delete cb1"
wait_for 10 called 1 1
wait_for 10 called 2 1
expect 1 "calls=1 ident=ENODEV cb_ident=ENODEV cb_register=ENODEV$"
expect 2 "calls=1 ident=ENODEV cb_ident=ENODEV cb_register=ENODEV$"
expect 0 "calls=1 "
for s in 0 1 2; do
	$W del $s | grep -q "calls=1 .*ENODEV$" || fail "unregistering called slot $s"
done

# The domain goes DOWN (the manager's socket closes): called once, not
# again when the domain is READY again; registering while DOWN fails.
$NL -q create name=cb2 members=$NODE channels=5 || fail "create cb2"
$W add 4 $DEV/channel5 | grep -q "error=OK" || fail "register 4"
serve_stop
wait_for 10 called 4 1
expect 4 "calls=1 ident=ENOLINK cb_ident=ENOLINK cb_register=ENOLINK$"
$W rearm 4 | grep -q "error=ENOLINK calls=1 " || fail "registered while DOWN: $($W get 4)"
serve_start
expect 4 "calls=1 ident=OK "
$W rearm 4 | grep -q "error=OK calls=1 " || fail "re-registering once READY: $($W get 4)"
$NL -q delete name=cb2 || fail "delete cb2"
wait_for 10 called 4 2
expect 4 "calls=2 ident=ENODEV cb_ident=ENODEV cb_register=ENODEV$"
$W del 4 > /dev/null || fail "unregister 4"
rmmod imex_kapi_test || fail "rmmod imex_kapi_test"

# The driver unloads while revocations call its callbacks (each sleeps
# 50 ms): its module exit unregisters every callback, stopping pending
# ones and waiting for a running one.  A call after that would land in
# freed module memory (an oops).  Rounds alternate deleting the domain and
# the domain going DOWN, and unloading at once or after the first call.
round=0
while [ $round -lt 8 ]; do
	insmod tests/kmod/kapi/imex_kapi_test.ko cb_delay_ms=50 ||
		fail "insmod in round $round"
	$NL -q create name=race members=$NODE channels=10-13 || fail "create in round $round"
	for s in 0 1 2 3 4 5 6 7; do
		$W add $s $DEV/channel$((10 + s % 4)) | grep -q "error=OK" ||
			fail "register $s in round $round"
	done
	deleter=
	if [ $((round % 2)) = 0 ]; then
		$NL -q delete name=race & deleter=$!
	else
		kill -9 "$SERVE_PID"
	fi
	[ $((round % 4)) -lt 2 ] || wait_for 10 called 0 1
	rmmod imex_kapi_test || fail "rmmod in round $round"
	if [ -n "$deleter" ]; then
		wait $deleter || fail "delete in round $round"
	else
		serve_stop
		serve_start
		$NL -q delete name=race || fail "delete in round $round"
	fi
	round=$((round + 1))
done
dmesg | grep 'imex_kapi_test: unloaded' | tail -8
# Some rounds must have raced: callbacks both called and stopped.
dmesg | grep 'imex_kapi_test: unloaded' | tail -8 |
	awk '{ c += $(NF - 3); s += $(NF - 1) } END { exit !(c > 0 && s > 0) }' ||
	fail "no round unloaded while callbacks were pending"
[ -z "$($NL channels)" ] || fail "channels left: $($NL channels)"
