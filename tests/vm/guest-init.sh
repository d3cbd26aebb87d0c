#!/bin/sh
# PID 1 of the test VM after switch_root (started by tests/vm/init).  Sets up
# the mounts podman and the tests need, installs and loads kmod/imex.ko, runs
# the command that run.sh left in the out share, saves its status and dmesg
# there, and powers off.  Kernel command line parameters (set by run.sh):
#   imexvm.repo=DIR  imexvm.hostname=NAME (empty: leave it unset)  imexvm.ip=ADDR/PREFIX
#   imexvm.module=0|1 (load imex.ko)  imexvm.tscale=N (IMEX_TIMEOUT_SCALE)
# Files in the out share: .imex-vm/cmd (sets "$@"), .imex-vm/modargs,
# .imex-vm/moddb (see below).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
OUT=/run/imex-vm/out
CTL=$OUT/.imex-vm
# Setup uses the static busybox: every exec of a dynamic host binary costs a
# round of 9p lookups for its libraries, which adds up under emulation.
BB=/usr/bin/busybox

halt() {
	sync
	$BB poweroff -f
	echo o > /proc/sysrq-trigger
}

# A setup failure: tell the host (setup-error), keep dmesg, power off.
die() {
	echo "imex-vm: $*"
	echo "$*" > "$CTL/setup-error"
	$BB dmesg > "$OUT/dmesg.txt" 2>/dev/null
	halt
}

# tests/vm/init has mounted /proc, /sys, /dev and /run already; mount them
# here only when started some other way.
[ -e /proc/self ] || $BB mount -t proc proc /proc
mounted=" "
while read -r _ mp _; do mounted="$mounted$mp "; done < /proc/mounts
mountfs() { # TYPE DIR [OPTIONS]: mount unless something is mounted there
	case $mounted in *" $2 "*) return 0 ;; esac
	$BB mount -t "$1" ${3:+-o "$3"} "$1" "$2" || die "cannot mount $1 on $2"
}
mountfs sysfs /sys
mountfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
$BB mkdir -p /dev/pts /dev/shm /var/lib/containers
mountfs devpts /dev/pts gid=5,mode=620,ptmxmode=666
mountfs tmpfs /dev/shm mode=1777,nosuid,nodev
mountfs cgroup2 /sys/fs/cgroup
[ ! -d /sys/kernel/debug ] || mountfs debugfs /sys/kernel/debug

REPO='' HOSTNAME=imex-vm IP='' MODULE=1 TSCALE=1
read -r cmdline < /proc/cmdline
for w in $cmdline; do
	case $w in
	imexvm.repo=*)     REPO=${w#*=} ;;
	imexvm.hostname=*) HOSTNAME=${w#*=} ;;
	imexvm.ip=*)       IP=${w#*=} ;;
	imexvm.module=*)   MODULE=${w#*=} ;;
	imexvm.tscale=*)   TSCALE=${w#*=} ;;
	esac
done

# The repo may live under a directory that gets a fresh tmpfs (a clone in
# /tmp): carry it over with a bind mount.
for d in /tmp /var/tmp /var/lib/containers; do
	case $REPO/ in
	"$d"/*)
		$BB mkdir -p /run/imex-vm/repo
		$BB mount --bind "$REPO" /run/imex-vm/repo
		mountfs tmpfs "$d" mode=1777
		$BB mkdir -p "$REPO"
		$BB mount --move /run/imex-vm/repo "$REPO"
		;;
	*) mountfs tmpfs "$d" mode=1777 ;;
	esac
done

if [ -n "$HOSTNAME" ]; then
	$BB hostname "$HOSTNAME"
	echo "$HOSTNAME" > /etc/hostname
fi
$BB ip link set lo up
if [ -n "$IP" ]; then
	$BB ip addr add "$IP" dev eth0 || die "cannot add address $IP to eth0 (was --vde given?)"
	$BB ip link set eth0 up || die "cannot bring up eth0"
	# Carrier follows "link up" after a moment: let tests start with it.
	i=0
	while read -r state < /sys/class/net/eth0/operstate && [ "$state" != up ]; do
		[ $i -lt 50 ] || die "eth0 has no carrier after 5 s (is the vde_switch running?)"
		$BB sleep 0.1
		i=$((i + 1))
	done
fi

# run.sh indexed imex.ko with the kernel's modules on the host (.imex-vm/moddb
# names the kernel version and the directory): install both.
if [ -f "$CTL/moddb" ]; then
	read -r kver moddb < "$CTL/moddb"
	read -r running < /proc/sys/kernel/osrelease
	[ "$kver" = "$running" ] ||
		die "the VM runs kernel $running, but imex.ko was prepared for $kver: pass --kver $running"
	$BB mkdir -p "/lib/modules/$kver/extra"
	if ! $BB cp "$moddb/imex.ko" "$moddb"/modules.*.bin "/lib/modules/$kver/"; then
		die "cannot install imex.ko from $moddb"
	fi
	$BB mv "/lib/modules/$kver/imex.ko" "/lib/modules/$kver/extra/imex.ko"
fi
if [ "$MODULE" = 1 ]; then
	[ -f "$CTL/moddb" ] || die "no imex.ko to load ($REPO/kmod/imex.ko): build it (make kmod) or pass --no-module"
	# shellcheck disable=SC2046 # module parameters are split on purpose
	modprobe imex $(cat "$CTL/modargs") ||
		die "modprobe imex $(cat "$CTL/modargs") failed (see dmesg.txt)"
fi

export IMEX_VM_OUT="$OUT" IMEX_REPO="$REPO" HOME=/root TERM=dumb
# Tests scale their own deadlines by this on a slow kernel (tests/vm/lib.sh).
export IMEX_TIMEOUT_SCALE="$TSCALE"
# Built tools (tools/<name>/<name>) run without installing them.
for d in "$REPO"/tools/*/; do
	[ ! -d "$d" ] || PATH=${d%/}:$PATH
done
export PATH="$REPO/build/bin:$PATH"
cd "$REPO" || die "cannot cd to $REPO"

# Output goes to the console (so the host sees it) and to test.log.  Not a
# pipeline: a daemon the test left running would hold it open.
$BB mkfifo /run/imex-vm/output
tee "$OUT/test.log" < /run/imex-vm/output &
tee_pid=$!
# shellcheck disable=SC1091
(. "$CTL/cmd" && exec "$@") </dev/null >/run/imex-vm/output 2>&1
rc=$?
read -r up _ < /proc/uptime
echo "$up" > "$CTL/uptime"

# Stop what the test left running, then unload imex: an unload that fails
# once nothing holds the module points at a reference leak.
others() { # SIGNAL: signal user processes but PID 1 and tee; 1 if none left
	found=1
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		# kernel threads have no exe
		if [ "$p" != 1 ] && [ "$p" != "$tee_pid" ] && [ -e "/proc/$p/exe" ]; then
			kill "-$1" "$p" 2>/dev/null
			found=0
		fi
	done
	return $found
}
i=0
while [ $i -lt 20 ] && others TERM; do
	sleep 0.1
	i=$((i + 1))
done
others KILL
wait "$tee_pid"

# kmemleak (debug kernel): its scan is explicit, here.  It reports an object
# only once it is 5 s old, so wait until what the test allocated last is;
# scan twice so that a pointer in flight during one scan is not a leak.
KMEMLEAK=/sys/kernel/debug/kmemleak
leakscan() { # TITLE: append the leaks kmemleak suspects now to kmemleak.txt
	[ -w "$KMEMLEAK" ] || return 0
	t0=${1%%.*}
	while read -r now _ < /proc/uptime && [ "${now%%.*}" -lt $((t0 + 6)) ]; do
		$BB sleep 1
	done
	if ! { echo scan > "$KMEMLEAK" && echo scan > "$KMEMLEAK"; } 2>/dev/null; then
		echo "kmemleak: scan failed (see dmesg.txt)" >> "$OUT/kmemleak.txt"
		return 0
	fi
	echo "### $2" >> "$OUT/kmemleak.txt"
	cat "$KMEMLEAK" >> "$OUT/kmemleak.txt"
	# Reported once is enough: the scan after the unload shows only new ones.
	echo clear > "$KMEMLEAK"
}
# While imex is loaded its frames in the backtraces have names; after the
# unload, its addresses are those in the /proc/modules line recorded here.
leakscan "$up" "kmemleak after the test ($(grep '^imex ' /proc/modules))"

if grep -q '^imex ' /proc/modules; then
	i=0
	until rmmod imex 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 50 ]; then
			echo "imex-vm: rmmod imex failed after the test ended: $(rmmod imex 2>&1)" |
				tee "$CTL/unload-error"
			break
		fi
		sleep 0.1
	done
fi

read -r up _ < /proc/uptime
leakscan "$up" "kmemleak after unloading imex"
$BB dmesg > "$OUT/dmesg.txt"
echo "$rc" > "$OUT/rc"
halt
