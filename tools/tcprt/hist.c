// SPDX-License-Identifier: GPL-2.0
/* Log-linear histogram: see hist.h for the layout and the error bound. */
#include "hist.h"

#include <stdlib.h>

#include "util.h"

unsigned int hist_index(uint64_t v)
{
	unsigned int e, shift;

	if (v < 2 * HIST_SUB)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v);	/* 2^e <= v < 2^(e+1) */
	shift = e - HIST_SUB_BITS;
	/* v >> shift is in [HIST_SUB, 2 * HIST_SUB) */
	return shift * HIST_SUB + (unsigned int)(v >> shift);
}

uint64_t hist_bucket_width(unsigned int idx)
{
	if (idx < 2 * HIST_SUB)
		return 1;
	return 1ULL << (idx / HIST_SUB - 1);
}

uint64_t hist_bucket_lo(unsigned int idx)
{
	unsigned int shift;

	if (idx < 2 * HIST_SUB)
		return idx;
	shift = idx / HIST_SUB - 1;
	return (uint64_t)(idx - shift * HIST_SUB) << shift;
}

void hist_add(struct hist *h, uint64_t v)
{
	unsigned int i = hist_index(v);
	uint64_t **c = &h->chunk[i / HIST_SUB];

	if (!*c)
		*c = xcalloc(HIST_SUB, sizeof(**c));
	(*c)[i % HIST_SUB]++;
	if (!h->n || v < h->min)
		h->min = v;
	if (!h->n || v > h->max)
		h->max = v;
	h->n++;
	h->sum += v;
}

void hist_add_bucket(struct hist *h, unsigned int idx, uint64_t count,
		     uint64_t min, uint64_t max)
{
	uint64_t **c;

	if (!count || idx >= HIST_BUCKETS)
		return;
	c = &h->chunk[idx / HIST_SUB];
	if (!*c)
		*c = xcalloc(HIST_SUB, sizeof(**c));
	(*c)[idx % HIST_SUB] += count;
	if (!h->n || min < h->min)
		h->min = min;
	if (!h->n || max > h->max)
		h->max = max;
	h->n += count;
}

void hist_remove_bucket(struct hist *h, unsigned int idx, uint64_t count)
{
	h->chunk[idx / HIST_SUB][idx % HIST_SUB] -= count;
	h->n -= count;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	unsigned int c, i;

	if (!src->n)
		return;
	for (c = 0; c < HIST_CHUNKS; c++) {
		if (!src->chunk[c])
			continue;
		if (!dst->chunk[c])
			dst->chunk[c] = xcalloc(HIST_SUB, sizeof(uint64_t));
		for (i = 0; i < HIST_SUB; i++)
			dst->chunk[c][i] += src->chunk[c][i];
	}
	if (!dst->n || src->min < dst->min)
		dst->min = src->min;
	if (!dst->n || src->max > dst->max)
		dst->max = src->max;
	dst->n += src->n;
	dst->sum += src->sum;
}

uint64_t hist_quantile(const struct hist *h, unsigned int permille)
{
	uint64_t rank, seen = 0, mid;
	unsigned int c, i;

	if (!h->n)
		return 0;
	if (permille >= 1000)
		return h->max;
	/* ceil(n * permille / 1000), at least 1; n * 1000 fits for n < 2^54 */
	rank = (h->n * permille + 999) / 1000;
	if (rank == 0)
		rank = 1;
	for (c = 0; c < HIST_CHUNKS; c++) {
		if (!h->chunk[c])
			continue;
		for (i = 0; i < HIST_SUB; i++) {
			unsigned int idx = c * HIST_SUB + i;

			seen += h->chunk[c][i];
			if (seen < rank)
				continue;
			mid = hist_bucket_lo(idx) + hist_bucket_width(idx) / 2;
			if (mid < h->min)
				mid = h->min;
			if (mid > h->max)
				mid = h->max;
			return mid;
		}
	}
	return h->max;	/* not reached: the counts add up to n */
}

void hist_reset(struct hist *h)
{
	unsigned int c;

	for (c = 0; c < HIST_CHUNKS; c++)
		free(h->chunk[c]);
	*h = (struct hist){ 0 };
}
