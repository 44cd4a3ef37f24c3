/* SPDX-License-Identifier: GPL-2.0 */
/* A minimal TAP producer for the unit tests: ok(cond, "description"). */
#ifndef TCPRT_TAP_H
#define TCPRT_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3), unused))
static int ok(int pass, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", pass ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!pass)
		tap_failed++;
	return pass;
}

__attribute__((format(printf, 1, 2), unused))
static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

__attribute__((unused))
static int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/* Deterministic pseudo-random numbers (xorshift64*). */
static unsigned long long tap_rng = 0x9e3779b97f4a7c15ULL;

__attribute__((unused))
static unsigned long long rnd(void)
{
	tap_rng ^= tap_rng >> 12;
	tap_rng ^= tap_rng << 25;
	tap_rng ^= tap_rng >> 27;
	return tap_rng * 0x2545f4914f6cdd1dULL;
}

#endif
