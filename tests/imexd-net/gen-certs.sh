#!/bin/sh
# Certificates for test_net and tests/imexd-vm/pair.sh, made the way an
# operator makes them (imexctl tls, see imexctl(8)):
#   DIR/ca.pem, ca.key        a throw-away cluster CA
#   DIR/{a,b,vm-a,vm-b}.pem   node certificates it issues (with .key)
#   DIR/rogue.pem             a node certificate from another CA
#   DIR/cnonly.pem            CN=a and no subjectAltName: it names no node
#                             (imexctl cannot make one; the openssl CLI can)
# Usage: gen-certs.sh DIR   (IMEXCTL=path overrides tools/imexctl/imexctl)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
imexctl=${IMEXCTL:-$top/tools/imexctl/imexctl}
[ -x "$imexctl" ] || { echo "gen-certs.sh: build imexctl first (make -C tools)" >&2; exit 2; }
d=$1
q() { "$@" >/dev/null; }
q "$imexctl" tls init-ca "$d" --days 2
q "$imexctl" tls issue "$d" a b vm-a vm-b --days 2
q "$imexctl" tls init-ca "$d/other" --days 2
q "$imexctl" tls issue "$d/other" rogue --days 2
mv "$d/other/rogue.pem" "$d/other/rogue.key" "$d/"
cd "$d"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout cnonly.key -out cnonly.pem -days 2 -subj /CN=a \
	-CA ca.pem -CAkey ca.key >/dev/null 2>&1
chmod 600 cnonly.key
