#!/bin/bash
# Issue 14 against Debian 12's own Slurm (slurmctld, slurmd, munge): a
# 3-VM cluster, controller on node1, contrib/slurm/imex.so in plugstack.conf.
#   1. a 3-node batch job: the batch step and an srun step on every node see
#      exactly one channel (the job's, uid:gid 5001:5001 mode 0600) and open
#      it; an interactive srun likewise; jobcomp records COMPLETED; nothing
#      remains on any node afterwards;
#   2. two users' jobs on the same nodes: disjoint channels; bob's task gets
#      ENOENT for alice's channel;
#   3. scancel, the time limit, and a node powered off mid-job each clean up,
#      and so does a job's end after slurmctld restarted mid-job;
#   4. channels exhausted (max_channels=6): the next job does not run and
#      says why in `scontrol show job` (Comment).
cd "$(dirname "$0")/../.." || exit 2
# Some waits below are bounded at 180 s inside the node.
NODE_RUN_TIMEOUT=${NODE_RUN_TIMEOUT:-$((200 * ${IMEX_VM_TIMEOUT_SCALE:-1}))}
. tests/cluster/cluster.sh
S="sh tests/slurm/slurm-node.sh"
N="sh tests/cluster/node.sh"
REPO=$CLUSTER_REPO
# --bench RAW REPS: only the start overhead, appended to RAW (bench/run.sh).
bench_raw='' bench_reps=''
[ "${1:-}" = --bench ] && bench_raw=$2 bench_reps=$3
skip() {
	echo "t-slurm: $*: skipped"
	[ -z "$bench_raw" ] || echo "skip slurm_job_start $*" >> "$bench_raw"
	exit 0
}

for c in slurmctld slurmd sbatch munged; do
	command -v $c > /dev/null || [ -x /usr/sbin/$c ] ||
		skip "$c not installed (tools/install-deps.sh)"
done
[ -f contrib/slurm/imex.so ] || skip "contrib/slurm/imex.so not built"

CLUSTER_FABRIC="$CLUSTER_FABRIC max_channels=6"
cluster_init 3 || exit 1
head -c 1024 /dev/urandom > "$cluster_dir/munge.key"
for i in 1 2 3; do cp "$cluster_dir/munge.key" "$cluster_dir/n$i/"; done
node_boot 1 2 3 || exit 1
for i in 1 2 3; do
	t_check "node$i: slurm and munge started" node_run $i $S start node1 'node[1-3]' timeout=60
	t_check "node$i: imexd attached" node_run $i $N start DISCONNECTED_GRACE_SECONDS=5
done
t_check "3 nodes idle" node_run 1 $S wait-idle 3 90

# Job start overhead (issue point 5): sbatch to the first task of a 3-node
# job with the plugin (one channel) and, right after, without it; one
# "sample slurm_job_start MS_WITH MS_WITHOUT" line per pair (bench/run.sh
# reports their ratio; goal <= 1.5x).
start_overhead() { # REPS
	local w wo i
	for _ in $(seq 1 "$1"); do
		w=$(node_run 1 $S start-latency) || return 1
		for i in 1 2 3; do node_run $i $S plugin off || return 1; done
		wo=$(node_run 1 $S start-latency) || return 1
		for i in 1 2 3; do node_run $i $S plugin on || return 1; done
		echo "sample slurm_job_start $(echo "$w * 1000" | bc) $(echo "$wo * 1000" | bc)"
	done
}
if [ -n "$bench_raw" ]; then
	out=$(start_overhead "$bench_reps")
	echo "$out" | grep '^sample ' >> "$bench_raw" && t_ok "start overhead measured" ||
		t_fail "start overhead not measured"
	t_done
	exit
fi

# sub USER SBATCH_ARG...: submit tests/slurm/job.sh as USER, print the job id.
sub() {
	local user=$1
	shift
	node_run 1 "cd /tmp && runuser -u $user -- sbatch --parsable -o /tmp/job%j.out \
		--ntasks-per-node=1 $* $REPO/tests/slurm/job.sh"
}
out_of() { node_run 1 cat "/tmp/job$1.out"; }
# reported JOBID: its srun step's three tasks have reported (bounded).  The
# pattern is quoted for the node's shell: node_run passes one command line.
reported() { node_run 1 "$S wait-lines /tmp/job$1.out '^node. open 0\$' 3 180"; }
all_left() { # JOBID NODES...
	local id=$1 i
	shift
	for i in "$@"; do t_check "node$i: nothing of job $id left" node_run $i $S nothing-left "$id" 60; done
}

# 1. A 3-node batch job.
t0=$(cluster_now)
j1=$(sub alice -N3 --export=ALL,REPO=$REPO)
t_check "job $j1 (alice, 3 nodes) COMPLETED" node_run 1 $S wait-job "$j1" COMPLETED 180
echo "# job $j1: sbatch -> COMPLETED took $(echo "$(cluster_now) - $t0" | bc) s"
out=$(out_of "$j1")
echo "$out"
ch=$(echo "$out" | awk '$1 == "batch" && $3 == "list" { print $4 }')
for h in "batch node1" node1 node2 node3; do
	echo "$out" | grep -q "^$h list $ch \$" && [ -n "$ch" ] &&
		t_ok "job $j1 $h: sees exactly its channel ($ch)" || t_fail "job $j1 $h: list"
	echo "$out" | grep -q "^$h stat 600 5001 5001 \$" &&
		t_ok "job $j1 $h: 5001:5001 mode 0600" || t_fail "job $j1 $h: stat"
	echo "$out" | grep -q "^$h open 0\$" && t_ok "job $j1 $h: opens it" || t_fail "job $j1 $h: open"
done
t_check "jobcomp records job $j1 COMPLETED" \
	node_run 1 "grep 'JobId=$j1 ' /var/log/slurm/jobcomp.txt | grep -q JobState=COMPLETED"
all_left "$j1" 1 2 3
out=$(node_run 1 "cd /tmp && runuser -u alice -- srun -N3 --ntasks-per-node=1 sh -c 'echo \$(hostname) \$(ls /dev/imex-channels | wc -l) \$(stat -c %u /dev/imex-channels/*)'")
echo "$out"
[ "$(echo "$out" | grep -c '^node[123] 1 5001$')" = 3 ] &&
	t_ok "interactive srun: one channel of alice's on each node" || t_fail "interactive srun"

# Start overhead, 3 pairs (bench/run.sh takes more).
out=$(start_overhead 3)
echo "$out" | sed 's/^/# /'
[ "$(echo "$out" | grep -c '^sample ')" = 3 ] && t_ok "start overhead measured" ||
	t_fail "start overhead"

# 2. Two users on the same nodes; 3. scancel.
ja=$(sub alice -N3 --export=ALL,REPO=$REPO,HOLD=1)
t_check "job $ja (alice) reported" reported "$ja"
cha=$(out_of "$ja" | awk '$1 == "batch" && $3 == "list" { print $4 }')
jb=$(sub bob -N3 --export=ALL,REPO=$REPO,OTHER=$cha)
t_check "job $jb (bob, same nodes, while $ja runs) COMPLETED" node_run 1 $S wait-job "$jb" COMPLETED 180
out=$(out_of "$jb")
echo "$out"
for h in node1 node2 node3; do
	chb=$(echo "$out" | awk -v h=$h '$1 == h && $2 == "list" { print $3 }')
	[ -n "$chb" ] && [ "$chb" != "$cha" ] && echo "$out" | grep -q "^$h stat 600 5002 5002 \$" &&
		t_ok "$h: bob's channel ($chb) is not alice's ($cha), 5002:5002 0600" ||
		t_fail "$h: bob's channel '$chb', alice's '$cha'"
	echo "$out" | grep -q "^$h other 2\$" &&
		t_ok "$h: bob's task cannot open alice's channel (ENOENT)" || t_fail "$h: bob opening $cha"
done
node_run 1 "scancel $ja"
t_check "job $ja CANCELLED by scancel" node_run 1 $S wait-job "$ja" CANCELLED 60
all_left "$ja" 1 2 3
all_left "$jb" 1 2 3

# 3. Time limit (1 minute).
jt=$(sub alice -N2 -t 1 --export=ALL,REPO=$REPO,HOLD=1)
t_check "job $jt ended by its time limit" node_run 1 $S wait-job "$jt" TIMEOUT 180
all_left "$jt" 1 2 3

# 4. Channels exhausted: 5 of 6 held, the next job asks for 2.
jh=$(sub alice -N3 --imex-channels=5 --export=ALL,REPO=$REPO,HOLD=1)
t_check "job $jh (5 channels) reported" reported "$jh"
jx=$(sub bob -N3 --imex-channels=2 --export=ALL,REPO=$REPO)
t_check "job $jx (2 channels, none left) shows why" \
	node_run 1 "_x() { scontrol -o show job $jx | grep -q 'Comment=imex: '; }; . tests/vm/lib.sh; wait_for 120 _x"
node_run 1 "scontrol show job $jx"
t_check "job $jx never ran a task" node_run 1 "! grep -q ' list ' /tmp/job$jx.out 2>/dev/null"
# Every node's prolog failed (the first one's at once, the others' when
# their wait for READY timed out, timeout=60): Slurm drained them all.
t_check "job $jx's prologs failed on all 3 nodes (drained)" node_run 1 $S wait-drain 3 120
t_check "job $jx's Comment still has the first node's reason" \
	node_run 1 "scontrol -o show job $jx | grep -q 'Comment=imex: creating domain slurm-job$jx: .* channels asked for'"
node_run 1 "scancel $jx $jh; scontrol update NodeName=node[1-3] State=RESUME" || true
t_check "job $jh CANCELLED" node_run 1 $S wait-job "$jh" CANCELLED 60
all_left "$jh" 1 2 3
all_left "$jx" 1 2 3

t_check "3 nodes idle again" node_run 1 $S wait-idle 3 90

# slurmctld restarted mid-job: the job keeps running; its end cleans up.
jr=$(sub alice -N3 --export=ALL,REPO=$REPO,HOLD=1)
t_check "job $jr reported" reported "$jr"
t_check "slurmctld restarted while job $jr runs" node_run 1 $S restart-ctld
t_check "job $jr still RUNNING" node_run 1 $S wait-job "$jr" RUNNING 60
node_run 1 "scancel $jr"
t_check "job $jr CANCELLED after the restart" node_run 1 $S wait-job "$jr" CANCELLED 60
all_left "$jr" 1 2 3

# 3. A node powered off mid-job: the others clean up once Slurm sees it
# gone; node3 cleans up once it is back.
jn=$(sub alice -N3 --no-requeue --export=ALL,REPO=$REPO,HOLD=1)
t_check "job $jn reported" reported "$jn"
node_kill 3
t_check "job $jn ended by the node failure" node_run 1 $S wait-job "$jn" NODE_FAIL 120
all_left "$jn" 1 2
# Back as a fresh VM: its /etc/hosts, munge and slurmd as at the start.
node_boot 3 || exit 1
t_check "node3: slurm and munge started after reboot" node_run 3 $S start node1 'node[1-3]' timeout=60
t_check "node3: imexd attached after reboot" node_run 3 $N start DISCONNECTED_GRACE_SECONDS=5
all_left "$jn" 3

[ "$t_failed" = 0 ] || echo "# Slurm's logs: $cluster_dir/n*/slurm/"
t_done
