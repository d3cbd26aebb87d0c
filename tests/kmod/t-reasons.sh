# Reasons: the manager's words for a domain that is not READY and for each
# member's state are stored, reported and cleared; a reason too long is
# refused and changes nothing; the status event carries the members it
# changed; the module says why domains are DOWN when imexd goes; imports
# the system revoked come as one IMPORTS_REVOKED event per domain, node and
# reason, an exporter's own unexport as none.
. tests/vm/lib.sh
. tests/kmod/common.sh
. tests/kmod/share-lib.sh
UA=aaaaaaaa-0000-0000-0000-0000000000a7
SETA="name=da uuid=$UA fabric=$FABRIC"
LONG=$(printf '%0256d' 0)	# IMEX_MESSAGE_MAX: 255 characters and the NUL
MAXR=$(printf '%0255d' 0)

$NL -q node-set node_uuid=$NODEU || fail "node-set"

# dom NAME PATTERN... : the domain's doit line matches every pattern
# (a leading '!' : matches none).
cat > "$OUT/rs-dom.sh" <<'EOF'
name=$1; shift
line=$(tests/kmod/imex-nl domain name=$name) || exit 1
for p in "$@"; do
	case $p in
	!*) ! echo "$line" | grep -q -- "${p#!}" || { echo "domain $name: '${p#!}' in: $line" >&2; exit 1; } ;;
	*) echo "$line" | grep -q -- "$p" || { echo "domain $name: no '$p' in: $line" >&2; exit 1; } ;;
	esac
done
EOF
# Files under $OUT start with rs-: the tests of one boot share it.
# listen TAG COUNT: an events listener for COUNT events, joined when this returns.
cat > "$OUT/rs-listen.sh" <<'EOF'
tests/kmod/imex-nl events count=$2 timeout=20000 > "$IMEX_VM_OUT/rs-ev-$1.log" 2>&1 &
echo $! > "$IMEX_VM_OUT/rs-ev-$1.pid"
i=0; until grep -q poll /proc/$!/wchan 2>/dev/null; do i=$((i+1)); [ $i -lt 200 ] || exit 1; sleep 0.1; done
EOF
# heard TAG PATTERN... : the listener got its events; its log matches each
# pattern (a leading '!' : matches none).
cat > "$OUT/rs-heard.sh" <<'EOF'
tag=$1; shift
pid=$(cat "$IMEX_VM_OUT/rs-ev-$tag.pid")
i=0; while kill -0 $pid 2>/dev/null; do i=$((i+1)); [ $i -lt 250 ] || { echo "listener $tag still waiting" >&2; exit 1; }; sleep 0.1; done
for p in "$@"; do
	case $p in
	!*) ! grep -q -- "${p#!}" "$IMEX_VM_OUT/rs-ev-$tag.log" || { echo "event $tag: '${p#!}' in: $(cat "$IMEX_VM_OUT/rs-ev-$tag.log")" >&2; exit 1; } ;;
	*) grep -q -- "$p" "$IMEX_VM_OUT/rs-ev-$tag.log" || { echo "event $tag: no '$p' in: $(cat "$IMEX_VM_OUT/rs-ev-$tag.log")" >&2; exit 1; } ;;
	esac
done
EOF
DOM="sh $OUT/rs-dom.sh"
LISTEN="sh $OUT/rs-listen.sh"
HEARD="sh $OUT/rs-heard.sh"
SNAP=". tests/vm/lib.sh; . tests/kmod/common.sh; state_snapshot"

$NL -f - > "$OUT/rs-reasons.log" 2>&1 <<SCRIPT || fail "reasons: $(cat "$OUT/rs-reasons.log")"
attach
set $SETA members=$NODE,peer1,peer2 gen=1 channels=1
sh $DOM da state=3 'reason="no member status from imexd yet"'
sh $LISTEN st1 1
status name=da state=degraded dreason=peer1_heartbeat_lost view=peer1:4,peer2:2 mreason=peer1:heartbeat_lost_at_T msince=peer1:1700000000000 mreason=peer2:never_connected msince=peer2:1690000000000
sh $HEARD st1 cmd=8 'reason="peer1_heartbeat_lost"' member=peer1@:4 'why\[peer1\]="heartbeat_lost_at_T"' 'since\[peer1\]=1700000000000' member=peer2@:2 'why\[peer2\]="never_connected"' '!member=$NODE'
sh $DOM da state=3 'reason="peer1_heartbeat_lost"' 'why\[peer1\]="heartbeat_lost_at_T"' 'since\[peer1\]=1700000000000' 'why\[peer2\]="never_connected"' 'since\[peer2\]=1690000000000'
sh $LISTEN st2 1
status name=da state=degraded dreason=peer1_heartbeat_lost view=peer1:4,peer2:2 mreason=peer1:heartbeat_lost_at_T msince=peer1:1700000000000 mreason=peer2:still_never msince=peer2:1690000000000
sh $HEARD st2 cmd=8 member=peer2@:2 'why\[peer2\]="still_never"' '!member=peer1'
status name=da state=degraded view=peer1:4 mreason=peer1:$MAXR
sh $DOM da 'why\[peer1\]="$MAXR"' '!reason='
sh $SNAP $OUT/rs-before
!EINVAL status name=da state=ready view=peer1:3 mreason=peer1:$LONG
msg Attribute failed policy validation
!EINVAL status name=da state=degraded dreason=$LONG view=peer1:3
msg Attribute failed policy validation
!ENOENT status name=da state=ready view=peer1:3,nosuch:3 mreason=peer1:fine
sh $SNAP $OUT/rs-after
sh cmp $OUT/rs-before $OUT/rs-after
sh $DOM da state=3 'why\[peer1\]="$MAXR"' 'member=peer1@:4' '!why\[peer1\]="fine"'
status name=da state=ready dreason=ignored_when_ready view=peer1:3,peer2:3
sh $DOM da state=2 '!reason=' '!why\[' '!since\['
status name=da state=degraded dreason=peer2_refused view=peer2:7 mreason=peer2:TLS_refused msince=peer2:1800000000000
sh $DOM da member=peer2@:7 'why\[peer2\]="TLS_refused"' 'reason="peer2_refused"'
SCRIPT
$DOM da state=1 'reason="imexd exited: no manager on this node"' 'why\[peer2\]="TLS_refused"' ||
	fail "DOWN without its reason: $($NL domain name=da)"
$NL -f - > "$OUT/rs-detach.log" 2>&1 <<SCRIPT || fail "detach: $(cat "$OUT/rs-detach.log")"
attach
status name=da state=degraded dreason=waiting
detach
sh $DOM da state=1 'reason="imexd detached: no manager on this node"'
SCRIPT
$DOM da state=1 'reason="imexd detached: no manager on this node"' ||
	fail "reason changed while DOWN: $($NL domain name=da)"
t_ok "reasons stored, reported, cleared; too long refused, nothing changed; the event carries changed members; DOWN says why"

# 160 members with 63-byte names, 255-byte addresses, a view each and
# 255-byte reasons: MEMBERS fits one attribute only without the views and
# the reasons (about 98 KiB with the reasons alone), so the domain's reply
# leaves both out and still names every member.
UB=aaaaaaaa-0000-0000-0000-0000000000a8
PAD=$(printf '%059d' 0)		# "m" + 3 digits + 59: 63 bytes
ADDR=$(printf '%0255d' 0)
VW=$(printf '%0160d' 0 | tr 0 3)
members="$NODE@$ADDR"
i=1
while [ $i -lt 160 ]; do
	members="$members,m$(printf '%03d' $i)$PAD@$ADDR"
	i=$((i + 1))
done
# One status line per 50 members: a line takes at most 64 arguments.
{
	echo attach
	echo "set name=big uuid=$UB fabric=$FABRIC members=$members gen=1"
	i=1
	while [ $i -lt 160 ]; do
		view="" extra=""
		j=$i
		while [ $j -lt 160 ] && [ $j -lt $((i + 50)) ]; do
			n=m$(printf '%03d' $j)$PAD
			view="$view${view:+,}$n:4:$VW"
			extra="$extra mreason_len=$n:255"
			j=$((j + 1))
		done
		echo "status name=big state=degraded dreason=many_lost view=$view$extra"
		i=$j
	done
} > "$OUT/rs-big.script"
$NL -f "$OUT/rs-big.script" > "$OUT/rs-big.log" 2>&1 ||
	fail "160 members with reasons: $(tail -c 2000 "$OUT/rs-big.log")"
$NL domain name=big > "$OUT/rs-big.dom" 2> "$OUT/rs-big.err" ||
	fail "domain get of 160 members with views and reasons: $(cat "$OUT/rs-big.err")"
n=$(tr ' ' '\n' < "$OUT/rs-big.dom" | grep -c '^member=')
[ "$n" = 160 ] || fail "160 members, the reply has $n"
grep -q "member=m159$PAD@$ADDR:4 " "$OUT/rs-big.dom" ||
	fail "member 159 without its address or state"
! grep -q 'why\[' "$OUT/rs-big.dom" || fail "reasons in a reply they do not fit"
grep -q ' reason="' "$OUT/rs-big.dom" || fail "the domain's reason left out"
! grep -q ":4:$VW" "$OUT/rs-big.dom" || fail "views in a reply they do not fit"
# With 20 reasons left they fit again, without the views.
{
	echo attach
	i=21
	while [ $i -lt 160 ]; do
		line="status name=big state=degraded dreason=many_lost view="
		j=$i sep=""
		while [ $j -lt 160 ] && [ $j -lt $((i + 50)) ]; do
			line="$line${sep}m$(printf '%03d' $j)$PAD:4"
			sep=,
			j=$((j + 1))
		done
		echo "$line"
		i=$j
	done
} > "$OUT/rs-big2.script"
$NL -f "$OUT/rs-big2.script" > "$OUT/rs-big2.log" 2>&1 ||
	fail "fewer reasons: $(tail -c 2000 "$OUT/rs-big2.log")"
$NL domain name=big > "$OUT/rs-big.dom" 2> "$OUT/rs-big.err" ||
	fail "domain get with 20 reasons: $(cat "$OUT/rs-big.err")"
n=$(tr ' ' '\n' < "$OUT/rs-big.dom" | grep -c '^why\[')
[ "$n" = 20 ] || fail "20 reasons kept, the reply has $n"
grep -q "why\[m020$PAD\]=\"$(printf '%0255d' 0 | tr 0 x)\"" "$OUT/rs-big.dom" ||
	fail "member 20's reason not whole"
! grep -q ":4:$VW" "$OUT/rs-big.dom" || fail "views in a reply they do not fit"
$NL -q -f - <<SCRIPT || fail "remove big"
attach
remove name=big
SCRIPT
t_ok "160 long members: views and reasons left out of the reply, every member in it"

# Two local imports of one export; the export ends (its owner's own doing):
# its importers see it, no event.  Two more of another export; the channel
# is revoked (the system's doing): one event, count 2.  The listener takes
# two events: the revocation's CHANNEL_DEL and IMPORTS_REVOKED, so an event
# for the unexport would come first and push the second one out.
$NL -f - > "$OUT/rs-revoked.log" 2>&1 <<SCRIPT || fail "imports revoked: $(cat "$OUT/rs-revoked.log")"
attach
status name=da state=ready
sh $SHARE -c 1 export --desc one --hold --handle-file $OUT/rs-h1 > $OUT/rs-exp1.log 2>&1 & echo \$! > $OUT/rs-exp1.pid
sh i=0; until test -s $OUT/rs-h1; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh $SHARE -c 1 import \$(cat $OUT/rs-h1) --wait-revoke 60 > $OUT/rs-imp1a.log 2>&1 & echo \$! > $OUT/rs-imp1a.pid
sh $SHARE -c 1 import \$(cat $OUT/rs-h1) --wait-revoke 60 > $OUT/rs-imp1b.log 2>&1 & echo \$! > $OUT/rs-imp1b.pid
sh i=0; until grep -q one $OUT/rs-imp1a.log && grep -q one $OUT/rs-imp1b.log; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh $LISTEN rv 2
sh kill -TERM \$(cat $OUT/rs-exp1.pid)
sh i=0; until ! kill -0 \$(cat $OUT/rs-imp1a.pid) 2>/dev/null; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh i=0; until ! kill -0 \$(cat $OUT/rs-imp1b.pid) 2>/dev/null; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh grep -q 'reason unexported' $OUT/rs-imp1a.log
sh grep -q 'reason unexported' $OUT/rs-imp1b.log
sh $SHARE -c 1 export --desc two --hold --handle-file $OUT/rs-h2 > $OUT/rs-exp2.log 2>&1 & echo \$! > $OUT/rs-exp2.pid
sh i=0; until test -s $OUT/rs-h2; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh $SHARE -c 1 import \$(cat $OUT/rs-h2) --wait-revoke 60 > $OUT/rs-imp2a.log 2>&1 & echo \$! > $OUT/rs-imp2a.pid
sh $SHARE -c 1 import \$(cat $OUT/rs-h2) --wait-revoke 60 > $OUT/rs-imp2b.log 2>&1 & echo \$! > $OUT/rs-imp2b.pid
sh i=0; until grep -q two $OUT/rs-imp2a.log && grep -q two $OUT/rs-imp2b.log; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
set $SETA members=$NODE,peer1,peer2 gen=2 channels=2
sh $HEARD rv cmd=36 name=da uuid=$UA handle_node=$NODEU imports=2 revoke_reason=3 '!revoke_reason=0'
sh i=0; until ! kill -0 \$(cat $OUT/rs-imp2a.pid) 2>/dev/null; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh i=0; until ! kill -0 \$(cat $OUT/rs-imp2b.pid) 2>/dev/null; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh grep -q 'reason channel-gone' $OUT/rs-imp2a.log
sh kill -TERM \$(cat $OUT/rs-exp2.pid)
sh i=0; until ! kill -0 \$(cat $OUT/rs-exp2.pid) 2>/dev/null; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
SCRIPT
expect_counts 0 0
t_ok "imports revoked: none for an unexport; one event per domain, node and reason for a channel revoked"

$NL -q -f - <<SCRIPT || fail "remove da"
attach
remove name=da
SCRIPT
t_done
