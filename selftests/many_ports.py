#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""One request/response on each of COUNT local ports from BASE on, one after
the other, in one process: COUNT tracked server connections with one task
each, on whichever CPU this process runs (the stats' per-CPU banks).

usage: many_ports.py BASE COUNT [REQ_BYTES RESP_BYTES]
Exit 0 when every exchange carried exactly its bytes."""

import socket
import sys


def read_n(sock, n):
    got = 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            raise SystemExit(f"many_ports: early EOF after {got} of {n} bytes")
        got += len(chunk)


def main():
    base, count = int(sys.argv[1]), int(sys.argv[2])
    req = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    resp = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    listeners = []
    for port in range(base, base + count):
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", port))
        ls.listen(1)
        listeners.append(ls)
    for ls in listeners:
        cli = socket.create_connection(ls.getsockname())
        srv, _ = ls.accept()
        cli.sendall(b"q" * req)
        read_n(srv, req)
        srv.sendall(b"r" * resp)
        read_n(cli, resp)
        cli.close()
        if srv.recv(1):                 # the client's FIN, then close
            raise SystemExit("many_ports: data after the response")
        srv.close()
        ls.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
