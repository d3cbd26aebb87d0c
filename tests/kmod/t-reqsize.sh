# Requests the module relays to the manager (issue 13 item 6): an attribute
# a command does not use is refused by that command's policy; channel lists
# hold at most IMEX_CHANNELS_PER_MSG ids, each once; and a request whose
# attributes would not fit the one req-attrs attribute of the upcall (u16
# nla_len) is refused at once.  The manager (this script's socket) checks
# every upcall it accepts is well-formed (imex-nl accept: EBADMSG if not).
. tests/vm/lib.sh
. tests/kmod/common.sh
OUT=${IMEX_VM_OUT:-/tmp}
U1=cccccccc-0000-0000-0000-000000000001
U2=cccccccc-0000-0000-0000-000000000002

# members N: this node and N-1 others, each with the longest name (63
# bytes) and address (255 bytes).
long_members() {
	awk -v node="$NODE" -v n="$1" 'BEGIN {
		a = sprintf("%255s", ""); gsub(/ /, "a", a)
		s = node
		for (i = 1; i < n; i++) {
			m = sprintf("m%03d", i)
			while (length(m) < 63) m = m "x"
			s = s "," m "@" a
		}
		print s
	}'
}
M=$(long_members 160)
# Every part runs, so a failing run shows each problem.
bad=
part_fail() {
	echo "FAIL: $*" >&2
	bad="$bad; $*"
}

# show_upcall SCRIPT-LINES: what a manager is handed for a request the
# kernel should have refused (only run when it did not).
show_upcall() {
	{ echo attach; cat; echo accept; } > "$OUT/upcall.script"
	echo "--- what the manager gets for it:"
	$NL -f "$OUT/upcall.script" 2>&1 | grep -v '^cmd=' | tail -4
}

# --- the request of the issue: DOMAIN_DELETE with 64,000 bytes of channel
# ids (16,000 u32) and 160 long member names: ~117 KiB of attributes.
if ! $NL -f - > "$OUT/delete.log" 2>&1 <<SCRIPT; then
attach
set name=big uuid=$U1 fabric=$FABRIC members=$NODE gen=1 channels=0
!EINVAL delete name=big a=33:ids:16000 members=$M nowait=1
msg Unsupported attribute
SCRIPT
	cat "$OUT/delete.log"
	show_upcall <<SCRIPT
delete name=big a=33:ids:16000 members=$M nowait=1
SCRIPT
	part_fail "DOMAIN_DELETE with 64,000 bytes of ids and 160 member names was not refused"
else
	t_ok "DOMAIN_DELETE carrying channel ids and members: refused by its policy (EINVAL)"
fi

# --- attributes a command does not use, one per kind of command.
if ! $NL -f - > "$OUT/unused.log" 2>&1 <<SCRIPT; then
!EINVAL attach a=10:str:x
msg Unsupported attribute
!EINVAL node-get a=10:str:x
msg Unsupported attribute
!EINVAL domain name=big a=16:str:x
!EINVAL channel id=0 a=2:bin:00112233445566778899aabbccddeeff
!EINVAL domains a=30:u64:1
attach
!EINVAL delete name=big count=1
!EINVAL remove name=big a=16:str:x
!EINVAL accept a=10:str:x
!EINVAL done req=1 status=0 a=16:str:x
!EINVAL evict name=big member=x a=33:ids:1
node-get
domain name=big
SCRIPT
	cat "$OUT/unused.log"
	part_fail "an attribute a command does not use was accepted"
else
	t_ok "an attribute a command does not use is refused (EINVAL, per-command policy)"
fi

# --- channel lists: each id once, at most 4096 per request.
if ! $NL -f - > "$OUT/ids.log" 2>&1 <<SCRIPT; then
attach
!EINVAL create name=dup members=$NODE channels=3,3 nowait=1
msg channel 3 is listed twice
!EINVAL free name=big channels=0,0 nowait=1
msg channel 0 is listed twice
!EINVAL alloc name=big channels=5,6,5 nowait=1
msg channel 5 is listed twice
!E2BIG alloc name=big channels=1-4097 nowait=1
msg 4097 channels in one request: at most 4096
SCRIPT
	cat "$OUT/ids.log"
	part_fail "duplicate or too many channel ids were not refused"
else
	t_ok "channel lists in requests: duplicates refused (EINVAL), more than 4096 refused (E2BIG)"
fi

# --- a valid request too large to relay: 160 members with the longest
# names and addresses (~53 KiB) and 1000 channels with their owners
# (~36 KiB).  One that fits is relayed whole and well-formed.
if ! $NL -f - > "$OUT/relay.log" 2>&1 <<SCRIPT; then
attach
!EMSGSIZE create name=huge members=$M channels=1-1000 uid=0 gid=0 mode=0600 nowait=1
msg too large to relay to imexd
create name=fits members=$M channels=1-200 nowait=1
accept
SCRIPT
	cat "$OUT/relay.log"
	show_upcall <<SCRIPT
create name=huge members=$M channels=1-1000 uid=0 gid=0 mode=0600 nowait=1
SCRIPT
	part_fail "a request too large for the upcall was not refused"
elif ! grep -q 'req-attrs [0-9]* bytes' "$OUT/relay.log"; then
	part_fail "no upcall for the request that fits"
else
	t_ok "a request too large to relay is refused (EMSGSIZE); $(grep -o 'req-attrs [0-9]* bytes' "$OUT/relay.log") relayed well-formed"
fi
[ -z "$bad" ] || fail "${bad#; }"
