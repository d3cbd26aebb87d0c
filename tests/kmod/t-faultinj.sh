# Error paths under fault injection (debug kernel: CONFIG_FAILSLAB,
# CONFIG_FAULT_INJECTION_USERCOPY).  Each operation runs once plainly (the
# reference), then again and again with the Nth fault site of its system
# call failed (/proc/thread-self/fail-nth: the Nth slab allocation or user
# copy of that thread), N = 1, 2, ... until a run no longer reaches the
# armed fault.  Every run must succeed, or fail with ENOMEM (EFAULT for a
# failed copy) and leave the node exactly as before; a reply lost on the
# way back (the kernel acted, the caller cannot know) must leave the state
# of a success.  Any kernel report fails the VM run, and its kmemleak scan
# at the end catches what an error path leaked.
. tests/vm/lib.sh
. tests/kmod/common.sh
. tests/kmod/share-lib.sh

DBG=/sys/kernel/debug
if [ ! -w $DBG/failslab/ignore-gfp-wait ] || [ ! -e /proc/thread-self/fail-nth ]; then
	echo "skipped: no failslab (needs CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS: make check-debug)"
	exit 0
fi

# failslab skips GFP_KERNEL allocations unless told otherwise; page
# allocations stay out of the count (min-order above any order): slab
# refills would make the Nth site depend on the slab's state.
restore() {
	echo Y > $DBG/failslab/ignore-gfp-wait
	echo 1 > $DBG/fail_page_alloc/min-order
}
knobs() {
	echo N > $DBG/failslab/ignore-gfp-wait
	echo 11 > $DBG/fail_page_alloc/min-order
	# One line per injected fault in dmesg.txt (2 would add a stack, on
	# the slow serial console).
	echo 1 > $DBG/failslab/verbose
	echo 1 > $DBG/fail_usercopy/verbose
}
trap restore EXIT

MAXN=400	# a bound on the sweep of one ioctl

# outcome WHAT N FILE: set $inj (1: the fault was used) and $res (the
# result) from the armed step's line in FILE.
outcome() {
	o=$(sed -n 's/^faultinj injected=\([01]\) result=\(.*\)$/\1 \2/p' "$3" | head -n 1)
	[ -n "$o" ] || fail "$1 nth=$2: no outcome: $(cat "$3")"
	inj=${o%% *} res=${o#* }
}

# sweep_mgr WHAT SETUP OP: the manager runs SETUP, then OP with each of
# its fault sites failed in turn, all in one imex-nl process (it checks
# the state itself; see --sweep in imex-nl-sweep.c).
sweep_mgr() {
	printf '%s\n' "$2" "$3" | sed '/^$/d' > "$OUT/fi-script"
	$NL --sweep "$1" -f "$OUT/fi-script" > "$OUT/fi-out" 2>&1 ||
		fail "$(cat "$OUT/fi-out")"
	t_ok "$(cat "$OUT/fi-out")"
}

# Each sweep in a subshell: one that fails is reported, the next still runs.
failed=0
run() {
	knobs
	( "$@" ) || { echo "FAIL: $2" >&2; failed=1; }
}

UUID1=cccccccc-0000-0000-0000-000000000001
# The manager's atomic domain-set: everything checked and allocated before
# anything changes (create; replace dropping, keeping with a new owner and
# adding channels while the members change; ids sharing an owner), remove.
SET="set name=fi uuid=$UUID1 fabric=$FABRIC members=$NODE gen=1 channels=1,2"
run sweep_mgr "domain-set create" "" "$SET"
run sweep_mgr "domain-set replace" "$SET" "set name=fi uuid=$UUID1 fabric=$FABRIC members=$NODE,peer gen=2 channels=2,3 uid=7 gid=8 mode=0640"
run sweep_mgr "domain-set ids" "$SET" "set name=fi uuid=$UUID1 fabric=$FABRIC members=$NODE gen=2 channels=1 ids=2-4 ids_uid=5 ids_mode=0660"
run sweep_mgr "domain-remove" "$SET" "remove name=fi"
run sweep_mgr "channel-set" "$SET" "channel-set id=1 uid=7 gid=8 mode=0640"

# The request path: a client's request queued for the manager stand-in.
$NL -q node-set node_uuid=$NODEU || fail "node-set"
serve_start
# sweep_client WHAT SETUP OP: the same as a client of the stand-in.
sweep_client() {
	printf '%s\n' "$2" "$3" | sed '/^$/d' > "$OUT/fi-script"
	$NL --sweep-client "$1" -f "$OUT/fi-script" > "$OUT/fi-out" 2>&1 ||
		fail "$(cat "$OUT/fi-out")"
	t_ok "$(cat "$OUT/fi-out")"
}
run sweep_client "request create" "" "create name=fr members=$NODE channels=5,6 uuid=$UUID1"
run sweep_client "request delete" "create name=fr members=$NODE channels=5,6 uuid=$UUID1" "delete name=fr"

# Export and import through a channel fd of a domain the stand-in made.
$NL -q create name=fx members=$NODE channels=1 uuid=$UUID1 || fail "create fx"
# sweep_fd WHAT STEP...: chanopen runs STEP with its Nth fault site
# failed, then holds the fd until told while the export and import counts
# are compared: one more on success, none on ENOMEM or EFAULT.
sweep_fd() {
	what=$1 n=0 hits=0
	shift
	counts > "$OUT/fi-counts0"
	while [ $n -le $MAXN ]; do
		wait_for 20 sh -c "[ \"\$($NL node-get | sed -n 's/.* exports=\([0-9]*\) imports=\([0-9]*\).*/\1 \2/p')\" = '$(cat "$OUT/fi-counts0")' ]"
		rm -f "$OUT/fi-go"
		$CHANOPEN $DEV/channel1 fail-nth $n "$@" wait-file "$OUT/fi-go" > "$OUT/fi-out" 2>&1 &
		pid=$!
		wait_for 30 grep -Eq '^(export|import) ' "$OUT/fi-out"
		counts > "$OUT/fi-after"
		touch "$OUT/fi-go"
		wait $pid || fail "$what nth=$n: $(cat "$OUT/fi-out")"
		if [ $n = 0 ]; then
			grep -Eq '^(export handle=|import errno=OK)' "$OUT/fi-out" ||
				fail "$what: $(cat "$OUT/fi-out")"
			cp "$OUT/fi-after" "$OUT/fi-ref"
			n=1
			continue
		fi
		outcome "$what" $n "$OUT/fi-out"
		[ "$inj" = 1 ] || { [ "$res" = OK ] && cmp -s "$OUT/fi-after" "$OUT/fi-ref"; } ||
			fail "$what: a run past the last fault site did not succeed: $res"
		[ "$inj" = 1 ] || break
		hits=$((hits + 1))
		case $res in
		OK) cmp -s "$OUT/fi-after" "$OUT/fi-ref" ||
			fail "$what nth=$n: succeeded, but counts $(cat "$OUT/fi-after"), not $(cat "$OUT/fi-ref")" ;;
		ENOMEM|EFAULT) cmp -s "$OUT/fi-after" "$OUT/fi-counts0" ||
			fail "$what nth=$n: $res, but counts $(cat "$OUT/fi-after"), not $(cat "$OUT/fi-counts0")" ;;
		*) fail "$what nth=$n: failed with $res, not ENOMEM; faults: $(dmesg | grep -A1 FAULT_INJECTION | tail -n 2)" ;;
		esac
		n=$((n + 1))
	done
	[ $n -le $MAXN ] || fail "$what: still reaching faults after $MAXN"
	t_ok "sweep $what: $hits fault sites, each failed cleanly"
}
run sweep_fd "export" export fi-desc
# An export held by another fd (until killed: the sweeps outlast
# wait-file's bound), imported locally and through the manager.
$CHANOPEN $DEV/channel1 export held-desc hold > "$OUT/fi-exp" 2>&1 &
exporter=$!
wait_for 20 grep -q '^export handle=' "$OUT/fi-exp"
h=$(sed -n 's/^export handle=//p' "$OUT/fi-exp")
run sweep_fd "import local" import "$h"
run sweep_fd "import remote" import "$FOREIGN:${h#*:}"
kill $exporter
wait $exporter 2>/dev/null
serve_stop
exit $failed
