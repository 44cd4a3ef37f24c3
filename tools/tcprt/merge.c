// SPDX-License-Identifier: GPL-2.0
/* Bounded reordering of records into start-time order: a binary min-heap. */
#include "merge.h"

#include <stdlib.h>

#include "util.h"

struct merge_item {
	uint64_t key;		/* start time, us */
	uint64_t seq;
	struct record r;
};

static bool before(const struct merge_item *a, const struct merge_item *b)
{
	return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static void swap(struct merge_item *a, struct merge_item *b)
{
	struct merge_item t = *a;

	*a = *b;
	*b = t;
}

static void sift_up(struct merge *m, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!before(&m->heap[i], &m->heap[parent]))
			break;
		swap(&m->heap[i], &m->heap[parent]);
		i = parent;
	}
}

static void sift_down(struct merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = i;

		if (l < m->n && before(&m->heap[l], &m->heap[min]))
			min = l;
		if (r < m->n && before(&m->heap[r], &m->heap[min]))
			min = r;
		if (min == i)
			break;
		swap(&m->heap[i], &m->heap[min]);
		i = min;
	}
}

static void release_top(struct merge *m)
{
	struct merge_item top = m->heap[0];

	m->heap[0] = m->heap[--m->n];
	sift_down(m, 0);
	m->last_out = top.key;
	m->out(&top.r, m->ctx);
}

static void release(struct merge *m)
{
	while (m->n && m->heap[0].key + m->window_us <= m->watermark)
		release_top(m);
}

void merge_init(struct merge *m, uint64_t window_us, size_t max,
		record_fn out, void *ctx)
{
	*m = (struct merge){
		.window_us = window_us,
		.max = max ? max : 1,
		.out = out,
		.ctx = ctx,
	};
}

void merge_push(const struct record *r, void *merge)
{
	struct merge *m = merge;
	uint64_t key = rec_time_us(r);

	if (key < m->last_out) {
		/* its place in the order has been passed already */
		m->late++;
		m->late_e += r->type == REC_E;
		m->out(r, m->ctx);
		return;
	}
	if (m->n == m->max) {
		m->forced++;
		release_top(m);
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 1024;
		if (m->cap > m->max)
			m->cap = m->max;
		m->heap = xrealloc(m->heap, m->cap, sizeof(*m->heap));
	}
	m->heap[m->n] = (struct merge_item){ .key = key, .seq = m->seq++, .r = *r };
	sift_up(m, m->n++);
	if (key > m->watermark)
		m->watermark = key;
	release(m);
}

void merge_advance(struct merge *m, uint64_t now_us)
{
	if (now_us > m->watermark)
		m->watermark = now_us;
	release(m);
}

void merge_flush(struct merge *m)
{
	while (m->n)
		release_top(m);
}

void merge_free(struct merge *m)
{
	free(m->heap);
	m->heap = NULL;
	m->n = m->cap = 0;
}
