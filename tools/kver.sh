#!/bin/sh
# Print the newest installed Debian kernel of a series (default 6.1, Debian
# 12's own) that has both an image and headers, so the module builds and
# boots against a packaged kernel rather than the running one.
#   tools/kver.sh [SERIES]      e.g. tools/kver.sh 6.12
series=${1:-6.1}
for d in $(ls -d /lib/modules/"$series".*/build 2>/dev/null | sort -V -r); do
	v=${d#/lib/modules/}
	v=${v%/build}
	[ -f "/boot/vmlinuz-$v" ] && { echo "$v"; exit 0; }
done
echo "kver: no Linux $series kernel with headers under /lib/modules: run tools/install-deps.sh" >&2
exit 1
