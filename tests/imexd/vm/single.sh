# imexd on one node, in a VM with imex.ko loaded (guest side):
#   tests/vm/run.sh --module-args "fabric_uuid=11111111-2222-3333-4444-555555555555 fabric_partition=7" \
#       -- sh tests/imexd/vm/single.sh
# Start-up refusals, attach, a single-member domain created and deleted
# through the kernel's request path, a second daemon refused, kill -9 and
# restart (the domain survives and is READY again), SIGHUP, SIGTERM; the
# probe (imexctl node status) in each state: not running, ready, usage.
. tests/imexd/vm/common.sh

ME=$(hostname)
CONF=$W/imexd.conf
imexd_conf "$CONF" LISTEN_ADDRESS=127.0.0.1

channels_of() { # NAME: the granted channel ids, one per line
	$NL channels name="$1" | grep ' chstate=1' | sed 's/.* channel=\([0-9]*\) .*/\1/'
}

devices_present() { # NAME COUNT: COUNT character devices for the domain
	_n=0
	for id in $(channels_of "$1"); do
		[ -c "$DEV/channel$id" ] || return 1
		_n=$((_n + 1))
	done
	[ "$_n" = "$2" ]
}

# --- configuration and start-up refusals --------------------------------

if $IMEXD --check-config -c "$CONF" > "$W/check.out" 2>&1; then
	t_ok "--check-config accepts a good file"
else
	t_fail "--check-config accepts a good file: $(cat "$W/check.out")"
fi
printf 'NODE_NAME=%s\nBOGUS_KEY=1\n' "$ME" > "$W/bad.conf"
if $IMEXD --check-config -c "$W/bad.conf" > "$W/bad.out" 2>&1; then
	t_fail "--check-config refuses an unknown key"
else
	grep -q "bad.conf:2" "$W/bad.out" && t_ok "--check-config refuses an unknown key, naming file:line" ||
		t_fail "--check-config message does not name file:line: $(cat "$W/bad.out")"
fi
if $IMEXD -f -c "$W/bad.conf" > "$W/badstart.out" 2>&1; then
	t_fail "imexd starts with a bad config"
else
	t_ok "imexd refuses to start with a bad config"
fi
if $IMEXD -f -c "$W/missing.conf" > "$W/missing.out" 2>&1; then
	t_fail "imexd starts with a missing -c file"
else
	t_ok "imexd refuses a missing -c file"
fi

# Module not loaded and not loadable (resolving the family would load an
# installed module through its alias: blacklisted here): the clear message.
imex_unload
echo "blacklist imex" > /etc/modprobe.d/imex-test-noauto.conf
out=$(timeout 10 $IMEXD -f -c "$CONF" 2>&1)
rc=$?
probe_is 3 && grep -qx "not running: the imex module is not loaded" "$W/probe.out" &&
	t_ok "probe without imex.ko: exit 3, not running" ||
	t_fail "probe without imex.ko: $(cat "$W/probe.out")"
rm -f /etc/modprobe.d/imex-test-noauto.conf
if [ $rc = 1 ] && printf '%s' "$out" | grep -q "the imex module is not loaded: run 'imexctl module load'"; then
	t_ok "without imex.ko: refused with 'run imexctl module load'"
else
	t_fail "without imex.ko: rc=$rc: $out"
fi
imex_load $IMEX_TEST_PARAMS

# --- attach, create, delete ------------------------------------------------

# A stand-in for systemd's notification socket.
python3 - "$W/notify.sock" "$W/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode().replace("\n", " | ") + "\n")
        f.flush()
PY
notify_pid=$!
_wait_until 20 test -S "$W/notify.sock" || t_fail "the notify listener did not start"
probe_is 3 && grep -qx "not running: imexd is not attached to the imex module" "$W/probe.out" &&
	t_ok "probe before imexd starts: exit 3, not attached" ||
	t_fail "probe before imexd starts: $(cat "$W/probe.out")"
export NOTIFY_SOCKET="$W/notify.sock"
imexd_start 1
unset NOTIFY_SOCKET
if _wait_until 30 imexd_attached; then
	t_ok "imexd attaches as the manager"
else
	t_fail "imexd did not attach: $(tail -5 "$IMEX_VM_OUT/imexd.1.log")"
	t_done
fi
uuid=$(sed -n 's/.*"uuid": *"\([0-9a-f-]*\)".*/\1/p' "$W/state/node.json")
$NL node-get | grep -q " node=$ME node_uuid=$uuid " &&
	t_ok "node name and stored UUID set in the kernel ($uuid)" ||
	t_fail "node-get: $($NL node-get), stored uuid '$uuid'"

if $NL create name=d1 members="$ME@127.0.0.1" count=2 > "$W/create.out" 2>&1; then
	t_ok "create d1 (one member, 2 channels) completes through imexd"
else
	t_fail "create d1: $(cat "$W/create.out")"
fi
_wait_until 10 devices_present d1 2 && t_ok "d1's 2 channel devices exist" ||
	t_fail "d1 channel devices: $($NL channels name=d1; ls -l $DEV 2>&1)"
_wait_until 10 domain_is d1 2 && t_ok "d1 is READY" ||
	t_fail "d1 state: $($NL domain name=d1)"
# members.json comes within a second of a change: wait for the verdict.
_wait_until 20 probe_is 0 &&
	grep -q "^ready: imexd (pid $IMEXD_PID) runs, 1 domain(s) READY, leader $ME," "$W/probe.out" &&
	t_ok "probe with d1 READY: exit 0, $(cat "$W/probe.out")" ||
	t_fail "probe with d1 READY: $(cat "$W/probe.out")"
$IMEXCTL node status --json --state-dir "$W/state" > "$W/probe.json" 2>&1
python3 - "$W/probe.json" <<'PY' && t_ok "probe --json: status ready, exit_code 0" || t_fail "probe --json: $(cat "$W/probe.json")"
import json, sys
o = json.load(open(sys.argv[1]))
sys.exit(0 if o["status"] == "ready" and o["exit_code"] == 0 and o["domains"] == 1
         and o["domains_not_ready"] == [] else 1)
PY
$IMEXCTL node status --state-dir "$W/state" surplus > "$W/probe.out" 2>&1
[ $? = 2 ] && grep -q "unexpected argument 'surplus'" "$W/probe.out" &&
	t_ok "probe with a surplus argument: exit 2, usage" ||
	t_fail "probe usage error: $(cat "$W/probe.out")"
# The domain table lives in the raft log; grep finds the name in its entry.
[ -s "$W/state/raft/raft-log" ] && grep -q d1 "$W/state/raft/raft-log" &&
	t_ok "d1 is in the raft log in the state directory" ||
	t_fail "state directory: $(ls -lR "$W/state")"

_wait_until 10 grep -q "READY=1" "$W/notify.log" && t_ok "sd_notify READY=1" ||
	t_fail "no READY=1: $(cat "$W/notify.log")"
_wait_until 10 grep -q "STATUS=Managing 1 domain(s): all ready" "$W/notify.log" &&
	t_ok "sd_notify STATUS= says what it manages" || t_fail "STATUS: $(cat "$W/notify.log")"
d1chans=$(channels_of d1)
if $NL delete name=d1 > "$W/delete.out" 2>&1; then
	t_ok "delete d1 completes"
else
	t_fail "delete d1: $(cat "$W/delete.out")"
fi
gone=1
for id in $d1chans; do [ ! -e "$DEV/channel$id" ] || gone=0; done
[ $gone = 1 ] && ! $NL -q domain name=d1 2>/dev/null && t_ok "d1 and its devices are gone" ||
	t_fail "after delete: $($NL domains; ls $DEV 2>&1)"
# No per-domain files: the table is the log's, nothing else is kept.
[ ! -e "$W/state/domains" ] && [ -s "$W/state/node.json" ] &&
	t_ok "the state directory holds node.json and the raft log only" ||
	t_fail "state directory after delete: $(ls -lR "$W/state")"

$NL create name=d2 members="$ME@127.0.0.1" count=1 uid=1000 mode=0640 > "$W/create2.out" 2>&1 ||
	t_fail "create d2: $(cat "$W/create2.out")"
d2chan=$(channels_of d2)
[ -n "$d2chan" ] && [ "$(stat -c '%a %u' "$DEV/channel$d2chan")" = "640 1000" ] &&
	t_ok "d2's channel carries the requested owner and mode" ||
	t_fail "d2 channel: $($NL channels name=d2); $(ls -l $DEV 2>&1)"

# A member that cannot be reached makes a create fail, leaving nothing.
if $NL create name=d3 members="$ME@127.0.0.1,ghost@192.0.2.250:1" count=1 timeout=60000 > "$W/ghost.out" 2>&1; then
	t_fail "create with an unreachable member succeeded"
else
	! $NL -q domain name=d3 2>/dev/null && t_ok "create with an unreachable member fails and leaves nothing: $(grep -o 'message=.*' "$W/ghost.out")" ||
		t_fail "d3 exists after a failed create: $($NL domain name=d3)"
fi

# --- a second daemon -------------------------------------------------------

out=$(timeout 20 $IMEXD -f -c "$CONF" 2>&1)
rc=$?
if [ $rc = 1 ] && printf '%s' "$out" | grep -q "another imexd (pid $IMEXD_PID) is already managing this node"; then
	t_ok "a second imexd is refused: another imexd (pid $IMEXD_PID) ..."
else
	t_fail "second imexd: rc=$rc: $out"
fi
imexd_attached && t_ok "the first imexd is still the manager" || t_fail "manager lost: $($NL node-get)"

# --- kill -9 and restart ---------------------------------------------------

kill -9 "$IMEXD_PID"
wait "$IMEXD_PID" 2>/dev/null
_wait_until 10 domain_is d2 1 && t_ok "killed: d2 is DOWN" || t_fail "after kill -9: $($NL domain name=d2)"
imexd_start 2
_wait_until 30 imexd_attached && t_ok "restarted imexd re-attaches" ||
	t_fail "restart did not attach: $(tail -5 "$IMEX_VM_OUT/imexd.2.log")"
_wait_until 20 domain_is d2 2 && t_ok "d2 survived and is READY again" ||
	t_fail "d2 after restart: $($NL domain name=d2)"
[ -c "$DEV/channel$d2chan" ] && t_ok "d2's channel device is still there" || t_fail "channel$d2chan gone"
if $NL alloc name=d2 count=1 > "$W/alloc.out" 2>&1 && [ "$(channels_of d2 | wc -l)" = 2 ]; then
	t_ok "alloc on d2 works after the restart"
else
	t_fail "alloc after restart: $(cat "$W/alloc.out"); $($NL channels name=d2)"
fi
# imexctl reports the channels imexd lists in its own request's REQ_DONE:
# exactly the one that joined d2.
channels_of d2 > "$W/d2.before"
got=$(tools/imexctl/imexctl --json channel alloc --domain d2 --count 1 2>&1)
got_ids=$(printf '%s' "$got" | tr -d ' \n' | sed -n 's/.*"channels":\[\([0-9,]*\)\].*/\1/p')
new_ids=$(channels_of d2 | grep -vxF -f "$W/d2.before" | paste -sd,)
[ -n "$got_ids" ] && [ "$got_ids" = "$new_ids" ] &&
	t_ok "imexctl channel alloc reports the channel it was granted ($got_ids)" ||
	t_fail "imexctl channel alloc: '$got'; new in d2: '$new_ids'"

# --- SIGHUP and SIGTERM ----------------------------------------------------

sed -i 's/^LOG_LEVEL=.*/LOG_LEVEL=info/' "$CONF"
kill -HUP "$IMEXD_PID"
_wait_until 10 grep -q "SIGHUP: LOG_LEVEL debug -> info" "$IMEX_VM_OUT/imexd.2.log" &&
	t_ok "SIGHUP re-reads the config and logs the change" ||
	t_fail "SIGHUP: $(tail -5 "$IMEX_VM_OUT/imexd.2.log")"
echo "NOT A LINE" >> "$CONF"
kill -HUP "$IMEXD_PID"
_wait_until 10 grep -q "keeping the running configuration" "$IMEX_VM_OUT/imexd.2.log" &&
	imexd_alive && t_ok "SIGHUP with a broken file keeps running" ||
	t_fail "broken SIGHUP: $(tail -5 "$IMEX_VM_OUT/imexd.2.log")"
sed -i '$d' "$CONF"

if imexd_stop; then
	t_ok "SIGTERM: imexd exits 0"
else
	t_fail "SIGTERM: exit status $?; $(tail -5 "$IMEX_VM_OUT/imexd.2.log")"
fi
! $NL node-get | grep -q manager_pid && domain_is d2 1 &&
	t_ok "after SIGTERM: detached, d2 kept (DOWN)" ||
	t_fail "after SIGTERM: $($NL node-get); $($NL domain name=d2)"
probe_is 3 && t_ok "probe after imexd stopped: exit 3" ||
	t_fail "probe after imexd stopped: $(cat "$W/probe.out")"
imexd_start 3
_wait_until 30 imexd_attached && _wait_until 20 domain_is d2 2 &&
	t_ok "started again: d2 READY" || t_fail "third start: $($NL domain name=d2)"
$NL -q delete name=d2 || t_fail "delete d2"
imexd_stop || t_fail "final stop"

# Without -f: detaches once ready, the starting process exits 0.
if timeout 30 $IMEXD -c "$CONF" > "$W/daemon.out" 2>&1; then
	pid=$($NL node-get | sed -n 's/.* manager_pid=\([0-9]*\) .*/\1/p')
	[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = imexd ] &&
		t_ok "without -f: detached daemon (pid $pid) is the manager" ||
		t_fail "without -f: no manager: $($NL node-get)"
	[ -n "$pid" ] && kill -TERM "$pid"
	_wait_until 10 sh -c "! $NL node-get | grep -q manager_pid" &&
		t_ok "detached daemon stops on SIGTERM" || t_fail "detached daemon did not stop"
else
	t_fail "without -f: exit $?: $(cat "$W/daemon.out")"
fi
kill "$notify_pid" 2>/dev/null
grep -q 'Oops\|segfault\|AddressSanitizer' "$IMEX_VM_OUT"/imexd.*.log && t_fail "imexd crashed (see logs)"
t_done
