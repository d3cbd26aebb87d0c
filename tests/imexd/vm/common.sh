# Shared by the imexd VM tests (sourced inside the guest; POSIX sh).
#   imexd_conf FILE [KEY=VALUE...]  write a config: state in $W/state,
#                                   NODE_NAME from hostname, debug log
#   imexd_start TAG [CONFIG]        start imexd -f in the background, log in
#                                   $IMEX_VM_OUT/imexd.TAG.log, pid in $IMEXD_PID
#   imexd_attached                  the running imexd is the kernel's manager
#   imexd_stop                      SIGTERM, wait (bounded), 1 if it hangs
#   domain_state NAME               the kernel's state of a domain (0..3)
#   probe_is CODE                   imexctl node status exits CODE (its
#                                   output in $W/probe.out)
. tests/vm/lib.sh
. tests/kmod/common.sh

IMEXD=${IMEXD:-imexd/imexd}
W=${W:-/tmp/imexd-test}
IMEXD_PID=""

[ -x "$IMEXD" ] || fail "$IMEXD is not built: run make -C imexd"
mkdir -p "$W"

imexd_conf() {
	_f=$1
	shift
	{
		echo "NODE_NAME=$(hostname)"
		echo "STATE_DIRECTORY=$W/state"
		echo "LOG_LEVEL=debug"
		echo "HEARTBEAT_INTERVAL_MS=250"
		for kv in "$@"; do echo "$kv"; done
	} > "$_f"
}

imexd_start() {
	$IMEXD -f -c "${2:-$W/imexd.conf}" > "$IMEX_VM_OUT/imexd.$1.log" 2>&1 &
	IMEXD_PID=$!
}

imexd_attached() {
	$NL node-get | grep -q " manager_pid=$IMEXD_PID "
}

imexd_alive() {
	kill -0 "$IMEXD_PID" 2>/dev/null
}

imexd_stop() {
	[ -n "$IMEXD_PID" ] || return 0
	kill -TERM "$IMEXD_PID" 2>/dev/null
	_wait_until 10 sh -c "! kill -0 $IMEXD_PID 2>/dev/null" || return 1
	wait "$IMEXD_PID"
	_rc=$?
	IMEXD_PID=""
	return $_rc
}

domain_state() {
	$NL domain name="$1" 2>/dev/null | sed -n 's/.* state=\([0-9]*\) .*/\1/p'
}

IMEXCTL=${IMEXCTL:-tools/imexctl/imexctl}
probe_is() {
	$IMEXCTL node status --state-dir "$W/state" > "$W/probe.out" 2>&1
	[ $? = "$1" ]
}

domain_is() { # NAME STATE
	[ "$(domain_state "$1")" = "$2" ]
}
