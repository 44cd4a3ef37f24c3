// SPDX-License-Identifier: GPL-2.0
/*
 * The one reader that feeds sinks (reader.h).  One thread: the sinks'
 * record() run in the reader's, and must not block it (docs/agent.md).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "reader.h"
#include "util.h"

#define RESCAN_US	1000000ULL	/* log files that came or went */

/* A line of a log: to every sink that wants lines. */
static void reader_line(const char *line, size_t len, int cpu, uint64_t load_id,
			const struct record *r, void *arg)
{
	struct reader *rd = arg;
	size_t i;

	for (i = 0; i < rd->nsinks; i++)
		if (rd->sinks[i].ops->line)
			rd->sinks[i].ops->line(rd->sinks[i].priv, line, len, cpu,
					       load_id, r);
}

static void reader_chunk(const char *buf, size_t len, int cpu, uint64_t load_id,
			 void *arg)
{
	struct reader *rd = arg;
	size_t i;

	for (i = 0; i < rd->nsinks; i++)
		if (rd->sinks[i].ops->chunk)
			rd->sinks[i].ops->chunk(rd->sinks[i].priv, buf, len, cpu,
						load_id);
}

static void load_id_line(const char *key, uint64_t value, void *arg)
{
	if (!strcmp(key, "load_id"))
		*(uint64_t *)arg = value;
}

/* A log opened: the module load it belongs to, by the status file now. */
static uint64_t reader_load_id(int cpu, void *arg)
{
	struct reader *rd = arg;
	uint64_t id = 0;

	(void)cpu;
	input_status(&rd->in, load_id_line, &id);
	return id;
}

/*
 * The input's hooks and order for the sinks fed now: lines, chunks and
 * the logs' load ids only when a sink takes them (no cost otherwise).
 */
static void reader_hooks(struct reader *rd)
{
	bool lines = false, chunks = false, per_log = false;
	size_t i;

	if (!rd->in.dir)
		return;		/* not open yet: reader_open() sets them */
	for (i = 0; i < rd->nsinks; i++) {
		lines |= rd->sinks[i].ops->line != NULL;
		chunks |= rd->sinks[i].ops->chunk != NULL;
		per_log |= rd->sinks[i].ops->per_log;
	}
	rd->in.line_fn = lines ? reader_line : NULL;
	rd->in.chunk_fn = chunks ? reader_chunk : NULL;
	rd->in.by_file = per_log;
	if ((lines || chunks) && !rd->in.open_fn)
		input_set_open_fn(&rd->in, reader_load_id);
}

void reader_add_sink(struct reader *rd, const struct sink *s)
{
	if (rd->nsinks == READER_SINKS_MAX)
		die(EXIT_RUNTIME, "more than %d sinks", READER_SINKS_MAX);
	rd->sinks[rd->nsinks++] = *s;
	reader_hooks(rd);
}

bool reader_drop_sink(struct reader *rd, const char *name)
{
	bool all = true;
	size_t i;

	for (i = 0; i < rd->nsinks; i++) {
		if (strcmp(rd->sinks[i].ops->name, name))
			continue;
		all = rd->sinks[i].ops->stop(rd->sinks[i].priv);
		memmove(&rd->sinks[i], &rd->sinks[i + 1],
			(rd->nsinks - i - 1) * sizeof(rd->sinks[0]));
		rd->nsinks--;
		break;
	}
	reader_hooks(rd);
	return all;
}

bool reader_has_sink(const struct reader *rd, const char *name)
{
	size_t i;

	for (i = 0; i < rd->nsinks; i++)
		if (!strcmp(rd->sinks[i].ops->name, name))
			return true;
	return false;
}

/* A record read: to every sink, in the order they were added. */
static void reader_record(const struct record *r, void *arg)
{
	struct reader *rd = arg;
	size_t i;

	for (i = 0; i < rd->nsinks; i++)
		if (rd->sinks[i].ops->record)
			rd->sinks[i].ops->record(rd->sinks[i].priv, r);
}

static void status_line(const char *key, uint64_t value, void *arg)
{
	struct reader *rd = arg;

	if (rd->nstatus == SINK_STATUS_MAX || strlen(key) >= sizeof(rd->status[0].key))
		return;
	/* keys are [a-z_A-Z0-9]; anything else would need escaping */
	if (key[strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")])
		return;
	snprintf(rd->status[rd->nstatus].key, sizeof(rd->status[0].key), "%s", key);
	rd->status[rd->nstatus++].value = value;
}

int reader_open(struct reader *rd, const char *dir, enum input_format fmt,
		const char *archive)
{
	int st = input_open(&rd->in, dir, false, fmt, reader_record, rd);

	reader_hooks(rd);
	if (st != EXIT_OK || !archive)
		return st;
	if (archive_open(&rd->archive, archive) < 0)
		return EXIT_RUNTIME;
	rd->in.archive = &rd->archive;
	return EXIT_OK;
}

/* The module's status as it is now. */
static void read_status(struct reader *rd)
{
	rd->nstatus = 0;
	input_status(&rd->in, status_line, rd);
}

/* Drain the logs into the sinks; the status. */
static void update(struct reader *rd)
{
	input_read(&rd->in);
	read_status(rd);
}

/* The next time of a thing due every @every after @t, not before @now. */
static uint64_t later(uint64_t t, uint64_t every, uint64_t now)
{
	t += every;
	return t > now ? t : now + every;	/* fell behind (suspend?): no burst */
}

/* What the reader tells the sinks now. */
static struct sink_input reader_input(const struct reader *rd)
{
	return (struct sink_input){
		.records = rd->in.records, .bad = rd->in.bad,
		.status = rd->status, .nstatus = rd->nstatus,
		.stats = rd->stats, .nstats = rd->nstats,
	};
}

/* Every sink's stats() lines now, into rd->stats. */
static void read_sink_stats(struct reader *rd)
{
	char *buf = NULL, *p, *nl;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	unsigned long long v;
	char key[sizeof(rd->stats[0].key)];

	if (!f)
		die(EXIT_RUNTIME, "open_memstream: %s", strerror(errno));
	for (i = 0; i < rd->nsinks; i++)
		if (rd->sinks[i].ops->stats)
			rd->sinks[i].ops->stats(rd->sinks[i].priv, f);
	fclose(f);
	rd->nstats = 0;
	for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
		/* SINK_STATS_MAX has room for every sink's (sink.h) */
		if (rd->nstats == SINK_STATS_MAX ||
		    sscanf(p, "%63s %llu", key, &v) != 2)
			continue;
		memcpy(rd->stats[rd->nstats].key, key, sizeof(key));
		rd->stats[rd->nstats++].value = v;
	}
	free(buf);
}

/* The status file: what was read, then each sink's counts. */
static void fill_status(FILE *f, void *arg)
{
	const struct reader *rd = arg;
	size_t i;

	fprintf(f, "records_read %llu\nmalformed_lines %llu\n",
		(unsigned long long)rd->in.records,
		(unsigned long long)rd->in.bad);
	if (rd->in.archive)
		fprintf(f, "archive_lines %llu\narchive_failed %llu\n",
			(unsigned long long)rd->archive.written,
			(unsigned long long)rd->archive.failed);
	fputs("sinks", f);
	for (i = 0; i < rd->nsinks; i++)
		fprintf(f, " %s", rd->sinks[i].ops->name);
	fputc('\n', f);
	for (i = 0; i < rd->nsinks; i++)
		if (rd->sinks[i].ops->stats)
			rd->sinks[i].ops->stats(rd->sinks[i].priv, f);
}

/* Every sink's output of this interval, the status: -1 if one failed. */
static int output(struct reader *rd, bool last)
{
	struct sink_input si;
	int st = 0;
	size_t i;

	if (rd->sink_stats)
		read_sink_stats(rd);
	si = reader_input(rd);

	for (i = 0; i < rd->nsinks; i++)
		if (rd->sinks[i].ops->output &&
		    rd->sinks[i].ops->output(rd->sinks[i].priv, &si, last) < 0)
			st = -1;
	/* a status that failed is said, and written again next time */
	if (rd->status_path)
		write_file_atomic(rd->status_path, fill_status, rd);
	return st;
}

/* Every sink's tick; the earliest of @next and the ticks they want. */
static uint64_t tick(struct reader *rd, uint64_t now, uint64_t next)
{
	struct sink_input si = reader_input(rd);
	uint64_t t;
	size_t i;

	for (i = 0; i < rd->nsinks; i++) {
		const struct sink *s = &rd->sinks[i];

		if (s->ops->tick)
			s->ops->tick(s->priv, now, &si);
		t = s->ops->next_tick ? s->ops->next_tick(s->priv) : 0;
		if (t && t < next)
			next = t;
	}
	return next;
}

/*
 * Wait until @next (mono_us()), at most DEFAULT_POLL_US (a stop asked
 * between the test and poll() waits no longer), for the sinks' file
 * descriptors too; hand them what came.  False: a sink asked to stop.
 */
static bool wait_and_serve(struct reader *rd, uint64_t next)
{
	struct pollfd pfd[READER_SINKS_MAX * SINK_POLL_MAX];
	unsigned int n = 0, first[READER_SINKS_MAX], count[READER_SINKS_MAX];
	uint64_t now = mono_us(), wait = next > now ? next - now : 0;
	bool go_on = true;
	size_t i;

	for (i = 0; i < rd->nsinks; i++) {
		const struct sink *s = &rd->sinks[i];

		first[i] = n;
		count[i] = s->ops->pollfds ? s->ops->pollfds(s->priv, pfd + n) : 0;
		n += count[i];
	}
	if (wait > DEFAULT_POLL_US)
		wait = DEFAULT_POLL_US;
	if (poll(pfd, n, (int)(wait / 1000)) <= 0)
		return true;
	for (i = 0; i < rd->nsinks; i++)
		if (count[i] && !rd->sinks[i].ops->serve(rd->sinks[i].priv,
							   pfd + first[i], count[i]))
			go_on = false;
	return go_on;
}

int reader_run(struct reader *rd, uint64_t read_us, uint64_t output_us,
	       bool once)
{
	uint64_t now = mono_us(), next_read, next_out, next_rescan;

	update(rd);
	if (once)
		input_finish(&rd->in);
	/* a sink started at a reload has its failures retried, as later */
	if (output(rd, once) < 0 && !rd->started)
		return EXIT_RUNTIME;
	rd->started = true;
	next_read = now + read_us;
	next_out = now + output_us;
	next_rescan = now + RESCAN_US;
	while (!once && !stop_requested) {
		if (rd->reloadable && reload_requested)
			return EXIT_OK;	/* the caller changes the sinks */
		now = mono_us();
		if (now >= next_read || now >= next_out) {
			if (now >= next_rescan || rd->in.gone) {
				input_rescan(&rd->in);
				next_rescan = now + RESCAN_US;
			}
			input_read(&rd->in);
			if (now >= next_read)
				next_read = later(next_read, read_us, now);
		}
		if (now >= next_out) {
			read_status(rd);
			output(rd, false);	/* a failure is retried next time */
			next_out = later(next_out, output_us, now);
		}
		if (!wait_and_serve(rd, tick(rd, now, next_read < next_out ?
						     next_read : next_out)))
			break;
	}
	if (!once) {
		update(rd);
		input_finish(&rd->in);
		output(rd, true);
	}
	input_report(&rd->in);
	return EXIT_OK;
}

bool reader_close(struct reader *rd)
{
	bool all = true;
	size_t i;

	for (i = 0; i < rd->nsinks; i++)
		if (!rd->sinks[i].ops->stop(rd->sinks[i].priv))
			all = false;
	rd->nsinks = 0;
	/* an archive that lacks lines: not all went */
	if (rd->in.archive && !archive_close(rd->in.archive))
		all = false;
	rd->in.archive = NULL;
	input_close(&rd->in);
	return all;
}
