#!/bin/sh
# Every error message imexctl, libimexctl and imexd can print (and the texts
# imexd sends back to callers) is in Documentation/troubleshooting.md or a
# page it links to.  Lists the missing ones with their source line; add
# each with its cause and fix, then run this again:
#   tests/ops/check-messages.sh
# tests/ops/check-messages.sh --list prints what is extracted.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"

doc=Documentation/troubleshooting.md
[ -f "$doc" ] || { echo "check-messages: FAIL: $doc is missing" >&2; exit 1; }
# The pages the index links to (relative links to .md files beside it).
docs="$doc $(sed -n 's/.*](\([A-Za-z0-9_./-]*\.md\)\(#[^)]*\)\{0,1\}).*/\1/p' "$doc" |
	sort -u | sed 's|^|Documentation/|')"
for d in $docs; do
	[ -f "$d" ] || { echo "check-messages: FAIL: $doc links to $d, which does not exist" >&2; exit 1; }
done

srcs=$(ls tools/imexctl/*.[ch] libimexctl/*.[ch] libimexctl/include/*.h imexd/*.[ch] 2>/dev/null)
if [ "${1:-}" = --list ]; then
	# shellcheck disable=SC2086
	perl tests/ops/messages.pl $srcs
	exit 0
fi
# shellcheck disable=SC2086
n=$(perl tests/ops/messages.pl $srcs | wc -l)
[ "$n" -gt 100 ] || { echo "check-messages: FAIL: only $n messages extracted: the extractor is broken" >&2; exit 1; }
# shellcheck disable=SC2086
if ! missing=$(perl tests/ops/messages.pl $srcs | perl tests/ops/doc-match.pl $docs); then
	echo "check-messages: FAIL: these messages are not documented in $doc or the pages it links:" >&2
	echo "$missing" >&2
	echo "check-messages: $(echo "$missing" | wc -l) of $n missing" >&2
	exit 1
fi
echo "check-messages: ok: all $n messages of imexctl, libimexctl and imexd are documented"

# imex.ko: the format string of every extack and log line is in
# errors-kernel.md (its appendix lists them as in the source), and every
# formatted extack fits the kernel's 80-byte buffer with the longest names.
kdoc=Documentation/errors-kernel.md
kmsgs=$(perl tests/ops/kmod-messages.pl kmod/*.c)
kn=$(printf '%s\n' "$kmsgs" | wc -l)
[ "$kn" -gt 50 ] || { echo "check-messages: FAIL: only $kn imex.ko messages extracted: the extractor is broken" >&2; exit 1; }
kmissing=$(printf '%s\n' "$kmsgs" | while IFS="$(printf '\t')" read -r f m; do
	grep -qF -- "$m" "$kdoc" || printf '%s: %s\n' "$f" "$m"
done)
if [ -n "$kmissing" ]; then
	echo "check-messages: FAIL: these imex.ko messages are not in $kdoc:" >&2
	echo "$kmissing" >&2
	exit 1
fi
echo "check-messages: ok: all $kn messages of imex.ko are documented"
perl tests/ops/extack-len.pl --check kmod/*.c
