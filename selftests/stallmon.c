// SPDX-License-Identifier: GPL-2.0
/*
 * stallmon - when a CPU could not run anything for a while: the guest's
 * own stalls, as a test's independent truth for how slow the machine was.
 *
 *   stallmon --out F [--period-us P] [--threshold-us T]
 *
 * One thread per CPU it may run on, pinned there, SCHED_FIFO at the top
 * priority, wakes every P us (1000) on an absolute CLOCK_MONOTONIC grid.
 * A wake-up T us (2000) or more late means that CPU ran nothing else for
 * that long: the vCPU was not scheduled by the host (TCG's translation
 * flushes, the host's other work), or the kernel ran without preemption
 * (a softirq, a long critical section).  Each such stall is a line of F,
 * "stall CPU START END": realtime microseconds, as a packet capture's,
 * from the wake-up that was due to the one that came.
 * F's first line, "# stallmon cpus=N period_us=P threshold_us=T", is
 * written once every thread runs at its priority, pinned; SIGTERM or
 * SIGINT ends it with exit 0.  Any failure to set up exits 1, saying what.
 *
 * What a stall delays (a packet between TCP and the capture's tap, a
 * request between the tap and TCP) a test may not hold to the wire's
 * time; tcp_rt_oracle.py --stalls F excuses a time off by no more than
 * the stalls around it (selftests/oracle/README).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long period_us = 1000;
static long threshold_us = 2000;
static int out_fd = -1;
static pthread_barrier_t started;

static long long ts_us(const struct timespec *ts)
{
	return ts->tv_sec * 1000000LL + ts->tv_nsec / 1000;
}

static void ts_add_us(struct timespec *ts, long us)
{
	ts->tv_nsec += us * 1000L;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

static void die(const char *what, int err)
{
	fprintf(stderr, "stallmon: %s: %s\n", what, strerror(err));
	exit(1);
}

/* The stall as one line, one write(): lines of several CPUs never mix. */
static void report(int cpu, long long late_us)
{
	struct timespec real;
	char line[96];
	int n;

	clock_gettime(CLOCK_REALTIME, &real);
	n = snprintf(line, sizeof(line), "stall %d %lld %lld\n", cpu,
		     ts_us(&real) - late_us, ts_us(&real));
	if (write(out_fd, line, n) != n)
		die("write", errno);
}

static void *watch(void *arg)
{
	int cpu = (int)(long)arg, err;
	struct sched_param sp = { .sched_priority = sched_get_priority_max(SCHED_FIFO) };
	struct timespec next, now;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	err = pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	if (err)
		die("pinning a thread", err);
	err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err)
		die("SCHED_FIFO", err);
	pthread_barrier_wait(&started);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		long long late;

		ts_add_us(&next, period_us);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		clock_gettime(CLOCK_MONOTONIC, &now);
		late = ts_us(&now) - ts_us(&next);
		if (late >= threshold_us) {
			report(cpu, late);
			next = now;	/* the grid starts again after a stall */
		}
	}
	return NULL;
}

static long parse_us(const char *opt, const char *arg)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*arg == '\0' || *end != '\0' || v <= 0 || v > 1000000) {
		fprintf(stderr, "stallmon: %s %s: not a number of us in 1..1000000\n",
			opt, arg);
		exit(1);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "period-us", required_argument, NULL, 'p' },
		{ "threshold-us", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	const char *out = NULL;
	char header[96];
	cpu_set_t cpus;
	sigset_t stop;
	int c, n, sig, err;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'p':
			period_us = parse_us("--period-us", optarg);
			break;
		case 't':
			threshold_us = parse_us("--threshold-us", optarg);
			break;
		default:
			return 1;
		}
	}
	if (!out || optind != argc) {
		fprintf(stderr, "usage: stallmon --out F [--period-us P] [--threshold-us T]\n");
		return 1;
	}
	out_fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (out_fd < 0)
		die(out, errno);
	/* the threads inherit the mask: only sigwait() below takes a stop */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		die("sched_getaffinity", errno);
	n = CPU_COUNT(&cpus);
	pthread_barrier_init(&started, NULL, n + 1);
	for (c = 0; c < CPU_SETSIZE; c++) {
		pthread_t t;

		if (!CPU_ISSET(c, &cpus))
			continue;
		err = pthread_create(&t, NULL, watch, (void *)(long)c);
		if (err)
			die("pthread_create", err);
	}
	pthread_barrier_wait(&started);
	c = snprintf(header, sizeof(header),
		     "# stallmon cpus=%d period_us=%ld threshold_us=%ld\n",
		     n, period_us, threshold_us);
	if (write(out_fd, header, c) != c)
		die("write", errno);
	sigwait(&stop, &sig);
	return 0;
}
