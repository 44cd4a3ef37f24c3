#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The fleet path end to end, inside the VM (scripts/vm-run, as root), with
# the real daemons, started and stopped here (docs/fleet.md; the
# namespaces and daemons: fleet-lib.sh).  Each host namespace runs its own rsyslogd (the installed snippet
# fleet/tcprt-ship.conf, rendered) and tcprt ship; the central namespace
# runs rsyslogd (fleet/tcprt-central.conf), tcprt ingest and ClickHouse.
# Nothing listens outside these namespaces.  Every case uses host ids of
# its own, so each reads its own accounts from the one store.
#
# The truths the store is held to: the lines of the logs shipped (byte for
# byte, in sequence order), the workload's own counts and the module's
# status counters for live traffic, a token-bucket model written here for
# the cap, and the numbers this test removed or lost on purpose.
#
# Run: scripts/vm-run -- selftests/run tools/tcprt/tests/fleet.sh
. "$(dirname "$0")/../../../selftests/lib.sh"
. "$(dirname "$0")/fleet-lib.sh"
. "$(dirname "$0")/victoria-lib.sh"

GEN=$TOP/tools/tcprt/tests/fleet_gen.py
BDGEN=$TOP/tools/tcprt/tests/breakdown_gen.py
SGEN=$TOP/tools/tcprt/tests/series_gen.py

for c in rsyslogd clickhouse-server curl python3; do
	command -v $c > /dev/null ||
		{ echo "not ok 1 - $c missing (scripts/install-deps)"; exit 1; }
done
[ -x "$TCPRT" ] || { echo "not ok 1 - $TCPRT not built (make -C tools/tcprt)"; exit 1; }

spool_has() {	# host n: at least n messages of host in the spool
	[ "$(spool_count "$1")" -ge "$2" ]
}

# The statements of an SQL file of schema.sql's form (each ends with ';' at
# the end of a line; '--' comments), one by one.
sql_file() {	# file
	python3 - "$1" > $F/statements <<-'PY' || return 1
		import sys
		text = "".join(l for l in open(sys.argv[1]) if not l.lstrip().startswith("--"))
		for s in text.split(";\n"):
		    if s.strip():
		        print(" ".join(s.split()))
	PY
	while IFS= read -r stmt; do
		sql "$stmt" > /dev/null || return 1
	done < $F/statements
}

# A table's columns (records by default), "name type" a line: in the
# store, and in the schema this tcprt creates.
store_columns() {	# [table]
	sql "SELECT name, type FROM system.columns WHERE database = 'tcprt' AND table = '${1:-records}' FORMAT TabSeparated"
}

schema_columns() {	# [table]
	"$TCPRT" fleet schema | awk -v t="tcprt.${1:-records}" '$0 == "CREATE TABLE IF NOT EXISTS " t " (" { on = 1; next }
		on && /^\) ENGINE/ { exit } on { sub(/,$/, "", $2); print $1 "\t" $2 }'
}


# ---- cases ---------------------------------------------------------------------------

# The faults of the fleet's daemons and links - the central, ClickHouse,
# the loader or a host's rsyslogd killed, a link cut, the spool full or at
# its bound, an impostor, a power loss, a memory queue's loss - are make
# check-full's (README: run it on changes to tools/tcprt/fleet): make
# check sets TCP_RT_CHECK_SHORT to stay within CI's hour and tells them as
# skips (about 10 minutes of the main VM on this project's slower machine,
# 2026-12-02).  Run by hand, fleet.sh runs every case.
full_only() {
	[ -z "${TCP_RT_CHECK_SHORT:-}" ] && return 0
	diag "left out of make check (TCP_RT_CHECK_SHORT): make check-full runs it"
	return 1
}

case_errors() {
	# ingest stops at a missing schema (systemd restarts it): not now
	stop_ingest
	expect_fail "store unreachable" inc "$TCPRT" fleet gaps --since 0 --url http://127.0.0.1:1/
	inc "$TCPRT" fleet gaps --since 0 --url http://127.0.0.1:1/ 2>&1 | grep -q "ClickHouse at http://127.0.0.1:1/ is unreachable" ||
		fail "unreachable: no clear message"
	sql "DROP DATABASE IF EXISTS tcprt" > /dev/null
	inc "$TCPRT" fleet gaps --since 0 --url $CH > /dev/null 2> $F/err && fail "no schema: exit 0"
	grep -q "the tcprt schema is missing in ClickHouse at $CH: run 'tcprt fleet init" $F/err ||
		fail "no schema: $(cat $F/err)"
	expect_fail "ingest without a schema" inc "$TCPRT" ingest --spool $F/spool --frame-master $MASTER --url $CH --once
	inc "$TCPRT" fleet init --url $CH > /dev/null || fail "fleet init"
	# the cases' records have fixed times, days ago: kept whatever the date
	inc "$TCPRT" fleet init --url $CH --keep forever > /dev/null || fail "fleet init, a second time"
	inc "$TCPRT" fleet init --url $CH --cluster c1 > /dev/null 2> $F/err && fail "init --cluster on one server's store: exit 0"
	grep -q "the store at $CH is one server's (schema 6): --cluster makes a new store on a cluster, it does not move one" $F/err ||
		fail "init --cluster on one server's store: $(cat $F/err)"
	sql "INSERT INTO tcprt.meta (key, value) VALUES ('schema', '99')"
	inc "$TCPRT" fleet gaps --since 0 --url $CH > /dev/null 2> $F/err && fail "schema 99: exit 0"
	grep -q "schema in ClickHouse at $CH is version 99; this tcprt .* knows version 6: a newer tcprt upgraded it, use that one" $F/err ||
		fail "schema 99: $(cat $F/err)"
	# fleet init leaves a store of a newer schema as it is
	inc "$TCPRT" fleet init --url $CH > /dev/null 2> $F/err && fail "fleet init on schema 99: exit 0"
	grep -q "is version 99; .*; fleet init leaves it as it is" $F/err ||
		fail "fleet init on schema 99: $(cat $F/err)"
	expect_eq "$(sql "SELECT value FROM tcprt.meta FINAL WHERE key = 'schema'")" 99 \
		"the version after fleet init on schema 99"
	sql "INSERT INTO tcprt.meta (key, value) VALUES ('schema', '6')"
	inc "$TCPRT" fleet gaps --since 0 --url $CH > /dev/null || fail "schema 6 again"
	expect_fail "ship: bad host id" "$TCPRT" ship --host-id 'a b'
	expect_fail "ship: bad rate" "$TCPRT" ship --rate 12x
	expect_fail "ingest: no spool" "$TCPRT" ingest
	start_ingest
	inc "$TCPRT" ingest --spool $F/spool --frame-master $MASTER --url $CH --once > /dev/null 2> $F/err &&
		fail "a second ingest on the same spool ran"
	grep -q "another tcprt ingest is loading $F/spool" $F/err ||
		fail "second ingest: $(cat $F/err)"
}

# Real traffic: host b's records of a workload recorded from the module's
# logs and shipped from the copy; host a's shipped live from the module.
case_real_traffic() {
	local srv shipa total
	# FLEET_NO_MODULE=1: the rest of this file on a host without the
	# module (developing the user-space path)
	[ -z "${FLEET_NO_MODULE:-}" ] || return 4
	mod_load lports=7601,7602
	# records not numbered: ship refuses, one line, exit 2 (a ship
	# killed would lose what it had read uncounted), unless told
	local rc=0
	"$TCPRT" ship --unsigned --socket $F/a/ship.sock 2> $F/err || rc=$?
	expect_eq "$rc" 2 "ship of unnumbered records: its exit status"
	grep -q "^tcprt: ship: tcp_rt's records are not numbered (its log_ext has no seq)" $F/err ||
		fail "refusal: $(cat $F/err)"
	echo seq > "$PARAMS/log_ext"
	mkdir -p $F/recb
	srv=$(start_server fleetb -- --port 7602 --req-bytes 300 --resp-bytes 2000 --conns 4)
	ip netns exec fleetb "$PEER" client --port 7602 --req-bytes 300 \
		--resp-bytes 2000 --requests 50 --conns 4 > /dev/null || fail "client b"
	wait_untracked
	for f in "$DBG"/rt-network-log*; do
		cat "$f" > $F/recb/"$(basename "$f")"
	done
	diag "host b: $(lines_in $F/recb) lines recorded (server on $srv)"

	# not under ip netns exec: it mounts a sysfs of its own on /sys,
	# which hides debugfs; host a's rsyslog socket is a path, reachable
	# from any network namespace
	"$TCPRT" ship --key-file "$(key_for live-a)" --socket $F/a/ship.sock \
		--interval 1 --send-wait 30 2> $F/shipa.err &
	shipa=$!
	start_server fleeta -- --port 7601 --req-bytes 100 --resp-bytes 5000 --conns 3 > /dev/null
	ip netns exec fleeta "$PEER" client --port 7601 --req-bytes 100 \
		--resp-bytes 5000 --requests 100 --conns 3 > /dev/null || fail "client a"
	wait_untracked
	WAIT_S=$SETTLE_S wait_until "host a's records in the store" store_has live-a 303 ||
		fail "host a: $(account live-a)"
	kill -TERM $shipa
	wait $shipa || fail "ship a exited with $?: $(cat $F/shipa.err)"
	ship b rec-b --dir $F/recb --once 2> $F/shipb.err || fail "ship b: $(cat $F/shipb.err)"
	wait_settled live-a
	wait_settled rec-b

	total=$(($(status records_R) + $(status records_E)))
	expect_eq "$total" "$((303 + $(lines_in $F/recb)))" "records written by the module: a's and b's"
	expect_account live-a "final 303 303 0 0 0 0 0 0"
	expect_once live-a 303
	expect_eq "$(sql "SELECT type, role, port, count(), min(recv_bytes), max(recv_bytes), min(sent_bytes), max(sent_bytes) FROM tcprt.records FINAL WHERE host = 'live-a' GROUP BY type, role, port ORDER BY type FORMAT TabSeparated" | tr '\t\n' ' ')" \
		"E server 7601 3 10000 10000 500000 500000 R server 7601 300 100 100 5000 5000 " \
		"host a's records: the workload's (3 x 100 R of 100/5000 bytes; 3 E of 100 tasks each)"
	expect_account rec-b "final 204 204 0 0 0 0 0 0"
	expect_once rec-b 204
	expect_lines rec-b $F/recb
	expect_eq "$(sql "SELECT countIf(module_known = 1 AND overwritten = overwritten_start AND sampled_out = sampled_out_start) FROM tcprt.controls FINAL WHERE host = 'live-a' AND final = 1")" \
		1 "host a's final control message: the module's counters, no loss"
}

# The agent in place of ship on host a (issue 67): one reading of the
# module's logs feeds [ship], [metrics] (a text file and OTLP) and
# [windows] under wrk's load on nginx for 60 s; the store, the text file,
# VictoriaMetrics, the 10-minute window and the agent's status each have
# every record the module wrote (its status file), which is every request
# in nginx's access log, and the epoch's account is final with none
# missing.  Its ship sends through its send queue (the agent's default),
# the reader never held by rsyslog's socket: drained at the end.
agent_says() {	# question expr expected: the agent's windows
	[ "$(live_ask_at $F/agent.sock "$1" "$2")" = "$3" ]
}

# Why the agent cannot export OTLP into VictoriaMetrics here (tcprt built
# without OTLP, or scripts/otel-deps not run): one line, nothing when it can.
otlp_why() {
	printf '[metrics]\notlp = http://127.0.0.1:1/v1/metrics\n' > $F/otlp-probe.conf
	"$TCPRT" agent --check --config $F/otlp-probe.conf 2>&1 > /dev/null | head -1
	[ -x "$VMETRICS" ] || echo "no VictoriaMetrics at $VMETRICS (scripts/otel-deps)"
}

# The agent's configuration, $F/agent.conf: [metrics] with its text file
# (and OTLP to AGENT_OTLP when a case set it), [ship] as host HOST through
# its send queue, and [windows] unless WINDOWS is "no".
AGENT_OTLP=
agent_conf() {	# host [windows]
	{
		printf '[agent]\ninterval = 1\nstatus = %s\n' $F/agent.status
		printf '[metrics]\ntextfile = %s\n' $F/agent.prom
		[ -z "$AGENT_OTLP" ] || printf 'otlp = %s\n' "$AGENT_OTLP"
		[ "${2:-}" = no ] || printf '[windows]\nsocket = %s\nwindows = 10s,1m,10m\n' $F/agent.sock
		printf '[ship]\nkey-file = %s\nsocket = %s\n' "$(key_for $1)" $F/a/ship.sock
		printf 'interval = 1\nsend-wait = 30\nstate = %s\n' $F/$1.state
	} > $F/agent.conf
	chmod 644 $F/agent.conf
}

agent_load() {	# requests on each of 4 connections, to port 7605's server in fleeta
	start_server fleeta -- --port 7605 --req-bytes 200 --resp-bytes 3000 --conns 4 > /dev/null
	ip netns exec fleeta "$PEER" client --port 7605 --req-bytes 200 \
		--resp-bytes 3000 --requests "$1" --conns 4 > /dev/null || fail "client"
	wait_untracked
}

# nginx in fleeta on port 7605, one worker, connections kept alive for
# the whole load; its access log has a line a request, with its connection.
start_nginx() {
	mkdir -p $F/nginx/www $F/nginx/logs
	head -c 3000 /dev/zero | tr '\0' x > $F/nginx/www/index.html
	cat > $F/nginx/nginx.conf <<-EOF
		user root;
		worker_processes 1;
		daemon off;
		pid $F/nginx/nginx.pid;
		error_log $F/nginx/logs/error.log;
		events { worker_connections 64; }
		http {
		    log_format conn '\$connection \$status';
		    access_log $F/nginx/logs/access.log conn;
		    keepalive_requests 100000000;
		    keepalive_timeout 300s;
		    server {
		        listen 127.0.0.1:7605;
		        root $F/nginx/www;
		    }
		}
	EOF
	ip netns exec fleeta nginx -p $F/nginx -c $F/nginx/nginx.conf > $F/nginx/logs/stdout 2>&1 &
	wait_until "nginx" ip netns exec fleeta curl -sf -o /dev/null http://127.0.0.1:7605/ ||
		fail "nginx: $(cat $F/nginx/logs/error.log $F/nginx/logs/stdout)"
}

# wrk on 4 connections for 60 s, each waiting 4 ms between a response and
# its next request (wrk's delay()): at most 1,000 requests a second, a
# load the VM's fleet path carries on a slow machine too; the count is
# whatever the machine made, the access log its truth.
wrk_load() {
	echo 'function delay() return 4 end' > $F/pace.lua
	ip netns exec fleeta wrk -t 1 -c 4 -d 60s -s $F/pace.lua http://127.0.0.1:7605/ > $F/wrk.out 2>&1 ||
		fail "wrk: $(cat $F/wrk.out)"
	sed 's/^/# wrk: /' $F/wrk.out
	kill -TERM "$(cat $F/nginx/nginx.pid)"
	wait_until "nginx gone" eval '! pgrep -x nginx > /dev/null' || fail "nginx did not stop"
	wait_untracked
}

agent_diag() {	# what the agent said, and its status
	sed 's/^/# err: /' $F/agent.err
	sed 's/^/# /' $F/agent.status
}

agent_read() {	# the records the agent has read
	kv $F/agent.status records_read
}

# Every record the module wrote so far read by the agent: R and E are all
# this port's traffic makes.
agent_caught_up() {
	WAIT_S=$SETTLE_S wait_count "the agent's reading" \
		$(($(status records_R) + $(status records_E))) agent_read || fail "agent: $(cat $F/agent.err)"
}

# Each sink of the agent has R records: the store (ship), the text file,
# VictoriaMetrics (OTLP, when configured) and the 10 min window (when WINDOWS
# is not "no").
expect_agent_sinks() {	# host r n [windows]
	WAIT_S=$SETTLE_S wait_count "the agent's records in the store" $3 store_count $1 ||
		fail "store: $(account $1)"
	wait_until "the text file's R" grep -q "^tcprt_tasks_total{port=\"7605\",role=\"server\",type=\"R\"} $2\$" \
		$F/agent.prom || fail "text file: $(grep tcprt_tasks_total $F/agent.prom; agent_diag)"
	if [ -n "$AGENT_OTLP" ]; then
		WAIT_S=$SETTLE_S wait_until "OTLP's R" promql_is 'sum(tcp_rt_tasks_total{tcp_rt_task_type="R",server_port="7605"})' $2 ||
			fail "OTLP: $(promql 'sum(tcp_rt_tasks_total{tcp_rt_task_type="R",server_port="7605"})')"
	fi
	[ "${4:-}" = no ] ||
		wait_until "the 10 min window's R" agent_says "port=7605 window=10m" 'a["windows"][0]["R"]' "${4:-$2}" ||
		fail "10 min window: $(live_ask_at $F/agent.sock "port=7605 window=10m" a)"
}

# The agent stopped: its epoch final, each record once, its status says
# KEYS are N.
agent_stop() {	# pid host n keys...
	local pid=$1 host=$2 n=$3 k
	shift 3
	kill -TERM $pid
	wait $pid || fail "agent exited $?: $(cat $F/agent.err)"
	wait_settled $host
	expect_account $host "final $n $n 0 0 0 0 0 0"
	expect_once $host $n
	sed 's/^/# /' $F/agent.status
	for k in records_read metrics_records ship_numbered ship_sent "$@"; do
		expect_eq "$(kv $F/agent.status $k)" $n "the agent's $k"
	done
	for k in ship_cap_dropped ship_refused ship_relay_skipped ship_queued metrics_textfile_failed windows_late; do
		expect_eq "$(kv $F/agent.status $k)" 0 "the agent's $k"
	done
}

case_agent() {
	local host=agent-a pid r w e n why
	[ -z "${FLEET_NO_MODULE:-}" ] || return 4
	mod_load lports=7605 log_ext=seq
	why=$(otlp_why)
	if [ -z "$why" ]; then
		vmetrics_start $F || fail "victoria-metrics"
		AGENT_OTLP=$(vmetrics_url)
	else
		echo "# without OTLP: $why"
	fi
	agent_conf $host
	# not under ip netns exec, as ship (case_real_traffic)
	"$TCPRT" agent --config $F/agent.conf 2> $F/agent.err &
	pid=$!
	wait_until "the agent's windows" agent_says status 'a["ok"]' True ||
		fail "agent: $(cat $F/agent.err)"
	start_nginx
	wrk_load
	r=$(status records_R)
	w=$(status records_W)
	e=$(status records_E)
	# Every request nginx logged ended a task: answered (R) or, the one a
	# connection had in flight when wrk stopped, cut (W).  wrk counts the
	# responses it read whole, and curl's one came first: each is an R,
	# and so may be one a connection had read, not yet counted, at the
	# end (at most one a connection).
	expect_eq "$((r + w)) $e" "$(wc -l < $F/nginx/logs/access.log) $(awk '{ print $1 }' $F/nginx/logs/access.log | sort -u | wc -l)" \
		"the module's R + W and E records: nginx's requests and connections"
	expect_eq "$(awk '$2 != 200' $F/nginx/logs/access.log | wc -l)" 0 "nginx's answers other than 200"
	expect_range "$r" $(($(awk '/ requests in / { print $1 }' $F/wrk.out) + 1)) \
		$(($(awk '/ requests in / { print $1 }' $F/wrk.out) + 5)) "R: wrk's responses and curl's"
	expect_ge "$r" 1000 "requests in 60 s"
	diag "wrk for 60 s: $r R, $w W, $e E"
	n=$((r + w + e))
	expect_agent_sinks $host $r $n
	agent_stop $pid $host $n windows_records
	[ -z "$AGENT_OTLP" ] || expect_eq "$(kv $F/agent.status metrics_otlp_requests_failed)" 0 "OTLP's failed requests"
	vmetrics_stop
}

# Issue 67's faults, on the module's live traffic, in four loads of 1,000
# requests: a client of the windows that never reads from the start; the
# OTLP receiver stopped after the first load and started again 20 s
# later; [windows] removed by SIGHUP after the second, added again after
# the third.  Between the faults, the agent has read every record the
# module wrote, so the window added again has the fourth load's exactly.
case_agent_faults() {
	local host=agent-f pid r e n why away w
	[ -z "${FLEET_NO_MODULE:-}" ] || return 4
	why=$(otlp_why)
	if [ -n "$why" ]; then
		echo "# $why"
		return 4
	fi
	mod_load lports=7605 log_ext=seq
	vmetrics_start $F || fail "victoria-metrics"
	AGENT_OTLP=$(vmetrics_url)
	agent_conf $host
	"$TCPRT" agent --config $F/agent.conf 2> $F/agent.err &
	pid=$!
	wait_until "the agent's windows" agent_says status 'a["ok"]' True ||
		fail "agent: $(cat $F/agent.err)"
	python3 "$TOP/tools/tcprt/tests/never_read.py" $F/agent.sock &
	agent_load 250
	wait_until "the client that never reads closed" \
		eval '[ "$(kv $F/agent.status windows_slow)" -ge 1 ] 2> /dev/null' || fail "windows_slow"
	agent_caught_up
	vmetrics_stop
	away=$SECONDS
	agent_load 250
	wait_until "OTLP's failed requests" \
		eval '[ "$(kv $F/agent.status metrics_otlp_requests_failed)" -ge 1 ] 2> /dev/null' ||
		fail "OTLP failed: $(kv $F/agent.status metrics_otlp_requests_failed)"
	agent_caught_up
	echo "# the receiver away: $(kv $F/agent.status metrics_otlp_requests_failed) requests failed"
	agent_conf $host no
	kill -HUP $pid
	wait_until "the windows' socket gone" eval "[ ! -e $F/agent.sock ]" || fail "[windows] not removed"
	agent_load 250
	agent_caught_up
	agent_conf $host
	kill -HUP $pid
	wait_until "the agent's windows again" agent_says status 'a["ok"]' True ||
		fail "agent: $(cat $F/agent.err)"
	python3 "$TOP/tools/tcprt/tests/never_read.py" $F/agent.sock &
	w=$(status records_R)
	agent_load 250
	agent_caught_up
	w=$(($(status records_R) - w))
	# the fault's length: the receiver away 20 s (a fault, not a wait for an event)
	sleep $((20 - (SECONDS - away) > 0 ? 20 - (SECONDS - away) : 0))
	vmetrics_start $F $VMETRICS_PORT || fail "victoria-metrics again on $VMETRICS_PORT"
	r=$(status records_R)
	e=$(status records_E)
	expect_eq "$r $e $w" "4000 16 1000" "the module's R and E records, R since [windows] came back"
	n=$((r + e))
	expect_agent_sinks $host $r $n $w
	agent_stop $pid $host $n
	expect_eq "$(kv $F/agent.status windows_records)" $((w + 4)) "the windows' records since they came back"
	expect_ge "$(kv $F/agent.status windows_slow)" 1 "the windows' closed clients since they came back"
	expect_eq "$(kv $F/agent.status metrics_otlp_requests_queued)" 0 "OTLP's queued requests"
	echo "# OTLP: $(kv $F/agent.status metrics_otlp_requests_failed) failed, $(kv $F/agent.status metrics_otlp_requests_dropped) dropped (cumulative counts: none lost)"
	vmetrics_stop
}

# The cap, against a token bucket modelled here: 1 byte/s and a burst of
# 60 kB.  The refill during the run is at most its length in seconds, in
# bytes: a few, which can at most let through one record the burst alone
# would drop, depending on when they came.  So the model answers for
# every refill from none to that bound, and the records the store misses
# must be one of those answers (on a fast machine they are all one; a
# slow one took 4 s and let a record through).
case_cap() {
	local burst=60000 t0 refill
	python3 "$GEN" $F/cap 2000 --files 2 --bad 300 > /dev/null
	t0=$(date +%s%N)
	ship a cap-a --dir $F/cap --once --rate 1 --burst $burst 2> $F/ship.err ||
		fail "ship: $(cat $F/ship.err)"
	# at 1 byte a second, the run's whole refill, rounded up
	refill=$((($(date +%s%N) - t0) / 1000000000 + 1))
	wait_settled cap-a
	sql "SELECT arrayStringConcat(groupArray(toString(seq)), ',') FROM (SELECT number AS seq FROM system.numbers LIMIT $(lines_in $F/cap)) WHERE seq NOT IN (SELECT seq FROM tcprt.records WHERE host = 'cap-a')" \
		> $F/missing
	python3 - $F/cap $burst $refill "$(cat $F/missing)" > $F/model <<-'PY' || fail "model: $(cat $F/model)"
		import os, sys
		d, burst, refill, missing = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
		lines = []
		for n in sorted(os.listdir(d), key=lambda n: int(n[len("rt-network-log"):])):
		    lines += open(os.path.join(d, n), "rb").read().split(b"\n")[:-1]
		def model(refill):
		    level, dropped = burst, []
		    for seq, l in enumerate(lines):
		        cost = len(l) + 1
		        # refill bytes given before this record
		        lvl = min(burst, level + refill)
		        if lvl >= cost:
		            level -= cost
		        else:
		            dropped.append(seq)
		    return dropped
		answers = {",".join(map(str, model(r))): model(r) for r in range(refill + 1)}
		if missing not in answers:
		    print("the store misses %s; the model, for a refill of 0 to %d bytes: %s"
		          % (missing[:200], refill, " or ".join(a[:200] for a in answers)))
		    sys.exit(1)
		a = answers[missing]
		bad = sum(1 for i, l in enumerate(lines) if l.startswith(b"junk") and i not in set(a))
		print(len(lines), len(a), bad, len(answers))
	PY
	read -r sent ndrop nbad nanswers < $F/model
	diag "model: $ndrop of $sent dropped; $nbad malformed lines passed; $nanswers answer(s) for a refill of 0 to $refill bytes"
	expect_account cap-a "final $sent $((sent - ndrop)) $ndrop $ndrop 0 0 $nbad 0"
}

# A fault in the middle of a live load: fleet_gen.py appends N records
# over about 8 s to the logs of a folder, which tcprt ship follows; it
# stands still at half of them (--hold) until FAULT, once part of them is
# through, has put its fault in place and called go_on: the other half
# comes after the fault at any speed.  Once the generator is done and
# the last record reached the store, ship is stopped (its final control
# message closes the account) and the store must hold every record once.
# ship waits up to 30 s for room in rsyslog's socket (--send-wait; 1 s by
# default): the load is 10,000 records a second, which a busy machine's
# rsyslog, spilling its queue to disk behind a central that refuses,
# took in too slowly - 2,881 records refused at the host (counted as
# such), in a run with a busy loop beside the VM.  The tests' ships all do.
# With FAULT_AGENT set, the sender is tcprt agent with [ship] alone, its
# send queue the default (issue 67): the same faults, the same account.
fault_run() {	# host-id fault-fn [n]
	local id=$1 fault=$2 n=${3:-80000} gen pid total
	mkdir -p $F/$id
	rm -f $F/$id.go $F/$id.go.held
	python3 "$GEN" $F/$id "$n" --files 2 --rate $((n / 8)) \
		--hold $((n / 2)):$F/$id.go > $F/$id.gen &
	gen=$!
	wait_until "the generator's files" test -e $F/$id/rt-network-log1
	fault_sender "$id"
	pid=$!
	WAIT_S=$SETTLE_S wait_until "the generator at its hold" test -e $F/$id.go.held
	"$fault" "$id"
	go_on "$id"
	wait $gen || fail "generator"
	total=$(awk '{ s += $1 } END { print s }' $F/$id.gen)
	WAIT_S=$SETTLE_S wait_count "the last record of $id in the store" "$total" \
		store_count "$id" || fail "store: $(whereabouts "$id")"
	kill -TERM $pid
	wait $pid || fail "ship: $(cat $F/$id.err)"
	wait_settled "$id"
	expect_account "$id" "final $total $total 0 0 0 0 0 0"
	expect_once "$id" "$total"
	[ -z "${FAULT_AGENT:-}" ] || fault_agent_stats "$id" "$total"
}

# fault_run's sender on the generator's files of host-id, in the
# background: tcprt ship, or with FAULT_AGENT tcprt agent.
fault_sender() {	# host-id
	local id=$1
	if [ -z "${FAULT_AGENT:-}" ]; then
		ip netns exec fleeta "$TCPRT" ship --key-file "$(key_for "$id")" --socket $F/a/ship.sock \
			--dir $F/$id --rate 0 --interval 1 --send-wait 30 2> $F/$id.err &
		return
	fi
	{
		printf '[agent]\ndir = %s\ninterval = 1\nstatus = %s\n' $F/$id $F/$id.status
		printf '[ship]\nkey-file = %s\nsocket = %s\n' "$(key_for "$id")" $F/a/ship.sock
		printf 'rate = 0\ninterval = 1\nsend-wait = 30\n'
	} > $F/$id.conf
	chmod 644 $F/$id.conf
	ip netns exec fleeta "$TCPRT" agent --config $F/$id.conf 2> $F/$id.err &
}

# The agent's status after fault_run: every record read, numbered and
# sent through its queue, none refused; how full the queue grew.
fault_agent_stats() {	# host-id n
	local k
	sed 's/^/# /' $F/$1.status
	for k in records_read ship_numbered ship_sent; do
		expect_eq "$(kv $F/$1.status $k)" "$2" "the agent's $k"
	done
	for k in ship_refused ship_cap_dropped ship_queued; do
		expect_eq "$(kv $F/$1.status $k)" 0 "the agent's $k"
	done
}

go_on() {	# host-id: fault_run's generator goes on
	touch $F/$1.go
}

# Where a host's records are when the store lacks some: its account, the
# central's spools (messages, and records: an item ends with '|'), the
# loader's state against the files' sizes, host a's rsyslog queue, what
# ingest, ship, the spool writer and the central's rsyslog said last.
whereabouts() {	# host-id
	local d
	echo "account $(account "$1"); gaps: $(inc "$TCPRT" fleet gaps --since 0 --url $CH --host "$1" --format csv 2>&1 | tail -n 3);"
	for d in spool small bound; do
		ls $F/$d/*.frames > /dev/null 2>&1 || continue
		echo "$d: $(cat $F/$d/*.frames | grep -c -E "^(S1 [0-9a-f]{32} )?D[12] $1 " || true) messages," \
		     "$(cat $F/$d/*.frames | grep -E "^(S1 [0-9a-f]{32} )?D[12] $1 " | tr -cd '|' | wc -c) records;" \
		     "files $(stat -c '%n %s' $F/$d/*.frames | sed "s|$F/||" | tr '\n' ' ')"
	done
	echo "loader states: $(cat $F/spool/.tcprt-ingest.state $F/small.state 2> /dev/null | tr '\n' ' ')"
	echo "host a's queue $(tail -n 50 $F/a/stats.log 2> /dev/null | grep 'tcprt_ship_relp queue' |
			       tail -1 | grep -o ' size=[0-9]*');"
	echo "the central's spool action: $(tail -n 50 $F/central/stats.log 2> /dev/null |
					     grep 'tcprt_central_spool' | tail -1)"
	echo "host a's action: $(tail -n 50 $F/a/stats.log 2> /dev/null | grep 'tcprt_ship_relp: origin=core.action' |
				tail -1 | grep -o 'processed.*');"
	echo "host a's queue, discarded: $(tail -n 50 $F/a/stats.log 2> /dev/null | grep 'tcprt_ship_relp queue' |
					  tail -1 | grep -o 'discarded\.[a-z]*=[0-9]*' | tr '\n' ' ');"
	echo "the store's numbers missing: $(sql "SELECT DISTINCT seq FROM tcprt.records WHERE host = '$1' ORDER BY seq" |
		python3 -c 'import sys
s = [int(l) for l in sys.stdin if l.strip()]
gaps = [(a + 1, b - 1) for a, b in zip(s, s[1:]) if b > a + 1]
print(len(s), "numbers, from", s[0] if s else "-", "to", s[-1] if s else "-", "missing", gaps[:5])');"
	echo "ingest: $(tail -n 3 $F/ingest.log 2> /dev/null);"
	echo "ship: $(tail -n 3 $F/$1.err 2> /dev/null)"
	echo "spool writer: $(tail -n 5 $F/central/spool.log 2> /dev/null)"
	echo "the central's rsyslog: $(tail -n 5 $F/central/stdout 2> /dev/null) $(tail -n 8 $F/central/rsyslogd.log 2> /dev/null)"
	echo "host a's rsyslog: $(tail -n 8 $F/a/rsyslogd.log 2> /dev/null)"
}

spool_count() {	# host: its data messages in the spool (signed or not)
	# none is a count (grep -c's status 1 would end a case: set -e)
	cat $F/spool/*.frames 2> /dev/null | grep -c -E "^(S1 [0-9a-f]{32} )?D[12] $1 " || true
}

kill_central() {	# host
	WAIT_S=$SETTLE_S wait_until "part of $1 in the spool" spool_has "$1" 100 || fail "spool"
	stop_central KILL
	diag "central killed with $(spool_count "$1") messages of $1 in the spool"
	go_on "$1"
	start_central
}

# The sender's faults run with tcprt agent, which supersedes ship on a
# host: its ship through the send queue (the default); ship alone keeps
# waiting for room, and the spool's case runs with both.
case_central_killed() {
	full_only || return 4
	FAULT_AGENT=1 fault_run kill-a kill_central
	diag "records loaded more than once (counted once): $(sql "SELECT count() - uniqExact(seq) FROM tcprt.records WHERE host = 'kill-a'")"
}

restart_clickhouse() {	# host
	WAIT_S=$SETTLE_S wait_until "part of $1 loaded" store_has "$1" 1000 || fail "store"
	stop_clickhouse KILL
	! ch_up || fail "ClickHouse still answers"
	go_on "$1"
	# down until ingest has met it down, with rows to load
	WAIT_S=$SETTLE_S wait_until "ingest to find the store down" \
		grep -q "is unreachable.*holding" $F/ingest.log || fail "ingest: $(cat $F/ingest.log)"
	diag "ClickHouse killed: $(spool_count "$1") messages in the spool; $(grep -o 'holding.*' $F/ingest.log)"
	start_clickhouse
}

case_clickhouse_restarted() {
	full_only || return 4
	fault_run chr-a restart_clickhouse
	WAIT_S=$SETTLE_S wait_until "ingest to say the store is back" \
		grep -q "ClickHouse takes rows again" $F/ingest.log || fail "ingest: $(cat $F/ingest.log)"
}

cut_link() {	# host
	WAIT_S=$SETTLE_S wait_until "part of $1 in the spool" spool_has "$1" 50 || fail "spool"
	ip -n fleeta link set fa0 down
	go_on "$1"
	# the fault itself lasts 10 s (the issue's outage), not an event
	sleep 10
	ip -n fleeta link set fa0 up
}

case_link_cut() {
	full_only || return 4
	FAULT_AGENT=1 fault_run cut-a cut_link
}

# The spool full again with tcprt agent in place of ship.
case_agent_spool_full() {
	full_only || return 4
	FAULT_AGENT=1 spool_full_run afull-a
}

# The central's spool on a file system of 1 MB that fills mid-load (the
# loader keeps every file): the writer refuses what it cannot write whole,
# so the central acknowledges nothing more and the hosts keep their frames;
# once the file system grows (space freed), everything arrives: every
# record once, none acknowledged and lost, no torn line.
fill_spool() {	# host
	local st=$F/small/.tcprt-spool.status
	go_on "$1"	# the small file system is the fault, there from the start
	WAIT_S=$SETTLE_S wait_until "the spool full, its writer refusing" \
		grep -q "^refusing 1$" $st || fail "never refused: $(cat $st)"
	diag "spool full: $(tr '\n' ' ' < $st)"
	WAIT_S=$SETTLE_S wait_until "host a's rsyslog holding frames" \
		eval '! sender_queue_empty a' || fail "host a's queue stayed empty"
	diag "host a's queue: $(tail -n 50 $F/a/stats.log | grep 'tcprt_ship_relp queue' | tail -1 | grep -o 'size=[0-9]*')"
	mount -o remount,size=64m $F/small
}

# Every line of the files is a whole message, its signature its host's
# (Python's hmac): no line torn.
whole_lines() {	# files...
	python3 - $MASTER "$@" <<-'PY'
		import hashlib, hmac, sys
		master = bytes.fromhex(open(sys.argv[1]).read().strip())
		bad = n = 0
		for path in sys.argv[2:]:
		    for line in open(path, "rb").read().split(b"\n")[:-1]:
		        n += 1
		        f = line.split(b" ", 3)
		        if len(f) < 4 or f[0] != b"S1" or f[2] not in (b"D1", b"C1"):
		            bad += 1
		            continue
		        host = f[3].split(b" ", 1)[0]
		        key = hmac.new(master, b"tcprt frame key v1\0" + host, hashlib.sha256).digest()
		        body = line[len(b"S1 ") + 33:]
		        if hmac.new(key, body, hashlib.sha256).hexdigest()[:32].encode() != f[1]:
		            bad += 1
		print("%d %d" % (n, bad))
	PY
}

# Host a's rsyslog waits for room as long as it takes (queue.timeoutEnqueue
# 10 min, as the power-lost case's): its queue's disk part, synced, was
# written more slowly than the central's refusal filled it on a busy
# machine, and after the shipped 2 s it discarded 2 messages (impstats'
# discarded.full; gaps: TRANSPORT, counted) - the host's limit
# (docs/fleet.md), not the central's, which this case is about.
SPOOL_FULL_SENDER='s/queue.size="2000"/& queue.timeoutEnqueue="600000"/'

case_spool_full() {
	full_only || return 4
	spool_full_run full-a
}

spool_full_run() {	# host-id
	local id=$1 rc=0 lines
	stop_ingest
	stop_central
	stop_sender a
	SENDER_SED=$SPOOL_FULL_SENDER start_sender a
	grep -q 'queue.timeoutEnqueue="600000"' $F/a/snippet.conf || fail "host a's queue: $(cat $F/a/snippet.conf)"
	mkdir -p $F/small
	mount -t tmpfs -o size=1m,mode=0750 tmpfs $F/small
	SPOOL_DIR=$F/small SPOOL_OPTS="--min-free 0" start_central
	rm -f $F/small.state	# a spool of its own, new each run
	INGEST_SPOOL=$F/small start_ingest --state $F/small.state
	# the central and the loader are put back whatever happens
	(
		fault_run "$id" fill_spool
		grep -q "^refusing 0$" $F/small/.tcprt-spool.status || fail "$(cat $F/small/.tcprt-spool.status)"
		expect_ge "$(kv $F/small/.tcprt-spool.status refusals)" 1 "the writer's refusals"
		grep -q -E "refusing messages, which their senders keep: (write: No space left on device|[0-9]+ bytes free)" \
			$F/central/spool.log || fail "the writer's log: $(cat $F/central/spool.log)"
		lines=$(whole_lines $F/small/*.frames)
		diag "spool lines, not whole messages of their host: $lines"
		expect_eq "${lines#* }" 0 "lines of the spool that are not whole messages"
	) || rc=$?
	stop_ingest
	stop_central
	# kept with the rest of the spool (a later case loads it all again)
	for f in $F/small/*.frames; do
		cp "$f" "$F/spool/$id-$(basename "$f")"
	done
	umount -l $F/small
	start_central
	start_ingest
	stop_sender a
	start_sender a
	return $rc
}

kill_ingest() {	# host
	WAIT_S=$SETTLE_S wait_until "part of $1 loaded" store_has "$1" 5000 || fail "store"
	stop_ingest KILL
	go_on "$1"
	start_ingest --batch 5000
}

# The loader SIGKILLed mid-batch, then its state lost: the spool loaded
# again from its start, every record twice, every account the same.  The
# central writes a spool of its own for the case, so that the second load
# is of this case's frames, not every case's so far (94 to 156 s in the
# emulated guest; case_store_power_lost's note on the subshell and trap).
case_ingest_killed() {
	local before
	full_only || return 4
	trap '_kill_jobs; shared_spool_back' EXIT
	INGEST_SPOOL=$F/ingk-spool
	stop_ingest
	stop_central
	rm -rf $INGEST_SPOOL
	mkdir -p $INGEST_SPOOL
	SPOOL_DIR=$INGEST_SPOOL start_central
	start_ingest --batch 5000
	fault_run ingk-a kill_ingest
	diag "records loaded more than once (counted once): $(sql "SELECT count() - uniqExact(seq) FROM tcprt.records WHERE host = 'ingk-a'")"
	before=$(inc "$TCPRT" fleet gaps --since 0 --url $CH --format csv 2> /dev/null)
	stop_ingest
	rm $INGEST_SPOOL/.tcprt-ingest.state
	start_ingest
	WAIT_S=$SETTLE_S wait_until "the spool loaded again" ingest_idle ||
		fail "the spool not loaded again: $(tail -3 $F/ingest.log)"
	stop_ingest
	# ingest's own count of the rows it loaded this time: all of them again
	expect_ge "$(grep -o '[0-9]* record rows' $F/ingest.log | awk '{ print $1 }')" \
		"$(sql "SELECT uniqExact(epoch, seq) FROM tcprt.records WHERE host = 'ingk-a'")" \
		"rows loaded again"
	start_ingest
	expect_eq "$(inc "$TCPRT" fleet gaps --since 0 --url $CH --format csv 2> /dev/null)" "$before" \
		"every account after loading the spool twice"
}

# A sender whose first TLS peer is an impostor (issue 65's F4): a
# certificate of the fleet's CA, of another name, answering at the
# central's address while a load is held half-way.  omrelp (rsyslog
# 8.2302) disables its action at that authentication error, for good;
# tcprt-relp-watchdog.conf's rule hands the line to the watchdog, which
# restarts host a's rsyslogd (TERM, KILL after 20 s if it hangs: the
# restart <h>/restart does what systemd's does).  The real central back,
# the rest of the load goes on.  The sender is tcprt agent ([ship]).
# Every record stored once or told by cause: the records sent while
# rsyslogd restarted are refused at its socket (REFUSED); what it had
# taken off its socket, or its socket held, and not queued when it
# stopped is lost (TRANSPORT: 298 records in one run, none in two
# others), and a restart that had to kill loses the queue's memory part
# too; the account's received is held to the store.
case_impostor() {
	local id=imp-a n=20000 gen pid total acct qlen bound
	full_only || return 4
	trap '_kill_jobs; impostor_away' EXIT
	TCPRT=$TCPRT sh "$FLEET/make-certs.sh" host $F/tls/ca tcprt-impostor $F/tls/impostor \
		> /dev/null || fail "make-certs.sh"
	stop_sender a
	WATCHDOG=1 start_sender a
	mkdir -p $F/$id
	rm -f $F/$id.go $F/$id.go.held
	python3 "$GEN" $F/$id $n --files 2 --rate $((n / 8)) \
		--hold $((n / 2)):$F/$id.go > $F/$id.gen &
	gen=$!
	wait_until "the generator's files" test -e $F/$id/rt-network-log1
	FAULT_AGENT=1 fault_sender "$id"
	pid=$!
	WAIT_S=$SETTLE_S wait_until "the generator at its hold" test -e $F/$id.go.held
	stop_central
	CEN=impostor SPOOL_DIR=$F/impostor-spool start_central
	WAIT_S=$SETTLE_S wait_until "the watchdog restarting host a's rsyslogd" \
		grep -qs "restarted" $F/a/restarts || fail "no restart: $(tail -3 $F/a/rsyslogd.log)"
	grep "DISABLING action" $F/a/watchdog.last.log > /dev/null ||
		fail "the watchdog's log: $(cat $F/a/watchdog.last.log)"
	# "restarted" is written before the new rsyslogd's exec: the rest of
	# the run waits for its socket (the .ci/run of 2a83a9e went on while the
	# new one took 49 s to start, the agent's second half refused and its
	# last control message with it)
	WAIT_S=$SETTLE_S wait_until "host a's rsyslogd back after its restart" sender_back a ||
		fail "host a's rsyslogd after the restart: $(tail -3 $F/a/stdout)"
	CEN=impostor stop_central
	start_central
	go_on "$id"
	wait $gen || fail "generator"
	total=$(awk '{ s += $1 } END { print s }' $F/$id.gen)
	# every record numbered and out of the agent's queue, host a's queue
	# empty: then its last control message closes the account
	WAIT_S=$SETTLE_S wait_until "the agent through its records" \
		eval "[ \"\$(kv $F/$id.status ship_numbered)\" = $total ] &&
		      [ \"\$(kv $F/$id.status ship_queued)\" = 0 ]" ||
		fail "the agent: $(tr '\n' ' ' < $F/$id.status)"
	WAIT_S=$SETTLE_S wait_until "host a's queue empty" sender_queue_empty a ||
		fail "host a's queue: $(whereabouts $id)"
	kill -TERM $pid
	wait $pid || fail "the agent: $(cat $F/$id.err)"
	# its last control message through host a's queue, then loaded:
	# nothing of the host is in flight
	WAIT_S=$SETTLE_S wait_until "host a's queue empty" sender_queue_empty a ||
		fail "host a's queue: $(whereabouts $id)"
	WAIT_S=$SETTLE_S wait_until "the spool loaded" ingest_idle || fail "$(tail -3 $F/ingest.log)"
	WAIT_S=$SETTLE_S wait_until "the account of $id final" account_whole "$id" "$total" ||
		fail "account of $id: $(account $id); $(whereabouts $id)"
	acct=$(account $id)
	diag "restarts: $(tr '\n' ' ' < $F/a/restarts); account: $acct"
	# shellcheck disable=SC2086
	set -- $acct
	expect_eq "$(sql "SELECT count(), uniqExact(seq) FROM tcprt.records FINAL WHERE host = '$id'")" \
		"$3	$3" "records of $id in the store, once each: the account's received"
	expect_eq "$5 $8 $9" "0 0 0" "$id's cap, malformed, past"
	expect_eq "$6" "$(kv $F/$id.status ship_refused)" "refused: the agent's ship_refused"
	expect_eq "$4" "$(($6 + $7))" "missing: refused and transport"
	# transport: what rsyslogd had taken off its socket, or the socket
	# held, and not queued when it stopped - at most the socket's queue
	# of datagrams each restart; a restart that had to kill adds the
	# queue's memory part (2000 messages); 40 records a message at most
	qlen=$(cat /proc/sys/net/unix/max_dgram_qlen)
	bound=$(( $(grep -c restarted $F/a/restarts || true) *
		  (qlen + 2000 * $(grep -c killed $F/a/restarts || true)) * 40 ))
	[ "$7" -le "$bound" ] || fail "transport $7: more than the bound, $bound records"
	expect_ge "$(grep -c restarting $F/a/watchdog.last.log)" 1 "the watchdog's restarts"
}

# Host h's rsyslogd back after the watchdog's restart: its socket made
# after the restart's line in <h>/restarts (written as the old one is gone).
sender_back() {	# a|b
	[ -S $F/$1/ship.sock ] && [ $F/$1/ship.sock -nt $F/$1/restarts ]
}

# The account of HOST final, of its N records.
account_whole() {	# host n
	# shellcheck disable=SC2046
	set -- $(account "$1") "$2"
	[ "${1:-}" = final ] && [ "$2" = "${10}" ]
}

# After case_impostor, passed or failed: no impostor, the central up, host
# a's rsyslogd as shipped (no watchdog, which would restart it).
impostor_away() {
	CEN=impostor stop_central
	[ -f $F/central/pid ] && kill -0 "$(cat $F/central/pid)" 2> /dev/null || start_central
	stop_watchdog a
	start_sender a
}

# A control message replayed (issue 65, F8): an ended epoch's last
# control message arriving again, byte for byte as the spool held it (a
# replay through a permitted host's session reaches the spool so).  The
# store has it: ingest does not load it again, and says so in its count;
# the epoch stays ended.  Before, the copy's arrival was the epoch's
# last sign of life, and the epoch was open again for --ended-after.
# A generated load of 2000 records shipped by host a under host ID, every
# --interval 1 s, its records all stored; SHIP_PID: the ship's pid, left
# running.
shipped_and_stored() {	# id
	local n
	mkdir -p $F/$1
	python3 "$GEN" $F/$1 2000 --files 2 > /dev/null
	n=$(lines_in $F/$1)
	# not through ship(): $! is then tcprt's own pid (ip netns exec execs it)
	ip netns exec fleeta "$TCPRT" ship --key-file "$(key_for $1)" --socket $F/a/ship.sock \
		--dir $F/$1 --state $F/$1.state --rate 0 --interval 1 2> $F/$1.err &
	SHIP_PID=$!
	WAIT_S=$SETTLE_S wait_until "$1's records stored" store_has $1 "$n" ||
		fail "store: $(store_count $1) of $n"
	# and a control message of its epoch: ingest may load the records in
	# one batch and the first control in the next (gaps then has no
	# control for the epoch: state none)
	WAIT_S=$SETTLE_S wait_until "$1's control messages stored" controls_stored $1 ||
		fail "no control message of $1 stored"
}

controls_stored() {	# id
	[ "$(sql "SELECT count() FROM tcprt.controls WHERE host = '$1'")" -ge 1 ]
}

case_replay() {
	local id=rp-a pid frame last
	shipped_and_stored $id
	pid=$SHIP_PID
	kill -KILL $pid
	wait $pid 2> /dev/null || true
	WAIT_S=$SETTLE_S wait_until "$id's epoch ended" account_is $id ended ||
		fail "account of $id: $(account $id)"
	frame=$(grep -h -E "^S1 [0-9a-f]{32} C1 $id " $F/spool/*.frames | tail -n 1)
	[ -n "$frame" ] || fail "no control message of $id in the spool"
	last=$(sql "SELECT max(received) FROM tcprt.controls WHERE host = '$id'")
	echo "$frame" > $F/spool/2099030300.frames
	WAIT_S=$SETTLE_S wait_until "the copy read" ingest_idle || fail "$(tail -3 $F/ingest.log)"
	account_is $id ended || fail "after the copy: $(account $id)"
	expect_eq "$(sql "SELECT max(received) FROM tcprt.controls WHERE host = '$id'")" "$last" \
		"the last arrival of $id's control messages"
	stop_ingest
	grep -q "control rows ([1-9][0-9]* of them the store had: not loaded again)" $F/ingest.log ||
		fail "ingest's count: $(tail -1 $F/ingest.log)"
	start_ingest
}

# A loader stalled (issue 65, F8): ingest stopped (SIGSTOP) while a live
# sender's control messages keep arriving in the spool.  gaps judges the
# epoch's silence to how far its central's spool is loaded
# (tcprt.centrals), not to the clock: past --ended-after by the clock, it
# stays open, its unsent records in flight, not SENDER, and gaps says why
# (before, the same case showed it ended, what it had not sent lost).
# The loader back, the epoch is open with nothing to say; the sender
# killed, it ends once its central's spool is loaded past --ended-after.
st_gaps() {	# [options]: st-a's gaps, ended after 3 s
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host st-a --ended-after 3 "$@"
}

st_silent() {	# s: st-a's last control message arrived s seconds ago or more
	controls_stored st-a &&
		[ "$(sql "SELECT toUInt32(now()) - toUInt32(max(received)) FROM tcprt.controls WHERE host = 'st-a'")" -ge "$1" ]
}

st_open_current() {	# st-a open, nothing said of its central
	st_gaps > $F/st.now && grep -q ' open .*by epoch' $F/st.now && ! grep -q 'loaded only to' $F/st.now
}

st_ended() {
	st_gaps | grep -q ' ended .*ended: no control message for'
}

case_loader_stalled() {
	local id=st-a pid ingest
	shipped_and_stored $id
	pid=$SHIP_PID
	expect_ge "$(sql "SELECT count() FROM tcprt.centrals WHERE central LIKE '%:$F/spool/'")" 1 \
		"the central's rows in tcprt.centrals"
	ingest=$(pgrep -f "$TCPRT ingest --spool $F/spool ")
	# the loader going on, whatever this case's end
	trap "kill -CONT $ingest 2> /dev/null; _kill_jobs" EXIT
	kill -STOP "$ingest"
	# the control messages go on arriving in the spool, unloaded
	WAIT_S=$SETTLE_S wait_until "$id silent for 5 s by the store's clock" st_silent 5 ||
		fail "the store's clock"
	st_gaps --format csv > $F/st.csv
	st_gaps > $F/st.txt
	st_gaps --format json > $F/st.json
	kill -CONT "$ingest"
	# state, sender_lost
	expect_eq "$(awk -F, 'NR == 2 { print $3, $17 }' $F/st.csv)" "open 0" \
		"$id with its loader stopped: open, nothing SENDER"
	grep -q "open: its central's spool is loaded only to [0-9]* s ago (tcprt.centrals; its loader stalled or behind)" $F/st.txt ||
		fail "text: $(cat $F/st.txt)"
	# by the clock alone (the rule before) it had ended: silent past 3 s
	python3 - "$F/st.json" <<'PY' || fail "json: $(cat $F/st.json)"
import json, sys
a = [json.loads(l) for l in open(sys.argv[1]) if '"accounting":"epoch"' in l][0]
assert a["state"] == "open" and a["silent_s"] <= 3 < a["silent_s"] + a["central_behind_s"], a
PY
	WAIT_S=$SETTLE_S wait_until "the spool loaded again" ingest_idle || fail "$(tail -3 $F/ingest.log)"
	WAIT_S=$SETTLE_S wait_until "$id open, its central current" st_open_current ||
		fail "$(cat $F/st.now)"
	kill -KILL $pid
	wait $pid 2> /dev/null || true
	WAIT_S=$SETTLE_S wait_until "$id ended, its loader current" st_ended || fail "$(st_gaps)"
}

# seq-a's epoch 903 ended: nothing of its log in flight (case_numbered)
seq_a_ended() {
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-a --ended-after 1 --by seq --format csv > $F/seq.logs 2> /dev/null &&
		[ "$(sed -n 2p $F/seq.logs | cut -d, -f11)" = 0 ]
}

# The state of HOST's account is STATE.
account_is() {	# host state
	# shellcheck disable=SC2046
	set -- $(account "$1") "$2"
	[ "${1:-}" = "${10}" ]
}

# The spool at its bound (--max-bytes) mid-load, on a spool of its own
# whose loader retires files a second after their load: the writer
# refuses and lets go of the hour's file, which ingest can then retire
# once loaded, the newest though it is; the writer takes messages again
# in the same hour, in a new file of that name, and so on until the load
# is through - every record once.  (Before, the newest file alone at the
# bound was never retired, and the central refused every host for good,
# past the hour too.)  Then a file named after a later hour appears
# beside the one the writer holds (a clock stepped back, an operator's
# copy): the held one is not retired - its frames would go into a file
# nobody reads - and the other one is.
spool_at_bound() {	# host
	local st=$F/bound/.tcprt-spool.status
	go_on "$1"	# the bound is the fault, there from the start
	WAIT_S=$SETTLE_S wait_until "the spool at its bound, its writer refusing" \
		grep -q "^refusing 1$" $st || fail "never refused: $(cat $st)"
	diag "spool at its bound: $(tr '\n' ' ' < $st)"
}

case_spool_bound() {
	local st=$F/bound/.tcprt-spool.status held
	full_only || return 4
	# the central and ingest back on the shared spool, passed or failed
	# (case_store_power_lost's note)
	trap '_kill_jobs; shared_spool_back' EXIT
	stop_ingest
	stop_central
	rm -rf $F/bound
	mkdir -p $F/bound
	SPOOL_DIR=$F/bound SPOOL_OPTS="--max-bytes 300k --min-free 0" start_central
	INGEST_SPOOL=$F/bound INGEST_KEEP= start_ingest --state $F/bound.state --retire 1
	fault_run bound-a spool_at_bound 20000
	WAIT_S=$SETTLE_S wait_until "the writer taking messages" grep -q "^refusing 0$" $st ||
		fail "$(cat $st)"
	expect_ge "$(kv $st refusals)" 1 "the writer's refusals"
	grep -q "spool: takes messages again" $F/central/spool.log ||
		fail "the writer's log: $(cat $F/central/spool.log)"
	diag "the spool's files now: $(ls $F/bound | tr '\n' ' ')"
	# a later hour's file beside the held one
	held=$(ls $F/bound/*.frames | tail -1)
	touch -d '1 hour ago' $F/bound/2099123123.frames
	WAIT_S=$SETTLE_S wait_until "the later hour's file retired" \
		eval "[ ! -e $F/bound/2099123123.frames ]" || fail "kept: $(ls $F/bound)"
	[ -e "$held" ] || fail "the file the writer holds was retired: $(ls $F/bound)"
	fault_run bound-b go_on 2000
	stop_ingest
	# ingest's count at its exit
	expect_ge "$(grep -o '[0-9]* files retired' $F/ingest.log | tail -1 | cut -d' ' -f1)" 2 \
		"files ingest retired (the full ones and the later hour's)"
}

# The negative control: a central whose queue is in memory loses what it
# acknowledged when killed; the loss shows, exactly, as transport loss.
# Half of a live load goes through the shipped central, which is then
# replaced (stopped cleanly) by tcprt-central-memq.conf holding every
# frame in memory (batches of 60000 or 60 s: none is written here); once
# host a's queue is empty - all acknowledged - that central is killed and
# the shipped one started again; ship's last control message goes through
# it.  The independent truth: the numbers the spool holds.
case_negative_control() {
	local id=memq-a gen pid sent got spooled
	full_only || return 4
	mkdir -p $F/$id
	rm -f $F/$id.go $F/$id.go.held
	python3 "$GEN" $F/$id 40000 --files 2 --rate 5000 --hold 20000:$F/$id.go > $F/$id.gen &
	gen=$!
	wait_until "the generator's files" test -e $F/$id/rt-network-log1
	ip netns exec fleeta "$TCPRT" ship --key-file "$(key_for $id)" --socket $F/a/ship.sock \
		--dir $F/$id --rate 0 --interval 1 --send-wait 30 2> $F/$id.err &
	pid=$!
	WAIT_S=$SETTLE_S wait_until "the generator at its hold" test -e $F/$id.go.held
	WAIT_S=$SETTLE_S wait_until "part of $id in the spool" spool_has $id 20 || fail "spool"
	stop_central
	start_central memq
	go_on $id	# the second half through the in-memory central
	wait $gen || fail "generator"
	WAIT_S=$SETTLE_S wait_until "host a's queue empty" sender_queue_empty a ||
		fail "sender queue"
	stop_central KILL
	start_central
	kill -TERM $pid
	wait $pid || fail "ship: $(cat $F/$id.err)"
	WAIT_S=$SETTLE_S wait_until "the final account of $id" final_seen $id || fail "no final account"
	wait_until "ingest idle" ingest_idle
	sent=$(awk '{ s += $1 } END { print s }' $F/$id.gen)
	got=$(sql "SELECT uniqExact(seq) FROM tcprt.records WHERE host = '$id'")
	spooled=$(cat $F/spool/*.frames | python3 -c '
import sys
seqs = set()
for l in sys.stdin:
    if l.startswith("S1 "):
        l = l.split(" ", 2)[2]
    f = l.split(" ", 6)
    if f[0] == "D1" and f[1] == sys.argv[1]:
        seqs.update(range(int(f[3]), int(f[3]) + int(f[5])))
print(len(seqs))' $id)
	diag "memq: $((sent - got)) of $sent lost"
	expect_eq "$got" "$spooled" "records in the store: those the spool holds"
	[ "$got" -lt "$sent" ] || fail "the negative control lost nothing: the test proves nothing"
	expect_account $id "final $sent $got $((sent - got)) 0 0 $((sent - got)) 0 0"
}

# impstats' last line for the omrelp action's queue: size 0.
sender_queue_empty() {	# a|b
	tail -n 50 $F/$1/stats.log 2> /dev/null | grep 'tcprt_ship_relp queue' | tail -1 | grep -q ' size=0 '
}

# Nothing in the spool past what ingest loaded.
ingest_idle() {
	local f size loaded spool=${INGEST_SPOOL:-$F/spool} state
	state=$spool/.tcprt-ingest.state
	# no state file yet: the loader has loaded nothing
	[ -f $state ] || return 1
	for f in $spool/*.frames; do
		size=$(stat -c %s "$f")
		loaded=$(kv $state "$(basename "$f")")
		[ "$size" = "${loaded:-0}" ] || return 1
	done
}

# Bad input: malformed and vendor lines, an unknown host, control messages
# out of order and clock steps, a spool line that is no message.
case_bad_input() {
	local n
	python3 "$GEN" $F/bad 3000 --files 2 --bad 100 --vendor 7 --step-back 3600 > /dev/null
	n=$(lines_in $F/bad)
	ship b bad-b --dir $F/bad --once --rate 0 2> $F/ship.err || fail "ship"
	grep -q "30 malformed (shipped, marked)" $F/ship.err || fail "ship's count: $(cat $F/ship.err)"
	wait_settled bad-b
	expect_account bad-b "final $n $n 0 0 0 0 30 0"
	expect_lines bad-b $F/bad
	expect_eq "$(sql "SELECT countIf(valid = 0), countIf(source = 'vendor'), countIf(source = 'tcp_rt') FROM tcprt.records FINAL WHERE host = 'bad-b'")" \
		"30	$(grep -c ' $' $F/bad/rt-network-log*  | awk -F: '{ s += $2 } END { print s }')	$((n - 30 - $(grep -c ' $' $F/bad/rt-network-log* | awk -F: '{ s += $2 } END { print s }')))" \
		"malformed lines marked, vendor lines told apart"
	# the clock stepped back an hour mid-run: the records keep their own times
	expect_eq "$(sql "SELECT max(sec) - min(sec) >= 3600 FROM tcprt.records FINAL WHERE host = 'bad-b' AND valid = 1")" 1 \
		"records on both sides of the step"

	# a message of malformed lines alone: told as malformed, its rows at
	# the hour of the spool file it came in (the central's), not at time
	# 0, which every window but --since 0 misses and expire drops
	local t0
	mkdir -p $F/junk
	printf 'junk one\njunk two\njunk three\n' > $F/junk/rt-network-log0
	t0=$(date +%s)
	ship b junk-b --dir $F/junk --once --rate 0 2> $F/ship.err || fail "ship: $(cat $F/ship.err)"
	wait_settled junk-b
	expect_account junk-b "final 3 3 0 0 0 0 3 0"
	expect_range "$(sql "SELECT min(sec) FROM tcprt.records FINAL WHERE host = 'junk-b'")" \
		$((t0 / 3600 * 3600)) "$(date +%s)" "the malformed rows' time: the spool file's hour"
	inc "$TCPRT" fleet gaps --since 1h --url $CH --host junk-b --format csv > $F/junk.csv 2>&1 ||
		fail "gaps: $(cat $F/junk.csv)"
	expect_eq "$(awk -F, 'NR > 1 { print $3, $5, $6, $12 }' $F/junk.csv)" "final 3 3 3" \
		"gaps over the last hour: the message's three malformed lines"

	# control messages out of order, and a sender never seen: written to
	# the spool as the central would have written them, signed
	signed >> $F/spool/2099010100.frames <<-EOF
		D1 never-seen 77 0 0 2 V6 R ${FP}18000 000001 10.1.0.2:1 10.1.0.1:7100 5000 1000 300 0 1 500 100 300 0 1448|V6 R ${FP}18000 000002 10.1.0.2:1 10.1.0.1:7100 5000 1000 300 0 2 500 100 300 0 1448|
		C1 never-seen 77 5 ${FP}18000000000 ${FP}18100000000 3 0 0 0 0 0 0 0 0 1
		C1 never-seen 77 2 ${FP}18000000000 ${FP}19999000000 2 0 0 0 0 0 0 0 0 0
	EOF
	# a record line tcprt cannot read first in its message, then a
	# record, then a malformed line: both rows take the record's time
	signed >> $F/spool/2099010100.frames <<-EOF
		D1 malt-x 9 0 0 3 V6 R garbage|V6 R ${FP}18000 000001 10.1.0.2:1 10.1.0.1:7100 5000 1000 300 0 1 500 100 300 0 1448|!junk|
		C1 malt-x 9 1 ${FP}18000000000 ${FP}18100000000 3 0 0 0 0 0 0 0 0 1
	EOF
	echo "this line is no message of tcprt ship" >> $F/spool/2099010100.frames
	# a message cut short, the next one glued on (a writer stopped
	# mid-line): the torn start is kept as such, the next one is stored
	signed > $F/torn.msgs <<-EOF
		D1 torn-x 55 0 0 1 V6 R ${FP}18000 000001 10.1.0.2:1 10.1.0.1:7100 5000 1000 300 0 1 500 100 300 0 1448|
		D1 torn-x 55 1 0 1 V6 R ${FP}18000 000002 10.1.0.2:1 10.1.0.1:7100 5000 1000 300 0 2 500 100 300 0 1448|
		C1 torn-x 55 1 ${FP}18000000000 ${FP}18100000000 2 0 0 0 0 0 0 0 0 1
	EOF
	python3 -c 'import sys; l = open(sys.argv[1]).read().splitlines(); print(l[0][:len(l[0]) // 2] + l[1]); print(l[2])' \
		$F/torn.msgs >> $F/spool/2099010100.frames
	WAIT_S=$SETTLE_S wait_until "the unknown host's account" final_seen never-seen ||
		fail "never-seen: $(account never-seen)"
	# ctl_seq 5 is the account (3 sent, final), though it came first and
	# its clock is earlier
	expect_account never-seen "final 3 2 1 0 0 1 0 0"
	WAIT_S=$SETTLE_S wait_until "malt-x's account" final_seen malt-x || fail "malt-x: $(account malt-x)"
	expect_eq "$(sql "SELECT groupArray(valid), groupArray(sec) FROM (SELECT valid, sec FROM tcprt.records FINAL WHERE host = 'malt-x' ORDER BY seq)")" \
		"[0,1,0]	[${FP}18000,${FP}18000,${FP}18000]" "malformed rows take their message's record's time"
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host never-seen | grep -q '^    missing: 2$' ||
		fail "missing range: $(inc "$TCPRT" fleet gaps --since 0 --url $CH --host never-seen)"
	inc "$TCPRT" fleet gaps --since 0 --url $CH | grep -q "messages the loader could not read" ||
		fail "bad spool line not reported"
	expect_ge "$(sql "SELECT count() FROM tcprt.bad_messages WHERE message = 'this line is no message of tcprt ship'")" 1 \
		"the bad line kept in bad_messages"
	# two centrals' spools, a file of the same name (hour) in each, a bad
	# line at the same offset: both kept, each told by its central and
	# folder (one replaced the other while file was the name alone)
	local c
	for c in c1 c2; do
		mkdir -p $F/spool-$c
		echo "a bad line of central $c" > $F/spool-$c/2099020200.frames
		inc "$TCPRT" ingest --spool $F/spool-$c --state $F/$c.state --frame-master $MASTER \
			--url $CH --once --keep > /dev/null 2> $F/$c.err || fail "ingest $c: $(cat $F/$c.err)"
	done
	expect_eq "$(sql "SELECT groupArray(message) FROM (SELECT message FROM tcprt.bad_messages FINAL WHERE offset = 0 AND message LIKE 'a bad line of central %' ORDER BY message)")" \
		"['a bad line of central c1','a bad line of central c2']" "two centrals' bad lines of one file name and offset: both kept"
	expect_eq "$(sql "SELECT file FROM tcprt.bad_messages WHERE message = 'a bad line of central c2'")" \
		"$(hostname):$F/spool-c2/2099020200.frames" "the row names the central and its spool folder"
	WAIT_S=$SETTLE_S wait_until "torn-x's account" final_seen torn-x || fail "torn-x: $(account torn-x)"
	expect_account torn-x "final 2 1 1 0 0 1 0 0"
	expect_eq "$(sql "SELECT seq FROM tcprt.records FINAL WHERE host = 'torn-x'")" 1 "the message after the torn one"
	expect_eq "$(sql "SELECT count() FROM tcprt.bad_messages FINAL WHERE reason LIKE 'torn:%' AND message LIKE 'S1 % D1 torn-x 55 0 %'")" 1 \
		"the torn start in bad_messages"
}

# One host's records spread over 16,000 days (a sender whose clock, or
# intent, is wrong), in a spool file of two hours ago: those more than
# --max-age (30 days) before that hour, or more than a day after it, are
# stored as malformed at that hour (or, as a malformed line, at the time
# of a record before it in its message), their lines kept, so that the host's
# rows touch at most 31 daily partitions, the load ends, and the account
# tells them as MALFORMED; the others are stored as they are.  No record
# lies within 1.5 days of a bound, nor after now (gaps' window): the
# model's split does not hang on the second the test runs.
case_time_spread() {
	local hour file want
	hour=$(( $(date +%s) / 3600 * 3600 - 7200 ))
	file=$F/spool/$(date -u -d @$hour +%Y%m%d%H).frames
	python3 - $hour > $F/spread.msgs 2> $F/spread.model <<-'PY' || fail "messages: $(cat $F/spread.model)"
		import sys
		hour, day = int(sys.argv[1]), 86400
		lo, hi = hour - 30 * day, hour + 3600 + day
		times = [hour - 8000 * day + i * 8 * day + day // 2 for i in range(2000)]
		times.append(4102444800)        # 2100-01-01
		times = [t for t in times
		         if abs(t - lo) > 1.5 * day and not hour - day <= t <= hi + 1.5 * day]
		msgs, items = [], []
		for i, t in enumerate(times):
		    items.append("V6 R %d 000001 10.1.0.2:40000 10.1.0.1:7100 5000 1000 300 0 1 500 100 300 0 1448" % t)
		    if len(items) == 10 or i == len(times) - 1:
		        msgs.append("D1 spread-x 71 %d 0 %d %s|" % (i + 1 - len(items), len(items), "|".join(items)))
		        items = []
		msgs.append("C1 spread-x 71 1 %d %d %d 0 0 0 0 0 0 0 0 1" % (hour * 10**6, (hour + 60) * 10**6, len(times)))
		print("\n".join(msgs))
		inside = sum(lo <= t < hi for t in times)
		print(len(times), inside, file=sys.stderr)
	PY
	set -- $(cat $F/spread.model)
	diag "$1 records, $2 of them within the span"
	# as the central's writer makes a spool file: 0640 (case_secrets)
	(umask 027 && signed < $F/spread.msgs > "$file")
	WAIT_S=$SETTLE_S wait_until "spread-x's account" final_seen spread-x ||
		fail "spread-x: $(account spread-x); ingest: $(tail -3 $F/ingest.log)"
	expect_account spread-x "final $1 $1 0 0 0 0 $(($1 - $2)) 0"
	# a malformed row takes the time of the record before it in its
	# message if that one is within the span (retention), else the hour
	expect_eq "$(sql "SELECT countIf(valid = 1), countIf(valid = 0), countIf(valid = 0 AND line LIKE 'V6 R %' AND (sec = $hour OR sec IN (SELECT sec FROM tcprt.records WHERE host = 'spread-x' AND valid = 1))), countIf(valid = 1 AND toUInt64(time) = sec) FROM tcprt.records FINAL WHERE host = 'spread-x'")" \
		"$2	$(($1 - $2))	$(($1 - $2))	$2" "records within the span as they are; the others malformed, their lines kept, at the file's hour or their message's record's time"
	want=$(sql "SELECT uniqExact(toYYYYMMDD(time)), toUInt32(min(time)) >= $((hour - 30 * 86400)), toUInt32(max(time)) <= $hour FROM tcprt.records WHERE host = 'spread-x'")
	set -- $want
	[ "$1" -le 31 ] && [ "$2$3" = 11 ] ||
		fail "the host's rows in $1 daily partitions (at most 31), within the 30 days before the file's hour: $2 $3"
	diag "the host's rows in $1 daily partitions"
}

# gaps over a window (default: the last day, by the central's clock):
# rows written here with their arrival times, as a model says them.  Epoch
# 1 of gw-e sent a control two days ago (next_seq 100, sent_seq 90, 2
# capped) and its final one an hour ago (200, 5 capped, 1 refused); of its
# numbers 20-21 and 150-152 were capped, 160 refused, 50, 95 and 170 lost
# in transport.  The module's log (load 77, CPU 0) of gw-s, read by one
# epoch, alike: an account two days ago (read 0-99, handed over 0-89, 4
# skipped in the relay of which 1 not handed over, 2 capped) and its final
# one (read and handed over 0-199, 10 skipped, 5 capped, 1 refused).  A
# window starts from what the epoch had not handed over at its start: the
# last day's is 90-199; --since 0 is the whole; a window that ended a day
# ago holds 0-99 with 95 not handed over by an epoch silent since (ended:
# SENDER); one of the last 30 minutes holds nothing of them.  The windows
# switched back and forth give the same answers each time.
case_gaps_window() {
	local t1 t0 i
	t1=$(($(date +%s) - 3600))
	t0=$((t1 - 169200))
	sql "INSERT INTO tcprt.controls (host, epoch, ctl_seq, received, start_us, now_us, next_seq, cap_dropped, refused, module_known, overwritten, final, sent_seq, interval_us, sent_known) VALUES ('gw-e', 1, 1, toDateTime($t0), ${t0}000000, ${t0}000000, 100, 2, 0, 1, 3, 0, 90, 10000000, 1), ('gw-e', 1, 2, toDateTime($t1), ${t0}000000, ${t1}000000, 200, 5, 1, 1, 10, 1, 200, 10000000, 1), ('gw-s', 2, 1, toDateTime($t0), ${t0}000000, ${t0}000000, 100, 0, 0, 0, 0, 0, 90, 10000000, 1), ('gw-s', 2, 2, toDateTime($t1), ${t0}000000, ${t1}000000, 200, 0, 0, 0, 0, 1, 200, 10000000, 1)"
	sql "INSERT INTO tcprt.cpu_accounts (host, epoch, ctl_seq, received, load_id, cpu, first, read_next, sent_next, relay_skipped, cap_dropped, refused, final, unsent_skipped) VALUES ('gw-s', 2, 1, toDateTime($t0), 77, 0, 0, 100, 90, 4, 2, 0, 0, 1), ('gw-s', 2, 2, toDateTime($t1), 77, 0, 0, 200, 200, 10, 5, 1, 1, 0)"
	sql "INSERT INTO tcprt.records (host, epoch, seq, valid, line, type, port, sec, metrics) SELECT 'gw-e', 1, number, 1, 'x', 'R', 7100, if(number < 100, $t0 - 600 + number, $t1 - 600 + number), 1 FROM system.numbers WHERE number NOT IN (20, 21, 50, 95, 150, 151, 152, 160, 170) LIMIT 191"
	sql "INSERT INTO tcprt.records (host, epoch, seq, valid, line, type, port, sec, metrics, load_id, rseq, numbered) SELECT 'gw-s', 2, number, 1, 'x', 'R', 7100, if(number < 100, $t0 - 600 + number, $t1 - 600 + number), 1, 77, number, 1 FROM system.numbers WHERE number NOT IN (10, 11, 12, 20, 21, 50, 97, 130, 131, 132, 133, 134, 140, 150, 151, 152, 160, 170) LIMIT 182"
	# state sent received missing cap refused transport sender in_flight ranges from_seq
	gw_epoch() { inc "$TCPRT" fleet gaps --url $CH --host gw-e --by epoch --format csv "$@" |
		awk -F, 'NR > 1 { print $3, $5, $6, $7, $8, $9, $10, $17, $18, $16, $19 }'; }
	# made stored missing relay cap refused sender in_flight transport ranges from
	gw_seq() { inc "$TCPRT" fleet gaps --url $CH --host gw-s --by seq --format csv "$@" |
		awk -F, 'NR > 1 { print $4, $5, $6, $7, $8, $9, $10, $11, $12, $14, $15 }'; }
	for i in 1 2; do
		expect_eq "$(gw_epoch)" "final 110 104 6 3 1 2 0 0 95-95;150-152;160-160;170-170 90" "by epoch, the last day ($i)"
		expect_eq "$(gw_epoch --since 0)" "final 200 191 9 5 1 3 0 0 20-21;50-50;95-95;150-152;160-160;170-170 0" "by epoch, the whole store ($i)"
		expect_eq "$(gw_epoch --since 3d --until 1d)" "ended 100 96 4 2 0 1 1 0 20-21;50-50;95-95 0" "by epoch, a window that ended a day ago ($i)"
		expect_eq "$(gw_epoch --since 30m)" "" "by epoch, the last 30 minutes ($i)"
		expect_eq "$(gw_seq)" "110 98 12 7 3 1 0 0 1 97-97;130-134;140-140;150-152;160-160;170-170 90" "by module seq, the last day ($i)"
		expect_eq "$(gw_seq --since 0)" "200 182 18 10 5 1 0 0 2 10-12;20-21;50-50;97-97;130-134;140-140;150-152;160-160;170-170 0" "by module seq, the whole store ($i)"
		expect_eq "$(gw_seq --since 30m)" "" "by module seq, the last 30 minutes ($i)"
	done
	inc "$TCPRT" fleet gaps --url $CH --host gw-e --by epoch | grep -q "by epoch, .*, from seq 90 (the window's start)$" ||
		fail "text: $(inc "$TCPRT" fleet gaps --url $CH --host gw-e --by epoch)"
	inc "$TCPRT" fleet gaps --url $CH --host gw-e --by epoch --format json | grep -q '"missing_range_count":4,"from_seq":90}$' ||
		fail "json: $(inc "$TCPRT" fleet gaps --url $CH --host gw-e --by epoch --format json)"
}

# fleet summary against tcprt summary of the same records, and top.
case_queries() {
	local since=${FP}19000 until=${FP}19010
	python3 "$GEN" $F/q 20000 --files 2 --start $since > /dev/null
	ship a q-a --dir $F/q --once --rate 0 2> $F/ship.err || fail "ship"
	wait_settled q-a
	"$TCPRT" summary --dir $F/q --window 10 > $F/q.local 2>&1
	inc "$TCPRT" fleet summary --url $CH --host q-a --since $since --until $until > $F/q.fleet
	# the first window of tcprt summary is the fleet's span
	grep -m 5 -E '^7100' $F/q.local | awk '{ $1 = $1; print }' > $F/q.l
	grep -E '^7100' $F/q.fleet | awk '{ $1 = $1; print }' > $F/q.f
	[ -s $F/q.l ] || fail "tcprt summary printed no window: $(cat $F/q.local)"
	diff $F/q.l $F/q.f > /dev/null || fail "fleet summary differs from tcprt summary: $(diff $F/q.l $F/q.f | head)"
	inc "$TCPRT" fleet top --url $CH --host q-a --since $since --until $until -n 3 --format json > $F/top.json
	expect_top3 $F/q $F/top.json $until
}

# The time breakdown (docs/records.md, "Where the time goes"):
# tests/breakdown_gen.py's records - R, W and P with it, one R breaking its
# contract, R without - shipped and loaded.  Every row holds its line's six
# fields, and the mask says which it had and which splits hold, as a model
# of docs/records.md reads the lines; fleet summary prints the same table
# and the same "where the time goes" blocks as tcprt summary of the same
# records, byte for byte, and counts the same record left out.
case_breakdown() {
	local base=${FP}20000 n f
	mkdir -p $F/bd
	python3 "$BDGEN" $F/bd $base
	n=$(lines_in $F/bd)
	ship b bd-b --dir $F/bd --once --rate 0 2> $F/ship.err || fail "ship: $(cat $F/ship.err)"
	wait_settled bd-b
	expect_account bd-b "final $n $n 0 0 0 0 0 0"
	expect_lines bd-b $F/bd
	sql "SELECT line, type, breakdown, rq_wait, app, sq_wait, rwnd_limited, sndbuf_limited, app_limited FROM tcprt.records FINAL WHERE host = 'bd-b' ORDER BY seq FORMAT TabSeparated" \
		> $F/bd.rows
	python3 - $F/bd.rows <<-'PY' || fail "the breakdown's columns differ from the lines"
		import sys
		SIX = ["rq_wait", "app", "sq_wait", "rwnd_limited", "sndbuf_limited", "app_limited"]
		with_bd = rows = 0
		for row in open(sys.argv[1]):
		    line, t, mask, *vals = row.rstrip("\n").split("\t")
		    tok = line.split()
		    f = [int(x) for x in tok[6:] if "=" not in x]
		    ext = dict((k, int(v)) for k, v in (x.split("=") for x in tok[6:] if "=" in x))
		    want = sum(1 << i for i, k in enumerate(SIX) if k in ext)
		    # R W: process = rq_wait + app + sq_wait; transfer R W: the
		    # download, P: the upload, at least the three limited parts
		    if t in ("R", "W") and all(k in ext for k in SIX[:3]) and \
		            sum(ext[k] for k in SIX[:3]) == f[5]:
		        want |= 64
		    transfer = max(f[1] - f[6] - f[5], 0)
		    if t in ("R", "W", "P") and all(k in ext for k in SIX[3:]) and \
		            sum(ext[k] for k in SIX[3:]) <= transfer:
		        want |= 128
		    got = (int(mask), [int(v) for v in vals])
		    exp = (want, [ext.get(k, 0) for k in SIX])
		    assert got == exp, (line, got, exp)
		    rows += 1
		    with_bd += want != 0
		assert with_bd == 63, with_bd
		print("# %d rows, %d with the breakdown, each as its line says" % (rows, with_bd))
	PY
	"$TCPRT" summary --dir $F/bd --window 10 > $F/bd.local 2> $F/bd.local.err
	inc "$TCPRT" fleet summary --url $CH --host bd-b --since $base --until $((base + 10)) \
		> $F/bd.fleet 2> $F/bd.fleet.err || fail "fleet summary: $(cat $F/bd.fleet.err)"
	sed -n '/^# where the time goes/,/^$/p' $F/bd.local > $F/bd.l
	sed -n '/^# where the time goes/,/^$/p' $F/bd.fleet > $F/bd.f
	sed 's/^/# /' $F/bd.f
	expect_eq "$(grep -c '^# where the time goes' $F/bd.l)" 2 "tcprt summary's blocks (R 7700, P 6379)"
	cmp -s $F/bd.l $F/bd.f || fail "fleet summary's blocks differ from tcprt summary's: $(diff $F/bd.l $F/bd.f | head -n 20)"
	grep -E '^(6379|7700|8080) ' $F/bd.local | awk '{ $1 = $1; print }' > $F/bd.lt
	grep -E '^(6379|7700|8080) ' $F/bd.fleet | awk '{ $1 = $1; print }' > $F/bd.ft
	expect_eq "$(wc -l < $F/bd.lt)" 20 "tcprt summary's table: 4 rows of 5 metrics"
	cmp -s $F/bd.lt $F/bd.ft || fail "fleet summary's table differs from tcprt summary's: $(diff $F/bd.lt $F/bd.ft | head)"
	for f in $F/bd.local.err $F/bd.fleet.err; do
		grep -q "^tcprt: 1 record whose rq_wait + app + sq_wait is not its process time: left out of the process split$" $f ||
			fail "$f: the record breaking the contract not counted: $(cat $f)"
	done
	inc "$TCPRT" fleet summary --url $CH --host bd-b --since $base --until $((base + 10)) --format csv > $F/bd.csv
	if grep -q "where the time goes" $F/bd.csv; then fail "a block in csv"; fi
}

# R records of HOST in frames of 10, numbered from 0, on local port 7100
# but for the numbers given, on 666; then the epoch's final control message.
poison_frames() {	# host epoch n "seq seq ..."
	local host=$1 epoch=$2 n=$3 i port items=""
	for ((i = 0; i < n; i++)); do
		port=7100
		[[ " $4 " = *" $i "* ]] && port=666
		items+="V6 R ${FP}22000 $(printf %06d $((i + 1))) 10.1.0.2:40000 10.1.0.1:$port 5000 1000 300 0 1 500 100 300 0 1448|"
		if [ $((i % 10)) = 9 ] || [ $((i + 1)) = "$n" ]; then
			echo "D1 $host $epoch $((i - i % 10)) 0 $((i % 10 + 1)) $items"
			items=""
		fi
	done
	echo "C1 $host $epoch 1 ${FP}22000000000 ${FP}22010000000 $n 0 0 0 0 0 0 0 0 1"
}

# poison_frames, signed by their host
signed_frames() {	# host epoch n "seq ..."
	poison_frames "$@" | signed
}

# A load ClickHouse refuses for some of its rows - here a column whose
# DEFAULT throws for local port 666, ClickHouse's own refusal of those
# rows, as any rule of the data would be - is split until those rows are
# alone: they land in bad_messages with ClickHouse's error and their
# record's host, epoch and number, fleet gaps counts them as STORE, and
# the rest of that load and the loads after it are stored.  A store that
# fails as a whole (read-only) holds the load and loads it when it comes
# back, blaming no row.
case_store_refuses() {
	local st
	stop_ingest
	sql "ALTER TABLE tcprt.records ADD COLUMN poison UInt8 DEFAULT throwIf(port = 666)" > /dev/null
	signed_frames poison-a 88 40 "5 17 33" > $F/spool/2099020100.frames
	signed_frames poison-b 89 12 "" > $F/spool/2099020101.frames
	# loads of 15 rows: the refused rows' load and three after it
	inc "$TCPRT" ingest --spool $F/spool --frame-master $MASTER --url $CH --once --keep --batch 15 \
		> /dev/null 2> $F/err || fail "ingest stopped: $(cat $F/err)"
	sed 's/^/# /' $F/err
	grep -q "ClickHouse refused [12] rows of a load of " $F/err || fail "no refusal said"
	grep -q "; 3 rows refused by ClickHouse (in bad_messages; " $F/err || fail "counters: $(tail -1 $F/err)"
	expect_eq "$(sql "SELECT seq, records, reason LIKE 'refused by ClickHouse, alone, in tcprt.records: %throwIf%', offset > 0 FROM tcprt.bad_messages FINAL WHERE host = 'poison-a' ORDER BY seq FORMAT TabSeparated" | tr '\t\n' ' ')" \
		"5 1 1 1 17 1 1 1 33 1 1 1 " "the refused rows in bad_messages: their numbers, records 1, ClickHouse's error"
	expect_eq "$(sql "SELECT count(), countIf(port = 666) FROM tcprt.records FINAL WHERE host = 'poison-a'")" \
		"37	0" "poison-a's other records stored"
	expect_account poison-a "final 40 37 3 0 0 0 0 0"
	expect_eq "$(store_refused poison-a)" 3 "gaps: 3 records refused by the store (STORE)"
	expect_account poison-b "final 12 12 0 0 0 0 0 0"
	# each refused row is kept once, where its record was in the spool
	expect_eq "$(sql "SELECT uniqExact(offset) FROM tcprt.bad_messages FINAL WHERE host = 'poison-a'")" 3 \
		"three places in the spool"

	# a table gone for a while (as while an operator rebuilds it): the
	# store fails as a whole, the load is held, no row is refused
	signed_frames ro-a 90 20 "" > $F/spool/2099020102.frames
	sql "ALTER TABLE tcprt.records DROP COLUMN poison" > /dev/null
	sql "RENAME TABLE tcprt.controls TO tcprt.controls_away" > /dev/null
	# ip netns exec execs tcprt: $! is the loader itself
	ip netns exec fleetc "$TCPRT" ingest --spool $F/spool --frame-master $MASTER --url $CH \
		--keep --interval 0.2 > /dev/null 2> $F/err &
	st=$!
	wait_until "ingest to say it holds the load" grep -q "holding .* rows and retrying" $F/err ||
		fail "ingest: $(cat $F/err)"
	expect_eq "$(sql "SELECT count() FROM tcprt.bad_messages WHERE host = 'ro-a'")" 0 "no row blamed while the store failed"
	sql "RENAME TABLE tcprt.controls_away TO tcprt.controls" > /dev/null
	wait_until "the held load stored" eval 'account ro-a | grep -q "^final 20 20 0 0 0 0 0 0$"' ||
		fail "ro-a: $(account ro-a); $(cat $F/err)"
	kill -TERM $st
	wait $st || fail "ingest exited with $?: $(cat $F/err)"
	grep -q "ClickHouse takes rows again" $F/err || fail "ingest: $(cat $F/err)"
	start_ingest
}

# The store's password: from a file only its owner reads, from the
# environment or from systemd's credentials; never in the URL, in ps, in
# a message; ingest's own files 0600, the spool's 0640 (the central's
# snippet), and a link in the spool never followed.
case_secrets() {
	local pw=$F/ch/tcprt.pw secret pid f rc
	secret=$(cat $pw)
	rc=0
	inc "$TCPRT" fleet gaps --since 0 --url "http://tcprt:$secret@127.0.0.1:8123/" > /dev/null 2> $F/err || rc=$?
	expect_eq $rc 2 "a password in the URL: a usage error"
	grep -q "the URL holds a password" $F/err || fail "URL: $(cat $F/err)"
	chmod 644 $pw
	rc=0
	inc "$TCPRT" fleet gaps --user tcprt --password-file $pw > /dev/null 2> $F/err2 || rc=$?
	expect_eq $rc 1 "a password file others may read: refused"
	chmod 600 $pw
	grep -q "group or other users have access to it (mode 0644): chmod 600 it" $F/err2 ||
		fail "mode: $(cat $F/err2)"
	inc "$TCPRT" fleet gaps --user tcprt --password-file $pw > /dev/null ||
		fail "--password-file: refused"
	TCPRT_CLICKHOUSE_PASSWORD=$secret inc "$TCPRT" fleet gaps --user tcprt > /dev/null ||
		fail "\$TCPRT_CLICKHOUSE_PASSWORD: refused"
	mkdir -p $F/cred
	( umask 077; cp $pw $F/cred/clickhouse-password )
	CREDENTIALS_DIRECTORY=$F/cred inc "$TCPRT" fleet gaps --user tcprt > /dev/null ||
		fail "\$CREDENTIALS_DIRECTORY: refused"
	( umask 077; echo wrong-pw-4242 > $F/cred/clickhouse-password )
	rc=0
	CREDENTIALS_DIRECTORY=$F/cred inc "$TCPRT" fleet gaps --user tcprt > /dev/null 2> $F/err3 || rc=$?
	expect_eq $rc 1 "a wrong password: refused"
	grep -q "ClickHouse at $CH refused the user 'tcprt' or its password" $F/err3 ||
		fail "wrong password: $(cat $F/err3)"
	rc=0
	inc "$TCPRT" fleet gaps --since 0 --url http://db.example:8123/ > /dev/null 2> $F/err4 || rc=$?
	expect_eq $rc 2 "http:// to another host without --plaintext: a usage error"
	grep -q "would cross the network unencrypted" $F/err4 || fail "plaintext: $(cat $F/err4)"

	# the loader as the user: the password in none of its arguments, its
	# environment or its messages; the spool loaded all the same
	stop_ingest
	ln -s /etc/passwd $F/spool/2099030100.frames
	signed_frames pw-a 91 10 "" > $F/spool/2099030101.frames
	start_ingest --user tcprt --password-file $pw
	pid=$(pgrep -f "$TCPRT ingest")
	WAIT_S=$SETTLE_S wait_until "pw-a's records stored" settled pw-a || fail "pw-a: $(account pw-a)"
	if tr '\0' ' ' < /proc/$pid/cmdline | grep -qF "$secret"; then fail "the password in ingest's arguments"; fi
	if tr '\0' '\n' < /proc/$pid/environ | grep -qF "$secret"; then fail "the password in ingest's environment"; fi
	ps -eo args > $F/ps
	if grep -qF "$secret" $F/ps; then fail "the password in ps"; fi
	stop_ingest
	for f in $F/err $F/err2 $F/err3 $F/err4 $F/ingest.log; do
		if grep -qF "$secret" $f; then fail "the password in a message: $f"; fi
	done
	grep -q "2099030100.frames: a symbolic link; not loaded" $F/ingest.log ||
		fail "the link: $(cat $F/ingest.log)"
	expect_eq "$(sql "SELECT count() FROM tcprt.bad_messages WHERE file LIKE '%:$F/spool/2099030100.frames'")	$(sql "SELECT count() FROM tcprt.records WHERE line LIKE 'root:%'")" \
		"0	0" "nothing loaded through the link"
	rm -f $F/spool/2099030100.frames
	expect_eq "$(stat -c %a $F/spool/.tcprt-ingest.state $F/spool/.tcprt-ingest.state.lock | tr '\n' ' ')" \
		"600 600 " "ingest's state and lock: 0600"
	# the files the central rsyslog wrote (named by the hour, not 2099)
	for f in $F/spool/20[0-8]*.frames; do
		expect_eq "$(stat -c %a "$f")" 640 "the spool file $(basename "$f")"
	done
	start_ingest
}

# Two machines under one host id (clones sharing /etc/machine-id, so the
# default host id): each keeps its own epoch and account, and gaps says
# that the id names two senders at once; a ship restarted does not.
case_clones() {
	signed > $F/spool/2099040100.frames <<-EOF
		C1 clone-x 501 1 ${FP}23000000000 ${FP}23050000000 0 0 0 0 0 0 0 0 0 1
		C1 clone-x 502 1 ${FP}23020000000 ${FP}23060000000 0 0 0 0 0 0 0 0 0 1
		C1 restart-x 503 1 ${FP}23000000000 ${FP}23050000000 0 0 0 0 0 0 0 0 0 1
		C1 restart-x 504 1 ${FP}23051000000 ${FP}23060000000 0 0 0 0 0 0 0 0 0 1
	EOF
	WAIT_S=$SETTLE_S wait_until "the clones' accounts" eval \
		'[ "$(sql "SELECT count() FROM tcprt.controls WHERE host IN ('"'clone-x', 'restart-x'"')")" = 4 ]' ||
		fail "controls not loaded"
	expect_eq "$(inc "$TCPRT" fleet gaps --since 0 --url $CH --host clone-x | grep -c 'ran while another epoch of this host id did')" 2 \
		"both epochs of clone-x told as concurrent"
	expect_eq "$(inc "$TCPRT" fleet gaps --since 0 --url $CH --host restart-x | grep -c 'ran while another epoch')" 0 \
		"restart-x's epochs, one after the other: not concurrent"
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host clone-x --format json | grep -q '"epoch":501,.*"concurrent":true' ||
		fail "json: $(inc "$TCPRT" fleet gaps --since 0 --url $CH --host clone-x --format json)"
}

# A sender rsyslogd of its own in host a's namespace, on the socket
# $F/NAME/ship.sock, its snippet rendered with ARGS (NOCERT: without its
# certificate and key lines): for the identity case.
start_extra_sender() {	# name NOCERT|args...
	local n=$1 nocert=
	shift
	[ "${1:-}" = NOCERT ] && { nocert='/# TCPRT_CERT$/d; /# TCPRT_KEY$/d'; shift; }
	mkdir -p $F/$n
	"$FLEET/render.sh" "$FLEET/tcprt-ship.conf" TCPRT_SOCKET=$F/$n/ship.sock \
		TCPRT_CENTRAL=10.98.0.1 TCPRT_PORT=$PORT "$@" | sed -e "$nocert" > $F/$n/snippet.conf
	"$FLEET/render.sh" "$FLEET/test-sender.conf.in" WORKDIR=$F/$n \
		SNIPPET=$F/$n/snippet.conf > $F/$n/rsyslog.conf
	detach $F/$n/stdout ip netns exec fleeta rsyslogd -n -f $F/$n/rsyslog.conf \
		-i $F/$n/pid
	wait_until "$n's rsyslog socket" test -S $F/$n/ship.sock
}

stop_extra_sender() {	# name
	local pid
	pid=$(cat $F/$1/pid)
	kill "$pid"
	wait_until "$1's rsyslogd gone" eval "! kill -0 $pid 2> /dev/null"
}

refusals() {	# the central's TLS refusals so far
	local n
	n=$(grep -c -e "authentication error" -e "TLS handshake failed" $F/central/rsyslogd.log 2> /dev/null) || true
	echo "${n:-0}"
}

# A sender the central must not let in, shipping as host ID: once the
# central has refused its connection (a new refusal in its log), nothing
# of ID is in the spool.
expect_refused() {	# what id args...
	local what=$1 id=$2 before
	shift 2
	before=$(refusals)
	start_extra_sender "x-$id" "$@"
	ip netns exec fleeta "$TCPRT" ship --key-file "$(key_for "$id")" \
		--socket $F/x-$id/ship.sock --dir $F/idrec --once 2> $F/x-$id.err ||
		fail "ship $id: $(cat $F/x-$id.err)"
	wait_until "the central to refuse $what" eval "[ \$(refusals) -gt $before ]" ||
		fail "$what: not refused; $(tail -3 $F/central/rsyslogd.log)"
	stop_extra_sender "x-$id"
	expect_eq "$(spool_count "$id")" 0 "$what: its messages in the spool"
	diag "$what: $(grep -e "authentication error" -e "TLS handshake failed" $F/central/rsyslogd.log | tail -1 | cut -c 1-160)"
}

# The trust boundary.  TLS on the hop: a sender without a certificate, one
# whose certificate's name the central does not permit, and one whose
# certificate of the right name is from another CA deliver nothing.
# Signatures: a permitted sender's messages that claim another host's id
# - signed with its own key, unsigned, and the review's forged control
# message that turned an account's loss into none - land nothing as that
# host: they are in bad_messages, and gaps counts them for the id claimed.
case_identity() {
	local epoch before
	python3 "$GEN" $F/idrec 50 > /dev/null
	TCPRT=$TCPRT sh "$FLEET/make-certs.sh" host $F/tls/ca x.other.test $F/tls/other > /dev/null ||
		fail "make-certs.sh host"
	TCPRT=$TCPRT sh "$FLEET/make-certs.sh" ca $F/tls/rogue-ca > /dev/null &&
		TCPRT=$TCPRT sh "$FLEET/make-certs.sh" host $F/tls/rogue-ca a.fleet.test $F/tls/rogue > /dev/null ||
		fail "make-certs.sh, a second CA"
	expect_refused "a sender without a certificate" id-nocert NOCERT TCPRT_CA=$F/tls/ca/ca.pem
	# shellcheck disable=SC2046
	expect_refused "a sender whose name is not permitted" id-other $(tls_args $F/tls/other)
	# the sender trusts the fleet's CA (so that it is the central that
	# refuses), its own certificate and key are of another CA
	expect_refused "a certificate of another CA" id-rogue TCPRT_CA=$F/tls/ca/ca.pem \
		TCPRT_CERT=$F/tls/rogue/cert.pem TCPRT_KEY=$F/tls/rogue/key.pem

	# host a's sender is permitted; its messages claim cap-a (case_cap's)
	epoch=$(sql "SELECT epoch FROM tcprt.controls FINAL WHERE host = 'cap-a' AND final = 1 LIMIT 1")
	before=$(account cap-a)
	{
		echo "D1 cap-a $epoch 0 0 1 V6 R ${FP}18000 000001 10.6.6.6:1 10.1.0.1:7100 5000 1000 300 0 1 500 100 300 0 1448|" | signed mallory
		echo "D1 cap-a $epoch 1 0 1 V6 R ${FP}18000 000001 10.6.6.6:1 10.1.0.1:7100 5000 1000 300 0 1 500 100 300 0 1448|"
		echo "C1 cap-a $epoch 18446744073709551615 ${FP}18000000000 ${FP}18100000000 1 0 0 0 0 0 0 0 0 1" | signed mallory
	} > $F/forged
	ip netns exec fleeta python3 - $F/a/ship.sock $F/forged <<-'PY' || fail "sending the forgeries"
		import socket, sys
		s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
		s.connect(sys.argv[1])
		for line in open(sys.argv[2]).read().splitlines():
		    s.send(b"<134>tcprt: " + line.encode())
	PY
	WAIT_S=$SETTLE_S wait_until "the forgeries in bad_messages" eval \
		'[ "$(sql "SELECT count() FROM tcprt.bad_messages WHERE host = '"'cap-a'"' AND reason LIKE '"'unauthenticated:%'"'")" -ge 3 ]' ||
		fail "forgeries: $(sql "SELECT reason FROM tcprt.bad_messages WHERE host = 'cap-a'")"
	expect_eq "$(sql "SELECT reason FROM tcprt.bad_messages FINAL WHERE host = 'cap-a' ORDER BY reason FORMAT TabSeparated" | tr '\n' '|')" \
		"unauthenticated: not signed with the key of host cap-a|unauthenticated: not signed with the key of host cap-a|unauthenticated: unsigned message claiming host cap-a (ingest checks signatures)|" \
		"the forgeries' reasons"
	expect_eq "$(account cap-a)" "$before" "cap-a's account after the forgeries"
	expect_eq "$(sql "SELECT count() FROM tcprt.records FINAL WHERE host = 'cap-a' AND peer_addr = '10.6.6.6'")" 0 \
		"no forged record stored as cap-a"
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host cap-a | grep -q "^3 messages not signed by the host they claim, refused (table tcprt.bad_messages): cap-a 3$" ||
		fail "gaps: $(inc "$TCPRT" fleet gaps --since 0 --url $CH --host cap-a)"
}

# Records numbered by the module (log_ext's seq, issue 46 item 5), as the
# spool would hold them, signed: one log (load 555, CPU 0) of seq-a read
# by three epochs - 901 final, 902 killed and closed by its successor
# (final 2), 903 alive, its rows past its last account - and what each
# number became, chosen here: 0-9 and 20-24 never read (RELAY), 12 skipped
# (RELAY), 15 dropped by the cap, 18 handed over and not stored
# (TRANSPORT), 32-34 read by 902 and not sent (SENDER; 30 and 31 it sent
# before the kill: stored, not counted twice), 38, 39 and 41 read by 903,
# not yet sent (IN FLIGHT).  seq-b's epoch 905 falls silent: ended after
# 6 of its 100 ms intervals (rounded up to 1 s), what it had not handed
# over lost (SENDER).  An L1 whose fields contradict each other, and an
# unsigned one, are refused with their reasons.
case_numbered() {
	local r="V6 R ${FP}18000 000001 10.1.0.2:1 10.1.0.1:7100 5000 1000 300 0 1 500 100 300 0 1448 seq="
	local d2="D2 seq-a" e f
	signed > $F/spool/2099050100.frames <<-EOF
		$d2 901 0 0 555 4 ${r}10|${r}11|${r}13|${r}14|
		$d2 901 5 0 555 2 ${r}16|${r}17|
		$d2 901 8 0 555 1 ${r}19|
		C1 seq-a 901 5 ${FP}18000000000 ${FP}18100000000 9 1 0 0 1 0 0 0 0 1 9 10000000
		L1 seq-a 901 5 555 0 10 20 20 1 1 0 1 0
		$d2 902 0 0 555 5 ${r}25|${r}26|${r}27|${r}28|${r}29|
		$d2 902 5 0 555 2 ${r}30|${r}31|
		C1 seq-a 902 3 ${FP}18200000000 ${FP}18300000000 10 0 0 0 1 0 0 0 0 2 5 10000000
		L1 seq-a 902 3 555 0 25 35 30 0 0 0 2 0
		$d2 903 0 0 555 3 ${r}35|${r}36|${r}37|
		C1 seq-a 903 0 ${FP}18400000000 ${FP}18500000000 3 0 0 0 1 0 0 0 0 0 3 10000000
		L1 seq-a 903 0 555 0 35 40 38 0 0 0 0 0
		$d2 903 3 0 555 1 ${r}40|
		$d2 903 5 0 555 1 ${r}42|
		D1 seq-b 905 0 0 5 ${r}0|${r}1|${r}2|${r}3|${r}4|
		D1 seq-b 905 6 0 1 ${r}6|
		C1 seq-b 905 4 ${FP}18000000000 ${FP}18100000000 10 0 0 0 0 0 0 0 0 0 6 100000
		L1 seq-a 904 0 555 1 10 20 21 0 0 0 0 0
	EOF
	echo "L1 seq-a 906 0 555 2 0 1 1 0 0 0 0 0" >> $F/spool/2099050100.frames
	WAIT_S=$SETTLE_S wait_until "seq-a's and seq-b's messages loaded" eval \
		'[ "$(sql "SELECT count() FROM tcprt.records WHERE host IN ('"'seq-a', 'seq-b'"')")" = 25 ]' ||
		fail "records not loaded: $(sql "SELECT count() FROM tcprt.records WHERE host IN ('seq-a', 'seq-b')")"
	WAIT_S=$SETTLE_S wait_until "the accounts loaded" eval \
		'[ "$(sql "SELECT count() FROM tcprt.cpu_accounts WHERE host = '"'seq-a'"'")" = 3 ]' ||
		fail "cpu_accounts: $(sql "SELECT * FROM tcprt.cpu_accounts WHERE host = 'seq-a'")"
	expect_eq "$(sql "SELECT count(), countIf(numbered = 1), min(rseq), max(rseq), any(load_id) FROM tcprt.records FINAL WHERE host = 'seq-a'")" \
		"19	19	10	42	555" "seq-a's rows: numbered, load 555"
	expect_eq "$(sql "SELECT countIf(numbered = 1), max(load_id) FROM tcprt.records FINAL WHERE host = 'seq-b'")" \
		"6	0" "seq-b's rows (D1): numbered, no load"
	expect_eq "$(sql "SELECT epoch, final, sent_seq, interval_us, sent_known FROM tcprt.controls FINAL WHERE host = 'seq-a' ORDER BY epoch FORMAT TabSeparated" | tr '\t\n' ' ')" \
		"901 1 9 10000000 1 902 2 5 10000000 1 903 0 3 10000000 1 " "seq-a's control messages, sent_seq and interval_us"
	expect_eq "$(sql "SELECT count() FROM tcprt.bad_messages FINAL WHERE reason = 'L1: first 10, sent_next 21, read_next 20: not in that order'")" 1 \
		"an L1 whose numbers contradict each other, refused with the reason"
	expect_eq "$(sql "SELECT count() FROM tcprt.bad_messages FINAL WHERE host = 'seq-a' AND reason LIKE 'unauthenticated: unsigned message claiming host seq-a%'")" 1 \
		"an unsigned L1, refused as not its host's"

	# by epoch: 901 final, 902 closed with 3 lost with the sender
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-a --ended-after 3600 --by epoch --format csv > $F/seq.epochs 2> $F/err ||
		fail "gaps by epoch: $(cat $F/err)"
	# state sent received missing cap refused transport sender in_flight accounting
	expect_eq "$(awk -F, 'NR > 1 { print $3, $5, $6, $7, $8, $9, $10, $17, $18, $20 }' $F/seq.epochs | tr '\n' ';')" \
		"final 9 7 2 1 0 1 0 0 epoch;closed 10 7 3 0 0 0 3 0 epoch;open 3 3 0 0 0 0 0 0 epoch;" \
		"seq-a by epoch"
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-a --ended-after 3600 | grep -q " closed .*by epoch, .*closed by its successor" ||
		fail "text: $(inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-a)"
	# by module seq: every number's fate, as chosen above
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-a --ended-after 3600 --by seq --format csv > $F/seq.logs 2> $F/err ||
		fail "gaps by seq: $(cat $F/err)"
	expect_eq "$(sed -n 2p $F/seq.logs)" \
		"seq-a,555,0,43,19,24,16,1,0,3,3,1,3,0-9;12-12;15-15;18-18;20-24;32-34;38-39;41-41,0,module seq" \
		"seq-a by module seq (made stored missing relay cap refused sender in_flight transport epochs ranges)"
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-a --ended-after 3600 | grep -q "^seq-a .* 555 .* by module seq, 3 epochs$" ||
		fail "text: $(inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-a --ended-after 3600)"
	# 903 silent for more than 1 s before what its central's spool is
	# loaded to (tcprt.centrals): ended, its 3 lost with it
	WAIT_S=$SETTLE_S wait_until "903 ended" seq_a_ended ||
		fail "$(inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-a --ended-after 1)"
	expect_eq "$(sed -n 2p $F/seq.logs | cut -d, -f10,11)" "6,0" "903 ended: SENDER 6, IN FLIGHT 0"

	# seq-b: its intervals of 100 ms: ended after 1 s; 7-9 not handed over
	# (sent_seq 6): SENDER 3; 5 handed over and lost: TRANSPORT 1
	WAIT_S=$SETTLE_S wait_until "seq-b ended" eval \
		'[ "$(inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-b --by epoch --format csv | awk -F, '"'NR == 2 { print \$3 }'"')" = ended ]' ||
		fail "seq-b: $(inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-b)"
	expect_eq "$(inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-b --by epoch --format csv | awk -F, 'NR == 2 { print $7, $10, $17, $18 }')" \
		"4 1 3 0" "seq-b ended: missing 4, transport 1, sender 3, in flight 0"
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-b | grep -q "ended: no control message for [0-9]* s (ended after 1 s)" ||
		fail "text: $(inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-b)"
	if inc "$TCPRT" fleet gaps --since 0 --url $CH --host seq-b | grep -q "by module seq"; then
		fail "seq-b's rows have no load: no account by module seq"
	fi

	# the share reached, from the view: 19 of 43 in the hour of ${FP}18000
	e=$(date -u -d @${FP}18000 +%Y-%m-%dT%H:00:00Z)
	expect_eq "$(inc "$TCPRT" fleet reached --url $CH --host seq-a --since ${FP}10000 --until ${FP}30000 --format csv | sed -n 2p)" \
		"seq-a,$e,19,43,0.441860" "the share of seq-a's records stored, that hour"
	f=$(sql "SELECT stored, made FROM tcprt.reached WHERE host = 'seq-a'")
	expect_eq "$f" "19	43" "the view, as a dashboard reads it"
}

# ship SIGKILLed again and again under a sustained load of the module
# tracking a real server, its records numbered (log_ext=seq): the
# module's own count of its records equals the store's rows plus the
# losses gaps names by module seq, cause by cause - none overwritten in
# the relay (the module's counter says so), none capped (--rate 0), none
# refused, none lost in transport, and SENDER: what each killed ship had
# read and not handed over, closed for it by the next one from the state
# file; no record twice.
case_ship_killed_live() {
	local host=killed-a kills=6 srv load shipp i n made rows csv
	[ -z "${FLEET_NO_MODULE:-}" ] || return 4
	mod_load lports=7604 log_ext=seq
	# 4 connections for each ship's load
	srv=$(start_server fleeta -- --port 7604 --req-bytes 100 --resp-bytes 1000 \
		--conns $((4 * kills)))
	for ((i = 0; i < kills; i++)); do
		n=$(spool_count $host)
		# records for this ship to read, however long the last one took
		# (one load for all six ended before the last ship on a slow
		# machine): about 2.5 s of requests, 10 ms apart on each of 4
		# connections
		ip netns exec fleeta "$PEER" client --port 7604 --req-bytes 100 \
			--resp-bytes 1000 --requests 250 --conns 4 --think-ms 10 > /dev/null &
		load=$!
		# not under ip netns exec: its own sysfs would hide debugfs
		"$TCPRT" ship --key-file "$(key_for $host)" --socket $F/a/ship.sock \
			--interval 1 --send-wait 30 --state $F/killed.state 2>> $F/killed.err &
		shipp=$!
		# killed once it has handed some records over, wherever it is then
		WAIT_S=$SETTLE_S wait_until "ship $i's messages in the spool" spool_has $host $((n + 1)) ||
			fail "ship $i sent nothing: $(tail -3 $F/killed.err)"
		kill -KILL $shipp
		wait $shipp 2> /dev/null || true
		wait $load || fail "the load's client"
	done
	wait_untracked
	"$TCPRT" ship --key-file "$(key_for $host)" --socket $F/a/ship.sock \
		--interval 1 --send-wait 30 --state $F/killed.state 2>> $F/killed.err &
	shipp=$!
	made=$(($(status records_R) + $(status records_W) + $(status records_N) + $(status records_P) + $(status records_E)))
	diag "the module made $made records ($(status records_R) R) on $(ls "$DBG"/rt-network-log* | wc -l) CPUs; server on $srv"
	# every log's account settled: all the module made read and stored or
	# counted, nothing in flight, nothing in transport
	settled_seq() {
		inc "$TCPRT" fleet gaps --since 0 --url $CH --host $host --by seq --format csv 2> /dev/null > $F/killed.csv &&
			awk -F, -v m="$made" 'NR > 1 { made += $4; inf += $11; tr += $12 }
				END { exit !(made == m && inf == 0 && tr == 0) }' $F/killed.csv
	}
	WAIT_S=$SETTLE_S wait_until "the account by module seq to settle" settled_seq ||
		fail "by seq: $(cat $F/killed.csv); ingest: $(tail -3 $F/ingest.log)"
	kill -TERM $shipp
	wait $shipp || fail "the last ship exited with $?: $(tail -3 $F/killed.err)"
	WAIT_S=$SETTLE_S wait_until "the last ship's final account" settled "$host" ||
		fail "by epoch: $(account $host)"
	expect_eq "$(grep -c "closed the account of epoch" $F/killed.err)" $kills \
		"each killed ship's account closed by the next"
	expect_eq "$(status log_subbufs_overwritten)" 0 "the relay overwrote nothing"
	settled_seq || fail "by seq after the last ship stopped: $(cat $F/killed.csv)"
	# made stored relay cap refused sender in_flight transport, summed over CPUs
	csv=$(awk -F, 'NR > 1 { for (i = 4; i <= 12; i++) s[i] += $i }
		END { print s[4], s[5], s[7], s[8], s[9], s[10], s[11], s[12] }' $F/killed.csv)
	rows=$(sql "SELECT count(), uniqExact(load_id, cpu, rseq) FROM tcprt.records FINAL WHERE host = '$host'")
	diag "by module seq (made stored relay cap refused sender in_flight transport): $csv; rows, distinct numbers: $rows"
	set -- $csv
	expect_eq "$1" "$made" "made: the module's own count"
	expect_eq "$rows" "$2	$2" "the store's rows: each number once"
	expect_eq "$3 $4 $5 $7 $8" "0 0 0 0 0" "relay, cap, refused, in flight, transport"
	expect_eq "$(($2 + $6))" "$made" "stored + lost with the killed ships = made"
	expect_eq "$(inc "$TCPRT" fleet gaps --since 0 --url $CH --host $host --by epoch --format csv 2> /dev/null |
		awk -F, 'NR > 1 { n[$3]++ } END { print n["closed"] + 0, n["final"] + 0 }')" "$kills 1" \
		"epochs: $kills closed by their successors, the last final"
	# one ship after another: none told as running beside another (a
	# closing account of the successor's time made the dead epoch's span
	# reach into its successor's)
	expect_eq "$(inc "$TCPRT" fleet gaps --since 0 --url $CH --host $host | grep -c 'ran while another epoch')" 0 \
		"epochs of ships killed and restarted: not concurrent"
}

# ---- a host's power lost during an outage ----------------------------------------

# The host's rsyslog keeps its work directory (the queue's files) on a
# file system of its own: ext4 with Debian's default options, on a loop
# device over a file of the guest.  For the case the kernel's writeback of
# dirty pages and the journal's commits are held off, so what rsyslog
# wrote and did not sync stays in the page cache, where a power loss
# takes it: the worst moment for the power to go.  It goes with the
# central out of reach (the link down), the records of one ship run in
# the host's queue (part in memory, the rest spilled to disk) and ship
# following its logs, its state file on that file system too: ship and
# rsyslogd SIGKILLed, the file copied as the device holds it.  The copy
# is mounted (its journal replayed) and rsyslogd started on it, the link
# brought back, and a new ship closes the dead epoch from the state file,
# as one does at the host's next boot.  What had reached the disk
# arrives; the rest is told as TRANSPORT, at most the bound of
# docs/fleet.md (queue.size and queue.checkpointInterval messages).
# The queue's memory part is made 500 messages (2000 as shipped) so that
# a short run spills to disk; the generator paces the records (40000 in
# 20 s, about 50 messages a second), and imuxsock waits for room as long
# as it takes (queue.timeoutEnqueue 10 min, 2 s as shipped: ship then
# waits at the socket, --send-wait), so that rsyslog discards nothing
# however slowly the disk part, synced in the emulated guest, is written
# (it discarded 3 beside a busy loop, 2026-11-29).
POWER_N=${POWER_N:-40000}
POWER_QSIZE=500

power_mount() {	# image dir [mount options]
	local dev
	[ -e /dev/loop-control ] || modprobe loop || fail "no loop devices"
	dev=$(losetup -f --show "$1") || fail "losetup $1"
	mount ${3:+-o "$3"} "$dev" "$2" || { losetup -d "$dev"; fail "mount $1"; }
}

power_umount() {	# dir
	local dev
	dev=$(findmnt -n -o SOURCE "$1") && umount "$1" && losetup -d "$dev"
}

# A counter of the last impstats line of a queue of the action
# ("queue" or "queue\[DA\]").
queue_stat() {	# dir queue key
	grep "tcprt_ship_relp $2: " "$1/stats.log" 2> /dev/null | tail -1 | grep -o " $3=[0-9]*" | cut -d= -f2
}

# ship idle: between the last two impstats lines (2 s apart) the queue
# took 2 to 4 messages, its control messages, no data.  The state file
# was synced with the first of them, after the last data message.
ship_idle() {	# dir
	local a b
	read -r a b < <(grep "tcprt_ship_relp queue: " "$1/stats.log" | tail -2 |
		grep -o " enqueued=[0-9]*" | cut -d= -f2 | tr '\n' ' '; echo)
	[ -n "$b" ] && ((b - a >= 2 && b - a <= 4))
}

# The dead epoch of HOST as "sent received missing cap refused transport
# sender", once a successor closed it.
dead_epoch() {	# host
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host "$1" --format csv 2> /dev/null |
		awk -F, 'NR > 1 && $3 == "closed" { print $5, $6, $7, $8, $9, $10, $17 }'
}

# The dead epoch closed and the restarted rsyslog's queue empty (a DA
# queue it no longer reports is empty).
power_settled() {	# host dir
	local da
	[ -n "$(dead_epoch "$1")" ] && [ "$(queue_stat "$2" queue size)" = 0 ] || return 1
	da=$(queue_stat "$2" 'queue\[DA\]' size)
	[ -z "$da" ] || [ "$da" = 0 ]
}

power_sysctl() {	# hold|restore
	local k v
	if [ "$1" = hold ]; then
		for k in dirty_writeback_centisecs dirty_expire_centisecs dirty_background_ratio dirty_ratio; do
			echo "$k $(sysctl -n vm.$k)"
		done > $F/sysctl.saved
		sysctl -q -w vm.dirty_writeback_centisecs=0 vm.dirty_expire_centisecs=360000 \
			vm.dirty_ratio=90 vm.dirty_background_ratio=80
	else
		while read -r k v; do sysctl -q -w vm.$k="$v"; done < $F/sysctl.saved
		rm -f $F/sysctl.saved
	fi
}

# One power loss; writes "lost_records max_records_per_message
# memory_part disk_part bound_in_messages mean_records_per_message" to
# $F/power.out: the bound is queue.size and queue.checkpointInterval
# (the messages written since the queue's index was synced).
power_lost_run() {	# host-id sed-filter-of-the-snippet
	local id=$1 filter=$2 h=$F/$1 gen shipp total sent recv lost cap refused tr sender
	local mem disk qsize ckpt per
	rm -f $F/power.out
	mkdir -p $h/disk $h/logs $h/empty
	: > $h/empty/rt-network-log0
	truncate -s 256M $h.img && mkfs.ext4 -q -F $h.img || fail "mkfs.ext4"
	power_sysctl hold || fail "sysctl"
	# the journal's commit held off too (Debian's default: every 5 s)
	power_mount $h.img $h/disk commit=3600
	# shellcheck disable=SC2046
	"$FLEET/render.sh" "$FLEET/tcprt-ship.conf" TCPRT_SOCKET=$h/ship.sock \
		TCPRT_CENTRAL=10.98.0.1 TCPRT_PORT=$PORT $(tls_args $F/tls/a) |
		sed -e "s/queue.size=\"[0-9]*\"/queue.size=\"$POWER_QSIZE\" queue.timeoutEnqueue=\"600000\"/; $filter" \
		> $h/snippet.conf
	qsize=$(grep -o 'queue.size="[0-9]*"' $h/snippet.conf | grep -o '[0-9]*') || fail "no queue.size"
	# none in the negative control
	ckpt=$(grep -o 'queue.checkpointInterval="[0-9]*"' $h/snippet.conf | grep -o '[0-9]*' || true)
	"$FLEET/render.sh" "$FLEET/test-sender.conf.in" WORKDIR=$h SNIPPET=$h/snippet.conf |
		sed -e "s|^global(workDirectory=\"$h\"|global(workDirectory=\"$h/disk\"|" > $h/rsyslog.conf
	grep -q "workDirectory=\"$h/disk\"" $h/rsyslog.conf || fail "the queue not on its own file system"
	ip -n fleeta link set fa0 down
	detach $h/stdout ip netns exec fleeta rsyslogd -n -f $h/rsyslog.conf -i $h/pid
	wait_until "$id's rsyslog socket" test -S $h/ship.sock || fail "$id's rsyslogd: $(cat $h/stdout)"
	python3 "$GEN" $h/logs "$POWER_N" --files 2 --rate $((POWER_N / 20)) > $h/gen &
	gen=$!
	wait_until "the generator's files" test -e $h/logs/rt-network-log1 || fail "generator"
	ip netns exec fleeta "$TCPRT" ship --key-file "$(key_for "$id")" --socket $h/ship.sock \
		--dir $h/logs --rate 0 --interval 1 --send-wait 30 --state $h/disk/ship.state 2> $h/ship.err &
	shipp=$!
	wait $gen || fail "generator"
	total=$(awk '{ s += $1 } END { print s }' $h/gen)
	WAIT_S=$SETTLE_S wait_until "ship to hand over its run and fall idle" ship_idle $h ||
		fail "$id: $(grep 'tcprt_ship_relp' $h/stats.log | tail -4)"
	mem=$(queue_stat $h queue size)
	disk=$(queue_stat $h 'queue\[DA\]' size)
	[ "$(queue_stat $h queue discarded.full)" = 0 ] ||
		fail "$id's rsyslog discarded messages: $(grep 'tcprt_ship_relp' $h/stats.log | tail -4)"
	diag "$id: $(grep 'tcprt_ship_relp' $h/stats.log | tail -2 | tr '\n' ' ')"
	# the power goes
	kill -KILL $shipp "$(cat $h/pid)" || fail "ship or rsyslogd gone before the power: $(cat $h/ship.err)"
	wait $shipp 2> /dev/null || true
	wait_until "$id's rsyslogd gone" eval "! kill -0 $(cat $h/pid) 2> /dev/null" || fail "rsyslogd lives"
	cp --sparse=always $h.img $h.after
	power_umount $h/disk || fail "umount"
	power_sysctl restore
	# the next boot; its counters in a log of their own
	power_mount $h.after $h/disk
	rm -f $h/ship.sock $h/pid
	mv $h/stats.log $h/stats.before
	detach $h/stdout2 ip netns exec fleeta rsyslogd -n -f $h/rsyslog.conf -i $h/pid
	wait_until "$id's rsyslog socket" test -S $h/ship.sock || fail "$id's rsyslogd: $(cat $h/stdout2)"
	ip -n fleeta link set fa0 up
	ip netns exec fleeta "$TCPRT" ship --key-file "$(key_for "$id")" --socket $h/ship.sock \
		--dir $h/empty --once --state $h/disk/ship.state 2>> $h/ship.err ||
		fail "the next ship: $(tail -3 $h/ship.err)"
	grep -q "closed the account of epoch" $h/ship.err || fail "the dead epoch not closed: $(cat $h/ship.err)"
	WAIT_S=$SETTLE_S wait_until "the dead epoch's account, $id's queue empty" power_settled "$id" $h ||
		fail "$id: $(dead_epoch "$id"); $(grep 'tcprt_ship_relp' $h/stats.log | tail -2)"
	# The account is read once all the restarted rsyslogd sent is loaded.
	# Its queue empty by impstats is not enough: the close can come first
	# (two workers, two RELP sessions), the disk part's batch still on its
	# way, or its first line taken before the disk part is read (on
	# 0ac3d2f the account was read at "0 received").  Stopped, rsyslogd
	# closes its RELP sessions, which the central answers after every frame
	# before (each in the spool before its ack: a Direct ruleset, omprog
	# confirming), and saves to disk what it still held: nothing.
	stop_extra_sender "$id"
	[ ! -e $h/disk/tcprt_ship.qi ] ||
		fail "$id's rsyslogd stopped with frames queued: $(ls -l $h/disk); $(tail -2 $h/stats.log)"
	WAIT_S=$SETTLE_S wait_until "the spool loaded" ingest_idle || fail "$(tail -3 $F/ingest.log)"
	read -r sent recv lost cap refused tr sender < <(dead_epoch "$id") || fail "gaps"
	diag "$id: the dead epoch closed: $sent records sent, $recv received"
	power_umount $h/disk || fail "umount"
	rm -f $h.img $h.after
	expect_eq "$sent $cap $refused $sender" "$total 0 0 0" "$id: sent, cap, refused, lost with ship"
	expect_eq "$tr" "$lost" "$id: every record missing told as transport"
	per=$(cat $F/spool/*.frames | grep -E "^S1 [0-9a-f]{32} D1 $id " | awk '{ print $8 }' | sort -n | tail -1)
	echo "$lost ${per:-0} $mem ${disk:-0} $((qsize + ${ckpt:-0})) $(((recv + 1) / ($(spool_count "$id") + 1)))" \
		> $F/power.out
}

# Whatever a failed run left: the writeback, the link, the daemon, the
# file systems.  Every step is tried (set -e would stop at the first that
# fails).
power_cleanup() {
	local h dev
	set +e
	[ -f $F/sysctl.saved ] && power_sysctl restore
	ip -n fleeta link set fa0 up 2> /dev/null
	for h in $F/power-*/; do
		h=${h%/}
		[ -f $h/pid ] && kill "$(cat $h/pid)" 2> /dev/null
		mountpoint -q $h/disk && umount -l $h/disk
		for dev in $(losetup -n -O NAME -j $h.img) $(losetup -n -O NAME -j $h.after); do
			losetup -d "$dev"
		done
		rm -f $h.img $h.after
	done
	return 0
}

case_host_power_lost() {
	local lost per mem disk bound mean
	full_only || return 4
	trap '_kill_jobs; power_cleanup' EXIT
	power_lost_run power-a ''
	read -r lost per mem disk bound mean < $F/power.out
	diag "power lost: memory part $mem messages, disk part $disk (impstats, up to 2 s before); $lost records lost, some $((lost / (mean > 0 ? mean : 1))) messages of the $mean records a message that arrived held on average (at most $per); bound $bound messages"
	((lost > 0)) || fail "no record lost: the memory part survived a power loss?"
	((lost <= bound * per)) || fail "$lost records lost: more than $bound messages of $per records"
	# negative control: the queue as it was before (no checkpoints, no
	# sync): the disk part is lost with the memory part, more than the
	# bound above
	power_lost_run power-b '/queue.checkpointInterval/d; /queue.syncQueueFiles/d'
	read -r lost _ mem disk _ _ < $F/power.out
	diag "without checkpoints or sync: memory part $mem messages, disk part $disk; $lost records lost"
	((lost > bound * per)) || fail "without checkpoints or sync, $lost records lost: the disk part survived"
}

# The store's power lost (docs/fleet.md, "What a node's loss can cost"):
# ClickHouse's data on a file system of its own, the kernel's writeback
# held off as for the host's power loss above.  The schema made and
# synced (a store made long before), records shipped and loaded - every
# one acknowledged by ClickHouse and its account settled - then
# ClickHouse SIGKILLed and the device copied as it holds them; the copy,
# mounted (its journal replayed) and served: ClickHouse acknowledges
# what it wrote, not what it synced, and the rows the page cache held are
# gone.  The spool still holds every file (a file's load ended less than
# --retire ago): loaded again, from a state file of its own, every record
# is there once.  The central writes a spool of its own for the case, so
# that the reload is of this case's frames, not every case's so far (133
# s in the emulated guest, most of it loading those into the new store).
# (A case runs in a subshell of its own: INGEST_SPOOL set here ends with
# it, and its EXIT trap puts the central back on the shared spool whether
# the case passed or failed, set -e still in force for every step.)
case_store_power_lost() {
	local d=$F/chp n got
	full_only || return 4
	trap '_kill_jobs; shared_spool_back' EXIT
	INGEST_SPOOL=$F/chp-spool
	stop_ingest
	stop_clickhouse
	stop_central
	rm -rf $INGEST_SPOOL
	mkdir -p $INGEST_SPOOL $d/data
	SPOOL_DIR=$INGEST_SPOOL start_central
	truncate -s 1G $F/chp.img && mkfs.ext4 -q -F $F/chp.img || fail "mkfs.ext4"
	power_mount $F/chp.img $d/data commit=3600
	CHDIR=$d start_clickhouse || fail "ClickHouse on its own file system: $(tail -3 $d/error.log)"
	inc "$TCPRT" fleet init --url $CH --keep forever > /dev/null || fail "fleet init"
	sync
	power_sysctl hold || fail "sysctl"
	start_ingest
	python3 "$GEN" $F/sp 20000 --files 2 > /dev/null
	ship a sp-a --dir $F/sp --once --rate 0 2> $F/ship.err || fail "ship: $(cat $F/ship.err)"
	n=$(lines_in $F/sp)
	wait_settled sp-a
	expect_once sp-a "$n"
	stop_ingest
	CHDIR=$d stop_clickhouse KILL
	cp $F/chp.img $F/chp-lost.img
	power_umount $d/data
	power_sysctl restore
	power_mount $F/chp-lost.img $d/data
	CHDIR=$d start_clickhouse || fail "ClickHouse after the power loss: $(tail -3 $d/error.log)"
	got=$(sql "SELECT count() FROM tcprt.records WHERE host = 'sp-a'") ||
		fail "the store after the power loss: $got"
	diag "the store's power lost: $((n - got)) of the $n records it had acknowledged are gone"
	inc "$TCPRT" ingest --spool $INGEST_SPOOL --state $F/reload.state --frame-master $MASTER \
		--url $CH --once --keep > /dev/null 2> $F/reload.err || fail "reload: $(cat $F/reload.err)"
	wait_settled sp-a
	expect_account sp-a "final $n $n 0 0 0 0 0 0"
	expect_once sp-a "$n"
	CHDIR=$d stop_clickhouse
	power_umount $d/data
	rm -f $F/chp.img $F/chp-lost.img
	start_clickhouse
}

# The central and its loader back on the shared spool ($F/spool).
shared_spool_back() {
	INGEST_SPOOL=
	stop_ingest
	stop_central
	start_central
	start_ingest
}


# A spool file, however old, is kept --retire seconds after its load
# ended (what ClickHouse acknowledged is on its disk by then), not
# removed the moment it is loaded: a file written two hours ago, loaded
# now by an ingest with --retire 10, is there once its rows are, and
# goes later.
case_retire() {
	local r="V6 R ${FP}18000 000001 10.1.0.2:1 10.1.0.1:7100 5000 1000 300 0 1 500 100 300 0 1448"
	mkdir -p $F/rt
	signed > $F/rt/2099010100.frames <<-EOF
		D1 rt-r 1 0 0 2 ${r}|${r}|
	EOF
	touch -d '2 hours ago' $F/rt/2099010100.frames
	signed > $F/rt/2099010101.frames <<-EOF
		D1 rt-r 1 2 0 1 ${r}|
	EOF
	# the newest held as the spool's writer holds the file it writes (a
	# process of its own: flock(1)'s child would keep the lock once
	# flock(1) is killed)
	python3 -c 'import fcntl, sys, time; f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_SH); time.sleep(3600)' \
		$F/rt/2099010101.frames &
	local holder=$!
	wait_until "the writer's lock" eval "grep -q ':$(stat -c %i $F/rt/2099010101.frames) ' /proc/locks"
	# not start_ingest: it keeps every file
	detach $F/rt.log ip netns exec fleetc "$TCPRT" ingest --spool $F/rt \
		--frame-master $MASTER --url $CH --interval 0.2 --retire 10
	WAIT_S=$SETTLE_S wait_until "rt-r's rows loaded" store_has rt-r 3 || fail "ingest: $(cat $F/rt.log)"
	[ -e $F/rt/2099010100.frames ] || fail "the old file removed as soon as it was loaded"
	WAIT_S=$SETTLE_S wait_until "the old file retired" eval "[ ! -e $F/rt/2099010100.frames ]" ||
		fail "the old file kept: $(ls $F/rt)"
	[ -e $F/rt/2099010101.frames ] || fail "the file the writer holds removed"
	# let go of, it is retired too, the newest though it is
	kill $holder
	WAIT_S=$SETTLE_S wait_until "the newest file retired once no writer holds it" \
		eval "[ ! -e $F/rt/2099010101.frames ]" || fail "kept: $(ls $F/rt)"
	pkill -f "$TCPRT ingest --spool $F/rt " || true
}


# Retention, on a store of its own: a new store's defaults (records 30d,
# the others 90d); fleet init --keep changes them; fleet expire --dry-run
# says what would go and changes nothing; fleet expire drops the days
# older than the limit - records by their own time, the others by arrival
# - and keeps the rest, row for row; a table without partitions
# (bad_messages) loses its older rows by ALTER DELETE; run again it finds
# nothing; forever keeps all.
case_retention() {
	local now d40 d10 d100 d50
	now=$(sql "SELECT toUInt32(now())")
	d40=$((now - 40 * 86400)); d10=$((now - 10 * 86400))
	d100=$((now - 100 * 86400)); d50=$((now - 50 * 86400))
	stop_ingest
	sql "DROP DATABASE IF EXISTS tcprt" > /dev/null
	inc "$TCPRT" fleet init --url $CH > $F/keep.out || fail "fleet init: $(cat $F/keep.out)"
	inc "$TCPRT" fleet init --url $CH > $F/keep.out || fail "fleet init again: $(cat $F/keep.out)"
	expect_eq "$(sed -n 2p $F/keep.out)" \
		"retention: records 30d, controls 90d, cpu_accounts 90d, bad_messages 90d (tcprt fleet expire drops what is older; fleet init --keep changes it)" \
		"a new store's retention, unchanged by init without --keep"
	sql "INSERT INTO tcprt.records (host, epoch, seq, valid, line, type, port, sec) SELECT 'rt-a', 1, number, 1, 'x', 'R', 7100, multiIf(number < 20, toUInt64($d40 + number), number < 50, toUInt64($d10 + number), toUInt64($now - 100 + number)) FROM system.numbers LIMIT 60"
	sql "INSERT INTO tcprt.controls (host, epoch, ctl_seq, received) VALUES ('rt-a', 1, 1, toDateTime($d100)), ('rt-a', 1, 2, toDateTime($d50)), ('rt-a', 1, 3, toDateTime($d50)), ('rt-a', 1, 4, now())"
	sql "INSERT INTO tcprt.cpu_accounts (host, epoch, ctl_seq, received, load_id, cpu) VALUES ('rt-a', 1, 1, toDateTime($d100), 5, 0), ('rt-a', 1, 2, now(), 5, 0)"
	sql "INSERT INTO tcprt.bad_messages (received, file, offset, reason, message) VALUES (toDateTime($d100), 'rt-a', 1, 'old', 'm'), (now(), 'rt-a', 2, 'new', 'm')"
	inc "$TCPRT" fleet init --url $CH --keep 30d > $F/keep.out || fail "--keep 30d: $(cat $F/keep.out)"
	inc "$TCPRT" fleet init --url $CH --keep controls=60d,cpu_accounts=60d,bad_messages=60d > $F/keep.out ||
		fail "--keep per table: $(cat $F/keep.out)"
	expect_eq "$(sed -n 2p $F/keep.out)" \
		"retention: records 30d, controls 60d, cpu_accounts 60d, bad_messages 60d (tcprt fleet expire drops what is older; fleet init --keep changes it)" \
		"retention set, per table"
	rt_rows() { sql "SELECT (SELECT count() FROM tcprt.records WHERE host = 'rt-a'), (SELECT count() FROM tcprt.controls WHERE host = 'rt-a'), (SELECT count() FROM tcprt.cpu_accounts WHERE host = 'rt-a'), (SELECT count() FROM tcprt.bad_messages WHERE file = 'rt-a')"; }
	expect_eq "$(rt_rows)" "60	4	2	2" "rt-a's rows before"
	inc "$TCPRT" fleet expire --url $CH --dry-run > $F/exp.out || fail "expire --dry-run: $(cat $F/exp.out)"
	grep -q "^tcprt.records: kept 30d: [0-9]* partitions\? would be dropped (" $F/exp.out || fail "dry run: $(cat $F/exp.out)"
	grep -q "^tcprt.bad_messages: kept 60d: 1 row would be deleted (no partitions" $F/exp.out || fail "dry run: $(cat $F/exp.out)"
	expect_eq "$(rt_rows)" "60	4	2	2" "rt-a's rows after a dry run"
	inc "$TCPRT" fleet expire --url $CH > $F/exp.out || fail "expire: $(cat $F/exp.out)"
	sed 's/^/# /' $F/exp.out
	grep -q "^tcprt.controls: kept 60d: [0-9]* partitions\? dropped (" $F/exp.out || fail "expire: $(cat $F/exp.out)"
	WAIT_S=$SETTLE_S wait_until "bad_messages' older row deleted" eval \
		'[ "$(sql "SELECT count() FROM tcprt.bad_messages WHERE file = '"'rt-a'"'")" = 1 ]' ||
		fail "bad_messages: $(sql "SELECT reason FROM tcprt.bad_messages WHERE file = 'rt-a'")"
	expect_eq "$(rt_rows)" "40	3	1	1" "rt-a's rows after: those within the limits (the controls of 50 days and of now), all of them"
	expect_eq "$(sql "SELECT min(seq), max(seq) FROM tcprt.records WHERE host = 'rt-a'")" "20	59" "the records kept: the 10 and 0 days old"
	inc "$TCPRT" fleet expire --url $CH > $F/exp.out || fail "expire again: $(cat $F/exp.out)"
	expect_eq "$(grep -c ': nothing older$' $F/exp.out)" 4 "expire again: nothing older in any table"
	# gaps over the whole store starts where the records' retention does
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host rt-a > $F/gaps.out || fail "gaps: $(cat $F/gaps.out)"
	grep -q "^the window starts at .*: the records' retention (30d) keeps none older (tcprt fleet init --keep)$" $F/gaps.out ||
		fail "gaps past the retention: $(cat $F/gaps.out)"
	inc "$TCPRT" fleet init --url $CH --keep forever > /dev/null || fail "--keep forever"
	inc "$TCPRT" fleet expire --url $CH > $F/exp.out || fail "expire, forever: $(cat $F/exp.out)"
	expect_eq "$(grep -c ': kept forever$' $F/exp.out)" 4 "forever: every table kept"
	start_ingest
}

# A store of schema 1 (tests/fleet-schema-1.sql, schema.sql as it was) with
# rows as ingest of schema 1 loaded them: gaps and top read it, ingest and
# summary refuse it saying what to run; fleet init upgrades it in place,
# its rows as they were (and without the breakdown, though a line has it);
# an upgrade stopped halfway (columns added, the version still 1) is
# completed by the next fleet init; a third adds nothing.  Run last: it
# drops the store.
case_upgrade() {
	local v1 before i line up="run 'tcprt fleet init --url $CH' to upgrade the schema from 1 to 6"
	v1="host, epoch, seq, received, valid, line, cpu, type, source, role, port, sec, usec, time, peer_addr, peer_port, local_addr, local_port, sent_bytes, recv_bytes, retrans, metrics, duration, process, upload, download, min_rtt"
	stop_ingest
	sql "DROP DATABASE IF EXISTS tcprt" > /dev/null
	sql_file "$TOP/tools/tcprt/tests/fleet-schema-1.sql" || fail "schema 1"
	expect_eq "$(sql "SELECT value FROM tcprt.meta FINAL WHERE key = 'schema'")" 1 "the store's version"
	for i in 0 1 2; do
		line=$(printf "V6 R ${FP}21000 %06d 10.1.0.2:40000 10.1.0.1:7100 5000 1000 300 0 %d 500 100 300 0 1448" \
			$((i + 1)) $((i + 1)))
		# the second line carries the time breakdown
		if [ $i = 1 ]; then
			line="$line rq_wait=100 app=300 sq_wait=100 rwnd_limited=50 sndbuf_limited=0 app_limited=100"
		fi
		sql "INSERT INTO tcprt.records (host, epoch, seq, valid, line, cpu, type, source, role, port, sec, usec, peer_addr, peer_port, local_addr, local_port, sent_bytes, recv_bytes, retrans, metrics, duration, process, upload, download, min_rtt) VALUES ('v1-a', 11, $i, 1, '$line', 0, 'R', 'tcp_rt', 'server', 7100, ${FP}21000, $((i + 1)), '10.1.0.2', 40000, '10.1.0.1', 7100, 5000, 300, 0, 31, 1000, 500, 100, 400, 300)"
	done
	sql "INSERT INTO tcprt.controls (host, epoch, ctl_seq, start_us, now_us, next_seq, cap_dropped, refused, bad_lines, module_known, overwritten_start, overwritten, sampled_out_start, sampled_out, final) VALUES ('v1-a', 11, 1, ${FP}21000000000, ${FP}21010000000, 3, 0, 0, 0, 0, 0, 0, 0, 0, 1)"
	before=$(sql "SELECT $v1 FROM tcprt.records FINAL WHERE host = 'v1-a' ORDER BY seq FORMAT TabSeparated")
	expect_eq "$(echo "$before" | wc -l)" 3 "rows of schema 1"

	# what reads schema 1, and what refuses it
	expect_account v1-a "final 3 3 0 0 0 0 0 0"
	inc "$TCPRT" fleet top --url $CH --host v1-a --since ${FP}21000 --until ${FP}21010 --format csv > $F/v1.top ||
		fail "fleet top on schema 1"
	expect_eq "$(wc -l < $F/v1.top)" 4 "fleet top on schema 1: a header and 3 tasks"
	inc "$TCPRT" fleet summary --url $CH --host v1-a --since ${FP}21000 --until ${FP}21010 > /dev/null 2> $F/err &&
		fail "fleet summary on schema 1: exit 0"
	grep -q "is version 1, older than this needs (2): $up" $F/err || fail "fleet summary on schema 1: $(cat $F/err)"
	inc "$TCPRT" ingest --spool $F/spool --frame-master $MASTER --url $CH --once > /dev/null 2> $F/err &&
		fail "ingest on schema 1: exit 0"
	grep -q "^tcprt: ingest: the tcprt schema in ClickHouse at $CH is version 1, older than this needs (4): $up" $F/err ||
		fail "ingest on schema 1: $(cat $F/err)"

	# the upgrade
	inc "$TCPRT" fleet init --url $CH > $F/init.out 2>&1 || fail "fleet init: $(cat $F/init.out)"
	sed 's/^/# /' $F/init.out
	grep -q "^tcprt.records: 10 columns added$" $F/init.out || fail "fleet init: $(cat $F/init.out)"
	grep -q "^tcprt.bad_messages: 4 columns added$" $F/init.out || fail "fleet init: $(cat $F/init.out)"
	grep -q "^tcprt.controls: 4 columns added$" $F/init.out || fail "fleet init: $(cat $F/init.out)"
	grep -q "^tcprt schema upgraded from 1 to 6" $F/init.out || fail "fleet init: $(cat $F/init.out)"
	expect_eq "$(sql "SELECT value FROM tcprt.meta FINAL WHERE key = 'schema'")" 6 "the version after fleet init"
	expect_eq "$(store_columns)" "$(schema_columns)" "tcprt.records' columns: those of a new store, in order"
	expect_eq "$(store_columns bad_messages)" "$(schema_columns bad_messages)" \
		"tcprt.bad_messages' columns: those of a new store, in order"
	expect_eq "$(store_columns controls)" "$(schema_columns controls)" \
		"tcprt.controls' columns: those of a new store, in order"
	expect_eq "$(sql "SELECT count(), sum(numbered), sum(rseq + load_id) FROM tcprt.records FINAL WHERE host = 'v1-a'")" \
		"3	0	0" "schema 4's columns in the rows of schema 1: 0"
	expect_eq "$(sql "SELECT sent_seq, interval_us, sent_known FROM tcprt.controls FINAL WHERE host = 'v1-a'")" \
		"0	0	0" "schema 4's columns in the control row of schema 1: 0, sent_seq not known"
	# the store has no numbered row of the host: its epoch's account alone
	inc "$TCPRT" fleet gaps --since 0 --url $CH --host v1-a > $F/v1.gaps || fail "gaps after the upgrade"
	grep -q " by epoch" $F/v1.gaps || fail "gaps after the upgrade: $(cat $F/v1.gaps)"
	if grep -q "by module seq" $F/v1.gaps; then fail "gaps: an account by module seq without numbered rows"; fi
	expect_eq "$(sql "SELECT $v1 FROM tcprt.records FINAL WHERE host = 'v1-a' ORDER BY seq FORMAT TabSeparated")" \
		"$before" "the rows of schema 1 after the upgrade"
	expect_eq "$(sql "SELECT count(), sum(breakdown), sum(rq_wait + app + sq_wait + rwnd_limited + sndbuf_limited + app_limited) FROM tcprt.records FINAL WHERE host = 'v1-a'")" \
		"3	0	0" "the new columns in the rows of schema 1: 0"
	expect_account v1-a "final 3 3 0 0 0 0 0 0"
	inc "$TCPRT" fleet summary --url $CH --host v1-a --since ${FP}21000 --until ${FP}21010 > $F/v1.sum 2> $F/err ||
		fail "fleet summary after the upgrade: $(cat $F/err)"
	expect_eq "$(grep -c '^7100 ' $F/v1.sum)" 5 "fleet summary after the upgrade: the row of 7100"
	if grep -q "where the time goes" $F/v1.sum; then fail "a block from rows of schema 1"; fi

	# stopped halfway: the last columns of records and controls missing,
	# the version still 1
	sql "ALTER TABLE tcprt.records DROP COLUMN rseq, DROP COLUMN numbered"
	sql "ALTER TABLE tcprt.controls DROP COLUMN sent_known, DROP COLUMN central"
	sql "INSERT INTO tcprt.meta (key, value) VALUES ('schema', '1')"
	inc "$TCPRT" fleet init --url $CH > $F/init.out 2>&1 || fail "fleet init, stopped halfway: $(cat $F/init.out)"
	grep -q "^tcprt.records: 2 columns added$" $F/init.out || fail "fleet init, stopped halfway: $(cat $F/init.out)"
	grep -q "^tcprt.controls: 2 columns added$" $F/init.out || fail "fleet init, stopped halfway: $(cat $F/init.out)"
	expect_eq "$(store_columns)" "$(schema_columns)" "tcprt.records' columns after an upgrade completed"
	expect_eq "$(store_columns controls)" "$(schema_columns controls)" "tcprt.controls' columns after an upgrade completed"
	expect_eq "$(sql "SELECT value FROM tcprt.meta FINAL WHERE key = 'schema'")" 6 "the version after an upgrade completed"
	inc "$TCPRT" fleet init --url $CH > $F/init.out 2>&1 || fail "fleet init, a third time: $(cat $F/init.out)"
	expect_eq "$(cat $F/init.out)" "tcprt schema 6 ready in ClickHouse at $CH
retention: records forever, controls forever, cpu_accounts forever, bad_messages forever (tcprt fleet expire drops what is older; fleet init --keep changes it)" \
		"fleet init on schema 6, upgraded: everything kept until told"
	expect_eq "$(sql "SELECT $v1 FROM tcprt.records FINAL WHERE host = 'v1-a' ORDER BY seq FORMAT TabSeparated")" \
		"$before" "the rows of schema 1 at the end"
	start_ingest
}

# what a run cut short left (a test killed at its timeout): its daemons
# and namespaces
teardown > /dev/null 2>&1
rm -rf $F
mkdir -p $F/spool
make_tls || { echo "not ok 1 - make-certs.sh failed"; exit 1; }
make_net
start_clickhouse || { echo "not ok 1 - ClickHouse did not start: $(tail -5 $F/ch/error.log $F/ch/stdout)"; teardown; exit 1; }
# the cases' records are a day or two old (FLEET_T0, fleet-lib.sh), some
# rows written here older: kept whatever the date
inc "$TCPRT" fleet init --url $CH --keep forever > /dev/null
start_central
start_sender a
start_sender b
start_ingest

# What a failed case may leave for the next (selftests/lib.sh runs this
# after every case): ClickHouse down, tcprt.controls renamed away
# (case_store_refuses), the central's rsyslogd down, its loader stopped
# (the cases that stop it start it again at their end, which a failure
# skips: the next case then found nothing loaded).
case_cleanup() {
	# a failed fault_run's load, started in a subshell of the case
	pkill -f "$TCPRT ship " 2> /dev/null
	pkill -f "$GEN " 2> /dev/null
	# host a's rsyslog as shipped (case_spool_full's is its own)
	if ! { [ -f $F/a/pid ] && kill -0 "$(cat $F/a/pid)" 2> /dev/null; } ||
	   grep -q 'timeoutEnqueue="600000"' $F/a/snippet.conf; then
		stop_sender a
		start_sender a
	fi
	ch_up || start_clickhouse
	[ "$(sql "EXISTS TABLE tcprt.controls_away")" = 1 ] &&
		sql "RENAME TABLE tcprt.controls_away TO tcprt.controls" > /dev/null
	[ -f $F/central/pid ] && kill -0 "$(cat $F/central/pid)" 2> /dev/null ||
		start_central
	pgrep -f "$TCPRT ingest --spool $F/spool " > /dev/null || start_ingest
}

# Series runs (docs/series.md, "Always on") through the fleet path: two
# hosts' stores, made by series_gen.py with the same arguments and their
# own values (so both burst at the same instants), shipped with the
# hosts' records.  The truths: the files' lines, and a model here that
# lines the hosts' buckets up from the files.  Every line arrives once,
# byte for byte, in the epochs' accounts with the records; fleet series
# answers as the model, for the host's line and a port's measure, as text
# (both hosts' bursts on one row each) and as a plot; a ship run again
# ships no run again (the position beside its state), a new run alone;
# runs shipped twice (no state) count once; fleet top --series shows the
# buckets around a task, those during it marked: of a run, and of a
# recorder's window shipped apart (its values the file's).
series_model() {	# measure port dir...: "sec,usec,width,host,value" lines
	python3 - "$@" <<-'PY'
		import gzip, os, re, sys
		names = ["bytes_in", "bytes_out", "segs_in", "segs_out", "retrans",
		         "started", "done", "W", "N", "estab", "closed", "open"]
		measure, port, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
		rows = []
		for d in dirs:
		    host = "se-" + d[-1]
		    for n in sorted(os.listdir(d)):
		        w = int(re.match(r"series-\d+(?:\.\d{6})?-(\d+)x", n).group(1))
		        for l in gzip.open(os.path.join(d, n), "rt"):
		            f = l.split()
		            if f[2] != port:
		                continue
		            if measure in names:
		                v = int(f[3 + names.index(measure)])
		            else:
		                v = int(dict(x.split("=") for x in f[15:]).get(measure, 0))
		            rows.append((int(f[0]), int(f[1]), w, host, v))
		for r in sorted(set(rows)):
		    print("%d,%d,%d,%s,%d" % r)
	PY
}

case_series() {
	local t0=${FP}21000 na nb n3 w1 w2 marked
	na=$(python3 "$SGEN" $F/sa --start $t0 --runs 2 --seed 1)
	nb=$(python3 "$SGEN" $F/sb --start $t0 --runs 2 --seed 2)
	mkdir -p $F/sla $F/slb
	# two tasks: one in a run, one in a window of the recorder (below)
	{
		echo "V6 R $((t0 + 60)) 100500 10.0.0.2:40000 10.0.0.1:7700 1000 3000 300 0 1 2500 100 100 0 1448"
		echo "V6 R $((t0 + 130)) 700500 10.0.0.2:40001 10.0.0.1:7700 1000 5000 300 0 1 4500 100 100 0 1448"
	} > $F/sla/rt-network-log0
	: > $F/slb/rt-network-log0
	ship a se-a --dir $F/sla --series $F/sa --state $F/se-a.state --once --rate 0 \
		2> $F/ship.err || fail "ship: $(cat $F/ship.err)"
	grep -q "2 series runs of $F/sa shipped, $na lines" $F/ship.err || fail "ship a: $(cat $F/ship.err)"
	ship b se-b --dir $F/slb --series $F/sb --once --rate 0 2> $F/ship.err ||
		fail "ship: $(cat $F/ship.err)"
	wait_settled se-a
	wait_settled se-b
	expect_account se-a "final $((na + 2)) $((na + 2)) 0 0 0 0 0 0"
	expect_account se-b "final $nb $nb 0 0 0 0 0 0"
	sql "SELECT line FROM tcprt.records FINAL WHERE host = 'se-b' AND type = 'S' ORDER BY seq" > $F/sb.lines
	zcat $(ls $F/sb/series-*.gz | sort) | cmp -s - $F/sb.lines ||
		fail "se-b's rows are not its runs' lines, in order"
	expect_eq "$(sql "SELECT count() FROM tcprt.records FINAL WHERE host = 'se-a' AND type = 'S' AND valid = 1 AND metrics = 0 AND duration = 1000 AND cpu = -1")" \
		"$na" "se-a's series rows: valid, no metric, 1 ms wide, no cpu"

	series_model bytes_in '*' $F/sa $F/sb > $F/model.csv
	inc "$TCPRT" fleet series --url $CH --since $t0 --until $((t0 + 120)) --format csv \
		> $F/fleet.csv || fail "fleet series"
	tail -n +2 $F/fleet.csv | sort -t, -k1,1n -k2,2n -k4,4 | cmp -s - $F/model.csv ||
		fail "fleet series differs from the model: $(diff <(tail -n +2 $F/fleet.csv) $F/model.csv | head -5)"
	series_model ce_bytes 7700 $F/sa $F/sb > $F/model.csv
	inc "$TCPRT" fleet series --url $CH --since $t0 --until $((t0 + 120)) --port 7700 \
		--measure ce_bytes --format csv > $F/fleet.csv || fail "fleet series --port 7700"
	tail -n +2 $F/fleet.csv | sort -t, -k1,1n -k2,2n -k4,4 | cmp -s - $F/model.csv ||
		fail "fleet series --port 7700 --measure ce_bytes differs from the model"
	inc "$TCPRT" fleet series --url $CH --since $t0 --until $((t0 + 120)) > $F/fleet.txt ||
		fail "fleet series, text"
	head -1 $F/fleet.txt | grep -q "se-a.*se-b" || fail "header: $(head -1 $F/fleet.txt)"
	# both hosts burst every 50th bucket: 10 a run, side by side
	expect_eq "$(awk 'NR > 1 && $3 >= 64000 && $4 >= 64000' $F/fleet.txt | wc -l)" 20 \
		"rows with both hosts' bursts"
	inc "$TCPRT" fleet series --url $CH --since $t0 --until $((t0 + 120)) --plot $F/s.png ||
		fail "fleet series --plot"
	expect_eq "$(head -c 4 $F/s.png | tail -c 3)" PNG "the plot"

	ship a se-a --dir $F/sla --series $F/sa --state $F/se-a.state --once --rate 0 \
		2> $F/ship.err || fail "ship: $(cat $F/ship.err)"
	grep -q "0 series runs of $F/sa shipped" $F/ship.err || fail "shipped again: $(cat $F/ship.err)"
	n3=$(python3 "$SGEN" $F/sa3 --start $((t0 + 120)) --seed 3)
	mv $F/sa3/series-*.gz $F/sa/
	ship a se-a --dir $F/sla --series $F/sa --state $F/se-a.state --once --rate 0 \
		2> $F/ship.err || fail "ship: $(cat $F/ship.err)"
	grep -q "1 series runs of $F/sa shipped, $n3 lines" $F/ship.err ||
		fail "the new run: $(cat $F/ship.err)"
	# two windows of the recorder in one second (docs/series.md, "The
	# recorder's windows on disk"): both shipped, the second not taken
	# for shipped with the first's second (the position's microseconds)
	w1=$(python3 "$SGEN" $F/sa4 --start-us $(((t0 + 130) * 1000000 + 100000)) --buckets 300 --seed 4)
	w2=$(python3 "$SGEN" $F/sa4 --start-us $(((t0 + 130) * 1000000 + 600000)) --buckets 300 --seed 5)
	mv $F/sa4/series-*.gz $F/sa/
	ship a se-a --dir $F/sla --series $F/sa --state $F/se-a.state --once --rate 0 \
		2> $F/ship.err || fail "ship: $(cat $F/ship.err)"
	grep -q "2 series runs of $F/sa shipped, $((w1 + w2)) lines" $F/ship.err ||
		fail "two windows of one second: $(cat $F/ship.err)"
	grep -qx "$((t0 + 130)).600001" $F/se-a.state.series ||
		fail "the position: $(cat $F/se-a.state.series)"

	ship b se-b --dir $F/slb --series $F/sb --once --rate 0 2> $F/ship.err ||
		fail "ship: $(cat $F/ship.err)"
	WAIT_S=$SETTLE_S wait_until "se-b's runs stored twice" store_has se-b $((2 * nb)) ||
		fail "ingest: $(tail -3 $F/ingest.log)"
	series_model bytes_in '*' $F/sb > $F/model.csv
	inc "$TCPRT" fleet series --url $CH --host se-b --since $t0 --until $((t0 + 120)) \
		--format csv > $F/fleet.csv || fail "fleet series"
	tail -n +2 $F/fleet.csv | sort -t, -k1,1n -k2,2n -k4,4 | cmp -s - $F/model.csv ||
		fail "runs shipped twice do not count once"

	inc "$TCPRT" fleet top --url $CH --host se-a --since $t0 --until $((t0 + 120)) -n 1 \
		--series > $F/top.txt || fail "fleet top --series"
	sed 's/^/# /' $F/top.txt | head -12
	# the task: 100.5 ms after t0 + 60, 3 ms; 1 ms buckets: 4 of the host's
	# line overlap it, 24 lie within 10 ms of it
	expect_eq "$(grep -cE '^ +\*? *[^ ]+ +\* ' $F/top.txt)" 24 "the host's rows around the task"
	marked=$(grep -cE '^ +\* +[^ ]+ +\* ' $F/top.txt)
	expect_eq "$marked" 4 "the host's rows during the task, marked"
	# the task in the second window (t0 + 130.6 s, 300 x 1 ms), shipped
	# apart from runs: 700.5 ms after t0 + 130, 5 ms; 6 of the host's rows
	# overlap it, 26 lie within 10 ms of it, all of that window
	WAIT_S=$SETTLE_S wait_until "se-a's windows stored" store_has se-a $((na + 2 + n3 + w1 + w2)) ||
		fail "ingest: $(tail -3 $F/ingest.log)"
	inc "$TCPRT" fleet top --url $CH --host se-a --since $((t0 + 125)) --until $((t0 + 135)) \
		-n 1 --series --format json > $F/top.json || fail "fleet top --series, a window"
	series_model bytes_in '*' $F/sa > $F/model.csv
	python3 - $F/top.json $F/model.csv $((t0 + 130)) <<-'PY' > $F/top.out || fail "$(cat $F/top.out)"
		import json, sys
		model, t = sys.argv[2], int(sys.argv[3])
		task = json.loads(open(sys.argv[1]).readline())	# a task a line
		rows = [r for r in task["series"] if r["port"] == "*"]
		want = [(int(l.split(",")[1]), int(l.split(",")[4])) for l in open(model)
		        if int(l.split(",")[0]) == t and 690000 <= int(l.split(",")[1]) <= 715000]
		got = [(r["usec"], r["bytes_in"]) for r in rows if r["sec"] == t]
		marked = [r["usec"] for r in rows if r["in_task"]]
		print(f"{len(rows)} rows of the host's line around the window's task, "
		      f"{len(marked)} marked ({min(marked)} to {max(marked)} us), "
		      f"{len(want)} in the model")
		sys.exit(not (len(rows) == 26 and got == want and marked == list(range(700000, 706000, 1000))))
	PY
	diag "$(cat $F/top.out)"
}

run_case "fleet: clear errors: store unreachable, schema missing or of another version, a second loader; fleet init" case_errors
run_case "fleet: real traffic on two hosts, live and recorded: every record once, byte for byte" case_real_traffic
run_case "fleet: the agent in place of ship: its ship, text file, OTLP and windows, fed by one reading of the module under wrk for 60 s, each have every record the module wrote, every request in nginx's log" case_agent
run_case "fleet: the agent's faults: a windows client that never reads, the OTLP receiver away 20 s, [windows] removed and added by SIGHUP - the other sinks still have every record, the window added again each since" case_agent_faults
run_case "fleet: the cap drops exactly the records a token-bucket model drops, told as cap" case_cap
run_case "fleet: central rsyslog killed (SIGKILL) and restarted mid-run, the agent sending through its queue: nothing lost, nothing twice, nothing refused" case_central_killed
run_case "fleet: ClickHouse killed and restarted mid-run: nothing lost, nothing twice" case_clickhouse_restarted
run_case "fleet: a host's link to the central cut for 10 s, the agent sending through its queue: nothing lost, nothing refused" case_link_cut
run_case "fleet: the central's spool fills mid-run: its writer refuses, nothing acknowledged is lost, no torn line; all arrives once space is freed" case_spool_full
run_case "fleet: the loader killed mid-batch, then the spool loaded twice: nothing lost, nothing twice" case_ingest_killed
run_case "fleet: an impostor at the central's address (a certificate of the fleet's CA, another name): omrelp disables its action, the watchdog restarts rsyslogd, the real central back - every record stored once, or told as transport if a restart had to kill" case_impostor
run_case "fleet: the agent in place of ship, its send queue the default: the central's spool fills mid-run - nothing acknowledged lost, nothing refused; all arrives once space is freed" case_agent_spool_full
run_case "fleet: the spool at its bound mid-run: refused, the full file retired once loaded, then taken again in the same hour - every record once; a later hour's file beside the held one: the held one kept, every record once" case_spool_bound
run_case "fleet: an ended epoch's last control message replayed: the store has it, ingest does not load it again, the epoch stays ended" case_replay
run_case "fleet: the loader stalled while a live sender's control messages arrive: the epoch open, its unsent in flight, not SENDER, said why; the loader back, it ends once silent past --ended-after" case_loader_stalled
run_case "fleet: negative control: a memory-queued central killed loses records, told exactly as transport loss" case_negative_control
run_case "fleet: malformed and vendor lines, an unknown host, controls out of order, a clock step, a bad spool line" case_bad_input
run_case "fleet: one host's records spread over 16,000 days: those beyond --max-age or a day ahead malformed at their arrival, the rows in at most 31 daily partitions, the load ends" case_time_spread
run_case "fleet: gaps over a window: from what each epoch had not handed over at its start, by epoch and by module seq, as a model says; windows switched back and forth" case_gaps_window
run_case "fleet: summary as tcprt summary computes it; top" case_queries
run_case "fleet: series runs of two hosts shipped with their records: every line once, accounted; fleet series lines them up as a model; a run shipped once per position, twice counted once; top --series in a run and in a window" case_series
run_case "fleet: the time breakdown: each row as its line says; summary's table and blocks are tcprt summary's" case_breakdown
run_case "fleet: a load ClickHouse refuses for some rows: those alone in bad_messages, counted as STORE, the rest and the loads after stored; a store failing as a whole: held, then loaded" case_store_refuses
run_case "fleet: the store's password from a file, the environment or systemd's credentials, never in the URL, ps or a message; 0600 state, 0640 spool, links not followed" case_secrets
run_case "fleet: TLS and signatures: senders without a certificate, not permitted, or of another CA deliver nothing; messages claiming another host's id are refused, counted for it" case_identity
run_case "fleet: two machines under one host id: two accounts, told as concurrent; a restart is not" case_clones
run_case "fleet: records numbered by the module: D2 and L1 loaded, each number's fate told by module seq; final 2 closes an epoch, a silent one ends, what it had not sent is SENDER; the share reached; bad L1s refused" case_numbered
run_case "fleet: ship SIGKILLed again and again under load, the module numbering its records: made = stored + the losses gaps names by module seq, cause by cause" case_ship_killed_live
run_case "fleet: a host's power lost in an outage, its writeback held off: what its queue had synced arrives, the rest told as transport, within the bound (memory part and checkpoint interval); without checkpoints or sync the disk part is lost too" case_host_power_lost
run_case "fleet: the store's power lost, its writeback held off: the rows it had acknowledged and not synced are gone, the spool kept loads them again: every record once" case_store_power_lost
run_case "fleet: ingest keeps a spool file --retire seconds after its load ended, however old the file, and while the spool's writer holds it" case_retire
run_case "fleet: retention: a new store's defaults, --keep per table, expire --dry-run changes nothing, expire drops the days past the limit and keeps the rest row for row, a table without partitions by ALTER DELETE, forever keeps all" case_retention
run_case "fleet: a store of schema 1: gaps and top read it, ingest and summary say to upgrade; fleet init upgrades it in place, keeps its rows, completes an upgrade stopped halfway" case_upgrade

teardown
done_testing
