// SPDX-License-Identifier: GPL-2.0
/* Sliding windows of tasks: see window.h for the layout and the semantics. */
#include "window.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const wm_name[WM_N] = {
	"duration", "process", "upload", "download", "min_rtt",
	"rq_wait", "app", "sq_wait",
	"rwnd_limited", "sndbuf_limited", "app_limited", "sending",
};

void win_init(struct win_table *t, const unsigned int *len, unsigned int nwin,
	      size_t max_keys)
{
	*t = (struct win_table){ .nwin = nwin, .clock_sec = -1,
				 .max_keys = max_keys };
	memcpy(t->len, len, nwin * sizeof(*len));
	t->span = len[nwin - 1];
}

static void free_slot(struct wslot *s)
{
	unsigned int m;

	if (!s->m)
		return;
	for (m = 0; m < WM_N; m++)
		free(s->m[m].bin);
	free(s->m);
}

static void key_free(const struct win_table *t, struct wkey *k)
{
	unsigned int s, w, m;

	for (s = 0; s < t->span; s++)
		free_slot(&k->ring[s]);
	for (w = 0; w < t->nwin; w++)
		for (m = 0; m < WM_N; m++)
			hist_reset(&k->agg[w].h[m]);
	free(k->ring);
	free(k->agg);
	free(k->name);
}

void win_free(struct win_table *t)
{
	size_t i;

	for (i = 0; i < t->nkeys; i++)
		key_free(t, &t->key[i]);
	free(t->key);
	keyidx_free(&t->idx);
	*t = (struct win_table){ 0 };
}

/* ---- counters -------------------------------------------------------------- */

static void count_add(struct wcount *d, const struct wcount *s)
{
	unsigned int i;

	d->tasks += s->tasks;
	for (i = 0; i < REC_E; i++)
		d->type[i] += s->type[i];
	d->bytes_in += s->bytes_in;
	d->bytes_out += s->bytes_out;
	d->retrans += s->retrans;
	d->segs_out += s->segs_out;
	d->rtt_n += s->rtt_n;
	d->rtt_sum += s->rtt_sum;
	d->rtt_sumsq += s->rtt_sumsq;
}

static void count_sub(struct wcount *d, const struct wcount *s)
{
	unsigned int i;

	d->tasks -= s->tasks;
	for (i = 0; i < REC_E; i++)
		d->type[i] -= s->type[i];
	d->bytes_in -= s->bytes_in;
	d->bytes_out -= s->bytes_out;
	d->retrans -= s->retrans;
	d->segs_out -= s->segs_out;
	d->rtt_n -= s->rtt_n;
	d->rtt_sum -= s->rtt_sum;
	d->rtt_sumsq -= s->rtt_sumsq;
}

/* What one task adds to the counters, and its measures (bit m of *@have). */
static void task_values(const struct record *r, struct wcount *c,
			uint64_t v[WM_N], unsigned int *have)
{
	uint64_t mss = rec_mss(r), total, part[NTRANSFER_PARTS];
	unsigned int m;

	*c = (struct wcount){ .tasks = 1 };
	c->type[r->type] = 1;
	c->bytes_in = rec_recv_bytes(r);
	c->bytes_out = rec_sent_bytes(r);
	c->retrans = rec_retrans(r);
	if (c->bytes_out && mss)
		c->segs_out = (c->bytes_out + mss - 1) / mss;
	*have = 0;
	for (m = 0; m < M_NMETRICS; m++)
		if (rec_metric(r, (enum metric)m, &v[m]))
			*have |= 1u << m;
	if (*have & 1u << WM_MIN_RTT) {
		c->rtt_n = 1;
		c->rtt_sum = v[WM_MIN_RTT];
		c->rtt_sumsq = (unsigned __int128)v[WM_MIN_RTT] * v[WM_MIN_RTT];
	}
	if (rec_process_parts(r, &total, part) == SPLIT_OK)
		for (m = 0; m < NPROCESS_PARTS; m++) {
			v[WM_RQ_WAIT + m] = part[m];
			*have |= 1u << (WM_RQ_WAIT + m);
		}
	if (rec_transfer_parts(r, &total, part) == SPLIT_OK)
		for (m = 0; m < NTRANSFER_PARTS; m++) {
			v[WM_RWND_LIMITED + m] = part[m];
			*have |= 1u << (WM_RWND_LIMITED + m);
		}
}

/* ---- a slot's sparse histograms -------------------------------------------- */

static void sparse_add(struct wsparse *s, uint64_t v)
{
	unsigned int idx = hist_index(v);
	uint32_t lo = 0, hi = s->nbin;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->bin[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == s->nbin || s->bin[lo].idx != idx) {
		if (s->nbin == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 8;
			s->bin = xrealloc(s->bin, s->cap, sizeof(*s->bin));
		}
		memmove(&s->bin[lo + 1], &s->bin[lo],
			(s->nbin - lo) * sizeof(*s->bin));
		s->bin[lo] = (struct wbin){ .idx = (uint16_t)idx };
		s->nbin++;
	}
	s->bin[lo].count++;
	if (!s->n || v < s->min)
		s->min = v;
	if (!s->n || v > s->max)
		s->max = v;
	s->n++;
	s->sum += v;
}

/* Empty the slot for second @sec, keeping its allocations for reuse. */
static void slot_reset(struct wslot *s, int64_t sec)
{
	unsigned int m;

	s->sec = sec;
	s->c = (struct wcount){ 0 };
	if (s->m)
		for (m = 0; m < WM_N; m++) {
			s->m[m].nbin = 0;
			s->m[m].n = s->m[m].sum = s->m[m].min = s->m[m].max = 0;
		}
}

/* Take the slot out of a window's aggregate. */
static void agg_remove_slot(struct wagg *a, const struct wslot *s)
{
	unsigned int m, i;

	count_sub(&a->c, &s->c);
	if (!s->m)
		return;
	for (m = 0; m < WM_N; m++) {
		const struct wsparse *sp = &s->m[m];

		for (i = 0; i < sp->nbin; i++)
			hist_remove_bucket(&a->h[m], sp->bin[i].idx,
					   sp->bin[i].count);
		a->sum[m] -= sp->sum;
	}
}

/* ---- keys ------------------------------------------------------------------ */

static void key_id(char id[WIN_KEY_MAX], uint16_t port, enum role role,
		   const char *name)
{
	snprintf(id, WIN_KEY_MAX, "%u/%s/%s", port, role_name(role), name);
}

static struct wkey *key_get(struct win_table *t, uint16_t port, enum role role,
			    const char *name)
{
	char id[WIN_KEY_MAX];
	struct wkey *k;
	unsigned int s;
	size_t i;

	key_id(id, port, role, name);
	i = keyidx_get(&t->idx, id, t->key, sizeof(*t->key));
	if (i != SIZE_MAX)
		return &t->key[i];
	/* past max_keys: one key "other" per role, which is not capped */
	if (t->nkeys >= t->max_keys && (port || strcmp(name, WIN_OTHER))) {
		t->overflow++;
		return key_get(t, 0, role, WIN_OTHER);
	}
	if (t->nkeys == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->key = xrealloc(t->key, t->cap, sizeof(*t->key));
	}
	k = &t->key[t->nkeys];
	*k = (struct wkey){ .port = port, .role = role, .last_sec = -1 };
	memcpy(k->id, id, sizeof(id));
	keyidx_find(&t->idx, id, t->key, t->nkeys, sizeof(*t->key));
	t->nkeys++;
	k->name = strdup(name);
	if (!k->name)
		die(EXIT_RUNTIME, "out of memory");
	k->ring = xcalloc(t->span, sizeof(*k->ring));
	for (s = 0; s < t->span; s++)
		k->ring[s].sec = -1;
	k->agg = xcalloc(t->nwin, sizeof(*k->agg));
	return k;
}

int win_key_cmp(const struct wkey *a, const struct wkey *b)
{
	if (a->port != b->port)
		return a->port < b->port ? -1 : 1;
	if (a->role != b->role)
		return a->role < b->role ? -1 : 1;
	return strcmp(a->name, b->name);
}

const struct wkey *win_find(const struct win_table *t, uint16_t port,
			    enum role role, const char *name)
{
	char id[WIN_KEY_MAX];
	size_t i;

	key_id(id, port, role, name);
	i = keyidx_get(&t->idx, id, t->key, sizeof(*t->key));
	return i == SIZE_MAX ? NULL : &t->key[i];
}

/* ---- the clock ------------------------------------------------------------- */

static struct wslot *slot_of(const struct win_table *t, const struct wkey *k,
			     int64_t sec)
{
	struct wslot *s = &k->ring[(uint64_t)sec % t->span];

	return s->sec == sec ? s : NULL;
}

/* The clock goes from second @from to @to: what leaves each window. */
static void key_shift(struct win_table *t, struct wkey *k, int64_t from,
		      int64_t to)
{
	unsigned int w;
	int64_t sec, last;

	for (w = 0; w < t->nwin; w++) {
		/* window w held (from - len, from]; it now holds (to - len, to] */
		last = to - t->len[w] < from ? to - t->len[w] : from;
		for (sec = from - t->len[w] + 1; sec <= last; sec++) {
			const struct wslot *s = slot_of(t, k, sec);

			if (!s)
				continue;
			agg_remove_slot(&k->agg[w], s);
			count_sub(&t->tot[w], &s->c);
		}
	}
}

/*
 * Drop the keys whose latest task is older than the longest window at
 * second @sec: each window of theirs is empty.  The array is compacted and
 * the index made again (keyidx has no removal): once a second at most.
 */
static void expire_keys(struct win_table *t, int64_t sec)
{
	size_t i, kept = 0;

	for (i = 0; i < t->nkeys; i++) {
		if (t->key[i].last_sec > sec - (int64_t)t->span) {
			if (kept != i)
				t->key[kept] = t->key[i];
			kept++;
			continue;
		}
		key_free(t, &t->key[i]);
		t->expired++;
	}
	if (kept == t->nkeys)
		return;
	t->nkeys = kept;
	keyidx_free(&t->idx);
	for (i = 0; i < t->nkeys; i++)
		keyidx_find(&t->idx, t->key[i].id, t->key, i, sizeof(*t->key));
}

void win_advance(struct win_table *t, uint64_t now_us)
{
	int64_t sec = (int64_t)(now_us / USEC_PER_SEC);
	size_t i;

	if (t->clock_sec < 0) {
		t->clock_sec = sec;
		t->clock_us = t->start_us = now_us;
		return;
	}
	if (now_us <= t->clock_us)
		return;
	if (sec > t->clock_sec) {
		for (i = 0; i < t->nkeys; i++)
			key_shift(t, &t->key[i], t->clock_sec, sec);
		expire_keys(t, sec);
	}
	t->clock_sec = sec;
	t->clock_us = now_us;
}

/* ---- records --------------------------------------------------------------- */

void win_add(struct win_table *t, const struct record *r, const char *name)
{
	int64_t sec = (int64_t)r->sec;
	uint64_t v[WM_N], t0 = (uint64_t)sec * USEC_PER_SEC;
	unsigned int have, m, w;
	struct wcount c;
	struct wslot *s;
	struct wkey *k;

	if (!rec_is_task(r->type))
		return;
	if (t->max_ahead_us && t->clock_sec >= 0 &&
	    rec_time_us(r) > t->clock_us + t->max_ahead_us) {
		t->future++;
		return;
	}
	win_advance(t, rec_time_us(r));
	if (sec <= t->clock_sec - (int64_t)t->span) {
		t->late++;
		return;
	}
	if (t0 < t->start_us)
		t->start_us = t0;
	task_values(r, &c, v, &have);
	k = key_get(t, r->port, r->role, name);
	if (sec > k->last_sec)
		k->last_sec = sec;
	s = &k->ring[(uint64_t)sec % t->span];
	if (s->sec != sec)
		slot_reset(s, sec);
	count_add(&s->c, &c);
	if (have && !s->m)
		s->m = xcalloc(WM_N, sizeof(*s->m));
	for (m = 0; m < WM_N; m++)
		if (have >> m & 1)
			sparse_add(&s->m[m], v[m]);
	for (w = 0; w < t->nwin; w++) {
		if (sec <= t->clock_sec - (int64_t)t->len[w])
			continue;	/* a late task, before this window */
		count_add(&k->agg[w].c, &c);
		count_add(&t->tot[w], &c);
		for (m = 0; m < WM_N; m++)
			if (have >> m & 1) {
				hist_add(&k->agg[w].h[m], v[m]);
				k->agg[w].sum[m] += v[m];
			}
	}
	t->records++;
}

/* ---- figures --------------------------------------------------------------- */

/*
 * The square root of @x >= 0, by Newton's steps from above: tcprt links no
 * libm (the arm64 guest's root, which tcprt is cross-built against, has
 * none to link).  Exact to the last bit or two; called per question only.
 */
static double root(double x)
{
	double r = x > 1 ? x : 1, next;
	int i;

	if (x <= 0)
		return 0;
	for (i = 0; i < 200; i++) {
		next = (r + x / r) / 2;
		if (next >= r)
			break;
		r = next;
	}
	return r;
}

static double per_1000(uint64_t a, uint64_t b)
{
	return b ? 1000.0 * (double)a / (double)b : 0;
}

void win_figures(const struct win_table *t, const struct wkey *k,
		 unsigned int w, struct wfig *f)
{
	static const struct wagg none;
	const struct wagg *a = k ? &k->agg[w] : &none;
	uint64_t first = (uint64_t)(t->clock_sec - t->len[w] + 1) * USEC_PER_SEC;
	uint64_t all = t->tot[w].bytes_in + t->tot[w].bytes_out;
	int64_t sec;
	unsigned int m;

	memset(f, 0, sizeof(*f));
	f->len = t->len[w];
	f->c = a->c;
	if (first < t->start_us)
		first = t->start_us;
	if (t->clock_us > first)
		f->span = (double)(t->clock_us - first) / USEC_PER_SEC;
	if (f->span > 0) {
		f->tasks_per_s = (double)a->c.tasks / f->span;
		f->in_per_s = (double)a->c.bytes_in / f->span;
		f->out_per_s = (double)a->c.bytes_out / f->span;
	}
	if (all)
		f->share = (double)(a->c.bytes_in + a->c.bytes_out) / (double)all;
	f->retrans_per_1000 = per_1000(a->c.retrans, a->c.segs_out);
	f->fail_per_1000 = per_1000(a->c.type[REC_W],
				    a->c.type[REC_R] + a->c.type[REC_W]);
	if (a->c.rtt_n) {
		double n = (double)a->c.rtt_n, mean = (double)a->c.rtt_sum / n;
		double var = (double)a->c.rtt_sumsq / n - mean * mean;

		f->rtt_mean = mean;
		f->rtt_stddev = root(var);
	}
	for (m = 0; m < WM_N; m++) {
		struct hist h = a->h[m];	/* shares the counts: read only */
		bool any = false;

		if (!h.n)
			continue;
		/* min and max from the window's slots: they do not subtract */
		for (sec = t->clock_sec - t->len[w] + 1; sec <= t->clock_sec; sec++) {
			const struct wslot *s = slot_of(t, k, sec);

			if (!s || !s->m || !s->m[m].n)
				continue;
			if (!any || s->m[m].min < h.min)
				h.min = s->m[m].min;
			if (!any || s->m[m].max > h.max)
				h.max = s->m[m].max;
			any = true;
		}
		f->m[m].n = h.n;
		f->m[m].mean = a->sum[m] / h.n;
		f->m[m].p50 = hist_quantile(&h, 500);
		f->m[m].p90 = hist_quantile(&h, 900);
		f->m[m].p99 = hist_quantile(&h, 990);
		f->m[m].max = h.max;
	}
}

/* ---- JSON ------------------------------------------------------------------ */

void win_json_key(struct buf *b, const struct wkey *k)
{
	if (k->port)
		buf_printf(b, "\"port\":%u,", k->port);
	else
		buf_printf(b, "\"port\":\"other\",");
	buf_printf(b, "\"role\":\"%s\",\"key\":", role_name(k->role));
	buf_json_str(b, k->name);
}

#define U(x)	((unsigned long long)(x))

void win_json(struct buf *b, const struct wfig *f)
{
	unsigned int m;

	buf_printf(b, "{\"window\":%u,\"span\":%.6f,\"tasks\":%llu,"
		   "\"R\":%llu,\"W\":%llu,\"N\":%llu,\"P\":%llu,"
		   "\"tasks_per_s\":%.3f,",
		   f->len, f->span, U(f->c.tasks), U(f->c.type[REC_R]),
		   U(f->c.type[REC_W]), U(f->c.type[REC_N]), U(f->c.type[REC_P]),
		   f->tasks_per_s);
	buf_printf(b, "\"bytes_in\":%llu,\"bytes_out\":%llu,"
		   "\"bytes_in_per_s\":%.3f,\"bytes_out_per_s\":%.3f,"
		   "\"share\":%.6f,",
		   U(f->c.bytes_in), U(f->c.bytes_out), f->in_per_s, f->out_per_s,
		   f->share);
	buf_printf(b, "\"retrans\":%llu,\"segs_out\":%llu,"
		   "\"retrans_per_1000\":%.3f,\"fail_per_1000\":%.3f,"
		   "\"rtt_n\":%llu,\"rtt_mean\":%.3f,\"rtt_stddev\":%.3f",
		   U(f->c.retrans), U(f->c.segs_out), f->retrans_per_1000,
		   f->fail_per_1000, U(f->c.rtt_n), f->rtt_mean, f->rtt_stddev);
	for (m = 0; m < WM_N; m++) {
		if (!f->m[m].n)
			continue;
		buf_printf(b, ",\"%s\":{\"n\":%llu,\"mean\":%llu,\"p50\":%llu,"
			   "\"p90\":%llu,\"p99\":%llu,\"max\":%llu}",
			   wm_name[m], U(f->m[m].n), U(f->m[m].mean),
			   U(f->m[m].p50), U(f->m[m].p90), U(f->m[m].p99),
			   U(f->m[m].max));
	}
	buf_add(b, "}", 1);
}
