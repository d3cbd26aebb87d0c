#!/bin/sh
# The in-kernel API's documentation: every symbol imex.ko exports has
# kernel-doc in kmod/include/imex_api.h, and scripts/kernel-doc (its path is
# $1) finds the header and the module's sources clean.
set -u
cd "$(dirname "$0")/../../.." || exit 2
kdoc=${1:?usage: check-doc.sh PATH-TO-kernel-doc}
rc=0
out=$(perl "$kdoc" -none -v kmod/include/imex_api.h kmod/*.c kmod/*.h 2>&1 |
	grep -v ': info: Scanning doc for ')
if [ -n "$out" ]; then
	echo "$out"
	rc=1
fi
for sym in $(sed -n 's/^EXPORT_SYMBOL_GPL(\(.*\));$/\1/p' kmod/*.c); do
	if ! grep -q "^ \* $sym() - " kmod/include/imex_api.h; then
		echo "kapi: $sym is exported but has no kernel-doc in kmod/include/imex_api.h"
		rc=1
	fi
done
[ $rc = 0 ] && echo "kapi: every exported symbol has kernel-doc; kernel-doc finds no fault"
exit $rc
