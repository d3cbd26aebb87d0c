#!/bin/sh
# Build and install libraft 0.22.1 (raft.h, raft/fixture.h, libraft.so.0,
# raft.pc under /usr/local) from Debian's own source package, which Debian 12
# lacks: its libraft-dev is the abandoned 0.15 line.  The source comes from
# trixie through a private apt configuration under $IMEX_RAFT_CACHE, so the
# system's sources.list stays untouched.  Called by install-deps.sh after the
# build dependencies are installed; prints nothing and exits 0 when that
# version is already installed.
set -eu

VERSION=0.22.1
SUITE=trixie
PREFIX=/usr/local
CACHE=${IMEX_RAFT_CACHE:-/var/cache/imex/raft}

if pkg-config --exact-version="$VERSION" raft 2>/dev/null &&
	[ -f "$PREFIX/include/raft/fixture.h" ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "build-libraft: libraft $VERSION is not installed; run as root (tools/install-deps.sh)" >&2
	exit 1
fi

echo "build-libraft: building libraft $VERSION from Debian's $SUITE source package"
mkdir -p "$CACHE/lists/partial" "$CACHE/archives/partial" "$CACHE/src"
cat > "$CACHE/sources.list" <<EOF
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $SUITE main
EOF
apt_private() {
	apt-get -q -o Dir::Etc::SourceList="$CACHE/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$CACHE/lists" \
		-o Dir::Cache="$CACHE" \
		-o APT::Sandbox::User=root "$@"
}

cd "$CACHE/src"
rm -rf raft-*/ ./*.dsc ./*.tar.*
apt_private update >/dev/null ||
	{ echo "build-libraft: apt-get update of $SUITE sources failed" >&2; exit 1; }
apt_private source --download-only raft >/dev/null ||
	{ echo "build-libraft: apt-get source raft ($SUITE) failed" >&2; exit 1; }
dsc=
for f in raft_"$VERSION"-*.dsc; do [ -f "$f" ] && dsc=$f; done
[ -n "$dsc" ] || {
	echo "build-libraft: $SUITE no longer has raft $VERSION (found: $(ls ./*.dsc 2>/dev/null))" >&2
	exit 1
}
# apt checked the files against the signed Sources index.
dpkg-source -x "$dsc" >/dev/null 2>&1 ||
	{ echo "build-libraft: dpkg-source -x $dsc failed" >&2; exit 1; }
cd "raft-$VERSION"
log=$CACHE/build.log
{
	autoreconf -i &&
	./configure --prefix="$PREFIX" --disable-uv --disable-example \
		--disable-benchmark --disable-static &&
	make -j"$(nproc)" &&
	make install
} >"$log" 2>&1 || {
	tail -n 30 "$log" >&2
	echo "build-libraft: build failed; the whole log is $log" >&2
	exit 1
}
ldconfig
pkg-config --exact-version="$VERSION" raft ||
	{ echo "build-libraft: installed, but pkg-config does not find raft $VERSION" >&2; exit 1; }
echo "build-libraft: installed libraft $VERSION under $PREFIX"
