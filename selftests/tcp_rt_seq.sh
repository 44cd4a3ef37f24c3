#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Records numbered where they are made (issue 46): log_ext's seq, each
# record's number in its CPU's log, and status's load_id.  The numbers are
# per CPU, so each log file is kept apart (drain_each) and held to the
# order its records were written in.
#
# Fields before seq, the 6-field header "V6 type sec usec peer local"
# included: R 16, W 15, N 11, P 16, E 12 (selftests/tcp_rt_server.sh,
# tcp_rt_client.sh); with seq alone in log_ext, one more each.
. "$(dirname "$0")/lib.sh"

LOGDIR=/tmp/seq.logs
PORT=7950	# R, N, E; a peer port too: P and E
WPORT=7951	# W: a response the client stops reading

# Append what each per-CPU log holds to a file of its own in $LOGDIR.
drain_each() {
	local f
	mkdir -p $LOGDIR
	for f in "$DBG"/rt-network-log*; do
		cat "$f" >> "$LOGDIR/${f##*/}"
	done
}

logs_reset() {
	rm -rf $LOGDIR
	mkdir -p $LOGDIR
}

# Every record read, of every CPU's log.
all_records() {
	cat $LOGDIR/rt-network-log* | awk '$1 == "V6"'
}

# The numbered records of a file, counted.
numbered() {	# file
	awk '$1 == "V6" && $NF ~ /^seq=/ { n++ } END { print n + 0 }' "$1"
}

# The numbers of a file's numbered records are 0, 1, 2, ... in file order;
# the first out of place is printed.
seq_consecutive() {	# file
	awk '$1 == "V6" && $NF ~ /^seq=/ {
		want = "seq=" n++
		if ($NF != want) {
			print "# " FILENAME ":" FNR ": " $NF ", expected " want
			bad = 1
			exit
		}
	}
	END { exit bad }' "$1"
}

# Each log's numbered records are 0..k-1 in its order; NUMBERED is the
# sum of k.
expect_logs_consecutive() {
	local f
	NUMBERED=0
	for f in $LOGDIR/rt-network-log*; do
		seq_consecutive "$f" || fail "${f##*/}: numbers out of order"
		diag "${f##*/}: $(numbered "$f") numbered records of $(awk '$1 == "V6"' "$f" | wc -l)"
		NUMBERED=$((NUMBERED + $(numbered "$f")))
	done
}

held_open() {	# port: one established client connection to it
	[ "$(ss -Htn state established "( dport = :$1 )" | wc -l)" = 1 ]
}

tracked_is() {	# n
	[ "$(status tracked)" = "$1" ]
}

# log_ext=seq from the load: every record of every type ends with seq=N
# after its documented fields, and each CPU's log holds 0..k-1 in order,
# k its share of the records written.
case_every_record_numbered() {
	local cpus cpu pids=() p t
	logs_reset
	cpus=$(nproc)
	mod_load lports=$PORT,$WPORT pports=$PORT log_ext=seq
	expect_eq "$(cat $PARAMS/log_ext)" seq "log_ext read back"
	# R, and P from the same exchanges (the port is a peer port too):
	# clients on every CPU at once, each log its own numbers
	start_server -- --port $PORT --req-bytes 100 --resp-bytes 1000 \
		--conns $((2 * cpus + 1)) > /dev/null
	for cpu in $(seq 0 $((cpus - 1))); do
		taskset -c "$cpu" "$PEER" client --port $PORT --req-bytes 100 \
			--resp-bytes 1000 --conns 2 --requests 20 > /dev/null &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || fail "a client"
	done
	# N: a request cut mid-way
	"$PEER" client --port $PORT --req-bytes 100 --resp-bytes 1000 \
		--end mid-request --partial-bytes 40 > /dev/null || fail "client cut mid-request"
	# W: a client that stops reading, then goes away
	w_record $WPORT
	wait_untracked
	drain_each
	all_records | sed 's/^/# /' | head -n 40
	expect_eq "$(status log_subbufs_overwritten)" 0 "log_subbufs_overwritten"
	for t in R W N P E; do
		expect_ge "$(all_records | awk -v t=$t '$2 == t' | wc -l)" 1 "$t records"
	done
	expect_eq "$(all_records | awk '
		BEGIN { n["R"] = 17; n["W"] = 16; n["N"] = 12; n["P"] = 17; n["E"] = 13 }
		NF != n[$2] || $NF !~ /^seq=[0-9]+$/ || gsub(/seq=/, "&") != 1' | wc -l)" 0 \
		"records without seq=N, once, after their documented fields"
	expect_logs_consecutive
	expect_eq "$NUMBERED" "$(records_written)" "numbered records read, against those written"
}

# log_ext is taken when a connection is established: one established
# before seq was set carries none, even for a task after; set, cleared,
# set again, the numbers go on: they are the log's, since the load.
case_log_ext_at_runtime() {
	local gate=/tmp/gate.seq held aport
	logs_reset
	rm -f $gate
	mod_load lports=$PORT
	start_server -- --port $PORT --req-bytes 100 --resp-bytes 1000 --conns 4 > /dev/null
	mkfifo $gate
	exec 7<> $gate
	"$PEER" client --port $PORT --req-bytes 100 --resp-bytes 1000 \
		--requests 2 --gate $gate > /dev/null &
	held=$!
	wait_until "the held client connected" held_open $PORT || fail "no held connection"
	# the server's end too, before log_ext changes
	wait_until "the held connection tracked" tracked_is 1 ||
		fail "tracked: $(status tracked)"
	aport=$(ss -Htn state established "( dport = :$PORT )" |
		awk '{ n = split($3, a, ":"); print a[n]; exit }')
	printf x >&7			# its first request, before the change
	echo seq > $PARAMS/log_ext
	"$PEER" client --port $PORT --req-bytes 100 --resp-bytes 1000 \
		--requests 2 > /dev/null || fail "the client after the change"
	printf x >&7			# its second, after
	wait $held || fail "the held client"
	wait_untracked
	drain_each
	all_records | sed 's/^/# /'
	expect_eq "$(all_records | grep -F " 127.0.0.1:$aport " | wc -l)" 3 \
		"the held connection's records (2 R, E)"
	expect_eq "$(all_records | grep -F " 127.0.0.1:$aport " | grep -c 'seq=')" 0 \
		"of them, numbered"
	expect_eq "$(all_records | grep -vF " 127.0.0.1:$aport " | grep -c ' seq=[0-9]*$')" 3 \
		"the later connection's records (2 R, E), numbered"
	expect_eq "$(all_records | wc -l)" 6 "records in all"
	# cleared: the next connection's records are plain
	echo > $PARAMS/log_ext
	"$PEER" client --port $PORT --req-bytes 100 --resp-bytes 1000 > /dev/null ||
		fail "the client with log_ext cleared"
	wait_untracked
	drain_each
	expect_eq "$(all_records | grep -c 'seq=')" 3 "numbered records after log_ext was cleared"
	expect_eq "$(all_records | wc -l)" 8 "records after log_ext was cleared"
	# set again: numbered, each log's numbers going on from where they were
	echo seq > $PARAMS/log_ext
	"$PEER" client --port $PORT --req-bytes 100 --resp-bytes 1000 > /dev/null ||
		fail "the client with log_ext set again"
	wait_untracked
	drain_each
	expect_eq "$(all_records | wc -l)" 10 "records in all, at the end"
	expect_logs_consecutive
	expect_eq "$NUMBERED" 5 "numbered records, at the end"
	expect_eq "$(status log_subbufs_overwritten)" 0 "log_subbufs_overwritten"
}

# A gap is a loss: one 256 KiB sub-buffer per CPU (log_buf_num=1) and
# twice that written on CPU 0 (tcp_rt_server.sh's case_overwrite); what
# is left is the newest, consecutive, and the numbers missing before the
# first are the records overwritten.
case_gap_is_loss() {
	local n=6000 f cnt first last read=0 lost=0 next=0
	logs_reset
	rm -f /tmp/seq.ready
	mod_load lports=$PORT log_ext=seq log_buf_num=1
	taskset -c 0 "$PEER" server --port $PORT --req-bytes 10 --resp-bytes 10 \
		--ready-file /tmp/seq.ready > /dev/null &
	wait_until "server" test -s /tmp/seq.ready || fail "server did not start"
	taskset -c 0 "$PEER" client --port $PORT --req-bytes 10 --resp-bytes 10 \
		--requests $n > /dev/null || fail "client"
	wait_untracked
	drain_each
	expect_ge "$(status log_subbufs_overwritten)" 1 "log_subbufs_overwritten"
	for f in $LOGDIR/rt-network-log*; do
		cnt=$(numbered "$f")
		[ "$cnt" = 0 ] && continue
		first=$(awk '$1 == "V6" { print substr($NF, 5); exit }' "$f")
		last=$(awk '$1 == "V6" { v = substr($NF, 5) } END { print v }' "$f")
		diag "${f##*/}: $cnt records read, seq=$first .. seq=$last"
		expect_eq "$cnt" $((last - first + 1)) "${f##*/}: the numbers read are consecutive"
		read=$((read + cnt))
		lost=$((lost + first))
		next=$((next + last + 1))
	done
	# the newest record of a log is never overwritten: its number + 1 is
	# how many that CPU wrote
	expect_eq "$next" "$(records_written)" "one past each log's last number, summed, against records written"
	expect_eq "$lost" $(($(records_written) - read)) "numbers missing, against records written and not read"
	expect_ge "$lost" 1 "numbers missing"
}

# seq is not a breakdown field: it attaches no hook, and goes last, after
# every other; a bad name's line lists it.
case_order_and_hooks() {
	local mark all=netns,cgroup,rq_wait,app,sq_wait,rwnd_limited,sndbuf_limited,app_limited,seq
	logs_reset
	mod_load lports=$PORT log_ext=seq
	expect_eq "$(status breakdown_hooks)" 0 "breakdown_hooks with log_ext=seq"
	echo seq,app_limited,rq_wait,sq_wait,app,sndbuf_limited,rwnd_limited,cgroup,netns > \
		$PARAMS/log_ext
	expect_eq "$(cat $PARAMS/log_ext)" $all "log_ext read back in the table's order"
	expect_eq "$(status breakdown_hooks)" 1 "breakdown_hooks with the breakdown's fields"
	start_server -- --port $PORT --req-bytes 100 --resp-bytes 1000 > /dev/null
	"$PEER" client --port $PORT --req-bytes 100 --resp-bytes 1000 --requests 2 \
		> /dev/null || fail "client"
	wait_untracked
	drain_each
	all_records | sed 's/^/# /'
	# the names after the documented fields, in order
	expect_eq "$(all_records | awk '$2 == "R" {
			s = ""
			for (i = 17; i <= NF; i++) { sub(/=.*/, "", $i); s = s (s == "" ? "" : ",") $i }
			print s
		}' | sort -u)" $all "R's extension fields"
	expect_eq "$(all_records | awk '$2 == "E" {
			s = ""
			for (i = 13; i <= NF; i++) { sub(/=.*/, "", $i); s = s (s == "" ? "" : ",") $i }
			print s
		}')" netns,cgroup,seq "E's extension fields"
	expect_logs_consecutive
	expect_eq "$NUMBERED" 3 "numbered records (2 R, E)"
	# seq alone again: the breakdown's hooks go, seq keeps none
	echo seq > $PARAMS/log_ext
	expect_eq "$(status breakdown_hooks)" 0 "breakdown_hooks back to seq alone"
	mark=$(kmsg_mark)
	expect_fail "log_ext=seq,bogus" sh -c "echo seq,bogus > $PARAMS/log_ext"
	expect_eq "$(cat $PARAMS/log_ext)" seq "log_ext kept"
	kmsg_since "$mark" | sed 's/^/# /'
	expect_eq "$(kmsg_since "$mark" \
		"tcp_rt: log_ext: no field .bogus. (netns, cgroup, rq_wait, app, sq_wait, rwnd_limited, sndbuf_limited, app_limited, seq)$" |
		wc -l)" 1 "log_ext's line, naming seq"
}

# status's load_id: beside version, a non-zero u64 in decimal, the same
# at every read, another after a reload.
case_load_id() {
	local id1 id2
	mod_load
	id1=$(status load_id)
	[[ $id1 =~ ^[1-9][0-9]{0,19}$ ]] || fail "load_id '$id1' is not a non-zero decimal number"
	expect_eq "$(sed -n 2p "$DBG/status")" "load_id $id1" "status's second line (after version)"
	expect_eq "$(status load_id)" "$id1" "load_id read again"
	expect_eq "$(status load_id)" "$id1" "load_id read a third time"
	mod_unload
	mod_load
	id2=$(status load_id)
	[[ $id2 =~ ^[1-9][0-9]{0,19}$ ]] || fail "load_id '$id2' is not a non-zero decimal number"
	expect_ne "$id2" "$id1" "load_id after rmmod and insmod"
	diag "load_id $id1, then $id2"
}

run_case "log_ext=seq: every record (R W N P E) ends with seq=N; each CPU's log 0..k-1 in order" \
	case_every_record_numbered
run_case "log_ext=seq applies to connections established after it; the numbers are the log's" \
	case_log_ext_at_runtime
run_case "log_buf_num=1 overwritten: the numbers read consecutive, the missing ones the records lost" \
	case_gap_is_loss
run_case "seq comes last, after netns, cgroup and the breakdown; attaches no hook; named in log_ext's error" \
	case_order_and_hooks
run_case "status: load_id beside version, non-zero, stable across reads, new at each load" case_load_id
done_testing
