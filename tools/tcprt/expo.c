// SPDX-License-Identifier: GPL-2.0
/* Exponential histograms with exact bucket indices: see expo.h. */
#include "expo.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/*
 * A non-negative integer of LIMBS 32-bit limbs, little-endian: enough
 * for us^(2^S) of a 64-bit us (1024 bits at scale 4) and for
 * 10^(6 * 2^S) * 2^i up to the bucket of 2^64 us (about 1030 bits), which
 * is why the scale is at most EXPO_MAX_SCALE.
 */
#define LIMBS	36

struct big {
	uint32_t l[LIMBS];
};

static void big_set(struct big *b, uint64_t v)
{
	memset(b, 0, sizeof(*b));
	b->l[0] = (uint32_t)v;
	b->l[1] = (uint32_t)(v >> 32);
}

/* b *= m; the limbs are sized so that it never overflows */
static void big_mul(struct big *b, const struct big *m)
{
	uint64_t acc[2 * LIMBS] = { 0 };
	unsigned int i, j;

	for (i = 0; i < LIMBS; i++) {
		uint64_t carry = 0;

		if (!b->l[i])
			continue;
		for (j = 0; i + j < 2 * LIMBS && j < LIMBS; j++) {
			uint64_t t = (uint64_t)b->l[i] * m->l[j] +
				     (uint32_t)acc[i + j] + carry;

			acc[i + j] = (uint32_t)t;
			carry = t >> 32;
		}
		if (i + j < 2 * LIMBS)
			acc[i + j] += carry;
	}
	for (i = 0; i < LIMBS; i++)
		b->l[i] = (uint32_t)acc[i];
}

static void big_shl(struct big *b, unsigned int bits)
{
	unsigned int words = bits / 32, s = bits % 32;
	int i;

	for (i = LIMBS - 1; i >= 0; i--) {
		uint64_t v = 0;
		int src = i - (int)words;

		if (src >= 0)
			v = (uint64_t)b->l[src] << s;
		if (src >= 1 && s)
			v |= b->l[src - 1] >> (32 - s);
		b->l[i] = (uint32_t)v;
	}
}

static int big_cmp(const struct big *a, const struct big *b)
{
	int i;

	for (i = LIMBS - 1; i >= 0; i--)
		if (a->l[i] != b->l[i])
			return a->l[i] < b->l[i] ? -1 : 1;
	return 0;
}

/* b = v^(2^k), by squaring k times */
static void big_pow2k(struct big *b, uint64_t v, int k)
{
	struct big t;

	big_set(b, v);
	while (k-- > 0) {
		t = *b;
		big_mul(b, &t);
	}
}

/*
 * The sign of us^(2^scale) - 2^i * 10^(6 * 2^scale): of v - base^i, v in
 * seconds.  A negative i moves its power of two to the left side.
 */
static int cmp_bound(uint64_t us, int scale, int32_t i)
{
	struct big v, p;

	big_pow2k(&v, us, scale);
	big_pow2k(&p, 1000000, scale);
	if (i >= 0)
		big_shl(&p, (unsigned int)i);
	else
		big_shl(&v, (unsigned int)-i);
	return big_cmp(&v, &p);
}

/*
 * log2(@us), within 0.09: the bit length, and the mantissa's fraction as
 * its own logarithm.  Only a first guess, corrected exactly below; tcprt
 * links no libm (the arm64 cross build's root has none to link).
 */
static double approx_log2(uint64_t us)
{
	int e = 63 - __builtin_clzll(us);

	return e + ((double)us / (double)(1ULL << e) - 1.0);
}

#define LOG2_1E6	19.931568569324174	/* log2(10^6): 1 s in us */

/*
 * The exact bucket of @us > 0 at @scale: from a guess, moved until
 * base^i < v <= base^(i+1) holds as integers.  Slow (thousands of
 * multiplications): the tables below call it, a value does not.
 */
static int32_t index_slow(uint64_t us, int scale)
{
	double l = (approx_log2(us) - LOG2_1E6) * (double)(1 << scale);
	int32_t i = (int32_t)l - 1;

	while (cmp_bound(us, scale, i) <= 0)	/* v <= base^i: lower */
		i--;
	while (cmp_bound(us, scale, i + 1) > 0)	/* v > base^(i+1): higher */
		i++;
	return i;
}

/* base = 2^(2^-scale), by square roots (Newton's), for the guesses */
static double base_of(int scale)
{
	double b = 2;
	int k, n;

	for (k = 0; k < scale; k++) {
		double x = b, a = b;

		for (n = 0; n < 64; n++)
			x = (x + a / x) / 2;
		b = x;
	}
	return b;
}

/* The largest u in [lo, hi] with u <= 10^6 * base^i (the caller knows one is). */
static uint64_t search_bound(int scale, int32_t i, uint64_t lo, uint64_t hi)
{
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2 + 1;

		if (cmp_bound(mid, scale, i) <= 0)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * The largest integer u <= 10^6 * base^i (a bound in microseconds), given
 * @prev, that of bucket i - 1: the first integer above it is where bucket
 * i begins.  Between prev and 2 prev + 2 (base <= 2); first searched near
 * prev * base.  UINT64_MAX when it is that much or more.
 */
static uint64_t floor_bound(int scale, int32_t i, uint64_t prev)
{
	double g = (double)prev * base_of(scale), slack = g / 1099511627776.0 + 4;
	uint64_t lo = prev, hi = prev > (UINT64_MAX - 2) / 2 ? UINT64_MAX : 2 * prev + 2;

	if (cmp_bound(hi, scale, i) <= 0)
		return hi;	/* only at UINT64_MAX */
	if (g + slack < 1.8e19) {
		uint64_t a = g - slack > (double)lo ? (uint64_t)(g - slack) : lo;
		uint64_t b = g + slack < (double)hi ? (uint64_t)(g + slack) : hi;

		if (cmp_bound(a, scale, i) <= 0 && cmp_bound(b, scale, i) > 0)
			return search_bound(scale, i, a, b);
	}
	return search_bound(scale, i, lo, hi);
}

/*
 * Per scale, the first microsecond value of every bucket from that of
 * 1 us up: first[k] is where bucket lo + k begins.  Built once, on first
 * use; a value's bucket is then a binary search.
 */
static struct expo_table {
	int32_t lo;
	uint32_t n;
	uint64_t *first;
} tables[EXPO_MAX_SCALE + 1];

static const struct expo_table *table_of(int scale)
{
	struct expo_table *t = &tables[scale];
	uint64_t f;
	size_t cap = 64;

	if (t->first)
		return t;
	t->lo = index_slow(1, scale);
	t->first = xcalloc(cap, sizeof(*t->first));
	t->first[t->n++] = 1;
	f = 0;		/* 10^6 * base^lo < 1 */
	for (;;) {
		f = floor_bound(scale, t->lo + (int32_t)t->n, f);
		if (f == UINT64_MAX)
			break;
		if (t->n == cap) {
			t->first = xrealloc(t->first, cap * 2, sizeof(*t->first));
			cap *= 2;
		}
		t->first[t->n++] = f + 1;
	}
	return t;
}

int32_t expo_index(uint64_t us, int scale)
{
	const struct expo_table *t = table_of(scale);
	uint32_t lo = 0, hi = t->n;	/* the last first[] <= us */

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->first[mid] <= us)
			lo = mid;
		else
			hi = mid;
	}
	return t->lo + (int32_t)lo;
}

int32_t expo_index_slow(uint64_t us, int scale)
{
	return index_slow(us, scale);
}

/* Make room for index @i in @h's dense array. */
static void expo_grow(struct expo_hist *h, int32_t i)
{
	int32_t lo = h->n ? (i < h->offset ? i : h->offset) : i;
	int32_t hi = h->n ? (i >= h->offset + (int32_t)h->n ? i : h->offset + (int32_t)h->n - 1) : i;
	uint32_t n = (uint32_t)(hi - lo + 1);
	uint64_t *b;

	if (h->n && lo == h->offset && n == h->n)
		return;
	b = xcalloc(n, sizeof(*b));
	if (h->n)
		memcpy(b + (h->offset - lo), h->bucket, h->n * sizeof(*b));
	free(h->bucket);
	h->bucket = b;
	h->offset = lo;
	h->n = n;
}

void expo_hist_add(struct expo_hist *h, uint64_t us)
{
	int32_t i;

	h->count++;
	h->sum_us += us;
	if (!us) {
		h->zero++;
		return;
	}
	i = expo_index(us, EXPO_SCALE);
	expo_grow(h, i);
	h->bucket[i - h->offset]++;
}

void expo_hist_free(struct expo_hist *h)
{
	free(h->bucket);
	h->bucket = NULL;
	h->n = 0;
}
