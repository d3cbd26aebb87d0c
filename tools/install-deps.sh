#!/bin/sh
# Install every Debian package imex needs to build, test and run its demo,
# then libraft 0.22.1, which Debian 12 lacks (tools/build-libraft.sh), and
# unpack (not install: no service may start here) promtool and
# prometheus-node-exporter for the metrics tests (tools/fetch-prometheus.sh).
# Idempotent: prints nothing and exits 0 when everything is already present.
set -eu

PACKAGES="
build-essential
pkg-config
kmod
linux-image-amd64
linux-headers-amd64
sparse
qemu-system-x86
busybox-static
vde2
iproute2
podman
crun
libnl-3-dev
libnl-genl-3-dev
libkmod-dev
libcmocka-dev
libjson-c-dev
libyajl-dev
libsystemd-dev
libssl-dev
uuid-dev
cppcheck
clang
libclang-rt-14-dev
clang-tidy
linux-source-6.1
flex
bison
bc
libelf-dev
xz-utils
dkms
graphviz
groff-base
python3-yaml
autoconf
automake
libtool
dpkg-dev
libslurm-dev
slurmctld
slurmd
slurm-client
munge
"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then
		missing="$missing $p"
	fi
done

# The second kernel the module is tested on (Debian 12 ships it as
# linux-image-6.12.*+deb12, in bookworm-security; older archives only in
# bookworm-backports).  Its version moves, so it is looked up, not listed.
KERNEL2=6.12
here=$(cd "$(dirname "$0")" && pwd)
need_kernel2=0
"$here/kver.sh" "$KERNEL2" >/dev/null 2>&1 || need_kernel2=1

[ -z "$missing" ] && [ "$need_kernel2" = 0 ] &&
	"$here/fetch-prometheus.sh" && exec "$here/build-libraft.sh"

if [ "$(id -u)" -ne 0 ]; then
	[ -n "$missing" ] && echo "install-deps: missing Debian packages:$missing" >&2
	[ "$need_kernel2" = 1 ] && echo "install-deps: missing Linux $KERNEL2 image and headers" >&2
	echo "install-deps: run as root (tools/install-deps.sh)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# A stale or empty package list makes apt-get install fail; refresh once.
apt-get -q update >/dev/null || { echo "install-deps: apt-get update failed" >&2; exit 1; }

kernel2_version() {
	apt-cache search --names-only "^linux-headers-$KERNEL2\.[0-9]+\+(deb12|bpo)-amd64\$" |
		awk '{ sub(/^linux-headers-/, "", $1); print $1 }' | sort -V | tail -n 1
}

if [ "$need_kernel2" = 1 ]; then
	v=$(kernel2_version)
	if [ -z "$v" ]; then
		cat > /etc/apt/sources.list.d/imex-bookworm-backports.sources <<-SRC
		Types: deb
		URIs: http://deb.debian.org/debian
		Suites: bookworm-backports
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		SRC
		apt-get -q update >/dev/null || { echo "install-deps: apt-get update failed" >&2; exit 1; }
		v=$(kernel2_version)
	fi
	[ -n "$v" ] || { echo "install-deps: no Linux $KERNEL2 kernel in the archive (bookworm-security or bookworm-backports)" >&2; exit 1; }
	missing="$missing linux-image-$v-unsigned linux-headers-$v"
fi

echo "install-deps: installing:$missing"
# shellcheck disable=SC2086
apt-get -q -y --no-install-recommends install $missing >/dev/null ||
	{ echo "install-deps: apt-get install failed for:$missing" >&2; exit 1; }

"$here/fetch-prometheus.sh"
exec "$here/build-libraft.sh"
