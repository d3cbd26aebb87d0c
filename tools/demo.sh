#!/bin/sh
# make demo: boot a VM with Debian's kernel, load imex.ko with a fabric
# identity, and walk through a domain's life, narrating each step.
set -e
cd "$(dirname "$0")/.."
make -s -C tests/kmod all
exec tests/vm/run.sh --cpus 2 --module-args \
	"fabric_uuid=11111111-2222-3333-4444-555555555555 fabric_partition=7" \
	-- sh tools/demo-guest.sh
