#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check tcprt summary's "where the time goes" blocks against a model
that reads the records itself (tests/cli.sh):

    breakdown_model.py DIR FROM_SEC TO_SEC < summary-output

The model knows docs/records.md and tcprt.8's definition of the lines,
nothing of tcprt's code: for the R (per local port) and P (per peer
port) records that started in [FROM, TO), the percentiles of the exact
values (nearest rank), the bands (p50: [p50, p90), p90: [p90, p99),
p99: [p99, max]), each part's share of the band's sum, the total in its
unit (us below 1 ms, ms with one decimal below 10 s, else s with two)
and the largest remainder rounding.  tests/breakdown_gen.py writes
values for which the histogram's percentiles are exact.  Each part's own
p50 / p99 comes from the histogram: it is checked within 1/128 and the
rounding of its unit.  Exits 1, saying what differs.
"""
import glob
import re
import sys

Q = (500, 900, 990, 1000)
PROCESS = ("rq_wait", "app", "sq_wait")
LIMITED = ("rwnd_limited", "sndbuf_limited", "app_limited")
FIELDS = PROCESS + LIMITED


def records(d, lo, hi):
    for path in sorted(glob.glob(d + "/rt-network-log*")):
        for line in open(path):
            tok = line.split()
            t, sec, usec = tok[1], int(tok[2]), int(tok[3])
            if t not in "RP" or not lo * 10**6 <= sec * 10**6 + usec < hi * 10**6:
                continue
            f = [int(x) for x in tok[6:] if "=" not in x]
            ext = dict((k, int(v)) for k, v in (x.split("=") for x in tok[6:] if "=" in x))
            if t == "R":
                port, role, process = int(tok[5].rsplit(":", 1)[1]), "server", f[5]
                transfer = max(f[1] - f[6] - f[5], 0)       # download
            else:
                port, role, process = int(tok[4].rsplit(":", 1)[1]), "client", None
                transfer = max(f[1] - f[5] - f[6], 0)       # upload
            yield (port, role, t), process, transfer, ext


def rank(vals, q):
    vals = sorted(vals)
    return vals[max((len(vals) * q + 999) // 1000, 1) - 1]


def unit(us):
    return ("us", 1, 0) if us < 1000 else ("ms", 100, 1) if us < 10**7 else ("s", 10000, 2)


def fmt(q, u):
    return "%d" % q if u[2] == 0 else "%d.%0*d" % (q // 10**u[2], u[2], q % 10**u[2])


def quanta(us, u):
    return us // u[1] + (us % u[1] >= (u[1] + 1) // 2)


def largest_remainder(total, weights):
    s = sum(weights)
    if not s:
        return [0] * len(weights)
    out = [total * w // s for w in weights]
    rem = [total * w % s for w in weights]
    for _ in range(total - sum(out)):
        j = max(range(len(rem)), key=lambda i: (rem[i], -i))
        out[j] += 1
        rem[j] = -1
    return out


def split_lines(tasks, metric, names):
    """tasks: (total, [parts]) -> the three lines"""
    totals = [t for t, _ in tasks]
    v = [rank(totals, q) for q in Q]
    out = []
    for i in range(3):
        hi = v[i + 1]
        band = [p for t, p in tasks if v[i] <= t and (t < hi or (i == 2 and t <= hi))]
        if not band:
            band = [p for t, p in tasks if t == v[i]]
        sums = [sum(p[k] for p in band) for k in range(len(names))]
        u = unit(v[i])
        tq = quanta(v[i], u)
        parts = largest_remainder(tq, sums)
        out.append("p%d %s %s %s = " % (Q[i] // 10, metric, fmt(tq, u), u[0]) +
                   " + ".join("%s %s" % (n, fmt(p, u)) for n, p in zip(names, parts)))
    return out


def expected(d, lo, hi):
    rows = {}
    for key, process, transfer, ext in records(d, lo, hi):
        r = rows.setdefault(key, {"n": 0, "proc": [], "tran": [], "own": {}})
        r["n"] += 1
        for k in FIELDS:
            if k in ext:
                r["own"].setdefault(k, []).append(ext[k])
        if process is not None and all(k in ext for k in PROCESS) and \
                sum(ext[k] for k in PROCESS) == process:
            r["proc"].append((process, [ext[k] for k in PROCESS]))
        if all(k in ext for k in LIMITED) and sum(ext[k] for k in LIMITED) <= transfer:
            lim = [ext[k] for k in LIMITED]
            r["tran"].append((transfer, lim + [transfer - sum(lim)]))
    blocks = {}
    for (port, role, t), r in rows.items():
        if not r["own"]:
            continue
        tname = "upload" if t == "P" else "download"
        head = "# where the time goes, port %d %s %s: %d task%s" % (
            port, role, t, r["n"], "" if r["n"] == 1 else "s")
        if r["proc"]:
            head += ", %d with the process split" % len(r["proc"])
        if r["tran"]:
            head += ", %d with the %s split" % (len(r["tran"]), tname)
        lines = [head]
        if r["proc"]:
            lines += split_lines(r["proc"], "process", PROCESS)
        if r["tran"]:
            lines += split_lines(r["tran"], tname, LIMITED + ("sending",))
        blocks[head] = (lines, r["own"])
    return blocks


def us_of(text):
    num, u = text.split()
    return float(num) * {"us": 1, "ms": 1000, "s": 10**6}[u], unit(float(num) * {"us": 1, "ms": 1000, "s": 10**6}[u])[1]


def check_own(line, own):
    errors = []
    for name, a, b in re.findall(r"(\w+) ([\d.]+ \w+) / ([\d.]+ \w+)", line):
        for got, q in ((a, 500), (b, 990)):
            exact = rank(own[name], q)
            val, quantum = us_of(got)
            if abs(val - exact) > exact / 128 + quantum / 2 + 1:
                errors.append("%s p%d: printed %s, exact %d us" % (name, q // 10, got, exact))
    return errors


def added_up(line):
    """a split line's parts add up to its total, in its last digit"""
    m = re.match(r"p\d+ \w+ ([\d.]+) \w+ = (.*)$", line)
    parts = re.findall(r"\w+ ([\d.]+)", m.group(2))
    return sum(int(p.replace(".", "")) for p in parts) == int(m.group(1).replace(".", ""))


def main():
    d, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    want = expected(d, lo, hi)
    got, cur, errors = {}, None, []
    for line in sys.stdin:
        line = " ".join(line.split())
        if line.startswith("# where the time goes"):
            cur = got.setdefault(line, [line])
        elif cur is not None and line:
            cur.append(line)
        else:
            cur = None
    if sorted(got) != sorted(want):
        errors.append("blocks: got %s, expected %s" % (sorted(got), sorted(want)))
    for head, (lines, own) in want.items():
        g = got.get(head, [])
        split = [l for l in g if not l.startswith("p50 / p99")]
        if split != lines:
            errors.append("block differs:\n  got      %s\n  expected %s" %
                          ("\n           ".join(split), "\n           ".join(lines)))
        errors += ["does not add up: " + l for l in split[1:] if not added_up(l)]
        eachs = [l for l in g if l.startswith("p50 / p99")]
        names = sorted(n for l in eachs for n in re.findall(r"(\w+) [\d.]+ \w+ /", l))
        if names != sorted(own):
            errors.append("p50 / p99 of each: %s, expected %s" % (names, sorted(own)))
        for l in eachs:
            errors += check_own(l, own)
        print("# %s: %d lines checked" % (head, len(g)))
    for e in errors:
        print("# " + e)
    sys.exit(1 if errors else 0)


main()
