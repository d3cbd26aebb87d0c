#!/bin/sh
# Unpack Debian's promtool and prometheus-node-exporter binaries into a
# cache for the metrics tests, without installing the packages: installing
# them would start services on the build host.  The cache is keyed by the
# package versions, so a new archive version lands beside the old one.
#
#   tools/fetch-prometheus.sh          fetch if missing, print nothing
#   tools/fetch-prometheus.sh --print  print the directory holding the
#                                      binaries (bin/promtool,
#                                      bin/prometheus-node-exporter), or
#                                      exit 1 if the cache lacks them
set -eu

CACHE=${IMEX_PROMETHEUS_CACHE:-/var/cache/imex/prometheus}
PKGS="prometheus prometheus-node-exporter"

candidate() {
	apt-cache policy "$1" 2>/dev/null | awk '$1 == "Candidate:" { print $2 }'
}

# Version key from the candidate versions; ":" (epoch) is unsafe in paths.
key=""
for p in $PKGS; do
	v=$(candidate "$p")
	if [ -z "$v" ] || [ "$v" = "(none)" ]; then
		# Offline or no package list: fall back to the newest cached copy.
		if [ "${1:-}" = --print ]; then
			key=""
			for d in "$CACHE"/*/bin/prometheus-node-exporter; do
				[ -x "$d" ] && [ -x "${d%/*}/promtool" ] && key=${d%/bin/*}
			done
			[ -n "$key" ] && { echo "$key"; exit 0; }
			exit 1
		fi
		echo "fetch-prometheus: no candidate version of $p (apt-get update?)" >&2
		exit 1
	fi
	key="$key${key:+_}$p-$(echo "$v" | tr ':' '_')"
done
dir="$CACHE/$key"

if [ -x "$dir/bin/promtool" ] && [ -x "$dir/bin/prometheus-node-exporter" ]; then
	[ "${1:-}" = --print ] && echo "$dir"
	exit 0
fi
[ "${1:-}" = --print ] && exit 1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt-get download runs as the _apt user when it can; let it write here.
chmod 0777 "$tmp"
# shellcheck disable=SC2086
(cd "$tmp" && apt-get -q download $PKGS >/dev/null) ||
	{ echo "fetch-prometheus: apt-get download $PKGS failed" >&2; exit 1; }
for deb in "$tmp"/*.deb; do
	dpkg-deb -x "$deb" "$tmp/root"
done
mkdir -p "$dir.new/bin"
cp "$tmp/root/usr/bin/promtool" "$tmp/root/usr/bin/prometheus-node-exporter" "$dir.new/bin/"
rm -rf "$dir"
mv "$dir.new" "$dir"
