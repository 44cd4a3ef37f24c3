#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Module life cycle: load/unload, debugfs files, status, deactivate and the
# per-connection module reference.
. "$(dirname "$0")/lib.sh"

case_load_unload_cycles() {
	local i
	for i in $(seq 10); do
		mod_load lports=80
		[ -e "$DBG/status" ] || fail "cycle $i: no status file"
		rmmod tcp_rt || fail "cycle $i: rmmod"
		[ ! -e "$DBG" ] || fail "cycle $i: $DBG left behind"
		[ ! -e /sys/module/tcp_rt ] || fail "cycle $i: module still there"
	done
}

# rmmod while two writers start series runs and a third ends them, as fast
# as they can: a run started during the module's exit must not leave its
# work queued to fire from freed memory (TCP_RT_RACE_ROUNDS rounds, 200 on
# the debug kernel).
case_series_run_vs_rmmod() {
	local i rounds=${TCP_RT_RACE_ROUNDS:-40} w
	for i in $(seq "$rounds"); do
		mod_load lports=80 series_us=100 series_buckets=100
		w=()
		series_writer 1 & w+=($!)
		series_writer 1 & w+=($!)
		series_writer 0 & w+=($!)
		wait_until "a run started" series_ran || fail "round $i: no run"
		rmmod tcp_rt || fail "round $i: rmmod"
		kill "${w[@]}" 2> /dev/null || true
		wait "${w[@]}" || true
	done
}

series_writer() {	# 0|1: refused while a run is on (EBUSY), then gone
	while :; do
		echo "$1" > "$PARAMS/series_run" || true
	done 2> /dev/null
}

series_ran() {
	[ "$(status series_runs)" -gt 0 ]
}

case_status_keys() {
	local k
	mod_load
	for k in version load_id active tracked records_R records_W records_N \
		 records_P records_E log_subbufs_overwritten log_format \
		 log_bin_subbufs_overwritten log_bin_records_overwritten \
		 reads_lapped peek_records_skipped peek_cut_short stats_lines client_cut \
		 alloc_failed pool_empty probe_missed conns_sampled_out fastopen_missed \
		 released released_open hook_check hook_check_us \
		 records_sampled_out conn_table_buckets; do
		grep -q "^$k [0-9a-z.]*$" "$DBG/status" || fail "status has no '$k'"
	done
	expect_eq "$(status active)" 1 "active"
	expect_eq "$(status tracked)" 0 "tracked"
}

# Connections held open by both sides until the client is killed.
held() {	# port n
	"$PEER" client --port "$1" --conns "$2" --requests 1 --end wait-server \
		> /dev/null 2>&1 &
}

refcnt() {
	cat /sys/module/tcp_rt/refcnt
}

tracked_is() {
	[ "$(status tracked)" = "$1" ]
}

case_deactivate_refcount() {
	local port=7001 out=/tmp/deact.log client
	mod_load lports=$port
	start_server -- --port $port --conns 3 > /dev/null
	held $port 2
	client=$!
	wait_until "2 tracked" tracked_is 2 || fail "tracked: $(status tracked)"
	expect_eq "$(refcnt)" 2 "module references (lsmod 'Used by')"

	echo 1 > "$DBG/deactivate"
	expect_eq "$(status active)" 0 "active after deactivate"
	"$PEER" client --port $port --requests 1 || fail "client after deactivate"
	expect_eq "$(status tracked)" 2 "tracked after a new connection"
	expect_fail "rmmod with tracked connections" rmmod tcp_rt
	[ -d /sys/module/tcp_rt ] || fail "module gone"

	wait_until "the held connections answered" answered $port 2 1000 ||
		fail "bytes acked: $(bytes_acked $port | tr '\n' ' ')"
	kill "$client"
	wait_untracked
	expect_eq "$(refcnt)" 0 "module references after close"
	drain_logs $out
	expect_eq "$(count_records $out R)" 2 "R records"
	expect_eq "$(count_records $out E)" 2 "E records"
	rmmod tcp_rt || fail "rmmod once unused"
}

# Server sockets on PORT with BYTES or more acknowledged.
acked_at_least() {	# port bytes n
	[ "$(bytes_acked "$1" | awk -v b="$2" '$1 >= b { n++ } END { print n + 0 }')" = "$3" ]
}

# deactivate=2 lets go of connections still open: two idle ones whose
# response was all acknowledged (an R each) and one whose client stopped
# reading a 2 MB response (an open task: released_open), then E for each.
# rmmod succeeds at once; the module loaded again (an upgrade) tracks new
# connections on the port, and the released ones, closed later, write
# nothing.
case_release() {
	local port=7002 out=/tmp/release.log held_pid stuck_pid
	mod_load lports=$port
	start_server -- --port $port --conns 4 --resp-bytes 2000000 > /dev/null
	"$PEER" client --port $port --conns 2 --requests 1 --resp-bytes 2000000 \
		--end wait-server > /dev/null 2>&1 &
	held_pid=$!
	"$PEER" client --port $port --requests 0 --resp-bytes 2000000 \
		--rcvbuf 4096 --end stop-reading --hold-ms 600000 > /dev/null 2>&1 &
	stuck_pid=$!
	wait_until "3 tracked" tracked_is 3 || fail "tracked: $(status tracked)"
	wait_until "two responses acknowledged" acked_at_least $port 2000000 2 ||
		fail "bytes acked: $(bytes_acked $port | tr '\n' ' ')"
	echo 2 > "$PARAMS/deactivate"
	expect_eq "$(status tracked)" 0 "tracked after the release"
	expect_eq "$(refcnt)" 0 "module references after the release"
	expect_eq "$(status released) $(status released_open)" "3 1" "released, released_open"
	drain_logs $out
	sed 's/^/# /' $out
	expect_eq "$(count_records $out R) $(count_records $out W) $(count_records $out N)" \
		"2 0 0" "R W N records"
	expect_eq "$(count_records $out E)" 3 "E records"
	expect_eq "$(field $out R 7 | sort -u)" 2000000 "R sent_bytes"
	rmmod tcp_rt || fail "rmmod right after the release"

	# the upgrade: the same port, the released connections still open
	mod_load lports=$port
	"$PEER" client --port $port --requests 1 --resp-bytes 2000000 > /dev/null ||
		fail "client after the reload"
	kill "$held_pid" "$stuck_pid"
	wait "$held_pid" "$stuck_pid" 2> /dev/null || true
	wait_untracked
	rm -f $out
	drain_logs $out
	sed 's/^/# /' $out
	expect_eq "$(count_records $out R) $(count_records $out W) $(count_records $out E)" \
		"1 0 1" "R W E records after the reload"
	expect_eq "$(status released)" 0 "released after the reload"
}

# A release racing a listener's close (issue 45): the listener holds
# BACKLOG established, tracked connections it never accepted; it closes
# (inet_csk_listen_stop() closes each under the child's spinlock alone)
# while deactivate=2 releases them, the order alternating by round.  The
# release must never work on a connection its close hook works on: no
# WARN (listen_stop's "child owned by user", before the fix), no report;
# tracked 0 as the write returns and rmmod at once, every round.
BACKLOG=${TCP_RT_BACKLOG_CONNS:-2000}
RELEASE_ROUNDS=${TCP_RT_RELEASE_ROUNDS:-10}

case_release_vs_listener_close() {
	local port=7003 r line mark released=0
	mark=$(kmsg_mark)
	for ((r = 1; r <= RELEASE_ROUNDS; r++)); do
		mod_load lports=$port
		coproc BPEER { exec python3 "$SELFTESTS/backlog_peer.py" $port "$BACKLOG"; }
		read -r -t $((WAIT_S * 2)) line <&"${BPEER[0]}" || true
		expect_eq "$line" ready "backlog peer (round $r)"
		wait_until "$BACKLOG tracked" tracked_is "$BACKLOG" ||
			fail "tracked: $(status tracked) (round $r)"
		if ((r % 2)); then
			echo close >&"${BPEER[1]}"
			echo 2 > "$PARAMS/deactivate"
		else
			echo 2 > "$PARAMS/deactivate" &
			echo close >&"${BPEER[1]}"
			wait $!
		fi
		expect_eq "$(status tracked)" 0 "tracked as the release returned (round $r)"
		released=$((released + $(status released)))
		rmmod tcp_rt || fail "rmmod right after the release (round $r)"
		read -r -t "$WAIT_S" line <&"${BPEER[0]}" || true
		expect_eq "$line" closed "listener closed (round $r)"
		echo quit >&"${BPEER[1]}"
		wait "$BPEER_PID" || fail "backlog peer exit (round $r)"
	done
	diag "$RELEASE_ROUNDS rounds of $BACKLOG: $released released, the rest closed by their listener"
	expect_no_kernel_report "$mark"
}

# A release meeting a socket its owner holds (issue 64, D1): one tracked
# connection's send() waits in a page fault of its buffer (held_send:
# userfaultfd) while HELD_CONNS others, established and never accepted
# (backlog_peer.py), are tracked too.  The release steps over the held
# one, lets go of every other, tries the held one again for half a
# second, and returns: a parameter read issued while it runs (it holds
# the parameter lock) answers within a second - before, the held one's
# chain was tried 5,000 times 1 to 2 ms apart, the lock held all along,
# and the rest of its chain left tracked.  tracked 1 after it, said in
# the kernel log; once the fault is served and the connection closed,
# nothing is tracked and rmmod succeeds.  The reads are a loop's,
# started before the write, so that some are under way while it runs
# however slow the guest: a poll of status for the release under way,
# then one read, came after the half second on the debug kernel.
# (fewer where the kernel is slower, TCP_RT_SLOW: the walk is theirs)
HELD_CONNS=${TCP_RT_HELD_CONNS:-$((4000 / TCP_RT_SLOW))}

# Read FILE again and again until killed, a line for each read: its start
# and its end, in microseconds ($EPOCHREALTIME, no process forked, so one
# read follows another at once however slow the machine).
param_reads() {	# file
	local t
	while :; do
		t=${EPOCHREALTIME/./}
		read -r _ < "$1" || true
		echo "$t ${EPOCHREALTIME/./}"
	done
}

case_release_held() {
	local port=7004 ready=/tmp/held.ready held line mark reads w0 w1 st n ms
	mark=$(kmsg_mark)
	mod_load lports=$port,$((port + 1))
	coproc BPEER { exec python3 "$SELFTESTS/backlog_peer.py" $port "$HELD_CONNS"; }
	read -r -t $((WAIT_S * 2)) line <&"${BPEER[0]}" || true
	expect_eq "$line" ready "backlog peer"
	rm -f $ready
	"$SELFTESTS/held_send" --port $((port + 1)) --ready-file $ready &
	held=$!
	wait_until "send() held in its page fault" test -s $ready || fail "held_send did not get held"
	wait_until "$((HELD_CONNS + 1)) tracked" tracked_is $((HELD_CONNS + 1)) ||
		fail "tracked: $(status tracked)"
	param_reads "$PARAMS/log_sample" > /tmp/param_reads &
	reads=$!
	wait_until "a parameter read" test -s /tmp/param_reads ||
		fail "the parameter reads: nothing read"
	st=0
	w0=${EPOCHREALTIME/./}
	echo 2 > "$PARAMS/deactivate" || st=1
	w1=${EPOCHREALTIME/./}
	kill $reads
	wait $reads 2> /dev/null || true
	expect_eq "$st" 0 "the release's write"
	# the reads under way while the write ran (one begun just before it
	# may wait for its lock all along): how many, the longest (ms)
	read -r n ms < <(awk -v w0="$w0" -v w1="$w1" '
		$1 <= w1 && $2 >= w0 && NF == 2 { n++; if ($2 - $1 > m) m = $2 - $1 }
		END { printf "%d %d\n", n, m / 1000 }' /tmp/param_reads)
	diag "the release took $(((w1 - w0) / 1000)) ms; $n parameter reads while it ran, the longest $ms ms; released $(status released)"
	expect_ge "$n" 1 "parameter reads while the release ran"
	expect_le "$ms" $((1000 * TCP_RT_SLOW)) "the longest parameter read while the release ran (ms)"
	expect_eq "$(status tracked)" 1 "tracked after the release: the held connection alone"
	expect_eq "$(status released)" "$HELD_CONNS" "released: every connection but the held one"
	kmsg_since "$mark" 'left tracked' | grep -q 'release: 1 connection(s) left tracked: a process holds their socket' ||
		fail "the kernel log: $(kmsg_since "$mark" 'release')"
	kill -USR1 $held
	wait $held || fail "held_send after its fault was served"
	wait_untracked
	rmmod tcp_rt || fail "rmmod"
	echo quit >&"${BPEER[1]}"
	wait "$BPEER_PID" || fail "backlog peer exit"
	expect_no_kernel_report "$mark"
}

# The load-time hook check (tcp_rt_hookcheck.c): every load makes one
# loopback exchange its hooks must see.  With every port tracked, none of
# that exchange may show: it is the check's, not the engine's.
case_hook_check() {
	local mark
	mark=$(kmsg_mark)
	mod_load lports_range=1,65535 pports_range=1,65535
	expect_eq "$(status hook_check)" 1 "hook_check"
	expect_ge "$(status hook_check_us)" 1 "hook_check_us"
	diag "the check took $(status hook_check_us) us"
	expect_eq "$(status tracked)" 0 "connections tracked after the check"
	expect_eq "$(cat "$DBG"/rt-network-log* | wc -c)" 0 "bytes in the logs after the check"
	expect_eq "$(kmsg_since "$mark" 'hook check' | wc -l)" 0 "hook check lines in the kernel log"
	rmmod tcp_rt || fail "rmmod"
}

# A build whose ACK hook sits on a function no exchange calls
# (make deadhook): its load is refused in one line naming that function,
# and leaves nothing; hook_check=0 loads it all the same.
DEADHOOK_KO=$SELFTESTS/deadhook/tcp_rt.ko

case_hook_check_refuses() {
	local mark line
	[ -f "$DEADHOOK_KO" ] || {
		diag "no $DEADHOOK_KO (make deadhook): built by make check and check-debug only"
		exit 4
	}
	mark=$(kmsg_mark)
	expect_fail "load of the dead-hook build" insmod "$DEADHOOK_KO" lports=80
	line=$(kmsg_since "$mark" 'hook check')
	diag "$line"
	expect_eq "$(wc -l <<< "$line")" 1 "hook check lines"
	grep -q 'tcp_rt: hook check: tcp_v4_mtu_reduced saw no ACK of data' <<< "$line" ||
		fail "the line does not name tcp_v4_mtu_reduced"
	[ ! -e /sys/module/tcp_rt ] || fail "module left loaded"
	[ ! -e "$DBG" ] || fail "$DBG left behind"
	insmod "$DEADHOOK_KO" lports=80 hook_check=0 || fail "insmod hook_check=0"
	expect_eq "$(status hook_check)" 0 "hook_check"
	rmmod tcp_rt || fail "rmmod"
}

run_case "10 load/unload cycles leave nothing behind" case_load_unload_cycles
run_case "status file has every counter" case_status_keys
run_case "rmmod racing series_run=1 writers leaves no work behind" case_series_run_vs_rmmod
run_case "deactivate, module reference per connection, rmmod EBUSY" case_deactivate_refcount
run_case "deactivate=2 releases open connections: rmmod at once, then a reload" case_release
run_case "deactivate=2 racing a listener's close of $BACKLOG unaccepted connections, $RELEASE_ROUNDS rounds: no WARN, tracked 0, rmmod" case_release_vs_listener_close
run_case "deactivate=2 with a socket its owner holds (a send() in a page fault) beside $HELD_CONNS idle connections: the rest released, parameters answer within a second, rmmod once it lets go" case_release_held
run_case "hook check: the load proves its hooks on a loopback exchange, and tracks none of it" case_hook_check
run_case "hook check: a build with a hook nothing calls is refused, naming it" case_hook_check_refuses
done_testing
