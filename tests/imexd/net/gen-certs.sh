#!/bin/sh
# Certificates for test_net and tests/imexd/vm/pair.sh, made the way an
# operator makes them (imexctl tls, see imexctl(8)):
#   DIR/ca.pem, ca.key        a throw-away cluster CA
#   DIR/{a,b,vm-a,vm-b}.pem   node certificates it issues (with .key)
#   DIR/evil.pem              one for a name no roster holds (pair.sh's
#                             hostile peer)
#   DIR/rogue.pem             a node certificate from another CA
#   DIR/cnonly.pem            CN=a and no subjectAltName: it names no node
#                             (imexctl cannot make one; the openssl CLI can)
#   DIR/two.pem               subjectAltName DNS:m1, DNS:m2: names two nodes
#   DIR/many.pem              DNS:n0..n9 (more than IMEXD_PEERS_CERT_NAMES_MAX),
#                             behind entries that are no node names
# Usage: gen-certs.sh DIR   (IMEXCTL=path overrides tools/imexctl/imexctl)
set -eu
top=$(cd "$(dirname "$0")/../../.." && pwd)
imexctl=${IMEXCTL:-$top/tools/imexctl/imexctl}
[ -x "$imexctl" ] || { echo "gen-certs.sh: build imexctl first (make -C tools)" >&2; exit 2; }
d=$1
q() { "$@" >/dev/null; }
q "$imexctl" tls init-ca "$d" --days 2
q "$imexctl" tls issue "$d" a b vm-a vm-b evil --days 2
q "$imexctl" tls init-ca "$d/other" --days 2
q "$imexctl" tls issue "$d/other" rogue --days 2
mv "$d/other/rogue.pem" "$d/other/rogue.key" "$d/"
cd "$d"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout cnonly.key -out cnonly.pem -days 2 -subj /CN=a \
	-CA ca.pem -CAkey ca.key >/dev/null 2>&1
# Signed by the cluster CA with the openssl CLI: imexctl names one node.
ossl_cert() { # NAME SUBJECT SAN
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$1.key" -out "$1.pem" -days 2 -subj "$2" \
		-addext "subjectAltName=$3" -addext basicConstraints=critical,CA:FALSE \
		-addext extendedKeyUsage=serverAuth,clientAuth \
		-CA ca.pem -CAkey ca.key >/dev/null 2>&1
	chmod 600 "$1.key"
}
chmod 600 cnonly.key
ossl_cert two /CN=m1 DNS:m1,DNS:m2
ossl_cert many /CN=n0 \
	'IP:127.0.0.1,DNS:*.w,DNS:-x,DNS:n0,DNS:n0,DNS:n1,DNS:n2,DNS:n3,DNS:n4,DNS:n5,DNS:n6,DNS:n7,DNS:n8,DNS:n9'
