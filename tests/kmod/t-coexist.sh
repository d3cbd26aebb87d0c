# Acceptance 3: two domains with disjoint channels share a node; any
# overlap is refused, whether asked for by request or set by the manager.
. tests/vm/lib.sh
. tests/kmod/common.sh

serve_start
$NL -q create name=job1 members=$NODE channels=0-9 || fail "create job1"
$NL -q create name=job2 members=$NODE,peer@192.0.2.9 channels=10-19 || fail "create job2"
for i in $(seq 0 19); do [ -c $DEV/channel$i ] || fail "channel$i missing"; done
$CHANOPEN $DEV/channel9 info | grep -q 'domain=job1 channel=9' || fail "channel9 is not job1's"
$CHANOPEN $DEV/channel10 info | grep -q 'domain=job2 channel=10' || fail "channel10 is not job2's"
$NL -f - <<SCRIPT || fail "overlaps"
!EADDRINUSE create name=job3 members=$NODE channels=9-10
msg channel 9 is in use: 'imexctl channel list' names its domain
!EADDRINUSE alloc name=job1 channels=15
msg channel 15 is in use
alloc name=job1 channels=30
SCRIPT
[ "$($NL domain name=job1 | sed 's/.*nchannels=\([0-9]*\).*/\1/')" = 11 ] || fail "job1 size"
[ "$($NL domain name=job2 | sed 's/.*nchannels=\([0-9]*\).*/\1/')" = 10 ] || fail "job2 size"
serve_stop
$NL -f - <<SCRIPT || fail "overlap set by the manager"
attach
set name=job4 uuid=aaaaaaaa-0000-0000-0000-000000000004 fabric=$FABRIC members=$NODE gen=1 channels=50
!EADDRINUSE set name=job5 uuid=aaaaaaaa-0000-0000-0000-000000000005 fabric=$FABRIC members=$NODE gen=1 channels=50
msg channel 50 is in use
!EADDRINUSE set name=job4 uuid=aaaaaaaa-0000-0000-0000-000000000004 fabric=$FABRIC members=$NODE gen=2 channels=50 ids=15
msg channel 15 is in use
SCRIPT
