#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Loads that fail must leave nothing behind, even with connections arriving
# on the tracked ports meanwhile: no connection state, no module reference,
# no kernel warning (vm-run fails the run on one; check-debug adds kmemleak).
#
# The failure used here is a series run asked for at load that needs more
# than the 64 MiB a run may take.  A run's counters are taken per online
# CPU: the largest run, 10000 buckets x 9 lines (8 ports and the host's)
# x 20 counters x 4 bytes, 7.2 MB a CPU, plus one CPU's worth for the
# merged table and the 1 MiB flow table, is over 64 MiB from 9 online
# CPUs on.  scripts/check and check-debug boot this test's guest with 10
# vCPUs (and possible_cpus=80, for tcp_rt_series_cpus.sh beside it);
# elsewhere it skips.
. "$(dirname "$0")/lib.sh"

PORT=7700	# the flood's two ports, of the eight tracked (lports takes 6)
PORTS=7700,7701,7702,7703,7704,7705
PPORTS=7706,7707
ALL_EXT=ce_bytes,ce_segs,ece,dup_bytes,dup_segs,flows,far_bytes_in,far_bytes_out
FLOOD_STOP=/tmp/flood.stop

# Connections to both ports, opened as fast as one process can, the last
# 400 held open, until $FLOOD_STOP exists; prints how many it opened.  The
# job is python itself (exec), so that a failing case's end kills it: a
# flood left running held the runner's output open until the VM timed out.
flood() {
	exec python3 - "$PORT" "$FLOOD_STOP" <<'EOF'
import collections, os, socket, sys
port, stop = int(sys.argv[1]), sys.argv[2]
ls = []
for p in (port, port + 1):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", p))
    s.listen(512)
    ls.append(s)
held = collections.deque()
n = 0
print("ready", flush=True)
while not os.path.exists(stop):
    for s in ls:
        c = socket.create_connection(s.getsockname())
        a, _ = s.accept()
        held.append((c, a))
        n += 1
    while len(held) > 400:
        for x in held.popleft():
            x.close()
print(n, flush=True)
EOF
}

case_series_bound_under_flood() {
	local mark i out=/tmp/flood.out
	[ "$(cpus_in /sys/devices/system/cpu/online)" -ge 9 ] || {
		diag "needs 9 online CPUs, has $(cpus_in /sys/devices/system/cpu/online) (vm-run --cpus 10)"
		exit 4
	}
	ulimit -n 4096
	rm -f $FLOOD_STOP $out
	flood > $out &
	wait_until "the flood started" grep -q ready $out || fail "flood"
	mark=$(kmsg_mark)
	for i in $(seq 10); do
		expect_fail "load $i with a series run over its bound" \
			insmod "$MODULE" lports=$PORTS pports=$PPORTS series_run=1 series_buckets=10000 \
			series_ext=$ALL_EXT series_host=1
		[ ! -d /sys/module/tcp_rt ] || fail "load $i: the module stayed"
	done
	touch $FLOOD_STOP
	wait
	diag "connections opened during the loads: $(tail -n 1 $out)"
	[ "$(tail -n 1 $out)" -ge 100 ] || fail "too few connections: $(tail -n 1 $out)"
	expect_eq "$(kmsg_since "$mark" 'series_run: 10000 buckets x 9 lines x 20 counters on [0-9]* online CPUs' | wc -l)" 10 \
		"one message per refused load"
	# a good load afterwards starts from nothing
	mod_load lports=$PORT
	expect_eq "$(status tracked)" 0 "tracked after the failed loads"
	expect_eq "$(refcnt)" 0 "module references"
	rmmod tcp_rt || fail "rmmod"
}

refcnt() {
	cat /sys/module/tcp_rt/refcnt
}

run_case "a load refused after its parameters (series bound) under a connection flood leaves nothing" \
	case_series_bound_under_flood
done_testing
