# The in-kernel API resolves a channel fd to its (domain, channel) with a
# reference, refuses other files and bad fds, and reports revocation and a
# DOWN domain.
. tests/vm/lib.sh
. tests/kmod/common.sh

insmod tests/kmod/kapi/imex_kapi_test.ko || fail "cannot load imex_kapi_test.ko"
serve_start
$NL -q create name=k1 members=$NODE channels=7 uuid=aaaaaaaa-0000-0000-0000-0000000000b1 || fail "create"
$CHANOPEN $DEV/channel7 kapi | grep -q "kapi channel=7 partition=$FABRIC_PART domain=" ||
	fail "resolve: $($CHANOPEN $DEV/channel7 kapi)"
uuid=$($NL domain name=k1 | sed 's/.* uuid=\([^ ]*\) .*/\1/')
$CHANOPEN $DEV/channel7 kapi | grep -q "domain=$uuid" || fail "resolved to the wrong domain"
$CHANOPEN /dev/null kapi | grep -q "kapi errno=EINVAL" || fail "a non-channel file was resolved"
$CHANOPEN $DEV/channel7 kapi-badfd | grep -q "kapi errno=EBADF" || fail "a bad fd was resolved"
# A held channel does not resolve while its domain is DOWN (no manager):
# a driver must not map through it then, as open() refuses it (ENOLINK).
rm -f /tmp/kapi-down
$CHANOPEN $DEV/channel7 wait-file /tmp/kapi-down kapi > "$IMEX_VM_OUT/kapi-down.log" 2>&1 &
held=$!
wait_for 5 grep -q '^open' "$IMEX_VM_OUT/kapi-down.log"
serve_stop
touch /tmp/kapi-down
wait $held || fail "holder: $(cat "$IMEX_VM_OUT/kapi-down.log")"
grep -q "kapi errno=ENOLINK" "$IMEX_VM_OUT/kapi-down.log" ||
	fail "a channel of a DOWN domain resolved: $(cat "$IMEX_VM_OUT/kapi-down.log")"
serve_start
$CHANOPEN $DEV/channel7 kapi | grep -q "kapi channel=7 " || fail "not resolved once READY again"
$CHANOPEN $DEV/channel7 wait-revoke 30000 kapi > "$IMEX_VM_OUT/kapi-revoke.log" 2>&1 &
holder=$!
wait_for 5 grep -q '^open' "$IMEX_VM_OUT/kapi-revoke.log"
$NL -q delete name=k1 || fail "delete"
wait $holder || fail "holder: $(cat "$IMEX_VM_OUT/kapi-revoke.log")"
grep -q "kapi errno=ENODEV" "$IMEX_VM_OUT/kapi-revoke.log" || fail "a revoked channel resolved: $(cat "$IMEX_VM_OUT/kapi-revoke.log")"
# imex.ko cannot go while a module that uses its API is loaded.
if modprobe -r imex 2>/dev/null; then fail "imex unloaded under its API user"; fi
rmmod imex_kapi_test || fail "rmmod imex_kapi_test"
