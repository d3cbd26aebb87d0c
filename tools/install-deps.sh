#!/bin/sh
# Install every Debian package imex needs to build, test and run its demo.
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
libsystemd-dev
libssl-dev
uuid-dev
cppcheck
"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing Debian packages:$missing" >&2
	echo "install-deps: run as root (or: sudo apt-get install$missing)" >&2
	exit 1
fi

echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
# A stale or empty package list makes apt-get install fail; refresh once.
apt-get -q update >/dev/null || { echo "install-deps: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086
apt-get -q -y --no-install-recommends install $missing >/dev/null ||
	{ echo "install-deps: apt-get install failed for:$missing" >&2; exit 1; }
