#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tcprt's command line on this host, against files written by the test:
# help and exit statuses, the output formats, hostile input, the merge
# order, summary windows, export (atomic file, valid exposition format
# checked by promtool when it is installed), and a folder mixing tcp_rt's
# files with the vendor TCP-RT's, series runs (table, csv, raw, plot).
# Prints TAP.
set -u
cd "$(dirname "$0")/.." || exit 1
TCPRT=$PWD/tcprt
T=$(mktemp -d "${TMPDIR:-/tmp}/tcprt-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT

. tests/case-lib.sh

expect_eq() {	# actual expected what
	[ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"
}

expect_ge() {	# actual least what
	[ "$1" -ge "$2" ] || fail "$3: got $1, expected $2 or more"
}

# Exit status of a command, its stdout in $T/out, stderr in $T/err.
status_of() {
	"$@" > "$T/out" 2> "$T/err"
	echo $?
}

BASE=1795218000		# a multiple of 10 s

# A record line: type start_us [peer_port [local_port [duration]]]
rec() {
	local t=$1 us=$2 pp=${3:-40000} lp=${4:-7100} d=${5:-1000}
	local sec=$((us / 1000000)) usec
	usec=$(printf %06d $((us % 1000000)))
	case $t in
	R) echo "V6 R $sec $usec 10.0.0.2:$pp 10.0.0.1:$lp 5000 $d 300 1 1 $((d / 2)) $((d / 10)) 300 0 1448" ;;
	W) echo "V6 W $sec $usec 10.0.0.2:$pp 10.0.0.1:$lp 5000 $d 300 0 2 $((d / 2)) 0 1000 1448" ;;
	N) echo "V6 N $sec $usec 10.0.0.2:$pp 10.0.0.1:$lp 3 $d 400 0 1448" ;;
	P) echo "V6 P $sec $usec 10.0.0.1:$lp 10.0.0.2:$pp 300 $d 200 0 1 $((d / 2)) $((d / 4)) 4000 0 1448" ;;
	E) echo "V6 E $sec $usec 10.0.0.2:$pp 10.0.0.1:$lp 3 10000 1000 700 1 300" ;;
	esac
}

# A record as the vendor's TCP-RT writes it (its net/ipv4/tcp_rt/output.c):
# "V6", the type, then every value followed by one space - the start's
# seconds, its microseconds unpadded, peer and local address:port, the
# fields - then the newline.  Its W has out_of_order before mss; its P has
# 10 fields (newest generation), 7 or 5 (older ones).
# vrec type start_us [peer_port [local_port [duration [variant]]]]
# variant: P's field count (10, 7, 5); "client" for the E of a P's connection
vrec() {
	local t=$1 us=$2 pp=${3:-40000} lp=${4:-7100} d=${5:-1000} np=${6:-10}
	local peer=10.0.0.2:$pp local=10.0.0.1:$lp f
	case $t in
	R) f="5000 $d 300 1 1 $((d / 2)) $((d / 10)) 300 0 1448" ;;
	W) f="5000 $d 300 0 2 $((d / 2)) 0 1000 1 1448" ;;
	N) f="3 $d 400 1 1448" ;;
	P)
		peer=10.0.0.1:$lp local=10.0.0.2:$pp
		case $np in
		10) f="300 $d 200 0 1 $((d / 2)) $((d / 4)) 4000 0 1448" ;;
		7) f="300 $d 0 1 200 0 1448" ;;
		5) f="300 0 1 200 1448" ;;
		esac
		;;
	E)
		[ "$np" = client ] && peer=10.0.0.1:$lp local=10.0.0.2:$pp
		f="1 10001 0 4001 9 200"
		;;
	esac
	# shellcheck disable=SC2086
	printf '%s ' V6 "$t" $((us / 1000000)) $((us % 1000000)) "$peer" "$local" $f
	echo
}

# ---- help, usage, exit statuses -------------------------------------------------

case_help() {
	local c
	expect_eq "$(status_of "$TCPRT" --help)" 0 "tcprt --help"
	grep -q '^usage: tcprt COMMAND' "$T/out" || fail "tcprt --help text"
	for c in read summary export agent ship spool ingest fleet; do
		expect_eq "$(status_of "$TCPRT" "$c" --help)" 0 "tcprt $c --help"
		grep -q "^usage: tcprt $c" "$T/out" || fail "tcprt $c --help text"
		cp "$T/out" "$T/help1"
		expect_eq "$(status_of "$TCPRT" help "$c")" 0 "tcprt help $c"
		cmp -s "$T/out" "$T/help1" || fail "tcprt help $c differs from --help"
	done
	expect_eq "$(status_of "$TCPRT" --version)" 0 "--version"
}

# tcprt.8 has every long option of every command's --help, names the
# version tcprt --version prints (tcp_rt's, include/tcp_rt.h), and renders
# without a warning.
case_man() {
	local c o
	expect_eq "$("$TCPRT" --version)" "tcprt $(../../scripts/version)" \
		"tcprt --version: tcp_rt's version"
	grep -q "^\.TH TCPRT 8 [0-9-]* \"$("$TCPRT" --version)\"" tcprt.8 ||
		fail "tcprt.8's .TH does not name $("$TCPRT" --version)"
	for c in read summary export agent series ship spool ingest fleet; do
		for o in $("$TCPRT" "$c" --help | grep -oE '^ +-[a-zA-Z0-9], --[a-z-]+' |
			   sed 's/.*--//'); do
			[ "$o" = help ] && continue
			grep -qF -- "\\-\\-${o//-/\\-}" tcprt.8 || fail "tcprt.8 lacks $c --$o"
		done
	done
	if command -v man > /dev/null; then
		MANWIDTH=80 man --warnings -l tcprt.8 > /dev/null 2> "$T/manerr" || fail "man: $(cat "$T/manerr")"
		[ ! -s "$T/manerr" ] || fail "man warnings: $(cat "$T/manerr")"
	fi
}

case_usage_errors() {
	local args
	while IFS= read -r args; do
		# shellcheck disable=SC2086
		expect_eq "$(status_of "$TCPRT" $args)" 2 "tcprt $args"
		grep -q '^tcprt: ' "$T/err" || fail "tcprt $args: no message"
	done <<-'LIST'
		frob
		read --format xml
		read --type R,X
		read --type RW
		read --port 0
		read --port 65536
		read --bogus
		read -x
		read --port
		read extra
		read --reorder -1
		summary --window 0
		summary --window abc
		export
		export --textfile /tmp/x.txt
		export --textfile /tmp/x.prom --buckets r7
		export --textfile /tmp/x.prom --interval 0
	LIST
	expect_eq "$(status_of "$TCPRT")" 2 "tcprt without a command"
	grep -q "needs a value" <(status_of "$TCPRT" read --port; cat "$T/err") ||
		fail "missing value message"
}

case_runtime_errors() {
	mkdir -p "$T/empty"
	expect_eq "$(status_of "$TCPRT" read --dir "$T/nonexistent")" 1 "--dir missing"
	grep -q "nonexistent: No such file" "$T/err" || fail "message: $(cat "$T/err")"
	expect_eq "$(status_of "$TCPRT" read --dir "$T/empty")" 1 "--dir empty"
	grep -q "no readable rt-network-log" "$T/err" || fail "message: $(cat "$T/err")"
	mkdir -p "$T/one"
	rec R $((BASE * 1000000)) > "$T/one/rt-network-log0"
	expect_eq "$(status_of "$TCPRT" export --once --dir "$T/one" --textfile "$T/no/such/dir/x.prom")" 1 \
		"export into a missing folder"
}

# ---- formats ---------------------------------------------------------------------

make_all_types() {
	local d=$T/types b=$((BASE * 1000000))
	mkdir -p "$d"
	{
		rec R $((b + 1000)) 40001
		rec E $((b + 500)) 40001
		rec W $((b + 2000)) 40002
		rec N $((b + 3000)) 40003
		rec P $((b + 4000)) 50004 6379
		rec E $((b + 3500)) 50004 6379 | awk '{ t = $5; $5 = $6; $6 = t; print }'
		echo "V6 R $BASE 005000 [2001:db8::2]:40005 [2001:db8::1]:443 100 2000 50 0 1 1000 100 10 1 1448"
	} > "$d/rt-network-log0"
	echo "$BASE all 7100 1000 500 0 300 0 5000 100 300 1" > "$d/rt-network-stats"
	echo "$d"
}

case_json() {
	local d
	d=$(make_all_types)
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format json --stats)" 0 "read json"
	expect_eq "$(wc -l < "$T/out")" 8 "json lines"
	[ ! -s "$T/err" ] || fail "stderr: $(cat "$T/err")"
	command -v python3 > /dev/null || return 4
	python3 - "$T/out" <<-'PY' || fail "json check"
		import json, sys
		spec = {
		 "R": "sent_bytes duration min_rtt retrans task_seq process_time upload_time recv_bytes out_of_order mss",
		 "W": "sent_bytes duration min_rtt retrans task_seq process_time upload_time unacked_bytes mss",
		 "N": "task_seq duration recv_bytes out_of_order mss",
		 "P": "sent_bytes duration min_rtt retrans task_seq service_time response_time recv_bytes out_of_order mss",
		 "E": "last_task_seq total_sent_bytes unacked_bytes total_recv_bytes total_retrans min_rtt",
		 "stats": "avg_duration avg_process_time drop_per_1000 avg_rtt fail_per_1000 avg_sent avg_upload_time avg_recv tasks",
		}
		head = "type sec usec peer_addr peer_port local_addr local_port role port cpu source".split()
		seen = {}
		for line in open(sys.argv[1]):
		    o = json.loads(line)
		    t = o["type"]
		    seen[t] = seen.get(t, 0) + 1
		    want = (["type", "unix_sec", "port", "role"] if t == "stats" else head) + spec[t].split()
		    assert list(o) == want, (t, list(o))
		assert seen == {"R": 2, "W": 1, "N": 1, "P": 1, "E": 2, "stats": 1}, seen
		roles = [(o["type"], o["role"], o["port"]) for o in map(json.loads, open(sys.argv[1])) if o["type"] == "E"]
		assert sorted(roles) == [("E", "client", 6379), ("E", "server", 7100)], roles
		v6 = [json.loads(l) for l in open(sys.argv[1]) if "2001" in l][0]
		assert v6["peer_addr"] == "2001:db8::2" and v6["local_port"] == 443, v6
	PY
}

case_csv_text() {
	local d cols
	d=$(make_all_types)
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv --stats)" 0 "read csv"
	expect_eq "$(wc -l < "$T/out")" 9 "csv: header + 8 rows"
	head -n 1 "$T/out" | grep -q '^type,sec,usec,role,port,peer_addr,peer_port,local_addr,local_port,cpu,sent_bytes,duration,.*,tasks,source,netns,cgroup,cgroup_path,runtime,container,pod,rq_wait,app,sq_wait,rwnd_limited,sndbuf_limited,app_limited,seq$' ||
		fail "csv header: $(head -n 1 "$T/out")"
	cols=$(awk -F, '{ print NF }' "$T/out" | sort -u)
	expect_eq "$cols" "$(head -n 1 "$T/out" | awk -F, '{ print NF }')" "csv: every row has every column"
	expect_eq "$(status_of "$TCPRT" read --dir "$d")" 0 "read text"
	grep -q '^2026-.*Z R server port=443 cpu=0 source=tcp_rt peer=\[2001:db8::2\]:40005 local=\[2001:db8::1\]:443 sent_bytes=100 duration=2000 ' "$T/out" ||
		fail "text IPv6 line: $(cat "$T/out")"
}

case_filters() {
	local d
	d=$(make_all_types)
	"$TCPRT" read --dir "$d" --type R,W --format csv | tail -n +2 | cut -d, -f1 | sort | uniq -c |
		awk '{ printf "%s%s ", $2, $1 }' > "$T/f"
	expect_eq "$(cat "$T/f")" "R2 W1 " "--type R,W"
	expect_eq "$("$TCPRT" read --dir "$d" --port 6379 --format csv | tail -n +2 | cut -d, -f1 | tr '\n' ' ')" \
		"E P " "--port 6379: the P record and its E"
	expect_eq "$("$TCPRT" read --dir "$d" --port 443 --format csv | tail -n +2 | wc -l)" 1 "--port 443"
}

# ---- hostile input -------------------------------------------------------------------

case_hostile() {
	local d=$T/hostile b=$((BASE * 1000000))
	mkdir -p "$d"
	{
		rec R $((b + 1))
		echo "V6 R 1 2"
		rec R $((b + 2)) | sed 's/$/ 77/'
		echo "V6 R $BASE 000003 10.0.0.2:1 10.0.0.1:2 x 1 1 1 1 1 1 1 0 1"
		head -c 3000 /dev/zero | tr '\0' 7; echo
		printf 'V6 R \001\002\377\376 binary\n'
		rec R $((b + 4))
		printf 'V6 R %s 000005 10.0.0.2:1 10.0.0.1:2 1' "$BASE"
	} > "$d/rt-network-log0"
	head -c 100000 /dev/urandom > "$d/rt-network-log1"
	echo >> "$d/rt-network-log1"
	rec R $((b + 6)) >> "$d/rt-network-log1"
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv)" 0 "exit status"
	expect_eq "$(tail -n +2 "$T/out" | wc -l)" 3 "the 3 valid records printed"
	grep -q "rt-network-log0:2: truncated header" "$T/err" || fail "too few fields"
	grep -q "rt-network-log0:3: too many fields for R" "$T/err" || fail "too many fields"
	grep -q "rt-network-log0:4: R sent_bytes is not a decimal number" "$T/err" || fail "non-numeric"
	grep -q "rt-network-log0:5: line longer than 767 bytes" "$T/err" || fail "overlong"
	grep -q "rt-network-log0:6: binary data: byte 0x01" "$T/err" || fail "binary"
	grep -q "rt-network-log0:8: truncated line (no newline at end of file)" "$T/err" || fail "missing newline"
	grep -q "rt-network-log1: [0-9]* malformed lines skipped" "$T/err" || fail "random bytes counted"
	grep -q "malformed lines in all, 3 valid" "$T/err" || fail "total: $(tail -n 3 "$T/err")"
	sed 's/^/# /' "$T/err" | head -n 8
}

# ---- merge order ------------------------------------------------------------------------

case_merge_order() {
	local d=$T/merge b=$((BASE * 1000000)) i
	mkdir -p "$d"
	# three CPUs; each file in reverse start order, interleaved across files
	for i in $(seq 299 -1 0); do
		rec R $((b + i * 10000)) $((20000 + i)) >> "$d/rt-network-log$((i % 3))"
	done
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv)" 0 "exit status"
	expect_eq "$(tail -n +2 "$T/out" | wc -l)" 300 "records"
	tail -n +2 "$T/out" | awk -F, '{ print $2 * 1000000 + $3 }' > "$T/t"
	sort -n -c "$T/t" || fail "not in start order"
	[ ! -s "$T/err" ] || fail "stderr: $(cat "$T/err")"
	# a 0.5 s window cannot reorder 3 s of reversed records: late, counted
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --reorder 0.5 --format csv)" 0 "exit status"
	expect_eq "$(tail -n +2 "$T/out" | wc -l)" 300 "records with a small window"
	grep -q "printed out of start-time order" "$T/err" || fail "late records not reported"
}

case_follow() {
	local d=$T/follow b=$((BASE * 1000000)) pid i
	mkdir -p "$d"
	: > "$d/rt-network-log0"
	: > "$d/rt-network-log1"
	"$TCPRT" read --follow --dir "$d" --reorder 0 --format csv > "$T/fout" 2> "$T/ferr" &
	pid=$!
	rec R $((b + 1)) >> "$d/rt-network-log0"
	rec R $((b + 2)) | head -c 30 >> "$d/rt-network-log1"	# half a line...
	sleep 0.5
	rec R $((b + 2)) | tail -c +31 >> "$d/rt-network-log1"	# ...completed
	rec R $((b + 3)) >> "$d/rt-network-log0"
	for i in $(seq 50); do
		[ "$(wc -l < "$T/fout")" -ge 4 ] && break
		sleep 0.1
	done
	kill -TERM "$pid"
	wait "$pid" || fail "exit status $?"
	expect_eq "$(tail -n +2 "$T/fout" | wc -l)" 3 "records followed"
	[ ! -s "$T/ferr" ] || fail "stderr: $(cat "$T/ferr")"
}

# ---- summary ------------------------------------------------------------------------------

case_summary() {
	local d=$T/sum b=$((BASE * 1000000)) i us
	mkdir -p "$d"
	# one R every 0.1 s from BASE - 3 s to BASE + 25 s; durations 1000..
	for i in $(seq 0 280); do
		us=$((b - 3000000 + i * 100000))
		rec R "$us" $((30000 + i)) 7100 $((1000 + (i * 7919) % 100000)) >> "$d/rt-network-log$((i % 2))"
		[ "$i" = 80 ] && rec N $((b + 5000000)) 40000 7100 777 >> "$d/rt-network-log0"
	done
	# and one record too late to be counted: 20 s behind the others
	rec N $((b + 6000000)) 40001 7100 888 >> "$d/rt-network-log1"
	expect_eq "$(status_of "$TCPRT" summary --dir "$d" --window 10)" 0 "summary"
	cat "$T/out" "$T/err" | sed 's/^/# /'
	# windows [BASE, +10) and [+10, +20): complete; [+20, +30): not (the
	# records end at +25); the 30 records before BASE are the warm-up
	expect_eq "$(grep -c '^# window' "$T/out")" 2 "complete windows"
	expect_eq "$(awk '$3 == "R" && $6 == "duration" { print $4, $5 }' "$T/out" | tr '\n' ' ')" \
		"100 10.000 100 10.000 " "counts and rates = count / window"
	expect_eq "$(awk '$3 == "N" { print $4, $5, $6, $10 }' "$T/out")" "1 0.100 duration 777" "the N record"
	grep -q "30 records before the first complete window not reported" "$T/err" || fail "warm-up"
	grep -q "51 records of the window starting .* not reported: the window is not complete" "$T/err" ||
		fail "incomplete window"
	grep -q "1 record arrived after its window had been reported: not counted" "$T/err" ||
		fail "late record"
	# p50/p90/p99/max of the first window against the exact values
	"$TCPRT" read --dir "$d" --type R --format csv | awk -F, -v b="$BASE" \
		'NR > 1 && $2 >= b && $2 < b + 10 { print $12 }' | sort -n > "$T/d"
	expect_eq "$(wc -l < "$T/d")" 100 "records of the first window"
	for q in 500:7 900:8 990:9 1000:10; do
		local pm=${q%:*} col=${q#*:} rank exact est
		rank=$(((100 * pm + 999) / 1000))
		exact=$(sed -n "${rank}p" "$T/d")
		est=$(awk -v c="$col" '$3 == "R" && $6 == "duration" { print $c; exit }' "$T/out")
		if [ $(((est - exact) * 128)) -gt "$exact" ] ||
		   [ $(((exact - est) * 128)) -gt "$exact" ]; then
			fail "p$pm: $est, exact $exact"
		fi
	done
}

case_summary_short() {
	local d=$T/short b=$((BASE * 1000000))
	mkdir -p "$d"
	rec R $((b + 1000000)) > "$d/rt-network-log0"
	rec R $((b + 2000000)) >> "$d/rt-network-log0"
	expect_eq "$(status_of "$TCPRT" summary --dir "$d" --window 60)" 0 "summary"
	expect_eq "$(wc -c < "$T/out")" 0 "no window reported"
	grep -q "2 records before the first complete window not reported" "$T/err" ||
		fail "stderr: $(cat "$T/err")"
}

# ---- tcp_rt's files and the vendor's, in one folder -----------------------------------------

# Appends to $M (the folder) and counts what it wrote: tcp_rt's and the
# vendor's valid lines, their task records, their E records, bad lines.
mix_t() {	# file rec-arguments...
	local f=$1
	shift
	rec "$@" >> "$M/$f"
	nt=$((nt + 1))
	if [ "$1" = E ]; then ne=$((ne + 1)); else ntask=$((ntask + 1)); fi
}

mix_v() {	# file vrec-arguments...
	local f=$1
	shift
	vrec "$@" >> "$M/$f"
	nv=$((nv + 1))
	if [ "$1" = E ]; then ne=$((ne + 1)); else ntask=$((ntask + 1)); fi
}

mix_bad() {	# file line
	echo "$2" >> "$M/$1"
	nbad=$((nbad + 1))
}

# rt-network-log0: a tcp_rt host; log1: a vendor host; log2: both kinds line
# by line (as an --archive of both would be); one record per 0.25 s from
# BASE to BASE + 20 s, then one at BASE + 25 s that ends the observation.
make_mixed() {
	local b=$((BASE * 1000000)) i us
	M=$T/mixed nt=0 nv=0 ntask=0 ne=0 nbad=0
	rm -rf "$M"
	mkdir -p "$M"
	for i in $(seq 0 79); do
		us=$((b + i * 250000))
		case $((i % 8)) in
		0) mix_t rt-network-log0 R "$us" $((30000 + i)) 7100 $((1000 + i))
		   mix_t rt-network-log0 E $((us - 100)) $((30000 + i)) 7100 ;;
		1) mix_v rt-network-log1 R "$us" $((31000 + i)) 7100 $((2000 + i))
		   mix_v rt-network-log1 E "$us" $((31000 + i)) 7100 ;;
		2) mix_t rt-network-log0 W "$us" $((30000 + i))
		   mix_v rt-network-log1 W "$us" $((31000 + i)) ;;
		3) mix_t rt-network-log0 N "$us" $((30000 + i))
		   mix_v rt-network-log1 N "$us" $((31000 + i)) ;;
		4) mix_t rt-network-log0 P "$us" $((50000 + i)) 6379
		   mix_v rt-network-log1 P "$us" $((51000 + i)) 6380 3000 10 ;;
		5) mix_v rt-network-log1 P "$us" $((51000 + i)) 6380 3000 7
		   mix_v rt-network-log1 P "$us" $((51000 + i)) 6380 3000 5 ;;
		6) # a client connection from local port 1000 up: the E is
		   # related to its P by the file, not by the lower port
		   mix_v rt-network-log1 P "$us" $((1000 + i)) 6380 3000 7
		   mix_v rt-network-log1 E "$us" $((1000 + i)) 6380 0 client ;;
		7) mix_t rt-network-log2 R "$us" $((32000 + i)) 7100
		   mix_v rt-network-log2 R "$us" $((33000 + i)) 7100 ;;
		esac
	done
	mix_t rt-network-log0 R $((b + 25000000)) 39999 7100
	mix_bad rt-network-log1 "V6 R $BASE 001232 10.0.0.2:1 10.0.0.1:7100 1 2 3 4 5 6 7 8 0 1448 "
	mix_bad rt-network-log1 "V6 W $BASE 1 10.0.0.2:1 10.0.0.1:7100 1 2 3 4 5 6 7 8 1448 "
	mix_bad rt-network-log1 "V6 P $BASE 1 10.0.0.1:6380 10.0.0.2:1 1 2 3 4 5 6 "
	mix_bad rt-network-log2 "V6 W $BASE 000001 10.0.0.2:1 10.0.0.1:7100 1 2 3 4 5 6 7 8 0 1448"
	mix_bad rt-network-log2 "V6 R $BASE 1232 10.0.0.2:1 10.0.0.1:7100 1 2 3 4 5 6 7 8 0 1448"
	mix_bad rt-network-log2 "V6 R $BASE 1232 10.0.0.2:1 10.0.0.1:7100 1 2 3 4 5 6 7 8 0 1448  "
}

case_mixed_read() {
	make_mixed
	grep -q ' $' "$M/rt-network-log1" || fail "vendor lines without their trailing space"
	expect_eq "$(status_of "$TCPRT" read --dir "$M" --format json)" 0 "read json"
	expect_eq "$(wc -l < "$T/out")" $((nt + nv)) "records printed"
	grep -q "$nbad malformed lines in all, $((nt + nv)) valid" "$T/err" ||
		fail "stderr: $(cat "$T/err")"
	grep -q "rt-network-log1:[0-9]*: usec is not a number below 1000000 without leading zero" "$T/err" ||
		fail "vendor line with a padded usec"
	grep -q "too few fields for vendor W: 9 fields after the header, 10 expected" "$T/err" ||
		fail "vendor W of 9"
	grep -q "wrong number of fields for vendor P: 6 fields after the header, 10, 7 or 5 expected" "$T/err" ||
		fail "vendor P of 6"
	grep -q "too many fields for W: 10 fields after the header, 9 expected (the vendor's W has 10" "$T/err" ||
		fail "W of 10 without the trailing space"
	grep -q "usec is not six digits: '1232' (a vendor line would end with a space)" "$T/err" ||
		fail "unpadded usec without the trailing space"
	grep -q "empty field" "$T/err" || fail "two trailing spaces"
	command -v python3 > /dev/null || return 4
	python3 - "$T/out" "$nt" "$nv" <<-'PY' || fail "json check"
		import json, sys
		recs = [json.loads(l) for l in open(sys.argv[1])]
		by = {}
		for r in recs:
		    by[r["source"]] = by.get(r["source"], 0) + 1
		assert by == {"tcp_rt": int(sys.argv[2]), "vendor": int(sys.argv[3])}, by
		head = "type sec usec peer_addr peer_port local_addr local_port role port cpu source".split()
		R = "sent_bytes duration min_rtt retrans task_seq process_time upload_time recv_bytes out_of_order mss"
		P = "sent_bytes duration min_rtt retrans task_seq service_time response_time recv_bytes out_of_order mss"
		E = "last_task_seq total_sent_bytes unacked_bytes total_recv_bytes total_retrans min_rtt"
		N = "task_seq duration recv_bytes out_of_order mss"
		W9 = "sent_bytes duration min_rtt retrans task_seq process_time upload_time unacked_bytes mss"
		W10 = "sent_bytes duration min_rtt retrans task_seq process_time upload_time unacked_bytes out_of_order mss"
		want = {
		 ("tcp_rt", "R"): R, ("vendor", "R"): R, ("tcp_rt", "N"): N, ("vendor", "N"): N,
		 ("tcp_rt", "E"): E, ("vendor", "E"): E, ("tcp_rt", "W"): W9, ("vendor", "W"): W10,
		 ("tcp_rt", "P"): P,
		}
		p_keys = set()
		for r in recs:
		    key = (r["source"], r["type"])
		    names = list(r)[len(head):]
		    assert list(r)[:len(head)] == head, r
		    if key == ("vendor", "P"):
		        p_keys.add(" ".join(names))
		    else:
		        assert names == want[key].split(), (key, names)
		assert p_keys == {P, "sent_bytes duration min_rtt retrans task_seq out_of_order mss",
		                  "sent_bytes min_rtt retrans task_seq mss"}, p_keys
		w = [r for r in recs if r["type"] == "W" and r["source"] == "vendor"][0]
		assert (w["unacked_bytes"], w["out_of_order"], w["mss"]) == (1000, 1, 1448), w
		p7 = [r for r in recs if r["type"] == "P" and "service_time" not in r and "duration" in r][0]
		assert (p7["sent_bytes"], p7["duration"], p7["retrans"], p7["task_seq"], p7["min_rtt"]) == \
		       (300, 3000, 0, 1, 200), p7
		us = sorted({r["usec"] for r in recs if r["source"] == "vendor"})
		assert us[0] < 100000, "no unpadded usec below 100000 tested"
		# every E has its connection's role and service port
		for r in recs:
		    if r["type"] == "E":
		        assert (r["role"], r["port"]) in (("server", 7100), ("client", 6380)), r
		assert sum(1 for r in recs if r["type"] == "E" and r["role"] == "client") == 10
	PY
	expect_eq "$(status_of "$TCPRT" read --dir "$M" --format csv)" 0 "read csv"
	expect_eq "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "source") c = i; next }
		{ print $c }' "$T/out" | sort | uniq -c | awk '{ printf "%s=%s ", $2, $1 }')" \
		"tcp_rt=$nt vendor=$nv " "csv source column"
	expect_eq "$(status_of "$TCPRT" read --dir "$M")" 0 "read text"
	grep -q ' R server port=7100 cpu=1 source=vendor peer=10.0.0.2:31001 ' "$T/out" ||
		fail "text: $(head -n 3 "$T/out")"
	expect_eq "$("$TCPRT" read --dir "$M" --port 6380 --type E --format csv 2> /dev/null | tail -n +2 | wc -l)" \
		10 "--port 6380: the vendor client connections' E records"
}

case_mixed_summary() {
	local counted
	make_mixed
	expect_eq "$(status_of "$TCPRT" summary --dir "$M" --window 10)" 0 "summary"
	sed 's/^/# /' "$T/out" | head -n 20
	grep -q "$nbad malformed lines in all, $((nt + nv)) valid" "$T/err" ||
		fail "stderr: $(cat "$T/err")"
	if grep -q "warm-up\\|arrived after" "$T/err"; then fail "stderr: $(cat "$T/err")"; fi
	# windows [BASE, +10) and [+10, +20) hold every task but the last one
	expect_eq "$(grep -c '^# window' "$T/out")" 2 "complete windows"
	counted=$(awk '/^# window/ { w++ } /^[0-9]/ && !seen[w " " $1 " " $2 " " $3]++ { n += $4 }
		END { print n }' "$T/out")
	expect_eq "$counted" $((ntask - 1)) "tasks in the windows"
	grep -q "1 record of the window starting .* not reported" "$T/err" ||
		fail "the last task: $(cat "$T/err")"
	grep -q '^6380   client P .* duration ' "$T/out" || fail "vendor P durations"
}

case_mixed_export() {
	local f=$T/mixprom/tcprt.prom
	make_mixed
	mkdir -p "$T/mixprom"
	expect_eq "$(status_of "$TCPRT" export --once --dir "$M" --textfile "$f")" 0 "export --once"
	grep -q "^tcprt_records_read_total $((nt + nv))$" "$f" || fail "records read"
	grep -q "^tcprt_malformed_lines_total $nbad$" "$f" || fail "malformed"
	expect_eq "$(awk '/^tcprt_tasks_total/ { n += $2 } END { print n }' "$f")" "$ntask" "tasks"
	expect_eq "$(awk '/^tcprt_connections_total/ { n += $2 } END { print n }' "$f")" "$ne" "connections"
	grep -q '^tcprt_connections_total{port="6380",role="client"} 10$' "$f" ||
		fail "vendor client connections: $(grep connections_total "$f")"
	if command -v promtool > /dev/null; then
		promtool check metrics < "$f" > "$T/pt" 2>&1 || fail "promtool: $(cat "$T/pt")"
	fi
}

# ---- series ------------------------------------------------------------------------------------

# A saved run: two ports, bucket 0 and 2 of port 8080, bucket 1 of P6379.
make_series() {
	mkdir -p "$T/ser"
	{
		echo "$BASE 000000 8080 300 3000 1 1 0 1 0 0 0 1 0 1"
		echo "$BASE 001000 P6379 50 20 1 1 0 1 1 0 0 0 0 0"
		echo "$BASE 002000 8080 0 1448 0 1 1 0 1 0 0 0 1 0"
	} > "$T/ser/rt-network-series"
}

case_series() {
	make_series
	expect_eq "$(status_of "$TCPRT" series --dir "$T/ser")" 0 "series --dir"
	expect_eq "$(wc -l < "$T/out")" 4 "header and 3 rows"
	grep -q "^2026-11-20T23:40:00.001000Z  P6379         50         20 " "$T/out" ||
		fail "peer row: $(cat "$T/out")"
	expect_eq "$(status_of "$TCPRT" series --dir "$T/ser" --format csv --port 8080)" 0 "csv"
	expect_eq "$(head -1 "$T/out")" \
		"time_us,port,bytes_in,bytes_out,segs_in,segs_out,retrans,started,done,W,N,estab,closed,open" \
		"csv header"
	expect_eq "$(sed -n 3p "$T/out")" "${BASE}002000,8080,0,1448,0,1,1,0,1,0,0,0,1,0" "csv row"
	expect_eq "$(wc -l < "$T/out")" 3 "rows of port 8080"
	expect_eq "$(status_of "$TCPRT" series --dir "$T/ser" --format raw)" 0 "raw"
	cmp -s "$T/out" "$T/ser/rt-network-series" || fail "raw differs from the file"
}

# series_ext's measures after the positional fields, by name, and the
# host's line: the columns of the names seen, in the module's order
# whatever the line's; a name this tcprt does not know is skipped.
case_series_ext() {
	mkdir -p "$T/ser"
	{
		echo "$BASE 000000 8080 300 3000 1 1 0 1 0 0 0 1 0 1 flows=1 far_bytes_out=3000 ce_bytes=300"
		echo "$BASE 000000 * 400 3100 2 2 0 0 0 0 0 2 0 0 ce_bytes=300 flows=2 far_bytes_out=3100 future=7"
		echo "$BASE 001000 8080 0 1448 0 1 1 0 1 0 0 0 1 0"
	} > "$T/ser/rt-network-series"
	expect_eq "$(status_of "$TCPRT" series --dir "$T/ser" --format csv)" 0 "csv"
	expect_eq "$(head -1 "$T/out")" \
		"time_us,port,bytes_in,bytes_out,segs_in,segs_out,retrans,started,done,W,N,estab,closed,open,ce_bytes,flows,far_bytes_out" \
		"csv header: the measures seen"
	expect_eq "$(sed -n 3p "$T/out")" "${BASE}000000,*,400,3100,2,2,0,0,0,0,0,2,0,0,300,2,3100" "the host's row"
	expect_eq "$(sed -n 4p "$T/out")" "${BASE}001000,8080,0,1448,0,1,1,0,1,0,0,0,1,0,0,0,0" \
		"a line without them: 0"
	expect_eq "$(status_of "$TCPRT" series --dir "$T/ser" --port '*')" 0 "--port '*'"
	expect_eq "$(wc -l < "$T/out")" 2 "header and the host's row"
	grep -q "far_bytes_out$" "$T/out" || fail "text header: $(head -1 "$T/out")"
	expect_eq "$(status_of "$TCPRT" series --ext ce_bytes,bogus)" 2 "--ext bogus"
	grep -q "'bogus' is not a measure" "$T/err" || fail "message: $(cat "$T/err")"
	expect_eq "$(status_of "$TCPRT" series --dir "$T/ser" --host)" 2 "--dir with --host"
	echo "$BASE 002000 8080 0 0 0 0 0 0 0 0 0 0 0 0 flows=x" >> "$T/ser/rt-network-series"
	expect_eq "$(status_of "$TCPRT" series --dir "$T/ser")" 1 "a measure not a number"
}

# Runs kept by --every, read back by time: the runs that overlap the
# window, each row inside it, in time order across runs.
case_series_store() {
	local st=$T/store
	mkdir -p "$st"
	{
		echo "$BASE 000000 8080 300 3000 1 1 0 1 0 0 0 1 0 1"
		echo "$BASE 001000 8080 0 1448 0 1 1 0 1 0 0 0 1 0"
	} | gzip > "$st/series-$BASE-1000x2.gz"
	{
		echo "$((BASE + 300)) 000000 * 10 20 1 1 0 0 0 0 0 0 0 0 flows=2"
		echo "$((BASE + 300)) 001000 8080 5 6 1 1 0 1 0 0 0 0 0 1"
	} | gzip > "$st/series-$((BASE + 300))-1000x2.gz"
	echo junk > "$st/notes.txt"
	expect_eq "$(status_of "$TCPRT" series --store "$st" --since "$BASE" --until $((BASE + 600)) --format csv)" 0 \
		"--store, the window of both"
	expect_eq "$(wc -l < "$T/out")" 5 "header and 4 rows"
	expect_eq "$(sed -n 2p "$T/out" | cut -d, -f1)" "${BASE}000000" "the older run first"
	expect_eq "$(tail -1 "$T/out" | cut -d, -f1-2)" "$((BASE + 300))001000,8080" "the newer last"
	expect_eq "$(status_of "$TCPRT" series --store "$st" --since "$BASE" --until $((BASE + 1)) --format raw)" 0 \
		"a window inside the first run"
	expect_eq "$(wc -l < "$T/out")" 2 "its rows only"
	expect_eq "$(status_of "$TCPRT" series --store "$st" --since $((BASE + 300)) --port '*' --format csv)" 0 \
		"the host's rows of the second"
	expect_eq "$(tail -1 "$T/out")" "$((BASE + 300))000000,*,10,20,1,1,0,0,0,0,0,0,0,0,2" "the host's row"
	expect_eq "$(status_of "$TCPRT" series --store "$st" --since 2h --format csv)" 0 "nothing in the last 2 h"
	expect_eq "$(wc -l < "$T/out")" 1 "the header alone"
	printf 'not gzip' > "$st/series-$((BASE + 600))-1000x2.gz"
	expect_eq "$(status_of "$TCPRT" series --store "$st" --since "$BASE" --until $((BASE + 900)))" 1 \
		"a damaged run: exit 1"
	grep -q "series-$((BASE + 600))-1000x2.gz" "$T/err" || fail "names the run: $(cat "$T/err")"
	expect_eq "$(grep -c "^20" "$T/out")" 4 "the others still printed"
	# a task's milliseconds: its port's rows and the host's, 10 ms
	# either side, those during it marked (a 1.5 ms task from bucket 1)
	local task="V6 R $((BASE + 300)) 000500 10.0.0.2:40000 10.0.0.1:8080 1000 1500 300 0 1 1000 100 100 0 1448"
	expect_eq "$(status_of "$TCPRT" series --store "$st" --task "$task" --format csv)" 0 "--task"
	expect_eq "$(cat "$T/out")" "time_us,port,bytes_in,bytes_out,segs_in,segs_out,retrans,started,done,W,N,estab,closed,open,flows,in_task
$((BASE + 300))000000,*,10,20,1,1,0,0,0,0,0,0,0,0,2,1
$((BASE + 300))001000,8080,5,6,1,1,0,1,0,0,0,0,0,1,0,1" "the task's rows, both in it"
	grep -q "runs kept cover part" "$T/err" && fail "a task covered whole said to be covered in part: $(cat "$T/err")"
	# 10 ms later: no run covers it - said, exit 1, the row 10 ms before
	# it shown, not in it
	expect_eq "$(status_of "$TCPRT" series --store "$st" --task "${task/000500/010500}" --format csv)" 1 \
		"--task 10 ms later, no run covers it"
	grep -q "^tcprt: series: no run kept in $st covers the task ($((BASE + 300)).010500, 1500 us): its milliseconds were not recorded$" "$T/err" ||
		fail "not covered: $(cat "$T/err")"
	expect_eq "$(tail -n +2 "$T/out" | cut -d, -f2,16 | tr '\n' ' ')" "8080,0 " "the row 10 ms before it, not in it"
	# half of it in a run: shown, and said
	expect_eq "$(status_of "$TCPRT" series --store "$st" --task "${task/000500/001250}" --format csv)" 0 \
		"--task from 1.25 ms, the run's last bucket ending at 2 ms"
	grep -q "^tcprt: series: the runs kept cover part of the task: 750 of its 1500 us$" "$T/err" ||
		fail "in part: $(cat "$T/err")"
	expect_eq "$(status_of "$TCPRT" series --store "$st" --task "V6 E $BASE 000000 10.0.0.2:1 10.0.0.1:8080 1 2 0 3 0 4")" 2 \
		"--task of an E"
	expect_eq "$(status_of "$TCPRT" series --store "$st" --task "$task" --port 8080)" 2 "--task with --port"
	# options that do not go together
	expect_eq "$(status_of "$TCPRT" series --every 300)" 2 "--every without --store"
	expect_eq "$(status_of "$TCPRT" series --every 0.5 --store "$st")" 2 "--every 0.5"
	expect_eq "$(status_of "$TCPRT" series --every 300 --store "$st" --since 1h)" 2 "--every with --since"
	expect_eq "$(status_of "$TCPRT" series --store "$st" --us 1000)" 2 "--store alone with --us"
	expect_eq "$(status_of "$TCPRT" series --since 1h)" 2 "--since without --store"
	expect_eq "$(status_of "$TCPRT" series --every 300 --store "$st" --keep 3x)" 2 "--keep 3x"
	expect_eq "$(status_of "$TCPRT" series --every 300 --store "$st" --keep-bytes lots)" 2 "--keep-bytes lots"
	expect_eq "$(status_of "$TCPRT" series --store "$st" --trigger)" 2 "--trigger without --every"
	expect_eq "$(status_of "$TCPRT" series --every 300 --store "$st" --trigger-factor 1.2)" 2 "--trigger-factor 1.2"
	expect_eq "$(status_of "$TCPRT" series --every 300 --store "$st" --trigger-fail 1001)" 2 "--trigger-fail 1001"
	expect_eq "$(status_of "$TCPRT" series --every 300 --store "$st" --trigger-gap x)" 2 "--trigger-gap x"
	expect_eq "$(status_of "$TCPRT" series --every 300 --store "$st" --coarse 600)" 2 "--coarse without --recorder"
	grep -q "coarse is the recorder's: with --recorder" "$T/err" || fail "--coarse: $(cat "$T/err")"
	expect_eq "$(status_of "$TCPRT" series --recorder 1000 --store "$st" --coarse 0)" 2 "--coarse 0"
	expect_eq "$(status_of "$TCPRT" series --store "$st" --since $((BASE + 9)) --until "$BASE")" 2 \
		"--since after --until"
}

case_series_hostile() {
	make_series
	echo "$BASE 3000 8080 1 2 3" >> "$T/ser/rt-network-series"
	echo "$BASE 003000 70000 0 0 0 0 0 0 0 0 0 0 0 0" >> "$T/ser/rt-network-series"
	expect_eq "$(status_of "$TCPRT" series --dir "$T/ser")" 1 "malformed lines: exit 1"
	expect_eq "$(grep -c "not a series line" "$T/err")" 2 "each reported"
	expect_eq "$(wc -l < "$T/out")" 4 "the good rows still printed"
	expect_eq "$(status_of "$TCPRT" series --us 500)" 2 "--us 500"
	expect_eq "$(status_of "$TCPRT" series --buckets 0)" 2 "--buckets 0"
	expect_eq "$(status_of "$TCPRT" series --dir "$T/ser" --us 1000)" 2 "--dir with --us"
	expect_eq "$(status_of "$TCPRT" series --dir "$T/nowhere")" 1 "no such folder"
}

case_series_plot() {
	command -v gnuplot > /dev/null || { echo "# no gnuplot (apt install gnuplot-nox)"; exit 4; }
	make_series
	expect_eq "$(status_of "$TCPRT" series --dir "$T/ser" --plot "$T/s.png")" 0 "--plot"
	expect_eq "$(wc -c < "$T/out")" 0 "no table without --format"
	expect_eq "$(head -c 8 "$T/s.png" | od -An -tx1 | tr -d ' ')" 89504e470d0a1a0a "a PNG"
	# what gnuplot is given (a gnuplot first on PATH that keeps its
	# script): three panels, each bucket's ports summed
	mkdir -p "$T/gpbin"
	printf '#!/bin/sh\ntee "%s" | exec %s\n' "$T/gp.in" "$(command -v gnuplot)" > "$T/gpbin/gnuplot"
	chmod +x "$T/gpbin/gnuplot"
	expect_eq "$(PATH="$T/gpbin:$PATH" status_of "$TCPRT" series --dir "$T/ser" --plot "$T/s.png")" 0 "--plot, kept"
	grep -q "^set multiplot layout 3,1 " "$T/gp.in" || fail "three panels: $(grep multiplot "$T/gp.in")"
	expect_eq "$(sed -n '/^\$d << EOD$/,/^EOD$/p' "$T/gp.in" | sed '1d;$d' | cut -d' ' -f1-3 | tr '\n' '|')" \
		"0.000 300 3000|1.000 50 20|2.000 0 1448|" "the data: ms, bytes in and out a bucket"
	# the host's line is not added to the ports': drawn alone, or not;
	# series_ext's measures in panels of their own, by name
	{
		echo "$BASE 000000 8080 300 3000 1 1 0 1 0 0 0 1 0 1 flows=1 far_bytes_out=3000 ce_segs=2"
		echo "$BASE 000000 * 400 3100 2 2 0 0 0 0 0 2 0 0 ce_segs=2 flows=2 far_bytes_out=3100"
		echo "$BASE 001000 8080 0 1448 0 1 1 0 1 0 0 0 1 0 flows=1"
	} > "$T/ser/rt-network-series"
	expect_eq "$(PATH="$T/gpbin:$PATH" status_of "$TCPRT" series --dir "$T/ser" --plot "$T/x.png")" 0 "--plot with the host's line"
	grep -q "^set multiplot layout 6,1 title 'tcp_rt series, 3 rows, ports summed (not the host line)'$" "$T/gp.in" ||
		fail "six panels, the ports': $(grep multiplot "$T/gp.in")"
	expect_eq "$(sed -n '/^\$d << EOD$/,/^EOD$/p' "$T/gp.in" | sed '1d;$d' | cut -d' ' -f1-3 | tr '\n' '|')" \
		"0.000 300 3000|1.000 0 1448|" "the data: the port's row alone, not the host's added"
	grep -q "^plot \$d using 1:[0-9]* with steps title 'flows'$" "$T/gp.in" || fail "flows: $(grep flows "$T/gp.in")"
	grep -q "title 'ce_segs'" "$T/gp.in" || fail "ce_segs: $(grep ECN -A1 "$T/gp.in")"
	grep -q "title 'far_bytes_out'" "$T/gp.in" || fail "far: $(grep far -A1 "$T/gp.in")"
	expect_eq "$(PATH="$T/gpbin:$PATH" status_of "$TCPRT" series --dir "$T/ser" --port '*' --plot "$T/h.png")" 0 "--plot of the host"
	grep -q "the whole host'$" "$T/gp.in" || fail "the host's: $(grep multiplot "$T/gp.in")"
	expect_eq "$(sed -n '/^\$d << EOD$/,/^EOD$/p' "$T/gp.in" | sed '1d;$d' | cut -d' ' -f1-3)" "0.000 400 3100" "the host's row"
	: > "$T/ser/rt-network-series"
	expect_eq "$(status_of "$TCPRT" series --dir "$T/ser" --plot "$T/e.png")" 1 "nothing to plot"
	[ ! -e "$T/e.png" ] || fail "a picture of nothing"
}

# ---- export ----------------------------------------------------------------------------------

case_export() {
	local d b=$((BASE * 1000000)) f=$T/prom/tcprt.prom
	d=$(make_all_types)
	mkdir -p "$T/prom"
	expect_eq "$(status_of "$TCPRT" export --once --dir "$d" --textfile "$f")" 0 "export --once"
	[ -f "$f" ] || fail "no $f"
	expect_eq "$(stat -c %a "$f")" 644 "mode"
	expect_eq "$(ls -A "$T/prom")" tcprt.prom "no temporary file left"
	grep -q '^tcprt_tasks_total{port="7100",role="server",type="R"} 1$' "$f" || fail "tasks R"
	grep -q '^tcprt_tasks_total{port="6379",role="client",type="P"} 1$' "$f" || fail "tasks P"
	grep -q '^tcprt_failed_tasks_total{port="7100",role="server",type="W"} 1$' "$f" || fail "failed W"
	grep -q '^tcprt_failed_tasks_total{port="7100",role="server",type="N"} 1$' "$f" || fail "failed N"
	grep -q '^tcprt_connections_total{port="7100",role="server"} 1$' "$f" || fail "connections"
	grep -q '^tcprt_retransmissions_total{port="7100",role="server",type="R"} 1$' "$f" || fail "retrans"
	grep -q '^tcprt_duration_seconds_bucket{port="443",role="server",type="R",le="0.002"} 1$' "$f" ||
		fail "duration 2000 us in le=0.002"
	grep -q '^tcprt_duration_seconds_bucket{port="443",role="server",type="R",le="0.0016"} 0$' "$f" ||
		fail "not in le=0.0016"
	grep -q '^tcprt_duration_seconds_sum{port="443",role="server",type="R"} 0.002000$' "$f" || fail "sum"
	grep -q '^tcprt_duration_seconds_bucket{port="7100",role="server",type="R",le="0.00001"} 0$' "$f" ||
		fail "first bound 10 us"
	grep -q '^tcprt_duration_seconds_bucket{port="7100",role="server",type="R",le="0.0000125"} 0$' "$f" ||
		fail "bound 12.5 us"
	grep -q '^tcprt_duration_seconds_bucket{port="7100",role="server",type="R",le="100"} 1$' "$f" ||
		fail "last bound 100 s"
	expect_eq "$(grep -c '^tcprt_duration_seconds_bucket{port="7100",role="server",type="R"' "$f")" 72 \
		"r10: 71 bounds + Inf"
	if grep -E 'addr|10\.0\.0' "$f"; then fail "addresses in the labels"; fi
	if command -v promtool > /dev/null; then
		promtool check metrics < "$f" > "$T/pt" 2>&1 || fail "promtool: $(cat "$T/pt")"
		echo "# promtool check metrics: OK"
	else
		echo "# promtool not installed: exposition format not checked"
	fi
}

case_export_atomic() {
	local d=$T/atomic f=$T/prom2/tcprt.prom b=$((BASE * 1000000)) pid i bad=0
	mkdir -p "$d" "$T/prom2"
	for i in $(seq 0 2000); do rec R $((b + i * 1000)) $((20000 + i)) $((1000 + i % 50)); done \
		> "$d/rt-network-log0"
	"$TCPRT" export --dir "$d" --textfile "$f" --interval 0.01 2> "$T/aerr" &
	pid=$!
	for i in $(seq 100); do [ -s "$f" ] && break; sleep 0.05; done
	for i in $(seq 300); do
		tail -n 1 "$f" | grep -q '^tcprt_malformed_lines_total 0$' || bad=$((bad + 1))
	done
	kill -TERM "$pid"
	wait "$pid" || fail "exit status $?"
	expect_eq "$bad" 0 "reads of a partial file (300 reads while rewritten every 10 ms)"
	expect_eq "$(ls -A "$T/prom2")" tcprt.prom "no temporary file left"
}

# ---- agent -----------------------------------------------------------------------------------

# tcprt agent with the metrics sink, configured by a file: the same text
# file and archive as tcprt export of the same records (the same sink);
# --check writes nothing.
case_agent() {
	local d c=$T/ag/agent.conf
	command -v python3 > /dev/null || return 4
	d=$(make_all_types)
	rm -rf "$T/ag"
	mkdir -p "$T/ag"
	if ! "$TCPRT" agent --help | grep -q -- --config; then return 4; fi
	expect_eq "$(status_of "$TCPRT" export --once --dir "$d" --textfile "$T/ag/export.prom" \
		--archive "$T/ag/export.arch")" 0 "export --once"
	cat > "$c" <<-EOF
		# the test's agent
		[agent]
		dir = $d
		  archive = $T/ag/agent.arch    ; every line read
		interval = 0.5
		status = $T/ag/agent.status

		[metrics]
		textfile = $T/ag/agent.prom
		buckets = r10
	EOF
	chmod 644 "$c"
	expect_eq "$(status_of "$TCPRT" agent --config "$c" --check)" 0 "agent --check"
	expect_eq "$(cat "$T/out")" "$c: good; sinks: metrics" "--check's line"
	[ ! -e "$T/ag/agent.prom" ] || fail "--check wrote the text file"
	expect_eq "$(status_of "$TCPRT" agent --config "$c" --once)" 0 "agent --once: $(cat "$T/err")"
	without_agent "$T/ag/agent.prom" | cmp -s "$T/ag/export.prom" - ||
		fail "the agent's text file differs from export's: $(without_agent "$T/ag/agent.prom" | diff "$T/ag/export.prom" - | head -n 5)"
	# and has the sinks' counts, as the status file (which follows the
	# output: the metrics sink's count the same before and after it)
	expect_eq "$(sed -n 's/^tcprt_agent_status{key="\(.*\)"} /\1 /p' "$T/ag/agent.prom")" \
		"$(sed '1,/^sinks /d' "$T/ag/agent.status")" "tcprt_agent_status: the status file's sink lines"
	grep -q '^tcprt_agent_status{key="metrics_records"} 7$' "$T/ag/agent.prom" ||
		fail "tcprt_agent_status: $(grep tcprt_agent_status "$T/ag/agent.prom")"
	cmp -s "$T/ag/export.arch" "$T/ag/agent.arch" || fail "the agent's archive differs from export's"
	expect_eq "$(wc -l < "$T/ag/agent.arch")" 7 "archived lines"
	grep -q '^tcprt_tasks_total{port="7100",role="server",type="R"} 1$' "$T/ag/agent.prom" || fail "tasks R"
	# the status: what was read, what each sink was handed and lost
	expect_eq "$(grep -E '^(records_read|malformed_lines|archive_lines|archive_failed|sinks|metrics_records|metrics_textfile_failed) ' \
		"$T/ag/agent.status" | tr '\n' ' ')" \
		"records_read 7 malformed_lines 0 archive_lines 7 archive_failed 0 sinks metrics metrics_records 7 metrics_textfile_failed 0 " \
		"the agent's status"
	# an archive that cannot be written: its lines counted as failed,
	# said once, and --once's exit says not all went
	sed -i "s|^ *archive = .*|archive = /dev/full|" "$c"
	expect_eq "$(status_of "$TCPRT" agent --config "$c" --once)" 1 "agent --once, archive on /dev/full"
	expect_eq "$(grep -E '^archive_(lines|failed) ' "$T/ag/agent.status" | tr '\n' ' ')" \
		"archive_lines 0 archive_failed 7 " "the status of an archive not written"
	expect_eq "$(cat "$T/err")" "tcprt: /dev/full: No space left on device: archive lines not written (counted, as archive_failed)
tcprt: /dev/full: 7 line(s) not archived (write errors), 0 archived" "its messages"
}

# The ship sink in the agent, beside the metrics sink: the same data
# messages as tcprt ship sends of the same logs (but for the epoch, drawn
# anew), the metrics as export's, and the ship's counts in the status.
case_agent_ship() {
	local d c=$T/ags/agent.conf
	command -v python3 > /dev/null || return 4
	if ! "$TCPRT" agent --help | grep -q -- --config; then return 4; fi
	d=$(make_all_types)
	rm -rf "$T/ags"
	mkdir -p "$T/ags"
	receive_until_final "$T/ags/sock1" "$T/ags/ship.got"
	expect_eq "$(status_of "$TCPRT" ship --unsigned --dir "$d" --once --host-id h1 \
		--socket "$T/ags/sock1" --rate 0)" 0 "ship --once"
	wait "$RX" || fail "the receiver"
	expect_eq "$(status_of "$TCPRT" export --once --dir "$d" --textfile "$T/ags/export.prom")" 0 "export --once"
	cat > "$c" <<-EOF
		[agent]
		dir = $d
		status = $T/ags/agent.status
		[metrics]
		textfile = $T/ags/agent.prom
		[ship]
		unsigned = yes
		host-id = h1
		socket = $T/ags/sock2
		rate = 0
	EOF
	chmod 644 "$c"
	expect_eq "$(status_of "$TCPRT" agent --config "$c" --check)" 0 "agent --check"
	expect_eq "$(cat "$T/out")" "$c: good; sinks: metrics ship" "--check's line"
	receive_until_final "$T/ags/sock2" "$T/ags/agent.got"
	expect_eq "$(status_of "$TCPRT" agent --config "$c" --once)" 0 "agent --once: $(cat "$T/err")"
	wait "$RX" || fail "the receiver"
	grep -q "7 records numbered, 7 sent in" "$T/err" || fail "the ship's report: $(cat "$T/err")"
	python3 - "$T/ags/ship.got" "$T/ags/agent.got" <<-'PY' || fail "the agent's data messages differ from ship's"
		import sys
		def data(path):
		    out = []
		    for m in open(path, "rb").read().split(b"\n")[:-1]:
		        f = m.split(b" ")
		        if f[1] in (b"D1", b"D2"):
		            f[3] = b"EPOCH"
		            out.append(b" ".join(f))
		    return out
		a, b = data(sys.argv[1]), data(sys.argv[2])
		assert a and a == b, (a, b)
	PY
	without_agent "$T/ags/agent.prom" | cmp -s "$T/ags/export.prom" - ||
		fail "the agent's text file differs from export's: $(without_agent "$T/ags/agent.prom" | diff "$T/ags/export.prom" - | head -n 5)"
	expect_eq "$(grep -E '^(sinks|ship_numbered|ship_sent|ship_cap_dropped|ship_refused) ' \
		"$T/ags/agent.status" | tr '\n' ' ')" \
		"sinks metrics ship ship_numbered 7 ship_sent 7 ship_cap_dropped 0 ship_refused 0 " \
		"the agent's status"
}

# A key of an agent's status file.
agent_stat() {	# file key
	awk -v k="$2" '$1 == k { print $2 }' "$1" 2> /dev/null
}

# Wait until the agent's status file FILE says KEY is at least N (30 s).
agent_wait() {	# file key n
	local i
	for ((i = 0; i < 600; i++)); do
		[ "$(agent_stat "$1" "$2")" -ge "$3" ] 2> /dev/null && return 0
		sleep 0.05
	done
	fail "the agent's $2: $(agent_stat "$1" "$2"), expected at least $3"
}

# The agent's [ship] with a send queue: rsyslog's socket full (a receiver
# that reads nothing until told) holds no other sink - the metrics' text
# file has every record while the messages wait in the queue - and once
# it reads, the queue drains in order (poll()'s POLLOUT): every record
# sent, none refused.  A queue too small for what waits refuses the
# oldest, counted: numbered = sent + refused, sent = the items received.
case_agent_ship_queue() {
	local d=$T/agq c=$T/agq/agent.conf n
	command -v python3 > /dev/null || return 4
	if ! "$TCPRT" agent --help | grep -q -- --config; then return 4; fi
	# the case's daemons end with it, failed or not
	AGQ_PID=''
	trap 'kill ${AGQ_PID:-} ${RX:-} 2> /dev/null || true' EXIT
	rm -rf "$d"
	mkdir -p "$d/logs"
	python3 tests/fleet_gen.py "$d/logs" 3000 --files 2 > /dev/null
	n=$(cat "$d"/logs/rt-network-log* | wc -l)
	# read nothing until told, then until the final C1
	receive_until_final "$d/sock" "$d/got" held
	cat > "$c" <<-EOF
		[agent]
		dir = $d/logs
		interval = 0.2
		status = $d/agent.status
		[metrics]
		textfile = $d/agent.prom
		[ship]
		unsigned = yes
		host-id = h1
		socket = $d/sock
		rate = 0
		send-wait = 60
		queue = 4M
	EOF
	chmod 644 "$c"
	"$TCPRT" agent --config "$c" 2> "$d/err" &
	AGQ_PID=$!
	# the socket full, the messages queued: the text file has them all
	agent_wait "$d/agent.status" metrics_records "$n"
	agent_wait "$d/agent.status" ship_queued 1
	grep -q "^tcprt_records_read_total $n\$" "$d/agent.prom" ||
		fail "the text file while ship's messages wait: $(grep records_read "$d/agent.prom")"
	expect_eq "$(agent_stat "$d/agent.status" ship_refused)" 0 "refused while the socket is full"
	echo "# socket full: the text file has all $n records; ship: $(agent_stat "$d/agent.status" ship_queued) records queued in $(agent_stat "$d/agent.status" ship_queued_bytes) bytes, $(agent_stat "$d/agent.status" ship_sent) sent"
	kill -USR1 "$RX"
	agent_wait "$d/agent.status" ship_sent "$n"
	expect_eq "$(agent_stat "$d/agent.status" ship_queued)" 0 "queued once the socket reads"
	kill -TERM "$AGQ_PID"
	wait "$AGQ_PID" || fail "the agent exited with $?: $(cat "$d/err")"
	wait "$RX" || fail "the receiver"
	grep -q "$n records numbered, $n sent in .* messages, 0 dropped by the cap, 0 refused" "$d/err" ||
		fail "the ship's report: $(cat "$d/err")"
	python3 - "$d/got" "$n" <<-'PY' || fail "the data messages received"
		import sys
		msgs = [m.split(b" ") for m in open(sys.argv[1], "rb").read().split(b"\n")[:-1]]
		data = [f for f in msgs if f[1] == b"D1"]
		seq = 0
		for f in data:		# in order: each message's first number the next
		    assert int(f[4]) == seq, (int(f[4]), seq)
		    seq += int(f[6])
		assert seq == int(sys.argv[2]), (seq, sys.argv[2])
		print(f"# {len(data)} data messages, numbers 0 to {seq - 1} in order")
	PY

	# a queue of two messages, the socket never read: the oldest refused
	rm -f "$d/sock" "$d/sock.ready" "$d/agent.status"
	python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[1] + ".ready", "w").close()
time.sleep(120)' "$d/sock" &
	RX=$!
	await_ready "$d/sock"
	sed -i -e 's/^queue = .*/queue = 8200/' -e 's/^send-wait = .*/send-wait = 0.2/' "$c"
	"$TCPRT" agent --config "$c" 2> "$d/err" &
	AGQ_PID=$!
	agent_wait "$d/agent.status" metrics_records "$n"
	agent_wait "$d/agent.status" ship_refused 1
	kill -TERM "$AGQ_PID"
	wait "$AGQ_PID" || fail "the agent exited with $?: $(cat "$d/err")"
	kill "$RX"
	wait "$RX" 2> /dev/null || true
	python3 - "$d/err" "$n" "$(cat /proc/sys/net/unix/max_dgram_qlen)" <<-'PY' || fail "the refused count"
		import re, sys
		err = open(sys.argv[1]).read()
		m = re.search(r"(\d+) records numbered, (\d+) sent in (\d+) messages, 0 dropped by the cap, (\d+) refused", err)
		numbered, sent, nmsg, refused = map(int, m.groups())
		# the socket took max_dgram_qlen + 1 datagrams, the rest refused
		assert numbered == int(sys.argv[2]) and sent + refused == numbered, m.groups()
		assert nmsg <= int(sys.argv[3]) + 1 and refused > 0, m.groups()
		print(f"# queue of 8200 bytes, socket never read: {sent} sent in {nmsg} messages, {refused} refused, of {numbered}")
	PY
}

# A configuration that is not right: exit 2 and one line naming the file,
# the line when it is one line's, the section, the key and why; a file
# that cannot be read, exit 1.
case_agent_conf_errors() {
	local c=$T/agbad.conf want text n=0
	if ! "$TCPRT" agent --help | grep -q -- --config; then return 4; fi
	while IFS='|' read -r want text; do
		n=$((n + 1))
		printf '%b' "$text" > "$c"
		chmod 644 "$c"
		expect_eq "$(status_of "$TCPRT" agent --config "$c" --check)" 2 "configuration $n: $text"
		expect_eq "$(cat "$T/err")" "tcprt: agent: $c$want" "configuration $n's message"
		[ ! -s "$T/out" ] || fail "configuration $n: something on stdout: $(cat "$T/out")"
	done <<-'LIST'
		:2: [metrics] max-ports: '0' is not 1..65535|[metrics]\nmax-ports = 0\ntextfile = /x.prom\n
		:3: [metrics] port: given twice|[metrics]\nport = 80\n  port = 81\ntextfile = /x.prom\n
		:3: not a [section], a key = value or a comment|[metrics]\ntextfile = /x.prom\nbogus\n[x]\na = 1\n
		:1: a: a key before any [section]|a = 1\n[metrics]\ntextfile = /x.prom\n
		:4: [nope]: not a section (agent, metrics, windows, ship, series)|[metrics]\ntextfile = /x.prom\n[nope]\na = 1\n
		:2: [metrics] colour: not a key of [metrics]|[metrics]\ncolour = blue\n
		:2: [metrics] otlp-exponential: 'maybe' is not yes or no|[metrics]\notlp-exponential = maybe\n
		:2: [agent] interval: '0' is not a number of seconds > 0, at most a day|[agent]\ninterval = 0\n
		:2: [agent] input-format: 'xml' is not auto, text or binary|[agent]\ninput-format = xml\n
		:2: [metrics] netns: 'x' is not a network namespace's inode number (N or net:[N], N > 0)|[metrics]\nnetns = x\n
		: [metrics] --textfile: '/x.txt' does not end in .prom (node_exporter reads only *.prom)|[metrics]\ntextfile = /x.txt\n
		: [metrics] --otlp-exponential, --otlp-logs, --otlp-logs-url and --otlp-header-file need --otlp URL|[metrics]\ntextfile = /x.prom\notlp-logs = 5\n
		: no sink: configure one ([metrics], [windows], [ship], [series])|[agent]\ninterval = 5\n
		:2: [series] us: '5' is not 100, 1000 or 10000|[series]\nus = 5\n
		:4: [series] every: '1.5' is not a whole number of seconds, 1 or more|[metrics]\ntextfile = /x.prom\n[series]\nevery = 1.5\n
		:2: [series] ext: 'foo' is not a measure (ce_bytes, ce_segs, ece, dup_bytes, dup_segs, flows, far_bytes_in, far_bytes_out, or all)|[series]\next = foo\n
		:2: [series] trigger-factor: '1' is not a number from 1.5 to 1000|[series]\ntrigger-factor = 1\n
		:2: [series] trigger-interval: '3601' is not a whole number of seconds, 1 to 3600|[series]\ntrigger-interval = 3601\n
		:2: [series] trigger-bogus: not a key of [series]|[series]\ntrigger-bogus = 1\n
		: [series] every: not set (a run at every multiple of that many seconds), nor recorder|[metrics]\ntextfile = /x.prom\n[series]\nstore = /tmp/s\n
		: [series] store: not set (the folder the runs are kept in)|[metrics]\ntextfile = /x.prom\n[series]\nevery = 60\n
		:4: [series] coarse: '100001' is not buckets, 1 to 100000|[metrics]\ntextfile = /x.prom\n[series]\ncoarse = 100001\n
		: [series] coarse is the recorder's: with recorder|[metrics]\ntextfile = /x.prom\n[series]\nevery = 60\ncoarse = 600\nstore = /tmp/s\n
		: [series] alone: the agent would read, and so consume, the logs for no sink; run tcprt series --every instead|[series]\nevery = 60\nstore = /tmp/s\n
		: [series] runs the module's series: not with [agent] dir (recorded logs)|[agent]\ndir = /tmp\n[metrics]\ntextfile = /x.prom\n[series]\nevery = 60\nstore = /tmp/s\n
		:2: [ship] rate: '12x' is not a number of bytes (up to 1000G; k, M, G: powers of 1000)|[ship]\nrate = 12x\n
		:3: [ship] socket: '' is not a socket path (1 to 107 bytes)|[ship]\nunsigned = yes\nsocket =\n
		: [ship] unsigned and key-file: one or the other|[agent]\ndir = /tmp\n[ship]\nunsigned = yes\nkey-file = /k\n
: [ship] queue: 100 bytes is less than two messages take (8026); 0: no queue|[agent]\ndir = /tmp\n[ship]\nunsigned = yes\nqueue = 100\n
		: [windows] --socket-group needs --socket|[windows]\nsocket-group = 0\n
		:2: [windows] windows: at most 4 lengths|[windows]\nwindows = 1,2,3,4,5\n
		:3: [windows] by: 'x' is not port, container, netns or peer|[windows]\nsocket = /tmp/s\nby = x\n
	LIST
	# inih's lines are 200 bytes: a longer one is an error, not two lines
	printf '[metrics]\ntextfile = /%0300d.prom\n' 0 > "$c"
	expect_eq "$(status_of "$TCPRT" agent --config "$c" --check)" 2 "a long line"
	expect_eq "$(cat "$T/err")" "tcprt: agent: $c:2: longer than 198 characters" "a long line's message"
	# it says what the agent writes and where records go: not group-writable
	printf '[metrics]\ntextfile = /x.prom\n' > "$c"
	chmod 664 "$c"
	expect_eq "$(status_of "$TCPRT" agent --config "$c" --check)" 2 "a group-writable file"
	expect_eq "$(cat "$T/err")" "tcprt: agent: $c: writable by group or other users: chmod go-w $c" \
		"a group-writable file's message"
	expect_eq "$(status_of "$TCPRT" agent --config "$T/no/such.conf")" 1 "no file"
	expect_eq "$(cat "$T/err")" "tcprt: agent: $T/no/such.conf: No such file or directory" "no file's message"
	expect_eq "$(status_of "$TCPRT" agent --config)" 2 "--config without a value"
}

# --otlp's options: each bad value or combination a usage error naming
# the option (or, in a tcprt built without OTLP, the one line saying so);
# to another machine, http:// or no identity is refused but with
# --otlp-insecure (a later error, the text file's, shows one accepted).
# The collector itself: tests/otlp.sh.
case_otlp_usage() {
	local args opt u=http://127.0.0.1:1/opentelemetry/v1/metrics
	echo "Authorization: Bearer x" > "$T/hdr"
	chmod 644 "$T/hdr"
	printf 'no colon here\n' > "$T/hdr2"
	chmod 600 "$T/hdr2"
	while IFS='|' read -r opt args; do
		# shellcheck disable=SC2086
		expect_eq "$(status_of "$TCPRT" $args)" 2 "tcprt $args"
		grep -q -e "$opt" -e 'built without OTLP' "$T/err" || fail "tcprt $args: $(cat "$T/err")"
		[ "$(wc -l < "$T/err")" -le 2 ] || fail "tcprt $args: more than a message: $(cat "$T/err")"
	done <<-LIST
		--otlp|export --otlp ftp://x/v1/metrics
		--otlp|export --otlp http://
		--otlp-logs|export --otlp $u --otlp-logs 0
		--otlp-logs|export --otlp $u --otlp-logs 1000001
		--otlp-logs|export --otlp $u --otlp-logs x
		--otlp-logs-url|export --otlp $u --otlp-logs 5 --otlp-logs-url mailto:x
		--otlp-logs-url|export --otlp $u --otlp-logs-url http://x/v1/logs
		need --otlp URL|export --textfile $T/x.prom --otlp-exponential
		need --otlp URL|export --textfile $T/x.prom --otlp-logs 5
		--otlp-logs-url|export --otlp http://127.0.0.1:1/metrics --otlp-logs 5
		--otlp http://192.0.2.1:4318/v1/metrics: not encrypted|export --otlp http://192.0.2.1:4318/v1/metrics
		would not say who it is|export --otlp https://192.0.2.1:4318/v1/metrics
		--otlp-logs-url http://192.0.2.1/v1/logs: not encrypted|export --otlp $u --otlp-logs 5 --otlp-logs-url http://192.0.2.1/v1/logs
		go together|export --otlp $u --otlp-cert $T/hdr2
		--otlp-key $T/hdr: group or other users|export --otlp $u --otlp-cert $T/hdr2 --otlp-key $T/hdr
		does not end in .prom|export --otlp http://192.0.2.1:4318/v1/metrics --otlp-insecure --textfile $T/x.txt
		does not end in .prom|export --otlp https://otel.example/v1/metrics --otlp-header-file $T/hdr2 --textfile $T/x.txt
		does not end in .prom|export --otlp https://otel.example/v1/metrics --otlp-cert $T/hdr2 --otlp-key $T/hdr2 --textfile $T/x.txt
		does not end in .prom|export --otlp http://[::1]:4318/v1/metrics --textfile $T/x.txt
		does not end in .prom|export --otlp http://localhost:4318/v1/metrics --textfile $T/x.txt
		chmod 600|export --otlp $u --otlp-header-file $T/hdr
		Name: value|export --otlp $u --otlp-header-file $T/hdr2
		--otlp-header-file|export --otlp $u --otlp-header-file $T/none
		--textfile PATH or --otlp URL|export --interval 5
	LIST
}

# ---- containers: extension fields, names, filters, --by, the export bound ------------

# Container ids and a pod UID, made up here; the cgroup ids are the inode
# numbers of the folders the test makes (stat), the netns numbers those its
# /proc says.
ID_A=$(echo container-a | sha256sum | cut -c1-64)
ID_B=$(echo container-b | sha256sum | cut -c1-64)
ID_C=cccccccccccc$(echo container-c | sha256sum | cut -c1-52)
ID_D=cccccccccccc$(echo container-d | sha256sum | cut -c1-52)
POD_UID=0a1b2c3d-1111-4222-8333-444455556666
NS_HOST=4026531840 NS_A=4026532500 NS_B=4026532600 NS_NONE=4026539999

# A synthetic cgroup2 tree and /proc in $T/ct: cg/ and proc/; sets the
# CG_* numbers; the commands read them through TCPRT_CGROUP_ROOT and
# TCPRT_PROC_ROOT.
make_ct() {
	local c=$T/ct pid p ns cg
	P_A=system.slice/docker-$ID_A.scope
	P_B=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${POD_UID//-/_}.slice/cri-containerd-$ID_B.scope
	P_C=machine.slice/libpod-$ID_C.scope
	P_D=system.slice/docker-$ID_D.scope
	P_NGINX=system.slice/nginx.service
	P_CONMON=machine.slice/libpod-conmon-$ID_C.scope
	export TCPRT_CGROUP_ROOT=$c/cg TCPRT_PROC_ROOT=$c/proc
	if [ ! -d "$c" ]; then
		mkdir -p "$c/cg/$P_A" "$c/cg/$P_B" "$c/cg/$P_C/container" "$c/cg/$P_D" \
			"$c/cg/$P_NGINX" "$c/cg/$P_CONMON" "$c/cg/gone"
		stat -c %i "$c/cg/gone" > "$c/gone"
		rmdir "$c/cg/gone"	# its container has exited
		# PID 1 in the host's namespace; 500 (and 510) in A's, 600 in B's
		for pid in 1:$NS_HOST:/init.scope 500:$NS_A:/$P_A 510:$NS_A:/$P_NGINX 600:$NS_B:/$P_B; do
			IFS=: read -r p ns cg <<< "$pid"
			mkdir -p "$c/proc/$p/ns"
			ln -s "net:[$ns]" "$c/proc/$p/ns/net"
			echo "0::$cg" > "$c/proc/$p/cgroup"
		done
	fi
	CG_A=$(stat -c %i "$c/cg/$P_A")
	CG_B=$(stat -c %i "$c/cg/$P_B")
	CG_C=$(stat -c %i "$c/cg/$P_C")
	CG_D=$(stat -c %i "$c/cg/$P_D")
	CG_NGINX=$(stat -c %i "$c/cg/$P_NGINX")
	CG_CONMON=$(stat -c %i "$c/cg/$P_CONMON")
	CG_GONE=$(cat "$c/gone")
}

# A record line with the peer @2 (IPv4 or IPv6) and extension fields @4:
# trec type start_us peer [ext [local_port]]
trec() {
	local t=$1 us=$2 peer=$3 ext=${4:-} lp=${5:-7100} p l line
	p=$peer:40000 l=10.0.0.1:$lp
	case $peer in *:*) p=[$peer]:40000 l=[2001:db8::1]:$lp ;; esac
	case $t in
	R) line="V6 R $((us / 1000000)) $(printf %06d $((us % 1000000))) $p $l 5000 1000 300 1 1 500 100 300 0 1448" ;;
	W) line="V6 W $((us / 1000000)) $(printf %06d $((us % 1000000))) $p $l 5000 1000 300 0 2 500 0 1000 1448" ;;
	N) line="V6 N $((us / 1000000)) $(printf %06d $((us % 1000000))) $p $l 3 1000 400 0 1448" ;;
	P) line="V6 P $((us / 1000000)) $(printf %06d $((us % 1000000))) $l $p 300 1000 200 0 1 500 250 4000 0 1448" ;;
	E) line="V6 E $((us / 1000000)) $(printf %06d $((us % 1000000))) $p $l 3 10000 1000 700 1 300" ;;
	esac
	echo "$line${ext:+ $ext}"
}

# Every type, with and without extension fields, of every shape.
make_ct_records() {
	local d=$T/ctrec b=$((BASE * 1000000))
	make_ct
	rm -rf "$d"
	mkdir -p "$d"
	{
		trec R $((b + 1)) 10.0.0.9
		trec R $((b + 2)) 10.0.1.5 "netns=$NS_A cgroup=$CG_A"
		trec R $((b + 3)) 10.0.2.7 "netns=$NS_B cgroup=$CG_B rq_wait=5 app=7 sq_wait=1 rwnd_limited=0 sndbuf_limited=0 app_limited=3"
		trec W $((b + 4)) 10.0.1.5 "netns=$NS_A cgroup=$CG_NGINX"
		trec N $((b + 5)) 10.0.1.6 "cgroup=$CG_C"
		trec P $((b + 6)) 10.0.2.8 "netns=$NS_B"
		trec R $((b + 7)) 10.0.3.1 "netns=$NS_NONE cgroup=$CG_GONE"
		trec R $((b + 8)) 2001:db8:1:2::5 "future_field=x netns=$NS_A"
		trec R $((b + 9)) 10.0.0.9 "netns=$NS_HOST"
		trec R $((b + 10)) 10.0.0.9 "cgroup=$CG_CONMON"
		trec E $((b + 11)) 10.0.1.5 "netns=$NS_A cgroup=$CG_A"
	} > "$d/rt-network-log0"
	echo "$d"
}

case_ct_json() {
	local d
	make_ct
	d=$(make_ct_records)
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format json)" 0 "read json"
	[ ! -s "$T/err" ] || fail "stderr: $(cat "$T/err")"
	expect_eq "$(wc -l < "$T/out")" 11 "every line read"
	python3 - "$T/out" "$ID_A" "$ID_B" "$ID_C" "$POD_UID" "$NS_A" "$NS_B" "$CG_A" "$CG_B" \
		"$CG_C" "$CG_NGINX" "$CG_GONE" "$NS_NONE" "$P_A" "$P_B" "$P_C" "$NS_HOST" "$CG_CONMON" <<-'PY' || fail "json"
		import json, sys
		(out, ida, idb, idc, pod, nsa, nsb, cga, cgb, cgc, cgn, cggone, nsnone,
		 pa, pb, pc, nshost, cgconmon) = sys.argv[1:]
		recs = [json.loads(l) for l in open(out)]
		by = {r["usec"]: r for r in recs}
		names = ("netns", "cgroup", "cgroup_path", "runtime", "container", "pod")
		def want(usec, **kw):
		    r = by[usec]
		    got = {k: r[k] for k in names if k in r}
		    kw = {k: (int(v) if k in ("netns", "cgroup") else v) for k, v in kw.items()}
		    assert got == kw, (usec, got, kw)
		want(1)
		want(2, netns=nsa, cgroup=cga, cgroup_path="/" + pa, runtime="docker", container=ida)
		want(3, netns=nsb, cgroup=cgb, cgroup_path="/" + pb, runtime="containerd", container=idb, pod=pod)
		want(4, netns=nsa, cgroup=cgn, cgroup_path="/system.slice/nginx.service", runtime="systemd", container="nginx.service")
		want(5, cgroup=cgc, cgroup_path="/" + pc, runtime="podman", container=idc)
		want(6, netns=nsb, cgroup_path="/" + pb, runtime="containerd", container=idb, pod=pod)
		want(7, netns=nsnone, cgroup=cggone, container=cggone)
		want(8, netns=nsa, cgroup_path="/" + pa, runtime="docker", container=ida)
		want(9, netns=nshost, runtime="host", container="host")
		want(10, cgroup=cgconmon, cgroup_path="/machine.slice/libpod-conmon-" + idc + ".scope",
		     container="/machine.slice/libpod-conmon-" + idc + ".scope")
		want(11, netns=nsa, cgroup=cga, cgroup_path="/" + pa, runtime="docker", container=ida)
		# the documented fields as on a line without extension fields
		assert by[3]["mss"] == 1448 and by[3]["recv_bytes"] == 300 and by[3]["port"] == 7100, by[3]
		assert by[6]["type"] == "P" and by[6]["service_time"] == 500, by[6]
		assert list(by[1])[-1] == "mss", list(by[1])
	PY
}

case_ct_csv_text() {
	local d c
	make_ct
	d=$(make_ct_records)
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv)" 0 "read csv"
	cols=$(awk -F, '{ print NF }' "$T/out" | sort -u)
	expect_eq "$cols" "$(head -n 1 "$T/out" | awk -F, '{ print NF }')" "csv: every row has every column"
	c=$(head -n 1 "$T/out" | tr ',' '\n' | grep -n '^container$' | cut -d: -f1)
	expect_eq "$(sed -n 3p "$T/out" | cut -d, -f"$c")" "$ID_A" "csv container column"
	expect_eq "$(sed -n 2p "$T/out" | cut -d, -f"$((c - 4))"-)" ",,,,,,,,,,,," "csv: no extension fields, empty cells"
	expect_eq "$(status_of "$TCPRT" read --dir "$d")" 0 "read text"
	grep -q " mss=1448 netns=$NS_B cgroup=$CG_B cgroup_path=/$P_B runtime=containerd container=$ID_B pod=$POD_UID rq_wait=5 app=7 sq_wait=1 rwnd_limited=0 sndbuf_limited=0 app_limited=3\$" "$T/out" ||
		fail "text: $(sed -n 3p "$T/out")"
	grep -q " mss=1448 netns=$NS_NONE cgroup=$CG_GONE container=$CG_GONE\$" "$T/out" ||
		fail "text, a cgroup gone: $(sed -n 7p "$T/out")"
}

case_ct_filters() {
	local d
	make_ct
	d=$(make_ct_records)
	usecs() {	# the records' usec, from read --format csv
		tail -n +2 "$T/out" | cut -d, -f3 | tr '\n' ' '
	}
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv --netns "$NS_A")" 0 "--netns"
	expect_eq "$(usecs)" "2 4 8 11 " "--netns $NS_A"
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv --netns "net:[$NS_B]")" 0 "--netns net:[N]"
	expect_eq "$(usecs)" "3 6 " "--netns net:[$NS_B]"
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv --container "$ID_A")" 0 "--container ID"
	expect_eq "$(usecs)" "2 8 11 " "--container, the full id"
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv --container "${ID_B:0:12}")" 0 "--container prefix"
	expect_eq "$(usecs)" "3 6 " "--container, 12 digits"
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv --container nginx.service)" 0 "--container unit"
	expect_eq "$(usecs)" "4 " "--container nginx.service"
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv --container "${ID_C:0:13}" --type N)" 0 "--container podman"
	expect_eq "$(usecs)" "5 " "--container of a Podman container, with --type"
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv --container "$ID_A" --netns "$NS_B")" 0 "both"
	expect_eq "$(usecs)" "" "--container A and --netns of B: nothing"
	# C and D share their first 12 digits, and both run: ambiguous
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --container "${ID_C:0:12}")" 2 "ambiguous prefix"
	grep -q "^tcprt: read: --container: '${ID_C:0:12}' is ambiguous" "$T/err" || fail "$(cat "$T/err")"
	expect_eq "$(status_of "$TCPRT" summary --dir "$d" --container "${ID_C:0:13}" --by container --window 1)" 0 "summary --container"
	expect_eq "$(status_of "$TCPRT" export --once --dir "$d" --textfile "$T/f.prom" --netns "$NS_B")" 0 "export --netns"
	expect_eq "$(awk '/^tcprt_tasks_total/ { n += $2 } END { print n }' "$T/f.prom")" 2 "export --netns: 2 tasks"
}

# Summary rows by each --by, counted from what the test wrote.
make_ct_summary() {
	local d=$T/ctsum b=$((BASE * 1000000)) i=0 line
	make_ct
	rm -rf "$d"
	mkdir -p "$d"
	while read -r peer port ext; do
		[ "$ext" = - ] && ext=
		trec R $((b + i * 100000)) "$peer" "$ext" "$port" >> "$d/rt-network-log$((i % 2))"
		i=$((i + 1))
	done <<-EOF2
		10.0.1.5 7100 netns=$NS_A cgroup=$CG_A
		10.0.1.5 7100 netns=$NS_A cgroup=$CG_A
		10.0.1.6 7100 netns=$NS_A cgroup=$CG_A
		10.0.2.7 8080 netns=$NS_B cgroup=$CG_B
		10.0.2.7 8080 netns=$NS_B cgroup=$CG_B
		10.0.1.5 7100 netns=$NS_A cgroup=$CG_NGINX
		2001:db8:1:2::5 7100 -
		2001:db8:1:2::6 7100 -
		10.0.3.1 7100 netns=$NS_NONE cgroup=$CG_GONE
	EOF2
	# the end of the observation: a task in the next window
	trec R $((b + 11000000)) 10.0.0.1 >> "$d/rt-network-log0"
	echo "$d"
}

summary_rows() {	# --by value: "KEY TYPE COUNT" of the duration rows, sorted
	"$TCPRT" summary --dir "$1" --window 10 --by "$2" 2> "$T/err" |
		awk '$6 == "duration" { print $1, $3, $4 }' | sort | tr '\n' '|'
}

case_ct_summary_by() {
	local d
	make_ct
	d=$(make_ct_summary)
	expect_eq "$(summary_rows "$d" container)" \
		"$(printf '%s\n' "$ID_A R 3" "$ID_B R 2" "nginx.service R 1" "- R 2" "$CG_GONE R 1" | sort | tr '\n' '|')" \
		"--by container"
	grep -q "1 record of the window starting" "$T/err" || fail "stderr: $(cat "$T/err")"
	"$TCPRT" summary --dir "$d" --window 10 --by container 2> /dev/null | grep -q "^CONTAINER  *ROLE" ||
		fail "--by container: the header"
	expect_eq "$(summary_rows "$d" netns)" \
		"$(printf '%s\n' "$NS_A R 4" "$NS_B R 2" "- R 2" "$NS_NONE R 1" | sort | tr '\n' '|')" "--by netns"
	expect_eq "$(summary_rows "$d" port)" "$(printf '%s\n' "7100 R 7" "8080 R 2" | sort | tr '\n' '|')" "--by port"
	expect_eq "$("$TCPRT" summary --dir "$d" --window 10 2> /dev/null | md5sum)" \
		"$("$TCPRT" summary --dir "$d" --window 10 --by port 2> /dev/null | md5sum)" "--by port is the default"
	expect_eq "$(summary_rows "$d" peer)" \
		"$(printf '%s\n' "10.0.1.5 R 3" "10.0.1.6 R 1" "10.0.2.7 R 2" "2001:db8:1:2::5 R 1" \
			"2001:db8:1:2::6 R 1" "10.0.3.1 R 1" | sort | tr '\n' '|')" "--by peer"
	expect_eq "$(summary_rows "$d" peer/24)" \
		"$(printf '%s\n' "10.0.1.0/24 R 4" "10.0.2.0/24 R 2" "10.0.3.0/24 R 1" "2001:db8:1:2::/64 R 2" |
			sort | tr '\n' '|')" "--by peer/24"
	expect_eq "$(summary_rows "$d" peer/64)" "$(summary_rows "$d" peer/24)" "--by peer/64: the same grouping"
	expect_eq "$(summary_rows "$d" container | tr '|' '\n' | awk '{ n += $3 } END { print n }')" 9 \
		"--by container: every task of the window once"
}

case_ct_export() {
	local d=$T/ctexp b=$((BASE * 1000000)) f=$T/ctprom/tcprt.prom
	make_ct
	rm -rf "$d"
	mkdir -p "$d" "$T/ctprom"
	{	# in this order: A, B, then C, D and nginx past --max-containers 2
		trec R $((b + 1)) 10.0.1.5 "netns=$NS_A cgroup=$CG_A"
		trec E $((b + 2)) 10.0.1.5 "netns=$NS_A cgroup=$CG_A"
		trec R $((b + 3)) 10.0.2.7 "netns=$NS_B cgroup=$CG_B"
		trec R $((b + 4)) 10.0.2.7 "netns=$NS_B cgroup=$CG_B"
		trec R $((b + 5)) 10.0.1.6 "cgroup=$CG_C"
		trec R $((b + 6)) 10.0.1.6 "cgroup=$CG_C"
		trec R $((b + 7)) 10.0.1.7 "cgroup=$CG_D"
		trec W $((b + 8)) 10.0.1.5 "netns=$NS_A cgroup=$CG_NGINX"
		trec R $((b + 9)) 10.0.0.9
	} > "$d/rt-network-log0"
	expect_eq "$(status_of "$TCPRT" export --once --dir "$d" --textfile "$f" --max-containers 2)" 0 "export"
	grep -q "^tcprt_tasks_total{port=\"7100\",container=\"$ID_A\",role=\"server\",type=\"R\"} 1\$" "$f" ||
		fail "A: $(grep tasks_total "$f")"
	grep -q "^tcprt_connections_total{port=\"7100\",container=\"$ID_A\",role=\"server\"} 1\$" "$f" ||
		fail "A's E: $(grep connections_total "$f")"
	grep -q "^tcprt_tasks_total{port=\"7100\",container=\"$ID_B\",pod=\"$POD_UID\",role=\"server\",type=\"R\"} 2\$" "$f" ||
		fail "B, with its pod: $(grep tasks_total "$f")"
	grep -q '^tcprt_tasks_total{port="7100",container="other",role="server",type="R"} 3$' "$f" ||
		fail "C, D past the bound: $(grep tasks_total "$f")"
	grep -q '^tcprt_tasks_total{port="7100",container="other",role="server",type="W"} 1$' "$f" ||
		fail "nginx past the bound: $(grep tasks_total "$f")"
	grep -q '^tcprt_tasks_total{port="7100",role="server",type="R"} 1$' "$f" ||
		fail "no extension fields: the labels as before"
	grep -q '^tcprt_container_overflow_records_total 4$' "$f" || fail "overflow: $(grep overflow "$f")"
	expect_eq "$(grep -c '^tcprt_tasks_total' "$f")" 5 "5 task series"
	if command -v promtool > /dev/null; then
		promtool check metrics < "$f" > "$T/pt" 2>&1 || fail "promtool: $(cat "$T/pt")"
	fi
	expect_eq "$(status_of "$TCPRT" export --once --dir "$d" --textfile "$f")" 0 "export, the default bound"
	grep -q '^tcprt_container_overflow_records_total 0$' "$f" || fail "default: no overflow"
	expect_eq "$(grep -c '^tcprt_tasks_total.*container=' "$f")" 5 "default: every container its series"
	expect_eq "$(status_of "$TCPRT" export --once --dir "$d" --textfile "$f" --max-containers 0)" 0 "--max-containers 0"
	if grep -q '{.*container=' "$f"; then fail "--max-containers 0: a container label"; fi
	grep -q '^tcprt_tasks_total{port="7100",role="server",type="R"} 7$' "$f" || fail "$(grep tasks_total "$f")"
}

# A receiver of ship's datagrams bound at PATH, and ready: it creates
# PATH.ready once bound.  Polled for 10 s at most.
await_ready() {	# path
	local i
	for ((i = 0; i < 200; i++)); do
		[ -e "$1.ready" ] && return 0
		sleep 0.05
	done
	fail "the receiver at $1 did not start"
}

# A receiver of ship's datagrams at PATH, started in the background and
# ready (its pid in RX): it writes each datagram, a line each, to OUT until
# the final control message, signed or not.  held: it reads nothing until
# told (SIGUSR1), rsyslog's socket full meanwhile.
receive_until_final() {	# path out [held]
	python3 - "$1" "$2" "${3:-}" <<-'PY' &
		import signal, socket, sys
		s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
		s.bind(sys.argv[1])
		s.settimeout(20)
		if sys.argv[3] == "held":
		    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
		open(sys.argv[1] + ".ready", "w").close()
		if sys.argv[3] == "held":
		    signal.sigwait([signal.SIGUSR1])
		with open(sys.argv[2], "wb") as out:
		    while True:
		        m = s.recv(65536)
		        out.write(m + b"\n")
		        f = m.split(b" ")
		        # C1's final: the 15th field after C1 (frame.h)
		        c = 1 if f[1] == b"C1" else 3 if f[1] == b"S1" and f[3] == b"C1" else 0
		        if c and f[c + 15] == b"1":	# 2: a dead epoch closed
		            break
	PY
	RX=$!
	await_ready "$1"
}

# ship's default host id: not /etc/machine-id, which must not leave the
# host, but HMAC-SHA256 of tcprt's application id keyed by its 16 bytes
# (systemd's app-specific id), computed here by Python's hmac.
case_ship_host_id() {
	local d=$T/hid want
	[ -s /etc/machine-id ] || return 4
	mkdir -p "$d"
	rec R 1795218000000001 > "$d/rt-network-log0"
	receive_until_final "$T/hidsock" "$T/hidgot"
	expect_eq "$(status_of "$TCPRT" ship --unsigned --dir "$d" --once --socket "$T/hidsock" --rate 0)" 0 "ship"
	wait "$RX" || fail "the receiver"
	want=$(python3 -c '
import hmac, hashlib
app = bytes([0x7c, 0x1e, 0x52, 0x94, 0x0b, 0xd3, 0x4a, 0x6f,
             0x9e, 0x21, 0x38, 0xc5, 0x5a, 0x77, 0x02, 0xe8])
key = bytes.fromhex(open("/etc/machine-id").read().strip())
print("m-" + hmac.new(key, app, hashlib.sha256).digest()[:16].hex())')
	expect_eq "$(awk '{ print $3 }' "$T/hidgot" | sort -u)" "$want" "the host id of every message"
	if grep -qi "$(cat /etc/machine-id)" "$T/hidgot"; then fail "the machine id sent"; fi
}

# Signed messages (sign.h) held to Python's hmac: tcprt fleet key derives
# HMAC-SHA256(master, "tcprt frame key v1" NUL host), a new file 0600;
# ship signs every message with it, S1 and the MAC's first 16 bytes in
# hex, over the message it would send unsigned; ship takes its host id
# from the key, refuses another, and refuses to start without a key.
case_ship_signed() {
	local d=$T/sig
	mkdir -p "$d"
	rec R 1795218000000001 > "$d/rt-network-log0"
	rec R 1795218000000002 >> "$d/rt-network-log0"
	( umask 077; openssl rand -hex 32 > "$d/master" )
	expect_eq "$(status_of "$TCPRT" fleet key --master "$d/master" --host web-7 --out "$d/frame.key")" 0 "fleet key"
	expect_eq "$(stat -c %a "$d/frame.key")" 600 "the key file's mode"
	expect_eq "$(status_of "$TCPRT" fleet key --master "$d/master" --host web-7 --out "$d/frame.key")" 1 \
		"fleet key over a file that exists"
	python3 - "$d/master" "$d/frame.key" <<-'PY' || fail "the key differs from Python's derivation"
		import hmac, hashlib, sys
		m = bytes.fromhex(open(sys.argv[1]).read().strip())
		want = "web-7 " + hmac.new(m, b"tcprt frame key v1\0web-7", hashlib.sha256).hexdigest() + "\n"
		assert open(sys.argv[2]).read() == want
	PY
	expect_eq "$(status_of "$TCPRT" ship --dir "$d" --once --socket "$T/nosock" --key-file "$d/frame.key" --host-id web-8)" 2 \
		"ship --host-id other than the key's"
	grep -q "the frame key is web-7's" "$T/err" || fail "$(cat "$T/err")"
	expect_eq "$(status_of "$TCPRT" ship --dir "$d" --once --socket "$T/nosock" --key-file "$d/none")" 1 \
		"ship without its key"
	grep -q "frame key $d/none: No such file" "$T/err" || fail "$(cat "$T/err")"
	receive_until_final "$T/sigsock" "$T/siggot"
	expect_eq "$(status_of "$TCPRT" ship --dir "$d" --once --socket "$T/sigsock" --rate 0 --key-file "$d/frame.key")" 0 "ship, signed"
	wait "$RX" || fail "the receiver"
	python3 - "$d/frame.key" "$T/siggot" <<-'PY' || fail "a message not signed as Python's hmac signs it"
		import hmac, hashlib, sys
		host, key = open(sys.argv[1]).read().split()
		n = 0
		for m in open(sys.argv[2], "rb").read().split(b"\n")[:-1]:
		    assert m.startswith(b"<134>tcprt: S1 "), m
		    mac, body = m[len(b"<134>tcprt: S1 "):].split(b" ", 1)
		    want = hmac.new(bytes.fromhex(key), body, hashlib.sha256).hexdigest()[:32]
		    assert mac.decode() == want, (mac, want)
		    assert body.split(b" ")[1] == host.encode(), body
		    n += 1
		assert n == 2, n	# one data message, the final control message
	PY
}

# ship passes lines with extension fields on byte for byte.
case_ct_ship() {
	local d
	make_ct
	d=$(make_ct_records)
	receive_until_final "$T/shsock" "$T/shgot"
	expect_eq "$(status_of "$TCPRT" ship --unsigned --dir "$d" --once --host-id h1 --socket "$T/shsock" --rate 0)" 0 "ship"
	wait "$RX" || fail "the receiver"
	python3 - "$T/shgot" "$d/rt-network-log0" <<-'PY' || fail "shipped lines differ"
		import sys
		items = []
		for m in open(sys.argv[1], "rb").read().split(b"\n")[:-1]:
		    f = m.split(b" ", 7)
		    if f[1] == b"D1":
		        items += f[7].split(b"|")[:-1]
		lines = open(sys.argv[2], "rb").read().split(b"\n")[:-1]
		# E's item carries the role after "~"
		got = [i[:-2] if i.endswith((b"~s", b"~c")) else i for i in items]
		assert got == lines, (got, lines)
	PY
	grep -q "11 records numbered, 11 sent in 1 messages, 0 dropped by the cap, 0 refused by rsyslog's socket, 0 malformed" "$T/err" ||
		fail "$(cat "$T/err")"
}

case_ct_usage() {
	local opt args
	make_ct
	while IFS='|' read -r opt args; do
		# shellcheck disable=SC2086
		expect_eq "$(status_of "$TCPRT" $args)" 2 "tcprt $args"
		grep -q "^tcprt: ${args%% *}: $opt: " "$T/err" || fail "tcprt $args: $(cat "$T/err")"
	done <<-LIST
		--netns|read --netns abc
		--netns|read --netns 0
		--netns|read --netns net:[12
		--netns|read --netns -5
		--container|read --container xyz
		--container|read --container 0123456789a
		--container|read --container ${ID_A}0
		--container|read --container my/app.service
		--by|summary --by pod
		--by|summary --by peer/16
		--netns|summary --netns 12x
		--container|summary --container ABCDEF012345
		--max-containers|export --textfile $T/x.prom --max-containers -1
		--max-containers|export --textfile $T/x.prom --max-containers 65536
		--container|export --textfile $T/x.prom --container 12
		--netns|export --textfile $T/x.prom --netns x
	LIST
	expect_eq "$(status_of "$TCPRT" read --container 0123456789a)" 2 "a short prefix"
	grep -q "too short: give at least 12 hex digits" "$T/err" || fail "$(cat "$T/err")"
	expect_eq "$(status_of "$TCPRT" summary --by pod)" 2 "--by pod"
	grep -q "'pod' is not port, container, netns, peer, peer/24 or peer/64" "$T/err" || fail "$(cat "$T/err")"
}

case_install() {
	local dest=$T/dest
	make -s install DESTDIR="$dest" PREFIX=/usr/local > "$T/inst" 2>&1 || fail "$(cat "$T/inst")"
	[ -x "$dest/usr/local/bin/tcprt" ] || fail "binary"
	grep -q '^ExecStart=/usr/local/bin/tcprt export ' "$dest/usr/local/lib/systemd/system/tcprt-export.service" ||
		fail "unit ExecStart"
	grep -q '^ExecStart=/usr/local/bin/tcprt ship ' "$dest/usr/local/lib/systemd/system/tcprt-ship.service" ||
		fail "ship unit"
	grep -q '^ExecStart=/usr/local/bin/tcprt ingest ' "$dest/usr/local/lib/systemd/system/tcprt-ingest.service" ||
		fail "ingest unit"
	grep -q '^ExecStart=/usr/local/bin/tcprt fleet expire ' "$dest/usr/local/lib/systemd/system/tcprt-expire.service" ||
		fail "expire unit"
	grep -q '^OnCalendar=daily$' "$dest/usr/local/lib/systemd/system/tcprt-expire.timer" || fail "expire timer"
	grep -q '^ExecStart=/usr/local/bin/tcprt series --store /var/lib/tcprt/series ' \
		"$dest/usr/local/lib/systemd/system/tcprt-series.service" || fail "series unit"
	grep -q '^ExecStart=/usr/local/bin/tcprt live --no-view --socket=/run/tcprt-live/live.sock ' \
		"$dest/usr/local/lib/systemd/system/tcprt-live.service" || fail "live unit"
	[ -s "$dest/usr/local/share/doc/tcprt/examples/live-query.c" ] || fail "the C example"
	grep -q '^ExecStart=/usr/local/bin/tcprt agent --config=/etc/tcprt/agent.conf$' \
		"$dest/usr/local/lib/systemd/system/tcprt-agent.service" || fail "agent unit"
	grep -q '^Conflicts=tcprt-export.service tcprt-live.service tcprt-ship.service$' \
		"$dest/usr/local/lib/systemd/system/tcprt-agent.service" || fail "the agent unit's conflicts"
	# the configuration shipped is a good one, with both sinks
	expect_eq "$(status_of "$TCPRT" agent --check --config "$dest/usr/local/share/doc/tcprt/examples/agent.conf")" \
		0 "the example agent.conf: $(cat "$T/err")"
	grep -q "good; sinks: metrics windows$" "$T/out" || fail "agent.conf: $(cat "$T/out")"
	if command -v systemd-analyze > /dev/null; then
		for u in tcprt-series tcprt-live tcprt-agent; do
			systemd-analyze verify "$dest/usr/local/lib/systemd/system/$u.service" \
				> "$T/verify" 2>&1 || grep -q "/usr/local/bin/tcprt.*No such file" "$T/verify" ||
				fail "systemd-analyze verify $u: $(cat "$T/verify")"
		done
	fi
	for f in tcprt-ship.conf tcprt-central.conf schema.sql render.sh make-certs.sh \
		 tcprt-relp-watchdog.conf tcprt-relp-watchdog; do
		[ -s "$dest/usr/local/share/tcprt/fleet/$f" ] || fail "fleet/$f not installed"
	done
	for f in make-certs.sh tcprt-relp-watchdog; do
		[ -x "$dest/usr/local/share/tcprt/fleet/$f" ] || fail "$f not executable"
	done
	grep -q 'binary="/usr/local/share/tcprt/fleet/tcprt-relp-watchdog"' \
		"$dest/usr/local/share/tcprt/fleet/tcprt-relp-watchdog.conf" ||
		fail "the watchdog's rule does not run the installed watchdog"
	for f in tcprt-prometheus.json tcprt-otlp.json; do
		cmp -s "grafana/$f" "$dest/usr/local/share/tcprt/grafana/$f" || fail "grafana/$f not installed"
	done
	grep -q 'binary="/usr/local/bin/tcprt spool --dir /var/spool/tcprt"' \
		"$dest/usr/local/share/tcprt/fleet/tcprt-central.conf" ||
		fail "the central's spool writer is not the installed tcprt"
	grep -q '^d /run/tcprt 0700 root root' "$dest/usr/local/lib/tmpfiles.d/tcprt.conf" ||
		fail "tmpfiles.d"
	# the schema built into tcprt is the file installed
	"$TCPRT" fleet schema | cmp -s - "$dest/usr/local/share/tcprt/fleet/schema.sql" ||
		fail "tcprt fleet schema differs from schema.sql"
}

# ---- the fleet commands, without their daemons -----------------------------------

case_fleet_usage() {
	local c
	for c in "ship --rate 12x" "ship --host-id a/b" "ship --burst 100" \
		 "ship --interval 0" "ingest" "ingest --spool $T --batch 0" "fleet" \
		 "fleet nosuch" "fleet gaps --since yesterday" "fleet summary --by cpu" \
		 "fleet top -n -1" "fleet gaps --since 2h --until 3h" \
		 "fleet gaps --by cpu" "fleet gaps --by both --format csv" \
		 "fleet gaps --ended-after 0" "fleet gaps --ended-after x" \
		 "fleet gaps --lag x" "fleet init --keep 3x" "fleet init --keep x=3d" \
		 "fleet gaps --keep 3d" "fleet expire --bogus" "fleet expire extra" \
		 "fleet init --cluster a-b" "fleet top --cluster c1" "fleet schema --cluster" \
		 "fleet schema --cluster a.b" "fleet schema extra" \
		 "fleet reached --since 2h --until 3h"; do
		# shellcheck disable=SC2086
		expect_eq "$(status_of "$TCPRT" $c)" 2 "tcprt $c"
		grep -q "^tcprt: " "$T/err" || fail "tcprt $c: no message"
	done
	expect_eq "$(status_of "$TCPRT" ingest --spool "$T/none" --once)" 1 "ingest --once --spool of nothing"
	grep -q "ingest: --spool $T/none: No such file or directory" "$T/err" || fail "$(cat "$T/err")"
	# without --once, a spool folder not made yet is waited for; then
	# (here) the store is found unreachable
	"$TCPRT" ingest --spool "$T/later" --unsigned --url http://127.0.0.1:1/ 2> "$T/wait.err" &
	local pid=$!
	wait_for "ingest waiting for its spool" grep -q "ingest: --spool $T/later does not exist yet: waiting for it" "$T/wait.err"
	kill -0 $pid || fail "ingest did not wait: $(cat "$T/wait.err")"
	mkdir "$T/later"
	wait $pid && fail "ingest with the store unreachable: exit 0"
	grep -q "ingest: --spool $T/later is there" "$T/wait.err" || fail "$(cat "$T/wait.err")"
	grep -q "is unreachable" "$T/wait.err" || fail "$(cat "$T/wait.err")"
	rmdir "$T/later"
	expect_eq "$(status_of "$TCPRT" fleet gaps --url http://127.0.0.1:1/)" 1 "store unreachable"
	# --until alone: the default window is the day (hour) before it
	expect_eq "$(status_of "$TCPRT" fleet gaps --until 2h --url http://127.0.0.1:1/)" 1 "gaps --until 2h: a window, then the store unreachable"
	expect_eq "$(status_of "$TCPRT" fleet summary --until 2h --url http://127.0.0.1:1/)" 1 "summary --until 2h: a window, then the store unreachable"
	grep -q "ClickHouse at http://127.0.0.1:1/ is unreachable" "$T/err" || fail "$(cat "$T/err")"
	expect_eq "$(status_of "$TCPRT" fleet reached --url http://127.0.0.1:1/)" 1 "reached: store unreachable"
	expect_eq "$(status_of "$TCPRT" fleet schema)" 0 "fleet schema"
	expect_eq "$("$TCPRT" fleet schema --cluster c1 | grep -c "ON CLUSTER c1")" 13 "fleet schema --cluster: every CREATE on the cluster"
	grep -q "CREATE TABLE IF NOT EXISTS tcprt.records" "$T/out" || fail "schema text"
}

# Records rsyslog's socket refuses are counted, exactly: a receiver that
# never reads takes max_dgram_qlen + 1 datagrams (11 by default), the rest
# wait --send-wait and are refused; the records in what it took plus the
# refused ones are every line numbered.  Without any socket: all refused.
case_ship_refused() {
	local d=$T/ship n
	mkdir -p "$d"
	python3 tests/fleet_gen.py "$d" 3000 --files 2 > /dev/null
	n=$(cat "$d"/rt-network-log* | wc -l)
	python3 - "$T/sock" "$T/got" <<-'PY' &
		import os, signal, socket, sys
		s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
		s.bind(sys.argv[1])
		# read nothing until told (SIGUSR1), then everything queued
		signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
		open(sys.argv[1] + ".ready", "w").close()
		signal.sigwait([signal.SIGUSR1])
		s.setblocking(False)
		with open(sys.argv[2], "wb") as out:
		    try:
		        while True:
		            out.write(s.recv(65536) + b"\n")
		    except BlockingIOError:
		        pass
	PY
	local rx=$!
	await_ready "$T/sock"
	expect_eq "$(status_of "$TCPRT" ship --unsigned --dir "$d" --once --host-id h1 --socket "$T/sock" \
		--send-wait 0.1 --rate 0)" 1 "ship: the last control message refused"
	kill -USR1 $rx
	wait $rx
	grep -q "rsyslog's socket $T/sock: still full after --send-wait" "$T/err" || fail "$(cat "$T/err")"
	grep -q "the last control message could not be sent" "$T/err" || fail "$(cat "$T/err")"
	python3 - "$T/got" "$T/err" "$n" "$(cat /proc/sys/net/unix/max_dgram_qlen)" <<-'PY' ||
		import re, sys
		msgs = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
		qlen = int(sys.argv[4])
		assert len(msgs) == qlen + 1, (len(msgs), qlen)
		assert all(m.startswith(b"<134>tcprt: D1 h1 ") for m in msgs), msgs[0][:40]
		items = sum(int(m.split(b" ")[6]) for m in msgs)
		err = open(sys.argv[2]).read()
		m = re.search(r"(\d+) records numbered, (\d+) sent in (\d+) messages, 0 dropped by the cap, (\d+) refused", err)
		numbered, sent, nmsg, refused = map(int, m.groups())
		assert numbered == int(sys.argv[3]) and sent == items and nmsg == qlen + 1, (m.groups(), items)
		assert sent + refused == numbered, m.groups()
	PY
		fail "refused count"
	expect_eq "$(status_of "$TCPRT" ship --unsigned --dir "$d" --once --host-id h1 --socket "$T/nosock" \
		--send-wait 0)" 1 "ship without a socket"
	grep -q "0 sent in 0 messages, 0 dropped by the cap, $n refused" "$T/err" || fail "$(cat "$T/err")"
	grep -q "rsyslog's socket $T/nosock: connect: No such file or directory" "$T/err" || fail "$(cat "$T/err")"
}


# Numbered logs (log_ext's seq) in DIR: fleet_gen.py's lines, each with
# " seq=N" appended, N consecutive per file from 0 but for the numbers
# SKIP ("file:from:to", to excluded: overwritten in the relay); a status
# file with the module's load_id 4242.
make_seq() {	# dir n [skip]
	local d=$1 f
	mkdir -p "$d"
	python3 tests/fleet_gen.py "$d" "$2" --files 2 > /dev/null
	for f in "$d"/rt-network-log*; do
		awk -v skip="${3:-}" -v file="${f##*/}" '
			BEGIN { split(skip, k, ":") }
			{ if (k[1] == file && n == k[2]) n = k[3]; print $0 " seq=" n++ }' \
			"$f" > "$f.tmp" && mv "$f.tmp" "$f"
	done
	printf 'version 0.7\nload_id 4242\nlog_subbufs_overwritten 0\n' > "$d/status"
}

# The messages ship sent (a receiver's file, "<134>tcprt: MSG" a line) as
# one line per L1, "cpu first read_next sent_next relay cap refused
# final", sorted, and the last C1's "next_seq sent_seq interval_us final".
l1_of() {	# file [epoch]
	awk -v e="${2:-}" '$2 == "L1" && (e == "" || $4 == e) { print $7, $8, $9, $10, $11, $12, $13, $14 }' "$1" | sort -n
}
c1_of() {	# file [epoch]
	awk -v e="${2:-}" '$2 == "C1" && (e == "" || $4 == e) { a = $8 " " $18 " " $19 " " $17 } END { print a }' "$1"
}

# ship follows the module's numbers per log and load (D2, L1): every
# number read, the ones that never came counted as the relay's, each
# record handed over; the lines' epoch numbers as before.
case_ship_seq() {
	local d=$T/seq
	make_seq "$d" 2000 rt-network-log0:500:510
	receive_until_final "$T/seqsock" "$T/seqgot"
	expect_eq "$(status_of "$TCPRT" ship --unsigned --dir "$d" --once --host-id h1 --socket "$T/seqsock" \
		--rate 0 --interval 1)" 0 "ship"
	wait "$RX" || fail "the receiver"
	expect_eq "$(awk '$2 == "D1"' "$T/seqgot" | wc -l)" 0 "no D1: the load is known"
	expect_eq "$(awk '$2 == "D2" { print $7 }' "$T/seqgot" | sort -u)" 4242 "D2 with the status's load_id"
	# 2000 R and an E after every 50th: 1020 lines a file
	expect_eq "$(l1_of "$T/seqgot")" "0 0 1030 1030 10 0 0 1
1 0 1020 1020 0 0 0 1" \
		"L1 of each log: read 0..1029 and 0..1019, 500..509 never came, all handed over, final"
	expect_eq "$(c1_of "$T/seqgot")" "2040 2040 1000000 1" "C1: 2040 numbered, all handed over, interval 1 s, final"
	grep -q "10 of the module's numbers never read" "$T/err" || fail "$(cat "$T/err")"
}

# ship SIGKILLed while it waits for room in rsyslog's socket: what it read
# and had not handed over is in its state file (--state); the next ship
# on that file closes the dead epoch's account (C1 and L1 final 2) from
# it: sent_next one past the last number the socket took, read_next one
# past the last it read; then runs its own epoch.  A second ship on a
# state file in use is refused.
# tcprt-relp-watchdog (fleet/tcprt-relp-watchdog.conf's rule hands it
# rsyslogd's lines): a line that is not omrelp's "DISABLING action" is
# let be; the first restarts at once, one within --gap of it waits for the
# gap's end - not dropped; the state file keeps the last restart's time,
# so a new watchdog (rsyslogd restarted) waits too; a bad option, exit 2.
# The gaps are held to the times the watchdog restarted at (its log's),
# not to when the detached restart program got to run: that one may run a
# second late on a loaded machine, and the next on time.
restart_time() {	# n: the watchdog's Nth restart, in seconds
	date -d "$(sed -n "$1p" "$T/wd.last.log" | cut -d' ' -f1)" +%s
}

case_relp_watchdog() {
	local w=fleet/tcprt-relp-watchdog dis t1 t2 t3 st
	dis="omrelp[10.0.0.1:20514]: authentication error 'no permited name found', peer is 'DNSname: x; ' - DISABLING action"
	printf '#!/bin/sh\ndate +%%s >> %s\n' "$T/restarts" > "$T/restart"
	chmod 755 "$T/restart"
	printf '%s\n%s\n%s\n' "omrelp: action suspended" "$dis" "$dis" |
		"$w" --gap 2 --state "$T/wd.last" --restart "$T/restart" || fail "exit $?"
	wait_for "two restarts" eval "[ \"\$(wc -l < $T/restarts 2> /dev/null)\" = 2 ]" ||
		fail "restarts: $(cat "$T/restarts" 2> /dev/null)"
	t1=$(restart_time 1)
	t2=$(restart_time 2)
	[ $((t2 - t1)) -ge 2 ] || fail "the second restart $((t2 - t1)) s after the first, not the gap's 2"
	expect_eq "$(cat "$T/wd.last")" "$t2" "the state: the last restart's time"
	expect_eq "$(grep -c 'restarting rsyslogd: omrelp.*DISABLING action' "$T/wd.last.log")" 2 "the log's lines"
	# a new watchdog: the gap runs from the last restart, kept in the state
	echo "$dis" | "$w" --gap 2 --state "$T/wd.last" --restart "$T/restart" || fail "exit $?"
	wait_for "the third restart" eval "[ \"\$(wc -l < $T/restarts)\" = 3 ]" || fail "$(cat "$T/restarts")"
	t3=$(restart_time 3)
	[ $((t3 - t2)) -ge 2 ] || fail "the third restart $((t3 - t2)) s after the second"
	st=0
	"$w" --gap x < /dev/null 2> "$T/err" || st=$?
	expect_eq "$st" 2 "--gap x: exit"
	grep -q "tcprt-relp-watchdog: --gap 'x' is not a number of seconds" "$T/err" || fail "$(cat "$T/err")"
}

case_ship_killed_state() {
	local d=$T/seqk pid got epoch i
	make_seq "$d" 3000
	python3 - "$T/ksock" "$T/kgot" <<-'PY' &
		import signal, socket, sys
		s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
		s.bind(sys.argv[1])
		signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
		open(sys.argv[1] + ".ready", "w").close()
		signal.sigwait([signal.SIGUSR1])
		s.setblocking(False)
		with open(sys.argv[2], "wb") as out:
		    try:
		        while True:
		            out.write(s.recv(65536) + b"\n")
		    except BlockingIOError:
		        pass
	PY
	local rx=$!
	await_ready "$T/ksock"
	"$TCPRT" ship --unsigned --dir "$d" --host-id h1 --socket "$T/ksock" --rate 0 \
		--send-wait 60 --state "$T/ship.state" 2> "$T/kerr" &
	pid=$!
	# blocked in poll(), waiting for room: the receiver reads nothing
	for ((i = 0; i < 200; i++)); do
		grep -q poll "/proc/$pid/wchan" 2> /dev/null && break
		sleep 0.05
	done
	grep -q poll "/proc/$pid/wchan" || fail "ship never waited for room: $(cat "/proc/$pid/wchan")"
	expect_eq "$(stat -c %a "$T/ship.state")" 600 "the state file's mode"
	expect_eq "$(status_of "$TCPRT" ship --unsigned --dir "$d" --host-id h1 --socket "$T/ksock" \
		--state "$T/ship.state" --once)" 1 "a second ship on the state file"
	grep -q "another tcprt ship uses it" "$T/err" || fail "$(cat "$T/err")"
	kill -KILL $pid
	wait $pid 2> /dev/null || true
	kill -USR1 $rx
	wait $rx
	epoch=$(awk '$2 == "D2" { print $4; exit }' "$T/kgot")
	[ -n "$epoch" ] || fail "no data message before the kill"
	# what the socket took: per log, one past the highest number
	got=$(awk '$2 == "D2" { n = split($0, it, "|"); for (i = 1; i < n; i++) { m = split(it[i], w, "seq="); v = w[m] + 0
		if (!(($6) in hi) || v + 1 > hi[$6]) hi[$6] = v + 1 } } END { for (c in hi) print c, hi[c] }' "$T/kgot" | sort -n)
	[ -n "$got" ] || fail "no numbered record taken"

	receive_until_final "$T/ksock2" "$T/kgot2"
	expect_eq "$(status_of "$TCPRT" ship --unsigned --dir "$d" --once --host-id h1 --socket "$T/ksock2" \
		--rate 0 --state "$T/ship.state")" 0 "the next ship: $(cat "$T/err")"
	wait "$RX" || fail "the receiver"
	grep -q "closed the account of epoch $epoch" "$T/err" || fail "$(cat "$T/err")"
	expect_eq "$(c1_of "$T/kgot2" "$epoch" | awk '{ print $4 }')" 2 "the dead epoch's C1: final 2"
	l1_of "$T/kgot2" "$epoch" > "$T/kl1"
	expect_eq "$(awk '{ print $8 }' "$T/kl1" | sort -u)" 2 "its L1s: final 2"
	# sent_next: where the socket stopped taking; read_next past it (the
	# chunk read, not handed over), on the log that was being sent
	expect_eq "$(awk '$4 != $2 || $1 == 0 { print $1, $4 }' "$T/kl1" | sort -n)" "$(echo "$got" | awk '$1 == 0 || $2 != 0')" \
		"sent_next of each log: one past the last number the socket took"
	awk '$3 > $4 { n++ } END { exit !(n >= 1) }' "$T/kl1" || fail "nothing read and not handed over: $(cat "$T/kl1")"
	echo "# the dead epoch's L1s (cpu first read_next sent_next relay cap refused final): $(tr '\n' ';' < "$T/kl1")"
	# 3000 R and an E after every 50th
	expect_eq "$(c1_of "$T/kgot2" | awk '{ print $1, $2, $4 }')" "3060 3060 1" "the new epoch: every record, final 1"
}

# ---- the time breakdown (log_ext rq_wait,app,sq_wait,rwnd_limited,sndbuf_limited,app_limited) ----

BD_FIELDS='rq_wait|app|sq_wait|rwnd_limited|sndbuf_limited|app_limited'

# tests/breakdown_gen.py's records in $T/bd: R, W and P with the breakdown
# (one R breaking its contract), R without; in [BASE, BASE + 10 s), and one
# R after.  $T/bd-plain: the same lines without the breakdown's fields.
make_bd() {
	local f
	command -v python3 > /dev/null || { echo "# no python3"; exit 4; }
	rm -rf "$T/bd" "$T/bd-plain"
	mkdir -p "$T/bd" "$T/bd-plain"
	python3 tests/breakdown_gen.py "$T/bd" "$BASE"
	for f in "$T"/bd/rt-network-log*; do
		sed -E "s/ ($BD_FIELDS)=[0-9]+//g" "$f" > "$T/bd-plain/${f##*/}"
	done
}

# The breakdown's name=value of each line (or record), in order.
bd_tokens() {
	awk -v re="^($BD_FIELDS)=" '{ s = ""; for (i = 1; i <= NF; i++) if ($i ~ re) s = s " " $i; print s }'
}

case_bd_read() {
	make_bd
	sort -k3,3n -k4,4n "$T"/bd/rt-network-log* > "$T/bd-lines"
	expect_eq "$(status_of "$TCPRT" read --dir "$T/bd")" 0 "read text"
	[ ! -s "$T/err" ] || fail "stderr: $(cat "$T/err")"
	bd_tokens < "$T/out" > "$T/bd-got"
	bd_tokens < "$T/bd-lines" > "$T/bd-want"
	cmp -s "$T/bd-got" "$T/bd-want" || fail "text: $(diff "$T/bd-got" "$T/bd-want" | head -n 5)"
	expect_eq "$(grep -c ' app_limited=[0-9]*$' "$T/out")" 63 "text: the fields end the R, W and P lines"
	expect_eq "$(status_of "$TCPRT" read --dir "$T/bd" --format csv)" 0 "read csv"
	expect_eq "$(head -n 1 "$T/out" | cut -d, -f 43-)" "pod,rq_wait,app,sq_wait,rwnd_limited,sndbuf_limited,app_limited,seq" \
		"csv: the six columns after pod, then seq"
	tail -n +2 "$T/out" | awk -F, '{ s = ""; split("rq_wait app sq_wait rwnd_limited sndbuf_limited app_limited", n, " ")
		for (i = 1; i <= 6; i++) if ($(NF - 7 + i) != "") s = s " " n[i] "=" $(NF - 7 + i); print s }' > "$T/bd-got"
	cmp -s "$T/bd-got" "$T/bd-want" || fail "csv: $(diff "$T/bd-got" "$T/bd-want" | head -n 5)"
	expect_eq "$(awk -F, '{ print NF }' "$T/out" | sort -u)" "$(head -n 1 "$T/out" | awk -F, '{ print NF }')" \
		"csv: every row has every column"
	expect_eq "$(status_of "$TCPRT" read --dir "$T/bd" --format json)" 0 "read json"
	python3 - "$T/out" "$T/bd-lines" <<-'PY' || fail "json"
		import json, sys
		six = ["rq_wait", "app", "sq_wait", "rwnd_limited", "sndbuf_limited", "app_limited"]
		recs = [json.loads(l) for l in open(sys.argv[1])]
		lines = open(sys.argv[2]).read().splitlines()
		assert len(recs) == len(lines), (len(recs), len(lines))
		for r, line in zip(recs, lines):
		    want = [tuple(t.split("=")) for t in line.split() if "=" in t]
		    got = [(k, str(r[k])) for k in r if k in six]
		    assert got == want, (got, want)
		    # after the documented fields, in table order
		    assert list(r)[len(r) - len(got):] == [k for k, _ in want], list(r)
		    if r["type"] == "P":
		        assert "app" not in r and len(got) == 5, r
	PY
}

case_bd_malformed() {
	local d=$T/bdbad r p
	mkdir -p "$d"
	r="V6 R $BASE 000001 10.0.0.2:1 10.0.0.1:7700 5000 900 300 0 1 600 100 300 0 1448"
	p="V6 P $BASE 000002 10.0.0.1:6379 10.0.0.2:1 300 900 200 0 1 500 300 4000 0 1448"
	{
		echo "$r rq_wait=100 app=400 sq_wait=100"
		echo "$p rq_wait=1 app=2 sq_wait=3"
		echo "$r app=400 rq_wait=100"
		echo "$r rq_wait=100 netns=5"
		echo "$r sq_wait=1 sq_wait=1"
		echo "V6 N $BASE 000003 10.0.0.2:1 10.0.0.1:7700 3 900 400 0 1448 rq_wait=1"
		echo "V6 E $BASE 000004 10.0.0.2:1 10.0.0.1:7700 1 5000 0 300 0 300 app_limited=0"
		echo "$r rwnd_limited=01"
		echo "$p rq_wait=1 sq_wait=3 later_field=9"
	} > "$d/rt-network-log0"
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv)" 0 "read"
	expect_eq "$(tail -n +2 "$T/out" | cut -d, -f1 | tr '\n' ' ')" "R P " "the two valid lines"
	grep -q "rt-network-log0:2: extension field app on a P record, which does not carry it" "$T/err" ||
		fail "app on P: $(cat "$T/err")"
	grep -q "rt-network-log0:3: extension field rq_wait after app: not in the order of tcp_rt's table" "$T/err" ||
		fail "out of order: $(cat "$T/err")"
	grep -q "rt-network-log0:4: extension field netns after rq_wait" "$T/err" || fail "netns last"
	grep -q "rt-network-log0:5: extension field sq_wait twice" "$T/err" || fail "twice"
	grep -q "rt-network-log0:6: extension field rq_wait on an N record" "$T/err" || fail "on N"
	grep -q "rt-network-log0:7: extension field app_limited on an E record" "$T/err" || fail "on E"
	grep -q "rt-network-log0:8: rwnd_limited is not a decimal number" "$T/err" || fail "leading zero"
	grep -q "7 malformed lines in all, 2 valid" "$T/err" || fail "counted: $(tail -n 2 "$T/err")"
}

case_bd_summary() {
	make_bd
	expect_eq "$(status_of "$TCPRT" summary --dir "$T/bd" --window 10)" 0 "summary"
	sed 's/^/# /' "$T/out" | sed -n '/where the time goes/,$p'
	cp "$T/out" "$T/bd-sum"
	grep -q "^tcprt: 1 record whose rq_wait + app + sq_wait is not its process time: left out of the process split$" "$T/err" ||
		fail "the record breaking the contract: $(cat "$T/err")"
	# every block against the model, which reads the records itself
	python3 tests/breakdown_model.py "$T/bd" "$BASE" $((BASE + 10)) < "$T/bd-sum" || fail "the model differs"
	# the table as without the fields; without them, no block
	expect_eq "$(status_of "$TCPRT" summary --dir "$T/bd-plain" --window 10)" 0 "summary without the fields"
	if grep -q "where the time goes" "$T/out"; then fail "a block without the fields"; fi
	expect_eq "$(sed '/^# where the time goes/,/^$/d' "$T/bd-sum" | md5sum)" "$(md5sum < "$T/out")" \
		"the table unchanged by the fields"
	expect_eq "$(grep -c '^# where the time goes' "$T/bd-sum")" 2 "a block for R 7700 and P 6379, none for W or 8080"
}

case_bd_export() {
	local f=$T/bdprom/tcprt.prom h want got
	make_bd
	mkdir -p "$T/bdprom"
	expect_eq "$(status_of "$TCPRT" export --once --dir "$T/bd" --textfile "$f")" 0 "export"
	for h in rq_wait app sq_wait rwnd_limited sndbuf_limited app_limited; do
		# "PORT TYPE count sum" of the records with the field, from the lines
		want=$(cat "$T"/bd/rt-network-log* | awk -v h="$h" '{ for (i = 7; i <= NF; i++) if (index($i, h "=") == 1) {
				p = $2 == "P" ? $5 : $6; sub(/.*:/, "", p); k = p " " $2; n[k]++; s[k] += substr($i, length(h) + 2) } }
			END { for (k in n) printf "%s %d %.6f\n", k, n[k], s[k] / 1e6 }' | sort)
		got=$(awk -v m="tcprt_${h}_seconds" '$1 ~ "^" m "_(count|sum)\\{" {
				match($1, /port="[0-9]+"/); p = substr($1, RSTART + 6, RLENGTH - 7)
				match($1, /type="[A-Z]"/); t = substr($1, RSTART + 6, 1)
				if ($1 ~ /_count/) n[p " " t] = $2; else s[p " " t] = $2 }
			END { for (k in n) printf "%s %d %.6f\n", k, n[k], s[k] }' "$f" | sort)
		expect_eq "$got" "$want" "tcprt_${h}_seconds: count and sum per port and type"
		expect_eq "$(grep -c "^tcprt_${h}_seconds_bucket{.*le=\"+Inf\"}" "$f")" "$(wc -l <<< "$want")" \
			"tcprt_${h}_seconds: one histogram per series with the field"
		grep -q "^# TYPE tcprt_${h}_seconds histogram$" "$f" || fail "# TYPE of $h"
	done
	expect_eq "$(grep -c '^tcprt_app_seconds_count{port="6379"' "$f")" 0 "no app histogram for P"
	expect_eq "$(grep -c '^tcprt_rq_wait_seconds_count{port="8080"' "$f")" 0 "none for a port without the fields"
	expect_eq "$(grep -c 'le="+Inf"' "$f")" $((4 * 4 + 6 * 2 + 5)) \
		"4 metric histograms of 4 series (7700 R W, 8080 R, 6379 P), 6 parts of 7700 R W, 5 of 6379 P"
	if command -v promtool > /dev/null; then
		promtool check metrics < "$f" > "$T/pt" 2>&1 || fail "promtool: $(cat "$T/pt")"
	fi
	expect_eq "$(status_of "$TCPRT" export --once --dir "$T/bd-plain" --textfile "$f")" 0 "export without the fields"
	if grep -Eq "tcprt_($BD_FIELDS)_seconds" "$f"; then fail "breakdown histograms without the fields"; fi
}

case_bd_plot() {
	make_bd
	expect_eq "$(status_of "$TCPRT" summary --dir "$T/bd" --plot "$T/bd'.png")" 2 "--plot: a quote"
	expect_eq "$(status_of "$TCPRT" summary --dir "$T/bd-plain" --window 10 --plot "$T/none.png")" 1 \
		"--plot without the fields"
	grep -q "nothing to plot: no task of a window reported has rq_wait, app and sq_wait, or rwnd_limited, sndbuf_limited and app_limited (set tcp_rt's log_ext=rq_wait,app,sq_wait,rwnd_limited,sndbuf_limited,app_limited); no $T/none.png" "$T/err" ||
		fail "$(cat "$T/err")"
	[ ! -e "$T/none.png" ] || fail "a picture of nothing"
	command -v gnuplot > /dev/null || { echo "# no gnuplot (apt install gnuplot-nox)"; exit 4; }
	"$TCPRT" summary --dir "$T/bd" --window 10 > "$T/bd-text" 2> /dev/null
	expect_eq "$(status_of "$TCPRT" summary --dir "$T/bd" --window 10 --plot "$T/bd.png")" 0 "--plot"
	expect_eq "$(head -c 8 "$T/bd.png" | od -An -tx1 | tr -d ' ')" 89504e470d0a1a0a "a PNG"
	cmp -s "$T/out" "$T/bd-text" || fail "the text differs with --plot"
	expect_eq "$(PATH=/nonexistent status_of "$TCPRT" summary --dir "$T/bd" --window 10 --plot "$T/x.png")" 1 \
		"--plot without gnuplot"
	grep -q "gnuplot not found (apt install gnuplot-nox): no $T/x.png" "$T/err" || fail "$(cat "$T/err")"
}

# Text logs and their binary form (log_format=binary's rt-network-bin<cpu>),
# the same records: every type, IPv4 and IPv6, the container fields, the
# breakdown's, seq - text2bin.py writes the binary from the layout's
# description, not from tcprt's code.  In $T/bintxt and $T/binbin.
make_bin_pair() {
	local txt=$T/bintxt bin=$T/binbin d f c=1
	rm -rf "$txt" "$bin" "$T/binseq"
	mkdir -p "$txt" "$bin"
	d=$(make_all_types)
	cp "$d/rt-network-log0" "$txt/rt-network-log0"
	cp "$d/rt-network-stats" "$txt/"
	cp "$d/rt-network-stats" "$bin/"
	d=$(make_ct_records)
	grep -v future_field "$d/rt-network-log0" >> "$txt/rt-network-log0"
	make_bd
	make_seq "$T/binseq" 300
	for f in "$T"/bd/rt-network-log* "$T"/binseq/rt-network-log*; do
		cp "$f" "$txt/rt-network-log$c"
		c=$((c + 1))
	done
	cp "$T/binseq/status" "$txt/"
	cp "$T/binseq/status" "$bin/"
	for f in "$txt"/rt-network-log*; do
		python3 tests/text2bin.py "$f" "$bin/rt-network-bin${f##*rt-network-log}" ||
			fail "text2bin $f"
	done
}

# What ship sent (a receiver's file): its data messages' items, in order
# (D1's after 6 fields, D2's after 7: frame.h).
ship_items() {	# file
	awk '$2 == "D1" || $2 == "D2" {
		k = $2 == "D1" ? 8 : 9
		n = split($0, a, " "); s = a[k]
		for (i = k + 1; i <= n; i++) s = s " " a[i]
		print s }' "$1"
}

case_binary_input() {
	local how a b
	command -v python3 > /dev/null || return 4
	make_bin_pair
	for how in "read --stats" "read --stats --format csv" "read --stats --format json" \
		"summary --window 1"; do
		# shellcheck disable=SC2086
		expect_eq "$(status_of "$TCPRT" $how --dir "$T/bintxt")" 0 "$how, text"
		mv "$T/out" "$T/a.out"
		mv "$T/err" "$T/a.err"
		# shellcheck disable=SC2086
		expect_eq "$(status_of "$TCPRT" $how --dir "$T/binbin")" 0 "$how, binary"
		cmp -s "$T/a.out" "$T/out" ||
			fail "$how: the binary folder's output differs: $(diff "$T/a.out" "$T/out" | head -n 5)"
		cmp -s "$T/a.err" "$T/err" ||
			fail "$how: the binary folder's messages differ: $(diff "$T/a.err" "$T/err" | head -n 5)"
	done
	expect_ge "$(wc -l < "$T/a.out")" 10 "summary lines"
	for a in bintxt binbin; do
		expect_eq "$(status_of "$TCPRT" export --once --dir "$T/$a" --textfile "$T/$a.prom")" 0 "export, $a"
	done
	cmp -s "$T/bintxt.prom" "$T/binbin.prom" || fail "export's textfiles differ"
	# the agent's reader the same (auto: the binary files of binbin)
	if "$TCPRT" agent --help | grep -q -- --config; then
		printf '[agent]\ndir = %s\n[metrics]\ntextfile = %s\n' "$T/binbin" "$T/binagent.prom" \
			> "$T/binagent.conf"
		chmod 644 "$T/binagent.conf"
		expect_eq "$(status_of "$TCPRT" agent --config "$T/binagent.conf" --once)" 0 "agent, binary"
		without_agent "$T/binagent.prom" | cmp -s "$T/bintxt.prom" - ||
			fail "the agent's textfile of the binary logs differs"
	fi
	for a in bintxt binbin; do
		receive_until_final "$T/$a.sock" "$T/$a.got"
		expect_eq "$(status_of "$TCPRT" ship --unsigned --dir "$T/$a" --once --host-id h1 \
			--socket "$T/$a.sock" --rate 0)" 0 "ship, $a"
		wait "$RX" || fail "the receiver"
		ship_items "$T/$a.got" > "$T/$a.items"
		l1_of "$T/$a.got" > "$T/$a.l1"
	done
	expect_ge "$(wc -l < "$T/bintxt.items")" 1 "data messages"
	cmp -s "$T/bintxt.items" "$T/binbin.items" || fail "ship's items differ"
	cmp -s "$T/bintxt.l1" "$T/binbin.l1" || fail "ship's L1 accounts differ"
	# the other files than auto's choice, asked for: none of them
	expect_eq "$(status_of "$TCPRT" read --dir "$T/binbin" --input-format text)" 1 "text asked of binary files"
	grep -q "no readable rt-network-log\* file" "$T/err" || fail "$(cat "$T/err")"
	expect_eq "$(status_of "$TCPRT" read --dir "$T/bintxt" --input-format binary)" 1 "binary asked of text files"
	grep -q "no readable rt-network-bin\* file" "$T/err" || fail "$(cat "$T/err")"
	expect_eq "$(status_of "$TCPRT" summary --dir "$T/binbin" --input-format xml)" 2 "--input-format xml"
	grep -q "input-format: 'xml' is not auto, text or binary" "$T/err" || fail "$(cat "$T/err")"
	# both forms in one folder: auto reads the text, binary the binary
	b=$T/binboth
	rm -rf "$b"
	mkdir -p "$b"
	rec R 1795218000000001 > "$b/rt-network-log0"
	rec R 1795218000000002 7 > "$T/binone"
	python3 tests/text2bin.py "$T/binone" "$b/rt-network-bin0"
	expect_eq "$(status_of "$TCPRT" read --dir "$b" --format csv)" 0 "auto, both forms"
	expect_eq "$(tail -n +2 "$T/out" | cut -d, -f7)" 40000 "auto: the text file's record"
	expect_eq "$(status_of "$TCPRT" read --dir "$b" --format csv --input-format binary)" 0 "binary, both forms"
	expect_eq "$(tail -n +2 "$T/out" | cut -d, -f7)" 7 "binary: the binary file's record"
}

# Binary logs that are not what they should be: a layout version this
# tcprt does not read (said once, the text files read instead), a record
# whose header does not check (counted, its header shown in hex, the
# rest of what was held dropped), a file that ends inside a record.
case_binary_hostile() {
	local d=$T/binbad b=$((BASE * 1000000))
	command -v python3 > /dev/null || return 4
	rm -rf "$d"
	mkdir -p "$d"
	{ rec R $((b + 1)); rec R $((b + 2)); rec R $((b + 3)); } > "$T/three"
	python3 tests/text2bin.py "$T/three" "$d/rt-network-bin0" --version 2
	expect_eq "$(status_of "$TCPRT" read --dir "$d")" 0 "a version 2 record"
	grep -q "rt-network-bin0: a record of layout version 2 at byte 0; this tcprt reads version 1: reading the text files (rt-network-log\*) instead" \
		"$T/err" || fail "$(cat "$T/err")"
	grep -q "no readable rt-network-log\* file either" "$T/err" || fail "$(cat "$T/err")"
	cp "$T/three" "$d/rt-network-log0"
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --input-format binary --format csv)" 0 \
		"a version 2 record, text files beside it"
	expect_eq "$(tail -n +2 "$T/out" | wc -l)" 3 "the text file's records read instead"
	rm "$d/rt-network-log0"
	python3 tests/text2bin.py "$T/three" "$d/rt-network-bin0"
	# the second record's flags: a bit no layout has
	printf '\xff' | dd of="$d/rt-network-bin0" bs=1 seek=$((120 + 2)) conv=notrunc status=none
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv)" 0 "a malformed record"
	expect_eq "$(tail -n +2 "$T/out" | wc -l)" 1 "the record before it"
	grep -q "rt-network-bin0:2: malformed binary record at byte 120 (its header in hex): \"0100ff0a7800" "$T/err" ||
		fail "$(cat "$T/err")"
	python3 tests/text2bin.py "$T/three" "$d/rt-network-bin0"
	truncate -s 300 "$d/rt-network-bin0"
	expect_eq "$(status_of "$TCPRT" read --dir "$d" --format csv)" 0 "a file cut inside a record"
	expect_eq "$(tail -n +2 "$T/out" | wc -l)" 2 "the records before the cut"
	grep -q "rt-network-bin0:3: truncated binary record (the file ends inside it)" "$T/err" ||
		fail "$(cat "$T/err")"
}

run_case "--help of every command, exit 0" case_help
run_case "tcprt.8: every option of every --help, the version, no warning" case_man
run_case "usage errors exit 2 with a message" case_usage_errors
run_case "runtime errors exit 1 with a message" case_runtime_errors
run_case "read --format json: spec field names, every type, IPv6, E roles" case_json
run_case "read --format csv and text" case_csv_text
run_case "read --type and --port" case_filters
run_case "hostile lines: reported with file, line and reason; the stream goes on" case_hostile
run_case "per-CPU files out of order: merged in start order" case_merge_order
run_case "read --follow: records appended later, a line completed later" case_follow
run_case "summary: full windows only, rate = count / window, percentiles within 1/128" case_summary
run_case "summary: less than one window observed: nothing reported" case_summary_short
run_case "export --once: counters, histograms, labels, exposition format" case_export
run_case "export: a reader never sees half a file" case_export_atomic
run_case "export --otlp: bad values and combinations are usage errors" case_otlp_usage
run_case "agent: the metrics sink from a configuration file: export's text file and archive, --check" case_agent
run_case "agent: a wrong configuration: exit 2, the file, line, section, key and why" case_agent_conf_errors
run_case "agent: the ship sink beside the metrics sink: ship's data messages, export's text file, the status" case_agent_ship
run_case "agent: [ship] with a send queue: rsyslog's socket full holds no other sink, the queue drains in order once it reads; a queue too small refuses the oldest, counted" case_agent_ship_queue
run_case "mixed folder, tcp_rt and vendor files: read counts every valid line once, by source" case_mixed_read
run_case "mixed folder: summary counts every task once" case_mixed_summary
run_case "mixed folder: export counts every record once" case_mixed_export
run_case "series --dir: table, csv, raw, --port" case_series
run_case "series --dir: series_ext's measures and the host's line" case_series_ext
run_case "series --store: runs kept, read back by time" case_series_store
run_case "series: malformed lines and bad options" case_series_hostile
run_case "series --plot: a PNG, and none of nothing" case_series_plot
run_case "containers: read --format json names each runtime's container, ignores unknown fields" case_ct_json
run_case "containers: csv columns and text" case_ct_csv_text
run_case "containers: --netns and --container on read, summary, export" case_ct_filters
run_case "containers: summary --by container, netns, port, peer, peer/24, peer/64" case_ct_summary_by
run_case "containers: export's container and pod labels, --max-containers, the overflow counted" case_ct_export
run_case "containers: ship passes lines with extension fields byte for byte" case_ct_ship
run_case "ship's default host id: HMAC-SHA256 keyed by /etc/machine-id, never the id itself" case_ship_host_id
run_case "signed messages: fleet key and ship's MACs are Python hmac's; the key's host id, no other; no key, no start" case_ship_signed
run_case "containers: bad option values exit 2, naming the option and the reason" case_ct_usage
run_case "make install DESTDIR= PREFIX=: binary, systemd units, fleet configuration, dashboards" case_install
run_case "ship, ingest, fleet: usage and runtime errors" case_fleet_usage
run_case "ship: records the socket refuses are counted, exactly" case_ship_refused
run_case "ship: the module's numbers per log and load (D2, L1): read, never came, handed over" case_ship_seq
run_case "fleet's relp watchdog: omrelp's DISABLING lines restart rsyslogd, at most once a gap, none dropped; other lines let be" case_relp_watchdog
run_case "ship: killed while waiting for the socket, its account closed by the next from the state file" case_ship_killed_state
run_case "breakdown: read shows the six fields in text, csv and json" case_bd_read
run_case "breakdown: malformed lines (out of order, twice, app on P, on N and E) rejected" case_bd_malformed
run_case "breakdown: summary's split lines add up and match a model of the records" case_bd_summary
run_case "breakdown: export's six histograms, counts and sums per series" case_bd_export
run_case "breakdown: summary --plot draws a PNG, and says why it cannot" case_bd_plot
run_case "binary logs: read, summary, export, agent and ship give the same bytes as from the text logs; auto and --input-format choose the files" case_binary_input
run_case "binary logs: another layout version, a malformed record, a file cut inside a record" case_binary_hostile
tap_end
