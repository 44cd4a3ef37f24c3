// SPDX-License-Identifier: GPL-2.0
/* Series table: a sorted array, binary search, values on the heap. */
#include "series.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static int cmp(uint16_t port, enum role role, enum rec_type type,
	       const struct series *s)
{
	if (port != s->port)
		return port < s->port ? -1 : 1;
	if (role != s->role)
		return role < s->role ? -1 : 1;
	if (type != s->type)
		return type < s->type ? -1 : 1;
	return 0;
}

/* Index of the series, or where it would go (*found false). */
static size_t lookup(const struct series_table *t, uint16_t port,
		     enum role role, enum rec_type type, int *found)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp(port, role, type, &t->s[mid]);

		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*found = 0;
	return lo;
}

static int has_port(const struct series_table *t, uint16_t port)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->s[i].port == port)
			return 1;
	return 0;
}

void series_init(struct series_table *t, size_t val_size,
		 unsigned int max_ports)
{
	*t = (struct series_table){ .val_size = val_size, .max_ports = max_ports };
}

void *series_get(struct series_table *t, uint16_t port, enum role role,
		 enum rec_type type)
{
	size_t i;
	int found;

	i = lookup(t, port, role, type, &found);
	if (found)
		return t->s[i].val;
	if (port != SERIES_OTHER && !has_port(t, port)) {
		if (t->nports >= t->max_ports)
			return series_get(t, SERIES_OTHER, role, type);
		t->nports++;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->s = xrealloc(t->s, t->cap, sizeof(*t->s));
	}
	memmove(&t->s[i + 1], &t->s[i], (t->n - i) * sizeof(*t->s));
	t->s[i] = (struct series){ port, role, type, xcalloc(1, t->val_size) };
	t->n++;
	return t->s[i].val;
}

void series_free(struct series_table *t, void (*fn)(void *val))
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (fn)
			fn(t->s[i].val);
		free(t->s[i].val);
	}
	free(t->s);
	*t = (struct series_table){ 0 };
}
