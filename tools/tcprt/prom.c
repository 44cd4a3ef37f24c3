// SPDX-License-Identifier: GPL-2.0
/* Prometheus histograms on Renard-series bounds: see prom.h. */
#include "prom.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Renard series, mantissas x 100 (ISO 3). */
static const unsigned int r5[] = { 100, 160, 250, 400, 630 };
static const unsigned int r10[] = { 100, 125, 160, 200, 250, 315, 400, 500,
				    630, 800 };
static const unsigned int r20[] = { 100, 112, 125, 140, 160, 180, 200, 224,
				    250, 280, 315, 355, 400, 450, 500, 560,
				    630, 710, 800, 900 };

#define DECADES	7	/* 10 us .. 100 s */

static struct prom_buckets layouts[3];

static void build(struct prom_buckets *b, const char *name,
		  const unsigned int *mant, unsigned int n, unsigned int err)
{
	uint64_t scale = 1;	/* mantissa 100 x scale tenths of us: 10 us */
	unsigned int d, i;

	b->name = name;
	b->n = 0;
	b->error_pct = err;
	for (d = 0; d < DECADES; d++, scale *= 10)
		for (i = 0; i < n; i++)
			b->bound[b->n++] = mant[i] * scale;
	b->bound[b->n++] = 100 * scale;	/* 100 s */
}

const struct prom_buckets *prom_buckets_of(const char *name)
{
	if (!layouts[0].n) {
		build(&layouts[0], "r5", r5, 5, 60);
		build(&layouts[1], "r10", r10, 10, 28);
		build(&layouts[2], "r20", r20, 20, 13);
	}
	for (unsigned int i = 0; i < 3; i++)
		if (!strcmp(name, layouts[i].name))
			return &layouts[i];
	return NULL;
}

void prom_hist_add(struct prom_hist *h, const struct prom_buckets *b,
		   uint64_t v_us)
{
	uint64_t v = v_us * 10;		/* tenths */
	unsigned int lo = 0, hi = b->n;	/* first bound >= v, or n (+Inf) */

	if (!h->bucket)
		h->bucket = xcalloc(b->n + 1, sizeof(*h->bucket));
	if (v_us > UINT64_MAX / 10)
		lo = b->n;
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (b->bound[mid] >= v)
			hi = mid;
		else
			lo = mid + 1;
	}
	h->bucket[lo]++;
	h->count++;
	h->sum_us += v_us;
}

void prom_hist_free(struct prom_hist *h)
{
	free(h->bucket);
	h->bucket = NULL;
}

void prom_fmt_le(char *buf, size_t len, uint64_t tenths_us)
{
	uint64_t whole = tenths_us / 10000000, frac = tenths_us % 10000000;
	int digits = 7;

	if (!frac) {
		snprintf(buf, len, "%llu", (unsigned long long)whole);
		return;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	snprintf(buf, len, "%llu.%0*llu", (unsigned long long)whole, digits,
		 (unsigned long long)frac);
}

void prom_hist_write(FILE *out, const char *name, const char *labels,
		     const struct prom_hist *h, const struct prom_buckets *b)
{
	uint64_t cum = 0;
	unsigned int i;
	char le[32];

	for (i = 0; i < b->n; i++) {
		cum += h->bucket ? h->bucket[i] : 0;
		prom_fmt_le(le, sizeof(le), b->bound[i]);
		fprintf(out, "%s_bucket{%s,le=\"%s\"} %llu\n", name, labels, le,
			(unsigned long long)cum);
	}
	fprintf(out, "%s_bucket{%s,le=\"+Inf\"} %llu\n", name, labels,
		(unsigned long long)h->count);
	fprintf(out, "%s_sum{%s} %llu.%06llu\n", name, labels,
		(unsigned long long)(h->sum_us / USEC_PER_SEC),
		(unsigned long long)(h->sum_us % USEC_PER_SEC));
	fprintf(out, "%s_count{%s} %llu\n", name, labels,
		(unsigned long long)h->count);
}
