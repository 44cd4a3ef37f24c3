// SPDX-License-Identifier: GPL-2.0
/*
 * The series sink (sink_series.h): the module's sampling runs, one at
 * every multiple of a period and, with the trigger, one on an anomaly of
 * the stats, each kept in the store.
 *
 * State: a sink's, used by one thread (the reader's, or tcprt series
 * --every's loop), so no lock.  The module holds one run at a time
 * (series_run): a run another program started makes this one's start fail,
 * counted as not kept, and the next boundary is tried.
 *
 * A run is asked for half a bucket before its boundary: the module begins
 * it at the next multiple of the bucket width, the boundary itself.  The
 * trigger of tcprt series --every reads rt-network-stats here (reading
 * consumes them, so nothing else may); in tcprt agent, which hands the
 * sink every record, it reads the records' p99 instead, an interval of
 * trigger-interval seconds at a time, anomalies while a run goes held.
 *
 * With recorder (tcprt series --recorder US) there are no runs: the sink
 * turns the module's recorder on with recorder_slow_us US (and turns it
 * off at stop, unless it was on already) and keeps every window the
 * module freezes around a slow task (rt-network-windows, read every
 * WINDOW_POLL_US) as a run of its own, named by its first bucket's
 * microsecond.  In tcprt agent with the trigger too, a task that is an
 * anomaly on its own (anomaly_task_hit(): past its port's recent p99, or
 * a failure burst's) asks for the window around it (recorder_freeze), at
 * most one per trigger-gap; the intervals only keep the p99 current.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "anomaly.h"
#include "cmd.h"
#include "input.h"
#include "parse.h"
#include "series_line.h"
#include "series_store.h"
#include "sink_series.h"
#include "util.h"

#define PARAM_DIR	"/sys/module/tcp_rt/parameters"
#define POLL_US		20000ULL	/* series_run, while a run goes */
#define TRIGGER_POLL_US	200000ULL	/* stats are seconds apart */
#define END_WAIT_US	(2 * USEC_PER_SEC)	/* a run ended at stop */
#define WINDOW_POLL_US	100000ULL	/* rt-network-windows */

/* ---- the module's parameters ------------------------------------------------ */

static int write_param(const char *name, const char *val)
{
	char path[128];
	int fd, err = 0;

	snprintf(path, sizeof(path), PARAM_DIR "/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	if (err)
		warnx_("%s: cannot write %s: %s%s", path, val, strerror(err),
		       err == EINVAL || err == EBUSY ?
		       " (the kernel log says why)" : "");
	return err ? -1 : 0;
}

static int read_param(const char *name, unsigned long *v)
{
	char path[128], buf[32];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), PARAM_DIR "/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		warnx_("%s: %s (a tcp_rt older than 0.3 has no series)", path,
		       strerror(errno));
		return -1;
	}
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	*v = strtoul(buf, NULL, 10);
	return 0;
}

/* ---- one run ------------------------------------------------------------------ */

/* @c's run settings into the module's (those set): 0, or -1 after saying
 * why. */
static int write_run_settings(const struct series_conf *c)
{
	if ((c->us && write_param("series_us", c->us) < 0) ||
	    (c->buckets && write_param("series_buckets", c->buckets) < 0) ||
	    (c->ext && write_param("series_ext", c->ext) < 0) ||
	    (c->host && write_param("series_host", "1") < 0))
		return -1;
	return 0;
}

/* Start a run with @c's settings; its bucket width and count: 0, or -1
 * after saying why. */
static int run_begin(const struct series_conf *c, unsigned long *width,
		     unsigned long *n)
{
	if (input_check_module() < 0)
		return -1;
	if (write_run_settings(c) < 0 ||
	    read_param("series_us", width) < 0 ||
	    read_param("series_buckets", n) < 0 ||
	    write_param("series_run", "1") < 0)
		return -1;
	return 0;
}

/* When a run begun now is overdue: a bucket of delay to the first
 * boundary, and a generous margin (wall clock). */
static uint64_t run_deadline(unsigned long width, unsigned long n)
{
	return now_us() + (n + 1) * width + 10 * USEC_PER_SEC;
}

int series_run_once(const struct series_conf *c)
{
	unsigned long width, n, running;
	uint64_t deadline;

	/* Before the run is on: a stop in between would leave it running
	 * with nobody to end it. */
	signals_init();
	if (run_begin(c, &width, &n) < 0)
		return -1;
	deadline = run_deadline(width, n);
	while (!read_param("series_run", &running) && running) {
		if (stop_requested) {
			write_param("series_run", "0");
			continue;
		}
		if (now_us() > deadline) {
			warnx_("the run did not end in time; ending it");
			write_param("series_run", "0");
			break;
		}
		sleep_us(POLL_US);
	}
	return 0;
}

/* The store's bounds after a run or window of @start_s kept: the runs
 * removed, -1 when the store cannot be read. */
static int expire(const struct series_conf *c, uint64_t start_s)
{
	return series_store_expire(c->store, start_s > c->keep_s ?
				   start_s - c->keep_s : 0, c->keep_bytes);
}

/* The finished run's file into the store, then the store's bounds. */
static int keep_run(const struct series_conf *c, uint64_t start_s)
{
	unsigned long width, n;
	uint64_t lines;
	char path[4096];
	int removed;
	FILE *f;

	if (read_param("series_us", &width) < 0 ||
	    read_param("series_buckets", &n) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/" SERIES_FILE, DEBUGFS_DIR);
	f = fopen(path, "re");
	if (!f) {
		input_open_failed(path, errno);
		return -1;
	}
	if (series_store_save(c->store, f, start_s * USEC_PER_SEC, width, n,
			      &lines) < 0) {
		fclose(f);
		return -1;
	}
	fclose(f);
	removed = expire(c, start_s);
	fprintf(stderr, "tcprt: series: run of %llu kept in %s: %llu lines; %d older run(s) removed\n",
		(unsigned long long)start_s, c->store,
		(unsigned long long)lines, removed < 0 ? 0 : removed);
	return 0;
}

/* ---- the trigger -------------------------------------------------------------- */

/* The stats file, read as it fills, and the detector (either path's). */
struct stats_watch {
	int fd;
	char buf[8192];
	size_t len;
	struct anomaly an;
	uint64_t last_us;	/* the last run or window an anomaly asked (wall) */
	uint64_t triggered, held;
	uint64_t refused;	/* recorder_freeze writes the module refused */
};

/*
 * The stats lines that came, each fed to the detector: true at the first
 * anomaly, its reason in @why.  The file is opened when first needed and
 * again after an error (the module reloaded).
 */
static bool stats_anomaly(struct stats_watch *sw, char *why, size_t len)
{
	char path[128], *nl, *line, err[PARSE_WHY_MAX];
	struct record r;
	ssize_t n;

	if (sw->fd < 0) {
		snprintf(path, sizeof(path), "%s/rt-network-stats", DEBUGFS_DIR);
		sw->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		sw->len = 0;
		if (sw->fd < 0)
			return false;
	}
	n = read(sw->fd, sw->buf + sw->len, sizeof(sw->buf) - 1 - sw->len);
	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		close(sw->fd);
		sw->fd = -1;
	}
	if (n <= 0)
		return false;
	sw->len += (size_t)n;
	sw->buf[sw->len] = '\0';
	line = sw->buf;
	while ((nl = strchr(line, '\n'))) {
		bool hit;

		*nl = '\0';
		hit = parse_stats_line(line, (size_t)(nl - line), &r, err) &&
		      anomaly_feed(&sw->an, r.port, r.role == ROLE_CLIENT,
				   r.f[0], r.f[4], r.f[8], why, len);
		line = nl + 1;
		if (hit) {
			/* the rest waits for the next call */
			sw->len -= (size_t)(line - sw->buf);
			memmove(sw->buf, line, sw->len);
			return true;
		}
	}
	sw->len -= (size_t)(line - sw->buf);
	memmove(sw->buf, line, sw->len);
	if (sw->len == sizeof(sw->buf) - 1)
		sw->len = 0;	/* no line is that long: not stats */
	return false;
}

/* ---- the sink ----------------------------------------------------------------- */

enum series_state { SS_WAIT, SS_RUN, SS_REC };

struct series_sink {
	struct series_conf c;	/* the strings its own */
	enum series_state state;
	unsigned long width, n;	/* the next run's, then the run's */
	uint64_t next_us;	/* the next scheduled run's boundary (wall) */
	uint64_t start_s;	/* the run going: its name, in seconds */
	uint64_t deadline_us;	/* the run going is ended by then (wall) */
	uint64_t next_poll;	/* series_run or the stats read (mono) */
	uint64_t next_interval;	/* the records' interval ends (wall) */
	uint64_t kept, skipped;
	struct stats_watch sw;
	/* recorder: turned on here (and off at stop); windows kept or not */
	bool rec_owned, rec_said;
	uint64_t wins_kept, wins_skipped;
	/* the coarse ring's: what was kept last ends here (Unix us), parts
	 * kept and not */
	uint64_t kept_end_us, coarse_kept, coarse_skipped;
	/* at stop: its file and width as they were before the recorder went
	 * off (coarse_aside()), read in their place */
	FILE *aside;
	uint64_t aside_us;
};

/* Wait for the next boundary, with the run settings of now. */
static void plan(struct series_sink *ss)
{
	const struct series_conf *c = &ss->c;

	if (c->us)
		ss->width = strtoul(c->us, NULL, 10);
	else
		read_param("series_us", &ss->width);
	if (c->buckets)
		ss->n = strtoul(c->buckets, NULL, 10);
	else
		read_param("series_buckets", &ss->n);
	ss->next_us = (now_us() / c->period_us + 1) * c->period_us;
	ss->state = SS_WAIT;
}

static void not_kept(struct series_sink *ss, uint64_t start_s)
{
	ss->skipped++;
	warnx_("series: the run of %llu was not kept (%llu so far)",
	       (unsigned long long)start_s, (unsigned long long)ss->skipped);
}

/* A run named @start_s (seconds) asked for now. */
static void start_run(struct series_sink *ss, uint64_t start_s)
{
	if (run_begin(&ss->c, &ss->width, &ss->n) < 0) {
		not_kept(ss, start_s);
		plan(ss);
		return;
	}
	ss->start_s = start_s;
	ss->deadline_us = run_deadline(ss->width, ss->n);
	ss->next_poll = mono_us() + POLL_US;
	ss->state = SS_RUN;
}

/* The run that ended into the store, counted. */
static void keep(struct series_sink *ss)
{
	if (keep_run(&ss->c, ss->start_s) < 0)
		not_kept(ss, ss->start_s);
	else
		ss->kept++;
}

/* The run ended: kept, and the next one waited for. */
static void end_run(struct series_sink *ss)
{
	keep(ss);
	plan(ss);
}

/* The run going: ended when the module says so (or it is overdue). */
static void poll_run(struct series_sink *ss)
{
	unsigned long running;

	if (!read_param("series_run", &running) && running) {
		if (now_us() <= ss->deadline_us)
			return;
		warnx_("the run did not end in time; ending it");
		write_param("series_run", "0");
	}
	end_run(ss);
}

/*
 * An anomaly asks for a run now (@may: none is going): none started by
 * one for --trigger-gap, and the next scheduled run not close enough to
 * show it.  True when it starts one; held and counted otherwise.
 */
static bool anomaly_starts(struct series_sink *ss, uint64_t wall, bool may,
			   const char *why)
{
	uint64_t run_us = (uint64_t)ss->width * ss->n;
	struct stats_watch *sw = &ss->sw;

	if (!may || (sw->last_us && wall - sw->last_us < ss->c.gap_us) ||
	    ss->next_us < wall + run_us + USEC_PER_SEC) {
		sw->held++;
		warnx_("series: anomaly, %s; no run now (one going, one less than --trigger-gap ago, or the next due)",
		       why);
		return false;
	}
	warnx_("series: anomaly, %s: a run starts now", why);
	sw->last_us = wall;
	sw->triggered++;
	return true;
}

/* The stats that came: true when one's anomaly starts a run. */
static bool triggered(struct series_sink *ss, uint64_t wall)
{
	char why[256];

	while (stats_anomaly(&ss->sw, why, sizeof(why)))
		if (anomaly_starts(ss, wall, true, why))
			return true;	/* the rest waits for the next call */
	return false;
}

/*
 * The records' interval ended: every port's looked at (the first anomaly
 * may start a run, the others are held); true when a run starts.
 */
static bool interval_end(struct series_sink *ss, uint64_t wall)
{
	const uint64_t len = ss->c.interval_us;
	bool start = false;
	char why[256];
	size_t i = 0;

	ss->next_interval = (wall / len + 1) * len;
	while (anomaly_interval(&ss->sw.an, &i, why, sizeof(why)))
		if (anomaly_starts(ss, wall, !start && ss->state == SS_WAIT,
				   why))
			start = true;
	return start;
}

/* ---- the recorder's windows ---------------------------------------------------- */

/*
 * The recorder on with @c's settings and threshold: true when this call
 * turned it on (false: it was on already, its settings kept, or it could
 * not be, said).
 */
static bool rec_begin(const struct series_conf *c, bool *failed)
{
	char slow[24], coarse[24];
	unsigned long on;

	*failed = true;
	snprintf(slow, sizeof(slow), "%llu", (unsigned long long)c->recorder_us);
	if (input_check_module() < 0 || read_param("recorder", &on) < 0 ||
	    write_param("recorder_slow_us", slow) < 0)
		return false;
	*failed = false;
	if (on)
		return false;
	snprintf(coarse, sizeof(coarse), "%llu", (unsigned long long)c->coarse);
	if (write_run_settings(c) < 0 ||
	    (c->coarse && write_param("recorder_coarse", coarse) < 0) ||
	    write_param("recorder", "1") < 0) {
		*failed = true;
		return false;
	}
	return true;
}

/* The module's status @key now; 0 when it has none. */
static unsigned long long status_value(const char *key)
{
	unsigned long long v = 0;
	char path[128], line[256];
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "%s/status", DEBUGFS_DIR);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ' ') {
			v = strtoull(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * Before a window [@start, @end) (Unix us) is kept, or at the recorder's
 * stop (@start = @end = now, @stop): the coarse ring's
 * buckets (recorder_coarse; status recorder_coarse_us their width) from
 * where what was kept last ends - a window, or the ring's oldest line -
 * to the last of its bucket boundaries at or before @start, as a run of
 * their own: the minutes before at the coarse width, the window at the
 * fine one, the two never overlapping (a gap under one coarse bucket
 * between them).  At the stop, no further than the end of the ring's
 * newest line: the ring shows a bucket once its last fine one is folded,
 * so past that line a bucket may be quiet or not complete yet, and an
 * empty bucket kept there would say "no traffic" of a time that had some.
 * Nothing without a coarse ring.
 */
static void keep_coarse(struct series_sink *ss, uint64_t start, uint64_t end,
			bool stop)
{
	const char *what = stop ? "to the recorder's stop" : "before it";
	uint64_t cw, lo = 0, hi = 0;
	uint64_t from = ss->kept_end_us, first = 0, newest = 0, t, lines;
	unsigned long long sec, usec;
	char path[128], line[1024];
	FILE *f, *tmp;

	ss->kept_end_us = end;
	cw = ss->aside ? ss->aside_us : status_value("recorder_coarse_us");
	if (!cw)
		return;
	snprintf(path, sizeof(path), "%s/" COARSE_FILE, DEBUGFS_DIR);
	if (ss->aside) {
		f = ss->aside;
		rewind(f);
	} else {
		f = fopen(path, "re");
	}
	tmp = f ? tmpfile() : NULL;
	if (!tmp) {
		warnx_("%s: %s", f ? "tmpfile" : path, strerror(errno));
		goto out;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llu %llu", &sec, &usec) != 2)
			continue;
		t = sec * USEC_PER_SEC + usec;
		if (!first) {
			/* the grid, from the oldest line (every line is on it) */
			first = t;
			hi = start > first ? start - (start - first) % cw : 0;
			lo = from > first ?
			     from + (cw - (from - first) % cw) % cw : first;
		}
		if (t >= lo && t < hi)
			fputs(line, tmp);
		newest = t;
	}
	/* lines come in bucket order, on the grid: newest + cw is on it */
	if (stop && newest + cw < hi)
		hi = newest + cw;
	if (hi <= lo)
		goto out;
	rewind(tmp);
	if (series_store_save(ss->c.store, tmp, lo, cw, (hi - lo) / cw,
			      &lines) < 0) {
		ss->coarse_skipped++;
		goto out;
	}
	ss->coarse_kept++;
	fprintf(stderr, "tcprt: series: the coarse buckets %s, %llu.%06llu for %llu x %llu us, kept: %llu lines\n",
		what, (unsigned long long)(lo / USEC_PER_SEC),
		(unsigned long long)(lo % USEC_PER_SEC),
		(unsigned long long)((hi - lo) / cw), (unsigned long long)cw,
		(unsigned long long)lines);
out:
	if (tmp)
		fclose(tmp);
	if (f && f != ss->aside)
		fclose(f);
}

/*
 * The coarse ring's file and width as they are now, set aside for the
 * stop: turning the recorder off removes them, and the window the module
 * then gives out, cut, still gets its part, and the buckets since the
 * last window are kept (keep_coarse()).  Nothing without a coarse ring.
 */
static void coarse_aside(struct series_sink *ss)
{
	uint64_t cw = status_value("recorder_coarse_us");
	char path[128], buf[8192];
	FILE *f, *tmp;
	size_t n;

	if (!cw)
		return;
	snprintf(path, sizeof(path), "%s/" COARSE_FILE, DEBUGFS_DIR);
	f = fopen(path, "re");
	tmp = f ? tmpfile() : NULL;
	if (!tmp) {
		warnx_("%s: %s", f ? "tmpfile" : path, strerror(errno));
		if (f)
			fclose(f);
		return;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, tmp);
	fclose(f);
	if (fflush(tmp)) {
		warnx_("tmpfile: %s", strerror(errno));
		fclose(tmp);
		return;
	}
	ss->aside = tmp;
	ss->aside_us = cw;
}

/*
 * One window the module gives, if one waits, into the store: 1 kept, 0
 * none waiting, -1 not kept (said).
 */
static int keep_window(struct series_sink *ss)
{
	unsigned long long sec, usec, width, n;
	unsigned int slow, clipped;
	char path[128], head[128];
	uint64_t lines;
	int removed;
	FILE *f;

	snprintf(path, sizeof(path), "%s/" WINDOWS_FILE, DEBUGFS_DIR);
	f = fopen(path, "re");
	if (!f) {
		if (!ss->rec_said)
			input_open_failed(path, errno);
		ss->rec_said = true;
		return 0;
	}
	ss->rec_said = false;
	if (!fgets(head, sizeof(head), f)) {
		fclose(f);
		return 0;
	}
	if (sscanf(head, "# window %llu %llu %llu %llu slow=%u clipped=%u",
		   &sec, &usec, &width, &n, &slow, &clipped) != 6 ||
	    usec >= USEC_PER_SEC || !width || !n) {
		warnx_("%s: not a window's first line: %.80s", path, head);
		fclose(f);
		return -1;
	}
	keep_coarse(ss, sec * USEC_PER_SEC + usec,
		    sec * USEC_PER_SEC + usec + width * n, false);
	if (series_store_save(ss->c.store, f, sec * USEC_PER_SEC + usec, width,
			      n, &lines) < 0) {
		fclose(f);
		return -1;
	}
	fclose(f);
	removed = expire(&ss->c, sec);
	fprintf(stderr, "tcprt: series: window of %llu.%06llu (%llu x %llu us, %u slow task(s)%s) kept in %s: %llu lines; %d older run(s) removed\n",
		sec, usec, n, width, slow,
		clipped ? ", some buckets gone from the ring before it was made" : "",
		ss->c.store, (unsigned long long)lines, removed < 0 ? 0 : removed);
	return 1;
}

/* Every window waiting kept; the recorder on again if it went off. */
static void poll_windows(struct series_sink *ss)
{
	unsigned long on;
	bool failed;
	int k;

	while ((k = keep_window(ss)) != 0) {
		if (k > 0)
			ss->wins_kept++;
		else
			ss->wins_skipped++;
	}
	/* the module reloaded, or the recorder ended by a hand: on again */
	if (ss->rec_owned && !read_param("recorder", &on) && !on &&
	    rec_begin(&ss->c, &failed))
		warnx_("series: the recorder was off (the module reloaded?): on again");
}

/*
 * The recorder's trigger: a task that is an anomaly on its own asks for
 * the window around its span (its record's start and duration), at most
 * one per trigger-gap; those held back are counted, not said (a port past
 * its p99 has them by the hundred).
 */
static void rec_trigger(struct series_sink *ss, const struct record *r)
{
	struct stats_watch *sw = &ss->sw;
	uint64_t wall = now_us(), d = 0;
	char why[256], span[64];

	if (!anomaly_task_hit(&sw->an, r, why, sizeof(why)))
		return;
	if (sw->last_us && wall - sw->last_us < ss->c.gap_us) {
		sw->held++;
		return;
	}
	sw->last_us = wall;
	rec_metric(r, M_DURATION, &d);
	snprintf(span, sizeof(span), "%llu %llu %llu", (unsigned long long)r->sec,
		 (unsigned long long)r->usec, (unsigned long long)d);
	if (write_param("recorder_freeze", span) < 0) {
		sw->refused++;
		return;
	}
	sw->triggered++;
	warnx_("series: anomaly, %s: its window asked for", why);
}

/* A record of the agent's: into the detector's interval. */
static void series_record(void *priv, const struct record *r)
{
	struct series_sink *ss = priv;

	if (ss->state == SS_REC)
		rec_trigger(ss, r);
	else
		anomaly_task(&ss->sw.an, r);
}

/* The recorder's trigger: the interval ended, its p99s the recent ones. */
static void rec_interval_end(struct series_sink *ss, uint64_t wall)
{
	const uint64_t len = ss->c.interval_us;
	char why[256];
	size_t i = 0;

	ss->next_interval = (wall / len + 1) * len;
	while (anomaly_interval(&ss->sw.an, &i, why, sizeof(why)))
		;	/* the tasks were judged as they came */
}

static void series_tick(void *priv, uint64_t now, const struct sink_input *in)
{
	struct series_sink *ss = priv;
	uint64_t wall = now_us();

	(void)in;
	if (ss->state == SS_REC) {
		if (ss->c.trigger && wall >= ss->next_interval)
			rec_interval_end(ss, wall);
		if (now >= ss->next_poll) {
			ss->next_poll = now + WINDOW_POLL_US;
			poll_windows(ss);
		}
		return;
	}
	if (ss->c.trigger && ss->c.records && wall >= ss->next_interval &&
	    interval_end(ss, wall)) {
		start_run(ss, wall / USEC_PER_SEC);
		return;
	}
	if (ss->state == SS_RUN) {
		if (now >= ss->next_poll) {
			ss->next_poll = now + POLL_US;
			poll_run(ss);
		}
		return;
	}
	if (ss->c.trigger && !ss->c.records && now >= ss->next_poll) {
		ss->next_poll = now + TRIGGER_POLL_US;
		if (triggered(ss, wall)) {
			/* now, at the next bucket multiple: its second names it */
			start_run(ss, wall / USEC_PER_SEC);
			return;
		}
	}
	if (wall >= ss->next_us - ss->width / 2)
		start_run(ss, ss->next_us / USEC_PER_SEC);
}

/* mono_us() at wall clock time @at (now, if past). */
static uint64_t mono_at(uint64_t at, uint64_t wall, uint64_t mono)
{
	return mono + (at > wall ? at - wall : 0);
}

static uint64_t series_next_tick(const void *priv)
{
	const struct series_sink *ss = priv;
	uint64_t wall = now_us(), mono = mono_us(), t, end;

	if (ss->state == SS_RUN || ss->state == SS_REC)
		t = ss->next_poll;
	else
		t = mono_at(ss->next_us - ss->width / 2, wall, mono);
	if (ss->c.trigger && ss->c.records) {
		end = mono_at(ss->next_interval, wall, mono);
		t = end < t ? end : t;
	} else if (ss->c.trigger && ss->state == SS_WAIT &&
		   ss->next_poll < t) {
		t = ss->next_poll;
	}
	return t ? t : 1;
}

static void series_stats(void *priv, FILE *out)
{
	struct series_sink *ss = priv;

	if (ss->state == SS_REC) {
		sink_stat(out, "series", "windows_kept", ss->wins_kept);
		sink_stat(out, "series", "windows_not_kept", ss->wins_skipped);
		sink_stat(out, "series", "coarse_kept", ss->coarse_kept);
		sink_stat(out, "series", "coarse_not_kept", ss->coarse_skipped);
		if (!ss->c.trigger)
			return;
		sink_stat(out, "series", "windows_triggered", ss->sw.triggered);
		sink_stat(out, "series", "windows_refused", ss->sw.refused);
		sink_stat(out, "series", "anomalies_held", ss->sw.held);
		sink_stat(out, "series", "records_untracked", ss->sw.an.untracked);
		return;
	}
	sink_stat(out, "series", "runs_kept", ss->kept);
	sink_stat(out, "series", "runs_not_kept", ss->skipped);
	if (!ss->c.trigger)
		return;
	sink_stat(out, "series", "runs_triggered", ss->sw.triggered);
	sink_stat(out, "series", "anomalies_held", ss->sw.held);
	sink_stat(out, "series", "stats_untracked", ss->sw.an.untracked);
}

/* Stop: a run going is ended and kept; what was done said. */
static bool series_stop(void *priv)
{
	struct series_sink *ss = priv;
	unsigned long running;
	uint64_t end = mono_us() + END_WAIT_US;

	if (ss->state == SS_REC) {
		bool owned = ss->rec_owned;

		/*
		 * ended, the module gives the window it was copying, cut, and
		 * the coarse ring is gone: read first, for that window's part
		 * and for the buckets since the last window.  A recorder left
		 * on goes on with its ring: no part at stop.
		 */
		if (owned) {
			coarse_aside(ss);
			write_param("recorder", "0");
		}
		ss->rec_owned = false;
		poll_windows(ss);
		if (ss->aside) {
			uint64_t now = now_us();

			keep_coarse(ss, now, now, true);
			fclose(ss->aside);
		}
		fprintf(stderr, "tcprt: series: %llu window(s) kept, %llu not; %llu coarse part(s) kept, %llu not%s\n",
			(unsigned long long)ss->wins_kept,
			(unsigned long long)ss->wins_skipped,
			(unsigned long long)ss->coarse_kept,
			(unsigned long long)ss->coarse_skipped,
			owned ? "; the recorder turned off" :
			"; the recorder left on, as it was found");
		if (ss->c.trigger)
			fprintf(stderr, "tcprt: series: %llu window(s) asked for by an anomaly, %llu refused by the module, %llu anomalies held back (--trigger-gap); %llu records of ports past the %d followed\n",
				(unsigned long long)ss->sw.triggered,
				(unsigned long long)ss->sw.refused,
				(unsigned long long)ss->sw.held,
				(unsigned long long)ss->sw.an.untracked,
				ANOMALY_PORTS);
		goto out;
	}
	if (ss->state == SS_RUN) {
		write_param("series_run", "0");
		while (!read_param("series_run", &running) && running &&
		       mono_us() < end)
			sleep_us(POLL_US);
		keep(ss);	/* and no next one to plan */
	}
	fprintf(stderr, "tcprt: series: %llu run(s) kept, %llu not\n",
		(unsigned long long)ss->kept, (unsigned long long)ss->skipped);
	if (ss->c.trigger)
		fprintf(stderr, "tcprt: series: %llu run(s) started by an anomaly, %llu anomalies held back (--trigger-gap, a run going or due); %llu %s of ports past the %d followed\n",
			(unsigned long long)ss->sw.triggered,
			(unsigned long long)ss->sw.held,
			(unsigned long long)ss->sw.an.untracked,
			ss->c.records ? "records" : "stats lines", ANOMALY_PORTS);
out:
	if (ss->sw.fd >= 0)
		close(ss->sw.fd);
	anomaly_free(&ss->sw.an);
	series_conf_free(&ss->c);
	free(ss);
	return true;
}

static const struct sink_ops series_ops = {
	.name = "series",
	.tick = series_tick,
	.next_tick = series_next_tick,
	.stats = series_stats,
	.stop = series_stop,
};

/* In tcprt agent with the trigger: the records too (series_record). */
static const struct sink_ops series_records_ops = {
	.name = "series",
	.record = series_record,
	.tick = series_tick,
	.next_tick = series_next_tick,
	.stats = series_stats,
	.stop = series_stop,
};

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

int series_sink_start(struct sink *s, const struct series_conf *c,
		      char *err, size_t len)
{
	struct series_sink *ss;
	unsigned long stats;

	if (mkdir(c->store, 0750) < 0 && errno != EEXIST) {
		snprintf(err, len, "%s: %s", c->store, strerror(errno));
		return -1;
	}
	ss = xcalloc(1, sizeof(*ss));
	ss->c = *c;
	ss->c.us = dup_or_null(c->us);
	ss->c.buckets = dup_or_null(c->buckets);
	ss->c.ext = dup_or_null(c->ext);
	ss->c.store = xstrdup(c->store);
	ss->width = 1000;
	ss->n = 1000;
	ss->sw.fd = -1;
	anomaly_init(&ss->sw.an, c->factor, c->fail_per_1000);
	if (c->recorder_us) {
		bool failed;

		ss->rec_owned = rec_begin(c, &failed);
		if (failed) {
			snprintf(err, len, "series: the recorder could not be turned on (said above)");
			series_conf_free(&ss->c);
			anomaly_free(&ss->sw.an);
			free(ss);
			return -1;
		}
		if (!ss->rec_owned)
			warnx_("series: the recorder was on already: its settings kept, recorder_slow_us set, its windows kept here");
		ss->state = SS_REC;
		ss->next_poll = mono_us();
		ss->next_interval = (now_us() / c->interval_us + 1) *
				    c->interval_us;
		s->ops = c->trigger ? &series_records_ops : &series_ops;
		s->priv = ss;
		return 0;
	}
	if (c->trigger && !c->records && read_param("stats", &stats) == 0 &&
	    stats)
		warnx_("series: --trigger reads the stats, which are off (the module's stats is 1): no run will be started by an anomaly until they are on");
	plan(ss);
	ss->next_interval = (now_us() / c->interval_us + 1) * c->interval_us;
	s->ops = c->trigger && c->records ? &series_records_ops : &series_ops;
	s->priv = ss;
	return 0;
}

int series_every(const struct series_conf *c)
{
	uint64_t now, next;
	char err[4200];
	struct sink s;

	/* Before the recorder or a run is on: a stop in between would
	 * leave it on with nobody to turn it off or keep what it held. */
	signals_init();
	if (series_sink_start(&s, c, err, sizeof(err)) < 0)
		die(EXIT_RUNTIME, "%s", err);
	while (!stop_requested) {
		now = mono_us();
		s.ops->tick(s.priv, now, NULL);
		next = s.ops->next_tick(s.priv);
		if (next > now)
			sleep_us(next - now < USEC_PER_SEC ? next - now :
				 USEC_PER_SEC);
	}
	s.ops->stop(s.priv);
	return EXIT_OK;
}

/* ---- the settings ------------------------------------------------------------- */

void series_conf_init(struct series_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->keep_s = 3 * 86400;
	c->keep_bytes = 1000000000;
	c->factor = 4;
	c->fail_per_1000 = 50;
	c->gap_us = 60 * USEC_PER_SEC;
	c->interval_us = ANOMALY_INTERVAL_S * USEC_PER_SEC;
}

void series_conf_free(struct series_conf *c)
{
	free(c->us);
	free(c->buckets);
	free(c->ext);
	free(c->store);
	c->us = c->buckets = c->ext = c->store = NULL;
}

/* ext: names of series_ext's measures, or all (every one, named). */
static int set_ext(struct series_conf *c, const char *v, char *err,
		   size_t len)
{
	char all[160] = "";
	const char *p = v;
	int k;

	if (!strcmp(v, "all")) {
		for (k = SERIES_NBASE; k < SERIES_NFIELDS; k++) {
			strcat(all, series_field_name[k]);
			if (k + 1 < SERIES_NFIELDS)
				strcat(all, ",");
		}
		set_str(&c->ext, all);
		return 0;
	}
	while (*p) {
		size_t n = strcspn(p, ",");

		for (k = SERIES_NBASE; k < SERIES_NFIELDS; k++)
			if (strlen(series_field_name[k]) == n &&
			    !strncmp(p, series_field_name[k], n))
				break;
		if (k == SERIES_NFIELDS) {
			snprintf(err, len, "'%.*s' is not a measure (ce_bytes, ce_segs, ece, dup_bytes, dup_segs, flows, far_bytes_in, far_bytes_out, or all)",
				 (int)n, p);
			return -1;
		}
		p += n + !!p[n];
	}
	set_str(&c->ext, v);
	return 0;
}

/* A run's settings: us, buckets, ext, host. */
static int set_run(struct series_conf *c, const char *name, const char *v,
		   char *err, size_t len)
{
	uint64_t n;

	if (!strcmp(name, "host"))
		return set_flag(&c->host, v, err, len);
	if (!strcmp(name, "ext"))
		return set_ext(c, v, err, len);
	if (!strcmp(name, "us")) {
		if (strcmp(v, "100") && strcmp(v, "1000") && strcmp(v, "10000")) {
			snprintf(err, len, "'%s' is not 100, 1000 or 10000", v);
			return -1;
		}
		set_str(&c->us, v);
		return 0;
	}
	if (!strcmp(name, "buckets")) {
		if (!parse_u64(v, strlen(v), &n) || !n || n > 10000) {
			snprintf(err, len, "'%s' is not in 1..10000", v);
			return -1;
		}
		set_str(&c->buckets, v);
		return 0;
	}
	return 1;
}

/* The trigger's: trigger, trigger-factor, trigger-fail, trigger-gap. */
static int set_trigger(struct series_conf *c, const char *name,
		       const char *v, char *err, size_t len)
{
	char *end;

	c->trigger_set = true;
	if (!strcmp(name, "trigger"))
		return set_flag(&c->trigger, v, err, len);
	if (!strcmp(name, "trigger-gap"))
		return set_seconds(&c->gap_us, v, true, err, len);
	if (!strcmp(name, "trigger-factor")) {
		c->factor = strtod(v, &end);
		if (end == v || *end || !(c->factor >= 1.5) || c->factor > 1000) {
			snprintf(err, len, "'%s' is not a number from 1.5 to 1000", v);
			return -1;
		}
		return 0;
	}
	if (!strcmp(name, "trigger-interval")) {
		/* the agent's key alone: tcprt series has no such option */
		if (set_seconds(&c->interval_us, v, false, err, len) < 0)
			return -1;
		if (c->interval_us % USEC_PER_SEC ||
		    c->interval_us > 3600 * USEC_PER_SEC) {
			snprintf(err, len, "'%s' is not a whole number of seconds, 1 to 3600",
				 v);
			return -1;
		}
		return 0;
	}
	if (strcmp(name, "trigger-fail"))
		return 1;
	if (!parse_u64(v, strlen(v), &c->fail_per_1000) ||
	    c->fail_per_1000 > 1000) {
		snprintf(err, len, "'%s' is not failures per 1000 tasks, 0 (off) to 1000",
			 v);
		return -1;
	}
	return 0;
}

int series_set(struct series_conf *c, const char *name, const char *v,
	       char *err, size_t len)
{
	bool flag = !strcmp(name, "host") || !strcmp(name, "trigger");
	uint64_t n, unit;

	if (!v && !flag) {
		snprintf(err, len, "needs a value");
		return -1;
	}
	if (!strncmp(name, "trigger", 7))
		return set_trigger(c, name, v, err, len);
	if (!strcmp(name, "store")) {
		set_str(&c->store, v);
		return 0;
	}
	if (!strcmp(name, "every")) {
		if (set_seconds(&c->period_us, v, false, err, len) < 0)
			return -1;
		if (c->period_us % USEC_PER_SEC) {
			snprintf(err, len, "'%s' is not a whole number of seconds, 1 or more",
				 v);
			return -1;
		}
		return 0;
	}
	if (!strcmp(name, "recorder")) {
		if (!parse_u64(v, strlen(v), &c->recorder_us) ||
		    !c->recorder_us || c->recorder_us > 100000000) {
			snprintf(err, len, "'%s' is not microseconds, 1 to 100000000", v);
			return -1;
		}
		return 0;
	}
	if (!strcmp(name, "coarse")) {
		if (!parse_u64(v, strlen(v), &c->coarse) || !c->coarse ||
		    c->coarse > 100000) {
			snprintf(err, len, "'%s' is not buckets, 1 to 100000", v);
			return -1;
		}
		return 0;
	}
	if (!strcmp(name, "keep")) {
		if (!parse_age(v, strlen(v), &n, &unit) || !n) {
			snprintf(err, len, "'%s' is not an age (30m, 12h, 3d)", v);
			return -1;
		}
		c->keep_s = n * unit;
		return 0;
	}
	if (!strcmp(name, "keep-bytes")) {
		if (!parse_bytes(v, &c->keep_bytes) || !c->keep_bytes) {
			snprintf(err, len, "'%s' is not a size (500M, 2G)", v);
			return -1;
		}
		return 0;
	}
	return set_run(c, name, v, err, len);
}

int series_check(const struct series_conf *c, char *err, size_t len)
{
	if (!c->period_us && !c->recorder_us) {
		snprintf(err, len, "every: not set (a run at every multiple of that many seconds), nor recorder");
		return -1;
	}
	if (c->period_us && c->recorder_us) {
		snprintf(err, len, "every and recorder: one or the other (the module refuses a run while its recorder records)");
		return -1;
	}
	if (c->coarse && !c->recorder_us) {
		snprintf(err, len, "coarse is the recorder's: with recorder");
		return -1;
	}
	if (c->recorder_us && c->trigger && !c->records) {
		snprintf(err, len, "trigger with recorder judges each record: tcprt agent's [series] only");
		return -1;
	}
	if (!c->store) {
		snprintf(err, len, "store: not set (the folder the runs are kept in)");
		return -1;
	}
	return 0;
}
