# imexd under Debian's systemd-journald (guest side; run by the same VM boot
# as single.sh): journald runs standalone (not socket-activated, it binds
# /run/systemd/journal/{socket,stdout} itself); imexd's stderr is a journal
# stream, as systemd gives a service (systemd-cat makes the stream; this
# systemd's systemd-cat does not set JOURNAL_STREAM, so it is set as systemd
# sets it: DEV:INODE of that stream).  journalctl IMEX_DOMAIN=NAME then
# lists that domain's lines and not another's, each with a MESSAGE_ID.
W=/tmp/imexd-journal		# not single.sh's state directory
. tests/imexd/vm/common.sh

JOURNALD=/lib/systemd/systemd-journald
for b in "$JOURNALD" /usr/bin/journalctl /usr/bin/systemd-cat; do
	[ -x "$b" ] || { echo "skipped: $b is not installed"; exit 0; }
done
ME=$(hostname)
CONF=$W/imexd.conf
imexd_conf "$CONF" LISTEN_ADDRESS=127.0.0.1

$JOURNALD > "$IMEX_VM_OUT/journald.log" 2>&1 &
journald_pid=$!
journal_up() { [ -S /run/systemd/journal/socket ] && [ -S /run/systemd/journal/stdout ]; }
_wait_until 30 journal_up && t_ok "systemd-journald runs standalone, its sockets bound" ||
	{ t_fail "journald: $(cat "$IMEX_VM_OUT/journald.log")"; t_done; }

# shellcheck disable=SC2016 # expanded by the inner shell
systemd-cat -t imexd sh -c 'JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" -f -c "$1"' \
	"$IMEXD" "$CONF" &
IMEXD_PID=$!
_wait_until 30 imexd_attached && t_ok "imexd under a journal stream attaches" ||
	{ t_fail "imexd did not attach: $(journalctl --no-pager -t imexd | tail -5)"; t_done; }
for d in jd1 jd2; do
	$NL create name=$d members="$ME@127.0.0.1" count=1 > "$W/create.$d" 2>&1 ||
		t_fail "create $d: $(cat "$W/create.$d")"
	_wait_until 10 domain_is $d 2 || t_fail "$d not READY: $($NL domain name=$d)"
done

# Every line journalctl gives for IMEX_DOMAIN=jd1 is jd1's, carries a
# MESSAGE_ID, and the domain's creation and READY are among them.
check_jd1() {
	journalctl --no-pager -o json IMEX_DOMAIN=jd1 > "$W/jd1.json" 2>&1 &&
	python3 - "$W/jd1.json" "$ME" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ids = {e.get("MESSAGE_ID") for e in lines}
ok = (lines
      and all(e.get("IMEX_DOMAIN") == "jd1" and "jd2" not in e["MESSAGE"]
              and len(e.get("MESSAGE_ID", "")) == 32 and e.get("PRIORITY")
              and e.get("CODE_FILE") and e.get("SYSLOG_IDENTIFIER") == "imexd"
              for e in lines)
      and "54b55bc73bd04be7ac57511b483e6e3b" in ids      # the create request
      and "3b6935e00676412f86d65ce4f966d18d" in ids      # in the kernel
      and "ea0a755ed4f0463ca52df08fc0417757" in ids      # READY
      and any(e["MESSAGE"] == "domain 'jd1': READY" for e in lines))
sys.exit(0 if ok else 1)
PY
}
if _wait_until 20 check_jd1; then
	t_ok "journalctl IMEX_DOMAIN=jd1: $(grep -c . "$W/jd1.json") lines, all jd1's, each with a MESSAGE_ID"
else
	t_fail "journalctl IMEX_DOMAIN=jd1: $(journalctl --no-pager -o verbose IMEX_DOMAIN=jd1 | head -60)"
fi
journalctl --no-pager -o cat IMEX_DOMAIN=jd2 MESSAGE_ID=ea0a755ed4f0463ca52df08fc0417757 > "$W/jd2.txt" 2>&1
[ "$(cat "$W/jd2.txt")" = "domain 'jd2': READY" ] &&
	t_ok "journalctl IMEX_DOMAIN=jd2 MESSAGE_ID=<READY>: just jd2's READY" ||
	t_fail "jd2 READY lines: $(cat "$W/jd2.txt")"
# A line about no domain nor node has no such field: the start-up line.
journalctl --no-pager -o json -t imexd > "$W/start.json" 2>&1
python3 - "$W/start.json" <<'PY' && t_ok "a line about no domain has no IMEX_DOMAIN, and is in the journal too" ||
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
lines = [e for e in lines if "listening on" in e.get("MESSAGE", "")]
sys.exit(0 if lines and all("IMEX_DOMAIN" not in e for e in lines) else 1)
PY
	t_fail "start-up line: $(cat "$W/start.json")"

for d in jd1 jd2; do $NL -q delete name=$d || t_fail "delete $d"; done
imexd_stop || t_fail "imexd did not stop"
journalctl --no-pager -o cat IMEX_DOMAIN=jd1 MESSAGE_ID=3b6935e00676412f86d65ce4f966d18d | grep -q "removed at generation" &&
	t_ok "jd1's removal from the kernel is in its lines" ||
	t_fail "no removal line for jd1: $(journalctl --no-pager -o cat IMEX_DOMAIN=jd1)"
kill "$journald_pid" 2>/dev/null
wait "$journald_pid" 2>/dev/null
t_done
