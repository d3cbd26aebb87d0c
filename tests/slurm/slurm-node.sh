#!/bin/sh
# Guest side of tests/slurm/t-slurm.sh: Debian 12's own Slurm and munge in a
# cluster VM (no systemd; see Documentation/slurm.md and the FACTS of the
# harness), one call per agent command:
#   slurm-node.sh start CONTROLLER NODELIST [PLUGSTACK_ARG...]
#       users alice (5001) and bob (5002: ids free on the host, whose root
#       the VMs share), /etc/hosts, munge with the key
#       the host left in the out share, slurm.conf/cgroup.conf/plugstack.conf
#       loading contrib/slurm/imex.so, slurmctld (on CONTROLLER) and slurmd
#   slurm-node.sh wait-idle COUNT SECS    COUNT nodes idle (bounded)
#   slurm-node.sh wait-drain COUNT SECS   COUNT nodes drained or draining
#   slurm-node.sh wait-job ID STATE SECS  the job reached STATE (bounded)
#   slurm-node.sh wait-lines FILE PATTERN COUNT SECS  COUNT lines of FILE
#                                         match PATTERN (bounded)
#   slurm-node.sh nothing-left ID SECS    no domain, channel node or CDI spec
#                                         of job ID on this node (bounded)
#   slurm-node.sh start-latency SBATCH_ARG...  seconds from sbatch to the
#                                         first line of a 3-node batch job
#                                         (its first task, here), which
#                                         then completes (bounded)
#   slurm-node.sh restart-ctld            stop slurmctld (SIGTERM, it saves its
#                                         state), start it again (bounded)
#   slurm-node.sh plugin on|off           plugstack.conf with or without
#                                         imex.so (read anew by every job)
cd "$(dirname "$0")/../.." || exit 2
. tests/vm/lib.sh
REPO=$(pwd)
NL=$REPO/tests/kmod/imex-nl
log=$IMEX_VM_OUT/slurm
mkdir -p "$log"

cmd=$1
shift
case $cmd in
start)
	ctl=$1 nodes=$2
	shift 2
	for u in alice:5001 bob:5002; do
		id "${u%:*}" > /dev/null 2>&1 ||
			{ groupadd -g "${u#*:}" "${u%:*}" &&
			  useradd -u "${u#*:}" -g "${u#*:}" -M -d /tmp -s /bin/sh "${u%:*}"; } ||
			fail "useradd $u"
	done
	printf '192.0.2.1 node1\n192.0.2.2 node2\n192.0.2.3 node3\n' >> /etc/hosts

	# One munge key on every node, owner munge, mode 0400.
	mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
	cp "$IMEX_VM_OUT/munge.key" /etc/munge/munge.key
	chown munge:munge /etc/munge /etc/munge/munge.key /run/munge /var/lib/munge /var/log/munge
	chmod 0400 /etc/munge/munge.key
	runuser -u munge -- /usr/sbin/munged || fail "munged did not start"

	# cgroup v2 without systemd (22.05 has no CgroupPlugin=disabled).
	echo "+cpuset +cpu +memory" > /sys/fs/cgroup/cgroup.subtree_control
	mkdir -p /sys/fs/cgroup/system.slice /etc/slurm /var/spool/slurmd /var/spool/slurmctld /var/log/slurm
	cat > /etc/slurm/cgroup.conf <<-EOC
	CgroupPlugin=cgroup/v2
	IgnoreSystemd=yes
	EOC
	# Two CPUs per node (config_overrides: the VM has one) so that two
	# one-task jobs share each node.
	cat > /etc/slurm/slurm.conf <<-EOC
	ClusterName=imex
	SlurmctldHost=$ctl
	AuthType=auth/munge
	CredType=cred/munge
	SlurmUser=root
	SlurmdParameters=config_overrides
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	SelectType=select/cons_tres
	SelectTypeParameters=CR_CPU
	ReturnToService=2
	PrologFlags=Alloc
	SlurmdTimeout=15
	MinJobAge=600
	JobCompType=jobcomp/filetxt
	JobCompLoc=/var/log/slurm/jobcomp.txt
	SlurmctldLogFile=$log/slurmctld.log
	SlurmdLogFile=$log/slurmd.log
	StateSaveLocation=/var/spool/slurmctld
	SlurmdSpoolDir=/var/spool/slurmd
	MpiDefault=none
	NodeName=$nodes CPUs=2 RealMemory=400 State=UNKNOWN
	PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP
	EOC
	echo "required $REPO/contrib/slurm/imex.so $*" > /etc/slurm/plugstack.imex
	cp /etc/slurm/plugstack.imex /etc/slurm/plugstack.conf
	if [ "$(hostname)" = "$ctl" ]; then
		setsid slurmctld -D > "$log/slurmctld.stderr" 2>&1 < /dev/null &
		echo $! > "$log/slurmctld.pid"
	fi
	setsid slurmd -D -N "$(hostname)" > "$log/slurmd.stderr" 2>&1 < /dev/null &
	wait_for 30 sh -c "scontrol ping | grep -q UP"
	;;
wait-idle)
	_wait_until "$2" sh -c "[ \$(sinfo -h -N -t idle -o %N | wc -l) -ge $1 ]" || {
		sinfo -N -l; fail "fewer than $1 nodes idle"
	}
	;;
wait-drain)
	_wait_until "$2" sh -c "[ \$(sinfo -h -N -t drain -o %N | wc -l) -ge $1 ]" || {
		sinfo -N -l; fail "fewer than $1 nodes drained"
	}
	;;
wait-job)
	_wait_until "$3" sh -c "scontrol -o show job $1 | grep -q ' JobState=$2 '" || {
		scontrol show job "$1"; fail "job $1 is not $2"
	}
	;;
wait-lines)
	_wait_until "$4" sh -c "n=\$(grep -c '$2' '$1' 2> /dev/null); [ \"\${n:-0}\" -ge $3 ]" || {
		cat "$1"; fail "fewer than $3 lines '$2' in $1"
	}
	;;
nothing-left)
	d=slurm-job$1
	_wait_until "$2" sh -c "! $NL domain name=$d >/dev/null 2>&1 &&
		! $NL channels | grep -q ' name=$d ' &&
		[ ! -e /var/run/cdi/imex.dev-channel_$d.json ]" || {
		$NL domains; ls -l /dev/imex-channels /var/run/cdi; fail "job $1 left something"
	}
	;;
start-latency)
	# Both times from this node's clock: the batch step runs on the
	# job's first node, node1, where sbatch runs too.
	t0=$(date +%s.%N)
	id=$(cd /tmp && runuser -u alice -- sbatch --parsable -o /tmp/lat%j.out \
		-N3 --ntasks-per-node=1 "$@" --wrap 'date +%s.%N') || fail "sbatch"
	_wait_until 120 sh -c "[ -s /tmp/lat$id.out ]" || fail "job $id did not start"
	_wait_until 120 sh -c "scontrol -o show job $id | grep -q ' JobState=COMPLETED '" ||
		fail "job $id did not complete"
	echo "$(head -1 /tmp/lat$id.out) - $t0" | bc
	;;
restart-ctld)
	pid=$(cat "$log/slurmctld.pid") || fail "slurmctld does not run here"
	kill "$pid"
	_wait_until 60 sh -c "! kill -0 $pid 2> /dev/null" || fail "slurmctld ($pid) did not stop"
	setsid slurmctld -D >> "$log/slurmctld.stderr" 2>&1 < /dev/null &
	echo $! > "$log/slurmctld.pid"
	wait_for 60 sh -c "scontrol ping | grep -q UP"
	;;
plugin)
	if [ "$1" = on ]; then
		cp /etc/slurm/plugstack.imex /etc/slurm/plugstack.conf
	else
		: > /etc/slurm/plugstack.conf
	fi
	;;
*)
	fail "slurm-node.sh: unknown command $cmd"
	;;
esac
