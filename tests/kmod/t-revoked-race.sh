# IMEX_IOC_REVOKED held inside its copy to user space (a userfaultfd page)
# while the channel's domain is deleted: the revoked imports it reports are
# freed with the channel, none is counted against the freed domain.  This
# once gave a WARN at the domain's end and a write to freed memory after.
. tests/vm/lib.sh
. tests/kmod/common.sh
. tests/kmod/share-lib.sh

ready=$OUT/race.ready go=$OUT/race.go
rm -f "$ready" "$go"
serve_start
$NL -q create name=race members=$NODE channels=3 || fail "create race"
wait_for 10 test -e $DEV/channel3
tests/kmod/revoked-race $DEV/channel3 "$ready" "$go" > "$OUT/race.log" 2>&1 &
racer=$!
# Ready, or it gave up at once (no userfaultfd, or an error).
wait_for 60 sh -c "test -e '$ready' || grep -q '^skipped:\|^revoked-race:' '$OUT/race.log'"
if [ ! -e "$ready" ]; then
	wait $racer
	rc=$?
	[ $rc = 77 ] || fail "revoked-race exited $rc: $(cat "$OUT/race.log")"
	cat "$OUT/race.log"	# skipped: no userfaultfd (the debug kernel)
	serve_stop
	exit 0
fi
$NL -q delete name=race || fail "delete race"
touch "$go"
wait $racer || fail "revoked-race: $(cat "$OUT/race.log")"
grep -q '^revoked rc=0 count=1$' "$OUT/race.log" || fail "the blocked read: $(cat "$OUT/race.log")"
expect_counts 0 0
if dmesg | grep -E 'WARNING:|BUG:'; then fail "kernel report"; fi
serve_stop
