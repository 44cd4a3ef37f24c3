#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hold the recorder's coarse ring (rt-network-recorder-coarse) to its
fine ring (rt-network-recorder), read just after it; --bytes-port's
traffic must lie in the buckets compared, those both reads hold whole.

Both in rt-network-series' lines.  The fine read must cover its ring
without a hole for --port (a task held open the whole time makes every
bucket a line).  Each coarse bucket wholly inside the fine read's span is
the sum of its --k fine buckets, line by line (the port's, the host's,
any other), but for the open gauge, its last fine bucket's, and for the
active flows, the most of one fine bucket.  Checked besides: the coarse
buckets on one grid --k fine buckets wide, and the coarse ring reaching
back at least --older-us before the fine one.  Prints what it compared;
exits 1 at the first mismatch.
"""

import argparse
import sys

BASE = ["bytes_in", "bytes_out", "segs_in", "segs_out", "retrans", "started",
        "done", "W", "N", "estab", "closed", "open"]


def read(path):
    rows = {}
    with open(path, encoding="ascii") as f:
        for k, line in enumerate(f, 1):
            w = line.split()
            if len(w) < 15:
                raise SystemExit(f"coarse_check: {path}:{k}: malformed: {line!r}")
            vals = dict(zip(BASE, map(int, w[3:15])))
            vals.update((n, int(v)) for n, v in (x.split("=") for x in w[15:]))
            rows[(int(w[0]) * 1000000 + int(w[1]), w[2])] = vals
    return rows


def expected(fine, c, key, width, k):
    """The coarse bucket at @c of line @key, from the fine rows."""
    out = {}
    for j in range(k):
        v = fine.get((c + j * width, key), {})
        for name, x in v.items():
            if name == "open":
                continue
            out[name] = max(out.get(name, 0), x) if name == "flows" else out.get(name, 0) + x
    out["open"] = fine.get((c + (k - 1) * width, key), {}).get("open", 0)
    return {n: x for n, x in out.items() if x}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fine", required=True)
    ap.add_argument("--coarse", required=True)
    ap.add_argument("--port", required=True)
    ap.add_argument("--bytes-port", required=True)
    ap.add_argument("--width-us", type=int, required=True)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--older-us", type=int, default=0)
    ap.add_argument("--min-buckets", type=int, default=1)
    a = ap.parse_args()
    width, k = a.width_us, a.k
    fine, coarse = read(a.fine), read(a.coarse)
    port_t = sorted(t for t, key in fine if key == a.port)
    if not port_t or not coarse:
        raise SystemExit(f"coarse_check: {len(port_t)} fine lines of port {a.port}, "
                         f"{len(coarse)} coarse lines")
    lo, hi = port_t[0], port_t[-1] + width
    if len(port_t) != (hi - lo) // width:
        raise SystemExit(f"coarse_check: the fine read has holes in port {a.port}'s "
                         f"line: {len(port_t)} lines over {(hi - lo) // width} buckets")
    phase = {t % (k * width) for t, _ in coarse}
    if len(phase) != 1:
        raise SystemExit(f"coarse_check: coarse buckets on {len(phase)} grids")
    phase = phase.pop()
    first_c = min(t for t, _ in coarse)
    if first_c > lo - a.older_us:
        raise SystemExit(f"coarse_check: the coarse ring begins {(lo - first_c) / 1000:.0f} ms "
                         f"before the fine one, less than {a.older_us / 1000:.0f} ms")
    # the coarse read came first: its last bucket (the port's line, the
    # task held open, is in each) may end before the fine read's
    hi = min(hi, max(t for t, key in coarse if key == a.port) + k * width)
    c = lo + (phase - lo) % (k * width)
    n = nbytes = 0
    while c + k * width <= hi:
        keys = {key for t, key in fine if c <= t < c + k * width} | \
               {key for t, key in coarse if t == c}
        for key in sorted(keys):
            want = expected(fine, c, key, width, k)
            got = {n_: x for n_, x in coarse.get((c, key), {}).items() if x}
            if want != got:
                diff = {n_: (want.get(n_, 0), got.get(n_, 0))
                        for n_ in set(want) | set(got) if want.get(n_, 0) != got.get(n_, 0)}
                raise SystemExit(f"coarse_check: the coarse bucket at {c} of line {key}: "
                                 f"(fine sum, coarse) differ: {diff}")
            nbytes += want.get("bytes_in", 0) if key == a.bytes_port else 0
        n += 1
        c += k * width
    if n < a.min_buckets or not nbytes:
        raise SystemExit(f"coarse_check: {n} coarse buckets compared, "
                         f"{nbytes} bytes in of port {a.bytes_port} in them")
    print(f"{n} coarse buckets of {k * width} us held to their fine ones "
          f"({nbytes} bytes in of port {a.bytes_port}); the coarse ring from "
          f"{(lo - first_c) / 1000:.0f} ms before the fine one")


if __name__ == "__main__":
    sys.exit(main())
