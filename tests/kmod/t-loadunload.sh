# Acceptance 1: load and unload 50 times with domains and device nodes
# present; nothing leaks (major, minors, device nodes, class).
. tests/vm/lib.sh
. tests/kmod/common.sh

imex_unload
for i in $(seq 1 50); do
	imex_load $IMEX_TEST_PARAMS max_channels=$((64 + i))
	grep -q ' imex-channels$' /proc/devices || fail "iteration $i: no imex-channels in /proc/devices"
	# One process plays manager: two domains, three device nodes.
	$NL -q -f - <<SCRIPT || fail "iteration $i: creating domains"
attach
set name=a$i uuid=aaaaaaaa-0000-0000-0000-00000000000a fabric=$FABRIC members=$NODE gen=1 channels=0-1
set name=b$i uuid=aaaaaaaa-0000-0000-0000-00000000000b fabric=$FABRIC members=$NODE gen=1 channels=$((60 + i))
SCRIPT
	[ -c $DEV/channel0 ] && [ -c $DEV/channel1 ] && [ -c $DEV/channel$((60 + i)) ] ||
		fail "iteration $i: device nodes missing: $(ls $DEV)"
	imex_unload
	! grep -q imex-channels /proc/devices || fail "iteration $i: major leaked"
	[ ! -e $DEV ] || fail "iteration $i: $DEV left behind: $(ls $DEV)"
	[ ! -e /sys/class/imex ] || fail "iteration $i: class left behind"
done
imex_load $IMEX_TEST_PARAMS
