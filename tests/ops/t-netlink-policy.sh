#!/bin/sh
# The module's request policies are what Documentation/netlink/imex.yaml
# says: kmod/netlink-policy.[ch] are what tools/gen-netlink-policy.py makes
# of the spec now, and kmod/netlink.c's operation table has one entry per
# operation of the spec, with its policy and admin permission.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "t-netlink-policy: FAIL: python3 has no yaml module: run tools/install-deps.sh (python3-yaml)" >&2
	exit 1
fi
tools/gen-netlink-policy.py --check || {
	echo "t-netlink-policy: FAIL: the policies do not match the spec (see above)" >&2
	exit 1
}
n=$(grep -c '^const struct nla_policy' kmod/netlink-policy.c)
echo "t-netlink-policy: ok: kmod/netlink-policy.c ($n tables) and the operation table match the spec"
