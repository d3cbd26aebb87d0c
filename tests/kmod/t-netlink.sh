# Acceptance 2 (and 3): every netlink operation succeeds when it should and
# is refused, with its own errno and a message, when it should not.
. tests/vm/lib.sh
. tests/kmod/common.sh
OTHER=99999999-8888-7777-6666-555555555555
U1=aaaaaaaa-0000-0000-0000-000000000001
U2=aaaaaaaa-0000-0000-0000-000000000002
LONGADDR=$(printf '%0256d' 0)	# IMEX_ADDR_MAX characters: one too many

# --- node -------------------------------------------------------------------
$NL -f - <<SCRIPT || fail "script 1"
node-get
!EINVAL node-set
msg nothing to set
!EINVAL node-set a=3:bin:00112233445566778899aabbccddeeff
msg together
!EINVAL node-set node=bad!name
msg node name
!EINVAL node-set a=1:long:64
!ERANGE node-set a=2:bin:0011
msg binary attribute size out of range
node-set fabric=$OTHER:1
node-set fabric=$FABRIC node_uuid=$U1
node-set node=$NODE
!EINVAL node-set a=5:u32:4096
!EINVAL raw cmd=2 a=60:u32:1
!EOPNOTSUPP raw cmd=99
!EOPNOTSUPP raw cmd=6
SCRIPT
$NL node-get | grep -q "node_uuid=$U1" || fail "node uuid not set"

# --- requests without a manager ---------------------------------------------------
$NL -f - <<SCRIPT || fail "script 2"
!ESRCH create name=d0 members=$NODE count=1
msg imexd is not running
!EINVAL create members=$NODE
msg missing attribute
!EINVAL create name=-bad members=$NODE
msg domain name
!EINVAL create name=x a=10:long:64 members=$NODE
!EINVAL create name=d0
!EADDRNOTAVAIL create name=d0 members=other1,other2
msg this node is not in the member list
!EINVAL create name=d0 members=$NODE,$NODE
msg listed twice
!EINVAL create name=d0 members=$NODE,bad/name
!ERANGE create name=d0 members=$NODE channels=2048
msg out of range: this node has max_channels=2048
!ERANGE create name=d0 members=$NODE count=2049
!EINVAL create name=d0 members=$NODE count=1 channels=1
msg not both
!ERANGE create name=d0 members=$NODE count=1 mode=01000
msg integer out of range
!ENOENT delete name=nosuch
msg no domain of that name on this node
!ENOENT alloc name=nosuch count=1
!ENOENT domain name=nosuch
!EINVAL domain
!ENOENT channel id=5
# node-join/-leave name a node of the group, no domain
!ESRCH node-join member=n9 addr=192.0.2.9:7777
msg imexd is not running
!ESRCH node-leave member=n9
!EINVAL node-join
msg missing attribute
!EINVAL node-join member=bad!name
msg node name
!EINVAL node-join member=
msg node name
!EINVAL node-join member=n9 addr=
msg empty node address
!EINVAL node-join member=n9 addr=192.0.2.9$(printf '\177')
msg printable and without spaces
!EINVAL node-join member=n9 addr=$LONGADDR
!EINVAL node-join member=n9 name=d1
msg Unsupported attribute
!EINVAL node-leave member=n9 addr=192.0.2.9
msg Unsupported attribute
!EINVAL channel
SCRIPT

# --- requests served by the manager stand-in -----------------------------------------
serve_start
$NL -f - <<SCRIPT || fail "script 3"
create name=d1 members=$NODE@192.0.2.1,peer2@192.0.2.2 count=2 uid=1000 gid=1000 mode=0640
create name=d2 members=$NODE channels=10-12
!EEXIST create name=d1 members=$NODE count=1
msg a domain of that name exists on this node already
!EADDRINUSE create name=d3 members=$NODE channels=11
msg channel 11 is in use
!EADDRINUSE alloc name=d1 channels=10
!ERANGE alloc name=d1 channels=5000
!EINVAL alloc name=d1 count=1 channels=7
alloc name=d1 count=2
alloc name=d1 channels=100
!EINVAL alloc name=d1
msg give a channel count or a channel list
!ENOENT free name=d1 channels=10
msg channel 10 is not granted to this domain
free name=d1 channels=100
!EINVAL evict name=d1 member=$NODE
msg cannot evict itself
!ENOENT evict name=d1 member=nosuch
!EINVAL replace name=d1 member=peer2
msg missing attribute
!EINVAL replace name=d1 member=peer2 new=bad!name
msg new member name
!EINVAL replace name=d1 member=peer2 new=peer2
msg the member it replaces
!EEXIST replace name=d1 member=peer2 new=$NODE
msg already a member
!ENOENT replace name=d1 member=nosuch new=peer3
msg not a member
!EINVAL replace name=d1 member=$NODE new=peer3
msg cannot replace itself
replace name=d1 member=peer2 new=peer3
evict name=d1 member=peer3
node-join member=n9 addr=$(printf '%0255d' 0)
node-join member=n9
node-leave member=n9
create name=d4 members=$NODE
delete name=d4
domain name=d1
domains
channels name=d2
channel id=10
!EINVAL channel-set id=10
msg nothing to set
!ENOENT channel-set id=500 mode=0600
!ERANGE channel-set id=10 mode=01777
channel-set id=10 uid=1000 mode=0604
!EALREADY attach
msg another manager
!EACCES detach
!EACCES accept
!EACCES set name=d1 uuid=$U2 members=$NODE fabric=$FABRIC gen=9
msg only the attached manager
!EACCES remove name=d1
!EACCES status name=d1 state=ready
!EBUSY node-set fabric=$OTHER:1
msg delete them before changing the node's identity
node-set fabric=$FABRIC
SCRIPT
ls -ln $DEV/channel0 | grep -q '^crw-r----- 1 1000 1000 ' || fail "channel0 owner/mode: $(ls -ln $DEV/channel0)"
ls -ln $DEV/channel10 | grep -q '^crw----r-- 1 1000 0 ' || fail "channel10 after set: $(ls -ln $DEV/channel10)"
[ ! -e $DEV/channel100 ] || fail "channel100 still present after free"
$NL domain name=d1 | grep -q "members=1 " || fail "evict did not shrink d1"
[ "$($NL channels name=d1 | wc -l)" = 4 ] || fail "d1 should hold 4 channels: $($NL channels name=d1)"

# --- unprivileged: reads work, mutations are refused ----------------------------------
$NL --as-uid 1000 -f - <<SCRIPT || fail "script 4"
node-get
domains
domain name=d1
channels
channel id=10
!EPERM node-set node=x
!EPERM create name=u1 members=$NODE
!EPERM delete name=d1
!EPERM alloc name=d1 count=1
!EPERM free name=d1 channels=0
!EPERM evict name=d1 member=x
!EPERM replace name=d1 member=x new=y
!EPERM node-join member=x
!EPERM node-leave member=x
!EPERM channel-set id=10 mode=0666
!EPERM attach
!EPERM detach
!EPERM accept
!EPERM done req=1 status=0
!EPERM set name=d1 uuid=$U2 members=$NODE fabric=$FABRIC gen=9
!EPERM remove name=d1
!EPERM status name=d1 state=ready
join group=events
!EPERM join group=manager
SCRIPT
# Root without CAP_SYS_ADMIN may read but not change anything.
setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin $NL -f - <<SCRIPT || fail "script 4b"
domains
!EPERM node-set node=x
msg needs CAP_SYS_ADMIN
!EPERM create name=u2 members=$NODE
!EPERM join group=manager
SCRIPT
# The node's counters tell one tenant about another's imports: only a
# CAP_SYS_ADMIN caller gets them.
$NL node-get | grep -q ' stats_imports=' || fail "root's node-get without the counters: $($NL node-get)"
out=$(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin $NL node-get) ||
	fail "node-get without CAP_SYS_ADMIN: $out"
! echo "$out" | grep -q ' stats_' || fail "the counters went to a caller without CAP_SYS_ADMIN: $out"

# --- outside the initial namespaces -------------------------------------------------------
# The family exists only in the initial network namespace (netnsok false),
# so a container with its own network namespace cannot even find it.
out=$(unshare --net $NL node-get 2>&1) && fail "the family answered in a new network namespace: $out"
echo "$out" | grep -q "not registered" || fail "new network namespace: unexpected error: $out"
# Root inside a user namespace has no capability in the initial one: it may
# read and listen to events, not manage.
unshare --user --map-root-user $NL -f - <<SCRIPT || fail "script 4c (user namespace root)"
domains
!EPERM create name=u3 members=$NODE
!EPERM attach
join group=events
!EPERM join group=manager
SCRIPT
serve_stop

# --- the manager's own operations ---------------------------------------------------------
$NL -f - <<SCRIPT || fail "script 5"
attach
attach
!EINVAL set name=m1
!EINVAL set name=m1 uuid=$U2 members=$NODE fabric=$FABRIC
msg missing attribute
!EXDEV set name=m1 uuid=$U2 members=$NODE fabric=$OTHER:1 gen=1
msg not this node's
!EXDEV set name=m1 uuid=$U2 members=$NODE fabric=$FABRIC_UUID:8 gen=1
!EADDRNOTAVAIL set name=m1 uuid=$U2 members=x,y fabric=$FABRIC gen=1
!EEXIST set name=d1 uuid=$U2 members=$NODE fabric=$FABRIC gen=1
!ERANGE set name=m1 uuid=$U2 members=$NODE fabric=$FABRIC gen=1 channels=4096
!EADDRINUSE set name=m1 uuid=$U2 members=$NODE fabric=$FABRIC gen=1 channels=10
!EINVAL set name=m1 uuid=$U2 members=$NODE fabric=$FABRIC gen=1 channels=5,5
msg listed twice
set name=m1 uuid=$U2 members=$NODE fabric=$FABRIC gen=1 channels=20-21
!EEXIST set name=m2 uuid=$U2 members=$NODE fabric=$FABRIC gen=1
msg already in use here
!EADDRINUSE set name=m2 uuid=$U1 members=$NODE fabric=$FABRIC gen=1 channels=21
msg channel 21 is in use
!ESTALE remove name=m1 uuid=$U1
!EADDRNOTAVAIL set name=m1 uuid=$U2 members=x fabric=$FABRIC gen=2 channels=21
set name=m1 uuid=$U2 members=$NODE,peer9 fabric=$FABRIC gen=2 channels=21
# The two-phase change commands (21-24) and attributes (30-32) are gone.
!EOPNOTSUPP raw cmd=21
!EOPNOTSUPP raw cmd=22
!EOPNOTSUPP raw cmd=23
!EOPNOTSUPP raw cmd=24 flags=dump
!EINVAL set name=m1 uuid=$U2 members=$NODE,peer9 fabric=$FABRIC gen=2 channels=21 a=30:u64:1
msg Unsupported attribute
!EINVAL set name=m1 uuid=$U2 members=$NODE,peer9 fabric=$FABRIC gen=2 channels=21 a=31:u32:0
!EINVAL set name=m1 uuid=$U2 members=$NODE,peer9 fabric=$FABRIC gen=2 channels=21 a=32:u32:1000
!ENOENT status name=nosuch state=ready
!ERANGE status name=m1 state=down
!EINVAL status name=m1 state=degraded view=$NODE:2:1
msg one entry per member
!EINVAL status name=m1 state=degraded view=$NODE:1:19
msg unknown member state
!ENOENT status name=m1 state=degraded view=ghost:2
status name=m1 state=degraded view=$NODE:1:12,peer9:4:41
domain name=m1
!ENOENT done req=12345 status=0
detach
!EACCES detach
SCRIPT
$NL domain name=m1 | grep -q "member=peer9@:4:41" || fail "member state/view not stored: $($NL domain name=m1)"
$NL domain name=m1 | grep -q "ids=21 " || fail "m1 channels: $($NL domain name=m1)"
# Without a manager, every domain is DOWN (state 1).
$NL domain name=m1 | grep -q "state=1 " || fail "m1 not DOWN after detach"

# --- a request answered by hand, and one lost with its manager ---------------------------------
$NL events count=3 > "$IMEX_VM_OUT/reqdone.log" 2>&1 &
listener=$!
wait_for 10 grep -q poll /proc/$listener/wchan
$NL -f - <<SCRIPT || fail "script 6"
attach
create name=h1 members=$NODE nowait=1
accept
!ENOENT accept
msg no request is waiting
!EINVAL done req=last status=0 a=33:bin:010203
msg whole u32
done req=last status=95 msg=hand-refused
create name=h1 members=$NODE nowait=1
accept
done req=last status=0 uuid=$U2 ids=3,4
SCRIPT
wait $listener || fail "REQ_DONE events not seen"
grep "name=h1 " "$IMEX_VM_OUT/reqdone.log" | grep -q "status=95 message=hand-refused" ||
	fail "refusal event: $(cat "$IMEX_VM_OUT/reqdone.log")"
grep "status=0" "$IMEX_VM_OUT/reqdone.log" | grep -q "uuid=$U2.* ids=3,4" ||
	fail "result event: $(cat "$IMEX_VM_OUT/reqdone.log")"
$NL -f - > "$IMEX_VM_OUT/holder.log" 2>&1 <<SCRIPT &
attach
hold
SCRIPT
holder=$!
wait_for 10 sh -c "$NL node-get | grep -q manager_pid"
$NL create name=h2 members=$NODE > "$IMEX_VM_OUT/h2.log" 2>&1 &
waiter=$!
wait_for 10 grep -q "req=" "$IMEX_VM_OUT/h2.log"
kill -9 $holder
if wait $waiter; then fail "request survived its manager"; fi
grep -q "expected OK, got ENOTCONN" "$IMEX_VM_OUT/h2.log" || fail "lost request: $(cat "$IMEX_VM_OUT/h2.log")"

# --- no fabric identity: nothing can be created -----------------------------------------------
imex_unload
imex_load
$NL -f - <<SCRIPT || fail "script 7"
!EXDEV create name=f1 members=$NODE
msg no fabric identity
attach
!EXDEV set name=f1 uuid=$U2 members=$NODE fabric=$FABRIC gen=1
SCRIPT
imex_unload
imex_load $IMEX_TEST_PARAMS
