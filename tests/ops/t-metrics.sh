#!/bin/sh
# imexd's metrics text passes Debian's `promtool check metrics` (format and
# naming conventions): the formatter's full sample (tests/raft/test_metrics
# --print, every family with values) is checked.  promtool comes unpacked
# from Debian's prometheus package by tools/install-deps.sh
# (tools/fetch-prometheus.sh), never installed.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
dir=$(tools/fetch-prometheus.sh --print) || {
	echo "t-metrics: FAIL: no promtool in the cache: run tools/install-deps.sh (tools/fetch-prometheus.sh)" >&2
	exit 1
}
make -s -C tests/raft build/test_metrics >/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tests/raft/build/test_metrics --print > "$out"
if ! "$dir/bin/promtool" check metrics < "$out"; then
	echo "t-metrics: FAIL: promtool check metrics refused the formatter's output" >&2
	exit 1
fi
n=$(grep -c '^# TYPE ' "$out")
echo "t-metrics: ok: promtool check metrics accepts imexd's metrics ($n families)"
