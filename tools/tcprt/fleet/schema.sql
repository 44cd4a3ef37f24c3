-- SPDX-License-Identifier: GPL-2.0
-- The central store of tcprt's fleet path (docs/fleet.md), schema 6.
-- 'tcprt fleet init' runs these statements (built into tcprt from this
-- file); or: clickhouse-client --multiquery < schema.sql on a new store.
-- Only SQL that ClickHouse has accepted since 18.16 (Debian 12's) and
-- still accepts.  Every statement ends with ';' at the end of a line.
--
-- Versions add columns at the end of a table, never change one: on a
-- store of an older schema, 'tcprt fleet init' first adds to each table the
-- columns it lacks (ALTER TABLE ... ADD COLUMN, tools/tcprt/store.c), then
-- runs these statements, whose last writes the version.
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
-- Schema 2: the time breakdown (docs/records.md, "Where the time goes"):
-- bit i of breakdown set when the line had field i of rq_wait, app,
-- sq_wait, rwnd_limited, sndbuf_limited, app_limited (its value in the
-- column of its name; 0 when absent); bit 6 when rq_wait + app + sq_wait
-- is the process time (R W), bit 7 when the three limited parts fit in the
-- transfer (R W: download, P: upload), as tcprt summary checks them.  Rows
-- loaded under schema 1 have breakdown 0.
-- Schema 3: partitions by the month of the record's own time, so that no
-- load of tcprt ingest's default size (100000 rows) spans more partitions
-- than ClickHouse takes in one insert (max_partitions_per_insert_block,
-- 100) unless its records' clocks span more than 100 months; a store made
-- before keeps its partitions by day (ClickHouse cannot change a table's
-- partitioning in place), and ingest splits a load it refuses for that.
-- Schema 4: the module's own numbering (log_ext's seq, docs/records.md):
-- numbered 1 when the line had seq=, rseq its value (the record's number
-- in its CPU's log since the module's load); load_id the load's, as the
-- D2 message that carried the line said (0: a D1, no load known).  Rows
-- loaded before have numbered 0.
-- Schema 5: partitions by the day of the record's own time, sorted by its
-- hour first, so that a query of an hour reads about an hour's rows
-- (tcprt's queries filter on time, and on host, epoch and seq within an
-- hour), and retention drops whole days; the sort key still ends with
-- (host, epoch, seq), which a record's copies share, with their time, so
-- they fall in one partition and FINAL keeps one.  A store made before
-- keeps its table (ClickHouse cannot change a table's key in place): the
-- queries answer the same there, reading more.
-- Series lines (ship --series, D3 messages; no schema change): rows of
-- type 'S', numbered in their epoch's one sequence with the records (so
-- that fleet gaps accounts for them as for records), cpu -1, role server,
-- client or host (port '*', 0 here), sec and usec the bucket's start,
-- recv_bytes, sent_bytes and retrans its bytes_in, bytes_out and retrans,
-- duration the bucket's width in us, metrics 0 (no task's: summary and
-- top never take them), the other measures in line (tcprt fleet series).
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
    min_rtt UInt64,
    breakdown UInt8,
    rq_wait UInt64,
    app UInt64,
    sq_wait UInt64,
    rwnd_limited UInt64,
    sndbuf_limited UInt64,
    app_limited UInt64,
    load_id UInt64,
    rseq UInt64,
    numbered UInt8
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(time)
ORDER BY (toStartOfHour(time), host, epoch, seq);

-- The senders' control messages: cumulative counters of an epoch (the
-- C1 message of tools/tcprt/fleet/frame.h, field for field).  The one with the
-- highest ctl_seq of an epoch is its account, whatever order they came in.
-- final: 1 the epoch's last, 2 sent by its successor from the state the
-- killed sender left.  Schema 4: sent_seq (every number below it was
-- handed to the host's rsyslog, or counted as cap_dropped or refused) and
-- interval_us (the sender's --interval; 0: unknown); sent_known 1 when the
-- message carried them (0: a sender of before them, whose sent_seq ingest
-- set to next_seq, or a row loaded before schema 4, whose sent_seq is 0).
-- Schema 5: partitions by the day of arrival (the central's clock), which
-- tcprt fleet gaps' window is on, and which retention drops whole.  A
-- message's copies may arrive on either side of midnight: every query
-- reads an epoch's account as the one of the highest ctl_seq and its
-- finals as any, which a copy does not change.
-- Schema 6: central, the loader that stored the row, named as in
-- tcprt.centrals ('' in rows loaded before), so that tcprt fleet gaps
-- judges an epoch silent by how far that central's spool is loaded, not
-- by the clock alone (a copy of a message the store had is not loaded
-- again: the row names the central whose copy came first).
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
    final UInt8,
    sent_seq UInt64,
    interval_us UInt64,
    sent_known UInt8,
    central String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(received)
ORDER BY (host, epoch, ctl_seq);

-- Schema 4: an epoch's account of each log it read, by the module's own
-- numbers (the L1 message of tools/tcprt/fleet/frame.h, field for field): of
-- the log of (load_id, cpu), the numbers in [first, read_next) were read
-- or skipped by the epoch; of [first, sent_next), each was handed to the
-- host's rsyslog or counted in relay_skipped (never seen: overwritten in
-- the relay, or read by another reader), cap_dropped or refused.
-- unsent_skipped: those of relay_skipped in [sent_next, read_next).  The one
-- with the highest ctl_seq of (host, epoch, load_id, cpu) is the account.
-- Schema 5: partitions by the day of arrival, as tcprt.controls.
CREATE TABLE IF NOT EXISTS tcprt.cpu_accounts (
    host String,
    epoch UInt64,
    ctl_seq UInt64,
    received DateTime DEFAULT now(),
    load_id UInt64,
    cpu Int32,
    first UInt64,
    read_next UInt64,
    sent_next UInt64,
    relay_skipped UInt64,
    cap_dropped UInt64,
    refused UInt64,
    final UInt8,
    unsent_skipped UInt64
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(received)
ORDER BY (host, epoch, load_id, cpu, ctl_seq);

-- Lines of the spool the loader could not read as a message: kept, with
-- where they were, so none is lost silently ('tcprt fleet gaps' counts them).
-- Schema 3: also the rows ClickHouse refused to store (a row that the
-- loader split out of a load ClickHouse refused for a reason that would
-- repeat; reason says why): offset is then where the row's record item
-- starts in the file, message the row as it was sent, host, epoch and seq
-- the record's, records 1, so that 'tcprt fleet gaps' counts it as its
-- epoch's STORE loss.  Rows of schema 2 have host '' and records 0.
-- file is '<central>:<spool folder>/<file>' (the loader's host name and
-- its spool's path): the spool's files are named by the hour on every
-- central, and rows of two centrals must not replace each other (rows
-- of tcprt 0.6 and before have the file's name alone).
CREATE TABLE IF NOT EXISTS tcprt.bad_messages (
    received DateTime DEFAULT now(),
    file String,
    offset UInt64,
    reason String,
    message String,
    host String,
    epoch UInt64,
    seq UInt64,
    records UInt64
) ENGINE = ReplacingMergeTree
ORDER BY (file, offset);

-- Schema 4: the share of the module's records that reached the store, per
-- host and hour of the records' own time, for a dashboard ('tcprt fleet
-- reached' prints it).  Per log (host, load_id, cpu) and hour: stored, the
-- distinct numbers stored; made, the numbers from the highest stored in
-- the log's previous hour (in the order of those highest numbers) to the
-- highest stored in this one, so that the numbers missing between two
-- stored records count in the hour of the later, and a log's first hour
-- counts from 0, the load's first record.  Numbers after a log's highest
-- stored count once a later record is stored (fleet gaps counts them
-- meanwhile).  Rows without a load id (D1) are not in it.  It reads every
-- numbered row at each query.
CREATE VIEW IF NOT EXISTS tcprt.reached AS
SELECT host, hour, sum(n) AS stored, sum(m) AS made, stored / made AS share
FROM (
    SELECT host, hour, n, m
    FROM (
        SELECT host,
            arraySort((h, t) -> t, groupArray(hour), groupArray(top)) AS hours,
            arraySort((c, t) -> t, groupArray(n), groupArray(top)) AS ns,
            arraySort(groupArray(top)) AS tops,
            arrayMap(i -> if(i = 1, tops[1] + 1, toUInt64(tops[i] - tops[i - 1])), arrayEnumerate(tops)) AS ms
        FROM (
            SELECT host, load_id, cpu, toStartOfHour(time) AS hour,
                uniqExact(rseq) AS n, max(rseq) AS top
            FROM tcprt.records
            WHERE numbered = 1 AND load_id != 0
            GROUP BY host, load_id, cpu, hour
        )
        GROUP BY host, load_id, cpu
    )
    ARRAY JOIN hours AS hour, ns AS n, ms AS m
)
GROUP BY host, hour;

-- Schema 6: how far each central's loader (tcprt ingest) has loaded its
-- spool.  central: '<host>:<spool folder>/', the loader's host name and
-- its spool's path, as bad_messages' file begins; loaded_to: the store's
-- clock (Unix seconds; 0: never loaded whole) before a pass over the
-- spool whose every message is now in the store, so that whatever the
-- spool held then is loaded; at: when the row
-- was written (ingest writes one every --interval, at most once a second,
-- loaded_to unchanged while it is behind).  tcprt fleet gaps judges an
-- epoch silent from its last control message to the loaded_to of the
-- central that stored it, and ends it only past --ended-after of that: a
-- loader stalled or behind holds its epochs open (in flight), it does not
-- end them.  A central that wrote no row for a day no longer holds any.
CREATE TABLE IF NOT EXISTS tcprt.centrals (
    central String,
    loaded_to UInt64,
    at DateTime DEFAULT now()
) ENGINE = ReplacingMergeTree
ORDER BY central;

-- The schema's version, which tcprt checks before it loads or queries:
-- written last, so that a store whose init stopped halfway says the
-- version it had (tcprt fleet init again completes it).
CREATE TABLE IF NOT EXISTS tcprt.meta (
    key String,
    value String
) ENGINE = ReplacingMergeTree
ORDER BY key;

INSERT INTO tcprt.meta (key, value) VALUES ('schema', '6');
