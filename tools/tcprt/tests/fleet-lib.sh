# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The fleet path's daemons in network namespaces, and the store's accounts as
# the tests read them, for its tests (fleet.sh, cluster.sh)
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
# The time the tests' records claim: a day or two before now, never a
# fixed day - gaps' window starts where the records' retention (30 days)
# does, and ingest stores a record over --max-age (30 days) older than
# its arrival as malformed.  FLEET_T0 is 1795218000 (the time the tests
# were written with) moved on by whole 100,000 s to between 2.2 and 1 days
# before now: the tests write a time as ${FP}18000 where they had
# 1795218000, ${FP}21000 for 1795221000, and fleet_gen.py's records start
# at FLEET_T0.
FP=$(( ($(date +%s) - 1795218000 - 86400) / 100000 ))
FP=$(( 17952 + (FP > 0 ? FP : 0) ))
export FLEET_T0=${FP}18000

inc() {	# cmd...: in the central's namespace
	ip netns exec fleetc "$@"
}

sql() {	# query: its answer (TabSeparated), within SQL_S seconds (60)
	inc curl -sS --max-time "${SQL_S:-60}" --fail-with-body "$CH" --data-binary "$1"
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
	# the second central of cluster.sh
	TCPRT=$TCPRT sh "$FLEET/make-certs.sh" host $F/tls/ca tcprt-central-2 \
		$F/tls/central2 > /dev/null
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
ch_users() {
	mkdir -p $F/ch
	if [ ! -s $F/ch/tcprt.pw ]; then
		( umask 077; printf 'pw-%s-%s\n' "$RANDOM$RANDOM" "$$" > $F/ch/tcprt.pw )
	fi
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
}

# A server's config.xml in DIR (its data, logs and tmp there too): the
# ports given, the users of ch_users, and EXTRA (XML) for a cluster's node.
ch_config() {	# dir http_port tcp_port [extra]
	local d=$1
	mkdir -p $d
	cat > $d/config.xml <<-EOF
		<?xml version="1.0"?>
		<yandex>
		  <logger><level>warning</level><log>$d/server.log</log>
		    <errorlog>$d/error.log</errorlog><console>0</console></logger>
		  <http_port>$2</http_port>
		  <tcp_port>$3</tcp_port>
		  <listen_host>127.0.0.1</listen_host>
		  <path>$d/data/</path>
		  <tmp_path>$d/tmp/</tmp_path>
		  <user_files_path>$d/user_files/</user_files_path>
		  <users_config>$F/ch/users.xml</users_config>
		  <default_profile>default</default_profile>
		  <default_database>default</default_database>
		  <mark_cache_size>5368709</mark_cache_size>
		${4:-}
		</yandex>
	EOF
}

# CHDIR: the server's folder (config, data, logs), default $F/ch
start_clickhouse() {
	local d=${CHDIR:-$F/ch}
	ch_users
	ch_config $d 8123 9000
	detach $d/stdout ip netns exec fleetc clickhouse-server \
		--config-file=$d/config.xml
	WAIT_S=$SETTLE_S wait_until "ClickHouse up" ch_up
}

stop_clickhouse() {	# [signal]
	local d=${CHDIR:-$F/ch}
	pkill -"${1:-TERM}" -f "clickhouse-server --config-file=$d/config.xml"
	wait_until "ClickHouse down" eval "! pgrep -f 'clickhouse-server --config-file=$d/config.xml' > /dev/null"
}

listening() {	# netns port
	ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q .
}

# The central rsyslogd: the installed snippet, rendered (or the negative
# control's, memq); its spool writer writes to SPOOL_DIR ($F/spool), with
# SPOOL_OPTS.  CEN=central2: the second central (cluster.sh), its own
# folder, certificate (tcprt-central-2), port (PORT2) and spool ($F/spool2),
# in the same namespace.
PORT2=20515
cen_port() {
	if [ "${CEN:-central}" = central2 ]; then echo $PORT2; else echo $PORT; fi
}

start_central() {	# [memq]
	local snip=tcprt-central.conf conf=test-central.conf.in memq=()
	local c=${CEN:-central} port spool=${SPOOL_DIR:-$F/spool}
	port=$(cen_port)
	[ "$c" = central2 ] && spool=$F/spool2
	if [ "${1:-}" = memq ]; then
		snip=tcprt-central-memq.conf
		conf=test-central-memq.conf.in
		# nothing written until 60000 frames or 60 s
		memq=(MEMQ_BACKLOG=60000)
	fi
	mkdir -p $F/$c "$spool"
	# shellcheck disable=SC2046
	"$FLEET/render.sh" "$FLEET/$snip" TCPRT_PORT=$port \
		TCPRT_SPOOL_WRITER="$TCPRT spool --dir $spool${SPOOL_OPTS:+ $SPOOL_OPTS}" \
		TCPRT_SPOOL_LOG=$F/$c/spool.log \
		$(tls_args $F/tls/$c) TCPRT_PERMITTED="*.fleet.test" \
		"${memq[@]}" > $F/$c/snippet.conf
	"$FLEET/render.sh" "$FLEET/$conf" WORKDIR=$F/$c \
		SNIPPET=$F/$c/snippet.conf > $F/$c/rsyslog.conf
	detach $F/$c/stdout ip netns exec fleetc rsyslogd -n \
		-f $F/$c/rsyslog.conf -i $F/$c/pid
	wait_until "$c rsyslogd listening" listening fleetc "$port"
}

stop_central() {	# [signal]
	local pid c=${CEN:-central}
	pid=$(cat $F/$c/pid 2> /dev/null) || return 0
	kill -"${1:-TERM}" "$pid" 2> /dev/null || true
	wait_until "$c rsyslogd gone" eval "! kill -0 $pid 2> /dev/null"
	rm -f $F/$c/pid
}

# A host's rsyslogd: socket $F/<h>/ship.sock, forwarding to the central;
# TWO=failover or TWO=mirror: a snippet of two centrals
# (tcprt-ship-failover.conf, the first tried again every 5 s;
# tcprt-ship-mirror.conf), the second one CEN=central2's; TO=central2:
# tcprt-ship.conf to the second central alone.
# SENDER_SED: a sed script the snippet goes through (a case's own queue)
# WATCHDOG=1: with fleet/tcprt-relp-watchdog.conf too (case_impostor), at
# most one restart every WATCHDOG_GAP s (5), its restart <h>/restart:
# what systemd's restart of rsyslog.service does, for this rsyslogd.
start_sender() {	# a|b
	local h=$1 i=0 snip=tcprt-ship.conf two=()
	[ "$h" = b ] && i=1
	if [ -n "${TWO:-}" ]; then
		snip=tcprt-ship-$TWO.conf
		two=("TCPRT_CENTRAL2=10.98.$i.1" "TCPRT_PORT2=$PORT2"
		     TCPRT_CENTRAL2_NAME=tcprt-central-2)
		[ "$TWO" = failover ] && two+=(TCPRT_RETRY=5)
	fi
	mkdir -p $F/$h
	# TO=central2: the one central is the second
	[ "${TO:-}" = central2 ] && two+=(TCPRT_CENTRAL_NAME=tcprt-central-2)
	# shellcheck disable=SC2046
	"$FLEET/render.sh" "$FLEET/$snip" TCPRT_SOCKET=$F/$h/ship.sock \
		TCPRT_CENTRAL=10.98.$i.1 TCPRT_PORT="$(CEN=${TO:-central} cen_port)" \
		$(tls_args $F/tls/$h) "${two[@]}" | sed -e "${SENDER_SED:-}" > $F/$h/snippet.conf
	"$FLEET/render.sh" "$FLEET/test-sender.conf.in" WORKDIR=$F/$h \
		SNIPPET=$F/$h/snippet.conf > $F/$h/rsyslog.conf
	[ -z "${WATCHDOG:-}" ] || sender_watchdog "$h"
	detach $F/$h/stdout ip netns exec fleet$h rsyslogd -n -f $F/$h/rsyslog.conf \
		-i $F/$h/pid
	wait_until "host $h's rsyslog socket" test -S $F/$h/ship.sock
}

# Host h's rsyslogd with the watchdog's rule; its restart: SIGTERM, then
# SIGKILL if it is not gone within 20 s (systemd's stop timeout, shorter),
# then rsyslogd again - each step a line in <h>/restarts.
sender_watchdog() {	# a|b
	local h=$1
	rm -f $F/$h/watchdog.last $F/$h/watchdog.last.log $F/$h/restarts
	cat > $F/$h/restart <<-EOF
		#!/bin/sh
		pid=\$(cat $F/$h/pid) || exit 1
		kill -TERM \$pid
		i=0
		while kill -0 \$pid 2> /dev/null; do
			if [ \$i = 200 ]; then
				kill -KILL \$pid
				echo "killed \$pid" >> $F/$h/restarts
			fi
			sleep 0.1
			i=\$((i + 1))
		done
		echo "restarted \$pid" >> $F/$h/restarts
		exec rsyslogd -n -f $F/$h/rsyslog.conf -i $F/$h/pid > $F/$h/stdout 2>&1
	EOF
	chmod 755 $F/$h/restart
	"$FLEET/render.sh" "$FLEET/tcprt-relp-watchdog.conf" \
		TCPRT_WATCHDOG="$FLEET/tcprt-relp-watchdog --gap ${WATCHDOG_GAP:-5} --state $F/$h/watchdog.last --restart $F/$h/restart" \
		> $F/$h/watchdog.conf
	echo "include(file=\"$F/$h/watchdog.conf\")" >> $F/$h/rsyslog.conf
}

# Host h's watchdog, its restart and every rsyslogd of h gone.
stop_watchdog() {	# a|b
	pkill -f "$F/$1/restart" 2> /dev/null || true
	pkill -f "tcprt-relp-watchdog .*$F/$1/" 2> /dev/null || true
	pkill -f "rsyslogd -n -f $F/$1/rsyslog.conf" 2> /dev/null || true
	wait_until "host $1's rsyslogd gone" eval "! pgrep -f 'rsyslogd -n -f $F/$1/rsyslog.conf' > /dev/null"
	rm -f $F/$1/pid $F/$1/ship.sock
}

stop_sender() {	# a|b
	local pid
	pid=$(cat $F/$1/pid 2> /dev/null) || return 0
	kill "$pid" 2> /dev/null || true
	wait_until "host $1's rsyslogd gone" eval "! kill -0 $pid 2> /dev/null"
	rm -f $F/$1/pid $F/$1/ship.sock
}

# INGEST_SPOOL: another spool; INGEST_LOG, INGEST_URL: another log, store;
# INGEST_KEEP= (empty): files retired as ingest's options say, not kept
# Started, and holding its state's lock (or gone, having refused to
# start): a process alone is not yet a loader - a second one started
# right after it, on a busy machine, once took the lock first.
start_ingest() {	# [options]
	local spool=${INGEST_SPOOL:-$F/spool} state a prev=
	state=$spool/.tcprt-ingest.state
	for a in "$@"; do
		[ "$prev" = --state ] && state=$a
		prev=$a
	done
	# shellcheck disable=SC2086
	detach "${INGEST_LOG:-$F/ingest.log}" ip netns exec fleetc "$TCPRT" ingest --spool "$spool" \
		--frame-master $MASTER --url "${INGEST_URL:-$CH}" --interval 0.2 ${INGEST_KEEP---keep} "$@"
	wait_until "ingest running" pgrep -f "$TCPRT ingest --spool $spool " > /dev/null
	wait_until "ingest holding $state.lock, or gone" \
		eval "lock_held '$state.lock' || ! pgrep -f '$TCPRT ingest --spool $spool ' > /dev/null"
}

# Whether someone holds a lock on FILE (/proc/locks, by inode: taking it
# to see would race with its owner's own try).
lock_held() {	# file
	local ino
	ino=$(stat -c %i "$1" 2> /dev/null) || return 1
	grep -q ":$ino " /proc/locks
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
	CEN=central2 stop_central
	stop_clickhouse
	for ns in fleeta fleetb fleetc; do
		ip netns pids $ns 2> /dev/null | xargs -r kill 2> /dev/null
		ip netns del $ns 2> /dev/null
	done
	return 0
}


# ---- the store's accounts ------------------------------------------------------------

# One epoch's account of HOST as "state sent received missing cap refused
# transport malformed past" (the last epoch when there are several).
account() {	# host
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host "$1" --format csv 2> /dev/null |
		awk -F, 'NR > 1 { a = $3 " " $5 " " $6 " " $7 " " $8 " " $9 " " $10 " " $12 " " $13 } END { print a }'
}

# The last control message arrived and every number it accounts for is
# either received or explained (no transport loss): the pipeline has
# settled.
settled() {	# host
	# shellcheck disable=SC2046
	set -- $(account "$1")
	[ "${1:-}" = final ] && [ "$7" = 0 ]
}

# ... or: settled with the transport loss the test expects (the negative
# control), i.e. nothing more will arrive and the final account is there.
final_seen() {	# host
	# shellcheck disable=SC2046
	set -- $(account "$1")
	[ "${1:-}" = final ]
}

wait_settled() {	# host
	WAIT_S=$SETTLE_S wait_until "the account of $1 to settle" settled "$1" ||
		fail "account of $1: $(account "$1"); gaps: $(inc "$TCPRT" fleet gaps --since 0 --url $CH --host "$1" --format csv 2>&1 |
						  tail -n 3); ingest: $(tail -3 $F/ingest.log)"
}

# The records of HOST's last epoch that ClickHouse refused (gaps' STORE).
store_refused() {	# host
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host "$1" --format csv 2> /dev/null |
		awk -F, 'NR > 1 { a = $11 } END { print a }'
}

expect_account() {	# host "state sent received missing cap refused transport malformed past"
	expect_eq "$(account "$1")" "$2" "account of $1 (state sent received missing cap refused transport malformed past)"
}

# Every record of HOST once: FINAL and uniqExact agree with the sent count.
expect_once() {	# host sent
	expect_eq "$(sql "SELECT count(), uniqExact(seq), min(seq), max(seq) FROM tcprt.records FINAL WHERE host = '$1'")" \
		"$2	$2	0	$(($2 - 1))" "records of $1 in the store (count, distinct, min, max)"
}


# The store's lines of HOST, in sequence order, are the lines of the logs
# in DIR as ship reads them (files by number, each in order), byte for byte.
expect_lines() {	# host dir
	sql "SELECT hex(line) FROM tcprt.records FINAL WHERE host = '$1' ORDER BY seq FORMAT TabSeparated" \
		> $F/lines.hex
	python3 - "$2" $F/lines.hex <<-'PY' || fail "lines of $1 differ from $2"
		import binascii, os, re, sys
		d = sys.argv[1]
		files = sorted((int(m.group(1)), n) for n in os.listdir(d)
		               for m in [re.fullmatch(r"rt-network-log(\d+)", n)] if m)
		want = []
		for _, n in files:
		    data = open(os.path.join(d, n), "rb").read()
		    want += data.split(b"\n")[:-1]
		got = [binascii.unhexlify(l.strip()) for l in open(sys.argv[2])]
		assert len(got) == len(want), (len(got), len(want))
		for i, (g, w) in enumerate(zip(got, want)):
		    assert g == w, (i, g, w)
		print("# %d lines byte for byte" % len(got))
	PY
}

lines_in() {	# dir: lines of its logs
	cat "$1"/rt-network-log* | wc -l
}

store_count() {	# host: its records loaded
	sql "SELECT count() FROM tcprt.records WHERE host = '$1'"
}

store_has() {	# host n: at least n records of host loaded
	[ "$(store_count "$1")" -ge "$2" ]
}

# fleet top -n 3 --format json's answer (JSON) lists the three longest
# durations of the R records in DIR's logs that started before UNTIL.
expect_top3() {	# dir json until
	python3 - "$1" "$2" "$3" <<-'PY' || fail "top"
		import json, os, sys
		d = [int(l.split()[7]) for n in os.listdir(sys.argv[1])
		     for l in open(os.path.join(sys.argv[1], n))
		     if l.split()[1] == "R" and int(l.split()[2]) < int(sys.argv[3])]
		top = [json.loads(l) for l in open(sys.argv[2])]
		assert [t["duration"] for t in top] == sorted(d, reverse=True)[:3], top
	PY
}

ship() {	# a|b host-id [ship options]: in the host's namespace
	local h=$1 id=$2
	shift 2
	ip netns exec fleet$h "$TCPRT" ship --key-file "$(key_for "$id")" --socket $F/$h/ship.sock "$@"
}

# ---- a ClickHouse cluster ------------------------------------------------------------
#
# Three clickhouse-servers and one ZooKeeper in the central's namespace,
# each on ports of its own on 127.0.0.1 (docs/fleet.md, "Scaling out"):
# the cluster tcprt_test, shard 1 of nodes 1 and 2 (replicas of each
# other), shard 2 of node 3.  CHN[i] is node i's URL.
CLUSTER=tcprt_test
CHN=(- http://127.0.0.1:8131/ http://127.0.0.1:8132/ http://127.0.0.1:8133/)
ZK_PORT=22181

# (a ZooKeeper still starting may take the connection and answer nothing:
# each try is bounded)
zk_mode() {	# ZooKeeper's own answer that it serves sessions ("Mode: ...")
	inc timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$ZK_PORT && printf srvr >&3 && cat <&3" \
		2> /dev/null | grep -q '^Mode: '
}

# How far a ZooKeeper starting got: its JVM's CPU time, in 5 s steps.
# Restarted after a SIGKILL, it reads its snapshot and transaction logs
# before it serves: over 120 s in a guest starved by a busy host
# (docs/testing.md), seconds otherwise; the steps keep an idle JVM's
# housekeeping from counting as a start going on.
zk_progress() {
	local pid
	pid=$(pgrep -n -f "^java .*ZooKeeperServerMain $F/zk/zoo.cfg") || return 1
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) / hz / 5) }' \
		/proc/"$pid"/stat
}

# ClickHouse started before ZooKeeper serves sessions can crash at its
# first ON CLUSTER statement (fleet-notes): wait for srvr's Mode line, not
# ruok, for as long as the JVM's start goes on.  A 5 s session timeout lets a killed replica's session expire,
# and the replica catch up, within seconds of its restart.
start_zookeeper() {
	mkdir -p $F/zk/data
	cat > $F/zk/zoo.cfg <<-EOF
		tickTime=500
		dataDir=$F/zk/data
		clientPort=$ZK_PORT
		clientPortAddress=127.0.0.1
		admin.enableServer=false
		4lw.commands.whitelist=srvr
		maxSessionTimeout=10000
	EOF
	detach $F/zk/log ip netns exec fleetc java -Xmx256m \
		-cp /usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar \
		org.apache.zookeeper.server.ZooKeeperServerMain $F/zk/zoo.cfg
	WAIT_S=$SETTLE_S wait_moving "ZooKeeper serving" zk_progress zk_mode
}

stop_zookeeper() {	# [signal]
	pkill -"${1:-TERM}" -f "ZooKeeperServerMain $F/zk/zoo.cfg"
	wait_until "ZooKeeper down" eval '! pgrep -f "ZooKeeperServerMain $F/zk/zoo.cfg" > /dev/null'
}

node_up() {	# i
	CH=${CHN[$1]} ch_up
}

nsql() {	# i query: node i's answer
	CH=${CHN[$1]} sql "$2"
}

start_node() {	# i
	local i=$1 d=$F/chn$1 shard=1
	[ "$i" = 3 ] && shard=2
	ch_config $d 813$i 913$i "
		  <interserver_http_port>923$i</interserver_http_port>
		  <interserver_http_host>127.0.0.1</interserver_http_host>
		  <remote_servers><$CLUSTER>
		    <shard><internal_replication>true</internal_replication>
		      <replica><host>127.0.0.1</host><port>9131</port></replica>
		      <replica><host>127.0.0.1</host><port>9132</port></replica></shard>
		    <shard><internal_replication>true</internal_replication>
		      <replica><host>127.0.0.1</host><port>9133</port></replica></shard>
		  </$CLUSTER></remote_servers>
		  <zookeeper><node><host>127.0.0.1</host><port>$ZK_PORT</port></node>
		    <session_timeout_ms>5000</session_timeout_ms></zookeeper>
		  <macros><shard>$shard</shard><replica>node$i</replica></macros>
		  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>"
	detach $d/stdout ip netns exec fleetc clickhouse-server --config-file=$d/config.xml
	WAIT_S=$SETTLE_S wait_until "ClickHouse node $i up" node_up "$i"
}

stop_node() {	# i [signal]
	CHDIR=$F/chn$1 stop_clickhouse "${2:-TERM}"
}

start_cluster() {
	ch_users && start_zookeeper && start_node 1 && start_node 2 && start_node 3
}

stop_cluster() {
	local i
	for i in 1 2 3; do
		stop_node $i
	done
	stop_zookeeper
}
