# SPDX-License-Identifier: GPL-2.0
# VictoriaMetrics as the tests' OTLP receiver: Debian 13's, which
# scripts/otel-deps unpacks into the cache, started on 127.0.0.1 with
# Prometheus naming (tcp_rt_tasks_total, ...) and asked back with PromQL.
# Sourced by otlp.sh (on the host) and fleet.sh (the agent's case, in the
# VM); TOP is the project's top.  Safe under set -e.
VMETRICS=${TCPRT_VICTORIA_METRICS:-$("$TOP/scripts/cache-dir")/otel/root/usr/bin/victoria-metrics}
VMETRICS_PORT='' VMETRICS_PID=''

# Start it with its data and log in DIR, on PORT again (its data kept:
# a restart), else on a free port; VMETRICS_PORT says which.  Waits for
# its health answer as long as it runs, at most a minute.
vmetrics_start() {	# dir [port]
	local p
	for p in ${2:-$((20000 + RANDOM % 20000)) $((20000 + RANDOM % 20000)) $((20000 + RANDOM % 20000))}; do
		"$VMETRICS" -storageDataPath="$1/vm" -httpListenAddr="127.0.0.1:$p" \
			-search.latencyOffset=0s -opentelemetry.usePrometheusNaming \
			-loggerLevel=ERROR >> "$1/vm.log" 2>&1 &
		VMETRICS_PID=$!
		for _ in $(seq 600); do
			if curl -sf "http://127.0.0.1:$p/health" > /dev/null; then
				VMETRICS_PORT=$p
				return 0
			fi
			kill -0 "$VMETRICS_PID" 2> /dev/null || break
			sleep 0.1
		done
		vmetrics_stop
	done
	echo "# victoria-metrics did not start: $(tail -3 "$1/vm.log")"
	return 1
}

vmetrics_stop() {
	kill "$VMETRICS_PID" 2> /dev/null || true
	wait "$VMETRICS_PID" 2> /dev/null || true
	VMETRICS_PID=
}

# Where tcprt sends its OTLP metrics.
vmetrics_url() {
	echo "http://127.0.0.1:$VMETRICS_PORT/opentelemetry/v1/metrics"
}

# The value of an instant PromQL query (one series, or 0 when none),
# after making what was sent queryable.
promql() {	# query
	curl -sf "http://127.0.0.1:$VMETRICS_PORT/internal/force_flush" > /dev/null || return 1
	curl -sf "http://127.0.0.1:$VMETRICS_PORT/api/v1/query" --data-urlencode "query=$1" |
		python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else 0)'
}

# Whether query's value is VALUE now.
promql_is() {	# query value
	[ "$(promql "$1")" = "$2" ]
}
