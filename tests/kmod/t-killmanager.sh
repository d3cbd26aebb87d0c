# Acceptance 5: a manager killed in the middle of a request.  The caller is
# told (ENOTCONN); what the manager had set stays whole (a DOMAIN_SET is
# atomic, so there is no half); every domain is DOWN until a manager keeps
# it again, its channels and device nodes kept but not openable.
. tests/vm/lib.sh
. tests/kmod/common.sh
ENOLINK=67

serve_start
$NL -q create name=base members=$NODE count=2 || fail "create base"
serve_stop
$NL domain name=base | grep -q 'state=1 ' || fail "base not DOWN once its manager left: $($NL domain name=base)"

# Killed after its DOMAIN_SET, before it answered: the stand-in stops there.
$NL serve crash=set > "$IMEX_VM_OUT/crash.log" 2>&1 &
crasher=$!
wait_for 10 grep -q serving "$IMEX_VM_OUT/crash.log"
$NL create name=mid members=$NODE count=3 > "$IMEX_VM_OUT/mid.log" 2>&1 &
waiter=$!
wait_for 10 grep -q 'set domain=mid' "$IMEX_VM_OUT/crash.log"
# All of it at once: usable, with its three channels and their nodes.
$NL domain name=mid | grep -q 'state=2 ' || fail "mid not READY once set: $($NL domain name=mid)"
$NL domain name=mid | grep -q 'nchannels=3 ' || fail "mid has not its 3 channels: $($NL domain name=mid)"
[ "$($NL channels name=mid | grep -c 'chstate=1 ')" = 3 ] || fail "3 channels should be granted: $($NL channels name=mid)"
kill -9 $crasher
if wait $waiter; then fail "create succeeded although its manager died before answering"; fi
grep -q ENOTCONN "$IMEX_VM_OUT/mid.log" || fail "caller not told: $(cat "$IMEX_VM_OUT/mid.log")"

# The exit took nothing back: both domains stay, DOWN, with every channel.
wait_for 10 sh -c "! $NL node-get | grep -q manager_pid"
for d in base mid; do
	$NL domain name=$d | grep -q 'state=1 ' || fail "$d not DOWN after the kill: $($NL domain name=$d)"
done
[ "$($NL channels | wc -l)" = 5 ] || fail "channels after the kill: $($NL channels)"
for ch in $($NL channels | sed 's/.* channel=\([0-9]*\) .*/\1/'); do
	[ -c $DEV/channel$ch ] || fail "channel$ch lost its device node"
done
ch=$($NL channels name=mid | head -n 1 | sed 's/.* channel=\([0-9]*\) .*/\1/')
$CHANOPEN $DEV/channel$ch; [ $? = $ENOLINK ] || fail "opened channel$ch of a DOWN domain"

# A new manager keeps them again; the domain it never answered for is whole.
serve_start
$NL domain name=mid | grep -q 'state=2 ' || fail "mid not READY with a manager: $($NL domain name=mid)"
$CHANOPEN $DEV/channel$ch info | grep -q 'domain=mid' || fail "channel$ch not usable again"
$NL -q delete name=mid || fail "delete mid"
$NL -q delete name=base || fail "delete base"
serve_stop
