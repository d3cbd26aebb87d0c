#!/bin/sh
# imex.ko under DKMS, so that it is rebuilt on every kernel upgrade.
#   packaging/dkms.sh stage DIR [VERSION]  copy the module's sources and
#                                          dkms.conf into DIR
#   packaging/dkms.sh install              (root) stage into /usr/src, then
#                                          dkms add, build, install
#   packaging/dkms.sh uninstall            (root) dkms remove --all, and
#                                          remove the sources from /usr/src
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")

die() { echo "dkms.sh: $*" >&2; exit 1; }

stage() {
	dir=$1
	ver=${2:-$version}
	mkdir -p "$dir/kmod/include" "$dir/include/uapi/linux"
	cp "$top"/kmod/Kbuild "$top"/kmod/Makefile "$top"/kmod/*.c "$top"/kmod/*.h "$dir/kmod/"
	cp "$top"/kmod/include/*.h "$dir/kmod/include/"
	cp "$top"/include/uapi/linux/*.h "$dir/include/uapi/linux/"
	sed "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$ver\"/" "$top/dkms.conf" > "$dir/dkms.conf"
}

need_root() {
	[ "$(id -u)" -eq 0 ] || die "$1 needs root: run it with sudo"
	command -v dkms >/dev/null || die "dkms is not installed: apt-get install dkms"
}

case "${1:-}" in
stage)
	[ $# -ge 2 ] || die "usage: dkms.sh stage DIR [VERSION]"
	stage "$2" "${3:-}"
	;;
install)
	need_root install
	src=/usr/src/imex-$version
	[ ! -e "$src" ] || die "$src exists: run 'packaging/dkms.sh uninstall' first"
	stage "$src"
	dkms add -m imex -v "$version"
	dkms build -m imex -v "$version"
	dkms install -m imex -v "$version"
	;;
uninstall)
	need_root uninstall
	if dkms status -m imex -v "$version" | grep -q .; then
		dkms remove -m imex -v "$version" --all
	fi
	rm -rf "/usr/src/imex-$version"
	;;
*)
	die "usage: dkms.sh stage DIR [VERSION] | install | uninstall"
	;;
esac
