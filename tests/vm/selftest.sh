#!/bin/bash
# Prove that the VM harness works: exit statuses, kernel-log checks, the
# out share, lib.sh, timeouts, module handling and two VMs on one vde_switch.
# Run on the host: tests/vm/selftest.sh   (about a minute)
# shellcheck disable=SC2016 # the guest scripts expand their own variables
set -u

here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
run=$here/run.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/imex-vm-selftest.XXXXXX")
passed=0 failed=0
sw_pid=""

cleanup() {
	[ -z "$sw_pid" ] || kill "$sw_pid" 2>/dev/null
	# Let a VM still waiting for its marker finish (run.sh's timeout bounds it too).
	[ -d "$tmp/b" ] && touch "$tmp/b/done"
	rm -rf "$tmp"
}
trap cleanup EXIT

timing() { # the numbers from run.sh's summary line in LOG
	sed -n 's/^run.sh: exit [0-9]*; boot-to-rc \([^;]*\); wall \([^;]*\);.*/boot-to-rc \1, wall \2/p' "$1"
}

result() { # NAME OK(0/1) LOG
	if [ "$2" = 0 ]; then
		passed=$((passed + 1))
		echo "ok - $1 ($(timing "$3"))"
	else
		failed=$((failed + 1))
		echo "not ok - $1"
		sed 's/^/    /' "$3"
	fi
}

# vm NAME WANT_RC [run.sh args...]: run a VM quietly, compare the exit status.
vm() {
	local name=$1 want=$2 log=$tmp/$3.log got
	shift 2
	"$run" --quiet --out "$tmp/$1" "${@:2}" >"$log" 2>&1
	got=$?
	[ "$got" = "$want" ] || echo "selftest: exit status $got, wanted $want" >>"$log"
	result "$name" "$([ "$got" = "$want" ]; echo $?)" "$log"
}

vm "true exits 0" 0 true --no-module -- true
vm "false exits 1" 1 false --no-module -- false
vm "exit 7 passes through" 7 exit7 --no-module -- sh -c 'exit 7'

"$run" --quiet --out "$tmp/warn" --no-module -- \
	sh -c "echo 'WARNING: CPU: 0 PID: 1 at fake' > /dev/kmsg" >"$tmp/warn.log" 2>&1
got=$?
grep -q 'WARNING: CPU: 0 PID: 1 at fake' "$tmp/warn.log" && [ "$got" = 1 ]
result "a kernel WARNING fails the run (exit $got)" $? "$tmp/warn.log"

# Out share, argument quoting and lib.sh in one boot.
"$run" --quiet --out "$tmp/share" --no-module -- sh -c '
	. tests/vm/lib.sh
	printf "%s|" "$@" > "$IMEX_VM_OUT/args"
	n=0; third() { n=$((n + 1)); [ $n -ge 3 ]; }
	t_check "wait_for retries until success" wait_for 5 third
	t_check "wait_for fails when the bound passes" expect_fail sh -c ". tests/vm/lib.sh; wait_for 0.3 false"
	t_check "expect_fail fails on success" expect_fail sh -c ". tests/vm/lib.sh; expect_fail true"
	t_check "cgroup2 at /sys/fs/cgroup" test -f /sys/fs/cgroup/cgroup.controllers
	t_check "tmpfs on /var/lib/containers" sh -c "grep -q \" /var/lib/containers tmpfs \" /proc/mounts"
	t_check "/dev/shm writable" touch /dev/shm/x
	t_check "root overlay writable" touch /etc/imex-vm-selftest
	t_check "hostname" test "$(hostname)" = imex-vm
	t_done' _ 'a b' "it's" '$HOME' '' '*' >"$tmp/share.log" 2>&1
got=$?
[ "$got" = 0 ] && [ "$(cat "$tmp/share/args" 2>/dev/null)" = "a b|it's|\$HOME||*|" ] &&
	grep -qx '8 passed, 0 failed' "$tmp/share/test.log"
result "files under \$IMEX_VM_OUT reach the host; quoting; lib.sh" $? "$tmp/share.log"

"$run" --quiet --timeout 15 --out "$tmp/hang" --no-module -- sleep 1000 >"$tmp/hang.log" 2>&1
got=$?
[ "$got" = 124 ] && grep -q 'timed out' "$tmp/hang.log"
result "a hanging command is killed at --timeout (exit $got)" $? "$tmp/hang.log"

if [ -f "$repo/kmod/imex.ko" ]; then
	vm "imex.ko is loaded and unloads cleanly" 0 mod -- sh -c 'grep "^imex " /proc/modules'
else
	"$run" --quiet --out "$tmp/nomod" -- true >"$tmp/nomod.log" 2>&1
	got=$?
	[ "$got" = 2 ] && grep -q 'imex.ko does not exist' "$tmp/nomod.log"
	result "a missing kmod/imex.ko fails clearly (exit $got)" $? "$tmp/nomod.log"
fi

# Two VMs on one switch.  B answers pings until the host drops a marker in
# its out share after A finished; both waits are bounded.
if command -v vde_switch >/dev/null; then
	vde_switch -d -s "$tmp/sw" -p "$tmp/sw.pid" >"$tmp/sw.log" 2>&1 && sw_pid=$(cat "$tmp/sw.pid")
	mkdir -p "$tmp/b"
	"$run" --quiet --timeout 120 --vde "$tmp/sw" --ip 192.0.2.2/24 --hostname vm-b --out "$tmp/b" \
		--no-module -- sh -c '
		. tests/vm/lib.sh
		p() { busybox ping -c1 -W1 192.0.2.1 >/dev/null 2>&1; }
		wait_for 60 p
		wait_for 100 test -e "$IMEX_VM_OUT/done"' >"$tmp/b.log" 2>&1 &
	b_pid=$!
	"$run" --quiet --timeout 120 --vde "$tmp/sw" --ip 192.0.2.1/24 --hostname vm-a --out "$tmp/a" \
		--no-module -- sh -c '
		. tests/vm/lib.sh
		p() { busybox ping -c1 -W1 192.0.2.2 >/dev/null 2>&1; }
		wait_for 60 p
		busybox ping -c1 -W5 192.0.2.2' >"$tmp/a.log" 2>&1
	a_rc=$?
	touch "$tmp/b/done"
	wait "$b_pid"
	b_rc=$?
	grep -q ' 0% packet loss' "$tmp/a/test.log" 2>/dev/null && [ "$a_rc" = 0 ]
	result "vm-a pings vm-b over vde: $(grep -o 'time=[0-9.]* ms' "$tmp/a/test.log" 2>/dev/null)" $? "$tmp/a.log"
	[ "$b_rc" = 0 ]
	result "vm-b pings vm-a over vde" $? "$tmp/b.log"
else
	failed=$((failed + 1))
	echo "not ok - two VMs over vde: vde_switch not found (install vde2)"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
