// SPDX-License-Identifier: GPL-2.0
/*
 * The one reader that feeds sinks (reader.h).  One thread: the sinks'
 * record() run in the reader's, and must not block it (docs/agent.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "reader.h"
#include "util.h"

void reader_add_sink(struct reader *rd, const struct sink *s)
{
	if (rd->nsinks == READER_SINKS_MAX)
		die(EXIT_RUNTIME, "more than %d sinks", READER_SINKS_MAX);
	rd->sinks[rd->nsinks++] = *s;
}

/* A record read: to every sink, in the order they were added. */
static void reader_record(const struct record *r, void *arg)
{
	struct reader *rd = arg;
	size_t i;

	for (i = 0; i < rd->nsinks; i++)
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

	if (st != EXIT_OK || !archive)
		return st;
	rd->in.archive = fopen(archive, "a");
	if (!rd->in.archive) {
		warnx_("%s: %s", archive, strerror(errno));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* Drain the logs into the sinks; the module's status as it is now. */
static void update(struct reader *rd)
{
	input_read(&rd->in);
	rd->nstatus = 0;
	input_status(&rd->in, status_line, rd);
}

/* Every sink's output of this interval: -1 if one failed. */
static int output(struct reader *rd, bool last)
{
	struct sink_input si = {
		.records = rd->in.records, .bad = rd->in.bad,
		.status = rd->status, .nstatus = rd->nstatus,
	};
	int st = 0;
	size_t i;

	for (i = 0; i < rd->nsinks; i++)
		if (rd->sinks[i].ops->output(rd->sinks[i].priv, &si, last) < 0)
			st = -1;
	return st;
}

static void idle(struct reader *rd)
{
	size_t i;

	for (i = 0; i < rd->nsinks; i++)
		rd->sinks[i].ops->idle(rd->sinks[i].priv);
}

int reader_run(struct reader *rd, uint64_t interval_us, bool once)
{
	unsigned int tick = 0;
	uint64_t next;

	update(rd);
	if (once)
		input_finish(&rd->in);
	if (output(rd, once) < 0)
		return EXIT_RUNTIME;
	next = now_us() + interval_us;
	while (!once && !stop_requested) {
		uint64_t now = now_us();

		if (now < next) {
			idle(rd);
			now = now_us();
			if (now < next)
				sleep_us(next - now < DEFAULT_POLL_US ? next - now : DEFAULT_POLL_US);
			continue;
		}
		next += interval_us;
		if (next <= now)	/* fell behind (suspend?): no burst */
			next = now + interval_us;
		if (++tick % 4 == 0 || rd->in.gone)
			input_rescan(&rd->in);
		update(rd);
		output(rd, false);	/* a failure is retried next time */
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
	if (rd->in.archive)
		fclose(rd->in.archive);
	rd->in.archive = NULL;
	input_close(&rd->in);
	return all;
}
