#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Record lines for the fleet tests and benchmark, in tcp_rt's form.

fleet_gen.py DIR N [--files F] [--seed S] [--start SEC] [--bad K]
             [--vendor K] [--step-back SEC]

writes N task records (R, with an E after every 50th) spread over F files
DIR/rt-network-log0..F-1, one line per record, starting at Unix time SEC
(default: $FLEET_T0, which the tests set, else 1795218000)
and 1 ms apart.  --bad K puts a malformed line (bytes of every kind,
'|' '~' '\\' and control bytes included) after every K-th record; --vendor
K writes every K-th record in the vendor TCP-RT's form (trailing space,
unpadded usec).  --step-back SEC: from the middle of each file on, the
times are SEC earlier (a host whose clock was stepped back).  --rate R:
append the lines over time, R records a second in all (a live load for
tcprt ship to follow), instead of at once.  --hold K:FILE (with --rate,
may be repeated): once K records are out, create FILE.held and write
nothing more until FILE exists (the time waited does not count against
the rate): a test puts its fault in place while the load stands still,
then lets it go on, so that the fault falls mid-load at any speed.

Prints the number of lines written per file, one per line.
"""
import argparse
import os
import random
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("n", type=int)
    ap.add_argument("--files", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int,
                    default=int(os.environ.get("FLEET_T0", 1795218000)))
    ap.add_argument("--bad", type=int, default=0)
    ap.add_argument("--vendor", type=int, default=0)
    ap.add_argument("--step-back", type=int, default=0)
    ap.add_argument("--rate", type=float, default=0)
    ap.add_argument("--hold", action="append", default=[],
                    help="K:FILE: at K records, FILE.held, then wait for FILE")
    a = ap.parse_args()
    holds = []
    for h in a.hold:
        k, _, path = h.partition(":")
        if not path or not k.isdigit() or not 0 < int(k) < a.n or not a.rate:
            ap.error(f"--hold {h}: K:FILE, 0 < K < N, with --rate")
        holds.append((int(k) / a.n, path))
    holds.sort()
    rnd = random.Random(a.seed)
    os.makedirs(a.dir, exist_ok=True)
    per = [a.n // a.files + (1 if i < a.n % a.files else 0) for i in range(a.files)]
    out = []
    for f in range(a.files):
        lines = []
        for i in range(per[f]):
            us = a.start * 1000000 + (i * a.files + f) * 1000
            if a.step_back and i >= per[f] // 2:
                us -= a.step_back * 1000000
            sec, usec = divmod(us, 1000000)
            d = rnd.randint(100, 200000)
            up, pr = d // 10, d // 2
            port = 40000 + (i % 20000)
            if a.vendor and i % a.vendor == a.vendor - 1:
                lines.append("V6 R %d %d 10.1.0.2:%d 10.1.0.1:7100 5000 %d 300 0 %d %d %d 300 0 1448 \n"
                             % (sec, usec, port, d, i + 1, pr, up))
            else:
                lines.append("V6 R %d %06d 10.1.0.2:%d 10.1.0.1:7100 5000 %d 300 0 %d %d %d 300 0 1448\n"
                             % (sec, usec, port, d, i + 1, pr, up))
            if i % 50 == 49:
                lines.append("V6 E %d %06d 10.1.0.2:%d 10.1.0.1:7100 %d 250000 0 15000 0 300\n"
                             % (sec, usec, port, i + 1))
            if a.bad and i % a.bad == a.bad - 1:
                lines.append("junk|~\\\x01\x7f\xff %d\n" % i)
        out.append(lines)
    files = [open(os.path.join(a.dir, "rt-network-log%d" % f), "w",
                  encoding="latin-1", newline="") for f in range(a.files)]
    if not a.rate:
        for f, lines in zip(files, out):
            f.write("".join(lines))
    else:
        # line k of a file goes out once k / len(file) of the run is over
        t0, done = time.monotonic(), [0] * a.files
        length = a.n / a.rate
        while any(d < len(l) for d, l in zip(done, out)):
            frac = min(1.0, (time.monotonic() - t0) / length)
            hold = holds and frac >= holds[0][0]
            if hold:
                frac = holds[0][0]
            for i, (f, lines) in enumerate(zip(files, out)):
                upto = len(lines) if frac >= 1.0 else int(len(lines) * frac)
                if upto > done[i]:
                    f.write("".join(lines[done[i]:upto]))
                    f.flush()
                    done[i] = upto
            if hold:
                path = holds.pop(0)[1]
                open(path + ".held", "w").close()
                waited = time.monotonic()
                while not os.path.exists(path):
                    time.sleep(0.05)
                t0 += time.monotonic() - waited
                continue
            time.sleep(0.05)
    for f, lines in zip(files, out):
        f.close()
        print(len(lines))


if __name__ == "__main__":
    main()
