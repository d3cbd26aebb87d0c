# Export and import through channels on one node: the (domain, channel)
# matrix decided locally and through the manager's upcall, revocation on
# unexport and close, bad arguments, the in-kernel API.
. tests/vm/lib.sh
. tests/kmod/common.sh
. tests/kmod/share-lib.sh


$NL -q node-set node_uuid=$NODEU || fail "node-set"
serve_start
$NL -q create name=da members=$NODE channels=1,2 uuid=aaaaaaaa-0000-0000-0000-0000000000a1 || fail "create da"
$NL -q create name=db members=$NODE channels=3,4 uuid=aaaaaaaa-0000-0000-0000-0000000000b1 || fail "create db"
expect_counts 0 0

# One exporter per channel, holding its export.
for c in 1 2 3 4; do
	$SHARE -c $c export --desc "desc-of-$c" --hold --handle-file "$OUT/h$c" > "$OUT/exp$c.log" 2>&1 &
	eval "exp$c=\$!"
done
for c in 1 2 3 4; do wait_for 20 test -s "$OUT/h$c"; done
grep -qx "$NODEU:[0-9]*" "$OUT/h1" || fail "handle format: $(cat "$OUT/h1")"
cmp -s "$OUT/h1" "$OUT/exp1.log" || fail "stdout and --handle-file differ"
expect_counts 4 0

# matrix NODE_UUID: every export imported from every channel.
matrix() {
	for e in 1 2 3 4; do
		h=$1:$(cut -d: -f2 "$OUT/h$e")
		for i in 1 2 3 4; do
			if [ $e = $i ]; then
				d=$($SHARE -c $i import "$h") || fail "import $h on channel $i"
				[ "$d" = "desc-of-$e" ] || fail "import $h on channel $i: got '$d'"
			else
				$SHARE -c $i import "$h" --expect EPERM > /dev/null ||
					fail "import of channel $e's export on channel $i was not EPERM"
			fi
		done
	done
	$SHARE -c 1 import "$1:999999" --expect ENOENT > /dev/null || fail "unknown id not ENOENT"
}

matrix $NODEU
t_ok "local matrix"
# Failure output names the handle, the error and its name.
if $SHARE -c 2 import "$(cat "$OUT/h1")" 2> "$OUT/err.log"; then fail "EPERM import succeeded"; fi
grep -q "^imex-share: import $(cat "$OUT/h1"): Operation not permitted (EPERM)$" "$OUT/err.log" ||
	fail "error line: $(cat "$OUT/err.log")"

# The same handles under another node's UUID go through the upcall.
matrix $FOREIGN
grep -q "import done" "$OUT/serve.log" || fail "the stand-in saw no import"
expect_counts 4 0
t_ok "remote matrix through the manager"

# Re-import holds once; unimport drops it.
$SHARE -c 1 import "$(cat "$OUT/h1")" --repeat 5 | grep -q "^5 imports, 0 errors" || fail "repeat"
expect_counts 4 0

# Unexport (close of the exporter) revokes a local importer.
$SHARE -c 1 import "$(cat "$OUT/h1")" --wait-revoke 30 > "$OUT/rev1.log" 2>&1 &
imp=$!
wait_for 10 grep -q desc-of-1 "$OUT/rev1.log"
expect_counts 4 1
kill -TERM $exp1
wait $exp1 || fail "exporter with --hold did not exit 0 on SIGTERM"
wait $imp || fail "importer not revoked: $(cat "$OUT/rev1.log")"
grep -q "^revoked $(cat "$OUT/h1") reason unexported after [0-9]* ms$" "$OUT/rev1.log" ||
	fail "revocation line: $(cat "$OUT/rev1.log")"
expect_counts 3 0
$SHARE -c 1 import "$(cat "$OUT/h1")" --expect ENOENT > /dev/null || fail "an ended export still imports"
t_ok "close of the exporter revokes the importer"

# Channel revocation: the exports of channel 3 end, its importers see the fd go.
$SHARE -c 3 import "$(cat "$OUT/h3")" --wait-revoke 30 > "$OUT/rev3.log" 2>&1 &
imp=$!
wait_for 10 grep -q desc-of-3 "$OUT/rev3.log"
$NL -q free name=db channels=3 || fail "free channel 3"
wait $imp || fail "importer on a freed channel: $(cat "$OUT/rev3.log")"
grep -q "reason channel-gone" "$OUT/rev3.log" || fail "$(cat "$OUT/rev3.log")"
kill -TERM $exp3
wait $exp3
expect_counts 2 0
t_ok "channel revocation ends exports and imports"

# Bad arguments change nothing; the in-kernel API does what the ioctls do.
$CHANOPEN $DEV/channel2 badargs > "$OUT/bad.log" 2>&1 || fail "$(cat "$OUT/bad.log")"
expect_counts 2 0
insmod tests/kmod/kapi/imex_kapi_test.ko || fail "insmod imex_kapi_test"
$CHANOPEN $DEV/channel2 kapi-xfer > "$OUT/kx.log" 2>&1
rmmod imex_kapi_test
grep -qx "kapi-xfer ok" "$OUT/kx.log" || fail "$(cat "$OUT/kx.log")"
expect_counts 2 0
t_ok "bad arguments and the in-kernel API"

# Manager-only commands, refused to others with a message.
$NL -f - <<SCRIPT || fail "netlink refusals"
!EACCES import-accept
msg only the attached manager
!EACCES import-check handle_id=1 uuid=aaaaaaaa-0000-0000-0000-0000000000a1 chan=1 member=x
!EACCES import-revoke handle_node=$FOREIGN reason=1
!EACCES export-del-accept
!EACCES import-done import_id=1 istatus=0 desc=x
!ERANGE import-revoke handle_node=$FOREIGN reason=9
!ERANGE import-done import_id=1 istatus=0 a=38:bin:
!ERANGE import-revoke a=36:bin:0011 reason=1
SCRIPT

kill -TERM $exp2 $exp4
wait $exp2 $exp4
expect_counts 0 0
t_done
