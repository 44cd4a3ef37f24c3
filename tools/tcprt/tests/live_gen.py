#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Records for tests/live.sh, and a model of tcprt live's windows over them.

    live_gen.py DIR BASE > MODEL.json

Writes DIR/rt-network-log0 and 1: 75 s of tasks from BASE (whole seconds)
on ports 80 (R, W, N), 443 (R, some with the time breakdown) and, as a
client, 6379 (P), with a burst on port 80 from BASE+60 s to BASE+62 s; the
two files interleave the records of the CPUs as tcp_rt's logs do.  Prints
the model: per key (port, role) and window length (10, 60, 300 s) what
tcprt live --clock records must say at the end - the clock the last
record's start, a window of W s the tasks of the seconds (S - W, S] -
counted from the records here, independently of tcprt: tasks by type,
bytes, retransmissions, segments, RTT sum, and the exact nearest-rank
p50/p90/p99 and the max of duration.
"""
import json
import random
import sys

d, base = sys.argv[1], int(sys.argv[2])
rng = random.Random(49)
recs = []   # (t_us, type, port, role, dur, sent, recv, rtt, retr, mss, line)


def add(t_us, typ, port, dur, bd=False):
    sec, usec = divmod(t_us, 1000000)
    sent, recv = rng.randint(1, 200000), rng.randint(1, 5000)
    rtt, retr, mss = rng.randint(20, 3000), rng.choice([0, 0, 0, 1, 2]), 1448
    proc, up = dur // 2, dur // 8
    if typ == 'R':
        line = (f"V6 R {sec} {usec:06d} 10.0.0.2:40000 10.0.0.1:{port} {sent} {dur} "
                f"{rtt} {retr} 1 {proc} {up} {recv} 0 {mss}")
        if bd:
            rq, sq = proc // 4, proc // 8
            dl = dur - proc - up
            line += (f" rq_wait={rq} app={proc - rq - sq} sq_wait={sq} "
                     f"rwnd_limited={dl // 3} sndbuf_limited={dl // 5} app_limited={dl // 7}")
        role = 'server'
    elif typ == 'W':
        line = (f"V6 W {sec} {usec:06d} 10.0.0.2:40000 10.0.0.1:{port} {sent} {dur} "
                f"{rtt} {retr} 1 {proc} {up} {recv} {mss}")
        recv = 0    # W's field is unacked_bytes, not received bytes
        role = 'server'
    elif typ == 'N':
        line = f"V6 N {sec} {usec:06d} 10.0.0.2:40000 10.0.0.1:{port} 3 {dur} {recv} 0 {mss}"
        sent, rtt, retr = 0, None, 0
        role = 'server'
    else:
        line = (f"V6 P {sec} {usec:06d} 10.0.0.2:{port} 10.0.0.1:50000 {sent} {dur} "
                f"{rtt} {retr} 1 {dur // 2} {dur // 4} {recv} 0 {mss}")
        role = 'client'
    recs.append((t_us, typ, port, role, dur, sent, recv, rtt, retr, mss, line))


t = base * 1000000
end = t + 75 * 1000000
while t < end:
    dur = int(200 * (1000 ** rng.random()))
    r = rng.random()
    if r < 0.5:
        add(t, rng.choice('RRRRRRWN'), 80, dur)
    elif r < 0.8:
        add(t, 'R', 443, dur, bd=rng.random() < 0.5)
    else:
        add(t, 'P', 6379, dur)
    if base * 1000000 + 60 * 1000000 <= t < base * 1000000 + 62 * 1000000:
        t += rng.randint(100, 400)     # the burst
    else:
        t += rng.randint(5000, 40000)

# two CPUs, each in start order within its file
with open(f"{d}/rt-network-log0", "w") as f0, open(f"{d}/rt-network-log1", "w") as f1:
    for i, r in enumerate(recs):
        (f0 if i % 3 else f1).write(r[10] + "\n")

clock = recs[-1][0]
S = clock // 1000000
start = recs[0][0] // 1000000 * 1000000
model = {"clock": clock, "keys": {}}
for W in (10, 60, 300):
    lo = S - W
    inw = [r for r in recs if lo < r[0] // 1000000 <= S]
    allbytes = sum(r[5] + r[6] for r in inw)
    first = max((lo + 1) * 1000000, start)
    for key in sorted({(r[2], r[3]) for r in recs}):
        rs = [r for r in inw if (r[2], r[3]) == key]
        durs = sorted(r[4] for r in rs)
        n = len(durs)

        def rank(pm):
            return durs[max((n * pm + 999) // 1000, 1) - 1] if n else 0
        m = {
            "tasks": n,
            "types": {x: sum(1 for r in rs if r[1] == x) for x in "RWNP"},
            "bytes_in": sum(r[6] for r in rs),
            "bytes_out": sum(r[5] for r in rs),
            "retrans": sum(r[8] for r in rs),
            "segs_out": sum((r[5] + r[9] - 1) // r[9] for r in rs if r[5]),
            "rtt_sum": sum(r[7] for r in rs if r[7] is not None),
            "span": (clock - first) / 1e6,
            "share": (sum(r[5] + r[6] for r in rs) / allbytes) if allbytes else 0,
            "p50": rank(500), "p90": rank(900), "p99": rank(990),
            "max": durs[-1] if n else 0,
        }
        model["keys"].setdefault(f"{key[0]}/{key[1]}", {})[str(W)] = m
json.dump(model, sys.stdout)
