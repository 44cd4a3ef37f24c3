/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rows of one table in a load of tcprt ingest, each with the place in
 * the spool it came from, and how a load the store refuses is split
 * (docs/fleet.md, "A load ClickHouse refuses").
 *
 * A store can refuse a load for a reason of the load itself - a row it
 * will never take, a load spanning more partitions than one insert may -
 * and then refuses it again every time it is sent.  rows_load() halves
 * such a load and sends the halves, and again, until every row it refuses
 * is alone: that row is handed to the caller (which stores it in
 * bad_messages), the rest is stored.  A failure of the store as a whole
 * (unreachable, read-only, out of memory, credentials refused) is never
 * blamed on rows: the load is held and sent again later, whole.  Nor is
 * a refusal of every row of a load of several: that is the store's too
 * (a column gone, a right revoked, a code not known here as the store's).
 */
#ifndef TCPRT_LOAD_H
#define TCPRT_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clickhouse.h"

/* Where a row came from. */
struct row_src {
	size_t at;		/* where it starts in the rows' buffer */
	uint32_t file;		/* the caller's number of the spool file */
	uint64_t off;		/* its offset there: the message's, or the item's */
};

struct rows {
	const char *table, *cols;	/* tcprt.TABLE (COLS) */
	struct buf b;		/* TabSeparated rows, each ending in '\n' */
	struct row_src *src;
	size_t n, cap;
};

/* Start a row from @file at @off: write its fields to t->b next. */
void rows_begin(struct rows *t, uint32_t file, uint64_t off);
/* Keep only the first @n rows. */
void rows_truncate(struct rows *t, size_t n);
void rows_free(struct rows *t);
/* Row @i's text, without its newline: its length, its start in *p. */
size_t rows_text(const struct rows *t, size_t i, const char **p);

/*
 * The store: insert rows [@lo, @hi) of @t; true when stored.  Otherwise
 * @err says why, and @wide whether the store failed as a whole (hold the
 * load) rather than refused these rows.
 */
typedef bool (*rows_insert_fn)(void *ctx, const struct rows *t, size_t lo,
			       size_t hi, const char **err, bool *wide);
/* A row the store refused alone, and its reason. */
typedef void (*rows_refused_fn)(void *ctx, const struct rows *t, size_t i,
				const char *err);

struct rows_stats {
	uint64_t inserts;	/* requests sent */
	uint64_t split;		/* loads split because the store refused them */
	uint64_t refused;	/* rows refused alone */
};

/*
 * Insert every row of @t; false when the store failed as a whole, or
 * refused each of several rows (what was stored stays stored: loading the
 * same rows again adds nothing, the tables keep one row per key; the
 * caller drops what @refused was given, which is given again).
 */
bool rows_load(const struct rows *t, rows_insert_fn insert,
	       rows_refused_fn refused, void *ctx, struct rows_stats *st);

#endif
