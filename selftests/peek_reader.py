#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A reader of one peek file (rt-network-peek<cpu>) that the writer laps on
cue, for tcp_rt_binary.sh's peek case: it opens the file and reads once,
creates READY, waits until GO exists (the test floods the log meanwhile),
then reads to the end of the peek.  Every line must be whole and numbered
(log_ext=seq, nothing else); the numbers must rise.  Prints

    lines N bad N first F last L gaps G

(first and last: the numbers of the first and last line, -1 when none;
gaps: the numbers missing between consecutive lines) and up to five bad
lines; exits 1 when a line was bad.

Usage: peek_reader.py FILE READ_SIZE READY GO
"""
import os
import re
import sys
import time

LINE = re.compile(rb"V6 [RWNPE] \d+ \d{6} \S+:\d+ \S+:\d+(?: \d+)* seq=(\d+)")


def main():
    path, size, ready, go = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    fd = os.open(path, os.O_RDONLY)
    chunks = [os.read(fd, size)]
    open(ready, "w").close()
    while not os.path.exists(go):
        time.sleep(0.01)
    while True:
        chunk = os.read(fd, size)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    data = b"".join(chunks)
    lines = data.split(b"\n")
    tail = lines.pop()
    seqs, bad, shown = [], 0, []
    if tail:
        bad += 1
        shown.append("no newline at the end: %r" % tail[-80:])
    for line in lines:
        m = LINE.fullmatch(line)
        if not m:
            bad += 1
            if len(shown) < 5:
                shown.append("malformed: %r" % line[:120])
            continue
        seq = int(m.group(1))
        if seqs and seq <= seqs[-1]:
            bad += 1
            if len(shown) < 5:
                shown.append("seq %d after %d" % (seq, seqs[-1]))
            continue
        seqs.append(seq)
    gaps = sum(b - a - 1 for a, b in zip(seqs, seqs[1:]))
    print("lines %d bad %d first %d last %d gaps %d" % (
        len(lines), bad, seqs[0] if seqs else -1, seqs[-1] if seqs else -1, gaps))
    for s in shown:
        print("bad line: " + s)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
