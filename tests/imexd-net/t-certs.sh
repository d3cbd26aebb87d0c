#!/bin/sh
# imexctl tls init-ca / issue: keys 0600, certificates that verify against
# the CA and name their node (subjectAltName DNS), all-or-nothing refusal to
# overwrite, clear usage errors.  Usage: t-certs.sh (IMEXCTL=path)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
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
t "issue makes two node certificates" "$imexctl" tls issue "$d/ca" n1 n2
t "node keys are 0600" [ "$(mode "$d/ca/n1.key")$(mode "$d/ca/n2.key")" = 600600 ]
t "a node certificate verifies against the CA" openssl verify -CAfile "$d/ca/ca.pem" "$d/ca/n1.pem"
t "it names its node in subjectAltName" sh -c "openssl x509 -in '$d/ca/n2.pem' -noout -ext subjectAltName | grep -qx ' *DNS:n2'"
t "key and certificate belong together" sh -c \
	"[ \"\$(openssl pkey -in '$d/ca/n1.key' -pubout)\" = \"\$(openssl x509 -in '$d/ca/n1.pem' -noout -pubkey)\" ]"
t "issue refuses when one file exists, writing nothing" sh -c \
	"! '$imexctl' tls issue '$d/ca' n3 n1 2>'$d/err' && grep -q 'refusing to overwrite' '$d/err' && [ ! -e '$d/ca/n3.pem' ] && [ ! -e '$d/ca/n3.key' ]"
t "issue refuses a bad node name (usage, exit 2)" sh -c \
	"'$imexctl' tls issue '$d/ca' 'bad/name' 2>/dev/null; [ \$? = 2 ]"
t "issue without a CA says how to make one" sh -c \
	"! '$imexctl' tls issue '$d/none' n1 2>'$d/err' && grep -q 'imexctl tls init-ca' '$d/err'"
t "--json lists the files written" sh -c \
	"'$imexctl' --json tls issue '$d/ca' n4 | grep -q 'n4.key'"
echo "$((n - bad)) passed, $bad failed"
[ "$bad" = 0 ]
