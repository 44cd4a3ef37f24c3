#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A client of a windows socket (tcprt live's, the agent's) that asks and
never reads: it sends questions until the socket takes no more, so that
the answers fill its side, then holds the connection open until it is
killed.  The sink must close it (windows_slow) and serve the others.

usage: never_read.py SOCKET
"""
import socket
import sys
import time

s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.setblocking(False)
try:
    while True:
        s.send(b"status\n" * 512)
except (BlockingIOError, BrokenPipeError, ConnectionResetError):
    pass
time.sleep(600)
