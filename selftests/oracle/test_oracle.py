#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of tcp_rt_oracle.py on crafted captures.

Each test writes a pcap of one connection with chosen times, sequence
numbers and flags, and checks the oracle's records against values worked
out by hand from those packets (in the comments), never against the
oracle's own output.  Client 10.0.0.2:40000, server 10.0.0.1:7100; the
client's data starts at sequence 1001, the server's at 5001.  Times are
microseconds after BASE.

    python3 selftests/oracle/test_oracle.py [-v]
"""

import decimal
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True          # no __pycache__ in the checkout
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tcp_rt_oracle as oracle          # noqa: E402  (also finds dpkt)
dpkt = oracle.dpkt

ORACLE = os.path.join(HERE, "tcp_rt_oracle.py")
BASE = 1700000000                       # capture epoch, seconds
C, S = "client", "server"
C_ISN, S_ISN = 1000, 5000
PORT = 7100
ADDRS = {False: {C: "10.0.0.2", S: "10.0.0.1"},
         True: {C: "2001:db8::2", S: "2001:db8::1"}}
LINKTYPES = {"eth": 1, "null": 0, "raw": 101, "sll": 113, "sll2": 276}
FLAGS = {"S": dpkt.tcp.TH_SYN, "A": dpkt.tcp.TH_ACK, "F": dpkt.tcp.TH_FIN,
         "R": dpkt.tcp.TH_RST, "P": dpkt.tcp.TH_PUSH}


def us(t):
    """Absolute capture time (microseconds) of t microseconds after BASE."""
    return BASE * 1000000 + t


def tcp_options(mss, ts, sack=()):
    """SYN options: MSS, and NOP NOP timestamps; NOP NOP SACK blocks."""
    opts = b""
    if mss:
        opts += b"\x02\x04" + mss.to_bytes(2, "big")
    if ts:
        opts += b"\x01\x01\x08\x0a" + bytes(8)
    if sack:
        opts += b"\x01\x01\x05" + bytes([2 + 8 * len(sack)])
        for left, right in sack:
            opts += (left % 2**32).to_bytes(4, "big") + \
                (right % 2**32).to_bytes(4, "big")
    return opts


class Capture:
    """A crafted capture of one connection, client port 40000 to 7100."""

    def __init__(self, v6=False, s_isn=S_ISN):
        self.v6 = v6
        self.s_isn = s_isn
        self.packets = []               # (time, ip packet)

    def add(self, t, frm, flags, seq, ack=0, length=0, mss=None, ts=False,
            sack=()):
        """One segment from frm (C or S) at t; seq/ack wrap at 2^32."""
        ports = (40000, PORT) if frm == C else (PORT, 40000)
        opts = tcp_options(mss, ts, sack)
        tcp = dpkt.tcp.TCP(sport=ports[0], dport=ports[1],
                           seq=seq % 2**32, ack=ack % 2**32,
                           flags=sum(FLAGS[f] for f in flags),
                           off=5 + len(opts) // 4, opts=opts,
                           data=b"x" * length)
        src, dst = ADDRS[self.v6][frm], ADDRS[self.v6][C if frm == S else S]
        if self.v6:
            ip = dpkt.ip6.IP6(src=oracle.ipaddress.ip_address(src).packed,
                              dst=oracle.ipaddress.ip_address(dst).packed,
                              nxt=6, hlim=64, plen=len(bytes(tcp)), data=tcp)
        else:
            ip = dpkt.ip.IP(src=oracle.ipaddress.ip_address(src).packed,
                            dst=oracle.ipaddress.ip_address(dst).packed,
                            p=6, ttl=64, data=tcp)
        self.packets.append((t, ip))

    def handshake(self, mss=None, ts=False):
        """SYN at 0, SYN-ACK at 100, ACK at 200 (the server's ESTABLISHED;
        the client's is at 100)."""
        self.add(0, C, "S", C_ISN, mss=mss, ts=ts)
        self.add(100, S, "SA", self.s_isn, C_ISN + 1, mss=mss, ts=ts)
        self.add(200, C, "A", C_ISN + 1, self.s_isn + 1)

    def client_close(self, t, cseq, sseq):
        """The client closes first.  The server's socket closes at t + 200
        (the ACK of its FIN), the client's at t + 100 (the server's FIN,
        which also acknowledges the client's)."""
        self.add(t, C, "FA", cseq, sseq)
        self.add(t + 100, S, "FA", sseq, cseq + 1)
        self.add(t + 200, C, "A", cseq + 1, sseq + 1)

    def frame(self, link, ip, ifindex):
        """The link-layer frame of an IP packet."""
        etype = 0x86DD if self.v6 else 0x0800
        if link == "eth":
            return bytes(dpkt.ethernet.Ethernet(src=bytes(6), dst=bytes(6),
                                                type=etype, data=ip))
        if link == "sll":
            return bytes(dpkt.sll.SLL(type=0, hrd=772, hlen=6, ethtype=etype,
                                      data=ip))
        if link == "sll2":
            return bytes(dpkt.sll2.SLL2(ethtype=etype, intindex=ifindex,
                                        hrd=772, type=0, data=ip))
        if link == "null":
            family = 30 if self.v6 else 2
            return family.to_bytes(4, sys.byteorder) + bytes(ip)
        return bytes(ip)

    def write(self, path, link="eth", ifindexes=(1,), snaplen=262144):
        """A pcap file; with several ifindexes (sll2), each packet is
        captured once on each interface, as tcpdump -i any may; frames cut
        at snaplen bytes, as tcpdump -s does."""
        with open(path, "wb") as f:
            writer = dpkt.pcap.Writer(f, snaplen=snaplen,
                                      linktype=LINKTYPES[link])
            for t, ip in self.packets:
                ts = BASE + decimal.Decimal(t) / 1000000
                for ifindex in ifindexes:
                    frame = self.frame(link, ip, ifindex)[:snaplen]
                    writer.writepkt_time(frame, ts)
        return path


class OracleTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tcp_rt_oracle.")
        self.addCleanup(shutil.rmtree, self.tmp)

    def pcap(self, cap, **kw):
        return cap.write(os.path.join(self.tmp, "c.pcap"), **kw)

    def conn(self, cap, server=True, **kw):
        """The only connection the oracle finds in the capture."""
        path = self.pcap(cap, **kw)
        conns = oracle.expected(path, lports={PORT}) if server else \
            oracle.expected(path, pports={PORT})
        self.assertEqual(len(conns), 1, "connections")
        return conns[0]

    def records(self, cap, types, server=True, **kw):
        """The connection's records, checked to be of these types."""
        recs = self.conn(cap, server, **kw)["records"]
        self.assertEqual([r["type"] for r in recs], list(types))
        return recs

    def check(self, rec, **want):
        self.assertEqual({k: rec[k] for k in want}, want)

    # -- server side

    def one_request(self, v6=False):
        """300-byte request at 1000; 200 ms later a 2000-byte response in
        two segments (201000, 201010), acked at 201300 and 201400; the
        client closes at 300000."""
        cap = Capture(v6)
        cap.handshake()
        cap.add(1000, C, "PA", 1001, 5001, 300)
        cap.add(1100, S, "A", 5001, 1301)
        cap.add(201000, S, "PA", 5001, 1301, 1000)
        cap.add(201010, S, "PA", 6001, 1301, 1000)
        cap.add(201300, C, "A", 1301, 6001)
        cap.add(201400, C, "A", 1301, 7001)
        cap.client_close(300000, 1301, 7001)
        return cap

    def dropped_after_tap(self, covered):
        """A 3000-byte request in three segments (1000, 1010, 1020); the
        second one's copy at 1010 is covered by the server's ACKs
        (`covered`: ACK 3001 at 1015) or not (the stack dropped it after
        the tap: the next ACK SACKs the third, 3001-4001, only), and the
        client sends it again at 201020; the response (100 bytes) at
        301000."""
        cap = Capture()
        cap.handshake()
        cap.add(1000, C, "A", 1001, 5001, 1000)
        cap.add(1010, C, "A", 2001, 5001, 1000)
        if covered:
            cap.add(1015, S, "A", 5001, 3001)
        cap.add(1020, C, "PA", 3001, 5001, 1000)
        if covered:
            cap.add(1030, S, "A", 5001, 4001)
        else:
            cap.add(1030, S, "A", 5001, 2001, sack=[(3001, 4001)])
        cap.add(201020, C, "A", 2001, 5001, 1000)
        cap.add(201100, S, "A", 5001, 4001)
        cap.add(301000, S, "PA", 5001, 4001, 100)
        cap.add(301300, C, "A", 4001, 5101)
        cap.client_close(400000, 4001, 5101)
        return cap

    def test_copy_dropped_after_the_tap(self):
        """A copy no ACK or SACK covered before the next copy came was
        not TCP's: the request's end is the copy at 201020 (upload_time
        200020), out of order (the third segment came before it).
        Covered, the copy at 1010 was TCP's, all in order, and the one at
        201020 a duplicate."""
        for covered, t1, ooo in ((False, 201020, 1), (True, 1020, 0)):
            r, _ = self.records(self.dropped_after_tap(covered), "RE")
            self.check(r, T0=us(1000), T1=us(t1), upload_time=t1 - 1000,
                       process_time=301000 - t1, recv_bytes=3000,
                       out_of_order=ooo, sent_bytes=100)

    # T3 is the ACK at 201400, not the ACK of the FIN at 300200.
    # rtt_est: ACK 201300 covers byte 6000 sent at 201000: 300; ACK 201400
    # covers byte 7000 sent at 201010: 390.
    ONE_REQUEST_LINES = [
        "V6 R 1700000000 001000 10.0.0.2:40000 10.0.0.1:7100"
        " 2000 200400 300 0 1 200000 0 300 0 -",
        "V6 E 1700000000 000200 10.0.0.2:40000 10.0.0.1:7100"
        " 1 2000 0 300 0 300",
    ]

    def test_one_request(self):
        conn = self.conn(self.one_request())
        self.assertEqual((conn["peer"], conn["local"]),
                         ("10.0.0.2:40000", "10.0.0.1:7100"))
        self.assertEqual((conn["established"], conn["close"],
                          conn["close_reason"]), (us(200), us(300200), "fin"))
        r, e = conn["records"]
        self.check(r, type="R", task_seq=1, T0=us(1000), T1=us(1000),
                   T2=us(201000), T3=us(201400), sec=BASE, usec=1000,
                   sent_bytes=2000, recv_bytes=300, duration=200400,
                   process_time=200000, upload_time=0, retrans=0,
                   out_of_order=0, rtt_est=300, mss=None)
        self.check(e, type="E", start=us(200), last_task_seq=1,
                   total_sent_bytes=2000, unacked_bytes=0,
                   total_recv_bytes=300, total_retrans=0, rtt_est=300)

    def test_request_in_two_segments(self):
        cap = Capture()
        cap.handshake()
        cap.add(1000, C, "PA", 1001, 5001, 1000)        # T0
        cap.add(151000, C, "PA", 2001, 5001, 1000)      # T1
        cap.add(160000, S, "PA", 5001, 3001, 100)       # T2
        cap.add(160500, C, "A", 3001, 5101)             # T3
        cap.client_close(200000, 3001, 5101)
        r, _ = self.records(cap, "RE")
        self.check(r, T0=us(1000), T1=us(151000), T2=us(160000),
                   T3=us(160500), upload_time=150000, process_time=9000,
                   duration=159500, recv_bytes=2000, sent_bytes=100,
                   rtt_est=500)

    def test_retransmitted_response_segment(self):
        cap = Capture()
        cap.handshake(mss=1460)
        cap.add(1000, C, "PA", 1001, 5001, 100)
        cap.add(2000, S, "PA", 5001, 1101, 1000)
        cap.add(2010, S, "PA", 6001, 1101, 1000)        # lost
        cap.add(2300, C, "A", 1101, 6001)               # rtt 2300 - 2000
        cap.add(2400, C, "A", 1101, 6001)               # duplicate ACKs
        cap.add(2500, C, "A", 1101, 6001)
        cap.add(210000, S, "PA", 6001, 1101, 1000)      # sent again
        cap.add(210300, C, "A", 1101, 7001)             # no sample (Karn)
        cap.client_close(300000, 1101, 7001)
        r, e = self.records(cap, "RE")
        self.check(r, sent_bytes=2000, retrans=1, rtt_est=300,
                   T3=us(210300), duration=209300, recv_bytes=100)
        self.check(e, total_sent_bytes=2000, total_retrans=1, rtt_est=300)

    def test_retransmitted_gso_packet_counts_segments(self):
        # MSS 1460 less 12 for timestamps: 1448; 2900 bytes are 3 segments
        # (2 had the timestamps been left out)
        cap = Capture()
        cap.handshake(mss=1460, ts=True)
        cap.add(1000, C, "PA", 1001, 5001, 100)
        cap.add(2000, S, "PA", 5001, 1101, 2900)
        cap.add(210000, S, "PA", 5001, 1101, 2900)
        cap.add(210300, C, "A", 1101, 7901)
        cap.client_close(300000, 1101, 7901)
        conn = self.conn(cap)
        self.assertEqual(conn["mss_est"], 1448)
        r, e = conn["records"]
        self.check(r, sent_bytes=2900, retrans=3, rtt_est=None)
        self.check(e, total_sent_bytes=2900, total_retrans=3, rtt_est=None)

    def test_server_closes_fin_retransmitted(self):
        cap = Capture()
        cap.handshake()
        cap.add(1000, C, "PA", 1001, 5001, 100)
        cap.add(2000, S, "PA", 5001, 1101, 200)
        cap.add(2300, C, "A", 1101, 5201)
        cap.add(3000, S, "FA", 5201, 1101)              # lost
        cap.add(203000, S, "FA", 5201, 1101)            # sent again
        cap.add(203100, C, "A", 1101, 5202)             # FIN acked
        cap.add(203200, C, "FA", 1101, 5202)            # server closes here
        cap.add(203210, S, "A", 5202, 1102)
        conn = self.conn(cap)
        self.assertEqual(conn["close"], us(203200))
        r, e = conn["records"]
        self.check(r, T3=us(2300), duration=1300, retrans=1, sent_bytes=200)
        self.check(e, total_retrans=1, total_sent_bytes=200, unacked_bytes=0)

    def test_out_of_order_request_segment(self):
        cap = Capture()
        cap.handshake()
        cap.add(1000, C, "PA", 2001, 5001, 1000)        # ahead: queued
        cap.add(1200, C, "PA", 1001, 5001, 1000)        # T0, in order to 3001
        cap.add(5000, S, "PA", 5001, 3001, 100)
        cap.add(5300, C, "A", 3001, 5101)
        cap.add(10000, C, "PA", 3001, 5101, 500)        # task 2, in order
        cap.add(11000, S, "PA", 5101, 3501, 100)
        cap.add(11300, C, "A", 3501, 5201)
        cap.client_close(20000, 3501, 5201)
        r1, r2, e = self.records(cap, "RRE")
        self.check(r1, task_seq=1, out_of_order=1, recv_bytes=2000,
                   T0=us(1200), T1=us(1200), upload_time=0,
                   process_time=3800, duration=4100)
        self.check(r2, task_seq=2, out_of_order=0, recv_bytes=500,
                   T0=us(10000), duration=1300)
        self.check(e, last_task_seq=2, total_recv_bytes=2500,
                   total_sent_bytes=200)

    def test_close_with_unacked_response(self):
        cap = Capture()
        cap.handshake()
        cap.add(1000, C, "PA", 1001, 5001, 100)
        cap.add(2000, S, "PA", 5001, 1101, 1000)
        cap.add(2010, S, "PA", 6001, 1101, 1000)
        cap.add(2020, S, "PA", 7001, 1101, 1000)
        cap.add(2300, C, "A", 1101, 6001)               # 1000 of 3000 acked
        cap.add(500000, S, "RA", 8001, 1101)            # the server resets
        conn = self.conn(cap)
        self.assertEqual((conn["close"], conn["close_reason"]),
                         (us(500000), "rst sent"))
        w, e = conn["records"]
        self.check(w, type="W", task_seq=1, sent_bytes=3000,
                   unacked_bytes=2000, duration=499000, T3=us(2300),
                   process_time=1000, upload_time=0, retrans=0, rtt_est=300,
                   close=us(500000))
        self.check(e, last_task_seq=1, total_sent_bytes=3000,
                   unacked_bytes=2000, total_recv_bytes=100)

    def reset_in_response(self):
        """Request 100 bytes at 1000, 1000 bytes of response at 2000, acked
        at 2300; nothing more leaves; the client resets at 400000."""
        cap = Capture()
        cap.handshake()
        cap.add(1000, C, "PA", 1001, 5001, 100)
        cap.add(2000, S, "PA", 5001, 1101, 1000)
        cap.add(2300, C, "A", 1101, 6001)
        cap.add(400000, C, "RA", 1101, 6001)
        return cap

    def test_reset_after_a_delivered_response(self):
        # without --written, what left is all the server wrote: an R
        r, e = self.records(self.reset_in_response(), "RE")
        self.check(r, task_seq=1, sent_bytes=1000, duration=1300)
        self.check(e, unacked_bytes=0)

    def test_written_and_unsent_is_a_w(self):
        # the server wrote 5000 bytes; 1000 left and were acked
        path = self.pcap(self.reset_in_response())
        (conn,) = oracle.expected(path, lports={PORT}, app={"written": 5000})
        w, e = conn["records"]
        self.check(w, type="W", task_seq=1, sent_bytes=1000,
                   unacked_bytes=4000, duration=399000, process_time=1000,
                   upload_time=0)
        self.check(e, total_sent_bytes=1000, unacked_bytes=4000)

    def test_response_none_of_which_left_is_a_w(self):
        # request at 1000, the client resets at 9000: an N, unless the
        # server had written its answer (2000 bytes), which then began at
        # the close
        cap = Capture()
        cap.handshake()
        cap.add(1000, C, "PA", 1001, 5001, 100)
        cap.add(1100, S, "A", 5001, 1101)
        cap.add(9000, C, "RA", 1101, 5001)
        n, e = self.records(cap, "NE")
        self.check(n, task_seq=1, recv_bytes=100, duration=8000)
        (conn,) = oracle.expected(self.pcap(cap), lports={PORT},
                                  app={"written": 2000})
        w, e = conn["records"]
        self.check(w, type="W", task_seq=1, sent_bytes=0, unacked_bytes=2000,
                   T2=us(9000), duration=8000, process_time=8000,
                   upload_time=0)
        self.check(e, total_sent_bytes=0, unacked_bytes=2000)

    def test_close_mid_request(self):
        cap = Capture()
        cap.handshake()
        cap.add(1000, C, "PA", 1001, 5001, 100)
        cap.add(2000, S, "PA", 5001, 1101, 200)
        cap.add(2300, C, "A", 1101, 5201)
        cap.add(10000, C, "PA", 1101, 5201, 400)        # task 2: 400 bytes
        cap.client_close(20000, 1501, 5201)             # server closes 20200
        r, n, e = self.records(cap, "RNE")
        self.check(r, task_seq=1, sent_bytes=200, recv_bytes=100,
                   duration=1300)
        self.check(n, task_seq=2, T0=us(10000), duration=10200,
                   recv_bytes=400, out_of_order=0, close=us(20200))
        self.check(e, last_task_seq=2, total_recv_bytes=500,
                   total_sent_bytes=200, unacked_bytes=0)

    def two_tasks(self):
        """Request 1 (100 bytes) at 1000, response (200) at 2000, acked
        2300; request 2 (50) at 50000, acked at 50100, response (300) at
        60000, acked at 60300; the client closes at 70000."""
        cap = Capture()
        cap.handshake()
        cap.add(1000, C, "PA", 1001, 5001, 100)
        cap.add(2000, S, "PA", 5001, 1101, 200)
        cap.add(2300, C, "A", 1101, 5201)
        cap.add(50000, C, "PA", 1101, 5201, 50)
        cap.add(50100, S, "A", 5201, 1151)
        cap.add(60000, S, "PA", 5201, 1151, 300)
        cap.add(60300, C, "A", 1151, 5501)
        cap.client_close(70000, 1151, 5501)
        return cap

    def test_two_tasks(self):
        r1, r2, e = self.records(self.two_tasks(), "RRE")
        self.check(r1, task_seq=1, T0=us(1000), T1=us(1000), T2=us(2000),
                   T3=us(2300), duration=1300, sent_bytes=200,
                   recv_bytes=100, rtt_est=300)
        self.check(r2, task_seq=2, T0=us(50000), T1=us(50000),
                   T2=us(60000), T3=us(60300), duration=10300,
                   process_time=10000, upload_time=0, sent_bytes=300,
                   recv_bytes=50, rtt_est=300)
        self.check(e, last_task_seq=2, total_sent_bytes=500,
                   total_recv_bytes=150)

    def test_greeting_opens_no_task(self):
        cap = Capture()
        cap.handshake()
        cap.add(500, S, "PA", 5001, 1001, 50)           # greeting
        cap.add(800, C, "A", 1001, 5051)                # rtt 300
        cap.add(1000, C, "PA", 1001, 5051, 100)
        cap.add(2000, S, "PA", 5051, 1101, 200)
        cap.add(2200, C, "A", 1101, 5251)               # rtt 200
        cap.client_close(3000, 1101, 5251)
        r, e = self.records(cap, "RE")
        self.check(r, task_seq=1, sent_bytes=200, recv_bytes=100,
                   duration=1200, rtt_est=200)
        self.check(e, last_task_seq=1, total_sent_bytes=250,
                   total_recv_bytes=100, rtt_est=200)

    def test_sequence_numbers_wrap(self):
        s_isn = 2**32 - 256            # the response crosses 2^32
        cap = Capture(s_isn=s_isn)
        cap.handshake()
        cap.add(1000, C, "PA", 1001, s_isn + 1, 100)
        cap.add(2000, S, "PA", s_isn + 1, 1101, 1000)
        cap.add(2300, C, "A", 1101, s_isn + 1001)
        cap.client_close(3000, 1101, s_isn + 1001)
        r, e = self.records(cap, "RE")
        self.check(r, sent_bytes=1000, T3=us(2300), duration=1300)
        self.check(e, total_sent_bytes=1000, unacked_bytes=0)

    def test_ipv6(self):
        cap = Capture(v6=True)
        cap.handshake()
        cap.add(1000, C, "PA", 1001, 5001, 10)
        cap.add(2000, S, "PA", 5001, 1011, 20)
        cap.add(2300, C, "A", 1011, 5021)
        cap.client_close(5000, 1011, 5021)
        path = self.pcap(cap)
        self.assertEqual(self.cli("--lport", "7100", path), [
            "V6 R 1700000000 001000 [2001:db8::2]:40000 [2001:db8::1]:7100"
            " 20 1300 300 0 1 1000 0 10 0 -",
            "V6 E 1700000000 000200 [2001:db8::2]:40000 [2001:db8::1]:7100"
            " 1 20 0 10 0 300"])

    def test_link_types(self):
        for link in ("sll2", "sll", "null", "raw"):
            for v6 in (False, True):
                with self.subTest(link=link, v6=v6):
                    cap = self.one_request(v6)
                    recs = self.records(cap, "RE", link=link)
                    self.check(recs[0], T0=us(1000), T3=us(201400),
                               sent_bytes=2000, recv_bytes=300)

    def test_packet_on_two_interfaces_counts_once(self):
        path = self.pcap(self.one_request(), link="sll2", ifindexes=(2, 3))
        self.assertEqual(self.cli("--lport", "7100", path),
                         self.ONE_REQUEST_LINES)

    # -- client side

    def test_client_exchange(self):
        cap = Capture()
        cap.handshake()
        cap.add(1000, C, "PA", 1001, 5001, 300)         # S0
        cap.add(1010, C, "PA", 1301, 5001, 200)         # S1
        cap.add(1300, S, "A", 5001, 1501)               # rtt 1300 - 1010
        cap.add(201000, S, "PA", 5001, 1501, 1000)      # F
        cap.add(201050, S, "PA", 6001, 1501, 1000)      # L
        cap.add(201100, C, "A", 1501, 7001)
        cap.client_close(300000, 1501, 7001)            # client closes 300100
        conn = self.conn(cap, server=False)
        self.assertEqual((conn["peer"], conn["local"], conn["established"],
                          conn["close"]),
                         ("10.0.0.1:7100", "10.0.0.2:40000", us(100),
                          us(300100)))
        p, e = conn["records"]
        self.check(p, type="P", task_seq=1, S0=us(1000), S1=us(1010),
                   F=us(201000), L=us(201050), sent_bytes=500,
                   recv_bytes=2000, duration=200050, service_time=199990,
                   response_time=50, retrans=0, out_of_order=0, rtt_est=290)
        self.check(e, start=us(100), last_task_seq=1, total_sent_bytes=500,
                   unacked_bytes=0, total_recv_bytes=2000, total_retrans=0,
                   rtt_est=290)
        self.assertEqual(self.cli("--pport", "7100", self.pcap(cap))[0],
                         "V6 P 1700000000 001000 10.0.0.1:7100 10.0.0.2:40000"
                         " 500 200050 290 0 1 199990 50 2000 0 -")

    def test_client_response_left_unread(self):
        # the client's view of reset_in_response, its application having
        # read part of the response only: no P, the E counts the task
        cap = self.reset_in_response()
        p, e = self.records(cap, "PE", server=False)
        (conn,) = oracle.expected(self.pcap(cap), pports={PORT},
                                  app={"unread": True})
        (e,) = conn["records"]
        self.check(e, type="E", last_task_seq=1, total_recv_bytes=1000,
                   total_sent_bytes=100)

    def closed_during_response(self):
        """The client reads the response's first 1000 bytes and closes; the
        server's next 1000 arrive after the client's FIN and meet a reset."""
        cap = Capture()
        cap.handshake()
        cap.add(1000, C, "PA", C_ISN + 1, S_ISN + 1, 100)
        cap.add(2000, S, "PA", S_ISN + 1, C_ISN + 101, 1000)
        cap.add(2100, C, "FA", C_ISN + 101, S_ISN + 1001)
        cap.add(2200, S, "A", S_ISN + 1001, C_ISN + 102)
        cap.add(300000, S, "PA", S_ISN + 1001, C_ISN + 102, 1000)
        cap.add(300100, C, "R", C_ISN + 102)
        return cap

    def test_client_closed_during_response(self):
        # --closed: the second write is refused, the P ends at the first
        (conn,) = oracle.expected(self.pcap(self.closed_during_response()),
                                  pports={PORT}, app={"closed": True})
        p, e = conn["records"]
        self.check(p, type="P", recv_bytes=1000, L=us(2000), duration=1000)
        self.check(e, type="E", total_recv_bytes=1000)
        self.assertEqual(conn["close_reason"], "rst sent")

    def test_client_shut_down_during_response(self):
        # without it, a FIN is a shutdown: the second write is received
        (conn,) = oracle.expected(self.pcap(self.closed_during_response()),
                                  pports={PORT})
        p, e = conn["records"]
        self.check(p, type="P", recv_bytes=2000, L=us(300000))

    def test_client_two_tasks(self):
        # the client's view of two_tasks: request 2 ends task 1; rtt_est
        # 2000 - 1000 (the response carries the ACK of request 1), then
        # 50100 - 50000
        p1, p2, e = self.records(self.two_tasks(), "PPE", server=False)
        self.check(p1, task_seq=1, S0=us(1000), S1=us(1000), F=us(2000),
                   L=us(2000), duration=1000, service_time=1000,
                   response_time=0, sent_bytes=100, recv_bytes=200,
                   rtt_est=1000)
        self.check(p2, task_seq=2, S0=us(50000), F=us(60000), L=us(60000),
                   duration=10000, sent_bytes=50, recv_bytes=300, rtt_est=100)
        self.check(e, last_task_seq=2, total_sent_bytes=150,
                   total_recv_bytes=500, rtt_est=100)

    def test_client_closes_before_response(self):
        cap = Capture()
        cap.handshake()
        cap.add(1000, C, "PA", 1001, 5001, 500)
        cap.add(1300, S, "A", 5001, 1501)
        cap.add(2000, C, "FA", 1501, 5001)
        cap.add(2100, S, "FA", 5001, 1502)              # client closes here
        (e,) = self.records(cap, "E", server=False)
        self.check(e, last_task_seq=1, total_sent_bytes=500,
                   total_recv_bytes=0, unacked_bytes=0, rtt_est=300,
                   close=us(2100))

    # -- command line

    def cli(self, *args):
        out = subprocess.run([sys.executable, ORACLE] + list(args),
                             capture_output=True, text=True, check=True)
        return out.stdout.splitlines()

    def compare(self, log, path, *opts):
        """--compare LOG against the capture at path, server view, with
        the options given; the finished process, whatever its status."""
        return subprocess.run([sys.executable, ORACLE, "--lport", "7100"] +
                              list(opts) + ["--compare", log, path],
                              capture_output=True, text=True, check=False)

    def test_cli_text_and_json(self):
        path = self.pcap(self.one_request())
        self.assertEqual(self.cli("--lport", "7100", path),
                         self.ONE_REQUEST_LINES)
        (conn,) = json.loads("\n".join(self.cli("--lport", "7100", "--json",
                                                path)))
        self.assertEqual([(r["type"], r["T0"] if "T0" in r else r["start"])
                          for r in conn["records"]],
                         [("R", us(1000)), ("E", us(200))])
        # 40000 is the client's port, not a server's: no connection
        self.assertEqual(self.cli("--lport", "40000", path), [])

    def test_headers_only_capture(self):
        """tcpdump -s 200, as the selftests capture: payload cut off, the
        lengths come from the IP headers (IPv4 and IPv6)."""
        for v6 in (False, True):
            conn = self.conn(self.one_request(v6=v6), link="sll2", snaplen=90)
            r, e = conn["records"]
            self.check(r, sent_bytes=2000, recv_bytes=300, duration=200400)
            self.check(e, total_sent_bytes=2000, total_recv_bytes=300)

    def test_compare_catches_each_kind_of_error(self):
        """--compare: the module's lines against the one-request capture
        (R: T0 us(1000), sent 2000, duration 200400, rtt_est 300)."""
        path = self.pcap(self.one_request())
        head = "V6 R 1700000000 001000 10.0.0.2:40000 10.0.0.1:7100 "
        e_line = ("V6 E 1700000000 000200 10.0.0.2:40000 10.0.0.1:7100"
                  " 1 2000 0 300 0 250\n")
        cases = [  # module's R fields, mismatches expected
            ("2000 200400 280 0 1 200000 0 300 0 65483", 0),
            ("2000 201400 280 0 1 200000 0 300 0 65483", 0),  # 1000 off: in
            ("2000 203401 280 0 1 200000 0 300 0 65483", 1),  # 3001 off
            ("2001 200400 280 0 1 200000 0 300 0 65483", 1),  # a byte more
            ("2000 200400 280 1 1 200000 0 300 0 65483", 1),  # retrans
            ("2000 200400 2301 0 1 200000 0 300 0 65483", 1),  # rtt > wire
            ("2000 200400 280 0 2 200000 0 300 0 65483", 2),  # wrong task
        ]
        for fields, n_bad in cases:
            log = os.path.join(self.tmp, "log")
            with open(log, "w", encoding="ascii") as f:
                f.write(head + fields + "\n" + e_line)
            out = self.compare(log, path)
            self.assertEqual(out.returncode, 1 if n_bad else 0, out.stdout)
            self.assertIn(f"{n_bad} mismatches", out.stdout, fields)

    def test_compare_stalls(self):
        """--stalls: the R's duration 3001 us off (1001 past the 2000 us
        tolerance) passes only when stalls cover 1001 us within 3001 us of
        the R's times on the wire (T0 = T1 = us(1000), T2 us(201000), T3
        us(201400)): [us(-2001), us(4001)] and [us(197999), us(204401)]."""
        path = self.pcap(self.one_request())
        log = os.path.join(self.tmp, "log")
        with open(log, "w", encoding="ascii") as f:
            f.write("V6 R 1700000000 001000 10.0.0.2:40000 10.0.0.1:7100 "
                    "2000 203401 280 0 1 200000 0 300 0 65483\n"
                    "V6 E 1700000000 000200 10.0.0.2:40000 10.0.0.1:7100"
                    " 1 2000 0 300 0 250\n")
        cases = [  # stalls (cpu, start, end), excused, mismatches
            ([(0, us(200000), us(201001))], 1, 0),
            ([(0, us(200000), us(200600)), (1, us(200500), us(201000))],
             0, 1),                     # 1000 covered: overlaps once
            ([(0, us(3000), us(3600)), (1, us(204000), us(204401))],
             1, 0),                     # near T0 and T3, 1001 in all
            ([(1, us(204000), us(206000))], 0, 1),  # 401 in a window
            ([(0, us(100000), us(150000))], 0, 1),  # between its times
            ([], 0, 1),
        ]
        for stalls, n_excused, n_bad in cases:
            path_st = os.path.join(self.tmp, "stalls")
            with open(path_st, "w", encoding="ascii") as f:
                f.write("# stallmon cpus=2 period_us=1000 threshold_us=2000\n")
                for cpu, start, end in stalls:
                    f.write(f"stall {cpu} {start} {end}\n")
            out = self.compare(log, path, "--stalls", path_st)
            self.assertEqual(out.returncode, 1 if n_bad else 0, out.stdout)
            self.assertIn(f"{n_excused} excused by stalls, {n_bad} mismatches",
                          out.stdout, stalls)
        # min_rtt 2301, the wire's 300: 1 us past; every sample of the task
        # was late, so a stall anywhere in its times counts
        with open(log, "w", encoding="ascii") as f:
            f.write("V6 R 1700000000 001000 10.0.0.2:40000 10.0.0.1:7100 "
                    "2000 200400 2301 0 1 200000 0 300 0 65483\n")
        with open(path_st, "w", encoding="ascii") as f:
            f.write(f"stall 1 {us(100000)} {us(100001)}\n")
        out = self.compare(log, path, "--stalls", path_st)
        self.assertIn("1 excused by stalls, 1 mismatches", out.stdout)
        self.assertIn("missing: E", out.stdout)
        with open(path_st, "w", encoding="ascii") as f:
            f.write("stall 0 12\n")
        out = self.compare(log, path, "--stalls", path_st)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("stalls:1: not a stall line", out.stderr)

    def test_compare_sampled_out(self):
        """--sampled-out N: N connections with no record, the others
        whole; the one-request capture has one connection (R and E)."""
        path = self.pcap(self.one_request())
        r_line = ("V6 R 1700000000 001000 10.0.0.2:40000 10.0.0.1:7100 "
                  "2000 200400 280 0 1 200000 0 300 0 65483\n")
        e_line = ("V6 E 1700000000 000200 10.0.0.2:40000 10.0.0.1:7100"
                  " 1 2000 0 300 0 250\n")
        cases = [  # log, --sampled-out, mismatches expected
            ("", 1, 0),
            (r_line + e_line, 0, 0),
            (r_line, 0, 1),             # the E missing
            (r_line, 1, 2),             # not out, and the E missing
            ("", 0, 1),                 # one without a record, none out
            ("", 2, 1),
        ]
        for text, out_n, n_bad in cases:
            log = os.path.join(self.tmp, "log")
            with open(log, "w", encoding="ascii") as f:
                f.write(text)
            out = self.compare(log, path, "--sampled-out", str(out_n))
            self.assertEqual(out.returncode, 1 if n_bad else 0, out.stdout)
            self.assertIn(f"{n_bad} mismatches", out.stdout, (text, out_n))


class SeriesDuplicatesTest(unittest.TestCase):
    """series_measures.received(): a byte's copies after its first are
    duplicates, whatever order the capture saw the segments in.  The
    server's data from 5001; buckets of 1 ms; values by hand."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tcp_rt_oracle.")
        sys.path.insert(0, HERE)
        import series_measures
        self.received = series_measures.received

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_segments(self, segs, s_isn=S_ISN):
        """segs: (t, seq, length) of the server's data; returns the four
        dicts with bucket numbers relative to BASE."""
        cap = Capture(s_isn=s_isn)
        cap.handshake()
        for t, seq, length in segs:
            cap.add(t, S, "A", seq, C_ISN + 1, length)
        path = cap.write(os.path.join(self.tmp, "c.pcap"))
        got = self.received(list(oracle.read_segments(path)), 1000, PORT)
        base = BASE * 1000
        return [{b - base: n for b, n in d.items()} for d in got]

    def test_copy_after_the_original(self):
        dup_b, dup_s, new_b, new_s = self.run_segments(
            [(1000, 5001, 1000), (2000, 6001, 1000), (3000, 5001, 1000)])
        self.assertEqual((dup_b, dup_s), ({3: 1000}, {3: 1}))
        self.assertEqual((new_b, new_s), ({1: 1000, 2: 1000}, {1: 1, 2: 1}))

    def test_pair_seen_swapped_is_no_copy(self):
        # the old rule (below the highest seen) called 5001 a duplicate
        dup_b, dup_s, new_b, _ = self.run_segments(
            [(1000, 6001, 1000), (2000, 5001, 1000)])
        self.assertEqual((dup_b, dup_s), ({}, {}))
        self.assertEqual(new_b, {1: 1000, 2: 1000})

    def test_copy_before_the_gap_fills(self):
        dup_b, dup_s, new_b, _ = self.run_segments(
            [(1000, 5001, 1000), (2000, 7001, 1000), (3000, 7001, 1000),
             (4000, 6001, 1000)])
        self.assertEqual((dup_b, dup_s), ({3: 1000}, {3: 1}))
        self.assertEqual(new_b, {1: 1000, 2: 1000, 4: 1000})

    def test_partly_old(self):
        # 5501..6000 seen before, 6001..6500 new: one duplicate segment
        dup_b, dup_s, new_b, new_s = self.run_segments(
            [(1000, 5001, 1000), (2000, 5501, 1000)])
        self.assertEqual((dup_b, dup_s), ({2: 500}, {2: 1}))
        self.assertEqual((new_b, new_s), ({1: 1000, 2: 500}, {1: 1}))

    def test_sequence_wrap(self):
        # data from 2^32 - 599 across the wrap to 400; a copy of 0..499
        isn = 2**32 - 600
        dup_b, dup_s, new_b, _ = self.run_segments(
            [(1000, isn + 1, 1000), (2000, 0, 500)], s_isn=isn)
        self.assertEqual((dup_b, dup_s), ({2: 401}, {2: 1}))
        self.assertEqual(new_b, {1: 1000, 2: 99})


class SeriesShiftTest(unittest.TestCase):
    """series_check.shifted_ok(): counts per bucket held to where the
    records or the capture put them, a shift of k buckets allowed."""

    def setUp(self):
        import series_check
        self.ok = series_check.shifted_ok

    def test_within_the_shift(self):
        self.assertIsNone(self.ok({2: 1, 3: 1}, {1: 1, 2: 1}, 1))

    def test_counted_later_says_how_far(self):
        msg = self.ok({10: 1}, {1: 1}, 2)
        self.assertIn("counted later", msg)
        self.assertIn("a shift of 9 buckets passes, 2 allowed", msg)

    def test_counted_earlier_says_how_far(self):
        msg = self.ok({1: 1}, {5: 1}, 1)
        self.assertIn("counted earlier", msg)
        self.assertIn("a shift of 4 buckets passes, 1 allowed", msg)

    def test_totals_unequal_says_so(self):
        # no shift passes: the message must come, not a search for one
        msg = self.ok({1: 2}, {5: 1}, 1)
        self.assertIn("counted earlier", msg)
        self.assertIn("totals differ: no shift passes, 1 allowed", msg)


class SeriesSpansTest(unittest.TestCase):
    """series_check.spans_ok(): each event counted somewhere in its own
    span of buckets; series_measures.held_until(): how late an ACK may be
    counted, by the send() calls holding its socket."""

    def setUp(self):
        import series_check
        import series_measures
        self.ok = series_check.spans_ok
        self.held_until = series_measures.held_until

    def test_within_each_span(self):
        # one event may come 1 bucket either way, the other up to bucket 9
        self.assertIsNone(self.ok({2: 1, 9: 1}, [(1, 3, 1), (1, 9, 1)]))

    def test_after_its_span(self):
        self.assertEqual(self.ok({2: 1, 10: 1}, [(1, 3, 1), (1, 9, 1)]),
                         (9, 1, 2, 2))

    def test_before_its_span(self):
        self.assertEqual(self.ok({1: 1}, [(2, 4, 1)]), (1, 1, 0, 0))

    def test_held_by_the_send_in_progress(self):
        sends = {40000: ([100, 300], [250, 900])}
        self.assertEqual(self.held_until(sends, 40000, 200, 0), 250)
        # TCP saw it within the slack: the next call may have held it
        self.assertEqual(self.held_until(sends, 40000, 260, 50), 900)
        self.assertEqual(self.held_until(sends, 40000, 260, 30), 260)
        self.assertEqual(self.held_until(sends, 40000, 950, 50), 950)
        self.assertEqual(self.held_until(sends, 40001, 200, 50), 200)


class BacklogJoinsTest(unittest.TestCase):
    """tcp_rt_oracle.backlog_joins(): the pure ACKs TCP may join to data
    in a socket's backlog (and then count as a data segment)."""

    def joins(self, segs):
        """segs: (frm, seq, length, sack) after the handshake; the places
        (0, 1, ...) among them of the ACKs that may be joined."""
        tmp = tempfile.mkdtemp(prefix="tcp_rt_oracle.")
        self.addCleanup(shutil.rmtree, tmp)
        cap = Capture()
        cap.handshake(ts=True)
        for i, (frm, seq, length, sack) in enumerate(segs):
            cap.add(1000 + i, frm, "A", seq, 1, length, ts=True, sack=sack)
        got = list(oracle.read_segments(cap.write(os.path.join(tmp, "c"))))
        return [got.index(s) - 3 for s in oracle.backlog_joins(got)]

    def test_ack_then_data_from_it(self):
        # the server's ACK of a request, then its response's first segment
        self.assertEqual(self.joins([(S, 5001, 0, ()), (S, 5001, 1000, ())]),
                         [0])

    def test_data_then_ack_at_its_end(self):
        self.assertEqual(self.joins([(S, 5001, 1000, ()), (S, 6001, 0, ())]),
                         [1])

    def test_the_other_direction_between_does_not_part_them(self):
        self.assertEqual(self.joins([(S, 5001, 0, ()), (C, 1001, 100, ()),
                                     (S, 5001, 1000, ())]), [0])

    def test_not_joined(self):
        # options differ (a SACK block); a gap in sequence; no data at all
        for segs in ([(S, 5001, 0, ((100, 200),)), (S, 5001, 1000, ())],
                     [(S, 5001, 0, ()), (S, 5002, 1000, ())],
                     [(S, 5001, 0, ()), (S, 5001, 0, ())]):
            self.assertEqual(self.joins(segs), [], segs)


if __name__ == "__main__":
    unittest.main(verbosity=2)
