#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The guest's stalls as selftests/stallmon wrote them, and how much of a
window they cover.

A stall is a time when a CPU ran nothing, not even a SCHED_FIFO task at
the top priority: the host did not run the vCPU, or the kernel ran
without preemption.  What the module stamps and what the capture's tap
stamps can lie that far apart, the machine's speed and not the module
setting it: a time off by more than its tolerance is excused when stalls
cover the excess, and only then (tcp_rt_oracle.py --stalls).

    stalls.py FILE LO HI     microseconds of [LO, HI] (realtime us) that
                             FILE's stalls cover, on any CPU
"""

import sys


def load(path):
    """FILE's stalls: sorted (start, end, cpu), realtime microseconds."""
    stalls = []
    with open(path, encoding="ascii") as f:
        for n, line in enumerate(f, 1):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            if words[0] != "stall" or len(words) != 4:
                raise ValueError(f"{path}:{n}: not a stall line: {line!r}")
            cpu, start, end = (int(w) for w in words[1:])
            stalls.append((start, end, cpu))
    return sorted(stalls)


def covered(stalls, lo, hi):
    """How much of [lo, hi] the stalls cover, overlaps counted once (a
    stall of the whole guest is one on every CPU)."""
    total, reach = 0, lo
    for start, end, _cpu in stalls:
        start, end = max(start, reach), min(end, hi)
        if end > start:
            total += end - start
            reach = end
    return total


def longest(stalls, lo, hi):
    """The longest stall that overlaps [lo, hi]: (start, end, cpu) or None."""
    near = [s for s in stalls if s[1] > lo and s[0] < hi]
    return max(near, key=lambda s: s[1] - s[0], default=None)


def main(argv):
    if len(argv) != 4:
        sys.exit("usage: stalls.py FILE LO HI")
    print(covered(load(argv[1]), int(argv[2]), int(argv[3])))


if __name__ == "__main__":
    main(sys.argv)
