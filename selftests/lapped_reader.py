#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A deliberately slow reader of one tcp_rt log file, for the lapped-reader
test (tcp_rt_stress.sh): small reads with pauses between them, so that the
writers lap it over and over, for a given time.  It joins what it reads into
lines as any reader must (a line may end in a later read) and holds every
line to what the workload can have written:

  R       sent and recv are exactly the workload's response and request
          sizes, the peer endpoint is the workload's port;
  any     the letter's exact field count, every field a number, both
          endpoints addr:port with a 6-digit microsecond field before them.

A line spliced from two records (the writer overwrote the bytes being read,
or the reader joined the head of a line from before a lap with the tail of
one after it) fails one of those.  Prints "lines N bad N" and up to five bad
lines; exits 1 when any line was bad or none was read.

Usage: lapped_reader.py FILE SECONDS READ_SIZE PAUSE_MS PORT REQ RESP
"""
import os
import re
import sys
import time

FIELDS = {"R": 10, "W": 9, "N": 5, "P": 10, "E": 6}
LINE = re.compile(r"V6 ([RWNPE]) \d+ \d{6} (\S+):(\d+) (\S+):(\d+)((?: \d+)*)")


def bad_reason(line, port, req, resp):
    m = LINE.fullmatch(line)
    if not m:
        return "malformed"
    kind, fields = m.group(1), m.group(6).split()
    if len(fields) != FIELDS[kind]:
        return "%d fields for %s" % (len(fields), kind)
    if m.group(5) != str(port):
        return "local port %s" % m.group(5)
    if kind == "R" and (fields[0] != str(resp) or fields[7] != str(req)):
        return "sent %s recv %s" % (fields[0], fields[7])
    return None


def main():
    path, secs, size, pause, port, req, resp = sys.argv[1:8]
    secs, size, pause = float(secs), int(size), float(pause) / 1000
    fd = os.open(path, os.O_RDONLY)
    end = time.monotonic() + secs
    pending = b""
    lines = bad = 0
    shown = []
    while time.monotonic() < end:
        chunk = os.read(fd, size)
        if pause:
            time.sleep(pause)
        if not chunk:
            continue
        parts = (pending + chunk).split(b"\n")
        pending = parts.pop()
        for raw in parts:
            lines += 1
            line = raw.decode("ascii", "replace")
            why = bad_reason(line, port, req, resp)
            if why:
                bad += 1
                if len(shown) < 5:
                    shown.append("%s: %r" % (why, line))
    os.close(fd)
    print("lines %d bad %d" % (lines, bad))
    for s in shown:
        print("bad line: " + s)
    sys.exit(1 if bad or not lines else 0)


if __name__ == "__main__":
    main()
