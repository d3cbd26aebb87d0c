#!/bin/sh
# Guest-side helpers for cluster tests, one call per agent command:
#   node.sh start [KEY=VALUE|env:VAR=VALUE...]  start imexd (state kept in
#                                 the out share, so it survives a power
#                                 cycle); wait until it is the kernel's manager
#   node.sh kill9 | stop          SIGKILL / SIGTERM the daemon
#   node.sh wait-state NAME STATE SECS   bounded wait for a domain state
#                                 (ready, degraded, down, gone)
#   node.sh matrix-connected NAME every member sees every other
#   node.sh dead                  the daemon has exited (bounded wait)
#   node.sh def NAME              the domain as this kernel holds it, on one
#                                 line ("none" if it does not), to compare
#                                 across nodes
#   node.sh leader                the Raft leader this daemon last logged
#                                 (empty if none is known)
#   node.sh member NAME ROLE SECS bounded wait until 'imexctl node list'
#                                 shows NAME as ROLE (voter, standby,
#                                 spare; gone: no row)
#   node.sh voters COUNT SECS [NAME...]  bounded wait until 'imexctl node
#                                 list' shows COUNT voters, none of them a
#                                 NAME; prints the list
#   node.sh waits-to-join SECS    bounded wait until 'imexctl node list'
#                                 says this node waits to be joined
#   node.sh log-wait SECS TEXT    bounded wait for TEXT in imexd's log
#   node.sh hold CHANNEL [SECS]   keep the channel open (background);
#                                 waits SECS (default 5) for the open
#   node.sh held CHANNEL          the held fd still works (info ioctl)
#   node.sh check-held CHANNEL DOMAIN  the fd 'hold' opened, itself (taken
#                                 from the holder with pidfd_getfd), still
#                                 answers the info ioctl with DOMAIN: it
#                                 was never revoked
#   node.sh channels-disjoint NAME...  this kernel holds each domain NAME
#                                 with channels, and no channel twice
#   node.sh monitor-start         'imexctl monitor --json' in the background,
#                                 recording into the out share; returns once
#                                 it is subscribed
#   node.sh monitor-wait SECS DOMAIN new|ready|degraded|deleted [MEMBER]
#                                 bounded wait for DOMAIN's next such event
#                                 after the last one waited for (degraded
#                                 with MEMBER: listed with its reason)
#   node.sh monitor-stop DOMAIN MEMBER  SIGINT: it exits 0 saying so; then
#                                 its record of DOMAIN must be: created,
#                                 READY, DEGRADED with MEMBER's reason,
#                                 READY, deleted (tests/cluster/monitor-seq.py)
cd "$(dirname "$0")/../.." || exit 2
. tests/vm/lib.sh
. tests/kmod/common.sh
IMEXD=${IMEXD:-imexd/imexd}
run=$IMEX_VM_OUT/node
mkdir -p "$run"

state_num() {
	case $1 in
	down) echo 1 ;; ready) echo 2 ;; degraded) echo 3 ;; *) echo "$1" ;;
	esac
}

has_state() { # NAME STATE
	if [ "$2" = gone ]; then
		! $NL domain name="$1" > /dev/null 2>&1
	else
		$NL domain name="$1" 2>/dev/null | grep -q " state=$(state_num "$2") "
	fi
}

node_list() {
	tools/imexctl/imexctl node list --state-dir "$IMEX_VM_OUT/state"
}

has_role() { # NAME ROLE: a row "NAME ADDRESS ROLE LEADER CONNECTED"
	r=$(node_list | awk -v n="$1" 'f && $1 == n { print $3 } /^NAME/ { f = 1 }')
	[ "${r:-gone}" = "$2" ]
}

cmd=$1
shift
case $cmd in
start)
	# Defaults, unless an argument sets the key (a key may appear once).
	{
		for kv in "NODE_NAME=$(hostname)" "STATE_DIRECTORY=$IMEX_VM_OUT/state" \
			"NODES_FILE=$IMEX_VM_OUT/nodes" \
			LOG_LEVEL=debug HEARTBEAT_INTERVAL_MS=250 \
			HEARTBEAT_MISS_COUNT=3; do
			case " $* " in *" ${kv%%=*}="*) ;; *) echo "$kv" ;; esac
		done
		for kv in "$@"; do
			case $kv in env:*) ;; *) echo "$kv" ;; esac
		done
	} > "$run/imexd.conf"
	# env:VAR=VALUE arguments go to the daemon's environment.
	for kv in "$@"; do
		case $kv in env:*) export "${kv#env:}" ;; esac
	done
	setsid $IMEXD -f -c "$run/imexd.conf" >> "$IMEX_VM_OUT/imexd.log" 2>&1 < /dev/null &
	echo $! > "$run/imexd.pid"
	wait_for 30 sh -c "$NL node-get | grep -q ' manager_pid=$(cat "$run/imexd.pid") '"
	;;
kill9)
	kill -9 "$(cat "$run/imexd.pid")"
	wait_for 10 sh -c "! $NL node-get | grep -q manager_pid"
	;;
stop)
	kill -TERM "$(cat "$run/imexd.pid")"
	wait_for 10 sh -c "! $NL node-get | grep -q manager_pid"
	;;
wait-state)
	wait_for "$3" has_state "$1" "$2"
	;;
member)
	wait_for "$3" has_role "$1" "$2"
	node_list
	;;
voters)
	want=$1 secs=$2
	shift 2
	voters_are() {
		v=$(node_list | awk 'f && $3 == "voter" { print $1 } /^NAME/ { f = 1 }')
		[ "$(echo "$v" | grep -c .)" = "$want" ] || return 1
		for d in "$@"; do echo "$v" | grep -qx "$d" && return 1; done
		return 0
	}
	_wait_until "$secs" voters_are "$@"
	rc=$?
	node_list
	exit $rc
	;;
waits-to-join)
	wait_for "$1" sh -c "tools/imexctl/imexctl node list --state-dir '$IMEX_VM_OUT/state' | grep -q 'waits to be joined'"
	;;
log-wait)
	wait_for "$1" grep -qF -- "$2" "$IMEX_VM_OUT/imexd.log"
	;;
hold)
	setsid $CHANOPEN "$DEV/channel$1" hold > "$run/hold.$1" 2>&1 < /dev/null &
	wait_for "${2:-5}" grep -q '^open' "$run/hold.$1"
	;;
held)
	pid=$(pgrep -f "chanopen $DEV/channel$1 hold") || fail "channel $1 is not held"
	[ -e "/proc/$pid/fd" ] && ls -l "/proc/$pid/fd" | grep -q "channel$1" || fail "fd gone"
	$CHANOPEN "$DEV/channel$1" info
	;;
check-held)
	pid=$(pgrep -f "chanopen $DEV/channel$1 hold") || fail "channel $1 is not held"
	fd=$(for f in /proc/"$pid"/fd/*; do
		[ "$(readlink "$f")" = "$DEV/channel$1" ] && echo "${f##*/}"; done | head -n 1)
	[ -n "$fd" ] || fail "the holder $pid has no fd on channel $1"
	out=$($CHANOPEN "$DEV/channel$1" fd-of "$pid" "$fd" info)
	echo "$out"
	echo "$out" | grep -q "^info domain=$2 channel=$1 " ||
		fail "held fd $fd of $pid on channel $1: $out"
	;;
channels-disjoint)
	# What each channel device says of itself (the info ioctl), not a
	# netlink dump: a dump of channels once never returned on a loaded
	# rack while a domain changed generation (not understood yet).
	chans=""
	for dev in "$DEV"/channel*; do
		[ -e "$dev" ] || continue
		chans="$chans$(timeout -k 5 30 $CHANOPEN "$dev" info | grep '^info ')
"
	done
	all=""
	for d in "$@"; do
		c=$(echo "$chans" | grep " domain=$d " | sed 's/.* channel=\([0-9]*\) .*/\1/' | sort -n | tr '\n' ' ')
		[ -n "$c" ] || fail "$d holds no channel on $(hostname)"
		echo "$d: $c"
		all="$all$c"
	done
	dup=$(printf '%s\n' $all | sort | uniq -d | tr '\n' ' ')
	[ -z "$dup" ] || fail "channels in more than one domain: $dup"
	;;
matrix-connected)
	# Every cell of the From\To matrix is C (or - for self).
	tools/imexctl/imexctl domain show "$1" | awk '
		/^From/ { m = 1; next } /^Legend/ { m = 0 }
		m && NF { n++; for (i = 3; i <= NF; i++) if ($i != "C" && $i != "-") bad++ }
		END { exit !(n > 0 && !bad) }'
	;;
def)
	d=$($NL domain name="$1" 2>/dev/null) || { echo none; exit 0; }
	echo "$d" | tr ' ' '\n' |
		sed -n 's/^\(uuid\|setgen\|members\)=.*/&/p; s/^member=\([^@:]*\).*/member=\1/p' |
		tr '\n' ' '
	echo "channels=$($NL channels | grep " name=$1 " |
		sed 's/.* channel=\([0-9]*\) .*/\1/' | sort -n | tr '\n' ,)"
	;;
leader)
	sed -n 's/.*raft: term [0-9]*, leader \([^ ]*\)$/\1/p; s/.*raft: term [0-9]*, no leader known$//p' \
		"$IMEX_VM_OUT/imexd.log" | tail -n 1
	;;
monitor-start)
	m=$IMEX_VM_OUT/monitor
	rm -f "$m.json" "$m.err" "$m.rc" "$m.pid" "$m.pos"
	# The inner shell keeps imexctl's exit status; imexctl itself undoes
	# the SIGINT that a background job starts with ignored.
	setsid sh -c "tools/imexctl/imexctl monitor --json > $m.json 2> $m.err < /dev/null &
		echo \$! > $m.pid; wait \$!; echo \$? > $m.rc" > /dev/null 2>&1 < /dev/null &
	wait_for 10 grep -qs "listening to imex events" "$m.err"
	;;
monitor-wait)
	m=$IMEX_VM_OUT/monitor
	wait_for "$1" python3 tests/cluster/monitor-seq.py next "$m.json" "$m.pos" "$2" "$3" ${4:+"$4"}
	;;
monitor-stop)
	m=$IMEX_VM_OUT/monitor
	kill -INT "$(cat "$m.pid")"
	wait_for 10 test -s "$m.rc"
	[ "$(cat "$m.rc")" = 0 ] && grep -q "stopped by SIGINT" "$m.err" ||
		fail "monitor on SIGINT: exit $(cat "$m.rc"): $(cat "$m.err")"
	python3 tests/cluster/monitor-seq.py check "$m.json" "$1" "$2"
	;;
dead)
	wait_for 10 sh -c "! kill -0 $(cat "$run/imexd.pid") 2>/dev/null"
	;;
*)
	fail "node.sh: unknown command $cmd"
	;;
esac
