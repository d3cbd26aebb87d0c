#!/bin/sh
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/imex.sh): give each
# job its own IMEX domain with one channel, owned by the job's user.
# Runs as root on every node of the job.  The first node of the job creates
# the domain on all of them; the others wait until it is READY.  Each node
# writes a CDI spec so containers get the channel with
#   --device imex.dev/channel=all
# Node names are the host names (imexd's default NODE_NAME), and each
# node's imexd listens on its host name (LISTEN_PORT, default 50100).
set -eu
domain=job$SLURM_JOB_ID
nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
first=$(echo "$nodes" | head -n 1)
uid=${SLURM_JOB_UID:-$(id -u "$SLURM_JOB_USER")}
gid=${SLURM_JOB_GID:-$(id -g "$SLURM_JOB_USER")}

if [ "$(hostname -s)" = "$first" ]; then
	# Waits until every member sees every other; exits 1 with the reason.
	imexctl domain create "$domain" --nodes "$(echo "$nodes" | paste -sd, -)" \
		--channels 1 --owner "$uid:$gid" --mode 0600 --timeout 120
else
	imexctl domain wait "$domain" --state ready --timeout 150
fi
imexctl cdi generate --domain "$domain" --id "$domain"
