#!/bin/sh
# imexctl against the real imex.ko with tests/libimexctl/build/fake_imexd as the
# manager (built by make -C tests/libimexctl vm-tools), run by tests/kmod/run-all.sh
# Prints every command and its exit status; exits 1 at the first surprise.
# IMEXCTL=tests/libimexctl/build/imexctl-asan runs the sanitizer build instead.
I=${IMEXCTL:-tools/imexctl/imexctl}
F=tests/libimexctl/build/fake_imexd
CDI=${IMEX_VM_OUT:-/tmp}/cdi
self=$(hostname)
fail() { echo "SMOKE FAILED: $*"; exit 1; }
run() { echo "+ $*"; "$@"; rc=$?; echo "  -> $rc"; return $rc; }
expect() { want=$1; shift; run "$@"; [ "$rc" = "$want" ] || fail "'$*' exited $rc, not $want"; }

expect 0 $I module status
expect 1 $I domain create j1 --nodes "$self" --channels 2 --timeout 5
expect 0 $I node set-fabric 4f8a1c2e-9b3d-4e5f-8a6b-7c8d9e0f1a2b 3
expect 1 $I domain create j1 --nodes "$self" --channels 2 --timeout 5
$F 2>"${IMEX_VM_OUT:-/tmp}/fake_imexd.log" &
fake=$!
. tests/vm/lib.sh
wait_for 10 sh -c "$I --json node show | grep -q '\"manager_pid\": *[0-9]'"
expect 0 $I node show
expect 0 $I domain create j1 --nodes "$self=127.0.0.1:50000" --channels 2 --owner 1000:100 --mode 0660 --timeout 10
expect 0 $I --json domain show j1
expect 0 $I domain show j1
expect 0 $I domain create j2 --nodes "$self,b=192.0.2.2,downc=192.0.2.3" --channel 7 --channel 9 --no-wait --timeout 10
expect 0 $I domain show j2
expect 1 $I domain wait j2 --timeout 1
expect 0 $I domain wait j2 --state degraded --timeout 1
expect 0 $I domain list
expect 0 $I domain --json list
# Reading is open to everyone; changing needs CAP_SYS_ADMIN.
if command -v setpriv >/dev/null; then
	expect 0 setpriv --reuid=65534 --regid=65534 --clear-groups $I domain show j2
	expect 1 setpriv --reuid=65534 --regid=65534 --clear-groups $I node set-name x
	expect 1 setpriv --reuid=65534 --regid=65534 --clear-groups $I domain delete j2
fi
expect 0 $I channel list
expect 0 $I --json channel list --domain j1
expect 1 $I domain create j3 --nodes "$self" --channel 7 --timeout 10
expect 1 $I domain create fail1 --nodes "$self" --timeout 10
expect 1 $I domain create slow1 --nodes "$self" --timeout 2
expect 0 $I channel alloc --domain j1 --count 3
expect 0 $I --json channel alloc --domain j1 --channel 100
expect 0 $I channel set j1/100 --owner 5:6 --mode 0640
expect 1 $I channel set j2/100 --mode 0640
expect 0 $I channel free j1/100
expect 0 $I cdi generate --domain j1 --id job-1 --dir "$CDI"
expect 0 $I cdi generate --domain j2 --channel 9 --id job-2 --dir "$CDI" --json
expect 1 $I cdi generate --domain j2 --channel 8 --id job-3 --dir "$CDI"
expect 1 $I cdi generate --domain j1 --id job-1 --dir "$CDI" --no-overwrite
expect 0 $I cdi generate --domain j1 --stdout
expect 0 $I cdi list --dir "$CDI"
expect 0 $I --json cdi list --dir "$CDI"
cat "$CDI/imex.dev-channel_job-1.json" || fail "spec missing"
ls -l /dev/imex-channels/
expect 0 $I cdi remove --id job-1 --dir "$CDI"
expect 1 $I cdi remove --id job-1 --dir "$CDI"
expect 1 $I domain evict j2 downc --timeout 5
# Group membership goes through the kernel to the manager and back.
expect 0 $I node join n2=192.0.2.2:7777 --timeout 5
expect 0 $I --json node join n3 --timeout 5
expect 0 $I node leave n3 --timeout 5
expect 1 $I node join far1 --timeout 5
expect 2 $I node join "bad name" --timeout 5
# An open channel keeps the module: unload says which.
exec 7</dev/imex-channels/channel0 || fail "cannot open channel0"
expect 1 $I module unload
exec 7<&-
expect 0 $I domain delete j1
expect 0 $I domain delete j2
expect 1 $I domain delete j1
kill $fake; wait $fake 2>/dev/null
expect 1 $I domain create j4 --nodes "$self" --timeout 5
expect 0 $I module unload
expect 0 $I module unload
expect 0 $I --json module status
# Resolving the family loads an installed module (its genetlink alias);
# with the alias blacklisted, the missing module is reported.
echo "blacklist imex" > /etc/modprobe.d/imex-test-noauto.conf
expect 1 $I node show
rm -f /etc/modprobe.d/imex-test-noauto.conf
expect 0 $I node show
expect 0 $I module unload
echo "SMOKE PASSED"
