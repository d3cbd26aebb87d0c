#!/bin/sh
# Print the newest Debian kernel version that has headers installed, so the
# module builds against the packaged kernel rather than the running one.
for d in $(ls -d /lib/modules/*/build 2>/dev/null | sort -V -r); do
	v=${d#/lib/modules/}
	v=${v%/build}
	[ -f "/boot/vmlinuz-$v" ] && { echo "$v"; exit 0; }
done
echo "kver: no kernel headers under /lib/modules/*/build: run tools/install-deps.sh" >&2
uname -r
