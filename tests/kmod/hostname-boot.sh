# Issue 13 item 5: loading does not depend on the host name.  Runs in a VM
# whose host name is still the kernel's default, "(none)" (check-vm):
#   tests/vm/run.sh --hostname '' --no-module -- sh tests/kmod/hostname-boot.sh
# A host name that is not a valid node name ("(none)", 64 characters) leaves
# the node unnamed, logged once, until NODE_SET names it; domains wait for
# the name.  Only an invalid node_name given explicitly fails the load.
. tests/vm/lib.sh
. tests/kmod/common.sh
log=$IMEX_VM_OUT/hostname-boot.txt

read -r host < /proc/sys/kernel/hostname
[ "$host" = "(none)" ] || fail "the host name is '$host', not unset: boot with --hostname ''"

# $1: what the host name is.  Loads, checks the unnamed node, unloads.
unnamed() {
	dmesg -C
	modprobe imex $IMEX_TEST_PARAMS || fail "$1: loading failed: $(dmesg | tail -n 3)"
	$NL node-get > "$log" || fail "$1: NODE_GET failed"
	! grep -q ' node=' "$log" || fail "$1: NODE_GET names the node: $(cat "$log")"
	imexctl node show | grep -q "^name: *(not set: imexd sets it" ||
		fail "$1: imexctl node show: $(imexctl node show)"
	imexctl --json node show | grep -q '"name": *null' ||
		fail "$1: imexctl --json node show: $(imexctl --json node show)"
	imexctl module load --node-name named 2>&1 | grep -q "the node has no name yet: name it with 'imexctl node set-name named'" ||
		fail "$1: imexctl module load --node-name: $(imexctl module load --node-name named 2>&1)"
	n=$(dmesg | grep -c 'is not a valid node name: the node stays unnamed')
	[ "$n" = 1 ] || fail "$1: expected one log line about the name, got $n: $(dmesg)"
	# Domains wait for a name; then NODE_SET gives one and they work.
	$NL -f - <<SCRIPT || fail "$1: domains without a node name"
attach
!EADDRNOTAVAIL create name=d1 members=named
msg this node has no name yet: start imexd, or 'imexctl node set-name NAME'
!EADDRNOTAVAIL set name=d1 uuid=aaaaaaaa-0000-0000-0000-000000000001 fabric=$FABRIC members=named gen=1
msg this node has no name yet
node-set node=named
set name=d1 uuid=aaaaaaaa-0000-0000-0000-000000000001 fabric=$FABRIC members=named gen=1 channels=3
SCRIPT
	$NL node-get | grep -q ' node=named ' || fail "$1: NODE_SET did not name the node: $($NL node-get)"
	[ -c $DEV/channel3 ] || fail "$1: no device node for the domain's channel"
	imex_unload
}

unnamed "host name (none)"
hostname "$(printf 'h%063d' 0)"
unnamed "64-character host name"

# A valid host name is the default name.
hostname good-host
imex_load $IMEX_TEST_PARAMS
$NL node-get | grep -q ' node=good-host ' || fail "host name not used: $($NL node-get)"
imex_unload

# An invalid node_name given explicitly fails the load, and says why.
dmesg -C
expect_fail modprobe imex 'node_name=(none)'
dmesg | grep -q "node_name '(none)' is not a valid name" || fail "no log line for node_name: $(dmesg)"
! grep -q '^imex ' /proc/modules || fail "loaded with an invalid node_name"
echo "hostname-boot: ok"
