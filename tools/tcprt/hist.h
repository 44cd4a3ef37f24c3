/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A log-linear histogram of unsigned 64-bit values (microseconds here):
 * mergeable, bounded memory, quantiles within 1/128 (0.79 %) relative error.
 *
 * Values 0..127 each have a bucket of their own (exact).  Above, every power
 * of two [2^e, 2^(e+1)) is cut into 64 buckets of equal width 2^(e-6), so a
 * bucket's width is at most 1/64 of any value in it.  A quantile is reported
 * as the middle of the bucket holding the value of that rank (clamped to the
 * observed min and max), hence at most half a width - 1/128 of the value -
 * away from the exact value.  3776 buckets cover all of uint64; they are
 * allocated 64 at a time, when first used: a histogram of latencies that
 * span a few powers of two takes a few KiB.  Merging adds the counts.
 */
#ifndef TCPRT_HIST_H
#define TCPRT_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS	6
#define HIST_SUB	(1u << HIST_SUB_BITS)		/* buckets per power of two */
#define HIST_BUCKETS	((64 - HIST_SUB_BITS) * HIST_SUB + HIST_SUB)	/* 3776 */
#define HIST_CHUNKS	(HIST_BUCKETS / HIST_SUB)			/* 59 */

struct hist {
	uint64_t n, sum, min, max;
	uint64_t *chunk[HIST_CHUNKS];	/* HIST_SUB counts each, or NULL */
};

void hist_add(struct hist *h, uint64_t v);
void hist_merge(struct hist *dst, const struct hist *src);
/*
 * The value of rank ceil(n * permille / 1000) (nearest rank; permille 500:
 * median, 990: p99, 1000: max), within the error bound; 0 when empty.
 */
uint64_t hist_quantile(const struct hist *h, unsigned int permille);
void hist_reset(struct hist *h);
/*
 * Add @count values known only by their bucket @idx (hist_index), whose
 * smallest and largest are @min and @max: a histogram counted elsewhere
 * (tcprt fleet summary's, by ClickHouse).  sum is not kept.
 */
void hist_add_bucket(struct hist *h, unsigned int idx, uint64_t count,
		     uint64_t min, uint64_t max);

/*
 * Take back @count values of bucket @idx that hist_add() counted: a
 * sliding window's oldest part (window.c).  sum, min and max are the
 * caller's to keep.
 */
void hist_remove_bucket(struct hist *h, unsigned int idx, uint64_t count);

/* The bucket of a value and the values a bucket holds: [lo, lo + width). */
unsigned int hist_index(uint64_t v);
uint64_t hist_bucket_lo(unsigned int idx);
uint64_t hist_bucket_width(unsigned int idx);

#endif
