#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Server-side tasks: R, W, N and E records for connections on lports.
#
# Record fields, counting from 1 with the 7-field header
# "V6 type sec usec peer local":
#   R: 7 sent 8 duration 9 min_rtt 10 retrans 11 task_seq 12 process
#      13 upload 14 recv 15 ooo 16 mss
#   W: 7 sent 8 duration 9 min_rtt 10 retrans 11 task_seq 12 process
#      13 upload 14 unacked 15 mss
#   N: 7 task_seq 8 duration 9 recv 10 ooo 11 mss
#   E: 7 last_task_seq 8 sent 9 unacked 10 recv 11 retrans 12 min_rtt
. "$(dirname "$0")/lib.sh"

LOG=/tmp/server.log
PORT=7100

setup() {	# module params...
	rm -f $LOG
	mod_load lports=$PORT "$@"
}

case_one_request() {
	setup
	start_server -- --port $PORT --req-bytes 300 --resp-bytes 5000 \
		--delay-ms 200 > /dev/null
	"$PEER" client --port $PORT --req-bytes 300 --resp-bytes 5000 \
		> /dev/null || fail "client"
	wait_untracked
	drain_logs $LOG
	cat $LOG | sed 's/^/# /'
	expect_eq "$(count_records $LOG R)" 1 "R records"
	expect_eq "$(count_records $LOG E)" 1 "E records"
	expect_eq "$(awk '{print $2}' $LOG | tr -d '\n')" RE "record order"
	expect_within "$(field $LOG R 12)" 200000 40000 "process_time (us)"
	expect_eq "$(field $LOG R 7)" 5000 "sent_bytes"
	expect_eq "$(field $LOG R 14)" 300 "recv_bytes"
	expect_eq "$(field $LOG R 11)" 1 "task_seq"
	expect_eq "$(field $LOG R 15)" 0 "out_of_order"
	expect_ge "$(field $LOG R 8)" "$(field $LOG R 12)" "duration >= process"
	expect_eq "$(field $LOG E 7)" 1 "E last_task_seq"
	expect_eq "$(field $LOG E 8)" 5000 "E total_sent"
	expect_eq "$(field $LOG E 9)" 0 "E unacked"
	expect_eq "$(field $LOG E 10)" 300 "E total_recv"
	expect_eq "$(field $LOG E 11)" 0 "E total_retrans"
	# header: addresses and ports of this loopback connection
	records $LOG R | grep -qE "^V6 R [0-9]+ [0-9]{6} 127\.0\.0\.1:[0-9]+ 127\.0\.0\.1:$PORT " ||
		fail "R header"
}

case_upload_time() {
	setup
	start_server -- --port $PORT --req-bytes 2000 --resp-bytes 100 > /dev/null
	"$PEER" client --port $PORT --req-bytes 2000 --req-parts 2 \
		--part-gap-ms 150 --resp-bytes 100 > /dev/null || fail "client"
	wait_untracked
	drain_logs $LOG
	expect_eq "$(count_records $LOG R)" 1 "R records"
	expect_within "$(field $LOG R 13)" 150000 40000 "upload_time (us)"
	expect_eq "$(field $LOG R 14)" 2000 "recv_bytes"
}

run_case "one request: R with exact sizes and process time, then E" case_one_request
run_case "request in two parts 150 ms apart: upload time" case_upload_time
done_testing
