# Guest side of tests/imexd/vm/pair.sh: one of two VMs on a vde_switch,
# each with imex.ko and imexd.  ROLE a (vm-a, 192.0.2.1) or b (vm-b,
# 192.0.2.2).  The two sides coordinate through the domain itself:
#   a: create pd (vm-a + vm-b, 2 channels), see it READY; a hostile peer
#      on vm-a is refused by its imexd (hostile_a)
#   b: see pd READY with 2 devices, allocate 1 more (b coordinates)
#   a: see 3 channels, allocate a 4th (a coordinates)
#   b: see 4 channels, kill -9 its imexd, send a's imexd junk names (and
#      with TLS a claim to be vm-b under another certificate: hostile_b),
#      restart it
#   a: see pd DEGRADED then READY again, and meanwhile 'imexctl domain
#      show pd --json' saying why vm-b is lost (with TLS: never refused
#      for evil's claim to be it); delete pd
#   b: see pd and its devices gone
# imexctl node status (the probe) says ready (0) on b with pd READY, not
# running (3) on b once its imexd is killed, degraded (1) on a while vm-b
# is lost, and ready (0) on a once it is back.
. tests/imexd/vm/common.sh

role=$1
certs=${2:-}	# with TLS: a directory made by tests/imexd/net/gen-certs.sh
case $role in
a) me=vm-a peer=vm-b peer_ip=192.0.2.2 ;;
b) me=vm-b peer=vm-a peer_ip=192.0.2.1 ;;
*) fail "role must be a or b" ;;
esac
[ "$(hostname)" = "$me" ] || fail "hostname is $(hostname), expected $me"
MEMBERS=vm-a@192.0.2.1,vm-b@192.0.2.2
printf 'vm-a=192.0.2.1\nvm-b=192.0.2.2\n' > "$W/nodes"
if [ -n "$certs" ]; then
	imexd_conf "$W/imexd.conf" NODES_FILE="$W/nodes" TLS=yes \
		TLS_CA_FILE="$certs/ca.pem" TLS_CERT_FILE="$certs/$me.pem" \
		TLS_KEY_FILE="$certs/$me.key"
else
	imexd_conf "$W/imexd.conf" NODES_FILE="$W/nodes"
fi

nchannels() { $NL channels name=pd 2>/dev/null | grep -c ' chstate=1'; }
has_channels() { [ "$(nchannels)" = "$1" ]; }
# a allocates its 4th channel as soon as it sees b's 3rd: b may already
# hold 4 when its own allocation returns.
has_channels_min() { [ "$(nchannels)" -ge "$1" ]; }
devices() { # COUNT: pd has COUNT channels, each with its device
	_n=0
	for id in $($NL channels name=pd | sed -n 's/.* channel=\([0-9]*\) .*/\1/p'); do
		[ -c "$DEV/channel$id" ] || return 1
		_n=$((_n + 1))
	done
	[ "$_n" -ge "$1" ]
}
ping_peer() { busybox ping -c1 -W1 "$peer_ip" >/dev/null 2>&1; }
port_open() { timeout 3 bash -c "exec 3<>/dev/tcp/$peer_ip/50100" 2>/dev/null; }

# Hostile peers (Documentation/security.md): tests/imexd/vm/hostile speaks
# the peer protocol to a daemon, with TLS under a certificate the cluster
# CA issued for 'evil', a name in no node list.  It exits 0 when the daemon
# hung up without answering anything.
hostile() { # ADDR STEP...
	if [ -n "$certs" ]; then
		tests/imexd/vm/hostile --tls "$certs/ca.pem" "$certs/evil.pem" \
			"$certs/evil.key" "$@"
	else
		tests/imexd/vm/hostile "$@"
	fi
}
logged() { grep -qF -- "$1" "$IMEX_VM_OUT/imexd.1.log"; }
nlogged() { grep -cF -- "$1" "$IMEX_VM_OUT/imexd.1.log"; }
raft_term() { od -An -t u8 -j 16 -N 8 "$W/state/raft/raft-meta" | tr -d ' '; }
pd_whole() { domain_is pd 2 && $NL domain name=pd | grep -q "member=vm-b@[^ ]*:2"; }

# check_reason FILE lost: the document reasons-watch.py kept says why vm-b
# is lost, with since in ISO 8601 UTC.
check_reason() {
	python3 - "$1" "$2" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
kind = sys.argv[2]
m = [m for m in doc["members"] if m["name"] == "vm-b"][0]
iso = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
ok = re.fullmatch(iso, m["since"] or "") is not None
ok = ok and kind == "lost"
ok = ok and re.match(r"(connection closed by the peer|heartbeat lost) at " + iso, m["reason"] or "")
# Two voters, one away: the group may have lost its leader by then.
ok = ok and re.match(r"(vm-b %s: |no quorum: 1 of 2 voters reachable)" % m["state"],
                     doc["reason"] or "")
print("domain reason: %r; vm-b: %s since %s: %r" % (doc["reason"], m["state"], m["since"], m["reason"]))
sys.exit(0 if ok else 1)
PY
}

# On vm-a, against its own imexd, while pd is READY with vm-b: nothing a
# hostile peer sends binds, votes or imports, each refusal is logged, and
# vm-b stays connected (the rest of the run uses pd through it).
hostile_a() {
	_me=192.0.2.1:50100
	_t0=$(raft_term) _leaders=$(nlogged "raft: term")
	if [ -n "$certs" ]; then
		hostile $_me hello vm-b refused > "$W/h.out" 2>&1 &&
			_wait_until 10 logged "claims to be node 'vm-b' but its certificate names 'evil'" &&
			t_ok "a: a peer with evil's certificate claiming vm-b is refused, logged with both names" ||
			t_fail "a: claim vm-b: $(cat "$W/h.out"; grep -F evil "$IMEX_VM_OUT/imexd.1.log")"
	fi
	hostile $_me hello evil refused > "$W/h.out" 2>&1 &&
		_wait_until 10 logged "says it is node 'evil', which is not in the node list; refused" &&
		t_ok "a: a HELLO as 'evil' (in no node list) is refused, logged" ||
		t_fail "a: HELLO as evil: $(cat "$W/h.out"; grep -F evil "$IMEX_VM_OUT/imexd.1.log")"
	# A RequestVote far above the term, as vm-b's raft id, before HELLO.
	hostile $_me raft 1000000 2 hello evil refused > "$W/h.out" 2>&1 &&
		_wait_until 10 logged "RAFT from 192.0.2.1:" &&
		logged "before HELLO: dropped" &&
		t_ok "a: a RAFT RequestVote before HELLO is dropped, logged" ||
		t_fail "a: RAFT before HELLO: $(cat "$W/h.out"; grep -F HELLO "$IMEX_VM_OUT/imexd.1.log")"
	_t1=$(raft_term)
	[ -n "$_t0" ] && [ "$_t1" = "$_t0" ] && [ "$(nlogged "raft: term")" = "$_leaders" ] &&
		t_ok "a: raft term ($_t1) and leader unchanged by it" ||
		t_fail "a: raft term $_t0 -> $_t1, leader lines $_leaders -> $(nlogged "raft: term")"
	# An import request for a real export of this node (from 127.0.0.1:
	# refusal lines are rate-limited per host).
	_ch=$($NL channels name=pd | sed -n 's/.* channel=\([0-9]*\) .*/\1/p' | head -1)
	_uuid=$($NL domain name=pd | sed -n 's/.* uuid=\([0-9a-f-]*\) .*/\1/p')
	rm -f "$W/export.handle"
	tools/imex-share/imex-share -c "$_ch" export --hold --handle-file "$W/export.handle" \
		> "$W/export.out" 2>&1 &
	_exp=$!
	if _wait_until 10 test -s "$W/export.handle"; then
		_handle=$(cat "$W/export.handle")
		hostile 127.0.0.1:50100 import "$_uuid" "${_handle##*:}" hello evil refused \
			> "$W/h.out" 2>&1 &&
			_wait_until 10 logged "IMPORT_REQ from 127.0.0.1:" &&
			t_ok "a: an IMPORT_REQ for export $_handle is not answered, logged" ||
			t_fail "a: IMPORT_REQ: $(cat "$W/h.out"; grep -F IMPORT "$IMEX_VM_OUT/imexd.1.log")"
	else
		t_fail "a: no export on channel $_ch: $(cat "$W/export.out")"
	fi
	kill "$_exp" 2>/dev/null
	wait "$_exp" 2>/dev/null
	hostile $_me bigraft refused > "$W/h.out" 2>&1 &&
		_wait_until 10 logged "a raft frame above IMEXD_BODY_MAX before the peer proved its name" &&
		t_ok "a: a 2 MiB RAFT frame before HELLO closes the connection, logged" ||
		t_fail "a: big RAFT frame: $(cat "$W/h.out")"
	# Junk names: every one refused, the log bounded, vm-b unaffected.
	_from=$(nlogged "")
	hostile $_me junk 100 junk > "$W/h.out" 2>&1 &&
		t_ok "a: 100 HELLOs under junk names are refused" ||
		t_fail "a: junk names: $(cat "$W/h.out")"
	_lines=$(tail -n "+$((_from + 1))" "$IMEX_VM_OUT/imexd.1.log" | grep -c junk)
	[ "$_lines" -le 10 ] && t_ok "a: ... logged in $_lines lines (at most 10 a minute)" ||
		t_fail "a: $_lines log lines about junk names"
	_wait_until 30 pd_whole && t_ok "a: pd READY, vm-b still connected after the hostile peer" ||
		t_fail "a: pd after the hostile peer: $($NL domain name=pd)"
}

# On vm-b while its imexd is down: a hostile peer on this host, the genuine
# vm-b's, sends vm-a junk names (and with TLS claims to be vm-b under evil's
# certificate).  The genuine vm-b restarts next from this host and gets in:
# a sees pd READY again.
hostile_b() {
	hostile 192.0.2.1:50100 junk 50 junkb > "$W/h.out" 2>&1 &&
		t_ok "b: 50 HELLOs under junk names from this host are refused by vm-a" ||
		t_fail "b: junk names: $(cat "$W/h.out")"
	[ -z "$certs" ] && return
	hostile 192.0.2.1:50100 hello vm-b refused > "$W/h.out" 2>&1 &&
		t_ok "b: evil's certificate cannot say HELLO to vm-a as vm-b" ||
		t_fail "b: claim vm-b: $(cat "$W/h.out")"
}

imexd_start 1
_wait_until 30 imexd_attached && t_ok "$me: imexd attached" ||
	{ t_fail "$me: imexd did not attach: $(tail -5 "$IMEX_VM_OUT/imexd.1.log")"; t_done; }
_wait_until 90 ping_peer && t_ok "$me: $peer answers pings" || { t_fail "$me: no network to $peer"; t_done; }
if [ -n "$certs" ]; then
	_wait_until 10 grep -q "TLS 1.3 with mutual authentication" "$IMEX_VM_OUT/imexd.1.log" &&
		t_ok "$me: TLS on" || t_fail "$me: TLS not on: $(head -5 "$IMEX_VM_OUT/imexd.1.log")"
	kill -USR1 "$IMEXD_PID"
	_wait_until 10 grep -q "SIGUSR1: TLS credentials reloaded" "$IMEX_VM_OUT/imexd.1.log" &&
		t_ok "$me: SIGUSR1 reloads the TLS credentials" ||
		t_fail "$me: SIGUSR1: $(tail -3 "$IMEX_VM_OUT/imexd.1.log")"
fi

if [ "$role" = a ]; then
	_wait_until 90 port_open || t_fail "a: imexd on vm-b does not listen"
	ok=0
	for try in 1 2 3; do
		if $NL create name=pd members=$MEMBERS count=2 timeout=60000 > "$W/create.out" 2>&1; then
			ok=1
			break
		fi
		echo "create attempt $try: $(cat "$W/create.out")"
		sleep 2
	done
	[ $ok = 1 ] && t_ok "a: create pd with vm-a and vm-b" || t_fail "a: create pd: $(cat "$W/create.out")"
	_wait_until 30 domain_is pd 2 && t_ok "a: pd is READY" || t_fail "a: pd state: $($NL domain name=pd)"
	$NL domain name=pd | grep -q "member=vm-b@[^ ]*:2" &&
		t_ok "a: vm-b is CONNECTED in a's view" || t_fail "a: view: $($NL domain name=pd)"
	_wait_until 10 devices 2 && t_ok "a: 2 channel devices" || t_fail "a: devices: $(ls -l $DEV 2>&1)"
	hostile_a
	_wait_until 120 has_channels 3 && t_ok "a: b's allocation reached a (3 channels)" ||
		t_fail "a: channels: $($NL channels name=pd)"
	_wait_until 10 devices 3 && t_ok "a: 3 channel devices" || t_fail "a: devices: $(ls -l $DEV 2>&1)"
	# The core logs every health change of a domain: look at what it
	# logs from here on (b kills its imexd once it sees our allocation).
	from=$(($(wc -l < "$IMEX_VM_OUT/imexd.1.log") + 1))
	# From here on, what imexctl shows while vm-b is away (b's kill).
	mkdir -p "$W/reasons"
	python3 tests/imexd/vm/reasons-watch.py pd vm-b "$W/reasons" 240 \
		${certs:+--refused} > "$W/reasons/watch.out" 2>&1 &
	watch_pid=$!
	if $NL alloc name=pd count=1 timeout=60000 > "$W/alloc.out" 2>&1 && has_channels 4; then
		t_ok "a: allocate a 4th channel (a coordinates)"
	else
		t_fail "a: alloc: $(cat "$W/alloc.out"); $($NL channels name=pd)"
	fi
	# The probe while b's imexd is gone: degraded (1), pd not READY or
	# no quorum (b is half the voters), as long as b is not connected.
	b_state() { # vm-b's member state in a's kernel (member=NAME@ADDR:STATE:N)
		$NL domain name=pd | tr ' ' '\n' |
			sed -n 's/^member=vm-b@.*:\([0-9]*\):[0-9]*$/\1/p'
	}
	b_lost_degraded() {
		probe_is 1 && [ "$(b_state)" != 2 ]
	}
	_wait_until 120 b_lost_degraded &&
		t_ok "a: probe with vm-b lost: exit 1, $(cat "$W/probe.out")" ||
		t_fail "a: probe with vm-b lost: $(cat "$W/probe.out"); $($NL domain name=pd)"
	since() { tail -n "+$from" "$IMEX_VM_OUT/imexd.1.log"; }
	# vm-b's state, not a generation still on its way (a's own allocation
	# makes pd DEGRADED for a moment too: taken for b's kill, a went on
	# and deleted pd before b came back).
	lost_at() {
		since | grep -n "domain 'pd': DEGRADED (node 'vm-b' is " | head -1 | cut -d: -f1
	}
	went_degraded() { [ -n "$(lost_at)" ]; }
	ready_again() {
		_l=$(lost_at)
		[ -n "$_l" ] && since | tail -n "+$_l" | grep -q "domain 'pd': READY"
	}
	_wait_until 120 went_degraded && t_ok "a: pd went DEGRADED when b's imexd was killed" ||
		t_fail "a: no DEGRADED: $($NL domain name=pd)"
	_wait_until 120 ready_again && _wait_until 10 domain_is pd 2 &&
		t_ok "a: pd READY again after b's restart" ||
		t_fail "a: not READY again: $($NL domain name=pd)"
	kill "$watch_pid" 2>/dev/null
	wait "$watch_pid" 2>/dev/null
	[ -s "$W/reasons/lost.json" ] && check_reason "$W/reasons/lost.json" lost > "$W/reasons/lost.out" 2>&1 &&
		t_ok "a: while vm-b was lost, domain show --json said why: $(cat "$W/reasons/lost.out")" ||
		t_fail "a: no reason for lost vm-b: $(cat "$W/reasons/lost.out" "$W/reasons/lost.json" "$W/reasons/watch.out" 2>&1)"
	# evil's certificate claiming vm-b (hostile_b) is someone else: vm-a
	# refuses it (hostile_b checks) and leaves vm-b as it was, never
	# shown refused with the claimant's words.
	if [ -n "$certs" ]; then
		[ ! -e "$W/reasons/refused.json" ] &&
			t_ok "a: evil's claim to be vm-b left vm-b as it was (never shown refused)" ||
			t_fail "a: evil's claim to be vm-b showed vm-b refused: $(cat "$W/reasons/refused.json" "$W/reasons/watch.out" 2>&1)"
	fi
	_wait_until 30 probe_is 0 && t_ok "a: probe with vm-b back: exit 0, $(cat "$W/probe.out")" ||
		t_fail "a: probe with vm-b back: $(cat "$W/probe.out")"
	if $NL delete name=pd timeout=60000 > "$W/delete.out" 2>&1; then
		t_ok "a: delete pd"
	else
		t_fail "a: delete pd: $(cat "$W/delete.out")"
	fi
	! $NL -q domain name=pd 2>/dev/null && t_ok "a: pd gone" || t_fail "a: pd still there"
else
	_wait_until 180 domain_is pd 2 && t_ok "b: pd arrived and is READY" ||
		t_fail "b: pd: $($NL domains)"
	_wait_until 10 devices 2 && t_ok "b: 2 channel devices" || t_fail "b: devices: $(ls -l $DEV 2>&1)"
	_wait_until 30 probe_is 0 && t_ok "b: probe with pd READY: exit 0, $(cat "$W/probe.out")" ||
		t_fail "b: probe with pd READY: $(cat "$W/probe.out")"
	if $NL alloc name=pd count=1 timeout=60000 > "$W/alloc.out" 2>&1 && has_channels_min 3; then
		t_ok "b: allocate 1 more channel (b coordinates)"
	else
		t_fail "b: alloc: $(cat "$W/alloc.out"); $($NL channels name=pd)"
	fi
	_wait_until 10 devices 3 && t_ok "b: 3 channel devices" || t_fail "b: devices: $(ls -l $DEV 2>&1)"
	_wait_until 120 has_channels 4 && t_ok "b: a's allocation reached b (4 channels)" ||
		t_fail "b: channels: $($NL channels name=pd)"
	kill -9 "$IMEXD_PID"
	wait "$IMEXD_PID" 2>/dev/null
	_wait_until 10 probe_is 3 && t_ok "b: probe with imexd killed: exit 3, $(cat "$W/probe.out")" ||
		t_fail "b: probe with imexd killed: $(cat "$W/probe.out")"
	hostile_b
	sleep 3
	imexd_start 2
	# a deletes pd as soon as it sees it READY again: look at what this
	# imexd logged, not at the domain, which may be gone already.
	ready_logged() { grep -q "domain 'pd': READY" "$IMEX_VM_OUT/imexd.2.log"; }
	_wait_until 30 imexd_attached && _wait_until 60 ready_logged &&
		t_ok "b: restarted imexd, pd READY again" ||
		t_fail "b: after restart: $($NL domain name=pd; tail -5 "$IMEX_VM_OUT/imexd.2.log")"
	_wait_until 180 sh -c "! $NL -q domain name=pd 2>/dev/null" && t_ok "b: pd deleted by a's request" ||
		t_fail "b: pd still there: $($NL domain name=pd)"
	no_devices() { [ -z "$(ls "$DEV" 2>/dev/null)" ]; }
	_wait_until 10 no_devices && [ ! -e "$W/state/domains" ] &&
		t_ok "b: devices gone, no per-domain state kept" ||
		t_fail "b: left over: $(ls $DEV 2>&1; ls -lR "$W/state")"
	# Keep answering until vm-a is done (the host drops the marker).
	_wait_until 200 test -e "$IMEX_VM_OUT/done" || t_fail "b: no done marker from the host"
fi
imexd_stop && t_ok "$me: imexd stops on SIGTERM" || t_fail "$me: stop"
t_done
