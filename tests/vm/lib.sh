# Helpers for guest-side shell tests (run inside the VM by tests/vm/run.sh).
# Source it:  . "$IMEX_REPO/tests/vm/lib.sh"
#
#   fail MSG...              print "FAIL: MSG" on stderr, exit 1
#   wait_for SECS CMD...     re-run CMD every 0.1 s until it succeeds; fail
#                            after SECS seconds (decimals allowed), times
#                            $IMEX_TIMEOUT_SCALE on a slow (debug) kernel
#   expect_fail CMD...       run CMD, fail if it succeeds
#   imex_load [PARAM=VAL...] modprobe imex with parameters, fail on error
#   imex_unload              remove imex (waits up to 5 s for its users)
#   t_ok DESC / t_fail DESC  report one test result ("ok N - DESC" /
#                            "not ok N - DESC")
#   t_check DESC CMD...      run CMD, report t_ok or t_fail
#   t_done                   print "N passed, N failed"; exit 1 if any failed

t_passed=0
t_failed=0

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

_lib_now_cs() { # uptime in hundredths of a second
	read -r _up _ < /proc/uptime
	echo "${_up%.*}${_up#*.}"
}

_lib_secs_to_cs() { # "2" -> 200, "0.5" -> 50, "1.25" -> 125
	case $1 in
	*.*)
		_i=${1%.*} _f=${1#*.}00
		_f=${_f%"${_f#??}"}
		echo $(( ${_i:-0} * 100 + 1$_f - 100 )) ;;
	*) echo $(( $1 * 100 )) ;;
	esac
}

# _wait_until SECS CMD...: like wait_for, but returns 1 instead of failing.
_wait_until() {
	_wait_deadline=$(( $(_lib_now_cs) + $(_lib_secs_to_cs "$1") * ${IMEX_TIMEOUT_SCALE:-1} ))
	shift
	while ! "$@"; do
		[ "$(_lib_now_cs)" -lt "$_wait_deadline" ] || return 1
		sleep 0.1
	done
}

wait_for() {
	_secs=$1
	shift
	_wait_until "$_secs" "$@" || fail "timed out after ${_secs}s waiting for: $*"
}

expect_fail() {
	if "$@"; then
		fail "expected to fail, but succeeded: $*"
	fi
	return 0
}

imex_load() {
	modprobe imex "$@" || fail "modprobe imex $* failed (see dmesg)"
}

_imex_gone() {
	! grep -q '^imex ' /proc/modules || modprobe -r imex 2>/dev/null
}

imex_unload() {
	_wait_until 5 _imex_gone ||
		fail "imex still loaded after 5 s: $(modprobe -r imex 2>&1)"
}

t_ok() {
	t_passed=$((t_passed + 1))
	echo "ok $((t_passed + t_failed)) - $*"
}

t_fail() {
	t_failed=$((t_failed + 1))
	echo "not ok $((t_passed + t_failed)) - $*"
}

t_check() {
	_desc=$1
	shift
	if "$@"; then t_ok "$_desc"; else t_fail "$_desc"; fi
}

t_done() {
	echo "$t_passed passed, $t_failed failed"
	[ "$t_failed" -eq 0 ] || exit 1
	exit 0
}
