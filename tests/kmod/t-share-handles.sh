# Export handle ids are not reused across module loads: with the same node
# UUID, a handle from an earlier load names no export of a later one.
. tests/vm/lib.sh
. tests/kmod/common.sh
. tests/kmod/share-lib.sh
UA=aaaaaaaa-0000-0000-0000-0000000000a1

setup() { # node UUID, manager stand-in, domain da with channel 1
	$NL -q node-set node_uuid=$NODEU || fail "node-set"
	serve_start
	$NL -q create name=da members=$NODE channels=1 uuid=$UA || fail "create da"
}

setup
$SHARE -c 1 export --desc first --handle-file "$OUT/reload1" > /dev/null || fail "first export"
serve_stop
imex_unload
imex_load $IMEX_TEST_PARAMS
setup
$SHARE -c 1 export --desc second --hold --handle-file "$OUT/reload2" > /dev/null 2>&1 &
exp=$!
trap 'kill -TERM $exp 2>/dev/null' EXIT
wait_for 20 test -s "$OUT/reload2"
[ "$(cut -d: -f1 "$OUT/reload1")" = "$(cut -d: -f1 "$OUT/reload2")" ] ||
	fail "node UUID changed: $(cat "$OUT/reload1") $(cat "$OUT/reload2")"
[ "$(cat "$OUT/reload1")" != "$(cat "$OUT/reload2")" ] ||
	fail "the reload made export $(cat "$OUT/reload2") again"
$SHARE -c 1 import "$(cat "$OUT/reload1")" --expect ENOENT > "$OUT/old.log" 2>&1 ||
	fail "the first load's handle $(cat "$OUT/reload1") reaches: $(cat "$OUT/old.log")"
kill -TERM $exp
wait $exp
expect_counts 0 0
t_ok "a handle of an earlier load names nothing"
t_done
