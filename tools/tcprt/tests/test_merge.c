// SPDX-License-Identifier: GPL-2.0
/*
 * Merge tests: records pushed out of order come out in start-time order
 * when they are within the reordering window; later ones are released at
 * once and counted; the number held is bounded.  Then per-CPU files
 * written out of order, as tcp_rt writes them (each file in end-time
 * order), read through input.c and merged.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input.h"
#include "merge.h"
#include "tap.h"

#define SEC 1000000ULL

static uint64_t out[100000], out_f0[100000];
static unsigned int nout;

static void collect(const struct record *r, void *ctx)
{
	(void)ctx;
	if (nout < sizeof(out) / sizeof(out[0])) {
		out[nout] = rec_time_us(r);
		out_f0[nout] = r->f[0];
	}
	nout++;
}

static bool sorted(void)
{
	unsigned int i;

	for (i = 1; i < nout; i++)
		if (out[i] < out[i - 1])
			return false;
	return true;
}

static struct record at(uint64_t t_us)
{
	struct record r = { .type = REC_R, .sec = t_us / SEC, .usec = t_us % SEC };

	return r;
}

static void test_window(void)
{
	struct merge m;
	struct record r;
	unsigned int i;

	/* 10000 records, each displaced by up to 4 s, window 5 s */
	nout = 0;
	merge_init(&m, 5 * SEC, 1000000, collect, NULL);
	for (i = 0; i < 10000; i++) {
		uint64_t t = 1000 * SEC + i * 1000ULL;	/* 1 ms apart */

		r = at(t - rnd() % (4 * SEC));
		merge_push(&r, &m);
	}
	ok(nout < 10000, "records are held until the window has passed (%u of 10000 out before the end)",
	   nout);
	merge_flush(&m);
	ok(nout == 10000 && sorted() && m.late == 0 && m.forced == 0,
	   "displaced by up to 4 s, window 5 s: all 10000 out, in order, none late");
	merge_free(&m);

	/* a record older than the window behind the newest: late, not lost */
	nout = 0;
	merge_init(&m, 5 * SEC, 1000000, collect, NULL);
	r = at(100 * SEC);
	merge_push(&r, &m);
	r = at(110 * SEC);
	merge_push(&r, &m);	/* releases 100 */
	r = at(90 * SEC);
	merge_push(&r, &m);	/* before 100, already out: late */
	merge_flush(&m);
	ok(nout == 3 && m.late == 1 && out[1] == 90 * SEC,
	   "a record 20 s behind with a 5 s window: printed at once, counted late");
	merge_free(&m);

	/* bounded: at most max held */
	nout = 0;
	merge_init(&m, 3600 * SEC, 100, collect, NULL);
	for (i = 0; i < 1000; i++) {
		r = at(1000 * SEC + rnd() % SEC);
		merge_push(&r, &m);
	}
	ok(m.n <= 100 && m.forced > 0 && m.forced + m.late == 900 && nout == 900,
	   "at most 100 held: %llu released early, %llu then late, all counted",
	   (unsigned long long)m.forced, (unsigned long long)m.late);
	merge_flush(&m);
	ok(nout == 1000, "flush releases the rest");
	merge_free(&m);

	/* the clock releases records when nothing newer arrives */
	nout = 0;
	merge_init(&m, 5 * SEC, 1000, collect, NULL);
	r = at(100 * SEC);
	merge_push(&r, &m);
	merge_advance(&m, 104 * SEC);
	ok(nout == 0, "clock 4 s after the start: still held");
	merge_advance(&m, 105 * SEC);
	ok(nout == 1, "clock 5 s after the start: released");
	merge_free(&m);

	/* equal start times keep their arrival order */
	nout = 0;
	merge_init(&m, SEC, 1000, collect, NULL);
	for (i = 0; i < 5; i++) {
		r = at(100 * SEC);
		r.f[0] = i;
		merge_push(&r, &m);
	}
	merge_flush(&m);
	ok(nout == 5 && out_f0[0] == 0 && out_f0[1] == 1 && out_f0[2] == 2 &&
	   out_f0[3] == 3 && out_f0[4] == 4, "equal start times keep their arrival order");
	merge_free(&m);
}

/* ---- per-CPU files ---------------------------------------------------------- */

struct task {
	uint64_t start, end;
	unsigned int cpu, conn, seq;
};

static int by_end(const void *a, const void *b)
{
	const struct task *x = a, *y = b;

	return x->end < y->end ? -1 : x->end > y->end;
}


static void collect_rec(const struct record *r, void *m)
{
	merge_push(r, m);
}

static void test_files(void)
{
	enum { NTASK = 20000, NCPU = 4 };
	static struct task t[NTASK];
	char dir[] = "/tmp/tcprt-merge.XXXXXX", path[64];
	FILE *f[NCPU];
	struct merge m;
	struct input in;
	unsigned int i, c;
	uint64_t first = 1795218000ULL * SEC;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	/* tasks start 0.5 ms apart and last up to 3 s; CPUs at random */
	for (i = 0; i < NTASK; i++) {
		t[i].start = first + i * 500ULL + rnd() % 500;
		t[i].end = t[i].start + rnd() % (3 * SEC);
		t[i].cpu = (unsigned int)(rnd() % NCPU);
		t[i].conn = i;
	}
	/* each CPU's file in the order tcp_rt writes: task end */
	qsort(t, NTASK, sizeof(t[0]), by_end);
	for (c = 0; c < NCPU; c++) {
		snprintf(path, sizeof(path), "%s/rt-network-log%u", dir, c);
		f[c] = fopen(path, "w");
	}
	for (i = 0; i < NTASK; i++)
		fprintf(f[t[i].cpu],
			"V6 R %llu %06llu 10.0.0.%u:%u 10.0.0.1:80 100 %llu 50 0 1 10 0 100 0 1448\n",
			(unsigned long long)(t[i].start / SEC),
			(unsigned long long)(t[i].start % SEC), 1 + t[i].conn % 200,
			1024 + t[i].conn % 60000,
			(unsigned long long)(t[i].end - t[i].start));
	for (c = 0; c < NCPU; c++)
		fclose(f[c]);

	nout = 0;
	merge_init(&m, 5 * SEC, 262144, collect, NULL);
	ok(input_open(&in, dir, false, INPUT_AUTO, collect_rec, &m) == 0, "four per-CPU files open");
	input_read(&in);
	input_finish(&in);
	merge_flush(&m);
	ok(in.bad == 0 && in.records == NTASK, "%u records read", NTASK);
	ok(nout == NTASK && sorted() && m.late == 0,
	   "files in end order, tasks up to 3 s, window 5 s: merged in start order, none late");
	input_close(&in);
	merge_free(&m);

	/* the same files, window 1 s: tasks longer than that arrive late */
	nout = 0;
	merge_init(&m, 1 * SEC, 262144, collect, NULL);
	input_open(&in, dir, false, INPUT_AUTO, collect_rec, &m);
	input_read(&in);
	input_finish(&in);
	merge_flush(&m);
	ok(nout == NTASK && m.late > 0,
	   "window 1 s: nothing lost, %llu records out of order and counted late",
	   (unsigned long long)m.late);
	input_close(&in);
	merge_free(&m);

	for (c = 0; c < NCPU; c++) {
		snprintf(path, sizeof(path), "%s/rt-network-log%u", dir, c);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	test_window();
	test_files();
	return done_testing();
}
