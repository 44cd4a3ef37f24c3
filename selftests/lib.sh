# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the tcp_rt selftests.  Sourced by every test script, which
# runs as root inside the VM (scripts/vm-run) with the checkout as its
# current directory.  A script is a list of cases:
#
#	case_foo() { ...; expect_eq "$a" 3 "what"; }
#	run_case "foo does bar" case_foo
#
# run_case prints one TAP line per case ("ok N - ..." / "not ok N - ...");
# the runner renumbers them into one stream.  A case fails on the first
# failing expectation or command (each case runs in a subshell with -e).

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SELFTESTS=$TOP/selftests
MODULE=$TOP/tcp_rt.ko
DBG=/sys/kernel/debug/tcp-rt
PARAMS=/sys/module/tcp_rt/parameters
PEER=$SELFTESTS/rt_peer
: "${WAIT_S:=30}"	# how long an awaited event may take (emulated guest)
# How many times slower than Debian's kernel the guest's kernel is (KASAN,
# lockdep & co. on every packet): scripts/check-debug sets it for its debug
# kernel (8), scripts/vm-run for an emulated arm64 guest (2).  Only the
# timing checks read it; 1 (unset) changes nothing.
: "${TCP_RT_SLOW:=1}"

_tap_n=0
_tap_failed=0

# ---- assertions -----------------------------------------------------------

fail() {
	echo "# FAIL: $*"
	exit 1
}

diag() {
	echo "# $*"
}

expect_eq() {	# actual expected what
	[ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"
}

expect_ne() {	# actual unexpected what
	[ "$1" != "$2" ] || fail "$3: got '$1', expected anything else"
}

expect_ge() {	# actual min what
	[ "$1" -ge "$2" ] 2>/dev/null || fail "$3: got '$1', expected >= $2"
}

expect_le() {	# actual max what
	[ "$1" -le "$2" ] 2>/dev/null || fail "$3: got '$1', expected <= $2"
}

expect_range() {	# actual lo hi what
	[ "$1" -ge "$2" ] 2>/dev/null && [ "$1" -le "$3" ] ||
		fail "$4: got '$1', expected $2 .. $3"
}

expect_within() {	# actual target tolerance what
	expect_range "$1" $(($2 - $3)) $(($2 + $3)) "$4"
}

# A duration the test imposes (a server's delay, gaps between writes) that
# an independent truth holds exactly elsewhere in the case (the oracle's
# capture, the application's stamps, the R records): no less than what was
# imposed.  No upper bound: how late the guest ran the application is the
# machine's speed, and the truth already holds the figure to it.
expect_imposed() {	# actual min what
	expect_ge "$1" "$2" "$3"
}

sum() {	# of the numbers on stdin, one per line
	awk '{ s += $1 } END { print s + 0 }'
}

expect_fail() {	# what cmd...: the command must fail
	local what=$1
	shift
	if "$@" 2>/dev/null; then
		fail "$what: '$*' succeeded"
	fi
}

# ---- cases ------------------------------------------------------------------

# Background jobs a case started die with it, even when it fails half way.
_kill_jobs() {
	local pids
	pids=$(jobs -p)
	if [ -n "$pids" ]; then
		kill $pids 2>/dev/null || true
	fi
}

# $TCP_RT_CASES, when set, is a regular expression: only the cases whose
# description matches it run (for working on one case).
run_case() {	# description function
	local desc=$1 fn=$2 rc t0=$SECONDS
	[[ -z ${TCP_RT_CASES:-} || $desc =~ $TCP_RT_CASES ]] || return 0
	_tap_n=$((_tap_n + 1))
	( set -eE; trap _kill_jobs EXIT; "$fn" )
	rc=$?
	cleanup_case
	# Where a suite's time goes, for whoever has to shorten it.
	echo "# case $_tap_n: $((SECONDS - t0)) s"
	if [ "$rc" -eq 0 ]; then
		echo "ok $_tap_n - $desc"
	elif [ "$rc" -eq 4 ]; then
		echo "ok $_tap_n - $desc # SKIP"
	else
		echo "not ok $_tap_n - $desc"
		_tap_failed=$((_tap_failed + 1))
	fi
}

# Exit status of a test script: non-zero when any case failed.
done_testing() {
	exit $((_tap_failed > 0))
}

# Undo what a case may have left: processes, namespaces, the module, and
# what the script's case_cleanup puts back (tools/tcprt/tests/case-lib.sh's
# hook of the same name).
cleanup_case() {
	local pids
	pids=$(jobs -p 2>/dev/null)
	[ -n "$pids" ] && kill $pids 2>/dev/null
	# Two pkills, not four, and the namespaces from /run/netns rather than
	# ip and awk: this runs after every case, and in the emulated guest
	# each program started costs 0.1 to 0.5 s (5.10 the slowest).
	pkill -f "$PEER|$TOP/tools/bench/rt_load" 2>/dev/null
	pkill -x 'redis-server|nginx' 2>/dev/null
	for ns in /run/netns/rt*; do
		[ -e "$ns" ] || continue
		ns=${ns##*/}
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns del "$ns"
	done
	# under lockdown an unsigned module cannot be loaded again: a script
	# that raised it sets KEEP_MODULE and unloads by itself
	if [ -d /sys/module/tcp_rt ] && [ -z "${KEEP_MODULE:-}" ]; then
		echo 1 > "$PARAMS/deactivate"
		wait_until "connections closed" mod_unused || true
		rmmod tcp_rt 2>/dev/null
	fi
	# a script's own: what a failed case may have left down (daemons
	# it stopped as its fault) is up again for the next case
	if declare -F case_cleanup > /dev/null; then
		case_cleanup || echo "# case_cleanup failed"
	fi
	return 0
}

# A figure of tcprt live's (or the agent's windows') answer to a question
# at socket SOCK: python's expression @expr over the answer a
# (a["windows"][0] the first window asked).  Asked from Python: the arm64
# guests' root has no socat.
live_ask_at() {	# sock question expr
	python3 - "$1" "$2" "$3" 2> /dev/null <<-'PY'
		import json, socket, sys
		s = socket.socket(socket.AF_UNIX)
		s.settimeout(5)
		s.connect(sys.argv[1])
		s.sendall(sys.argv[2].encode() + b"\n")
		a = json.loads(s.makefile("r").readline())
		print(eval(sys.argv[3]))
	PY
}

# ---- waiting for events -------------------------------------------------------

# Poll a condition until it holds; fail after WAIT_S seconds of the
# clock, however long each check takes (a query to a store may take a
# second in the emulated guest).
wait_until() {	# what cmd...
	local what=$1 end=$((SECONDS + WAIT_S + 1))
	shift
	while ((SECONDS < end)); do
		"$@" && return 0
		sleep 0.05
	done
	"$@" && return 0
	echo "# timeout waiting for $what"
	return 1
}

# Poll a condition a process PID we started makes true once it is
# ready (its ready file), for as long as PID lives: no bound of the
# clock.  A start takes what it takes (an interpreter reading its files
# over 9p; under the bench's icount with sleep=off, the guest's clock
# jumps to its next timer while it waits for the host's I/O, so WAIT_S
# of it may pass in a moment); one that dies fails at once, one that
# hangs meets the VM's timeout.
wait_started() {	# what pid cmd...
	local what=$1 pid=$2
	shift 2
	while kill -0 "$pid" 2> /dev/null; do
		"$@" && return 0
		sleep 0.05
	done
	"$@" && return 0
	echo "# $what exited before it was ready"
	return 1
}

# The wait of wait_count and wait_moving: PROGRESS (a command line) prints
# how far something got, into v; DONE (a command line, which may read $v)
# says whether the wait is over.  A timeout only once v stood still for
# WAIT_S seconds: a slow machine still getting on is not a stopped one.
wait_progress() {	# what progress done
	local v last='' end=$((SECONDS + WAIT_S + 1))
	while :; do
		# a failed reading is no move
		v=$(eval "$2") || v=$last
		eval "$3" && return 0
		if [ "$v" != "$last" ]; then
			last=$v
			end=$((SECONDS + WAIT_S + 1))
		elif ((SECONDS >= end)); then
			echo "# timeout waiting for $1: at ${v:-nothing}, the same for $WAIT_S s"
			return 1
		fi
		sleep 0.05
	done
}

# Wait for CMD, which prints a count, to reach N for as long as the count
# moves: a pipeline still delivering has lost nothing yet; one that
# stopped has.
wait_count() {	# what n cmd...
	local what=$1 n=$2
	shift 2
	wait_progress "$what ($n)" "$(printf '%q ' "$@")" "[ \"\${v:-0}\" -ge $n ] 2> /dev/null"
}

# Wait for CMD to succeed for as long as PROGRESS (a command line: what a
# daemon still starting has done, its CPU time say) moves.
wait_moving() {	# what progress cmd...
	local what=$1 progress=$2
	shift 2
	wait_progress "$what" "$progress" "$(printf '%q ' "$@")"
}

# The value of KEY in a file of "key value" lines (a status file, a
# state file): nothing when it has none.
kv() {	# file key
	awk -v k="$2" '$1 == k { print $2 }' "$1"
}

# ---- module -------------------------------------------------------------------

# With TCP_RT_LOG_FORMAT set (scripts/vm-run passes TCP_RT_* into the
# guest), every load here gets that log_format unless it names one: the
# suite in text mode (0.6's default) is TCP_RT_LOG_FORMAT=text.
mod_load() {	# params...
	local fmt=()
	if [ -n "${TCP_RT_LOG_FORMAT:-}" ] && [[ " $* " != *" log_format="* ]]; then
		fmt=("log_format=$TCP_RT_LOG_FORMAT")
	fi
	insmod "$MODULE" "$@" "${fmt[@]}" || fail "insmod tcp_rt $* ${fmt[*]}"
}

mod_unused() {
	[ "$(cat /sys/module/tcp_rt/refcnt 2>/dev/null)" = 0 ]
}

mod_unload() {
	echo 1 > "$PARAMS/deactivate"
	wait_until "tcp_rt unused" mod_unused || fail "module still in use"
	rmmod tcp_rt || fail "rmmod tcp_rt"
}

# How many CPUs a cpulist file names (/sys/devices/system/cpu/online,
# possible: "0-9", "0,2-3").
cpus_in() {	# file
	local n=0 r
	for r in $(tr ',' ' ' < "$1"); do
		n=$((n + ${r#*-} - ${r%-*} + 1))
	done
	echo $n
}

# A series run under way (parameter series_run reads 1).
series_running() {
	[ "$(cat "$PARAMS/series_run")" = 1 ]
}

# A series run's (or the recorder's) module, width and bucket count.
series_setup() {	# width buckets params...: $LOG and $SER removed first
	rm -f $LOG $SER
	mod_load "${@:3}"
	echo "$1" > "$PARAMS/series_us"
	echo "$2" > "$PARAMS/series_buckets"
}

# Every line of $SER in rt-network-series' format (docs/records.md).
series_lines_ok() {
	local re="^[0-9]+ [0-9]{6} (P?[0-9]+|\*)( -?[0-9]+){12}( [a-z_]+=-?[0-9]+)*$"
	grep -qvE "$re" $SER && fail "malformed line: $(grep -vE "$re" $SER | head -1)"
	return 0
}

# $SER's lines of $PORT held to the records of the same traffic by
# oracle/series_check.py: SERVER_LOG, or $LOG.
series_check() {	# width [series_check options]
	local out
	out=$(/usr/bin/python3 "$SELFTESTS/oracle/series_check.py" --series $SER \
		--log "${SERVER_LOG:-$LOG}" --port $PORT --width-us "$1" "${@:2}") || {
		echo "$out" | sed 's/^/# /'
		sed 's/^/# /' $SER | head -n 100
		records $LOG R | sed 's/^/# /' | head -n 20
		fail "series lines differ from the records"
	}
	diag "$out"
}

_folds_past() {	# n: the recorder's fold has run more than n times
	[ "$(status recorder_folds)" -gt "$1" ]
}

_after_us() {	# t (us, wall clock): now is past it
	[ "$(date +%s%6N)" -gt "$1" ]
}

# The recorder has folded every bucket up to now: the time of three
# buckets has passed (a bucket is folded two old), then two more folds
# ran (one of them began after that).
recorder_folded() {	# width_us
	local t folds
	t=$(( $(date +%s%6N) + 3 * $1 ))
	wait_until "three buckets" _after_us "$t" || fail "the clock"
	folds=$(status recorder_folds)
	wait_until "two folds" _folds_past $((folds + 1)) ||
		fail "no fold: $(status recorder_folds)"
}

status() {	# key: the module's status file's
	kv "$DBG/status" "$1"
}

# Records written since load, of every type (status).
records_written() {
	local t n=0
	for t in R W N P E; do
		n=$((n + $(status records_$t)))
	done
	echo $n
}

# The hooks are ftrace callbacks, whose recursion guard lets a softirq hook
# run on top of a process-context one: a miss is a bug, not bad luck.
expect_no_probe_miss() {
	expect_eq "$(status probe_missed)" 0 \
		"probe_missed ($(grep '^probe_missed_' "$DBG/status" | tr '\n' ' '))"
}

untracked() {
	[ "$(status tracked)" = 0 ]
}

# Wait until every tracked connection has closed (so its records are out).
wait_untracked() {
	wait_until "tracked connections to close" untracked ||
		fail "connections still tracked: $(status tracked)"
}

# Append what every per-CPU log holds (reading consumes it).
drain_logs() {	# file
	cat "$DBG"/rt-network-log* >> "$1"
}

# Records of one type: "records FILE R" prints those lines.
records() {	# file type
	awk -v t="$2" '$1 == "V6" && $2 == t' "$1"
}

count_records() {	# file type
	records "$1" "$2" | wc -l
}

# Field N (1-based, counting the 7 header fields) of the records of a type.
field() {	# file type n
	records "$1" "$2" | awk -v n="$3" '{ print $n }'
}

# ---- traffic --------------------------------------------------------------------

# Start an rt_peer server in the background (optionally in a netns); print
# its port once it listens.
# ---- the packet-capture oracle (selftests/oracle) ----------------------------
#
# The tracked socket's traffic is captured on its own side (tcpdump -i any in
# its namespace), and every record is held to what the packets say: counts
# and bytes exactly, times within ORACLE_TOL_US.  The module stamps a
# segment when TCP handles it, the capture when it crosses the device: on
# loopback, in the same softirq, microseconds apart on real hardware.  The
# emulated guest's vCPU stalls for milliseconds when the host is busy: with
# the host fully loaded (load 5.8 on 2 cores) a request's capture and TCP's
# stamp of it were 6.7 ms apart, a response's 7.4 ms the other way, so a
# duration can be off by both: 20 ms, TCP_RT_SLOW times that on a debug
# kernel (8) or an emulated arm64 guest (2).  A backlogged socket adds the
# time its owner holds the lock, and on PREEMPT_RT the owner can be
# preempted while it holds it: the segment waits for the scheduler to come
# back to it.  With 64 connections at once
# (128 threads on 2 vCPUs) an ACK's stamp was 27 ms late, in one run of 12;
# eight at a time, 11 ms at most in 16: tests held to the oracle keep their
# connections few.

capture_start() {	# port (all: every TCP segment) [netns]
	_CAPTURE_WHAT="tcp port $1"
	[ "$1" = all ] && _CAPTURE_WHAT=tcp
	_CAPTURE_PORT=$1
	_CAPTURES=()
	CAPTURE=/tmp/capture.$1.pcap
	CAPTURE2=
	_capture_add "$CAPTURE" "${2:-}"
	stalls_start
}

# A second capture of the same traffic, in another namespace, while the
# first runs: where another end saw it (a segment the router delayed is
# late there, not in the first).  In $CAPTURE2; capture_stop ends both.
capture_also() {	# netns
	CAPTURE2=/tmp/capture.$_CAPTURE_PORT.$1.pcap
	_capture_add "$CAPTURE2" "$1"
}

# --immediate-mode: each packet is handed over as it comes, not when a
# ring block fills or times out; udp port 9 is capture_stop's marker.
_capture_add() {	# file netns
	local ns=()
	[ -n "$2" ] && ns=(ip netns exec "$2")
	rm -f "$1" "$1.err"
	"${ns[@]}" tcpdump -i any --immediate-mode -U -n -s 200 \
		-w "$1" "$_CAPTURE_WHAT or (udp and dst port 9)" 2> "$1.err" &
	_CAPTURES+=("$1 $! $2")
	wait_until "tcpdump to listen" grep -q "listening on" "$1.err" ||
		fail "tcpdump: $(cat "$1.err")"
}

# The guest's stalls while a capture runs (selftests/stallmon.c), in
# $STALLS: what the oracle may excuse a time by (oracle_check).
stalls_start() {
	STALLS=/tmp/stalls.txt
	rm -f "$STALLS"
	"$SELFTESTS/stallmon" --out "$STALLS" 2> /tmp/stallmon.err &
	STALLMON_PID=$!
	wait_until "stallmon to run" grep -qs "^# stallmon" "$STALLS" ||
		fail "stallmon: $(cat /tmp/stallmon.err)"
}

stalls_stop() {
	kill -TERM "$STALLMON_PID"
	wait "$STALLMON_PID" || fail "stallmon: $(cat /tmp/stallmon.err)"
}

# Microseconds of the windows [LO, HI] (realtime us, as the capture's;
# their union) that the last capture's stalls cover: what a test may
# excuse a time by, beyond its tolerance (tcp_rt_oracle.py --stalls does
# the same for every record).
stalls_cover() {	# lo hi [lo hi ...]
	/usr/bin/python3 "$SELFTESTS/oracle/stalls.py" "$STALLS" "$@"
}

capture_has_marker() {	# file
	tcpdump -r "$1" -n "udp and dst port 9" 2> /dev/null | grep -q .
}

# Everything captured before the marker is in the file once the marker is:
# only then is tcpdump stopped (SIGINT drops what it has not written yet).
capture_stop() {
	local c file pid ns cmd
	for c in "${_CAPTURES[@]}"; do
		read -r file pid ns <<< "$c"
		cmd=()
		[ -n "$ns" ] && cmd=(ip netns exec "$ns")
		"${cmd[@]}" bash -c 'echo > /dev/udp/127.0.0.1/9' 2> /dev/null
		wait_until "the capture's marker" capture_has_marker "$file" ||
			fail "tcpdump did not capture its marker in $file"
		kill -INT "$pid"
		wait "$pid" || true
		grep -q "^0 packets dropped by kernel" "$file.err" ||
			fail "tcpdump: $(tr '\n' ' ' < "$file.err")"
	done
	stalls_stop
}

# Every record in LOG against the capture; --lport or --pport PORT, then
# what the wire cannot show (--written BYTES, --unread: tcp_rt_oracle.py).
oracle_check() {	# log --lport|--pport port [oracle options]
	local out
	out=$(/usr/bin/python3 "$SELFTESTS/oracle/tcp_rt_oracle.py" "${@:2}" \
		--tolerance-us $((${ORACLE_TOL_US:-20000} * TCP_RT_SLOW)) \
		--stalls "$STALLS" --compare "$1" "$CAPTURE") || {
		oracle_keep "$1"
		echo "$out" | sed 's/^/# /'
		fail "records differ from the wire"
	}
	diag "$out"
}

# A failed comparison's evidence, kept in the checkout (the guest's only
# writable place that outlives it): the captures, the stalls, the records
# (or series), and the first capture's first segments in the test's
# output.
oracle_keep() {	# log [more files]
	local dir
	dir=$TOP/selftests/artifacts/$(uname -r)-$(date +%s)-$$
	mkdir -p "$dir" && cp "$CAPTURE" ${CAPTURE2:+"$CAPTURE2"} "$STALLS" "$@" "$dir"/ &&
		diag "capture and records kept in $dir"
	tcpdump -r "$CAPTURE" -n -tt 2> /dev/null | head -n 40 | sed 's/^/# /'
}

# The server's sockets on PORT: bytes written and not acknowledged (ss's
# Send-Q; a queued FIN counts one); the clients': bytes received and not
# read (Recv-Q).  Once their sum is all the server wrote (plus its FIN)
# less what the clients read, everything was written and every byte
# received acknowledged: what a zero window leaves is stable.
queued_is() {	# port bytes
	local sq rq
	sq=$(ss -Htn state connected "( sport = :$1 )" | awk '{ n += $3 } END { print n + 0 }')
	rq=$(ss -Htn state connected "( dport = :$1 )" | awk '{ n += $2 } END { print n + 0 }')
	[ $((sq + rq)) = "$2" ]
}

# The bytes acknowledged (tcp_info's bytes_acked) of each established
# server socket on PORT, one per line.
bytes_acked() {	# port
	ss -Htin state established "( sport = :$1 )" |
		grep -o 'bytes_acked:[0-9]*' | cut -d: -f2
}

# N connections to PORT answered: each server socket has BYTES or more
# acknowledged, nothing is left to send or to read.  What a test awaits
# before it kills a client that holds its connections: killed earlier, a
# client resets over a response it has not read.
answered() {	# port n bytes
	[ "$(bytes_acked "$1" | awk -v b="$3" '$1 >= b { n++ } END { print n + 0 }')" = "$2" ] &&
		queued_is "$1" 0
}

# A client that stops reading: its window closes with the response partly
# sent at most, and it goes away (killed: its close resets, data being left
# unread).  cut_end waits until the server wrote all it had to (queued_is
# BYTES); what left and what was acknowledged is the capture's to say, the
# rest never left.
cut_start() {	# port "server args" "client args"
	start_server -- --port "$1" --req-bytes 100 --sndbuf 200000 $2 > /dev/null
	capture_start "$1"
	# shellcheck disable=SC2086
	"$PEER" client --port "$1" --req-bytes 100 --rcvbuf 4096 \
		--hold-ms 600000 $3 > /dev/null 2>&1 &
	CUT_CLIENT=$!
}

cut_end() {	# port queued log
	wait_until "the response written, the window closed" queued_is "$1" "$2" ||
		fail "queued: $(ss -tn state connected "( sport = :$1 or dport = :$1 )")"
	kill -KILL "$CUT_CLIENT"
	wait "$CUT_CLIENT" 2> /dev/null || true
	wait_untracked
	capture_stop
	drain_logs "$3"
	sed 's/^/# /' "$3"
}

# The server's socket on PORT probes a zero window: its persist timer runs.
zero_window() {	# port
	ss -Htno state connected "( sport = :$1 )" | grep -q 'timer:(persist'
}

# A W record on PORT: a client that stops reading a 60,000-byte response,
# then goes away (a reset) with it unacknowledged (cut_start's, without
# its capture).
w_record() {	# port
	local cli
	start_server -- --port "$1" --req-bytes 100 --sndbuf 200000 \
		--resp-bytes 60000 > /dev/null
	"$PEER" client --port "$1" --req-bytes 100 --rcvbuf 4096 \
		--hold-ms 600000 --resp-bytes 60000 --resp-read 1000 > /dev/null 2>&1 &
	cli=$!
	wait_until "the response written, the window closed" queued_is "$1" 59000 ||
		fail "queued: $(ss -tn state connected "( sport = :$1 or dport = :$1 )")"
	kill -KILL "$cli"
	wait "$cli" 2> /dev/null || true
}

start_server() {	# [ns] -- rt_peer server args...
	local ns=() ready
	if [ "$1" != "--" ]; then
		ns=(ip netns exec "$1")
		shift
	fi
	shift
	ready=$(mktemp -u /tmp/rt_ready.XXXXXX)
	"${ns[@]}" "$PEER" server --ready-file "$ready" "$@" > /dev/null &
	wait_until "server ready" test -s "$ready" || fail "server did not start"
	cat "$ready"
	rm -f "$ready"
}

# Segmentation offload off on a namespace's device, so that each packet it
# sends is one segment (a capture counts segments, netem drops one at a
# time).  Checked, not assumed: a device that keeps either offload would
# send 64 KB packets, and a loss case would then see a few dozen packets
# where it counts on thousands of segments.
segment_offload_off() {	# netns device
	local k
	ip netns exec "$1" ethtool -K "$2" tso off gso off > /dev/null ||
		fail "ethtool -K $2 tso off gso off in $1"
	k=$(ip netns exec "$1" ethtool -k "$2")
	grep -q '^tcp-segmentation-offload: off' <<< "$k" &&
		grep -q '^generic-segmentation-offload: off' <<< "$k" ||
		fail "$1's $2 keeps segmentation offload: $(grep -E \
			'^(tcp|generic)-segmentation-offload' <<< "$k" | tr '\n' ' ')"
}

# Two namespaces, rtsrv (10.99.0.1) and rtcli (10.99.0.2), joined by a veth
# pair; extra arguments become a netem qdisc on both ends.
make_netns_pair() {	# [netem args...]
	ip netns add rtsrv
	ip netns add rtcli
	ip link add rtv0 netns rtsrv type veth peer name rtv1 netns rtcli
	ip -n rtsrv addr add 10.99.0.1/24 dev rtv0
	ip -n rtcli addr add 10.99.0.2/24 dev rtv1
	ip -n rtsrv link set lo up
	ip -n rtcli link set lo up
	ip -n rtsrv link set rtv0 up
	ip -n rtcli link set rtv1 up
	if [ $# -gt 0 ]; then
		ip netns exec rtsrv tc qdisc add dev rtv0 root netem "$@"
		ip netns exec rtcli tc qdisc add dev rtv1 root netem "$@"
	fi
}

# rtsrv (10.99.0.1) - rtrt - rtcli (10.99.1.2): the router namespace between
# them drops or delays on its way to the client (netem on rtrt's rtv2), so
# that a capture in rtsrv sees every segment the server sent, lost ones
# included (netem on the server's own device would drop them before the
# capture point).  Segmentation offload off on the server's device: each
# captured packet is a segment.
make_netns_router() {	# [netem args for the path to the client...]
	ip netns add rtsrv
	ip netns add rtrt
	ip netns add rtcli
	ip link add rtv0 netns rtsrv type veth peer name rtv1 netns rtrt
	ip link add rtv2 netns rtrt type veth peer name rtv3 netns rtcli
	ip -n rtsrv addr add 10.99.0.1/24 dev rtv0
	ip -n rtrt addr add 10.99.0.254/24 dev rtv1
	ip -n rtrt addr add 10.99.1.254/24 dev rtv2
	ip -n rtcli addr add 10.99.1.2/24 dev rtv3
	for l in rtsrv:rtv0 rtrt:rtv1 rtrt:rtv2 rtcli:rtv3; do
		ip -n "${l%:*}" link set lo up
		ip -n "${l%:*}" link set "${l#*:}" up
	done
	ip -n rtsrv route add default via 10.99.0.254
	ip -n rtcli route add default via 10.99.1.254
	ip netns exec rtrt sysctl -qw net.ipv4.ip_forward=1
	segment_offload_off rtsrv rtv0
	[ $# -eq 0 ] || ip netns exec rtrt tc qdisc add dev rtv2 root netem "$@"
}

# Segments a namespace's TCP sent again, from its own MIB (nstat): a new
# namespace counts only its test's connections; a SYN-ACK sent again
# (TCPSynRetrans) belongs to no established connection.
netns_retrans() {	# netns
	ip netns exec "$1" nstat -asz |
		awk '$1 == "TcpRetransSegs" { r = $2 } $1 == "TcpExtTCPSynRetrans" { s = $2 }
		     END { print r - s }'
}

# Kernel log lines tcp_rt wrote (or matching a pattern) since a mark.
# A line of our own in the kernel log, printed to find it again: a count
# of lines would point at the wrong place once the ring is full and its
# oldest lines go as new ones come.
kmsg_mark() {
	local m
	m="tcp_rt-selftest mark $(date +%s%N) $$"
	echo "$m" > /dev/kmsg
	echo "$m"
}

kmsg_since() {	# mark [pattern: tcp_rt's own lines by default]
	dmesg | awk -v m="$1" 'seen; index($0, m) { seen = 1 }' | grep "${2:-tcp_rt:}"
}

# No kernel report since a mark (WARN, BUG, oops, KASAN), printed if any:
# the case that caused one fails, not only the VM's run.
expect_no_kernel_report() {	# mark
	local r
	r=$(kmsg_since "$1" 'WARNING\|BUG\|general protection\|KASAN\|inet_csk_listen_stop' || true)
	[ -z "$r" ] || { sed 's/^/# /' <<< "$r"; fail "kernel log reports"; }
}

# ---- redis ------------------------------------------------------------------------

redis_start() {
	redis-server --port 6379 --save '' --appendonly no --daemonize no \
		> /tmp/redis.log 2>&1 &
	wait_until "redis" redis-cli -p 6379 ping > /dev/null || fail "redis-server"
}

# Calls of one command (or of all: "") redis-server has executed.
redis_calls() {	# [command]
	redis-cli -p 6379 info commandstats |
		awk -F'[_=,:]' -v c="$1" '/^cmdstat_/ && (c == "" || $2 == c) { s += $4 } END { print s + 0 }'
}

# Snapshot of the per-command call counts, "command calls" per line.
redis_snapshot() {	# file
	redis-cli -p 6379 info commandstats |
		awk -F'[_=,:]' '/^cmdstat_/ { print $2, $4 }' > "$1"
}

# Request/response round trips clients made since a snapshot, from what
# the server counted: every command is one, but for INFO (the snapshots'
# own, on connections of their own) and for the "CONFIG GET save" +
# "CONFIG GET appendonly" that redis-benchmark pipelines into one.
redis_round_trips() {	# snapshot
	local after
	after=$(mktemp)
	redis_snapshot "$after"
	awk 'NR == FNR { before[$1] = $2; next }
	     $1 == "info" { next }
	     { d = $2 - before[$1] }
	     $1 == "config|get" && d > 0 { d = 1 }
	     { n += d }
	     END { print n + 0 }' "$1" "$after"
	rm -f "$after"
}
