#!/bin/sh
# Turn an nvidia-imex nodes_config.cfg (one IP address per line) into the
# NAME=ADDR list imexd and 'imexctl domain create --nodes' take.  The name of
# each node is looked up in DNS (or /etc/hosts); it must be the NODE_NAME
# that node's imexd runs with (by default its host name).
#   nodes-from-nvidia-imex.sh /etc/nvidia-imex/nodes_config.cfg > /etc/imex/nodes
set -eu
[ $# -eq 1 ] || { echo "usage: $0 NODES_CONFIG_CFG" >&2; exit 2; }
sed -e 's/#.*//' -e 's/[[:space:]]//g' "$1" | while read -r addr; do
	[ -n "$addr" ] || continue
	name=$(getent hosts "$addr" | awk '{ print $2; exit }')
	name=${name%%.*}
	[ -n "$name" ] || { echo "$0: no host name for $addr: add it to DNS or /etc/hosts, or write NAME=$addr by hand" >&2; exit 1; }
	echo "$name=$addr"
done
