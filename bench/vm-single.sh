#!/bin/sh
# Guest side of the single-VM benchmarks (run by bench/run.sh through
# tests/vm/run.sh, imex.ko loaded with a fabric identity):
#   vm-single.sh REPS OPEN_ITER RESOLVE_ITER [DOMAINS [ROWS]]
# DOMAINS (default 64) domains of 32 channels each; `make bench` uses 64,
# all 2048 channels, the quick mode fewer.  ROWS (default all): the rows to
# measure, comma-separated (bench/run.sh --only).  Domains are made as the
# manager would (DOMAIN_SET on one attached socket): the point is the
# memory they hold, not the request path.
# Raw result lines go to $IMEX_VM_OUT/raw.txt (see bench/report.c).
cd "$(dirname "$0")/.." || exit 2
. tests/vm/lib.sh
. tests/kmod/common.sh
reps=$1 open_iter=$2 resolve_iter=$3 ndom=${4:-64} BENCH_ONLY=${5:-all}
. bench/rows.sh
B=bench/imex-bench
raw=$IMEX_VM_OUT/raw.txt
: > "$raw"
script=$IMEX_VM_OUT/domains

# module_memory: kernel memory that 64 domains holding all 2048 channels
# (32 each, every device node created) add to a loaded, idle module.
# Kernel memory is Slab + VmallocUsed + Percpu from /proc/meminfo (large
# kmallocs count in Slab), read after dropping the reclaimable caches, so
# what remains is held; the baseline is the same figure with the module
# loaded and nothing granted, read just before the grants.  The devtmpfs
# nodes and struct devices of the channels are included on purpose: they
# exist because of the grants.  Deleting everything before the next
# repetition also shows the memory comes back (the baseline stays level).
kmem_kib() {
	sync
	echo 2 > /proc/sys/vm/drop_caches
	awk '/^(Slab|VmallocUsed|Percpu):/ { s += $2 } END { print s }' /proc/meminfo
}

# Bytes per slab cache, and the caches that grew most: where memory went.
slab_bytes() { awk 'NR > 2 { print $1, $3 * $4 }' /proc/slabinfo; }
slab_growth() {
	awk 'NR == FNR { b[$1] = $2; next } { d = $2 - b[$1]; if (d > 0) print int(d / 1024), $1 }' "$1" "$2" |
		sort -rn | head -n 8 | sed 's/^/#   /'
}
phase() { echo "# $(cut -d' ' -f1 /proc/uptime) s: $*"; }

# Manager scripts: DOMAINS domains m0.. of 32 channels; one domain "cdi"
# with the same channels (created with 32, then grown 32 at a time, as a
# domain grows by allocations); and their deletions.
{ echo attach; for d in $(seq 0 $((ndom - 1))); do
	echo "set name=m$d uuid=aaaaaaaa-0000-0000-0000-$(printf %012x "$d") fabric=$FABRIC members=$NODE gen=1 channels=$((d * 32))-$((d * 32 + 31))"
done; } > "$script.create"
{ echo attach; for d in $(seq 0 $((ndom - 1))); do
	echo "remove name=m$d"
done; } > "$script.delete"
{ echo attach; for d in $(seq 0 $((ndom - 1))); do
	echo "set name=cdi uuid=aaaaaaaa-0000-0000-0000-0000000cd100 fabric=$FABRIC members=$NODE gen=$((d + 1)) channels=0-$((d * 32 + 31))"
  done; } > "$script.cdi"
printf 'attach\nremove name=cdi\n' > "$script.cdi-delete"
nch=$((ndom * 32))

want module_memory &&
for r in $(seq "$reps"); do
	sleep 1	# let RCU-deferred frees of the previous round land
	before=$(kmem_kib)
	slab_bytes > "$IMEX_VM_OUT/slab.before"
	phase "memory round $r: creating $ndom domains"
	$NL -q -f "$script.create" || fail "creating $ndom domains"
	[ "$(ls $DEV | wc -l)" = "$nch" ] || fail "expected $nch channel devices, found $(ls $DEV | wc -l)"
	after=$(kmem_kib)
	slab_bytes > "$IMEX_VM_OUT/slab.after"
	echo "# kernel memory +$((after - before)) KiB; largest slab growth (KiB):"
	slab_growth "$IMEX_VM_OUT/slab.before" "$IMEX_VM_OUT/slab.after"
	# Quick mode grants fewer: scale to 2048 channels and 64 domains.
	echo "sample module_memory $(( (after - before) * 64 / ndom )) $before" >> "$raw"
	phase "memory round $r: deleting"
	$NL -q -f "$script.delete" || fail "deleting $ndom domains"
done

if want cdi_spec; then
	phase "cdi: $nch channels in one domain"
	$NL -q -f "$script.cdi" || fail "creating the domain cdi"
	[ "$(ls $DEV | wc -l)" = "$nch" ] || fail "cdi: expected $nch channel devices"
	$B cdi cdi /tmp/bench-cdi "$reps" >> "$raw" || fail "cdi"
	$NL -q -f "$script.cdi-delete" || fail "deleting cdi"
fi

# A usable (READY) domain for open+close and resolve: the stand-in
# manager keeps it so.
if want channel_open || want channel_resolve; then
	serve_start
	$NL -q create name=oc members=$NODE channels=5 || fail "create oc"
	if want channel_open; then
		phase "open+close"
		$B openclose $DEV/channel5 "$open_iter" "$reps" >> "$raw" || fail "openclose"
	fi
	if want channel_resolve; then
		phase "resolve"
		insmod tests/kmod/kapi/imex_kapi_test.ko || fail "cannot load imex_kapi_test.ko"
		$B resolve $DEV/channel5 "$resolve_iter" "$reps" >> "$raw" || { rmmod imex_kapi_test; fail "resolve"; }
		rmmod imex_kapi_test || fail "rmmod imex_kapi_test"
	fi
	$NL -q delete name=oc || fail "delete oc"
	serve_stop
fi

# channel_open_busy (see bench/local.c): open+close of domain ob's channel
# while one manager (the loader) grows domain nb from 1 to 4096 channels
# (the most one DOMAIN_SET carries) and back, in a loop.  Channel 8191
# keeps nb: reload with max_channels=8192.
if ! want channel_open_busy; then
	phase "done"
	cat "$raw"
	exit 0
fi
phase "open+close next to a 4096-channel grant"
imex_unload
imex_load fabric_uuid=$FABRIC_UUID fabric_partition=$FABRIC_PART max_channels=8192
{ echo attach
  echo "set name=ob uuid=aaaaaaaa-0000-0000-0000-0000000000b0 fabric=$FABRIC members=$NODE gen=1 channels=5 mode=0666"
  echo "set name=nb uuid=aaaaaaaa-0000-0000-0000-0000000000b1 fabric=$FABRIC members=$NODE gen=1 channels=8191"
  echo "sh touch /tmp/bench-loader-ready"
  for i in $(seq 1 1000); do
	echo "set name=nb uuid=aaaaaaaa-0000-0000-0000-0000000000b1 fabric=$FABRIC members=$NODE gen=$((10 + 2 * i)) channels=16-4110,8191"
	echo "set name=nb uuid=aaaaaaaa-0000-0000-0000-0000000000b1 fabric=$FABRIC members=$NODE gen=$((11 + 2 * i)) channels=8191"
  done
  echo hold; } > "$script.busy"
$NL -q -f "$script.busy" > "$IMEX_VM_OUT/loader.log" 2>&1 &
loader=$!
wait_for 60 test -e /tmp/bench-loader-ready
$B openclose-busy $DEV/channel5 "$open_iter" "$reps" "$loader" >> "$raw" ||
	{ kill -CONT $loader; kill -9 $loader; fail "openclose-busy"; }
kill -CONT $loader
kill -9 $loader
wait $loader 2>/dev/null
phase "done"
cat "$raw"
