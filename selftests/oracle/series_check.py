#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hold a run of rt-network-series to the records of the same traffic, and
to its packet capture when one is given.

The run must span the traffic: every connection of the port opened and
closed inside it.  Then, exactly:
  - bytes in and out: the E records' total_recv_bytes and total_sent_bytes;
  - tasks started: the R, W and N records; done: the R; W and N: theirs;
  - connections established and closed: the E records (every connection
    of the tests has a task);
  - retransmitted segments: the E records' total_retrans;
and in time, the bucket of an event no more than one bucket away from
where the records (or the capture) put it:
  - tasks started: at the R/W/N records' T0, which is the same clock
    reading (cumulative counts compared, so a shift of one bucket passes
    and any other does not);
  - the open-task gauge at a bucket's end: within what the R, W and N
    records say (open from T0 to T0 + duration, surely until T2; an N's
    all of it);
  - with --capture: the server's new data segments and retransmitted
    segments, each where the capture saw it leave, within --slack-us (the
    hook counts a segment right after the device took it, in the same
    softirq or syscall; an emulated vCPU can stall in between).
Prints what it compared; exits 1 on the first class of mismatch found.
"""

import argparse
import bisect
import itertools
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import tcp_rt_oracle  # noqa: E402

COLUMNS = ("bytes_in", "bytes_out", "segs_in", "segs_out", "retrans",
           "started", "done", "W", "N", "estab", "closed", "open")


def read_series(path, port):
    """{bucket start (us): {column: value}} of one line ("7600", "P7600",
    "*"); series_ext's " name=value" fields after the 15 documented ones
    become columns of their names."""
    rows = {}
    with open(path, encoding="ascii") as f:
        for n, line in enumerate(f, 1):
            w = line.split()
            if len(w) < 15 or not w[0].isdigit() or len(w[1]) != 6 or \
                    any("=" not in v for v in w[15:]):
                raise SystemExit(f"series_check: {path}:{n}: malformed: {line!r}")
            if w[2] != str(port):
                continue
            t = int(w[0]) * 1000000 + int(w[1])
            rows[t] = dict(zip(COLUMNS, (int(v) for v in w[3:15])))
            rows[t].update((k, int(v)) for k, v in
                           (x.split("=", 1) for x in w[15:]))
    return rows


def read_records(path):
    recs = []
    with open(path, encoding="ascii") as f:
        for line in f:
            w = line.split()
            if len(w) > 6 and w[0] == "V6":
                recs.append((w[1], int(w[2]) * 1000000 + int(w[3]),
                             [int(v) for v in w[6:]]))
    return recs


def prefix(counts):
    """P(i): the sum of counts over bucket ids <= i."""
    keys = sorted(counts)
    acc = list(itertools.accumulate(counts[k] for k in keys))

    def p(i):
        n = bisect.bisect_right(keys, i)
        return acc[n - 1] if n else 0
    return p


def spans_ok(got, spans):
    """Counts per bucket id against events each counted somewhere in its
    own span of bucket ids, SPANS [(first, last, count)], last None for an
    event that may not be counted at all: at every bucket, what the series
    counted so far lies between the events whose span ended by then and
    those whose span began by then.  None, or the first bucket where it
    does not: (bucket, counted, least, most)."""
    pg = prefix(got)
    ended, began = {}, {}
    for lo, hi, n in spans:
        if hi is not None:
            ended[hi] = ended.get(hi, 0) + n
        began[lo] = began.get(lo, 0) + n
    least, most = prefix(ended), prefix(began)
    for i in sorted(set(got) | set(ended) | set(began)):
        if not least(i) <= pg(i) <= most(i):
            return i, pg(i), least(i), most(i)
    return None


def shifted_ok(got, want, k=1):
    """Counts per bucket id equal up to a shift of k buckets: at every
    bucket, what the series counted so far lies between what the
    records/capture say k buckets earlier and k buckets later."""
    def first_miss(k):
        return spans_ok(got, [(i - k, i + k, n) for i, n in want.items()])

    miss = first_miss(k)
    if miss is None:
        return None
    # how far off it was: the least shift that would pass, and which way;
    # with totals unequal none does (a shift as wide as the buckets
    # spanned passes any equal ones)
    if sum(got.values()) != sum(want.values()):
        far = "totals differ: no shift passes"
    else:
        need = k + 1
        while first_miss(need) is not None:
            need += 1
        far = f"a shift of {need} buckets passes"
    return miss_text(miss, f"{far}, {k} allowed")


def miss_text(miss, why):
    """What spans_ok's MISS says, and WHY it was not allowed."""
    i, counted, least, most = miss
    late = counted < least
    return (f"by the end of bucket {i}: {counted}, records/capture say "
            f"{least}..{most} (counted {'later' if late else 'earlier'}; "
            f"{why})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--series", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--width-us", type=int, required=True)
    ap.add_argument("--capture", help="pcap seen from the server's side")
    ap.add_argument("--slack-us", type=int, default=20000,
                    help="how far a segment's count may be from its capture: "
                    "the oracle's allowance for the emulated guest's vCPU "
                    "stalls between the capture point and the hook "
                    "(selftests/lib.sh), at least one bucket")
    a = ap.parse_args()
    width = a.width_us
    rows = read_series(a.series, a.port)
    if not rows:
        raise SystemExit("series_check: no line for the port")
    recs = read_records(a.log)
    bad = []

    def total(col):
        return sum(r[col] for r in rows.values())

    def count(kind):
        return sum(1 for r in recs if r[0] == kind)

    def esum(i):
        return sum(r[2][i] for r in recs if r[0] == "E")

    want = {"bytes_in": esum(3), "bytes_out": esum(1), "retrans": esum(4),
            "started": count("R") + count("W") + count("N"),
            "done": count("R"), "W": count("W"), "N": count("N"),
            "estab": count("E"), "closed": count("E")}
    for col, w in want.items():
        g = total(col)
        print(f"series: {col} {g}, records {w}")
        if g != w:
            bad.append(f"{col}: {g} in the series, {w} in the records")

    # tasks started, where the records' T0 are
    got = {}
    for t, r in rows.items():
        if r["started"]:
            got[t // width] = got.get(t // width, 0) + r["started"]
    starts = {}
    for kind, t0, _ in recs:
        if kind in "RWN":
            starts[t0 // width] = starts.get(t0 // width, 0) + 1
    msg = shifted_ok(got, starts)
    if msg:
        bad.append(f"tasks started: {msg}")

    # The open gauge at each bucket's end, against the R records: a task
    # is open from T0 to T3 (T0 + duration); a W's until the close, an N's
    # too (their durations).  From T2 (T0 + upload +
    # process) on, its response is being written: the module then counts
    # it open while anything written is unacknowledged, and a response all
    # acknowledged while the server has not written the rest yet is not
    # (docs/series.md), so only the upper bound holds there.
    full, strict = [], []
    for kind, t0, f in recs:
        if kind in "RW":
            full += [(t0, 1), (t0 + f[1], -1)]
            strict += [(t0, 1), (t0 + f[6] + f[5], -1)]
        elif kind == "N":              # open until the close
            full += [(t0, 1), (t0 + f[1], -1)]
            strict += [(t0, 1), (t0 + f[1], -1)]
    full.sort()
    strict.sort()

    def open_at(events, t):
        return sum(d for e, d in events if e <= t)

    def extremes(events, lo_t, hi_t):
        vals = [open_at(events, lo_t)] + [open_at(events, e) for e, _ in events
                                          if lo_t < e <= hi_t]
        return min(vals), max(vals)

    first = min(rows) // width
    last = max(rows) // width
    worst = 0
    for b in range(first, last + 1):
        g = rows.get(b * width, {}).get("open", 0)
        lo_t, hi_t = b * width, (b + 2) * width
        lo, _ = extremes(strict, lo_t, hi_t)
        _, hi = extremes(full, lo_t, hi_t)
        if not lo <= g <= hi:
            bad.append(f"open at the end of bucket {b}: {g}, the records "
                       f"say {lo}..{hi} around then")
            break
        worst = max(worst, g)
    print(f"series: open gauge held to the R/W/N records over "
          f"{last - first + 1} buckets, at most {worst} open")

    if a.capture:
        new, again = {}, {}
        segs_in = 0
        high = None
        segs = list(tcp_rt_oracle.read_segments(a.capture))
        for seg in segs:
            if seg.dport == a.port and seg.length:
                segs_in += 1
            fin = 1 if seg.flags & tcp_rt_oracle.FIN else 0
            if seg.sport != a.port or not (seg.length or fin):
                continue
            end = (seg.seq + seg.length + fin) & 0xffffffff
            b = seg.t // width
            if high is None or 0 < ((end - high) & 0xffffffff) < 0x80000000:
                high = end
                if seg.length:
                    new[b] = new.get(b, 0) + 1
            else:
                # again, a FIN alone included (tp->total_retrans counts it)
                again[b] = again.get(b, 0) + 1
        for col, want_b in (("segs_out", new), ("retrans", again)):
            got = {}
            for t, r in rows.items():
                if r[col]:
                    got[t // width] = got.get(t // width, 0) + r[col]
            w, g = sum(want_b.values()), sum(got.values())
            print(f"series: {col} {g}, capture {w}, in "
                  f"{len(got)} buckets (capture: {len(want_b)})")
            if g != w:
                bad.append(f"{col}: {g} in the series, {w} in the capture")
            msg = shifted_ok(got, want_b, max(1, -(-a.slack_us // width)))
            if msg:
                bad.append(f"{col}: {msg}")
        # and the pure ACKs to the port TCP may have counted as data
        joins = sum(1 for s in tcp_rt_oracle.backlog_joins(segs)
                    if s.dport == a.port)
        print(f"series: segs_in {total('segs_in')}, capture {segs_in}"
              f"{f'..{segs_in + joins}' if joins else ''}")
        if not segs_in <= total("segs_in") <= segs_in + joins:
            bad.append(f"segs_in: {total('segs_in')} in the series, "
                       f"{segs_in} in the capture, and {joins} pure ACKs "
                       f"TCP may have joined to data")

    for m in bad:
        print(f"series_check: {m}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
