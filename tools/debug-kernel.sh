#!/bin/bash
# Build (once) a debug kernel from Debian's linux-source-6.1: tinyconfig plus
# tools/debug-kernel.config (KASAN, lockdep, kmemleak, debug objects, ...),
# with every driver the VM harness needs built in.  The result is cached
# outside the tree, keyed by the fragment, this script, the source package
# version and the compiler, so a second call costs nothing.
# See usage() for options.
set -euo pipefail

me=debug-kernel.sh
here=$(cd "$(dirname "$0")" && pwd -P)
fragment=$here/debug-kernel.config
tarball=/usr/src/linux-source-6.1.tar.xz
srcpkg=linux-source-6.1

usage() {
	cat <<EOF
usage: tools/debug-kernel.sh [--cache DIR] [--print image|vmlinux|kdir|release]
Builds the debug kernel unless it is cached, then prints its paths:
  image=PATH     the bzImage to boot (tests/vm/run.sh --kernel)
  vmlinux=PATH   the uncompressed kernel, for decoding reports
  kdir=PATH      the build dir to build modules against (make KDIR=)
  release=VER    its kernel release (tests/vm/run.sh --kver)
  --cache DIR    where builds are kept (default: \$IMEX_DEBUG_KERNEL_CACHE,
                 else /var/cache/imex/debug-kernel)
  --print WHAT   print only that value
The build runs under nice -n 19 with -j\$(nproc); its log is build.log in
the build's cache dir.  Exit status: 0 ok, 1 the build failed, 2 bad usage or
something missing on the host.
EOF
}

die() { echo "$me: $*" >&2; exit "${2:-2}"; }

cache=${IMEX_DEBUG_KERNEL_CACHE:-/var/cache/imex/debug-kernel} print=""
while [ $# -gt 0 ]; do
	case $1 in
	--cache) [ $# -ge 2 ] || die "--cache needs a value"; cache=$2; shift 2 ;;
	--print) [ $# -ge 2 ] || die "--print needs a value"; print=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
case $print in ""|image|vmlinux|kdir|release) ;; *) die "--print takes image, vmlinux, kdir or release, not '$print'" ;; esac

[ -r "$tarball" ] || die "$tarball missing: apt-get install $srcpkg (tools/install-deps.sh)"
missing=""
for t in make gcc flex bison bc perl xz; do
	command -v "$t" >/dev/null || missing+=" $t"
done
[ -r /usr/include/libelf.h ] || missing+=" libelf-dev"
[ -z "$missing" ] || die "cannot build a kernel, missing:$missing (apt-get install build-essential flex bison bc libelf-dev xz-utils)"

srcver=$(dpkg-query -W -f='${Version}' "$srcpkg" 2>/dev/null) || srcver=$(stat -c %Y "$tarball")
key=$( { cat "$fragment" "$0"; echo "$srcver"; gcc --version | head -n 1; } | sha256sum | cut -c1-16)
dir=$cache/$key
src=$dir/linux-source-6.1

mkdir -p "$cache" || die "cannot create $cache: pass --cache or set IMEX_DEBUG_KERNEL_CACHE"

result() {
	local rel
	rel=$(cat "$dir/release")
	case $print in
	"") printf 'image=%s\nvmlinux=%s\nkdir=%s\nrelease=%s\n' \
		"$src/arch/x86/boot/bzImage" "$src/vmlinux" "$src" "$rel" ;;
	image) echo "$src/arch/x86/boot/bzImage" ;;
	vmlinux) echo "$src/vmlinux" ;;
	kdir) echo "$src" ;;
	release) echo "$rel" ;;
	esac
}

[ -f "$dir/done" ] && { result; exit 0; }

# One build per key at a time: a second caller waits for the first.
exec 9>"$cache/$key.lock"
if ! flock -n 9; then
	echo "$me: another build of $key is running; waiting for it" >&2
	flock 9
fi
[ -f "$dir/done" ] && { result; exit 0; }

log=$dir/build.log
start=$(date +%s)
# A half-done earlier build (interrupted) is started over.
rm -rf "$dir"
mkdir -p "$dir"
echo "$me: building the debug kernel in $dir (niced; ~10 min on 2 idle cores, log: $log)" >&2
fail() {
	tail -n 40 "$log" >&2
	die "$* (full log: $log)" 1
}
nice -n 19 tar -xJf "$tarball" -C "$dir" || die "cannot extract $tarball into $dir" 1
[ -f "$src/Makefile" ] || die "$tarball did not unpack to linux-source-6.1/" 1

mk() { nice -n 19 make -C "$src" -j"$(nproc)" "$@" >>"$log" 2>&1; }
mk tinyconfig || fail "make tinyconfig failed"
(cd "$src" && nice -n 19 scripts/kconfig/merge_config.sh -m .config "$fragment") >>"$log" 2>&1 ||
	fail "merging $fragment failed"
mk olddefconfig || fail "make olddefconfig failed"

# Kconfig drops an option whose dependencies are not met without a word:
# every option of the fragment must be in the final config as written.
bad=""
while IFS= read -r line; do
	if [[ $line =~ ^(CONFIG_[A-Z0-9_]+)=(.*)$ ]]; then
		grep -qxF -- "$line" "$src/.config" || bad+=" ${BASH_REMATCH[1]}"
	elif [[ $line =~ ^#\ (CONFIG_[A-Z0-9_]+)\ is\ not\ set$ ]]; then
		! grep -q "^${BASH_REMATCH[1]}=" "$src/.config" || bad+=" ${BASH_REMATCH[1]}(should be off)"
	fi
done < "$fragment"
[ -z "$bad" ] || die "these options of $fragment did not end up as asked in $src/.config:$bad; fix their dependencies in the fragment" 1

mk bzImage || fail "building bzImage failed"
# "modules" builds no module here but writes Module.symvers, which
# out-of-tree modules need to resolve the kernel's symbols.
mk modules_prepare modules || fail "make modules_prepare failed"
[ -f "$src/Module.symvers" ] || fail "no Module.symvers after make modules"
# --no-print-directory: under a parent make (make check-debug) the
# "Entering directory" lines would land in the release file.
make -s --no-print-directory -C "$src" kernelrelease > "$dir/release" 2>>"$log" ||
	fail "make kernelrelease failed"
[[ $(cat "$dir/release") =~ ^[0-9][^[:space:]]*$ ]] ||
	fail "make kernelrelease printed '$(head -c 200 "$dir/release")', not a release"
touch "$dir/done"
echo "$me: built $(cat "$dir/release") in $(( $(date +%s) - start )) s" >&2
# Older builds (another key) are not needed any more.
find "$cache" -mindepth 1 -maxdepth 1 ! -name "$key" ! -name "$key.lock" \
	-mmin +60 -exec rm -rf {} + 2>/dev/null || true
result
