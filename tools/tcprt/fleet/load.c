// SPDX-License-Identifier: GPL-2.0
/* The rows of a load, and the split of a refused one: see load.h. */
#include "load.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void rows_begin(struct rows *t, uint32_t file, uint64_t off)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->src = xrealloc(t->src, t->cap, sizeof(*t->src));
	}
	t->src[t->n++] = (struct row_src){ .at = t->b.len, .file = file, .off = off };
}

void rows_truncate(struct rows *t, size_t n)
{
	if (n >= t->n)
		return;
	t->b.len = t->src[n].at;
	if (t->b.p)
		t->b.p[t->b.len] = '\0';
	t->n = n;
}

void rows_free(struct rows *t)
{
	buf_free(&t->b);
	free(t->src);
	t->src = NULL;
	t->n = t->cap = 0;
}

size_t rows_text(const struct rows *t, size_t i, const char **p)
{
	size_t end = i + 1 < t->n ? t->src[i + 1].at : t->b.len;

	*p = t->b.p + t->src[i].at;
	return end - t->src[i].at - (end > t->src[i].at && t->b.p[end - 1] == '\n');
}

/*
 * [lo, hi): stored, or split until what is refused is alone.  The
 * recursion is as deep as the load's size in bits (17 for 100,000 rows);
 * a load with one row refused costs 2 requests per level.
 */
static bool load_range(const struct rows *t, size_t lo, size_t hi,
		       rows_insert_fn insert, rows_refused_fn refused,
		       void *ctx, struct rows_stats *st)
{
	const char *err = "";
	bool wide = false;
	size_t mid;

	if (lo == hi)
		return true;
	st->inserts++;
	if (insert(ctx, t, lo, hi, &err, &wide))
		return true;
	if (wide)
		return false;
	if (hi - lo == 1) {
		st->refused++;
		refused(ctx, t, lo, err);
		return true;
	}
	st->split++;
	mid = lo + (hi - lo) / 2;
	return load_range(t, lo, mid, insert, refused, ctx, st) &&
	       load_range(t, mid, hi, insert, refused, ctx, st);
}

bool rows_load(const struct rows *t, rows_insert_fn insert,
	       rows_refused_fn refused, void *ctx, struct rows_stats *st)
{
	uint64_t before = st->refused;

	if (!load_range(t, 0, t->n, insert, refused, ctx, st))
		return false;
	return t->n < 2 || st->refused - before < t->n;
}
