#!/bin/sh
# Static checks: checkpatch --strict on kmod/, cppcheck and clang-tidy on
# the user-space C.  Exits 1 if any reports a finding.  Sparse runs through
# kbuild (make -C tests check-kbuild), which `make lint` adds.
#
#   tools/lint.sh [checkpatch] [cppcheck] [clang-tidy]   (default: all)
#
# checkpatch.pl is not packaged on its own: it is taken once from Debian's
# linux-source-6.1 tarball into IMEX_LINT_CACHE (default /var/cache/imex).
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
	# compat.h exists to test LINUX_VERSION_CODE, as out-of-tree code must.
	opts="--strict --no-tree --terse --show-types --quiet --ignore LONG_LINE_STRING"
	# shellcheck disable=SC2046,SC2086
	perl "$cp" $opts -f $(files kmod | grep -v '^kmod/compat\.h$') || return 1
	perl "$cp" $opts --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f kmod/compat.h
}

# Each directory with the include paths its Makefile gives it.
DIRS="libimexctl tools/imexctl imexd tests/unit tests/imexd tests/core tests/sim
tests/kmod tests/imexd-net tests/fuzz tests/kfuzz"

incs() {
	i="-Iinclude/uapi -I$1"
	case $1 in
	libimexctl) i="$i -Ilibimexctl/include" ;;
	tools/imexctl|tests/unit) i="$i -Ilibimexctl -Ilibimexctl/include -Itools/imexctl" ;;
	tests/fuzz) i="$i -Iimexd -Ilibimexctl -Ilibimexctl/include" ;;
	tests/*) i="$i -Iimexd" ;;
	esac
	echo "$i"
}

# libimexctl's own lint flags (its Makefile): variableScope is off because
# kernel style declares variables at the top of a block.
cppcheck_all() {
	r=0
	for d in $DIRS; do
		f=$(files "$d" | grep '\.c$')
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

clang_tidy_all() {
	pkgs=$(pkg-config --cflags libnl-genl-3.0 json-c libkmod libsystemd openssl cmocka 2>/dev/null)
	r=0
	for d in $DIRS; do
		f=$(files "$d" | grep '\.c$')
		[ -n "$f" ] || continue
		# shellcheck disable=SC2086
		printf '%s\n' $f | xargs -P "$JOBS" -n 4 sh -c \
			'clang-tidy --quiet "$@" -- -std=gnu11 -D_GNU_SOURCE '"$(incs "$d") $pkgs"' 2>&1 |
			 grep -v -e "warnings generated" -e "^Suppressed" -e "Use -header-filter" \
				 -e "^Use -system-headers"; exit 0' sh
	done > build/lint-tidy.log
	if grep -q -E '(warning|error):' build/lint-tidy.log; then
		cat build/lint-tidy.log
		r=1
	fi
	return $r
}

mkdir -p build
for w in $what; do
	case $w in
	checkpatch) checkpatch || { echo "lint: checkpatch: findings above"; rc=1; } ;;
	cppcheck) cppcheck_all || { echo "lint: cppcheck: findings above"; rc=1; } ;;
	clang-tidy) clang_tidy_all || { echo "lint: clang-tidy: findings above"; rc=1; } ;;
	*) echo "lint: unknown check '$w'" >&2; exit 2 ;;
	esac
	[ $rc -eq 0 ] && echo "lint: $w clean"
done
exit $rc
