#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A Secure Boot host: the kernel locked down (integrity, then
# confidentiality) with the module loaded.  Everything a user does must
# still work: the logs and the stats read whole and once through cat and
# tcprt (poll included), the binary logs (log_format=both) and their peek
# too, status reads, deactivation goes through the module parameter.  Lockdown can only be raised and an unsigned module cannot be
# loaded under it: this script runs last in its VM, its cases share one
# load of the module, and the last one unloads it.
. "$(dirname "$0")/lib.sh"

PORT=7400
LOCKDOWN=/sys/kernel/security/lockdown
TCPRT=$TOP/tools/tcprt/tcprt
BIN2TEXT=$SELFTESTS/bin2text
W=/tmp/lockdown
KEEP_MODULE=1

lockdown_mode() {
	sed -n 's/.*\[\([a-z]*\)\].*/\1/p' "$LOCKDOWN"
}

workload() {	# requests
	start_server -- --port $PORT --req-bytes 300 --resp-bytes 5000 > /dev/null
	"$PEER" client --port $PORT --req-bytes 300 --resp-bytes 5000 \
		--requests "$1" > /dev/null || fail "client"
	wait_untracked
}

case_raise() {
	mountpoint -q /sys/kernel/security ||
		mount -t securityfs securityfs /sys/kernel/security
	[ -e $LOCKDOWN ] || { echo "# no $LOCKDOWN: kernel without the lockdown LSM"; exit 4; }
	mkdir -p $W
	mod_load lports=$PORT stats_interval=1 log_format=both
	echo integrity > $LOCKDOWN || fail "raise lockdown"
	expect_eq "$(lockdown_mode)" integrity "lockdown mode"
	kmsg_mark > $W/mark
}

case_cat() {
	[ -d /sys/module/tcp_rt ] || fail "module not loaded"
	capture_start $PORT
	workload 20
	capture_stop
	drain_logs $W/cat.log
	oracle_check $W/cat.log --lport $PORT
	expect_eq "$(count_records $W/cat.log R)" 20 "R records"
	expect_eq "$(count_records $W/cat.log E)" 1 "E records"
	expect_eq "$(field $W/cat.log R 14 | sort -u)" 300 "recv_bytes"
	expect_eq "$(cat "$DBG"/rt-network-log* | wc -c)" 0 "bytes left after reading"
}

case_tcprt_read() {
	workload 7
	"$TCPRT" read --format csv --reorder 0 > $W/read.csv 2> $W/read.err ||
		fail "tcprt read: $(cat $W/read.err)"
	expect_eq "$(grep -c '^R,' $W/read.csv)" 7 "R records"
	expect_eq "$(grep -c '^E,' $W/read.csv)" 1 "E records"
	"$TCPRT" read --format csv > $W/again.csv || fail "tcprt read again"
	expect_eq "$(grep -c '^[RE],' $W/again.csv)" 0 "records read twice"
}

followed() {	# count
	[ "$(grep -c '^R,' $W/follow.csv)" = "$1" ]
}

case_tcprt_follow() {
	local pid
	"$TCPRT" read --follow --format csv --reorder 0.5 > $W/follow.csv 2> $W/follow.err &
	pid=$!
	workload 5
	wait_until "5 records followed" followed 5 ||
		fail "followed: $(cat $W/follow.csv $W/follow.err)"
	kill -TERM $pid
	wait $pid || fail "tcprt read --follow exited with $?: $(cat $W/follow.err)"
}

# The binary logs, which no case consumed: every R record since the load,
# in the peek (its operations are the module's own: read-only, no mmap,
# no ioctl) and in rt-network-bin<cpu> made text; the peek again after
# that consuming read, and tcprt read --peek, still all of them.
case_bin_peek() {
	local f n=0 r
	r=$(status records_R)
	expect_eq "$(cat "$DBG"/rt-network-peek* | grep -c '^V6 R ')" "$r" "R records peeked"
	for f in "$DBG"/rt-network-bin*; do
		"$BIN2TEXT" < "$f" > $W/bin.txt 2> /dev/null || fail "bin2text < $f"
		n=$((n + $(grep -c '^V6 R ' $W/bin.txt)))
	done
	expect_eq "$n" "$r" "R records of the binary files"
	expect_eq "$(cat "$DBG"/rt-network-peek* | grep -c '^V6 R ')" "$r" "R records peeked again"
	expect_eq "$("$TCPRT" read --peek --format csv | grep -c '^R,')" "$r" "tcprt read --peek"
}

stats_line() {
	cat "$DBG/rt-network-stats" >> $W/stats
	grep -q " all $PORT " $W/stats
}

case_stats() {
	workload 3
	wait_until "a stats line for port $PORT" stats_line ||
		fail "stats: $(cat $W/stats)"
	sed 's/^/# /' $W/stats | tail -n 2
	expect_ge "$(awk -v p=$PORT '$2 == "all" && $3 == p { n += $12 } END { print n + 0 }' $W/stats)" 3 \
		"requests counted in the stats lines"
}

case_confidentiality() {
	drain_logs $W/stats-case.log
	expect_eq "$(count_records $W/stats-case.log R)" 3 "R records of the stats case"
	echo confidentiality > $LOCKDOWN || fail "raise lockdown"
	expect_eq "$(lockdown_mode)" confidentiality "lockdown mode"
	rm -f $W/conf.log
	workload 4
	drain_logs $W/conf.log
	expect_eq "$(count_records $W/conf.log R)" 4 "R records"
	expect_eq "$(status records_R)" 39 "status: R records since load"
}

# A series run through its parameters and its 0400 file (no mmap).
case_series() {
	local pid
	"$TCPRT" series --us 10000 --buckets 1000 --format raw > $W/series \
		2> $W/series.err &
	pid=$!
	wait_until "the run to start" series_running || fail "no run"
	workload 6
	echo 0 > $PARAMS/series_run || fail "end the run"
	wait $pid || fail "tcprt series: $(cat $W/series.err)"
	sed 's/^/# /' $W/series | tail -n 3
	expect_eq "$(awk -v p=$PORT '$3 == p { s += $9 } END { print s + 0 }' $W/series)" 6 \
		"tasks started in the series"
	expect_eq "$(awk -v p=$PORT '$3 == p { s += $10 } END { print s + 0 }' $W/series)" 6 \
		"tasks done in the series"
	drain_logs $W/series.log
	expect_eq "$(count_records $W/series.log R)" 6 "R records"
}

case_deactivate() {
	expect_eq "$(status active)" 1 "active"
	expect_eq "$(cat $PARAMS/deactivate)" 0 "deactivate"
	expect_fail "the debugfs file, under lockdown" sh -c "echo 1 > $DBG/deactivate"
	echo 1 > $PARAMS/deactivate || fail "write the parameter"
	expect_eq "$(cat $PARAMS/deactivate)" 1 "deactivate"
	expect_eq "$(status active)" 0 "active"
	expect_fail "undo a deactivation" sh -c "echo 0 > $PARAMS/deactivate"
	expect_eq "$(cat $PARAMS/deactivate)" 1 "deactivate after a refused write"
	local before
	before=$(status records_E)
	workload 2
	expect_eq "$(status records_E)" "$before" "E records after deactivation"
	# the refused write to the debugfs file is the only notice
	expect_eq "$(kmsg_since "$(cat $W/mark)" Lockdown: | grep -vc 'debugfs access is restricted')" 0 \
		"lockdown notices other than the debugfs write"
	expect_eq "$(kmsg_since "$(cat $W/mark)" Lockdown: | wc -l)" 1 "lockdown notices"
}

# A reader that still has a log open when the module goes: the unload must
# not wait for it, and its next read ends instead of touching freed memory
# (KASAN watches that on the debug kernel).
case_unload_with_reader() {
	local pid mark
	mark=$(kmsg_mark)
	sleep infinity < "$DBG/rt-network-log0" &
	pid=$!
	# the child opens the file itself, after the fork: await it
	wait_until "the reader's open" eval \
		'readlink /proc/$pid/fd/0 | grep -q rt-network-log0$' ||
		fail "the reader did not open the log"
	wait_until "tcp_rt unused" mod_unused || fail "module still in use"
	rmmod tcp_rt || fail "rmmod with a reader"
	kmsg_since "$mark" | grep -q "1 relay file(s) still open" ||
		fail "no word of the open file: $(kmsg_since "$mark")"
	kill $pid
	wait $pid 2> /dev/null || true
}

run_case "lockdown raised to integrity with the module loaded" case_raise
run_case "under lockdown: cat reads every record once, as on the wire" case_cat
run_case "under lockdown: tcprt read" case_tcprt_read
run_case "under lockdown: tcprt read --follow (poll)" case_tcprt_follow
run_case "under lockdown: the binary logs and their peek" case_bin_peek
run_case "under lockdown: the stats lines read" case_stats
run_case "confidentiality lockdown: the logs and status still read" case_confidentiality
run_case "confidentiality lockdown: a series run, tcprt series" case_series
run_case "under lockdown: deactivation through the parameter" case_deactivate
run_case "unload with a log still open" case_unload_with_reader
done_testing
