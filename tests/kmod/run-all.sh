#!/bin/sh
# Guest side of the kernel tier: run each tests/kmod/t-*.sh (or the ones
# named) against a freshly loaded imex.ko and report "N passed, N failed".
cd "$(dirname "$0")/../.." || exit 2
. tests/vm/lib.sh
. tests/kmod/common.sh

tests=${*:-$(ls tests/kmod/t-*.sh)}
for t in $tests; do
	name=$(basename "$t" .sh)
	imex_unload
	imex_load $IMEX_TEST_PARAMS
	start=$(cut -d' ' -f1 /proc/uptime)
	if sh "$t" > "$IMEX_VM_OUT/$name.log" 2>&1; then
		t_ok "$name ($(awk -v s="$start" '{ printf "%.1f", $1 - s }' /proc/uptime)s)"
		# A test that cannot run on this kernel says so.
		sed -n 's/^skipped:/    &/p' "$IMEX_VM_OUT/$name.log"
	else
		sed 's/^/    /' "$IMEX_VM_OUT/$name.log"
		t_fail "$name"
	fi
	pkill -9 -f 'tests/kmod/imex-nl' 2>/dev/null
	pkill -9 -f 'tests/kmod/chanopen' 2>/dev/null
done
t_done
