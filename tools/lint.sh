#!/bin/sh
# Static checks: checkpatch --strict on kmod/, cppcheck and clang-tidy on
# the user-space C.  Exits 1 if any reports a finding.  Sparse runs through
# kbuild (make -C tests check-kbuild), which `make lint` adds.
#
#   tools/lint.sh [checkpatch] [cppcheck] [clang-tidy]   (default: all)
#
# checkpatch.pl is not packaged on its own: it is taken once from Debian's
# linux-source-6.1 tarball into IMEX_LINT_CACHE (default /var/cache/imex).
#
# clang-tidy runs one file per process, $(nproc) at a time.  A file found
# clean is remembered in build/lint/tidy/ under a hash of its preprocessed
# text (every header it includes, comments and so NOLINTs kept), its flags,
# the .clang-tidy files and clang-tidy's version: it is checked again only when
# one of those changes.  IMEX_LINT_NOCACHE=1 checks every file.
set -u
cd "$(dirname "$0")/.." || exit 2

CACHE=${IMEX_LINT_CACHE:-/var/cache/imex}/checkpatch
TARBALL=/usr/src/linux-source-6.1.tar.xz
JOBS=$(nproc 2>/dev/null || echo 2)
what=${*:-checkpatch cppcheck clang-tidy}
rc=0

# The tree's C files, tracked or new, never build outputs.
files() {
	git ls-files -co --exclude-standard -- "$@" | grep -E '\.[ch]$' |
		grep -v '\.mod\.c$'
}

checkpatch() {
	cp=$CACHE/scripts/checkpatch.pl
	if [ ! -f "$cp" ]; then
		[ -f "$TARBALL" ] || { echo "lint: $TARBALL missing: run tools/install-deps.sh" >&2; return 2; }
		mkdir -p "$CACHE" || return 2
		tar -xJf "$TARBALL" -C "$CACHE" --strip-components=1 --wildcards \
			'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch' || return 2
	fi
	# LONG_LINE_STRING: user-visible strings are never split (kernel rule).
	# compat.h tests interfaces, not LINUX_VERSION_CODE: no exception.
	opts="--strict --no-tree --terse --show-types --quiet --ignore LONG_LINE_STRING"
	# shellcheck disable=SC2046,SC2086
	perl "$cp" $opts -f $(files kmod)
}

# Each directory with the include paths its Makefile gives it.  Kernel
# code (kmod/, the test module in tests/kmod/kapi/) has checkpatch and
# sparse instead.
DIRS="common libimexctl tools/imexctl tools/imex-share imexd bench tests/libimexctl
tests/imexd tests/imexd/raft tests/kmod tests/imexd/net tests/fuzz
tests/kmod/kfuzz contrib/slurm tests/slurm"

# The SPANK plugin and its test driver need <slurm/spank.h> (libslurm-dev;
# SPANK_INCLUDE names another include directory): skipped without it.
SPANK_INCLUDE=${SPANK_INCLUDE:-/usr/include}

# User-space C files under $1, but not under a deeper entry of DIRS (that
# one is linted with its own include flags).
srcs() {
	sub="-e ^tests/kmod/kapi/"
	for o in $DIRS; do
		case $o in "$1"/*) sub="$sub -e ^$o/" ;; esac
	done
	if [ -f "$SPANK_INCLUDE/slurm/spank.h" ]; then
		files "$1"
	else
		files "$1" | grep -v -e '/spank_imex\.c$' -e '/spank-stub\.c$'
	fi | grep '\.c$' | grep -v $sub
}

# common/ holds the helpers several parts share: every part may include it.
incs() {
	i="-Iinclude/uapi -I$1 -Icommon"
	case $1 in
	libimexctl) i="$i -Ilibimexctl/include" ;;
	tools/imexctl|tests/libimexctl) i="$i -Ilibimexctl -Ilibimexctl/include -Itools/imexctl" ;;
	tools/imex-share|bench) i="$i -Ilibimexctl/include" ;;
	tests/fuzz) i="$i -Iimexd -Ilibimexctl -Ilibimexctl/include" ;;
	contrib/slurm|tests/slurm)
		i="$i -Ilibimexctl/include"
		# Not the system directory: cppcheck would parse libc's headers.
		[ "$SPANK_INCLUDE" = /usr/include ] || i="$i -I$SPANK_INCLUDE" ;;
	tests/*) i="$i -Iimexd" ;;
	esac
	echo "$i"
}

# libimexctl's own lint flags (its Makefile): variableScope is off because
# kernel style declares variables at the top of a block.
cppcheck_all() {
	r=0
	for d in $DIRS; do
		f=$(srcs "$d")
		[ -n "$f" ] || continue
		# shellcheck disable=SC2046,SC2086
		cppcheck --quiet --error-exitcode=1 \
			--enable=warning,style,performance,portability \
			--inline-suppr --suppress=missingIncludeSystem \
			--suppress=variableScope --std=c11 -D_GNU_SOURCE \
			$(incs "$d") $f || r=1
	done
	return $r
}

TIDY_CACHE=build/lint/tidy

# One file: tools/lint.sh --tidy-one DIR FILE (from clang_tidy_all).  Its
# findings go to stdout; exit 1 if there are any.
tidy_one() {
	d=$1 f=$2
	# shellcheck disable=SC2046,SC2086
	set -- -std=gnu11 -D_GNU_SOURCE $(incs "$d") $TIDY_PKGS
	if [ "${IMEX_LINT_NOCACHE:-0}" != 1 ]; then
		# If the file does not preprocess, no key: clang-tidy says why.
		key=$({ echo "$f $*"; echo "$TIDY_VERSION"
			clang -E -CC "$@" "$f" 2>/dev/null || echo "cpp failed $$"; } |
			sha256sum | cut -d' ' -f1)
		[ -f "$TIDY_CACHE/$key" ] && return 0
	fi
	out=$(clang-tidy --quiet "$f" -- "$@" 2>&1)
	st=$?
	out=$(printf '%s\n' "$out" | grep -v -e "warnings generated" \
		-e "^Suppressed" -e "Use -header-filter" -e "^Use -system-headers")
	if [ $st -ne 0 ] || printf '%s\n' "$out" | grep -q -E '(warning|error):'; then
		printf '%s\n' "$out"
		return 1
	fi
	[ "${IMEX_LINT_NOCACHE:-0}" = 1 ] || : > "$TIDY_CACHE/$key"
}

clang_tidy_all() {
	TIDY_PKGS=$(pkg-config --cflags libnl-genl-3.0 json-c yajl libkmod libsystemd openssl cmocka raft 2>/dev/null)
	# The version and every .clang-tidy (tests/ and bench/ have their own).
	# shellcheck disable=SC2046
	TIDY_VERSION=$({ clang-tidy --version
		cat $(git ls-files -co --exclude-standard -- '*.clang-tidy'); } |
		sha256sum)
	export TIDY_PKGS TIDY_VERSION
	mkdir -p "$TIDY_CACHE" || return 2
	for d in $DIRS; do
		for f in $(srcs "$d"); do
			printf '%s %s\n' "$d" "$f"
		done
	done | xargs -P "$JOBS" -n 2 tools/lint.sh --tidy-one > build/lint-tidy.log
	r=$?
	if [ -s build/lint-tidy.log ] || [ $r -ne 0 ]; then
		cat build/lint-tidy.log
		return 1
	fi
	return 0
}

if [ "${1:-}" = --tidy-one ]; then
	tidy_one "$2" "$3"
	exit
fi

mkdir -p build
for w in $what; do
	start=$(date +%s)
	case $w in
	checkpatch) checkpatch ;;
	cppcheck) cppcheck_all ;;
	clang-tidy) clang_tidy_all ;;
	*) echo "lint: unknown check '$w'" >&2; exit 2 ;;
	esac
	st=$? secs=$(($(date +%s) - start))
	if [ $st -eq 0 ]; then
		echo "lint: $w clean (${secs}s)"
	else
		echo "lint: $w: findings above (${secs}s)"
		rc=1
	fi
done
exit $rc
