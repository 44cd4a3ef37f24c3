/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The central store's schema (fleet/schema.sql, docs/fleet.md) in what
 * needs no ClickHouse to decide: what the version in tcprt.meta means to a
 * command, the columns a store of an older version lacks and the ALTER
 * TABLE that adds them, and a record's time breakdown columns.
 *
 *   1  tcprt.records, controls, bad_messages and meta
 *   2  tcprt.records gains the time breakdown: the mask breakdown and the
 *      six values (docs/records.md, "Where the time goes")
 *   3  tcprt.bad_messages gains host, epoch, seq and records: the rows
 *      ClickHouse refused, counted per epoch; new stores' tcprt.records
 *      partitioned by month (an existing table keeps its partitioning)
 *   4  the module's own numbering: tcprt.records gains load_id, rseq and
 *      numbered; tcprt.controls sent_seq, interval_us and sent_known; the
 *      table tcprt.cpu_accounts (L1 messages) and the view tcprt.reached
 *   5  no column: new stores' tcprt.records partitioned by day and sorted
 *      by hour first, controls and cpu_accounts partitioned by the day of
 *      arrival (an existing table keeps its key and partitioning)
 *   6  how far each central's spool is loaded: the table tcprt.centrals,
 *      tcprt.controls gains central (the loader that stored the row)
 *
 * A version only ever adds columns at the end of a table, so that a store
 * of any older version is upgraded in place (tcprt fleet init), and the
 * commands that read none of the new columns (fleet gaps, fleet top) still
 * read a store of the oldest one.
 */
#ifndef TCPRT_STORE_H
#define TCPRT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clickhouse.h"
#include "frame.h"
#include "record.h"

#define STORE_VERSION	6	/* fleet/schema.sql's, written in tcprt.meta */
#define STORE_BREAKDOWN	2	/* the version whose records have the breakdown */
#define STORE_REFUSED	3	/* the version whose bad_messages has host, epoch */
#define STORE_SEQ	4	/* records numbered by the module, cpu_accounts */
#define STORE_CENTRALS	6	/* tcprt.centrals, controls' central */
#define STORE_OLDEST	1	/* the oldest one tcprt reads and upgrades */

/*
 * The version @found in tcprt.meta (@len bytes), or 0 when there is none
 * (@len 0), or -1 when it is not a version number.
 */
int store_version_of(const char *found, size_t len);

/*
 * Whether a store whose tcprt.meta holds @found (@len bytes) serves a
 * command that needs version @need or later: true, or false with one
 * sentence in @err that says why and what to do (a store of an older
 * version: run tcprt fleet init; of a newer: a newer tcprt).  @url names
 * the store in it.
 */
bool store_version_ok(const char *found, size_t len, int need,
		      const char *url, char *err, size_t size);

/* A column added to a table after version 1, as schema.sql has it. */
struct store_column {
	int version;		/* the version that added it */
	const char *table;	/* records, bad_messages, controls */
	const char *name;
	const char *type;
};

extern const struct store_column store_added[];
extern const size_t store_nadded;

/* The tables that gain columns, in the order the upgrade adds them. */
extern const char *const store_tables[];
extern const size_t store_ntables;

/*
 * The ALTER TABLE that adds to tcprt.@table the columns of store_added it
 * lacks, given @have, the names of the columns it has, one per line (as
 * ClickHouse's system.columns gives them), into @sql (@size bytes).
 * Returns how many columns it adds: 0, and @sql empty, when none is
 * missing or when @have is empty (no table: the schema creates it whole).
 */
#define STORE_UPGRADE_MAX	1024
unsigned int store_upgrade_sql(const char *table, const char *have, char *sql,
			       size_t size);

/*
 * The breakdown column of a record (version 2): bit i, the time
 * breakdown's field EXT_BREAKDOWN + i was on its line (its value is in
 * the column of that name; 0 when absent); STORE_BD_PROCESS, its process
 * split holds (rec_process_parts() says SPLIT_OK); STORE_BD_TRANSFER, its
 * transfer split holds (rec_transfer_parts()).  A row loaded before
 * version 2 has 0, as has a line without the fields.
 */
#define STORE_BD_FIELDS		0x3fu
#define STORE_BD_PROCESS	0x40u
#define STORE_BD_TRANSFER	0x80u
unsigned int store_breakdown(const struct record *r);

/*
 * Retention (tcprt fleet init --keep, tcprt fleet expire): how long each
 * table keeps its rows, in seconds (0: for ever), kept in tcprt.meta as
 * keep.<table>; a row's age is by the column time_col (records: their own
 * time; the others: their arrival).  A new store gets the defaults; an
 * upgraded one keeps everything until told.
 */
enum store_keep_table {
	KEEP_RECORDS, KEEP_CONTROLS, KEEP_CPU_ACCOUNTS, KEEP_BAD_MESSAGES,
	STORE_NKEEP
};

struct store_keep_of {
	const char *table;
	const char *time_col;
	uint64_t dflt;		/* a new store's, seconds */
};

extern const struct store_keep_of store_keep_of[STORE_NKEEP];

/*
 * --keep's @spec: a duration for every table, or "TABLE=D[,TABLE=D...]";
 * a duration is N followed by s, m, h or d, or "forever".  Sets @keep and
 * @set of the tables it names; false with one sentence in @err if it is
 * not that.
 */
bool store_keep_parse(const char *spec, uint64_t keep[STORE_NKEEP],
		      bool set[STORE_NKEEP], char *err, size_t len);
/* @s seconds as --keep says it: "30d", "36h", "90s", "forever". */
void store_keep_fmt(uint64_t s, char *buf, size_t len);

/*
 * A cluster (tcprt fleet init --cluster NAME, docs/fleet.md "Scaling
 * out"): each table T of the schema is tcprt.T_local on every node, a
 * ReplicatedReplacingMergeTree whose replicas are those of the node's
 * shard (the macros {shard} and {replica} of each server's config), and
 * tcprt.T a Distributed table over them, sharded by a column every copy
 * of a row shares - the host for the records, the controls and the
 * accounts - so that all of a host's rows live on one shard and FINAL
 * still keeps one copy of each.  tcprt.meta is one replicated table on
 * every node, not sharded; the view reads the Distributed table.  Every
 * statement runs ON CLUSTER.  The queries read tcprt.T on either kind of
 * store; the store's kind is in tcprt.meta ('cluster').
 */
#define STORE_CLUSTER_MAX	CH_CLUSTER_MAX
/* A cluster's name as ClickHouse's remote_servers has it: [A-Za-z0-9_]. */
bool store_cluster_name_ok(const char *name);
/*
 * The schema's statements (@sql, fleet/schema.sql: each ends with ";" at
 * the end of a line) for the cluster @cluster, into @out, in the same
 * form.  False, with one sentence in @err, at a statement it cannot
 * place (a table without a shard key here): a bug, caught by its test.
 */
bool store_cluster_sql(const char *sql, const char *cluster, struct buf *out,
		       char *err, size_t len);

/*
 * The times a record may claim, [lo, hi) in Unix seconds, from the hour
 * its message arrived in, at (store_span_of()): from --max-age before it
 * to a day after that hour's end.  A record or series line that claims a
 * time outside is stored as malformed (valid 0, its line kept) and
 * counted in outside, and an invalid row whose time would be outside is
 * put at the arrival: one sender's records can no longer spread over
 * thousands of daily partitions (a load that never ends), nor outlive
 * retention by a claim of the year 2100, and they are told as malformed
 * in the windows of their arrival.  A NULL span bounds nothing.
 */
struct store_span {
	uint64_t at, lo, hi;
	uint64_t outside;	/* lines refused for their time, so far */
};

#define STORE_SPAN_AHEAD_S	(3600 + 86400)

/* "30d", "12h", "90m", "3600s" as seconds, "forever" as 0. */
bool store_duration(const char *s, uint64_t *v);

/* The span of a message that arrived in the hour starting @arrival. */
void store_span_of(struct store_span *span, uint64_t arrival,
		   uint64_t max_age);

/* @sec if @span takes it (with none, it does), else the arrival. */
uint64_t store_span_time(const struct store_span *span, uint64_t sec);

/*
 * The row of tcprt.records of the series line @line (@len bytes) numbered
 * @seq in the D3 message @h (frame.h), as store_record_row() makes a
 * record's: type 'S', cpu -1, source tcp_rt, role server (a local port),
 * client (P<port>) or host ('*'), port (0 for the host), sec and usec the
 * bucket's start, recv_bytes, sent_bytes and retrans its bytes_in,
 * bytes_out and retrans, duration the bucket's width (h->width_us),
 * metrics 0 (no task metric: fleet summary and top never take it), the
 * rest of the line in line only.  A line that is not a series line, or
 * whose time is outside @span: as a malformed record line, time *@sec; a
 * series line sets *@sec to its own.  Returns valid.
 */
bool store_series_row(struct buf *b, const struct frame_hdr *h, uint64_t seq,
		      const char *line, size_t len, int kind,
		      struct store_span *span, uint64_t *sec);

/* tcprt.records' columns, in the order of store_record_row()'s fields. */
extern const char store_records_cols[];

/*
 * Add to @b the TabSeparated row of tcprt.records (store_records_cols) of
 * the line @line (@len bytes) numbered @seq in the message @h: @kind and
 * @role as frame_item_line() gives them (a malformed line's item: kind 0;
 * an E record's role, else -1).  A line that is not a record gets valid
 * 0, its bytes in line, and the other columns empty or 0 (numbered 0: its
 * module number, if it had one, is not read) and the time *@sec, so that
 * it is kept as long as the records about it (retention); a record sets
 * *@sec to its own.  A record whose time is outside @span is not valid
 * either (counted in @span->outside); an invalid row's time is *@sec
 * within @span.  load_id is the message's (0 for D1).  Returns valid.
 */
bool store_record_row(struct buf *b, const struct frame_hdr *h, uint64_t seq,
		      const char *line, size_t len, int kind, int role,
		      struct store_span *span, uint64_t *sec);

#endif
