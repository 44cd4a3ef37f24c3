// SPDX-License-Identifier: GPL-2.0
/*
 * split.c: the bands of the percentiles (against sums computed here from
 * the values), merging, and the largest remainder rounding (the parts add
 * up to the total, each within one unit of its exact share); a split fed
 * per bucket, as tcprt fleet summary feeds it from ClickHouse, against
 * one fed the same tasks one by one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "split.h"
#include "tap.h"

static void test_round(void)
{
	uint64_t out[4], w[4];
	unsigned int k, i, bad = 0;

	/* shares 1502.67, 250.28, 49.04: floors 1801, the unit left to the first */
	split_round(1802, (const uint64_t[]){ 1501, 250, 49 }, 3, out);
	ok(out[0] == 1503 && out[1] == 250 && out[2] == 49,
	   "1802 by 1501:250:49 = 1503 + 250 + 49 (largest remainders)");
	split_round(10, (const uint64_t[]){ 1, 1, 1 }, 3, out);
	ok(out[0] == 4 && out[1] == 3 && out[2] == 3, "10 in thirds: 4 3 3, the lower index first");
	split_round(0, (const uint64_t[]){ 0, 0, 0 }, 3, out);
	ok(!out[0] && !out[1] && !out[2], "nothing to split: all 0");
	split_round(7, (const uint64_t[]){ 0, 5, 0, 0 }, 4, out);
	ok(out[1] == 7 && !out[0] && !out[2] && !out[3], "one part holds it all");
	split_round(100000, (const uint64_t[]){ UINT64_MAX / 2, UINT64_MAX / 4, UINT64_MAX / 4 },
		    3, out);
	ok(out[0] == 50000 && out[1] == 25000 && out[2] == 25000,
	   "weights near 2^64: no overflow, the shares kept");
	for (k = 0; k < 20000; k++) {
		uint64_t total = rnd() % 2000000, sum = 0, all = 0;
		unsigned int n = 2 + (unsigned int)(rnd() % 3);

		for (i = 0; i < n; i++)
			all += w[i] = rnd() % (k % 2 ? 1000 : 4000000000ULL);
		if (!all)
			total = 0;
		split_round(total, w, n, out);
		for (i = 0; i < n; i++) {
			/* within one unit of total * w / all */
			double exact = all ? (double)total * (double)w[i] / (double)all : 0;

			sum += out[i];
			if ((double)out[i] < exact - 1 || (double)out[i] > exact + 1)
				bad++;
		}
		bad += sum != total;
	}
	ok(!bad, "20000 random splits: each adds up, each part within a unit of its share");
}

/* Sums of the parts of the values in [lo, hi] (hi inclusive). */
static void model_band(const uint64_t (*t)[3], unsigned int n, uint64_t lo,
		       uint64_t hi, uint64_t *sum)
{
	unsigned int i;

	sum[0] = sum[1] = 0;
	for (i = 0; i < n; i++)
		if (t[i][0] >= lo && t[i][0] <= hi) {
			sum[0] += t[i][1];
			sum[1] += t[i][2];
		}
}

static void test_band(void)
{
	/* total, part a, part b; totals below 128 are exact buckets */
	static uint64_t t[100][3];
	struct split s, m;
	uint64_t sum[SPLIT_MAX_PARTS], want[2];
	unsigned int i;

	split_init(&s, 2);
	for (i = 0; i < 100; i++) {
		t[i][0] = i + 1;		/* 1..100 */
		t[i][1] = i;
		t[i][2] = 1;
		split_add(&s, t[i][0], t[i] + 1);
	}
	ok(hist_quantile(&s.total, 500) == 50 && hist_quantile(&s.total, 900) == 90 &&
	   hist_quantile(&s.total, 990) == 99, "p50 50, p90 90, p99 99");
	split_band(&s, 500, 900, sum);
	model_band((const uint64_t (*)[3])t, 100, 50, 89, want);
	ok(sum[0] == want[0] && sum[1] == want[1] && sum[1] == 40,
	   "p50 band: the 40 tasks of [50, 90)");
	split_band(&s, 990, 1000, sum);
	model_band((const uint64_t (*)[3])t, 100, 99, 100, want);
	ok(sum[0] == want[0] && sum[1] == 2, "p99 band: [99, max], max included");
	split_band(&s, 1000, 1000, sum);
	ok(sum[0] == 99 && sum[1] == 1, "max: its bucket");

	/* two percentiles in one bucket: the band is that bucket */
	split_init(&m, 2);
	for (i = 0; i < 10; i++)
		split_add(&m, 7, (const uint64_t[]){ 3, 4 });
	split_add(&m, 1000000, (const uint64_t[]){ 1, 999999 });
	split_band(&m, 500, 900, sum);
	ok(sum[0] == 30 && sum[1] == 40, "p50 and p90 in one bucket: the p50 band is the bucket");
	split_band(&m, 990, 1000, sum);
	ok(sum[0] == 1 && sum[1] == 999999, "the p99 band: the max's bucket");

	split_merge(&m, &s);
	ok(m.total.n == 111, "merged: 111 tasks");
	split_band(&m, 500, 900, sum);
	/* 111 tasks: 1..6, eleven 7s, 8..100, 1000000: rank 56 is 46, rank 100 is 90 */
	ok(hist_quantile(&m.total, 500) == 46 && hist_quantile(&m.total, 900) == 90,
	   "merged: p50 46, p90 90");
	model_band((const uint64_t (*)[3])t, 100, 46, 89, want);
	ok(sum[0] == want[0] && sum[1] == want[1], "merged: the p50 band's sums");
	split_reset(&m);
	split_reset(&s);
	ok(!m.total.n && !m.sum[0] && m.nparts == 2, "reset: empty, its parts kept");
}

/*
 * The bucket of @v as tcprt fleet summary has ClickHouse compute it
 * (cmd_fleet.c's bucket_sql()): v below 128; above, e = floor(log2 (v | 1))
 * of v | 1 as a Float64 (which rounds it to 53 bits), corrected by one
 * when v >> (e - 6) is not in [64, 128).  Written from that SQL, not from
 * hist_index().
 */
static unsigned int sql_bucket(uint64_t v)
{
	int e;

	if (v < 128)
		return (unsigned int)v;
	e = (int)floor(log2((double)(v | 1)));
	if (v >> (e - 6) >= 128)
		e++;
	else if (v >> (e - 6) < 64)
		e--;
	return (unsigned int)((e - 6) * 64 + (int)(v >> (e - 6)));
}

/* What ClickHouse answers per bucket: count(), min(v), max(v), sum(part). */
struct row {
	unsigned int idx;
	uint64_t n, min, max, sum[3];
};

#define NTASKS	30000
#define NROWS	4000

/* Add task @t (total, three parts) to the rows, by its SQL bucket. */
static void row_add(struct row *rows, unsigned int *nrows, const uint64_t *t)
{
	unsigned int idx = sql_bucket(t[0]), i, k;

	for (i = 0; i < *nrows && rows[i].idx != idx; i++)
		;
	if (i == *nrows) {
		rows[i] = (struct row){ .idx = idx, .min = t[0], .max = t[0] };
		++*nrows;
	}
	rows[i].n++;
	if (t[0] < rows[i].min)
		rows[i].min = t[0];
	if (t[0] > rows[i].max)
		rows[i].max = t[0];
	for (k = 0; k < 3; k++)
		rows[i].sum[k] += t[k + 1];
}

/* The same tasks, one by one and per bucket: the same split. */
static void test_buckets(void)
{
	static const unsigned int q[] = { 1, 100, 500, 900, 990, 999, 1000 };
	static uint64_t t[NTASKS][4];
	static struct row rows[NROWS];
	struct split one, per;
	uint64_t a[SPLIT_MAX_PARTS], b[SPLIT_MAX_PARTS];
	unsigned int i, k, nrows = 0, bad = 0, badidx = 0, rounded = 0;

	split_init(&one, 3);
	split_init(&per, 3);
	for (i = 0; i < NTASKS; i++) {
		/* totals over every power of two, 0 and the edges of the buckets
		 * where a Float64 rounds (2^k - 1 for k > 53) included */
		unsigned int sh = (unsigned int)(rnd() % 64);

		t[i][0] = i % 7 == 0 ? (1ULL << sh) - (i % 3) : rnd() >> sh;
		if (i % 11 == 0)
			t[i][0] = i % 2 ? UINT64_MAX : 0;
		t[i][1] = t[i][0] / 3;
		t[i][2] = t[i][0] / 5;
		t[i][3] = t[i][0] - t[i][1] - t[i][2];
		badidx += sql_bucket(t[i][0]) != hist_index(t[i][0]);
		rounded += t[i][0] >= 128 &&
			   (int)floor(log2((double)(t[i][0] | 1))) != 63 - __builtin_clzll(t[i][0]);
		split_add(&one, t[i][0], t[i] + 1);
		row_add(rows, &nrows, t[i]);
	}
	ok(!badidx && rounded, "the bucket fleet summary's SQL computes is hist_index(), for %u totals from 0 to 2^64 - 1 (%u where log2 is off by one)",
	   NTASKS, rounded);
	/* ClickHouse's rows come in any order */
	for (i = nrows; i-- > 0;)
		split_add_bucket(&per, rows[i].idx, rows[i].n, rows[i].min,
				 rows[i].max, rows[i].sum);
	diag("%u tasks in %u buckets", NTASKS, nrows);
	ok(per.total.n == one.total.n && per.total.min == one.total.min &&
	   per.total.max == one.total.max, "per bucket: as many tasks, the same min and max");
	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		bad += hist_quantile(&per.total, q[i]) != hist_quantile(&one.total, q[i]);
		for (k = i + 1; k < sizeof(q) / sizeof(q[0]); k++) {
			split_band(&one, q[i], q[k], a);
			split_band(&per, q[i], q[k], b);
			bad += memcmp(a, b, sizeof(a)) != 0;
		}
	}
	ok(!bad, "per bucket: every percentile and every band's sums as one by one");
	for (i = 0; i < HIST_CHUNKS; i++) {
		if (!one.sum[i] != !per.sum[i] || !one.total.chunk[i] != !per.total.chunk[i])
			bad++;
		else if (one.sum[i] && (memcmp(one.sum[i], per.sum[i], HIST_SUB * 3 * sizeof(uint64_t)) ||
					memcmp(one.total.chunk[i], per.total.chunk[i], HIST_SUB * sizeof(uint64_t))))
			bad++;
	}
	ok(!bad, "per bucket: every bucket's count and sums as one by one");
	split_add_bucket(&per, HIST_BUCKETS, 5, 1, 1, rows[0].sum);
	split_add_bucket(&per, 3, 0, 3, 3, rows[0].sum);
	ok(per.total.n == one.total.n, "a bucket past the last, or of no task: nothing added");
	split_reset(&one);
	split_reset(&per);
}

int main(void)
{
	test_round();
	test_band();
	test_buckets();
	return done_testing();
}
