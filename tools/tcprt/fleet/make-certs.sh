#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make-certs.sh - the fleet's certificates, with Debian's openssl
#
#   make-certs.sh ca CADIR
#       a certificate authority of the fleet's own: CADIR/ca.pem (give it
#       to every machine) and CADIR/ca.key (keep it on the machine that
#       enrolls hosts, nowhere else).  EC P-256, valid 10 years.  And the
#       fleet's frame master key, CADIR/frame-master.key: every host's
#       frame key derives from it (tcprt fleet key); the central's ingest
#       needs it, as /etc/tcprt/frame-master.key (0600), and nothing else.
#
#   make-certs.sh host CADIR NAME OUTDIR
#       a machine's certificate, signed by CADIR's authority, its name NAME
#       both as subject CN and as DNS subjectAltName (what rsyslog's
#       tls.authMode="name" and tls.permittedPeer check): OUTDIR/ca.pem,
#       OUTDIR/cert.pem, OUTDIR/key.pem (0600).  Valid 825 days.  And
#       the frame key of host NAME, OUTDIR/frame.key (0600), with which
#       its tcprt ship signs what it sends (tcprt fleet key; $TCPRT names
#       the tcprt to run, default tcprt).  Copy OUTDIR to the machine as
#       /etc/tcprt/tls/ (root's, 0700), the paths tcprt-ship.conf,
#       tcprt-central.conf and tcprt ship read by default.  A host's NAME
#       is its host id in the store.
#
# The keys never leave the folder they are made in but by your copy; the
# folders are made 0700.  docs/fleet.md, "Certificates", says more.

set -eu
umask 077

die() {
	echo "make-certs.sh: $*" >&2
	exit 1
}

usage() {
	echo "usage: make-certs.sh ca CADIR | make-certs.sh host CADIR NAME OUTDIR" >&2
	exit 2
}

command -v openssl > /dev/null || die "openssl is missing (apt install openssl)"
# a host's frame key comes from tcprt fleet key: checked before anything
# is made, not half way through a host's folder
if [ "${1:-}" = host ]; then
	command -v "${TCPRT:-tcprt}" > /dev/null ||
		die "${TCPRT:-tcprt} not found: put tcprt on PATH (make install, or the tcprt package), or set TCPRT=/path/to/tcprt"
fi

# A host id: 1 to 64 of [A-Za-z0-9._-] (tcprt ship --host-id), which is
# also a valid DNS name here when it has no '_'.
valid_name() {
	case $1 in
	'' | *[!A-Za-z0-9.-]*) return 1 ;;
	esac
	[ ${#1} -le 64 ]
}

new_key() {	# file
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
		-out "$1" 2> /dev/null || die "openssl could not make a key in $1"
	chmod 600 "$1"
}

make_ca() {	# dir
	[ ! -e "$1/ca.key" ] || die "$1/ca.key exists: an authority is made once"
	mkdir -p "$1"
	chmod 700 "$1"
	new_key "$1/ca.key"
	openssl req -x509 -new -key "$1/ca.key" -out "$1/ca.pem" -days 3650 \
		-subj "/CN=tcprt fleet CA" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" 2> /dev/null ||
		die "openssl could not make the authority's certificate"
	chmod 644 "$1/ca.pem"
	openssl rand -hex 32 > "$1/frame-master.key" ||
		die "openssl could not draw the frame master key"
	echo "authority: $1/ca.pem (for every machine), $1/ca.key (keep it here)"
	echo "frame master key: $1/frame-master.key (the central's /etc/tcprt/frame-master.key)"
}

make_host() {	# cadir name outdir
	[ -r "$1/ca.key" ] && [ -r "$1/ca.pem" ] && [ -r "$1/frame-master.key" ] ||
		die "$1 has no authority (make-certs.sh ca $1)"
	valid_name "$2" || die "'$2' is not a name of 1 to 64 of [A-Za-z0-9.-]"
	mkdir -p "$3"
	chmod 700 "$3"
	new_key "$3/key.pem"
	printf '%s\n' "subjectAltName=DNS:$2" \
		"extendedKeyUsage=serverAuth,clientAuth" \
		"keyUsage=critical,digitalSignature" \
		"basicConstraints=critical,CA:FALSE" > "$3/ext"
	openssl req -new -key "$3/key.pem" -subj "/CN=$2" 2> /dev/null |
		openssl x509 -req -CA "$1/ca.pem" -CAkey "$1/ca.key" \
			-CAcreateserial -CAserial "$1/ca.srl" -days 825 \
			-extfile "$3/ext" -out "$3/cert.pem" 2> /dev/null ||
		die "openssl could not sign $2's certificate"
	rm -f "$3/ext"
	cp "$1/ca.pem" "$3/ca.pem"
	chmod 644 "$3/cert.pem" "$3/ca.pem"
	rm -f "$3/frame.key"
	"${TCPRT:-tcprt}" fleet key --master "$1/frame-master.key" --host "$2" \
		--out "$3/frame.key" > /dev/null || die "tcprt fleet key failed"
	echo "$2: $3/cert.pem, $3/key.pem, $3/frame.key, $3/ca.pem: copy to $2 as /etc/tcprt/tls/"
}

[ $# -ge 1 ] || usage
case $1 in
ca) [ $# = 2 ] || usage; make_ca "$2" ;;
host) [ $# = 4 ] || usage; make_host "$2" "$3" "$4" ;;
*) usage ;;
esac
