// SPDX-License-Identifier: GPL-2.0
/*
 * anomaly.c against a model of anomaly.h's rules written here in floating
 * point, on random stats, and on the cases the rules are for: a jump over
 * few tasks or before the warm-up is none; a lasting new level triggers
 * once, then becomes the baseline; failures trigger when they reach the
 * mark, not while they stay there; a peer port is not its local namesake.
 */
#include <math.h>
#include <string.h>

#include "anomaly.h"
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

int main(void)
{
	test_cases();
	test_model();
	return done_testing();
}
