#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Series runs as tcprt series --every keeps them (docs/series.md, "Always
on"), made up: DIR/series-<start>-<width>x<buckets>.gz, the lines as the
module writes them (docs/records.md, "Series lines").  Every bucket has the
host's line '*'; port 7700's and peer port 6379's where they saw anything;
every --burst-th bucket a burst on '*' and 7700, so that hosts made with the
same arguments burst at the same instants.  The values come from --seed.

    series_gen.py DIR --start T [--runs N] [--period S] [--width US]
                  [--buckets N] [--burst-every N] [--seed S]
    series_gen.py DIR --start-us T ...

--start-us: one window of the recorder as tcprt series --recorder keeps
it, DIR/series-<sec>.<usec>-<width>x<buckets>.gz, beginning at T (Unix
microseconds).

Prints the number of lines written."""
import argparse
import gzip
import os
import random

EXT = ["ce_bytes", "ce_segs", "ece", "dup_bytes", "dup_segs", "flows",
       "far_bytes_in", "far_bytes_out"]


def line(t_us, port, rnd, burst, ext):
    big = 64000 if burst else 0
    v = [rnd.randrange(0, 3000) + big, rnd.randrange(0, 3000) + big // 4,
         rnd.randrange(0, 5), rnd.randrange(0, 5), rnd.randrange(0, 2),
         rnd.randrange(0, 2), rnd.randrange(0, 2), 0, 0,
         rnd.randrange(0, 2), rnd.randrange(0, 2), rnd.randrange(0, 4)]
    s = "%d %06d %s %s" % (t_us // 1000000, t_us % 1000000, port,
                           " ".join(map(str, v)))
    if ext:
        s += "".join(" %s=%d" % (n, rnd.randrange(0, 1500)) for n in EXT)
    return s + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    first = ap.add_mutually_exclusive_group(required=True)
    first.add_argument("--start", type=int)
    first.add_argument("--start-us", type=int)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--period", type=int, default=60)
    ap.add_argument("--width", type=int, default=1000)
    ap.add_argument("--buckets", type=int, default=500)
    ap.add_argument("--burst-every", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    os.makedirs(a.dir, exist_ok=True)
    n = 0
    for r in range(a.runs):
        if a.start_us is not None:
            start_us = a.start_us + r * a.period * 1000000
            name = "series-%d.%06d-%dx%d.gz" % (start_us // 1000000,
                                                start_us % 1000000,
                                                a.width, a.buckets)
        else:
            start_us = (a.start + r * a.period) * 1000000
            name = "series-%d-%dx%d.gz" % (start_us // 1000000, a.width,
                                           a.buckets)
        with gzip.open(os.path.join(a.dir, name), "wt") as f:
            for b in range(a.buckets):
                t = start_us + b * a.width
                burst = b % a.burst_every == 0
                out = [line(t, "*", rnd, burst, True)]
                if burst or rnd.random() < 0.2:
                    out.append(line(t, "7700", rnd, burst, True))
                if rnd.random() < 0.1:
                    out.append(line(t, "P6379", rnd, False, False))
                f.writelines(out)
                n += len(out)
    print(n)


main()
