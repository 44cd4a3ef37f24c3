// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt summary: per window, per port and record type, the count, the rate
 * and p50/p90/p99/max of the times of the tasks.
 *
 * Windows are aligned on multiples of the window length (Unix time) and
 * hold the records that started in them.  The first window is the first
 * one that begins at or after the first record: the time before it was not
 * observed in full (warm-up), so its records are not reported.  A window
 * is reported once it is complete - the horizon (see cmd_summary()) has
 * passed its end - and its rates divide by the window length, never by the
 * span between its first and last record.  The window still open at the end
 * is not reported.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "hist.h"
#include "input.h"
#include "merge.h"
#include "series.h"
#include "util.h"

static const char help[] =
"usage: tcprt summary [--port P] [--window SECONDS] [--follow] [--dir DIR]\n"
"                     [--reorder SECONDS]\n"
"\n"
"Per window of SECONDS (default 60), per service port and task type (R W N\n"
"P): the count, the rate (count / window length) and p50/p90/p99/max of\n"
"duration, process time (P: service time), upload time, download time\n"
"(duration - upload - process; P: response time) and min RTT, in\n"
"microseconds.  E records (connection ends) are not summarised.  A record\n"
"whose line lacks a time (the vendor's older P) is left out of its\n"
"percentiles, not of the count.\n"
"\n"
"Windows are aligned on multiples of SECONDS and hold the tasks that started\n"
"in them.  A window is reported only when it was observed for its whole\n"
"length: the first one starts at the first multiple after the first record\n"
"(earlier records are a warm-up), and one that has not ended yet - is not\n"
"past the horizon - is not reported.  The horizon is the clock minus the\n"
"reordering window when reading tcp_rt's files, and the end of the last\n"
"task for a --dir of recorded files.  Percentiles come from log-linear\n"
"histograms (bounded memory) within 0.79 % of the exact value.\n"
"\n"
"  -p, --port P        only service port P\n"
"  -w, --window S      window length, seconds (default 60)\n"
"  -f, --follow        keep reading; print each window as it completes\n"
"  -d, --dir DIR       read recorded rt-network-log* files of DIR\n"
"  -r, --reorder S     reordering window of the merge, seconds (default 5)\n"
"  -h, --help          this text\n";

#define DEFAULT_WINDOW_US	(60 * USEC_PER_SEC)

static const unsigned int quantiles[] = { 500, 900, 990, 1000 };

struct win_val {
	uint64_t count;
	struct hist h[M_NMETRICS];
};

struct summary {
	uint64_t window_us;
	int port;		/* -1: all */
	bool started;
	bool closed_any;	/* a window has been closed: earlier is late */
	uint64_t cur;		/* start of the open window */
	uint64_t in_cur;	/* records in it */
	struct series_table t;
	uint64_t empty_from, empty_n;	/* a run of windows without records */
	uint64_t warmup, late, max_end;
	struct merge merge;
};

static void free_val(void *v)
{
	struct win_val *w = v;
	unsigned int m;

	for (m = 0; m < M_NMETRICS; m++)
		hist_reset(&w->h[m]);
}

static void print_span(uint64_t from, uint64_t to)
{
	char a[32], b[32];

	fmt_time(a, sizeof(a), from, false);
	fmt_time(b, sizeof(b), to, false);
	printf("%s .. %s", a, b);
}

static void print_empty_run(struct summary *s)
{
	if (!s->empty_n)
		return;
	printf("# window ");
	print_span(s->empty_from, s->empty_from + s->empty_n * s->window_us);
	printf(": no records (%llu window%s)\n\n", (unsigned long long)s->empty_n,
	       s->empty_n == 1 ? "" : "s");
	s->empty_n = 0;
}

static void print_window(struct summary *s)
{
	uint64_t w = s->window_us;
	size_t i;

	print_empty_run(s);
	printf("# window ");
	print_span(s->cur, s->cur + w);
	if (w % USEC_PER_SEC)
		printf(" (%llu.%06llu s)", (unsigned long long)(w / USEC_PER_SEC),
		       (unsigned long long)(w % USEC_PER_SEC));
	else
		printf(" (%llu s)", (unsigned long long)(w / USEC_PER_SEC));
	printf("; times in microseconds\n");
	printf("%-6s %-6s %-4s %8s %10s  %-9s %9s %9s %9s %9s\n", "PORT", "ROLE",
	       "TYPE", "COUNT", "RATE/s", "METRIC", "P50", "P90", "P99", "MAX");
	for (i = 0; i < s->t.n; i++) {
		const struct series *se = &s->t.s[i];
		const struct win_val *v = se->val;
		char port[8];
		/* rate = count / window, in thousandths */
		uint64_t rate = (v->count * 1000 * USEC_PER_SEC + w / 2) / w;
		unsigned int m, q;

		if (se->port == SERIES_OTHER)
			snprintf(port, sizeof(port), "other");
		else
			snprintf(port, sizeof(port), "%u", se->port);
		for (m = 0; m < M_NMETRICS; m++) {
			if (!v->h[m].n)
				continue;
			printf("%-6s %-6s %-4s %8llu %6llu.%03llu  %-9s", port,
			       role_name(se->role), rec_desc[se->type].name,
			       (unsigned long long)v->count,
			       (unsigned long long)(rate / 1000),
			       (unsigned long long)(rate % 1000), metric_name[m]);
			for (q = 0; q < sizeof(quantiles) / sizeof(quantiles[0]); q++)
				printf(" %9llu", (unsigned long long)
				       hist_quantile(&v->h[m], quantiles[q]));
			putchar('\n');
		}
	}
	putchar('\n');
	fflush(stdout);
}

/* Close the open window (it is complete) and open the next one. */
static void close_window(struct summary *s)
{
	if (s->in_cur) {
		print_window(s);
	} else {
		if (!s->empty_n)
			s->empty_from = s->cur;
		s->empty_n++;
	}
	series_free(&s->t, free_val);
	series_init(&s->t, sizeof(struct win_val), DEFAULT_MAX_PORTS);
	s->in_cur = 0;
	s->cur += s->window_us;
	s->closed_any = true;
}

/* Close every window that ends at or before @t. */
static void close_until(struct summary *s, uint64_t t)
{
	if (!s->started)
		return;
	while (s->cur + s->window_us <= t) {
		if (!s->in_cur && t - s->cur >= 2 * s->window_us) {
			/* a run of empty windows: skip it in one step */
			uint64_t n = (t - s->cur) / s->window_us - 1;

			if (!s->empty_n)
				s->empty_from = s->cur;
			s->empty_n += n;
			s->cur += n * s->window_us;
			s->closed_any = true;
			continue;
		}
		close_window(s);
	}
}

/* After the merge: records in start-time order (but for late ones). */
static void add(const struct record *r, void *arg)
{
	struct summary *s = arg;
	uint64_t t = rec_time_us(r), v;
	struct win_val *w;
	unsigned int m;

	if (!s->started) {
		s->cur = (t + s->window_us - 1) / s->window_us * s->window_us;
		s->started = true;
	}
	if (t < s->cur) {
		if (s->closed_any)
			s->late++;
		else
			s->warmup++;
		return;
	}
	close_until(s, t);
	w = series_get(&s->t, r->port, r->role, r->type);
	w->count++;
	s->in_cur++;
	for (m = 0; m < M_NMETRICS; m++)
		if (rec_metric(r, (enum metric)m, &v))
			hist_add(&w->h[m], v);
}

static void filter(const struct record *r, void *arg)
{
	struct summary *s = arg;
	uint64_t end = rec_time_us(r), d;

	/* E records time connections, not tasks: their time is the
	 * connection's start (tcp_rt) or its last task's (vendor), and
	 * their min RTT is the tasks' */
	if (!rec_is_task(r->type))
		return;
	if (s->port >= 0 && r->port != s->port)
		return;
	if (rec_metric(r, M_DURATION, &d))
		end += d;
	if (end > s->max_end)
		s->max_end = end;
	merge_push(r, &s->merge);
}

int cmd_summary(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "window", required_argument, NULL, 'w' },
		{ "follow", no_argument, NULL, 'f' },
		{ "dir", required_argument, NULL, 'd' },
		{ "reorder", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct summary s = { .window_us = DEFAULT_WINDOW_US, .port = -1 };
	uint64_t reorder = DEFAULT_REORDER_US, horizon;
	const char *dir = NULL;
	bool follow = false;
	unsigned int tick = 0;
	struct input in;
	char when[32];
	int o, st;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":p:w:fd:r:h", opts, NULL)) != -1) {
		switch (o) {
		case 'p': s.port = opt_port("summary", optarg); break;
		case 'w': s.window_us = opt_seconds("summary", "--window", optarg, false); break;
		case 'f': follow = true; break;
		case 'd': dir = optarg; break;
		case 'r': reorder = opt_seconds("summary", "--reorder", optarg, true); break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: bad_option("summary", o, argv);
		}
	}
	if (optind < argc)
		usage_error("summary", "unexpected argument '%s'", argv[optind]);

	signals_init();
	series_init(&s.t, sizeof(struct win_val), DEFAULT_MAX_PORTS);
	merge_init(&s.merge, reorder, DEFAULT_MAX_HELD, add, &s);
	st = input_open(&in, dir, false, filter, &s);
	if (st != EXIT_OK) {
		input_close(&in);
		return st;
	}
	input_read(&in);
	while (follow && !stop_requested) {
		merge_advance(&s.merge, now_us());
		close_until(&s, now_us() - reorder);
		sleep_us(DEFAULT_POLL_US);
		if (++tick % 5 == 0)
			input_rescan(&in);
		input_read(&in);
	}
	input_finish(&in);
	merge_flush(&s.merge);
	/* recorded files: observed until the last task ended */
	horizon = dir && !follow ? s.max_end : now_us() - reorder;
	close_until(&s, horizon);
	print_empty_run(&s);
	fflush(stdout);

	input_report(&in);
	if (!s.started) {
		warnx_("no records");
	} else {
		if (s.warmup)
			warnx_("%llu record%s before the first complete window not reported (warm-up)",
			       (unsigned long long)s.warmup, s.warmup == 1 ? "" : "s");
		if (s.in_cur) {
			fmt_time(when, sizeof(when), s.cur, false);
			warnx_("%llu record%s of the window starting %s not reported: the window is not complete",
			       (unsigned long long)s.in_cur, s.in_cur == 1 ? "" : "s",
			       when);
		}
		if (s.late)
			warnx_("%llu record%s arrived after %s window had been reported: not counted",
			       (unsigned long long)s.late,
			       s.late == 1 ? "" : "s", s.late == 1 ? "its" : "their");
	}
	input_close(&in);
	merge_free(&s.merge);
	series_free(&s.t, free_val);
	return EXIT_OK;
}
