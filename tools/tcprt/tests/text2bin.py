#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The binary log (include/tcp_rt_bin.h, layout version 1) of text log
lines, written from the layout's description with Python's struct - not
from the C code that reads it - so that tcprt's binary input can be held
to its text input on the same records (tests/cli.sh, case_binary_input).

Usage: text2bin.py TEXT_LOG BINARY_LOG [--first-index N] [--version V]

Each line of TEXT_LOG ("V6 T sec usec peer local fields... name=value...")
becomes one record; a line this cannot encode (a vendor line, an unknown
name=value) stops it with exit 1, naming the line.  --version writes
another layout version in every record's first byte (a record tcprt must
refuse).  Numbers little-endian, as the module writes them on x86-64 and
arm64; ports and addresses in network order.
"""
import ipaddress
import struct
import sys

TYPES = "RWNPE"
NFIELDS = {"R": 10, "W": 9, "N": 5, "P": 10, "E": 6}
BD = ["rq_wait", "app", "sq_wait", "rwnd_limited", "sndbuf_limited", "app_limited"]
V6, NUMBERED, NETNS, CGROUP, BDBLOCK = 1, 2, 4, 8, 16


def endpoint(s):
    """'a.b.c.d:port' or '[v6]:port' -> (is_v6, 4 or 16 bytes, port)"""
    addr, port = s.rsplit(":", 1)
    if addr.startswith("["):
        return True, ipaddress.IPv6Address(addr[1:-1]).packed, int(port)
    return False, ipaddress.IPv4Address(addr).packed, int(port)


def record(line, idx, ver):
    f = line.split(" ")
    if f[0] != "V6" or f[1] not in TYPES:
        raise ValueError("not a tcp_rt record")
    t = f[1]
    sec, usec = int(f[2]), int(f[3])
    v6, dst, dport = endpoint(f[4])
    v6s, src, sport = endpoint(f[5])
    if v6 != v6s:
        raise ValueError("endpoints of two families")
    n = NFIELDS[t]
    fields = [int(x) for x in f[6:6 + n]]
    if len(fields) != n:
        raise ValueError("%d fields" % len(fields))
    ext = {}
    for kv in f[6 + n:]:
        k, v = kv.split("=", 1)
        if k not in ["netns", "cgroup", "seq"] + BD:
            raise ValueError("unknown field " + k)
        ext[k] = int(v)
    flags = (V6 if v6 else 0) | (NUMBERED if "seq" in ext else 0) | \
        (NETNS if "netns" in ext else 0) | (CGROUP if "cgroup" in ext else 0)
    bd_mask = sum(1 << i for i, k in enumerate(BD) if k in ext)
    if bd_mask:
        flags |= BDBLOCK
    body = dst + src
    body += b"".join(struct.pack("<Q", x) for x in fields)
    if "netns" in ext:
        body += struct.pack("<II", ext["netns"], 0)
    if "cgroup" in ext:
        body += struct.pack("<Q", ext["cgroup"])
    if bd_mask:
        body += struct.pack("<6I", *(ext.get(k, 0) for k in BD))
    if "seq" in ext:
        body += struct.pack("<Q", ext["seq"])
    length = 32 + len(body)
    head = struct.pack("<BBBBHHQq", ver, TYPES.index(t), flags, n, length,
                       bd_mask, idx, sec * 1000000000 + usec * 1000)
    head += struct.pack(">HH", dport, sport) + struct.pack("<I", 0)
    return head + body


def main():
    args = sys.argv[1:]
    first, ver = 0, 1
    if "--first-index" in args:
        i = args.index("--first-index")
        first = int(args[i + 1])
        del args[i:i + 2]
    if "--version" in args:
        i = args.index("--version")
        ver = int(args[i + 1])
        del args[i:i + 2]
    src, dst = args
    out = bytearray()
    with open(src) as f:
        for no, line in enumerate(f, 1):
            try:
                out += record(line.rstrip("\n"), first + no - 1, ver)
            except ValueError as e:
                sys.exit("text2bin: %s:%d: %s: %s" % (src, no, e, line.rstrip()))
    with open(dst, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
