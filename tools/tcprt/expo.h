/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OpenTelemetry's exponential histogram of times kept in microseconds and
 * exported in seconds (tcprt export --otlp-exponential, docs/otlp.md).
 *
 * At scale S the bucket bounds are the powers of base = 2^(2^-S): bucket i
 * holds the values v with base^i < v <= base^(i+1), v in seconds.  The
 * index is computed exactly, not with log(): a value of us microseconds is
 * in bucket i iff 2^i * 10^(6 * 2^S) < us^(2^S) <= 2^(i+1) * 10^(6 * 2^S),
 * compared as integers - a floating-point logarithm puts values next to a
 * bound on the wrong side of it (1 s is base^0 exactly, and belongs to
 * bucket -1).  0 us goes to the zero bucket (zero_threshold 0).  Those
 * comparisons are made once per bucket, into a table of where each
 * bucket's microseconds begin; a value's index is a search in it.
 *
 * EXPO_SCALE 3: 8 buckets per power of two, neighbouring bounds 9.05 %
 * apart; 1 us .. 71 min (tcp_rt's 32-bit times) spans at most 256 buckets.
 * The counts are a dense array from the lowest index seen to the highest,
 * grown as values arrive.
 */
#ifndef TCPRT_EXPO_H
#define TCPRT_EXPO_H

#include <stdint.h>

#define EXPO_SCALE	3
#define EXPO_MAX_SCALE	4

struct expo_hist {
	uint64_t count, zero, sum_us;
	int32_t offset;		/* the index of bucket[0] */
	uint32_t n;		/* buckets held */
	uint64_t *bucket;	/* n counts, not cumulative */
};

/*
 * The bucket index of @us microseconds (> 0) at scale @scale (0 ..
 * EXPO_MAX_SCALE): a binary search in a table of the buckets' first
 * values, built exactly on first use of the scale.  expo_index_slow()
 * computes the same from the definition, for each value (the tests).
 */
int32_t expo_index(uint64_t us, int scale);
int32_t expo_index_slow(uint64_t us, int scale);

void expo_hist_add(struct expo_hist *h, uint64_t us);
void expo_hist_free(struct expo_hist *h);

#endif
