#!/bin/sh
# run-seeds.sh SIM COUNT JOBS [imex-sim options...]: split COUNT seeds
# (from --first, default 1) over JOBS processes; print every failure and
# one summary line.  Exit 1 if any seed failed.
set -eu
sim=$1 count=$2 jobs=$3
shift 3
first=1
args=""
while [ $# -gt 0 ]; do
	case $1 in
	--first) first=$2; shift 2 ;;
	*) args="$args $1"; shift ;;
	esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
per=$(( (count + jobs - 1) / jobs ))
j=0
while [ $j -lt "$jobs" ]; do
	f=$(( first + j * per ))
	n=$per
	[ $(( f + n )) -gt $(( first + count )) ] && n=$(( first + count - f ))
	if [ "$n" -gt 0 ]; then
		# shellcheck disable=SC2086
		"$sim" --seeds "$n" --first "$f" $args > "$tmp/$j.log" 2>&1 &
	fi
	j=$(( j + 1 ))
done
wait || true
grep -h -A1 '^FAIL' "$tmp"/*.log || true
grep -h -v -e '^FAIL' -e '^  replay' -e '^imex-sim:' -e 'passed, .* failed$' "$tmp"/*.log || true
passed=$(sed -n 's/^\([0-9]*\) passed, [0-9]* failed$/\1/p' "$tmp"/*.log | awk '{s+=$1} END {print s+0}')
failed=$(sed -n 's/^[0-9]* passed, \([0-9]*\) failed$/\1/p' "$tmp"/*.log | awk '{s+=$1} END {print s+0}')
done_=$(( passed + failed ))
[ "$done_" -lt "$count" ] && failed=$(( failed + count - done_ ))
echo "$(basename "$sim"): seeds $first..$(( first + count - 1 ))$args in $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
