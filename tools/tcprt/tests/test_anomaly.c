// SPDX-License-Identifier: GPL-2.0
/*
 * anomaly.c against a model of anomaly.h's rules written here in floating
 * point, on random stats, and on the cases the rules are for: a jump over
 * few tasks or before the warm-up is none; a lasting new level triggers
 * once, then becomes the baseline; failures trigger when they reach the
 * mark, not while they stay there; a peer port is not its local namesake.
 * From records (tcprt agent): a tail that jumps while the average stays
 * is an anomaly, which the same interval's average is not; W and P
 * records count as the stats count them.  For the recorder (each task
 * judged): a task past factor times its port's last p99, and
 * ANOMALY_MIN_JUMP_US above it, is one, a task short of either or before
 * any p99 none; the W that brings an
 * interval to the failure mark is one, once, and not while the port
 * stays failing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anomaly.h"
#include "parse.h"
#include "tap.h"

static struct anomaly a;
static char why[256];

static bool feed(uint16_t port, bool client, uint64_t avg, uint64_t fail,
		 uint64_t tasks)
{
	return anomaly_feed(&a, port, client, avg, fail, tasks, why, sizeof(why));
}

static void test_cases(void)
{
	int i, hits = 0;

	anomaly_init(&a, 4, 50);
	ok(!feed(80, false, 2000, 0, 100) && !feed(80, false, 50000, 0, 100),
	   "no anomaly before the baseline has %d intervals", ANOMALY_WARMUP);
	anomaly_init(&a, 4, 50);
	for (i = 0; i < 5; i++)
		feed(80, false, 2000, 0, 100);
	ok(!feed(80, false, 50000, 0, ANOMALY_MIN_TASKS - 1),
	   "a jump over fewer than %d tasks is none", ANOMALY_MIN_TASKS);
	ok(feed(80, false, 9000, 0, 50) && strstr(why, "port 80:") &&
	   strstr(why, "baseline of 2000 us"),
	   "4.5 times the baseline over 50 tasks: an anomaly (%s)", why);
	for (i = 0; i < 40; i++)
		hits += feed(80, false, 9000, 0, 50);
	ok(hits < 5, "a lasting level becomes the baseline: %d more anomalies in 40 intervals",
	   hits);
	anomaly_init(&a, 4, 50);
	for (i = 0; i < 5; i++)
		feed(80, false, 100, 0, 100);
	ok(!feed(80, false, 900, 0, 100),
	   "9 times a baseline of 100 us, but less than %d us above it: none",
	   ANOMALY_MIN_JUMP_US);
	ok(feed(7, true, 10, 60, 0) && strstr(why, "port P7:") &&
	   strstr(why, "60 failures per 1000"),
	   "failures reaching the mark: an anomaly (%s)", why);
	ok(!feed(7, true, 10, 900, 0), "staying past it: none");
	ok(!feed(7, true, 10, 10, 0) && feed(7, true, 10, 50, 0),
	   "below, then at the mark again: an anomaly");
	ok(!feed(7, false, 10, 40, 0), "port 7 is not peer port 7");
	anomaly_init(&a, 4, 0);
	ok(!feed(9, false, 10, 1000, 0), "--trigger-fail 0: failures never trigger");
	anomaly_init(&a, 4, 50);
	for (i = 0; i < ANOMALY_PORTS + 3; i++)
		feed((uint16_t)(i + 1), false, 10, 0, 1);
	ok(a.n == ANOMALY_PORTS && a.untracked == 3,
	   "ports past %d: counted, not followed", ANOMALY_PORTS);
}

/* The model: the rules of anomaly.h, in floating point. */
struct mport {
	unsigned int seen;
	double base;
	bool failing;
};

static bool model(struct mport *p, double factor, uint64_t mark, uint64_t avg,
		  uint64_t fail, uint64_t tasks)
{
	bool slow = tasks >= ANOMALY_MIN_TASKS && p->seen >= ANOMALY_WARMUP &&
		    (double)avg >= floor(p->base) + ANOMALY_MIN_JUMP_US &&
		    (double)avg > factor * floor(p->base);
	bool was = p->failing;

	if (tasks >= ANOMALY_MIN_TASKS) {
		p->base = p->seen ? p->base * 7 / 8 + (double)avg / 8 : (double)avg;
		p->seen++;
	}
	p->failing = mark && fail >= mark;
	return slow || (p->failing && !was);
}

static void test_model(void)
{
	struct mport m[4];
	int i, differ = 0, hits = 0, near = 0;

	memset(m, 0, sizeof(m));
	anomaly_init(&a, 3, 100);
	for (i = 0; i < 200000; i++) {
		unsigned int k = (unsigned int)(rnd() % 4);
		uint64_t avg = 1000 + rnd() % 4000, fail = rnd() % 20 ? 0 : rnd() % 300;
		uint64_t tasks = rnd() % 40;
		bool want, got;
		double before = m[k].base;

		if (rnd() % 50 == 0)
			avg *= 2 + rnd() % 8;
		want = model(&m[k], 3, 100, avg, fail, tasks);
		got = feed((uint16_t)(k / 2 + 1), k & 1, avg, fail, tasks);
		hits += got;
		if (want != got) {
			/* the module's integer baseline may differ by its
			 * truncations from the model's: only at the edge */
			if (fabs((double)avg - 3 * before) > 0.01 * (double)avg &&
			    fabs((double)avg - before - ANOMALY_MIN_JUMP_US) > 0.01 * (double)avg)
				differ++;
			else
				near++;
		}
	}
	ok(!differ, "200000 random intervals on 4 ports: the model and the detector agree (%d anomalies; %d at the edge of the integer baseline)",
	   hits, near);
}

/* One record line as tcp_rt writes it, of @type (R W P), parsed. */
static struct record line_of(char type, uint16_t port, uint64_t d)
{
	char line[256], err[PARSE_WHY_MAX];
	struct record r;
	int n;

	if (type == 'P')
		n = snprintf(line, sizeof(line),
			     "V6 P 1795826017 100500 10.0.0.2:%u 10.0.0.1:50000 1000 %llu 100 0 1 %llu %llu 4000 0 1448",
			     port, (unsigned long long)d,
			     (unsigned long long)(d / 2), (unsigned long long)(d / 4));
	else
		n = snprintf(line, sizeof(line),
			     type == 'R' ?
			     "V6 %c 1795826017 100500 10.0.0.2:40000 10.0.0.1:%u 1000 %llu 100 0 1 %llu %llu 300 0 1448" :
			     "V6 %c 1795826017 100500 10.0.0.2:40000 10.0.0.1:%u 1000 %llu 100 0 1 %llu %llu 300 1448",
			     type, port, (unsigned long long)d,
			     (unsigned long long)(d / 2), (unsigned long long)(d / 8));
	if (!parse_log_line(line, (size_t)n, &r, err)) {
		fprintf(stderr, "bad line %s: %s\n", line, err);
		exit(1);
	}
	return r;
}

/* Into the detector's interval. */
static void task(char type, uint16_t port, uint64_t d)
{
	struct record r = line_of(type, port, d);

	anomaly_task(&a, &r);
}

/* Into the detector, judged on its own: an anomaly or not. */
static bool hit(char type, uint16_t port, uint64_t d)
{
	struct record r = line_of(type, port, d);

	return anomaly_task_hit(&a, &r, why, sizeof(why));
}


/* The interval's end: the anomalies it has, their reasons in @whys. */
static int interval(char whys[][256], int max)
{
	size_t i = 0;
	int n = 0;

	while (anomaly_interval(&a, &i, why, sizeof(why)))
		if (n < max)
			snprintf(whys[n++], sizeof(whys[0]), "%s", why);
	return n;
}

/*
 * 1,000 tasks of 5 ms an interval; then one in which 11 take 500 ms: a
 * p99 100 times the baseline, an average twice it.
 */
static void test_records(void)
{
	char whys[4][256];
	uint64_t sum = 0;
	int i, k, hits = 0;

	anomaly_init(&a, 4, 50);
	for (k = 0; k < 5; k++) {
		for (i = 0; i < 1000; i++)
			task('R', 8080, 5000);
		hits += interval(whys, 4);
	}
	ok(!hits && a.n == 1 && a.p[0].base_us == 5000,
	   "steady intervals from records: no anomaly, a baseline of the p99 (%llu us)",
	   (unsigned long long)a.p[0].base_us);
	for (i = 0; i < 1000; i++) {
		task('R', 8080, i < 11 ? 500000 : 5000);
		sum += i < 11 ? 500000 : 5000;
	}
	ok(interval(whys, 4) == 1 && strstr(whys[0], "port 8080: p99 duration") &&
	   strstr(whys[0], "over 1000 tasks"),
	   "11 of 1000 tasks 100 times slower: an anomaly of the p99 (%s)",
	   whys[0]);
	anomaly_init(&a, 4, 50);
	for (k = 0; k < 5; k++)
		feed(8080, false, 5000, 0, 1000);
	ok(!feed(8080, false, sum / 1000, 0, 1000),
	   "the same interval's average (%llu us, %.1f times): none, as the stats would see it",
	   (unsigned long long)(sum / 1000), (double)sum / 1000 / 5000);
	anomaly_init(&a, 4, 50);
	for (i = 0; i < 95; i++)
		task('R', 80, 1000);
	for (i = 0; i < 5; i++)
		task('W', 80, 1000);
	task('P', 80, 1000);
	ok(interval(whys, 4) == 1 && strstr(whys[0], "port 80: 50 failures per 1000"),
	   "5 W beside 95 R: 50 per 1000, the stats' arithmetic (%s)", whys[0]);
	ok(a.n == 2 && a.p[1].client && a.p[1].seen == 0,
	   "a P record is its peer port's, apart (one task: not in a baseline)");
	for (i = 0; i < 100; i++)
		task('R', 80, 1000);
	ok(interval(whys, 4) == 0 && !a.p[0].failing,
	   "the next interval, no W: no anomaly, the port no longer failing");
	anomaly_free(&a);
	anomaly_init(&a, 4, 50);
	for (i = 0; i < ANOMALY_PORTS + 2; i++)
		task('R', (uint16_t)(i + 1), 1000);
	ok(a.untracked == 2, "records of ports past %d: counted, not followed",
	   ANOMALY_PORTS);
	anomaly_free(&a);
}

/*
 * The recorder's trigger: intervals of 200 tasks of 5 ms with two of 8 ms
 * (the p99 5 ms's bucket), then tasks past it, within it, and W bursts.
 */
static void test_task_hits(void)
{
	char whys[4][256];
	int i, k, hits = 0;

	anomaly_init(&a, 4, 50);
	for (i = 0; i < 200; i++)
		hits += hit('R', 8080, i % 100 ? 5000 : 8000);
	ok(!hits, "the first interval: no p99 yet, no task an anomaly");
	interval(whys, 4);
	ok(a.p[0].p99_us >= 4900 && a.p[0].p99_us <= 5100,
	   "its p99 kept: %llu us", (unsigned long long)a.p[0].p99_us);
	ok(!hit('R', 8080, 4 * a.p[0].p99_us),
	   "a task 4 times it (the factor): none");
	ok(hit('R', 8080, 4 * a.p[0].p99_us + 1), "just past 4 times it: an anomaly");
	ok(hit('R', 8080, 205000) && strstr(why, "port 8080: a task of 205000 us, 40.8 times") &&
	   strstr(why, "p99 of 5024 us"), "205 ms: an anomaly (%s)", why);
	anomaly_init(&a, 1.5, 50);
	for (i = 0; i < 20; i++)
		hit('R', 80, 100);
	interval(whys, 4);
	ok(!hit('R', 80, 100 + ANOMALY_MIN_JUMP_US - 1) && hit('R', 80, 100 + ANOMALY_MIN_JUMP_US),
	   "past 1.5 times a p99 of 100 us: an anomaly only %d us above it", ANOMALY_MIN_JUMP_US);
	anomaly_init(&a, 4, 50);
	for (i = 0; i < 200; i++)
		hit('R', 8080, i % 100 ? 5000 : 8000);
	interval(whys, 4);
	ok(!hit('P', 8080, 205000), "peer port 8080 has no p99 of its own yet");
	for (k = 0; k < 3; k++) {
		for (i = 0; i < 5; i++)
			hit('R', 8080, 300000);
		interval(whys, 4);
	}
	ok(a.p[0].p99_us >= 5000 && a.p[0].p99_us < 6000,
	   "intervals of fewer than %d tasks leave the p99 as it was (%llu us)",
	   ANOMALY_MIN_TASKS, (unsigned long long)a.p[0].p99_us);
	anomaly_init(&a, 4, 50);
	for (i = 0; i < 38; i++)
		hit('R', 80, 1000);
	ok(!hit('W', 80, 1000), "1 W of 39 tasks ended: 25 per 1000, none");
	ok(hit('W', 80, 1000) && strstr(why, "port 80: 2 failures of 40 tasks"),
	   "the W that brings 40 tasks to 50 per 1000: a burst (%s)", why);
	ok(!hit('W', 80, 1000) && !hit('W', 80, 1000),
	   "the same interval's next W: none (one burst an interval)");
	interval(whys, 4);
	for (i = 0; i < 38; i++)
		hit('R', 80, 1000);
	ok(!hit('W', 80, 1000) && !hit('W', 80, 1000),
	   "the next interval, still failing: none, as the stats' trigger");
	interval(whys, 4);
	for (i = 0; i < 100; i++)
		hit('R', 80, 1000);
	interval(whys, 4);
	for (i = 0; i < 38; i++)
		hit('R', 80, 1000);
	hit('W', 80, 1000);
	ok(hit('W', 80, 1000), "below the mark for an interval, then at it: a burst again");
	interval(whys, 4);
	for (i = 0; i < 100; i++)
		hit('R', 80, 1000);
	interval(whys, 4);
	for (i = 0; i < 5; i++)
		hits += hit('W', 80, 1000);
	ok(!hits, "a burst's first 5 W at an interval's end: too few tasks ended to ask");
	interval(whys, 4);
	for (i = 0; i < 9; i++)
		hits += hit('W', 80, 1000);
	ok(!hits && hit('W', 80, 1000) && strstr(why, "10 failures of 10 tasks"),
	   "its next 10 in the next interval: a burst, the interval of 5 not counted as at the mark (%s)",
	   why);
	anomaly_init(&a, 4, 0);
	for (i = 0; i < 20; i++)
		hits += hit('W', 81, 1000);
	ok(!hits, "trigger-fail 0: no burst");
	anomaly_free(&a);
}

int main(void)
{
	test_cases();
	test_model();
	test_records();
	test_task_hits();
	return done_testing();
}
