#!/bin/sh
# Make a throw-away CA, two node certificates it signs (a, b) and a "rogue"
# one signed by a different CA, for test_net.  Usage: gen-certs.sh DIR
set -eu
d=$1
mkdir -p "$d"
cd "$d"
q() { "$@" >/dev/null 2>&1; }
for ca in ca otherca; do
	q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout $ca.key -out $ca.pem -days 2 -subj "/CN=imex test $ca"
done
mk() { # NAME CA
	q openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$1.key" -out "$1.csr" -subj "/CN=$1"
	q openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" \
		-CAcreateserial -out "$1.pem" -days 2
	rm -f "$1.csr"
}
mk a ca
mk b ca
mk rogue otherca
chmod 600 ./*.key
