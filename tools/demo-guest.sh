#!/bin/sh
# Runs inside the demo VM; every step says what it does, then checks it.
. tests/vm/lib.sh
. tests/kmod/common.sh

step() { printf '\n==> %s\n' "$*"; }
show() { printf '    $ %s\n' "$*"; "$@" 2>&1 | sed 's/^/    /'; }

step "imex.ko is loaded with this node's fabric identity"
show grep imex-channels /proc/devices
show $NL node-get

step "A manager attaches (the single-node stand-in for imexd)"
serve_start
echo "    manager pid $SERVE_PID"

step "Create domain job7 with 2 channels owned by uid 1000, mode 0600"
t0=$(cut -d' ' -f1 /proc/uptime)
show $NL create name=job7 members=$NODE count=2 uid=1000 gid=1000 mode=0600
echo "    took $(awk -v s="$t0" '{ printf "%.2f s", $1 - s }' /proc/uptime)"
show ls -ln $DEV

step "A second domain on the same node gets disjoint channels; overlap is refused"
show $NL create name=job8 members=$NODE count=1
show $NL '!EADDRINUSE' create name=job9 members=$NODE channels=0

step "Only uid 1000 can open job7's channel0"
show setpriv --reuid=1000 --regid=1000 --clear-groups $CHANOPEN $DEV/channel0 info
show setpriv --reuid=1001 --regid=1001 --clear-groups $CHANOPEN $DEV/channel0 || true

step "Deleting job7 revokes its channels: an open fd is told through poll()"
$CHANOPEN $DEV/channel1 wait-revoke 10000 > /tmp/holder.log 2>&1 &
holder=$!
wait_for 5 grep -q '^open' /tmp/holder.log
show $NL delete name=job7
wait $holder || fail "holder was not told of the revocation"
sed 's/^/    /' /tmp/holder.log
show ls -ln $DEV

step "The manager goes away: job8 is DOWN and its channel cannot be opened"
serve_stop
show $NL domains
show $CHANOPEN $DEV/channel2 || true
echo
echo "demo finished"
