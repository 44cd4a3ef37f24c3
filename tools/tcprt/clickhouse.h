/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The central store: ClickHouse over its HTTP interface, through libcurl.
 * Queries send their SQL as the request body and read TabSeparated
 * answers; inserts send the SQL in the URL's query parameter and the rows,
 * TabSeparated, as the body.  An error is kept as one sentence that says
 * what is wrong - store unreachable, schema missing or of another version,
 * credentials refused, ClickHouse's own message otherwise - for the
 * caller to print.
 */
#ifndef TCPRT_CLICKHOUSE_H
#define TCPRT_CLICKHOUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CH_DEFAULT_URL		"http://127.0.0.1:8123/"

/* A growing byte buffer (always NUL-terminated). */
struct buf {
	char *p;
	size_t len, cap;
};

void buf_add(struct buf *b, const void *p, size_t len);
void buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* @s as a TabSeparated field: \ tab newline escaped. */
void buf_tsv(struct buf *b, const char *s, size_t len);
void buf_free(struct buf *b);

struct ch {
	char *url;		/* ends with '/' or has a '?' */
	void *curl;
	long timeout_s;		/* of a whole request */
	char err[1024];
	/* the last error came from the store being unreachable: retry later */
	bool unreachable;
	int code;		/* ClickHouse's code of the last error, or 0 */
};

/* Returns false (err set) when libcurl cannot start. */
bool ch_open(struct ch *c, const char *url, long timeout_s);
void ch_close(struct ch *c);

/* A statement whose answer (if any) lands in @out (may be NULL). */
bool ch_query(struct ch *c, const char *sql, struct buf *out);
/* INSERT: @sql is "INSERT INTO ... FORMAT TabSeparated", @rows the body. */
bool ch_insert(struct ch *c, const char *sql, const struct buf *rows);

/*
 * The schema is there, of version @need or later, and not newer than this
 * tcprt's (store.h).
 */
bool ch_check_schema(struct ch *c, int need);

/* What ch_init_schema() found and did. */
struct ch_init {
	int from;		/* the version it found; 0: none */
	unsigned int added;	/* columns it added to tcprt.records */
};

/*
 * Create the schema (fleet/schema.sql), or upgrade a store of an older
 * version in place: add the columns tcprt.records lacks, then run the
 * schema's statements, whose last writes the version.  Stopped anywhere,
 * it completes the work when run again.  A store of a newer version, or
 * of a version that is no number, is left as it is (false).
 */
bool ch_init_schema(struct ch *c, struct ch_init *done);
/* The schema's text, as fleet/schema.sql has it. */
extern const char ch_schema_sql[];

#endif
