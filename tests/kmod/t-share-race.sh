# Importers, unexporters and a manager that comes and goes, all at once, for
# a bounded number of manager lives: afterwards nothing is left behind and
# the module unloads without a kernel report.
. tests/vm/lib.sh
. tests/kmod/common.sh
. tests/kmod/share-lib.sh
LIVES=5

$NL -q node-set node_uuid=$NODEU || fail "node-set"
serve_start
$NL -q create name=da members=$NODE channels=1,2 || fail "create da"
$SHARE -c 1 export --desc held --hold --handle-file "$OUT/h" > /dev/null 2>&1 &
holder=$!
wait_for 20 test -s "$OUT/h"
L=$(cat "$OUT/h")
R=$FOREIGN:$(cut -d: -f2 "$OUT/h")
rm -f "$OUT/stop"

# Each worker loops until the stop file appears; every step is bounded.
worker() {
	while [ ! -e "$OUT/stop" ]; do "$@" > /dev/null 2>&1; done
}
worker $SHARE -c 1 import "$L" --repeat 50 --threads 2 &
w1=$!
worker $SHARE -c 1 import "$R" --repeat 20 --threads 2 --timeout 2000 &
w2=$!
worker $SHARE -c 1 export --count 16 &
w3=$!
worker $SHARE -c 1 import "$R" --timeout 2000 --wait-revoke 3 &
w4=$!
worker $SHARE -c 2 import "$L" --expect EPERM &
w5=$!

i=0
while [ $i -lt $LIVES ]; do
	serve_stop
	serve_start
	# Each life serves at least one remote import before it is killed.
	wait_for 60 grep -q "import done" "$OUT/serve.log"
	i=$((i + 1))
done
serve_stop
touch "$OUT/stop"
wait $w1 $w2 $w3 $w4 $w5
kill -TERM $holder
wait $holder
wait_for 20 sh -c "[ \"\$($NL node-get | sed -n 's/.* exports=\([0-9]*\) imports=\([0-9]*\).*/\1 \2/p')\" = '0 0' ]" ||
	fail "left behind: $(counts)"
t_ok "$LIVES manager lives under load, nothing left behind"

modprobe -r imex || fail "imex does not unload: $(modprobe -r imex 2>&1)"
# The harness's own list: a bare "kmemleak" would match its boot banner.
if dmesg | grep -E -e "$(grep -v -e '^#' -e '^$' tests/vm/dmesg-patterns)"; then
	fail "the kernel reported a problem"
fi
t_ok "unloaded with no kernel report"
t_done
