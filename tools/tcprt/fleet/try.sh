#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# try.sh [STEP...] - developer check of the fleet transport, not part of
# make check: tcprt ship's datagrams -> sender rsyslogd (tcprt-ship.conf)
# -> RELP -> central rsyslogd (tcprt-central.conf) -> spool files.
#
# Runs as root: two network namespaces of its own, joined by a veth pair
# (sender 192.0.2.1, central 192.0.2.2; nothing else is touched), one
# rsyslogd in each, started with -n -f CONF -i PIDFILE from the configs
# test-*.conf.in, which include the installable snippets rendered by
# render.sh.  Frames are sent and checked by try-frames.py.  Everything
# lives in a fresh /tmp/tcprt-fleet-try.XXXXXX (removed at the end unless
# KEEP=1); every process and namespace it starts is stopped on exit.
#
# Steps (default: all, in this order):
#   basic       20000 frames of 20..4000 bytes: each arrives once, byte for
#               byte, in order; then the sender rsyslogd is stopped (SIGSTOP)
#               and datagrams are sent with MSG_DONTWAIT until EAGAIN - they
#               too must arrive once it continues
#   throughput  frames/s end to end, 200- and 4000-byte frames, and the CPU
#               time of each thread
#   kill        $KILL_N frames at full speed, SIGKILL of the central after
#               1 s, restart: none may be missing (duplicates counted)
#   memq        the same with tcprt-central-memq.conf: frames are lost (the
#               negative control: the check must see it)
#   outage      frames at $OUTAGE_RATE/s for 20 s; the central stopped for
#               10 s: none may be missing
#   linkcut     the same, the central up but the link down for 10 s (at
#               the central's end: to the sender a silent black hole)
#   restart     the central down, 30000 frames queued, the sender stopped
#               (SIGTERM) and started again, then the central: none missing
#
# Environment: RSYSLOGD (/usr/sbin/rsyslogd), PORT (20514), KILL_N (200000),
# OUTAGE_RATE (10000), KEEP (0).

set -u

FLEET=$(cd "$(dirname "$0")" && pwd)
RSYSLOGD=${RSYSLOGD:-/usr/sbin/rsyslogd}
PORT=${PORT:-20514}
KILL_N=${KILL_N:-200000}
OUTAGE_RATE=${OUTAGE_RATE:-10000}
KEEP=${KEEP:-0}
FRAMES="python3 $FLEET/try-frames.py"
RENDER=$FLEET/render.sh

NS_S=tcprtfx-s-$$
NS_C=tcprtfx-c-$$
ADDR_S=192.0.2.1
ADDR_C=192.0.2.2

STEPS=${*:-basic throughput kill memq outage linkcut restart}

failures=0
PIDS=()			# rsyslogds and senders started, for the cleanup

say()  { printf '%s\n' "$*"; }
step() { printf '\n=== %s\n' "$*"; }
ok()   { say "ok: $*"; }
fail() { say "FAIL: $*"; failures=$((failures + 1)); }
die()  { say "try.sh: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
[ -x "$RSYSLOGD" ] || die "no $RSYSLOGD"
command -v ip >/dev/null || die "needs ip (iproute2)"
command -v python3 >/dev/null || die "needs python3"
for m in imuxsock omrelp imrelp; do
	[ -n "$(find /usr/lib* -name "$m.so" -path '*rsyslog*' 2>/dev/null | head -1)" ] ||
		die "rsyslog module $m missing (apt-get install rsyslog rsyslog-relp)"
done

TOP=$(mktemp -d /tmp/tcprt-fleet-try.XXXXXX) || die "mktemp"

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -0 "$p" 2>/dev/null || continue
		kill -CONT "$p" 2>/dev/null
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		local i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1; i=$((i + 1))
		done
		kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	ip netns del "$NS_S" 2>/dev/null
	ip netns del "$NS_C" 2>/dev/null
	if [ "$KEEP" = 1 ]; then say "kept $TOP"; else rm -rf "$TOP"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# --- the namespaces -------------------------------------------------------

ip netns add "$NS_S" && ip netns add "$NS_C" || die "ip netns add"
ip -n "$NS_S" link set lo up
ip -n "$NS_C" link set lo up
ip -n "$NS_S" link add vs type veth peer name vc netns "$NS_C" || die "veth"
ip -n "$NS_S" addr add "$ADDR_S/30" dev vs
ip -n "$NS_C" addr add "$ADDR_C/30" dev vc
ip -n "$NS_S" link set vs up
ip -n "$NS_C" link set vc up

# --- the installed snippets and the negative control must not drift ---------

step "configs"
if diff <("$RENDER" "$FLEET/tcprt-central.conf" TCPRT_CENTRAL_QUEUE=LinkedList |
	  grep -Ev '^[[:space:]]*(#|$)') \
	<(grep -Ev '^[[:space:]]*(#|$)|# MEMQ_BACKLOG$' "$FLEET/tcprt-central-memq.conf") >/dev/null; then
	ok "tcprt-central-memq.conf is tcprt-central.conf with a LinkedList queue (and a backlog)"
else
	fail "tcprt-central-memq.conf has drifted from tcprt-central.conf"
fi

# --- rsyslogds ---------------------------------------------------------------

# The fleet's CA, the central's certificate (named tcprt-central) and the
# sender's (try-sender), made by make-certs.sh as a user would: the hop is
# TLS, as installed.  make-certs.sh writes the frame key with tcprt.
certs() {
	[ -d "$TOP/tls/ca" ] && return 0
	TCPRT=${TCPRT:-$FLEET/../tcprt} sh "$FLEET/make-certs.sh" ca "$TOP/tls/ca" > /dev/null &&
	TCPRT=${TCPRT:-$FLEET/../tcprt} sh "$FLEET/make-certs.sh" host "$TOP/tls/ca" tcprt-central "$TOP/tls/central" > /dev/null &&
	TCPRT=${TCPRT:-$FLEET/../tcprt} sh "$FLEET/make-certs.sh" host "$TOP/tls/ca" try-sender "$TOP/tls/sender" > /dev/null ||
		die "make-certs.sh"
}

tls_of() {	# dir: the render arguments of a machine's certificate
	echo "TCPRT_CA=$1/ca.pem TCPRT_CERT=$1/cert.pem TCPRT_KEY=$1/key.pem"
}

# conf_central DIR SNIPPET SPOOL: render the central's config into DIR
conf_central() {
	local dir=$1 snippet=$2 spool=$3 in=test-central.conf.in
	case $snippet in *memq*) in=test-central-memq.conf.in ;; esac
	mkdir -p "$dir" "$spool"
	certs
	# shellcheck disable=SC2046
	"$RENDER" "$FLEET/$snippet" TCPRT_PORT="$PORT" \
		TCPRT_SPOOL_WRITER="${TCPRT:-$FLEET/../tcprt} spool --dir $spool" \
		TCPRT_SPOOL_LOG="$dir/spool.log" TCPRT_PERMITTED=try-sender \
		$(tls_of "$TOP/tls/central") > "$dir/$snippet" || die "render $snippet"
	"$RENDER" "$FLEET/$in" WORKDIR="$dir" SNIPPET="$dir/$snippet" \
		> "$dir/central.conf" || die "render $in"
}

# conf_sender DIR
conf_sender() {
	local dir=$1
	mkdir -p "$dir"
	certs
	# shellcheck disable=SC2046
	"$RENDER" "$FLEET/tcprt-ship.conf" TCPRT_SOCKET="$dir/ship.sock" \
		TCPRT_CENTRAL="$ADDR_C" TCPRT_PORT="$PORT" \
		$(tls_of "$TOP/tls/sender") > "$dir/tcprt-ship.conf" ||
		die "render tcprt-ship.conf"
	"$RENDER" "$FLEET/test-sender.conf.in" WORKDIR="$dir" \
		SNIPPET="$dir/tcprt-ship.conf" > "$dir/sender.conf" ||
		die "render test-sender.conf.in"
}

# run_rsyslogd NS DIR CONF: start it in the background, set $PID
run_rsyslogd() {
	local ns=$1 dir=$2 conf=$3
	rm -f "$dir/rsyslogd.pid"
	# ip netns exec execs the command: $! is rsyslogd
	ip netns exec "$ns" "$RSYSLOGD" -n -f "$dir/$conf" -i "$dir/rsyslogd.pid" \
		>>"$dir/rsyslogd.out" 2>&1 &
	PID=$!
	PIDS+=("$PID")
}

# start_central DIR: set $CPID once it listens
start_central() {
	local dir=$1 i=0
	run_rsyslogd "$NS_C" "$dir" central.conf
	CPID=$PID
	until ip netns exec "$NS_C" ss -Hltn "sport = :$PORT" | grep -q .; do
		kill -0 "$CPID" 2>/dev/null || die "central rsyslogd died: $(cat "$dir/rsyslogd.out")"
		i=$((i + 1)); [ $i -lt 100 ] || die "central does not listen"
		sleep 0.1
	done
}

# start_sender DIR: set $SPID once its socket exists
start_sender() {
	local dir=$1 i=0
	rm -f "$dir/ship.sock"
	run_rsyslogd "$NS_S" "$dir" sender.conf
	SPID=$PID
	until [ -S "$dir/ship.sock" ]; do
		kill -0 "$SPID" 2>/dev/null || die "sender rsyslogd died: $(cat "$dir/rsyslogd.out")"
		i=$((i + 1)); [ $i -lt 100 ] || die "sender socket missing"
		sleep 0.1
	done
}

# stop PID [SIGNAL]: signal it (TERM) and wait for its end
stop() {
	local pid=$1 sig=${2:-TERM} i=0
	kill -"$sig" "$pid" 2>/dev/null
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 300 ] || { kill -KILL "$pid"; fail "pid $pid ignored SIG$sig for 30 s"; }
		sleep 0.1
	done
	wait "$pid" 2>/dev/null
}

spool_bytes() {
	local n=0 f s
	for f in "$1"/*.frames; do
		[ -e "$f" ] || continue
		s=$(stat -c %s "$f"); n=$((n + s))
	done
	echo $n
}

# sender_queued DIR: frames in the sender's action queue (memory + disk),
# from its last impstats record
sender_queued() {
	local f=$1/stats.log
	[ -s "$f" ] || { echo 0; return; }
	awk '/tcprt_ship_relp queue(\[DA\])?:/ {
		q = ($0 ~ /\[DA\]/) ? "da" : "mem"
		for (i = 1; i <= NF; i++) if ($i ~ /^size=/) { sub(/size=/, "", $i); n[q] = $i }
	     } END { print n["mem"] + n["da"] }' "$f"
}

# wait_quiet SPOOL SENDERDIR: until the sender's queue is empty and the
# spool has not grown for 6 s (at most 180 s)
wait_quiet() {
	local spool=$1 sdir=$2 last=-1 same=0 t=0 b q
	while :; do
		b=$(spool_bytes "$spool")
		q=$(sender_queued "$sdir")
		if [ "$b" = "$last" ] && [ "$q" = 0 ]; then
			same=$((same + 1))
			[ $same -ge 12 ] && return 0
		else
			same=0
		fi
		last=$b
		t=$((t + 1))
		[ $t -lt 360 ] || { fail "spool still growing or sender queue not empty ($q) after 180 s"; return 1; }
		sleep 0.5
	done
}

# pair NAME [SNIPPET]: a fresh central (tcprt-central.conf or SNIPPET) and
# sender for one step, in $TOP/NAME; sets CDIR SDIR SPOOL CPID SPID
pair() {
	local name=$1 snippet=${2:-tcprt-central.conf}
	CDIR=$TOP/$name/central SDIR=$TOP/$name/sender SPOOL=$TOP/$name/spool
	conf_central "$CDIR" "$snippet" "$SPOOL"
	conf_sender "$SDIR"
	start_central "$CDIR"
	start_sender "$SDIR"
}

unpair() {
	stop "$SPID"
	stop "$CPID"
	local n
	n=$(cat "$SDIR/rsyslogd.log" "$CDIR/rsyslogd.log" 2>/dev/null | grep -ciE 'error|fail')
	if [ "$n" -gt 0 ]; then
		say "rsyslogd's own messages: $n errors (expected while the central is away), e.g.:"
		cat "$SDIR/rsyslogd.log" "$CDIR/rsyslogd.log" 2>/dev/null | grep -iE 'error|fail' |
			sed -E 's/^[^ ]+ [^ ]+ //; s/ \[v8.*//' | sort | uniq -c | sort -rn | head -3 |
			cut -c1-160 | sed 's/^/  /'
	fi
	local da
	da=$(grep -ho 'discarded.full=[1-9][0-9]*' "$SDIR/stats.log" "$CDIR/stats.log" 2>/dev/null | head -1)
	[ -z "$da" ] || fail "a queue discarded frames: $da"
}

# --- steps -------------------------------------------------------------------

step_basic() {
	step "basic: 20000 frames of 20..4000 bytes, exactly once, in order"
	pair basic
	$FRAMES send --socket "$SDIR/ship.sock" --count 20000 --size mixed \
		--wait-bytes "$SPOOL" --timeout 60 || fail "not all arrived"
	if $FRAMES check --spool "$SPOOL" --count 20000 --size mixed --exact; then
		ok "every frame once, byte for byte, in order"
	else
		fail "basic"
	fi
	say "socket: $(stat -c '%A %U:%G' "$SDIR/ship.sock"); spool: $(ls "$SPOOL")"

	step "basic: the sender rsyslogd stopped (SIGSTOP), MSG_DONTWAIT until EAGAIN"
	local n
	kill -STOP "$SPID"
	n=$($FRAMES probe --socket "$SDIR/ship.sock" --first 20000 --size mixed |
		tee "$TOP/probe.out" | tail -1)
	head -1 "$TOP/probe.out"
	kill -CONT "$SPID"
	wait_quiet "$SPOOL" "$SDIR"
	if [ "$n" -gt 0 ] && [ "$n" -lt 1000 ] &&
	   $FRAMES check --spool "$SPOOL" --count $((20000 + n)) --size mixed --exact; then
		ok "$n datagrams taken while stopped, then EAGAIN; all delivered after SIGCONT"
	else
		fail "EAGAIN probe"
	fi
	unpair
}

step_throughput() {
	local size n
	for size in 200 4000; do
		case $size in 200) n=200000 ;; *) n=50000 ;; esac
		step "throughput: $n frames of $size bytes, as fast as they go"
		pair "tp$size"
		$FRAMES send --socket "$SDIR/ship.sock" --count $n --size $size \
			--wait-bytes "$SPOOL" --timeout 60 \
			--cpu "sender=$SPID" "central=$CPID" || fail "not all arrived"
		# in order only while the sender's queue stays in memory (see
		# tcprt-ship.conf): these bursts overflow to disk
		$FRAMES check --spool "$SPOOL" --count $n --size $size --once ||
			fail "throughput $size: not exactly once"
		unpair
	done
}

# kill_step NAME SNIPPET MODE
kill_step() {
	local name=$1 snippet=$2 mode=$3 sp
	step "$name: $KILL_N frames of 200 bytes at full speed, SIGKILL of the central ($snippet) after 1 s"
	pair "$name" "$snippet"
	$FRAMES send --socket "$SDIR/ship.sock" --count "$KILL_N" --size 200 \
		> "$TOP/$name.send" 2>&1 &
	sp=$!
	PIDS+=("$sp")
	sleep 1
	say "at the kill: $(($(spool_bytes "$SPOOL") / 201)) frames in the spool"
	stop "$CPID" KILL
	sleep 1
	start_central "$CDIR"
	wait "$sp"
	cat "$TOP/$name.send"
	wait_quiet "$SPOOL" "$SDIR"
	if [ "$mode" = at-least ]; then
		if $FRAMES check --spool "$SPOOL" --count "$KILL_N" --size 200 --at-least; then
			ok "none lost across the SIGKILL (duplicates above are allowed)"
		else
			fail "frames lost across a SIGKILL of the shipped central"
		fi
	else
		$FRAMES check --spool "$SPOOL" --count "$KILL_N" --size 200 --lossy |
			tee "$TOP/$name.check"
		if grep -q ' [1-9][0-9]* missing' "$TOP/$name.check"; then
			ok "the negative control lost frames, and the check saw it"
		else
			say "WARN: the negative control lost nothing this time"
		fi
	fi
	unpair
}

# outage_step NAME HOW
outage_step() {
	local name=$1 how=$2 sp n=$((OUTAGE_RATE * 20))
	step "$name: $n frames of 20..4000 bytes at $OUTAGE_RATE/s; $how for 10 s after 3 s"
	pair "$name"
	$FRAMES send --socket "$SDIR/ship.sock" --count $n --size mixed \
		--rate "$OUTAGE_RATE" > "$TOP/$name.send" 2>&1 &
	sp=$!
	PIDS+=("$sp")
	sleep 3
	case $how in
	*central*)
		stop "$CPID"
		sleep 10
		start_central "$CDIR" ;;
	*)
		# the central's end of the veth: the sender keeps its address
		# and route, its packets vanish (no error, no RST)
		ip -n "$NS_C" link set vc down
		sleep 10
		ip -n "$NS_C" link set vc up ;;
	esac
	say "after the outage: sender queue $(sender_queued "$SDIR") frames, on disk:" \
	    "$(du -sh "$SDIR" | cut -f1) in its work directory"
	wait "$sp"
	cat "$TOP/$name.send"
	wait_quiet "$SPOOL" "$SDIR"
	if $FRAMES check --spool "$SPOOL" --count $n --size mixed --at-least; then
		ok "none lost across $how"
	else
		fail "frames lost across $how"
	fi
	unpair
}

step_restart() {
	local n=30000
	step "restart: the central down; $n frames queued; the sender restarted, then the central"
	pair restart
	stop "$CPID"
	$FRAMES send --socket "$SDIR/ship.sock" --count $n --size mixed
	sleep 3
	say "queued: $(sender_queued "$SDIR") frames (as of the last stats)"
	stop "$SPID"
	say "after SIGTERM: $(ls "$SDIR" | grep -c '^tcprt_ship') queue files," \
	    "$(du -sh "$SDIR" | cut -f1) in the sender's work directory"
	start_sender "$SDIR"
	start_central "$CDIR"
	wait_quiet "$SPOOL" "$SDIR"
	if $FRAMES check --spool "$SPOOL" --count $n --size mixed --at-least; then
		ok "none lost across a restart of the sender with a full queue"
	else
		fail "frames lost across a restart of the sender"
	fi
	unpair
}

$FRAMES eagain

for s in $STEPS; do
	case $s in
	basic)		step_basic ;;
	throughput)	step_throughput ;;
	kill)		kill_step kill tcprt-central.conf at-least ;;
	memq)		kill_step memq tcprt-central-memq.conf lossy ;;
	outage)		outage_step outage "the central stopped" ;;
	linkcut)	outage_step linkcut "the link down" ;;
	restart)	step_restart ;;
	*)		die "unknown step $s" ;;
	esac
done

step "done"
if [ $failures = 0 ]; then say "all passed"; else say "$failures FAILED"; fi
[ $failures = 0 ]
