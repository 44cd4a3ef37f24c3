/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a total goes, at its percentiles: a histogram of totals (hist.h)
 * that also keeps, per bucket, the sums of the parts the total splits
 * into (a process time into rq_wait, app and sq_wait; a transfer into
 * rwnd_limited, sndbuf_limited, app_limited and sending).
 *
 * Percentiles of the parts do not add up to the percentile of the total.
 * What does: the tasks around the percentile - its band - and the share
 * of each part in their summed totals.  The band of a percentile reaches
 * to the next one reported: with p50, p90, p99, the p50 band holds the
 * tasks whose total is in [p50, p90), p90's [p90, p99), p99's [p99, max],
 * at the histogram's resolution (the edges are the buckets of the
 * percentiles); a band that would be empty (two percentiles in one bucket)
 * is the bucket of its percentile.  Memory: the histogram's, and
 * @nparts sums per bucket used, allocated 64 buckets at a time.
 */
#ifndef TCPRT_SPLIT_H
#define TCPRT_SPLIT_H

#include <stdint.h>

#include "hist.h"

#define SPLIT_MAX_PARTS	4

struct split {
	unsigned int nparts;
	struct hist total;
	uint64_t *sum[HIST_CHUNKS];	/* HIST_SUB x nparts sums each, or NULL */
};

void split_init(struct split *s, unsigned int nparts);
/* A task: its total and its parts (which add up to it: the caller checks). */
void split_add(struct split *s, uint64_t total, const uint64_t *part);
/*
 * @count tasks known only by the bucket @idx (hist_index) of their totals,
 * the smallest and largest of those totals, @min and @max, and the sums of
 * their parts, @sum: a split counted elsewhere (tcprt fleet summary's, by
 * ClickHouse).  The same as split_add() of each of those tasks.
 */
void split_add_bucket(struct split *s, unsigned int idx, uint64_t count,
		      uint64_t min, uint64_t max, const uint64_t *sum);
void split_merge(struct split *dst, const struct split *src);
void split_reset(struct split *s);

/*
 * The band of percentile @permille, reaching to percentile @next (1000:
 * to the max, included): the sum of each part over its tasks in @sum.
 * The percentile itself is hist_quantile(&s->total, permille).
 */
void split_band(const struct split *s, unsigned int permille,
		unsigned int next, uint64_t sum[SPLIT_MAX_PARTS]);

/*
 * @total cut in proportion to @weight (@n of them): @out adds up to
 * @total exactly.  Each gets the floor of its share, then the units left
 * go one each to the largest remainders (the lower index first among
 * equal ones): the largest remainder method.  Weights all 0: all 0 (and
 * @total must be 0).
 */
void split_round(uint64_t total, const uint64_t *weight, unsigned int n,
		 uint64_t *out);

#endif
