/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The numbers the central store holds of one numbering - ship's, per
 * (host, epoch), or the module's, per (host, load_id, cpu) - found in
 * memory that does not grow with the rows (tcprt fleet gaps).
 *
 * ClickHouse counts the distinct numbers of each key per bucket of
 * STORED_BUCKET numbers, with their least and greatest: a bucket whose
 * count spans its least to its greatest holds every number between, one
 * run.  Only the other buckets, those with a gap inside, are read number
 * by number, a few at a time.  Memory: one row per bucket in ClickHouse's
 * answer (a bucket per 65,536 numbers stored), the distinct numbers of a
 * few buckets at a time, and the runs found.  The count of distinct
 * numbers is ClickHouse's GROUP BY of every number, allowed to spill to
 * disk past STORED_SPILL bytes (max_bytes_before_external_group_by).
 *
 * A copy of a record - the same number stored twice, or one module number
 * shipped by two epochs - counts once.  The store may grow while it is
 * read: a bucket read number by number is taken as then read.
 */
#ifndef TCPRT_STORED_H
#define TCPRT_STORED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acct.h"
#include "clickhouse.h"

#define STORED_BUCKET	65536
#define STORED_SPILL	"268435456"	/* 256 MiB */
#define STORED_TERMS	256	/* keys per query (its text < 64 KiB) */
#define STORED_DETAIL	262144	/* numbers read one by one per query */

/* A numbering: its rows in tcprt.records. */
struct stored_of {
	const char *keys;	/* the key's columns, e.g. "host, epoch" */
	size_t nkeys;		/* how many */
	const char *num;	/* the number's column: "seq", "rseq" */
	const char *rows;	/* SQL: rows of the numbering, e.g. "1" */
	const char *time;	/* SQL: a bound on the rows' time, or "1" */
};

/* One key's numbers. */
struct stored {
	char key[96];		/* its values as ClickHouse prints them, by tabs */
	char term[256];		/* SQL: its rows (the key's columns equal) */
	uint64_t lo;		/* numbers below lo are not looked for */
	struct spans set;	/* found, in order (spans_union) */
};

/* A bucket with a gap inside: to be read number by number. */
struct stored_part {
	size_t idx;		/* the key's, in the array stored_find sorted */
	uint64_t bucket;
	uint64_t count;		/* its distinct numbers */
};

/*
 * One row of the buckets' answer, "<keys...> b count min max" (cut into
 * @f, @nf fields), added to @s: a whole run into the key's set, or, when
 * the bucket has a gap, false and @part filled.  Unknown keys and rows
 * that are not numbers are skipped (true).
 */
bool stored_bucket(struct stored *s, size_t n, size_t nkeys, char **f,
		   size_t nf, struct stored_part *part);

/*
 * Fill each @s[i].set (n keys, their key, term and lo set) with the
 * numbers of @of stored from lo on.  Sorts @s by key.  false, with @c's
 * error, when a query failed.
 */
bool stored_find(struct ch *c, const struct stored_of *of, struct stored *s,
		 size_t n);

/* The key among @s (sorted by stored_find) whose values are @key, or NULL. */
struct stored *stored_key(struct stored *s, size_t n, const char *key);

void stored_free(struct stored *s, size_t n);

#endif
