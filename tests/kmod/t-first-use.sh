# An fd's per-fd state is made on its first ioctl, not at open: a fresh
# fd's UNEXPORT/UNIMPORT, an epoll registered before the first ioctl, and
# eight threads' first ioctls on one fd at once (tests/kmod/first-use.c).
. tests/vm/lib.sh
. tests/kmod/common.sh
. tests/kmod/share-lib.sh

serve_start
$NL -q create name=first members=$NODE channels=4 || fail "create first"
wait_for 10 test -e $DEV/channel4
tests/kmod/first-use $DEV/channel4 > "$OUT/first-use.log" 2>&1 ||
	fail "first-use: $(cat "$OUT/first-use.log")"
grep -q '^first-use: ok$' "$OUT/first-use.log" || fail "first-use: $(cat "$OUT/first-use.log")"
$NL -q delete name=first || fail "delete first"
expect_counts 0 0
if dmesg | grep -E 'WARNING:|BUG:'; then fail "kernel report"; fi
serve_stop
