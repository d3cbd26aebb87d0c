#!/bin/sh
# dkms add, build, install and remove --all of the tree against the
# installed Debian headers.  DKMS works in private trees (--dkmstree,
# --sourcetree, --installtree, --no-depmod): the host's /usr/src,
# /var/lib/dkms and /lib/modules are left as they are.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "t-dkms: FAIL: $*" >&2; exit 1; }

command -v dkms >/dev/null || fail "dkms is not installed: run tools/install-deps.sh"
kver=${KVER:-$("$top"/tools/kver.sh)}
kdir=/lib/modules/$kver/build
[ -d "$kdir" ] || fail "no headers for $kver in $kdir"

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ver=0.0.0.opstest
mkdir -p "$t/dkms" "$t/src" "$t/modules/$kver"
ln -s "$kdir" "$t/modules/$kver/build"
"$top"/packaging/dkms.sh stage "$t/stage" "$ver"

d() { dkms --dkmstree "$t/dkms" --sourcetree "$t/src" --installtree "$t/modules" \
	--no-depmod "$@" > "$t/log" 2>&1 || { cat "$t/log" >&2
	find "$t/dkms" -name make.log -exec cat {} + >&2; fail "dkms $1"; }; }

d add "$t/stage"
[ -f "$t/src/imex-$ver/dkms.conf" ] || fail "dkms add did not copy the tree"
d build -m imex -v "$ver" -k "$kver" --kernelsourcedir "$kdir"
d install -m imex -v "$ver" -k "$kver" --kernelsourcedir "$kdir"
ko=$(find "$t/modules/$kver" -name 'imex.ko*' | head -n 1)
[ -n "$ko" ] || fail "dkms install put no imex.ko under the install tree"
modinfo -F vermagic "$ko" | grep -q "^$kver " || fail "$ko is not built for $kver"
d remove -m imex -v "$ver" --all
[ -z "$(find "$t/modules/$kver" -name 'imex.ko*')" ] || fail "dkms remove left imex.ko behind"
[ ! -d "$t/dkms/imex/$ver" ] || fail "dkms remove left its tree behind"
echo "t-dkms: ok: imex $ver added, built, installed and removed for $kver"
