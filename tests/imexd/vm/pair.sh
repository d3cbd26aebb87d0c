#!/bin/bash
# Two VMs on one vde_switch, each with imex.ko and imexd: a domain with both
# members is created, grown from the other side, survives one daemon's
# kill -9 and restart, and is deleted (tests/imexd/vm/pair-guest.sh); a
# hostile peer (tests/imexd/vm/hostile.c) is refused on both sides without
# disturbing it.
# Run on the host after `make kmod` and `make -C imexd`:
#   tests/imexd/vm/pair.sh [--tls]
# --tls: the daemons talk mutual TLS 1.3 (certificates made for the run).
# IMEXD=PATH (relative to the repo) runs another imexd build, e.g. one with
# -fsanitize=address.
# Prints "N passed, N failed"; exit 1 if anything failed.
set -u
tls=0
[ "${1:-}" = --tls ] && tls=1
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../../.." && pwd -P)
run=$repo/tests/vm/run.sh
params="fabric_uuid=11111111-2222-3333-4444-555555555555 fabric_partition=7"
out=$repo/build/vm/runs/imexd-pair-$(date +%Y%m%d-%H%M%S)-$$
sw=$(mktemp -d "${TMPDIR:-/tmp}/imexd-pair-sw.XXXXXX")
sw_pid=""

command -v vde_switch >/dev/null || { echo "pair.sh: vde_switch not found (install vde2)" >&2; exit 2; }
[ -x "$repo/${IMEXD:-imexd/imexd}" ] || { echo "pair.sh: build imexd first (make -C imexd)" >&2; exit 2; }
[ -x "$repo/tools/imex-share/imex-share" ] || { echo "pair.sh: build the tools first (make -C tools)" >&2; exit 2; }
# The hostile peer of pair-guest.sh (hostile_a, hostile_b).
make -s -C "$here" hostile >/dev/null || { echo "pair.sh: cannot build $here/hostile" >&2; exit 2; }
cleanup() {
	[ -z "$sw_pid" ] || kill "$sw_pid" 2>/dev/null
	[ -d "$out/b" ] && touch "$out/b/done"
	rm -rf "$sw"
}
trap cleanup EXIT
mkdir -p "$out/a" "$out/b"
certs=""
if [ "$tls" = 1 ]; then
	# Under the repo: the guests see the host's root read-only.
	certs=$out/certs
	"$repo/tests/imexd/net/gen-certs.sh" "$certs" || { echo "pair.sh: cannot make certificates" >&2; exit 2; }
fi
vde_switch -d -s "$sw/ctl" -p "$sw/pid" >"$sw/log" 2>&1 ||
	{ echo "pair.sh: vde_switch failed: $(cat "$sw/log")" >&2; exit 2; }
# It writes its pid file and socket after it has detached.
for _ in $(seq 50); do
	[ -s "$sw/pid" ] && [ -S "$sw/ctl/ctl" ] && break
	sleep 0.1
done
sw_pid=$(cat "$sw/pid" 2>/dev/null) || { echo "pair.sh: vde_switch did not start" >&2; exit 2; }

"$run" --quiet --timeout 600 --vde "$sw/ctl" --ip 192.0.2.2/24 --hostname vm-b \
	--module-args "$params" --out "$out/b" -- env IMEXD="${IMEXD:-imexd/imexd}" sh tests/imexd/vm/pair-guest.sh b $certs \
	>"$out/b.log" 2>&1 &
b_pid=$!
"$run" --quiet --timeout 600 --vde "$sw/ctl" --ip 192.0.2.1/24 --hostname vm-a \
	--module-args "$params" --out "$out/a" -- env IMEXD="${IMEXD:-imexd/imexd}" sh tests/imexd/vm/pair-guest.sh a $certs \
	>"$out/a.log" 2>&1
a_rc=$?
touch "$out/b/done"
wait "$b_pid"
b_rc=$?

passed=0 failed=0
for s in a b; do
	echo "--- vm-$s ---"
	grep -E '^(ok|not ok) ' "$out/$s/test.log" 2>/dev/null
	p=$(grep -c '^ok ' "$out/$s/test.log" 2>/dev/null)
	f=$(grep -c '^not ok ' "$out/$s/test.log" 2>/dev/null)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
done
[ "$a_rc" = 0 ] || { echo "vm-a: run.sh exit $a_rc (see $out/a.log)"; failed=$((failed + 1)); }
[ "$b_rc" = 0 ] || { echo "vm-b: run.sh exit $b_rc (see $out/b.log)"; failed=$((failed + 1)); }
echo "logs: $out"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
