// SPDX-License-Identifier: GPL-2.0
/* Anomalies in the stats: see anomaly.h. */
#include "anomaly.h"

#include <stdio.h>
#include <string.h>

void anomaly_init(struct anomaly *a, double factor, uint64_t fail_per_1000)
{
	memset(a, 0, sizeof(*a));
	a->factor = factor;
	a->fail_per_1000 = fail_per_1000;
}

static struct anomaly_port *port_of(struct anomaly *a, uint16_t port,
				    bool client)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (a->p[i].port == port && a->p[i].client == client)
			return &a->p[i];
	if (a->n == ANOMALY_PORTS) {
		a->untracked++;
		return NULL;
	}
	a->p[a->n] = (struct anomaly_port){ .port = port, .client = client };
	return &a->p[a->n++];
}

static bool slow(const struct anomaly *a, const struct anomaly_port *p,
		 uint64_t avg, uint64_t tasks)
{
	return tasks >= ANOMALY_MIN_TASKS && p->seen >= ANOMALY_WARMUP &&
	       avg >= p->base_us + ANOMALY_MIN_JUMP_US &&
	       (double)avg > a->factor * (double)p->base_us;
}

bool anomaly_feed(struct anomaly *a, uint16_t port, bool client,
		  uint64_t avg_duration_us, uint64_t fail_per_1000,
		  uint64_t tasks, char *why, size_t len)
{
	struct anomaly_port *p = port_of(a, port, client);
	bool was_failing, is_slow;
	uint64_t base;

	if (!p)
		return false;
	base = p->base_us;
	is_slow = slow(a, p, avg_duration_us, tasks);
	if (tasks >= ANOMALY_MIN_TASKS) {
		/* the first interval sets it; then each weighs 1/8 */
		p->base_us = p->seen ? p->base_us - p->base_us / 8 +
				       avg_duration_us / 8 : avg_duration_us;
		p->seen++;
	}
	was_failing = p->failing;
	p->failing = a->fail_per_1000 && fail_per_1000 >= a->fail_per_1000;
	if (is_slow) {
		snprintf(why, len, "port %s%u: average duration %llu us over %llu tasks, %.1f times its baseline of %llu us",
			 client ? "P" : "", port,
			 (unsigned long long)avg_duration_us,
			 (unsigned long long)tasks,
			 (double)avg_duration_us / (double)(base ? base : 1),
			 (unsigned long long)base);
		return true;
	}
	if (p->failing && !was_failing) {
		snprintf(why, len, "port %s%u: %llu failures per 1000 tasks (the mark: %llu)",
			 client ? "P" : "", port,
			 (unsigned long long)fail_per_1000,
			 (unsigned long long)a->fail_per_1000);
		return true;
	}
	return false;
}
