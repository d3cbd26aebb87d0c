#!/bin/sh
# Every man page renders without a single groff warning, on a terminal and
# in the default device, and names itself in its .TH line.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
fail=0
n=0
for f in "$top"/Documentation/man/*.[1-8]; do
	n=$((n + 1))
	base=${f##*/}
	name=${base%.*}
	sec=${base##*.}
	# The preprocessors the page asks for, as man(1) reads them: '\" t
	pre=""
	head -n 1 "$f" | grep -q "^'\\\\\" [a-z]*t" && pre=-t
	for dev in "-Tutf8 -rLL=78n" "-Tps"; do
		# shellcheck disable=SC2086
		out=$(LC_ALL=C.UTF-8 groff -ww $pre -man $dev -z "$f" 2>&1)
		if [ -n "$out" ]; then
			echo "t-man: FAIL: $base ($dev):" >&2
			echo "$out" >&2
			fail=1
		fi
	done
	grep -qi "^\.TH \"\{0,1\}$name\"\{0,1\} \"\{0,1\}$sec\b" "$f" ||
		{ echo "t-man: FAIL: $base: its .TH line does not say $name $sec" >&2; fail=1; }
done
[ "$n" -gt 0 ] || { echo "t-man: FAIL: no man pages in Documentation/man" >&2; exit 1; }
[ "$fail" -eq 0 ] || exit 1
echo "t-man: ok: $n man pages render without warnings"
