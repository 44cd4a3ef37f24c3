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
 * with the average unmoved, is not seen here (tcprt summary's
 * percentiles need the records, which tcprt ship consumes).
 */
#ifndef TCPRT_ANOMALY_H
#define TCPRT_ANOMALY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ANOMALY_PORTS		1024
#define ANOMALY_MIN_TASKS	10
#define ANOMALY_WARMUP		3
#define ANOMALY_MIN_JUMP_US	1000

struct anomaly_port {
	uint16_t port;
	bool client;
	unsigned int seen;	/* intervals in the baseline */
	uint64_t base_us;	/* the baseline's avg_duration */
	bool failing;		/* the last interval was at or past the mark */
};

struct anomaly {
	double factor;
	uint64_t fail_per_1000;
	struct anomaly_port p[ANOMALY_PORTS];
	size_t n;
	uint64_t untracked;	/* lines of ports past ANOMALY_PORTS */
};

void anomaly_init(struct anomaly *a, double factor, uint64_t fail_per_1000);

/*
 * One stats line of @port (@client: a peer port): true when it is an
 * anomaly, with @why (one sentence) saying which.
 */
bool anomaly_feed(struct anomaly *a, uint16_t port, bool client,
		  uint64_t avg_duration_us, uint64_t fail_per_1000,
		  uint64_t tasks, char *why, size_t len);

#endif
