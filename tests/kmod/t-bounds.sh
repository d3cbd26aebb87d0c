# Bounds of the kernel side that a caller (or the manager on a caller's
# behalf) can fill: members per domain (IMEX_MEMBERS_MAX, E2BIG), domains per
# node (IMEX_DOMAINS_MAX, ENOSPC) and requests queued
# for the manager (IMEX_REQS_MAX, ENOBUFS).  Each bound is reached exactly:
# the last entry that fits is accepted, the next one refused with its errno
# and an extended-ack message, and the room comes back once entries go.
# (Exports and imports per fd, exports per node and pending remote imports
# are covered by t-share-upcall.sh.)
. tests/vm/lib.sh
. tests/kmod/common.sh
OUT=${IMEX_VM_OUT:-/tmp}
MEMBERS_MAX=160
DOMAINS_MAX=256
REQS_MAX=64

uuid() { printf 'bbbbbbbb-0000-0000-0000-%012x' "$1"; }

# members N: this node and N-1 others, comma-separated.
members() {
	_l=$NODE
	_i=1
	while [ $_i -lt "$1" ]; do
		_l="$_l,m$_i"
		_i=$((_i + 1))
	done
	echo "$_l"
}

# --- members per domain -------------------------------------------------------
M_OK=$(members $MEMBERS_MAX)
M_BIG=$(members $((MEMBERS_MAX + 1)))
$NL -f - <<SCRIPT || fail "members script"
attach
!E2BIG create name=big members=$M_BIG nowait=1
msg 161 members is more than the 160 a domain may have
create name=big members=$M_OK nowait=1
!E2BIG set name=big uuid=$(uuid 1) members=$M_BIG fabric=$FABRIC gen=1
msg 161 members is more than the 160
set name=big uuid=$(uuid 1) members=$M_OK fabric=$FABRIC gen=1
!E2BIG set name=big uuid=$(uuid 1) members=$M_BIG fabric=$FABRIC gen=2
set name=big uuid=$(uuid 1) members=$NODE,m1 fabric=$FABRIC gen=2
remove name=big
SCRIPT
t_ok "members per domain: $MEMBERS_MAX accepted, $((MEMBERS_MAX + 1)) refused (E2BIG)"

# --- requests waiting for the manager -------------------------------------------
# The script's socket is the manager and never accepts: requests pile up.
{
	echo attach
	i=0
	while [ $i -lt $REQS_MAX ]; do
		echo "create name=r$i members=$NODE nowait=1"
		i=$((i + 1))
	done
	echo "!ENOBUFS create name=r$REQS_MAX members=$NODE nowait=1"
	echo "msg $REQS_MAX requests are already waiting for imexd"
	# The manager answers the oldest (r0; request 1 was "big" above): there
	# is room for exactly one more.
	echo accept
	echo "done req=2 status=125"
	echo "create name=r$REQS_MAX members=$NODE nowait=1"
	echo "!ENOBUFS create name=r$((REQS_MAX + 1)) members=$NODE nowait=1"
} > "$OUT/reqs.script"
$NL -f "$OUT/reqs.script" || fail "requests script"
# The manager went away: every waiting request failed and the queue is empty.
wait_for 10 sh -c "! $NL node-get | grep -q manager_pid"
{
	echo attach
	i=0
	while [ $i -lt $REQS_MAX ]; do
		echo "create name=s$i members=$NODE nowait=1"
		i=$((i + 1))
	done
	echo "!ENOBUFS create name=s$REQS_MAX members=$NODE nowait=1"
} > "$OUT/reqs2.script"
$NL -f "$OUT/reqs2.script" || fail "requests after a detach"
t_ok "requests waiting for the manager: $REQS_MAX, then ENOBUFS; detach empties the queue"

# --- domains per node -------------------------------------------------------------
{
	echo attach
	i=1
	while [ $i -le $DOMAINS_MAX ]; do
		echo "set name=d$i uuid=$(uuid $((100 + i))) members=$NODE fabric=$FABRIC gen=1"
		i=$((i + 1))
	done
	echo "!ENOSPC set name=extra uuid=$(uuid 999) members=$NODE fabric=$FABRIC gen=1"
	echo "msg this node already holds $DOMAINS_MAX domains, the most it may"
	echo "!ENOSPC create name=extra members=$NODE nowait=1"
	echo "msg $DOMAINS_MAX domains"
	# A domain at the bound can still be replaced.
	echo "set name=d1 uuid=$(uuid 101) members=$NODE fabric=$FABRIC gen=2 channels=1"
	# One goes: one fits again.
	echo "remove name=d1"
	echo "set name=extra uuid=$(uuid 999) members=$NODE fabric=$FABRIC gen=1"
	echo "!ENOSPC set name=extra2 uuid=$(uuid 1000) members=$NODE fabric=$FABRIC gen=1"
} > "$OUT/doms.script"
$NL -f "$OUT/doms.script" || fail "domains script"
$NL node-get | grep -q " domains=$DOMAINS_MAX\( \|$\)" || fail "domain count: $($NL node-get)"
[ "$($NL domains | wc -l)" = $DOMAINS_MAX ] || fail "domain dump: $($NL domains | wc -l) lines"
t_ok "domains per node: $DOMAINS_MAX, then ENOSPC"
t_done
