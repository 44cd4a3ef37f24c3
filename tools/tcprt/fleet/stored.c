// SPDX-License-Identifier: GPL-2.0
/* The numbers the central store holds of a numbering: see stored.h. */
#include "stored.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int stored_cmp(const void *x, const void *y)
{
	return strcmp(((const struct stored *)x)->key,
		      ((const struct stored *)y)->key);
}

struct stored *stored_key(struct stored *s, size_t n, const char *key)
{
	struct stored k;

	snprintf(k.key, sizeof(k.key), "%s", key);
	return bsearch(&k, s, n, sizeof(*s), stored_cmp);
}

/* The first @nkeys fields of @f joined back by tabs: a key's values. */
static void key_join(char **f, size_t nkeys, char *key, size_t size)
{
	size_t i, o = 0;

	key[0] = '\0';
	for (i = 0; i < nkeys && o < size; i++)
		o += (size_t)snprintf(key + o, size - o, "%s%s", i ? "\t" : "", f[i]);
}

static bool num_of(const char *s, uint64_t *v)
{
	return parse_u64(s, strlen(s), v);
}

bool stored_bucket(struct stored *s, size_t n, size_t nkeys, char **f,
		   size_t nf, struct stored_part *part)
{
	uint64_t b, count, lo, hi;
	struct stored *k;
	char key[sizeof(s->key)];

	if (nf != nkeys + 4 || !num_of(f[nkeys], &b) ||
	    !num_of(f[nkeys + 1], &count) || !num_of(f[nkeys + 2], &lo) ||
	    !num_of(f[nkeys + 3], &hi) || hi < lo || hi == UINT64_MAX)
		return true;
	key_join(f, nkeys, key, sizeof(key));
	k = stored_key(s, n, key);
	if (!k)
		return true;
	/* distinct numbers: as many as lo..hi holds, every one of them */
	if (count == hi - lo + 1) {
		spans_add(&k->set, lo, hi + 1);
		return true;
	}
	*part = (struct stored_part){ .idx = (size_t)(k - s), .bucket = b,
				      .count = count };
	return false;
}

/* "(<term> AND <num> >= <lo>[ AND <num> < <hi>])" */
static void term_sql(struct buf *q, const struct stored_of *of,
		     const struct stored *k, uint64_t lo, uint64_t hi)
{
	buf_printf(q, "(%s AND %s >= %llu", k->term, of->num,
		   (unsigned long long)lo);
	if (hi)
		buf_printf(q, " AND %s < %llu", of->num, (unsigned long long)hi);
	buf_printf(q, ")");
}

/* Per key and bucket: distinct numbers, least, greatest. */
static bool find_buckets(struct ch *c, const struct stored_of *of,
			 struct stored *s, size_t n, size_t from, size_t to,
			 struct stored_part **parts, size_t *nparts)
{
	struct buf q = { 0 }, ans = { 0 };
	size_t pos = 0, i;
	char *row, *f[8];
	bool ok;

	buf_printf(&q, "SELECT %s, intDiv(n, %u) AS b, count(), min(n), max(n) FROM (SELECT %s, %s AS n FROM tcprt.records WHERE %s AND %s AND (",
		   of->keys, STORED_BUCKET, of->keys, of->num, of->rows, of->time);
	for (i = from; i < to; i++) {
		if (i > from)
			buf_printf(&q, " OR ");
		term_sql(&q, of, &s[i], s[i].lo, 0);
	}
	buf_printf(&q, ") GROUP BY %s, n) GROUP BY %s, b SETTINGS max_bytes_before_external_group_by = %s FORMAT TabSeparated",
		   of->keys, of->keys, STORED_SPILL);
	ok = ch_query(c, q.p, &ans);
	while (ok && (row = ch_row(&ans, &pos))) {
		struct stored_part p;

		if (stored_bucket(s, n, of->nkeys, f, ch_fields(row, f, 8), &p))
			continue;
		*parts = xrealloc(*parts, *nparts + 1, sizeof(**parts));
		(*parts)[(*nparts)++] = p;
	}
	buf_free(&q);
	buf_free(&ans);
	return ok;
}

/* The numbers of @parts[from, to), one by one, into their keys' sets. */
static bool find_numbers(struct ch *c, const struct stored_of *of,
			 struct stored *s, size_t n,
			 const struct stored_part *parts, size_t from, size_t to)
{
	struct buf q = { 0 }, ans = { 0 };
	size_t pos = 0, i;
	char *row, *f[8], key[sizeof(s->key)];
	bool ok;

	buf_printf(&q, "SELECT DISTINCT %s, %s FROM tcprt.records WHERE %s AND %s AND (",
		   of->keys, of->num, of->rows, of->time);
	for (i = from; i < to; i++) {
		const struct stored *k = &s[parts[i].idx];
		uint64_t lo = parts[i].bucket * STORED_BUCKET;

		if (i > from)
			buf_printf(&q, " OR ");
		term_sql(&q, of, k, lo > k->lo ? lo : k->lo, lo + STORED_BUCKET);
	}
	buf_printf(&q, ") FORMAT TabSeparated");
	ok = ch_query(c, q.p, &ans);
	while (ok && (row = ch_row(&ans, &pos))) {
		struct stored *k;
		uint64_t v;

		if (ch_fields(row, f, 8) != of->nkeys + 1 ||
		    !num_of(f[of->nkeys], &v) || v == UINT64_MAX)
			continue;
		key_join(f, of->nkeys, key, sizeof(key));
		k = stored_key(s, n, key);
		if (k)
			spans_add(&k->set, v, v + 1);
	}
	buf_free(&q);
	buf_free(&ans);
	return ok;
}

bool stored_find(struct ch *c, const struct stored_of *of, struct stored *s,
		 size_t n)
{
	struct stored_part *parts = NULL;
	size_t nparts = 0, i, j;
	bool ok = true;

	qsort(s, n, sizeof(*s), stored_cmp);
	for (i = 0; ok && i < n; i += STORED_TERMS)
		ok = find_buckets(c, of, s, n, i, i + STORED_TERMS < n ?
				  i + STORED_TERMS : n, &parts, &nparts);
	/* the buckets with a gap: a few at a time, the sets kept compact */
	for (i = 0; ok && i < nparts; i = j) {
		uint64_t numbers = 0;

		for (j = i; j < nparts && j - i < STORED_TERMS &&
		     (j == i || numbers + parts[j].count <= STORED_DETAIL); j++)
			numbers += parts[j].count;
		ok = find_numbers(c, of, s, n, parts, i, j);
		for (; i < j; i++)
			spans_union(&s[parts[i].idx].set);
	}
	for (i = 0; i < n; i++)
		spans_union(&s[i].set);
	free(parts);
	return ok;
}

void stored_free(struct stored *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		spans_free(&s[i].set);
	free(s);
}
