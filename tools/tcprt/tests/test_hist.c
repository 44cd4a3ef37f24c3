// SPDX-License-Identifier: GPL-2.0
/*
 * Histogram tests: the bucket layout, and percentiles against the exact
 * values computed by sorting the same data - within the documented bound,
 * |estimate - exact| <= exact / 128 - on several distributions and sizes;
 * merging equals adding everything to one histogram.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "tap.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The exact value of rank ceil(n * permille / 1000) of sorted data. */
static uint64_t exact(const uint64_t *sorted, size_t n, unsigned int permille)
{
	uint64_t rank = ((uint64_t)n * permille + 999) / 1000;

	return sorted[rank ? rank - 1 : 0];
}

static bool within(uint64_t est, uint64_t ex)
{
	uint64_t d = est > ex ? est - ex : ex - est;

	return d <= ex / 128;	/* i.e. 128 d <= ex, without overflow */
}

static void test_layout(void)
{
	unsigned int i, bad = 0;
	uint64_t v;

	for (i = 0; i < 200000; i++) {
		unsigned int idx, shift = (unsigned int)(rnd() % 64);

		v = rnd() >> shift;
		idx = hist_index(v);
		if (idx >= HIST_BUCKETS || v < hist_bucket_lo(idx) ||
		    v - hist_bucket_lo(idx) >= hist_bucket_width(idx) ||
		    (v >= 128 && hist_bucket_width(idx) * 64 > hist_bucket_lo(idx)))
			bad++;
	}
	ok(bad == 0, "layout: every value is in its bucket, width <= lo / 64 above 127");
	for (i = 1, bad = 0; i < HIST_BUCKETS; i++)
		if (hist_bucket_lo(i) != hist_bucket_lo(i - 1) + hist_bucket_width(i - 1))
			bad++;
	ok(bad == 0, "layout: the %u buckets are contiguous", HIST_BUCKETS);
	ok(hist_index(UINT64_MAX) == HIST_BUCKETS - 1 && hist_index(0) == 0 &&
	   hist_index(127) == 127 && hist_index(128) == 128,
	   "layout: 0, 127, 128 and 2^64-1");
}

enum dist { UNIFORM, LOGUNIFORM, CONSTANT, SMALL, BIMODAL, PARETO, HUGE, NDIST };

static const char *const dist_name[NDIST] = {
	"uniform 0..1e6", "log-uniform 1..2^40", "constant 237115",
	"small 0..127", "bimodal 300/200000", "heavy tail", "near 2^63",
};

static uint64_t draw(enum dist d)
{
	switch (d) {
	case UNIFORM: return rnd() % 1000001;
	case LOGUNIFORM: {
		unsigned int e = (unsigned int)(rnd() % 40);

		return (1ULL << e) + rnd() % (1ULL << e);
	}
	case CONSTANT: return 237115;
	case SMALL: return rnd() % 128;
	case BIMODAL: return rnd() % 100 < 95 ? 300 + rnd() % 50 : 200000 + rnd() % 5000;
	case PARETO: return 1000000000ULL / (1 + rnd() % 1000000);
	default: return (1ULL << 63) + rnd() % (1ULL << 62);
	}
}

static void test_quantiles(void)
{
	static const size_t sizes[] = { 1, 2, 10, 100, 1000, 100000 };
	static const unsigned int pm[] = { 1, 100, 500, 900, 990, 999, 1000 };
	unsigned int d, s, q;

	for (d = 0; d < NDIST; d++) {
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			size_t n = sizes[s], i;
			uint64_t *v = malloc(n * sizeof(*v));
			struct hist h = { 0 };
			unsigned int bad = 0;
			double worst = 0;

			for (i = 0; i < n; i++) {
				v[i] = draw((enum dist)d);
				hist_add(&h, v[i]);
			}
			qsort(v, n, sizeof(*v), cmp_u64);
			for (q = 0; q < sizeof(pm) / sizeof(pm[0]); q++) {
				uint64_t est = hist_quantile(&h, pm[q]);
				uint64_t ex = exact(v, n, pm[q]);
				double err = ex ? ((double)est - (double)ex) / (double)ex : 0;

				if (err < 0)
					err = -err;
				if (err > worst)
					worst = err;
				if (!within(est, ex)) {
					bad++;
					diag("%s n=%zu p%u: %llu, exact %llu", dist_name[d],
					     n, pm[q], (unsigned long long)est,
					     (unsigned long long)ex);
				}
			}
			ok(bad == 0 && h.n == n && h.min == v[0] && h.max == v[n - 1],
			   "%s, n=%zu: p0.1..p100 within 1/128 of exact (worst %.4f %%)",
			   dist_name[d], n, worst * 100);
			hist_reset(&h);
			free(v);
		}
	}
}

static void test_merge(void)
{
	struct hist all = { 0 }, part[4] = { { 0 } }, merged = { 0 };
	static const unsigned int pm[] = { 500, 900, 990, 999, 1000 };
	unsigned int i, q, same = 1, chunks = 0, touched = 0;
	bool used[HIST_CHUNKS] = { false };

	for (i = 0; i < 50000; i++) {
		uint64_t v = draw((enum dist)(i % NDIST));

		used[hist_index(v) / HIST_SUB] = true;
		hist_add(&all, v);
		hist_add(&part[rnd() % 4], v);
	}
	for (i = 0; i < 4; i++)
		hist_merge(&merged, &part[i]);
	for (q = 0; q < sizeof(pm) / sizeof(pm[0]); q++)
		same &= hist_quantile(&all, pm[q]) == hist_quantile(&merged, pm[q]);
	ok(same && merged.n == all.n && merged.sum == all.sum &&
	   merged.min == all.min && merged.max == all.max,
	   "merge of 4 histograms = one histogram of everything");
	/* chunks are allocated on first use: exactly those the values touch */
	for (i = 0; i < HIST_CHUNKS; i++) {
		chunks += all.chunk[i] != NULL;
		touched += used[i];
	}
	ok(chunks == touched && touched < HIST_CHUNKS,
	   "memory: %u of %u chunks of %u counters allocated, the %u the values touch",
	   chunks, HIST_CHUNKS, HIST_SUB, touched);
	hist_reset(&all);
	hist_reset(&merged);
	for (i = 0; i < 4; i++)
		hist_reset(&part[i]);

	ok(hist_quantile(&all, 990) == 0, "empty histogram: 0");
}

int main(void)
{
	test_layout();
	test_quantiles();
	test_merge();
	return done_testing();
}
