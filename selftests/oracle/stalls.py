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

    stalls.py FILE LO HI [LO HI ...]
                             microseconds of the windows [LO, HI]
                             (realtime us) that FILE's stalls cover, on any
                             CPU, overlaps of windows or stalls counted once
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


def merged(windows):
    """The windows [(lo, hi), ...] as their union: sorted, disjoint."""
    union = []
    for lo, hi in sorted(windows):
        if union and lo <= union[-1][1]:
            union[-1] = (union[-1][0], max(union[-1][1], hi))
        else:
            union.append((lo, hi))
    return union


def covered(stalls, windows):
    """How much of the windows' union the stalls cover, overlaps counted
    once (a stall of the whole guest is one on every CPU)."""
    total = 0
    for lo, hi in merged(windows):
        reach = lo
        for start, end, _cpu in stalls:
            start, end = max(start, reach), min(end, hi)
            if end > start:
                total += end - start
                reach = end
    return total


def longest(stalls, windows):
    """The longest stall that overlaps one of the windows: (start, end,
    cpu) or None."""
    near = [s for s in stalls
            if any(s[1] > lo and s[0] < hi for lo, hi in windows)]
    return max(near, key=lambda s: s[1] - s[0], default=None)


def main(argv):
    if len(argv) < 4 or len(argv) % 2:
        sys.exit("usage: stalls.py FILE LO HI [LO HI ...]")
    bounds = [int(a) for a in argv[2:]]
    print(covered(load(argv[1]), list(zip(bounds[::2], bounds[1::2]))))


if __name__ == "__main__":
    main(sys.argv)
