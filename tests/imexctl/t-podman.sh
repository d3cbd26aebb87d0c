# Issue 3, acceptance 3: a CDI spec written by imexctl is injected by a real
# runtime (podman + crun, cgroup v2): the container gets exactly the named
# channel's node, openable; another channel's node is absent; after
# 'cdi remove' the same run fails with podman's unknown-device error.
. tests/vm/lib.sh
. tests/kmod/common.sh
I=tools/imexctl/imexctl
ENXIO=6

serve_start
$I domain create pj --nodes "$NODE" --channel 3 --channel 4 --owner 0:0 --mode 0600 --timeout 20 ||
	fail "create"
$I cdi generate --domain pj --id job-42 || fail "cdi generate"
spec=/var/run/cdi/imex.dev-channel_job-42.json
[ "$(stat -c %a $spec)" = 644 ] || fail "spec mode $(stat -c %a $spec)"

rootfs=$IMEX_VM_OUT/rootfs
mkdir -p "$rootfs/bin"
cp /usr/bin/busybox "$rootfs/bin/busybox"
for a in sh ls test; do ln -sf busybox "$rootfs/bin/$a"; done
# run DEVICE COMMAND...: --rootfs must come last among the options.
run() { dev=$1; shift; podman run --rm --network none --device "$dev" --rootfs "$rootfs" "$@"; }

# chanopen is dynamically linked; use the shell's redirection to open.
out=$(run imex.dev/channel=channel3 /bin/sh -c \
	'ls /dev/imex-channels; exec 3</dev/imex-channels/channel3 && echo opened-3; test -e /dev/imex-channels/channel4 && echo SEES-4' 2>&1)
echo "$out"
echo "$out" | grep -qx channel3 || fail "channel3 not in the container"
echo "$out" | grep -q opened-3 || fail "channel3 not openable in the container"
echo "$out" | grep -q SEES-4 && fail "container given channel3 sees channel4"
# Even a hand-made node for channel 4 (its grant's device number) cannot be
# opened: the device cgroup only allows what CDI injected.
devnum4=$($NL channel id=4 | sed -n 's/.* devnum=\([0-9]*\):\([0-9]*\).*/\1 \2/p')
[ -n "$devnum4" ] || fail "no device number for channel 4: $($NL channel id=4)"
out=$(run imex.dev/channel=channel3 /bin/sh -c \
	"mknod /dev/c4 c $devnum4"' && (exec 3</dev/c4) 2>/dev/null && echo OPENED-4 || echo refused-4' 2>&1)
echo "$out"
echo "$out" | grep -q OPENED-4 && fail "container opened channel4 through mknod"
echo "$out" | grep -q refused-4 || fail "mknod test did not run: $out"
out=$(run imex.dev/channel=all /bin/sh -c 'ls /dev/imex-channels' 2>&1)
[ "$(echo "$out" | tr '\n' ' ')" = "channel3 channel4 " ] || fail "'all' device: $out"

$I cdi remove --id job-42 || fail "cdi remove"
[ ! -e $spec ] || fail "spec still there"
if out=$(run imex.dev/channel=channel3 /bin/true 2>&1); then
	fail "the container ran without the spec"
fi
echo "$out"
echo "$out" | grep -q 'unresolvable CDI devices imex.dev/channel=channel3' ||
	fail "not podman's unknown-device error: $out"
