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
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakdown.h"
#include "cmd.h"
#include "container.h"
#include "hist.h"
#include "input.h"
#include "merge.h"
#include "series.h"
#include "util.h"

static const char help[] =
"usage: tcprt summary [--port P] [--netns N] [--container ID]\n"
"                     [--by port|container|netns|peer|peer/24|peer/64]\n"
"                     [--window SECONDS] [--follow] [--dir DIR] [--input-format F]\n"
"                     [--reorder SECONDS] [--plot FILE.png]\n"
"\n"
"Per window of SECONDS (default 60), per service port (or what --by says)\n"
"and task type (R W N P): the count, the rate (count / window length) and\n"
"p50/p90/p99/max of duration, process time (P: service time), upload\n"
"time, download time (duration - upload - process; P: response time) and\n"
"min RTT, in microseconds.  E records (connection ends) are not\n"
"summarised.  A record whose line lacks a time (the vendor's older P) is\n"
"left out of its percentiles, not of the count.\n"
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
"Where the time goes: when R or P records carry tcp_rt's time breakdown\n"
"(log_ext rq_wait,app,sq_wait,rwnd_limited,sndbuf_limited,app_limited), a\n"
"block per row follows the table.  Percentiles of parts do not add up, so\n"
"each line takes the tasks of a band - p50: process time in [p50, p90),\n"
"p90: [p90, p99), p99: [p99, max] - and cuts the percentile in proportion\n"
"to the parts' sums over them, rounded so that the parts printed add up to\n"
"the total printed:\n"
"  p99 process 180.2 ms = rq_wait 150.1 + app 25.0 + sq_wait 5.1\n"
"R: process = rq_wait + app + sq_wait; download = rwnd_limited +\n"
"sndbuf_limited + app_limited + sending.  P: the upload split the same way\n"
"(its rq_wait and sq_wait lie outside its service time).  Then each\n"
"part's own p50 / p99.  Times there: us, ms or s by their size.  A record\n"
"whose parts break docs/records.md's contract is left out of the split\n"
"and counted on stderr.\n"
"\n"
"  -p, --port P        only service port P\n"
"  -n, --netns N       only records of network namespace N (N or net:[N])\n"
"  -c, --container ID  only records of container ID: its full id, a prefix\n"
"                      of at least 12 hex digits, or NAME.service\n"
"  -b, --by KEY        the rows: port (default); container (the container's\n"
"                      id, systemd service, cgroup path, or the number when\n"
"                      nothing matches, as read shows it; \"-\": records\n"
"                      without netns and cgroup); netns (its number); peer\n"
"                      (the peer's address: the client's for R W N);\n"
"                      peer/24 or peer/64 (the same: an IPv4 peer's /24, an\n"
"                      IPv6 peer's /64).  At most 64 ports, or 1024 of the\n"
"                      others, get rows of their own per window; the rest\n"
"                      are summed as \"other\"\n"
"  -w, --window S      window length, seconds (default 60)\n"
"  -f, --follow        keep reading; print each window as it completes\n"
"  -d, --dir DIR       read recorded rt-network-log* files of DIR\n"
INPUT_FORMAT_HELP
"  -r, --reorder S     reordering window of the merge, seconds (default 5)\n"
"  -P, --plot FILE     also draw the time breakdown of the windows reported\n"
"                      into FILE (PNG, with gnuplot): per row (the 8 with the\n"
"                      most tasks split), the process split and the download\n"
"                      (P: upload) split at p50, p90 and p99 as bars of\n"
"                      100 %, the total above each\n"
"  -h, --help          this text\n";

#define DEFAULT_WINDOW_US	(60 * USEC_PER_SEC)
#define MAX_KEYS		1024	/* rows of --by other than port */

enum by { BY_PORT, BY_CONTAINER, BY_NETNS, BY_PEER, BY_PEER_NET };

static const char *const by_names[] = {
	[BY_PORT] = "port", [BY_CONTAINER] = "container", [BY_NETNS] = "netns",
	[BY_PEER] = "peer", [BY_PEER_NET] = "peer/24",
};
static const char *const by_header[] = {
	[BY_PORT] = "PORT", [BY_CONTAINER] = "CONTAINER", [BY_NETNS] = "NETNS",
	[BY_PEER] = "PEER", [BY_PEER_NET] = "PEER",
};

static const unsigned int quantiles[] = { 500, 900, 990, 1000 };

struct win_val {
	uint64_t count;
	struct hist h[M_NMETRICS];
	struct breakdown *bd;	/* R, P: their time breakdown, if any */
};

struct summary {
	uint64_t window_us;
	int port;		/* -1: all */
	enum by by;
	struct ct_filter ctf;	/* --netns, --container */
	bool started;
	bool closed_any;	/* a window has been closed: earlier is late */
	uint64_t cur;		/* start of the open window */
	uint64_t in_cur;	/* records in it */
	struct series_table t;
	uint64_t empty_from, empty_n;	/* a run of windows without records */
	uint64_t warmup, late, max_end;
	struct merge merge;
	struct bd_bad bad;	/* records left out of the breakdown's splits */
	const char *plot;	/* --plot */
	struct series_table all;	/* --plot: the breakdown of every window reported */
	uint64_t plot_from, plot_to;	/* the windows in it */
};

static void free_val(void *v)
{
	struct win_val *w = v;
	unsigned int m;

	for (m = 0; m < M_NMETRICS; m++)
		hist_reset(&w->h[m]);
	bd_free(w->bd);
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

/* A row's key as printed: its port, or its key. */
static const char *row_key(const struct summary *s, const struct series *se,
			   char *buf, size_t len)
{
	if (s->by != BY_PORT)
		return se->other_key ? "other" : se->key;
	if (se->port == SERIES_OTHER)
		return "other";
	snprintf(buf, len, "%u", se->port);
	return buf;
}

/* A row named for its block: "port 7700 server R", "container ID client P". */
static void row_label(const struct summary *s, const struct series *se,
		      char *buf, size_t len)
{
	static const char *const what[] = {
		[BY_PORT] = "port", [BY_CONTAINER] = "container",
		[BY_NETNS] = "netns", [BY_PEER] = "peer", [BY_PEER_NET] = "peer",
	};
	char port[8];

	snprintf(buf, len, "%s %s %s %s", what[s->by],
		 row_key(s, se, port, sizeof(port)), role_name(se->role),
		 rec_desc[se->type].name);
}

/* After the table: each row's time breakdown, kept for --plot too. */
static void print_breakdowns(struct summary *s)
{
	char label[sizeof(((struct bd_row *)0)->label)];
	size_t i;

	for (i = 0; i < s->t.n; i++) {
		const struct series *se = &s->t.s[i];
		const struct win_val *v = se->val;

		if (!v->bd)
			continue;
		row_label(s, se, label, sizeof(label));
		bd_print(stdout, v->bd, label, v->count);
		putchar('\n');
		if (s->plot) {
			struct win_val *all = series_get_key(&s->all, se->port,
				se->other_key ? "other" : se->key, se->role,
				se->type, NULL);

			bd_merge(&all->bd, v->bd);
		}
	}
}

/* The width of the key column: 6 for ports, the longest key otherwise. */
static int key_width(const struct summary *s)
{
	size_t i, w = 6;
	char buf[8];

	if (s->by == BY_PORT)
		return 6;
	for (i = 0; i < s->t.n; i++) {
		size_t len = strlen(row_key(s, &s->t.s[i], buf, sizeof(buf)));

		if (len + 1 > w)
			w = len + 1;
	}
	return (int)w;
}

static void print_window(struct summary *s)
{
	uint64_t w = s->window_us;
	int kw = key_width(s);
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
	printf("%-*s %-6s %-4s %8s %10s  %-9s %9s %9s %9s %9s\n", kw,
	       by_header[s->by], "ROLE", "TYPE", "COUNT", "RATE/s", "METRIC",
	       "P50", "P90", "P99", "MAX");
	for (i = 0; i < s->t.n; i++) {
		const struct series *se = &s->t.s[i];
		const struct win_val *v = se->val;
		char buf[8];
		const char *key = row_key(s, se, buf, sizeof(buf));
		/* rate = count / window, in thousandths */
		uint64_t rate = (v->count * 1000 * USEC_PER_SEC + w / 2) / w;
		unsigned int m, q;

		for (m = 0; m < M_NMETRICS; m++) {
			if (!v->h[m].n)
				continue;
			printf("%-*s %-6s %-4s %8llu %6llu.%03llu  %-9s", kw, key,
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
	print_breakdowns(s);
	if (!s->plot_from)
		s->plot_from = s->cur;
	s->plot_to = s->cur + w;
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
	series_init(&s->t, sizeof(struct win_val), DEFAULT_MAX_PORTS, MAX_KEYS);
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

/* An address's network: an IPv4 address's /24, an IPv6 address's /64. */
static void peer_net(const char *addr, char *out, size_t len)
{
	unsigned char b[16];

	if (inet_pton(AF_INET, addr, b) == 1) {
		snprintf(out, len, "%u.%u.%u.0/24", b[0], b[1], b[2]);
	} else if (inet_pton(AF_INET6, addr, b) == 1) {
		char a[INET6_ADDRSTRLEN];

		memset(b + 8, 0, 8);
		inet_ntop(AF_INET6, b, a, sizeof(a));
		snprintf(out, len, "%s/64", a);
	} else {
		snprintf(out, len, "%s", addr);
	}
}

/* The series of a record: its port's, or its key's (--by). */
static struct win_val *series_of(struct summary *s, const struct record *r)
{
	char buf[REC_ADDR_MAX + 8];
	const char *key = buf;

	switch (s->by) {
	case BY_PORT:
		return series_get(&s->t, r->port, r->role, r->type);
	case BY_CONTAINER:
		key = ct_of_record(r)->key;
		break;
	case BY_NETNS:
		if (rec_has_ext(r, EXT_NETNS))
			snprintf(buf, sizeof(buf), "%llu",
				 (unsigned long long)r->ext[EXT_NETNS]);
		else
			key = "";
		break;
	case BY_PEER:
		key = r->peer_addr;
		break;
	case BY_PEER_NET:
		peer_net(r->peer_addr, buf, sizeof(buf));
		break;
	}
	return series_get_key(&s->t, SERIES_OTHER, *key ? key : "-", r->role,
			      r->type, NULL);
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
	w = series_of(s, r);
	w->count++;
	s->in_cur++;
	for (m = 0; m < M_NMETRICS; m++)
		if (rec_metric(r, (enum metric)m, &v))
			hist_add(&w->h[m], v);
	if (r->type == REC_R || r->type == REC_P)
		bd_add(&w->bd, r, &s->bad);
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
	if (!ct_match(&s->ctf, r))
		return;
	if (rec_metric(r, M_DURATION, &d))
		end += d;
	if (end > s->max_end)
		s->max_end = end;
	merge_push(r, &s->merge);
}

/* Tasks with a split: what orders the rows of the picture. */
static uint64_t split_tasks(const struct breakdown *bd)
{
	return bd->process.total.n + bd->transfer.total.n;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct bd_row *ra = a, *rb = b;
	uint64_t x = split_tasks(ra->bd), y = split_tasks(rb->bd);

	return x < y ? 1 : x > y ? -1 : strcmp(ra->label, rb->label);
}

/* --plot: the rows of every window reported with a split, the busiest first. */
static int plot(struct summary *s)
{
	struct bd_row *rows = xcalloc(s->all.n + 1, sizeof(*rows));
	char from[32], to[32], title[160];
	size_t i, n = 0;
	int st = -1;

	for (i = 0; i < s->all.n; i++) {
		const struct win_val *v = s->all.s[i].val;

		if (!v->bd || !split_tasks(v->bd))
			continue;
		row_label(s, &s->all.s[i], rows[n].label, sizeof(rows[n].label));
		rows[n++].bd = v->bd;
	}
	if (!n) {
		warnx_("nothing to plot: no task of a window reported has rq_wait, app and sq_wait, or rwnd_limited, sndbuf_limited and app_limited (set tcp_rt's log_ext=rq_wait,app,sq_wait,rwnd_limited,sndbuf_limited,app_limited); no %s",
		       s->plot);
	} else {
		qsort(rows, n, sizeof(rows[0]), cmp_rows);
		fmt_time(from, sizeof(from), s->plot_from, false);
		fmt_time(to, sizeof(to), s->plot_to, false);
		snprintf(title, sizeof(title), "tcp_rt: where the time goes, %s .. %s%s",
			 from, to, n > BD_PLOT_ROWS ?
			 " (the 8 rows with the most tasks split)" : "");
		st = bd_plot(s->plot, title, rows, n);
	}
	free(rows);
	return st;
}

static enum by opt_by(const char *arg)
{
	unsigned int b;

	if (!strcmp(arg, "peer/64"))
		return BY_PEER_NET;
	for (b = 0; b < sizeof(by_names) / sizeof(by_names[0]); b++)
		if (!strcmp(arg, by_names[b]))
			return (enum by)b;
	usage_error("summary", "--by: '%s' is not port, container, netns, peer, peer/24 or peer/64",
		    arg);
}

int cmd_summary(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "netns", required_argument, NULL, 'n' },
		{ "container", required_argument, NULL, 'c' },
		{ "by", required_argument, NULL, 'b' },
		{ "window", required_argument, NULL, 'w' },
		{ "follow", no_argument, NULL, 'f' },
		{ "dir", required_argument, NULL, 'd' },
		{ "input-format", required_argument, NULL, OPT_INPUT_FORMAT },
		{ "reorder", required_argument, NULL, 'r' },
		{ "plot", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct summary s = { .window_us = DEFAULT_WINDOW_US, .port = -1 };
	uint64_t reorder = DEFAULT_REORDER_US, horizon;
	const char *dir = NULL;
	enum input_format infmt = INPUT_AUTO;
	bool follow = false;
	unsigned int tick = 0;
	struct input in;
	char when[32];
	int o, st;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":p:n:c:b:w:fd:r:P:h", opts, NULL)) != -1) {
		switch (o) {
		case 'p': s.port = opt_port("summary", optarg); break;
		case 'n':
			s.ctf.netns_set = true;
			s.ctf.netns = opt_netns("summary", optarg);
			break;
		case 'c': s.ctf.container = opt_container("summary", optarg); break;
		case 'b': s.by = opt_by(optarg); break;
		case 'w': s.window_us = opt_seconds("summary", "--window", optarg, false); break;
		case 'f': follow = true; break;
		case 'd': dir = optarg; break;
		case OPT_INPUT_FORMAT:
			infmt = opt_input_format("summary", optarg);
			break;
		case 'r': reorder = opt_seconds("summary", "--reorder", optarg, true); break;
		case 'P':
			if (strchr(optarg, '\'') || strchr(optarg, '\n'))
				usage_error("summary", "--plot: a file name without quotes or newlines, please");
			s.plot = optarg;
			break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: bad_option("summary", o, argv);
		}
	}
	if (optind < argc)
		usage_error("summary", "unexpected argument '%s'", argv[optind]);

	signals_init();
	series_init(&s.t, sizeof(struct win_val), DEFAULT_MAX_PORTS, MAX_KEYS);
	series_init(&s.all, sizeof(struct win_val), DEFAULT_MAX_PORTS, MAX_KEYS);
	merge_init(&s.merge, reorder, DEFAULT_MAX_HELD, add, &s);
	st = input_open(&in, dir, false, infmt, filter, &s);
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
		bd_report_bad(&s.bad);
	}
	if (s.plot && plot(&s) < 0)
		st = EXIT_RUNTIME;
	input_close(&in);
	merge_free(&s.merge);
	series_free(&s.t, free_val);
	series_free(&s.all, free_val);
	ct_free();
	return st;
}
