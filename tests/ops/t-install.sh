#!/bin/sh
# make install into a DESTDIR puts every part where the docs say, a program
# builds against the installed library through its pkg-config file, and
# make uninstall then leaves no file behind.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "t-install: FAIL: $*" >&2; exit 1; }

kver=${KVER:-$("$top"/tools/kver.sh)}
multiarch=$(${CC:-cc} -print-multiarch)
libdir=usr/lib${multiarch:+/$multiarch}
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
d=$t/root
mkdir -p "$d"

make -s -C "$top" install DESTDIR="$d" KVER="$kver" > "$t/log" 2>&1 ||
	{ cat "$t/log" >&2; fail "make install DESTDIR=$d"; }

for f in \
	"lib/modules/$kver/extra/imex.ko" \
	usr/sbin/imexd usr/sbin/imexctl \
	"$libdir/libimexctl.so.1.0.0" "$libdir/libimexctl.so.1" "$libdir/libimexctl.so" \
	"$libdir/libimexctl.a" "$libdir/pkgconfig/libimexctl.pc" \
	usr/include/imexctl.h usr/include/imex/imex_api.h \
	usr/share/man/man8/imexctl.8 usr/share/man/man8/imexd.8 usr/share/man/man8/imex-share.8 \
	usr/sbin/imex-share \
	usr/share/man/man5/imexd.conf.5 usr/share/man/man3/libimexctl.3 \
	"${unitdir#/}/imexd.service" etc/imex/imexd.conf \
	usr/lib/systemd/catalog/imexd.catalog \
	etc/modprobe.d/imex.conf.example \
	usr/share/bash-completion/completions/imexctl
do
	[ -e "$d/$f" ] || fail "make install did not install /$f"
done
# No depmod into the real /lib/modules when installing elsewhere.
[ ! -e "$d/lib/modules/$kver/modules.dep" ] || fail "depmod ran into DESTDIR"

# A library user finds it through pkg-config and links against it.
cat > "$t/use.c" <<'C'
#include <imexctl.h>
int main(void)
{
	struct imexctl *ctx;

	if (imexctl_new(&ctx) < 0)
		return 1;
	imexctl_free(ctx);
	return 0;
}
C
pc() { PKG_CONFIG_SYSROOT_DIR=$d PKG_CONFIG_PATH=$d/$libdir/pkgconfig pkg-config "$@" libimexctl; }
# shellcheck disable=SC2046
${CC:-cc} -o "$t/use" "$t/use.c" $(pc --cflags) $(pc --libs) ||
	fail "cannot build a program against the installed libimexctl"
LD_LIBRARY_PATH=$d/$libdir "$t/use" || fail "a program linked to the installed libimexctl does not run"
[ "$(readelf -d "$t/use" | sed -n 's/.*Shared library: \[\(libimexctl[^]]*\)\].*/\1/p')" = libimexctl.so.1 ] ||
	fail "the program is not linked against libimexctl.so.1"

grep -qx 'ExecStart=/usr/sbin/imexd -f' "$d/$unitdir/imexd.service" ||
	fail "the unit does not start /usr/sbin/imexd: $(grep ExecStart "$d/$unitdir/imexd.service")"
# Under another PREFIX the unit starts the imexd installed there.
make -s -C "$top/imexd" install DESTDIR="$t/local" PREFIX=/usr/local > "$t/log" 2>&1 ||
	{ cat "$t/log" >&2; fail "make -C imexd install PREFIX=/usr/local"; }
grep -qx 'ExecStart=/usr/local/sbin/imexd -f' "$t/local/$unitdir/imexd.service" ||
	fail "with PREFIX=/usr/local the unit starts: $(grep ExecStart "$t/local/$unitdir/imexd.service")"

make -s -C "$top" uninstall DESTDIR="$d" KVER="$kver" > "$t/log" 2>&1 ||
	{ cat "$t/log" >&2; fail "make uninstall DESTDIR=$d"; }
left=$(find "$d" ! -type d)
[ -z "$left" ] || fail "make uninstall left files behind: $left"
for dir in usr/include/imex etc/imex usr/share/doc/imex; do
	[ ! -d "$d/$dir" ] || fail "make uninstall left the directory /$dir"
done
echo "t-install: ok: make install DESTDIR put every part in place; make uninstall removed them all"
