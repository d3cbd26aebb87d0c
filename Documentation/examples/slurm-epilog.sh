#!/bin/sh
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/imex.sh): undo
# slurm-prolog.sh.  Runs as root on every node of the job: each removes its
# CDI spec; the first node deletes the domain on all members, which revokes
# the channel and removes its device node everywhere.
set -u
domain=job$SLURM_JOB_ID
first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
rc=0

imexctl cdi remove --id "$domain" 2>/dev/null || true
if [ "$(hostname -s)" = "$first" ]; then
	# A domain the prolog never created is not an error here.
	if imexctl domain show "$domain" >/dev/null 2>&1; then
		imexctl domain delete "$domain" --timeout 120 || rc=1
	fi
fi
exit $rc
