#!/bin/sh
# Runs inside each cluster VM as its test command: executes the commands
# the host drops into the out share (rpc/cmd.K), one at a time, and leaves
# each one's output and exit status next to it (rpc/out.K, rpc/rc.K).
# "exit" ends the agent and so powers the VM off cleanly.
rpc=$IMEX_VM_OUT/rpc
mkdir -p "$rpc"
echo "$(hostname) up" > "$rpc/ready"
k=1
# Polls every 50 ms for a second after a command, then ever more slowly,
# up to 0.4 s: 18 idle guests polling at 50 ms (a fork and exec each, under
# emulation) take the whole host.  busybox: no 9p lookups of libraries.
sleep=sleep
[ -x /usr/bin/busybox ] && sleep="/usr/bin/busybox sleep"
while :; do
	# The host writes cmd.K.tmp and renames it, so a file seen is whole.
	n=0 d=0.05
	while [ ! -f "$rpc/cmd.$k" ]; do
		$sleep $d
		n=$((n + 1))
		case $n in 20) d=0.1 ;; 30) d=0.2 ;; 40) d=0.4 ;; esac
	done
	cmd=$(cat "$rpc/cmd.$k")
	[ "$cmd" = exit ] && break
	sh -c "$cmd" > "$rpc/out.$k" 2>&1 < /dev/null
	echo $? > "$rpc/rc.$k.tmp"
	mv "$rpc/rc.$k.tmp" "$rpc/rc.$k"
	k=$((k + 1))
done
