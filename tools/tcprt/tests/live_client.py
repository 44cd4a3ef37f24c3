#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Clients of tcprt live's socket for tests/live.sh: what a service does,
and what a hostile or broken one does.

    live_client.py SOCKET concurrent    20 clients at once, 50 questions each
    live_client.py SOCKET hostile       malformed, oversized, never reading,
                                        silent, too many clients
Each prints one line per finding and exits 1 on the first failure.
"""
import json
import socket
import sys
import threading
import time

path, what = sys.argv[1], sys.argv[2]


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)     # blocking: a full backlog waits, never EAGAIN
    s.settimeout(10)
    return s


def ask(s, q, f=None):
    s.sendall(q.encode() + b"\n")
    f = f or s.makefile("rb")
    line = f.readline()
    if not line.endswith(b"\n"):
        raise RuntimeError(f"no whole answer to {q!r}: {line!r}")
    return json.loads(line)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def status():
    s = connect()
    a = ask(s, "status")
    s.close()
    return a


def settle():
    """status, once the server has seen every other client go, and how
    many of its own asks were refused meanwhile.  Until the server has
    seen them go, the status client may itself be one too many (refused,
    and counted so: no "clients" in the answer) - on a slow machine the
    closes of 64 clients take a while to be seen.  Waits 30 s at most."""
    deadline = time.monotonic() + 30
    refused = 0
    while True:
        st = status()
        if st.get("clients") == 1 or time.monotonic() > deadline:
            return st, refused
        if st.get("ok") is False and "too many" in st.get("error", ""):
            refused += 1
        time.sleep(0.05)


def concurrent():
    c = connect()
    ref = ask(c, "port=80 window=10s")
    c.close()
    errors = []

    def worker(i):
        try:
            s = connect()
            f = s.makefile("rb")
            for j in range(50):
                a = ask(s, "port=80 window=10s" if j % 2 else "port=443", f)
                if not a["ok"]:
                    errors.append(f"client {i}: {a}")
                if j % 2 and a["windows"] != ref["windows"]:
                    errors.append(f"client {i}: answer differs")
            f.close()
            s.close()
        except Exception as e:  # noqa: BLE001 - reported, then fail
            errors.append(f"client {i}: {e!r}")
    th = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    if errors:
        fail(errors[0])
    print("20 clients x 50 questions: every answer whole, ok, and the same")


def hostile():
    before = status()
    # malformed questions: an error each, the connection kept
    s = connect()
    f = s.makefile("rb")
    for q in ["bogus", "port=0", "port=99999", "port=80 window=7s",
              "port=80 role=nobody", "port=x", "", "port=80 key=a\x01b"]:
        a = ask(s, q, f)
        if q == "port=80 key=a\x01b":
            if not a["ok"] or a["seen"]:
                fail(f"{q!r}: {a}")
            continue
        if a["ok"] or not a.get("error"):
            fail(f"{q!r} was answered {a}")
    a = ask(s, "port=80", f)
    if not a["ok"]:
        fail("a good question after bad ones")
    f.close()   # the socket's file: it holds the connection open too
    s.close()
    print("malformed questions: an error each, the connection still served")
    # oversized: an error, then closed
    s = connect()
    s.sendall(b"port=80 " + b"x" * 600)
    line = s.makefile("rb").readline()
    a = json.loads(line)
    if a["ok"] or "longer than 512" not in a["error"]:
        fail(f"oversized: {a}")
    try:    # closed: an end of file, or a reset for the bytes left unread
        if s.recv(100) != b"":
            fail("oversized: the connection stays open")
    except ConnectionResetError:
        pass
    s.close()
    print("a question over 512 bytes: an error, then closed")
    # a client that connects and never says anything, one that asks and
    # never reads: others are still answered at once
    silent = connect()
    greedy = connect()
    greedy.setblocking(False)
    sent = 0
    q = b"port=80\n" * 512
    t0 = time.monotonic()
    while time.monotonic() - t0 < 20:
        try:
            sent += greedy.send(q)
        except BlockingIOError:
            time.sleep(0.01)
            if status()["slow"] > before["slow"]:
                break
        except (BrokenPipeError, ConnectionResetError):
            break
    st = status()
    if st["slow"] != before["slow"] + 1:
        fail(f"a client that never reads: not closed ({st})")
    t0 = time.monotonic()
    c = connect()
    a = ask(c, "port=80 window=10s")
    if not a["ok"] or time.monotonic() - t0 > 1:
        fail("not answered at once beside a silent client")
    c.close()
    print(f"a client that asks ({sent} bytes) and never reads: closed, "
          "counted; a silent one: harmless")
    silent.close()
    greedy.close()
    settle()
    # too many: the 65th is told so
    many = []
    for _ in range(64):
        many.append(connect())
    # accepted in the order they connected: the 64 come first
    extra = connect()
    a = json.loads(extra.makefile("rb").readline() or b"{}")
    if a.get("ok") is not False or "too many" not in a.get("error", ""):
        fail(f"65th client: {a}")
    for c in many:
        c.close()
    extra.close()
    # the service unharmed, and what happened counted: the 65th refused,
    # and the status asks refused while the 64 closes were being seen
    st, own = settle()
    if st["tasks"] != before["tasks"] or \
            st["refused"] != before["refused"] + 1 + own or \
            st["oversized"] != before["oversized"] + 1 or st["clients"] != 1:
        fail(f"after: {st} ({own} status asks refused)")
    print(f"the 65th client refused; status after: {json.dumps(st)}")


{"concurrent": concurrent, "hostile": hostile}[what]()
