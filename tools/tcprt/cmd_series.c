// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt series: run a fine-timescale sampling run of the module (or read a
 * saved one) and print it as a table, or draw it with gnuplot; or keep
 * running one at every multiple of a period, each kept on local disk
 * (--every: the series sink, sink_series.c, ticked alone; series_store.c),
 * and read them back by time.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cmd.h"
#include "input.h"
#include "parse.h"
#include "plot.h"
#include "series_line.h"
#include "series_store.h"
#include "sink_series.h"
#include "util.h"

#define EXT_WIDTH	13	/* the widest name, far_bytes_out */

static const char help[] =
"usage: tcprt series [--us 100|1000|10000] [--buckets N] [--ext LIST]\n"
"                    [--host] [--port P] [--format text|csv|raw]\n"
"                    [--plot FILE.png] [--dir DIR]\n"
"       tcprt series --every T --store DIR [--keep AGE] [--keep-bytes N]\n"
"                    [--trigger [--trigger-factor X] [--trigger-fail N]\n"
"                    [--trigger-gap S]]\n"
"                    [--us W] [--buckets N] [--ext LIST] [--host]\n"
"       tcprt series --recorder US --store DIR [--keep AGE] [--keep-bytes N]\n"
"                    [--coarse N] [--us W] [--buckets N] [--ext LIST] [--host]\n"
"       tcprt series --store DIR [--since T] [--until T] [--port P]\n"
"                    [--format F] [--plot FILE.png]\n"
"       tcprt series --store DIR --task 'RECORD LINE' [--format F]\n"
"\n"
"Start a sampling run of tcp_rt (module parameters series_us,\n"
"series_buckets, series_run), wait for it to end, then read\n"
"/sys/kernel/debug/tcp-rt/" SERIES_FILE " (reading consumes it) and print\n"
"one row per port per bucket that saw anything: bytes and data segments\n"
"in and out, retransmitted segments, tasks started and done (R or P), W and\n"
"N records, connections established and closed, tasks open at the\n"
"bucket's end; then the measures series_ext lists (docs/records.md).\n"
"SIGINT ends the run early; what it counted is printed.\n"
"\n"
"  -u, --us W          bucket width, microseconds (default: the module's)\n"
"  -b, --buckets N     buckets in the run, 1..10000 (default: the module's)\n"
"  -e, --ext LIST      series_ext for the run: measures of ce_bytes, ce_segs,\n"
"                      ece, dup_bytes, dup_segs, flows, far_bytes_in,\n"
"                      far_bytes_out, comma-separated, or all (default: the\n"
"                      module's)\n"
"  -H, --host          the run also counts every TCP connection of the host,\n"
"                      as port * (series_host 1; without it: the module's)\n"
"  -p, --port P        only port P (a peer port: P<port>, e.g. P6379; the\n"
"                      host: '*')\n"
"  -o, --format F      text (default), csv (a header line, then rows), or\n"
"                      raw: the file's lines as the module wrote them (the\n"
"                      form --dir reads back)\n"
"  -P, --plot FILE     draw bytes, segments and tasks per bucket into FILE\n"
"                      (PNG, with gnuplot), summed over the ports shown\n"
"                      (the host's line alone if no port's is), and the\n"
"                      series_ext measures the run has, a panel a kind;\n"
"                      the table is then printed only if --format is given\n"
"  -d, --dir DIR       read DIR/" SERIES_FILE " (a saved raw copy) instead\n"
"                      of starting a run\n"
"\n"
"Always on:\n"
"  -E, --every T       start a run at every multiple of T seconds of the wall\n"
"                      clock (the same instants on every host whose clock\n"
"                      is synchronised), keep each in --store, until SIGTERM;\n"
"                      a run that cannot start (another one runs, no module)\n"
"                      is skipped, with a line on stderr\n"
"  -T, --trigger       also start a run when the stats (rt-network-stats,\n"
"                      read here: nobody else may read them) show an\n"
"                      anomaly: a port's average duration over --trigger-\n"
"                      factor times its baseline (and 1 ms above it, over\n"
"                      10 tasks or more), or its failures per 1000 tasks\n"
"                      reaching --trigger-fail; each said on stderr\n"
"  -F, --trigger-factor X  default 4 (1.5 to 1000)\n"
"  -A, --trigger-fail N    W per 1000 tasks ended, default 50; 0: off\n"
"  -G, --trigger-gap S     at most one run an anomaly starts per S seconds\n"
"                      (default 60)\n"
"  -R, --recorder US   instead of runs, the module's recorder (recorder=1,\n"
"                      with the run settings; off again at SIGTERM unless\n"
"                      it was on already): the buckets around every task\n"
"                      at least US microseconds long (recorder_slow_us),\n"
"                      from 200 ms before it to 100 ms after, each window\n"
"                      kept in --store as a run,\n"
"                      series-<start>.<usec>-<width>x<buckets>.gz\n"
"  -C, --coarse N      with --recorder: its coarse ring of N buckets of 10\n"
"                      of its own (recorder_coarse); before each window,\n"
"                      the coarse buckets since the last kept, as a run\n"
"  -S, --store DIR     where runs are kept: one gzip file a run,\n"
"                      series-<start>-<width>x<buckets>.gz, mode 0640;\n"
"                      without --every: read the runs of DIR\n"
"  -k, --keep AGE      remove runs older than AGE: 30m, 12h, 3d (default 3d)\n"
"  -K, --keep-bytes N  and the oldest while the runs take more than N bytes\n"
"                      (k, M, G: powers of 1000; default 1G); the newest\n"
"                      run always stays\n"
"  -s, --since T       with --store: rows from T: Unix seconds,\n"
"                      YYYY-MM-DDTHH:MM:SSZ (UTC), or an age: 15m, 2h\n"
"                      (default 1h)\n"
"  -U, --until T       with --store: rows before T (default: now)\n"
"  -t, --task LINE     with --store: the milliseconds around one task, given\n"
"                      as its record's line (R, W, N or P, as tcp_rt wrote\n"
"                      it): the rows of its port and the host's from 10 ms\n"
"                      before it to 10 ms after, those during it marked;\n"
"                      exit 1 when no run kept covers it\n"
"  -h, --help          this text\n";

/* A task whose milliseconds are shown (--task): [t0, end), in us. */
struct task_mark {
	bool on;
	uint64_t t0, end;
};

struct rows {
	struct series_row *r;
	size_t n, cap;
	uint64_t bad;
	unsigned int ext;	/* BIT(field) of the named fields seen */
	struct task_mark task;
};

/*
 * Which rows to keep: a port (NULL: all) or two (--task: its port's and
 * the host's), a time window [lo, hi) in us.
 */
struct filter {
	const char *port, *port2;
	uint64_t lo, hi;
	uint64_t width_us;	/* of the run being read; 0: not known */
	FILE *raw;		/* the lines kept, as they are */
};

static void add_line(const char *line, const char *path, uint64_t lineno,
		     const struct filter *w, struct rows *rows)
{
	struct series_row r;

	if (!series_line_parse(line, &r, &rows->ext)) {
		if (rows->bad++ < 10)
			warnx_("%s:%llu: not a series line, skipped",
			       path, (unsigned long long)lineno);
		return;
	}
	if ((w->port && strcmp(w->port, r.port) &&
	     !(w->port2 && !strcmp(w->port2, r.port))) ||
	    r.t_us < w->lo || r.t_us >= w->hi)
		return;
	r.width_us = w->width_us;
	if (w->raw)
		fputs(line, w->raw);
	if (rows->n == rows->cap) {
		rows->cap = rows->cap ? 2 * rows->cap : 1024;
		rows->r = xrealloc(rows->r, rows->cap, sizeof(*rows->r));
	}
	rows->r[rows->n++] = r;
}

static void read_rows(FILE *f, const char *path, const struct filter *w,
		      struct rows *rows)
{
	char line[512];
	uint64_t lineno = 0;

	while (fgets(line, sizeof(line), f))
		add_line(line, path, ++lineno, w, rows);
}

/* The stored runs of @dir that overlap the filter's window, oldest first. */
static int read_store(const char *dir, struct filter *w, struct rows *rows)
{
	struct stored_run *runs;
	char path[4200], line[512];
	size_t n, i;
	int err = 0;

	if (series_store_list(dir, &runs, &n) < 0) {
		warnx_("%s: %s", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		uint64_t lineno = 0;
		gzFile gz;

		if (stored_run_end(&runs[i]) * USEC_PER_SEC <= w->lo ||
		    runs[i].start_us >= w->hi)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, runs[i].name);
		w->width_us = runs[i].width_us;
		gz = gzopen(path, "rbe");
		if (!gz) {
			warnx_("%s: %s", path, strerror(errno));
			err = -1;
			continue;
		}
		while (gzgets(gz, line, sizeof(line)))
			add_line(line, path, ++lineno, w, rows);
		if (!gzeof(gz)) {
			warnx_("%s: a damaged run, read up to line %llu", path,
			       (unsigned long long)lineno);
			err = -1;
		}
		gzclose(gz);
	}
	free(runs);
	return err;
}

/* ---- output ------------------------------------------------------------- */

/* The row's bucket overlaps the task shown (--task). */
static bool in_task(const struct rows *rows, const struct series_row *r)
{
	return rows->task.on && r->t_us < rows->task.end &&
	       r->t_us + r->width_us > rows->task.t0;
}

static void print_rows(const struct rows *rows, bool csv)
{
	char t[40];
	size_t i;
	int k;

	if (csv) {
		printf("time_us,port");
		for (k = 0; k < SERIES_NFIELDS; k++)
			if (k < SERIES_NBASE || rows->ext & 1U << k)
				printf(",%s", series_field_name[k]);
		printf("%s\n", rows->task.on ? ",in_task" : "");
	} else {
		printf("%-27s %6s %10s %10s %7s %8s %7s %7s %5s %3s %3s %5s %6s %5s",
		       "time", "port", series_field_name[0], series_field_name[1],
		       series_field_name[2], series_field_name[3], series_field_name[4],
		       series_field_name[5], series_field_name[6], series_field_name[7],
		       series_field_name[8], series_field_name[9], series_field_name[10],
		       series_field_name[11]);
		for (k = SERIES_NBASE; k < SERIES_NFIELDS; k++)
			if (rows->ext & 1U << k)
				printf(" %*s", EXT_WIDTH, series_field_name[k]);
		printf("%s\n", rows->task.on ? " task" : "");
	}
	for (i = 0; i < rows->n; i++) {
		const struct series_row *r = &rows->r[i];

		if (csv) {
			printf("%llu,%s", (unsigned long long)r->t_us, r->port);
			for (k = 0; k < SERIES_NFIELDS; k++)
				if (k < SERIES_NBASE || rows->ext & 1U << k)
					printf(",%lld", r->v[k]);
			if (rows->task.on)
				printf(",%d", in_task(rows, r));
			putchar('\n');
			continue;
		}
		fmt_time(t, sizeof(t), r->t_us, true);
		printf("%-27s %6s %10lld %10lld %7lld %8lld %7lld %7lld %5lld %3lld %3lld %5lld %6lld %5lld",
		       t, r->port, r->v[0], r->v[1], r->v[2], r->v[3], r->v[4],
		       r->v[5], r->v[6], r->v[7], r->v[8], r->v[9], r->v[10],
		       r->v[11]);
		for (k = SERIES_NBASE; k < SERIES_NFIELDS; k++)
			if (rows->ext & 1U << k)
				printf(" %*lld", EXT_WIDTH, r->v[k]);
		printf("%s\n", !rows->task.on ? "" : in_task(rows, r) ? "    *" : "     ");
	}
}

/* The column of a named field (series_line.c's), or -1. */
static int field_of(const char *name)
{
	int k;

	for (k = 0; k < SERIES_NFIELDS; k++)
		if (!strcmp(series_field_name[k], name))
			return k;
	return -1;
}

/* Whether the rows carry any of the named fields. */
static bool rows_have(const struct rows *rows, const char *const *names)
{
	for (; *names; names++) {
		int k = field_of(*names);

		if (k >= 0 && rows->ext & 1U << k)
			return true;
	}
	return false;
}

/* Panels of the plot: gnuplot's lines for each, the x label before the last. */
#define PANELS_MAX	6

struct panels {
	char text[PANELS_MAX][512];
	int n;
};

static void panel(struct panels *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void panel(struct panels *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->text[p->n++], sizeof(p->text[0]), fmt, ap);
	va_end(ap);
}

/*
 * A panel of the measures of @names the rows have, each by its name
 * (docs/series.md); none: no panel.  Field k is column k + 2.
 */
static void ext_panel(struct panels *p, const struct rows *rows,
		      const char *ylabel, const char *style,
		      const char *const *names)
{
	char *t = p->text[p->n];
	size_t len = sizeof(p->text[0]), at;
	const char *sep = "plot ";

	if (!rows_have(rows, names))
		return;
	at = (size_t)snprintf(t, len, "set ylabel '%s'\n", ylabel);
	for (; *names; names++) {
		int k = field_of(*names);

		if (k < 0 || !(rows->ext & 1U << k) || at >= len)
			continue;
		at += (size_t)snprintf(t + at, len - at, "%s$d using 1:%d with %s title '%s'",
				       sep, k + 2, style, *names);
		sep = ", ";
	}
	if (at < len)
		snprintf(t + at, len - at, "\n");
	p->n++;
}

/*
 * Bytes, segments, tasks; then series_ext's measures the rows have: CE,
 * ECE and duplicates; active flows; far bytes.
 */
static void plot_panels(struct panels *p, const struct rows *rows)
{
	static const char *const ecn[] = {
		"ce_bytes", "ce_segs", "ece", "dup_bytes", "dup_segs", NULL
	};
	static const char *const flows[] = { "flows", NULL };
	static const char *const far[] = { "far_bytes_in", "far_bytes_out", NULL };

	panel(p, "set ylabel 'bytes'\n"
	      "plot $d using 1:2 with impulses lw 2 title 'in', "
	      "$d using 1:3 with impulses lw 1 title 'out'\n");
	panel(p, "set ylabel 'segments'\n"
	      "plot $d using 1:4 with impulses lw 2 title 'in', "
	      "$d using 1:5 with impulses lw 1 title 'out', "
	      "$d using 1:($6 > 0 ? $6 : 1/0) with points pt 7 ps 1 title 'retransmitted'\n");
	panel(p, "set ylabel 'tasks'\n"
	      "plot $d using 1:7 with impulses lw 2 title 'started', "
	      "$d using 1:8 with impulses lw 1 title 'done', "
	      "$d using 1:13 with steps title 'open'\n");
	ext_panel(p, rows, "ECN, duplicates", "impulses lw 2", ecn);
	ext_panel(p, rows, "flows", "steps", flows);
	ext_panel(p, rows, "far bytes", "impulses lw 2", far);
}

/*
 * Panels sharing the time axis (ms from the first bucket shown).  Rows of
 * one bucket (several ports) are summed; the host's line ("*") counts the
 * ports' traffic too, so it is drawn only when no port's row is there.
 */
static int plot_rows(const struct rows *rows, const char *png,
		     const char *title)
{
	struct panels p = { .n = 0 };
	uint64_t t0 = UINT64_MAX;
	bool ports = false;
	FILE *gp;
	size_t i;
	int k;

	if (!rows->n) {
		warnx_("nothing to plot: no row (nothing happened on the ports shown); no %s",
		       png);
		return -1;
	}
	for (i = 0; i < rows->n; i++)
		ports |= strcmp(rows->r[i].port, "*") != 0;
	for (i = 0; i < rows->n; i++)
		if (!ports || strcmp(rows->r[i].port, "*"))
			t0 = rows->r[i].t_us < t0 ? rows->r[i].t_us : t0;
	plot_panels(&p, rows);
	gp = gnuplot_open();
	if (!gp)
		return -1;
	fprintf(gp, "set terminal pngcairo noenhanced size 1200,%d font ',10'\n"
		"set output '%s'\n"
		"$d << EOD\n", 300 * p.n, png);
	for (i = 0; i < rows->n; i++) {
		const struct series_row *r = &rows->r[i];
		long long v[SERIES_NFIELDS] = { 0 };
		size_t j;

		for (j = i; j < rows->n && rows->r[j].t_us == r->t_us; j++)
			if (!ports || strcmp(rows->r[j].port, "*"))
				for (k = 0; k < SERIES_NFIELDS; k++)
					v[k] += rows->r[j].v[k];
		i = j - 1;
		fprintf(gp, "%.3f", ((double)r->t_us - (double)t0) / 1000.0);
		for (k = 0; k < SERIES_NFIELDS; k++)
			fprintf(gp, " %lld", v[k]);
		fputc('\n', gp);
	}
	fprintf(gp, "EOD\n"
		"set multiplot layout %d,1 title '%s%s'\n"
		"set grid\n"
		"set key top right\n"
		"set lmargin 12\n", p.n, title,
		ports ? ", ports summed (not the host line)" : ", the whole host");
	for (k = 0; k < p.n; k++) {
		if (k == p.n - 1)
			fprintf(gp, "set xlabel 'ms from the first bucket shown'\n");
		fputs(p.text[k], gp);
	}
	fprintf(gp, "unset multiplot\n");
	return gnuplot_close(gp, png);
}

struct series_opts {
	const char *port, *dir, *format, *png;
	struct series_conf sc;		/* a run's settings, --every's, --store */
	const char *since, *until;	/* with --store, to read */
	const char *task;		/* with --store: a record's line */
};

static void parse_opts(int argc, char **argv, struct series_opts *so)
{
	static const struct option opts[] = {
		{ "us", required_argument, NULL, 'u' },
		{ "buckets", required_argument, NULL, 'b' },
		{ "ext", required_argument, NULL, 'e' },
		{ "host", no_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'o' },
		{ "plot", required_argument, NULL, 'P' },
		{ "dir", required_argument, NULL, 'd' },
		{ "every", required_argument, NULL, 'E' },
		{ "recorder", required_argument, NULL, 'R' },
		{ "coarse", required_argument, NULL, 'C' },
		{ "trigger", no_argument, NULL, 'T' },
		{ "trigger-factor", required_argument, NULL, 'F' },
		{ "trigger-fail", required_argument, NULL, 'A' },
		{ "trigger-gap", required_argument, NULL, 'G' },
		{ "store", required_argument, NULL, 'S' },
		{ "keep", required_argument, NULL, 'k' },
		{ "keep-bytes", required_argument, NULL, 'K' },
		{ "since", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'U' },
		{ "task", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *name;
	char err[512];
	int o;

	series_conf_init(&so->sc);
	while ((o = getopt_long(argc, argv, ":u:b:e:Hp:o:P:d:E:R:C:TF:A:G:S:k:K:s:U:t:h",
				opts, NULL)) != -1) {
		switch (o) {
		case 'p':
			if (strcmp(optarg, "*"))
				opt_port("series",
					 optarg[0] == 'P' ? optarg + 1 : optarg);
			so->port = optarg;
			break;
		case 'o':
			if (strcmp(optarg, "text") && strcmp(optarg, "csv") &&
			    strcmp(optarg, "raw"))
				usage_error("series", "--format: '%s' is not text, csv or raw",
					    optarg);
			so->format = optarg;
			break;
		case 'P':
			if (strchr(optarg, '\'') || strchr(optarg, '\n'))
				usage_error("series", "--plot: a file name without quotes or newlines, please");
			so->png = optarg;
			break;
		case 'd':
			so->dir = optarg;
			break;
		case 's':
			so->since = optarg;
			break;
		case 'U':
			so->until = optarg;
			break;
		case 't':
			so->task = optarg;
			break;
		case 'h':
			fputs(help, stdout);
			exit(EXIT_OK);
		case ':': case '?':
			bad_option("series", o, argv);
		default:
			/* the series sink's own: its settings */
			name = opt_long_name(opts, o);
			if (series_set(&so->sc, name, optarg, err, sizeof(err)))
				usage_error("series", "--%s: %s", name, err);
		}
	}
	if (optind < argc)
		usage_error("series", "unexpected argument '%s'", argv[optind]);
}

/* Options that go together, and those that do not. */
static void check_opts(const struct series_opts *so)
{
	const struct series_conf *sc = &so->sc;
	bool run = sc->us || sc->buckets || sc->ext || sc->host;
	bool on = sc->period_us || sc->recorder_us;

	if (so->dir && (run || sc->store))
		usage_error("series", "--dir reads a saved run: no --us, --buckets, --ext, --host or --store");
	if (sc->period_us && sc->recorder_us)
		usage_error("series", "--every or --recorder: the module refuses a run while its recorder records");
	if (on && !sc->store)
		usage_error("series", "--every and --recorder need --store, where the runs are kept");
	if (sc->coarse && !sc->recorder_us)
		usage_error("series", "--coarse is the recorder's: with --recorder");
	if (sc->trigger_set && !sc->period_us)
		usage_error("series", "--trigger, --trigger-factor, --trigger-fail and --trigger-gap go with --every (runs kept)");
	if (on && (so->since || so->until || so->port || so->format ||
		   so->png || so->task || so->dir))
		usage_error("series", "--every and --recorder keep runs; --since, --until, --port, --format, --plot and --task read them (without either)");
	if (!on && sc->store && run)
		usage_error("series", "--store without --every or --recorder reads the runs kept: no --us, --buckets, --ext or --host");
	if ((so->since || so->until || so->task) && !sc->store)
		usage_error("series", "--since, --until and --task read the runs of --store DIR");
	if (so->task && (so->since || so->until || so->port))
		usage_error("series", "--task sets the window and the ports: no --since, --until or --port");
}

/*
 * --task: the window and the lines of one task's record: its port's (P
 * and the port for a client's) and the host's, 10 ms (the widest bucket)
 * either side.
 */
static void task_window(const char *line, struct filter *w, struct rows *rows,
			char *key, size_t len)
{
	char why[PARSE_WHY_MAX] = "";
	struct record r;
	uint64_t dur;

	if (!parse_log_line(line, strcspn(line, "\n"), &r, why) ||
	    !rec_is_task(r.type) || r.type == REC_E ||
	    !rec_metric(&r, M_DURATION, &dur))
		usage_error("series", "--task: not a task's record (R, W, N or P, as tcp_rt writes it)%s%s",
			    why[0] ? ": " : "", why[0] ? why : "");
	snprintf(key, len, "%s%u", r.role == ROLE_CLIENT ? "P" : "", r.port);
	rows->task.on = true;
	rows->task.t0 = r.sec * USEC_PER_SEC + r.usec;
	rows->task.end = rows->task.t0 + (dur ? dur : 1);
	w->port = key;
	w->port2 = "*";
	w->lo = rows->task.t0 - 10000;
	w->hi = rows->task.end + 10000;
}

/*
 * --task: whether the runs kept cover the task.  None: said, false (exit
 * 1) - rows around it alone, or none, would look like quiet milliseconds.
 * Part of it: said.
 */
static bool task_covered(const struct rows *rows, const char *store)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i;

	for (i = 0; i < rows->n; i++) {
		const struct series_row *r = &rows->r[i];

		if (!in_task(rows, r))
			continue;
		lo = r->t_us < lo ? r->t_us : lo;
		hi = r->t_us + r->width_us > hi ? r->t_us + r->width_us : hi;
	}
	if (!hi) {
		warnx_("series: no run kept in %s covers the task (%llu.%06llu, %llu us): its milliseconds were not recorded",
		       store, (unsigned long long)(rows->task.t0 / USEC_PER_SEC),
		       (unsigned long long)(rows->task.t0 % USEC_PER_SEC),
		       (unsigned long long)(rows->task.end - rows->task.t0));
		return false;
	}
	if (lo > rows->task.t0 || hi < rows->task.end)
		warnx_("series: the runs kept cover part of the task: %llu of its %llu us",
		       (unsigned long long)((hi < rows->task.end ? hi : rows->task.end) -
					    (lo > rows->task.t0 ? lo : rows->task.t0)),
		       (unsigned long long)(rows->task.end - rows->task.t0));
	return true;
}

/* --since .. --until of the runs kept (default: the last hour). */
static void store_window(const struct series_opts *so, struct filter *w)
{
	uint64_t now = now_us() / USEC_PER_SEC;
	uint64_t lo = so->since ? opt_when("series", "--since", so->since, now) :
				  now - 3600;
	uint64_t hi = so->until ? opt_when("series", "--until", so->until, now) :
				  now + 1;

	if (lo >= hi)
		usage_error("series", "--since must be before --until");
	w->lo = lo * USEC_PER_SEC;
	w->hi = hi * USEC_PER_SEC;
}

/* The rows asked for: a run of the module, a saved one, or a store's. */
static int read_input(const struct series_opts *so, struct filter *w,
		      struct rows *rows, char *path, size_t len)
{
	FILE *f;

	if (so->sc.store) {
		snprintf(path, len, "%s", so->sc.store);
		if (!so->task)
			store_window(so, w);
		return read_store(so->sc.store, w, rows);
	}
	if (!so->dir && series_run_once(&so->sc) < 0)
		return -1;
	snprintf(path, len, "%s/" SERIES_FILE, so->dir ? so->dir : DEBUGFS_DIR);
	f = fopen(path, "re");
	if (!f) {
		input_open_failed(path, errno);
		return -1;
	}
	read_rows(f, path, w, rows);
	fclose(f);
	return 0;
}

int cmd_series(int argc, char **argv)
{
	struct series_opts so = { 0 };
	struct filter w = { .hi = UINT64_MAX };
	char path[4096], title[256], key[8];
	struct rows rows = { 0 };
	const char *format;
	int err;

	parse_opts(argc, argv, &so);
	check_opts(&so);
	if (so.sc.period_us || so.sc.recorder_us) {
		err = series_every(&so.sc);
		series_conf_free(&so.sc);
		return err;
	}

	/* with a plot, a table only when asked for */
	format = so.format ? so.format : so.png ? "none" : "text";
	w.port = so.port;
	w.raw = strcmp(format, "raw") ? NULL : stdout;
	if (so.task)
		task_window(so.task, &w, &rows, key, sizeof(key));
	err = read_input(&so, &w, &rows, path, sizeof(path));
	if (err && !so.sc.store) {
		series_conf_free(&so.sc);
		return EXIT_RUNTIME;
	}

	if (!strcmp(format, "text") || !strcmp(format, "csv"))
		print_rows(&rows, !strcmp(format, "csv"));
	if (fflush(stdout) == EOF)
		die(EXIT_RUNTIME, "writing the output: %s", strerror(errno));
	if (rows.bad)
		warnx_("%s: %llu malformed line(s) skipped", path,
		       (unsigned long long)rows.bad);
	if (so.png) {
		snprintf(title, sizeof(title), "tcp_rt series%s%s, %zu rows",
			 so.port ? ", port " : "", so.port ? so.port : "",
			 rows.n);
		if (plot_rows(&rows, so.png, title) < 0)
			return EXIT_RUNTIME;
	}
	/* the rows around it shown, whether a run covers it or not */
	if (so.task && !task_covered(&rows, path))
		err = -1;
	free(rows.r);
	series_conf_free(&so.sc);
	return rows.bad || err ? EXIT_RUNTIME : EXIT_OK;
}
