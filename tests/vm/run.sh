#!/bin/bash
# Run one command inside a throw-away QEMU VM (software emulation) whose root
# is the host's root over 9p plus a tmpfs overlay, with kmod/imex.ko loaded.
# See usage() for options and exit codes.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
me=run.sh

usage() {
	cat <<EOF
usage: tests/vm/run.sh [options] [--] COMMAND [ARG...]
Runs COMMAND in a VM (cwd = repo, \$IMEX_VM_OUT = a dir shared with the host).
  --kver VER          kernel version (default: the --kernel image's, else
                      \$IMEX_KVER, else tools/kver.sh)
  --kernel PATH       boot this bzImage instead of /boot/vmlinuz-VER (default:
                      \$IMEX_VM_KERNEL); a kernel with no /lib/modules/VER
                      (tools/debug-kernel.sh) gets a module dir with imex.ko only
  --mem MiB           guest memory (default 512)
  --cpus N            guest CPUs (default 1)
  --timeout SEC       kill the VM after SEC seconds (default 300)
  --hostname NAME     guest hostname (default imex-vm); '' leaves it unset,
                      the kernel's "(none)", as at early boot
  --no-module         do not load kmod/imex.ko
  --module-args ARGS  parameters for "modprobe imex", e.g. "max_channels=64"
  --out DIR           where rc, dmesg.txt, console.log, test.log and the
                      test's files land (default: build/vm/runs/<new dir>)
  --vde DIR           attach eth0 to the vde_switch whose socket dir is DIR
  --mac MAC           eth0's MAC (default: derived from --ip)
  --ip ADDR/PREFIX    eth0's address (needs --vde), e.g. 192.0.2.1/24
  --quiet             console only into console.log, not to stdout
Environment: IMEX_VM_KERNEL (see --kernel), IMEX_VM_TIMEOUT_SCALE (multiplies
--timeout, and the guest's wait_for deadlines as \$IMEX_TIMEOUT_SCALE: a slow
debug kernel), IMEX_VM_TB_MB (the emulator's translation cache, MiB: its
host memory; default qemu's), IMEX_VM_APPEND (extra kernel arguments), IMEX_VM_QEMU_ARGS
(extra qemu arguments, split on white space), for debugging.
Exit status: COMMAND's status; 1 when the kernel log shows a problem
(tests/vm/dmesg-patterns) or imex.ko does not unload afterwards; 2 for bad
usage or a host-side problem; 124 on timeout; 125 when the VM crashed or
failed to set up.
EOF
}

die() { echo "$me: $*" >&2; exit 2; }
need_arg() { [ $# -ge 2 ] || die "$1 needs a value (see --help)"; }

kver="" kernel="" mem=512 cpus=1 timeout=300 hostname=imex-vm module=1
modargs="" out="" vde="" mac="" ip="" quiet=0
while [ $# -gt 0 ]; do
	case $1 in
	--kver)        need_arg "$@"; kver=$2; shift 2 ;;
	--kernel)      need_arg "$@"; kernel=$2; shift 2 ;;
	--mem)         need_arg "$@"; mem=$2; shift 2 ;;
	--cpus)        need_arg "$@"; cpus=$2; shift 2 ;;
	--timeout)     need_arg "$@"; timeout=$2; shift 2 ;;
	--hostname)    need_arg "$@"; hostname=$2; shift 2 ;;
	--no-module)   module=0; shift ;;
	--module-args) need_arg "$@"; modargs=$2; shift 2 ;;
	--out)         need_arg "$@"; out=$2; shift 2 ;;
	--vde)         need_arg "$@"; vde=$2; shift 2 ;;
	--mac)         need_arg "$@"; mac=$2; shift 2 ;;
	--ip)          need_arg "$@"; ip=$2; shift 2 ;;
	--quiet)       quiet=1; shift ;;
	-h|--help)     usage; exit 0 ;;
	--)            shift; break ;;
	-*)            die "unknown option $1 (see --help)" ;;
	*)             break ;;
	esac
done
[ $# -gt 0 ] || die "no command given (see --help)"

for v in mem cpus timeout; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--$v must be a positive integer, not '${!v}'"
done
scale=${IMEX_VM_TIMEOUT_SCALE:-1}
[[ $scale =~ ^[1-9][0-9]*$ ]] || die "IMEX_VM_TIMEOUT_SCALE must be a positive integer, not '$scale'"
timeout=$((timeout * scale))
[[ -z $hostname || $hostname =~ ^[A-Za-z0-9][A-Za-z0-9.-]*$ ]] || die "--hostname '$hostname' is not a valid host name"
[[ $repo =~ [[:space:]] ]] && die "the repo path '$repo' contains white space: the guest cannot be told about it; move the clone"
command -v qemu-system-x86_64 >/dev/null ||
	die "qemu-system-x86_64 not found: run tools/install-deps.sh"

# The release a bzImage was built as: the setup header (at 0x200) holds the
# offset of the version string, less 0x200, at 0x20e.
image_release() {
	local off v
	[ "$(dd if="$1" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ] || return 1
	off=$(od -An -tu2 -j 526 -N 2 "$1" | tr -d ' ')
	[ -n "$off" ] && [ "$off" -gt 0 ] || return 1
	v=$(dd if="$1" bs=1 skip=$((off + 512)) count=128 2>/dev/null | tr '\0' '\n')
	v=${v%%[$' \n']*}
	[ -n "$v" ] && echo "$v"
}

# IMEX_VM_KERNEL and IMEX_KVER (exported by tests/Makefile) let `make check
# KVER=...` and `make check-debug` reach the tests that call run.sh themselves.
kernel=${kernel:-${IMEX_VM_KERNEL:-}}
if [ -z "$kver" ] && [ -n "$kernel" ]; then
	[ -r "$kernel" ] || die "cannot read kernel $kernel (--kernel or IMEX_VM_KERNEL)"
	kver=$(image_release "$kernel") || kver=""
fi
kver=${kver:-${IMEX_KVER:-}}
if [ -z "$kver" ]; then
	kver=$("$repo/tools/kver.sh") || die "tools/kver.sh failed: give --kver"
fi
own_kernel=1
[ -n "$kernel" ] || { kernel=/boot/vmlinuz-$kver; own_kernel=0; }
[ -r "$kernel" ] || die "cannot read kernel $kernel: install linux-image-amd64 or give --kernel/--kver"

ko=$repo/kmod/imex.ko
if [ "$module" = 1 ]; then
	[ -f "$ko" ] || die "$ko does not exist: build it first (make kmod) or pass --no-module"
	vermagic=$(modinfo -F vermagic "$ko" 2>/dev/null || true)
	[ -z "$vermagic" ] || [ "${vermagic%% *}" = "$kver" ] ||
		die "$ko was built for ${vermagic%% *}, but the VM boots $kver: rebuild it (make kmod KVER=$kver) or pass --kver"
fi

if [ -n "$ip" ]; then
	[ -n "$vde" ] || die "--ip needs --vde (there is no network device otherwise)"
	[[ $ip =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)/[0-9]+$ ]] ||
		die "--ip '$ip' is not ADDR/PREFIX, e.g. 192.0.2.1/24"
	if [ -z "$mac" ]; then
		mac=$(printf '52:54:%02x:%02x:%02x:%02x' "${BASH_REMATCH[@]:1:4}")
	fi
fi
if [ -n "$vde" ]; then
	[ -S "$vde/ctl" ] || die "no vde_switch at $vde: start one with 'vde_switch -d -s $vde'"
	[ -n "$mac" ] || die "--vde needs --mac or --ip"
fi

# Index imex.ko together with the kernel's modules here: depmod inside the
# emulated guest takes ~20 s.  Cached per kernel and imex.ko contents.  A
# kernel given with --kernel may have everything built in and no
# /lib/modules/$kver: imex.ko is then the only module.
moddb=""
if [ -f "$ko" ] && { [ -d "/lib/modules/$kver/kernel" ] || [ "$own_kernel" = 1 ]; }; then
	key=$( (echo "$kver"; cat "$ko") | sha256sum | cut -c1-16)
	moddb=$repo/build/vm/moddb-$kver-$key
	if [ ! -f "$moddb/modules.dep.bin" ]; then
		mkdir -p "$repo/build/vm"
		t=$(mktemp -d "$repo/build/vm/moddb.XXXXXX")
		m=$t/lib/modules/$kver
		mkdir -p "$m/extra" "$t/db"
		[ ! -d "/lib/modules/$kver/kernel" ] || ln -s "/lib/modules/$kver/kernel" "$m/kernel"
		# Empty when everything is built in: depmod warns about missing ones.
		for f in modules.order modules.builtin modules.builtin.modinfo; do
			if [ -f "/lib/modules/$kver/$f" ]; then cp "/lib/modules/$kver/$f" "$m/"; else : > "$m/$f"; fi
		done
		cp "$ko" "$m/extra/imex.ko"
		depmod -b "$t" "$kver" || { rm -rf "$t"; die "depmod for $kver with $ko failed"; }
		cp "$ko" "$m"/modules.*.bin "$t/db/"
		mv -T "$t/db" "$moddb" 2>/dev/null || true   # a parallel run may have won
		rm -rf "$t"
		find "$repo/build/vm" -maxdepth 1 -name "moddb-$kver-*" ! -name "${moddb##*/}" \
			-mmin +60 -exec rm -rf {} + 2>/dev/null || true
	fi
elif [ "$module" = 1 ]; then
	die "/lib/modules/$kver/kernel is missing: cannot install imex.ko for $kver (give --kver, or --no-module)"
fi

initrd=$repo/build/vm/initramfs-$kver.cpio.gz
"$here/mkinitramfs.sh" "$kver" "$initrd" || die "building the initramfs failed"
# Boot the uncompressed kernel when it can be extracted (saves ~3 s a boot).
vmlinux=$repo/build/vm/vmlinux-$(printf '%s' "$kernel" | sha256sum | cut -c1-12)
"$here/mkvmlinux.sh" "$kernel" "$vmlinux" && kernel=$vmlinux

if [ -z "$out" ]; then
	out=$repo/build/vm/runs/$(date +%Y%m%d-%H%M%S)-$$
fi
mkdir -p "$out" || die "cannot create --out $out"
out=$(cd "$out" && pwd -P)
ctl=$out/.imex-vm
rm -rf "$ctl"
rm -f "$out/rc" "$out/dmesg.txt" "$out/console.log" "$out/test.log" "$out/kmemleak.txt"
mkdir "$ctl"

# The guest sources this file: "set --" with every argument single-quoted.
{
	printf 'set --'
	for a in "$@"; do
		printf " '%s'" "${a//\'/\'\\\'\'}"
	done
	printf '\n'
} > "$ctl/cmd"
printf '%s\n' "$modargs" > "$ctl/modargs"
[ -z "$moddb" ] || printf '%s %s\n' "$kver" "$moddb" > "$ctl/moddb"

# no_timer_check: under software emulation on a busy host the kernel's
# early IO-APIC timer check can miss its ticks and panic the boot ("IO-APIC
# + timer doesn't work!"); QEMU's timer is wired, the check proves nothing.
append="console=ttyS0 panic=-1 quiet loglevel=5 no_timer_check imexvm.repo=$repo"
append+=" imexvm.hostname=$hostname imexvm.module=$module"
[ -n "$ip" ] && append+=" imexvm.ip=$ip"
[ "$scale" = 1 ] || append+=" imexvm.tscale=$scale"
append+=${IMEX_VM_APPEND:+ $IMEX_VM_APPEND}

# shellcheck disable=SC2054 # the commas belong to qemu options
qemu=(qemu-system-x86_64 -accel "tcg${IMEX_VM_TB_MB:+,tb-size=$IMEX_VM_TB_MB}" -nographic -nodefaults -no-user-config -no-reboot
	-m "$mem" -smp "$cpus" -kernel "$kernel" -initrd "$initrd" -append "$append"
	-serial stdio
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
	-virtfs "local,path=${out//,/,,},mount_tag=out,security_model=none")
# qboot starts faster than SeaBIOS and prints no banner.
[ -f /usr/share/qemu/qboot.rom ] && qemu+=(-bios /usr/share/qemu/qboot.rom)
# shellcheck disable=SC2206 # extra qemu arguments are split on purpose
qemu+=(${IMEX_VM_QEMU_ARGS:-})
if [ -n "$vde" ]; then
	qemu+=(-netdev "vde,id=n0,sock=${vde//,/,,}" -device "virtio-net-pci,netdev=n0,mac=$mac")
fi

# fd 3: where the console goes.  Not "> /dev/stdout": for a log file that
# would reopen it truncated, losing what came before.
exec 3>&1
[ "$quiet" = 1 ] && exec 3>/dev/null
start=$(date +%s%N)
# qemu runs in the background so that an interrupted run.sh can stop it
# (timeout puts it in its own process group, out of reach of ^C).
mkfifo "$ctl/console.fifo"
sed -u 's/\r$//' <"$ctl/console.fifo" | tee "$out/console.log" >&3 &
reader=$!
timeout -k 5 "$timeout" "${qemu[@]}" </dev/null >"$ctl/console.fifo" 2>&1 &
qemu_pid=$!
interrupted=0
trap 'interrupted=1; kill "$qemu_pid" 2>/dev/null' INT TERM HUP
set +e
while :; do
	wait "$qemu_pid"
	status=$?
	kill -0 "$qemu_pid" 2>/dev/null || break
done
wait "$reader"
set -e
trap - INT TERM HUP
rm -f "$ctl/console.fifo"
if [ "$interrupted" = 1 ]; then
	echo "$me: interrupted; the VM was stopped (out: $out)" >&2
	exit 130
fi
ms=$(( ($(date +%s%N) - start) / 1000000 ))
wall=$((ms / 1000)).$(printf '%03d' $((ms % 1000)))
# The console rarely ends with a newline: do not glue our messages to it.
[ "$quiet" = 1 ] || [ ! -s "$out/console.log" ] || [ -z "$(tail -c1 "$out/console.log")" ] || echo

show_console() { # the console tail, unless it was streamed already
	[ "$quiet" = 1 ] || return 0
	echo "--- last lines of $out/console.log ---" >&2
	tail -n 30 "$out/console.log" >&2
}

# Decide the exit status: a timeout or a crash first, then the kernel log,
# then the command's own status.
if [ "$status" = 124 ] || [ "$status" = 137 ]; then
	show_console
	echo "$me: the VM timed out after ${timeout}s and was killed (see $out/console.log; raise --timeout if it was only slow)" >&2
	code=124
elif [ -f "$ctl/setup-error" ]; then
	show_console
	echo "$me: VM setup failed: $(cat "$ctl/setup-error")" >&2
	code=125
elif [ ! -f "$out/rc" ]; then
	show_console
	if [ "$status" != 0 ]; then
		echo "$me: qemu failed with status $status (see $out/console.log)" >&2
	else
		echo "$me: the VM stopped without writing rc: it crashed or guest-init died (see $out/console.log)" >&2
	fi
	code=125
else
	code=$(cat "$out/rc")
	[[ $code =~ ^[0-9]+$ ]] || { echo "$me: bad rc file '$code'" >&2; code=125; }
fi

log=$out/dmesg.txt
[ -f "$log" ] || log=$out/console.log
logs=("$log")
[ -f "$out/kmemleak.txt" ] && logs+=("$out/kmemleak.txt")
patterns=$(grep -v -e '^#' -e '^$' "$here/dmesg-patterns")
if hits=$(grep -E -H -e "$patterns" "${logs[@]}"); then
	echo "$me: the kernel log shows problems (patterns from tests/vm/dmesg-patterns):" >&2
	printf '%s\n' "$hits" | head -n 50 >&2
	# The whole first report, for a CI log that keeps nothing else.
	for f in "${logs[@]}"; do
		n=$(grep -E -n -m 1 -e "$patterns" "$f" | cut -d: -f1) || continue
		echo "--- $f from line $n (first report) ---" >&2
		tail -n +"$((n > 3 ? n - 3 : 1))" "$f" | head -n 80 >&2
		break
	done
	case $code in
	124|125) ;;
	*) echo "$me: the command itself exited with $code" >&2; code=1 ;;
	esac
fi
if [ -f "$ctl/unload-error" ]; then
	echo "$me: imex.ko did not unload after the test: $(cat "$ctl/unload-error")" >&2
	[ "$code" != 0 ] || code=1
fi

boot_to_rc=$(cat "$ctl/uptime" 2>/dev/null || echo "?")
echo "$me: exit $code; boot-to-rc ${boot_to_rc}s; wall ${wall}s; out: $out" >&2
exit "$code"
