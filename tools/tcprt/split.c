// SPDX-License-Identifier: GPL-2.0
/* Where a total goes, at its percentiles: see split.h. */
#include "split.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void split_init(struct split *s, unsigned int nparts)
{
	memset(s, 0, sizeof(*s));
	s->nparts = nparts;
}

/* The sums of bucket @idx, allocated (zeroed) if new. */
static uint64_t *sums_of(struct split *s, unsigned int idx)
{
	uint64_t **c = &s->sum[idx / HIST_SUB];

	if (!*c)
		*c = xcalloc((size_t)HIST_SUB * s->nparts, sizeof(**c));
	return *c + (size_t)(idx % HIST_SUB) * s->nparts;
}

void split_add(struct split *s, uint64_t total, const uint64_t *part)
{
	uint64_t *sum = sums_of(s, hist_index(total));
	unsigned int i;

	hist_add(&s->total, total);
	for (i = 0; i < s->nparts; i++)
		sum[i] += part[i];
}

void split_add_bucket(struct split *s, unsigned int idx, uint64_t count,
		      uint64_t min, uint64_t max, const uint64_t *sum)
{
	uint64_t *b;
	unsigned int i;

	if (!count || idx >= HIST_BUCKETS)
		return;
	hist_add_bucket(&s->total, idx, count, min, max);
	b = sums_of(s, idx);
	for (i = 0; i < s->nparts; i++)
		b[i] += sum[i];
}

void split_merge(struct split *dst, const struct split *src)
{
	unsigned int c, i;

	hist_merge(&dst->total, &src->total);
	for (c = 0; c < HIST_CHUNKS; c++) {
		if (!src->sum[c])
			continue;
		for (i = 0; i < HIST_SUB * src->nparts; i++)
			sums_of(dst, c * HIST_SUB)[i] += src->sum[c][i];
	}
}

void split_reset(struct split *s)
{
	unsigned int c;

	hist_reset(&s->total);
	for (c = 0; c < HIST_CHUNKS; c++)
		free(s->sum[c]);
	split_init(s, s->nparts);
}

void split_band(const struct split *s, unsigned int permille,
		unsigned int next, uint64_t sum[SPLIT_MAX_PARTS])
{
	unsigned int from, to, idx, i;

	memset(sum, 0, SPLIT_MAX_PARTS * sizeof(*sum));
	if (!s->total.n)
		return;
	/* a quantile lies in the bucket of its rank (hist_quantile clamps
	 * to min and max, which are in the first and last buckets) */
	from = hist_index(hist_quantile(&s->total, permille));
	to = hist_index(hist_quantile(&s->total, next));
	if (next >= 1000 || to <= from)
		to++;	/* the max included; or the percentile's bucket alone */
	for (idx = from; idx < to; idx++) {
		const uint64_t *c = s->sum[idx / HIST_SUB];

		if (!c)
			continue;
		for (i = 0; i < s->nparts; i++)
			sum[i] += c[(size_t)(idx % HIST_SUB) * s->nparts + i];
	}
}

void split_round(uint64_t total, const uint64_t *weight, unsigned int n,
		 uint64_t *out)
{
	uint64_t w[SPLIT_MAX_PARTS], rem[SPLIT_MAX_PARTS], all = 0, given = 0;
	unsigned int i, j, shift = 0;

	for (i = 0; i < n; i++)
		all += weight[i];
	/* keep total * weight within 64 bits: the weights are shifted right
	 * until they are (and below 2^43: exact for a total below 2^21, as
	 * summary's are); what is lost is far below a unit */
	while (all >> shift >= 1ULL << 43 || (total && (all >> shift) > UINT64_MAX / total))
		shift++;
	all = 0;
	for (i = 0; i < n; i++) {
		w[i] = weight[i] >> shift;
		all += w[i];
	}
	for (i = 0; i < n; i++) {
		out[i] = all ? total * w[i] / all : 0;
		rem[i] = all ? total * w[i] % all : 0;
		given += out[i];
	}
	/* the units left, to the largest remainders: fewer than n of them */
	while (all && given < total) {
		for (j = 0, i = 1; i < n; i++)
			if (rem[i] > rem[j])
				j = i;
		out[j]++;
		rem[j] = 0;
		given++;
	}
}
