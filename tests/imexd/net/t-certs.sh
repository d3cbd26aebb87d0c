#!/bin/sh
# imexctl tls init-ca / issue: keys 0600, certificates that verify against
# the CA and name their node (subjectAltName DNS), all-or-nothing refusal to
# overwrite, clear usage errors.  That imexd loads them is test_net's part
# (gen-certs.sh makes its certificates this way).
# Usage: t-certs.sh (IMEXCTL=path)
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
imexctl=${IMEXCTL:-$top/tools/imexctl/imexctl}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
n=0 bad=0
t() { # DESCRIPTION COMMAND...
	_what=$1
	shift
	n=$((n + 1))
	if "$@" >"$d/out" 2>&1; then
		echo "ok $n - $_what"
	else
		echo "not ok $n - $_what: $(head -3 "$d/out")"
		bad=$((bad + 1))
	fi
}
mode() { stat -c %a "$1"; }

t "init-ca makes a CA" "$imexctl" tls init-ca "$d/ca"
t "the CA key is 0600" [ "$(mode "$d/ca/ca.key")" = 600 ]
t "the CA directory is 0700" [ "$(mode "$d/ca")" = 700 ]
t "init-ca refuses to overwrite" sh -c "! '$imexctl' tls init-ca '$d/ca'"
t "init-ca refuses when only the key exists, writing nothing" sh -c \
	"mkdir '$d/half' && : >'$d/half/ca.key' && ! '$imexctl' tls init-ca '$d/half' 2>'$d/err' && grep -q 'ca.key: exists: refusing to overwrite' '$d/err' && [ ! -e '$d/half/ca.pem' ]"
t "init-ca --json lists the CA's files" sh -c \
	"'$imexctl' --json tls init-ca '$d/ca2' | tr -d ' \n' | grep -qx '{\"files\":\[\"$d/ca2/ca.pem\",\"$d/ca2/ca.key\"\]}'"
t "the CA certificate is a CA" sh -c \
	"openssl x509 -in '$d/ca/ca.pem' -noout -ext basicConstraints | grep -q 'CA:TRUE'"
t "issue makes two node certificates" "$imexctl" tls issue "$d/ca" n1 n2
t "node keys are 0600" [ "$(mode "$d/ca/n1.key")$(mode "$d/ca/n2.key")" = 600600 ]
t "a node certificate verifies against the CA" openssl verify -CAfile "$d/ca/ca.pem" "$d/ca/n1.pem"
t "it names its node in subjectAltName" sh -c "openssl x509 -in '$d/ca/n2.pem' -noout -ext subjectAltName | grep -qx ' *DNS:n2'"
t "... and in its subject CN" sh -c "openssl x509 -in '$d/ca/n2.pem' -noout -subject | grep -qx 'subject=CN *= *n2'"
t "it is for TLS servers and clients, not a CA" sh -c \
	"openssl x509 -in '$d/ca/n1.pem' -noout -ext extendedKeyUsage,basicConstraints >'$d/ext' && grep -q 'TLS Web Server Authentication, TLS Web Client Authentication' '$d/ext' && grep -q 'CA:FALSE' '$d/ext'"
t "node keys are EC P-256" sh -c "openssl pkey -in '$d/ca/n1.key' -noout -text | grep -q 'P-256'"
t "key and certificate belong together" sh -c \
	"[ \"\$(openssl pkey -in '$d/ca/n1.key' -pubout)\" = \"\$(openssl x509 -in '$d/ca/n1.pem' -noout -pubkey)\" ]"
t "issue refuses when one file exists, writing nothing" sh -c \
	"! '$imexctl' tls issue '$d/ca' n3 n1 2>'$d/err' && grep -q 'refusing to overwrite' '$d/err' && [ ! -e '$d/ca/n3.pem' ] && [ ! -e '$d/ca/n3.key' ]"
t "issue refuses a bad node name (usage, exit 2)" sh -c \
	"'$imexctl' tls issue '$d/ca' 'bad/name' 2>/dev/null; [ \$? = 2 ]"
t "issue names the rule a bad node name breaks" sh -c \
	"! '$imexctl' tls issue '$d/ca' 'bad/name' 2>'$d/err' && grep -q \"invalid NODE 'bad/name': a name may contain only\" '$d/err'"
t "issue refuses the node name 'ca' (the CA's files)" sh -c \
	"'$imexctl' tls issue '$d/ca' ca 2>/dev/null; [ \$? = 2 ]"
t "issue without the CA key says where to run it" sh -c \
	"mkdir '$d/nokey' && cp '$d/ca/ca.pem' '$d/nokey/' && ! '$imexctl' tls issue '$d/nokey' n1 2>'$d/err' && grep -q 'issue on the host that holds the CA key' '$d/err' && [ ! -e '$d/nokey/n1.pem' ]"
t "issue without a CA says how to make one" sh -c \
	"! '$imexctl' tls issue '$d/none' n1 2>'$d/err' && grep -q 'imexctl tls init-ca' '$d/err'"
t "--json lists the files written" sh -c \
	"'$imexctl' --json tls issue '$d/ca' n4 | grep -q 'n4.key'"
echo "$((n - bad)) passed, $bad failed"
[ "$bad" = 0 ]
