#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tcprt's Grafana dashboards (grafana/): Grafana's import format, the files
# what grafana/make-dashboards.py writes, the Prometheus dashboard's metric
# and label names those tcprt export writes (from sink_metrics.c's tables and
# export --help), the OTLP one's those of the generator's table, every
# expression parsed by promtool (check rules) and, over the series of a
# file export wrote, returning something (test rules).  Prints TAP.
set -u
cd "$(dirname "$0")/.." || exit 1
TCPRT=$PWD/tcprt
G=$PWD/grafana
CHECK=$PWD/tests/grafana_check.py
T=$(mktemp -d "${TMPDIR:-/tmp}/tcprt-grafana.XXXXXX")
trap 'rm -rf "$T"' EXIT

. tests/case-lib.sh

need() {	# command...: skip the case without them
	local c
	for c in "$@"; do
		command -v "$c" > /dev/null || { echo "# $c not installed"; exit 4; }
	done
}

DASHBOARDS="$G/tcprt-prometheus.json $G/tcprt-otlp.json"

case_structure() {
	need python3
	# shellcheck disable=SC2086
	python3 "$CHECK" structure $DASHBOARDS > "$T/out" 2>&1 || fail "$(cat "$T/out")"
}

case_generated() {
	need python3
	python3 "$G/make-dashboards.py" --check > "$T/out" 2>&1 ||
		fail "$(cat "$T/out") (python3 grafana/make-dashboards.py writes them)"
	# and --check sees a file that differs
	mkdir "$T/gen"
	python3 "$G/make-dashboards.py" "$T/gen" || fail "make-dashboards.py DIR"
	cmp -s "$T/gen/tcprt-otlp.json" "$G/tcprt-otlp.json" || fail "DIR: another file"
	sed -i 's/"schemaVersion": 39/"schemaVersion": 38/' "$T/gen/tcprt-prometheus.json"
	if python3 "$G/make-dashboards.py" --check "$T/gen" 2> "$T/err"; then
		fail "--check took a changed file"
	fi
	grep -q "tcprt-prometheus.json is not what it would write" "$T/err" || fail "$(cat "$T/err")"
}

case_prometheus_names() {
	need python3
	"$TCPRT" export --help > "$T/help" || fail "export --help"
	python3 "$CHECK" prometheus "$G/tcprt-prometheus.json" sink_metrics.c prom.c "$T/help" \
		> "$T/out" 2>&1 || fail "$(cat "$T/out")"
}

case_otlp_names() {
	need python3
	python3 "$CHECK" otlp "$G/tcprt-otlp.json" "$G/make-dashboards.py" \
		> "$T/out" 2>&1 || fail "$(cat "$T/out")"
}

case_promtool_check() {
	need python3 promtool
	# shellcheck disable=SC2086
	python3 "$CHECK" rules $DASHBOARDS > "$T/rules.yml" || fail "$(cat "$T/rules.yml")"
	promtool check rules "$T/rules.yml" > "$T/out" 2>&1 || fail "$(cat "$T/out")"
	grep -q "SUCCESS: [1-9][0-9]* rules found" "$T/out" || fail "$(cat "$T/out")"
	echo "# $(grep SUCCESS "$T/out")"
}

# Records of every type (tests/breakdown_gen.py's R, W and P with the
# breakdown; an N, an E and a malformed line) and a status file, exported
# by tcprt agent's metrics sink: export's series and the agent's own.
case_promtool_eval() {
	local d=$T/ev
	need python3 promtool
	"$TCPRT" agent --help | grep -q -- --config || return 4	# built without inih
	mkdir -p "$d/logs" "$d/rules"
	python3 tests/breakdown_gen.py "$d/logs" 1795218000
	cat > "$d/logs/rt-network-log2" <<-EOF
	V6 N 1795218012 000000 10.0.0.2:40001 10.0.0.1:7700 3 1000 400 0 1448
	V6 E 1795218012 500000 10.0.0.2:40001 10.0.0.1:7700 3 10000 1000 700 1 300
	not a record
	EOF
	printf '%s\n' "version 0.3" "tracked 0" "log_subbufs_overwritten 0" "reads_lapped 0" \
		"alloc_failed 0" "probe_missed 0" "stats_dropped 0" > "$d/logs/status"
	printf '[agent]\ndir = %s\n[metrics]\ntextfile = %s\n' "$d/logs" "$d/tcprt.prom" > "$d/agent.conf"
	chmod 644 "$d/agent.conf"
	"$TCPRT" agent --once --config "$d/agent.conf" 2> "$d/err" ||
		fail "agent: $(cat "$d/err")"
	python3 "$CHECK" absent "$G/tcprt-prometheus.json" "$d/tcprt.prom" "$d/rules" ||
		fail "absent"
	(cd "$d/rules" && promtool test rules test.yml) > "$T/out" 2>&1 ||
		fail "an expression finds no series: $(grep -E 'alertname|where=' "$T/out" | head -n 20)"
	echo "# $(grep -c 'alertname: ' "$d/rules/test.yml") expressions over $(grep -c -- '- series:' "$d/rules/test.yml") series: none empty"
}

run_case "the dashboards are JSON Grafana imports: schema 39, \${DS_PROMETHEUS}, port, role, container" case_structure
run_case "the dashboards are what make-dashboards.py writes (--check)" case_generated
run_case "Prometheus dashboard: every metric and label one export writes, every metric shown" case_prometheus_names
run_case "OTLP dashboard: the names of the generator's OTLP table" case_otlp_names
run_case "promtool check rules: every expression parses" case_promtool_check
run_case "promtool test rules: every Prometheus expression finds the agent's series (export's and its sinks' counts)" case_promtool_eval
tap_end
