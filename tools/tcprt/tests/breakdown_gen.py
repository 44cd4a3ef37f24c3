#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write records with tcp_rt's time breakdown (docs/records.md, "Where the
time goes") into DIR/rt-network-log0 and 1, for tests/cli.sh:

    breakdown_gen.py DIR BASE

In [BASE, BASE + 10 s): port 7700, 41 R with all six fields (one of them
breaking the contract: rq_wait + app + sq_wait one more than its process
time) and 2 W with them; port 8080, 10 R without; port 6379, 20 P with
the five a P carries.  At BASE + 11 s, one R that ends the observation.

Every process time, download time (R) and upload time (P) is the middle
of a bucket of tcprt's histogram (hist.h), each in a bucket of its own:
the histogram's percentiles are then the exact ones, and a band of
buckets holds exactly the tasks of its band of values, so that a model
that knows nothing of the histogram computes what tcprt prints.
"""
import random
import sys

d, base = sys.argv[1], int(sys.argv[2])
rng = random.Random(31)
used = set()


def bucket(v):
    """hist_index() and the middle of its bucket"""
    if v < 128:
        return v, v
    shift = v.bit_length() - 1 - 6
    lo = v >> shift << shift
    return (shift, v >> shift), lo + (1 << shift) // 2


def mid(lo, hi):
    """a bucket's middle between lo and hi (log-uniform), one bucket once"""
    while True:
        b, m = bucket(int(lo * (hi / lo) ** rng.random()))
        if (lo, b) not in used:
            used.add((lo, b))
            return m


def cut(total, shares):
    """total in parts of about the given shares, the last the rest"""
    parts = [int(total * s) for s in shares]
    return parts + [total - sum(parts)]


lines = []


def add(t, us, peer, local, fields, ext):
    sec, usec = divmod(us, 1000000)
    line = "V6 %s %d %06d %s %s %s" % (t, sec, usec, peer, local, " ".join(map(str, fields)))
    lines.append(line + ("".join(" %s=%d" % kv for kv in ext) if ext else ""))


def server(t, us, port, with_ext, bad=False):
    process = mid(300, 250000)          # 0.3 .. 250 ms
    download = mid(60, 30000)           # 60 us .. 30 ms
    upload = rng.randrange(0, 500)
    duration = upload + process + download
    a = rng.random()
    rq, app, sq = cut(process, [a * 0.9, (1 - a) * 0.6])
    if bad:
        sq += 1
    rwnd, sndbuf, app_lim = (int(download * rng.random() * f) for f in (0.3, 0.2, 0.3))
    ext = [("rq_wait", rq), ("app", app), ("sq_wait", sq), ("rwnd_limited", rwnd),
           ("sndbuf_limited", sndbuf), ("app_limited", app_lim)] if with_ext else []
    peer, local = "10.0.0.2:%d" % (40000 + len(lines)), "10.0.0.1:%d" % port
    if t == "R":
        add("R", us, peer, local, [5000, duration, 300, 0, 1, process, upload, 300, 0, 1448], ext)
    else:
        add("W", us, peer, local, [4000, duration, 300, 0, 2, process, upload, 1000, 1448], ext)


def client(us):
    upload = mid(100, 5000)             # 0.1 .. 5 ms
    service, response = rng.randrange(1000, 90000), rng.randrange(100, 9000)
    rq, sq = rng.randrange(0, 3000), rng.randrange(0, 800)
    rwnd, sndbuf, app_lim = (int(upload * rng.random() * f) for f in (0.5, 0.2, 0.2))
    add("P", us, "10.0.0.9:6379", "10.0.0.1:%d" % (50000 + len(lines)),
        [300, upload + service + response, 200, 0, 1, service, response, 4000, 0, 1448],
        [("rq_wait", rq), ("sq_wait", sq), ("rwnd_limited", rwnd),
         ("sndbuf_limited", sndbuf), ("app_limited", app_lim)])


b = base * 1000000
for i in range(41):
    server("R", b + i * 240000, 7700, True, bad=(i == 17))
for i in range(2):
    server("W", b + 5000 + i * 3000000, 7700, True)
for i in range(10):
    server("R", b + 7000 + i * 900000, 8080, False)
for i in range(20):
    client(b + 9000 + i * 450000)
server("R", b + 11000000, 7700, False)

# in start order, as tcp_rt's files nearly are (it writes at the task's end)
lines.sort(key=lambda l: (int(l.split()[2]), int(l.split()[3])))
with open("%s/rt-network-log0" % d, "w") as f0, open("%s/rt-network-log1" % d, "w") as f1:
    for i, line in enumerate(lines):
        (f0 if i % 2 == 0 else f1).write(line + "\n")
