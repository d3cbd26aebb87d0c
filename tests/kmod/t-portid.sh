# Issue 13 item 8: the manager is its socket, not its port id.  A socket
# that binds the port id of a manager being closed, and attaches before the
# old one's release notification, stays the manager (tests/kmod/portid-race.c
# lands in that window every cycle).
. tests/vm/lib.sh
. tests/kmod/common.sh

tests/kmod/portid-race 20 || fail "a new manager socket lost its attachment to the old one's release"
# The last socket closed: nobody is attached.
wait_for 10 sh -c "! $NL node-get | grep -q manager_pid"
