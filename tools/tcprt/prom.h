/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus histograms with fixed, human-readable bucket bounds: the
 * Renard series of preferred numbers (R5, R10, R20) per decade, from 10 us
 * to 100 s.  histogram_quantile() interpolates inside the bucket that holds
 * the value of the requested rank, so its answer is less than one bucket
 * width away from the exact value: relative error < ratio - 1 between
 * neighbouring bounds, i.e. < 60 % (R5), 28 % (R10, the default), 12.7 %
 * (R20), for values between 10 us and 100 s.
 */
#ifndef TCPRT_PROM_H
#define TCPRT_PROM_H

#include <stdint.h>
#include <stdio.h>

struct prom_buckets {
	const char *name;		/* "r10" */
	unsigned int n;			/* finite bounds */
	uint64_t bound[160];		/* in tenths of a microsecond, ascending */
	unsigned int error_pct;		/* the bound on the relative error */
};

/* The bucket layout named @name ("r5", "r10", "r20"), or NULL. */
const struct prom_buckets *prom_buckets_of(const char *name);

/* A histogram of values in microseconds, exported in seconds. */
struct prom_hist {
	uint64_t count, sum_us;
	uint64_t *bucket;		/* n + 1 counts (the last: +Inf), not cumulative */
};

void prom_hist_add(struct prom_hist *h, const struct prom_buckets *b,
		   uint64_t v_us);
void prom_hist_free(struct prom_hist *h);

/* Write @h as NAME_bucket{LABELS,le="..."} ..., NAME_sum, NAME_count. */
void prom_hist_write(FILE *out, const char *name, const char *labels,
		     const struct prom_hist *h, const struct prom_buckets *b);

/* A bound in tenths of a microsecond as seconds, e.g. "0.0000125". */
void prom_fmt_le(char *buf, size_t len, uint64_t tenths_us);

#endif
