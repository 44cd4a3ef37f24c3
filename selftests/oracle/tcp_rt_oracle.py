#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What tcp_rt should have recorded, computed from a packet capture alone.

The selftests compare the module's records with this oracle field by field,
so that a record is checked against the wire, not against the module's own
bookkeeping.  The definitions are those of docs/records.md; like the module,
the oracle follows sequence numbers only and never reads payload.

    tcp_rt_oracle.py --lport 7100 server.pcap         # V6 lines, as the module
    tcp_rt_oracle.py --pport 7600 --json client.pcap  # JSON, with every time

The capture is the tracked socket's view: --lport P takes connections whose
server port is P, seen from the server; --pport P those whose server port is
P, seen from the client.  See README in this folder for the tolerances.

Choices where the definitions leave room (each is also where it is coded):
  - T3 moves only when an ACK covers response *data*: the ACK of a FIN alone
    does not move it.
  - retrans counts retransmitted segments as the kernel's total_retrans does:
    a captured GSO/TSO packet counts ceil(length / MSS) segments, the MSS
    being the peer's SYN option less 12 bytes when timestamps are on; a
    retransmitted FIN counts 1.  SYN retransmissions are before the tracking.
  - min_rtt cannot be seen on the wire: rtt_est stands in its column, the
    smallest (ACK time - first send time of the last byte the ACK covers)
    over ACKs covering data never retransmitted (Karn), during the task.
  - mss (the socket's mss_cache) cannot be seen either: it is None ('-').
  - The connection closes (CLOSE, when the module writes its last records)
    at the first RST, or at the received packet after which our FIN is
    acknowledged and the peer's FIN has arrived in order.
  - What the tracked side's application did that never reached the wire is
    told by the test: --written (bytes it wrote in all, some perhaps never
    sent: a closed window), --unread (a client left response data unread)
    and --closed (it closed the socket rather than shutting down its
    sending side: data arriving after its FIN is refused with a reset,
    never received).  Without them: everything written was sent,
    everything read, a FIN is a shutdown.
"""

import argparse
import bisect
import ipaddress
import json
import math
import sys

try:
    import dpkt
except ImportError:
    # python3-dpkt is a Debian package: a python3 that is not Debian's own
    # (pyenv, a venv) does not look where it is.
    sys.path.append("/usr/lib/python3/dist-packages")
    import dpkt

import stalls as stalls_mod  # noqa: E402  (this folder's)

FIN, SYN, RST, ACK = (dpkt.tcp.TH_FIN, dpkt.tcp.TH_SYN, dpkt.tcp.TH_RST,
                      dpkt.tcp.TH_ACK)
DLT_NULL, DLT_EN10MB, DLT_RAW, DLT_LOOP = 0, 1, 101, 108
DLT_LINUX_SLL, DLT_LINUX_SLL2 = 113, 276

IDLE, REQUEST, RESPONSE = "idle", "request", "response"

# The fields after the header, in the module's order (docs/records.md), with
# rtt_est in min_rtt's place.
FIELDS = {
    "R": ("sent_bytes", "duration", "rtt_est", "retrans", "task_seq",
          "process_time", "upload_time", "recv_bytes", "out_of_order", "mss"),
    "W": ("sent_bytes", "duration", "rtt_est", "retrans", "task_seq",
          "process_time", "upload_time", "unacked_bytes", "mss"),
    "N": ("task_seq", "duration", "recv_bytes", "out_of_order", "mss"),
    "P": ("sent_bytes", "duration", "rtt_est", "retrans", "task_seq",
          "service_time", "response_time", "recv_bytes", "out_of_order",
          "mss"),
    "E": ("last_task_seq", "total_sent_bytes", "unacked_bytes",
          "total_recv_bytes", "total_retrans", "rtt_est"),
}


# ---- reading the capture --------------------------------------------------

class Segment:
    """The header fields of one captured TCP segment that the oracle uses."""

    def __init__(self, t, ip, tcp, ifindex):
        self.t = t                      # capture time, microseconds
        self.src = endpoint(ip.src, tcp.sport)
        self.dst = endpoint(ip.dst, tcp.dport)
        self.sport, self.dport = tcp.sport, tcp.dport
        self.seq, self.ack, self.flags = tcp.seq, tcp.ack, tcp.flags
        self.length = payload_length(ip, tcp)
        self.mss, self.timestamps = syn_options(tcp)
        self.ifindex = ifindex
        # the IP header's ECN field: 3 is CE
        self.ecn = (ip.fc if isinstance(ip, dpkt.ip6.IP6) else ip.tos) & 3
        self.opts = tcp.opts            # parsed only when asked (sacks())
        self.dropped = False            # a copy TCP did not take (below)

    def sacks(self):
        """The SACK option's blocks, (left, right) 32-bit sequences."""
        if not self.opts:
            return []
        for kind, data in dpkt.tcp.parse_opts(self.opts):
            if kind == dpkt.tcp.TCP_OPT_SACK:
                return [(int.from_bytes(data[i:i + 4], "big"),
                         int.from_bytes(data[i + 4:i + 8], "big"))
                        for i in range(0, len(data) - 7, 8)]
        return []


def payload_length(ip, tcp):
    """Payload bytes from the IP header's length, not from what was
    captured: the tests capture headers only (tcpdump -s)."""
    if isinstance(ip, dpkt.ip6.IP6):
        return ip.plen - tcp.off * 4    # the tests' IPv6 has no extensions
    return ip.len - ip.hl * 4 - tcp.off * 4


def endpoint(addr, port):
    """addr:port as the module prints it: IPv6 compressed, in brackets."""
    ip = ipaddress.ip_address(addr)
    return f"[{ip}]:{port}" if ip.version == 6 else f"{ip}:{port}"


def syn_options(tcp):
    """The MSS option and whether the timestamp option is there (SYNs only)."""
    if not tcp.flags & SYN:
        return None, False
    opts = dict(dpkt.tcp.parse_opts(tcp.opts))
    mss = opts.get(dpkt.tcp.TCP_OPT_MSS)
    return (int.from_bytes(mss, "big") if mss else None,
            dpkt.tcp.TCP_OPT_TIMESTAMP in opts)


def ip_from_bytes(buf):
    """An IP packet from its first byte, by version (raw and BSD loopback)."""
    if buf and buf[0] >> 4 == 4:
        return dpkt.ip.IP(buf)
    if buf and buf[0] >> 4 == 6:
        return dpkt.ip6.IP6(buf)
    return None


def network_packet(linktype, frame):
    """The IP packet of one frame, and the interface index when known.

    tcpdump -i any writes LINUX_SLL or LINUX_SLL2 (which names the
    interface), -i lo writes EN10MB; BSD loopback is NULL/LOOP.
    """
    if linktype == DLT_LINUX_SLL2:
        sll2 = dpkt.sll2.SLL2(frame)
        return sll2.data, sll2.intindex
    if linktype == DLT_LINUX_SLL:
        return dpkt.sll.SLL(frame).data, None
    if linktype == DLT_EN10MB:
        return dpkt.ethernet.Ethernet(frame).data, None
    if linktype in (DLT_NULL, DLT_LOOP):
        return ip_from_bytes(frame[4:]), None
    if linktype in (DLT_RAW, 12, 14):
        return ip_from_bytes(frame), None
    raise SystemExit(f"tcp_rt_oracle: link type {linktype} not handled")


def read_segments(path):
    """Every TCP segment of a pcap (or pcapng) file, in capture order."""
    with open(path, "rb") as f:
        reader = dpkt.pcap.UniversalReader(f)
        linktype = reader.datalink()
        for ts, frame in reader:
            try:
                ip, ifindex = network_packet(linktype, frame)
            except (dpkt.UnpackError, ValueError):
                continue
            if isinstance(ip, (dpkt.ip.IP, dpkt.ip6.IP6)) and \
                    isinstance(ip.data, dpkt.tcp.TCP):
                yield Segment(round(ts * 1000000), ip, ip.data, ifindex)


def unwrap(seq32, near):
    """The 64-bit sequence number congruent to seq32 that is nearest to
    near: sequence numbers wrap at 2^32, counts here must not."""
    return near + (seq32 - near + 2**31) % 2**32 - 2**31


# ---- the module's task state machine --------------------------------------

class Task:
    """One request and its response; times are capture microseconds."""

    def __init__(self, seq, t0, rcv_start, snd_start, retrans_start):
        self.seq = seq
        self.t0, self.t1, self.t2, self.t3 = t0, None, None, None
        self.rcv_start = rcv_start      # end of data received at the start
        self.snd_start = snd_start      # end of data sent at the start (or,
                                        # for a server, at the response's)
        self.retrans_start = retrans_start
        self.rtt = None                 # rtt_est of the task
        self.req_ooo = 0                # a server's request came out of order


class Tasks:
    """The task bookkeeping of docs/records.md, fed with what the wire says.

    It is kept step by step like tcp_rt_task.c's (on_data_in, on_data_out,
    on_ack), so that a difference with the module is a difference in what
    was seen, not in how it was counted.  Sequence positions are the
    unwrapped 64-bit ones of Connection.
    """

    def __init__(self, server, established, snd_start, rcv_start,
                 app=None):
        self.server = server
        app = app or {}
        self.written = app.get("written")   # bytes the application wrote
        self.unread = app.get("unread", False)
        self.established = established
        self.snd_isn = self.snd_data = self.una = snd_start
        self.rcv_isn = self.rcv_data = rcv_start
        self.retrans = 0        # retransmitted segments (total_retrans)
        self.ooo = 0            # segments queued out of order (rcv_ooopack)
        self.ooo_mark = 0       # self.ooo when the task's input began
        self.rtt = None         # rtt_est of the connection
        self.phase = IDLE
        self.task = None
        self.task_seq = 0
        self.records = []

    def start_task(self, t):
        """T0/S0: a new task opens."""
        self.task_seq += 1
        self.task = Task(self.task_seq, t, self.rcv_data, self.snd_data,
                         self.retrans)
        self.phase = REQUEST

    def data_in(self, end, t):
        """New in-order data arrived: now received up to end."""
        if self.server:
            if self.phase == RESPONSE:      # the next request ends the task
                self.record_done("R")
            if self.phase != REQUEST:
                self.start_task(t)
            self.task.t1 = t                # T1: the last request data
        else:
            if self.phase == REQUEST:       # F: the response begins
                self.phase = RESPONSE
                self.task.t2 = t
            if self.phase == RESPONSE:      # L: the last response data
                self.task.t3 = t
            # with no task open, a greeting: counted in E only
        self.rcv_data = end

    def data_out(self, length, t):
        """length bytes of new data left."""
        if self.server:
            if self.phase == REQUEST:       # T2: the response begins
                self.phase = RESPONSE
                self.task.t2 = t
                self.task.snd_start = self.snd_data
                self.task.req_ooo = int(self.ooo != self.ooo_mark)
                self.ooo_mark = self.ooo
            # with no task open, a greeting: counted in E only
        else:
            if self.phase == RESPONSE:      # the next request ends the task
                self.record_done("P")
            if self.phase != REQUEST:
                self.start_task(t)
                self.ooo_mark = self.ooo
            self.task.t1 = t                # S1: the last request data
        self.snd_data += length

    def acked(self, una, t, rtt):
        """The peer's ACK advanced; una: end of the data it now covers.

        Choice: T3 moves only when the ACK covers response data not covered
        before (the ACK of a FIN alone covers no data).
        """
        if rtt is not None:
            self.rtt = rtt if self.rtt is None else min(self.rtt, rtt)
            if self.task:
                task = self.task
                task.rtt = rtt if task.rtt is None else min(task.rtt, rtt)
        if self.server and self.phase == RESPONSE and una > self.una and \
                una > self.task.snd_start:
            self.task.t3 = t
        self.una = max(self.una, una)

    def retransmitted(self, segments):
        """A retransmission left (total_retrans grows by segments)."""
        self.retrans += segments

    def out_of_order(self):
        """A data segment arrived beyond the next expected byte."""
        self.ooo += 1

    def written_end(self):
        """End of the data the application wrote: what was sent, or more
        when the test says it wrote more (--written)."""
        if self.written is None:
            return self.snd_data
        return max(self.snd_isn + self.written, self.snd_data)

    def unacked(self):
        """Data written and not (yet) acknowledged, sent or not."""
        return self.written_end() - self.una

    def closed(self, t):
        """CLOSE: the record of the task still open, then E."""
        if self.phase == IDLE:
            pass
        elif not self.server:
            # a request that got no response is no task (but counts in E's
            # last_task_seq); a response left unread was given up: no P
            if self.phase == RESPONSE and not self.unread:
                self.record_done("P")
        else:
            # a response written of which nothing left begins at the close
            if self.phase == REQUEST and self.written_end() > self.snd_data:
                self.data_out(0, t)
            if self.phase == REQUEST:
                self.record_n(t)
            elif self.unacked() > 0:
                self.record_w(t)
            else:
                self.record_done("R")
        if self.task_seq:
            self.record_e(t)

    # -- records

    def times(self):
        """The task's times under their names in docs/records.md."""
        task = self.task
        names = ("T0", "T1", "T2", "T3") if self.server else \
                ("S0", "S1", "F", "L")
        return dict(zip(names, (task.t0, task.t1, task.t2, task.t3)))

    def add_record(self, kind, start, **values):
        """One record: its type, start time (header), times and fields."""
        rec = {"type": kind, "start": start, "sec": start // 1000000,
               "usec": start % 1000000, "mss": None}
        rec.update(values)
        assert set(FIELDS[kind]) <= set(rec), kind
        self.records.append(rec)

    def record_done(self, kind):
        """R (server) or P (client): a task completed."""
        task = self.task
        fields = dict(
            sent_bytes=self.snd_data - task.snd_start,
            rtt_est=task.rtt,
            retrans=self.retrans - task.retrans_start,
            task_seq=task.seq,
            recv_bytes=self.rcv_data - task.rcv_start)
        if kind == "R":
            # no ACK of the response yet: the task ends at T2 (the module's
            # max(t3, t2))
            end = task.t3 if task.t3 is not None else task.t2
            fields.update(duration=end - task.t0,
                          process_time=task.t2 - task.t1,
                          upload_time=task.t1 - task.t0,
                          out_of_order=task.req_ooo)
        else:
            fields.update(duration=task.t3 - task.t0,
                          service_time=task.t2 - task.t1,
                          response_time=task.t3 - task.t2,
                          out_of_order=int(self.ooo != self.ooo_mark))
        self.add_record(kind, task.t0, **self.times(), **fields)

    def record_w(self, t):
        """W: closed while the response was not all delivered."""
        task = self.task
        self.add_record(
            "W", task.t0, **self.times(), close=t,
            sent_bytes=self.snd_data - task.snd_start,
            duration=t - task.t0, rtt_est=task.rtt,
            retrans=self.retrans - task.retrans_start, task_seq=task.seq,
            process_time=task.t2 - task.t1, upload_time=task.t1 - task.t0,
            unacked_bytes=self.unacked())

    def record_n(self, t):
        """N: closed while a request was arriving."""
        task = self.task
        self.add_record(
            "N", task.t0, **self.times(), close=t, task_seq=task.seq,
            duration=t - task.t0, recv_bytes=self.rcv_data - task.rcv_start,
            out_of_order=int(self.ooo != self.ooo_mark))

    def record_e(self, t):
        """E: the connection's totals, after its last task record."""
        self.add_record(
            "E", self.established, established=self.established, close=t,
            last_task_seq=self.task_seq,
            total_sent_bytes=self.snd_data - self.snd_isn,
            unacked_bytes=max(self.unacked(), 0),
            total_recv_bytes=self.rcv_data - self.rcv_isn,
            total_retrans=self.retrans, rtt_est=self.rtt)


# ---- one connection on the wire -------------------------------------------

class Sent:
    """A run of new data as first sent: [start, end) at time t."""

    def __init__(self, start, end, t):
        self.start, self.end, self.t = start, end, t
        self.retransmitted = False


class Connection:
    """One TCP connection seen from the tracked socket: the sequence space
    bookkeeping that turns segments into Tasks events."""

    def __init__(self, server, local, peer, syn, app=None):
        self.server = server
        self.app = app
        self.local, self.peer = local, peer
        self.ifindex = syn.ifindex
        self.client_isn = syn.seq
        self.snd_isn = self.rcv_isn = None
        self.snd_nxt = self.snd_data = self.una = None  # sent side
        self.rcv_nxt = None                             # received side
        self.held = []          # (start, end) received out of order
        self.sent = []          # Sent runs, in sequence order
        self.sent_ends = []     # their ends, for bisect
        self.our_fin = self.peer_fin = None
        self.syn_opts = {}      # True (ours) / False (peer's): SYN options
        self.mss_est = None
        self.tasks = None       # once established
        self.close = self.close_reason = None

    def segment(self, seg, outgoing):
        """Take one segment, sent by the tracked socket if outgoing."""
        if self.close is not None or seg.ifindex != self.ifindex:
            # after CLOSE; or a copy of a packet seen on another interface
            # (tcpdump -i any captures a forwarded packet on each)
            return
        if seg.flags & SYN:
            self.handshake(seg, outgoing)
        elif self.snd_isn is None or self.rcv_isn is None:
            return                      # handshake not captured
        elif outgoing:
            self.sent_segment(seg)
        else:
            self.received_segment(seg)

    def handshake(self, seg, outgoing):
        """A SYN or SYN-ACK: the initial sequence numbers."""
        if self.tasks:
            return                      # a late SYN-ACK retransmission
        self.syn_opts[outgoing] = (seg.mss, seg.timestamps)
        if outgoing:
            self.snd_isn = seg.seq
            self.snd_nxt = self.snd_data = self.una = seg.seq + 1
        else:
            self.rcv_isn = seg.seq
            self.rcv_nxt = seg.seq + 1
        # a client is established when the SYN-ACK arrives
        if not self.server and not outgoing and seg.flags & ACK and \
                self.snd_isn is not None:
            self.establish(seg.t)

    def establish(self, t):
        """ESTABLISHED: the module starts tracking here."""
        self.tasks = Tasks(self.server, t, self.snd_data, self.rcv_nxt,
                           self.app)
        peer_mss, peer_ts = self.syn_opts.get(False, (None, False))
        our_ts = self.syn_opts.get(True, (None, False))[1]
        if peer_mss:
            self.mss_est = peer_mss - (12 if peer_ts and our_ts else 0)

    def segments_in(self, length):
        """How many MSS-sized segments a captured packet of length carries
        (a GSO packet is captured before it is cut)."""
        if not length or not self.mss_est:
            return 1
        return math.ceil(length / self.mss_est)

    def sent_segment(self, seg):
        """A segment the tracked socket sent."""
        if not self.tasks:
            return
        if seg.flags & RST:
            self.closed(seg.t, "rst sent")
            return
        fin = 1 if seg.flags & FIN else 0
        if not seg.length and not fin:
            return                      # pure ACK, window or keepalive probe
        seq = unwrap(seg.seq, self.snd_nxt)
        end = seq + seg.length
        if seq < self.snd_nxt:          # starts below what was sent: again
            self.tasks.retransmitted(self.segments_in(seg.length))
            self.mark_retransmitted(seq, end)
        if end > self.snd_data:
            self.sent.append(Sent(self.snd_data, end, seg.t))
            self.sent_ends.append(end)
            self.tasks.data_out(end - self.snd_data, seg.t)
            self.snd_data = end
        if fin:
            self.our_fin = end
        self.snd_nxt = max(self.snd_nxt, end + fin)

    def mark_retransmitted(self, start, end):
        """Data in [start, end) was sent again: no RTT sample from it."""
        i = bisect.bisect_right(self.sent_ends, start)
        while i < len(self.sent) and self.sent[i].start < end:
            self.sent[i].retransmitted = True
            i += 1

    def received_segment(self, seg):
        """A segment the peer sent."""
        if seg.flags & RST:
            if self.tasks:
                self.closed(seg.t, "rst received")
            return
        if seg.flags & ACK:
            self.ack_received(seg)
        if not self.tasks:
            return
        if seg.length and not seg.dropped and not self.refused(seg):
            self.data_received(seg)
        if seg.flags & FIN:
            self.peer_fin = unwrap(seg.seq, self.rcv_nxt) + seg.length
        if self.our_fin is not None and self.una > self.our_fin and \
                self.peer_fin is not None and self.rcv_nxt >= self.peer_fin:
            self.closed(seg.t, "fin")

    def ack_received(self, seg):
        """The ACK field: establishes a server, advances what is acked."""
        ack = unwrap(seg.ack, self.una)
        if not self.tasks:
            if self.server and ack > self.snd_isn:
                self.establish(seg.t)
            return
        if ack <= self.una or ack > self.snd_nxt:
            return                      # old, duplicate, or for unsent data
        rtt = self.rtt_sample(ack, seg.t)
        self.una = ack
        self.tasks.acked(min(ack, self.snd_data), seg.t, rtt)

    def rtt_sample(self, ack, t):
        """ACK time less the first send time of the last data byte the ACK
        newly covers, unless that byte was retransmitted (Karn); None when
        the ACK covers no new data (the FIN alone)."""
        last = min(ack, self.snd_data) - 1
        if last < self.una:
            return None
        run = self.sent[bisect.bisect_right(self.sent_ends, last)]
        return None if run.retransmitted else t - run.t

    def refused(self, seg):
        """New data after our FIN, to an application that closed: the
        kernel resets instead of taking it (RCV_SHUTDOWN)."""
        return bool(self.app and self.app.get("closed")) and \
            self.our_fin is not None and \
            unwrap(seg.seq, self.rcv_nxt) + seg.length > self.rcv_nxt

    def data_received(self, seg):
        """Payload from the peer: in order, out of order, or a duplicate."""
        seq = unwrap(seg.seq, self.rcv_nxt)
        end = seq + seg.length
        if seq > self.rcv_nxt:
            self.held.append((seq, end))
            self.tasks.out_of_order()
        elif end > self.rcv_nxt:
            self.rcv_nxt = end
            self.take_held()
            self.tasks.data_in(self.rcv_nxt, seg.t)

    def take_held(self):
        """Out-of-order data the new in-order data reaches is in order now."""
        for start, end in sorted(self.held):
            if start <= self.rcv_nxt:
                self.rcv_nxt = max(self.rcv_nxt, end)
        self.held = [(s, e) for s, e in self.held if e > self.rcv_nxt]

    def closed(self, t, reason):
        """CLOSE: the module writes the last records."""
        self.close, self.close_reason = t, reason
        self.tasks.closed(t)


# ---- whole captures -------------------------------------------------------

def tracked_view(seg, ports, server):
    """(local, peer, outgoing) of the tracked socket for this segment, or
    None when it is not on a tracked port."""
    if server:
        if seg.sport in ports:
            return seg.src, seg.dst, True
        if seg.dport in ports:
            return seg.dst, seg.src, False
    else:
        if seg.dport in ports:
            return seg.src, seg.dst, True
        if seg.sport in ports:
            return seg.dst, seg.src, False
    return None


def seq_le(a, b):
    """a <= b in 32-bit sequence space."""
    return (b - a) & 0xffffffff < 0x80000000


def backlog_joins(segments):
    """The pure ACKs of a capture that TCP may count as data segments: TCP
    joins a segment to the one before it in a socket's backlog (while a
    process holds the socket) when it starts where that one ended, with
    the same TCP options and ECE/CWR, both ACKs, neither SYN, RST nor URG
    (tcp_add_backlog()); the joined segment stands for both (gso_segs), so
    where one has data, tcpi_data_segs_in counts both - the series' segs_in
    too.  Each such ACK is one more data segment the socket may count: a
    pure ACK in a run of joinable segments, one after another in their
    direction, that holds data."""
    joins = []
    runs = {}           # (src, dst) -> [segments joinable one to the next]
    urg = dpkt.tcp.TH_URG

    def close(run):
        if any(s.length for s in run):
            joins.extend(s for s in run if not s.length)

    for seg in segments:
        d = (seg.src, seg.dst)
        run = runs.get(d)
        prev = run[-1] if run else None
        if (prev is not None and seg.flags & prev.flags & ACK and
                not (seg.flags | prev.flags) & (SYN | RST | urg) and
                not (seg.flags ^ prev.flags) & (dpkt.tcp.TH_ECE |
                                                dpkt.tcp.TH_CWR) and
                seg.opts == prev.opts and
                (prev.seq + prev.length +
                 (1 if prev.flags & FIN else 0)) & 0xffffffff == seg.seq):
            run.append(seg)
            continue
        if run:
            close(run)
        runs[d] = [seg]
    for run in runs.values():
        close(run)
    return sorted(joins, key=lambda s: s.t)


def dropped_copies(segments, ports, server):
    """The received copies of data that the tracked side's TCP did not
    take, as their places in the capture (0, 1, ...): the capture's tap
    saw one, but no ACK or SACK block the tracked side sent before the
    next copy of it arrived covered it (the stack dropped it after the
    tap - a full backlog, receive memory, a closed window - and the peer
    sent it again; the module, in TCP, sees only the copy TCP took).  TCP
    acknowledges out-of-order data at once, in its first SACK block, and
    in-order data by its next ACK; the last copy of anything counts."""
    dropped = set()
    pending = {}        # (local, peer, ifindex) -> {(seq, end): place}
    for place, seg in enumerate(segments):
        view = tracked_view(seg, ports, server)
        if view is None or seg.flags & (SYN | RST):
            continue
        local, peer, outgoing = view
        waiting = pending.setdefault((local, peer, seg.ifindex), {})
        if outgoing:
            if waiting and seg.flags & ACK:
                blocks = seg.sacks()
                for key in [k for k in waiting
                            if seq_le(k[1], seg.ack) or
                            any(seq_le(left, k[0]) and seq_le(k[1], right)
                                for left, right in blocks)]:
                    del waiting[key]
            continue
        if not seg.length:
            continue
        seq, end = seg.seq, (seg.seq + seg.length) & 0xffffffff
        for key in [k for k in waiting
                    if seq_le(seq, k[0]) and seq_le(k[1], end)]:
            dropped.add(waiting.pop(key))
        waiting[(seq, end)] = place
    return dropped


def connections(segments, ports, server, app=None, dropped=()):
    """The tracked connections of a capture, in the order they opened.

    A client's SYN (not a retransmission of the one before) starts a new
    connection on its 4-tuple, so reused ports are told apart.  dropped:
    the places of copies TCP did not take (dropped_copies()).
    """
    found, current = [], {}
    for place, seg in enumerate(segments):
        seg.dropped = place in dropped
        view = tracked_view(seg, ports, server)
        if view is None:
            continue
        local, peer, outgoing = view
        conn = current.get((local, peer))
        client_syn = seg.flags & (SYN | ACK) == SYN and outgoing != server
        if client_syn and (conn is None or conn.close is not None or
                           conn.client_isn != seg.seq):
            conn = Connection(server, local, peer, seg, app)
            current[(local, peer)] = conn
            found.append(conn)
        if conn:
            conn.segment(seg, outgoing)
    return [c for c in found if c.tasks]


def conn_dict(conn):
    """A connection and its expected records, for JSON."""
    return {"role": "server" if conn.server else "client",
            "peer": conn.peer, "local": conn.local,
            "established": conn.tasks.established, "close": conn.close,
            "close_reason": conn.close_reason, "mss_est": conn.mss_est,
            "records": conn.tasks.records}


def expected(path, lports=(), pports=(), app=None):
    """The records tcp_rt should write for a capture, per connection:
    --lport (server view) or --pport (client view), as the CLI; app: what
    the application did beyond the wire ({"written": n, "unread": bool,
    "closed": bool}, --written, --unread and --closed)."""
    server = bool(lports)
    ports = set(lports or pports)
    # two readings of the capture, not a list of it: a capture of
    # gigabytes has millions of segments
    dropped = dropped_copies(read_segments(path), ports, server)
    return [conn_dict(c) for c in connections(read_segments(path), ports,
                                              server, app, dropped)]


def record_line(conn, rec):
    """A record in the module's layout; '-' where the wire cannot tell."""
    values = ["-" if rec[f] is None else str(rec[f])
              for f in FIELDS[rec["type"]]]
    return " ".join(["V6", rec["type"], str(rec["sec"]), f"{rec['usec']:06d}",
                     conn["peer"], conn["local"]] + values)


# How each field of a record is held to the oracle's (--compare).
EXACT = {"sent_bytes", "recv_bytes", "task_seq", "retrans", "out_of_order",
         "unacked_bytes", "last_task_seq", "total_sent_bytes",
         "total_recv_bytes", "total_retrans"}
TIMES = {"duration", "process_time", "upload_time", "service_time",
         "response_time"}


def parse_record(line):
    """A module record line -> (peer, local, type, {field: int})."""
    words = line.split()
    kind = words[1]
    names = ["min_rtt" if n == "rtt_est" else n for n in FIELDS[kind]]
    values = dict(zip(names, (int(w) for w in words[6:])))
    values["start"] = int(words[2]) * 1000000 + int(words[3])
    return words[4], words[5], kind, values


# A record's times on the wire, for the stalls around them.
SPAN = ("start", "established", "T0", "T1", "T2", "T3", "S0", "S1", "F", "L",
        "close")


def stall_windows(rec, name, off):
    """Where a stall could have moved the module's stamps of `name` by
    `off` (us) from the wire's: around each of the record's times on the
    wire, `off` each way (a stamp lies between TCP and the tap; a stall
    between them delays one of them).  min_rtt, the least of every RTT
    sample of the task, takes the record's first to last time, widened."""
    times = [rec[k] for k in SPAN if rec.get(k) is not None]
    if name == "min_rtt":
        return [(min(times) - off, max(times) + off)]
    return [(t - off, t + off) for t in times]


def stall_excuse(stalls, rec, name, off, tolerance):
    """Why `name` off by `off` (us) past `tolerance` is not held against
    the module, or None: the guest's stalls (stalls.py) in its windows
    (stall_windows()) cover the excess."""
    if stalls is None:
        return None
    windows = stall_windows(rec, name, off)
    cover = stalls_mod.covered(stalls, windows)
    if cover < off - tolerance:
        return None
    start, end, cpu = stalls_mod.longest(stalls, windows)
    return (f"stalls cover {cover} us around its times, the longest "
            f"{end - start} us on CPU {cpu} at {start}")


def compare(conns, lines, tolerance, sampled_out=None, stalls=None):
    """Every module record against the oracle's: counts and bytes exactly,
    times within tolerance (us), min_rtt no more than rtt_est + tolerance.
    sampled_out (log_sample): exactly that many connections have no record
    at all, every other one all of its records.  stalls (stalls.load()):
    a time further off is excused when the guest's stalls cover the
    excess (stall_excuse()).
    Returns (mismatches, records matched, largest time deviation, excused
    deviations)."""
    want = {}
    for conn in conns:
        for rec in conn["records"]:
            key = (conn["peer"], conn["local"], rec["type"],
                   rec.get("task_seq", rec.get("last_task_seq")))
            want[key] = rec
    bad, matched, worst, excused = [], 0, 0, []
    for line in lines:
        peer, local, kind, got = parse_record(line)
        key = (peer, local, kind, got.get("task_seq", got.get("last_task_seq")))
        rec = want.pop(key, None)
        if rec is None:
            bad.append(f"not in the capture: {line}")
            continue
        matched += 1
        for name, value in got.items():
            exp = rec.get("rtt_est" if name == "min_rtt" else name)
            if exp is None or name == "mss":
                continue
            if name in EXACT:
                if value != exp:
                    bad.append(f"{name} {value}, wire says {exp}: {line}")
                continue
            if name in TIMES or name == "start":
                off, msg = abs(value - exp), (f"{name} {value}, wire says "
                                             f"{exp} (+-{tolerance})")
            elif name == "min_rtt":
                off, msg = value - exp, (f"min_rtt {value} above the "
                                         f"wire's {exp} (+{tolerance})")
            else:
                continue
            if name != "min_rtt":
                worst = max(worst, off)
            if off <= tolerance:
                continue
            why = stall_excuse(stalls, rec, name, off, tolerance)
            if why:
                excused.append(f"{msg}, {why}: {line}")
            else:
                bad.append(f"{msg}: {line}")
    if sampled_out is not None:
        seen = {parse_record(line)[:2] for line in lines}
        silent = {(c["peer"], c["local"]) for c in conns if c["records"]
                  and (c["peer"], c["local"]) not in seen}
        if len(silent) != sampled_out:
            bad.append(f"{len(silent)} connections without a record, "
                       f"{sampled_out} sampled out")
        want = {k: v for k, v in want.items() if k[:2] not in silent}
    for (peer, local, kind, seq), rec in want.items():
        bad.append(f"missing: {kind} task {seq} of {peer} {local}")
    return bad, matched, worst, excused


def port_list(text):
    """'7100,7101' -> {7100, 7101}"""
    return {int(p) for p in text.split(",")}


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="The records tcp_rt should write, from a pcap alone.")
    role = parser.add_mutually_exclusive_group(required=True)
    role.add_argument("--lport", type=port_list,
                      help="server port(s), capture seen from the server")
    role.add_argument("--pport", type=port_list,
                      help="server port(s), capture seen from the client")
    parser.add_argument("--json", action="store_true",
                        help="JSON: connections with times and fields")
    parser.add_argument("--compare", metavar="LOG",
                        help="hold the module's records in LOG to the capture")
    parser.add_argument("--tolerance-us", type=int, default=2000,
                        help="--compare: how far a time may be off")
    parser.add_argument("--written", type=int, metavar="BYTES",
                        help="the tracked side's application wrote BYTES "
                        "on each connection, some perhaps never sent")
    parser.add_argument("--unread", action="store_true",
                        help="the tracked client's application left "
                        "response data unread when it closed")
    parser.add_argument("--closed", action="store_true",
                        help="the tracked side's application closed its "
                        "socket (not shutdown): data after its FIN is "
                        "refused")
    parser.add_argument("--stalls", metavar="FILE",
                        help="--compare: the guest's stalls (stallmon): a "
                        "time off by more than the tolerance passes when "
                        "stalls around the record cover the excess")
    parser.add_argument("--sampled-out", type=int, metavar="N",
                        help="--compare: log_sample left exactly N "
                        "connections out of the log, whole")
    parser.add_argument("pcap")
    args = parser.parse_args(argv)
    conns = expected(args.pcap, lports=args.lport or (),
                     pports=args.pport or (),
                     app={"written": args.written, "unread": args.unread,
                          "closed": args.closed})
    if args.compare:
        with open(args.compare, encoding="ascii") as f:
            lines = [ln for ln in f if ln.startswith("V6 ")]
        stalls = stalls_mod.load(args.stalls) if args.stalls else None
        bad, matched, worst, excused = compare(
            conns, lines, args.tolerance_us, args.sampled_out, stalls)
        for msg in excused:
            print(f"oracle: excused: {msg.rstrip()}")
        for msg in bad:
            print(f"oracle: {msg.rstrip()}")
        print(f"oracle: {matched} records held to the capture, times off by "
              f"at most {worst} us, {len(excused)} excused by stalls, "
              f"{len(bad)} mismatches")
        return 1 if bad else 0
    if args.json:
        json.dump(conns, sys.stdout, indent=1)
        print()
    else:
        for conn in conns:
            for rec in conn["records"]:
                print(record_line(conn, rec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
