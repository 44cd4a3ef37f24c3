#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hold one line of a series run (a port's, P<port>, or the host's "*") to
a packet capture of the same traffic, for series_ext's measures and a run
of the whole host (docs/records.md, "Series lines").

Each check counts, per bucket of the capture's clock, what the capture
says the line's sockets received or sent, and compares:
  - the run's total with the capture's, exactly;
  - bucket by bucket, what the run counted so far with what the capture
    says --slack-us earlier and later (at least one bucket): the hook
    counts a segment a few microseconds from where the capture saw it,
    and an emulated vCPU can stall in between (selftests/lib.sh).
Active flows are counted once per socket and bucket, so a socket's data
seen within --slack-us of a bucket's edge may fall on either side: the
run's total must lie between the fewest and the most buckets the
capture's data could have been counted in.

Checks (each may be given with any other):
  --ce PORT      CE-marked data from PORT: ce_bytes, ce_segs
  --ece PORT     segments to PORT with ECE (not SYN): ece; counted in
                 --ece-capture where given (the capture at PORT's end:
                 what the path between the two ends delays, the run
                 counts late), else in --capture; with --ece-sends
                 (rt_peer --send-log of PORT's end), an ECE that reached
                 PORT's end while its socket's owner was in a send() call
                 may be counted as late as that call's end: TCP keeps an
                 ACK that arrives while a process holds the socket in its
                 backlog until the process lets go (release_sock)
  --dup PORT     data from PORT received before (bytes the capture saw
                 once already, in whatever order: a segment seen after
                 its successor is no copy): dup_bytes, dup_segs; with
                 --holes N > 0 (retransmissions and drops happened) the
                 run's are at most the capture's: a copy of data TCP
                 held out of order behind a segment it dropped is new to
                 TCP
  --flows PORT   sockets with data to or from PORT (may be repeated):
                 flows (--sockets 2: both ends on this host count)
  --host         every connection of the capture, both directions, no
                 loss (a capture of both ends: each segment seen once):
                 bytes_in and bytes_out, segs_in (duplicates included;
                 and each pure ACK that TCP may have joined to data in a
                 socket's backlog, tcp_rt_oracle.backlog_joins(), may
                 count too),
                 segs_out, retrans, estab and closed (two sockets a
                 connection)
Prints what it compared; exits 1 on any mismatch.
"""

import argparse
import bisect
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import series_check  # noqa: E402
import tcp_rt_oracle  # noqa: E402

ECE = 0x40


def add(d, k, n=1):
    d[k] = d.get(k, 0) + n


def conn_key(seg):
    """A connection, whichever way its segment goes."""
    return tuple(sorted((seg.src, seg.dst)))


def stab(intervals):
    """The fewest points that hit every interval [lo, hi] (greedy)."""
    n, last = 0, None
    for lo, hi in sorted(intervals, key=lambda i: i[1]):
        if last is None or lo > last:
            n, last = n + 1, hi
    return n


class Seen:
    """The bytes of one direction of a connection seen so far, as
    disjoint [lo, hi) intervals of unwrapped sequence numbers."""

    def __init__(self):
        self.spans = []                 # sorted, disjoint, not touching
        self.ref = None                 # where 32-bit numbers unwrap near

    def add(self, seq32, length):
        """Count a segment in: how many of its bytes were seen before."""
        if self.ref is None:
            self.ref = seq32
        lo = tcp_rt_oracle.unwrap(seq32, self.ref)
        hi = lo + length
        self.ref = max(self.ref, hi)
        seen, keep = 0, []
        for a, b in self.spans:
            if b < lo or a > hi:        # apart (touching ones merge)
                keep.append((a, b))
                continue
            seen += max(0, min(b, hi) - max(a, lo))
            lo, hi = min(a, lo), max(b, hi)
        keep.append((lo, hi))
        self.spans = sorted(keep)
        return seen


def received(segs, width, port=None):
    """Per bucket of width microseconds, the data segments' bytes seen
    before (a copy) and the new ones, and their segments: a segment with
    any byte seen before is a duplicate (the module's dup_segs counts it
    so), one with none a new one.  Capture order does not matter: a segment seen after its
    successor (a tap and TCP on different CPUs) is new, as it is to TCP.
    port: duplicates from that port only.  Returns (dup_bytes, dup_segs,
    new_bytes, new_segs), each a dict bucket -> count."""
    seen = {}
    dup_b, dup_s, new_b, new_s = {}, {}, {}, {}
    for s in segs:
        if not s.length:
            continue
        old = seen.setdefault((s.src, s.dst), Seen()).add(s.seq, s.length)
        b = s.t // width
        if old and (port is None or s.sport == port):
            add(dup_b, b, old)
            add(dup_s, b)
        if s.length > old:
            add(new_b, b, s.length - old)
        if not old:
            add(new_s, b)
    return dup_b, dup_s, new_b, new_s


def read_sends(files):
    """{client port: ([start], [end])} of rt_peer --send-log FILES, each
    port's calls in time order (one thread a connection: they do not
    overlap)."""
    calls = {}
    for path in files:
        with open(path, encoding="ascii") as f:
            for n, line in enumerate(f, 1):
                w = line.split()
                if len(w) != 5 or w[0] != "send":
                    raise SystemExit(f"series_measures: {path}:{n}: "
                                     f"malformed: {line!r}")
                calls.setdefault(int(w[1]), []).append((int(w[2]), int(w[3])))
    return {p: tuple(map(list, zip(*sorted(c)))) for p, c in calls.items()}


def held_until(sends, port, t, slack):
    """The end of the last send() call of PORT's owner in progress at any
    time in [T, T + SLACK] (when TCP may have seen what the capture saw at
    T), or T if none was."""
    starts, ends = sends.get(port, ([], []))
    first = bisect.bisect_left(ends, t)
    last = bisect.bisect_right(starts, t + slack) - 1
    return max(t, ends[last]) if first <= last else t


def read_captures(files):
    """The segments of every capture in FILES, in time order."""
    return sorted((s for c in files for s in tcp_rt_oracle.read_segments(c)),
                  key=lambda s: s.t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--series", required=True)
    ap.add_argument("--line", required=True, help='7600, P7600 or "*"')
    ap.add_argument("--capture", required=True, action="append")
    ap.add_argument("--width-us", type=int, required=True)
    ap.add_argument("--slack-us", type=int, default=20000)
    ap.add_argument("--ce", type=int)
    ap.add_argument("--ece", type=int)
    ap.add_argument("--ece-capture", action="append")
    ap.add_argument("--ece-sends", action="append")
    ap.add_argument("--dup", type=int)
    ap.add_argument("--holes", type=int, default=0,
                    help="the sender's retransmissions and the receiver's "
                    "drops: with any, TCP may have held data out of order "
                    "that the capture saw in order")
    ap.add_argument("--flows", type=int, action="append")
    ap.add_argument("--sockets", type=int, default=1)
    ap.add_argument("--host", action="store_true")
    a = ap.parse_args()
    width = a.width_us
    k = max(1, -(-a.slack_us // width))
    rows = series_check.read_series(a.series, a.line)
    if not rows:
        raise SystemExit(f"series_measures: no line {a.line}")
    segs = read_captures(a.capture)
    bad = []

    def got(col):
        out = {}
        for t, r in rows.items():
            if r.get(col):
                add(out, t // width, r[col])
        return out

    def compare(col, want, shift=True, at_most=False, spans=None,
                extra=None):
        """SPANS, where given: each event's own (first, last, 1) bucket,
        in place of a shift of k; EXTRA: {bucket: n} more the run may
        count, each within k buckets, or not at all."""
        g = got(col)
        gs, ws = sum(g.values()), sum(want.values())
        xs = sum(extra.values()) if extra else 0
        print(f"series_measures: {a.line} {col} {gs}, capture {ws}"
              f"{f'..{ws + xs}' if xs else ''}, in {len(g)} buckets "
              f"(capture: {len(want)})")
        if at_most:
            if not 0 < gs <= ws:
                bad.append(f"{col}: {gs} in the run, the capture says "
                           f"1..{ws}")
        elif not ws <= gs <= ws + xs:
            bad.append(f"{col}: {gs} in the run, {ws}"
                       f"{f'..{ws + xs}' if xs else ''} in the capture")
        elif spans is not None:
            miss = series_check.spans_ok(g, spans)
            if miss:
                bad.append(f"{col}: " + series_check.miss_text(
                    miss, f"each within {k} buckets of where the capture "
                    "saw it or of the end of the send() then holding its "
                    "socket"))
        elif xs:
            miss = series_check.spans_ok(
                g, [(b - k, b + k, n) for b, n in want.items()] +
                [(b - k, None, n) for b, n in extra.items()])
            if miss:
                bad.append(f"{col}: " + series_check.miss_text(
                    miss, f"each within {k} buckets of where the capture "
                    "saw it"))
        elif shift:
            msg = series_check.shifted_ok(g, want, k)
            if msg:
                bad.append(f"{col}: {msg}")

    dup_b, dup_s, new_b, new_s = received(segs, width, a.dup)

    if a.ce is not None:
        ce_b, ce_s = {}, {}
        for s in segs:
            if s.sport == a.ce and s.length and s.ecn == 3:
                add(ce_b, s.t // width, s.length)
                add(ce_s, s.t // width)
        if not ce_s:
            bad.append("no CE-marked data in the capture: a test of nothing")
        compare("ce_bytes", ce_b)
        compare("ce_segs", ce_s)

    if a.ece is not None:
        def eces(ss):
            return [s for s in ss if s.dport == a.ece and s.flags & ECE and
                    not s.flags & tcp_rt_oracle.SYN]
        left = eces(segs)
        came = eces(read_captures(a.ece_capture)) if a.ece_capture else left
        if came is not left and left and len(came) == len(left):
            # one path, no loss on it: the Nth seen to leave is the Nth
            # seen to arrive
            lag = [c.t - s.t for s, c in zip(left, came)]
            print(f"series_measures: {a.line} ECE seen {min(lag)} to "
                  f"{max(lag)} us after --capture saw it")
        ece, spans = {}, None
        for s in came:
            add(ece, s.t // width)
        if not ece:
            bad.append("no ECE in the capture: a test of nothing")
        if a.ece_sends:
            sends = read_sends(a.ece_sends)
            until = [held_until(sends, s.sport, s.t, a.slack_us) for s in came]
            spans = [(s.t // width - k, u // width + k, 1)
                     for s, u in zip(came, until)]
            held = [u - s.t for s, u in zip(came, until) if u > s.t]
            print(f"series_measures: {a.line} ECE: {len(held)} of "
                  f"{len(came)} came while a send() held the socket, up to "
                  f"{max(held, default=0)} us before it let go")
        compare("ece", ece, spans=spans)

    if a.dup is not None:
        if not dup_s:
            bad.append("no duplicate in the capture: a test of nothing")
        # Data TCP dropped on the way in (the capture saw it) leaves a
        # hole: what follows waits out of order, and a copy of it is new
        # to TCP (above rcv_nxt) while the capture saw it before.  With
        # holes, the run's duplicates are only some of the capture's.
        compare("dup_bytes", dup_b, at_most=a.holes > 0)
        compare("dup_segs", dup_s, at_most=a.holes > 0)

    if a.flows is not None:
        events = {}
        for s in segs:
            if s.length and (s.sport in a.flows or s.dport in a.flows):
                events.setdefault(conn_key(s), []).append(s.t)
        lo = hi = 0
        for ts in events.values():
            spans = [((t - a.slack_us) // width, (t + a.slack_us) // width)
                     for t in ts]
            union = set()
            for x, y in spans:
                union.update(range(x, y + 1))
            lo += stab(spans)
            hi += min(len(ts), len(union))
        lo, hi = lo * a.sockets, hi * a.sockets
        g = sum(got("flows").values())
        print(f"series_measures: {a.line} flows {g}, capture {lo}..{hi} "
              f"({len(events)} connections, {a.sockets} socket(s) each)")
        if not lo <= g <= hi:
            bad.append(f"flows: {g} in the run, the capture says {lo}..{hi}")
        most = max((r.get("flows", 0) for r in rows.values()), default=0)
        if most > len(events) * a.sockets:
            bad.append(f"flows: {most} in one bucket, more than the "
                       f"{len(events) * a.sockets} sockets")

    if a.host:
        syns = len({conn_key(s) for s in segs
                    if s.flags & tcp_rt_oracle.SYN and
                    not s.flags & tcp_rt_oracle.ACK})
        # segments sent again, a FIN alone included, as series_check
        # counts them: their end no further than what went before
        high, again = {}, {}
        for s in segs:
            fin = 1 if s.flags & tcp_rt_oracle.FIN else 0
            if not (s.length or fin):
                continue
            d = (s.src, s.dst)
            h = high.get(d)
            end = s.seq + s.length + fin
            if h is not None:
                end = tcp_rt_oracle.unwrap(end, h)
            if h is None or end > h:
                high[d] = end
            else:
                add(again, s.t // width)
        every = dict(new_s)
        for b, n in dup_s.items():
            add(every, b, n)
        joins = {}
        for s in tcp_rt_oracle.backlog_joins(segs):
            add(joins, s.t // width)
        for col in ("bytes_in", "bytes_out"):
            compare(col, new_b)
        # duplicates received included, and pure ACKs TCP joined to data
        compare("segs_in", every, extra=joins)
        compare("segs_out", new_s)
        compare("retrans", again)
        for col in ("estab", "closed"):
            compare(col, {0: 2 * syns}, shift=False)

    for m in bad:
        print(f"series_measures: {m}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
