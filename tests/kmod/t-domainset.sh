# The manager's atomic operations: DOMAIN_SET ("domain X is now D": create
# or replace members, channels, owners, generation; all or nothing) and
# DOMAIN_REMOVE (revokes the domain's channels, fds, exports and imports).
. tests/vm/lib.sh
. tests/kmod/common.sh
. tests/kmod/share-lib.sh
UA=aaaaaaaa-0000-0000-0000-0000000000a1
UB=aaaaaaaa-0000-0000-0000-0000000000b1
UC=aaaaaaaa-0000-0000-0000-0000000000c1
OTHER=99999999-8888-7777-6666-555555555555
SETA="name=da uuid=$UA fabric=$FABRIC"

$NL -q node-set node_uuid=$NODEU || fail "node-set"

# Only the attached manager, with CAP_SYS_ADMIN, may set or remove.
$NL -f - <<SCRIPT || fail "not the manager"
!EACCES set $SETA members=$NODE gen=1 channels=1
msg only the attached manager may do this: attach first
!EACCES remove name=da
SCRIPT
setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin $NL -f - <<SCRIPT || fail "without CAP_SYS_ADMIN"
!EPERM set $SETA members=$NODE gen=1 channels=1
!EPERM remove name=da
SCRIPT
[ -z "$($NL domains)" ] || fail "a refused set left a domain: $($NL domains)"
t_ok "non-manager refused"

# dom NAME PATTERN... : the domain's doit line matches every pattern.
cat > "$OUT/dom.sh" <<'EOF'
name=$1; shift
line=$(tests/kmod/imex-nl domain name=$name) || exit 1
for p in "$@"; do
	echo "$line" | grep -q -- "$p" || { echo "domain $name: no '$p' in: $line" >&2; exit 1; }
done
EOF
# own N UID GID PERMS: the device node of channel N.
cat > "$OUT/own.sh" <<'EOF'
ls -ln /dev/imex-channels/channel$1 | grep -q "^$4 1 $2 $3 " ||
	{ echo "channel$1: $(ls -ln /dev/imex-channels/channel$1)" >&2; exit 1; }
EOF
devnum() { $NL channel id=$1 | sed -n 's/.* devnum=\([0-9:]*\).*/\1/p'; }
DOM="sh $OUT/dom.sh"
OWN="sh $OUT/own.sh"
SNAP=". tests/vm/lib.sh; . tests/kmod/common.sh; state_snapshot"

# Create, refusals that change nothing, channels held by another domain.
# A new domain with another member is DEGRADED until the manager says.
$NL -f - > "$OUT/create.log" 2>&1 <<SCRIPT || fail "create: $(cat "$OUT/create.log")"
attach
set $SETA members=$NODE,peer1 gen=5 channels=1-3 uid=1000 gid=1000 mode=0640
sh $DOM da state=3 nchannels=3 setgen=5 ids=1,2,3 member=$NODE member=peer1
sh $OWN 1 1000 1000 crw-r-----
sh $OWN 3 1000 1000 crw-r-----
set name=db uuid=$UB fabric=$FABRIC members=$NODE gen=1 channels=10
sh $SNAP $OUT/before
!EINVAL set $SETA members=$NODE channels=1
msg missing attribute
!EINVAL set name=-x uuid=$UC fabric=$FABRIC members=$NODE gen=1
msg domain name
!EXDEV set name=da uuid=$UA fabric=$OTHER:1 members=$NODE gen=6
msg not this node's
!EADDRNOTAVAIL set $SETA members=peer1 gen=6 channels=1-3
msg this node is not in the member list
!EINVAL set $SETA members=$NODE,$NODE gen=6
msg listed twice
!ERANGE set $SETA members=$NODE gen=6 channels=1-3,2048
msg out of range: this node has max_channels=2048
!EINVAL set $SETA members=$NODE gen=6 channels=1-3,3
msg channel 3 is listed twice
!EINVAL set $SETA members=$NODE gen=6 channels=1-2 ids=2
msg channel 2 is listed twice
!EINVAL set $SETA members=$NODE gen=6 channels=1-3 ids_uid=5
msg an owner or mode without channel ids
!EINVAL set $SETA members=$NODE gen=6 a=33:bin:010203
msg the length is not a multiple of 4
!EINVAL set $SETA members=$NODE gen=6 ids=1 ids_uid=4294967295
msg owner uid or gid is not valid
!EADDRINUSE set $SETA members=$NODE gen=6 channels=1-4,10
msg channel 10 is in use
!EADDRINUSE set name=dc uuid=$UC fabric=$FABRIC members=$NODE gen=1 channels=4,10
!EEXIST set name=da uuid=$UB fabric=$FABRIC members=$NODE gen=6
msg the domain here has UUID $UA: remove it first
!EEXIST set name=dc uuid=$UA fabric=$FABRIC members=$NODE gen=1
msg already in use here
sh $SNAP $OUT/after
sh cmp $OUT/before $OUT/after
sh $DOM da setgen=5 nchannels=3
SCRIPT
! $NL domains | grep -v 'state=1 ' ||
	fail "domains not DOWN after the manager left: $($NL domains)"
t_ok "create; refusals change nothing; a channel of another domain is refused"

# Replace: channels added and removed, members changed, owners changed;
# a removed channel's fds, exports and imports end; kept ones stay.
$NL -f - > "$OUT/replace.log" 2>&1 <<SCRIPT || fail "replace: $(cat "$OUT/replace.log")"
attach
status name=da state=ready
status name=db state=ready
sh $SHARE -c 3 export --desc three --hold --handle-file $OUT/h3 > $OUT/exp3.log 2>&1 & echo \$! > $OUT/exp3.pid
sh i=0; until test -s $OUT/h3; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh $SHARE -c 3 import \$(cat $OUT/h3) --wait-revoke 60 > $OUT/imp3.log 2>&1 & echo \$! > $OUT/imp3.pid
sh i=0; until grep -q three $OUT/imp3.log; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh $CHANOPEN $DEV/channel3 wait-revoke 60000 > $OUT/hold3.log 2>&1 & echo \$! > $OUT/hold3.pid
sh $CHANOPEN $DEV/channel1 wait-revoke 60000 > $OUT/hold1.log 2>&1 & echo \$! > $OUT/hold1.pid
sh i=0; until grep -q ^open $OUT/hold3.log && grep -q ^open $OUT/hold1.log; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh $NL channel id=1 | sed -n 's/.* devnum=\([0-9:]*\).*/\1/p' > $OUT/dev1.before
set $SETA members=$NODE,peer2 gen=6 channels=1,2,4 uid=1000 gid=1000 mode=0640
sh $DOM da state=3 nchannels=3 setgen=6 ids=1,2,4 member=peer2
sh $DOM da state=3 'reason="no member status from imexd yet"'
sh ! $DOM da member=peer1
sh i=0; until ! kill -0 \$(cat $OUT/hold3.pid) 2>/dev/null; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh i=0; until ! kill -0 \$(cat $OUT/imp3.pid) 2>/dev/null; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh grep -q 'info errno=ENODEV' $OUT/hold3.log
sh grep -q 'reason channel-gone' $OUT/imp3.log
sh ! test -e $DEV/channel3
sh $OWN 4 1000 1000 crw-r-----
sh kill -0 \$(cat $OUT/hold1.pid)
set $SETA members=$NODE,peer2 gen=7 channels=1,2,4 uid=2000 gid=2001 mode=0600
sh $OWN 1 2000 2001 crw-------
sh $OWN 4 2000 2001 crw-------
sh $NL channel id=1 | grep -q 'uid=2000 gid=2001 mode=0600'
sh $NL channel id=1 | sed -n 's/.* devnum=\([0-9:]*\).*/\1/p' | cmp -s - $OUT/dev1.before
sh kill -0 \$(cat $OUT/hold1.pid)
set $SETA members=$NODE,peer2 gen=8 channels=1 uid=2000 gid=2001 mode=0600 ids=2,4 ids_uid=3000 ids_gid=3001 ids_mode=0660
sh $OWN 1 2000 2001 crw-------
sh $OWN 2 3000 3001 crw-rw----
sh $OWN 4 3000 3001 crw-rw----
status name=da state=degraded view=$NODE:1:12,peer2:2:21
set $SETA members=$NODE,peer2,peer3 gen=9 channels=1 uid=2000 gid=2001 mode=0600 ids=2,4 ids_uid=3000 ids_gid=3001 ids_mode=0660
sh $DOM da state=3 setgen=9 member=peer2@:2 member=peer3@:0
sh $SNAP $OUT/same.before
set $SETA members=$NODE,peer2,peer3 gen=9 channels=1 uid=2000 gid=2001 mode=0600 ids=2,4 ids_uid=3000 ids_gid=3001 ids_mode=0660
sh $SNAP $OUT/same.after
sh cmp $OUT/same.before $OUT/same.after
sh kill -0 \$(cat $OUT/hold1.pid)
sh kill -TERM \$(cat $OUT/exp3.pid)
SCRIPT
kill "$(cat "$OUT/hold1.pid")" 2>/dev/null
t_ok "replace adds and removes channels and members, changes owners, revokes what left"

# Remove: the domain's opens, exports and imports end; its nodes go.
$NL -f - > "$OUT/remove.log" 2>&1 <<SCRIPT || fail "remove: $(cat "$OUT/remove.log")"
attach
status name=da state=ready
status name=db state=ready
sh $SHARE -c 10 export --desc ten --hold --handle-file $OUT/h10 > $OUT/exp10.log 2>&1 & echo \$! > $OUT/exp10.pid
sh i=0; until test -s $OUT/h10; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh $SHARE -c 10 import \$(cat $OUT/h10) --wait-revoke 60 > $OUT/imp10.log 2>&1 & echo \$! > $OUT/imp10.pid
sh $CHANOPEN $DEV/channel10 wait-revoke 60000 > $OUT/hold10.log 2>&1 & echo \$! > $OUT/hold10.pid
sh i=0; until grep -q ten $OUT/imp10.log && grep -q ^open $OUT/hold10.log; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
!ESTALE remove name=db uuid=$UA
msg a domain of that name here has UUID $UB
!ENOENT remove name=nosuch
msg no domain of that name on this node
remove name=db uuid=$UB
sh i=0; until ! kill -0 \$(cat $OUT/hold10.pid) 2>/dev/null; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh i=0; until ! kill -0 \$(cat $OUT/imp10.pid) 2>/dev/null; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh grep -q 'info errno=ENODEV' $OUT/hold10.log
sh grep -q 'reason channel-gone' $OUT/imp10.log
sh ! test -e $DEV/channel10
!ENOENT domain name=db
sh i=0; until $NL node-get | grep -q ' exports=0 imports=0'; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.1; done
sh kill -TERM \$(cat $OUT/exp10.pid)
set name=db uuid=$UC fabric=$FABRIC members=$NODE gen=1 channels=10
remove name=db
SCRIPT
expect_counts 0 0
t_ok "remove revokes opens, exports and imports"

$NL -q -f - <<SCRIPT || fail "remove da"
attach
remove name=da
SCRIPT
[ -z "$($NL domains)" ] || fail "domains left: $($NL domains)"

# At most IMEX_DOMAINS_MAX domains on the node.
{
	echo attach
	i=0
	while [ $i -lt 256 ]; do
		printf 'set name=n%d uuid=bbbbbbbb-0000-0000-0000-%012d fabric=%s members=%s gen=1\n' \
			$i $i "$FABRIC" "$NODE"
		i=$((i + 1))
	done
	echo "!ENOSPC set name=n256 uuid=cccccccc-0000-0000-0000-000000000000 fabric=$FABRIC members=$NODE gen=1"
	echo "msg this node already holds 256 domains, the most it may"
	echo "set name=n0 uuid=bbbbbbbb-0000-0000-0000-000000000000 fabric=$FABRIC members=$NODE gen=2 channels=7"
	i=0
	while [ $i -lt 256 ]; do echo "remove name=n$i"; i=$((i + 1)); done
} > "$OUT/many.txt"
$NL -q -f "$OUT/many.txt" > "$OUT/many.log" 2>&1 || fail "256 domains: $(tail -5 "$OUT/many.log")"
[ -z "$($NL domains)" ] || fail "domains left: $($NL domains)"
t_ok "domain bound"
t_done
