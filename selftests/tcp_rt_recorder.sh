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
WIN=/tmp/recorder.window
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
	# read again at once: the same lines, the ring only moved on (20 s
	# of it; the checks below take longer than that on a debug kernel)
	cat "$DBG/rt-network-recorder" > $SER.2
	first=$(head -1 $SER | awk '{ print $1, $2 }')
	drain_logs $LOG
	series_lines_ok
	diag "$(wc -l < $SER) recorder lines, $(count_records $LOG R) R records"
	expect_eq "$(count_records $LOG R)" 100 "R records"
	series_check 10000
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

# $1 windows more, each read into $WIN.N ($NWIN so far in the case).
read_windows() {	# n
	local i
	for ((i = NWIN + 1; i <= NWIN + $1; i++)); do
		cat "$DBG/rt-network-windows" > $WIN.$i
		[ -s $WIN.$i ] || fail "window $i: none to read: $(status recorder_windows) frozen"
	done
	NWIN=$((NWIN + $1))
}

_windows_frozen() {	# n
	[ "$(status recorder_windows)" -ge "$1" ]
}

windows_check() {	# slow_us
	local out
	out=$(/usr/bin/python3 "$SELFTESTS/oracle/windows_check.py" --log $LOG \
		--port $PORT --width-us 10000 --slow-us "$1" $WIN.*) || {
		echo "$out" | sed 's/^/# /'
		head -n 3 $WIN.* | sed 's/^/# /'
		records $LOG R | sed 's/^/# /' | head -n 20
		fail "windows differ from the records"
	}
	diag "$out"
}

# Stage 3: a task at least recorder_slow_us long freezes the recorder's
# buckets around it, 200 ms before its start to 100 ms past its end, into
# a window rt-network-windows gives once.  Every response is held 150 ms
# (the server's --delay-ms): with recorder_slow_us 0 (the default) and
# then 200000, no window; at 100000, four tasks 600 ms apart make four
# windows, and three back to back (a client 500 ms later) one.  Held to
# the records by oracle/windows_check.py: each slow task inside a window
# from 200 ms before to 100 ms after, its buckets showing it open, the
# tasks started in a window those the records begin there; read once.
case_windows() {
	series_setup 10000 2000 lports=$PORT
	rm -f $WIN.*
	NWIN=0
	echo 1 > "$PARAMS/recorder"
	start_server -- --port $PORT --delay-ms 150 --conns 10 > /dev/null
	"$PEER" client --port $PORT --requests 2 > /dev/null || fail "client"
	echo 200000 > "$PARAMS/recorder_slow_us"
	"$PEER" client --port $PORT --requests 2 > /dev/null || fail "client"
	wait_untracked
	recorder_folded 10000
	expect_eq "$(status recorder_slow)" 0 "status recorder_slow, no task of 200 ms"
	expect_eq "$(wc -c < "$DBG/rt-network-windows")" 0 "rt-network-windows, no task of 200 ms"
	# the oracle reads the records from here on
	drain_logs $LOG.before
	echo 100000 > "$PARAMS/recorder_slow_us"
	"$PEER" client --port $PORT --requests 4 --think-ms 600 > /dev/null || fail "client"
	sleep 0.5
	"$PEER" client --port $PORT --requests 3 > /dev/null || fail "client"
	wait_untracked
	wait_until "five windows frozen" _windows_frozen 5 ||
		fail "$(status recorder_windows) windows, $(status recorder_slow) slow tasks"
	recorder_folded 10000
	expect_eq "$(status recorder_slow) $(status recorder_windows) $(status recorder_windows_dropped) $(status recorder_windows_clipped)" \
		"7 5 0 0" "status recorder_slow, _windows, _dropped, _clipped"
	read_windows 5
	expect_eq "$(wc -c < "$DBG/rt-network-windows")" 0 "rt-network-windows once all five are read"
	expect_eq "$(status recorder_windows_bytes)" 0 "status recorder_windows_bytes once read"
	drain_logs $LOG
	windows_check 100000
	expect_eq "$(status recorder_late)" 0 "status recorder_late"
}

# Eight windows wait unread at most: of ten slow tasks 550 ms apart, the
# last two are not frozen, counted in recorder_windows_dropped; once the
# eight are read the next slow task has its window again.  Unloaded with
# a window unread: one line, nothing left (kmemleak on the debug kernel).
case_windows_full() {
	local m
	series_setup 10000 2000 lports=$PORT recorder_slow_us=100000
	rm -f $WIN.*
	NWIN=0
	echo 1 > "$PARAMS/recorder"
	start_server -- --port $PORT --delay-ms 150 --conns 10 > /dev/null
	"$PEER" client --port $PORT --requests 10 --think-ms 400 > /dev/null || fail "client"
	wait_untracked
	wait_until "eight windows frozen, two dropped" eval \
		'[ "$(status recorder_windows)" = 8 ] && [ "$(status recorder_windows_dropped)" = 2 ]' ||
		fail "$(status recorder_windows) windows, $(status recorder_windows_dropped) dropped"
	read_windows 8
	expect_eq "$(wc -c < "$DBG/rt-network-windows")" 0 "a ninth window"
	"$PEER" client --port $PORT --requests 1 > /dev/null || fail "client"
	wait_untracked
	wait_until "the next window frozen" _windows_frozen 9 || fail "$(status recorder_windows) windows"
	expect_eq "$(status recorder_slow) $(status recorder_windows_dropped)" "11 2" \
		"status recorder_slow, recorder_windows_dropped"
	"$PEER" client --port $PORT --requests 1 > /dev/null || fail "client"
	wait_untracked
	wait_until "one more window frozen" _windows_frozen 10 || fail "$(status recorder_windows) windows"
	read_windows 1
	drain_logs $LOG
	# the ten slow tasks' first eight, and the eleventh, are in the windows
	grep -h "^# window" $WIN.* | sed 's/^/# /'
	m=$(kmsg_mark)
	mod_unload
	kmsg_since "$m" | grep -q "tcp_rt: series: unloaded with 1 of the recorder's windows never read" ||
		fail "$(kmsg_since "$m")"
}

# recorder_freeze, the explicit trigger: a record's start and duration
# (SEC USEC DURATION_US, as the host agent writes them), or now, freeze
# the window around it as a slow task's: from 200 ms before to 100 ms
# after (within a bucket), slow=0 freezes=1, the task started in its
# bucket.  Refused with one line each: while the recorder is off, not a
# span, microseconds out of range, a start ahead of the clock.
case_freeze() {
	local m rec t0 dur hdr s e
	series_setup 10000 2000 lports=$PORT
	rm -f $WIN.*
	NWIN=0
	m=$(kmsg_mark)
	expect_fail "recorder_freeze while off" sh -c "echo now > $PARAMS/recorder_freeze"
	echo 1 > "$PARAMS/recorder"
	expect_fail "recorder_freeze abc" sh -c "echo abc > $PARAMS/recorder_freeze"
	expect_fail "recorder_freeze with microseconds past a second" \
		sh -c "echo 1 1000000 5 > $PARAMS/recorder_freeze"
	expect_fail "recorder_freeze ahead of the clock" \
		sh -c "echo $(($(date +%s) + 100)) 0 5 > $PARAMS/recorder_freeze"
	expect_fail "recorder_freeze of a span that ends ahead of the clock" \
		sh -c "echo $(date +%s) 0 100000000 > $PARAMS/recorder_freeze"
	expect_fail "recorder_freeze, four numbers" \
		sh -c "echo 1 2 3 4 > $PARAMS/recorder_freeze"
	expect_eq "$(kmsg_since "$m" | wc -l)" 6 "one tcp_rt: line per refusal"
	kmsg_since "$m" | grep -q "tcp_rt: recorder_freeze: the recorder is off (write 1 to recorder)" ||
		fail "$(kmsg_since "$m")"
	kmsg_since "$m" | grep -q "tcp_rt: recorder_freeze: 'abc' is not now, nor a start and a duration (SEC USEC DURATION_US)" ||
		fail "$(kmsg_since "$m")"
	kmsg_since "$m" | grep -q "tcp_rt: recorder_freeze: [0-9]*.000000 and 5 us end ahead of the clock" ||
		fail "$(kmsg_since "$m")"
	kmsg_since "$m" | grep -q "tcp_rt: recorder_freeze: [0-9]*.000000 and 100000000 us end ahead of the clock" ||
		fail "$(kmsg_since "$m")"
	start_server -- --port $PORT --conns 10 > /dev/null
	"$PEER" client --port $PORT --requests 20 --think-ms 50 > /dev/null || fail "client"
	wait_untracked
	drain_logs $LOG
	rec=$(records $LOG R | sed -n 10p)
	read -r t0 dur < <(echo "$rec" | awk '{ printf "%.0f %d\n", $3 * 1000000 + $4, $8 }')
	echo "$rec" | awk '{ print $3, $4, $8 }' > "$PARAMS/recorder_freeze"
	wait_until "its window" _windows_frozen 1 || fail "$(status recorder_windows) windows"
	read_windows 1
	hdr=$(head -1 $WIN.1)
	diag "$hdr, for $rec"
	read -r s e < <(echo "$hdr" | awk '{ printf "%.0f %.0f\n", $3 * 1000000 + $4, $3 * 1000000 + $4 + $5 * $6 }')
	expect_eq "$(echo "$hdr" | awk '{ print $7, $8, $9 }')" "slow=0 clipped=0 freezes=1" \
		"the header's counts"
	expect_le "$s" $((t0 - 200000 + 10000)) "the window's start: 200 ms before the task's"
	expect_ge "$e" $((t0 + dur + 100000 - 10000)) "its end: 100 ms after the task's"
	expect_ge "$(awk -v p=$PORT -v t=$t0 '$3 == p && $1 * 1000000 + $2 > t - 20000 &&
		$1 * 1000000 + $2 <= t + 10000 { s += $9 } END { print s + 0 }' $WIN.1)" 1 \
		"the task started in its bucket (or the one before)"
	echo now > "$PARAMS/recorder_freeze"
	wait_until "the window around now" _windows_frozen 2 || fail "$(status recorder_windows) windows"
	read_windows 1
	expect_range "$(head -1 $WIN.2 | awk '{ print $5 * $6 }')" 300000 310000 \
		"the window around now: 300 ms, whole buckets"
	expect_eq "$(status recorder_freezes) $(status recorder_slow)" "2 0" \
		"status recorder_freezes, recorder_slow"
}

# A span the fine ring no longer holds is not frozen as zeros: with a
# ring of 1 s (100 buckets of 10 ms), a record's span written once the
# ring has moved past it is a window dropped, counted, none given out;
# recorder_freeze at load is refused in one line.
case_freeze_old() {
	local rec t0 dur m
	series_setup 10000 100 lports=$PORT
	echo 1 > "$PARAMS/recorder"
	start_server -- --port $PORT --conns 10 > /dev/null
	"$PEER" client --port $PORT --requests 3 > /dev/null || fail "client"
	wait_untracked
	drain_logs $LOG
	rec=$(records $LOG R | tail -1)
	read -r t0 dur < <(echo "$rec" | awk '{ printf "%.0f %d\n", $3 * 1000000 + $4, $8 }')
	# the ring (1 s) past the task and its 100 ms: the clock past that,
	# then folds (recorder_folded: three buckets more and two folds)
	wait_until "the ring's length past the task" _after_us $((t0 + dur + 100000 + 1000000)) ||
		fail "the clock"
	recorder_folded 10000
	echo "$rec" | awk '{ print $3, $4, $8 }' > "$PARAMS/recorder_freeze"
	wait_until "the span taken" eval '[ "$(status recorder_windows_dropped)" = 1 ]' ||
		fail "dropped $(status recorder_windows_dropped), given out $(status recorder_windows)"
	recorder_folded 10000
	expect_eq "$(status recorder_windows) $(wc -c < "$DBG/rt-network-windows")" "0 0" \
		"no window of zeros given out"
	expect_eq "$(status recorder_windows_bytes)" 0 "status recorder_windows_bytes"
	mod_unload
	m=$(kmsg_mark)
	expect_fail "recorder_freeze at load" insmod "$MODULE" lports=$PORT recorder_freeze=now
	kmsg_since "$m" | grep -q "tcp_rt: recorder_freeze: written while the recorder runs, not at load" ||
		fail "$(kmsg_since "$m")"
}

# The coarse ring (recorder_coarse, stage 4): none by default (status
# recorder_coarse_us 0, its file empty); a bad value refused in one line;
# 3000 buckets of 10 ms beside a fine ring of 2000 x 1 ms, its bytes in
# series_bytes exactly, held to the fine ring by oracle/coarse_check.py -
# each 10 ms bucket of every line (two ports, the host, every measure)
# the sum of its ten, the open gauge its last's, flows the most of one -
# while a task of port+1 is held open (every fine bucket a line, so the
# fine read's span is known) and two bursts of 20 tasks come on port,
# whose 40 requests' bytes the coarse ring has, then a client's traffic
# going on while both are read; the coarse ring reaching back 2 s or
# more before the fine one.
_coarse_older() {	# us: rt-network-recorder-coarse begins that much before rt-network-recorder
	local c f
	c=$(head -1 "$DBG/rt-network-recorder-coarse" | awk '{ printf "%d%06d", $1, $2 }')
	f=$(head -1 "$DBG/rt-network-recorder" | awk '{ printf "%d%06d", $1, $2 }')
	[ -n "$c" ] && [ -n "$f" ] && [ $((f - c)) -ge "$1" ]
}

coarse_bytes_in() {	# of $PORT, in the coarse ring now
	awk -v p=$PORT '$3 == p { s += $4 } END { print s + 0 }' "$DBG/rt-network-recorder-coarse"
}

_held_open() {	# port: its line in the fine ring shows a task open
	awk -v p="$1" '$3 == p && $15 > 0 { n++ } END { exit !n }' "$DBG/rt-network-recorder"
}

case_coarse() {
	local m b0 b1 held bg r burst out
	series_setup 1000 2000 lports=$PORT,$((PORT + 1))
	echo $ALL_EXT > "$PARAMS/series_ext"
	echo 1 > "$PARAMS/series_host"
	expect_eq "$(cat "$PARAMS/recorder_coarse")" 0 "recorder_coarse at load"
	m=$(kmsg_mark)
	expect_fail "recorder_coarse 100001" sh -c "echo 100001 > $PARAMS/recorder_coarse"
	expect_eq "$(kmsg_since "$m" | wc -l)" 1 "one tcp_rt: line for the refused value"
	expect_eq "$(cat "$PARAMS/recorder_coarse")" 0 "recorder_coarse kept"
	echo 1 > "$PARAMS/recorder"
	expect_eq "$(status recorder_coarse_us)" 0 "status recorder_coarse_us without a coarse ring"
	expect_eq "$(wc -c < "$DBG/rt-network-recorder-coarse")" 0 "rt-network-recorder-coarse without one"
	b0=$(status series_bytes)
	echo 0 > "$PARAMS/recorder"
	echo 3000 > "$PARAMS/recorder_coarse"
	echo 1 > "$PARAMS/recorder"
	expect_eq "$(status recorder_coarse_us)" 10000 "status recorder_coarse_us"
	b1=$(status series_bytes)
	# 3000 buckets x (3 lines x 20 counters x 4 bytes + a tag of 8)
	expect_eq $((b1 - b0)) $((3000 * (3 * 20 * 4 + 8))) "the coarse ring's bytes in series_bytes"
	start_server -- --port $((PORT + 1)) --slow-every 1 --slow-ms 60000 > /dev/null
	start_server -- --port $PORT --req-bytes 300 --resp-bytes 3000 --conns 41 > /dev/null
	"$PEER" client --port $((PORT + 1)) --requests 1 > /dev/null 2>&1 &
	held=$!
	wait_until "the held task open" _held_open $((PORT + 1)) || fail "no task open"
	wait_until "the coarse ring 2 s older than the fine one" _coarse_older 2000000 ||
		fail "the rings' first lines: $(head -1 "$DBG/rt-network-recorder-coarse"); $(head -1 "$DBG/rt-network-recorder")"
	for burst in 1 2; do
		"$PEER" client --port $PORT --conns 20 --requests 1 --req-bytes 300 \
			--resp-bytes 3000 > /dev/null || fail "client $burst"
	done
	wait_until "the bursts' 40 records" eval '[ "$(status records_R)" -ge 40 ]' ||
		fail "records_R $(status records_R)"
	recorder_folded 10000
	# the bursts' bytes, from the coarse ring's 30 s (however slow the
	# guest, it still holds them)
	expect_eq "$(coarse_bytes_in)" $((40 * 300)) \
		"the coarse ring's bytes in of port $PORT: the clients' 40 requests (status recorder_late $(status recorder_late))"
	# then traffic going on while both rings are read, so that the
	# buckets both hold whole (the fine ring's last 2 s) have some
	"$PEER" client --port $PORT --requests 1000000 --think-ms 5 --req-bytes 300 \
		--resp-bytes 3000 > /dev/null 2>&1 &
	bg=$!
	r=$(status records_R)
	wait_until "the traffic going on" eval '[ "$(status records_R)" -ge $((r + 20)) ]' ||
		fail "no traffic: records_R $(status records_R)"
	cat "$DBG/rt-network-recorder-coarse" > $SER.coarse
	cat "$DBG/rt-network-recorder" > $SER
	# the clients, killed: their exit status is the signal's
	kill $held $bg 2> /dev/null || true
	wait $held $bg 2> /dev/null || true
	out=$(/usr/bin/python3 "$SELFTESTS/oracle/coarse_check.py" --fine $SER \
		--coarse $SER.coarse --port $((PORT + 1)) --bytes-port $PORT \
		--width-us 1000 --older-us 2000000 --min-buckets 100) || {
		echo "$out" | sed 's/^/# /'
		fail "the coarse ring differs from the fine one"
	}
	diag "$out"
	echo 0 > "$PARAMS/recorder"
	expect_eq "$(wc -c < "$DBG/rt-network-recorder-coarse")" 0 "rt-network-recorder-coarse once ended"
	expect_eq "$(status recorder_coarse_us)" 0 "status recorder_coarse_us once ended"
}

run_case "recorder: off by default, nothing runs" case_off
run_case "recorder: two bursts of tasks recorded as a run counts them, read twice alike, a run refused meanwhile" case_bursts
run_case "recorder: the host's line and every measure; unloaded while recording" case_host_line
run_case "recorder: bad values and conflicts refused with one line; at load" case_params
run_case "recorder: slow tasks' windows frozen, 200 ms before to 100 ms after each, read once, held to the records" case_windows
run_case "recorder: recorder_freeze, a record's span or now, frozen as a slow task's; bad writes refused with one line" case_freeze
run_case "recorder: a span older than the ring is a window dropped, not one of zeros; recorder_freeze at load refused" case_freeze_old
run_case "recorder: the coarse ring, each bucket its ten fine ones summed (open: the last, flows: the most), reaching back further; its bytes; none by default" case_coarse
run_case "recorder: eight windows wait unread at most, the next dropped and counted; room again once read; unloaded with one unread" case_windows_full
done_testing
