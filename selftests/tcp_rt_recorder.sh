#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The series recorder (recorder=1; docs/recorder.md, stage 2): a run that
# does not end, its hooks counting into each CPU's hot ring, the fold
# moving what is TCP_RT_REC_AGE buckets old into one fine ring that
# rt-network-recorder shows without consuming it, in rt-network-series'
# format.  Its lines are held to the records of the same traffic by the
# series oracle (selftests/oracle/series_check.py), as a run's are.
# tcp_rt_series_cpus.sh has its hotplug case.
. "$(dirname "$0")/lib.sh"

LOG=/tmp/recorder.log
SER=/tmp/recorder.lines
PORT=7620
ALL_EXT=ce_bytes,ce_segs,ece,dup_bytes,dup_segs,flows,far_bytes_in,far_bytes_out


recording() {
	[ "$(cat "$PARAMS/recorder")" = 1 ]
}


# Off by default: the parameter reads 0, the file is empty, and nothing
# runs (no fold) however much traffic.
case_off() {
	series_setup 1000 2000 lports=$PORT
	expect_eq "$(cat "$PARAMS/recorder")" 0 "recorder at load"
	start_server -- --port $PORT > /dev/null
	"$PEER" client --port $PORT --requests 20 > /dev/null || fail "client"
	wait_untracked
	expect_eq "$(wc -c < "$DBG/rt-network-recorder")" 0 "rt-network-recorder while off"
	expect_eq "$(status recorder_folds)" 0 "status recorder_folds while off"
	expect_eq "$(status series_bytes)" 0 "status series_bytes while off"
}

# Two bursts of 50 tasks, 500 ms apart (tcp_rt_series.sh's), under the
# recorder: its lines are the records' tasks, bytes and connections,
# each in its bucket (within one), as a run's would be; a second read
# finds the first's lines again (nothing consumed); nothing late; a run
# is refused while it records; writing 0 ends it and its memory goes.
case_bursts() {
	local burst m first
	series_setup 10000 2000 lports=$PORT
	start_server -- --port $PORT --req-bytes 300 --resp-bytes 3000 \
		--conns 100 > /dev/null
	echo 1 > "$PARAMS/recorder"
	recording || fail "recorder does not read 1"
	expect_eq "$(cat "$PARAMS/series_run")" 0 "series_run while the recorder runs"
	for burst in 1 2; do
		[ "$burst" = 2 ] && sleep 0.5
		"$PEER" client --port $PORT --conns 50 --requests 1 \
			--req-bytes 300 --resp-bytes 3000 > /dev/null ||
			fail "client $burst"
	done
	wait_untracked
	recorder_folded 10000
	cat "$DBG/rt-network-recorder" > $SER
	drain_logs $LOG
	series_lines_ok
	diag "$(wc -l < $SER) recorder lines, $(count_records $LOG R) R records"
	expect_eq "$(count_records $LOG R)" 100 "R records"
	series_check 10000
	# read again: the same lines, the ring only moved on (20 s of it)
	first=$(head -1 $SER | awk '{ print $1, $2 }')
	cat "$DBG/rt-network-recorder" > $SER.2
	expect_eq "$(grep -c "" $SER.2)" "$(grep -c "" $SER)" "lines at a second read"
	cmp -s $SER $SER.2 || fail "the second read differs: $(diff $SER $SER.2 | head -5)"
	expect_eq "$(head -1 $SER.2 | awk '{ print $1, $2 }')" "$first" "the first line at a second read"
	expect_eq "$(status recorder_late)" 0 "status recorder_late"
	expect_eq "$(status series_cpu_nomem)" 0 "status series_cpu_nomem"
	m=$(kmsg_mark)
	expect_fail "a run while the recorder runs" sh -c "echo 1 > $PARAMS/series_run"
	echo 0 > "$PARAMS/series_run"
	recording || fail "series_run 0 ended the recorder"
	expect_eq "$(kmsg_since "$m" | wc -l)" 1 "one line for the refused run"
	kmsg_since "$m" | grep -q "tcp_rt: series_run: the recorder is on; write 0 to recorder to end it" ||
		fail "$(kmsg_since "$m")"
	echo 0 > "$PARAMS/recorder"
	recording && fail "recorder still 1 after writing 0"
	expect_eq "$(wc -c < "$DBG/rt-network-recorder")" 0 "rt-network-recorder once ended"
	expect_eq "$(status series_bytes)" 0 "status series_bytes once ended"
	expect_eq "$(status series_runs)" 1 "status series_runs"
	expect_no_probe_miss
}

# The host's line and every series_ext measure (the receive hooks
# attached with the recorder, before any traffic): the port's and the
# host's lines; a line of every measure; what the port moved, the host
# moved too.  Then unloaded while recording: nothing left (the VM's log
# check; kmemleak on the debug kernel).  10 ms buckets, as in case_bursts:
# the fold may then run 310 ms late before a hook counts late, which an
# emulated guest's stalls do not reach (at 1 ms, 30 ms).
case_host_line() {
	local port_in host_in
	series_setup 10000 2000 lports=$PORT
	echo $ALL_EXT > "$PARAMS/series_ext"
	echo 1 > "$PARAMS/series_host"
	echo 1 > "$PARAMS/recorder"
	start_server -- --port $PORT --req-bytes 1000 --resp-bytes 20000 > /dev/null
	"$PEER" client --port $PORT --requests 50 --req-bytes 1000 \
		--resp-bytes 20000 > /dev/null || fail "client"
	wait_untracked
	recorder_folded 10000
	cat "$DBG/rt-network-recorder" > $SER
	drain_logs $LOG
	grep -q "^[0-9]* [0-9]* \* " $SER || fail "no host line: $(head -3 $SER)"
	grep -q " flows=[0-9]" $SER || fail "no series_ext measure: $(head -3 $SER)"
	port_in=$(awk '$3 == "'$PORT'" { s += $4 } END { print s + 0 }' $SER)
	host_in=$(awk '$3 == "*" { s += $4 } END { print s + 0 }' $SER)
	expect_eq "$port_in" $((50 * 1000)) "the port's bytes in"
	expect_ge "$host_in" "$port_in" "the host's bytes in"
	expect_eq "$(status recorder_late)" 0 "status recorder_late"
	mod_unload
}

# Bad values and conflicts, one line each, the old value kept; the
# recorder asked for at load starts with the module, and with a run
# asked for too the load is refused.
case_params() {
	local m
	# the run below lasts 20 s: the case ends it
	series_setup 10000 2000 lports=$PORT
	m=$(kmsg_mark)
	expect_fail "recorder 2" sh -c "echo 2 > $PARAMS/recorder"
	echo 1 > "$PARAMS/series_run"
	expect_fail "the recorder during a run" sh -c "echo 1 > $PARAMS/recorder"
	echo 0 > "$PARAMS/recorder"
	series_running || fail "recorder 0 ended the run"
	echo 0 > "$PARAMS/series_run"
	expect_eq "$(cat "$PARAMS/recorder")" 0 "recorder kept"
	expect_eq "$(kmsg_since "$m" | wc -l)" 2 "one tcp_rt: line per refusal"
	kmsg_since "$m" | grep -q "tcp_rt: recorder: '2' is not 0 or 1" ||
		fail "$(kmsg_since "$m")"
	kmsg_since "$m" | grep -q "tcp_rt: recorder: a run is in progress; write 0 to series_run to end it" ||
		fail "$(kmsg_since "$m")"
	mod_unload
	mod_load lports=$PORT recorder=1
	recording || fail "recorder=1 at load: not recording"
	mod_unload
	m=$(kmsg_mark)
	expect_fail "series_run and recorder at load" insmod "$MODULE" lports=$PORT recorder=1 series_run=1
	kmsg_since "$m" | grep -q "tcp_rt: series_run and recorder at load: one or the other" ||
		fail "$(kmsg_since "$m")"
}

run_case "recorder: off by default, nothing runs" case_off
run_case "recorder: two bursts of tasks recorded as a run counts them, read twice alike, a run refused meanwhile" case_bursts
run_case "recorder: the host's line and every measure; unloaded while recording" case_host_line
run_case "recorder: bad values and conflicts refused with one line; at load" case_params
done_testing
