#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The binary records (log_format=both; docs/records.md, "Binary
# records"): every record the module writes as a line of rt-network-log<cpu>
# it also writes, in binary, to rt-network-bin<cpu>, and the module's own
# formatter (include/tcp_rt_fmt.h, built into selftests/bin2text as tcprt
# builds it) turns each CPU's binary log into its text log byte for byte:
# R, W, N, P and E records, IPv4, IPv6 and v4-mapped, with no log_ext
# field, each one alone and all of them, the breakdown's attaching its
# hooks; log_sample=2 and deactivate=2.  The binary records' indexes run
# on without a gap.  The same buffer's text view (rt-network-text<cpu>),
# lines made from the records as they are read, is the text log too, read
# alone or in turns with the binary file.  log_format=binary is the
# default since 0.7; log_format=text makes no binary file.
. "$(dirname "$0")/lib.sh"

PORT=7960	# R, N, E over IPv4; a peer port too: P
WPORT=7961	# W: a response the client stops reading
PORT6=7962	# IPv6
PORTM=7963	# v4-mapped: a dual-stack server, an IPv4 client
BIN2TEXT=$SELFTESTS/bin2text
TCPRT=$TOP/tools/tcprt/tcprt
FIELDS="netns cgroup rq_wait app sq_wait rwnd_limited sndbuf_limited app_limited seq"
ALL=$(tr ' ' , <<< "$FIELDS")
OUT=/tmp/binary

load_both() {	# [params...]
	rm -rf $OUT
	mkdir -p $OUT
	mod_load lports=$PORT,$WPORT,$PORT6,$PORTM pports=$PORT log_format=both "$@"
}

# One of each record type, over IPv4, IPv6 and v4-mapped: clients on every
# CPU, so that every CPU's logs have records.
round() {
	local cpus cpu pids=() p
	cpus=$(nproc)
	start_server -- --port $PORT --req-bytes 100 --resp-bytes 1000 \
		--conns $((cpus + 1)) > /dev/null
	for cpu in $(seq 0 $((cpus - 1))); do
		taskset -c "$cpu" "$PEER" client --port $PORT --req-bytes 100 \
			--resp-bytes 1000 --requests 3 > /dev/null &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || fail "a client"
	done
	# N: a request cut mid-way
	"$PEER" client --port $PORT --req-bytes 100 --resp-bytes 1000 \
		--end mid-request --partial-bytes 40 > /dev/null || fail "client cut mid-request"
	start_server -- --addr ::1 --port $PORT6 --req-bytes 10 --resp-bytes 20 > /dev/null
	"$PEER" client --addr ::1 --port $PORT6 --req-bytes 10 --resp-bytes 20 \
		--requests 2 > /dev/null || fail "IPv6 client"
	start_server -- --addr :: --dual --port $PORTM --req-bytes 10 --resp-bytes 20 > /dev/null
	"$PEER" client --addr 127.0.0.1 --port $PORTM --req-bytes 10 --resp-bytes 20 \
		--requests 2 > /dev/null || fail "v4-mapped client"
	# W: a client that stops reading, then goes away
	w_record $WPORT
	wait_untracked
}

# CPU $1's binary buffer read in turns through its two files, which share
# one position: a read of the text view ($TEXT_VIEW$1, as many whole lines
# as fit in TEXT_READ bytes), then one of the binary file (whole records
# in BIN_READ bytes) made text by bin2text, until neither has more.  Each
# turn's lines to standard output, in the order read; "text N binary N",
# the lines each file gave, to $OUT/turns.$1.
TEXT_VIEW=rt-network-text	# log_format=binary: rt-network-log
TEXT_READ=547	# TCP_RT_FMT_MAX: the longest line
BIN_READ=192	# TCP_RT_BIN_LEN_MAX: the longest record
read_turns() {
	local c=$1 t b text=0 bin=0
	while :; do
		t=$(dd if="$DBG/$TEXT_VIEW$c" bs=$TEXT_READ count=1 status=none)
		b=$(dd if="$DBG/rt-network-bin$c" bs=$BIN_READ count=1 status=none |
			"$BIN2TEXT" 2> /dev/null)
		[ -n "$t$b" ] || break
		[ -z "$t" ] || { printf '%s\n' "$t"; text=$((text + $(wc -l <<< "$t"))); }
		[ -z "$b" ] || { printf '%s\n' "$b"; bin=$((bin + $(wc -l <<< "$b"))); }
	done
	echo "text $text binary $bin" > $OUT/turns.$c
}

# Each CPU's text log, and its binary buffer read as $1 says - bin: the
# binary file made text by bin2text, whose records' indexes must run on
# without a gap; text: the text view; turns: both in turns (read_turns)
# - the same bytes.  Reads every log (once: reading consumes); the lines,
# all CPUs', in $OUT/text.
compare_logs() {	# bin|text|turns
	local how=$1 f c stat
	: > $OUT/text
	for f in "$DBG"/rt-network-log*; do
		c=${f##*rt-network-log}
		cat "$f" > $OUT/text.$c
		case $how in
		bin)
			"$BIN2TEXT" < "$DBG/rt-network-bin$c" > $OUT/made.$c 2> $OUT/stat.$c ||
				fail "bin2text, CPU $c: $(cat $OUT/stat.$c)"
			stat=$(cat $OUT/stat.$c)
			# shellcheck disable=SC2086
			set -- $stat
			expect_eq "$2 $8" "$(wc -l < $OUT/text.$c) 0" \
				"CPU $c: binary records as lines, indexes missing"
			;;
		text)
			cat "$DBG/rt-network-text$c" > $OUT/made.$c
			stat="text view $(wc -l < $OUT/made.$c) lines"
			;;
		turns)
			read_turns "$c" > $OUT/made.$c
			stat="in turns: $(cat $OUT/turns.$c)"
			;;
		esac
		diag "CPU $c: $(wc -l < $OUT/text.$c) lines; $how: $stat"
		if ! cmp -s $OUT/text.$c $OUT/made.$c; then
			diff $OUT/text.$c $OUT/made.$c | head -n 10 | sed 's/^/# /'
			fail "CPU $c: the binary buffer read as $how differs from rt-network-log$c"
		fi
		cat $OUT/text.$c >> $OUT/text
	done
	expect_eq "$(status log_subbufs_overwritten) $(status log_bin_subbufs_overwritten)" "0 0" \
		"sub-buffers overwritten, text and binary"
}

# Every type, and each log_ext field alone and all of them, switched
# between rounds (a connection takes log_ext as it is established).
case_every_record() {
	local f t c
	load_both
	expect_eq "$(status log_format)" both "status log_format"
	expect_eq "$(cat "$PARAMS/log_format")" both "log_format read back"
	expect_eq "$(stat -c %a "$DBG/rt-network-bin0")" 400 "rt-network-bin0's mode"
	expect_eq "$(stat -c %a "$DBG/rt-network-text0")" 400 "rt-network-text0's mode"
	expect_eq "$(ls "$DBG" | grep -c '^rt-network-text')" "$(nproc)" "text views, one a CPU"
	round
	for f in $FIELDS "$ALL"; do
		echo "$f" > "$PARAMS/log_ext" || fail "log_ext=$f"
		round
	done
	echo > "$PARAMS/log_ext"
	# a read too short for the first line fails, and takes nothing
	expect_fail "a text view read of 10 bytes" \
		dd if="$DBG/rt-network-text0" bs=10 count=1 status=none of=/dev/null
	compare_logs turns
	for c in $OUT/turns.*; do
		# shellcheck disable=SC2046
		set -- $(cat "$c")
		expect_ge "$2" 1 "${c##*/}: lines read through the text view"
		expect_ge "$4" 1 "${c##*/}: lines read through the binary file"
	done
	for t in R W N P E; do
		expect_ge "$(awk -v t=$t '$1 == "V6" && $2 == t' $OUT/text | wc -l)" 1 "$t records"
	done
	expect_ge "$(grep -c ' \[::1\]:' $OUT/text)" 1 "IPv6 records"
	expect_ge "$(grep -c " 127.0.0.1:$PORTM " $OUT/text)" 1 "v4-mapped records, as IPv4"
	for f in $FIELDS; do
		expect_ge "$(grep -c " $f=" $OUT/text)" 1 "records with $f"
	done
	expect_ge "$(grep " netns=" $OUT/text | grep " cgroup=" | grep " rq_wait=" | grep -c ' seq=')" 1 \
		"records with every field"
	mod_unload
}

# log_sample=2 leaves one connection in two out of both logs alike;
# deactivate=2 releases open connections: what either writes, both do.
# The rounds' records read as binary, the release's through the text view.
case_sample_release() {
	local held
	load_both log_ext=seq
	echo 2 > "$PARAMS/log_sample"
	round
	round
	compare_logs bin
	expect_ge "$(grep -c '^V6 R ' $OUT/text)" 1 "R records kept"
	start_server -- --port $PORT --req-bytes 100 --resp-bytes 1000 --conns 4 > /dev/null
	"$PEER" client --port $PORT --req-bytes 100 --resp-bytes 1000 --conns 4 \
		--requests 1 --end wait-server > /dev/null 2>&1 &
	held=$!
	wait_until "4 connections tracked" eval '[ "$(status tracked)" -ge 8 ]' ||
		fail "tracked: $(status tracked)"
	echo 2 > "$PARAMS/deactivate"
	expect_eq "$(status tracked)" 0 "tracked after deactivate=2"
	kill "$held" 2> /dev/null
	wait "$held" 2> /dev/null || true
	compare_logs text
	expect_ge "$(status records_sampled_out)" 1 "records sampled out"
	rmmod tcp_rt || fail "rmmod"
}

# log_format=binary: the binary buffer alone, rt-network-log<cpu> its text
# view, no text written.  Read in turns with rt-network-bin<cpu>: every
# record once - as many lines of each type as status counts, each CPU's
# numbered from the load, seq 0, 1, 2, ... in the order read - and the R
# records of the rounds' clients, as many as they made, with the sizes
# they sent and asked for.
case_binary_mode() {
	local c cpus f t
	cpus=$(nproc)
	rm -rf $OUT
	mkdir -p $OUT
	mod_load lports=$PORT,$WPORT,$PORT6,$PORTM pports=$PORT log_format=binary \
		log_ext=seq
	expect_eq "$(status log_format)" binary "status log_format"
	expect_eq "$(stat -c %a "$DBG/rt-network-log0") $(stat -c %a "$DBG/rt-network-bin0")" \
		"400 400" "rt-network-log0's and rt-network-bin0's modes"
	expect_eq "$(ls "$DBG" | grep -c '^rt-network-text')" 0 "rt-network-text files"
	round
	echo "$ALL" > "$PARAMS/log_ext" || fail "log_ext=$ALL"
	round
	: > $OUT/text
	for f in "$DBG"/rt-network-bin*; do
		c=${f##*rt-network-bin}
		TEXT_VIEW=rt-network-log read_turns "$c" > $OUT/made.$c
		diag "CPU $c: in turns: $(cat $OUT/turns.$c)"
		expect_eq "$(grep -c -v ' seq=[0-9]*$' $OUT/made.$c)" 0 "CPU $c: lines without seq"
		expect_eq "$(sed 's/.* seq=//' $OUT/made.$c | awk '$1 != NR - 1' | wc -l)" 0 \
			"CPU $c: lines whose seq is not the one before's next"
		cat $OUT/made.$c >> $OUT/text
	done
	for t in R W N P E; do
		expect_eq "$(grep -c "^V6 $t " $OUT/text)" "$(status records_$t)" "$t lines, records_$t"
	done
	expect_eq "$(awk -v l="127.0.0.1:$PORT" '$2 == "R" && $6 == l && $7 == 1000 && $14 == 100' \
		$OUT/text | wc -l)" $((2 * (3 * cpus + 1))) "R records of the rounds' clients"
	expect_ge "$(grep " netns=" $OUT/text | grep " cgroup=" | grep -c ' seq=')" 1 \
		"records with every field"
	expect_eq "$(status log_subbufs_overwritten) $(status log_bin_subbufs_overwritten)" "0 0" \
		"sub-buffers overwritten"
	mod_unload
}

# log_records_overwritten is exact (docs/records.md, "Records lost"): the
# flight recorder at its tightest (log_buf_num=1, log_format=binary), a
# flood of LOSS_REQS requests on CPU 0 (server and client pinned there),
# in LOSS_RUNS runs (TCP_RT_LOSS_RUNS; 20, fewer for a quicker look, as
# on an emulated arm64 guest; make check, which sets TCP_RT_CHECK_SHORT,
# runs 6 to stay within CI's hour, make check-full and check-debug the
# 20): the odd ones with a reader the writer laps
# (lapped_reader.py on rt-network-log0, the text view, 512 bytes every 20
# ms), the even ones with none.  Then every CPU's log is drained: the
# records read, by the lapped reader and the drain, plus the count equal
# the records written (status records_*), exactly, in every run, all of
# it CPU 0's (log_records_overwritten_cpu0, no other CPU's line); and with
# no reader, the count is the same before the drain as after (the
# writer's laps counted ahead of any read).
LOSS_PORT=7964
LOSS_REQS=3000	# R records of 120 bytes: 1.4 times the sub-buffer
LOSS_RUNS=${TCP_RT_LOSS_RUNS:-$([ -n "${TCP_RT_CHECK_SHORT:-}" ] && echo 6 || echo 20)}

loss_run() {	# run
	local run=$1 reader= lines=0 drained before lost written
	mod_load lports=$LOSS_PORT log_buf_num=1 log_format=binary
	start_server -- --port $LOSS_PORT --req-bytes 50 --resp-bytes 80 > /dev/null
	if [ $((run % 2)) = 1 ]; then
		python3 "$SELFTESTS/lapped_reader.py" "$DBG/rt-network-log0" 3 512 20 \
			$LOSS_PORT 50 80 > $OUT/lapped 2>&1 &
		reader=$!
	fi
	"$PEER" client --port $LOSS_PORT --req-bytes 50 --resp-bytes 80 \
		--requests $LOSS_REQS > /dev/null || fail "run $run: the client"
	if [ -n "$reader" ]; then
		wait "$reader" || fail "run $run: the lapped reader: $(cat $OUT/lapped)"
		lines=$(awk '$1 == "lines" { print $2 }' $OUT/lapped)
	fi
	wait_untracked
	before=$(status log_records_overwritten)
	drained=$(cat "$DBG"/rt-network-log[0-9]* | wc -l)
	lost=$(status log_records_overwritten)
	written=$(records_written)
	diag "run $run: $written written, $lines read while writing, $drained drained, $lost overwritten ($before before the drain), $(status log_bin_subbufs_overwritten) sub-buffers"
	expect_eq "$((lines + drained + lost))" "$written" \
		"run $run: records read + log_records_overwritten, records written"
	expect_eq "$(status log_bin_records_overwritten)" "$lost" "run $run: log_bin_records_overwritten"
	# per CPU: CPU 0's alone, the flood's
	expect_eq "$(grep '^log_records_overwritten_cpu' "$DBG/status" | tr '\n' ' ')" \
		"log_records_overwritten_cpu0 $lost " "run $run: the loss per CPU"
	expect_ge "$lost" 1 "run $run: records overwritten"
	[ -n "$reader" ] || expect_eq "$before" "$lost" "run $run: the count before the drain"
	if [ "$run" = 2 ]; then
		# tcprt read says it, the logs drained already
		"$TCPRT" read > /dev/null 2> $OUT/read.err || fail "tcprt read"
		diag "tcprt read: $(cat $OUT/read.err)"
		grep -q "overwrote $lost records before a reader got them since it was loaded (status log_bin_records_overwritten), 0 while this read ran" \
			$OUT/read.err || fail "tcprt read did not say the loss"
	fi
	mod_unload
}

case_overwritten_exact() {
	local run
	rm -rf $OUT
	mkdir -p $OUT
	# the case's processes on CPU 0: its records in CPU 0's one sub-buffer
	taskset -pc 0 $BASHPID > /dev/null
	for run in $(seq "$LOSS_RUNS"); do
		loss_run "$run"
	done
}

# Peek (docs/records.md, "Peek"): rt-network-peek<cpu> hands out, as
# text, what CPU <cpu>'s binary log holds, without consuming it.  Two
# peeks give the same bytes, every record written; a consuming read after
# them gets the same again, and a peek after that still does; tcprt read
# --peek prints every record (so does --since 3600: they are all of the
# last hour); an open peek holds the module.
case_peek() {
	local f c
	rm -rf $OUT
	mkdir -p $OUT
	mod_load lports=$PORT,$WPORT,$PORT6,$PORTM pports=$PORT log_format=binary \
		log_ext=seq
	expect_eq "$(stat -c %a "$DBG/rt-network-peek0")" 400 "rt-network-peek0's mode"
	expect_eq "$(ls "$DBG" | grep -c '^rt-network-peek')" "$(nproc)" "peek files, one a CPU"
	round
	for f in "$DBG"/rt-network-peek*; do
		c=${f##*rt-network-peek}
		cat "$f" > $OUT/peek1.$c
		cat "$f" > $OUT/peek2.$c
		cmp -s $OUT/peek1.$c $OUT/peek2.$c || fail "CPU $c: two peeks differ"
		cat "$DBG/rt-network-log$c" > $OUT/log.$c
		if ! cmp -s $OUT/peek1.$c $OUT/log.$c; then
			diff $OUT/peek1.$c $OUT/log.$c | head -n 10 | sed 's/^/# /'
			fail "CPU $c: the consuming read after the peeks is not what they gave"
		fi
		cat "$f" > $OUT/peek3.$c
		cmp -s $OUT/peek1.$c $OUT/peek3.$c || fail "CPU $c: a peek after the consuming read differs"
		expect_eq "$(cat "$DBG/rt-network-log$c" | wc -c)" 0 \
			"CPU $c: bytes left to a second consuming read"
		diag "CPU $c: $(wc -l < $OUT/peek1.$c) lines peeked, three times alike"
	done
	expect_eq "$(cat $OUT/peek1.* | wc -l)" "$(records_written)" "lines peeked, records written"
	expect_eq "$("$TCPRT" read --peek -o csv | tail -n +2 | wc -l)" "$(records_written)" \
		"tcprt read --peek: records"
	expect_eq "$("$TCPRT" read --peek --since 3600 -o csv | tail -n +2 | wc -l)" \
		"$(records_written)" "tcprt read --peek --since 3600: records"
	expect_eq "$(status peek_records_skipped) $(status peek_cut_short)" "0 0" \
		"peek_records_skipped, peek_cut_short"
	# its open and release are the module's code: no unload while it is open
	exec 3< "$DBG/rt-network-peek0"
	expect_fail "rmmod with a peek open" rmmod tcp_rt
	exec 3<&-
	mod_unload
}

# A peek the writer laps: log_format=binary, log_ext=seq, log_buf_num=2,
# the case on CPU 0 (its records in CPU 0's log).  PEEK_A requests fill
# the first sub-buffer and part of the second, and a consuming read takes
# them.  A peek (peek_reader.py) begins, reads once, and waits while
# PEEK_B more requests move the writer into the third (the first's
# place): its next read finds the first sub-buffer overwritten and goes on
# from the second, every line whole; peek_records_skipped is the numbers
# missing between its lines, and it ends at the last record written
# before it began.  A second peek begins in the second sub-buffer, reads
# once, and waits while PEEK_C requests lap both: the rest of its snapshot
# is gone, and it ends there, cut short (peek_cut_short 1), skipping none.
# The waits are on the reader's and the floods' own events, whatever the
# machine's speed.
PEEK_PORT=7965
PEEK_A=3000	# R records of 128 bytes: 1.5 sub-buffers of 2048
PEEK_B=2000	# the rest of the second, part of the third
PEEK_C=4000	# the rest of the third, the fourth, part of the fifth

peek_flood() {	# requests
	"$PEER" client --port $PEEK_PORT --req-bytes 50 --resp-bytes 80 \
		--requests "$1" > /dev/null || fail "a client of $1 requests"
	wait_untracked
}

# Peek CPU 0's log (peek_reader.py) while flooding it with $1 requests
# after its first read: its line "lines N bad N first F last L gaps G",
# and in PEEK_SKIPPED and PEEK_CUT what status counted of it.
peek_lapped() {	# requests
	local reader s0 c0
	rm -f $OUT/ready $OUT/go
	s0=$(status peek_records_skipped)
	c0=$(status peek_cut_short)
	python3 "$SELFTESTS/peek_reader.py" "$DBG/rt-network-peek0" 512 $OUT/ready $OUT/go \
		> $OUT/peek 2>&1 &
	reader=$!
	wait_until "the peek's first read" test -e $OUT/ready || fail "peek_reader.py"
	peek_flood "$1"
	touch $OUT/go
	wait "$reader" || fail "peek_reader.py: $(cat $OUT/peek)"
	PEEK_SKIPPED=$(($(status peek_records_skipped) - s0))
	PEEK_CUT=$(($(status peek_cut_short) - c0))
	diag "peek lapped by $1 requests: $(head -n 1 $OUT/peek), skipped $PEEK_SKIPPED, cut $PEEK_CUT"
}

case_peek_lapped() {
	local last r first
	rm -rf $OUT
	mkdir -p $OUT
	taskset -pc 0 $BASHPID > /dev/null
	mod_load lports=$PEEK_PORT log_buf_num=2 log_format=binary log_ext=seq
	start_server -- --port $PEEK_PORT --req-bytes 50 --resp-bytes 80 --conns 3 > /dev/null
	peek_flood $PEEK_A
	cat "$DBG/rt-network-log0" > $OUT/took
	expect_eq "$(wc -l < $OUT/took)" "$(records_written)" \
		"records a consuming read of CPU 0 took, every one written"
	last=$(tail -n 1 $OUT/took | sed 's/.* seq=//')
	peek_lapped $PEEK_B
	# lines N bad N first F last L gaps G
	# shellcheck disable=SC2046
	set -- $(head -n 1 $OUT/peek)
	r=$2
	first=$6
	expect_eq "$first" 0 "the first peek's first number"
	expect_eq "$8" "$last" "its last number: the last before it began"
	expect_eq "$PEEK_SKIPPED" "${10}" "peek_records_skipped: the numbers missing"
	expect_ge "$PEEK_SKIPPED" 1 "records skipped"
	expect_eq "$PEEK_CUT" 0 "peek_cut_short"
	expect_eq "$((r + PEEK_SKIPPED))" "$((last + 1))" "lines peeked + skipped: the snapshot"
	peek_lapped $PEEK_C
	# shellcheck disable=SC2046
	set -- $(head -n 1 $OUT/peek)
	expect_ge "$2" 1 "the second peek's lines"
	expect_eq "$PEEK_SKIPPED $PEEK_CUT" "0 1" "the second peek: skipped, cut short"
	mod_unload
}

# binary, the default since 0.7 (insmod itself: mod_load would pass
# TCP_RT_LOG_FORMAT): each CPU's log its three files; text: no binary
# file; a bad value refused in one line.
case_formats() {
	local mark line

	insmod "$MODULE" lports=$PORT || fail "insmod"
	expect_eq "$(status log_format)" binary "status log_format, the default"
	expect_eq "$(ls "$DBG" | grep -c '^rt-network-bin' || true)" "$(nproc)" "binary files, one a CPU"
	expect_eq "$(ls "$DBG" | grep -c '^rt-network-peek' || true)" "$(nproc)" "peeks, one a CPU"
	expect_eq "$(ls "$DBG" | grep -c '^rt-network-text' || true)" 0 "text views apart from the logs"
	mod_unload
	insmod "$MODULE" lports=$PORT log_format=text || fail "insmod log_format=text"
	expect_eq "$(status log_format)" text "status log_format"
	expect_eq "$(ls "$DBG" | grep -c -E 'rt-network-(bin|text|peek)')" 0 \
		"binary files, text views and peeks"
	mod_unload
	mark=$(kmsg_mark)
	expect_fail "log_format=bin" insmod "$MODULE" log_format=bin
	line=$(kmsg_since "$mark")
	diag "$line"
	grep -q "tcp_rt: log_format: 'bin' is not text, both or binary" <<< "$line" ||
		fail "no line naming the parameter: $line"
	[ ! -e /sys/module/tcp_rt ] || fail "module left loaded"
}

run_case "binary records: every type, IPv4, IPv6 and v4-mapped, every log_ext field: each CPU's binary log made text is its text log, byte for byte" case_every_record
run_case "binary records: log_sample=2 and deactivate=2 leave both logs alike" case_sample_release
run_case "log_format=binary: rt-network-log is the binary buffer's text view; read in turns with rt-network-bin, every record once, numbered without a gap" case_binary_mode
run_case "log_records_overwritten is exact: log_buf_num=1, a flood on CPU 0, no reader or a lapped one - records read + overwritten = written, in each of $LOSS_RUNS runs" case_overwritten_exact
run_case "peek: what a binary log holds, as text, not consumed: two peeks alike, a consuming read after them the same; tcprt read --peek" case_peek
run_case "peek lapped by the writer: whole lines, the records skipped counted exactly; lapped past its end, cut short and counted" case_peek_lapped
run_case "log_format=binary, the default, has a binary file and a peek a CPU; text makes none; a bad value refused" case_formats
done_testing
