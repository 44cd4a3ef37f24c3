#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stress, bounded in time: many tracked connections, churn, parameters
# changed under traffic, readers racing the writers, a CPU going offline
# and back.  A deterministic workload runs beside it, and its records must
# all be there: nothing vanishes without a counter saying so.
. "$(dirname "$0")/lib.sh"

PORT=7800	# the deterministic workload
CHURN=7801	# connection churn
IDLE=7802	# many idle tracked connections
: "${STRESS_IDLE:=${TCP_RT_STRESS_IDLE:-1000}}"
LOAD=$TOP/tools/bench/rt_load
LOG=/tmp/stress.log

# Readers racing the writers: drain every log file continuously.
readers_start() {
	( while :; do cat "$DBG"/rt-network-log* >> $LOG; sleep 0.05; done ) &
	READER1=$!
	( while :; do cat "$DBG"/rt-network-stats > /dev/null; sleep 0.2; done ) &
	READER2=$!
}

readers_stop() {
	kill "$READER1" "$READER2" 2>/dev/null || true
	wait "$READER1" "$READER2" 2>/dev/null || true
	drain_logs $LOG
}

# Change parameters every second while the traffic runs.
twiddler_start() {
	(
		i=0
		while :; do
			i=$((i + 1))
			echo "$PORT,$CHURN,$IDLE,$((8000 + i % 100))" > "$PARAMS/lports"
			echo "$((9000 + i % 50)),$((9100 + i % 50))" > "$PARAMS/lports_range"
			echo $((1 + i % 3)) > "$PARAMS/stats_interval"
			echo $((i % 2)) > "$PARAMS/stats"
			sleep 1
		done
	) &
	TWIDDLER=$!
}

churn_start() {
	start_server -- --port $CHURN --conns 100000 > /dev/null
	(
		while :; do
			"$PEER" client --port $CHURN --conns 10 --requests 3 > /dev/null 2>&1
		done
	) &
	CHURNER=$!
}

cpu_flap() {
	[ -e /sys/devices/system/cpu/cpu1/online ] || return 0
	echo 0 > /sys/devices/system/cpu/cpu1/online || fail "cpu1 offline"
	sleep 1
	echo 1 > /sys/devices/system/cpu/cpu1/online || fail "cpu1 online"
}

case_stress() {
	local conns=20 req=200 r
	rm -f $LOG
	mod_load lports=$PORT,$CHURN,$IDLE log_buf_num=64
	readers_start

	# idle tracked connections, one task each (epoll, not a thread each)
	rm -f /tmp/idle_srv.ready /tmp/idle.ready
	$LOAD server --port $IDLE --ready-file /tmp/idle_srv.ready > /dev/null &
	IDLE_SRV=$!
	wait_until "idle server" test -s /tmp/idle_srv.ready || fail "idle server"
	$LOAD idle --port $IDLE --conns "$STRESS_IDLE" --ready-file /tmp/idle.ready > /dev/null &
	IDLERS=$!
	# They connect one after the other: for as long as they still come
	# (10,000 took over 300 s on a debug kernel, about 29 a second).
	wait_moving "$STRESS_IDLE idle connections" "status tracked" test -s /tmp/idle.ready ||
		fail "idle connections: tracked $(status tracked)"
	expect_ge "$(status tracked)" "$STRESS_IDLE" "tracked idle connections"

	churn_start
	twiddler_start
	start_server -- --port $PORT --conns $conns --req-bytes 100 --resp-bytes 300 > /dev/null
	"$PEER" client --port $PORT --conns $conns --requests $req \
		--req-bytes 100 --resp-bytes 300 > /tmp/stress.client &
	r=$!
	cpu_flap
	wait $r || fail "deterministic client"
	cat /tmp/stress.client

	# The idle client closes its connections in paced batches (see
	# rt_load.c: all at once, the orphans' timers stall a debug kernel).
	kill "$IDLERS"
	wait "$IDLERS" || fail "idle client's close: exit $?"
	kill "$TWIDDLER" "$CHURNER" "$IDLE_SRV" 2>/dev/null || true
	wait "$TWIDDLER" "$CHURNER" "$IDLE_SRV" 2>/dev/null || true
	pkill -f "$PEER" || true
	wait_untracked
	readers_stop

	diag "$(grep -E '^(records_|alloc|probe_missed |log_sub)' "$DBG/status" | tr '\n' ' ')"
	local got lost
	got=$(records $LOG R | awk -v p=":$PORT" '$6 ~ p"$"' | wc -l)
	lost=$(status log_subbufs_overwritten)
	expect_eq "$lost" 0 "log sub-buffers overwritten"
	expect_eq "$(status alloc_failed)" 0 "alloc_failed"
	expect_eq "$got" $((conns * req)) "R records of the deterministic workload"
	expect_eq "$(records $LOG E | awk -v p=":$PORT" '$6 ~ p"$"' | wc -l)" $conns "its E records"
	expect_ge "$(count_records $LOG E)" "$((STRESS_IDLE + conns))" "E records in all"
	expect_no_probe_miss
}

# A reader the writers lap, in the flight recorder's tightest form: one
# sub-buffer per CPU (log_buf_num=1), records flooding in on both CPUs, and
# on each CPU's files a reader that reads LAPPED_READ bytes at a time (more
# than the longest record) with a pause after each, for LAPPED_S seconds:
# one on the text log, one on the binary buffer's text view (log_format=
# both), whose lines are made from a copy the writer may lap too.  Every
# line either reads must be one the module wrote: whole, its fields those
# of the workload (lapped_reader.py).  The writers must have lapped both.
# The binary buffers' records overwritten are counted exactly: what their
# readers and a final drain read plus log_bin_records_overwritten is what
# the module wrote.
LAPPED_PORT=7803
: "${LAPPED_S:=60}"
LAPPED_READ=512
LAPPED_PAUSE_MS=2

case_lapped_reader() {
	local cpu f pids=() r rc=0 read written
	mod_load lports=$LAPPED_PORT log_buf_num=1 log_format=both
	start_server -- --port $LAPPED_PORT --conns 4 --req-bytes 50 \
		--resp-bytes 80 > /dev/null
	for cpu in 0 1; do
		taskset -c $cpu "$PEER" client --port $LAPPED_PORT --conns 2 \
			--requests 100000000 --req-bytes 50 --resp-bytes 80 \
			--timeout $((LAPPED_S + 60)) > /dev/null 2>&1 &
	done
	for cpu in 0 1; do
		for f in log text; do
			python3 "$SELFTESTS/lapped_reader.py" "$DBG/rt-network-$f$cpu" \
				"$LAPPED_S" $LAPPED_READ $LAPPED_PAUSE_MS $LAPPED_PORT 50 80 \
				> /tmp/lapped.$f$cpu 2>&1 &
			pids+=($!)
		done
	done
	for r in "${pids[@]}"; do
		wait "$r" || rc=1
	done
	pkill -f "$PEER" || true
	for cpu in 0 1; do
		for f in log text; do
			diag "rt-network-$f$cpu's reader: $(tr '\n' ' ' < /tmp/lapped.$f$cpu)"
		done
	done
	diag "records_R $(status records_R), log_subbufs_overwritten $(status log_subbufs_overwritten), log_bin_subbufs_overwritten $(status log_bin_subbufs_overwritten), reads_lapped $(status reads_lapped)"
	expect_ge "$(status log_subbufs_overwritten)" 2 "sub-buffers overwritten (the text log's readers were lapped)"
	expect_ge "$(status log_bin_subbufs_overwritten)" 2 "binary sub-buffers overwritten (the text views' readers were lapped)"
	expect_eq "$rc" 0 "every line read whole"
	# the binary buffers' loss, exact on both CPUs: what their text views'
	# readers read, and a drain once the clients are gone, plus the count
	wait_untracked
	read=$(cat /tmp/lapped.text0 /tmp/lapped.text1 | awk '$1 == "lines" { n += $2 } END { print n }')
	read=$((read + $(cat "$DBG"/rt-network-text[0-9]* | wc -l)))
	written=$(records_written)
	diag "the binary buffers: $written records written, $read read, $(status log_bin_records_overwritten) overwritten"
	expect_eq "$((read + $(status log_bin_records_overwritten)))" "$written" \
		"the binary buffers' records read + log_bin_records_overwritten, records written"
}

run_case "stress: idle, churn, parameter changes, racing readers, CPU offline" case_stress
run_case "stress: slow readers lapped by writers on both CPUs, of the text log and of the text view, read only whole records" case_lapped_reader
done_testing
