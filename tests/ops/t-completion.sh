#!/bin/sh
# The bash completion offers exactly imexctl's objects, verbs and long
# options, as the sources define them, and completes in a real bash.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
comp=$top/packaging/bash-completion/imexctl
fail() { echo "t-completion: FAIL: $*" >&2; exit 1; }

bash -n "$comp" || fail "$comp does not parse"

for src in "$top"/tools/imexctl/cmd_*.c; do
	verbs=$(sed -n '/cli_cmd verbs\[\]/,/^};/s/^[[:space:]]*{ "\([a-z-]*\)".*/\1/p' "$src" | sort | tr '\n' ' ')
	[ -n "$verbs" ] || continue
	obj=${src##*/cmd_}
	obj=${obj%.c}
	have=$(sed -n "s/^[[:space:]]*$obj) verbs=\"\(.*\)\" ;;/\1/p" "$comp" | tr ' ' '\n' | sort | tr '\n' ' ')
	[ "$have" = "$verbs" ] || fail "object $obj: the sources have verbs '$verbs', the completion '$have'"
done

opts=$(grep -ho '{ "[a-z-]*", *\(required\|no\|optional\)_argument' "$top"/tools/imexctl/*.[ch] |
	sed 's/{ "\([a-z-]*\)".*/--\1/' | sort -u | tr '\n' ' ')
have=$(grep -o -- '--[a-z][a-z-]*' "$comp" | sort -u | grep -vx -- '--version' | tr '\n' ' ')
[ "$have" = "$opts" ] || fail "long options: the sources have '$opts', the completion '$have'"

# Complete a few command lines with a stand-in for bash-completion's helpers.
complete_line() {
	bash -c '
		_init_completion() { words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
			cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; }
		_filedir() { :; }
		PATH=/nonexistent
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_imexctl; echo "${COMPREPLY[*]}"' sh "$comp" "$@"
}
[ "$(complete_line imexctl 'do')" = domain ] || fail "'imexctl do<TAB>' does not give domain"
[ "$(complete_line imexctl domain cr)" = create ] || fail "'imexctl domain cr<TAB>' does not give create"
[ "$(complete_line imexctl cdi generate --no)" = --no-overwrite ] ||
	fail "'imexctl cdi generate --no<TAB>' does not give --no-overwrite"
[ "$(complete_line imexctl domain wait x --state r)" = ready ] ||
	fail "'--state r<TAB>' does not give ready"
[ "$(complete_line imexctl mon)" = monitor ] || fail "'imexctl mon<TAB>' does not give monitor"
[ "$(complete_line imexctl monitor --d)" = --domain ] || fail "'imexctl monitor --d<TAB>' does not give --domain"
[ "$(complete_line imexctl monitor --json --d)" = --domain ] ||
	fail "'imexctl monitor --json --d<TAB>' does not give --domain"
echo "t-completion: ok: objects, verbs and options match the sources"
