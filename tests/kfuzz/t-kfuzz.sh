# Random and malformed netlink messages and channel ioctls (tests/kfuzz),
# then a consistent state and a module that unloads.  KFUZZ_SEED replays a
# run (the seed is the first line of the log); KFUZZ_COUNT sets its length.
. tests/vm/lib.sh
. tests/kmod/common.sh

tests/kfuzz/kfuzz ${KFUZZ_SEED:+--seed "$KFUZZ_SEED"} --count "${KFUZZ_COUNT:-120000}" ||
	fail "kfuzz found a problem (replay with the seed above)"
imex_unload
! grep -q '^imex ' /proc/modules || fail "imex did not unload after fuzzing"
