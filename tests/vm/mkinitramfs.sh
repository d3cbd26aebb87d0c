#!/bin/sh
# Build the test VM's initramfs: static busybox, the few modules needed to
# mount the host root over 9p with an overlay (plus virtio networking), and
# tests/vm/init.  Usage: mkinitramfs.sh KVER OUTFILE
# Rebuilds only when KVER, the init script, this script, busybox or the module
# list changed (the key is stored next to OUTFILE as OUTFILE.key).
set -eu

[ $# -eq 2 ] || { echo "usage: $0 KVER OUTFILE" >&2; exit 2; }
kver=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd -P)
moddir=/lib/modules/$kver
busybox=/usr/bin/busybox
want="9p 9pnet_virtio overlay virtio_net virtio_pci"

die() { echo "mkinitramfs: $*" >&2; exit 1; }

[ -x "$busybox" ] || die "$busybox missing: install busybox-static (tools/install-deps.sh)"
command -v file >/dev/null && file -L "$busybox" | grep -q 'dynamically linked' &&
	die "$busybox is dynamically linked: install busybox-static"

# Module paths in load order, each once.  A kernel with these drivers built in
# (a debug kernel) prints "builtin X" instead, and needs no modules at all.
mods=""
if [ -d "$moddir" ]; then
	# shellcheck disable=SC2086 # one argument per module
	list=$(modprobe -a -S "$kver" --show-depends $want) ||
		die "modprobe --show-depends failed for $kver: is $moddir complete? (run depmod $kver)"
	mods=$(echo "$list" | awk '$1 == "insmod" && !seen[$2]++ { print $2 }')
fi

key=$( { echo "$kver"; echo "$mods"; cat "$here/init" "$0"; ls -l --time-style=+%s "$busybox";
	 for m in $mods; do ls -l --time-style=+%s "$m"; done; } | sha256sum | cut -d' ' -f1)
if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
	exit 0
fi

[ -d "$moddir" ] ||
	echo "mkinitramfs: note: $moddir missing; assuming 9p/overlay/virtio are built into $kver" >&2
stage=$(mktemp -d "${TMPDIR:-/tmp}/imex-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/dev" "$stage/proc" "$stage/sys" "$stage/lower" \
	"$stage/rw" "$stage/newroot" "$stage/lib/modules"
cp "$busybox" "$stage/bin/busybox"
cp "$here/init" "$stage/init"
chmod 755 "$stage/init"
# Without /dev/console the kernel starts init with no stdio; init reopens it
# after mounting devtmpfs anyway, so a failing mknod is harmless.
mknod -m 600 "$stage/dev/console" c 5 1 2>/dev/null || true

# busybox insmod cannot read compressed modules: decompress here.
: > "$stage/lib/modules/order"
for m in $mods; do
	base=$(basename "$m")
	case $base in
	*.ko)     cp "$m" "$stage/lib/modules/$base" ;;
	*.ko.xz)  base=${base%.xz};  xz -dc "$m" > "$stage/lib/modules/$base" ;;
	*.ko.zst) base=${base%.zst}; zstd -qdc "$m" > "$stage/lib/modules/$base" ;;
	*.ko.gz)  base=${base%.gz};  gzip -dc "$m" > "$stage/lib/modules/$base" ;;
	*) die "unknown module format: $m" ;;
	esac
	echo "$base" >> "$stage/lib/modules/order"
done

mkdir -p "$(dirname "$out")"
(cd "$stage" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) | gzip -1 > "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "$key" > "$out.key"
