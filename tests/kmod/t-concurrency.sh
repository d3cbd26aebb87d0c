# Acceptance 6: processes create and delete domains, grant and revoke
# channels, open channels and dump state in parallel for 20 s; afterwards
# the state is consistent with itself, with /dev and with what each
# process last observed.  The kernel log is checked by the harness.
. tests/vm/lib.sh
. tests/kmod/common.sh
DURATION=${IMEX_STRESS_SECONDS:-20}
log=$IMEX_VM_OUT/stress
mkdir -p "$log"

serve_start
$NL -q create name=pool members=$NODE channels=200 || fail "create pool"
end=$(( $(cut -d. -f1 /proc/uptime) + DURATION ))
running() { [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; }

# Creator/deleter k owns domain wk and channels k*10..k*10+4; the last one
# also collides with creator 0's range on purpose.
creator() {
	k=$1 range=$2 n=0
	while running; do
		if $NL -q create name=w$k members=$NODE channels=$range 2>/dev/null; then
			echo "present w$k" > "$log/w$k.last"
		fi
		if $NL -q delete name=w$k 2>/dev/null; then
			echo "absent w$k" > "$log/w$k.last"
		fi
		n=$((n + 1))
	done
	echo "$n" > "$log/w$k.rounds"
}

allocator() {
	n=0
	while running; do
		$NL -q alloc name=pool channels=201 2>/dev/null &&
			$NL -q free name=pool channels=201 2>/dev/null
		n=$((n + 1))
	done
	echo "$n" > "$log/alloc.rounds"
}

# An open, then the info ioctl: either may meet a revocation.
opener() {
	n=0 bad=0 codes=
	while running; do
		id=$(( $(od -An -N1 -tu1 /dev/urandom) % 40 ))
		$CHANOPEN $DEV/channel$id info >/dev/null 2>&1
		rc=$?
		case $rc in
		0|2|6|19|67) ;;	# ok, ENOENT (no node), ENXIO, ENODEV (revoked), ENOLINK
		*) bad=$((bad + 1)) codes="$codes channel$id:$rc" ;;
		esac
		n=$((n + 1))
	done
	echo "$n $bad" > "$log/open.rounds"
	echo "$codes" > "$log/open.codes"
}

dumper() {
	n=0 bad=0
	while running; do
		$NL -q domains >/dev/null || bad=$((bad + 1))
		$NL -q channels >/dev/null || bad=$((bad + 1))
		n=$((n + 1))
	done
	echo "$n $bad" > "$log/dump.rounds"
}

pids=
creator 0 0-4 & pids="$pids $!"
creator 1 10-14 & pids="$pids $!"
creator 2 4-5 & pids="$pids $!"
allocator & pids="$pids $!"
opener & pids="$pids $!"
dumper & pids="$pids $!"
for p in $pids; do wait "$p"; done

cat "$log"/*.rounds
read -r opens open_bad < "$log/open.rounds"
read -r dumps dump_bad < "$log/dump.rounds"
[ "$open_bad" = 0 ] ||
	fail "$open_bad opens failed with an unexpected exit code (channel:code):$(cat "$log/open.codes")"
[ "$dump_bad" = 0 ] || fail "$dump_bad dumps failed"
for k in 0 1; do
	[ "$(cat "$log/w$k.rounds")" -gt 0 ] || fail "creator $k made no progress"
done

# Consistency: what each creator last saw is what the kernel holds.
for k in 0 1 2; do
	[ -f "$log/w$k.last" ] || continue
	if $NL -q domain name=w$k >/dev/null 2>&1; then now="present w$k"; else now="absent w$k"; fi
	[ "$now" = "$(cat "$log/w$k.last")" ] || fail "w$k is $now but its creator last saw $(cat "$log/w$k.last")"
done
# Every granted channel belongs to a listed domain whose count matches,
# and /dev holds exactly the granted channels.
$NL domains > "$log/domains.txt"
$NL channels > "$log/channels.txt"
while read -r line; do
	name=$(echo "$line" | sed 's/.* name=\([^ ]*\) .*/\1/')
	count=$(echo "$line" | sed 's/.*nchannels=\([0-9]*\).*/\1/')
	[ "$(grep -c " name=$name " "$log/channels.txt")" = "$count" ] ||
		fail "domain $name claims $count channels: $(grep " name=$name " "$log/channels.txt")"
done < "$log/domains.txt"
total=0
for n in $(sed 's/.*nchannels=\([0-9]*\).*/\1/' "$log/domains.txt"); do total=$((total + n)); done
[ "$(wc -l < "$log/channels.txt")" = "$total" ] || fail "channels without a domain"
sed 's/.* channel=\([0-9]*\) .*/channel\1/' "$log/channels.txt" | sort > "$log/want.txt"
ls $DEV 2>/dev/null | sort > "$log/have.txt"
diff -u "$log/want.txt" "$log/have.txt" || fail "/dev/imex-channels differs from the granted channels"

# A dump that a change races is flagged (NLM_F_DUMP_INTR), so readers know
# to retry.
$NL -q alloc name=pool count=1500 || fail "alloc 1500 channels"
$NL dump-intr change=200 || fail "a raced dump was not flagged"
