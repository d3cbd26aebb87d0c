#!/bin/sh
# Runs inside each cluster VM as its test command: executes the commands
# the host drops into the out share (rpc/cmd.K), one at a time, and leaves
# each one's output and exit status next to it (rpc/out.K, rpc/rc.K).
# "exit" ends the agent and so powers the VM off cleanly.
rpc=$IMEX_VM_OUT/rpc
mkdir -p "$rpc"
echo "$(hostname) up" > "$rpc/ready"
k=1
while :; do
	# The host writes cmd.K.tmp and renames it, so a file seen is whole.
	while [ ! -f "$rpc/cmd.$k" ]; do sleep 0.05; done
	cmd=$(cat "$rpc/cmd.$k")
	[ "$cmd" = exit ] && break
	sh -c "$cmd" > "$rpc/out.$k" 2>&1 < /dev/null
	echo $? > "$rpc/rc.$k.tmp"
	mv "$rpc/rc.$k.tmp" "$rpc/rc.$k"
	k=$((k + 1))
done
