// SPDX-License-Identifier: GPL-2.0
/* Series table: a sorted array, binary search, values on the heap. */
#include "series.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* What a lookup is for: a series' fields but its value. */
struct want {
	uint16_t port;
	const char *key;
	bool other_key;
	enum role role;
	enum rec_type type;
};

/* No key, then the keys in order, then "other". */
static int key_rank(const char *key, bool other)
{
	return other ? 2 : key ? 1 : 0;
}

static int cmp(const struct want *w, const struct series *s)
{
	int a = key_rank(w->key, w->other_key), b = key_rank(s->key, s->other_key);

	if (w->port != s->port)
		return w->port < s->port ? -1 : 1;
	if (a != b)
		return a < b ? -1 : 1;
	if (a == 1) {
		int c = strcmp(w->key, s->key);

		if (c)
			return c;
	}
	if (w->role != s->role)
		return w->role < s->role ? -1 : 1;
	if (w->type != s->type)
		return w->type < s->type ? -1 : 1;
	return 0;
}

/* Index of the series, or where it would go (*found false). */
static size_t lookup(const struct series_table *t, const struct want *w,
		     int *found)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp(w, &t->s[mid]);

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

static int has_key(const struct series_table *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->s[i].key && !strcmp(t->s[i].key, key))
			return 1;
	return 0;
}

void series_init(struct series_table *t, size_t val_size,
		 unsigned int max_ports, unsigned int max_keys)
{
	*t = (struct series_table){ .val_size = val_size,
				    .max_ports = max_ports,
				    .max_keys = max_keys };
}

static void *get(struct series_table *t, struct want *w, struct series **sp)
{
	size_t i;
	int found;

	i = lookup(t, w, &found);
	if (found)
		goto out;
	if (w->port != SERIES_OTHER && !has_port(t, w->port)) {
		if (t->nports >= t->max_ports) {
			w->port = SERIES_OTHER;
			return get(t, w, sp);
		}
		t->nports++;
	}
	if (w->key && !has_key(t, w->key)) {
		if (t->nkeys >= t->max_keys) {
			t->key_overflow++;
			w->key = NULL;
			w->other_key = true;
			return get(t, w, sp);
		}
		t->nkeys++;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->s = xrealloc(t->s, t->cap, sizeof(*t->s));
	}
	memmove(&t->s[i + 1], &t->s[i], (t->n - i) * sizeof(*t->s));
	t->s[i] = (struct series){ .port = w->port, .other_key = w->other_key,
				   .role = w->role, .type = w->type,
				   .val = xcalloc(1, t->val_size) };
	if (w->key) {
		t->s[i].key = strdup(w->key);
		if (!t->s[i].key)
			die(EXIT_RUNTIME, "out of memory");
	}
	t->n++;
out:
	if (sp)
		*sp = &t->s[i];
	return t->s[i].val;
}

void *series_get(struct series_table *t, uint16_t port, enum role role,
		 enum rec_type type)
{
	return series_get_key(t, port, NULL, role, type, NULL);
}

void *series_get_key(struct series_table *t, uint16_t port, const char *key,
		     enum role role, enum rec_type type, struct series **sp)
{
	struct want w = { port, key, false, role, type };

	return get(t, &w, sp);
}

void series_free(struct series_table *t, void (*fn)(void *val))
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (fn)
			fn(t->s[i].val);
		free(t->s[i].val);
		free(t->s[i].key);
	}
	free(t->s);
	*t = (struct series_table){ 0 };
}
