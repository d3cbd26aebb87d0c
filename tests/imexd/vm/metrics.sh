# Acceptance 2 of issue 15, guest side (in the VM suite, tests/Makefile
# VM_SUITE): Debian's prometheus-node-exporter, with its textfile
# collector on the directory imexd writes imexd.prom into, serves imexd's
# metrics over HTTP, and what it serves matches `imexctl --json` at that
# moment (tests/imexd/vm/metrics-match.py): with no domain, after a create,
# an alloc and a delete; the kernel's export/import counters follow an
# export, an import and two refusals; a clean stop removes the file.
# The exporter comes unpacked from Debian's package (tools/install-deps.sh
# runs tools/fetch-prometheus.sh): without it the test fails.
. tests/imexd/vm/common.sh

ME=$(hostname)
SHARE=tools/imex-share/imex-share
IMEXCTL=tools/imexctl/imexctl
URL=http://127.0.0.1:9100/metrics
TEXTDIR=$W/textfile
OUT=$IMEX_VM_OUT

dir=$(tools/fetch-prometheus.sh --print) ||
	fail "no prometheus-node-exporter in the cache: run tools/install-deps.sh (tools/fetch-prometheus.sh)"
EXPORTER=$dir/bin/prometheus-node-exporter
[ -x "$SHARE" ] || fail "$SHARE is not built: run make"

mkdir -p "$TEXTDIR"
imexd_conf "$W/imexd.conf" LISTEN_ADDRESS=127.0.0.1 "METRICS_TEXTFILE_DIR=$TEXTDIR"
imexd_start metrics "$W/imexd.conf"
_wait_until 30 imexd_attached || fail "imexd did not attach: $(tail -5 "$OUT/imexd.metrics.log")"

# Only the textfile collector: the others read host files a VM may lack.
"$EXPORTER" --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$TEXTDIR" \
	--web.listen-address=127.0.0.1:9100 > "$OUT/node-exporter.log" 2>&1 &
exporter_pid=$!
scrape_ok() { python3 -c "import urllib.request; urllib.request.urlopen('$URL', timeout=5).read()" 2>/dev/null; }
_wait_until 30 scrape_ok || fail "the node exporter does not answer on $URL: $(tail -5 "$OUT/node-exporter.log")"
t_ok "prometheus-node-exporter $("$EXPORTER" --version 2>&1 | head -1 | cut -d' ' -f3) serves $URL"

# match WHAT [NAME=VALUE...]: poll (bounded) until the scrape matches.
match() {
	_what=$1
	shift
	if _wait_until 20 python3 tests/imexd/vm/metrics-match.py "$URL" "$IMEXCTL" "$@" \
		> "$OUT/match.out" 2> "$OUT/match.err"; then
		t_ok "$_what: $(cat "$OUT/match.out")"
	else
		t_fail "$_what: $(cat "$OUT/match.err")"
	fi
}

match "no domain: the scrape matches imexctl" 'imex_up=1' \
	'imex_raft_role{role="leader"}=1' 'imex_exports_total=0' 'imex_imports_total=0'
grep -q "^imex_build_info{version=\"[^\"]*\",node=\"$ME\"} 1$" "$TEXTDIR/imexd.prom" &&
	t_ok "imex_build_info names the node" || t_fail "build info: $(grep build_info "$TEXTDIR/imexd.prom")"

$NL -q create name=m1 members="$ME@127.0.0.1" count=2 || fail "create m1"
match "after create m1 (2 channels)" 'imex_domain_channels{domain="m1"}=2'

$NL -q alloc name=m1 count=3 || fail "alloc on m1"
match "after alloc of 3 more on m1" 'imex_domain_channels{domain="m1"}=5'

# The kernel's counters: one export, one import, EPERM and ENOENT refusals.
$NL channels name=m1 | grep ' chstate=1' | sed 's/.* channel=\([0-9]*\) .*/\1/' > "$OUT/m1.ids"
c1=$(sed -n 1p "$OUT/m1.ids") c2=$(sed -n 2p "$OUT/m1.ids")
$SHARE -c "$c1" export --desc metrics-desc --hold --handle-file "$OUT/mh" > "$OUT/mexp.log" 2>&1 &
exp_pid=$!
_wait_until 20 test -s "$OUT/mh" || fail "export on channel $c1: $(cat "$OUT/mexp.log")"
h=$(cat "$OUT/mh")
[ "$($SHARE -c "$c1" import "$h")" = metrics-desc ] || t_fail "import on channel $c1"
$SHARE -c "$c2" import "$h" --expect EPERM > /dev/null || t_fail "import on channel $c2 was not EPERM"
$SHARE -c "$c1" import "${h%:*}:999999" --expect ENOENT > /dev/null || t_fail "unknown id was not ENOENT"
match "export/import counters" 'imex_exports_total=1' 'imex_imports_total=1' \
	'imex_import_refusals_total{reason="permission"}=1' \
	'imex_import_refusals_total{reason="not_found"}=1' \
	'imex_import_refusals_total{reason="timeout"}=0'
kill -TERM "$exp_pid"
wait "$exp_pid"

$NL -q delete name=m1 || fail "delete m1"
match "after delete m1" 'imex_domain_channels{domain="m1"}=absent'

# A clean stop removes the file; the exporter then has no imex_ series.
if imexd_stop; then
	t_ok "imexd stops (SIGTERM)"
else
	t_fail "imexd stop: $(tail -5 "$OUT/imexd.metrics.log")"
fi
[ ! -e "$TEXTDIR/imexd.prom" ] && t_ok "a clean exit removes imexd.prom" ||
	t_fail "imexd.prom left after a clean exit"
no_imex() { ! python3 -c "import urllib.request; print(urllib.request.urlopen('$URL', timeout=5).read().decode())" | grep -q '^imex_'; }
_wait_until 10 no_imex && t_ok "after the stop the exporter serves no imex_ series" ||
	t_fail "imex_ series still served after the stop"
kill "$exporter_pid" 2>/dev/null
wait "$exporter_pid" 2>/dev/null
grep -q 'AddressSanitizer\|segfault' "$OUT"/imexd.metrics.log && t_fail "imexd crashed (see its log)"
t_done
