#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Series runs (series_us, series_buckets, series_run; rt-network-series):
# workloads of a known shape, every line held to the records of the same
# traffic and, for segments, to its capture (selftests/oracle/series_check.py).
#   1 sec 2 usec 3 port 4 bytes_in 5 bytes_out 6 segs_in 7 segs_out
#   8 retrans 9 started 10 done 11 W 12 N 13 estab 14 closed 15 open
. "$(dirname "$0")/lib.sh"

LOG=/tmp/series.log
SER=/tmp/series.lines
PORT=7600
CHECK=$SELFTESTS/oracle/series_check.py

setup() {	# width buckets params...
	rm -f $LOG $SER
	mod_load "${@:3}"
	echo "$1" > "$PARAMS/series_us"
	echo "$2" > "$PARAMS/series_buckets"
}

running() {
	[ "$(cat "$PARAMS/series_run")" = 1 ]
}

not_running() {
	! running
}

# Read the run's lines (once: a second read finds none) and the records.
collect() {
	cat "$DBG/rt-network-series" > $SER
	expect_eq "$(wc -l < "$DBG/rt-network-series")" 0 "a second read"
	drain_logs $LOG
	grep -qvE "^[0-9]+ [0-9]{6} P?[0-9]+( -?[0-9]+){12}$" $SER &&
		fail "malformed line: $(grep -vE "^[0-9]+ [0-9]{6} P?[0-9]+( -?[0-9]+){12}$" $SER | head -1)"
	diag "$(wc -l < $SER) series lines, $(count_records $LOG R) R records"
}

series_check() {	# width [series_check options]
	local out
	out=$(/usr/bin/python3 "$CHECK" --series $SER --log $LOG --port $PORT \
		--width-us "$1" "${@:2}") || {
		echo "$out" | sed 's/^/# /'
		sed 's/^/# /' $SER | head -n 100
		records $LOG R | sed 's/^/# /' | head -n 20
		fail "series differs"
	}
	diag "$out"
}

# Two bursts of 50 tasks: 50 connections send a request at once and close
# once answered; when all are done, a pause of 500 ms, and 50 more.  The
# pause is awaited (the first client's exit), so it lasts at least pause_ms
# whatever the guest's speed.  10 ms buckets: the run's 100 s hold the
# workload on a debug kernel under load (1 ms ones, 10 s, did not once).
# Ended early by writing 0.
case_bursts() {
	local pause_ms=500 burst
	setup 10000 10000 lports=$PORT
	start_server -- --port $PORT --req-bytes 300 --resp-bytes 3000 \
		--conns 100 > /dev/null
	echo 1 > "$PARAMS/series_run"
	running || fail "series_run does not read 1 during a run"
	for burst in 1 2; do
		[ "$burst" = 2 ] &&
			sleep "$((pause_ms / 1000)).$(printf %03d $((pause_ms % 1000)))"
		"$PEER" client --port $PORT --conns 50 --requests 1 \
			--req-bytes 300 --resp-bytes 3000 > /dev/null ||
			fail "client $burst"
	done
	wait_untracked
	running || fail "the run ended early by itself"
	echo 0 > "$PARAMS/series_run"
	running && fail "series_run still 1 after writing 0"
	collect
	expect_eq "$(count_records $LOG R)" 100 "R records"
	series_check 10000
	# loopback, MSS 65483: each request and each response one segment
	expect_eq "$(awk '{ s += $6 } END { print s }' $SER)" 100 "segs_in"
	expect_eq "$(awk '{ s += $7 } END { print s }' $SER)" 100 "segs_out"
	# the pause between the bursts: where the records put it, +-1 bucket
	# each side, and at least the pause the test made
	local gap want
	gap=$(awk '$9 > 0 { for (i = 0; i < $9; i++) print $1 $2 }' $SER |
		sort -n | awk 'NR == 50 { a = $1 } NR == 51 { print int(($1 - a) / 1000) }')
	want=$(records $LOG R | awk '{ print $3 $4 }' |
		sort -n | awk 'NR == 50 { a = $1 } NR == 51 { print int(($1 - a) / 1000) }')
	expect_within "$gap" "$want" 20 "ms between the bursts, records say $want"
	expect_ge "$gap" $((pause_ms - 10)) "ms between the bursts"
	expect_eq "$(tail -1 $SER | awk '{ print $15 }')" 0 "tasks open at the end"
	expect_eq "$(status series_runs)" 1 "status series_runs"
	expect_eq "$(status series_dropped)" 0 "status series_dropped"
	expect_no_probe_miss
}

# A run of 300 buckets of 10 ms ends by itself; its lines are complete by
# the time series_run reads 0, and they all lie inside it.  The client
# sends half of an 11th request and closes: an N, its task open until the
# close.  The workload must end inside the run (0.4 s on the debug kernel).
case_ends_by_itself() {
	setup 10000 300 lports=$PORT
	start_server -- --port $PORT --req-bytes 100 --resp-bytes 1000 > /dev/null
	local t0
	t0=$(date +%s%6N)
	echo 1 > "$PARAMS/series_run"
	"$PEER" client --port $PORT --requests 10 --think-ms 10 \
		--end mid-request > /dev/null || fail "client"
	wait_untracked
	running || fail "the workload outlasted the run: a longer run, please"
	wait_until "the run to end" not_running || fail "the run did not end"
	collect
	expect_eq "$(count_records $LOG N)" 1 "N records"
	series_check 10000
	expect_eq "$(tail -1 $SER | awk '{ print $15 }')" 0 "tasks open at the end"
	local first last
	first=$(head -1 $SER | awk '{ print $1 $2 }')
	last=$(tail -1 $SER | awk '{ print $1 $2 }')
	expect_eq $((first % 10000)) 0 "buckets start at multiples of 10 ms"
	expect_ge "$first" "$t0" "first bucket after the write"
	expect_le $((last - first)) $((299 * 10000)) "lines within 300 buckets"
}

# 2 MB under 3% loss on the way to the client (the capture, in the
# server's namespace, sees every segment the server sent): retransmitted
# segments in the buckets where they left, as many as the E record and
# the namespace's own counter say.
case_loss() {
	setup 10000 10000 lports=$PORT
	make_netns_router loss 3%
	start_server rtsrv -- --addr 10.99.0.1 --port $PORT --req-bytes 100 \
		--resp-bytes 2000000 > /dev/null
	capture_start $PORT rtsrv
	echo 1 > "$PARAMS/series_run"
	ip netns exec rtcli "$PEER" client --addr 10.99.0.1 --port $PORT \
		--req-bytes 100 --resp-bytes 2000000 --timeout 120 > /dev/null ||
		fail "client"
	wait_untracked
	running || fail "the transfer outlasted the run"
	echo 0 > "$PARAMS/series_run"
	capture_stop
	collect
	local retrans
	retrans=$(netns_retrans rtsrv)
	expect_ge "$retrans" 1 "TcpRetransSegs less TCPSynRetrans (3% loss)"
	expect_eq "$(awk '{ s += $8 } END { print s }' $SER)" "$retrans" \
		"retrans vs the namespace's TcpRetransSegs"
	series_check 10000 --capture "$CAPTURE" \
		--slack-us $((${ORACLE_TOL_US:-20000} * TCP_RT_SLOW))
}

# Input checks, a run refused while one runs, one too big for the bound.
case_params() {
	setup 1000 2000 lports=$PORT
	local m
	m=$(kmsg_mark)
	expect_fail "series_us 500" sh -c "echo 500 > $PARAMS/series_us"
	expect_fail "series_buckets 0" sh -c "echo 0 > $PARAMS/series_buckets"
	expect_fail "series_buckets 10001" sh -c "echo 10001 > $PARAMS/series_buckets"
	expect_fail "series_run 2" sh -c "echo 2 > $PARAMS/series_run"
	expect_eq "$(cat "$PARAMS/series_us")" 1000 "series_us kept"
	expect_eq "$(cat "$PARAMS/series_buckets")" 2000 "series_buckets kept"
	echo 1 > "$PARAMS/series_run"
	expect_fail "a second run while one runs" sh -c "echo 1 > $PARAMS/series_run"
	echo 0 > "$PARAMS/series_run"
	expect_eq "$(kmsg_since "$m" | wc -l)" 5 "one tcp_rt: line per refusal"
	kmsg_since "$m" | sed 's/^/# /'
	# the previous run's table goes when the next one starts, counted
	echo 1 > "$PARAMS/series_run"
	echo 0 > "$PARAMS/series_run"
	expect_eq "$(status series_unread)" 1 "status series_unread"
	# the bound: buckets x ports x (CPUs + 1) x 48 bytes <= 64 MiB
	mod_unload
	mod_load lports=6000,6001,6002,6003,6004,6005 pports=7000,7001
	echo 10000 > "$PARAMS/series_buckets"
	if [ $((10000 * 8 * ($(nproc --all) + 1) * 48)) -gt $((64 << 20)) ]; then
		expect_fail "a run over the bound" sh -c "echo 1 > $PARAMS/series_run"
	else
		echo 1 > "$PARAMS/series_run"
		echo 0 > "$PARAMS/series_run"
	fi
}

# Unloading in the middle of a run leaves nothing behind (kmemleak and
# the log check of the VM say so).
case_unload_during_run() {
	setup 1000 10000 lports=$PORT
	start_server -- --port $PORT > /dev/null
	echo 1 > "$PARAMS/series_run"
	"$PEER" client --port $PORT --requests 20 > /dev/null || fail "client"
	wait_untracked
	running || fail "the run ended too early"
	mod_unload
}

run_case "series: two bursts of 50 tasks, held to the records bucket by bucket" case_bursts
run_case "series: a run ends by itself, its lines complete and inside it" case_ends_by_itself
run_case "series: 2 MB under loss, retransmissions where the capture saw them" case_loss
run_case "series: bad values refused with one line each, the bound enforced" case_params
run_case "series: unload during a run" case_unload_during_run
done_testing
