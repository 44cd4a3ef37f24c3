#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tcprt live on this host, over files written by the test (tests/
# live_gen.py, which also writes a model of the windows): --once's figures
# against the model; the socket's answers the same, asked from C (the
# documented example), a shell (socat, when installed) and Python; concurrent clients,
# hostile ones (tests/live_client.py), the socket's permissions and its
# file replaced or refused; the terminal view driven in tmux, its screen
# read back; bad options.  Prints TAP.
set -u
cd "$(dirname "$0")/.." || exit 1
TCPRT=$PWD/tcprt
TESTS=$PWD/tests
T=$(mktemp -d "${TMPDIR:-/tmp}/tcprt-live.XXXXXX")
SOCK=$T/live.sock
BASE=1795218000
chmod 711 "$T"	# the socket's own mode decides who may connect
trap 'stop_live; tmux kill-session -t tcprt-live-test 2> /dev/null; rm -rf "$T"' EXIT

. tests/case-lib.sh

case_cleanup() {
	stop_live	# what a failed case left running
}

mkdir -p "$T/d"
python3 "$TESTS/live_gen.py" "$T/d" $BASE > "$T/model.json" || exit 1

# One question to the socket, its answer on stdout (Python: socat, the
# shell example's client, is not a build dependency of the package, whose
# build runs these tests).
ask() {	# question
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
sys.stdout.write(s.makefile("r").readline())
' "$SOCK" "$1"
}

# Wait until the socket answers "status": the service is up.
wait_socket() {
	local i
	for i in $(seq 100); do
		ask status 2> /dev/null | grep -q '"ok":true' && return 0
		sleep 0.05
	done
	fail "tcprt live never answered on $SOCK: $(cat "$T/live.err")"
}

start_live() {	# options...
	"$TCPRT" live --dir "$T/d" --socket "$SOCK" --no-view "$@" 2> "$T/live.err" &
	LIVE_PID=$!
	echo $LIVE_PID > "$T/live.pid"
	wait_socket
}

stop_live() {
	local pid
	pid=$(cat "$T/live.pid" 2> /dev/null) || return 0
	rm -f "$T/live.pid"
	kill "$pid" 2> /dev/null || return 0
	while kill -0 "$pid" 2> /dev/null; do sleep 0.02; done
}

# --once's JSON lines against the model.
check_model() {	# file
	python3 - "$1" "$T/model.json" <<-'PY'
	import json, sys
	got = [json.loads(l) for l in open(sys.argv[1])]
	model = json.load(open(sys.argv[2]))
	assert round(got[0]["clock"] * 1e6) == model["clock"], "clock"
	seen = 0
	for k in got:
	    mk = model["keys"][f"{k['port']}/{k['role']}"]
	    for w in k["windows"]:
	        m = mk[str(w["window"])]
	        where = f"{k['port']}/{k['role']} {w['window']} s"
	        for f in ("tasks", "bytes_in", "bytes_out", "retrans", "segs_out"):
	            assert w[f] == m[f], f"{where}: {f} {w[f]}, model {m[f]}"
	        for t in "RWNP":
	            assert w[t] == m["types"][t], f"{where}: {t}"
	        assert abs(w["rtt_mean"] * w["rtt_n"] - m["rtt_sum"]) < 1 + 1e-6 * m["rtt_sum"], f"{where}: rtt"
	        assert abs(w["span"] - m["span"]) < 1e-6, f"{where}: span {w['span']} {m['span']}"
	        assert abs(w["share"] - m["share"]) < 1e-6, f"{where}: share"
	        assert abs(w["tasks_per_s"] - m["tasks"] / m["span"]) < 1e-3, f"{where}: rate"
	        d = w["duration"]
	        assert d["max"] == m["max"], f"{where}: max {d['max']} {m['max']}"
	        for q in ("p50", "p90", "p99"):
	            tol = 0 if m[q] < 128 else m[q] // 128 + 1
	            assert abs(d[q] - m[q]) <= tol, f"{where}: {q} {d[q]}, model {m[q]}"
	        seen += 1
	assert seen == 9, f"{seen} key windows, 9 expected"
	print(f"# {seen} key windows as the model says")
	PY
}

case_once() {
	"$TCPRT" live --dir "$T/d" --once > "$T/once.json" 2> "$T/err" || fail "$(cat "$T/err")"
	[ ! -s "$T/err" ] || fail "stderr: $(cat "$T/err")"
	check_model "$T/once.json"
}

# tcprt agent with the windows sink and the metrics sink on one reader:
# every answer of its socket is tcprt live's on the same records, and its
# text file export's.
case_agent() {
	local c=$T/agent.conf q
	if ! "$TCPRT" agent --help | grep -q -- --config; then return 4; fi
	cat > "$c" <<-EOF
		[agent]
		dir = $T/d
		interval = 0.5
		[windows]
		socket = $SOCK
		windows = 10s,1m,5m
		[metrics]
		textfile = $T/agent.prom
	EOF
	chmod 644 "$c"
	"$TCPRT" agent --config "$c" --check > "$T/check" || fail "--check: $(cat "$T/check")"
	[ "$(cat "$T/check")" = "$c: good; sinks: metrics windows" ] || fail "--check's line: $(cat "$T/check")"
	"$TCPRT" agent --config "$c" 2> "$T/live.err" &
	echo $! > "$T/live.pid"
	wait_socket
	for q in "port=80 window=10s" "port=80" "port=443 role=client" keys "port=9 window=5m"; do
		ask "$q" > "$T/agent-$q.json"
	done
	ask status > "$T/agent-status.json"
	stop_live
	[ -s "$T/agent.prom" ] || fail "no text file"
	start_live
	for q in "port=80 window=10s" "port=80" "port=443 role=client" keys "port=9 window=5m"; do
		ask "$q" > "$T/live-$q.json"
		cmp -s "$T/agent-$q.json" "$T/live-$q.json" ||
			fail "$q: the agent answered $(cat "$T/agent-$q.json"), live $(cat "$T/live-$q.json")"
	done
	stop_live
	python3 - "$T/agent-status.json" <<-'PY' || fail "agent's status: $(cat "$T/agent-status.json")"
		import json, sys
		s = json.load(open(sys.argv[1]))
		assert s["ok"] and s["tasks"] > 0 and s["bad_lines"] == 0 and s["keys"] > 0, s
		print("# agent's status: %d tasks, %d keys" % (s["tasks"], s["keys"]))
	PY
	"$TCPRT" export --once --dir "$T/d" --textfile "$T/export.prom" || fail "export"
	without_agent "$T/agent.prom" | cmp -s - "$T/export.prom" ||
		fail "the agent's text file is not export's: $(without_agent "$T/agent.prom" | diff - "$T/export.prom" | head -n 5)"
}

# SIGHUP reads the agent's configuration again: a sink added starts, one
# removed stops (its socket gone), a wrong file is said and the running
# configuration kept - and the sink left alone all the while misses no
# record: its text file at the end is export's of every line.
case_agent_reload() {
	local c=$T/reload.conf d=$T/rl half total tasks2
	if ! "$TCPRT" agent --help | grep -q -- --config; then return 4; fi
	rm -rf "$d"
	mkdir -p "$d"
	total=$(wc -l < "$T/d/rt-network-log0")
	half=$((total / 2))
	head -n $half "$T/d/rt-network-log0" > "$d/rt-network-log0"
	printf '[agent]\ndir = %s\ninterval = 0.2\n[metrics]\ntextfile = %s\n' "$d" "$T/rl.prom" > "$c.a"
	cp "$c.a" "$c"
	chmod 644 "$c" "$c.a"
	"$TCPRT" agent --config "$c" 2> "$T/agent.err" &
	echo $! > "$T/live.pid"
	wait_for "the agent's first half" grep -qs "^tcprt_records_read_total $half\$" "$T/rl.prom" ||
		fail "first half: $(cat "$T/agent.err")"
	# a sink added
	{ cat "$c.a"; printf '[windows]\nsocket = %s\n' "$SOCK"; } > "$c.b"
	cp "$c.b" "$c"
	kill -HUP "$(cat "$T/live.pid")"
	wait_socket
	wait_for "the reload said" grep -q "read again (SIGHUP): metrics kept, windows started" "$T/agent.err" ||
		fail "$(cat "$T/agent.err")"
	# records after it: the new sink has them, the kept one has all
	tail -n +$((half + 1)) "$T/d/rt-network-log0" >> "$d/rt-network-log0"
	tasks2=$(tail -n +$((half + 1)) "$T/d/rt-network-log0" | awk '$2 ~ /^[RWNP]$/' | wc -l)
	wait_for "the agent's second half" grep -q "^tcprt_records_read_total $total\$" "$T/rl.prom" ||
		fail "second half: $(grep records_read "$T/rl.prom")"
	wait_for "the windows' tasks" eval 'ask status | grep -q "\"tasks\":$tasks2,"' ||
		fail "the new sink's tasks: $(ask status), expected $tasks2"
	# a wrong file: said, the running configuration kept
	{ cat "$c.b"; printf 'max-keys = 0\n'; } > "$c"
	kill -HUP "$(cat "$T/live.pid")"
	wait_for "the wrong file said" grep -q "$c:8: \[windows\] max-keys: a number 1..1000000, not '0' (SIGHUP: the configuration running is kept)" \
		"$T/agent.err" || fail "$(cat "$T/agent.err")"
	ask status | grep -q "\"tasks\":$tasks2," || fail "the windows after a wrong file: $(ask status)"
	# the sink removed: its socket gone
	cp "$c.a" "$c"
	kill -HUP "$(cat "$T/live.pid")"
	wait_for "the socket removed" eval '! test -e "$SOCK"' || fail "the socket is still there"
	grep -q "read again (SIGHUP): metrics kept, windows stopped" "$T/agent.err" || fail "$(cat "$T/agent.err")"
	stop_live
	"$TCPRT" export --once --dir "$d" --textfile "$T/rl-export.prom" || fail "export"
	without_agent "$T/rl.prom" | cmp -s - "$T/rl-export.prom" ||
		fail "the kept sink's text file is not export's: $(without_agent "$T/rl.prom" | diff - "$T/rl-export.prom" | head -n 5)"
}

case_socket_answers() {
	local cq=$T/live-query
	cc -Wall -Wextra -Werror -o "$cq" examples/live-query.c || fail "the C example does not build"
	start_live
	"$cq" "$SOCK" "port=80 window=10s" > "$T/c.json" || fail "C client: $(cat "$T/c.json")"
	if command -v socat > /dev/null; then
		echo "port=80 window=10s" | socat - "UNIX-CONNECT:$SOCK" > "$T/sh.json"
		cmp -s "$T/c.json" "$T/sh.json" || fail "C and shell answers differ"
	else
		echo "# no socat: the shell example not run"
	fi
	"$TCPRT" live --dir "$T/d" --once > "$T/once.json"
	python3 - "$T/c.json" "$T/once.json" <<-'PY' || fail "the socket's answer is not --once's"
	import json, sys
	a = json.load(open(sys.argv[1]))
	o = [json.loads(l) for l in open(sys.argv[2])]
	ref = next(k for k in o if k["port"] == 80 and k["role"] == "server")
	assert a["ok"] and a["seen"] and a["windows"] == ref["windows"][:1], (a, ref)
	PY
	# every key and window, and the client side
	for q in "port=443" "port=6379 role=client window=5m" "port=80 window=1m"; do
		"$cq" "$SOCK" "$q" > "$T/q.json" || fail "$q: $(cat "$T/q.json")"
	done
	ask "port=6379 role=client" | grep -q '"seen":true,"port":6379,"role":"client"' ||
		fail "client key"
	ask "port=8081" | grep -q '"seen":false,"port":8081.*"tasks":0' ||
		fail "a port never seen: not zero tasks"
	"$cq" "$SOCK" "port=80 window=11s" > /dev/null && fail "a window not kept: exit 0"
	ask keys | python3 -c '
import json, sys
a = json.load(sys.stdin)
assert sorted((k["port"], k["role"]) for k in a["keys"]) == [(80, "server"), (443, "server"), (6379, "client")], a
' || fail "keys"
	stop_live
	[ ! -e "$SOCK" ] || fail "the socket file is left after SIGTERM"
}

case_concurrent() {
	start_live
	python3 "$TESTS/live_client.py" "$SOCK" concurrent | sed 's/^/# /'
	[ "${PIPESTATUS[0]}" = 0 ] || fail "concurrent clients"
	stop_live
}

case_hostile() {
	local refused
	start_live
	python3 "$TESTS/live_client.py" "$SOCK" hostile > "$T/hostile.out" ||
		{ sed 's/^/# /' "$T/hostile.out"; fail "hostile clients"; }
	sed 's/^/# /' "$T/hostile.out"
	stop_live
	# the 65th client, and the status asks refused while the server had
	# not yet seen the 64 go (live_client.py counts them): the server's own
	# count, which the exit line must say
	refused=$(grep -o '"refused": [0-9]*' "$T/hostile.out" | tail -1 | grep -o '[0-9]*$')
	[ -n "$refused" ] || fail "no refused count in the status"
	if [ "$refused" = 1 ]; then refused="1 client"; else refused="$refused clients"; fi
	grep -q "$refused refused (too many), 1 closed for an overlong question, 1 for not reading" "$T/live.err" ||
		fail "the exit line: $(cat "$T/live.err") (expected $refused refused)"
}

case_permissions() {
	local st
	[ "$(id -u)" = 0 ] || return 4
	getent group adm > /dev/null || return 4
	start_live --socket-group adm
	st=$(stat -c '%a %G' "$SOCK")
	[ "$st" = "660 adm" ] || fail "mode and group: $st"
	# a user outside the group cannot ask; one in it can
	ask status > /dev/null || fail "root could not ask"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		bash -c "$(declare -f ask); SOCK=$SOCK; ask status" > /dev/null 2> "$T/perm.err" &&
		fail "nobody connected"
	grep -q "Permission denied" "$T/perm.err" || fail "nobody: $(cat "$T/perm.err")"
	setpriv --reuid=65534 --regid=65534 --groups="$(getent group adm | cut -d: -f3)" \
		bash -c "$(declare -f ask); SOCK=$SOCK; ask status" | grep -q '"ok":true' ||
		fail "a member of adm could not ask"
	# a second tcprt on a live socket: refused, the first unharmed
	"$TCPRT" live --dir "$T/d" --socket "$SOCK" --no-view 2> "$T/err2" && fail "a second one started"
	grep -q "another process serves it" "$T/err2" || fail "second: $(cat "$T/err2")"
	ask status | grep -q '"ok":true' || fail "first harmed"
	kill -9 "$(cat "$T/live.pid")"
	stop_live
	# a stale socket (its process killed) is replaced; a file is not
	[ -S "$SOCK" ] || fail "no stale socket to replace"
	start_live
	stop_live
	echo data > "$SOCK"
	"$TCPRT" live --dir "$T/d" --socket "$SOCK" --no-view 2> "$T/err3" && fail "a file replaced"
	grep -q "exists and is not a socket" "$T/err3" || fail "file: $(cat "$T/err3")"
	[ "$(cat "$SOCK")" = data ] || fail "the file was changed"
	rm -f "$SOCK"
}

# The view in a 160x30 tmux pane: the rows of the model, q quits.
case_view() {
	local s=tcprt-live-test screen i
	command -v tmux > /dev/null || return 4
	tmux kill-session -t $s 2> /dev/null || true
	tmux new-session -d -s $s -x 160 -y 30 \
		"$TCPRT live --dir $T/d --windows 10s,1m; echo exited \$? > $T/view.rc; sleep 30"
	for i in $(seq 100); do
		screen=$(tmux capture-pane -p -t $s)
		grep -q '^6379 ' <<< "$screen" && break
		sleep 0.05
	done
	echo "$screen" | sed 's/^/# /' | head -8
	python3 - "$T/model.json" <<-PY || fail "the screen is not the model's"
	import json, sys
	model = json.load(open(sys.argv[1]))
	screen = """$screen""".splitlines()
	assert screen[0].startswith("tcprt live  2026-"[:12]) and "sort tasks" in screen[0], screen[0]
	assert "last 10s" in screen[1] and "last 60s" in screen[1] and "last 300s" not in screen[1], screen[1]
	rows = {l.split()[0]: l.split() for l in screen[3:] if l.strip()}
	order = [l.split()[0] for l in screen[3:] if l.strip()]
	def us(m):
	    return f"{m}us" if m < 10000 else f"{m / 1000:.1f}ms" if m < 10000000 else f"{m / 1e6:.2f}s"
	rates = {}
	for key, p in (("80", "80/server"), ("443", "443/server"), ("6379", "6379/client")):
	    r = rows[key]
	    for i, w in enumerate(("10", "60")):
	        m = model["keys"][p][w]
	        rate = f"{m['tasks'] / m['span']:.1f}"
	        assert r[3 + 5 * i] == rate, (key, w, r, rate)
	        # p50 as printed; the model's exact value within half a bucket
	        got = r[4 + 5 * i]
	        assert got[-2:] in ("us", "ms"), got
	        v = float(got[:-2]) * (1000 if got.endswith("ms") else 1)
	        assert abs(v - m["p50"]) <= m["p50"] / 128 + 51, (key, w, got, m["p50"])
	        rates.setdefault(key, float(rate) if i == 0 else rates.get(key))
	assert order == sorted(rates, key=lambda k: -rates[k]), (order, rates)
	print("# the rows, their tasks/s and p50 as the model's, sorted by tasks/s")
	PY
	tmux send-keys -t $s s
	for i in $(seq 40); do
		tmux capture-pane -p -t $s | head -1 | grep -q "sort p99" && break
		sleep 0.05
	done
	tmux capture-pane -p -t $s | head -1 | grep -q "sort p99" || fail "s did not change the order"
	tmux send-keys -t $s q
	for i in $(seq 100); do
		[ -s "$T/view.rc" ] && break
		sleep 0.05
	done
	[ "$(cat "$T/view.rc" 2> /dev/null)" = "exited 0" ] || fail "q: $(cat "$T/view.rc" 2> /dev/null)"
	tmux kill-session -t $s
}

case_usage() {
	local o st
	for o in "--windows 0" "--windows 2h" "--windows 1,2,3,4,5" "--windows x" \
		"--by nothing" "--measure speed" "--sort fast" "--max-keys 0" \
		"--socket-group adm" "--once --socket $T/s" "--clock never" "--no-view"; do
		# shellcheck disable=SC2086
		st=0
		"$TCPRT" live --dir "$T/d" $o > /dev/null 2> "$T/err" < /dev/null || st=$?
		[ $st = 2 ] || fail "$o: exit $st, not 2"
		grep -q "^tcprt: live: " "$T/err" || fail "$o: $(cat "$T/err")"
	done
	"$TCPRT" live --dir "$T/d" --once --windows 1h,5s > /dev/null || fail "1h,5s"
}

run_case "live --once: every key's windows as the model of the records says" case_once
run_case "agent: [windows] and [metrics] fed by one reader: the socket answers as live's, the text file is export's" case_agent
run_case "agent: SIGHUP adds a sink, refuses a wrong file, removes a sink; the sink left alone misses no record" case_agent_reload
run_case "live --socket: C, shell and Python ask; answers as --once's; unseen ports zero; SIGTERM removes it" case_socket_answers
run_case "live --socket: 20 clients at once" case_concurrent
run_case "live --socket: malformed, oversized, never-reading, silent and too many clients; service unharmed, counted" case_hostile
run_case "live --socket: mode 0660 and its group; a live socket refused, a stale one replaced, a file kept" case_permissions
run_case "live: the view in tmux shows the model's rows; s sorts, q quits" case_view
run_case "live: bad options exit 2 with a reason" case_usage
tap_end
