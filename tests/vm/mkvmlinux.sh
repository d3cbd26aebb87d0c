#!/bin/sh
# Extract the uncompressed ELF vmlinux from a bzImage so QEMU can boot it
# directly through its PVH entry point: decompressing an xz bzImage under
# software emulation costs ~3 s per boot, the host does it once here.
# Usage: mkvmlinux.sh BZIMAGE OUTFILE
# Exits 1 (and the caller boots the bzImage) when no ELF with a PVH note
# (CONFIG_PVH) can be found, or it is a KASAN kernel.  Cached: redone only
# when BZIMAGE changed.
set -eu

[ $# -eq 2 ] || { echo "usage: $0 BZIMAGE OUTFILE" >&2; exit 2; }
img=$1 out=$2
command -v readelf >/dev/null || exit 1

key=$(ls -lL --time-style=+%s "$img" | sha256sum | cut -d' ' -f1)
if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
	exit 0
fi

has_pvh() { # XEN_ELFNOTE_PHYS32_ENTRY is note type 18
	readelf -n "$1" 2>/dev/null | grep -q 'Xen.*(0x00000012)'
}

mkdir -p "$(dirname "$out")"
tmp=$out.tmp.$$
trap 'rm -f "$tmp"' EXIT
if [ "$(head -c4 "$img" | od -An -c | tr -d ' ')" = '177ELF' ]; then
	ln -s "$(cd "$(dirname "$img")" && pwd -P)/$(basename "$img")" "$tmp"
else
	# Try each compressed stream found in the image until one is an ELF.
	for fmt in 'xz -dc:\3757zXZ' 'gzip -dc:\037\213\010' 'zstd -qdc:(\265/\375'; do
		unpack=${fmt%%:*}
		magic=$(printf "${fmt#*:}")
		command -v "${unpack%% *}" >/dev/null || continue
		for pos in $(LC_ALL=C grep -abo -- "$magic" "$img" 2>/dev/null | head -n 3 | cut -d: -f1); do
			# The stream is followed by other data, so the tool complains: ignore it.
			tail -c +$((pos + 1)) "$img" | $unpack > "$tmp" 2>/dev/null || true
			[ "$(head -c4 "$tmp" | od -An -c | tr -d ' ')" = '177ELF' ] && break 2
		done
	done
fi
has_pvh "$tmp" || exit 1
# A KASAN kernel (tools/debug-kernel.sh) dies silently at the PVH entry,
# before its console is up: it boots as a bzImage.
! LC_ALL=C grep -q -a kasan_multi_shot "$tmp" || exit 1
mv "$tmp" "$out"
echo "$key" > "$out.key"
