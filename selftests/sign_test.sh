#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On the host, no VM: scripts/sign-module signs the built tcp_rt.ko the way
# a Secure Boot host needs it, with a key made for the test.  The appended
# signature (PKCS#7, then struct module_signature, then the magic string,
# as the kernel's module_signature.h lays it out) is checked with openssl
# against the test's certificate, and must not verify against another.
# usage: selftests/sign_test.sh [KO]   (default: the checkout's tcp_rt.ko)
. "$(dirname "$0")/lib.sh"

KO=${1:-$MODULE}
T=$(mktemp -d /tmp/sign_test.XXXXXX)
trap 'rm -rf "$T"' EXIT

cert() {	# name cn
	openssl req -new -x509 -nodes -days 2 -subj "/CN=$2" -newkey rsa:2048 \
		-keyout "$T/$1.key" -outform DER -out "$T/$1.der" 2> /dev/null ||
		fail "openssl req"
	openssl x509 -inform DER -in "$T/$1.der" -out "$T/$1.pem" || fail "openssl x509"
}

# The module's bytes before the signature and the PKCS#7 blob, apart.
split_signature() {	# ko
	/usr/bin/python3 - "$1" "$T/content" "$T/sig.p7" <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
magic = b'~Module signature appended~\n'
if not data.endswith(magic):
    sys.exit("no signature appended")
info = data[-len(magic) - 12:-len(magic)]
id_type, sig_len = info[2], struct.unpack('>I', info[8:12])[0]
if id_type != 2:
    sys.exit(f"signature id_type {id_type}, not PKCS#7 (2)")
end = len(data) - len(magic) - 12
open(sys.argv[2], 'wb').write(data[:end - sig_len])
open(sys.argv[3], 'wb').write(data[end - sig_len:end])
EOF
}

verifies_with() {	# name
	openssl cms -verify -binary -inform DER -in "$T/sig.p7" -content "$T/content" \
		-certfile "$T/$1.pem" -nointern -noverify -out /dev/null 2> /dev/null
}

case_sign() {
	[ -f "$KO" ] || fail "no $KO: build first"
	cert test "tcp_rt test signing key"
	cert other "another key"
	cp "$KO" "$T/tcp_rt.ko"
	expect_eq "$(modinfo -F signer "$T/tcp_rt.ko")" "" "signer before signing"
	"$TOP/scripts/sign-module" "$T/test.key" "$T/test.der" "$T/tcp_rt.ko" > "$T/out" ||
		fail "sign-module: $(cat "$T/out")"
	expect_eq "$(modinfo -F signer "$T/tcp_rt.ko")" "tcp_rt test signing key" "signer"
	expect_eq "$(modinfo -F sig_id "$T/tcp_rt.ko")" "PKCS#7" "signature type"
	split_signature "$T/tcp_rt.ko" || fail "the signature cannot be found"
	cmp -s "$T/content" "$KO" || fail "the signed part is not the module as built"
	verifies_with test || fail "the signature does not verify with the test's certificate"
	! verifies_with other || fail "the signature verifies with another certificate"
	expect_fail "signing twice" "$TOP/scripts/sign-module" "$T/test.key" \
		"$T/test.der" "$T/tcp_rt.ko"
}

run_case "sign-module: signed with a test key, the signature verifies with its certificate only" case_sign
done_testing
