# Remote imports through the manager when it does not answer, is
# interrupted, dies, or revokes; export ends queued for it; the per-fd bounds.
. tests/vm/lib.sh
. tests/kmod/common.sh
. tests/kmod/share-lib.sh
UA=aaaaaaaa-0000-0000-0000-0000000000a1

serve_mode() { # MODE: restart the stand-in with that import mode
	serve_stop
	serve_start import=$1
}

$NL -q node-set node_uuid=$NODEU || fail "node-set"
serve_start
$NL -q create name=da members=$NODE channels=1,2 uuid=$UA || fail "create da"
$SHARE -c 1 export --desc one --hold --handle-file "$OUT/h1" > /dev/null 2>&1 &
exp1=$!
wait_for 20 test -s "$OUT/h1"
ID=$(cut -d: -f2 "$OUT/h1")
R=$FOREIGN:$ID

# No manager: ESRCH at once (on an fd opened while the domain was usable).
$CHANOPEN $DEV/channel1 wait-file "$OUT/go" import $R > "$OUT/esrch.log" 2>&1 &
opener=$!
wait_for 20 grep -q '^open' "$OUT/esrch.log"
serve_stop
touch "$OUT/go"
wait $opener || fail "$(cat "$OUT/esrch.log")"
grep -qx "import errno=ESRCH" "$OUT/esrch.log" || fail "no manager: $(cat "$OUT/esrch.log")"
# A manager that never accepts, or accepts and never answers: ETIMEDOUT.
serve_start import=never
$SHARE -c 1 import $R --timeout 300 --expect ETIMEDOUT > /dev/null || fail "never: not ETIMEDOUT"
serve_mode hold
$SHARE -c 1 import $R --timeout 300 --expect ETIMEDOUT > /dev/null || fail "hold: not ETIMEDOUT"
expect_counts 1 0
t_ok "no manager, no answer"

# SIGINT during the wait: EINTR, and nothing stays behind.
$SHARE -c 1 import $R --timeout 60000 --expect EINTR > "$OUT/intr.log" 2>&1 &
imp=$!
wait_for 20 sh -c "grep -c 'import accepted' '$OUT/serve.log' | grep -qx 2"
kill -INT $imp
wait $imp || fail "interrupted import: $(cat "$OUT/intr.log")"
grep -qx "import: EINTR" "$OUT/intr.log" || fail "$(cat "$OUT/intr.log")"
expect_counts 1 0
# Its late answer finds nobody waiting.
serve_stop
$NL -f - <<SCRIPT || fail "late done"
attach
!ENOENT import-done import_id=3 istatus=0 desc=late
msg is not waiting
!EINVAL import-done import_id=3 istatus=0
msg needs its descriptor
!EINVAL import-done import_id=3 istatus=512
!ENOENT import-accept
SCRIPT
t_ok "interrupted import"

# The manager dies mid-import: the waiter gets ENOTCONN, held remote
# imports are revoked (daemon-lost), local ones stay.
serve_start
$SHARE -c 1 import $R --wait-revoke 60 > "$OUT/remote.log" 2>&1 &
remote=$!
$SHARE -c 1 import "$(cat "$OUT/h1")" --wait-revoke 60 > "$OUT/local.log" 2>&1 &
local=$!
wait_for 20 grep -q one "$OUT/remote.log"
wait_for 20 grep -q one "$OUT/local.log"
expect_counts 1 2
serve_mode die
$SHARE -c 1 import $R --expect ENOTCONN > "$OUT/notconn.log" 2>&1 || fail "died: $(cat "$OUT/notconn.log")"
wait $remote || fail "remote import not revoked: $(cat "$OUT/remote.log")"
grep -q "^revoked $R reason daemon-lost" "$OUT/remote.log" || fail "$(cat "$OUT/remote.log")"
expect_counts 1 1
kill $local; wait $local
expect_counts 1 0
t_ok "manager lost mid-import"

# A manager by hand: check, done, revoke by node, export ends queued.
$NL -f - > "$OUT/manager.log" 2>&1 <<SCRIPT || fail "manager by hand: $(cat "$OUT/manager.log")"
attach
!ENOLINK import-check handle_id=$ID uuid=$UA chan=1 member=$NODE
msg domain is down
status name=da state=ready
sh $SHARE -c 1 import $R --wait-revoke 60 > $OUT/byhand.log 2>&1 &
import-accept wait=20000
!EPERM import-check handle_id=$ID uuid=$UA chan=2 member=$NODE
msg another domain or channel
!ENOENT import-check handle_id=999999 uuid=$UA chan=1 member=$NODE
!EINVAL import-check handle_id=$ID uuid=$UA chan=1
!EXDEV import-check handle_id=$ID uuid=$UA chan=1 member=peer
msg not a member
import-check handle_id=$ID uuid=$UA chan=1 member=$NODE
import-done import_id=6 istatus=0 desc=by-hand
sh i=0; until grep -q by-hand $OUT/byhand.log; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
!ENOENT export-del-accept
msg no export end
import-revoke handle_node=$FOREIGN handle_id=1234 reason=1
import-revoke handle_node=$FOREIGN reason=1
sh $SHARE -c 1 import $R --expect EHOSTUNREACH > $OUT/unreach.log 2>&1 &
import-accept wait=20000
import-revoke handle_node=$FOREIGN reason=2
sh kill -TERM $exp1
sh i=0; until $NL node-get | grep -q ' exports=0 '; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
export-del-accept
!ENOENT export-del-accept
SCRIPT
grep -q "cmd=28 desc=one" "$OUT/manager.log" || fail "check did not return the descriptor: $(cat "$OUT/manager.log")"
[ "$(grep -c ' imports=' "$OUT/manager.log")" = 3 ] || fail "revoke replies: $(cat "$OUT/manager.log")"
grep -q " imports=0$" "$OUT/manager.log" && grep -q " imports=1$" "$OUT/manager.log" || fail "revoke counts: $(cat "$OUT/manager.log")"
grep -q "handle_id=$ID channel=1\|channel=1.*handle_id=$ID" "$OUT/manager.log" || fail "no export end: $(cat "$OUT/manager.log")"
wait_for 20 grep -q "^revoked $R reason node-lost" "$OUT/byhand.log"
wait_for 20 grep -qx "import: EHOSTUNREACH" "$OUT/unreach.log"
wait $exp1
expect_counts 0 0
t_ok "manager commands: check, done, revoke, export ends"

# Bounds per fd (per domain: t-share-limits.sh).
serve_start
if $SHARE -c 1 export --count 1025 > /dev/null 2> "$OUT/b1.log"; then fail "1025 exports on one fd"; fi
grep -q "export 1025 of 1025.*(ENOBUFS)" "$OUT/b1.log" || fail "$(cat "$OUT/b1.log")"
expect_counts 0 0
# Imports per fd: 4096 held, the 4097th refused.
pids=
for i in 0 1 2 3 4; do
	$SHARE -c 2 export --count 1024 --hold --handle-file "$OUT/m$i" > /dev/null 2>&1 &
	pids="$pids $!"
done
wait_for 120 sh -c "[ \$(cat $OUT/m[0-9]* 2>/dev/null | wc -l) = 5120 ]"
cat "$OUT"/m[0-9]* | head -4097 > "$OUT/many"
$CHANOPEN $DEV/channel2 import-all "$OUT/many" > "$OUT/b3.log" 2>&1
grep -qx "imported 4096 ENOBUFS" "$OUT/b3.log" || fail "$(cat "$OUT/b3.log")"
kill -TERM $pids
wait $pids
expect_counts 0 0
t_ok "bounds"
t_done
