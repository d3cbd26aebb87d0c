# Random and malformed netlink messages (up to 256 KiB, requests past the
# 64 KiB an attribute can describe among them) and channel ioctls from two
# threads at once (tests/kmod/kfuzz), every REQ_ACCEPT upcall well-formed, then
# a consistent state and a module that unloads.  KFUZZ_SEED replays a
# run (the seed is the first line of the log); KFUZZ_COUNT sets its length.
. tests/vm/lib.sh
. tests/kmod/common.sh

# A debug kernel (IMEX_TIMEOUT_SCALE > 1) takes ~30x longer per message (348 s for 120000):
# a third of the count keeps its run near 2 minutes.
count=120000
[ "${IMEX_TIMEOUT_SCALE:-1}" -gt 1 ] && count=40000
tests/kmod/kfuzz/kfuzz ${KFUZZ_SEED:+--seed "$KFUZZ_SEED"} --count "${KFUZZ_COUNT:-$count}" ||
	fail "kfuzz found a problem (replay with the seed above)"
imex_unload
! grep -q '^imex ' /proc/modules || fail "imex did not unload after fuzzing"
