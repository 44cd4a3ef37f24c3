#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Frames for try.sh: send them the way tcprt ship does, check the spool.

  try-frames.py send  --socket S --count N [--size mixed|BYTES] [--first K]
                      [--rate FRAMES_PER_S] [--wait-bytes SPOOL]
                      [--cpu NAME=PID ...]
      one unix datagram per frame, "<134>tcprt: " + frame, non-blocking:
      on EAGAIN (the socket's queue is full) poll() for POLLOUT and retry,
      counting the EAGAINs.  With --wait-bytes, wait until the spool holds
      every frame sent and report frames/s end to end and the CPU time of
      the threads of the --cpu processes.
  try-frames.py check --spool DIR --count N [--size ...] [--first K]
                      [--exact | --once | --at-least | --lossy]
      every line of DIR/*.frames (in name order) must be one of the frames
      sent, byte for byte; count missing, duplicated, corrupt and
      out-of-order ones (a line whose SEQ is below one seen before).
      --exact: each once and in order; --once: each once, in any order;
      --at-least: none missing (duplicates allowed); --lossy: report only.
  try-frames.py probe --socket S [--first K] [--size BYTES]
      send frames with MSG_DONTWAIT until EAGAIN (at most 1000); the last
      line of the output is how many were accepted.
  try-frames.py eagain
      what a unix datagram socket whose reader does not read does to
      sendto(MSG_DONTWAIT).

The frames are "D1 fleettest EPOCH SEQ 0 2 ...|" (random printable ASCII,
runs of spaces, " |", '%', '\\', '"', '#', "<134>" ... ending in '|') and,
every 97th, "C1 fleettest EPOCH SEQ 1 2 ... 0" (ending in a digit); each
one a function of its SEQ and --size, so the checker knows it.
"""

import argparse
import errno
import glob
import os
import random
import select
import socket
import sys
import time

EPOCH = 1795220891000000
PREFIX = b"<134>tcprt: "
MAX = 4000

_rnd = random.Random(20514)
# printable ASCII with a bias towards the awkward: spaces, '|', '%' ...
_alphabet = bytes(range(0x20, 0x7F)) + b"     ||||%%\\\\\"\"##<>"
POOL = bytes(_rnd.choice(_alphabet) for _ in range(1 << 20))
TRICKY = b"  | |  %msg% \\ \" # <134>tcprt: x |"


def frame_size(seq, size):
    if size == "mixed":
        # 20 .. 4000, a fair share of the largest
        r = (seq * 2654435761) & 0xFFFFFFFF
        if r % 10 == 0:
            return MAX
        return 20 + r % (MAX - 19)
    return int(size)


def frame(seq, size):
    n = frame_size(seq, size)
    if seq % 97 == 0:
        f = b"C1 fleettest %d %d" % (EPOCH, seq)
        i = 1
        while len(f) + 2 <= n:
            f += b" %d" % (i % 10)
            i += 1
        return f
    head = b"D1 fleettest %d %d 0 2 " % (EPOCH, seq)
    body = n - len(head) - 1
    if body < 0:
        return head[:-1] + b"|"
    if seq % 5 == 0 and body >= len(TRICKY):
        fill = TRICKY + POOL[:body - len(TRICKY)]
    else:
        off = (seq * 7919) % (len(POOL) - MAX)
        fill = POOL[off:off + body]
    return head + fill + b"|"


def spool_bytes(spool):
    total = 0
    for p in glob.glob(os.path.join(spool, "*.frames")):
        try:
            total += os.stat(p).st_size
        except FileNotFoundError:
            pass
    return total


def cpu_ticks(pids):
    """{(pid, comm of process, tid, comm of thread): utime+stime ticks}"""
    out = {}
    for pid in pids:
        try:
            with open("/proc/%d/comm" % pid) as f:
                pcomm = f.read().strip()
            for tid in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                    s = f.read()
                comm = s[s.index("(") + 1:s.rindex(")")]
                fields = s[s.rindex(")") + 2:].split()
                out[(pid, pcomm, int(tid), comm)] = int(fields[11]) + int(fields[12])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


def cmd_send(a):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.connect(a.socket)
    s.setblocking(False)
    p = select.poll()
    p.register(s, select.POLLOUT)
    eagain = waits = 0
    nbytes = 0
    hz = os.sysconf("SC_CLK_TCK")
    cpu0 = cpu_ticks(a.cpu)
    me0 = os.times()
    t0 = time.monotonic()
    for seq in range(a.first, a.first + a.count):
        if a.rate and seq % 100 == 0:
            ahead = t0 + (seq - a.first) / a.rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
        d = PREFIX + frame(seq, a.size)
        nbytes += len(d) - len(PREFIX) + 1
        while True:
            try:
                s.send(d)
                break
            except BlockingIOError:
                eagain += 1
                if not p.poll(1000):
                    waits += 1
    t1 = time.monotonic()
    me1 = os.times()
    print("sent %d frames (%d bytes in the spool when all arrive) in %.2f s:"
          " %.0f frames/s into the socket; EAGAIN %d times (%d polls of 1 s"
          " timed out); sender CPU %.2f s"
          % (a.count, nbytes, t1 - t0, a.count / (t1 - t0), eagain, waits,
             (me1.user + me1.system) - (me0.user + me0.system)))
    if not a.wait_bytes:
        return 0
    want = a.base_bytes + nbytes
    last, last_t = -1, time.monotonic()
    while True:
        have = spool_bytes(a.wait_bytes)
        if have >= want:
            break
        now = time.monotonic()
        if have != last:
            last, last_t = have, now
        elif now - last_t > a.timeout:
            print("TIMEOUT: spool stuck at %d of %d bytes" % (have, want))
            return 1
        time.sleep(0.02)
    t2 = time.monotonic()
    cpu1 = cpu_ticks(a.cpu)
    print("all in the spool after %.2f s: %.0f frames/s, %.1f MB/s end to end"
          % (t2 - t0, a.count / (t2 - t0), nbytes / (t2 - t0) / 1e6))
    procs = {}
    for k, v in cpu1.items():
        d = (v - cpu0.get(k, 0)) / hz
        if d >= 0.05:
            procs.setdefault((k[0], k[1]), []).append((d, k[3]))
    for (pid, pcomm), th in sorted(procs.items()):
        tot = sum(x[0] for x in th)
        print("  CPU %-9s %-8s %6.2f s (%4.0f%% of the wall time) %s" % (
            a.cpu_names.get(pid, str(pid)), pcomm, tot, 100 * tot / (t2 - t0),
            ", ".join("%s %.2f" % (n, d) for d, n in sorted(th, reverse=True))))
    return 0


def cmd_check(a):
    files = sorted(glob.glob(os.path.join(a.spool, "*.frames")))
    seen = {}
    lines = corrupt = disorder = 0
    prev = -1
    examples = []
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        if data and not data.endswith(b"\n"):
            corrupt += 1
            examples.append("%s: does not end in a newline" % path)
        for ln in data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"):
            lines += 1
            parts = ln.split(b" ", 4)
            try:
                seq = int(parts[3])
                ok = a.first <= seq < a.first + a.count and ln == frame(seq, a.size)
            except (IndexError, ValueError):
                ok = False
            if not ok:
                corrupt += 1
                if len(examples) < 5:
                    examples.append("corrupt line %d: %r" % (lines, ln[:120]))
                continue
            seen[seq] = seen.get(seq, 0) + 1
            if seq < prev:
                disorder += 1
            prev = max(prev, seq)
    missing = [s for s in range(a.first, a.first + a.count) if s not in seen]
    dups = sum(c - 1 for c in seen.values())
    print("check %s: %d lines in %d file(s); %d of %d frames arrived, %d missing,"
          " %d duplicate lines, %d corrupt, %d out of order"
          % (a.spool, lines, len(files), len(seen), a.count, len(missing), dups,
             corrupt, disorder))
    if missing:
        runs, start = [], missing[0]
        for i in range(1, len(missing) + 1):
            if i == len(missing) or missing[i] != missing[i - 1] + 1:
                runs.append("%d-%d" % (start, missing[i - 1]) if start != missing[i - 1] else str(start))
                if i < len(missing):
                    start = missing[i]
        print("  missing: %s%s" % (" ".join(runs[:10]), " ..." if len(runs) > 10 else ""))
    for e in examples:
        print("  " + e)
    if a.mode == "exact":
        return 0 if not missing and not dups and not corrupt and not disorder else 1
    if a.mode == "once":
        return 0 if not missing and not dups and not corrupt else 1
    if a.mode == "at-least":
        return 0 if not missing and not corrupt else 1
    return 0


def cmd_probe(a):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.connect(a.socket)
    n = 0
    while n < 1000:
        try:
            s.send(PREFIX + frame(a.first + n, a.size), socket.MSG_DONTWAIT)
            n += 1
        except BlockingIOError:
            print("%d frames accepted, then EAGAIN" % n)
            break
    else:
        print("%d frames accepted, no EAGAIN" % n)
    print(n)
    return 0


def cmd_eagain(a):
    path = "/tmp/try-frames-eagain.%d.sock" % os.getpid()
    r = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    r.bind(path)
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        for size in (200, MAX):
            d = PREFIX + frame(1, size)
            n = 0
            while True:
                try:
                    s.sendto(d, socket.MSG_DONTWAIT, path)
                    n += 1
                except OSError as e:
                    print("unread socket, %d-byte datagrams, unconnected sendto(MSG_DONTWAIT):"
                          " %d queued, then %s" % (len(d), n, errno.errorcode[e.errno]))
                    break
            while True:
                try:
                    r.recv(8192, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
        c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        c.connect(path)
        n = 0
        while True:
            try:
                c.send(PREFIX + frame(1, 200), socket.MSG_DONTWAIT)
                n += 1
            except OSError as e:
                p = select.poll()
                p.register(c, select.POLLOUT)
                ready = p.poll(0)
                r.recv(8192)
                ready2 = p.poll(100)
                print("connected send(MSG_DONTWAIT): %d queued, then %s; poll(POLLOUT)"
                      " while full: %s, after one datagram is read: %s"
                      % (n, errno.errorcode[e.errno], "ready" if ready else "not ready",
                         "ready" if ready2 else "not ready"))
                break
    finally:
        os.unlink(path)
    with open("/proc/sys/net/unix/max_dgram_qlen") as f:
        print("/proc/sys/net/unix/max_dgram_qlen = %s" % f.read().strip())
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("send", "check"):
        p = sub.add_parser(name)
        p.add_argument("--count", type=int, required=True)
        p.add_argument("--size", default="mixed")
        p.add_argument("--first", type=int, default=0)
    p = sub.choices["send"]
    p.add_argument("--socket", required=True)
    p.add_argument("--wait-bytes", metavar="SPOOL")
    p.add_argument("--base-bytes", type=int, default=0)
    p.add_argument("--timeout", type=float, default=30)
    p.add_argument("--rate", type=float, default=0, help="frames/s (default: as fast as it goes)")
    p.add_argument("--cpu", metavar="NAME=PID", nargs="*", default=[])
    p = sub.choices["check"]
    p.add_argument("--spool", required=True)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--exact", dest="mode", action="store_const", const="exact")
    g.add_argument("--once", dest="mode", action="store_const", const="once")
    g.add_argument("--at-least", dest="mode", action="store_const", const="at-least")
    g.add_argument("--lossy", dest="mode", action="store_const", const="lossy")
    sub.add_parser("eagain")
    p = sub.add_parser("probe")
    p.add_argument("--socket", required=True)
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--size", default="200")
    a = ap.parse_args()
    if a.cmd == "send":
        a.cpu_names = {}
        pids = []
        for x in a.cpu:
            name, _, pid = x.rpartition("=")
            pids.append(int(pid))
            a.cpu_names[int(pid)] = name or pid
        pids.append(os.getpid())
        a.cpu_names[os.getpid()] = "python"
        a.cpu = pids
        return cmd_send(a)
    if a.cmd == "check":
        a.mode = a.mode or "exact"
        return cmd_check(a)
    if a.cmd == "probe":
        return cmd_probe(a)
    return cmd_eagain(a)


if __name__ == "__main__":
    sys.exit(main())
