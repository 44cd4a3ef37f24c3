#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# render.sh FILE [NAME=VALUE]...  -  print FILE with site values filled in
#
# Two kinds of places take a value:
#
#   - a line of an installable snippet (tcprt-ship.conf, tcprt-central.conf)
#     that ends in the comment "# NAME": the first "..." string on it
#     becomes "VALUE".  The snippets stay valid rsyslog configuration with
#     their documented defaults; install one as it is and edit that line,
#     or render it:
#
#         fleet/render.sh fleet/tcprt-ship.conf TCPRT_CENTRAL=central.example \
#             > /etc/rsyslog.d/tcprt-ship.conf
#
#   - @NAME@ anywhere in a test configuration (test-*.conf.in).
#
# Every NAME given must occur in FILE (a renamed tag fails loudly instead
# of leaving a default behind).  A VALUE may not contain " | & \ or a
# newline.  The tests (try.sh) render the very snippets that are installed,
# so the two cannot drift apart.

set -eu

[ $# -ge 1 ] || { echo "usage: render.sh FILE [NAME=VALUE]..." >&2; exit 2; }
file=$1
shift
[ -r "$file" ] || { echo "render.sh: cannot read $file" >&2; exit 1; }

script=
for kv in "$@"; do
	name=${kv%%=*}
	value=${kv#*=}
	case $kv in *=*) ;; *) echo "render.sh: not NAME=VALUE: $kv" >&2; exit 2 ;; esac
	case $name in ''|*[!A-Za-z0-9_]*) echo "render.sh: bad name: $name" >&2; exit 2 ;; esac
	case $value in *[\"\|\&\\]*) echo "render.sh: bad character in $name's value" >&2; exit 2 ;; esac
	nl='
'
	case $value in *"$nl"*) echo "render.sh: newline in $name's value" >&2; exit 2 ;; esac
	if ! grep -q -e "@$name@" -e "# $name\$" "$file"; then
		echo "render.sh: $file has neither @$name@ nor a line tagged '# $name'" >&2
		exit 1
	fi
	script="$script
s|@$name@|$value|g
/# $name\$/s|\"[^\"]*\"|\"$value\"|"
done

sed -e "$script" "$file"
