#!/bin/sh
# imexd's journald MESSAGE_IDs (imexd/msgid.h): each is 128 bits as 32
# lower-case hex digits, unique, used by imexd, listed in the catalog
# (imexd/imexd.catalog, which lists no other) and documented in
# Documentation/journal.md.
#   tests/ops/t-msgid.sh
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
fail() { echo "t-msgid: FAIL: $*" >&2; exit 1; }

hdr=imexd/msgid.h cat=imexd/imexd.catalog doc=Documentation/journal.md
defs=$(sed -n 's/^#define[[:space:]]\{1,\}\(IMEXD_MSGID_[A-Z0-9_]*\)[[:space:]]\{1,\}"\([^"]*\)".*/\1 \2/p' "$hdr")
n=$(printf '%s\n' "$defs" | grep -c . || true)
[ "$n" -ge 5 ] || fail "only $n ids in $hdr: the extractor is broken"
[ "$n" -eq "$(grep -c '^#define[[:space:]]*IMEXD_MSGID_[A-Z0-9_]*[[:space:]]' "$hdr")" ] ||
	fail "$hdr has an IMEXD_MSGID_ define that is not NAME \"id\" on one line"
printf '%s\n' "$defs" | while read -r name id; do
	printf '%s\n' "$id" | grep -qx '[0-9a-f]\{32\}' ||
		fail "$name: '$id' is not 32 lower-case hex digits"
	grep -qx -- "-- $id" "$cat" || fail "$name ($id) is not in $cat"
	grep -q -- "$id" "$doc" || fail "$name ($id) is not documented in $doc"
	grep -q "$name" "$doc" || fail "$name is not named in $doc"
	grep -lw "$name" imexd/*.c >/dev/null || fail "$name is not used by imexd"
done
dup=$(printf '%s\n' "$defs" | awk '{print $2}' | sort | uniq -d)
[ -z "$dup" ] || fail "ids defined more than once in $hdr: $dup"
dup=$(printf '%s\n' "$defs" | awk '{print $1}' | sort | uniq -d)
[ -z "$dup" ] || fail "names defined more than once in $hdr: $dup"
for id in $(sed -n 's/^-- \([^ ]*\)$/\1/p' "$cat"); do
	printf '%s\n' "$defs" | grep -q " $id\$" || fail "$cat lists $id, which $hdr does not define"
done
echo "t-msgid: ok: $n MESSAGE_IDs well-formed, unique, in the catalog and documented"
