// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt agent: one reader of the module's logs for every sink a host
 * wants, configured by one INI file (docs/agent.md): the metrics sink
 * (tcprt export's: the Prometheus text file, OTLP), the windows sink
 * (tcprt live's: the windows and their query socket), the ship sink
 * (tcprt ship's: the fleet) and the series sink (tcprt series --every's:
 * the module's sampling runs, kept).
 *
 * The file is read with inih (libinih-dev) through a line reader of our
 * own, which counts lines - so that every error names its line - and
 * keeps inih's two surprises out: an indented line is not a continuation
 * of the key above, and a line longer than inih's 200 bytes is an error,
 * not two lines.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef TCPRT_NO_INIH
#include <ini.h>
#endif

#include "buf.h"
#include "cmd.h"
#include "container.h"
#include "reader.h"
#include "sink_metrics.h"
#include "sink_series.h"
#include "sink_ship.h"
#include "sink_windows.h"
#include "util.h"

#define AGENT_CONF	"/etc/tcprt/agent.conf"
/* with the windows or ship: tcprt live's and ship's */
#define AGENT_READ_US	200000ULL

static const char help[] =
"usage: tcprt agent [--config FILE] [--check] [--once]\n"
"\n"
"Read the tcp_rt logs once for every sink FILE configures (default\n"
AGENT_CONF "): reading consumes the logs, so a host runs one reader.\n"
"FILE is INI: a [section] per sink, its keys the long options of the\n"
"command the sink comes from (tcprt(8), AGENT):\n"
"\n"
"  [agent]      interval = SECONDS (default 15), input-format = F,\n"
"               archive = FILE, dir = DIR (recorded logs, not the module's),\n"
"               status = FILE (rewritten every interval: what was read,\n"
"               each sink's counts and losses by cause)\n"
"  [metrics]    tcprt export's: textfile, buckets, port, max-ports, netns,\n"
"               container, max-containers, otlp, otlp-exponential,\n"
"               otlp-logs, otlp-logs-url, otlp-header-file, otlp-ca,\n"
"               otlp-cert, otlp-key, otlp-insecure (flags: yes or no)\n"
"  [windows]    tcprt live's: windows, by, port, netns, container,\n"
"               max-keys, socket, socket-group, clock (the logs are then\n"
"               read every 0.2 s)\n"
"  [ship]       tcprt ship's: key-file, unsigned, host-id, socket, rate,\n"
"               burst, interval, send-wait, state, series, unnumbered;\n"
"               queue = BYTES (16M; 0: the sends wait, as ship's)\n"
"               (the logs are then read every 0.2 s, each to its end in\n"
"               turn)\n"
"  [series]     tcprt series --every's: every, store, keep, keep-bytes,\n"
"               trigger, trigger-factor, trigger-fail, trigger-gap, us,\n"
"               buckets, ext, host; trigger-interval = SECONDS (10) (the\n"
"               module's runs: not with dir)\n"
"\n"
"SIGHUP reads FILE again: changed sinks restart, the others run on, the\n"
"reading goes on; a wrong FILE is said and the running one kept.\n"
"A comment is a line that starts with ; or #, or what follows \" ;\" on a\n"
"line.  A secret is never a value: give the file that holds it\n"
"(key-file, otlp-header-file, otlp-key).\n"
"\n"
"  -c, --config FILE  the configuration (default " AGENT_CONF ")\n"
"  -n, --check        check FILE and exit: 0 good, 2 not (FILE:LINE and why)\n"
"  -1, --once         read once, write every sink's output once, exit\n"
"  -h, --help         this text\n";

/*
 * The file's sections: [agent], then the sinks', in the order they start
 * (but ship, which starts once the logs are open).
 */
enum { SEC_AGENT, SEC_METRICS, SEC_WINDOWS, SEC_SHIP, SEC_SERIES, SEC_N };
#define SEC_SINK	SEC_METRICS	/* the first sink's */

/* Each section's name: a sink's is also its name in the reader. */
static const char *const sec_name[SEC_N] = {
	[SEC_AGENT] = "agent", [SEC_METRICS] = "metrics",
	[SEC_WINDOWS] = "windows", [SEC_SHIP] = "ship", [SEC_SERIES] = "series",
};

/* A configuration as read, and where its first error is. */
struct agent_conf {
	const char *path;
	FILE *f;
	char *buf;			/* the line being read */
	size_t cap;
	int line;			/* of the line being read */
	/* the first error: its line (0: none; -1: not a line's) and reason */
	int err_line;
	char err[640];
	/* [agent] */
	uint64_t interval_us;
	enum input_format fmt;
	char *dir, *archive, *status;
	/* the sinks' sections: which are given (on[SEC_AGENT] unused) */
	bool on[SEC_N];
	struct metrics_conf metrics;
	struct windows_conf windows;
	struct ship_conf ship;
	struct series_conf series;
	/* each section's keys and values as given: what a reload compares */
	struct buf sig[SEC_N];
	/* "section\0key" of the keys given so far, to refuse one twice */
	char **seen;
	size_t nseen;
};

static void conf_error(struct agent_conf *a, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Keep the first error (inih goes on reading after one). */
static void conf_error(struct agent_conf *a, int line, const char *fmt, ...)
{
	va_list ap;

	if (a->err_line)
		return;
	a->err_line = line;
	va_start(ap, fmt);
	vsnprintf(a->err, sizeof(a->err), fmt, ap);
	va_end(ap);
}

#ifndef TCPRT_NO_INIH
/*
 * inih's reader: the next line into @str (@num bytes), counted, without
 * its leading blanks (no continuation lines); a longer line than inih
 * takes is an error, and read as an empty one.
 */
static char *conf_line(char *str, int num, void *stream)
{
	struct agent_conf *a = stream;
	ssize_t n = getline(&a->buf, &a->cap, a->f);
	const char *p;

	if (n < 0)
		return NULL;
	a->line++;
	p = a->buf + strspn(a->buf, " \t");
	if (strlen(p) + 1 > (size_t)num) {
		conf_error(a, a->line, "longer than %d characters", num - 2);
		p = "\n";
	}
	memcpy(str, p, strlen(p) + 1);
	return str;
}

/* A key given twice in one section is an error, not the last one winning. */
static bool seen_before(struct agent_conf *a, const char *section,
			const char *name)
{
	size_t ls = strlen(section), ln = strlen(name), i;
	char *k;

	for (i = 0; i < a->nseen; i++)
		if (!strcmp(a->seen[i], section) &&
		    !strcmp(a->seen[i] + strlen(a->seen[i]) + 1, name))
			return true;
	k = xcalloc(ls + ln + 2, 1);
	memcpy(k, section, ls);
	memcpy(k + ls + 1, name, ln);
	a->seen = xrealloc(a->seen, a->nseen + 1, sizeof(*a->seen));
	a->seen[a->nseen++] = k;
	return false;
}

/* A key of [agent]: 0, or -1 with the reason in @err. */
static int agent_set(struct agent_conf *a, const char *name, const char *v,
		     char *err, size_t len)
{
	char **to;

	if (!strcmp(name, "interval")) {
		if (!parse_seconds(v, &a->interval_us) || a->interval_us == 0 ||
		    a->interval_us > 86400 * USEC_PER_SEC) {
			snprintf(err, len, "'%s' is not a number of seconds > 0, at most a day",
				 v);
			return -1;
		}
		return 0;
	}
	if (!strcmp(name, "input-format")) {
		a->fmt = input_format_of(v);
		if (a->fmt == INPUT_FORMAT_BAD) {
			snprintf(err, len, "'%s' is not auto, text or binary", v);
			return -1;
		}
		return 0;
	}
	if (!strcmp(name, "dir"))
		to = &a->dir;
	else if (!strcmp(name, "archive"))
		to = &a->archive;
	else if (!strcmp(name, "status"))
		to = &a->status;
	else
		return 1;
	free(*to);
	*to = xstrdup(v);
	return 0;
}

/* inih's handler: one key = value of @section.  1 to go on, 0 on error. */
static int conf_key(void *user, const char *section, const char *name,
		    const char *value)
{
	struct agent_conf *a = user;
	char why[512];
	int r, sec;

	if (!*section) {
		conf_error(a, a->line, "%s: a key before any [section]", name);
		return 0;
	}
	if (seen_before(a, section, name)) {
		conf_error(a, a->line, "[%s] %s: given twice", section, name);
		return 0;
	}
	if (!strcmp(section, "agent")) {
		sec = SEC_AGENT;
		r = agent_set(a, name, value, why, sizeof(why));
	} else if (!strcmp(section, "metrics")) {
		sec = SEC_METRICS;
		r = metrics_set(&a->metrics, name, value, why, sizeof(why));
	} else if (!strcmp(section, "windows")) {
		sec = SEC_WINDOWS;
		r = windows_set(&a->windows, name, value, why, sizeof(why));
	} else if (!strcmp(section, "ship")) {
		sec = SEC_SHIP;
		r = ship_set(&a->ship, name, value, why, sizeof(why));
	} else if (!strcmp(section, "series")) {
		sec = SEC_SERIES;
		r = series_set(&a->series, name, value, why, sizeof(why));
	} else {
		conf_error(a, a->line, "[%s]: not a section (agent, metrics, windows, ship, series)",
			   section);
		return 0;
	}
	a->on[sec] = true;
	buf_printf(&a->sig[sec], "%s=%s\n", name, value);
	if (r > 0)
		conf_error(a, a->line, "[%s] %s: not a key of [%s]", section, name,
			   section);
	else if (r < 0)
		conf_error(a, a->line, "[%s] %s: %s", section, name, why);
	return r == 0;
}
#endif

#ifndef TCPRT_NO_INIH
/* Whether @a has a sink, @but's aside (-1: none aside). */
static bool any_sink(const struct agent_conf *a, int but)
{
	int sec;

	for (sec = SEC_SINK; sec < SEC_N; sec++)
		if (a->on[sec] && sec != but)
			return true;
	return false;
}

/* Parse the open file and check what it sets, as conf_read(). */
static int conf_parse(struct agent_conf *a, int *st)
{
	char why[640];
	int rc = ini_parse_stream(conf_line, a, conf_key, a);

	if (rc == -2) {
		conf_error(a, -1, "out of memory");
		return -1;
	}
	/* inih's own error before any of ours: a line it could not read */
	if (rc > 0 && (!a->err_line || rc < a->err_line)) {
		a->err_line = 0;
		conf_error(a, rc, "not a [section], a key = value or a comment");
	}
	if (a->err_line)
		return -1;
	if (!any_sink(a, -1)) {
		conf_error(a, -1, "no sink: configure one ([metrics], [windows], [ship], [series])");
		return -1;
	}
	if (a->on[SEC_METRICS] && metrics_check(&a->metrics, why, sizeof(why)) < 0) {
		conf_error(a, -1, "[metrics] %s", why);
		return -1;
	}
	if (a->on[SEC_WINDOWS] && windows_check(&a->windows, why, sizeof(why)) < 0) {
		conf_error(a, -1, "[windows] %s", why);
		return -1;
	}
	a->ship.dir = a->dir;
	if (a->on[SEC_SHIP] && ship_check(&a->ship, why, sizeof(why)) < 0) {
		conf_error(a, -1, "[ship] %s", why);
		return -1;
	}
	if (a->on[SEC_SERIES] && series_check(&a->series, why, sizeof(why)) < 0) {
		conf_error(a, -1, "[series] %s", why);
		return -1;
	}
	if (a->on[SEC_SERIES] && !any_sink(a, SEC_SERIES)) {
		conf_error(a, -1, "[series] alone: the agent would read, and so consume, the logs for no sink; run tcprt series --every instead");
		return -1;
	}
	if (a->on[SEC_SERIES] && a->dir) {
		conf_error(a, -1, "[series] runs the module's series: not with [agent] dir (recorded logs)");
		return -1;
	}
	*st = EXIT_OK;
	return 0;
}
#endif

/* Every sink's defaults, before the file is read. */
static void sinks_conf_init(struct agent_conf *a)
{
	metrics_conf_init(&a->metrics);
	windows_conf_init(&a->windows);
	ship_conf_init(&a->ship);
	a->ship.queue = SHIP_AGENT_QUEUE;
	series_conf_init(&a->series);
	a->series.records = true;	/* the trigger reads them */
}

/*
 * Read and check @a->path: 0, or -1 with the first error in @a (its line
 * in err_line, -1 for one of the whole file).  EXIT_RUNTIME in *@st when
 * the file cannot be read, EXIT_USAGE when it is wrong.
 */
static int conf_read(struct agent_conf *a, int *st)
{
	struct stat sb;

	*st = EXIT_RUNTIME;
	a->f = fopen(a->path, "r");
	if (!a->f || fstat(fileno(a->f), &sb) < 0) {
		conf_error(a, -1, "%s", strerror(errno));
		return -1;
	}
	*st = EXIT_USAGE;
	/* it names what the agent writes, and where records go */
	if (sb.st_mode & (S_IWGRP | S_IWOTH)) {
		conf_error(a, -1, "writable by group or other users: chmod go-w %s",
			   a->path);
		return -1;
	}
#ifdef TCPRT_NO_INIH
	conf_error(a, -1, "this tcprt was built without the agent: %s",
		   TCPRT_NO_INIH);
	return -1;
#else
	return conf_parse(a, st);
#endif
}

static void conf_free(struct agent_conf *a)
{
	size_t i;

	if (a->f)
		fclose(a->f);
	free(a->buf);
	free(a->dir);
	free(a->archive);
	free(a->status);
	for (i = 0; i < a->nseen; i++)
		free(a->seen[i]);
	free(a->seen);
	metrics_conf_free(&a->metrics);
	windows_conf_free(&a->windows);
	ship_conf_free(&a->ship);
	series_conf_free(&a->series);
	for (i = 0; i < SEC_N; i++)
		buf_free(&a->sig[i]);
}

/*
 * The sink of section @sec of @a, into @rd: 0, or -1 after saying why.
 * The one place that knows how each sink starts.
 */
static int start_sink(struct agent_conf *a, struct reader *rd, int sec)
{
	char err[4200] = "";
	struct sink s;
	int r;

	switch (sec) {
	case SEC_METRICS:
		/* its OTLP retries and its logs' burst go by [agent] interval */
		a->metrics.interval_us = a->interval_us;
		r = metrics_sink_start(&s, &a->metrics, err, sizeof(err));
		break;
	case SEC_WINDOWS:
		/* says why itself; recorded logs: the records' clock */
		r = windows_sink_start(&s, &a->windows, a->dir != NULL);
		break;
	case SEC_SHIP:
		r = ship_sink_start(&s, &a->ship, err, sizeof(err));
		break;
	default:
		r = series_sink_start(&s, &a->series, err, sizeof(err));
		break;
	}
	if (r < 0) {
		if (*err)
			warnx_("agent: [%s] %s", sec_name[sec], err);
		return -1;
	}
	reader_add_sink(rd, &s);
	return 0;
}

static bool same_str(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

static bool same_section(const struct agent_conf *a,
			 const struct agent_conf *b, int sec)
{
	return a->sig[sec].len == b->sig[sec].len &&
	       (!a->sig[sec].len ||
		!memcmp(a->sig[sec].p, b->sig[sec].p, a->sig[sec].len));
}

/*
 * The sink of section @sec at a reload from @a to @b: kept when its
 * section is the same, stopped when gone or changed, started when new or
 * changed.  A ship stopped closes its epoch, started it begins the next;
 * a series run going is ended and kept.  What was done, for the line
 * that says so.
 */
static const char *reload_sink(struct agent_conf *a, struct agent_conf *b,
			       struct reader *rd, int sec)
{
	bool was = a->on[sec], is = b->on[sec];
	/* the metrics' interval is [agent]'s (its OTLP retries, its logs' burst) */
	bool changed = !same_section(a, b, sec) ||
		       (sec == SEC_METRICS && a->interval_us != b->interval_us);

	if (!was && !is)
		return "off";
	if (was && is && !changed)
		return "kept";
	if (was)
		reader_drop_sink(rd, sec_name[sec]);
	if (!is)
		return "stopped";
	if (start_sink(b, rd, sec) < 0)
		return "failed to start: off";
	return was ? "started again" : "started";
}

/*
 * SIGHUP: read the file again.  A wrong one is said and the running
 * configuration kept; otherwise each sink whose section changed is
 * stopped (its output flushed) and started, the others run on, and the
 * logs stay open: what was read went to the sinks of the time, what is
 * read next goes to the new ones.
 */
static void agent_reload(struct agent_conf *a, struct reader *rd)
{
	struct agent_conf b = {
		.path = a->path, .interval_us = 15 * USEC_PER_SEC,
		.fmt = INPUT_AUTO,
	};
	char done[160];
	size_t n = 0;
	int sec, st;

	sinks_conf_init(&b);
	if (conf_read(&b, &st) < 0) {
		if (b.err_line > 0)
			warnx_("agent: %s:%d: %s (SIGHUP: the configuration running is kept)",
			       b.path, b.err_line, b.err);
		else
			warnx_("agent: %s: %s (SIGHUP: the configuration running is kept)",
			       b.path, b.err);
		conf_free(&b);
		return;
	}
	if (!same_str(a->dir, b.dir) || !same_str(a->archive, b.archive) ||
	    a->fmt != b.fmt) {
		warnx_("agent: %s: [agent] dir, input-format and archive change at a restart only (SIGHUP: the configuration running is kept)",
		       a->path);
		conf_free(&b);
		return;
	}
	for (sec = SEC_SINK; sec < SEC_N; sec++)
		n += snprintf(done + n, sizeof(done) - n, "%s%s %s",
			      sec == SEC_SINK ? "" : ", ", sec_name[sec],
			      reload_sink(a, &b, rd, sec));
	warnx_("agent: %s read again (SIGHUP): %s", a->path, done);
	conf_free(a);
	*a = b;		/* b.ship.dir is b.dir, now a->dir */
	rd->status_path = a->status;
	/* a sink that failed to start is off */
	for (sec = SEC_SINK; sec < SEC_N; sec++)
		a->on[sec] = reader_has_sink(rd, sec_name[sec]);
}

/* The reader's period: with the windows or ship, theirs. */
static uint64_t read_period(const struct agent_conf *a)
{
	return (a->on[SEC_WINDOWS] || a->on[SEC_SHIP]) &&
	       a->interval_us > AGENT_READ_US ?
	       AGENT_READ_US : a->interval_us;
}

/* Run the sinks of @a until stopped (or once): an exit status. */
static int agent_run(struct agent_conf *a, bool once)
{
	struct reader *rd = xcalloc(1, sizeof(*rd));
	int sec, st = EXIT_OK;

	signals_init();
	rd->sink_stats = true;	/* tcprt_agent_status, in the metrics */
	if (!once) {
		signals_reload_init();
		rd->reloadable = true;
	}
	for (sec = SEC_SINK; sec < SEC_N && st == EXIT_OK; sec++)
		if (a->on[sec] && sec != SEC_SHIP && start_sink(a, rd, sec) < 0)
			st = EXIT_RUNTIME;
	if (st == EXIT_OK)
		st = reader_open(rd, a->dir, a->fmt, a->archive);
	/* once the logs open: a ship that cannot read sends nothing */
	if (st == EXIT_OK && a->on[SEC_SHIP] && start_sink(a, rd, SEC_SHIP) < 0)
		st = EXIT_RUNTIME;
	rd->status_path = a->status;
	while (st == EXIT_OK) {
		st = reader_run(rd, read_period(a), a->interval_us, once);
		if (st != EXIT_OK || once || stop_requested || !reload_requested)
			break;
		reload_requested = 0;
		agent_reload(a, rd);
	}
	/* --once: what was read did not all go */
	if (!reader_close(rd) && once && st == EXIT_OK)
		st = EXIT_RUNTIME;
	ct_free();
	free(rd);
	return st;
}

int cmd_agent(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'n' },
		{ "once", no_argument, NULL, '1' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct agent_conf a = {
		.path = AGENT_CONF, .interval_us = 15 * USEC_PER_SEC,
		.fmt = INPUT_AUTO,
	};
	bool check = false, once = false;
	int o, sec, st;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:n1h", opts, NULL)) != -1) {
		switch (o) {
		case 'c': a.path = optarg; break;
		case 'n': check = true; break;
		case '1': once = true; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: bad_option("agent", o, argv);
		}
	}
	if (optind < argc)
		usage_error("agent", "unexpected argument '%s'", argv[optind]);
	sinks_conf_init(&a);
	if (conf_read(&a, &st) < 0) {
		if (a.err_line > 0)
			warnx_("agent: %s:%d: %s", a.path, a.err_line, a.err);
		else
			warnx_("agent: %s: %s", a.path, a.err);
	} else if (check) {
		printf("%s: good; sinks:", a.path);
		for (sec = SEC_SINK; sec < SEC_N; sec++)
			if (a.on[sec])
				printf(" %s", sec_name[sec]);
		putchar('\n');
	} else {
		st = agent_run(&a, once);
	}
	conf_free(&a);
	return st;
}
