-- SPDX-License-Identifier: GPL-2.0
-- Schema 1 of tcprt's store, as fleet/schema.sql had it before schema 2
-- (git show 3043ef0:tools/tcprt/fleet/schema.sql, this header aside): a
-- store of version 1, for the upgrade's tests (tests/test_store.c, the
-- upgrade case of tests/fleet.sh).  Not installed.
--
-- The central store of tcprt's fleet path (docs/fleet.md), schema 1.
-- 'tcprt fleet init' runs these statements (built into tcprt from this
-- file); or: clickhouse-client --multiquery < schema.sql.  Only SQL that
-- ClickHouse has accepted since 18.16 (Debian 12's) and still accepts.
-- Every statement ends with ';' at the end of a line.
--
-- A record delivered twice (RELP resends what a broken session left
-- unacknowledged; the loader resends a batch whose load it could not
-- confirm) has the same (host, epoch, seq): ReplacingMergeTree keeps one
-- copy when it merges, and every query of tcprt reads with FINAL, so a
-- record counts once before that too.

CREATE DATABASE IF NOT EXISTS tcprt;

-- One row per record line shipped, valid or not (valid = 0: line holds the
-- malformed bytes, the other columns are empty).  line: the record's line
-- exactly as tcp_rt (or the vendor's TCP-RT) wrote it.  The metrics are
-- tcprt's (tcprt summary --help): bit m of metrics set when metric m -
-- duration, process, upload, download, min_rtt - is known for the record.
CREATE TABLE IF NOT EXISTS tcprt.records (
    host String,
    epoch UInt64,
    seq UInt64,
    received DateTime DEFAULT now(),
    valid UInt8,
    line String,
    cpu Int32,
    type String,
    source String,
    role String,
    port UInt16,
    sec UInt64,
    usec UInt32,
    time DateTime DEFAULT toDateTime(sec),
    peer_addr String,
    peer_port UInt16,
    local_addr String,
    local_port UInt16,
    sent_bytes UInt64,
    recv_bytes UInt64,
    retrans UInt64,
    metrics UInt8,
    duration UInt64,
    process UInt64,
    upload UInt64,
    download UInt64,
    min_rtt UInt64
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(time)
ORDER BY (host, epoch, seq);

-- The senders' control messages: cumulative counters of an epoch (the
-- C1 message of tools/tcprt/frame.h, field for field).  The one with the
-- highest ctl_seq of an epoch is its account, whatever order they came in.
CREATE TABLE IF NOT EXISTS tcprt.controls (
    host String,
    epoch UInt64,
    ctl_seq UInt64,
    received DateTime DEFAULT now(),
    start_us UInt64,
    now_us UInt64,
    next_seq UInt64,
    cap_dropped UInt64,
    refused UInt64,
    bad_lines UInt64,
    module_known UInt8,
    overwritten_start UInt64,
    overwritten UInt64,
    sampled_out_start UInt64,
    sampled_out UInt64,
    final UInt8
) ENGINE = ReplacingMergeTree
ORDER BY (host, epoch, ctl_seq);

-- Lines of the spool the loader could not read as a message: kept, with
-- where they were, so none is lost silently ('tcprt fleet gaps' counts them).
CREATE TABLE IF NOT EXISTS tcprt.bad_messages (
    received DateTime DEFAULT now(),
    file String,
    offset UInt64,
    reason String,
    message String
) ENGINE = ReplacingMergeTree
ORDER BY (file, offset);

-- The schema's version, which tcprt checks before it loads or queries.
CREATE TABLE IF NOT EXISTS tcprt.meta (
    key String,
    value String
) ENGINE = ReplacingMergeTree
ORDER BY key;

INSERT INTO tcprt.meta (key, value) VALUES ('schema', '1');
