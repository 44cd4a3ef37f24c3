#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tcprt export --otlp against a real OTLP receiver on this host: Debian 13's
# VictoriaMetrics (scripts/otel-deps unpacks it into the cache), started
# here on 127.0.0.1 with -opentelemetry.usePrometheusNaming, fed by tcprt
# export --dir over record files the test writes, queried back with PromQL:
#   - task counts per type, failures, bytes both ways, retransmissions and
#     connections equal the records written, exactly;
#   - histogram_quantile() of the durations lies in the bucket of the exact
#     p50, p90 and p99;
#   - VictoriaMetrics stopped mid-run, more records written, started
#     again: the totals still equal every record (cumulative: a lost
#     request loses no count), the failed requests were counted (stderr,
#     the textfile, the OTLP self-metric), the collector said away and back;
#   - --otlp-exponential: VictoriaMetrics' vmrange buckets, quantiles in the
#     exact value's scale-3 bucket;
#   - --otlp-logs RATE against a collector of ours: RATE records sent, the
#     rest counted exactly; --otlp-header-file's header sent;
#   - a collector answering 400 (dropped, said), 503 (retried with backoff
#     while the queue of 16 overflows: the oldest dropped, counted);
#   - over TLS to a collector of ours that asks for a client certificate:
#     delivered with --otlp-ca and --otlp-cert/--otlp-key, refused without
#     the certificate or with another CA.
# Skipped (TAP skip) when tcprt was built without OTLP or VictoriaMetrics
# is not there.  Prints TAP.
set -u
cd "$(dirname "$0")/.." || exit 1
TCPRT=$PWD/tcprt
TOP=$(cd ../.. && pwd)
. "$TOP/tools/tcprt/tests/victoria-lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/tcprt-otlp.XXXXXX")
EXP_PID='' LOGS_PID='' NEVER_PID=''

cleanup() {
	[ -n "$EXP_PID" ] && kill "$EXP_PID" 2> /dev/null && wait "$EXP_PID" 2> /dev/null
	[ -n "$VMETRICS_PID" ] && vmetrics_stop
	[ -n "$LOGS_PID" ] && kill "$LOGS_PID" 2> /dev/null && wait "$LOGS_PID" 2> /dev/null
	[ -n "$NEVER_PID" ] && kill "$NEVER_PID" 2> /dev/null && wait "$NEVER_PID" 2> /dev/null
	true
	rm -rf "$T"
}
trap cleanup EXIT

skip() {
	echo "ok 1 - tcprt export --otlp into VictoriaMetrics # SKIP $*"
	echo "1..1"
	exit 0
}

"$TCPRT" export --otlp http://127.0.0.1:1/v1/metrics --dir "$T" > /dev/null 2> "$T/probe"
if grep -q 'built without OTLP' "$T/probe"; then
	skip "$(sed 's/^tcprt: export: --otlp: //' "$T/probe")"
fi
[ -x "$VMETRICS" ] || skip "no VictoriaMetrics at $VMETRICS (scripts/otel-deps fetches it)"
command -v python3 > /dev/null || skip "python3 missing"
command -v curl > /dev/null || skip "curl missing"


# The steps run in this shell, one after the other (each needs the
# daemons the last one left); the first failure ends the test.
n=0
STEP=
step() {
	n=$((n + 1))
	STEP=$1
	T0=$SECONDS
}
pass() {
	echo "# step $n: $((SECONDS - T0)) s"
	echo "ok $n - $STEP"
}
fail() {
	echo "# FAIL: $*"
	echo "not ok $n - $STEP"
	echo "1..$n"
	exit 1
}

# ---- VictoriaMetrics (started, stopped and asked: tests/victoria-lib.sh) --------

# Wait until query $1 answers $2 (at most $3 s).
wait_for() {
	local v=''
	for _ in $(seq $(($3 * 5))); do
		v=$(promql "$1") || v=
		[ "$v" = "$2" ] && return 0
		sleep 0.2
	done
	echo "# $1: $v after $3 s, expected $2"
	return 1
}

# ---- the records -------------------------------------------------------------------

# gen FILE FIRST COUNT: COUNT tasks of every type from number FIRST on, and
# their connections, appended to FILE; the totals so far in $T/totals.
# Durations vary over 100 us .. 60 ms; the R durations also in $T/r_dur.
gen() {
	awk -v first="$2" -v count="$3" -v tot="$T/totals" -v rd="$T/r_dur" '
	BEGIN {
		while ((getline l < tot) > 0) { split(l, kv, "="); t[kv[1]] = kv[2] }
		close(tot)
		for (i = first; i < first + count; i++) {
			sec = 1795218000 + int(i / 100); us = sprintf("%06d", (i % 100) * 1000)
			d = 100 + (i * 7919) % 60000
			pp = 40000 + i % 20000
			re = i % 3; sent = 1000 + i; recv = 200 + i % 50
			# R W N P E, in tcp_rt V6 form (docs/records.md)
			printf "V6 R %d %s 10.0.0.2:%d 10.0.0.1:7100 %d %d 300 %d 1 %d %d %d 0 1448\n",
				sec, us, pp, sent, d, re, int(d / 2), int(d / 10), recv
			print d >> rd
			t["R"]++; t["sent"] += sent; t["recv"] += recv; t["retrans"] += re
			if (i % 4 == 0) {
				printf "V6 W %d %s 10.0.0.2:%d 10.0.0.1:7100 5000 %d 300 2 2 %d 0 1000 1448\n",
					sec, us, pp + 1, d, int(d / 2)
				t["W"]++; t["sent"] += 5000; t["retrans"] += 2
			}
			if (i % 5 == 0) {
				printf "V6 N %d %s 10.0.0.2:%d 10.0.0.1:7100 3 %d 400 0 1448\n",
					sec, us, pp + 2, d
				t["N"]++; t["recv"] += 400
			}
			if (i % 2 == 0) {
				printf "V6 P %d %s 10.0.0.3:6379 10.0.0.1:%d 300 %d 200 1 1 %d %d 4000 0 1448\n",
					sec, us, pp + 3, d, int(d / 2), int(d / 4)
				t["P"]++; t["psent"] += 300; t["precv"] += 4000; t["retrans"] += 1
			}
			if (i % 10 == 0) {
				printf "V6 E %d %s 10.0.0.2:%d 10.0.0.1:7100 3 10000 1000 700 1 300\n",
					sec, us, pp
				t["E"]++
			}
		}
		for (k in t) print k "=" t[k] > tot
	}' >> "$1"
}

tot() {	# the total named $1 so far
	sed -n "s/^$1=//p" "$T/totals"
}

# The totals in VictoriaMetrics equal those written (all of them now).
check_totals() {
	local all=$(($(tot R) + $(tot W) + $(tot N) + $(tot P)))
	wait_for 'sum(tcp_rt_tasks_total)' "$all" 30 || fail "not every task arrived"
	expect 'sum(tcp_rt_tasks_total{tcp_rt_task_type="R",tcp_rt_role="server",server_port="7100"})' "$(tot R)"
	expect 'sum(tcp_rt_tasks_total{tcp_rt_task_type="W"})' "$(tot W)"
	expect 'sum(tcp_rt_tasks_total{tcp_rt_task_type="N"})' "$(tot N)"
	expect 'sum(tcp_rt_tasks_total{tcp_rt_task_type="P",tcp_rt_role="client",server_port="6379"})' "$(tot P)"
	expect 'sum(tcp_rt_task_failures_total)' "$(($(tot W) + $(tot N)))"
	expect 'sum(tcp_rt_connections_total)' "$(tot E)"
	expect 'sum(tcp_rt_io_bytes_total{network_io_direction="transmit"})' "$(($(tot sent) + $(tot psent)))"
	expect 'sum(tcp_rt_io_bytes_total{network_io_direction="receive"})' "$(($(tot recv) + $(tot precv)))"
	expect 'sum(tcp_rt_retransmissions_total)' "$(tot retrans)"
	expect 'sum(tcp_rt_task_duration_seconds_count{tcp_rt_task_type="R"})' "$(tot R)"
	expect 'sum(tcprt_records_read_total)' "$((all + $(tot E)))"
}

expect() {	# query value
	local v
	v=$(promql "$1") || fail "$1: no answer"
	[ "$v" = "$2" ] || fail "$1: $v, expected $2"
	echo "# $1 = $v"
}

# histogram_quantile() of the R durations lies in the r10 bucket of the
# exact value, (lower bound, upper bound].
check_quantiles() {
	local p est
	for p in 0.5 0.9 0.99; do
		est=$(promql "histogram_quantile($p, sum by (le) (tcp_rt_task_duration_seconds_bucket{tcp_rt_task_type=\"R\"}))")
		python3 - "$T/r_dur" "$p" "$est" <<-'PY' || fail "p$p"
			import math, sys
			d = sorted(int(l) for l in open(sys.argv[1]))
			p, est = float(sys.argv[2]), float(sys.argv[3])
			exact = d[max(0, math.ceil(len(d) * p) - 1)] / 1e6
			mant = [1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8]
			bounds = [m * 10 ** e for e in range(-5, 2) for m in mant] + [100]
			hi = min(b for b in bounds if b >= exact - 1e-12)
			lo = max([b for b in bounds if b < hi - 1e-12] or [0])
			ok = lo - 1e-9 <= est <= hi + 1e-9
			print(f"# p{p}: exact {exact} s, histogram_quantile {est} s, bucket ({lo}, {hi}]")
			sys.exit(0 if ok else 1)
		PY
	done
}

# ---- the steps -------------------------------------------------------------------

D=$T/d
PROM=$T/prom/tcprt.prom

step "export --otlp: VictoriaMetrics' totals equal the records; quantiles in their bucket"
vmetrics_start "$T" || fail "victoria-metrics did not start"
URL=$(vmetrics_url)
mkdir -p "$D" "$T/prom"
: > "$T/totals"
gen "$D/rt-network-log0" 0 1500
gen "$D/rt-network-log1" 1500 1000
"$TCPRT" export --dir "$D" --otlp "$URL" --textfile "$PROM" --interval 0.5 \
	2> "$T/export.err" &
EXP_PID=$!
check_totals
check_quantiles
pass

step "export --otlp: the collector away: failed requests said and counted"
vmetrics_stop
gen "$D/rt-network-log0" 2500 700
gen "$D/rt-network-log1" 3200 300
for _ in $(seq 100); do
	grep -q 'collector away' "$T/export.err" &&
		awk '/^tcprt_otlp_requests_failed_total/ { exit !($2 >= 2) }' "$PROM" && break
	sleep 0.1
done
grep 'collector away' "$T/export.err" | sed 's/^/# /' | grep . > /dev/null ||
	fail "no 'collector away' line: $(cat "$T/export.err")"
grep 'collector away' "$T/export.err" | sed 's/^/# /'
f=$(awk '/^tcprt_otlp_requests_failed_total/ { print $2 }' "$PROM")
[ "${f:-0}" -ge 2 ] || fail "textfile: tcprt_otlp_requests_failed_total ${f:-none}, expected >= 2"
echo "# textfile while away: tcprt_otlp_requests_failed_total $f"
pass

step "export --otlp: the collector back: every record counted, the failures too"
sleep 1
vmetrics_start "$T" "$VMETRICS_PORT" || fail "victoria-metrics did not start again on $VMETRICS_PORT"
check_totals
check_quantiles
grep -q 'collector back' "$T/export.err" || fail "no 'collector back' line: $(cat "$T/export.err")"
grep 'collector back' "$T/export.err" | sed 's/^/# /'
f=$(promql 'max(tcprt_otlp_requests_failed_total)')
[ "$f" -ge 2 ] || fail "tcprt_otlp_requests_failed_total in VictoriaMetrics: $f"
echo "# VictoriaMetrics: tcprt_otlp_requests_failed_total $f"
kill -TERM "$EXP_PID"
wait "$EXP_PID" || fail "export exited with $?"
EXP_PID=
grep -E 'requests sent, [1-9][0-9]* failed' "$T/export.err" | sed 's/^/# /' | grep . > /dev/null ||
	fail "no summary with the failed requests: $(cat "$T/export.err")"
grep -E 'requests sent' "$T/export.err" | sed 's/^/# /'
if grep -v -e 'collector away' -e 'collector back' -e 'requests sent' "$T/export.err"; then
	fail "other messages on stderr (above)"
fi
vmetrics_stop
pass

step "export --otlp-exponential: VictoriaMetrics' vmrange buckets are tcprt's, quantiles in their bucket"
rm -rf "$T/vm"
vmetrics_start "$T" || fail "victoria-metrics did not start"
URL=$(vmetrics_url)
"$TCPRT" export --once --dir "$D" --otlp "$URL" --otlp-exponential 2> "$T/expo.err" ||
	fail "export --once: $(cat "$T/expo.err")"
wait_for 'sum(tcp_rt_task_duration_seconds_count{tcp_rt_task_type="R"})' "$(tot R)" 30 ||
	fail "the exponential histograms' counts"
for p in 0.5 0.9 0.99; do
	est=$(promql "histogram_quantile($p, sum by (vmrange) (tcp_rt_task_duration_seconds_bucket{tcp_rt_task_type=\"R\"}))")
	python3 - "$T/r_dur" "$p" "$est" <<-'PY' || fail "p$p"
		import math, sys
		d = sorted(int(l) for l in open(sys.argv[1]))
		p, est = float(sys.argv[2]), float(sys.argv[3])
		exact = d[max(0, math.ceil(len(d) * p) - 1)] / 1e6
		i = math.ceil(math.log2(exact) * 8) - 1	# scale 3: base^i < v <= base^(i+1)
		lo, hi = 2 ** (i / 8), 2 ** ((i + 1) / 8)
		# vmrange's labels have 4 digits
		ok = lo * (1 - 1e-3) <= est <= hi * (1 + 1e-3)
		print(f"# p{p}: exact {exact} s, histogram_quantile {est} s, bucket ({lo:.6g}, {hi:.6g}]")
		sys.exit(0 if ok else 1)
	PY
done
pass

step "export --otlp-logs: at most RATE, the rest counted exactly; the header file's header sent"
# a collector of logs: answers 200, notes each request's headers
cat > "$T/logs.py" <<-'PY'
	import http.server, sys
	class H(http.server.BaseHTTPRequestHandler):
	    def do_POST(self):
	        n = int(self.headers["Content-Length"])
	        self.rfile.read(n)
	        with open(sys.argv[2], "a") as f:
	            f.write(f"{self.path} {self.headers['Content-Type']} {self.headers['Authorization']} {n}\n")
	        body = sys.argv[4].encode() if len(sys.argv) > 4 else b""
	        self.send_response(int(sys.argv[3]) if len(sys.argv) > 3 else 200)
	        self.send_header("Content-Length", str(len(body)))
	        self.end_headers()
	        self.wfile.write(body)
	    def log_message(self, *a):
	        pass
	s = http.server.HTTPServer(("127.0.0.1", 0), H)
	open(sys.argv[1], "w").write(str(s.server_port))
	s.serve_forever()
PY
python3 "$T/logs.py" "$T/logs.port" "$T/logs.seen" &
LOGS_PID=$!
for _ in $(seq 50); do [ -s "$T/logs.port" ] && break; sleep 0.1; done
[ -s "$T/logs.port" ] || fail "the logs collector did not start"
echo "Authorization: Bearer not-on-the-command-line" > "$T/auth"
chmod 600 "$T/auth"
"$TCPRT" export --once --dir "$D" --otlp "$URL" --otlp-logs 100 --interval 1 \
	--otlp-logs-url "http://127.0.0.1:$(cat "$T/logs.port")/v1/logs" \
	--otlp-header-file "$T/auth" 2> "$T/logs.err" || fail "export --once: $(cat "$T/logs.err")"
kill "$LOGS_PID"
wait "$LOGS_PID" 2> /dev/null
sed 's/^/# /' "$T/logs.err"
tasks=$(($(tot R) + $(tot W) + $(tot N) + $(tot P)))
grep -q "100 log records sent, $((tasks - 100)) dropped" "$T/logs.err" ||
	fail "expected 100 log records sent, $((tasks - 100)) dropped"
wait_for 'max(tcprt_otlp_log_records_dropped_total)' "$((tasks - 100))" 30 ||
	fail "tcprt_otlp_log_records_dropped_total"
sed 's/^/# collector saw: /' "$T/logs.seen"
[ "$(wc -l < "$T/logs.seen")" = 1 ] || fail "expected one logs request"
grep -q '^/v1/logs application/x-protobuf Bearer not-on-the-command-line [0-9]*$' "$T/logs.seen" ||
	fail "not POSTed to /v1/logs as application/x-protobuf with the header file's Authorization"
vmetrics_stop
pass

step "export --otlp: a refusing collector (400) drops, a busy one (503) is retried; a full queue drops the oldest"
rm -f "$T/logs.port" "$T/logs.seen"
python3 "$T/logs.py" "$T/logs.port" "$T/logs.seen" 400 "bad request, said the collector" &
LOGS_PID=$!
for _ in $(seq 50); do [ -s "$T/logs.port" ] && break; sleep 0.1; done
u=http://127.0.0.1:$(cat "$T/logs.port")/v1/metrics
st=0
"$TCPRT" export --once --dir "$D" --otlp "$u" 2> "$T/400.err" || st=$?
sed 's/^/# /' "$T/400.err"
[ "$st" = 1 ] || fail "--once, its request refused: exit status $st, expected 1"
grep -q 'refuses requests: HTTP 400: bad request, said the collector; dropping them' "$T/400.err" ||
	fail "no 'refuses' line with the collector's answer"
grep -q ': 0 requests sent, 1 failed, 1 dropped$' "$T/400.err" || fail "400: the summary"
kill "$LOGS_PID"
wait "$LOGS_PID" 2> /dev/null
rm -f "$T/logs.port" "$T/logs.seen"
python3 "$T/logs.py" "$T/logs.port" "$T/logs.seen" 503 &
LOGS_PID=$!
for _ in $(seq 50); do [ -s "$T/logs.port" ] && break; sleep 0.1; done
u=http://127.0.0.1:$(cat "$T/logs.port")/v1/metrics
# every 50 ms a request, retried after 1 s, 2 s: the queue of 16 overflows
"$TCPRT" export --dir "$D" --otlp "$u" --textfile "$PROM" --interval 0.05 2> "$T/503.err" &
EXP_PID=$!
sleep 2.5
dropped=$(awk '/^tcprt_otlp_requests_dropped_total/ { print $2 }' "$PROM")
kill -TERM "$EXP_PID"
wait "$EXP_PID" || fail "export exited with $?"
EXP_PID=
kill "$LOGS_PID"
wait "$LOGS_PID" 2> /dev/null
LOGS_PID=
sed 's/^/# /' "$T/503.err"
echo "# textfile after 2.5 s: tcprt_otlp_requests_dropped_total $dropped; the collector saw $(wc -l < "$T/logs.seen") requests"
grep -q 'collector away (.*): HTTP 503; retrying' "$T/503.err" || fail "503: no 'collector away' line"
[ "${dropped:-0}" -ge 10 ] || fail "textfile: ${dropped:-no} requests dropped, expected >= 10 (50 made, 16 queued)"
# a request is sent, failed, or dropped at exit; the collector saw each attempt
python3 - "$T/503.err" "$(wc -l < "$T/logs.seen")" <<-'PY' || fail "503: the summary does not add up"
	import re, sys
	m = re.search(r": (\d+) requests sent, (\d+) failed, (\d+) dropped$", open(sys.argv[1]).read(), re.M)
	sent, failed, dropped = map(int, m.groups())
	print(f"# sent {sent}, failed {failed} (the collector saw {sys.argv[2]}), dropped {dropped}")
	sys.exit(0 if sent == 0 and failed == int(sys.argv[2]) and 2 <= failed <= 5 and dropped >= 20 else 1)
PY
pass

step "export --otlp over TLS: the collector's certificate verified against --otlp-ca, tcprt's own shown with --otlp-cert; a wrong CA or no certificate fails"
sh fleet/make-certs.sh ca "$T/ca" > /dev/null
sh fleet/make-certs.sh ca "$T/other-ca" > /dev/null
TCPRT=$TCPRT sh fleet/make-certs.sh host "$T/ca" localhost "$T/srv" > /dev/null
TCPRT=$TCPRT sh fleet/make-certs.sh host "$T/ca" tcprt-host-1 "$T/cli" > /dev/null
# a collector that takes only clients with a certificate of the CA
cat > "$T/tls.py" <<-'PY'
	import http.server, ssl, sys
	class H(http.server.BaseHTTPRequestHandler):
	    def do_POST(self):
	        self.rfile.read(int(self.headers["Content-Length"]))
	        cn = dict(x[0] for x in self.connection.getpeercert()["subject"])["commonName"]
	        with open(sys.argv[2], "a") as f:
	            f.write(f"{self.path} {cn}\n")
	        self.send_response(200)
	        self.send_header("Content-Length", "0")
	        self.end_headers()
	    def log_message(self, *a):
	        pass
	s = http.server.HTTPServer(("127.0.0.1", 0), H)
	ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
	ctx.load_cert_chain(sys.argv[3] + "/cert.pem", sys.argv[3] + "/key.pem")
	ctx.load_verify_locations(sys.argv[3] + "/ca.pem")
	ctx.verify_mode = ssl.CERT_REQUIRED
	s.socket = ctx.wrap_socket(s.socket, server_side=True)
	open(sys.argv[1], "w").write(str(s.server_port))
	s.serve_forever()
PY
rm -f "$T/tls.port" "$T/tls.seen"
python3 "$T/tls.py" "$T/tls.port" "$T/tls.seen" "$T/srv" 2> "$T/tls.log" &
LOGS_PID=$!
for _ in $(seq 50); do [ -s "$T/tls.port" ] && break; sleep 0.1; done
[ -s "$T/tls.port" ] || fail "the TLS collector did not start: $(cat "$T/tls.log")"
u=https://localhost:$(cat "$T/tls.port")/v1/metrics
"$TCPRT" export --once --dir "$D" --otlp "$u" --otlp-ca "$T/cli/ca.pem" \
	--otlp-cert "$T/cli/cert.pem" --otlp-key "$T/cli/key.pem" 2> "$T/tls.err" ||
	fail "with the CA and a certificate: $(cat "$T/tls.err")"
grep -qx '/v1/metrics tcprt-host-1' "$T/tls.seen" || fail "the collector did not see tcprt-host-1: $(cat "$T/tls.seen")"
echo "# the collector saw: $(cat "$T/tls.seen")"
"$TCPRT" export --once --dir "$D" --otlp "$u" --otlp-ca "$T/cli/ca.pem" 2> "$T/tls.err" &&
	fail "no client certificate, yet delivered"
sed 's/^/# no certificate: /' "$T/tls.err" | head -2
grep -q 'collector away' "$T/tls.err" || fail "no certificate: $(cat "$T/tls.err")"
"$TCPRT" export --once --dir "$D" --otlp "$u" --otlp-ca "$T/other-ca/ca.pem" \
	--otlp-cert "$T/cli/cert.pem" --otlp-key "$T/cli/key.pem" 2> "$T/tls.err" &&
	fail "the collector's certificate of another CA, yet delivered"
sed 's/^/# another CA: /' "$T/tls.err" | head -2
grep -qi 'certificate' "$T/tls.err" || fail "another CA: $(cat "$T/tls.err")"
[ "$(wc -l < "$T/tls.seen")" = 1 ] || fail "the collector took more than the one request"
kill "$LOGS_PID"
wait "$LOGS_PID" 2> /dev/null
LOGS_PID=
pass

step "export --otlp: a collector that takes a request and never answers: the reader goes on reading meanwhile"
# it notes the request, then holds the connection without an answer until
# tcprt's timeout (5 s) closes it, and notes that
cat > "$T/hang.py" <<-'PY'
	import socket, sys
	s = socket.socket()
	s.bind(("127.0.0.1", 0))
	s.listen(8)
	open(sys.argv[1], "w").write(str(s.getsockname()[1]))
	while True:
	    c, _ = s.accept()
	    c.recv(65536)
	    with open(sys.argv[2], "a") as f:
	        f.write("request\n")
	    while c.recv(65536):
	        pass
	    with open(sys.argv[2], "a") as f:
	        f.write("closed\n")
	    c.close()
PY
rm -f "$T/hang.port" "$T/hang.seen"
python3 "$T/hang.py" "$T/hang.port" "$T/hang.seen" &
LOGS_PID=$!
for _ in $(seq 50); do [ -s "$T/hang.port" ] && break; sleep 0.1; done
[ -s "$T/hang.port" ] || fail "the hanging collector did not start"
H=$T/hang
mkdir -p "$H"
: > "$H/rt-network-log0"
"$TCPRT" export --dir "$H" --otlp "http://127.0.0.1:$(cat "$T/hang.port")/v1/metrics" \
	--textfile "$T/hang.prom" --interval 0.2 2> "$T/hang.err" &
EXP_PID=$!
for _ in $(seq 300); do grep -qs '^request$' "$T/hang.seen" && break; sleep 0.1; done
grep -qs '^request$' "$T/hang.seen" || fail "the collector got no request"
# a request unanswered: records come, and the text file has them
printf 'V6 R 1795218000 000000 10.0.0.2:40000 10.0.0.1:7100 100 1000 300 0 1 500 100 200 0 1448\n%.0s' \
	$(seq 25) >> "$H/rt-network-log0"
for _ in $(seq 300); do
	grep -qs '^tcprt_records_read_total 25$' "$T/hang.prom" && break
	sleep 0.1
done
grep -q '^tcprt_records_read_total 25$' "$T/hang.prom" || fail "the text file never had the records"
grep -q '^closed$' "$T/hang.seen" &&
	fail "the request was over before the text file had the records: nothing shown"
echo "# the text file had the 25 records while the collector held the first request"
kill -TERM "$EXP_PID"
wait "$EXP_PID" || fail "export exited with $?"
EXP_PID=
kill "$LOGS_PID"
wait "$LOGS_PID" 2> /dev/null
LOGS_PID=
sed 's/^/# /' "$T/hang.err"
pass

# ---- tcprt agent: one reader, sinks that fail on their own ----------------------

# A key of the agent's status file.
ag_stat() {	# key
	awk -v k="$1" '$1 == k { print $2 }' "$A/agent.status"
}

# Wait until the agent's status file says KEY is at least N (at most 30 s).
ag_wait() {	# key n
	for _ in $(seq 300); do
		[ "$(ag_stat "$1")" -ge "$2" ] 2> /dev/null && return 0
		sleep 0.1
	done
	fail "the agent's $1: $(ag_stat "$1"), expected at least $2"
}

ask_agent() {	# question: the answer of the agent's socket
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
sys.stdout.write(s.makefile("r").readline())
' "$A/live.sock" "$1"
}

step "agent: [metrics] OTLP and text file, [windows] with a client that never reads; the collector away 20 s, [windows] removed and added by SIGHUP: the metrics sink has every record, in the text file and the collector"
if ! "$TCPRT" agent --help | grep -q -- --config; then
	echo "ok $n - $STEP # SKIP tcprt built without inih: no agent"
	echo "1..$n"
	exit 0
fi
A=$T/ag
mkdir -p "$A/d"
rm -rf "$T/vm"
vmetrics_start "$T" || fail "victoria-metrics did not start"
URL=$(vmetrics_url)
: > "$T/totals"
: > "$T/r_dur"
gen "$A/d/rt-network-log0" 0 1000
gen "$A/d/rt-network-log1" 1000 500
conf() {	# with the windows sink or not
	{
		printf '[agent]\ndir = %s\ninterval = 1\nstatus = %s\n' "$A/d" "$A/agent.status"
		printf '[metrics]\notlp = %s\ntextfile = %s\n' "$URL" "$A/agent.prom"
		[ "$1" = windows ] && printf '[windows]\nsocket = %s\n' "$A/live.sock"
	} > "$A/agent.conf"
	chmod 644 "$A/agent.conf"
}
conf windows
"$TCPRT" agent --config "$A/agent.conf" 2> "$A/agent.err" &
EXP_PID=$!
check_totals
for _ in $(seq 100); do ask_agent status 2> /dev/null | grep -q '"ok":true' && break; sleep 0.1; done
# a client that never reads (tests/never_read.py)
python3 tests/never_read.py "$A/live.sock" &
NEVER_PID=$!
ag_wait windows_slow 1
echo "# the windows sink closed the client that never read: windows_slow $(ag_stat windows_slow)"
# the collector away: the text file still gets every record, and the
# windows' socket still answers
vmetrics_stop
away=$SECONDS
gen "$A/d/rt-network-log0" 1500 700
ag_wait metrics_otlp_requests_failed 1
all=$(($(tot R) + $(tot W) + $(tot N) + $(tot P) + $(tot E)))
ag_wait metrics_records "$all"
grep -q "^tcprt_records_read_total $all\$" "$A/agent.prom" ||
	fail "the text file while the collector is away: $(grep records_read "$A/agent.prom")"
ask_agent status | grep -q '"ok":true' || fail "the windows' socket while the collector is away"
echo "# collector away: the text file and the windows have all $all records; $(ag_stat metrics_otlp_requests_failed) requests failed"
# [windows] removed, then added again, by SIGHUP, the collector still away
conf metrics
kill -HUP "$EXP_PID"
for _ in $(seq 100); do [ -e "$A/live.sock" ] || break; sleep 0.1; done
[ ! -e "$A/live.sock" ] || fail "the windows' socket still there after [windows] was removed"
gen "$A/d/rt-network-log1" 2200 300
conf windows
kill -HUP "$EXP_PID"
for _ in $(seq 100); do ask_agent status 2> /dev/null | grep -q '"ok":true' && break; sleep 0.1; done
ask_agent status | grep -q '"ok":true' || fail "the windows' socket after [windows] was added again"
gen "$A/d/rt-network-log0" 2500 200
# the fault's length: 20 s away in all
sleep $((20 - (SECONDS - away) > 0 ? 20 - (SECONDS - away) : 0))
vmetrics_start "$T" "$VMETRICS_PORT" || fail "victoria-metrics did not start again on $VMETRICS_PORT"
check_totals
all=$(($(tot R) + $(tot W) + $(tot N) + $(tot P) + $(tot E)))
kill -TERM "$EXP_PID"
wait "$EXP_PID" || fail "the agent exited with $?"
EXP_PID=
kill "$NEVER_PID" 2> /dev/null
wait "$NEVER_PID" 2> /dev/null
grep -q "^tcprt_records_read_total $all\$" "$A/agent.prom" ||
	fail "the text file at the end: $(grep records_read "$A/agent.prom")"
[ "$(ag_stat records_read)" = "$all" ] && [ "$(ag_stat metrics_records)" = "$all" ] ||
	fail "the status: $(cat "$A/agent.status")"
[ "$(ag_stat metrics_otlp_requests_dropped)" = 0 ] ||
	echo "# requests dropped (queue full while away; cumulative, no count lost): $(ag_stat metrics_otlp_requests_dropped)"
sed 's/^/# /' "$A/agent.err"
vmetrics_stop
pass
echo "1..$n"
