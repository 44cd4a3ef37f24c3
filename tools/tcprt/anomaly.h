/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tcprt series --every --trigger takes for an anomaly in the stats
 * (rt-network-stats, docs/records.md), one port's interval at a time:
 *
 * - slow: the interval's avg_duration is more than @factor times the
 *   port's baseline and at least ANOMALY_MIN_JUMP_US above it, over at
 *   least ANOMALY_MIN_TASKS tasks, once the baseline has
 *   ANOMALY_WARMUP intervals of ANOMALY_MIN_TASKS tasks or more.  The
 *   baseline: an average of those intervals' avg_duration, each new one
 *   weighing 1/8, anomalous or not (a lasting new level becomes the
 *   baseline instead of triggering for ever).
 * - failures: fail_per_1000 reaches @fail_per_1000 after an interval of
 *   the port below it (a burst, not a standing level).
 *
 * The stats carry averages, not percentiles: a jump of the p99 alone,
 * with the average unmoved, is not seen there.  tcprt agent's [series]
 * is handed the records, so it feeds the detector from them instead
 * (anomaly_task(), anomaly_interval()): intervals of its trigger-interval
 * (ANOMALY_INTERVAL_S by default) by the records' arrival, as the
 * module's stats count a task in the interval it ended in, and the
 * interval's p99 duration (the log-linear histograms of hist.h, the live
 * windows') in place of the average; the failures are the stats' (W per
 * 1000 of R + W), the tasks R (a peer port's, P).
 *
 * With the module's recorder (tcprt agent's [series] recorder and
 * trigger), a task is judged at once, not its interval
 * (anomaly_task_hit()): an R or P more than @factor times its port's p99
 * of the last interval of ANOMALY_MIN_TASKS tasks or more, and at least
 * ANOMALY_MIN_JUMP_US above it (a task just past the p99 is one in a
 * hundred, not an anomaly), or the W that brings its port's interval
 * (ANOMALY_MIN_TASKS tasks ended or more) to the failure mark after an
 * interval below it (the last of that many tasks ended: a burst begun at
 * an interval's end asks in the next), once an interval; the recorder's
 * window around that task is what the caller asks for.
 */
#ifndef TCPRT_ANOMALY_H
#define TCPRT_ANOMALY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "record.h"

#define ANOMALY_PORTS		1024
#define ANOMALY_SLOTS		2048	/* the ports' index: a power of 2 */
#define ANOMALY_MIN_TASKS	10
#define ANOMALY_WARMUP		3
#define ANOMALY_MIN_JUMP_US	1000
#define ANOMALY_INTERVAL_S	10	/* from records: an interval, by default */

struct anomaly_port {
	uint16_t port;
	bool client;
	unsigned int seen;	/* intervals in the baseline */
	uint64_t base_us;	/* the baseline's avg_duration */
	bool failing;		/* the last interval was at or past the mark */
	struct hist h;		/* from records: the interval's durations */
	uint64_t failed;	/* from records: the interval's W */
	uint64_t p99_us;	/* from records: the last interval's p99 of
				 * ANOMALY_MIN_TASKS tasks or more; 0: none yet */
	bool burst;		/* from records: this interval's burst taken */
	bool burst_failing;	/* from records: the last interval of
				 * ANOMALY_MIN_TASKS tasks ended or more was
				 * at the mark (a burst then is no new one) */
};

struct anomaly {
	double factor;
	uint64_t fail_per_1000;
	struct anomaly_port p[ANOMALY_PORTS];
	size_t n;
	/* p[]'s index by port and role, open addressing: i + 1, 0 free */
	uint16_t slot[ANOMALY_SLOTS];
	uint64_t untracked;	/* lines (records) of ports past ANOMALY_PORTS */
};

void anomaly_init(struct anomaly *a, double factor, uint64_t fail_per_1000);

/*
 * One stats line of @port (@client: a peer port): true when it is an
 * anomaly, with @why (one sentence) saying which.
 */
bool anomaly_feed(struct anomaly *a, uint16_t port, bool client,
		  uint64_t avg_duration_us, uint64_t fail_per_1000,
		  uint64_t tasks, char *why, size_t len);

/* One record into its port's interval: R, P (their duration) and W. */
void anomaly_task(struct anomaly *a, const struct record *r);

/*
 * One record into its port's interval, as anomaly_task(), and whether
 * that task is an anomaly on its own (above): true with @why saying
 * which.
 */
bool anomaly_task_hit(struct anomaly *a, const struct record *r, char *why,
		      size_t len);

/*
 * The interval's end, from the port at *@i on: each port's interval fed
 * as a stats line would be, with its p99 duration, and emptied; true at
 * an anomaly (@why says which) with *@i past its port, to be called
 * again from there; false once every port is done.
 */
bool anomaly_interval(struct anomaly *a, size_t *i, char *why, size_t len);

/* What anomaly_task() took (the histograms' memory). */
void anomaly_free(struct anomaly *a);

#endif
