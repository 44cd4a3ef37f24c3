// SPDX-License-Identifier: GPL-2.0
/* Anomalies in the stats or the records: see anomaly.h. */
#include "anomaly.h"

#include <stdio.h>
#include <string.h>

void anomaly_init(struct anomaly *a, double factor, uint64_t fail_per_1000)
{
	memset(a, 0, sizeof(*a));
	a->factor = factor;
	a->fail_per_1000 = fail_per_1000;
}

/*
 * The port's entry, made when first seen: a lookup a record (tcprt
 * agent), so by a hash of (port, role), not a scan of up to 1024.
 */
static struct anomaly_port *port_of(struct anomaly *a, uint16_t port,
				    bool client)
{
	uint32_t key = port | (uint32_t)client << 16;
	size_t h = (key * 2654435761u) % ANOMALY_SLOTS;
	struct anomaly_port *p;

	for (; a->slot[h]; h = (h + 1) % ANOMALY_SLOTS) {
		p = &a->p[a->slot[h] - 1];
		if (p->port == port && p->client == client)
			return p;
	}
	if (a->n == ANOMALY_PORTS) {
		a->untracked++;
		return NULL;
	}
	a->p[a->n] = (struct anomaly_port){ .port = port, .client = client };
	a->n++;
	a->slot[h] = (uint16_t)a->n;
	return &a->p[a->n - 1];
}

static bool slow(const struct anomaly *a, const struct anomaly_port *p,
		 uint64_t d, uint64_t tasks)
{
	return tasks >= ANOMALY_MIN_TASKS && p->seen >= ANOMALY_WARMUP &&
	       d >= p->base_us + ANOMALY_MIN_JUMP_US &&
	       (double)d > a->factor * (double)p->base_us;
}

/* One interval of @p: @what its duration measure ("average", "p99"). */
static bool feed(struct anomaly *a, struct anomaly_port *p, const char *what,
		 uint64_t duration_us, uint64_t fail_per_1000,
		 uint64_t tasks, char *why, size_t len)
{
	bool client = p->client, was_failing, is_slow;
	uint16_t port = p->port;
	uint64_t base;

	base = p->base_us;
	is_slow = slow(a, p, duration_us, tasks);
	if (tasks >= ANOMALY_MIN_TASKS) {
		/* the first interval sets it; then each weighs 1/8 */
		p->base_us = p->seen ? p->base_us - p->base_us / 8 +
				       duration_us / 8 : duration_us;
		p->seen++;
	}
	was_failing = p->failing;
	p->failing = a->fail_per_1000 && fail_per_1000 >= a->fail_per_1000;
	if (is_slow) {
		snprintf(why, len, "port %s%u: %s duration %llu us over %llu tasks, %.1f times its baseline of %llu us",
			 client ? "P" : "", port, what,
			 (unsigned long long)duration_us,
			 (unsigned long long)tasks,
			 (double)duration_us / (double)(base ? base : 1),
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

bool anomaly_feed(struct anomaly *a, uint16_t port, bool client,
		  uint64_t avg_duration_us, uint64_t fail_per_1000,
		  uint64_t tasks, char *why, size_t len)
{
	struct anomaly_port *p = port_of(a, port, client);

	return p && feed(a, p, "average", avg_duration_us, fail_per_1000,
			 tasks, why, len);
}

/*
 * One record into its port's interval: its port (NULL: not followed) and
 * in *@d its duration (0: a W, or none on the line).
 */
static struct anomaly_port *port_task(struct anomaly *a,
				      const struct record *r, uint64_t *d)
{
	struct anomaly_port *p;

	*d = 0;
	if (r->type != REC_R && r->type != REC_P && r->type != REC_W)
		return NULL;
	p = port_of(a, r->port, r->role == ROLE_CLIENT);
	if (!p)
		return NULL;
	if (r->type == REC_W)
		p->failed++;
	else if (rec_metric(r, M_DURATION, d))
		hist_add(&p->h, *d);
	return p;
}

void anomaly_task(struct anomaly *a, const struct record *r)
{
	uint64_t d;

	port_task(a, r, &d);
}

/* @p's interval at the mark, of ANOMALY_MIN_TASKS tasks ended or more. */
static bool at_mark(const struct anomaly *a, const struct anomaly_port *p)
{
	uint64_t ended = p->h.n + p->failed;

	return a->fail_per_1000 && ended >= ANOMALY_MIN_TASKS &&
	       p->failed * 1000 / ended >= a->fail_per_1000;
}

/*
 * The W that brings @p's interval to the mark, after one below it: the
 * last of enough tasks, so that a burst begun in an interval's last
 * moments (too few tasks there to ask) still asks in the next.
 */
static bool burst(const struct anomaly *a, const struct anomaly_port *p)
{
	return !p->burst_failing && !p->burst && at_mark(a, p);
}

bool anomaly_task_hit(struct anomaly *a, const struct record *r, char *why,
		      size_t len)
{
	const char *peer;
	struct anomaly_port *p;
	uint64_t d;

	p = port_task(a, r, &d);
	if (!p)
		return false;
	peer = p->client ? "P" : "";
	if (r->type == REC_W) {
		if (!burst(a, p))
			return false;
		p->burst = true;
		snprintf(why, len, "port %s%u: %llu failures of %llu tasks ended this interval (the mark: %llu per 1000)",
			 peer, p->port, (unsigned long long)p->failed,
			 (unsigned long long)(p->h.n + p->failed),
			 (unsigned long long)a->fail_per_1000);
		return true;
	}
	/* d: 0 when the line had no duration */
	if (!p->p99_us || d < p->p99_us + ANOMALY_MIN_JUMP_US ||
	    (double)d <= a->factor * (double)p->p99_us)
		return false;
	snprintf(why, len, "port %s%u: a task of %llu us, %.1f times the port's p99 of %llu us",
		 peer, p->port, (unsigned long long)d,
		 (double)d / (double)p->p99_us, (unsigned long long)p->p99_us);
	return true;
}

bool anomaly_interval(struct anomaly *a, size_t *i, char *why, size_t len)
{
	while (*i < a->n) {
		struct anomaly_port *p = &a->p[(*i)++];
		uint64_t tasks = p->h.n, ended = tasks + p->failed;
		uint64_t p99 = hist_quantile(&p->h, 990);
		bool hit;

		/* the stats' integer arithmetic: docs/records.md */
		hit = feed(a, p, "p99", p99,
			   ended ? p->failed * 1000 / ended : 0, tasks, why, len);
		if (tasks >= ANOMALY_MIN_TASKS)
			p->p99_us = p99;
		if (ended >= ANOMALY_MIN_TASKS)
			p->burst_failing = at_mark(a, p);
		hist_reset(&p->h);
		p->failed = 0;
		p->burst = false;
		if (hit)
			return true;
	}
	return false;
}

void anomaly_free(struct anomaly *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		hist_reset(&a->p[i].h);
}
