// SPDX-License-Identifier: GPL-2.0
/*
 * window.c against a model written here: every record kept in a list, and
 * each window's figures computed from scratch at each check - the tasks of
 * the seconds (S - W, S], S the clock's second - over generated traffic
 * with bursts, idle gaps longer than every window, records arriving late
 * (within the longest window and beyond it), several keys and the breakdown
 * fields.  Counts, bytes, retransmissions, segments and RTT sums must be
 * equal; percentiles within hist.h's bound (exact nearest rank, then half a
 * bucket: v / 128, at least 1 below 128 where buckets are exact); max and
 * mean exact; the span and the rates as window.h defines them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "tap.h"
#include "window.h"

#define MAXREC	60000

struct mrec {
	struct record r;
	int64_t sec;
	char name[8];
};

static struct mrec *kept;
static size_t nkept;
static uint64_t model_late, model_start = UINT64_MAX;
static int64_t model_sec = -1;
static uint64_t model_clock;
static unsigned int checks, bad_checks;

static const unsigned int lens[] = { 3, 10, 60 };

/* A record line as tcp_rt writes it, parsed as tcprt parses it. */
static void make(struct record *r, char type, uint64_t t_us, uint16_t port,
		 uint64_t d, bool breakdown)
{
	char line[512], why[PARSE_WHY_MAX];
	uint64_t sec = t_us / 1000000, usec = t_us % 1000000;
	uint64_t proc = d / 2, up = d / 8, sent = rnd() % 100000 + 1;
	uint64_t rtt = 50 + rnd() % 5000, retr = rnd() % 4;
	int n = 0;

	switch (type) {
	case 'R':
	case 'W':
		n = snprintf(line, sizeof(line),
			     type == 'R' ?
			     "V6 %c %llu %06llu 10.0.0.2:40000 10.0.0.1:%u %llu %llu %llu %llu 1 %llu %llu %llu 0 1448" :
			     "V6 %c %llu %06llu 10.0.0.2:40000 10.0.0.1:%u %llu %llu %llu %llu 1 %llu %llu %llu 1448",
			     type, (unsigned long long)sec, (unsigned long long)usec,
			     port, (unsigned long long)sent, (unsigned long long)d,
			     (unsigned long long)rtt, (unsigned long long)retr,
			     (unsigned long long)proc, (unsigned long long)up,
			     (unsigned long long)(rnd() % 3000));
		if (breakdown && type == 'R') {
			uint64_t rq = proc / 4, sq = proc / 8, dl = d - proc - up;

			n += snprintf(line + n, sizeof(line) - (size_t)n,
				      " rq_wait=%llu app=%llu sq_wait=%llu rwnd_limited=%llu sndbuf_limited=%llu app_limited=%llu",
				      (unsigned long long)rq,
				      (unsigned long long)(proc - rq - sq),
				      (unsigned long long)sq,
				      (unsigned long long)(dl / 3),
				      (unsigned long long)(dl / 5),
				      (unsigned long long)(dl / 7));
		}
		break;
	case 'N':
		n = snprintf(line, sizeof(line),
			     "V6 N %llu %06llu 10.0.0.2:40000 10.0.0.1:%u 3 %llu 400 0 1448",
			     (unsigned long long)sec, (unsigned long long)usec,
			     port, (unsigned long long)d);
		break;
	default:	/* P */
		n = snprintf(line, sizeof(line),
			     "V6 P %llu %06llu 10.0.0.2:%u 10.0.0.1:50000 %llu %llu %llu %llu 1 %llu %llu 4000 0 1448",
			     (unsigned long long)sec, (unsigned long long)usec,
			     port, (unsigned long long)sent, (unsigned long long)d,
			     (unsigned long long)rtt, (unsigned long long)retr,
			     (unsigned long long)(d / 2), (unsigned long long)(d / 4));
	}
	if (!parse_log_line(line, (size_t)n, r, why)) {
		fprintf(stderr, "bad generated line: %s: %s\n", line, why);
		exit(1);
	}
}

/* What window.c is told, and what the model keeps of it. */
static void feed(struct win_table *t, const struct record *r, const char *name)
{
	int64_t sec = (int64_t)r->sec;
	uint64_t us = rec_time_us(r);

	win_add(t, r, name);
	if (model_sec < 0 || us > model_clock) {
		if (model_sec < 0)
			model_start = us;
		model_clock = us;
		model_sec = (int64_t)(us / 1000000);
	}
	if (sec <= model_sec - (int64_t)lens[2]) {
		model_late++;
		return;
	}
	if ((uint64_t)sec * 1000000 < model_start)
		model_start = (uint64_t)sec * 1000000;
	if (nkept == MAXREC)
		return;
	kept[nkept].r = *r;
	kept[nkept].sec = sec;
	snprintf(kept[nkept].name, sizeof(kept[nkept].name), "%s", name);
	nkept++;
}

static void advance(struct win_table *t, uint64_t us)
{
	win_advance(t, us);
	if (us > model_clock) {
		model_clock = us;
		model_sec = (int64_t)(us / 1000000);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The model's value of measure @m of @r, as window.c defines it. */
static bool measure(const struct record *r, unsigned int m, uint64_t *v)
{
	uint64_t tot, p[NTRANSFER_PARTS];

	if (m < M_NMETRICS)
		return rec_metric(r, (enum metric)m, v);
	if (m < WM_RWND_LIMITED) {
		if (rec_process_parts(r, &tot, p) != SPLIT_OK)
			return false;
		*v = p[m - WM_RQ_WAIT];
		return true;
	}
	if (rec_transfer_parts(r, &tot, p) != SPLIT_OK)
		return false;
	*v = p[m - WM_RWND_LIMITED];
	return true;
}

static bool near(uint64_t got, uint64_t exact)
{
	uint64_t tol = exact < 128 ? 0 : exact / 128 + 1;

	return got + tol >= exact && got <= exact + tol;
}

static bool close_d(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-9;
}

/* One key's window against the model; false (and a diag) if it differs. */
static bool check_one(const struct win_table *t, const struct wkey *k,
		      unsigned int w)
{
	static uint64_t vals[MAXREC];
	int64_t lo = model_sec - (int64_t)lens[w];
	uint64_t tasks = 0, in = 0, out = 0, retr = 0, segs = 0, rn = 0, rs = 0;
	uint64_t all = 0, first, type[REC_E] = { 0 };
	double sq = 0, span = 0;
	struct wfig f;
	unsigned int m;
	size_t i, n;

	win_figures(t, k, w, &f);
	for (i = 0; i < nkept; i++) {
		const struct record *r = &kept[i].r;
		uint64_t v, mss = r->f[rec_desc[r->type].nfields - 1];

		if (kept[i].sec <= lo || kept[i].sec > model_sec)
			continue;
		all += rec_recv_bytes(r) + rec_sent_bytes(r);
		if (r->port != k->port || r->role != k->role ||
		    strcmp(kept[i].name, k->name))
			continue;
		tasks++;
		type[r->type]++;
		in += rec_recv_bytes(r);
		out += rec_sent_bytes(r);
		retr += rec_retrans(r);
		if (rec_sent_bytes(r))
			segs += (rec_sent_bytes(r) + mss - 1) / mss;
		if (rec_metric(r, M_MIN_RTT, &v)) {
			rn++;
			rs += v;
			sq += (double)v * (double)v;
		}
	}
	first = (uint64_t)(lo + 1) * 1000000;
	if (first < model_start)
		first = model_start;
	if (model_clock > first)
		span = (double)(model_clock - first) / 1e6;
	if (f.c.tasks != tasks || f.c.bytes_in != in || f.c.bytes_out != out ||
	    f.c.retrans != retr || f.c.segs_out != segs || f.c.rtt_n != rn ||
	    f.c.rtt_sum != rs || memcmp(f.c.type, type, sizeof(type))) {
		diag("key %s window %u: tasks %llu/%llu in %llu/%llu out %llu/%llu retrans %llu/%llu segs %llu/%llu",
		     k->id, lens[w], (unsigned long long)f.c.tasks,
		     (unsigned long long)tasks, (unsigned long long)f.c.bytes_in,
		     (unsigned long long)in, (unsigned long long)f.c.bytes_out,
		     (unsigned long long)out, (unsigned long long)f.c.retrans,
		     (unsigned long long)retr, (unsigned long long)f.c.segs_out,
		     (unsigned long long)segs);
		return false;
	}
	if (!close_d(f.span, span) ||
	    (span > 0 && !close_d(f.tasks_per_s, (double)tasks / span)) ||
	    (all && !close_d(f.share, (double)(in + out) / (double)all)) ||
	    (rn && !close_d(f.rtt_mean, (double)rs / (double)rn))) {
		diag("key %s window %u: span %f/%f share %f rate %f", k->id,
		     lens[w], f.span, span, f.share, f.tasks_per_s);
		return false;
	}
	if (rn) {
		double mean = (double)rs / (double)rn;
		double sd = sqrt(fmax(sq / (double)rn - mean * mean, 0));

		if (fabs(f.rtt_stddev - sd) > 1e-6 * (sd + 1)) {
			diag("key %s window %u: rtt stddev %f, model %f", k->id,
			     lens[w], f.rtt_stddev, sd);
			return false;
		}
	}
	for (m = 0; m < WM_N; m++) {
		uint64_t sum = 0;

		n = 0;
		for (i = 0; i < nkept; i++) {
			const struct record *r = &kept[i].r;

			if (kept[i].sec <= lo || kept[i].sec > model_sec ||
			    r->port != k->port || r->role != k->role ||
			    strcmp(kept[i].name, k->name) ||
			    !measure(r, m, &vals[n]))
				continue;
			sum += vals[n++];
		}
		if (f.m[m].n != n) {
			diag("key %s window %u %s: n %llu, model %zu", k->id,
			     lens[w], wm_name[m], (unsigned long long)f.m[m].n, n);
			return false;
		}
		if (!n)
			continue;
		qsort(vals, n, sizeof(vals[0]), cmp_u64);
#define RANK(pm)	vals[((n * (pm) + 999) / 1000 ? (n * (pm) + 999) / 1000 : 1) - 1]
		if (f.m[m].max != vals[n - 1] || f.m[m].mean != sum / n ||
		    !near(f.m[m].p50, RANK(500)) || !near(f.m[m].p90, RANK(900)) ||
		    !near(f.m[m].p99, RANK(990))) {
			diag("key %s window %u %s: p50 %llu/%llu p90 %llu/%llu p99 %llu/%llu max %llu/%llu mean %llu/%llu",
			     k->id, lens[w], wm_name[m],
			     (unsigned long long)f.m[m].p50, (unsigned long long)RANK(500),
			     (unsigned long long)f.m[m].p90, (unsigned long long)RANK(900),
			     (unsigned long long)f.m[m].p99, (unsigned long long)RANK(990),
			     (unsigned long long)f.m[m].max, (unsigned long long)vals[n - 1],
			     (unsigned long long)f.m[m].mean, (unsigned long long)(sum / n));
			return false;
		}
	}
	return true;
}

static void check_all(const struct win_table *t)
{
	size_t i;
	unsigned int w;

	for (i = 0; i < t->nkeys; i++)
		for (w = 0; w < t->nwin; w++) {
			checks++;
			if (!check_one(t, &t->key[i], w))
				bad_checks++;
		}
}

static const uint16_t ports[] = { 80, 443, 6379 };
static const char *const names[] = { "", "a", "b" };

/* One random task at @us, of a random key and type. */
static void one(struct win_table *t, uint64_t us)
{
	static const char types[] = "RRRRRRWNP";
	struct record r;
	char type = types[rnd() % 9];
	uint64_t d = 100 + rnd() % 50000;

	if (rnd() % 10 == 0)
		d *= 40;	/* a tail */
	make(&r, type, us, ports[rnd() % 3], d, rnd() % 2);
	feed(t, &r, names[rnd() % 3]);
}

static void test_traffic(void)
{
	struct win_table t;
	uint64_t now = 1800000000ULL * 1000000, end;
	unsigned int step = 0;

	win_init(&t, lens, 3, 1024);
	/* steady, then a burst, an idle gap longer than every window, late
	 * records within the ring and beyond it, then steady again */
	for (end = now + 90 * 1000000ULL; now < end; now += 20000 + rnd() % 80000) {
		one(&t, now);
		if (++step % 97 == 0)
			check_all(&t);
	}
	ok(bad_checks == 0, "steady traffic: %u checks of every key and window, %u differ",
	   checks, bad_checks);
	checks = bad_checks = 0;
	for (end = now + 2 * 1000000ULL; now < end; now += 200 + rnd() % 300) {
		one(&t, now);
		if (++step % 211 == 0)
			check_all(&t);
	}
	/* the burst slides out: check at each second after it */
	for (end = now + 65 * 1000000ULL; now < end; now += 1000000) {
		advance(&t, now);
		check_all(&t);
	}
	ok(bad_checks == 0, "a burst and the windows sliding across it: %u checks, %u differ",
	   checks, bad_checks);
	checks = bad_checks = 0;
	now += 200 * 1000000ULL;	/* idle: every window empties */
	advance(&t, now);
	check_all(&t);
	ok(bad_checks == 0 && t.tot[2].tasks == 0,
	   "after an idle gap longer than every window, every window is empty");
	checks = bad_checks = 0;
	for (end = now + 30 * 1000000ULL; now < end; now += 50000 + rnd() % 100000) {
		one(&t, now);
		if (rnd() % 5 == 0)	/* late: up to 80 s before the clock */
			one(&t, now - (rnd() % 80) * 1000000ULL - rnd() % 1000000);
		if (++step % 50 == 0)
			check_all(&t);
	}
	check_all(&t);
	ok(bad_checks == 0, "records arriving late: %u checks, %u differ", checks,
	   bad_checks);
	ok(t.late == model_late && model_late > 0,
	   "records older than the longest window are counted late: %llu, model %llu",
	   (unsigned long long)t.late, (unsigned long long)model_late);
	win_free(&t);
}

/* Past max_keys, tasks go to the key "other", counted. */
static void test_overflow(void)
{
	static const unsigned int one_len[] = { 10 };
	struct win_table t;
	struct record r;
	char name[16];
	const struct wkey *k;
	int i;

	win_init(&t, one_len, 1, 4);
	for (i = 0; i < 10; i++) {
		make(&r, 'R', 1800000000ULL * 1000000 + (uint64_t)i, 80, 1000, false);
		snprintf(name, sizeof(name), "k%d", i);
		win_add(&t, &r, name);
	}
	k = win_find(&t, 0, ROLE_SERVER, WIN_OTHER);
	ok(t.nkeys == 5 && t.overflow == 6 && k && k->agg[0].c.tasks == 6,
	   "max_keys 4: 4 keys, the 6 others' tasks under \"other\" (%zu keys, %llu overflow)",
	   t.nkeys, (unsigned long long)t.overflow);
	win_free(&t);
}

/*
 * A key whose last task left the longest window is dropped, counted, and
 * its place taken by a new key instead of "other"; one with a task still
 * in a window stays, its figures whole; a dropped key comes back with its
 * next task.
 */
static void test_expire(void)
{
	static const unsigned int len[] = { 3, 10 };
	uint64_t t0 = 1800000000ULL * 1000000;
	const struct wkey *k;
	struct win_table t;
	struct record r;
	char name[16];
	int i;

	win_init(&t, len, 2, 4);
	for (i = 0; i < 4; i++) {	/* 4 keys: the table is full */
		make(&r, 'R', t0 + (uint64_t)i * 1000000, 80, 1000, false);
		snprintf(name, sizeof(name), "k%d", i);
		win_add(&t, &r, name);
	}
	/* at t0 + 12 s the 10 s window holds seconds 3..12: k3's task only */
	win_advance(&t, t0 + 12 * 1000000);
	k = win_find(&t, 80, ROLE_SERVER, "k3");
	ok(t.nkeys == 1 && t.expired == 3 && k && k->agg[1].c.tasks == 1 &&
	   k->agg[0].c.tasks == 0 && !win_find(&t, 80, ROLE_SERVER, "k0"),
	   "keys whose tasks left the longest window dropped: %zu kept, %llu expired, k3's task in its 10 s window",
	   t.nkeys, (unsigned long long)t.expired);
	for (i = 4; i < 7; i++) {
		make(&r, 'R', t0 + 12 * 1000000 + (uint64_t)i, 80, 1000, false);
		snprintf(name, sizeof(name), "k%d", i);
		win_add(&t, &r, name);
	}
	ok(t.nkeys == 4 && t.overflow == 0 && win_find(&t, 80, ROLE_SERVER, "k6"),
	   "their places taken by new keys, none under \"other\" (%zu keys, %llu overflow)",
	   t.nkeys, (unsigned long long)t.overflow);
	make(&r, 'R', t0 + 12 * 1000000 + 9, 80, 1000, false);
	win_add(&t, &r, "k7");
	make(&r, 'R', t0 + 12 * 1000000 + 10, 80, 1000, false);
	win_add(&t, &r, "k0");
	ok(t.overflow == 2 && !win_find(&t, 80, ROLE_SERVER, "k0"),
	   "the table full again: a fifth key and a dropped one's return go to \"other\"");
	win_advance(&t, t0 + 30 * 1000000);
	make(&r, 'R', t0 + 30 * 1000000, 80, 1000, false);
	win_add(&t, &r, "k0");
	k = win_find(&t, 80, ROLE_SERVER, "k0");
	ok(t.nkeys == 1 && t.expired == 8 && k && k->agg[0].c.tasks == 1 &&
	   t.tot[1].tasks == 1,
	   "every key idle: all dropped (%llu in all); k0 back with its next task, the totals its alone",
	   (unsigned long long)t.expired);
	win_free(&t);
}

/* On the wall clock, a record far ahead is counted, and moves nothing. */
static void test_future(void)
{
	static const unsigned int one_len[] = { 10 };
	uint64_t now = 1800000000ULL * 1000000;
	struct win_table t;
	struct record r;

	win_init(&t, one_len, 1, 16);
	t.max_ahead_us = 1000000;
	win_advance(&t, now);
	make(&r, 'R', now + 500000, 80, 1000, false);	/* within 1 s: taken */
	win_add(&t, &r, "");
	make(&r, 'R', now + 3600ULL * 1000000, 80, 1000, false);
	win_add(&t, &r, "");
	make(&r, 'R', now + 600000, 80, 1000, false);
	win_add(&t, &r, "");
	ok(t.future == 1 && t.records == 2 && t.late == 0 &&
	   t.clock_us == now + 600000,
	   "an hour ahead of the wall clock: counted in future, the clock kept (future %llu, records %llu)",
	   (unsigned long long)t.future, (unsigned long long)t.records);
	win_free(&t);
}

/* Per record, the cost: a figure for the docs, not a pass mark. */
static void test_cost(void)
{
	struct win_table t;
	struct record r[256];
	uint64_t t0, i, n = 400000, now = 1800000000ULL * 1000000;
	static const unsigned int dflt[] = { 10, 60, 300 };

	win_init(&t, dflt, 3, 1024);
	for (i = 0; i < 256; i++)
		make(&r[i], 'R', now, ports[i % 3], 100 + rnd() % 50000, i % 2);
	t0 = mono_us();
	for (i = 0; i < n; i++) {
		r[i % 256].sec = (now + i * 10) / 1000000;	/* 100k tasks/s */
		r[i % 256].usec = (now + i * 10) % 1000000;
		win_add(&t, &r[i % 256], "");
	}
	diag("%.0f ns per record added (3 windows, 3 keys, half with the breakdown)",
	     (double)(mono_us() - t0) * 1000 / (double)n);
	ok(t.records == n, "every record added");
	win_free(&t);
}

int main(void)
{
	kept = calloc(MAXREC, sizeof(*kept));
	if (!kept)
		return 1;
	test_traffic();
	test_overflow();
	test_expire();
	test_future();
	test_cost();
	free(kept);
	return done_testing();
}
