#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An experiment, not a test of make check (docs/testing.md, "Hooks
# attached under traffic"): the soft lockup at tcp_rcv_established+0x0
# that CI saw once in the multi-threaded TCG guest.  A loopback load runs
# on every vCPU (tools/bench/rt_load, 16 connections) while hooks on
# tcp_rcv_established() and tcp_rcv_state_process() are attached and
# detached again, TCP_RT_TOGGLES times (default 2000):
#   ftrace (default)  by the kernel's own function tracer, tcp_rt not
#                     loaded: ftrace's int3 patching of the sites under
#                     traffic, nothing of ours;
#   tcp_rt            by tcp_rt's series runs (series_ext=ce_bytes: each
#                     run attaches the receive hooks, proves them, and
#                     detaches them when ended), the load on a tracked port.
#
#   scripts/vm-run -- selftests/ftrace_toggle.sh [ftrace|tcp_rt]
#
# Prints the rounds done, the TCP segments received meanwhile (the sites
# ran: too few fails the run), and every soft lockup or
# other kernel report of the run; exits 1 if there was one.
. "$(dirname "$0")/lib.sh"

TOGGLES=${TCP_RT_TOGGLES:-2000}
PORT=7900
LOAD=$TOP/tools/bench/rt_load
T=/sys/kernel/tracing

MODE=${1:-ftrace}
[ -x "$LOAD" ] || { echo "# no $LOAD (make -C tools/bench)"; exit 1; }
case $MODE in
ftrace)
	[ ! -e /sys/module/tcp_rt ] || { echo "# tcp_rt is loaded: this is the run without it"; exit 1; }
	mountpoint -q $T || mount -t tracefs nodev $T || exit 1
	;;
tcp_rt)
	mod_load lports=$PORT series_us=1000 series_buckets=2000 series_ext=ce_bytes
	;;
*)
	echo "# mode ftrace or tcp_rt, not $MODE"
	exit 1
esac

mark=$(kmsg_mark)
$LOAD server --port $PORT --ready-file /tmp/toggle.ready > /dev/null &
srv=$!
wait_until "load server" test -s /tmp/toggle.ready || exit 1
$LOAD client --port $PORT --conns 16 --seconds 100000 > /tmp/toggle.load 2>&1 &
cli=$!

attach() {
	if [ "$MODE" = ftrace ]; then
		echo function > $T/current_tracer
	else
		echo 1 > "$PARAMS/series_run"
	fi
}

detach() {
	if [ "$MODE" = ftrace ]; then
		echo nop > $T/current_tracer
	else
		echo 0 > "$PARAMS/series_run"
	fi
}

if [ "$MODE" = ftrace ]; then
	echo nop > $T/current_tracer
	printf 'tcp_rcv_established\ntcp_rcv_state_process\n' > $T/set_ftrace_filter
fi
# The load's own count dies with it (SIGTERM): the kernel's count of TCP
# segments received says the sites ran all along.
in_segs() {
	awk '$1 == "Tcp:" && $2 != "RtoAlgorithm" { print $11 }' /proc/net/snmp
}
segs0=$(in_segs)
start=$SECONDS
for ((i = 1; i <= TOGGLES; i++)); do
	attach || { echo "# attach failed at round $i"; break; }
	detach
	kill -0 $cli 2> /dev/null || { echo "# the load's client died at round $i"; break; }
	(( i % 200 == 0 )) && echo "# round $i, $((SECONDS - start)) s, $(($(in_segs) - segs0)) segments received"
done
segs=$(($(in_segs) - segs0))
[ "$MODE" = ftrace ] && echo > $T/set_ftrace_filter
kill $cli $srv 2> /dev/null
wait $cli $srv 2> /dev/null
[ "$MODE" = tcp_rt ] && cat "$DBG/rt-network-series" > /dev/null && mod_unload
echo "# $((i - 1)) rounds in $((SECONDS - start)) s; $segs TCP segments received meanwhile"
[ "$segs" -gt $((10 * (i - 1))) ] || { echo "# too few segments: the load did not run"; exit 1; }
reports=$(kmsg_since "$mark" 'soft lockup\|rcu.*stall\|WARNING\|BUG\|Oops\|int3' || true)
if [ -n "$reports" ]; then
	echo "$reports" | sed 's/^/# /'
	exit 1
fi
echo "# no kernel report"
