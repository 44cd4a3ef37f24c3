#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hold the recorder's frozen windows (rt-network-windows) to the records
of the same traffic.

Each window file: a header "# window <sec> <usec> <width_us> <buckets>
slow=<n> clipped=<n> freezes=<n>", then rt-network-series' lines.  Checked:
  - the headers: the width asked for, nothing clipped, windows in order
    and apart (none overlaps another);
  - every task of the port at least --slow-us long (its R record: T0 and
    duration) lies inside one window (or windows that abut), from --before-us ahead of its start
    to --after-us past its end (within a bucket: the recorder's clock
    and the records' are read apart); the slow= counts add up to those
    tasks;
  - a window's lines of the port count as started (at T0, within a
    bucket) exactly the R records whose T0 lies inside it, and show the
    task open (the open gauge at least 1) in every bucket wholly inside
    a slow task's span.
Prints what it compared; exits 1 at the first mismatch.
"""

import argparse
import re
import sys

HEADER = re.compile(r"^# window (\d+) (\d{6}) (\d+) (\d+) slow=(\d+) clipped=(\d+) freezes=(\d+)$")


def read_window(path, port):
    with open(path, encoding="ascii") as f:
        lines = f.read().splitlines()
    if not lines:
        raise SystemExit(f"windows_check: {path}: empty")
    m = HEADER.match(lines[0])
    if not m:
        raise SystemExit(f"windows_check: {path}:1: not a window's header: {lines[0]!r}")
    sec, usec, width, n, slow, clipped, freezes = (int(v) for v in m.groups())
    start = sec * 1000000 + usec
    rows = {}
    for k, line in enumerate(lines[1:], 2):
        w = line.split()
        if len(w) < 15 or w[0].startswith("#"):
            raise SystemExit(f"windows_check: {path}:{k}: malformed: {line!r}")
        t = int(w[0]) * 1000000 + int(w[1])
        if not start <= t < start + n * width or (t - start) % width:
            raise SystemExit(f"windows_check: {path}:{k}: bucket {t} outside the window "
                             f"{start}..{start + n * width} or off its grid")
        if w[2] == str(port):
            rows[t] = {"started": int(w[8]), "open": int(w[14])}
    return {"path": path, "start": start, "end": start + n * width,
            "width": width, "slow": slow, "clipped": clipped,
            "freezes": freezes, "rows": rows}


def read_tasks(path, port):
    tasks = []
    with open(path, encoding="ascii") as f:
        for line in f:
            w = line.split()
            if len(w) > 7 and w[0] == "V6" and w[1] == "R" and \
                    w[5].endswith(f":{port}"):
                tasks.append((int(w[2]) * 1000000 + int(w[3]), int(w[7])))
    return tasks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--log", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--width-us", type=int, required=True)
    ap.add_argument("--slow-us", type=int, required=True)
    ap.add_argument("--before-us", type=int, default=200000)
    ap.add_argument("--after-us", type=int, default=100000)
    ap.add_argument("windows", nargs="+")
    a = ap.parse_args()

    wins = [read_window(p, a.port) for p in a.windows]
    tasks = read_tasks(a.log, a.port)
    slow = [t for t in tasks if t[1] >= a.slow_us]
    w_us = a.width_us
    for i, win in enumerate(wins):
        if win["width"] != w_us or win["clipped"]:
            sys.exit(f"{win['path']}: width {win['width']}, clipped {win['clipped']}")
        if i and win["start"] < wins[i - 1]["end"]:
            sys.exit(f"{win['path']}: begins before the window before it ends")
    if sum(w["slow"] for w in wins) != len(slow):
        sys.exit(f"slow= adds up to {sum(w['slow'] for w in wins)}, "
                 f"the records have {len(slow)} tasks of {a.slow_us} us or more")
    # windows that abut (a span cut at the ring's length, or reaching
    # into a window already given out) hold a task together
    spans = []
    for w in wins:
        if spans and spans[-1][1] == w["start"]:
            spans[-1][1] = w["end"]
        else:
            spans.append([w["start"], w["end"]])
    for t0, dur in slow:
        lo, hi = t0 - a.before_us, t0 + dur + a.after_us
        if not any(s <= lo + w_us and hi - w_us <= e for s, e in spans):
            sys.exit(f"the task of {t0} ({dur} us): no window holds "
                     f"{lo}..{hi}: {[(w['start'], w['end']) for w in wins]}")
    for win in wins:
        got = sum(r["started"] for r in win["rows"].values())
        want = sum(1 for t0, _ in tasks if win["start"] <= t0 < win["end"])
        if got != want:
            sys.exit(f"{win['path']}: {got} tasks started, the records "
                     f"have {want} beginning in it")
        for t0, dur in slow:
            if not win["start"] <= t0 < win["end"]:
                continue
            b = (t0 - win["start"]) // w_us * w_us + win["start"] + w_us
            while b + w_us <= min(t0 + dur, win["end"]):
                if win["rows"].get(b, {}).get("open", 0) < 1:
                    sys.exit(f"{win['path']}: bucket {b} inside the task of "
                             f"{t0} ({dur} us) without it open")
                b += w_us
    print(f"windows_check: {len(wins)} windows, {len(tasks)} tasks of port "
          f"{a.port}, {len(slow)} of them slow, each inside a window "
          f"from {a.before_us} us before to {a.after_us} us after")


if __name__ == "__main__":
    main()
