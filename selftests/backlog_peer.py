#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A listener with N established connections it never accepts.

    backlog_peer.py PORT N

Listens on 127.0.0.1:PORT (backlog N), opens N client connections to it
and prints "ready" once every one is established (each client socket's
connect has completed: its handshake is done, so its server end waits in
the accept queue).  Then, for each line read on stdin:
    close    closes the listener (the kernel closes every unaccepted
             connection in its queue: inet_csk_listen_stop()), prints
             "closed";
    quit     closes the clients and exits.
tcp_rt_module.sh races the first against a release (deactivate=2).
"""

import resource
import selectors
import socket
import sys


def main():
    port, n = int(sys.argv[1]), int(sys.argv[2])
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 64
    if hard < want:
        hard = want
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", port))
    lsock.listen(n)

    sel = selectors.DefaultSelector()
    clients = []
    for _ in range(n):
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.setblocking(False)
        c.connect_ex(("127.0.0.1", port))
        sel.register(c, selectors.EVENT_WRITE)
        clients.append(c)
    pending = n
    while pending:
        events = sel.select(timeout=30)
        if not events:
            sys.exit(f"backlog_peer: {pending} of {n} connects not done in 30 s")
        for key, _ in events:
            err = key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                sys.exit(f"backlog_peer: connect: error {err}")
            sel.unregister(key.fileobj)
            pending -= 1
    print("ready", flush=True)

    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "close" and lsock is not None:
            lsock.close()
            lsock = None
            print("closed", flush=True)
        elif cmd == "quit":
            break
    for c in clients:
        c.close()


if __name__ == "__main__":
    main()
