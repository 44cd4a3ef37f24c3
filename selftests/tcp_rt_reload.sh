#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Loading and unloading while the tracked port carries traffic.
#
# Registering a hook makes ftrace patch the text of a function that other
# CPUs are running.  Under QEMU's multi-threaded TCG the guest sometimes
# jumps to address 0 from the call site being patched (__tcp_transmit_skb
# calling tcp_rate_skb_sent, no tcp_rt frame on the stack), within a few
# cycles; with one TCG thread, 40 cycles never did.  We take it for TCG's
# handling of cross-modifying code, so scripts/check runs this file in a VM
# with single-threaded TCG.
. "$(dirname "$0")/lib.sh"

PORT=7300
# Cycles: 20; CI's other kernels run fewer (.ci/run), each cycle some 6 to
# 9 s in the single-thread VM.
CYCLES=${TCP_RT_RELOAD_CYCLES:-20}

one_exchange() {	# port [client args]
	local port=$1
	shift
	"$PEER" client --port "$port" --req-bytes 10 --resp-bytes 10 "$@" > /dev/null
}

# Two connections made before the first load keep the hooks busy and stay
# untracked; each cycle's own connection must come out whole.
case_reload_under_traffic() {
	local i log=/tmp/reload.log
	start_server -- --port $PORT --req-bytes 10 --resp-bytes 10 --conns 100000 > /dev/null
	"$PEER" client --port $PORT --req-bytes 10 --resp-bytes 10 \
		--requests 100000000 --conns 2 > /dev/null 2>&1 &
	for i in $(seq "$CYCLES"); do
		mod_load lports=$PORT
		one_exchange $PORT --requests 2 || fail "cycle $i: client"
		wait_untracked
		rm -f $log
		drain_logs $log
		expect_eq "$(count_records $log R)" 2 "cycle $i: R records"
		expect_eq "$(count_records $log E)" 1 "cycle $i: E records"
		mod_unload
	done
}

run_case "$CYCLES load/unload cycles under traffic" case_reload_under_traffic
done_testing
