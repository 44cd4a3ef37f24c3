# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The fleet path's daemons in network namespaces, for its test (fleet.sh)
# and its benchmark (tools/bench/fleet): sourced after selftests/lib.sh
# (wait_until, fail).  F is the work folder, CH ClickHouse's URL inside
# fleetc, PORT the central's RELP port.
#
#   fleeta (10.98.0.2) --\                    /-- rsyslogd (imrelp :PORT)
#                         >-- fleetc (central)  -- tcprt ingest
#   fleetb (10.98.1.2) --/   10.98.0.1         \-- clickhouse-server
#                            10.98.1.1             (127.0.0.1:8123 of fleetc)

TCPRT=${TCPRT:-$TOP/tools/tcprt/tcprt}
FLEET=$TOP/tools/tcprt/fleet
F=${F:-/tmp/tcprt-fleet}
CH=http://127.0.0.1:8123/
PORT=20514
# Convergence of the pipeline after a fault: omrelp retries every 2 s at
# first, more slowly as failures go on; ingest loads every 0.2 s.
SETTLE_S=${SETTLE_S:-120}

inc() {	# cmd...: in the central's namespace
	ip netns exec fleetc "$@"
}

sql() {	# query: its answer (TabSeparated)
	inc curl -sS --max-time 60 --fail-with-body "$CH" --data-binary "$1"
}

# ---- identities ----------------------------------------------------------------------

# The fleet's CA and frame master key, the central's certificate
# (tcprt-central) and each host namespace's (a.fleet.test, b.fleet.test),
# made by make-certs.sh as docs/fleet.md tells a user to.
MASTER=$F/tls/ca/frame-master.key

make_tls() {
	local h
	TCPRT=$TCPRT sh "$FLEET/make-certs.sh" ca $F/tls/ca > /dev/null &&
		TCPRT=$TCPRT sh "$FLEET/make-certs.sh" host $F/tls/ca tcprt-central \
			$F/tls/central > /dev/null || return 1
	for h in a b; do
		TCPRT=$TCPRT sh "$FLEET/make-certs.sh" host $F/tls/ca $h.fleet.test \
			$F/tls/$h > /dev/null || return 1
	done
}

tls_args() {	# dir: render.sh's arguments for the certificate in it
	echo "TCPRT_CA=$1/ca.pem TCPRT_CERT=$1/cert.pem TCPRT_KEY=$1/key.pem"
}

key_for() {	# host id: the path of its frame key, made on first use
	local k=$F/keys/$1.key
	if [ ! -s "$k" ]; then
		mkdir -p $F/keys
		"$TCPRT" fleet key --master $MASTER --host "$1" --out "$k" > /dev/null || return 1
	fi
	echo "$k"
}

# The messages on stdin, one a line, signed as tcprt ship signs them, by
# Python's hmac (a model of sign.h written here): "S1 <mac> " and the
# line, with the key of the host it claims - or of HOST: a forgery.
signed() {	# [HOST]
	# the program in -c: stdin is the messages'
	python3 -c '
import hashlib, hmac, sys
master = bytes.fromhex(open(sys.argv[1]).read().strip())
for line in sys.stdin.read().splitlines():
    host = sys.argv[2] or line.split(" ")[1]
    key = hmac.new(master, b"tcprt frame key v1\0" + host.encode(), hashlib.sha256).digest()
    print("S1 %s %s" % (hmac.new(key, line.encode(), hashlib.sha256).hexdigest()[:32], line))
' $MASTER "${1:-}"
}

# ---- the daemons ---------------------------------------------------------------------

make_net() {
	local h i
	ip netns add fleetc
	i=0
	for h in a b; do
		ip netns add fleet$h
		ip link add fc$i netns fleetc type veth peer name f${h}0 netns fleet$h
		ip -n fleetc addr add 10.98.$i.1/24 dev fc$i
		ip -n fleet$h addr add 10.98.$i.2/24 dev f${h}0
		ip -n fleetc link set fc$i up
		ip -n fleet$h link set f${h}0 up
		ip -n fleet$h link set lo up
		i=$((i + 1))
	done
	ip -n fleetc link set lo up
}

# Started detached (not a job of the case's subshell, which kills its jobs
# when it ends): these live across cases.
detach() {	# log cmd...
	local log=$1
	shift
	( setsid "$@" > "$log" 2>&1 < /dev/null & )
}

ch_up() {
	sql "SELECT 1" > /dev/null 2>&1
}

# A second ClickHouse user, tcprt, with a password the test draws (in a
# file only root reads): the secrets case logs in as it.
start_clickhouse() {
	mkdir -p $F/ch
	if [ ! -s $F/ch/tcprt.pw ]; then
		( umask 077; printf 'pw-%s-%s\n' "$RANDOM$RANDOM" "$$" > $F/ch/tcprt.pw )
	fi
	cat > $F/ch/config.xml <<-EOF
		<?xml version="1.0"?>
		<yandex>
		  <logger><level>warning</level><log>$F/ch/server.log</log>
		    <errorlog>$F/ch/error.log</errorlog><console>0</console></logger>
		  <http_port>8123</http_port>
		  <tcp_port>9000</tcp_port>
		  <listen_host>127.0.0.1</listen_host>
		  <path>$F/ch/data/</path>
		  <tmp_path>$F/ch/tmp/</tmp_path>
		  <user_files_path>$F/ch/user_files/</user_files_path>
		  <users_config>users.xml</users_config>
		  <default_profile>default</default_profile>
		  <default_database>default</default_database>
		  <mark_cache_size>5368709</mark_cache_size>
		</yandex>
	EOF
	cat > $F/ch/users.xml <<-EOF
		<?xml version="1.0"?>
		<yandex>
		  <profiles><default></default></profiles>
		  <users><default><password></password>
		    <networks><ip>127.0.0.1</ip></networks>
		    <profile>default</profile><quota>default</quota></default>
		  <tcprt><password>$(cat $F/ch/tcprt.pw)</password>
		    <networks><ip>127.0.0.1</ip></networks>
		    <profile>default</profile><quota>default</quota></tcprt></users>
		  <quotas><default></default></quotas>
		</yandex>
	EOF
	detach $F/ch/stdout ip netns exec fleetc clickhouse-server \
		--config-file=$F/ch/config.xml
	WAIT_S=$SETTLE_S wait_until "ClickHouse up" ch_up
}

stop_clickhouse() {	# [signal]
	pkill -"${1:-TERM}" -f "clickhouse-server --config-file=$F/ch/config.xml"
	wait_until "ClickHouse down" eval '! pgrep -f "clickhouse-server --config-file=$F/ch" > /dev/null'
}

listening() {	# netns port
	ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q .
}

# The central rsyslogd: the installed snippet, rendered (or the negative
# control's, memq); its spool writer writes to SPOOL_DIR ($F/spool), with
# SPOOL_OPTS.
start_central() {	# [memq]
	local snip=tcprt-central.conf conf=test-central.conf.in memq=()
	if [ "${1:-}" = memq ]; then
		snip=tcprt-central-memq.conf
		conf=test-central-memq.conf.in
		# nothing written until 60000 frames or 60 s
		memq=(MEMQ_BACKLOG=60000)
	fi
	mkdir -p $F/central $F/spool
	# shellcheck disable=SC2046
	"$FLEET/render.sh" "$FLEET/$snip" TCPRT_PORT=$PORT \
		TCPRT_SPOOL_WRITER="$TCPRT spool --dir ${SPOOL_DIR:-$F/spool}${SPOOL_OPTS:+ $SPOOL_OPTS}" \
		TCPRT_SPOOL_LOG=$F/central/spool.log \
		$(tls_args $F/tls/central) TCPRT_PERMITTED="*.fleet.test" \
		"${memq[@]}" > $F/central/snippet.conf
	"$FLEET/render.sh" "$FLEET/$conf" WORKDIR=$F/central \
		SNIPPET=$F/central/snippet.conf > $F/central/rsyslog.conf
	detach $F/central/stdout ip netns exec fleetc rsyslogd -n \
		-f $F/central/rsyslog.conf -i $F/central/pid
	wait_until "central rsyslogd listening" listening fleetc $PORT
}

stop_central() {	# [signal]
	local pid
	pid=$(cat $F/central/pid 2> /dev/null) || return 0
	kill -"${1:-TERM}" "$pid" 2> /dev/null || true
	wait_until "central rsyslogd gone" eval "! kill -0 $pid 2> /dev/null"
	rm -f $F/central/pid
}

# A host's rsyslogd: socket $F/<h>/ship.sock, forwarding to the central.
start_sender() {	# a|b
	local h=$1 i=0
	[ "$h" = b ] && i=1
	mkdir -p $F/$h
	# shellcheck disable=SC2046
	"$FLEET/render.sh" "$FLEET/tcprt-ship.conf" TCPRT_SOCKET=$F/$h/ship.sock \
		TCPRT_CENTRAL=10.98.$i.1 TCPRT_PORT=$PORT $(tls_args $F/tls/$h) \
		> $F/$h/snippet.conf
	"$FLEET/render.sh" "$FLEET/test-sender.conf.in" WORKDIR=$F/$h \
		SNIPPET=$F/$h/snippet.conf > $F/$h/rsyslog.conf
	detach $F/$h/stdout ip netns exec fleet$h rsyslogd -n -f $F/$h/rsyslog.conf \
		-i $F/$h/pid
	wait_until "host $h's rsyslog socket" test -S $F/$h/ship.sock
}

start_ingest() {	# [options]; INGEST_SPOOL: another spool
	detach $F/ingest.log ip netns exec fleetc "$TCPRT" ingest --spool "${INGEST_SPOOL:-$F/spool}" \
		--frame-master $MASTER --url $CH --interval 0.2 --keep "$@"
	wait_until "ingest running" pgrep -f "$TCPRT ingest" > /dev/null
}

stop_ingest() {	# [signal]
	pkill -"${1:-TERM}" -f "$TCPRT ingest" || true
	wait_until "ingest gone" eval "! pgrep -f '$TCPRT ingest' > /dev/null"
}

teardown() {
	stop_ingest
	pkill -f "$TCPRT ship" 2> /dev/null
	for h in a b; do
		[ -f $F/$h/pid ] && kill "$(cat $F/$h/pid)" 2> /dev/null
	done
	stop_central
	stop_clickhouse
	for ns in fleeta fleetb fleetc; do
		ip netns pids $ns 2> /dev/null | xargs -r kill 2> /dev/null
		ip netns del $ns 2> /dev/null
	done
	return 0
}

