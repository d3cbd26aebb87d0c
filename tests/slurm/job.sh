#!/bin/sh
# Batch script of tests/slurm/t-slurm.sh.  The batch step and one srun step
# task per node report what they see in /dev/imex-channels, one line each:
#   NODE list|stat|open|other ...
# REPO: the source tree; OTHER: a channel name to try to open (another job's);
# HOLD=1: keep running after the report (until scancel or the time limit).
see() {
	h=$(hostname)
	echo "$h list $(ls /dev/imex-channels | tr '\n' ' ')"
	echo "$h stat $(stat -c '%a %u %g' /dev/imex-channels/* 2>/dev/null | sort -u | tr '\n' ' ')"
	rc=0
	for c in /dev/imex-channels/channel*; do
		"$REPO"/tests/kmod/chanopen "$c" info > /dev/null 2>&1 || { rc=$?; break; }
	done
	echo "$h open $rc"
	if [ -n "${OTHER:-}" ]; then
		"$REPO"/tests/kmod/chanopen "/dev/imex-channels/$OTHER" info > /dev/null 2>&1
		echo "$h other $?"
	fi
}
if [ "${1:-}" = step ]; then
	see
	exit 0
fi
see | sed 's/^/batch /'
srun sh "$REPO/tests/slurm/job.sh" step
[ "${HOLD:-0}" = 1 ] && exec sleep 3600
exit 0
