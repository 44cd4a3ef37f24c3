// SPDX-License-Identifier: GPL-2.0
/*
 * load.c, the split of a load the store refuses, against stores modelled
 * here: one that refuses any request holding a poisoned row (as a
 * ClickHouse column DEFAULT throwIf(...) does), one that refuses a request
 * spanning more than a number of partitions (max_partitions_per_insert_
 * block), and one that fails as a whole.  Every row must end stored or
 * handed back as refused, exactly the poisoned ones refused, each once;
 * a store failing as a whole gets nothing blamed on rows; the requests
 * stay within the bound load.h states.
 */
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "tap.h"
#include "util.h"

#define NMAX	100000

static struct {
	unsigned char poison[NMAX];	/* row i poisoned */
	unsigned int part[NMAX];	/* row i's partition */
	unsigned int max_parts;		/* 0: no limit */
	int fail_after;			/* fail as a whole from this request on; -1 never */
	unsigned int stored[NMAX], refused[NMAX];
	int requests;
} m;

/* Row i's text is "row <i>": the store reads the rows it was sent. */
static size_t row_index(const struct rows *t, size_t i)
{
	const char *p;

	rows_text(t, i, &p);
	return (size_t)atol(p + 4);
}

static bool store(void *ctx, const struct rows *t, size_t lo, size_t hi,
		  const char **err, bool *wide)
{
	static unsigned char seen[NMAX];
	unsigned int parts = 0;
	size_t i;

	(void)ctx;
	if (m.fail_after >= 0 && m.requests++ >= m.fail_after) {
		*err = "Code: 242, e.displayText() = DB::Exception: Table is in readonly mode";
		*wide = true;
		return false;
	}
	memset(seen, 0, sizeof(seen));
	for (i = lo; i < hi; i++) {
		size_t r = row_index(t, i);

		if (m.poison[r]) {
			*err = "Code: 395, e.displayText() = DB::Exception: Value passed to 'throwIf' function is non zero";
			*wide = false;
			return false;
		}
		parts += !seen[m.part[r]];
		seen[m.part[r]] = 1;
	}
	if (m.max_parts && parts > m.max_parts) {
		*err = "Code: 252, e.displayText() = DB::Exception: Too many partitions for single INSERT block";
		*wide = false;
		return false;
	}
	for (i = lo; i < hi; i++)
		m.stored[row_index(t, i)]++;
	return true;
}

static void refused(void *ctx, const struct rows *t, size_t i, const char *err)
{
	(void)ctx;
	(void)err;
	m.refused[row_index(t, i)]++;
}

static void fill(struct rows *t, size_t n)
{
	size_t i;

	rows_truncate(t, 0);
	for (i = 0; i < n; i++) {
		rows_begin(t, 0, i * 100);
		buf_printf(&t->b, "row %zu\tx\n", i);
	}
}

static void reset(void)
{
	memset(&m, 0, sizeof(m));
	m.fail_after = -1;
}

/* Every row stored once or refused once, refused exactly when poisoned. */
static bool accounted(size_t n, size_t *nref)
{
	size_t i;

	*nref = 0;
	for (i = 0; i < n; i++) {
		if (m.refused[i] + m.stored[i] != 1 || m.refused[i] != m.poison[i])
			return false;
		*nref += m.refused[i];
	}
	return true;
}

static void test_poison(struct rows *t, size_t n, size_t npoison)
{
	struct rows_stats st = { 0 };
	size_t i, nref = 0, bound = 1;
	bool loaded;

	reset();
	for (i = 0; i < npoison; i++)
		m.poison[rnd() % n] = 1;
	fill(t, n);
	loaded = rows_load(t, store, refused, NULL, &st) && accounted(n, &nref);
	/* 1 + 2 per level per refused row: 2 * 17 + 1 for 100,000 rows */
	for (i = n; i > 1; i = (i + 1) / 2)
		bound += 2 * npoison;
	ok(loaded && st.refused == nref && st.inserts <= bound,
	   "%zu rows, %zu poisoned: %zu refused alone, the rest stored once, in %llu requests (bound %zu)",
	   n, npoison, nref, (unsigned long long)st.inserts, bound);
}

int main(void)
{
	static struct rows t = { .table = "records", .cols = "line, x" };
	struct rows_stats st = { 0 };
	size_t i, nref = 0;
	unsigned int level;
	bool loaded;

	test_poison(&t, 1, 0);
	test_poison(&t, 1, 1);
	test_poison(&t, 2, 1);
	test_poison(&t, 1000, 1);
	test_poison(&t, 1000, 7);
	test_poison(&t, 100000, 1);
	test_poison(&t, 100000, 3);

	reset();
	for (i = 0; i < 1000; i++)
		m.poison[i] = 1;
	fill(&t, 1000);
	loaded = rows_load(&t, store, refused, NULL, &st);
	ok(!loaded && st.inserts == 1999,
	   "every row of 1000 refused alone: the store's failure, the load held (2n - 1 = %llu requests)",
	   (unsigned long long)st.inserts);

	/* a replay spanning 300 months in time order, 100 a request at most */
	reset();
	m.max_parts = 100;
	for (i = 0; i < 100000; i++)
		m.part[i] = (unsigned int)(i * 300 / 100000);
	fill(&t, 100000);
	memset(&st, 0, sizeof(st));
	loaded = rows_load(&t, store, refused, NULL, &st) && accounted(100000, &nref);
	ok(loaded && nref == 0 && st.split >= 1,
	   "100,000 rows over 300 partitions, 100 an insert: all stored, none refused, %llu requests",
	   (unsigned long long)st.inserts);

	/* failing as a whole at every depth of a split: nothing blamed on rows */
	for (level = 0; level < 6; level++) {
		reset();
		m.poison[500] = 1;
		m.fail_after = (int)level;
		fill(&t, 1000);
		memset(&st, 0, sizeof(st));
		loaded = rows_load(&t, store, refused, NULL, &st);
		for (i = 0, nref = 0; i < 1000; i++)
			nref += m.refused[i];
		ok(!loaded && nref == 0 && st.refused == 0,
		   "the store fails as a whole after %u requests: the load is held, no row refused",
		   level);
	}

	/* rows_text and rows_truncate */
	fill(&t, 3);
	{
		const char *p;
		size_t len = rows_text(&t, 1, &p);
		bool text = len == 7 && !memcmp(p, "row 1\tx", 7);

		rows_truncate(&t, 1);
		ok(text && t.n == 1 &&
		   t.b.len == strlen("row 0\tx\n") && !strcmp(t.b.p, "row 0\tx\n"),
		   "a row's text has no newline; truncating keeps the first rows whole");
	}
	rows_free(&t);
	return done_testing();
}
