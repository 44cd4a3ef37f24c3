#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Series runs sized by the online CPUs, not the possible ones: a run's
# counters are taken for each CPU online when it starts, and for a CPU
# that comes online during it (cpuhp's prepare stage); status
# series_bytes says what the run under way holds.
#
# scripts/check and check-debug run this in the VM of tcp_rt_loadfail.sh:
# 80 possible CPUs, 10 online.  There the unit's configuration (2000 x 1
# ms, every measure, the host's line) with a port range is accepted,
# which sizing by the possible CPUs refused (81 x 1.44 MB); elsewhere that
# case skips.  The hotplug case needs two online CPUs.
. "$(dirname "$0")/lib.sh"

LOG=/tmp/series_cpus.log
SER=/tmp/series_cpus.lines
PORT=7650
ALL_EXT=ce_bytes,ce_segs,ece,dup_bytes,dup_segs,flows,far_bytes_in,far_bytes_out
FLOWS_BYTES=$((65536 * 16))	# the active-flow table (docs/records.md)

# What a run holds on N CPUs (docs/series.md, "Cost and memory"): buckets
# x lines x counters x 4 bytes on each, and the flow table when flows is
# kept.
run_bytes() {	# buckets lines counters cpus flows(0/1)
	echo $(($1 * $2 * $3 * 4 * $4 + $5 * FLOWS_BYTES))
}

# What the recorder holds on N CPUs (docs/series.md, "The recorder"): a
# hot ring of H places a CPU (each place lines x counters x 4 bytes and
# 16 of tags), the fine and coarse rings (each bucket lines x counters x
# 4 bytes and 8 of tag), and the flow table when flows is kept.
rec_bytes() {	# hot fine coarse lines counters cpus flows(0/1)
	local cells=$(($4 * $5 * 4))
	echo $(($6 * $1 * (cells + 16) + ($2 + $3) * (cells + 8) + $7 * FLOWS_BYTES))
}

# The last online CPU, if it can go offline (not CPU 0); else the case
# skips.
hotplug_cpu() {
	local cpu
	cpu=$(tr ',' '\n' < /sys/devices/system/cpu/online | tail -n 1)
	cpu=${cpu#*-}
	[ "$cpu" -ge 1 ] && [ -e /sys/devices/system/cpu/cpu$cpu/online ] || {
		diag "needs a second CPU that can go offline"
		exit 4
	}
	echo "$cpu"
}

# N requests of 100 bytes made on CPU alone, server and client pinned
# there (loopback's receive runs on the sender's CPU), all done.
requests_on() {	# cpu n
	rm -f /tmp/series_cpus.ready
	taskset -c "$1" "$PEER" server --port $PORT --req-bytes 100 --resp-bytes 1000 \
		--ready-file /tmp/series_cpus.ready > /dev/null &
	wait_until "server ready" test -s /tmp/series_cpus.ready || fail "server"
	taskset -c "$1" "$PEER" client --port $PORT --requests "$2" \
		--req-bytes 100 --resp-bytes 1000 > /dev/null || fail "client"
	wait_untracked
}

# Column COL of $SER's lines of the port, summed.
port_sum() {	# col
	awk -v c="$1" '$3 == "'$PORT'" { s += $c } END { print s + 0 }' $SER
}

# The N requests of requests_on() in $SER's port lines and in the records
# drained to $LOG: tasks started and done, bytes in.
requests_counted() {	# n where
	expect_eq "$(count_records $LOG R)" "$1" "R records"
	expect_eq "$(port_sum 9)" "$1" "tasks started, $2"
	expect_eq "$(port_sum 10)" "$1" "tasks done, $2"
	expect_eq "$(port_sum 4)" $(($1 * 100)) "bytes in, $2"
}

# After each case (lib.sh's cleanup_case): every CPU online again.
case_cleanup() {
	local f
	for f in /sys/devices/system/cpu/cpu[0-9]*/online; do
		[ "$(cat "$f")" = 1 ] || echo 1 > "$f"
	done
}

# The unit's configuration with a port range: 8 ports' lines and the
# host's, 20 counters each.  As a run (the unit's before the recorder):
# sized by the 80 possible CPUs it needs 81 x 1.44 MB, over the 64 MiB a
# run may take: refused before.  Its buckets are 10 ms here, not the
# unit's 1 ms: the same memory, and 20 s for the case to read status while
# it runs, on a machine of any speed.  Then as the unit runs it, the
# recorder at 1 ms with the coarse ring's 6000 buckets: a hot ring of 32
# places on each online CPU (at 1 ms whatever HZ: the fold's period spans
# at most 10 buckets), the two rings and the flow table in series_bytes.
case_unit_default() {
	local possible online
	possible=$(cpus_in /sys/devices/system/cpu/possible)
	online=$(cpus_in /sys/devices/system/cpu/online)
	[ "$(run_bytes 2000 9 20 $((possible + 1)) 1)" -gt $((64 << 20)) ] || {
		diag "needs 45 possible CPUs for the old sizing to refuse, has $possible (boot with possible_cpus=80)"
		exit 4
	}
	diag "$possible possible CPUs, $online online"
	mod_load lports_range=7600,7700
	echo 10000 > "$PARAMS/series_us"
	echo 2000 > "$PARAMS/series_buckets"
	echo $ALL_EXT > "$PARAMS/series_ext"
	echo 1 > "$PARAMS/series_host"
	echo 1 > "$PARAMS/series_run" || fail "the unit's run refused"
	expect_eq "$(status series_bytes)" "$(run_bytes 2000 9 20 "$online" 1)" \
		"status series_bytes: 2000 x 9 x 20 x 4 on $online CPUs and the flow table"
	series_running || fail "the run ended before its bytes were read"
	echo 0 > "$PARAMS/series_run"
	expect_eq "$(status series_bytes)" 0 "status series_bytes after the run"
	expect_eq "$(status series_cpu_nomem)" 0 "status series_cpu_nomem"
	cat "$DBG/rt-network-series" > /dev/null
	echo 1000 > "$PARAMS/series_us"
	echo 6000 > "$PARAMS/recorder_coarse"
	echo 200000 > "$PARAMS/recorder_slow_us"
	echo 1 > "$PARAMS/recorder" || fail "the unit's recorder refused"
	expect_eq "$(status series_bytes)" "$(rec_bytes 32 2000 6000 9 20 "$online" 1)" \
		"status series_bytes: the recorder's hot rings on $online CPUs, its rings and the flow table"
	echo 0 > "$PARAMS/recorder"
	expect_eq "$(status series_bytes)" 0 "status series_bytes after the recorder"
	expect_eq "$(status series_cpu_nomem)" 0 "status series_cpu_nomem"
	mod_unload
}

# A CPU taken offline before the run, brought online during it: its
# counters appear (series_bytes grows by one CPU's), the requests made on
# it alone (server and client pinned there: loopback's receive runs on
# the sender's CPU) are all in the run's lines, held to the records and
# the client's own count, and they stay there when the CPU goes offline
# again before the run ends.
case_cpu_online_mid_run() {
	local cpu online one reqs=20
	cpu=$(hotplug_cpu)
	rm -f $LOG $SER
	echo 0 > /sys/devices/system/cpu/cpu$cpu/online || fail "cpu$cpu offline"
	online=$(cpus_in /sys/devices/system/cpu/online)
	mod_load lports=$PORT
	# 100 s, ended by the case
	echo 10000 > "$PARAMS/series_us"
	echo 10000 > "$PARAMS/series_buckets"
	echo 1 > "$PARAMS/series_run"
	one=$(run_bytes 10000 1 12 1 0)
	expect_eq "$(status series_bytes)" $((one * online)) \
		"status series_bytes: one port's line on the $online online CPUs"
	echo 1 > /sys/devices/system/cpu/cpu$cpu/online || fail "cpu$cpu online"
	expect_eq "$(status series_bytes)" $((one * (online + 1))) \
		"status series_bytes once cpu$cpu is online"
	requests_on $cpu $reqs
	echo 0 > /sys/devices/system/cpu/cpu$cpu/online || fail "cpu$cpu offline again"
	series_running || fail "the run ended before the case ended it"
	echo 0 > "$PARAMS/series_run"
	cat "$DBG/rt-network-series" > $SER
	drain_logs $LOG
	requests_counted $reqs "in the run"
	expect_eq "$(status series_cpu_nomem)" 0 "status series_cpu_nomem"
	echo 1 > /sys/devices/system/cpu/cpu$cpu/online || fail "cpu$cpu back online"
	mod_unload
}

# The recorder (recorder=1) with a CPU brought online while it records:
# one hot ring more (series_bytes grows by one CPU's; what stays is the
# fine ring, 2000 buckets of one line of 12 counters and a tag each), the
# requests made on that CPU alone all in rt-network-recorder's lines,
# held to the records and the client's count, and still there once the
# CPU has gone offline again: its hot ring is folded all the same.
case_recorder_cpu_online() {
	local cpu online reqs=20 b1 hot
	cpu=$(hotplug_cpu)
	rm -f $LOG $SER
	echo 0 > /sys/devices/system/cpu/cpu$cpu/online || fail "cpu$cpu offline"
	online=$(cpus_in /sys/devices/system/cpu/online)
	mod_load lports=$PORT
	echo 10000 > "$PARAMS/series_us"
	echo 2000 > "$PARAMS/series_buckets"
	echo 1 > "$PARAMS/recorder"
	b1=$(status series_bytes)
	echo 1 > /sys/devices/system/cpu/cpu$cpu/online || fail "cpu$cpu online"
	hot=$(( $(status series_bytes) - b1 ))
	diag "a CPU's hot ring: $hot bytes ($((hot / (16 + 48))) places)"
	expect_eq $((hot % (16 + 48))) 0 "a hot ring of whole places (tag, dirty word, 12 counters)"
	expect_eq $((b1 - online * hot)) $((2000 * (12 * 4 + 8))) \
		"status series_bytes: $online hot rings and the fine ring"
	requests_on $cpu $reqs
	echo 0 > /sys/devices/system/cpu/cpu$cpu/online || fail "cpu$cpu offline again"
	recorder_folded 10000
	cat "$DBG/rt-network-recorder" > $SER
	drain_logs $LOG
	requests_counted $reqs "recorded"
	expect_eq "$(status recorder_late)" 0 "status recorder_late"
	expect_eq "$(status series_cpu_nomem)" 0 "status series_cpu_nomem"
	echo 0 > "$PARAMS/recorder"
	expect_eq "$(status series_bytes)" 0 "status series_bytes once the recorder ended"
	echo 1 > /sys/devices/system/cpu/cpu$cpu/online || fail "cpu$cpu back online"
	mod_unload
}

run_case "series: the unit's recorder, and its run before, with a port range on a host of 80 possible CPUs, their bytes as status says" \
	case_unit_default
run_case "series: a CPU online mid-run gets its counters, and its requests stay counted when it goes" \
	case_cpu_online_mid_run
run_case "series: the recorder, a CPU online while it records: its hot ring, its requests recorded, kept when it goes" \
	case_recorder_cpu_online
done_testing
