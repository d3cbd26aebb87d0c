#!/bin/sh
# Make a throw-away CA, node certificates it signs (a, b, vm-a, vm-b), one
# that names its node only in the subject CN (cnonly, CN=a: not accepted)
# and a "rogue" one signed by a different CA, for test_net and
# tests/imexd-vm/pair.sh.  Usage: gen-certs.sh DIR
set -eu
d=$1
mkdir -p "$d"
cd "$d"
q() { "$@" >/dev/null 2>&1; }
for ca in ca otherca; do
	q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout $ca.key -out $ca.pem -days 2 -subj "/CN=imex test $ca"
done
mk() { # FILE CA CN [SAN]
	q openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$1.key" -out "$1.csr" -subj "/CN=$3"
	if [ -n "${4:-}" ]; then
		printf 'subjectAltName=DNS:%s\n' "$4" > "$1.ext"
		q openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" \
			-CAcreateserial -out "$1.pem" -days 2 -extfile "$1.ext"
	else
		q openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" \
			-CAcreateserial -out "$1.pem" -days 2
	fi
	rm -f "$1.csr" "$1.ext"
}
for n in a b vm-a vm-b; do
	mk $n ca $n $n
done
mk cnonly ca a
mk rogue otherca rogue rogue
chmod 600 ./*.key
