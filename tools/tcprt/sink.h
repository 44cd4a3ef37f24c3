/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A sink: where the records one reader reads go (docs/agent.md).  tcprt
 * export and tcprt live are the reader (reader.c) and one sink each;
 * tcprt agent is the reader and every sink configured.  Records go one
 * way: the reader hands each to record(), which never blocks and never
 * calls the reader back; what the reader knows of itself (its counts, the
 * module's status) reaches the sink with output(), once an interval, and
 * tick().
 * A sink may wait on file descriptors of its own (a socket, a terminal):
 * the reader's one poll() waits for them and the next read together.
 */
#ifndef TCPRT_SINK_H
#define TCPRT_SINK_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record.h"

/* A numeric line of tcp_rt's status file. */
struct sink_status {
	char key[64];
	uint64_t value;
};

#define SINK_STATUS_MAX	64
#define SINK_STATS_MAX	128	/* the agent's sinks' stats() lines (33 today) */
#define SINK_POLL_MAX	72	/* a socket, its 64 clients, a terminal */

/* What the reader tells every sink at output time. */
struct sink_input {
	uint64_t records;	/* valid lines read since start */
	uint64_t bad;		/* malformed lines skipped */
	const struct sink_status *status;	/* the module's, this interval */
	unsigned int nstatus;
	/*
	 * tcprt agent's: every sink's stats() lines as the interval's output
	 * began (the status file's, less what the reader read); none
	 * elsewhere.
	 */
	const struct sink_status *stats;
	unsigned int nstats;
};

struct sink_ops {
	const char *name;
	/* One valid record read.  NULL: none (a sink of lines). */
	void (*record)(void *priv, const struct record *r);
	/*
	 * Every line of a log as read, valid or not (@r: NULL for a
	 * malformed one, @line then what was kept of it), with its CPU (-1:
	 * the file's name has none) and the module load it was read under
	 * (status's load_id when the file was opened; 0: unknown); before
	 * record().  NULL: none.
	 */
	void (*line)(void *priv, const char *line, size_t len, int cpu,
		     uint64_t load_id, const struct record *r);
	/*
	 * Every chunk read from a log, before any of its lines is cut: what
	 * a reader that consumes the logs holds from then on.  NULL: none.
	 */
	void (*chunk)(void *priv, const char *buf, size_t len, int cpu,
		      uint64_t load_id);
	/*
	 * The lines of one log together (each log read to its end in turn)
	 * rather than all logs' merged in time order: what a sink that packs
	 * a log's lines into messages wants.  With one such sink, every sink
	 * of the reader gets that order.
	 */
	bool per_log;
	/*
	 * The interval's output (@last: the final one, before stop): 0, or
	 * -1 after saying why on stderr; a failed output is tried again at
	 * the next interval.  NULL: none (a sink of its own schedule).
	 */
	int (*output)(void *priv, const struct sink_input *in, bool last);
	/*
	 * Every turn of the reader's loop (at least once a read): what is
	 * due at @now (mono_us()); @in as in output().  NULL: nothing.
	 */
	void (*tick)(void *priv, uint64_t now, const struct sink_input *in);
	/*
	 * When the sink wants its next tick (mono_us()), at the latest; 0:
	 * no wish of its own.  NULL: none.
	 */
	uint64_t (*next_tick)(const void *priv);
	/*
	 * The file descriptors it waits on: @pfd has room for SINK_POLL_MAX;
	 * their count.  After poll(), serve() gets them back with their
	 * revents: false to stop the reader (a view's quit).  NULL: none.
	 */
	unsigned int (*pollfds)(void *priv, struct pollfd *pfd);
	bool (*serve)(void *priv, const struct pollfd *pfd, unsigned int n);
	/*
	 * Its counts as "NAME_key value" lines appended to @out (@out is a
	 * FILE: the agent's status): what it was handed, and what it did not
	 * deliver, by cause.  NULL: none.
	 */
	void (*stats)(void *priv, FILE *out);
	/*
	 * Stop and free: whether everything handed to the sink was delivered
	 * (what was not is said on stderr).
	 */
	bool (*stop)(void *priv);
};

struct sink {
	const struct sink_ops *ops;
	void *priv;
};

/* One line of a sink's stats(): "SINK_KEY VALUE". */
static inline void sink_stat(FILE *out, const char *sink, const char *key,
			     uint64_t v)
{
	fprintf(out, "%s_%s %llu\n", sink, key, (unsigned long long)v);
}

#endif
