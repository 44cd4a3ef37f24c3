// SPDX-License-Identifier: GPL-2.0
/*
 * tools/bench/anomaly_feed: what tcprt agent's [series] trigger costs a
 * record - the detector's anomaly_task() (a port's entry by hash, its
 * histogram's add) - on the records of tools/bench/agent's logs.
 * [series] cannot run in tools/bench/agent itself: it drives the
 * module's sampling runs, so the agent refuses it on recorded logs.
 *
 *   anomaly_feed LOG...
 *
 * Lines are parsed in batches of 10,000 outside the timing; the feed of
 * each batch is timed (CLOCK_PROCESS_CPUTIME_ID), an interval's end (every
 * port's p99 taken, as at each trigger-interval) every 100,000 records.
 * Prints the records fed and the CPU nanoseconds a record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anomaly.h"
#include "parse.h"

#define BATCH		10000
#define PER_INTERVAL	100000

static struct anomaly a;
static struct record batch[BATCH];

static double cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The batch fed, timed; an interval closed when its records are in. */
static double feed(size_t n, unsigned long long *fed)
{
	double t0 = cpu_ns();
	char why[256];
	size_t i, k;

	for (i = 0; i < n; i++) {
		anomaly_task(&a, &batch[i]);
		if (++*fed % PER_INTERVAL == 0) {
			k = 0;
			while (anomaly_interval(&a, &k, why, sizeof(why)))
				;
		}
	}
	return cpu_ns() - t0;
}

int main(int argc, char **argv)
{
	char line[4096], why[PARSE_WHY_MAX];
	unsigned long long fed = 0;
	double ns = 0;
	size_t n = 0;
	int f;

	if (argc < 2) {
		fprintf(stderr, "usage: anomaly_feed LOG...\n");
		return 2;
	}
	anomaly_init(&a, 4, 50);
	for (f = 1; f < argc; f++) {
		FILE *in = fopen(argv[f], "r");

		if (!in) {
			perror(argv[f]);
			return 1;
		}
		while (fgets(line, sizeof(line), in)) {
			if (!parse_log_line(line, strcspn(line, "\n"), &batch[n], why))
				continue;
			if (++n == BATCH) {
				ns += feed(n, &fed);
				n = 0;
			}
		}
		fclose(in);
	}
	ns += feed(n, &fed);
	anomaly_free(&a);
	printf("%llu records, %.1f ns CPU a record, %zu ports\n", fed,
	       fed ? ns / (double)fed : 0, a.n);
	return 0;
}
