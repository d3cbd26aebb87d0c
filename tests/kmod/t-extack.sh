# Issue 13 item 7: every formatted extended-ack message arrives whole with
# the longest valid names (IMEX_NAME_MAX - 1 characters), the largest ids and
# UUIDs.  The kernel formats them into 80 bytes: a longer one is cut (6.1,
# silently) or cut and logged as "truncated extack" (6.2 and later, which
# tests/vm/dmesg-patterns fails on).  Each "msg" line holds the whole
# expected text, so a cut message fails it.  One line per message family;
# tests/ops/extack-len.pl checks the same bound statically.
. tests/vm/lib.sh
. tests/kmod/common.sh
N=$(printf 'n%062d' 0)		# this node's name, 63 characters
D=$(printf 'd%062d' 0)		# a domain
E=$(printf 'e%062d' 0)		# a domain that does not exist
M=$(printf 'm%062d' 0)		# another member
[ ${#N} = 63 ] || fail "name length ${#N}"
U=ffffffff-ffff-ffff-ffff-ffffffffffff
U1=aaaaaaaa-0000-0000-0000-000000000001
U2=aaaaaaaa-0000-0000-0000-000000000002
MAX32=4294967295
MAX64=18446744073709551615
MANY=$(seq 1 161 | sed 's/^/n/' | paste -sd, -)

# Another socket while the script's one is the manager.
cat > "$IMEX_VM_OUT/other.txt" <<SCRIPT
!EACCES accept
msg only the attached manager (imexd, pid
msg ) may do this
!EALREADY attach
msg another manager (pid
msg ) is attached: is a second imexd running?
SCRIPT

$NL -f - <<SCRIPT || fail "extack script"
node-set node=$N
attach
set name=$D uuid=$U1 fabric=$FABRIC members=$N,$M gen=1 channels=0-1
sh $NL -q -f $IMEX_VM_OUT/other.txt
# node identity
!EBUSY node-set node=$M
msg 1 domain(s) exist: delete them before changing the node's identity
# requests: names
!EEXIST create name=$D members=$N
msg a domain of that name exists on this node already: pick another name
!EINVAL create name=$E members=$N,$M,$M
msg listed twice: '$M'
!EINVAL create name=$E members=$N,-${M#m}
msg member name: use letters, digits, '_', '.', '-', starting with a letter or digit
!E2BIG create name=$E members=$MANY
msg 161 members is more than the 160 a domain may have
!EADDRNOTAVAIL create name=$E members=$M
msg this node is not in the member list: list it by the name 'imexctl node show' prints
!ENOENT delete name=$E
msg no domain of that name on this node: see 'imexctl domain list'
!ENOENT evict name=$D member=$E
msg not a member: '$E'
# requests: channels
!ENOENT free name=$D channels=$MAX32
msg channel 4294967295 is not granted to this domain
!EADDRINUSE alloc name=$D channels=1
msg channel 1 is in use: 'imexctl channel list' names its domain
!ERANGE alloc name=$D channels=$MAX32
msg channel 4294967295 is out of range: this node has max_channels=2048
!ERANGE alloc name=$D count=$MAX32
msg 4294967295 channels asked for; this node has max_channels=2048
!ENOENT channel id=$MAX32
msg channel 4294967295 is not granted on this node
# the manager's domain-set and domain-remove: names, UUIDs, channels
!ESTALE remove name=$D uuid=$U
msg a domain of that name here has UUID $U1
!ENOENT remove name=$E
msg no domain of that name on this node: see 'imexctl domain list'
!EEXIST set name=$D uuid=$U2 fabric=$FABRIC members=$N gen=2
msg the domain here has UUID aaaaaaaa-0000-0000-0000-000000000001: remove it first
!EEXIST set name=$E uuid=$U1 fabric=$FABRIC members=$N gen=1
msg domain UUID aaaaaaaa-0000-0000-0000-000000000001 is already in use here
!EXDEV set name=$E uuid=$U2 fabric=$U:$MAX32 members=$N gen=1
msg fabric ffffffff-ffff-ffff-ffff-ffffffffffff/4294967295 is not this node's
!EADDRNOTAVAIL set name=$E uuid=$U2 fabric=$FABRIC members=$M gen=1
msg this node is not in the member list: list it by the name 'imexctl node show' prints
!EINVAL set name=$E uuid=$U2 fabric=$FABRIC members=$N gen=1 channels=$MAX32,$MAX32
msg channel 4294967295 is listed twice
!EINVAL set name=$E uuid=$U2 fabric=$FABRIC members=$N gen=1 channels=$MAX32 uid=$MAX32
msg channel 4294967295: owner uid or gid is not valid
!E2BIG set name=$D uuid=$U1 fabric=$FABRIC members=$N,$M gen=2 channels=0-4096
msg 4097 channels in one message; at most 4096
!ERANGE set name=$D uuid=$U1 fabric=$FABRIC members=$N,$M gen=2 channels=$MAX32
msg channel 4294967295 is out of range: this node has max_channels=2048
!EADDRINUSE set name=$E uuid=$U2 fabric=$FABRIC members=$N gen=1 channels=1
msg channel 1 is in use: 'imexctl channel list' names its domain
# domain status
!ENOENT status name=$E state=ready
msg no domain of that name on this node: see 'imexctl domain list'
!ENOENT status name=$D state=ready view=$E:1:11
msg not a member: '$E'
!EINVAL status name=$D state=ready view=$M:1:1
msg a member view needs one entry per member (2)
!ENOENT domain uuid=$U
msg no domain with UUID ffffffff-ffff-ffff-ffff-ffffffffffff on this node
# requests, imports and exports by id
!ENOENT done req=$MAX64 status=0
msg no pending request 18446744073709551615 (it timed out or was completed)
!ENOENT import-done import_id=$MAX64 istatus=5
msg import 18446744073709551615 is not waiting: interrupted or timed out
!ENOENT import-check handle_id=$MAX64 uuid=$U chan=$MAX32 member=$M
msg no export 18446744073709551615 here: it was unexported or never made
SCRIPT
# No formatted message was cut (6.2 and later log each one that was).
! dmesg | grep -q 'truncated extack' || fail "$(dmesg | grep 'truncated extack')"
