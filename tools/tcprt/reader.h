/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one reader of the module's logs that feeds sinks (sink.h): tcprt
 * export's, with its one sink, and tcprt agent's, with every sink
 * configured.  It drains the logs every read, each valid record handed
 * to every sink in turn; every output interval it reads the module's
 * status and has every sink make its output; between, the sinks tick and
 * their file descriptors (a socket, a terminal) are served.
 */
#ifndef TCPRT_READER_H
#define TCPRT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "archive.h"
#include "input.h"
#include "sink.h"

#define READER_SINKS_MAX	8

struct reader {
	struct input in;
	struct archive archive;	/* in.archive when open */
	struct sink sinks[READER_SINKS_MAX];
	size_t nsinks;
	bool reloadable;	/* reader_run() returns at a SIGHUP */
	/* if set, rewritten at each output: the reader's and sinks' counts */
	const char *status_path;
	bool started;		/* reader_run() ran once */
	/* tcprt agent: the sinks' stats() handed to them as sink_input.stats */
	bool sink_stats;
	struct sink_status status[SINK_STATUS_MAX];
	unsigned int nstatus;
	struct sink_status stats[SINK_STATS_MAX];
	unsigned int nstats;
};

/* Hand @s to the reader, which stops it in reader_close(). */
void reader_add_sink(struct reader *rd, const struct sink *s);

/*
 * Stop the sink named @name (sink_ops.name) and take it out: whether it
 * delivered all it was handed; true if there was none.
 */
bool reader_drop_sink(struct reader *rd, const char *name);

/* Whether a sink named @name is fed. */
bool reader_has_sink(const struct reader *rd, const char *name);

/*
 * Open the logs of @dir (the module's when NULL), of @fmt, and @archive
 * (every valid line appended) when not NULL: EXIT_OK, or EXIT_RUNTIME
 * after saying why.
 */
int reader_open(struct reader *rd, const char *dir, enum input_format fmt,
		const char *archive);

/*
 * Read the logs every @read_us and have every sink make its output every
 * @output_us, ticking them and waiting on their file descriptors between,
 * until a stop is asked (SIGTERM, SIGINT, or a sink's serve()), then read
 * and output a last time; with @once, read what the logs hold, output
 * once and return.  EXIT_OK, or EXIT_RUNTIME when the first output of the
 * first run failed.  With @rd->reloadable, a SIGHUP returns EXIT_OK at
 * once, with reload_requested set and no last output: the caller changes
 * the sinks and runs it again, the logs kept open - no record is lost
 * between.
 */
int reader_run(struct reader *rd, uint64_t read_us, uint64_t output_us,
	       bool once);

/*
 * Stop every sink and close the logs: whether every sink delivered all
 * it was handed.
 */
bool reader_close(struct reader *rd);

#endif
