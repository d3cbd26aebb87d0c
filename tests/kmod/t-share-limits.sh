# Exports, imports and pending remote imports are bounded per domain: one
# domain at each bound gets ENOBUFS, another domain on the node does not.
. tests/vm/lib.sh
. tests/kmod/common.sh
. tests/kmod/share-lib.sh
UA=aaaaaaaa-0000-0000-0000-0000000000a1
UB=aaaaaaaa-0000-0000-0000-0000000000b1
# IMEX_EXPORTS_PER_DOMAIN, IMEX_IMPORTS_PER_DOMAIN,
# IMEX_IMPORTS_PENDING_PER_DOMAIN; per fd: IMEX_EXPORTS_PER_FD,
# IMEX_IMPORTS_PER_FD.
EXPORTS=16384 IMPORTS=16384 PENDING=256 FD_EXPORTS=1024 FD_IMPORTS=4096
# More than the old node-wide bounds (65536) need, so a node-wide bound
# shows as one domain starving the other.
MAX_FDS=65
pids= pa=
trap 'kill -TERM $pids $pa 2>/dev/null' EXIT

$NL -q node-set node_uuid=$NODEU || fail "node-set"
serve_start
$NL -q create name=da members=$NODE channels=1 uuid=$UA || fail "create da"
$NL -q create name=db members=$NODE channels=2 uuid=$UB || fail "create db"

# export_fill CHAN TAG: holders of FD_EXPORTS exports each, started one
# after another until one is refused or MAX_FDS hold theirs; sets $held
# (exports held) and $pids.
export_fill() {
	n=0 held=0
	while [ $n -lt $MAX_FDS ]; do
		$SHARE -c "$1" export --count $FD_EXPORTS --hold \
			--handle-file "$OUT/$2$n" > /dev/null 2> "$OUT/$2$n.err" &
		pids="$pids $!"
		wait_for 60 sh -c "test -s '$OUT/$2$n' || test -s '$OUT/$2$n.err'"
		test -s "$OUT/$2$n" || break
		held=$((held + FD_EXPORTS))
		n=$((n + 1))
	done
}

# import_fill CHAN TAG FILE...: fds importing one FILE each (cycled), one
# after another until one is refused or MAX_FDS hold theirs; sets $held.
import_fill() {
	chan=$1 tag=$2 n=0 held=0
	shift 2
	while [ $n -lt $MAX_FDS ]; do
		f=$(eval echo "\${$((n % $# + 1))}")
		$CHANOPEN $DEV/channel$chan import-all "$f" hold > "$OUT/$tag$n.log" 2>&1 &
		pids="$pids $!"
		wait_for 60 grep -q '^imported' "$OUT/$tag$n.log"
		held=$((held + $(sed -n 's/^imported \([0-9]*\) .*/\1/p' "$OUT/$tag$n.log")))
		grep -qx "imported $FD_IMPORTS OK" "$OUT/$tag$n.log" || break
		n=$((n + 1))
	done
}

release() { # end every holder started so far
	kill -TERM $pids 2>/dev/null
	wait $pids 2>/dev/null
	pids=
	expect_counts 0 0
}

# Exports: da fills its bound; db can still export.
export_fill 1 ea
a_held=$held
grep -q "export 1 of $FD_EXPORTS.*(ENOBUFS)" "$OUT/ea$n.err" 2>/dev/null ||
	fail "da's export past $a_held: $(cat "$OUT/ea$n.err" 2>/dev/null)"
if $SHARE -c 2 export > /dev/null 2> "$OUT/eb.err"; then b=OK; else b=$(cat "$OUT/eb.err"); fi
[ "$a_held" = $EXPORTS ] && [ "$b" = OK ] ||
	fail "domain da holds $a_held exports (bound $EXPORTS); then db's export: $b"
release
t_ok "exports: one domain at its bound, the other exports"

# Imports: da holds its bound of imports of its own exports; db can still
# import.  da exports exactly its bound, on fds of FD_EXPORTS each.
i=0
while [ $i -lt $((EXPORTS / FD_EXPORTS)) ]; do
	$SHARE -c 1 export --count $FD_EXPORTS --hold --handle-file "$OUT/ia$i" > /dev/null 2>&1 &
	pids="$pids $!"
	i=$((i + 1))
done
$SHARE -c 2 export --desc bee --hold --handle-file "$OUT/ib" > /dev/null 2>&1 &
pids="$pids $!"
wait_for 120 sh -c "[ \$(cat $OUT/ia[0-9]* $OUT/ib 2>/dev/null | wc -l) = $((EXPORTS + 1)) ]"
cat "$OUT"/ia[0-9]* | split -l $FD_IMPORTS -d -a 2 - "$OUT/iahandles"
import_fill 1 ima "$OUT"/iahandles[0-9][0-9]
a_held=$held
grep -qx "imported 0 ENOBUFS" "$OUT/ima$n.log" 2>/dev/null ||
	fail "da's import past $a_held: $(cat "$OUT/ima$n.log" 2>/dev/null)"
b=$($CHANOPEN $DEV/channel2 import "$(cat "$OUT/ib")" 2>&1 | sed -n 's/^import errno=//p')
[ "$a_held" = $IMPORTS ] && [ "$b" = OK ] ||
	fail "domain da holds $a_held imports (bound $IMPORTS); then db's import: $b"
release
t_ok "imports: one domain at its bound, the other imports"

# Pending remote imports: a manager that accepts and never answers holds
# PENDING of da's; da's next is refused, db's still reaches the manager (and
# times out unanswered).  Once da's waiters are gone, da's next is queued.
serve_stop
serve_start import=hold
R=$FOREIGN:1234
$SHARE -c 1 import $R --repeat 1 --threads $PENDING --timeout 100000 > "$OUT/pa.log" 2>&1 &
pa=$!
wait_for 60 sh -c "[ \$(grep -c 'import accepted' '$OUT/serve.log') = $PENDING ]"
$SHARE -c 1 import $R --timeout 1000 --expect ENOBUFS > "$OUT/pa1.log" 2>&1
a=$(sed -n 's/^import: //p' "$OUT/pa1.log")
$SHARE -c 2 import $R --timeout 1000 --expect ETIMEDOUT > "$OUT/pb.log" 2>&1
b=$(sed -n 's/^import: //p' "$OUT/pb.log")
[ "$a" = ENOBUFS ] && [ "$b" = ETIMEDOUT ] ||
	fail "with da's $PENDING remote imports pending, da's next: $a (not ENOBUFS), db's: $b (not ETIMEDOUT)"
[ "$(grep -c 'import accepted' "$OUT/serve.log")" = $((PENDING + 1)) ] ||
	fail "the manager saw $(grep -c 'import accepted' "$OUT/serve.log") imports, not $((PENDING + 1))"
kill -TERM $pa
wait $pa
$SHARE -c 1 import $R --timeout 300 --expect ETIMEDOUT > /dev/null ||
	fail "da's remote import after its waiters ended: not queued"
expect_counts 0 0
t_ok "pending remote imports: one domain at its bound, the other's upcall"

# Deleting da revokes its channel: a remote import still waiting fails at
# once with ENODEV, and nothing charged to da outlives it.
$SHARE -c 1 import $R --timeout 60000 --expect ENODEV > "$OUT/pr.log" 2>&1 &
pa=$!
wait_for 20 sh -c "[ \$(grep -c 'import accepted' '$OUT/serve.log') = $((PENDING + 3)) ]"
$NL -q delete name=da || fail "delete da"
wait $pa || fail "waiting import on a deleted domain: $(cat "$OUT/pr.log")"
pa=
t_ok "a revoked channel's waiting import ends with ENODEV"
t_done
