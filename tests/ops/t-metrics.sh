#!/bin/sh
# imexd's metrics text passes Debian's `promtool check metrics` (format and
# naming conventions): the formatter's full sample (tests/imexd/raft/test_metrics
# --print, every family with values) is checked, and every family has its
# row in Documentation/metrics.md.  promtool comes unpacked
# from Debian's prometheus package by tools/install-deps.sh
# (tools/fetch-prometheus.sh), never installed.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
dir=$(tools/fetch-prometheus.sh --print) || {
	echo "t-metrics: FAIL: no promtool in the cache: run tools/install-deps.sh (tools/fetch-prometheus.sh)" >&2
	exit 1
}
make -s -C tests/imexd/raft build/test_metrics >/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tests/imexd/raft/build/test_metrics --print > "$out"
if ! "$dir/bin/promtool" check metrics < "$out"; then
	echo "t-metrics: FAIL: promtool check metrics refused the formatter's output" >&2
	exit 1
fi
# Every family, with its type, has its row in Documentation/metrics.md.
undoc=$(awk '$1 == "#" && $2 == "TYPE" { print $3, $4 }' "$out" |
	while read -r name type; do
		grep -q "^| \`$name\` | $type |" Documentation/metrics.md || echo "$name ($type)"
	done)
if [ -n "$undoc" ]; then
	echo "t-metrics: FAIL: not documented in Documentation/metrics.md:" $undoc >&2
	exit 1
fi
n=$(grep -c '^# TYPE ' "$out")
echo "t-metrics: ok: promtool check metrics accepts imexd's metrics ($n families, each documented)"
