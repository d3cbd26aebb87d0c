#!/bin/bash
# Issue 14, the plugin's IMEX side on a 3-VM cluster without Slurm:
# tests/slurm/spank-stub runs contrib/slurm/imex.so's callbacks the way
# slurmd (job_prolog/job_epilog, as root, on every node of the job at once)
# and slurmstepd (init_post_opt, then the task as the job's user) do.
#   - the prolog on three nodes at once creates the job's domain once,
#     READY on every node when each prolog returns; a CDI spec per node;
#   - a step sees only its job's channel(s), owner uid:gid mode 0600, opens
#     it; two jobs of two users on shared nodes get disjoint channels and
#     neither can open the other's (ENOENT inside the step, EACCES outside);
#   - --imex-channels=0: no domain, an empty /dev/imex-channels;
#   - a node's imexd down: the prolog fails, naming the node;
#   - the epilog on every node leaves no domain, channel node or spec; with
#     the job's first node powered off the others' epilogs still delete the
#     domain, and that node drops it when it is back.
cd "$(dirname "$0")/../.." || exit 2
. tests/cluster/cluster.sh
N="sh tests/cluster/node.sh"
# A lost peer is DISCONNECTED after 3 s (default 30 s, below Slurm's
# default SlurmdTimeout of 300 s, after which Slurm runs the epilogs).
START="$N start DISCONNECTED_GRACE_SECONDS=3"
STUB="tests/slurm/spank-stub contrib/slurm/imex.so"
NL=tests/kmod/imex-nl
HOSTS="192.0.2.1 node1\n192.0.2.2 node2\n192.0.2.3 node3"

[ -x tests/slurm/spank-stub ] && [ -f contrib/slurm/imex.so ] ||
	{ echo "t-spank: contrib/slurm/imex.so or spank-stub not built (no slurm/spank.h): skipped"; exit 0; }

# job_script NODE JOBID UID GID prolog|epilog NODELIST [CHANNELS [ARG...]]
job_script() {
	local i=$1 id=$2 uid=$3 gid=$4 what=$5 list=$6
	shift 6
	node_run "$i" "SLURM_NODELIST='$list' SLURMD_NODENAME=node$i $STUB $id $uid $gid $what ${*:--}"
}

# on_nodes "I..." CMD ARG...: CMD I ARG... on several nodes at once; fails
# if any fails.
on_nodes() {
	local i pids=() rc=0 nodes=$1
	shift
	for i in $nodes; do
		"$1" "$i" "${@:2}" > "$cluster_dir/par.$i" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	for i in $nodes; do sed "s/^/node$i: /" "$cluster_dir/par.$i"; done
	return $rc
}
# prolog|epilog NODE JOBID UID NODELIST [CHANNELS]  (gid = uid)
prolog() { job_script "$1" "$2" "$3" "$3" prolog "$4" "${@:5}"; }
epilog() { job_script "$1" "$2" "$3" "$3" epilog "$4"; }

# nothing_left I JOBID: no domain, device node or CDI spec of the job on
# node I (bounded wait: another node's delete may still be committing).
nothing_left() { node_run "$1" sh tests/slurm/slurm-node.sh nothing-left "$2" "${3:-30}"; }

cluster_init 3 || exit 1
node_boot 1 2 3 || exit 1
for i in 1 2 3; do
	node_run $i "printf '$HOSTS\n' >> /etc/hosts"
	t_check "node$i: imexd attached" node_run $i $START
done

t0=$(cluster_now)
t_check "job 101 (uid 1000): prolog on node1..3 at once succeeds" \
	on_nodes "1 2 3" prolog 101 1000 'node[1-3]'
echo "# prolog on 3 nodes (create + READY + CDI) took $(echo "$(cluster_now) - $t0" | bc) s"
for i in 1 2 3; do
	t_check "node$i: slurm-job101 READY when the prolog returned" \
		node_run $i $N wait-state slurm-job101 ready 0.1
	t_check "node$i: CDI spec of job 101" \
		node_run $i "grep -q /dev/imex-channels/channel /var/run/cdi/imex.dev-channel_slurm-job101.json"
done
t_check "job 102 (uid 1001, 2 channels): prolog on node2..3" \
	on_nodes "2 3" prolog 102 1001 'node[2-3]' 2

step() { # NODE JOBID UID CMD
	node_run "$1" "$STUB $2 $3 $3 step - -- sh -c '$4'"
}
for i in 1 2 3; do
	out=$(step $i 101 1000 'cd /dev/imex-channels && ls && stat -c "%a %u %g" *')
	echo "$out" | sed "s/^/node$i job101: /"
	[ "$(echo "$out" | grep -c '^channel')" = 1 ] && echo "$out" | grep -qx '600 1000 1000' &&
		t_ok "node$i: a step of job 101 sees one channel, 1000:1000 0600" ||
		t_fail "node$i: a step of job 101 sees: $out"
	t_check "node$i: the step of job 101 opens its channel" \
		step $i 101 1000 'tests/kmod/chanopen /dev/imex-channels/channel* info'
done
c101=$(step 2 101 1000 'ls /dev/imex-channels')
c102=$(step 2 102 1001 'ls /dev/imex-channels')
echo "# node2: job 101 has $c101, job 102 has" $c102
[ "$(echo "$c102" | grep -c '^channel')" = 2 ] && ! echo "$c102" | grep -qx "$c101" &&
	t_ok "node2: job 102 sees its 2 channels, none of job 101's" ||
	t_fail "node2: job 102 sees '$c102', job 101 '$c101'"
step 2 102 1001 "tests/kmod/chanopen /dev/imex-channels/$c101 info"
rc=$?
[ $rc = 2 ] && t_ok "node2: job 102's task cannot open job 101's channel (ENOENT in its namespace)" ||
	t_fail "node2: job 102 opening $c101 in its step: exit $rc"
node_run 2 "setpriv --reuid=1001 --regid=1001 --clear-groups tests/kmod/chanopen /dev/imex-channels/$c101 info"
rc=$?
[ $rc = 13 ] && t_ok "node2: uid 1001 outside any step gets EACCES on job 101's channel" ||
	t_fail "node2: uid 1001 opening $c101 on the host: exit $rc"
t_check "node2: the host's /dev/imex-channels is not the step's (all 3 nodes there)" \
	node_run 2 "[ \$(ls /dev/imex-channels | wc -l) = 3 ]"

t_check "job 103 (--imex-channels=0): prolog succeeds" on_nodes "1" prolog 103 1000 'node1' 0
t_check "node1: job 103 has no domain" node_run 1 "! $NL domain name=slurm-job103 >/dev/null 2>&1"
t_check "node1: a step of job 103 sees an empty /dev/imex-channels" \
	node_run 1 "$STUB 103 1000 1000 step 0 -- sh -c '[ -z \"\$(ls /dev/imex-channels)\" ]'"
out=$(prolog 1 104 1000 'node1' 99 2>&1)
rc=$?
echo "$out"
[ $rc = 1 ] && echo "$out" | grep -q 'imex-channels' &&
	t_ok "job 104 asking for 99 channels (max 16) fails, saying why" ||
	t_fail "job 104: rc=$rc"

t0=$(cluster_now)
t_check "epilog of job 101 on node1..3 at once" on_nodes "1 2 3" epilog 101 1000 'node[1-3]'
echo "# epilog on 3 nodes took $(echo "$(cluster_now) - $t0" | bc) s"
t_check "epilog of job 102 on node2..3" on_nodes "2 3" epilog 102 1001 'node[2-3]'
t_check "epilog of job 102 again (idempotent)" on_nodes "2" epilog 102 1001 'node[2-3]'
for i in 1 2 3; do
	t_check "node$i: nothing of job 101 left" nothing_left $i 101
	t_check "node$i: nothing of job 102 left" nothing_left $i 102
	t_check "node$i: no channel device node left" node_run $i "[ -z \"\$(ls /dev/imex-channels)\" ]"
done

# A node whose imexd is down: the job's prolog fails naming it; nothing stays.
node_run 3 $N stop
out=$(job_script 1 105 1000 1000 prolog 'node[1-3]' - timeout=20 2>&1)
rc=$?
echo "$out"
[ $rc = 1 ] && echo "$out" | grep -q node3 &&
	t_ok "job 105 with node3's imexd down: prolog fails naming node3" ||
	t_fail "job 105: rc=$rc"
for i in 1 2; do t_check "node$i: nothing of job 105 left" nothing_left $i 105; done

# The job's first node powered off mid-job: the survivors' epilogs (Slurm
# runs them once it declares the node down) delete the domain through the
# first connected node; node1 drops it once it is back.
t_check "node3: imexd restarted" node_run 3 $START
t_check "job 106: prolog on node1..3" on_nodes "1 2 3" prolog 106 1000 'node[1-3]'
node_kill 1
for i in 2 3; do
	t_check "node$i: node1 DISCONNECTED in job 106 (as when Slurm declares it down)" \
		node_run $i ". tests/vm/lib.sh; wait_for 20 sh -c \"tools/imexctl/imexctl domain show slurm-job106 | grep -Eq '^ *0 +node1 .* disconnected'\""
done
t_check "job 106: epilog on node2..3 at once" on_nodes "2 3" epilog 106 1000 'node[1-3]'
for i in 2 3; do t_check "node$i: nothing of job 106 left" nothing_left $i 106; done
node_boot 1 || exit 1
node_run 1 "printf '$HOSTS\n' >> /etc/hosts"
t_check "node1: imexd attached after reboot" node_run 1 $START
t_check "node1: nothing of job 106 left once back" nothing_left 1 106 60

t_done
