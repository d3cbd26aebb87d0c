# Shared by the kernel-tier tests (sourced; POSIX sh).
FABRIC_UUID=11111111-2222-3333-4444-555555555555
FABRIC_PART=7
FABRIC=$FABRIC_UUID:$FABRIC_PART
IMEX_TEST_PARAMS="fabric_uuid=$FABRIC_UUID fabric_partition=$FABRIC_PART"
NODE=$(hostname)
NL=tests/kmod/imex-nl
CHANOPEN=tests/kmod/chanopen
DEV=/dev/imex-channels

# Start the single-node manager stand-in in the background; wait until it
# has attached (its first line), with a bound.
serve_start() {
	$NL serve "$@" > "${IMEX_VM_OUT:-/tmp}/serve.log" 2>&1 &
	SERVE_PID=$!
	wait_for 10 grep -q serving "${IMEX_VM_OUT:-/tmp}/serve.log"
}

serve_stop() {
	kill -9 "$SERVE_PID" 2>/dev/null
	wait "$SERVE_PID" 2>/dev/null || true
	# The kernel ends the attachment when the socket closes.
	wait_for 10 sh -c "! $NL node-get | grep -q manager_pid"
}

# state_snapshot FILE: every domain and channel, as the kernel reports them.
state_snapshot() {
	{ $NL domains; $NL channels
	  stat -c '%n %A %u %g %t %T' $DEV/* 2>/dev/null; } |
		sed 's/ open=[0-9]*//' > "$1"
}
