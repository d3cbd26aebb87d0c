# Issue 15: 'imexctl monitor' follows the events group as it happens, as
# any user; --domain filters; --json gives one JSON object per line; events
# dropped while it was stopped are reported as a 'lost' event and it goes
# on; SIGINT and SIGTERM end it with status 0.  Domain and member reasons
# and since, as the manager gave them, are in the status event.
. tests/vm/lib.sh
. tests/kmod/common.sh
I=tools/imexctl/imexctl
O=$IMEX_VM_OUT

# start_monitor FILE [ARGS...]: imexctl monitor ARGS as user nobody, output
# in FILE, stderr in FILE.err, pid in $mon; returns once it is subscribed.
start_monitor() {
	_f=$1
	shift
	setpriv --reuid=65534 --regid=65534 --clear-groups $I monitor "$@" > "$_f" 2> "$_f.err" &
	mon=$!
	wait_for 10 grep -q "listening to imex events" "$_f.err"
}

# stop_monitor PID SIGNAL FILE: the monitor exits 0 and says why.
stop_monitor() {
	kill -"$2" "$1"
	wait "$1" || fail "monitor exited $? on SIG$2: $(cat "$3.err")"
	grep -q "stopped by SIG$2" "$3.err" || fail "no 'stopped by SIG$2': $(cat "$3.err")"
}

# line_of FILE PATTERN: the number of the first line matching, or fail.
line_of() {
	_n=$(grep -n -m1 -- "$2" "$1" | cut -d: -f1)
	[ -n "$_n" ] || fail "no line '$2' in $1: $(cat "$1")"
	echo "$_n"
}

start_monitor "$O/all.txt"
all=$mon
start_monitor "$O/w1.json" --json --domain w1
w1=$mon

# A manager stand-in drives two domains through their life.
$NL -f - > "$O/mgr.log" 2>&1 <<SCRIPT || fail "manager script: $(cat "$O/mgr.log")"
attach
set name=w1 uuid=aaaaaaaa-0000-0000-0000-0000000000f1 fabric=$FABRIC members=$NODE,peer2 gen=1 channels=5
status name=w1 state=degraded view=peer2:5 dreason=peer2-not-connected mreason=peer2:heartbeat-lost msince=peer2:1764000000123
status name=w1 state=ready view=peer2:2
set name=w2 uuid=aaaaaaaa-0000-0000-0000-0000000000f2 fabric=$FABRIC members=$NODE gen=1
sh $NL channel-set id=5 mode=0640
remove name=w2
remove name=w1
SCRIPT

# The manager's socket closed with the script: the last event is its detach.
wait_for 20 grep -q "manager-detach" "$O/all.txt"
wait_for 20 grep -q '"event":"domain-del"' "$O/w1.json"
stop_monitor $all INT "$O/all.txt"
stop_monitor $w1 TERM "$O/w1.json"
cat "$O/all.txt"

# In order, each with what it carries.
a=$(line_of "$O/all.txt" " manager-attach pid [0-9]")
b=$(line_of "$O/all.txt" " domain-new domain w1 uuid aaaaaaaa-0000-0000-0000-0000000000f1 state ")
c=$(line_of "$O/all.txt" " channel-new channel 5 domain w1 owner 0:0 mode 0600")
d=$(line_of "$O/all.txt" " domain-status domain w1 .*state degraded reason \"peer2-not-connected\" .* member peer2 never-connected \"heartbeat-lost\" since 2025-11-24T16:00:00.123Z")
e=$(line_of "$O/all.txt" " domain-status domain w1 .*state ready")
f=$(line_of "$O/all.txt" " domain-new domain w2 ")
g=$(line_of "$O/all.txt" " channel-set channel 5 domain w1 owner 0:0 mode 0640")
h=$(line_of "$O/all.txt" " domain-del domain w2")
i=$(line_of "$O/all.txt" " domain-del domain w1")
j=$(line_of "$O/all.txt" " manager-detach pid [0-9]")
[ "$a" -lt "$b" ] && [ "$b" -lt "$c" ] && [ "$c" -lt "$d" ] && [ "$d" -lt "$e" ] &&
	[ "$e" -lt "$f" ] && [ "$f" -lt "$g" ] && [ "$g" -lt "$h" ] && [ "$h" -lt "$i" ] &&
	[ "$i" -lt "$j" ] || fail "events out of order: $a $b $c $d $e $f $g $h $i $j"
grep -q "^20[0-9-]*T[0-9:.]*Z domain-new" "$O/all.txt" || fail "lines do not start with the time"
grep -q " channel-del channel 5" "$O/all.txt" || fail "no channel-del for channel 5"

# --json --domain w1: valid JSON objects, w1's only, in order, with a time.
python3 - "$O/w1.json" <<'PY' || fail "w1.json: $(cat "$O/w1.json")"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
assert evs and all("time" in e and "time_ms" in e for e in evs), evs
assert all(e.get("domain") == "w1" for e in evs), "another domain's event: %r" % evs
dom = [(e["event"], e.get("state")) for e in evs if e["event"].startswith("domain")]
assert dom[0][0] == "domain-new" and dom[-1][0] == "domain-del", dom
i = dom.index(("domain-status", "degraded"))
dom.index(("domain-status", "ready"), i)
deg = [e for e in evs if e["event"] == "domain-status" and e["state"] == "degraded"][0]
assert deg["reason"] == "peer2-not-connected", deg
assert {"name": "peer2", "state": "never-connected", "reason": "heartbeat-lost",
        "since": "2025-11-24T16:00:00.123Z", "since_ms": 1764000000123} in deg["members"], deg
chan = [e for e in evs if e["event"] == "channel-set"]
assert chan and chan[0]["channel"] == 5 and chan[0]["mode"] == "0640", chan
PY
echo "ok: every event in order, as text and as JSON, for an unprivileged user"

# --- lost events -------------------------------------------------------------

start_monitor "$O/lost.txt" --domain w3
kill -STOP $mon
# Far more notifications than its socket buffer holds (~ 4 KiB each).
{
	echo attach
	echo "set name=w3 uuid=aaaaaaaa-0000-0000-0000-0000000000f3 fabric=$FABRIC members=$NODE,peer2 gen=1"
	n=0
	while [ $n -lt 400 ]; do
		echo "status name=w3 state=degraded view=peer2:5"
		echo "status name=w3 state=ready view=peer2:2"
		n=$((n + 1))
	done
} > "$O/flood.script"
$NL -f "$O/flood.script" > "$O/flood.log" 2>&1 || fail "flood: $(tail -5 "$O/flood.log")"
kill -CONT $mon
wait_for 20 grep -q " lost (ENOBUFS): the kernel dropped events for this reader" "$O/lost.txt"
# Until its queue is empty the kernel keeps dropping this reader's events
# (the socket stays congested, and says ENOBUFS once): wait for the
# monitor to drain what was queued, as /proc/net/netlink shows (Rmem).
drained() {
	_q=0
	for _fd in /proc/$mon/fd/*; do
		_ino=$(readlink "$_fd" | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p')
		[ -n "$_ino" ] || continue
		_r=$(awk -v i="$_ino" '$10 == i { print $5 }' /proc/net/netlink)
		_q=$((_q + ${_r:-0}))
	done
	[ "$_q" = 0 ]
}
wait_for 20 drained
# It goes on: a change after the loss still arrives.
$NL -f - > "$O/mgr3.log" 2>&1 <<SCRIPT || fail "remove w3: $(cat "$O/mgr3.log")"
attach
remove name=w3
SCRIPT
wait_for 20 grep -q " domain-del domain w3" "$O/lost.txt"
[ "$(line_of "$O/lost.txt" " lost ")" -lt "$(line_of "$O/lost.txt" " domain-del domain w3")" ] ||
	fail "the loss is not reported before what follows it"
stop_monitor $mon INT "$O/lost.txt"
echo "ok: $(grep -c ' domain-status ' "$O/lost.txt") of 800 status events shown, the loss reported ($(grep -c ' lost ' "$O/lost.txt") lost line(s)), and the monitor went on"
