#!/bin/sh
# Guest-side helpers for export/import cluster tests, one call per agent
# command (processes that must outlive it run in the background, their
# output in the out share under share/NAME.out, so the host can read it):
#   share.sh export NAME CH [ARGS]   hold an export on channel CH; print its
#                                    handle (bounded wait)
#   share.sh stop NAME               SIGTERM a background process, wait for it
#   share.sh import-bg NAME CH HANDLE [ARGS]   start an import in the background
#   share.sh blocked NAME            the background import sleeps in its ioctl
#   share.sh signal NAME SIG         send SIG to the background process
#   share.sh result NAME SECS        wait for it to exit; print its output and
#                                    exit with its status
#   share.sh running NAME            it has not exited
#   share.sh counts E I              NODE_GET reports E exports, I imports
#   share.sh clean-log               no kernel report in dmesg
cd "$(dirname "$0")/../.." || exit 2
. tests/vm/lib.sh
. tests/kmod/common.sh
SHARE=tools/imex-share/imex-share
dir=$IMEX_VM_OUT/share
mkdir -p "$dir"

bg() { # NAME CMD...
	n=$1
	shift
	rm -f "$dir/$n.out" "$dir/$n.rc"
	setsid sh -c '"$@"; echo $? > "$0.rc.tmp"; mv "$0.rc.tmp" "$0.rc"' \
		"$dir/$n" "$@" > "$dir/$n.out" 2>&1 < /dev/null &
	# The pid of the command itself: sh execs nothing, so find its child.
	echo $! > "$dir/$n.sh"
}

pid_of() { # the imex-share process of background job NAME
	pgrep -P "$(cat "$dir/$1.sh")" imex-share
}

cmd=$1
shift
case $cmd in
export)
	n=$1 ch=$2
	shift 2
	rm -f "$dir/$n.handle"
	bg "$n" $SHARE -c "$ch" export --hold --handle-file "$dir/$n.handle" "$@"
	wait_for 10 test -s "$dir/$n.handle" || { cat "$dir/$n.out"; exit 1; }
	cat "$dir/$n.handle"
	;;
stop)
	pid=$(pid_of "$1") && kill -TERM "$pid"
	wait_for 10 test -e "$dir/$1.rc"
	;;
import-bg)
	n=$1 ch=$2
	shift 2
	bg "$n" $SHARE -c "$ch" import "$@"
	wait_for 10 pid_of "$n" > /dev/null
	;;
blocked)
	# x86_64 ioctl is syscall 16: the import waits in the kernel.
	wait_for 10 sh -c "pid=\$(pgrep -P $(cat "$dir/$1.sh") imex-share) && grep -q '^16 ' /proc/\$pid/syscall"
	;;
signal)
	kill -"$2" "$(pid_of "$1")"
	;;
result)
	wait_for "$2" test -e "$dir/$1.rc" || { echo "still running:"; cat "$dir/$1.out"; exit 124; }
	cat "$dir/$1.out"
	exit "$(cat "$dir/$1.rc")"
	;;
running)
	[ ! -e "$dir/$1.rc" ] && pid_of "$1" > /dev/null
	;;
counts)
	out=$($NL node-get)
	echo "$out"
	echo "$out" | grep -Eq " exports=$1( |\$)" && echo "$out" | grep -Eq " imports=$2( |\$)"
	;;
clean-log)
	pat=$(grep -v -e '^#' -e '^$' tests/vm/dmesg-patterns)
	! dmesg | grep -E -e "$pat"
	;;
*)
	fail "share.sh: unknown command $cmd"
	;;
esac
